"""RobotsTxtResponses: the last robots.txt response of each origin, kept within a memory bound
to answer the spider's own requests for it as the site served it."""

from __future__ import annotations

from scrapy import Request
from scrapy.http import Response, TextResponse
from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock

from scrapy_robotsmeta.robotstxt import MAX_BYTES
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.robotstxt_responses import (
    RESPONSE_BYTES,
    SHARED_FLAG,
    RobotsTxtResponses,
    is_robotstxt_request,
)

ORIGIN = Origin("https", "example.com", 443)
ROBOTS = "https://example.com/robots.txt"


LIFETIME = 86400.0


def responses(memory: int = 1_000_000, clock: Clock | None = None) -> RobotsTxtResponses:
    stats = get_crawler().stats
    assert stats is not None
    return RobotsTxtResponses(stats, memory, LIFETIME, clock or Clock())


def served(body: bytes = b"User-agent: *\nDisallow: /x\n", **headers: str) -> TextResponse:
    return TextResponse(
        ROBOTS,
        status=200,
        body=body,
        headers={"Content-Type": "text/plain", **headers},
        flags=["cached"],
        request=Request(ROBOTS, meta={"robotstxt_fetch": True}),
    )


def test_only_a_plain_get_of_the_origins_robots_txt_is_answered() -> None:
    assert is_robotstxt_request(Request(ROBOTS))
    assert is_robotstxt_request(Request("http://127.0.0.1:8080/robots.txt"))
    for other in (
        Request(ROBOTS, method="HEAD"),
        Request(ROBOTS, method="POST"),
        Request(ROBOTS + "?x=1"),
        Request("https://example.com/robots.txt.bak"),
        Request("https://example.com/dir/robots.txt"),
        Request("https://example.com/"),
    ):
        assert not is_robotstxt_request(other), other


def test_each_answer_is_a_copy_for_its_request_flagged() -> None:
    kept = responses()
    kept.keep(ORIGIN, served())
    first, second = Request(ROBOTS), Request(ROBOTS, dont_filter=True)
    a, b = kept.answer(first, ORIGIN), kept.answer(second, ORIGIN)
    assert a is not None
    assert b is not None
    assert (a.request, b.request) == (first, second)
    assert a.flags == b.flags == ["cached", SHARED_FLAG]
    assert isinstance(a, TextResponse)
    assert a.text == "User-agent: *\nDisallow: /x\n"
    a.headers[b"X-Changed"] = b"1"
    assert b"X-Changed" not in b.headers
    assert kept.answer(Request("https://example.com/page"), ORIGIN) is None


def test_headers_of_the_bytes_on_the_wire_are_dropped() -> None:
    """A decoded or cut body no longer has the length its Content-Length gave."""
    kept = responses()
    body = b"User-agent: *\n"
    kept.keep(ORIGIN, served(body, **{"Content-Encoding": "gzip", "Content-Length": "3"}))
    answer = kept.answer(Request(ROBOTS), ORIGIN)
    assert answer is not None
    assert b"Content-Encoding" not in answer.headers
    assert b"Content-Length" not in answer.headers
    kept.keep(ORIGIN, served(body, **{"Content-Length": str(len(body))}))
    answer = kept.answer(Request(ROBOTS), ORIGIN)
    assert answer is not None
    assert answer.headers[b"Content-Length"] == str(len(body)).encode()


def test_the_body_is_kept_up_to_the_500_kib_the_package_reads() -> None:
    """RFC 9309 §2.5: the first 500 KiB are what the package reads and keeps."""
    kept = responses(2 * MAX_BYTES)
    kept.keep(ORIGIN, served(b"#" * (MAX_BYTES + 10)))
    answer = kept.answer(Request(ROBOTS), ORIGIN)
    assert answer is not None
    assert len(answer.body) == MAX_BYTES


def test_a_fetch_that_got_no_answer_forgets_the_last_one() -> None:
    kept = responses()
    kept.keep(ORIGIN, served())
    kept.keep(ORIGIN, None)
    assert kept.answer(Request(ROBOTS), ORIGIN) is None


def test_the_least_recently_fetched_leave_past_the_memory_bound() -> None:
    body = b"x" * 1000
    size = RESPONSE_BYTES + len(body) + len(b"Content-Type") + len(b"text/plain")
    kept = responses(3 * size)
    origins = [origin_of(f"https://{n}.example.com/") for n in range(4)]
    for origin in origins:
        assert origin is not None
        kept.keep(origin, served(body))
    answers = [kept.answer(Request(ROBOTS), origin) for origin in origins if origin]
    assert [answer is not None for answer in answers] == [False, True, True, True]
    assert kept.memory >= kept.kept_bytes == 3 * size


def test_a_response_larger_than_the_bound_is_not_kept() -> None:
    kept = responses(0)
    kept.keep(ORIGIN, served())
    assert kept.answer(Request(ROBOTS), ORIGIN) is None
    big = responses(RESPONSE_BYTES + 100)
    big.keep(ORIGIN, served(b"x" * 200))
    assert big.answer(Request(ROBOTS), ORIGIN) is None


def test_any_response_class_and_status_is_kept_as_served() -> None:
    kept = responses()
    kept.keep(ORIGIN, Response(ROBOTS, status=404, body=b"not found"))
    answer = kept.answer(Request(ROBOTS), ORIGIN)
    assert answer is not None
    assert type(answer) is Response
    assert (answer.status, answer.body) == (404, b"not found")


def test_a_response_is_never_older_than_a_robots_txt_may_be() -> None:
    """RFC 9309 §2.4: a robots.txt is kept 24 hours (ROBOTSTXT_CACHE_EXPIRATION); its response
    too, though the rules in force (another process's later fetch) may have been kept longer."""
    clock = Clock()
    kept = responses(clock=clock)
    kept.keep(ORIGIN, served())
    clock.advance(LIFETIME)
    assert kept.answer(Request(ROBOTS), ORIGIN) is not None
    clock.advance(1)
    assert kept.answer(Request(ROBOTS), ORIGIN) is None
    assert kept.kept_bytes == 0


def test_keeping_one_lets_the_expired_ones_go() -> None:
    clock = Clock()
    kept = responses(clock=clock)
    first = origin_of("https://first.example.com/")
    assert first is not None
    kept.keep(first, served())
    clock.advance(LIFETIME + 1)
    kept.keep(ORIGIN, served())
    alone = responses()
    alone.keep(ORIGIN, served())
    assert kept.kept_bytes == alone.kept_bytes
    assert kept.answer(Request("https://first.example.com/robots.txt"), first) is None
