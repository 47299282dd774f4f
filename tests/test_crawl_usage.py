"""Usage preferences in real crawls: robots.txt, headers and page rules, into every item, and
the crawl's purpose dropping the items a site refuses it.

The most restrictive statement wins (draft-ietf-aipref-vocab-08 §5.1); robots.txt's are the
ones of the group that applies to the crawler (draft-ietf-aipref-attach-05 §3, RFC 9309
§2.2.1), recorded when each page is downloaded.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.testing import Site, html, redirect, static, with_headers
from tests.crawl import ListSpider, crawl

# Every use allowed by robots.txt; each page takes something back in its own way.
ALLOW_ALL_SIGNALS = "User-agent: *\nContent-Signal: search=yes, ai-train=yes, ai-input=yes\n"
PAGES = {
    "/plain": html("nothing more"),
    "/usage-header": with_headers(html("h"), ("Content-Usage", "train-ai=n")),
    "/noai-meta": html('<meta name="robots" content="noai">'),
    "/noai-for-us": with_headers(html("x"), ("X-Robots-Tag", "testbot: noai")),
    "/noai-for-others": with_headers(html("x"), ("X-Robots-Tag", "otherbot: noai")),
    "/signal-header": with_headers(html("s"), ("Content-Signal", "ai-input=no")),
    "/ai-use-header": with_headers(html("u"), ("Content-Usage", "ai-use=n")),
    "/noimageai": html('<meta name="robots" content="noimageai">'),
}
REFUSING_AI_TRAIN = {"/usage-header", "/noai-meta", "/noai-for-us"}


def usage_by_path(site: Site, items: list[Any]) -> dict[str, dict[str, Any]]:
    keys = ("search", "ai_input", "ai_train", "ai_use", "ai_train_images")
    return {
        item["url"].removeprefix(site.origin): {key: item["robots"][key] for key in keys}
        for item in items
    }


def urls(site: Site) -> list[str]:
    return [site.url(path) for path in PAGES]


@deferred_f_from_coro_f
async def test_sources_disagree_and_the_most_restrictive_wins(site: Site) -> None:
    site.add({"/robots.txt": static(ALLOW_ALL_SIGNALS), **PAGES})
    result = await crawl(urls(site), spider_cls=ListSpider)
    usage = usage_by_path(site, result.items)
    allowed = {"search": True, "ai_input": True, "ai_train": True, "ai_use": None}
    allowed["ai_train_images"] = True
    assert usage["/plain"] == allowed
    assert usage["/noai-for-others"] == allowed  # a rule scoped to another crawler
    for path in REFUSING_AI_TRAIN:
        assert usage[path] == {**allowed, "ai_train": False, "ai_train_images": False}, path
    assert usage["/signal-header"] == {**allowed, "ai_input": False}
    assert usage["/ai-use-header"] == {**allowed, "ai_input": False, "ai_use": False}
    assert usage["/noimageai"] == {**allowed, "ai_train_images": False}


@deferred_f_from_coro_f
async def test_purpose_drops_exactly_the_refused_items_and_logs_once_per_origin(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    site.add({"/robots.txt": static(ALLOW_ALL_SIGNALS), **PAGES})
    with caplog.at_level(logging.INFO, logger="scrapy_robotsmeta"):
        result = await crawl(urls(site), {"ROBOTSMETA_PURPOSE": "ai-train"}, ListSpider)
    kept = set(usage_by_path(site, result.items))
    assert kept == set(PAGES) - REFUSING_AI_TRAIN
    assert result.stat("robotsmeta/item_dropped/ai_train") == len(REFUSING_AI_TRAIN)
    notices = [r for r in caplog.records if r.getMessage().startswith("Dropping items of")]
    assert len(notices) == 1
    assert site.origin in notices[0].getMessage()
    assert "ai_train" in notices[0].getMessage()


@deferred_f_from_coro_f
async def test_purposes_combine_and_robots_txt_refusal_drops_every_item(site: Site) -> None:
    site.add(
        {
            "/robots.txt": static("User-agent: *\nContent-Signal: search=yes, ai-input=no\n"),
            "/a": html("a"),
            "/b": with_headers(html("b"), ("Content-Usage", "search=n")),
        }
    )
    settings = {"ROBOTSMETA_PURPOSE": ["search", "ai_input"]}
    result = await crawl([site.url("/a"), site.url("/b")], settings, ListSpider)
    assert result.items == []
    # Each item is dropped for the first purpose it refuses, counted once.
    assert result.stat("robotsmeta/item_dropped/search") == 1
    assert result.stat("robotsmeta/item_dropped/ai_input") == 1


@deferred_f_from_coro_f
async def test_no_purpose_keeps_every_item(site: Site) -> None:
    """Preferences are about use, not access: without ROBOTSMETA_PURPOSE nothing is dropped."""
    site.add({"/robots.txt": static("User-agent: *\nContent-Signal: ai-train=no\n"), **PAGES})
    result = await crawl(urls(site), spider_cls=ListSpider)
    assert len(result.items) == len(PAGES)
    assert all(item["robots"]["ai_train"] is False for item in result.items)


@deferred_f_from_coro_f
async def test_crawler_with_its_own_group_gets_none_of_the_star_groups_signals(
    site: Site,
) -> None:
    """RFC 9309 §2.2.1 selects one group: signals written in * only are not for a crawler
    that has a group of its own (Cloudflare writes them in *)."""
    site.add(
        {
            "/robots.txt": static(
                "User-Agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n\n"
                "User-agent: testbot\nDisallow: /private\n"
            ),
            "/page": html("p"),
        }
    )
    result = await crawl([site.url("/page")], spider_cls=ListSpider)
    assert usage_by_path(site, result.items)["/page"]["ai_train"] is None


@deferred_f_from_coro_f
async def test_redirect_target_carries_its_own_origins_preferences(
    site: Site, other_site: Site
) -> None:
    """Preferences are recorded for each URL downloaded: a redirect's target does not keep
    what the first origin's robots.txt said of the first URL."""
    site.add(
        {
            "/robots.txt": static("User-agent: *\nContent-Signal: ai-train=no\n"),
            "/moved": redirect(other_site.url("/here")),
        }
    )
    other_site.add({"/robots.txt": static("User-agent: *\nContent-Signal: search=yes\n")})
    other_site.add({"/here": html("here")})
    result = await crawl([site.url("/moved")], spider_cls=ListSpider)
    [item] = result.items
    assert item["url"] == other_site.url("/here")
    assert (item["robots"]["ai_train"], item["robots"]["search"]) == (None, True)


