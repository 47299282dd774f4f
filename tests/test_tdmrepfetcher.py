"""The tdmrep.json fetch inside a real project's downloader stack (``tdmrepfetcher.py``): made at
the same time as robots.txt's, in the context of the request that needed it (its proxy), capped
at 500 KiB, decoded, never replaying a cached outage, and any failure an unreadable file that
leaves robots.txt's own answer alone."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.web import server

from scrapy_robotsmeta.testing import Site, delayed, hang, html, static
from tests.crawl import ListSpider, crawl
from tests.proxy import ProxiedSpider, logging_proxy

WELL_KNOWN = "/.well-known/tdmrep.json"
ROBOTS = "User-agent: *\nDisallow: /private\n"
RESERVED = json.dumps([{"location": "/", "tdm-reservation": 1}])
ON = {"ROBOTSMETA_TDMREP": True}


def pages(site: Site, tdmrep: Any, robots: Any = None) -> list[str]:
    site.add({"/robots.txt": robots or static(ROBOTS), WELL_KNOWN: tdmrep})
    site.add({"/a": html("a"), "/private": html("no")})
    return [site.url("/a"), site.url("/private")]


def file_status(site: Site, items: list[Any]) -> tuple[Any, str]:
    (item,) = [i for i in items if i["url"] == site.url("/a")]
    return item["robots"]["tdm_reservation"], item["robots"]["tdm_file"]


@deferred_f_from_coro_f
async def test_both_files_are_requested_before_either_answers(site: Site) -> None:
    """The two downloads run at the same time: tdmrep.json is asked for while robots.txt's
    answer is still pending, and the pages wait for both."""
    served_before: list[int] = []

    def tdmrep(request: server.Request) -> bytes | int:
        served_before.append(len(site.served))
        return static(RESERVED)(request)

    urls = pages(site, tdmrep, delayed(0.3, static(ROBOTS)))
    result = await crawl(urls, ON, ListSpider)
    assert served_before == [0]
    assert file_status(site, result.items) == (True, "read")
    assert site.hits["/private"] == 0


@deferred_f_from_coro_f
async def test_a_file_larger_than_500_kib_is_stopped_and_not_trusted(site: Site) -> None:
    """The download stops soon after 500 KiB, as robots.txt's does; a JSON array cut there
    cannot be read, so the file counts as malformed (no rule of it trusted)."""
    rules = [{"location": f"/x{i}/", "tdm-reservation": 1} for i in range(60_000)]
    urls = pages(site, static(json.dumps(rules)))
    result = await crawl(urls, ON, ListSpider)
    assert file_status(site, result.items) == (None, "malformed")
    assert result.stat("robotsmeta/tdmrep/download_stopped") == 1
    assert result.stat("robotstxt/download_stopped") == 0
    assert result.stat("robotstxt/forbidden") == 1


@deferred_f_from_coro_f
async def test_a_compressed_file_is_decoded(site: Site) -> None:
    body = gzip.compress(RESERVED.encode())
    urls = pages(site, static(body, headers={"Content-Encoding": "gzip"}))
    result = await crawl(urls, ON, ListSpider)
    assert file_status(site, result.items) == (True, "read")


@deferred_f_from_coro_f
async def test_a_hanging_file_is_unreadable_and_robots_txt_still_applies(site: Site) -> None:
    """A network failure (here a timeout) is an unreadable file: robots.txt's rules apply as
    they would alone, with no outage."""
    urls = pages(site, hang)
    result = await crawl(urls, {**ON, "DOWNLOAD_TIMEOUT": 1}, ListSpider)
    assert file_status(site, result.items) == (None, "unreadable")
    assert result.stat("robotstxt/forbidden") == 1
    assert result.stat("robotstxt/outcome/rules") == 1
    assert result.stat("robotstxt/outcome/unavailable") == 0
    assert result.stat("robotsmeta/tdmrep/file/unreadable") == 1


@deferred_f_from_coro_f
async def test_a_cached_outage_from_an_earlier_run_is_not_replayed(
    site: Site, tmp_path: Path
) -> None:
    """With Scrapy's HTTP cache on, a 503 stored by an earlier run is skipped and the site
    asked again."""
    settings = {**ON, "HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(tmp_path / "cache")}
    urls = pages(site, static("down", 503))
    first = await crawl(urls, settings, ListSpider)
    assert file_status(site, first.items) == (None, "unreadable")
    site.add({WELL_KNOWN: static(RESERVED)})
    second = await crawl(urls, settings, ListSpider)
    assert site.hits[WELL_KNOWN] == 2
    assert second.stat("robotsmeta/tdmrep/cached_unavailable_skipped") == 1
    assert file_status(site, second.items) == (True, "read")


@deferred_f_from_coro_f
async def test_the_file_goes_through_the_requests_proxy(site: Site) -> None:
    """The tdmrep.json request takes the routing meta keys of the request that needed it."""
    urls = pages(site, static(RESERVED))
    async with logging_proxy() as (proxy_url, seen):
        result = await crawl(urls, ON, ProxiedSpider, proxy_url=proxy_url)
    assert site.url(WELL_KNOWN) in seen
    assert file_status(site, result.items) == (True, "read")
