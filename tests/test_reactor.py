"""Time for the robots.txt part (``reactor.py``): the clock a crawler is given, and the one
alarm kept set for the nearest due time. (``Tasks``, which holds background coroutines, is
exercised by every crawl that fetches a robots.txt, and its failures by
test_crawl_task_faults.py.)"""

from __future__ import annotations

from scrapy import Spider
from scrapy.utils.test import get_crawler
from twisted.internet.task import Clock

from scrapy_robotsmeta.reactor import CLOCK_ATTRIBUTE, Alarm, crawler_clock
from scrapy_robotsmeta.testing import installed_reactor


def test_a_crawler_given_a_clock_runs_on_it() -> None:
    crawler = get_crawler(Spider)
    clock = Clock()
    setattr(crawler, CLOCK_ATTRIBUTE, clock)
    assert crawler_clock(crawler) is clock


def test_a_crawler_without_one_runs_on_the_reactor() -> None:
    assert crawler_clock(get_crawler(Spider)) is installed_reactor()


def test_an_alarm_rings_once_at_the_last_time_set() -> None:
    clock, rang = Clock(), list[float]()
    alarm = Alarm(clock, lambda: rang.append(clock.seconds()))
    alarm.set(5.0)
    alarm.set(2.0)  # the nearest changed
    alarm.set(2.0)  # the same: the timer stays as it is
    clock.pump([2.0, 8.0])
    assert rang == [2.0]
    assert clock.getDelayedCalls() == []


def test_an_alarm_set_again_for_the_same_time_keeps_its_timer() -> None:
    """Even where the clock's now + delay is not exactly that time (0.2 + 0.7 != 0.9)."""
    clock, rang = Clock(), list[float]()
    alarm = Alarm(clock, lambda: rang.append(clock.seconds()))
    clock.advance(0.2)
    alarm.set(0.9)
    assert clock.seconds() + (0.9 - clock.seconds()) != 0.9  # the timer's own time
    [timer] = clock.getDelayedCalls()
    alarm.set(0.9)
    assert clock.getDelayedCalls() == [timer]
    clock.advance(0.7)
    assert len(rang) == 1


def test_an_alarm_set_to_none_or_cancelled_never_rings() -> None:
    clock, rang = Clock(), list[float]()
    alarm = Alarm(clock, lambda: rang.append(clock.seconds()))
    alarm.set(1.0)
    alarm.set(None)
    alarm.set(3.0)
    alarm.cancel()
    clock.advance(10.0)
    assert rang == []