@deferred_f_from_coro_f
async def test_without_the_robots_txt_part_only_headers_and_pages_speak(site: Site) -> None:
    """robots.txt is not fetched for its preferences alone: with ROBOTSTXT_OBEY off, its
    statements are absent and items carry what headers and metas say."""
    site.add({"/robots.txt": static("User-agent: *\nContent-Signal: ai-train=no\n"), **PAGES})
    result = await crawl(urls(site), {"ROBOTSTXT_OBEY": False}, ListSpider)
    usage = usage_by_path(site, result.items)
    assert site.hits["/robots.txt"] == 0
    assert usage["/plain"]["ai_train"] is None
    assert usage["/usage-header"]["ai_train"] is False


@deferred_f_from_coro_f
async def test_malformed_preferences_state_nothing_and_are_counted(site: Site) -> None:
    """draft-ietf-aipref-vocab-08 §6: a value that is not a dictionary (an uppercase label
    included) states nothing; so does an unknown Content-Signal value."""
    site.add(
        {
            "/robots.txt": static("User-agent: *\nContent-Usage: Train-AI=n\n"),
            "/page": with_headers(html("p"), ("Content-Signal", "ai-train=maybe")),
        }
    )
    result = await crawl([site.url("/page")], spider_cls=ListSpider)
    assert usage_by_path(site, result.items)["/page"]["ai_train"] is None
    assert result.stat("robotstxt/usage_ignored") == 1
    assert result.stat("robotsmeta/usage_ignored") == 1
