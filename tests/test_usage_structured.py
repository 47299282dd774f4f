"""Tests for the RFC 9651 Structured Field Dictionary parser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_robotsmeta.usage.structured import (
    Date,
    DisplayString,
    Member,
    Token,
    parse_dictionary,
)


def _values(text: str) -> dict[str, object]:
    parsed = parse_dictionary(text)
    assert parsed is not None, text
    return {key: member.value for key, member in parsed.items()}


#: Values that fail parsing as a whole (RFC 9651 §4.2: the field is then ignored), each named
#: after the section of the rule it breaks.
MALFORMED = [
    pytest.param("a=1, B=2", id="§4.2.3.3 uppercase_key 1"),
    pytest.param("a;P=1", id="§4.2.3.3 uppercase_key 2"),
    pytest.param("1a=1", id="§4.2.3.3 uppercase_key 3"),
    pytest.param("a=1 ;x", id="§4.2.3.2 parameters_of_a_member 1"),
    pytest.param("a=1;", id="§4.2.3.2 parameters_of_a_member 2"),
    pytest.param("a=1;x=", id="§4.2.3.2 parameters_of_a_member 3"),
    pytest.param("a=(1 2", id="§4.2.1.2 inner_list 1"),
    pytest.param("a=(1,2)", id="§4.2.1.2 inner_list 2"),
    pytest.param("a=((1))", id="§4.2.1.2 inner_list 3"),
    pytest.param("a=(1)x", id="§4.2.1.2 inner_list 4"),
    pytest.param(r'a="\n"', id="§4.2.5 string_escapes 1"),
    pytest.param('a="abc', id="§4.2.5 string_escapes 2"),
    pytest.param('a="a\tb"', id="§4.2.5 string_escapes 3"),
    pytest.param('a="ab\\', id="§4.2.5 string_escapes 4"),
    pytest.param("a=1000000000000000", id="§4.2.4 integer_limits 1"),
    pytest.param("a=-", id="§4.2.4 integer_limits 2"),
    pytest.param("a=-x", id="§4.2.4 integer_limits 3"),
    pytest.param("a=1x", id="§4.2.4 integer_limits 4"),
    pytest.param("a=1234567890123.1", id="§4.2.4 decimal_limits 1"),
    pytest.param("a=1.1234", id="§4.2.4 decimal_limits 2"),
    pytest.param("a=1.", id="§4.2.4 decimal_limits 3"),
    pytest.param("a=.5", id="§4.2.4 decimal_limits 4"),
    pytest.param("a=1.2.3", id="§4.2.4 decimal_limits 5"),
    pytest.param("a=1,", id="§4.2.2 trailing_comma 1"),
    pytest.param("a=1, ", id="§4.2.2 trailing_comma 2"),
    pytest.param(",a=1", id="§4.2.2 trailing_comma 3"),
    pytest.param("a=1,,b=2", id="§4.2.2 trailing_comma 4"),
    pytest.param("a=1 b=2", id="§4.2 trailing_garbage 1"),
    pytest.param("a=1;x=2 ;", id="§4.2 trailing_garbage 2"),
    pytest.param("a=tok)", id="§4.2 trailing_garbage 3"),
    pytest.param('a="caf\u00e9"', id="§4.2 non_ascii 1"),
    pytest.param("a=1, b=\u00ff", id="§4.2 non_ascii 2"),
    pytest.param("a=:aGVsbG8", id="§4.2.7 byte_sequence 1"),
    pytest.param("a=:aGV*bG8=:", id="§4.2.7 byte_sequence 2"),
    pytest.param("a=:aG=Vs:", id="§4.2.7 byte_sequence 3"),
    pytest.param("a=:a:", id="§4.2.7 byte_sequence 4"),
    pytest.param("a=?2", id="§4.2.8 boolean 1"),
    pytest.param("a=?", id="§4.2.8 boolean 2"),
    pytest.param("a=?true", id="§4.2.8 boolean 3"),
    pytest.param("a=@1.5", id="§4.2.9 date 1"),
    pytest.param("a=@", id="§4.2.9 date 2"),
    pytest.param('a=%"%C3%A9"', id="§4.2.10 display_string 1"),
    pytest.param('a=%"%c3"', id="§4.2.10 display_string 2"),
    pytest.param('a=%"%c"', id="§4.2.10 display_string 3"),
    pytest.param('a=%"abc', id="§4.2.10 display_string 4"),
    pytest.param("a=%abc", id="§4.2.10 display_string 5"),
    pytest.param("a =1", id="§4.2 whitespace_around_members 1"),
    pytest.param("a= 1", id="§4.2 whitespace_around_members 2"),
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_value_fails_the_whole_dictionary(text: str) -> None:
    """RFC 9651 §4.2: any failure anywhere fails the whole value, not just its member."""
    assert parse_dictionary(text) is None


def test_dictionary_member_without_value_is_true():
    """RFC 9651 §4.2.2: a member with no "=" is Boolean true, keeping its parameters."""
    assert parse_dictionary("a, b;x=1") == {
        "a": Member(True, {}),
        "b": Member(True, {"x": 1}),
    }


def test_empty_dictionary():
    """RFC 9651 §4.2.2: an empty input is an empty dictionary."""
    assert parse_dictionary("") == {}
    assert parse_dictionary("  \t ") == {}


def test_key_characters():
    """RFC 9651 §4.2.3.3: a key is lowercase letters, digits and "_-.*", starting with a letter
    or "*" (an uppercase key fails the whole field: see MALFORMED)."""
    assert _values("*a_b-c.d*9=1") == {"*a_b-c.d*9": 1}


def test_duplicate_key_last_value_wins_first_position():
    """RFC 9651 §4.2.2: a repeated key overwrites the earlier value in place."""
    parsed = parse_dictionary("a=1, b=2, a=3")
    assert parsed is not None
    assert list(parsed) == ["a", "b"]
    assert parsed["a"] == Member(3, {})


def test_parameters_of_a_member():
    """RFC 9651 §4.2.3.2: parameters follow ";", SP allowed before the key."""
    parsed = parse_dictionary('a=1;x;y=?0; z="s";x=2')
    assert parsed == {"a": Member(1, {"x": 2, "y": False, "z": "s"})}


def test_inner_list():
    """RFC 9651 §4.2.1.2: an inner list of items with parameters, then its own."""
    parsed = parse_dictionary('a=( 1;p "b"  tok );q=2, e=()')
    assert parsed == {
        "a": Member(((1, {"p": True}), ("b", {}), (Token("tok"), {})), {"q": 2}),
        "e": Member((), {}),
    }


def test_token_vs_string():
    """RFC 9651 §4.2.5 and §4.2.6: tokens and strings are different types."""
    values = _values('a=tok, b="tok", c=*x:/y!')
    assert type(values["a"]) is Token
    assert type(values["b"]) is str
    assert values == {"a": "tok", "b": "tok", "c": "*x:/y!"}


def test_string_escapes():
    """RFC 9651 §4.2.5: only \\" and \\\\ escape; control characters fail."""
    assert _values(r'a="x\"y\\z"') == {"a": 'x"y\\z'}


