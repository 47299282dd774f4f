"""An origin's record (``robotstxt/record.py``): the bytes the cache keeps of an origin it is
not using, in memory and on disk, which give back the same state and the same verdicts."""

from __future__ import annotations

import dataclasses
import struct
import zlib
from collections.abc import Iterator
from dataclasses import replace

import pytest

from scrapy_robotsmeta.robotstxt import RobotsTxt
from scrapy_robotsmeta.robotstxt._parser import parse_file
from scrapy_robotsmeta.robotstxt.origin import Origin
from scrapy_robotsmeta.robotstxt.policy import (
    ALLOW_ALL_RULES,
    Fetch,
    Outcome,
    allow_all,
    from_response,
    unavailable,
)
from scrapy_robotsmeta.robotstxt.record import DamagedRecord, pack, unpack
from scrapy_robotsmeta.robotstxt.state import (
    SNAPSHOT_FIELDS,
    SNAPSHOT_VERSION,
    Decision,
    OriginState,
    Timing,
)
from scrapy_robotsmeta.usage.tdmrep import parse_file as parse_tdmrep
from tests.shared import CORPUS

ORIGIN = Origin("https", "example.com", 443)
TIMING = Timing()


def fetched(outcome: Outcome) -> OriginState:
    state = OriginState(ORIGIN)
    state.start_fetch(0.0, TIMING)
    state.apply(outcome, 0.0, TIMING)
    return state


def checked_then_read_back(body: bytes, token: str) -> tuple[OriginState, RobotsTxt]:
    """The state of a fetched *body* whose group for *token* a check selected, packed and
    unpacked, with its rules."""
    state = fetched(from_response(200, body))
    assert state.rules is not None
    state.rules.allowed("https://example.com/", token)
    back = unpack(ORIGIN, pack(state))
    assert back is not None
    assert back.rules is not None
    return back, back.rules


def test_rules_come_back_as_written_with_their_line_numbers() -> None:
    state = fetched(from_response(200, b"User-agent: *\nAllow: /a\nDisallow: /\n"))
    back = unpack(ORIGIN, pack(state))
    assert back is not None
    assert back.snapshot() == state.snapshot()
    assert back.decide(1.0) is Decision.RULES
    assert str(back.explain("https://example.com/x", "bot")) == "Disallow: / (line 3, group *)"
    assert back.explain("https://example.com/a", "bot").allowed


def test_every_group_comes_back_not_only_the_one_a_crawler_used() -> None:
    """RFC 9309 §2.2.1: the token decides the group, per request; a record keeps them all."""
    body = b"User-agent: a\nDisallow: /mine\n\nUser-agent: *\nDisallow: /all\n"
    _, rules = checked_then_read_back(body, "a")  # group a selected, the other not
    assert not rules.allowed("https://example.com/mine", "a")
    assert rules.allowed("https://example.com/all", "a")
    assert not rules.allowed("https://example.com/all", "other")


def test_a_selected_group_is_packed_compiled() -> None:
    """A group its first check only scanned (see SCANS) is compiled when packed: reading it
    back leaves nothing to do before a check, which answers as before."""
    state = fetched(from_response(200, b"User-agent: *\nDisallow: /x\n"))
    assert state.rules is not None
    assert state.rules.allowed("https://example.com/", "bot")
    live = state.rules._group("bot")
    assert live is not None
    assert not live.compiled
    back = unpack(ORIGIN, pack(state))
    assert back is not None
    assert back.rules is not None
    group = back.rules._group("bot")
    assert group is not None
    assert group.compiled  # the compiled table came back with it
    assert not back.rules.allowed("https://example.com/x", "bot")
    assert str(back.rules.explain("https://example.com/x/1", "bot")) == (
        "Disallow: /x (line 2, group *)"
    )


def test_a_group_is_built_from_its_record_only_when_a_check_selects_it() -> None:
    """RFC 9309 §2.2.1: a check reads the one group its token selects; the others stay in the
    record's pickled rest, unread, and are packed again as they were."""
    body = b"User-agent: a\nDisallow: /mine\n\nUser-agent: b\nUser-agent: c\nDisallow: /theirs\n"
    back, rules = checked_then_read_back(body, "a")
    assert not rules.allowed("https://example.com/mine", "a")
    assert [type(group).__name__ for group in rules._groups] == ["Group", "NoneType"]
    again = unpack(ORIGIN, pack(back))
    assert again is not None
    assert again.rules is not None
    assert again.rules.selected == 1
    assert not again.rules.allowed("https://example.com/theirs", "c")
    assert again.rules.selected == 2  # b and c share their group


