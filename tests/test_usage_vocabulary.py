"""What ``Content-Usage`` values, ``Content-Signal`` values and ``noai`` / ``noimageai`` page
rules say about which use (``usage/vocabulary.py``).

Sources: draft-ietf-aipref-vocab-08 (§4 its categories ``train-ai``, ``ai-use`` and ``search``;
§6 their serialization as an RFC 9651 Dictionary of the tokens ``y`` / ``n``), Cloudflare's
Content Signals Policy (September 2025: ``Content-Signal: search=yes, ai-train=no``), and the
``noai`` / ``noimageai`` page rules (no use in AI training of the page / of its images).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_robotsmeta.usage.preferences import TDMREP_NOT_CONSULTED, USES, Preferences, Statement
from scrapy_robotsmeta.usage.vocabulary import (
    CONTENT_SIGNAL_NAMES,
    CONTENT_USAGE_LABELS,
    Reading,
    read_content_signal,
    read_content_usage,
    read_page_rule,
)

SOURCE = "header Content-Usage"


def _usage(value: str) -> dict[str, bool | None]:
    return Preferences(read_content_usage(value, SOURCE).statements).to_dict()


def _signal(value: str) -> dict[str, bool | None]:
    return Preferences(read_content_signal(value, SOURCE).statements).to_dict()


def _expect(**uses: bool) -> dict[str, bool | str | None]:
    """Every use None but those given; TDMRep not consulted."""
    return {use: uses.get(use) for use in USES} | TDMREP_NOT_CONSULTED


# --------------------------------------------------------------------------------------------
# The table: which label speaks for which use
# --------------------------------------------------------------------------------------------


def test_every_label_names_known_uses() -> None:
    """Every use a Content-Usage label, a Content-Signal name or a page rule speaks for is one
    of USES, the keys of the item field."""
    named = {use for uses in CONTENT_USAGE_LABELS.values() for use in uses}
    named |= {use for uses in CONTENT_SIGNAL_NAMES.values() for use in uses}
    assert named <= set(USES)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("train-ai=n", _expect(ai_train=False, ai_train_images=False)),
        ("ai-use=n", _expect(ai_use=False, ai_input=False)),
        ("search=n", _expect(search=False)),
        ("train-ai=y", _expect(ai_train=True, ai_train_images=True)),
        ("ai-use=y", _expect(ai_use=True, ai_input=True)),
        ("search=y", _expect(search=True)),
    ],
)
def test_content_usage_categories(value: str, expected: dict[str, bool | None]) -> None:
    """draft-ietf-aipref-vocab-08 §4: ``train-ai`` speaks for training (of the page and its
    images), ``ai-use`` for any input into a generative model (Cloudflare's ``ai-input``
    included), ``search`` for search."""
    assert _usage(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ai-train=no", _expect(ai_train=False, ai_train_images=False)),
        ("ai-input=no", _expect(ai_input=False)),
        ("search=no", _expect(search=False)),
        ("ai-train=yes", _expect(ai_train=True, ai_train_images=True)),
        ("ai-input=yes", _expect(ai_input=True)),
        ("search=yes", _expect(search=True)),
    ],
)
def test_content_signal_names(value: str, expected: dict[str, bool | None]) -> None:
    """Content Signals Policy: its three signals ``search``, ``ai-input`` and ``ai-train``;
    ``ai-input`` says nothing about the IETF's wider ``ai-use``."""
    assert _signal(value) == expected


def test_page_rules() -> None:
    """``noai`` refuses AI training on the page and its images; ``noimageai`` on its images
    only; any other page rule states no usage preference."""
    assert read_page_rule("noai", "meta robots: noai") == (
        Statement("ai_train", False, "meta robots: noai"),
        Statement("ai_train_images", False, "meta robots: noai"),
    )
    assert read_page_rule("noimageai", "meta robots: noimageai") == (
        Statement("ai_train_images", False, "meta robots: noimageai"),
    )
    for rule in ("noindex", "nofollow", "none", "all", ""):
        assert read_page_rule(rule, "meta robots") == ()


