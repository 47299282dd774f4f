"""The robots.txt fetch inside a real project's downloader stack (``fetcher.py``): HTTP cache,
size limits, compression, proxies and redirects off the web, each read from what the server
saw."""

from __future__ import annotations

import gzip
import logging
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request, signals
from scrapy.http import Response, TextResponse
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.web import server

from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.testing import Site, html, sequence, static
from tests.compression import BOMB_SIZE, ENCODINGS, bomb, module
from tests.crawl import ListSpider, crawl, make_crawler
from tests.proxy import ProxiedSpider, logging_proxy
from tests.rules import padded

RULES = "User-agent: *\nDisallow: /private\n"


UNAVAILABLE = static("", status=503)


def pages(site: Site, robots: Any, count: int = 5) -> list[str]:
    site.add({"/robots.txt": robots, "/private": html("no")})
    site.add({f"/p/{i}": html(f"page {i}") for i in range(count)})
    return [site.url(f"/p/{i}") for i in range(count)] + [site.url("/private")]


def page_hits(site: Site) -> int:
    return sum(count for path, count in site.hits.items() if path.startswith("/p/"))


def large(size: int) -> bytes:
    """A robots.txt of *size* bytes whose rule comes first, padded with comments."""
    return padded(RULES, size)


# -- Scrapy's HTTP cache -------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_an_http_cached_outage_is_retried_at_the_site(site: Site, tmp_path: Path) -> None:
    """RFC 9309 §2.3.1.4: an unreachable robots.txt is tried again later. With Scrapy's HTTP
    cache on, each retry still reaches the site, and the origin recovers when the site does."""
    urls = pages(site, sequence(UNAVAILABLE, UNAVAILABLE, static(RULES)))
    settings = {
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "ROBOTSTXT_RETRY_DELAY": 0.1,
    }
    result = await crawl(urls, settings, ListSpider)
    assert site.hits["/robots.txt"] == 3
    assert page_hits(site) == 5
    assert site.hits["/private"] == 0
    assert result.stat("robotstxt/forbidden") == 1


@deferred_f_from_coro_f
async def test_a_cached_outage_from_an_earlier_run_is_not_replayed(
    site: Site, tmp_path: Path
) -> None:
    """The cache of an earlier run holds a 503: it is skipped, the site asked, and its answer
    stored, so that a later offline replay finds the recovered robots.txt."""
    urls = pages(site, UNAVAILABLE)
    settings = {
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
        "ROBOTSTXT_RETRY_DELAY": 60,
        "CLOSESPIDER_TIMEOUT": 0.5,
    }
    await crawl(urls, settings, ListSpider)
    assert site.hits["/robots.txt"] == 1  # the 503 is now in the cache
    site.add({"/robots.txt": static(RULES)})
    second = await crawl(urls, {**settings, "CLOSESPIDER_TIMEOUT": 0}, ListSpider)
    assert site.hits["/robots.txt"] == 2
    assert second.stat("robotstxt/cached_unavailable_skipped") == 1
    assert page_hits(site) == 5
    site.add({"/robots.txt": UNAVAILABLE})  # an offline replay never asks the site
    third = await crawl(urls, {**settings, "CLOSESPIDER_TIMEOUT": 0}, ListSpider)
    assert site.hits["/robots.txt"] == 2
    assert third.stat("robotstxt/forbidden") == 1


# -- Size limits and compression ------------------------------------------------------------


@deferred_f_from_coro_f
async def test_a_robots_txt_larger_than_download_maxsize_applies_its_rules(site: Site) -> None:
    """RFC 9309 §2.5: at least the first 500 KiB are parsed, whatever DOWNLOAD_MAXSIZE says."""
    urls = pages(site, static(large(200_000)))
    result = await crawl(urls, {"DOWNLOAD_MAXSIZE": 100_000}, ListSpider)
    assert site.hits["/private"] == 0
    assert result.stat("robotstxt/forbidden") == 1
    assert page_hits(site) == 5


@deferred_f_from_coro_f
async def test_a_gzipped_robots_txt_larger_than_download_maxsize_applies_its_rules(
    site: Site,
) -> None:
    """The same file compressed: decompression past DOWNLOAD_MAXSIZE never means allow-all."""
    body = gzip.compress(large(200_000))
    urls = pages(site, static(body, headers={"Content-Encoding": "gzip"}))
    result = await crawl(urls, {"DOWNLOAD_MAXSIZE": 100_000}, ListSpider)
    assert site.hits["/private"] == 0
    assert result.stat("robotstxt/forbidden") == 1


@deferred_f_from_coro_f
async def test_a_decoded_robots_txt_reads_its_text_from_the_decoded_bytes(site: Site) -> None:
    """What Scrapy's response_received gives other components for the package's fetch: the
    text of the decoded body (UTF-8 here, no charset named), not a guess from the gzip bytes."""
    rules = "User-agent: *\nDisallow: /café\n"
    site.add(
        {
            "/robots.txt": static(
                gzip.compress(rules.encode()), headers={"Content-Encoding": "gzip"}
            )
        }
    )
    crawler = make_crawler(ListSpider)
    texts: list[str] = []

    def received(response: Response, request: Request) -> None:
        if response.url.endswith("/robots.txt") and isinstance(response, TextResponse):
            texts.append(response.text)

    crawler.signals.connect(received, signals.response_received, weak=False)
    await crawl([site.url("/")], crawler=crawler)
    assert texts == [rules]