def test_sitemaps_and_unselected_groups_come_back_when_asked_for() -> None:
    """RFC 9309 §2.2.4: Sitemap lines belong to no group; a record keeps them with the groups
    no check selected, and gives them back, with those groups' crawl delays, once asked."""
    body = (
        b"Sitemap: https://example.com/a.xml\nUser-agent: *\nDisallow: /x\n\n"
        b"User-agent: slow\nCrawl-delay: 5\nDisallow: /y\nSitemap: https://example.com/b.xml\n"
    )
    back, rules = checked_then_read_back(body, "bot")
    assert rules.sitemaps == ["https://example.com/a.xml", "https://example.com/b.xml"]
    assert rules.crawl_delay("slow") == 5
    why = back.explain("https://example.com/y", "slow")
    assert str(why) == "Disallow: /y (line 7, group slow)"


def test_the_largest_crawl_delay_comes_back_selected_or_not() -> None:
    """The largest Crawl-delay of a group and of the groups merged with it (RFC 9309 §2.2.1)
    comes back from a record, for the group a check selected and for those pickled apart."""
    body = (
        b"User-agent: bot\nCrawl-delay: 1\nUser-agent: other\nCrawl-delay: 12\nDisallow: /x\n\n"
        b"User-agent: slow\nCrawl-delay: 20\n\nUser-agent: slow\nCrawl-delay: 3\n"
    )
    _, rules = checked_then_read_back(body, "bot")
    assert rules.selected == 1
    assert (rules.crawl_delay("bot"), rules.crawl_delay("other")) == (12.0, 12.0)
    assert rules.crawl_delay("slow") == 20.0
    assert RobotsTxt.from_plain(rules.to_plain()).crawl_delay("slow") == 20.0


def test_a_record_with_every_group_selected_and_no_sitemap_has_no_rest() -> None:
    _, rules = checked_then_read_back(b"User-agent: *\nDisallow: /x\n", "bot")
    _, _, rest, _, _ = rules.to_plain()
    assert rest is None
    assert rules.sitemaps == []
    assert rules.selected == 1


def test_explaining_a_group_of_a_record_counts_it_selected() -> None:
    """A cache packs an origin again when a check selected a group its record lacked; an
    explanation (``scrapy robots``, a refusal's log line) selects one as a check does."""
    body = b"User-agent: *\nDisallow: /x\n\nUser-agent: other\nDisallow: /y\n"
    back, rules = checked_then_read_back(body, "bot")
    assert rules.selected == 1
    assert not back.explain("https://example.com/y", "other").allowed
    assert rules.selected == 2
    assert rules.crawl_delay("other") is None
    assert rules.selected == 2


def test_allow_all_comes_back_as_the_shared_rules() -> None:
    back = unpack(ORIGIN, pack(fetched(allow_all("HTTP 404"))))
    assert back is not None
    assert back.rules is ALLOW_ALL_RULES


def test_a_given_up_origin_comes_back_given_up() -> None:
    """RFC 9309 §2.3.1.4: the give-up lasts its lifetime, wherever the state is kept."""
    state = fetched(unavailable("HTTP 503"))
    state.give_up(600.0, TIMING)
    back = unpack(ORIGIN, pack(state))
    assert back is not None
    assert back.decide(601.0) is Decision.DROP


def test_a_record_is_a_fraction_of_the_file_it_holds() -> None:
    body = b"User-agent: *\n" + b"".join(b"Disallow: /private/%d/\n" % i for i in range(200))
    record = pack(fetched(from_response(200, body)))
    assert len(record) < len(body) / 3


def test_a_record_of_another_version_is_not_read() -> None:
    """Another snapshot version, another shape of the record's bytes, or a record of the
    release before records had a shape of their own (its snapshot version alone)."""
    record = pack(fetched(from_response(200, b"User-agent: *\nDisallow: /x\n")))
    assert unpack(ORIGIN, record) is not None
    for first in (record[0] - 16, record[0] - 1, SNAPSHOT_VERSION):
        assert unpack(ORIGIN, bytes([first]) + record[1:]) is None


def test_an_unreadable_record_is_damaged() -> None:
    """Bytes that pass their checksum but are no record this package wrote, and a record cut
    short."""
    record = pack(fetched(allow_all("HTTP 404")))
    payload = zlib.compress(b"not a pickle")
    forged = record[:1] + struct.pack(">I", zlib.crc32(payload)) + payload
    for damaged in (forged, record[:-5], record[:3]):
        with pytest.raises(DamagedRecord):
            unpack(ORIGIN, damaged)