def test_statements_carry_their_source() -> None:
    """Every statement a value makes names the source it was read from."""
    reading = read_content_usage("train-ai=n, search=y", "header Content-Usage: train-ai=n")
    assert {s.source for s in reading.statements} == {"header Content-Usage: train-ai=n"}
    reading = read_content_signal("search=yes", "robots.txt line 2: Content-Signal: search=yes")
    assert reading == Reading(
        (Statement("search", True, "robots.txt line 2: Content-Signal: search=yes"),), ()
    )


# --------------------------------------------------------------------------------------------
# Content-Usage: draft-ietf-aipref-vocab-08 §6, read strictly
# --------------------------------------------------------------------------------------------


def test_vocab_example_train_ai_allowed_search_refused() -> None:
    """draft-ietf-aipref-vocab-08 §6 example ``train-ai=y, search=n``: training allowed, search
    refused, every other use unknown."""
    assert _usage("train-ai=y, search=n") == _expect(
        ai_train=True, ai_train_images=True, search=False
    )


def test_vocab_example_last_value_not_a_token_leaves_every_preference_unknown() -> None:
    """draft-ietf-aipref-vocab-08 §6 example ``train-ai=y, train-ai, search=n, search="n"``: a
    repeated label keeps its last value, here the Boolean true and the String "n", neither the
    token y or n, so every preference is unknown."""
    reading = read_content_usage('train-ai=y, train-ai, search=n, search="n"', SOURCE)
    assert reading.statements == ()
    assert len(reading.ignored) == 2
    assert _usage('train-ai=y, train-ai, search=n, search="n"') == _expect()


def test_vocab_example_parameters_ignored_last_value_wins() -> None:
    """draft-ietf-aipref-vocab-08 §6 example ``train-ai;allow=n, train-ai=y``: parameters are
    ignored and the last value is kept, so training is allowed."""
    assert _usage("train-ai;allow=n, train-ai=y") == _expect(ai_train=True, ai_train_images=True)


def test_repeated_label_keeps_last_value() -> None:
    """draft-ietf-aipref-vocab-08 §6 (RFC 9651 §4.2.2): a repeated label keeps its last value,
    in both directions."""
    assert _usage("train-ai=n, train-ai=y") == _expect(ai_train=True, ai_train_images=True)
    assert _usage("train-ai=y, train-ai=n") == _expect(ai_train=False, ai_train_images=False)


def test_parameters_on_a_value_are_ignored() -> None:
    """draft-ietf-aipref-vocab-08 §6: parameters on a label's value are ignored."""
    assert _usage("search=n;exp=1;why=?1") == _expect(search=False)


def test_unknown_label_ignored_with_note() -> None:
    """draft-ietf-aipref-vocab-08 §6: unknown labels are ignored; the others still count."""
    reading = read_content_usage("train-ai=n, genai=n, foo=y", SOURCE)
    assert Preferences(reading.statements).to_dict() == _expect(
        ai_train=False, ai_train_images=False
    )
    assert reading.ignored == (
        f"{SOURCE}: unknown label 'genai'",
        f"{SOURCE}: unknown label 'foo'",
    )


@pytest.mark.parametrize("value", ["Train-AI=n", "train-ai=n, SEARCH=n", "TRAIN-AI=N"])
def test_uppercase_label_fails_whole_value(value: str) -> None:
    """draft-ietf-aipref-vocab-08 §6 (RFC 9651 §4.2.3.3: keys are lowercase): an uppercase
    label fails the parse, and a value that fails to parse leaves every preference unknown,
    the labels that were well written included."""
    reading = read_content_usage(value, SOURCE)
    assert reading.statements == ()
    assert reading.ignored == (f"{SOURCE}: not a structured-field dictionary; it states nothing",)


