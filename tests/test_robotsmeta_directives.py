"""The value grammar of meta robots and X-Robots-Tag, one test per rule.

"Google spec" below is Google's "Robots meta tag, data-nosnippet and X-Robots-Tag
specifications"; "MDN" is MDN's X-Robots-Tag page.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_robotsmeta.robotsmeta.directives import Directives, parse_date, read_rules

TOKEN = "testbot"


def header(*values: str, token: str = TOKEN) -> Directives:
    return read_rules(values, (), token).directives


def meta(*contents: str) -> Directives:
    return read_rules((), contents, TOKEN).directives


def utc(*fields: int) -> datetime:
    """A UTC moment from year, month, day and, optionally, hour, minute and second."""
    year, month, day, hour, minute, second = (*fields, 0, 0, 0)[:6]
    return datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)


def test_no_rules_means_no_restriction_and_exactly_the_eleven_keys() -> None:
    assert header().to_dict() == {
        "index": True,
        "follow": True,
        "archive": True,
        "snippet": True,
        "max_snippet": None,
        "max_image_preview": "large",
        "max_video_preview": None,
        "translate": True,
        "imageindex": True,
        "indexifembedded": False,
        "unavailable_after": None,
    }


def test_rule_all_is_the_default_and_changes_nothing() -> None:
    """Google spec, "all": no restrictions; it has no effect when listed."""
    assert header("all") == Directives()


def test_rule_noindex() -> None:
    assert header("noindex") == Directives(index=False)


def test_rule_nofollow() -> None:
    assert header("nofollow") == Directives(follow=False)


def test_rule_none_is_noindex_and_nofollow() -> None:
    assert header("none") == Directives(index=False, follow=False)


@pytest.mark.parametrize("rule", ["noarchive", "nocache"])
def test_rule_noarchive_and_nocache(rule: str) -> None:
    assert header(rule) == Directives(archive=False)


def test_rule_nosnippet_sets_max_snippet_to_zero() -> None:
    assert header("nosnippet") == Directives(snippet=False, max_snippet=0)


def test_rule_notranslate() -> None:
    assert header("notranslate") == Directives(translate=False)


def test_rule_noimageindex() -> None:
    assert header("noimageindex") == Directives(imageindex=False)


def test_rule_indexifembedded() -> None:
    assert header("noindex, indexifembedded") == Directives(index=False, indexifembedded=True)


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ("max-snippet: 20", 20),
        ("max-snippet:20", 20),
        ("MAX-SNIPPET : 20", 20),
        ("max-snippet: +20", 20),
        ("max-snippet: 50, max-snippet: 20, max-snippet: 30", 20),
        ("max-snippet: -1, max-snippet: 40", 40),
        ("max-snippet: -1", None),
        ("max-snippet: -7", None),
    ],
)
def test_rule_max_snippet_smallest_non_negative_wins(rules: str, expected: int | None) -> None:
    """Google spec, max-snippet: [number]; -1 is no limit; conflicts: most restrictive."""
    assert header(rules) == Directives(max_snippet=expected)


def test_rule_max_snippet_zero_means_no_snippet() -> None:
    """Google spec: max-snippet:0 shows no snippet, the same as nosnippet."""
    assert header("max-snippet: 0") == Directives(snippet=False, max_snippet=0)


def test_rule_max_snippet_with_nosnippet_most_restrictive_wins() -> None:
    """Google spec, combined rules: with max-snippet:50 and nosnippet, nosnippet applies."""
    assert header("max-snippet: 50, nosnippet") == Directives(snippet=False, max_snippet=0)
    assert header("nosnippet", "max-snippet: 50") == Directives(snippet=False, max_snippet=0)


@pytest.mark.parametrize("value", ["abc", "1.5", "1_000", "\u0663", "", "20 chars", "0x10"])
def test_rule_max_snippet_not_an_integer_is_ignored(value: str) -> None:
    reading = read_rules([f"max-snippet: {value}, noarchive"], (), TOKEN)
    assert reading.directives == Directives(archive=False)
    assert len(reading.ignored) == 1
    assert reading.ignored[0].startswith("max-snippet:")


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ("max-image-preview: large", "large"),
        ("max-image-preview: standard", "standard"),
        ("max-image-preview: NONE", "none"),
        ("max-image-preview: large, max-image-preview: standard", "standard"),
        ("max-image-preview: none, max-image-preview: large", "none"),
        ("max-image-preview: standard, max-image-preview: large", "standard"),
        ("max-image-preview: huge, max-image-preview: standard", "standard"),
    ],
)
def test_rule_max_image_preview_most_restrictive_valid_value(rules: str, expected: str) -> None:
    assert header(rules).max_image_preview == expected


def test_rule_max_image_preview_invalid_value_is_ignored() -> None:
    reading = read_rules(["max-image-preview: huge"], (), TOKEN)
    assert reading.directives == Directives()
    assert reading.ignored == ("max-image-preview: huge: expected none, standard or large",)


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ("max-video-preview: 0", 0),
        ("max-video-preview: 15, max-video-preview: 5", 5),
        ("max-video-preview: -1", None),
        ("max-video-preview: -1, max-video-preview: 8", 8),
        ("max-video-preview: soon", None),
    ],
)
def test_rule_max_video_preview_smallest_non_negative_wins(
    rules: str, expected: int | None
) -> None:
    assert header(rules) == Directives(max_video_preview=expected)


@pytest.mark.parametrize("rule", ["max-snippet", "max-snippet:", "unavailable_after:  "])
def test_valued_rule_without_value_is_ignored(rule: str) -> None:
    reading = read_rules([rule], (), TOKEN)
    assert reading.directives == Directives()
    assert reading.ignored[0].endswith("missing value")


def test_positive_rules_never_cancel_negative_ones() -> None:
    """Google spec, combined rules: the more restrictive rule applies."""
    expected = Directives(index=False, follow=False)
    assert header("noindex, nofollow, index, follow, all") == expected
    assert header("all", "none") == expected
    assert read_rules(["index, follow"], ["none"], TOKEN).directives == expected


def test_rules_are_case_insensitive_and_trimmed() -> None:
    """Google spec: names and values are not case sensitive; MDN: comma-separated list."""
    assert header("  NoIndex ,NOFOLLOW,, Max-Image-Preview:Standard ") == Directives(
        index=False, follow=False, max_image_preview="standard"
    )


def test_unknown_rules_are_ignored_and_reported() -> None:
    reading = read_rules(["noodp, noindex, noydir"], (), TOKEN)
    assert reading.directives == Directives(index=False)
    assert reading.ignored == ("noodp: unknown rule", "noydir: unknown rule")


def test_rule_names_compare_in_ascii_only() -> None:
    # "\u0130" lowercases to "i" plus a combining dot outside ASCII: never the rule "noindex".
    assert header("NO\u0130NDEX") == Directives()


# unavailable_after: dates in RFC 822, RFC 850 or ISO 8601 (Google spec).


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Wed, 03 Dec 2025 13:09:53 GMT", utc(2025, 12, 3, 13, 9, 53)),
        ("03 Dec 2025 13:09:53 GMT", utc(2025, 12, 3, 13, 9, 53)),
        ("wed, 3 dec 2025 13:09:53 ut", utc(2025, 12, 3, 13, 9, 53)),
        ("Wed, 03 Dec 2025 13:09 +0130", utc(2025, 12, 3, 11, 39)),
        ("Wed, 03 Dec 2025 13:09:53 -0500", utc(2025, 12, 3, 18, 9, 53)),
        ("25 Jun 2010 15:00:00 PST", utc(2010, 6, 25, 23)),
        ("7 Jul 2007 16:30:00 EDT", utc(2007, 7, 7, 20, 30)),
        ("Wed, 03 Dec 25 13:09:53 GMT", utc(2025, 12, 3, 13, 9, 53)),
        ("Fri, 03 Dec 99 13:09:53 GMT", utc(1999, 12, 3, 13, 9, 53)),
    ],
)
def test_rule_unavailable_after_rfc_822_and_1123(value: str, expected: datetime) -> None:
    assert header(f"unavailable_after: {value}").unavailable_after == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Wednesday, 03-Dec-25 13:09:53 GMT", utc(2025, 12, 3, 13, 9, 53)),
        ("Sunday, 06-Nov-94 08:49:37 GMT", utc(1994, 11, 6, 8, 49, 37)),
        ("23-Jul-2007 18:00:00 EST", utc(2007, 7, 23, 23)),
    ],
)
def test_rule_unavailable_after_rfc_850(value: str, expected: datetime) -> None:
    assert header(f"unavailable_after: {value}").unavailable_after == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-12-03T13:09:53Z", utc(2025, 12, 3, 13, 9, 53)),
        ("2025-12-03T13:09:53+01:00", utc(2025, 12, 3, 12, 9, 53)),
        ("2025-12-03T13:09:53-0230", utc(2025, 12, 3, 15, 39, 53)),
        ("2025-12-03T13:09:53.75+01", utc(2025, 12, 3, 12, 9, 53)),
        ("2025-12-03 13:09", utc(2025, 12, 3, 13, 9)),
        ("20251203T130953Z", utc(2025, 12, 3, 13, 9, 53)),
    ],
)
def test_rule_unavailable_after_iso_8601(value: str, expected: datetime) -> None:
    assert header(f"unavailable_after: {value}").unavailable_after == expected


@pytest.mark.parametrize(
    "value", ["2025-12-03T13:09:53", "03 Dec 2025 13:09:53", "Wednesday, 03-Dec-25 13:09:53"]
)
def test_rule_unavailable_after_without_zone_is_utc(value: str) -> None:
    assert header(f"unavailable_after: {value}").unavailable_after == utc(2025, 12, 3, 13, 9, 53)


@pytest.mark.parametrize("value", ["2025-12-03", "20251203", "Wed, 03 Dec 2025", "03-Dec-2025"])
def test_rule_unavailable_after_date_alone_is_midnight_utc(value: str) -> None:
    assert header(f"unavailable_after: {value}").unavailable_after == utc(2025, 12, 3)


def test_rule_unavailable_after_date_keeps_its_commas_until_a_known_rule() -> None:
    assert header("unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT, noindex") == Directives(
        index=False, unavailable_after=utc(2025, 12, 3, 13, 9, 53)
    )
    assert meta("noarchive, unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT, nofollow") == (
        Directives(archive=False, follow=False, unavailable_after=utc(2025, 12, 3, 13, 9, 53))
    )


def test_rule_unavailable_after_date_keeps_its_commas_until_a_bot_prefix() -> None:
    value = "unavailable_after: Wednesday, 03-Dec-25 13:09:53 GMT, otherbot: noindex"
    date = utc(2025, 12, 3, 13, 9, 53)
    assert header(value) == Directives(unavailable_after=date)
    assert header(value, token="otherbot") == Directives(index=False, unavailable_after=date)


def test_rule_unavailable_after_unknown_piece_joins_the_date_and_voids_it() -> None:
    """Issue 3: the date runs until a piece that starts a known rule or a bot prefix."""
    reading = read_rules(["unavailable_after: 2025-12-03, later, noindex"], (), TOKEN)
    assert reading.directives == Directives(index=False)
    assert reading.ignored == ("unavailable_after: 2025-12-03, later: not a valid date",)


@pytest.mark.parametrize(
    "value",
    [
        "31 Feb 2025 10:00:00 GMT",
        "2025-02-29",
        "2025-13-01",
        "2025-12-03T25:00:00Z",
        "2025-12-03T10:00:00+25:00",
        "2025-12-03T10:00:00+01:75",
        "Wed, 03 Dec 2025 13:09:53 XYZ",
        "Wed, 03 Dec 2025 13:09:53 A",
        "03 Dek 2025",
        "Wodnesday, 03-Dec-25 13:09:53 GMT",
        "03-Dec 2025",
        "0001-01-01T00:00:00+01:00",
        "tomorrow",
        "2025",
    ],
)
def test_rule_unavailable_after_invalid_or_impossible_date_is_ignored(value: str) -> None:
    reading = read_rules([f"unavailable_after: {value}, noarchive"], (), TOKEN)
    assert reading.directives == Directives(archive=False)
    assert reading.ignored == (f"unavailable_after: {value}: not a valid date",)


def test_rule_unavailable_after_earliest_valid_date_wins() -> None:
    assert read_rules(
        ["unavailable_after: 2030-01-01", "unavailable_after: bogus"],
        ["unavailable_after: 3 Dec 2025 00:00:00 GMT"],
        TOKEN,
    ).directives == Directives(unavailable_after=utc(2025, 12, 3))


def test_rule_unavailable_after_in_the_item_field_is_iso_utc_seconds() -> None:
    field = header("unavailable_after: 2025-12-03T13:09:53.999-01:00").to_dict()
    assert field["unavailable_after"] == "2025-12-03T14:09:53+00:00"


def test_parse_date_rejects_surrounding_text() -> None:
    assert parse_date("on 2025-12-03") is None
    assert parse_date(" 2025-12-03 ") == utc(2025, 12, 3)


# Bot scopes in X-Robots-Tag: Google spec and MDN, "<bot-name>: <rules>".


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("badbot", Directives(index=False, follow=False)),
        ("googlebot", Directives(follow=False)),
        ("testbot", Directives()),
    ],
)
def test_header_bot_prefix_scopes_following_items_until_next_prefix(
    token: str, expected: Directives
) -> None:
    assert header("BadBot: noindex, nofollow, googlebot: nofollow", token=token) == expected


def test_header_items_before_first_prefix_apply_to_all_bots() -> None:
    value = "noarchive, otherbot: noindex"
    assert header(value) == Directives(archive=False)
    assert header(value, token="otherbot") == Directives(archive=False, index=False)


def test_header_scope_ends_with_its_header_value() -> None:
    assert header("otherbot: noindex", "nofollow") == Directives(follow=False)


def test_header_bot_names_match_exactly() -> None:
    assert header("googlebot-news: noindex", token="googlebot") == Directives()
    assert header("googlebot: noindex", token="googlebot-news") == Directives()
    assert header("GoogleBot-News: noindex", token="googlebot-news") == Directives(index=False)


def test_header_bot_name_compares_in_ascii_only() -> None:
    # The Kelvin sign lowercases to "k" in Unicode, not in ASCII.
    assert header("\u212abot: noindex", token="kbot") == Directives()


def test_header_valued_rule_name_is_not_a_bot_prefix() -> None:
    assert header("max-snippet: 10, nofollow") == Directives(max_snippet=10, follow=False)
    assert header("otherbot: noindex, max-video-preview: 3", token="otherbot") == Directives(
        index=False, max_video_preview=3
    )


def test_header_bot_prefix_with_valued_rule() -> None:
    value = "testbot: max-snippet: 5, unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT"
    assert header(value) == Directives(
        max_snippet=5, unavailable_after=utc(2025, 12, 3, 13, 9, 53)
    )


def test_header_bot_prefix_alone_switches_scope() -> None:
    assert header("otherbot:, noindex") == Directives()
    assert header("otherbot:, noindex", token="otherbot") == Directives(index=False)


def test_several_headers_combine() -> None:
    """MDN: several X-Robots-Tag headers combine."""
    assert header("noarchive", "testbot: nosnippet", "otherbot: noindex") == Directives(
        archive=False, snippet=False, max_snippet=0
    )


def test_meta_and_headers_combine_most_restrictive() -> None:
    assert read_rules(
        ["max-snippet: 30, max-image-preview: standard"], ["max-snippet: 10, noindex"], TOKEN
    ).directives == Directives(index=False, max_snippet=10, max_image_preview="standard")


def test_meta_content_bot_prefix_is_not_a_scope() -> None:
    """Google spec: a meta's crawler is its name attribute; ``TOKEN:`` in content means nothing."""
    reading = read_rules((), ["testbot: noindex, nofollow"], TOKEN)
    assert reading.directives == Directives(follow=False)
    assert reading.ignored == ("testbot: noindex: a bot prefix has no meaning in a meta content",)


@given(st.lists(st.text()), st.lists(st.text()), st.text())
def test_any_text_reads_without_error(headers: list[str], contents: list[str], token: str) -> None:
    reading = read_rules(headers, contents, token)
    assert isinstance(reading.directives.to_dict(), dict)
    assert all(isinstance(reason, str) for reason in reading.ignored)


# --------------------------------------------------------------------------------------------
# Header scopes name the crawler as it writes its name, not its robots.txt token
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["archive.org_bot", "ARCHIVE.ORG_BOT", "Archive.org_Bot"])
def test_header_scope_matches_the_name_as_written_case_insensitively(scope: str) -> None:
    reading = read_rules([f"{scope}: noindex"], [], "archive.org_bot")
    assert reading.directives.index is False


def test_header_scope_of_another_name_does_not_apply() -> None:
    """``archive`` is another crawler than ``archive.org_bot``, though it is its token."""
    assert read_rules(["archive: noindex"], [], "archive.org_bot").directives.index is True
    assert read_rules(["archive.org_bot: noindex"], [], "archive").directives.index is True
