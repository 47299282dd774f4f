"""``scrapy robots URL`` run as a real subprocess, against the demo site and the test site."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.testing import (
    Site,
    delayed,
    hang,
    html,
    redirect,
    sequence,
    static,
    with_headers,
)

EXAMPLE_PROJECT = Path(__file__).resolve().parents[1] / "example_project"
# Nothing of the test run's environment may pick the project for the command.
ENV = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
COMMAND = [sys.executable, "-m", "scrapy", "robots"]
# A guard only: every run here takes about a second.
TIMEOUT = 60


def run_scrapy_robots(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def scrapy_robots(*args: str, cwd: Path) -> tuple[int, str]:
    done = run_scrapy_robots(*args, cwd=cwd)
    return done.returncode, done.stdout


def statuses(check: dict[str, Any]) -> list[int]:
    """The status of each try of a check: that of its last request."""
    return [hops[-1]["status"] for hops in check["tries"]]


def scrapy_robots_json(*args: str, cwd: Path) -> tuple[int, dict[str, Any]]:
    status, stdout = scrapy_robots(*args, "--json", cwd=cwd)
    return status, json.loads(stdout)


def test_allowed_url_exits_0_and_explains_the_page(demo: dict[str, str], tmp_path: Path) -> None:
    url = f"{demo['main']}/bot-meta.html"
    status, out = scrapy_robots(url, "--user-agent", "ExampleBot/1.0", cwd=tmp_path)
    assert status == 0
    lines = [line.rstrip() for line in out.splitlines()]
    for expected in (
        "token           examplebot",
        f"  robots.txt    {demo['main']}/robots.txt 200",
        "  policy        rules (HTTP 200)",
        "  group         examplebot",
        "  rule          none matches",
        "  verdict       allowed",
        f"Page 200 {url}",
        "  X-Robots-Tag  none",
        "  meta          max-image-preview:large",
        "  meta          nosnippet, max-image-preview:none",
        "    snippet             false",
        '    max_image_preview   "none"',
        "result: allowed (exit status 0)",
    ):
        assert expected in lines


def test_disallowed_url_exits_1_with_the_deciding_rule(
    demo: dict[str, str], tmp_path: Path
) -> None:
    url = f"{demo['main']}/drafts/wip.html"
    status, report = scrapy_robots_json(url, "--user-agent", "ExampleBot/1.0", cwd=tmp_path)
    assert status == 1
    assert report["exit_status"] == 1
    assert report["allowed"] is False
    assert report["token"] == "examplebot"
    assert report["page"] is None
    assert report["error"].startswith("Forbidden by robots.txt: Disallow: /drafts/ (line 7")
    [check] = report["checks"]
    assert check == {
        "url": url,
        "origin": demo["main"],
        "tries": [[{"url": f"{demo['main']}/robots.txt", "status": 200, "error": None}]],
        "policy": "rules",
        "reason": "HTTP 200",
        "group": ["examplebot"],
        "rule": {"allow": False, "path": "/drafts/", "line": 7},
        "allowed": False,
        "usage_ignored": [],
    }


def test_allow_rule_that_decides_is_shown(demo: dict[str, str], tmp_path: Path) -> None:
    url = f"{demo['main']}/drafts/published.html"
    status, report = scrapy_robots_json(url, "--user-agent", "ExampleBot/1.0", cwd=tmp_path)
    assert status == 0
    assert report["checks"][0]["rule"] == {
        "allow": True,
        "path": "/drafts/published.html",
        "line": 8,
    }


def test_outside_a_project_the_token_is_scrapy_and_gets_the_star_group(
    demo: dict[str, str], tmp_path: Path
) -> None:
    status, report = scrapy_robots_json(f"{demo['main']}/about.html", cwd=tmp_path)
    assert status == 1
    assert report["token"] == "scrapy"
    assert report["user_agent"].startswith("Scrapy/")
    assert report["checks"][0]["group"] == ["*"]
    assert report["checks"][0]["rule"] == {"allow": False, "path": "/", "line": 3}


def test_inside_the_example_project_its_settings_apply(demo: dict[str, str]) -> None:
    """The project's USER_AGENT gives the token; X-Robots-Tag headers of a PDF are read."""
    url = f"{demo['main']}/docs/report.pdf"
    status, report = scrapy_robots_json(url, cwd=EXAMPLE_PROJECT)
    assert status == 0
    assert report["token"] == "examplebot"
    assert report["user_agent"] == "ExampleBot/1.0 (+https://example.com/bot)"
    page = report["page"]
    assert page["x_robots_tag"] == ["noindex", "examplebot: noarchive, otherbot: nosnippet"]
    assert page["metas"] == []
    assert page["directives"]["index"] is False
    assert page["directives"]["archive"] is False
    assert page["directives"]["snippet"] is True


