"""TDMRep (W3C Text and Data Mining Reservation Protocol, Community Group final report) in real
crawls: the origin's ``/.well-known/tdmrep.json`` fetched once with robots.txt and before any
page, its rules (first match wins), the ``tdm-reservation`` / ``tdm-policy`` headers and metas
with the protocol's precedence, into every item; the crawl's purpose acting on it; a missing,
malformed or unreadable file."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.testing import Site, html, redirect, static, with_headers
from tests.crawl import ListSpider, crawl

WELL_KNOWN = "/.well-known/tdmrep.json"
POLICY = "https://publisher.example/tdm-policy.json"
# Rule 1 reserves the books; rule 2 (never reached for /books/open/…: the first match wins)
# would release them; rule 3 anchors on PDFs; the rest of the site is not reserved.
RULES = [
    {"location": "/books/", "tdm-reservation": 1, "tdm-policy": POLICY},
    {"location": "/books/open/", "tdm-reservation": 0},
    {"location": "/*.pdf$", "tdm-reservation": 1},
    {"location": "/", "tdm-reservation": 0},
]
ROBOTS = "User-agent: *\nDisallow: /private\n"
PAGES = {
    "/books/a": html("a reserved book"),
    "/books/open/b": html("first match wins"),
    "/papers/c.pdf": static(b"%PDF-1.4", headers={"Content-Type": "application/pdf"}),
    "/papers/c.pdf.html": html("not a PDF: $ anchors"),
    "/news/d": html("not reserved"),
    "/news/header": with_headers(html("h"), ("tdm-reservation", "1")),
    "/books/meta-0": html('<meta name="tdm-reservation" content="0">'),
    "/books/header-1-meta-0": with_headers(
        html('<meta name="tdm-reservation" content="0">'), ("tdm-reservation", "1")
    ),
    "/news/meta-policy": html(
        '<meta name="tdm-reservation" content="1">'
        '<meta name="tdm-policy" content="https://page.example/policy">'
    ),
    "/news/invalid": with_headers(
        html('<meta name="tdm-reservation" content="yes">'), ("tdm-reservation", "2")
    ),
}
ON = {"ROBOTSMETA_TDMREP": True}


def tdm_json(rules: list[dict[str, Any]]) -> Any:
    return static(json.dumps(rules), headers={"Content-Type": "application/json"})


def site_with(site: Site, tdmrep: Any, pages: dict[str, Any] | None = None) -> list[str]:
    site.add({"/robots.txt": static(ROBOTS), WELL_KNOWN: tdmrep, **(pages or PAGES)})
    return [site.url(path) for path in (pages or PAGES)] + [site.url("/private")]


def by_path(site: Site, items: list[Any]) -> dict[str, dict[str, Any]]:
    return {item["url"].removeprefix(site.origin): item["robots"] for item in items}


def tdm(robots: dict[str, Any]) -> tuple[Any, Any, Any]:
    return robots["tdm_reservation"], robots["tdm_policy"], robots["tdm_file"]


@deferred_f_from_coro_f
async def test_file_rules_headers_and_metas_reach_every_item(site: Site) -> None:
    """First match wins, ``*`` and ``$``; a header supersedes the file and a meta both; an
    invalid value is unset and leaves the earlier one."""
    urls = site_with(site, tdm_json(RULES))
    result = await crawl(urls, ON, ListSpider)
    items = by_path(site, result.items)
    assert tdm(items["/books/a"]) == (True, POLICY, "read")
    assert tdm(items["/books/open/b"]) == (True, POLICY, "read")
    assert tdm(items["/papers/c.pdf"]) == (True, None, "read")
    assert tdm(items["/papers/c.pdf.html"]) == (False, None, "read")
    assert tdm(items["/news/d"]) == (False, None, "read")
    assert tdm(items["/news/header"]) == (True, None, "read")
    assert tdm(items["/books/meta-0"]) == (False, None, "read")
    assert tdm(items["/books/header-1-meta-0"]) == (False, None, "read")
    assert tdm(items["/news/meta-policy"]) == (True, "https://page.example/policy", "read")
    assert tdm(items["/news/invalid"]) == (False, None, "read")
    assert result.stat("robotsmeta/tdmrep/value_ignored") == 2
    # A reservation refuses text and data mining uses, not search.
    assert items["/books/a"]["ai_train"] is False
    assert items["/books/a"]["ai_input"] is False
    assert items["/books/a"]["search"] is None
    assert items["/news/d"]["ai_train"] is True
    # robots.txt still decides access, and the file was fetched once, before every page.
    assert site.hits["/private"] == 0
    assert site.hits[WELL_KNOWN] == 1
    assert site.hits["/robots.txt"] == 1
    first_page = next(i for i, (_, path) in enumerate(site.log) if path in PAGES)
    assert max(site.log.index(entry) for entry in site.log if entry[1] == WELL_KNOWN) < first_page
    assert result.stat("robotsmeta/tdmrep/file/read") == 1


@deferred_f_from_coro_f
async def test_an_ai_training_purpose_drops_reserved_items_and_keeps_a_pages_0(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    """ROBOTSMETA_PURPOSE = ai-train consults TDMRep without being told, and drops exactly the
    reserved pages; a page's meta 0 beats its file's 1. Each drop names the statement behind it
    (the first of an origin at INFO, the rest at DEBUG: which page comes first is the crawl's)."""
    urls = site_with(site, tdm_json(RULES))
    with caplog.at_level(logging.DEBUG, logger="scrapy_robotsmeta"):
        result = await crawl(urls, {"ROBOTSMETA_PURPOSE": "ai-train"}, ListSpider)
    kept = set(by_path(site, result.items))
    assert kept == {
        "/papers/c.pdf.html",
        "/news/d",
        "/books/meta-0",
        "/books/header-1-meta-0",
        "/news/invalid",
    }
    assert result.stat("robotsmeta/item_dropped/ai_train") == 5
    assert any(
        "by tdmrep.json rule 1 (location /books/)" in r.getMessage() for r in caplog.records
    )


@deferred_f_from_coro_f
async def test_the_most_restrictive_statement_wins_across_vocabularies(site: Site) -> None:
    """Within TDMRep a page's 0 beats its file's 1; across vocabularies a Content-Signal
    ai-train=no still refuses training."""
    pages = {
        "/books/meta-0": with_headers(
            html('<meta name="tdm-reservation" content="0">'), ("Content-Signal", "ai-train=no")
        )
    }
    urls = site_with(site, tdm_json(RULES), pages)
    result = await crawl(urls, ON, ListSpider)
    robots = by_path(site, result.items)["/books/meta-0"]
    assert robots["tdm_reservation"] is False
    assert robots["ai_train"] is False
    assert robots["ai_input"] is True  # only TDMRep speaks of it


@deferred_f_from_coro_f
async def test_a_missing_file_means_the_origin_does_not_use_it(site: Site) -> None:
    """A 404: no reservation from a file; a page's own header still counts."""
    pages = {"/a": html("a"), "/b": with_headers(html("b"), ("tdm-reservation", "1"))}
    urls = site_with(site, static("not found", 404), pages)
    result = await crawl(urls, {"ROBOTSMETA_PURPOSE": "ai-train"}, ListSpider)
    items = by_path(site, result.items)
    assert set(items) == {"/a"}
    assert tdm(items["/a"]) == (None, None, "absent")
    assert result.stat("robotsmeta/tdmrep/file/absent") == 1


@deferred_f_from_coro_f
async def test_a_file_that_is_no_json_array_counts_as_none(site: Site) -> None:
    """A "not found" page served with 200 is malformed: nothing reserved, a stat and a log."""
    urls = site_with(site, html("<html><body>Page not found</body></html>"), {"/a": html("a")})
    result = await crawl(urls, {"ROBOTSMETA_PURPOSE": "ai-train"}, ListSpider)
    assert tdm(by_path(site, result.items)["/a"]) == (None, None, "malformed")
    assert result.stat("robotsmeta/tdmrep/file/malformed") == 1


@deferred_f_from_coro_f
async def test_an_unreadable_file_drops_the_items_of_an_ai_training_crawl_only(
    site: Site, caplog: pytest.LogCaptureFixture
) -> None:
    """A 5xx file: the protocol counts the origin as not using it, but a crawl that trains AI
    keeps no page whose reservation it could not read; a page that states it is kept. robots.txt
    is unaffected (its own rules apply, no outage)."""
    pages = {"/a": html("a"), "/b": html('<meta name="tdm-reservation" content="0">')}
    urls = site_with(site, static("down", 503), pages)
    with caplog.at_level(logging.INFO, logger="scrapy_robotsmeta"):
        result = await crawl(urls, {"ROBOTSMETA_PURPOSE": "ai-train"}, ListSpider)
    items = by_path(site, result.items)
    assert set(items) == {"/b"}
    assert tdm(items["/b"]) == (False, None, "unreadable")
    assert result.stat("robotsmeta/item_dropped/tdmrep_unreadable") == 1
    assert result.stat("robotsmeta/tdmrep/file/unreadable") == 1
    assert result.stat("robotstxt/forbidden") == 1
    assert site.hits["/a"] == 1  # fetched: the page is kept from the items only
    assert any("tdmrep.json could not be read" in r.getMessage() for r in caplog.records)

    site.hits.clear()
    other = await crawl(urls, {"ROBOTSMETA_PURPOSE": "ai-input"}, ListSpider)
    assert set(by_path(site, other.items)) == {"/a", "/b"}
    assert tdm(by_path(site, other.items)["/a"]) == (None, None, "unreadable")


@deferred_f_from_coro_f
async def test_not_consulted_makes_no_request_and_says_so(site: Site) -> None:
    """No purpose TDMRep speaks to (or ROBOTSMETA_TDMREP = False): no request for the file, no
    header or meta read, and the items say "not consulted", not "no reservation"."""
    pages = {"/a": with_headers(html("a"), ("tdm-reservation", "1"))}
    urls = site_with(site, tdm_json(RULES), pages)
    for settings in ({}, {"ROBOTSMETA_PURPOSE": "search"}, {"ROBOTSMETA_TDMREP": False}):
        result = await crawl(urls, settings, ListSpider)
        robots = by_path(site, result.items)["/a"]
        assert tdm(robots) == (None, None, "not_consulted"), settings
        assert robots["ai_train"] is None
    off = await crawl(
        urls, {"ROBOTSMETA_TDMREP": False, "ROBOTSMETA_PURPOSE": "ai-train"}, ListSpider
    )
    assert set(by_path(site, off.items)) == {"/a"}
    assert site.hits[WELL_KNOWN] == 0


@deferred_f_from_coro_f
async def test_a_redirect_is_followed_to_http_only(site: Site, tmp_path: Path) -> None:
    """The file's redirects are followed as robots.txt's are; one to a local file is refused
    (as no file), never read."""
    secret = tmp_path / "tdmrep.json"
    secret.write_text(json.dumps([{"location": "/", "tdm-reservation": 1}]))
    site.add({"/moved.json": tdm_json(RULES)})
    urls = site_with(site, redirect("/moved.json"), {"/books/a": html("a")})
    result = await crawl(urls, ON, ListSpider)
    assert tdm(by_path(site, result.items)["/books/a"]) == (True, POLICY, "read")
    site.add({WELL_KNOWN: redirect(secret.as_uri())})
    refused = await crawl(urls, ON, ListSpider)
    assert tdm(by_path(site, refused.items)["/books/a"]) == (None, None, "absent")
    assert refused.stat("robotsmeta/tdmrep/redirect_refused") == 1


@deferred_f_from_coro_f
async def test_the_file_is_not_fetched_again_while_the_state_lives(site: Site) -> None:
    """One fetch per origin per cache lifetime, as for robots.txt: many pages, one request."""
    pages = {f"/news/{i}": html(str(i)) for i in range(30)}
    urls = site_with(site, tdm_json(RULES), pages)
    result = await crawl(urls, {**ON, "CONCURRENT_REQUESTS": 8}, ListSpider)
    assert len(result.items) == 30
    assert site.hits[WELL_KNOWN] == 1
    assert result.stat("robotsmeta/tdmrep/request_count") == 1
