"""How usage statements combine (``usage/preferences.py``): ``Preferences.allows``,
``refusal``, ``to_dict``, ``+`` and ``use_named``.

Source: draft-ietf-aipref-vocab-08 §5.1: when several statements apply, any that disallows a
use wins, then any that allows it, else the preference is unknown.
"""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scrapy import Request
from scrapy.utils.request import request_from_dict

from scrapy_robotsmeta.usage.preferences import (
    NO_PREFERENCES,
    TDMREP_NOT_CONSULTED,
    USES,
    Preferences,
    Statement,
    shown,
    use_named,
)

YES = Statement("ai_train", True, "header Content-Usage: train-ai=y")
NO = Statement("ai_train", False, "robots.txt line 3: Content-Usage: train-ai=n")
NO_TOO = Statement("ai_train", False, "meta robots: noai")
SEARCH = Statement("search", True, "robots.txt line 2: Content-Signal: search=yes")


def test_uses_in_order() -> None:
    """The uses, in the order of the item field's keys."""
    assert USES == ("search", "ai_input", "ai_train", "ai_use", "ai_train_images")


# --------------------------------------------------------------------------------------------
# allows: draft-ietf-aipref-vocab-08 §5.1
# --------------------------------------------------------------------------------------------


def test_no_statement_is_no_preference() -> None:
    """draft-ietf-aipref-vocab-08 §5.1: with no statement about a use, its preference is
    unknown (None)."""
    assert NO_PREFERENCES.allows("ai_train") is None
    assert Preferences((SEARCH,)).allows("ai_train") is None


def test_single_statement() -> None:
    assert Preferences((YES,)).allows("ai_train") is True
    assert Preferences((NO,)).allows("ai_train") is False


@pytest.mark.parametrize(
    "statements", [(YES, NO), (NO, YES), (YES, YES, NO), (NO, YES, YES), (YES, NO, YES)]
)
def test_any_refusal_wins(statements: tuple[Statement, ...]) -> None:
    """draft-ietf-aipref-vocab-08 §5.1: a statement that disallows a use wins over any that
    allow it, wherever it is."""
    assert Preferences(statements).allows("ai_train") is False


def test_allow_beats_unknown() -> None:
    """draft-ietf-aipref-vocab-08 §5.1: with no refusal, any allowing statement makes the use
    allowed."""
    assert Preferences((SEARCH, YES)).allows("ai_train") is True


def test_statements_about_other_uses_do_not_count() -> None:
    """A statement speaks only for its own use."""
    refused_search = Statement("search", False, "header Content-Usage: search=n")
    assert Preferences((refused_search, YES)).allows("ai_train") is True
    assert Preferences((refused_search, YES)).allows("search") is False
    assert Preferences((refused_search, YES)).allows("ai_use") is None


@given(st.lists(st.sampled_from([YES, NO, NO_TOO, SEARCH])))
def test_allows_is_most_restrictive(statements: list[Statement]) -> None:
    """draft-ietf-aipref-vocab-08 §5.1, for any statements: False if any refuses, else True if
    any allows, else None; order does not matter."""
    about = [s.allowed for s in statements if s.use == "ai_train"]
    expected = None if not about else all(about)
    assert Preferences(tuple(statements)).allows("ai_train") is expected
    assert Preferences(tuple(reversed(statements))).allows("ai_train") is expected


# --------------------------------------------------------------------------------------------
# refusal
# --------------------------------------------------------------------------------------------


def test_refusal_is_first_refusing_statement() -> None:
    """``refusal`` names the first statement that refuses the use, to explain a skip."""
    assert Preferences((YES, NO, NO_TOO)).refusal("ai_train") is NO
    assert Preferences((NO_TOO, YES, NO)).refusal("ai_train") is NO_TOO


def test_no_refusal() -> None:
    assert Preferences((YES, SEARCH)).refusal("ai_train") is None
    assert Preferences((NO,)).refusal("search") is None
    assert NO_PREFERENCES.refusal("ai_train") is None


# --------------------------------------------------------------------------------------------
# to_dict
# --------------------------------------------------------------------------------------------


def test_to_dict_empty_has_every_use() -> None:
    """Every use is a key, in USES order, None when nothing was said; then the TDMRep keys,
    saying it was not consulted (not "no reservation": tdm_file tells the two apart)."""
    result = NO_PREFERENCES.to_dict()
    assert list(result) == [*USES, "tdm_reservation", "tdm_policy", "tdm_file"]
    assert result == dict.fromkeys(USES) | {
        "tdm_reservation": None,
        "tdm_policy": None,
        "tdm_file": "not_consulted",
    }


