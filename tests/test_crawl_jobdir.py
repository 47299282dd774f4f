"""Requests waiting on robots.txt across a pause: JOBDIR, a clean stop, the same command again.

Each test stops a real crawl while requests wait on an origin's robots.txt, lets the site
change, resumes the crawl with the same JOBDIR and reads from the server's log that every
waiting request was fetched (or refused, as the robots.txt then said) exactly once.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.parking import JOBDIR_FOLDER
from scrapy_robotsmeta.robotstxt.statefile import FILENAME
from scrapy_robotsmeta.testing import Site, delayed, html, links_page, sequence, static
from tests.crawl import FollowAllSpider, ListSpider, crawl, make_crawler, stop_when
from tests.damage import DAMAGES, queue_folder

UNAVAILABLE = static("", status=503)
# Long enough that a first run's outage retry comes after its stop, which follows within
# milliseconds the requests' parking (the resumed run starts the outage again: it tries at
# once).
RETRY_AFTER_THE_STOP = 5


ALLOW_ALL = static("User-agent: *\nDisallow: /forbidden\n")


def paths(site: Site, prefix: str) -> list[str]:
    return [path for _, path in site.log if path.startswith(prefix)]


def pages_site(site: Site, count: int, robots: Any) -> list[str]:
    site.add({"/robots.txt": robots})
    site.add({f"/p/{i}": html(f"page {i}") for i in range(count)})
    site.add({"/forbidden": html("no")})
    return [site.url(f"/p/{i}") for i in range(count)]


async def pause_and_resume(
    urls: list[str],
    settings: dict[str, Any],
    stop: Callable[[dict[str, Any]], bool],
    between: Callable[[], object],
    spider_cls: Any = ListSpider,
) -> tuple[Any, Any]:
    first = make_crawler(spider_cls, settings)
    stop_when(first, stop)
    before = await crawl(urls, crawler=first)
    between()
    after = await crawl(urls, settings, spider_cls)
    return before, after


@deferred_f_from_coro_f
async def test_requests_parked_for_an_outage_survive_a_pause(site: Site, tmp_path: Path) -> None:
    """RFC 9309 §2.3.1.4 makes requests wait while robots.txt is unreachable; a pause in that
    wait loses none of them: the resumed crawl fetches each once, and refuses the forbidden."""
    urls = pages_site(site, 50, UNAVAILABLE)
    urls.append(site.url("/forbidden"))
    settings = {"JOBDIR": str(tmp_path), "ROBOTSTXT_RETRY_DELAY": RETRY_AFTER_THE_STOP}
    before, after = await pause_and_resume(
        urls,
        settings,
        lambda stats: stats.get("robotstxt/parked", 0) >= len(urls),
        lambda: site.add({"/robots.txt": ALLOW_ALL}),
    )
    assert before.stats["finish_reason"] == "shutdown"
    assert before.stat("robotstxt/dropped_on_close") == 0
    # The stop did not wait for the outage: the retry, seconds later, never happened.
    assert before.stat("robotstxt/request_count") == 1
    assert before.stat("robotstxt/parked/disk") == len(urls)
    resumed = paths(site, "/p/")  # nothing was fetched before the pause
    assert sorted(resumed) == sorted(f"/p/{i}" for i in range(50))
    assert site.hits["/forbidden"] == 0
    assert after.stat("robotstxt/forbidden") == 1
    assert after.stat("robotstxt/dropped_on_close") == 0
    assert not any((tmp_path / JOBDIR_FOLDER).iterdir())  # every queue drained


@deferred_f_from_coro_f
async def test_requests_waiting_on_a_slow_robots_txt_survive_a_pause(
    site: Site, tmp_path: Path
) -> None:
    """The pause comes while the robots.txt download itself is in flight, every request
    waiting for it: parked, or inside the downloader (ROBOTSTXT_HOLD_TIME). A clean stop lets
    the latter finish waiting, as it lets any download finish; none is lost or fetched twice."""
    urls = pages_site(site, 20, delayed(0.5, ALLOW_ALL))
    settings = {"JOBDIR": str(tmp_path)}

    def all_waiting(stats: dict[str, Any]) -> bool:
        waiting: int = stats.get("robotstxt/held", 0) + stats.get("robotstxt/parked", 0)
        return waiting >= len(urls)

    before, _ = await pause_and_resume(
        urls, settings, all_waiting, lambda: site.add({"/robots.txt": ALLOW_ALL})
    )
    assert before.stats["finish_reason"] == "shutdown"
    assert before.stat("robotstxt/held") >= 1
    assert before.stat("robotstxt/dropped_on_close") == 0
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(20))


@deferred_f_from_coro_f
async def test_a_crawl_spider_resumed_fetches_every_page_once(
    site: Site, other_site: Site, tmp_path: Path
) -> None:
    """Links found before the pause and parked are followed after it, none twice, though the
    resumed spider finds them all again (start requests are dont_filter in Scrapy): the
    duplicate filter sees parked requests only once they are released."""
    pages = pages_site(site, 30, UNAVAILABLE)
    other_site.add({"/robots.txt": ALLOW_ALL, "/": links_page(*pages)})
    settings = {"JOBDIR": str(tmp_path), "ROBOTSTXT_RETRY_DELAY": RETRY_AFTER_THE_STOP}
    first = make_crawler(FollowAllSpider, settings)
    stop_when(first, lambda stats: stats.get("robotstxt/parked", 0) >= 30)
    await crawl([other_site.url("/")], crawler=first)
    assert not paths(site, "/p/")
    site.add({"/robots.txt": ALLOW_ALL})
    await crawl([other_site.url("/")], settings, FollowAllSpider)
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(30))
    assert other_site.hits["/"] == 2


@deferred_f_from_coro_f
async def test_closespider_itemcount_with_jobdir_keeps_the_parked_requests(
    site: Site, other_site: Site, tmp_path: Path
) -> None:
    """A crawl closed by CLOSESPIDER_ITEMCOUNT while one origin is down keeps that origin's
    requests for the next run."""
    down = pages_site(site, 10, UNAVAILABLE)
    up = pages_site(other_site, 3, ALLOW_ALL)
    settings = {
        "JOBDIR": str(tmp_path),
        "ROBOTSTXT_RETRY_DELAY": RETRY_AFTER_THE_STOP,
        "CLOSESPIDER_ITEMCOUNT": 3,
    }
    before = await crawl(up + down, settings, ListSpider)
    assert before.stats["finish_reason"] == "closespider_itemcount"
    assert before.stat("robotstxt/dropped_on_close") == 0
    site.add({"/robots.txt": ALLOW_ALL})
    await crawl(up + down, {**settings, "CLOSESPIDER_ITEMCOUNT": 0}, ListSpider)
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(10))


@deferred_f_from_coro_f
async def test_parked_requests_past_the_memory_limit_wait_on_disk(site: Site) -> None:
    """Without JOBDIR, requests past ROBOTSTXT_PARKED_MEMORY_LIMIT wait in a temporary disk
    queue, and are all fetched once the origin recovers."""
    urls = pages_site(site, 40, sequence(UNAVAILABLE, ALLOW_ALL))
    settings = {"ROBOTSTXT_PARKED_MEMORY_LIMIT": 5, "ROBOTSTXT_RETRY_DELAY": 0.2}
    result = await crawl(urls, settings, ListSpider)
    assert result.stat("robotstxt/parked/memory") == 5
    assert result.stat("robotstxt/parked/disk") == 35
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(40))


@deferred_f_from_coro_f
async def test_without_jobdir_a_stop_counts_the_parked_requests_once(site: Site) -> None:
    """Nothing survives the process without JOBDIR, as in Scrapy: the requests are counted."""
    urls = pages_site(site, 12, UNAVAILABLE)
    crawler = make_crawler(ListSpider, {"ROBOTSTXT_RETRY_DELAY": RETRY_AFTER_THE_STOP})
    stop_when(crawler, lambda stats: stats.get("robotstxt/parked", 0) >= len(urls))
    result = await crawl(urls, crawler=crawler)
    assert result.stat("robotstxt/dropped_on_close") == len(urls)


@deferred_f_from_coro_f
async def test_duplicates_parked_before_the_duplicate_filter_are_fetched_once(
    site: Site, tmp_path: Path
) -> None:
    """Parked requests have not met the duplicate filter yet; released, they do, so the same
    URL parked three times (and found again by the resumed spider) is fetched once."""
    urls = pages_site(site, 4, UNAVAILABLE)
    tripled = urls * 3
    settings = {"JOBDIR": str(tmp_path), "ROBOTSTXT_RETRY_DELAY": RETRY_AFTER_THE_STOP}
    await pause_and_resume(
        tripled,
        settings,
        lambda stats: stats.get("robotstxt/parked", 0) >= len(tripled),
        lambda: site.add({"/robots.txt": ALLOW_ALL}),
    )
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(4))


async def park_then_resume_parked_only(
    urls: list[str], settings: dict[str, Any], between: Callable[[], object]
) -> Any:
    """Stop a crawl once every URL is parked; resume it with no start URL, so that only the
    parked requests can bring a page in. No state file: the resumed run asks robots.txt again
    at once instead of waiting for the outage's next try."""
    settings = {**settings, "ROBOTSTXT_CACHE_SPILL": False}
    first = make_crawler(ListSpider, settings)
    stop_when(first, lambda stats: stats.get("robotstxt/parked", 0) >= len(urls))
    await crawl(urls, crawler=first)
    between()
    return await crawl([], settings, ListSpider)


