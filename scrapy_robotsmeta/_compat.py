"""The few Scrapy APIs that changed between the oldest Scrapy supported (2.13) and today."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future

if TYPE_CHECKING:
    from scrapy import Request
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
