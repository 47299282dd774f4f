"""TDMRep (W3C Text and Data Mining Reservation Protocol, Community Group final report), read as
its specification says: the rules of ``/.well-known/tdmrep.json`` (first match in file order,
``*`` and ``$`` patterns, values other than 0 and 1 unset), the ``tdm-reservation`` and
``tdm-policy`` headers and metas, and their precedence (file < header < meta, an absent value
never resetting an earlier one)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from scrapy_robotsmeta.usage.preferences import TDMREP_NOT_CONSULTED
from scrapy_robotsmeta.usage.tdmrep import (
    ABSENT,
    FILE_STATUSES,
    MALFORMED,
    NOT_CONSULTED,
    NOT_CONSULTED_READING,
    READ,
    TDM_USES,
    UNREADABLE,
    TdmFile,
    TdmReading,
    absent,
    file_from_plain,
    file_reading,
    page_reading,
    parse_file,
    unreadable,
    valid_plain,
    value_ignored,
)

SITE = "https://publisher.example"
NONE = (None, None)


def tdm_file(*rules: dict[str, object]) -> TdmFile:
    return parse_file(json.dumps(list(rules)).encode())


def reading_of(found: TdmFile, path: str) -> TdmReading:
    return file_reading(found, SITE + path)


# -- the file: rules, matching -------------------------------------------------------------


def test_file_rules_are_read_in_order_with_their_policy() -> None:
    """tdmrep.json: an array of objects with location, tdm-reservation and tdm-policy."""
    found = tdm_file(
        {"location": "/", "tdm-reservation": 1, "tdm-policy": "https://p.example/policy.json"},
        {"location": "/open/*", "tdm-reservation": 0},
    )
    assert found.status == READ
    assert [(r.index, r.location, r.reserved, r.policy) for r in found.rules] == [
        (1, "/", True, "https://p.example/policy.json"),
        (2, "/open/*", False, None),
    ]
    assert found.ignored == ()


def test_spec_example_every_file_reserved() -> None:
    """TDMRep, "TDM File on the Origin Server", Examples: one rule for "/" reserves the
    rights on every file of the server."""
    found = parse_file(b'[\n  {\n  "location": "/",\n  "tdm-reservation": 1\n  }\n]')
    for path in ("/", "/index.html", "/a/b/c.pdf"):
        assert reading_of(found, path).reserved is True
    assert reading_of(found, "/").policy is None


def test_spec_example_three_groups_of_files() -> None:
    """TDMRep, "TDM File on the Origin Server", Examples: PDF documents under /directory-a/
    reserved without a policy, HTML pages under /directory-b/html/ reserved with one, JPEG
    images under /directory-b/images/ not reserved; anything else unset ("If no match is
    found", the reservation is unset)."""
    found = tdm_file(
        {"location": "/directory-a/", "tdm-reservation": 1},
        {
            "location": "/directory-b/html/",
            "tdm-reservation": 1,
            "tdm-policy": "https://provider.com/policies/policy.json",
        },
        {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0},
    )
    a = reading_of(found, "/directory-a/report.pdf")
    assert (a.reserved, a.policy) == (True, None)
    html = reading_of(found, "/directory-b/html/page.html")
    assert (html.reserved, html.policy) == (True, "https://provider.com/policies/policy.json")
    image = reading_of(found, "/directory-b/images/2024/photo.jpg")
    assert (image.reserved, image.policy) == (False, None)
    assert reading_of(found, "/directory-b/images/logo.png").reserved is None
    assert reading_of(found, "/directory-c/x").reserved is None


def test_spec_example_a_special_character_written_percent_encoded() -> None:
    """TDMRep, "Use of regular expressions": a special character matched verbatim is written
    %-encoded in the location (``/path/foo-%24`` matches ``/path/foo-$``)."""
    found = tdm_file({"location": "/path/foo-%24", "tdm-reservation": 1})
    assert reading_of(found, "/path/foo-$").reserved is True
    assert reading_of(found, "/path/foo-").reserved is None


def test_first_matching_rule_wins_not_the_longest() -> None:
    """TDMRep, "TDM File on the Origin Server": "the most specific match is the first in
    sequence": the first rule in array order whose location matches applies, unlike robots.txt's
    longest match; a later, longer location never overrides it."""
    found = tdm_file(
        {"location": "/books/", "tdm-reservation": 0},
        {"location": "/books/rare/", "tdm-reservation": 1},
    )
    reading = reading_of(found, "/books/rare/1.html")
    assert reading.reserved is False
    assert reading.source == "tdmrep.json rule 1 (location /books/)"
    swapped = tdm_file(
        {"location": "/books/rare/", "tdm-reservation": 1},
        {"location": "/books/", "tdm-reservation": 0},
    )
    assert reading_of(swapped, "/books/rare/1.html").reserved is True
    assert reading_of(swapped, "/books/common.html").reserved is False


def test_a_star_matches_any_sequence_of_characters() -> None:
    """A location's ``*`` matches any characters, a slash included."""
    found = tdm_file({"location": "/*/chapter-*.html", "tdm-reservation": 1})
    assert reading_of(found, "/novels/dune/chapter-3.html").reserved is True
    assert reading_of(found, "/chapter-3.html").reserved is None


def test_a_final_dollar_anchors_the_end() -> None:
    """A location ending in ``$`` matches only paths that end there; without it a location is
    a prefix."""
    found = tdm_file(
        {"location": "/*.pdf$", "tdm-reservation": 1},
        {"location": "/docs", "tdm-reservation": 0},
    )
    assert reading_of(found, "/papers/a.pdf").reserved is True
    assert reading_of(found, "/papers/a.pdf.html").reserved is None
    assert reading_of(found, "/docs/a.pdf").reserved is True  # rule 1 comes first
    assert reading_of(found, "/docs/a.html").reserved is False
    assert reading_of(found, "/docs-old/a.html").reserved is False  # a prefix


def test_locations_and_paths_compare_percent_encoded() -> None:
    """Paths compare as robots.txt paths do: percent-encoded UTF-8, either way of writing."""
    found = tdm_file({"location": "/café/", "tdm-reservation": 1})
    assert reading_of(found, "/caf%C3%A9/menu").reserved is True
    assert reading_of(found, "/café/menu").reserved is True


def test_no_matching_rule_states_nothing() -> None:
    found = tdm_file({"location": "/private/", "tdm-reservation": 1})
    reading = reading_of(found, "/public/a")
    assert (reading.file, reading.reserved, reading.policy, reading.source) == (
        READ,
        None,
        None,
        "",
    )
    assert reading.statements() == ()


def test_an_empty_array_is_a_file_without_rules() -> None:
    found = parse_file(b"[]")
    assert (found.status, found.rules) == (READ, ())
    assert reading_of(found, "/").reserved is None


def test_reservation_values_other_than_0_and_1_count_as_unset() -> None:
    """Values other than 0 and 1 (2, "1", true, null, none at all) are unset; the rule still
    matches first, so it states nothing for its paths, and says why in ``ignored``."""
    values: list[object] = [2, "1", True, None, 1.0]
    found = tdm_file(
        *({"location": f"/v{i}/", "tdm-reservation": v} for i, v in enumerate(values)),
        {"location": "/v5/"},
        {"location": "/", "tdm-reservation": 1},
    )
    for i in range(len(values) + 1):
        assert reading_of(found, f"/v{i}/page").reserved is None, i
    assert reading_of(found, "/other").reserved is True
    assert len(found.ignored) == len(values) + 1
    assert found.ignored[0] == "tdmrep.json rule 1: tdm-reservation 2 is not 0 or 1"


def test_entries_that_cannot_match_are_left_out_and_named() -> None:
    """A rule that is not an object, or has no location path, cannot apply to any URL."""
    found = parse_file(
        b'["x", {"tdm-reservation": 1}, {"location": "relative", "tdm-reservation": 1},'
        b' {"location": "/a", "tdm-reservation": 1, "tdm-policy": 7}]'
    )
    assert [(r.index, r.policy) for r in found.rules] == [(4, None)]
    assert found.ignored == (
        "tdmrep.json rule 1: not an object",
        "tdmrep.json rule 2: no location path starting with /",
        "tdmrep.json rule 3: no location path starting with /",
        "tdmrep.json rule 4: tdm-policy is not a string",
    )


def test_a_byte_order_mark_is_ignored() -> None:
    """RFC 8259 §8.1: a parser may ignore a UTF-8 byte order mark."""
    found = parse_file(b'\xef\xbb\xbf[{"location": "/", "tdm-reservation": 1}]')
    assert found.status == READ
    assert reading_of(found, "/").reserved is True


def test_a_file_that_is_not_a_json_array_is_malformed() -> None:
    """An HTML "not found" page served with 200, a JSON object, bytes that are not UTF-8:
    MALFORMED with the reason, and no rule."""
    cases = {
        b"<html><body>Not found</body></html>": "not JSON",
        b'{"location": "/", "tdm-reservation": 1}': "not a JSON array but a dict",
        b"\xff\xfe[]": "not JSON",
        b"": "not JSON",
        b"[" * 100_000: "not JSON",
    }
    for body, reason in cases.items():
        found = parse_file(body)
        assert found.status == MALFORMED
        assert found.reason.startswith(reason), (body[:20], found.reason)
        assert found.rules == ()
        assert reading_of(found, "/").reserved is None


@given(st.binary(max_size=300))
def test_any_bytes_give_a_file_never_an_exception(body: bytes) -> None:
    found = parse_file(body)
    assert found.status in (READ, MALFORMED)
    file_reading(found, SITE + "/any")


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), st.lists, max_leaves=5))
def test_any_json_gives_a_file_never_an_exception(value: object) -> None:
    found = parse_file(json.dumps([value, {"location": "/", "tdm-reservation": value}]).encode())
    assert found.status == READ
    assert found.rules[-1].reserved in (True, False, None)


