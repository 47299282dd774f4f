"""Parked requests as bytes and back: the pickle default, the JSON serializer that runs no code,
and the codec that turns whatever bytes hold no request into one clear error."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import FormRequest, Request, Spider
from scrapy.utils.test import get_crawler

from scrapy_robotsmeta import serializers
from scrapy_robotsmeta.serializers import MalformedRequest, RequestCodec


class NamedSpider(Spider):
    name = "named"

    def parse_item(self, response: object, **kwargs: Any) -> None:
        pass

    def on_error(self, failure: object) -> None:
        pass


SPIDER = NamedSpider()
JSON = RequestCodec(serializers.json, SPIDER)


def full_request() -> Request:
    """A request using every field to_dict() writes, with bytes that are not UTF-8."""
    return Request(
        "http://a.example/p?q=1",
        method="POST",
        body=b"\xff\x00binary",
        headers={"X-Many": [b"one", b"\xfe\xfftwo"], "Accept": "text/html"},
        cookies={"session": "abc"},
        meta={"depth": 2, "pair": (1, "b"), "raw": b"\x80", "nested": {3: [None, 1.5, True]}},
        encoding="latin-1",
        priority=-4,
        dont_filter=True,
        flags=["parked"],
        cb_kwargs={"page": 7, "tags": ("x",)},
        callback=SPIDER.parse_item,
        errback=SPIDER.on_error,
    )


def fields(request: Request) -> dict[str, Any]:
    return {**request.to_dict(spider=SPIDER), "type": type(request)}


@pytest.mark.parametrize("serializer", [serializers.json, serializers.pickle])
def test_a_request_round_trips_with_every_field(serializer: Any) -> None:
    codec = RequestCodec(serializer, SPIDER)
    request = full_request()
    data = codec.dump(request)
    assert data is not None
    copy = codec.load(data)
    assert fields(copy) == fields(request)
    assert copy.callback == SPIDER.parse_item
    assert copy.errback == SPIDER.on_error
    assert copy.headers.getlist("X-Many") == [b"one", b"\xfe\xfftwo"]
    assert copy.meta["pair"] == (1, "b")


def test_json_keeps_a_request_subclass_in_use() -> None:
    request = FormRequest("http://a.example/form", formdata={"q": "x"})
    data = JSON.dump(request)
    assert data is not None
    copy = JSON.load(data)
    assert type(copy) is FormRequest
    assert copy.body == b"q=x"


def test_json_bytes_are_plain_json_without_code() -> None:
    data = JSON.dump(Request("http://a.example/", meta={"k": "v"}))
    assert data is not None
    assert b'"http://a.example/"' in data
    assert b"\x80" not in data


@pytest.mark.parametrize(
    "meta",
    [{"seen": {1, 2}}, {"obj": object()}, {"text": type("Str", (str,), {})("subclass")}],
    ids=["set", "object", "str-subclass"],
)
def test_json_cannot_store_what_it_would_not_give_back_the_same(meta: dict[str, Any]) -> None:
    """None: the request is kept in memory instead, as an unpicklable one is."""
    assert JSON.dump(Request("http://a.example/", meta=meta)) is None


def test_a_callback_that_is_not_a_spider_method_cannot_be_stored() -> None:
    def elsewhere(response: object) -> None:
        pass

    assert JSON.dump(Request("http://a.example/", callback=elsewhere)) is None


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\xff garbage",
        b"[1, 2]",
        b'{"dict": [["url", "http://a.example/"]], "extra": 1}',
        b'{"set": [1]}',
        b'{"dict": [["url", {"bytes": "not base64!"}]]}',
        b'{"dict": [["url", 5]]}',
        b'{"dict": [["url", "http://a.example/"], ["_class", "os.system"]]}',
        b'{"dict": [["url", "http://a.example/"], ["_class", "this.Request"]]}',
        b'{"dict": [["url", "http://a.example/"], ["callback", "name"]]}',
        b"[" * 100_000,
    ],
    ids=[
        "empty",
        "garbage",
        "not-a-dict",
        "two-keys",
        "unknown-tag",
        "bad-base64",
        "bad-url",
        "class-not-a-request",
        "class-not-imported",
        "callback-not-a-method",
        "deep",
    ],
)
def test_bytes_that_hold_no_request_are_malformed(data: bytes) -> None:
    """Whatever they make the serializer or Request raise, the caller gets one error to count
    the entry by; a ``_class`` is never imported (that would run a module's code)."""
    with pytest.raises(MalformedRequest):
        JSON.load(data)


def test_pickle_bytes_that_hold_no_request_are_malformed() -> None:
    with pytest.raises(MalformedRequest):
        RequestCodec(serializers.pickle, SPIDER).load(b"\x80\x04garbage")


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (None, serializers.pickle),
        ("scrapy_robotsmeta.serializers.json", serializers.json),
        ("pickle", __import__("pickle")),
    ],
    ids=["default", "import-path", "a-module"],
)
def test_the_setting_names_the_serializer(setting: Any, expected: Any) -> None:
    settings = {} if setting is None else {"ROBOTSTXT_PARKED_SERIALIZER": setting}
    crawler = get_crawler(NamedSpider, settings)
    assert RequestCodec.from_crawler(crawler).serializer is expected


def test_the_setting_may_be_the_serializer_itself() -> None:
    crawler = get_crawler(NamedSpider, {"ROBOTSTXT_PARKED_SERIALIZER": serializers.json})
    # The crawler's settings are a deep copy of those given: a copy of the object.
    assert type(RequestCodec.from_crawler(crawler).serializer) is serializers.JsonSerializer


def test_a_setting_without_dumps_and_loads_stops_the_crawl_at_start() -> None:
    crawler = get_crawler(NamedSpider, {"ROBOTSTXT_PARKED_SERIALIZER": "os.path"})
    with pytest.raises(TypeError, match="ROBOTSTXT_PARKED_SERIALIZER"):
        RequestCodec.from_crawler(crawler)
