"""Parked requests as bytes and back, with the serializer ``ROBOTSTXT_PARKED_SERIALIZER`` names.

A serializer is anything with ``dumps(obj) -> bytes`` and ``loads(bytes) -> obj`` (a module, a
class, an object), as scrapy-redis's ``SCHEDULER_SERIALIZER``; it is given the dict of
``Request.to_dict()``. Two ship here: :data:`pickle` (the default, as Scrapy's disk queues and
scrapy-redis store requests; reading it runs whatever code the bytes say) and :data:`json`,
which builds nothing but plain values.
"""

from __future__ import annotations

import base64
import json as jsonlib
import pickle as picklelib
import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

from scrapy import Request
from scrapy.utils.misc import load_object
from scrapy.utils.request import request_from_dict

from scrapy_robotsmeta.defaults import PackageSettings

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler


class Serializer(Protocol):
    def dumps(self, obj: Any) -> bytes: ...

    def loads(self, data: bytes) -> Any: ...


class MalformedRequest(ValueError):
    """Bytes that do not make a request again: damaged, crafted, or of another serializer."""


class PickleSerializer:
    """Python's pickle: any value a request may carry, and code run by whoever wrote the bytes."""

    def dumps(self, obj: Any) -> bytes:
        return picklelib.dumps(obj, protocol=4)

    def loads(self, data: bytes) -> Any:
        return picklelib.loads(data)


# JSON has no bytes, tuples or non-string keys: each such value is an object of one key
# naming its kind. Every JSON object written is such a tag, so none is ever ambiguous.
_BYTES, _TUPLE, _DICT = "bytes", "tuple", "dict"
_PLAIN = (str, int, float, bool, type(None))


def _encode(value: Any) -> Any:
    kind = type(value)
    # Exact types: a subclass (an enum, a named tuple) would come back as its base, silently.
    if kind in _PLAIN:
        return value
    if kind is list:
        return [_encode(item) for item in value]
    if kind is tuple:
        return {_TUPLE: [_encode(item) for item in value]}
    if kind is bytes:
        return {_BYTES: base64.b64encode(value).decode("ascii")}
    if kind is dict:
        return {_DICT: [[_encode(key), _encode(item)] for key, item in value.items()]}
    raise TypeError(f"cannot store a {kind.__qualname__} as JSON")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    [(kind, content)] = value.items()  # a ValueError unless exactly one key
    if kind == _BYTES:
        return base64.b64decode(content, validate=True)
    if kind == _TUPLE:
        return tuple(_decode(item) for item in content)
    if kind == _DICT:
        return {_decode(key): _decode(item) for key, item in content}
    raise ValueError(f"unknown JSON tag {kind!r}")


class JsonSerializer:
    """JSON of plain values, bytes, tuples and dicts: reading it runs no code. A request
    carrying anything else (a set, a datetime, an object in meta) cannot be stored by it."""

    def dumps(self, obj: Any) -> bytes:
        return jsonlib.dumps(_encode(obj), separators=(",", ":")).encode()

    def loads(self, data: bytes) -> Any:
        return _decode(jsonlib.loads(data))


#: The default serializer (``scrapy_robotsmeta.serializers.pickle``).
pickle = PickleSerializer()
#: A serializer that executes no code on reading (``scrapy_robotsmeta.serializers.json``).
json = JsonSerializer()


def _check_request_class(path: object) -> None:
    """Refuse a ``_class`` that is not a Request class this process has already imported:
    importing a module named by stored bytes would run its code."""
    module, _, name = str(path).rpartition(".")
    found = getattr(sys.modules.get(module), name, None)
    if not (isinstance(found, type) and issubclass(found, Request)):
        raise ValueError(f"{path!r} is not a request class in use")


def _import(path: str) -> Any:
    """A module (as scrapy-redis's ``SCHEDULER_SERIALIZER`` names one), or an object in one."""
    try:
        return import_module(path)
    except ImportError:
        return load_object(path)


class RequestCodec:
    """Requests to bytes and back for one crawl: its serializer, its spider (callbacks and
    errbacks are stored by the name of the spider's method)."""

    def __init__(self, serializer: Serializer, spider: Spider | None) -> None:
        self.serializer = serializer
        self.spider = spider

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RequestCodec:
        setting = PackageSettings(crawler.settings).get("ROBOTSTXT_PARKED_SERIALIZER")
        serializer = _import(setting) if isinstance(setting, str) else setting
        if not (
            callable(getattr(serializer, "dumps", None))
            and callable(getattr(serializer, "loads", None))
        ):
            raise TypeError(f"ROBOTSTXT_PARKED_SERIALIZER {setting!r} has no dumps() and loads()")
        return cls(serializer, crawler.spider)

    def dump(self, request: Request) -> bytes | None:
        """The request as bytes; None when it cannot be (a callback that is not a spider
        method, meta the serializer cannot store)."""
        try:
            data = self.serializer.dumps(request.to_dict(spider=self.spider))
        # Any: the serializer may be the user's, and a request it cannot store is kept in
        # memory rather than stop the crawl.
        except Exception:
            return None
        return data if isinstance(data, bytes) else None

    def load(self, data: bytes) -> Request:
        """The request *data* holds; :class:`MalformedRequest` if it holds none."""
        try:
            stored = self.serializer.loads(data)
            if "_class" in stored:
                _check_request_class(stored["_class"])
            return request_from_dict(stored, spider=self.spider)
        # Any: damaged or crafted bytes can make a serializer (or Request) raise anything.
        except Exception as exc:
            raise MalformedRequest(f"{type(exc).__name__}: {exc}") from exc
