"""The package's Python API: what ``RobotsTxt.parse`` takes, and the package version."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest

import scrapy_robotsmeta
from scrapy_robotsmeta import RobotsTxt

BODY = "User-agent: *\nDisallow: /privé\nAllow: /privé/ok\n"


@pytest.mark.parametrize(
    "body",
    [BODY, BODY.encode(), bytearray(BODY.encode()), memoryview(BODY.encode())],
    ids=["str", "bytes", "bytearray", "memoryview"],
)
def test_parse_takes_text_and_bytes_alike(body: Any) -> None:
    """``RobotsTxt.parse(response.text)`` reads the text as its UTF-8 bytes would read."""
    rules = RobotsTxt.parse(body)
    assert not rules.allowed("https://example.com/priv%C3%A9/x", "bot")
    assert not rules.allowed("https://example.com/privé/x", "bot")
    assert rules.allowed("https://example.com/privé/ok", "bot")
    assert rules.allowed("https://example.com/prive", "bot")


def test_parse_text_with_lone_surrogates_does_not_raise() -> None:
    rules = RobotsTxt.parse("User-agent: *\nDisallow: /a\udcff\nDisallow: /b\n")
    assert not rules.allowed("https://example.com/b", "bot")


@pytest.mark.parametrize("body", [None, 42, ["User-agent: *"], {"robots": "txt"}])
def test_parse_refuses_anything_else_with_a_clear_type_error(body: Any) -> None:
    with pytest.raises(TypeError, match=r"bytes or str, not " + type(body).__name__):
        RobotsTxt.parse(body)


def test_version_comes_from_the_package_metadata() -> None:
    assert scrapy_robotsmeta.__version__ == version("scrapy-robotsmeta")
    assert "__version__" in scrapy_robotsmeta.__all__


def test_usage_preferences_are_public() -> None:
    """What a callback needs to read a page's usage preferences, from the package itself."""
    for name in ("usage_for", "Preferences", "Statement", "USES"):
        assert name in scrapy_robotsmeta.__all__
    assert scrapy_robotsmeta.USES == (
        "search",
        "ai_input",
        "ai_train",
        "ai_use",
        "ai_train_images",
    )
    rules = scrapy_robotsmeta.RobotsTxt.parse("User-agent: *\nContent-Signal: search=yes\n")
    preferences = rules.usage("http://example.com/", "mybot")
    assert isinstance(preferences, scrapy_robotsmeta.Preferences)
    assert preferences.allows("search") is True


def test_the_tdmrep_reading_is_public() -> None:
    """What usage_for() carries of TDMRep, from the package itself; its item keys follow the
    usage keys."""
    assert "TdmReading" in scrapy_robotsmeta.__all__
    reading = scrapy_robotsmeta.TdmReading("read", True, "https://p.example/", "meta x")
    preferences = scrapy_robotsmeta.Preferences(reading.statements(), reading)
    assert preferences.tdmrep is reading
    assert list(preferences.to_dict())[len(scrapy_robotsmeta.USES) :] == [
        "tdm_reservation",
        "tdm_policy",
        "tdm_file",
    ]
    assert preferences.allows("ai_train") is False
    assert preferences.allows("search") is None
