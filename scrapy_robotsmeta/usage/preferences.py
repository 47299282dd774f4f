"""Usage preferences as statements, each with where it was read, and how they combine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy_robotsmeta.usage.tdmrep import TdmReading

#: The uses a site can state a preference about, as the keys of an item's ``robots`` field.
#: Cloudflare's three signals, the IETF vocabulary's ``ai-use`` (which has no Cloudflare twin)
#: and the images of a page (``noimageai``).
USES = ("search", "ai_input", "ai_train", "ai_use", "ai_train_images")
#: The keys of the item field a TDMRep reading fills (see TdmReading.to_dict), as they are
#: when TDMRep was not consulted.
TDMREP_NOT_CONSULTED: dict[str, Any] = {
    "tdm_reservation": None,
    "tdm_policy": None,
    "tdm_file": "not_consulted",
}


@dataclass(frozen=True, slots=True)
class Statement:
    """One source's preference about one use: ``ai_train`` refused by robots.txt line 3."""

    use: str
    allowed: bool
    #: Where it was read: ``robots.txt line 3: Content-Signal: search=yes, ai-train=no``,
    #: ``header Content-Usage: train-ai=n``, ``meta robots: noai``.
    source: str

    def __str__(self) -> str:
        return f"{self.use}={'yes' if self.allowed else 'no'} ({self.source})"


@dataclass(frozen=True, slots=True)
class Preferences:
    """Every statement that applies to one response, from all its sources."""

    statements: tuple[Statement, ...] = ()
    #: What TDMRep says of the response (its statements are among the others); None when it
    #: was not consulted.
    tdmrep: TdmReading | None = None

    def __add__(self, other: Preferences) -> Preferences:
        # A page's sources mostly state nothing: no new object for those.
        if not other.statements and other.tdmrep is None:
            return self
        if not self.statements and self.tdmrep is None:
            return other
        tdmrep = self.tdmrep if other.tdmrep is None else other.tdmrep
        return Preferences(self.statements + other.statements, tdmrep)

    def about(self, use: str) -> tuple[Statement, ...]:
        """The statements about *use*, in the order they were read."""
        return tuple(s for s in self.statements if s.use == use)

    def allows(self, use: str) -> bool | None:
        """The combined preference about *use*: False when any source refuses it, else True
        when any allows it, else None (no preference), as draft-ietf-aipref-vocab-08 §5.1
        combines statements: the most restrictive applies."""
        return self._combined().get(use)

    def _combined(self) -> dict[str, bool | None]:
        """:meth:`allows` of every use, in one pass over the statements."""
        combined: dict[str, bool | None] = dict.fromkeys(USES)
        for statement in self.statements:
            if combined.get(statement.use, False) is not False:
                combined[statement.use] = statement.allowed
        return combined

    def refusal(self, use: str) -> Statement | None:
        """The first statement that refuses *use*, None when none does."""
        return next((s for s in self.statements if s.use == use and not s.allowed), None)

    def to_dict(self) -> dict[str, Any]:
        """Use → True, False or None, then the TDMRep keys, for the item field (every key,
        always)."""
        values: dict[str, Any] = self._combined()
        values.update(TDMREP_NOT_CONSULTED if self.tdmrep is None else self.tdmrep.to_dict())
        return values


NO_PREFERENCES = Preferences()

# A source quotes the value it read; a hostile one (a header of a megabyte) is cut, for the
# log lines and reports that show it.
_SHOWN_CHARACTERS = 200


def shown(value: str) -> str:
    """*value* as a source quotes it: whole, or cut with an ellipsis when very long."""
    if len(value) <= _SHOWN_CHARACTERS:
        return value
    return value[:_SHOWN_CHARACTERS] + "…"


def use_named(name: str) -> str:
    """The use a purpose names, written as an item key (``ai_train``) or as the signals write
    it (``ai-train``); ValueError for any other name."""
    use = name.strip().lower().replace("-", "_")
    if use not in USES:
        raise ValueError(f"unknown use {name!r}: expected one of {', '.join(USES)}")
    return use