# Files of several groups, with sitemaps, crawl delays and usage lines among them.
CORPUS_FILES = ("www.python.org", "twitter.com", "stackoverflow.com", "www.bbc.co.uk")
SYNTHETIC = (
    b"Sitemap: https://example.com/map.xml\nUser-agent: *\nDisallow: /private\n"
    b"Allow: /private/open\nContent-Signal: search=yes, ai-train=no\n\n"
    b"User-agent: slow\nUser-agent: other\nCrawl-delay: 7\nDisallow: /*.pdf$\n"
    b"Disallow: /tmp/\n\nUser-agent: slow\nAllow: /tmp/keep\n"
    + b"".join(b"Disallow: /section-%d/\n" % i for i in range(40))
)


def verdicts(state: OriginState, body: bytes, tokens: tuple[str, ...]) -> list[object]:
    """What a crawl asks of an origin, for every group: each check reads the group its token
    selects (the part of a record pickled apart included) and the sitemaps."""
    rules = state.rules
    assert rules is not None
    paths = ["/", "/x.pdf", *(path for _, path, _ in parse_file(body).groups[0].rules[:30])]
    answers: list[object] = [state.snapshot(), rules.sitemaps]
    for token in tokens:
        answers.append(rules.crawl_delay(token))
        for path in paths:
            url = "https://example.com" + path
            answers += [str(state.explain(url, token)), rules.usage(url, token)]
    return answers


def damaged_copies(record: bytes) -> Iterator[bytes]:
    """*record* with one byte changed, for every byte: each bit flipped, in turn."""
    for at in range(len(record)):
        changed = bytearray(record)
        changed[at] ^= 1 << (at % 8)
        yield bytes(changed)


def bodies() -> list[bytes]:
    found = [CORPUS / name for name in CORPUS_FILES if (CORPUS / name).is_file()]
    return [SYNTHETIC, *(path.read_bytes() for path in found)]


@pytest.mark.parametrize("body", bodies(), ids=lambda body: str(len(body)))
def test_a_damaged_byte_costs_a_fetch_never_another_verdict(body: bytes) -> None:
    """Whatever byte of a record a disk damages, reading it back gives the verdicts the file
    gives (RFC 9309 §2.2.2) or none at all (its origin unknown, fetched again): never other
    ones, and never an exception from a check."""
    state = fetched(from_response(200, body))
    assert state.rules is not None
    state.rules.allowed("https://example.com/", "bot")  # a crawl's first check: one selected
    tokens = (
        *dict.fromkeys(token for group in parse_file(body).groups for token in group.agents),
        "bot",
    )
    record = pack(state)
    expected = verdicts(unpack(ORIGIN, record) or state, body, tokens)
    for damaged in damaged_copies(record):
        try:
            back = unpack(ORIGIN, damaged)
        except DamagedRecord:
            continue
        if back is not None:
            assert verdicts(back, body, tokens) == expected


def test_the_snapshot_fields_are_the_snapshot_keys_in_order() -> None:
    """A record keeps the snapshot's values alone, read back by these keys."""
    assert tuple(OriginState(ORIGIN).snapshot()) == SNAPSHOT_FIELDS


def test_a_record_keeps_the_fetch_in_force() -> None:
    """A state read back from memory or the disk tier carries the evidence of the fetch whose
    rules it holds."""
    outcome = from_response(200, b"User-agent: *\nDisallow: /x\n")
    fetch = Fetch(1.7e9, "https://example.com/robots.txt", 200, "cd" * 32)
    state = fetched(dataclasses.replace(outcome, fetched=fetch))
    back = unpack(ORIGIN, pack(state))
    assert back is not None
    assert back.fetched == fetch
    assert back.snapshot() == state.snapshot()


def test_a_record_of_the_version_before_evidence_is_not_read() -> None:
    """Records written before the snapshot kept the fetch in force are fetched again."""
    record = bytearray(pack(fetched(allow_all("HTTP 404"))))
    record[0] = 4 << 4 | record[0] & 0x0F
    assert unpack(ORIGIN, bytes(record)) is None


def test_an_origins_tdmrep_file_comes_back_from_its_record() -> None:
    """The cache's records (memory, disk tier, JOBDIR) keep the tdmrep.json fetched with
    robots.txt: an origin read back is not fetched again for it."""
    tdm_file = parse_tdmrep(b'[{"location": "/*.pdf$", "tdm-reservation": 1}]')
    state = fetched(replace(from_response(200, b"User-agent: *\nAllow: /\n"), tdmrep=tdm_file))
    back = unpack(ORIGIN, pack(state))
    assert back is not None
    assert back.tdmrep is not None
    assert back.tdmrep.rule_for("https://example.com/a.pdf") == tdm_file.rules[0]
    assert back.tdmrep.rule_for("https://example.com/a.pdf.html") is None
    plain = unpack(ORIGIN, pack(fetched(allow_all("HTTP 404"))))
    assert plain is not None
    assert plain.tdmrep is None