# -- the file's state: plain data --------------------------------------------------------------


def test_a_file_round_trips_through_plain_json_data() -> None:
    """A snapshot shares the file as JSON: read back, it matches as before."""
    found = tdm_file(
        {"location": "/*.pdf$", "tdm-reservation": 1, "tdm-policy": "https://p.example/p"},
        {"location": "/", "tdm-reservation": 7},
    )
    plain = json.loads(json.dumps(found.to_plain()))
    assert valid_plain(plain)
    back = file_from_plain(plain)
    assert back.rules == found.rules
    assert back.status == found.status
    for status in (absent("HTTP 404"), unreadable("HTTP 503")):
        assert file_from_plain(status.to_plain()) == status


def test_plain_data_from_elsewhere_is_checked() -> None:
    good = [READ, "", [[1, "/", True, None]]]
    assert valid_plain(good)
    for bad in (
        None,
        [],
        ["maybe", "", []],
        [READ, 3, []],
        [READ, "", [[1, "/", 2, None]]],
        [READ, "", [[1, 5, True, None]]],
        [READ, "", [["1", "/", True, None]]],
        [READ, "", [[1, "/", True]]],
        [READ, "", [[1, "/", True, 9]]],
        [READ, "", {}],
    ):
        assert not valid_plain(bad), bad


