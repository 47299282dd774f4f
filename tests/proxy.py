"""A local HTTP proxy that writes down each URL it is asked for, and a spider that sends every
start request through a given proxy (``meta["proxy"]``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from scrapy import Request
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.web import http, proxy

from scrapy_robotsmeta.testing import installed_reactor
from tests.crawl import ListSpider


@asynccontextmanager
async def logging_proxy() -> AsyncIterator[tuple[str, list[str]]]:
    """A proxy on 127.0.0.1: its URL, and the list of the URLs it was asked for."""
    seen: list[str] = []

    class LoggingProxyRequest(proxy.ProxyRequest):
        def process(self) -> None:
            seen.append(self.uri.decode())
            super().process()

    class LoggingProxy(proxy.Proxy):
        requestFactory = LoggingProxyRequest

    factory = http.HTTPFactory()
    factory.protocol = LoggingProxy  # type: ignore[method-assign,assignment]
    port: Any = installed_reactor().listenTCP(0, factory, interface="127.0.0.1")
    try:
        yield f"http://127.0.0.1:{port.getHost().port}", seen
    finally:
        await maybe_deferred_to_future(port.stopListening())


class ProxiedSpider(ListSpider):
    """ListSpider, each start request sent through the proxy its ``proxy_url`` names."""

    name = "proxied"
    proxy_url = ""

    async def start(self) -> Any:
        for url in self.start_urls:
            yield Request(url, callback=self.parse_page, meta={"proxy": self.proxy_url})