def test_robots_txt_unavailable_past_the_command_limit_exits_2(
    demo: dict[str, str], tmp_path: Path
) -> None:
    status, report = scrapy_robots_json(
        f"{demo['down']}/", "--robots-timeout", "0.5", cwd=tmp_path
    )
    assert status == 2
    [check] = report["checks"]
    assert check["policy"] == "unavailable"
    assert check["reason"] == "gave up after HTTP 503"
    assert check["allowed"] is False
    # Retried within the limit, each try reported.
    assert len(check["tries"]) > 1
    assert {hop["status"] for hops in check["tries"] for hop in hops} == {503}
    assert "unavailable" in report["error"]
    assert any("ROBOTSTXT_UNAVAILABLE_TIMEOUT" in note for note in report["notes"])


def test_inside_a_project_its_give_up_time_applies_and_the_retries_are_said(
    demo: dict[str, str],
) -> None:
    """RFC 9309 §2.3.1.4: an unavailable robots.txt is retried, here for the project's
    ROBOTSTXT_UNAVAILABLE_TIMEOUT (3 s in the example project), with its retry delay; stderr
    says so while it waits, and the identical tries are printed once with their count."""
    done = run_scrapy_robots(f"{demo['down']}/", cwd=EXAMPLE_PROJECT)
    assert done.returncode == 2
    [notice] = done.stderr.splitlines()
    assert notice.startswith(f"scrapy robots: robots.txt of {demo['down']} unavailable (HTTP 503)")
    assert "; retrying until " in notice
    assert notice.endswith("(3 s: --robots-timeout, or ROBOTSTXT_UNAVAILABLE_TIMEOUT)")
    lines = done.stdout.splitlines()
    [tries] = [line for line in lines if line.startswith("  robots.txt")]
    assert tries.startswith(f"  robots.txt    {demo['down']}/robots.txt 503  (")
    assert tries.endswith(" identical tries)")
    assert "note: robots.txt was retried here for up to 3 s" in lines


def test_4xx_robots_txt_allows_all(demo: dict[str, str], tmp_path: Path) -> None:
    status, out = scrapy_robots(f"{demo['no_robots']}/page.html", cwd=tmp_path)
    assert status == 0
    assert "  policy        allow all (HTTP 404)" in out.splitlines()