def warning_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
@deferred_f_from_coro_f
async def test_a_damaged_parked_queue_costs_only_its_unreadable_requests(
    site: Site,
    other_site: Site,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    damage: Callable[[Path], int],
) -> None:
    """One origin's queue damaged between two runs: the resumed crawl fetches what it still
    holds, counts and logs the rest once (naming the origin and the folder), and fetches every
    request of the other origin."""
    damaged = pages_site(site, 50, UNAVAILABLE)
    intact = pages_site(other_site, 10, UNAVAILABLE)
    folder = tmp_path / JOBDIR_FOLDER
    kept = 0

    def between() -> None:
        nonlocal folder, kept
        folder = queue_folder(tmp_path, site.origin)
        kept = damage(folder)
        site.add({"/robots.txt": ALLOW_ALL})
        other_site.add({"/robots.txt": ALLOW_ALL})

    with caplog.at_level(logging.INFO):
        after = await park_then_resume_parked_only(
            damaged + intact, {"JOBDIR": str(tmp_path)}, between
        )
    fetched = paths(site, "/p/")
    assert len(fetched) == len(set(fetched)) == kept
    assert sorted(paths(other_site, "/p/")) == sorted(f"/p/{i}" for i in range(10))
    assert after.stat("robotstxt/parked/lost") + after.stat("robotstxt/parked/malformed") == (
        50 - kept
    )
    assert after.stat("robotstxt/parked/damaged") == 1
    [line] = [line for line in warning_lines(caplog) if "damaged" in line]
    assert site.origin in line
    assert str(folder) in line
    assert not any(record.exc_info for record in caplog.records)
    assert not any((tmp_path / JOBDIR_FOLDER).iterdir())