@pytest.mark.parametrize(
    "value",
    [
        "train-ai=N",
        "train-ai=Y",
        "train-ai=yes",
        "train-ai=no",
        'train-ai="n"',
        "train-ai=?0",
        "train-ai=0",
        "train-ai",
        "train-ai=(n)",
        "train-ai=:bg==:",
    ],
)
def test_value_other_than_token_y_or_n_states_nothing(value: str) -> None:
    """draft-ietf-aipref-vocab-08 §6: only the tokens ``y`` and ``n`` (case-sensitive) state a
    preference; any other value (an uppercase token, a String, a Boolean, a number, an Inner
    List, a Byte Sequence) leaves the label's preference unknown."""
    reading = read_content_usage(value, SOURCE)
    assert reading.statements == ()
    assert reading.ignored == (f"{SOURCE}: train-ai: not the token y or n",)


@pytest.mark.parametrize(
    "value",
    ["train-ai = n", "train-ai=n;", "train-ai=n,", "train-ai=n search=n", "train-ai==n"],
)
def test_malformed_dictionary_states_nothing(value: str) -> None:
    """draft-ietf-aipref-vocab-08 §6: RFC 9651 allows no space around "=" nor a trailing
    comma; a value that fails to parse states nothing at all."""
    assert read_content_usage(value, SOURCE).statements == ()


#: Values that fail RFC 9651 parsing as a whole, each named after the section of the rule it
#: breaks; the members are unknown labels, so only the failure decides the note.
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


@pytest.mark.parametrize("value", MALFORMED)
def test_value_failing_rfc9651_anywhere_states_nothing(value: str) -> None:
    """draft-ietf-aipref-vocab-08 §6 and RFC 9651 §4.2: a failure anywhere in the value fails
    the whole Dictionary, so the value states nothing and says why."""
    reading = read_content_usage(f"train-ai=n, {value}", SOURCE)
    assert reading == Reading(
        (), (f"{SOURCE}: not a structured-field dictionary; it states nothing",)
    )


def test_empty_value_states_nothing_silently() -> None:
    """An empty value is an empty Dictionary: no preference, and nothing to report."""
    assert read_content_usage("", SOURCE) == Reading((), ())
    assert read_content_usage(" \t", SOURCE) == Reading((), ())


def test_surrounding_whitespace_and_tabs_between_members() -> None:
    """RFC 9651 §4.2: surrounding spaces are dropped and OWS (spaces, tabs) may follow a
    member's comma."""
    assert _usage("  train-ai=n,\tsearch=y  ") == _expect(
        ai_train=False, ai_train_images=False, search=True
    )


# --------------------------------------------------------------------------------------------
# Content-Signal: the Content Signals Policy, read leniently
# --------------------------------------------------------------------------------------------


def test_signal_policy_example() -> None:
    """Content Signals Policy: ``search=yes, ai-train=no``; ``ai-input``, absent, states no
    preference."""
    assert _signal("search=yes, ai-train=no") == _expect(
        search=True, ai_train=False, ai_train_images=False
    )


def test_signal_2026_form_with_unknown_use_signal() -> None:
    """Cloudflare's 2026 form ``search=yes,ai-train=no,use=reference``: the signals it knows
    count; the unknown ``use`` is ignored, with a note."""
    source = "robots.txt line 2: Content-Signal: search=yes,ai-train=no,use=reference"
    reading = read_content_signal("search=yes,ai-train=no,use=reference", source)
    assert Preferences(reading.statements).to_dict() == _expect(
        search=True, ai_train=False, ai_train_images=False
    )
    assert reading.ignored == (f"{source}: unknown signal 'use'",)


