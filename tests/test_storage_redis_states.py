"""RedisStorage's shared states (``storage/redis_states.py``), against the tests' own
redis-server: one fetch lease per origin for the fleet, states published in Redis's clock and
read back in this process's, and damaged states ignored (RFC 9309 §2.4: a process falls back
on a state only it can read; a fetch replaces the others)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_robotsmeta.robotstxt import policy
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.state import OriginState, Published, Timing, shift_times
from scrapy_robotsmeta.storage.redis_link import RedisLink
from scrapy_robotsmeta.storage.redis_states import RedisStates

ORIGIN = Origin("https", "example.com", 443)
STATE = "robotsmeta:list:state:https://example.com"
LEASE = "robotsmeta:list:lease:https://example.com"
BODY = b"User-agent: *\nDisallow: /private/\n"
LEASE_MS = 60_000
GRACE = 3600.0

Links = Callable[..., RedisLink]


def states(link: RedisLink) -> RedisStates:
    return RedisStates(link, LEASE_MS, GRACE)


def rules_snapshot() -> dict[str, Any]:
    """The state of ORIGIN after its robots.txt answered 200 at 0 s (a day's cache life)."""
    state, timing = OriginState(ORIGIN), Timing()
    state.start_fetch(0.0, timing)
    state.apply(policy.from_response(200, BODY), 0.0, timing)
    return state.snapshot()


def never(published: Published) -> bool:
    return False


DAMAGED = [
    pytest.param({b"snapshot": b"{not json"}, "not JSON", id="not-json"),
    pytest.param({b"body": BODY}, "no snapshot", id="no-snapshot"),
    pytest.param(
        {b"snapshot": json.dumps(rules_snapshot()).encode()},
        "rules without their body",
        id="rules-without-body",
    ),
    pytest.param(
        {b"snapshot": json.dumps({**rules_snapshot(), "version": -1}).encode(), b"body": BODY},
        "version -1",
        id="another-version",
    ),
]


@pytest.mark.parametrize(("fields", "why"), DAMAGED)
def test_a_state_this_process_cannot_read_is_ignored_and_warned_about_once(
    redis_links: Links, caplog: pytest.LogCaptureFixture, fields: dict[bytes, bytes], why: str
) -> None:
    link = redis_links()
    shared = states(link)
    with caplog.at_level(logging.WARNING, "scrapy_robotsmeta.storage.redis"):
        assert shared.published(ORIGIN, fields) is None
        assert shared.published(ORIGIN, fields) is None
    assert link.stats.get_value("robotstxt/redis/unreadable_state") == 1
    [record] = caplog.records
    assert record.getMessage().startswith(
        f"Ignored the robots.txt state of https://example.com in Redis ({why}"
    )


def test_no_state_in_redis_is_none(redis_links: Links) -> None:
    assert states(redis_links()).published(ORIGIN, {}) is None


def test_a_state_read_from_redis_has_its_times_in_this_process_clock(
    redis_links: Links,
) -> None:
    link = redis_links()
    link.offset = 100.0  # Redis's clock is 100 s ahead of this process's
    in_redis = shift_times(rules_snapshot(), 100.0)
    fields = {b"snapshot": json.dumps(in_redis).encode(), b"body": BODY}
    published = states(link).published(ORIGIN, fields)
    assert published == Published(shift_times(in_redis, -100.0), BODY)
    assert published.snapshot["expires_at"] == rules_snapshot()["expires_at"]


@deferred_f_from_coro_f
async def test_a_published_state_is_in_redis_clock_and_expires_past_its_end(
    redis_links: Links, redis_url: str
) -> None:
    link = redis_links()
    shared = states(link)
    snapshot = rules_snapshot()
    await shared.publish(ORIGIN, snapshot, BODY, fetched=True)
    assert link.stats.get_value("robotstxt/redis/published") == 1
    client = redis.Redis.from_url(redis_url)
    stored = client.hgetall(STATE)
    assert stored[b"body"] == BODY
    assert link.offset is not None
    assert json.loads(stored[b"snapshot"]) == shift_times(snapshot, link.offset)
    # Kept a grace time past its end (here, with this process's clock at 0, its expiry).
    expected_ms = int(1000 * (snapshot["expires_at"] + GRACE)) + LEASE_MS
    assert 0 < client.pttl(STATE) <= expected_ms
    client.close()
    [(origin, published)] = await shared.poll([ORIGIN], [])
    assert origin == ORIGIN
    assert published is not None
    assert published.body == BODY
    assert published.snapshot["kind"] == snapshot["kind"]


@deferred_f_from_coro_f
async def test_a_poll_tells_origins_parked_by_the_fleet_even_without_a_state(
    redis_links: Links,
) -> None:
    other = Origin("https", "other.example", 443)
    shared = states(redis_links())
    assert await shared.poll([ORIGIN], [other]) == [(other, None)]


@deferred_f_from_coro_f
async def test_one_process_of_the_fleet_holds_the_fetch_lease(
    redis_links: Links, redis_url: str
) -> None:
    first, second = states(redis_links()), states(redis_links())
    assert await first.claim_fetch(ORIGIN, never)
    assert not await second.claim_fetch(ORIGIN, never)
    assert second.link.stats.get_value("robotstxt/redis/lease_busy") == 1
    client = redis.Redis.from_url(redis_url)
    assert client.get(LEASE) == first.link.id.encode()
    await first.close()  # its leases are dropped: the other process may fetch at once
    assert await second.claim_fetch(ORIGIN, never)
    assert client.get(LEASE) == second.link.id.encode()
    await second.close()
    client.close()


@deferred_f_from_coro_f
async def test_a_published_state_that_settles_the_fetch_takes_no_lease(
    redis_links: Links, redis_url: str
) -> None:
    publisher, other = states(redis_links()), states(redis_links())
    await publisher.publish(ORIGIN, rules_snapshot(), BODY, fetched=False)
    assert not await other.claim_fetch(ORIGIN, lambda published: published.body == BODY)
    assert not redis.Redis.from_url(redis_url).exists(LEASE)


@deferred_f_from_coro_f
async def test_a_process_that_lost_redis_fetches_for_itself(redis_links: Links) -> None:
    link = redis_links()
    link.down = True
    assert await states(link).claim_fetch(ORIGIN, never)
    assert link.stats.get_value("robotstxt/redis/lease_busy") is None


@deferred_f_from_coro_f
async def test_a_state_published_with_evidence_reads_back_with_it(redis_links: Links) -> None:
    """A process of the fleet that adopts the state gets the evidence of the fetch in force,
    its time as it was (the wall clock's), whatever the clocks' offset."""
    link = redis_links()
    link.offset = 100.0
    state, timing = OriginState(ORIGIN), Timing()
    state.start_fetch(0.0, timing)
    outcome = policy.stamped(
        dataclasses.replace(
            policy.from_response(200, BODY),
            hops=(policy.Hop("https://example.com/robots.txt", 200),),
        ),
        1.7e9,
    )
    state.apply(outcome, 0.0, timing)
    shared = states(link)
    await shared.publish(ORIGIN, state.snapshot(), BODY, fetched=True)
    [(_, published)] = await shared.poll([ORIGIN], [])
    assert published is not None
    other = OriginState(ORIGIN)
    other.adopt(*published)
    assert other.fetched == state.fetched
    assert other.fetched is not None
    assert other.fetched.at == 1.7e9
    assert other.fetched.sha256 == hashlib.sha256(BODY).hexdigest()