# -- headers and metas, and their precedence -----------------------------------------------


RESERVED_FILE = tdm_file({"location": "/", "tdm-reservation": 1, "tdm-policy": "https://f/p"})
OPEN_FILE = tdm_file({"location": "/", "tdm-reservation": 0})


def test_a_header_supersedes_the_file() -> None:
    """TDMRep, "Processing priority": the header's values supersede the file's."""
    base = reading_of(RESERVED_FILE, "/a")
    reading = page_reading(base, ("0", None), NONE)
    assert reading.reserved is False
    assert reading.source == "header tdm-reservation: 0"
    assert page_reading(reading_of(OPEN_FILE, "/a"), ("1", None), NONE).reserved is True


def test_a_meta_supersedes_the_header_and_the_file() -> None:
    """TDMRep, "Processing priority": values of TDM Metadata in HTML supersede the header's and
    the file's."""
    base = reading_of(RESERVED_FILE, "/a")
    reading = page_reading(base, ("1", None), ("0", None))
    assert reading.reserved is False
    assert reading.source == "meta tdm-reservation: 0"


def test_an_absent_value_never_resets_an_earlier_one() -> None:
    """No header and no meta leave the file's value; a meta alone overrides it; a header
    without a meta keeps the header's."""
    base = reading_of(RESERVED_FILE, "/a")
    assert page_reading(base, NONE, NONE) == base
    assert page_reading(base, NONE, ("0", None)).reserved is False
    assert page_reading(reading_of(OPEN_FILE, "/a"), ("1", None), NONE).reserved is True