def test_integer_limits():
    """RFC 9651 §4.2.4: integers have at most 15 digits."""
    assert _values("a=999999999999999, b=-999999999999999, c=-0") == {
        "a": 999_999_999_999_999,
        "b": -999_999_999_999_999,
        "c": 0,
    }


def test_decimal_limits():
    """RFC 9651 §4.2.4: decimals have 1-12 integer digits and 1-3 fraction digits."""
    values = _values("a=123456789012.123, b=-0.5, c=1.0")
    assert values == {"a": 123456789012.123, "b": -0.5, "c": 1.0}
    assert type(values["c"]) is float


def test_byte_sequence():
    """RFC 9651 §4.2.7: base64 between colons; missing padding is tolerated."""
    assert _values("a=:aGVsbG8=:, b=:aGVsbG8:, c=::") == {
        "a": b"hello",
        "b": b"hello",
        "c": b"",
    }


def test_boolean():
    """RFC 9651 §4.2.8: ?1 is true and ?0 is false; nothing else."""
    assert _values("a=?1, b=?0") == {"a": True, "b": False}


def test_date():
    """RFC 9651 §4.2.9: "@" then an integer of seconds; decimals fail."""
    assert _values("a=@1659578233, b=@-1") == {"a": Date(1659578233), "b": Date(-1)}