@deferred_f_from_coro_f
async def test_a_parked_folder_that_cannot_be_written_keeps_requests_in_memory(
    site: Site, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """JOBDIR/robotstxt-parked cannot be made (a file is in its place; as root, permissions
    would not stop a write): every parked request waits in memory instead, the failure is
    logged once, and the crawl fetches every page once, no request sent round in a loop."""
    (tmp_path / JOBDIR_FOLDER).write_text("not a folder")
    urls = pages_site(site, 20, sequence(UNAVAILABLE, ALLOW_ALL))
    settings = {"JOBDIR": str(tmp_path), "ROBOTSTXT_RETRY_DELAY": 0.2}
    with caplog.at_level(logging.INFO):
        result = await crawl(urls, settings, ListSpider)
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(20))
    parked = result.stat("robotstxt/parked")
    assert parked >= 1
    assert result.stat("robotstxt/parked/disk_errors") == parked
    assert result.stat("robotstxt/parked/memory") == parked
    assert result.stat("robotstxt/dropped_on_close") == 0
    [line] = warning_lines(caplog)
    assert "Cannot write parked requests" in line
    assert not any(record.exc_info for record in caplog.records)


@deferred_f_from_coro_f
async def test_with_the_json_serializer_parked_requests_survive_a_pause(
    site: Site, tmp_path: Path
) -> None:
    """ROBOTSTXT_PARKED_SERIALIZER: the JSON serializer keeps what a resumed crawl needs of a
    parked request, its callback (by name) included."""
    urls = pages_site(site, 20, UNAVAILABLE)
    settings = {
        "JOBDIR": str(tmp_path),
        "ROBOTSTXT_PARKED_SERIALIZER": "scrapy_robotsmeta.serializers.json",
    }
    after = await park_then_resume_parked_only(
        urls, settings, lambda: site.add({"/robots.txt": ALLOW_ALL})
    )
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(20))
    assert after.urls == set(urls)  # items of ListSpider.parse_page, the stored callback
    assert after.stat("robotstxt/parked/malformed") == 0


