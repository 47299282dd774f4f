"""The due times of origins (``robotstxt/schedule.py``): the nearest first, a time set again
replacing the last, a cleared one never due."""

from __future__ import annotations

from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.schedule import Schedule

A = Origin("http", "a.example", 80)
B = Origin("http", "b.example", None)  # a port of None next to an int: never compared


def test_times_fall_due_nearest_first_and_once() -> None:
    schedule = Schedule()
    schedule.set(A, 5.0)
    schedule.set(B, 2.0, hold=True)
    assert schedule.next() == 2.0
    assert schedule.pop_due(4.0) == [(B, True)]
    assert schedule.pop_due(5.0) == [(A, False)]
    assert schedule.pop_due(10.0) == []
    assert schedule.next() is None


def test_a_time_set_again_replaces_the_last_and_a_cleared_one_never_falls_due() -> None:
    schedule = Schedule()
    schedule.set(A, 1.0)
    schedule.set(A, 3.0)
    schedule.set(B, 2.0)
    schedule.clear(B)
    assert schedule.next() == 3.0
    assert not schedule.has(B)
    assert schedule.pop_due(3.0) == [(A, False)]


def test_an_origin_has_a_hold_and_a_retry_apart() -> None:
    schedule = Schedule()
    schedule.set(A, 1.0, hold=True)
    schedule.set(A, 2.0)
    schedule.clear(A, hold=True)
    assert schedule.has(A)
    assert not schedule.has(A, hold=True)
    assert schedule.pop_due(5.0) == [(A, False)]


def test_same_time_for_two_origins_compares_no_origins() -> None:
    schedule = Schedule()
    schedule.set(A, 1.0)
    schedule.set(B, 1.0)
    assert sorted(schedule.pop_due(1.0), key=str) == [(A, False), (B, False)]
    schedule.set(A, 2.0)
    schedule.reset()
    assert schedule.next() is None