def test_a_page_that_says_0_beats_its_files_1() -> None:
    """Within TDMRep a page's 0 wins over its file's 1: the statements it makes allow every
    use a reservation speaks to."""
    reading = page_reading(reading_of(RESERVED_FILE, "/a"), NONE, ("0", None))
    assert {(s.use, s.allowed) for s in reading.statements()} == {(u, True) for u in TDM_USES}


def test_header_and_meta_values_other_than_0_and_1_are_unset() -> None:
    """ "yes", "2", "" state nothing: the file's value stands, and why is told."""
    base = reading_of(RESERVED_FILE, "/a")
    for value in ("yes", "2", "", "1, 0", "true"):
        assert page_reading(base, (value, None), (value, None)).reserved is True
        assert value_ignored("header", value) == f"header tdm-reservation: {value!r} is not 0 or 1"
    assert value_ignored("meta", " 1 ") is None
    assert value_ignored("meta", None) is None
    assert page_reading(NOT_CONSULTED_READING, (" 1 ", None), NONE).reserved is True


def test_the_policy_follows_the_same_precedence() -> None:
    """tdm-policy: the file's, superseded by the header's, by the meta's; an absent one keeps
    the earlier; it is given only while rights are reserved."""
    base = reading_of(RESERVED_FILE, "/a")
    assert base.to_dict()["tdm_policy"] == "https://f/p"
    by_header = page_reading(base, (None, "https://h/p"), NONE)
    assert (by_header.policy, by_header.policy_source) == (
        "https://h/p",
        "header tdm-policy: https://h/p",
    )
    by_meta = page_reading(base, ("1", "https://h/p"), (None, "https://m/p"))
    assert by_meta.to_dict() == {
        "tdm_reservation": True,
        "tdm_policy": "https://m/p",
        "tdm_file": READ,
    }
    assert by_meta.source == "header tdm-reservation: 1"
    released = page_reading(base, NONE, ("0", None))
    assert released.to_dict()["tdm_policy"] is None


def test_headers_and_metas_count_without_a_file() -> None:
    """With no file (absent, or not fetched), a page still states its reservation."""
    assert page_reading(TdmReading(ABSENT), ("1", None), NONE).reserved is True
    reading = page_reading(NOT_CONSULTED_READING, NONE, ("1", "https://m/p"))
    assert reading.to_dict() == {
        "tdm_reservation": True,
        "tdm_policy": "https://m/p",
        "tdm_file": NOT_CONSULTED,
    }


# -- what it means for the item --------------------------------------------------------------


def test_a_reservation_refuses_every_mining_use_but_search() -> None:
    """A reservation covers all text and data mining: training and feeding a model, not
    search indexing."""
    reading = reading_of(RESERVED_FILE, "/a")
    statements = reading.statements()
    assert {s.use for s in statements} == set(TDM_USES)
    assert "search" not in TDM_USES
    assert all(not s.allowed for s in statements)
    assert {s.source for s in statements} == {"tdmrep.json rule 1 (location /)"}


def test_not_consulted_differs_from_no_reservation() -> None:
    """Not consulted: tdm_file says so; no reservation: the file was read and stated none."""
    assert file_reading(None, SITE + "/") is NOT_CONSULTED_READING
    assert NOT_CONSULTED_READING.to_dict() == TDMREP_NOT_CONSULTED
    unstated = reading_of(tdm_file(), "/")
    assert unstated.to_dict() == {"tdm_reservation": None, "tdm_policy": None, "tdm_file": READ}


def test_an_unreadable_file_leaves_the_reservation_unknown_unless_the_page_states_it() -> None:
    base = file_reading(unreadable("HTTP 503"), SITE + "/a")
    assert base.file == UNREADABLE
    assert base.unknown
    assert not page_reading(base, ("0", None), NONE).unknown
    assert not page_reading(base, NONE, ("1", None)).unknown
    assert not file_reading(absent("HTTP 404"), SITE + "/a").unknown


def test_every_file_status_is_listed() -> None:
    assert set(FILE_STATUSES) == {NOT_CONSULTED, READ, ABSENT, UNREADABLE, MALFORMED}