def test_display_string():
    """RFC 9651 §4.2.10: %-escaped UTF-8 in lowercase hex; other text taken as is."""
    values = _values(r'a=%"caf%c3%a9 \ 50%25", b=%""')
    assert values == {"a": "caf\u00e9 \\ 50%", "b": ""}
    assert type(values["a"]) is DisplayString


def test_whitespace_around_members():
    """RFC 9651 §4.2 and §4.2.2: OWS around values and commas; SP inside members fails."""
    assert _values(" \ta=1 \t,\t b=2 \t") == {"a": 1, "b": 2}


def test_aipref_two_tokens():
    """RFC 9651 §4.2.2: `train-ai=y, search=n` holds two Token members."""
    parsed = parse_dictionary("train-ai=y, search=n")
    assert parsed == {"train-ai": Member(Token("y"), {}), "search": Member(Token("n"), {})}
    assert all(type(member.value) is Token for member in parsed.values())


def test_aipref_duplicates_change_type():
    """RFC 9651 §4.2.2: the last duplicate wins, whatever its type."""
    parsed = parse_dictionary('train-ai=y, train-ai, search=n, search="n"')
    assert parsed is not None
    assert parsed["train-ai"].value is True
    assert parsed["search"].value == "n"
    assert type(parsed["search"].value) is str


def test_aipref_later_member_replaces_parameters():
    """RFC 9651 §4.2.2: overwriting a member replaces its parameters too."""
    assert parse_dictionary("train-ai;allow=n, train-ai=y") == {"train-ai": Member(Token("y"), {})}


def test_aipref_parameters_on_boolean_member():
    """RFC 9651 §4.2.2: a member without "=" is true and keeps its parameters."""
    assert parse_dictionary('train-ai;has;parameters="?"') == {
        "train-ai": Member(True, {"has": True, "parameters": "?"})
    }


@given(st.text())
def test_never_raises_on_arbitrary_text(text):
    """RFC 9651 §4.2: any failure returns None instead of raising."""
    result = parse_dictionary(text)
    assert result is None or isinstance(result, dict)


@given(st.text(alphabet=' \t,;=()"\\:?@%*-.aZ09/', max_size=40))
def test_never_raises_on_structured_punctuation(text):
    """RFC 9651 §4.2: inputs dense in delimiters also return a result or None."""
    result = parse_dictionary(text)
    assert result is None or isinstance(result, dict)


_keys = st.from_regex(r"[a-z*][a-z0-9_.*-]{0,8}", fullmatch=True)
_items = st.one_of(
    st.integers(-(10**15) + 1, 10**15 - 1),
    st.from_regex(r"[A-Za-z*][!#$%&'*+.^_`|~0-9A-Za-z:/-]{0,8}", fullmatch=True).map(Token),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12),
)


def _serialise(item: int | str) -> str:
    if isinstance(item, int) or type(item) is Token:
        return str(item)
    return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'


@given(st.dictionaries(_keys, st.tuples(_items, st.dictionaries(_keys, _items, max_size=3))))
def test_serialised_dictionary_round_trips(members):
    """RFC 9651 §4.1.2 and §4.2.2: parsing a serialised dictionary gives it back."""
    text = ", ".join(
        key
        + "="
        + _serialise(value)
        + "".join(f";{pkey}={_serialise(pvalue)}" for pkey, pvalue in params.items())
        for key, (value, params) in members.items()
    )
    parsed = parse_dictionary(text)
    assert parsed == {key: Member(value, params) for key, (value, params) in members.items()}
    assert parsed is not None
    for key, (value, _) in members.items():
        assert type(parsed[key].value) is type(value)


@pytest.mark.parametrize("text", ["a=1\x00", "a=\x7f", "a=1\n", "\x00"])
def test_control_characters_fail(text):
    """RFC 9651 §4.2: control characters are not part of any production here."""
    assert parse_dictionary(text) is None