@deferred_f_from_coro_f
async def test_a_damaged_stored_state_costs_a_fetch_never_a_verdict(
    site: Site, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A resumed crawl reads the robots.txt states of its earlier run from JOBDIR; one whose
    bytes were damaged on disk fails its checksum, is logged and counted, and its origin is
    fetched again: its rules still refuse what they refused."""
    urls = pages_site(site, 2, ALLOW_ALL)
    settings = {"JOBDIR": str(tmp_path)}
    await crawl(urls[:1], settings, ListSpider)
    assert site.hits["/robots.txt"] == 1
    db = sqlite3.connect(tmp_path / FILENAME)
    (record,) = db.execute("SELECT record FROM states").fetchone()
    damaged = bytearray(record)
    damaged[len(damaged) // 2] ^= 0x01
    with db:
        db.execute("UPDATE states SET record = ?", (bytes(damaged),))
    db.close()
    with caplog.at_level(logging.WARNING):
        after = await crawl([urls[1], site.url("/forbidden")], settings, ListSpider)
    assert site.hits["/robots.txt"] == 2
    assert after.stat("robotstxt/cache/damaged") == 1
    assert "Damaged stored robots.txt state" in caplog.text
    assert paths(site, "/p/") == ["/p/0", "/p/1"]
    assert site.hits["/forbidden"] == 0


def sleep_then(seconds: float, change: Callable[[], object]) -> None:
    """The job stands still for *seconds* (past its give-up time), then the site changes."""
    time.sleep(seconds)
    change()


@deferred_f_from_coro_f
async def test_time_stopped_is_not_outage_time(site: Site, tmp_path: Path) -> None:
    """A job stopped during an outage and resumed after its give-up time gives the origin the
    chance an uninterrupted crawl would: the resumed run tries again at once, and crawls the
    pages once robots.txt answers, instead of giving the origin up for time nobody watched."""
    urls = pages_site(site, 5, UNAVAILABLE)
    settings = {
        "JOBDIR": str(tmp_path),
        "ROBOTSTXT_RETRY_DELAY": RETRY_AFTER_THE_STOP,
        "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 1.0,
    }
    before, after = await pause_and_resume(
        urls,
        settings,
        lambda stats: stats.get("robotstxt/parked", 0) >= len(urls),
        lambda: sleep_then(1.5, lambda: site.add({"/robots.txt": ALLOW_ALL})),
    )
    assert before.stat("robotstxt/given_up") == 0
    assert after.stat("robotstxt/given_up") == 0
    assert sorted(paths(site, "/p/")) == sorted(f"/p/{i}" for i in range(5))
    assert site.hits["/robots.txt"] == 2  # the first run's try, and the resumed run's


@deferred_f_from_coro_f
async def test_an_outage_resumed_is_retried_before_it_is_given_up(
    site: Site, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Still unavailable after the pause, the origin is retried by the resumed run and given
    up after the whole give-up time of that run, which the WARNING reports as it saw it."""
    urls = pages_site(site, 3, UNAVAILABLE)
    settings = {
        "JOBDIR": str(tmp_path),
        "ROBOTSTXT_RETRY_DELAY": 0.3,
        "ROBOTSTXT_UNAVAILABLE_TIMEOUT": 1.0,
    }
    with caplog.at_level(logging.WARNING):
        before, after = await pause_and_resume(
            urls,
            settings,
            lambda stats: stats.get("robotstxt/parked", 0) >= len(urls),
            lambda: sleep_then(1.5, lambda: None),
        )
    assert before.stat("robotstxt/given_up") == 0
    assert after.stat("robotstxt/request_count") >= 2  # retried before it gave up
    assert after.stat("robotstxt/given_up") == 1
    assert after.stat("robotstxt/unavailable_dropped") == 3
    assert "unavailable for 1 s (last: HTTP 503); giving up" in caplog.text
    assert paths(site, "/p/") == []


@deferred_f_from_coro_f
async def test_the_tdmrep_file_of_an_earlier_run_is_kept_with_its_state(
    site: Site, tmp_path: Path
) -> None:
    """TDMRep's tdmrep.json lives in the origin's state: a resumed crawl reads it from JOBDIR
    and asks the site for neither file again, and its items still carry the reservation."""
    urls = pages_site(site, 2, ALLOW_ALL)
    site.add({"/.well-known/tdmrep.json": static('[{"location": "/p/1", "tdm-reservation": 1}]')})
    settings = {"JOBDIR": str(tmp_path), "ROBOTSMETA_TDMREP": True}
    first = await crawl(urls[:1], settings, ListSpider)
    assert [item["robots"]["tdm_reservation"] for item in first.items] == [None]
    after = await crawl(urls[1:], settings, ListSpider)
    assert site.hits["/.well-known/tdmrep.json"] == 1
    assert site.hits["/robots.txt"] == 1
    assert [(i["robots"]["tdm_reservation"], i["robots"]["tdm_file"]) for i in after.items] == [
        (True, "read")
    ]