@pytest.mark.parametrize(
    "url",
    ["not a url", "http://", "http://[::1", "file:///etc/hostname", "ftp://example.com/"],
)
def test_url_that_cannot_be_checked_exits_2_with_one_line(url: str, tmp_path: Path) -> None:
    done = run_scrapy_robots(url, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("scrapy robots: error: ")
    assert url in line


# The cases the demo site does not have, against the in-test site: the command runs while the
# test's reactor serves, so it is awaited rather than waited for.


async def scrapy_robots_async(*args: str) -> tuple[int, dict[str, Any]]:
    process = await asyncio.create_subprocess_exec(
        *COMMAND, *args, "--json", env=ENV, stdout=subprocess.PIPE
    )
    stdout, _ = await asyncio.wait_for(process.communicate(), TIMEOUT)
    assert process.returncode is not None
    return process.returncode, json.loads(stdout)


@deferred_f_from_coro_f
async def test_each_redirect_target_is_checked(site: Site, other_site: Site) -> None:
    site.add(
        {
            "/robots.txt": static("User-agent: *\nDisallow: /private\n"),
            "/old": redirect(other_site.url("/private/page")),
        }
    )
    other_site.add({"/robots.txt": static("User-agent: *\n\nDisallow: /private\n")})
    status, report = await scrapy_robots_async(site.url("/old"))
    assert status == 1
    first, second = report["checks"]
    assert (first["url"], first["allowed"]) == (site.url("/old"), True)
    assert second["url"] == other_site.url("/private/page")
    assert second["origin"] == other_site.origin
    assert second["rule"] == {"allow": False, "path": "/private", "line": 3}
    assert other_site.hits["/private/page"] == 0


@deferred_f_from_coro_f
async def test_redirected_page_is_the_one_reported(site: Site, other_site: Site) -> None:
    site.add({"/old": redirect(other_site.url("/new"))})
    other_site.add({"/new": html('<meta name="robots" content="noindex, nofollow">')})
    status, report = await scrapy_robots_async(site.url("/old"))
    assert status == 0
    assert [check["policy"] for check in report["checks"]] == ["allow_all", "allow_all"]
    assert report["page"]["url"] == other_site.url("/new")
    assert report["page"]["metas"] == ["noindex, nofollow"]
    assert report["page"]["directives"]["index"] is False
    assert report["page"]["directives"]["follow"] is False


@deferred_f_from_coro_f
async def test_page_download_failure_exits_2(site: Site) -> None:
    site.add({"/slow": hang})
    status, report = await scrapy_robots_async(
        site.url("/slow"), "-s", "DOWNLOAD_TIMEOUT=0.5", "-s", "RETRY_ENABLED=False"
    )
    assert status == 2
    assert report["allowed"] is True
    assert report["page"] is None
    assert "took longer than 0.5 seconds" in report["error"]


@deferred_f_from_coro_f
async def test_http_error_status_of_the_page_is_reported_not_an_error(site: Site) -> None:
    site.add({"/gone": html("<p>gone</p>", status=410, headers={"X-Robots-Tag": "noindex"})})
    status, report = await scrapy_robots_async(site.url("/gone"))
    assert status == 0
    assert report["page"]["status"] == 410
    assert report["page"]["x_robots_tag"] == ["noindex"]


@deferred_f_from_coro_f
async def test_slow_robots_txt_gets_a_verdict(site: Site) -> None:
    """A robots.txt that answers after 300 ms (any site over TLS) is waited for."""
    site.add({"/robots.txt": delayed(0.3, static("User-agent: *\nDisallow: /private\n"))})
    status, report = await scrapy_robots_async(site.url("/private/page"))
    assert status == 1
    [check] = report["checks"]
    assert (check["policy"], statuses(check)) == ("rules", [200])
    assert check["rule"] == {"allow": False, "path": "/private", "line": 2}


@deferred_f_from_coro_f
async def test_recovered_outage_reports_every_try(site: Site) -> None:
    site.add(
        {
            "/robots.txt": sequence(
                static("", status=503),
                static("", status=503),
                static("User-agent: *\nDisallow: /private\n"),
            ),
            "/page": html("<p>hello</p>"),
        }
    )
    status, report = await scrapy_robots_async(
        site.url("/page"), "-s", "ROBOTSTXT_RETRY_DELAY=0.05"
    )
    assert status == 0
    [check] = report["checks"]
    assert statuses(check) == [503, 503, 200]
    assert {hop["url"] for hops in check["tries"] for hop in hops} == {site.url("/robots.txt")}
    assert (check["policy"], check["reason"]) == ("rules", "HTTP 200")


@deferred_f_from_coro_f
async def test_refused_connection_is_named_not_reported_as_a_timeout() -> None:
    # A port that was free a moment ago: nothing listens on it.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status, report = await scrapy_robots_async(
        f"http://127.0.0.1:{port}/page", "--robots-timeout", "0.5"
    )
    assert status == 2
    [check] = report["checks"]
    assert check["policy"] == "unavailable"
    assert "ConnectionRefused" in check["reason"]
    [[hop], *_] = check["tries"]
    assert (hop["status"], "ConnectionRefused" in hop["error"]) == (None, True)
    assert "took longer" not in report["error"]


@deferred_f_from_coro_f
async def test_page_metas_are_read_for_the_crawler_name_not_the_token(site: Site) -> None:
    """archive.org_bot's robots.txt token is "archive", which names another crawler."""
    site.add(
        {
            "/page": html(
                '<meta name="archive.org_bot" content="noindex">'
                '<meta name="archive" content="nofollow">'
            )
        }
    )
    status, report = await scrapy_robots_async(
        site.url("/page"), "--user-agent", "archive.org_bot/1.0"
    )
    assert status == 0
    assert (report["token"], report["crawler_name"]) == ("archive", "archive.org_bot")
    assert report["page"]["metas"] == ["noindex"]
    assert report["page"]["directives"]["index"] is False
    assert report["page"]["directives"]["follow"] is True


