"""Turns (``robotstxt/turns.py``) with a fake clock: the requests of an origin go at least its
spacing apart whoever asks, a taker that never comes back holds the origin for one interval at
most, and the spacing is the larger of the Crawl-delay (cut to ROBOTSTXT_MAX_CRAWL_DELAY) and
the download slot's own wait."""

from __future__ import annotations

import itertools
import random

import pytest

from scrapy_robotsmeta.robotstxt.turns import LONG_DELAY, Spacing, TurnBook, spacing


def test_the_first_taker_finds_the_origin_free_and_makes_it_busy_for_the_interval() -> None:
    book: TurnBook[str] = TurnBook()
    assert book.take("a", 1.0, 100.0) == 0.0
    assert book.take("a", 1.0, 100.25) == pytest.approx(0.75)
    assert book.take("a", 1.0, 100.999) == pytest.approx(0.001)
    assert book.take("a", 1.0, 101.0) == 0.0  # free again once the interval is over


def test_a_refused_taker_does_not_move_the_turn() -> None:
    book: TurnBook[str] = TurnBook()
    book.take("a", 2.0, 0.0)
    for now in (0.5, 1.0, 1.5):
        assert book.take("a", 2.0, now) == pytest.approx(2.0 - now)
    assert book.take("a", 2.0, 2.0) == 0.0


def test_origins_are_spaced_each_on_its_own() -> None:
    book: TurnBook[str] = TurnBook()
    assert book.take("a", 5.0, 0.0) == 0.0
    assert book.take("b", 5.0, 0.0) == 0.0
    assert book.take("a", 5.0, 1.0) == pytest.approx(4.0)


def test_a_taker_that_never_comes_back_holds_the_origin_one_interval_at_most() -> None:
    """Nothing is given back: the next request goes one interval after the vanished one."""
    book: TurnBook[str] = TurnBook()
    book.take("a", 3.0, 10.0)  # taken by a process that is then killed
    assert book.take("a", 3.0, 13.0) == 0.0


def test_whoever_asks_and_whenever_the_turns_taken_are_an_interval_apart() -> None:
    """Many takers of one book asking at random times, each asking again when told: the turns
    granted are never closer than the interval."""
    rng = random.Random(7)
    book: TurnBook[str] = TurnBook()
    asks = sorted(rng.uniform(0, 20) for _ in range(200))
    granted = []
    pending = [(at, i) for i, at in enumerate(asks)]
    while pending:
        pending.sort()
        now, who = pending.pop(0)
        wait = book.take("a", 1.0, now)
        if wait:
            pending.append((now + wait, who))
        else:
            granted.append(now)
    gaps = [later - earlier for earlier, later in itertools.pairwise(granted)]
    assert len(granted) == 200
    assert min(gaps) >= 1.0 - 1e-9


def test_a_turn_kept_elsewhere_makes_the_book_busy_until_it_ends() -> None:
    """The book takes over from a fleet's turns without granting one early."""
    book: TurnBook[str] = TurnBook()
    book.hold("a", 10.8, 10.0)
    assert book.take("a", 1.0, 10.5) == pytest.approx(0.3)
    book.hold("a", 10.2, 10.5)  # an earlier end never shortens what is known
    assert book.take("a", 1.0, 10.6) == pytest.approx(0.2)
    assert book.take("a", 1.0, 10.8) == 0.0


def test_keys_free_again_are_dropped_once_the_book_is_large() -> None:
    book: TurnBook[int] = TurnBook()
    for key in range(5000):
        book.take(key, 1.0, float(key))
    # At the purge, only the keys still busy stayed; the book never holds every key met.
    assert len(book) < 5000
    assert book.take(4999, 1.0, 4999.5) == pytest.approx(0.5)


def test_without_a_crawl_delay_the_spacing_is_the_slot_wait() -> None:
    assert spacing(None, None, 0.0) == Spacing(0.0)
    assert spacing(None, 5.0, 2.5) == Spacing(2.5)


def test_a_crawl_delay_spaces_by_the_larger_of_it_and_the_slot_wait() -> None:
    """Every wait is at least the Crawl-delay, and at least what the slot would have waited:
    the slot then never adds a wait of its own after a turn."""
    assert spacing(1.0, None, 0.0) == Spacing(1.0, 1.0)
    assert spacing(1.0, None, 1.4) == Spacing(1.4, 1.0)


def test_a_crawl_delay_over_the_bound_is_cut_to_it_and_said_so() -> None:
    spaced = spacing(86400.0, 30.0, 0.0)
    assert spaced == Spacing(30.0, 86400.0, bounded=True)
    assert not spaced.long  # bounded: the WARNING says that instead


def test_a_crawl_delay_within_the_bound_is_obeyed_in_full() -> None:
    assert spacing(10.0, 30.0, 0.0) == Spacing(10.0, 10.0)


@pytest.mark.parametrize(
    ("spaced", "interval"), [(0.0, 0.0), (0.2, 0.21), (1.0, 1.05), (30.0, 30.05)]
)
def test_a_turn_lasts_its_spacing_and_a_little_slack(spaced: float, interval: float) -> None:
    """The slack covers the few milliseconds by which sending a request may lag its turn: the
    site never sees two requests closer than the spacing for that lag."""
    assert spacing(spaced, None, 0.0).interval == pytest.approx(interval)


def test_an_unbounded_crawl_delay_over_a_minute_is_long() -> None:
    assert spacing(LONG_DELAY + 1, None, 0.0).long
    assert not spacing(LONG_DELAY, None, 0.0).long
    assert not spacing(None, None, LONG_DELAY + 1).long  # a download delay is the user's own
