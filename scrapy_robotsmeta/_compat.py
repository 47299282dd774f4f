"""The few Scrapy APIs that changed between the oldest Scrapy supported (2.13) and today."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.core.engine import ExecutionEngine
    from scrapy.http import Response
    from scrapy.signalmanager import SignalManager

#: Scrapy's ``robots_parsed`` signal (2.18+), None before it existed.
ROBOTS_PARSED: object | None = getattr(signals, "robots_parsed", None)


async def download(engine: ExecutionEngine, request: Request) -> Response:
    """``engine.download_async()`` (2.14+), or ``engine.download()`` before it."""
    if hasattr(engine, "download_async"):
        return await engine.download_async(request)
    return await maybe_deferred_to_future(engine.download(request))


async def send_signal(manager: SignalManager, signal: object, **kwargs: Any) -> None:
    """``send_catch_log_async()`` (2.14+), or ``send_catch_log_deferred()`` before it."""
    if hasattr(manager, "send_catch_log_async"):
        await manager.send_catch_log_async(signal=signal, **kwargs)
    else:
        await maybe_deferred_to_future(manager.send_catch_log_deferred(signal=signal, **kwargs))


def slot_jitter(slot: Slot) -> float:
    """The magnitude of the random variation of a slot's delay: ``jitter`` (2.19+), or the
    ±50% that ``randomize_delay`` meant before it."""
    if hasattr(type(slot), "jitter"):
        return float(slot.jitter)
    return 0.5 if slot.randomize_delay else 0.0


def set_slot_jitter(slot: Slot, jitter: float) -> None:
    """Set the variation of a slot's delay; before 2.19 only ±50% or none exist, so any
    smaller magnitude turns it off."""
    if hasattr(type(slot), "jitter"):
        slot.jitter = jitter
    else:
        slot.randomize_delay = jitter >= 0.5