def test_usage_preferences_are_shown_with_where_each_was_read(demo: dict[str, str]) -> None:
    """The Content-Signal line and the Content-Usage rule of robots.txt both speak of AI
    training for /open/: each is listed with its line, and the most restrictive applies."""
    url = f"{demo['signals']}/open/data.html"
    status, report = scrapy_robots_json(url, cwd=EXAMPLE_PROJECT)
    assert status == 0
    usage = report["page"]["usage"]
    assert usage["ai_train"] == {
        "allowed": False,
        "statements": [
            {
                "allowed": False,
                "source": "robots.txt line 2: Content-Signal: search=yes, ai-train=no",
            },
            {"allowed": True, "source": "robots.txt line 3: Content-Usage: /open/ train-ai=y"},
        ],
    }
    assert usage["search"]["allowed"] is True
    assert usage["ai_input"] == {"allowed": None, "statements": []}
    status, text = scrapy_robots(f"{demo['main']}/noai.html", cwd=EXAMPLE_PROJECT)
    assert status == 0
    assert "    ai_train            false  no by meta robots: noai" in text.splitlines()
    assert "    search              null   no statement" in text.splitlines()


@deferred_f_from_coro_f
async def test_usage_lines_and_headers_that_state_nothing_are_shown_with_why(
    site: Site,
) -> None:
    """A site owner checking their preferences sees what was not understood: an uppercase
    Content-Usage label (draft-ietf-aipref-vocab-08 §6), a Content-Signal value not yes/no."""
    site.add(
        {
            "/robots.txt": static("User-agent: *\nContent-Usage: Train-AI=n\n"),
            "/page": with_headers(html("p"), ("Content-Signal", "ai-train=maybe")),
        }
    )
    status, report = await scrapy_robots_async(site.url("/page"))
    assert status == 0
    [check] = report["checks"]
    assert check["usage_ignored"] == [
        "robots.txt line 2: Content-Usage: Train-AI=n: not a structured-field dictionary; "
        "it states nothing"
    ]
    assert report["page"]["usage_ignored"] == [
        "header Content-Signal: ai-train=maybe: ai-train: expected yes or no"
    ]
    assert report["page"]["usage"]["ai_train"] == {"allowed": None, "statements": []}


def test_tdmrep_is_shown_by_source_with_its_precedence(demo: dict[str, str]) -> None:
    """TDMRep: the tdmrep.json rule that matched (the first, with its policy), the headers and
    the metas, then the reservation after the protocol's precedence; the command reads it even
    where the project's crawl would not, and says so."""
    url = f"{demo['publisher']}/journals/licensed.html"
    status, report = scrapy_robots_json(url, cwd=EXAMPLE_PROJECT)
    assert status == 0
    assert report["page"]["tdmrep"] == {
        "file": "read",
        "file_reason": "",
        "file_rule": "tdmrep.json rule 2 (location /)",
        "file_reservation": True,
        "headers": {"tdm-reservation": None, "tdm-policy": None},
        "metas": {"tdm-reservation": "0", "tdm-policy": None},
        "tdm_reservation": False,
        "tdm_policy": None,
        "tdm_file": "read",
        "source": "meta tdm-reservation: 0",
        "policy_source": "tdmrep.json rule 2 (location /)",
    }
    assert report["page"]["usage"]["ai_train"]["statements"] == [
        {"allowed": True, "source": "meta tdm-reservation: 0"}
    ]
    status, text = scrapy_robots(f"{demo['publisher']}/journals/article.html", cwd=EXAMPLE_PROJECT)
    lines = text.splitlines()
    policy = f"{demo['publisher']}/tdm-policy.json"
    assert (
        "    tdmrep.json         read: tdmrep.json rule 2 (location /): tdm-reservation true, "
        f"tdm-policy {policy}"
    ) in lines
    assert "    header              none" in lines
    assert "    tdm_reservation     true   by tdmrep.json rule 2 (location /)" in lines
    assert f'    tdm_policy          "{policy}" by tdmrep.json rule 2 (location /)' in lines


@deferred_f_from_coro_f
async def test_tdmrep_outside_a_project_is_read_with_a_note(site: Site) -> None:
    """Without a purpose the crawl would not consult TDMRep: the command reads it and notes
    that; an absent file is said with its answer, a header supersedes it."""
    site.add({"/page": with_headers(html("p"), ("tdm-reservation", "1"))})
    status, report = await scrapy_robots_async(site.url("/page"))
    assert status == 0
    tdmrep = report["page"]["tdmrep"]
    assert (tdmrep["file"], tdmrep["file_reason"]) == ("absent", "HTTP 404")
    assert (tdmrep["tdm_reservation"], tdmrep["source"]) == (True, "header tdm-reservation: 1")
    assert any("a crawl with these settings does not consult it" in n for n in report["notes"])