@pytest.mark.parametrize("content_encoding", [*ENCODINGS, "gzip, br"])
@deferred_f_from_coro_f
async def test_a_decompression_bomb_is_read_to_500_kib_only(
    site: Site, content_encoding: str, caplog: pytest.LogCaptureFixture
) -> None:
    """RFC 9309 §2.5: a small compressed body that expands to 128 MiB, whichever encoding
    the server chose (robots.txt requests accept only gzip and deflate; a server may send
    any): its first rules apply, the rest is ignored (logged and counted), and the whole
    crawl allocates less than a quarter of what the bomb expands to."""
    bomb_body = bomb(content_encoding, RULES.encode())
    urls = pages(site, static(bomb_body, headers={"Content-Encoding": content_encoding}))
    tracemalloc.start()
    try:
        with caplog.at_level(logging.INFO, logger="scrapy_robotsmeta"):
            result = await crawl(urls, {"DOWNLOAD_MAXSIZE": 1_000_000}, ListSpider)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert site.hits["/private"] == 0
    assert result.stat("robotstxt/forbidden") == 1
    assert result.stat("robotstxt/truncated") == 1
    assert f"is larger than {MAX_BYTES} bytes; the rest is ignored" in caplog.text
    assert result.stat("robotstxt/undecodable") == 0
    assert page_hits(site) == 5
    assert peak < BOMB_SIZE // 4


@pytest.mark.parametrize("encoding", ENCODINGS)
@deferred_f_from_coro_f
async def test_a_damaged_compressed_robots_txt_is_unavailable_then_retried(
    site: Site, encoding: str, caplog: pytest.LogCaptureFixture
) -> None:
    """RFC 9309 §2.3.1.4: a body that does not decode as its Content-Encoding says is not the
    site's rules, nor "no robots.txt": the origin waits, logged and counted, and the retry's
    answer applies."""
    module(encoding)
    damaged = static(b"\xff" * 64, headers={"Content-Encoding": encoding})
    urls = pages(site, sequence(damaged, static(RULES)))
    with caplog.at_level(logging.INFO, logger="scrapy_robotsmeta"):
        result = await crawl(urls, {"ROBOTSTXT_RETRY_DELAY": 0.1}, ListSpider)
    assert f"unavailable (body not decodable ({encoding}: " in caplog.text
    assert result.stat("robotstxt/undecodable") == 1
    assert site.hits["/robots.txt"] == 2
    assert site.hits["/private"] == 0
    assert page_hits(site) == 5


class Streamed:
    """An endless robots.txt written in chunks as the client reads, counting what was sent."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.sent = 0

    def __call__(self, request: server.Request) -> int:
        request.setHeader("Content-Type", "text/plain")
        request.setHeader("Content-Length", str(self.total))
        chunk = large(64 * 1024)
        answer = self

        class Producer:
            def resumeProducing(self) -> None:
                if answer.sent >= answer.total or request.finished:
                    request.unregisterProducer()
                    if not request.finished and not request._disconnected:
                        request.finish()
                    return
                answer.sent += len(chunk)
                request.write(chunk)

            def pauseProducing(self) -> None:
                pass

            def stopProducing(self) -> None:
                answer.total = answer.sent

        request.registerProducer(Producer(), False)
        return server.NOT_DONE_YET


@deferred_f_from_coro_f
async def test_a_50_mb_robots_txt_is_downloaded_to_500_kib_only(site: Site) -> None:
    """The download stops soon after the first 500 KiB, which are parsed: a huge robots.txt
    costs the limit in transfer, not its size (the server may have queued a few socket
    buffers' worth more by then)."""
    streamed = Streamed(50_000_000)
    urls = pages(site, streamed)
    result = await crawl(urls, {}, ListSpider)
    assert site.hits["/private"] == 0
    assert result.stat("robotstxt/download_stopped") == 1
    assert result.stat("robotstxt/truncated") == 1
    # About 850 KB here: the 564 KiB read, plus what the socket buffers held by then.
    assert streamed.sent < 2_000_000
    assert page_hits(site) == 5


# -- Proxies ----------------------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_robots_txt_goes_through_the_requests_proxy(site: Site) -> None:
    """The robots.txt request takes the routing meta keys of the request that needed it: a
    site reachable only through a proxy has its robots.txt fetched through it too."""
    urls = pages(site, static(RULES))
    async with logging_proxy() as (proxy_url, seen):
        await crawl(urls, {}, ProxiedSpider, proxy_url=proxy_url)
    assert site.url("/robots.txt") in seen
    assert site.hits["/private"] == 0
    assert page_hits(site) == 5


# -- Redirects stay on the web ------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_a_redirect_to_a_local_file_reads_nothing_and_allows_all(
    site: Site, tmp_path: Path
) -> None:
    """RFC 9309 §2.3.1.2: a robots.txt that redirects where HTTP cannot follow is unavailable
    (4xx): everything is allowed, and no local file is read on the site's say-so."""
    local = tmp_path / "robots.txt"
    local.write_text("User-agent: *\nDisallow: /p/\n")
    urls = pages(site, static(b"", 301, {"Location": local.as_uri()}))
    result = await crawl(urls, {}, ListSpider)
    assert page_hits(site) == 5
    assert site.hits["/private"] == 1
    assert result.stat("robotstxt/redirect_refused") == 1


@deferred_f_from_coro_f
async def test_a_redirect_to_a_data_url_is_refused(site: Site) -> None:
    target = "data:text/plain,User-agent:%20*%0ADisallow:%20/p/"
    urls = pages(site, static(b"", 302, {"Location": target}))
    result = await crawl(urls, {}, ListSpider)
    assert page_hits(site) == 5
    assert result.stat("robotstxt/redirect_refused") == 1