@pytest.mark.parametrize(
    "value",
    [
        "search=yes, ai-train=no",
        "search=yes,ai-train=no",
        "  search = yes ,\tai-train = no  ",
        "Search=Yes, AI-Train=NO",
        "SEARCH=YES,AI-TRAIN=NO",
        ",search=yes,, ai-train=no,",
    ],
)
def test_signal_read_leniently(value: str) -> None:
    """Content-Signal has no grammar beyond the policy's examples: spaces and tabs around
    names, values and commas, the case of names and values and stray commas do not matter."""
    reading = read_content_signal(value, SOURCE)
    assert Preferences(reading.statements).to_dict() == _expect(
        search=True, ai_train=False, ai_train_images=False
    )
    assert reading.ignored == ()


def test_signal_repeated_name_keeps_last_value() -> None:
    """A repeated signal keeps its last value, as a dictionary would."""
    assert _signal("ai-train=no, ai-train=yes") == _expect(ai_train=True, ai_train_images=True)
    assert _signal("ai-train=yes, AI-TRAIN=no") == _expect(ai_train=False, ai_train_images=False)


@pytest.mark.parametrize(
    ("value", "note"),
    [
        ("ai-input=maybe", "ai-input: expected yes or no"),
        ("ai-input=y", "ai-input: expected yes or no"),
        ("ai-input", "ai-input: expected yes or no"),
        ("ai-input=", "ai-input: expected yes or no"),
        ("train-ai=no", "unknown signal 'train-ai'"),
        ("ai-use=no", "unknown signal 'ai-use'"),
        ("=no", "unknown signal ''"),
    ],
)
def test_signal_bad_item_states_nothing_with_note(value: str, note: str) -> None:
    """Content Signals Policy: only its three names, each ``yes`` or ``no``; any other item
    (the IETF labels included) states nothing and is noted."""
    reading = read_content_signal(value, SOURCE)
    assert reading.statements == ()
    assert reading.ignored == (f"{SOURCE}: {note}",)


def test_signal_bad_item_does_not_spoil_the_others() -> None:
    """Unlike a Content-Usage Dictionary, one bad Content-Signal item leaves the others'
    statements standing."""
    reading = read_content_signal("ai-input=maybe, ai-train=no, foo", SOURCE)
    assert Preferences(reading.statements).to_dict() == _expect(
        ai_train=False, ai_train_images=False
    )
    assert len(reading.ignored) == 2


@pytest.mark.parametrize("value", ["", ",", " , ,\t"])
def test_signal_empty_states_nothing_silently(value: str) -> None:
    """A value of nothing but commas and spaces states nothing and is not worth a note."""
    assert read_content_signal(value, SOURCE) == Reading((), ())


# --------------------------------------------------------------------------------------------
# Neither reader raises
# --------------------------------------------------------------------------------------------


@given(st.text())
def test_readers_never_raise(value: str) -> None:
    """Any text, read as either value, gives statements about known uses and never raises."""
    for read in (read_content_usage, read_content_signal):
        reading = read(value, SOURCE)
        assert all(s.use in USES for s in reading.statements)
        assert all(isinstance(note, str) for note in reading.ignored)


@given(
    st.lists(
        st.tuples(
            st.sampled_from([*CONTENT_SIGNAL_NAMES, "use", "Search", "AI-TRAIN"]),
            st.sampled_from(["yes", "no", "YES", "No", "maybe", ""]),
        ),
        max_size=6,
    )
)
def test_signal_last_value_of_each_name(items: list[tuple[str, str]]) -> None:
    """Each known signal ends with the last yes / no written for it, whatever came before."""
    value = ", ".join(f"{name}={setting}" for name, setting in items)
    last: dict[str, bool] = {}
    for name, setting in items:
        if name.lower() in CONTENT_SIGNAL_NAMES and setting.lower() in ("yes", "no"):
            last[name.lower()] = setting.lower() == "yes"
    expected: dict[str, bool | str | None] = dict.fromkeys(USES) | TDMREP_NOT_CONSULTED
    for name, allowed in last.items():
        for use in CONTENT_SIGNAL_NAMES[name]:
            expected[use] = allowed
    assert _signal(value) == expected
