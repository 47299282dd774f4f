"""Page-level robots rules in real crawls through the add-on: nofollow, rel=nofollow, noindex,
the item field, and header and meta scopes that name the crawler."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
import scrapy
from itemadapter import ItemAdapter
from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.python.failure import Failure

from scrapy_robotsmeta import USES, Directives, directives_for, usage_for
from scrapy_robotsmeta.testing import Site, html, links_page, static, with_headers
from scrapy_robotsmeta.usage.preferences import TDMREP_NOT_CONSULTED
from tests.crawl import crawl

NOFOLLOW = "robotsmeta/request_dropped/nofollow"
REL_NOFOLLOW = "robotsmeta/request_dropped/rel_nofollow"
UNRESTRICTED = Directives().to_dict() | dict.fromkeys(USES) | TDMREP_NOT_CONSULTED


def meta(content: str, name: str = "robots") -> str:
    return f'<meta name="{name}" content="{content}">'


def leaves(site: Site, *paths: str) -> None:
    site.add({path: html(f"<html><body>{path}</body></html>") for path in paths})


def robots_by_path(site: Site, items: list[Any]) -> dict[str, Any]:
    prefix = site.origin
    return {item["url"].removeprefix(prefix): item.get("robots") for item in items}


@deferred_f_from_coro_f
async def test_links_of_nofollow_pages_are_not_requested(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    site.add(
        {
            "/": links_page("/meta", "/body-meta", "/header", "/token", "/other-bot", "/scoped"),
            "/meta": links_page("/a", head=meta("nofollow")),
            "/body-meta": html(f"<html><body>{meta('none')}<a href='/b'>b</a></body></html>"),
            "/header": links_page("/c", headers={"X-Robots-Tag": "noarchive, nofollow"}),
            "/token": links_page("/d", head=meta("nofollow", name="TestBot")),
            "/other-bot": links_page("/e", head=meta("nofollow", name="otherbot")),
            "/scoped": links_page("/f", headers={"X-Robots-Tag": "otherbot: nofollow"}),
        }
    )
    leaves(site, "/a", "/b", "/c", "/d", "/e", "/f")
    with caplog.at_level(logging.DEBUG, logger="scrapy_robotsmeta"):
        result = await crawl([site.url("/")])

    assert {"/e", "/f"} <= site.requested()
    assert not {"/a", "/b", "/c", "/d"} & site.requested()
    assert result.stat(NOFOLLOW) == 4
    assert f"Dropped <GET {site.url('/a')}> from <200 {site.url('/meta')}>: the page says " in (
        caplog.text
    )
    robots = robots_by_path(site, result.items)
    assert robots["/meta"] == {**UNRESTRICTED, "follow": False}
    assert robots["/body-meta"] == {**UNRESTRICTED, "index": False, "follow": False}
    assert robots["/header"] == {**UNRESTRICTED, "archive": False, "follow": False}
    assert robots["/other-bot"] == robots["/scoped"] == robots["/"] == UNRESTRICTED


@deferred_f_from_coro_f
async def test_nofollow_is_not_obeyed_when_switched_off(site: Site) -> None:
    site.add({"/": links_page("/a", head=meta("nofollow"))})
    leaves(site, "/a")
    result = await crawl([site.url("/")], {"ROBOTSMETA_OBEY_NOFOLLOW": False})
    assert "/a" in site.requested()
    assert result.stat(NOFOLLOW) == 0
    assert robots_by_path(site, result.items)["/"] == {**UNRESTRICTED, "follow": False}


@deferred_f_from_coro_f
async def test_several_headers_and_metas_combine(site: Site) -> None:
    site.add(
        {
            "/": with_headers(
                links_page(
                    "/a", head=meta("max-snippet: 40") + meta("max-snippet: 10", "testbot")
                ),
                ("X-Robots-Tag", "max-image-preview: standard"),
                ("X-Robots-Tag", "testbot: nofollow"),
                ("X-Robots-Tag", "max-snippet: 20, otherbot: noindex"),
            )
        }
    )
    leaves(site, "/a")
    result = await crawl([site.url("/")])
    assert "/a" not in site.requested()
    assert robots_by_path(site, result.items)["/"] == {
        **UNRESTRICTED,
        "follow": False,
        "max_snippet": 10,
        "max_image_preview": "standard",
    }


@deferred_f_from_coro_f
async def test_rel_nofollow_links_are_followed_unless_the_option_is_on(site: Site) -> None:
    site.add(
        {
            "/": html(
                '<html><body><a href="/plain">p</a><a href="/hint" rel="nofollow">h</a>'
                '<a href="/both" rel="nofollow">b</a><a href="/both#x">b</a>'
                '<map><area href="/area" rel="External NOFOLLOW"></map></body></html>'
            )
        }
    )
    leaves(site, "/plain", "/hint", "/both", "/area")

    result = await crawl([site.url("/")])
    assert {"/plain", "/hint", "/both", "/area"} <= site.requested()
    assert result.stat(REL_NOFOLLOW) == 0

    site.hits.clear()
    result = await crawl([site.url("/")], {"ROBOTSMETA_OBEY_REL_NOFOLLOW": True})
    assert {"/plain", "/both"} <= site.requested()
    assert not {"/hint", "/area"} & site.requested()
    assert result.stat(REL_NOFOLLOW) == 2


@deferred_f_from_coro_f
async def test_items_of_noindex_pages_are_dropped_with_the_option(site: Site) -> None:
    site.add(
        {
            "/": links_page("/noindex", "/header"),
            "/noindex": links_page("/a", head=meta("noindex")),
            "/header": links_page("/b", headers={"X-Robots-Tag": "none"}),
        }
    )
    leaves(site, "/a", "/b")

    kept = await crawl([site.url("/")])
    assert {"/noindex", "/header"} <= set(robots_by_path(site, kept.items))

    result = await crawl([site.url("/")], {"ROBOTSMETA_DROP_NOINDEX": True})
    assert set(robots_by_path(site, result.items)) == {"/", "/a"}
    assert result.stat("robotsmeta/item_dropped/noindex") == 2
    assert "/a" in site.requested()  # noindex says nothing about following


@deferred_f_from_coro_f
async def test_item_field_in_a_json_lines_feed(site: Site, tmp_path: Path) -> None:
    feed = tmp_path / "items.jl"
    site.add(
        {
            "/": links_page(
                "/a",
                head=meta("max-snippet: 50, noimageindex, notranslate, indexifembedded"),
                headers={
                    "X-Robots-Tag": "unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT, noarchive"
                },
            )
        }
    )
    leaves(site, "/a")
    await crawl([site.url("/")], {"FEEDS": {str(feed): {"format": "jsonlines"}}})

    lines = [json.loads(line) for line in feed.read_text().splitlines()]
    by_url = {line["url"]: line for line in lines}
    assert by_url[site.url("/")]["robots"] == {
        "index": True,
        "follow": True,
        "archive": False,
        "snippet": True,
        "max_snippet": 50,
        "max_image_preview": "large",
        "max_video_preview": None,
        "translate": False,
        "imageindex": False,
        "indexifembedded": True,
        "unavailable_after": "2025-12-03T13:09:53+00:00",
        "search": None,
        "ai_input": None,
        "ai_train": None,
        "ai_use": None,
        "ai_train_images": None,
        "tdm_reservation": None,
        "tdm_policy": None,
        "tdm_file": "not_consulted",
    }
    assert by_url[site.url("/a")]["robots"] == UNRESTRICTED


@deferred_f_from_coro_f
async def test_item_field_name_setting(site: Site) -> None:
    site.add({"/": html(f"<html><head>{meta('noindex')}</head></html>")})
    renamed = await crawl([site.url("/")], {"ROBOTSMETA_ITEM_FIELD": "page_robots"})
    assert renamed.items[0]["page_robots"] == {**UNRESTRICTED, "index": False}
    assert "robots" not in renamed.items[0]

    untagged = await crawl([site.url("/")], {"ROBOTSMETA_ITEM_FIELD": ""})
    assert untagged.items == [{"url": site.url("/")}]


@deferred_f_from_coro_f
async def test_disabled_middleware_changes_nothing(site: Site) -> None:
    site.add({"/": links_page("/a", head=meta("none"))})
    leaves(site, "/a")
    result = await crawl([site.url("/")], {"ROBOTSMETA_ENABLED": False})
    assert "/a" in site.requested()
    assert all("robots" not in item for item in result.items)
    assert not [name for name in result.stats if name.startswith("robotsmeta/")]


@deferred_f_from_coro_f
async def test_non_html_response_obeys_its_header_and_its_body_is_not_read(site: Site) -> None:
    body = json.dumps({"html": '<meta name="robots" content="nofollow">'})
    site.add(
        {
            "/": links_page("/data.json"),
            "/data.json": static(
                body, headers={"Content-Type": "application/json", "X-Robots-Tag": "noindex"}
            ),
        }
    )
    result = await crawl([site.url("/")], spider_cls=ItemSpider, make_item=dict_item)
    assert robots_by_path(site, result.items)["/data.json"] == {**UNRESTRICTED, "index": False}


# Spiders used below: each yields one item per page, made by the given factory.


class ItemSpider(Spider):
    name = "item_kind"

    def __init__(
        self, start_urls: list[str], make_item: Callable[..., Any], **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls
        self.make_item = make_item

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        yield self.make_item(url=response.url)
        if isinstance(response, HtmlResponse):
            yield from response.follow_all(css="a")


def dict_item(url: str) -> dict[str, Any]:
    return {"url": url}


class DeclaringItem(scrapy.Item):
    url = scrapy.Field()
    robots = scrapy.Field()


class PlainItem(scrapy.Item):
    url = scrapy.Field()


@dataclasses.dataclass
class DeclaringDataclass:
    url: str
    robots: dict[str, Any] | None = None


@dataclasses.dataclass
class PlainDataclass:
    url: str


@attrs.define
class DeclaringAttrs:
    url: str
    robots: dict[str, Any] | None = None


@attrs.define
class PlainAttrs:
    url: str


def pydantic_classes() -> tuple[type, type]:
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not a dependency")

    class DeclaringModel(pydantic.BaseModel):  # type: ignore[misc,name-defined]
        url: str
        robots: dict[str, Any] | None = None

    class PlainModel(pydantic.BaseModel):  # type: ignore[misc,name-defined]
        url: str

    return DeclaringModel, PlainModel


ITEM_KINDS: dict[str, Callable[[], tuple[type, type]]] = {
    "scrapy.Item": lambda: (DeclaringItem, PlainItem),
    "dataclass": lambda: (DeclaringDataclass, PlainDataclass),
    "attrs": lambda: (DeclaringAttrs, PlainAttrs),
    "pydantic": pydantic_classes,
}


def two_nofollow_pages(site: Site) -> list[str]:
    site.add(
        {
            "/": links_page("/a", head=meta("nofollow, max-video-preview: 7")),
            "/b": links_page("/a", headers={"X-Robots-Tag": "nofollow, max-video-preview: 7"}),
        }
    )
    leaves(site, "/a")
    return [site.url("/"), site.url("/b")]


@pytest.mark.parametrize("kind", ITEM_KINDS)
@deferred_f_from_coro_f
async def test_item_kind_declaring_the_field_gets_it(site: Site, kind: str) -> None:
    declaring, _ = ITEM_KINDS[kind]()
    result = await crawl(two_nofollow_pages(site), spider_cls=ItemSpider, make_item=declaring)
    assert len(result.items) == 2
    for item in result.items:
        assert type(item) is declaring
        assert ItemAdapter(item)["robots"] == {
            **UNRESTRICTED,
            "follow": False,
            "max_video_preview": 7,
        }
    assert result.stat("robotsmeta/item_untagged") == 0


@pytest.mark.parametrize("kind", ITEM_KINDS)
@deferred_f_from_coro_f
async def test_item_kind_without_the_field_passes_unchanged_with_one_warning(
    site: Site, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, plain = ITEM_KINDS[kind]()
    with caplog.at_level(logging.WARNING, logger="scrapy_robotsmeta"):
        result = await crawl(two_nofollow_pages(site), spider_cls=ItemSpider, make_item=plain)

    assert all(type(item) is plain for item in result.items)
    assert sorted((ItemAdapter(item).asdict() for item in result.items), key=str) == [
        {"url": site.url("/")},
        {"url": site.url("/b")},
    ]
    assert result.stat("robotsmeta/item_untagged") == 2
    warnings = [
        record
        for record in caplog.records
        if record.name.startswith("scrapy_robotsmeta") and record.levelno == logging.WARNING
    ]
    assert len(warnings) == 1
    assert plain.__qualname__ in warnings[0].getMessage()
    assert "'robots'" in warnings[0].getMessage()
    assert "/a" not in site.requested()  # the page's nofollow is obeyed all the same


@deferred_f_from_coro_f
async def test_output_that_is_no_item_kind_passes_unchanged(site: Site) -> None:
    site.add({"/": html("<html></html>")})
    result = await crawl([site.url("/")], spider_cls=ItemSpider, make_item=lambda url: url)
    assert result.items == [site.url("/")]
    assert result.stat("robotsmeta/item_untagged") == 1


@attrs.define
class RefusingAttrs:
    url: str
    robots: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.instance_of(str))
    )


@deferred_f_from_coro_f
async def test_item_refusing_the_value_passes_unchanged_with_a_warning(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    site.add({"/": html("<html></html>")})
    with caplog.at_level(logging.WARNING, logger="scrapy_robotsmeta"):
        result = await crawl([site.url("/")], spider_cls=ItemSpider, make_item=RefusingAttrs)
    assert result.items == [RefusingAttrs(url=site.url("/"))]
    assert result.stat("robotsmeta/item_untagged") == 1
    assert "setting the field 'robots' failed" in caplog.text


class FlaggedRequestsSpider(Spider):
    """Yields two requests per page: one flagged dont_obey_robotsmeta, one not."""

    name = "flagged"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Request]:
        yield response.follow("/flagged", self.leaf, meta={"dont_obey_robotsmeta": True})
        yield response.follow("/unflagged", self.leaf)

    def leaf(self, response: Response) -> Iterator[Any]:
        yield from ()


@deferred_f_from_coro_f
async def test_dont_obey_robotsmeta_request_meta_key(site: Site) -> None:
    site.add({"/": html(f'<html><head>{meta("nofollow")}</head><a href="/x" rel="nofollow"></a>')})
    site.add({"/flagged": html("<html></html>"), "/unflagged": html("<html></html>")})
    result = await crawl(
        [site.url("/")], {"ROBOTSMETA_OBEY_REL_NOFOLLOW": True}, spider_cls=FlaggedRequestsSpider
    )
    assert "/flagged" in site.requested()
    assert "/unflagged" not in site.requested()
    assert result.stat(NOFOLLOW) == 1


class ErrbackSpider(Spider):
    """Requests a page that fails; its errback yields one more request."""

    name = "errback"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls

    async def start(self) -> AsyncIterator[Request]:
        for url in self.start_urls:
            yield Request(url, errback=self.failed)

    def failed(self, failure: Failure) -> Iterator[Request]:
        assert isinstance(failure.value, HttpError)
        yield failure.value.response.follow("/after-error", self.parse)


@deferred_f_from_coro_f
async def test_errback_output_is_judged_by_the_rules_of_its_response(site: Site) -> None:
    site.add(
        {
            "/gone": static("gone", status=410, headers={"X-Robots-Tag": "nofollow"}),
            "/missing": static("missing", status=404),
        }
    )
    leaves(site, "/after-error")
    result = await crawl([site.url("/gone")], spider_cls=ErrbackSpider)
    assert "/after-error" not in site.requested()
    assert result.stat(NOFOLLOW) == 1

    await crawl([site.url("/missing")], spider_cls=ErrbackSpider)
    assert "/after-error" in site.requested()


class DirectivesSpider(Spider):
    """Reads the directives in its callback, after building the selector itself."""

    name = "directives"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        title = response.css("title::text").get()
        directives, usage = directives_for(response), usage_for(response)
        assert directives is not None
        assert usage is not None
        assert directives_for(response) is directives
        yield {"url": response.url, "title": title, "seen": directives.to_dict() | usage.to_dict()}
        if isinstance(response, HtmlResponse):
            yield from response.follow_all(css="a")


@deferred_f_from_coro_f
async def test_callback_reads_the_same_directives_as_the_item_field(site: Site) -> None:
    site.add(
        {
            "/": links_page(
                "/a", head=f"<title>t</title>{meta('nofollow, max-image-preview: none')}"
            )
        }
    )
    leaves(site, "/a")
    result = await crawl([site.url("/")], spider_cls=DirectivesSpider)
    (item,) = result.items
    assert item["title"] == "t"
    assert item["seen"] == item["robots"]
    assert item["seen"] == {**UNRESTRICTED, "follow": False, "max_image_preview": "none"}
    assert "/a" not in site.requested()


class PagesSitemapSpider(SitemapSpider):
    name = "sitemap"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sitemap_urls = start_urls

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        yield {"url": response.url}


def sitemap(*urls: str, headers: dict[str, str] | None = None) -> Any:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
    )
    return static(body, headers={"Content-Type": "application/xml", **(headers or {})})


@deferred_f_from_coro_f
async def test_sitemap_spider_obeys_the_sitemap_header(site: Site) -> None:
    site.add(
        {
            "/open.xml": sitemap(site.url("/a")),
            "/closed.xml": sitemap(site.url("/b"), headers={"X-Robots-Tag": "nofollow"}),
        }
    )
    leaves(site, "/a", "/b")
    result = await crawl(
        [site.url("/open.xml"), site.url("/closed.xml")], spider_cls=PagesSitemapSpider
    )
    assert "/a" in site.requested()
    assert "/b" not in site.requested()
    assert result.stat(NOFOLLOW) == 1
    assert robots_by_path(site, result.items) == {"/a": UNRESTRICTED}


# --------------------------------------------------------------------------------------------
# A crawler whose name is not its robots.txt token
# --------------------------------------------------------------------------------------------


ARCHIVE_UA = (
    "Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)"
)


@deferred_f_from_coro_f
async def test_crawl_named_archive_org_bot(site: Site) -> None:
    """A real crawl as ``archive.org_bot``: the meta and header scoped to that name apply, those
    scoped to ``archive`` do not, and robots.txt's ``User-agent: archive`` group is ours."""
    site.add(
        {
            "/robots.txt": static(
                "User-agent: archive\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"
            ),
            "/": links_page("/meta", "/meta-other", "/header", "/header-other", "/private/x"),
            "/meta": html('<head><meta name="Archive.org_Bot" content="noindex"></head>'),
            "/meta-other": html('<head><meta name="archive" content="noindex"></head>'),
            "/header": html("<p>h</p>", headers={"X-Robots-Tag": "archive.org_bot: noarchive"}),
            "/header-other": html("<p>o</p>", headers={"X-Robots-Tag": "archive: noarchive"}),
        }
    )
    result = await crawl([site.url("/")], settings={"USER_AGENT": ARCHIVE_UA})
    robots = {item["url"].removeprefix(site.origin): item["robots"] for item in result.items}
    assert set(robots) == {"/", "/meta", "/meta-other", "/header", "/header-other"}
    assert robots["/meta"]["index"] is False
    assert robots["/meta-other"]["index"] is True
    assert robots["/header"]["archive"] is False
    assert robots["/header-other"]["archive"] is True
    assert site.hits["/private/x"] == 0
    assert result.stat("robotstxt/forbidden") == 1