def test_to_dict_combines_each_use() -> None:
    """Every use is a key, in USES order, each combined as ``allows`` combines it."""
    result = Preferences((YES, SEARCH, NO)).to_dict()
    assert list(result)[: len(USES)] == list(USES)
    assert result == {
        "search": True,
        "ai_input": None,
        "ai_train": False,
        "ai_use": None,
        "ai_train_images": None,
        **TDMREP_NOT_CONSULTED,
    }


def test_to_dict_leaves_out_unknown_uses() -> None:
    """A statement about a use not in USES adds no key."""
    odd = Statement("ai_other", False, "test")
    assert Preferences((odd,)).to_dict() == dict.fromkeys(USES) | TDMREP_NOT_CONSULTED


def test_to_dict_is_a_fresh_dict() -> None:
    """Changing the returned dict changes neither the preferences nor the next result."""
    first = NO_PREFERENCES.to_dict()
    first["search"] = True
    assert NO_PREFERENCES.to_dict()["search"] is None


# --------------------------------------------------------------------------------------------
# +
# --------------------------------------------------------------------------------------------


def test_add_concatenates_statements() -> None:
    """Preferences from several sources add up, in order, and combine as one."""
    robots = Preferences((SEARCH, YES))
    header = Preferences((NO,))
    combined = robots + header
    assert combined.statements == (SEARCH, YES, NO)
    assert combined.allows("ai_train") is False
    assert combined.allows("search") is True


def test_add_nothing_is_identity() -> None:
    """Adding no statements keeps the preferences as they are (the same object)."""
    robots = Preferences((SEARCH,))
    assert robots + NO_PREFERENCES is robots
    assert (NO_PREFERENCES + robots).statements == robots.statements
    assert (NO_PREFERENCES + NO_PREFERENCES).statements == ()


def test_preferences_are_frozen_and_equal_by_value() -> None:
    """Preferences and Statements are values: equal when their contents are, and immutable."""
    assert Preferences((YES,)) == Preferences((YES,))
    assert Statement("search", True, "x") == Statement("search", True, "x")
    with pytest.raises(AttributeError):
        YES.allowed = False  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# Statement text
# --------------------------------------------------------------------------------------------


def test_statement_str() -> None:
    """A statement reads as its use, yes or no, and where it was read."""
    assert str(NO) == "ai_train=no (robots.txt line 3: Content-Usage: train-ai=n)"
    assert str(SEARCH) == "search=yes (robots.txt line 2: Content-Signal: search=yes)"


# --------------------------------------------------------------------------------------------
# use_named
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "use"),
    [
        ("ai_train", "ai_train"),
        ("ai-train", "ai_train"),
        ("AI_Train", "ai_train"),
        ("AI-TRAIN", "ai_train"),
        ("  ai-input ", "ai_input"),
        ("Search", "search"),
        ("ai-use", "ai_use"),
        ("ai-train-images", "ai_train_images"),
    ],
)
def test_use_named(name: str, use: str) -> None:
    """A use is named as an item key (``ai_train``) or as the signals write it
    (``ai-train``), in any case."""
    assert use_named(name) == use


@pytest.mark.parametrize("name", ["", "train-ai", "ai train", "noai", "ai_training", "all"])
def test_use_named_unknown(name: str) -> None:
    """Any other name is a ValueError that lists the uses (the IETF label ``train-ai`` is
    not a use's name)."""
    with pytest.raises(ValueError, match="unknown use") as raised:
        use_named(name)
    assert "ai_train_images" in str(raised.value)


def test_preferences_survive_pickling_with_their_request() -> None:
    """They ride in request meta, which JOBDIR's disk queues and scrapy-redis pickle (a
    retried or redirected request is scheduled again with its meta)."""
    preferences = Preferences((Statement("ai_train", False, "robots.txt line 2: x"),))
    request = Request("http://example.com/", meta={"robotstxt_usage": preferences})
    restored = request_from_dict(pickle.loads(pickle.dumps(request.to_dict())))
    assert restored.meta["robotstxt_usage"] == preferences


def test_a_source_quotes_a_hostile_value_cut() -> None:
    """Sources go into log lines and reports: a value of a megabyte is cut, a usual one kept."""
    assert shown("search=yes, ai-train=no") == "search=yes, ai-train=no"
    long = "train-ai=n," * 100_000
    assert shown(long) == long[:200] + "…"


def test_statements_about_one_use_keep_their_order() -> None:
    first = Statement("ai_train", False, "robots.txt line 2: x")
    second = Statement("ai_train", True, "header Content-Usage: train-ai=y")
    preferences = Preferences((first, Statement("search", True, "s"), second))
    assert preferences.about("ai_train") == (first, second)
    assert preferences.about("ai_use") == ()
