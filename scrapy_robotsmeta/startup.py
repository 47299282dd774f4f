"""What the package checks when a crawl starts, and how it refuses one: one ERROR line.

A setting the package refuses to crawl with (a reactor it cannot run on, a storage that cannot
be loaded, Scrapy's robots.txt middleware beside this one, a misspelt setting that would make
the crawl keep what it was meant to drop…) stops the crawl before its first request. Scrapy
has no way for a component to stop a crawl at start but an exception, which it then prints as
a traceback: Twisted's "Unhandled error in Deferred" (twice) or asyncio's "Task exception was
never retrieved". The cause is a setting, so the traceback says nothing the message does not:
the refusal is logged as one ERROR line naming the setting and the fix, and the traceback of
that exception is left out of the ``twisted`` and ``asyncio`` logs. ``scrapy crawl`` still
sees the exception, and exits with status 1.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn
from weakref import WeakSet

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as Builtin
from scrapy.settings import SETTINGS_PRIORITIES, default_settings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from scrapy_robotsmeta.defaults import DEFAULTS, PackageSettings
from scrapy_robotsmeta.usage.preferences import use_named
from scrapy_robotsmeta.usage.tdmrep import TDM_USES

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

logger = logging.getLogger(__name__)

PREFIXES = ("ROBOTSTXT_", "ROBOTSMETA_")
#: Settings whose absence makes a crawl fetch or keep what its user meant to refuse: a
#: misspelt one stops the crawl instead of a warning.
STRICT = frozenset(
    {
        "ROBOTSTXT_OBEY",
        "ROBOTSMETA_PURPOSE",
        "ROBOTSMETA_DROP_NOINDEX",
        "ROBOTSMETA_OBEY_REL_NOFOLLOW",
        "ROBOTSMETA_TDMREP",
    }
)
#: Set on an exception once its refusal was logged: its traceback is then left out.
_REPORTED = "robotsmeta_refusal_reported"
_BUILTIN_PATH = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


class ConfigurationError(RuntimeError):
    """A configuration the package does not crawl with. Not NotConfigured: that would turn a
    part off and let the crawl run without it, silently."""


def refuse(message: str) -> NoReturn:
    """Stop the crawl's start with one ERROR line: *message* names the setting and the fix."""
    error = ConfigurationError(message)
    _report(error)
    raise error


@contextmanager
def reported_refusals() -> Iterator[None]:
    """Report a storage's refusal raised inside as one ERROR line too."""
    from scrapy_robotsmeta.storage.redis import StorageConfigError  # noqa: PLC0415 (cycle)

    try:
        yield
    except StorageConfigError as exc:
        if not getattr(exc, _REPORTED, False):
            _report(exc)
        raise


def _report(error: Exception) -> None:
    logger.error("Crawl not started: %s", error)
    setattr(error, _REPORTED, True)
    for name in ("twisted", "asyncio"):
        target = logging.getLogger(name)
        if not any(isinstance(f, _LeaveOutReported) for f in target.filters):
            target.addFilter(_LeaveOutReported())


class _LeaveOutReported(logging.Filter):
    """Drops the records that print the traceback of a refusal already logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        # Twisted's own rendering of an unhandled Deferred carries the failure in its event.
        event = getattr(record.msg, "event", None)
        if error is None and isinstance(event, Mapping):
            error = getattr(event.get("log_failure"), "value", None)
        return not getattr(error, _REPORTED, False)


# -- the checks ------------------------------------------------------------------------------

#: Crawlers whose settings were checked: once per crawl, whichever component comes first.
_checked: WeakSet[Crawler] = WeakSet()


def check_settings(crawler: Crawler) -> None:
    """Warn of (or, for a :data:`STRICT` one, refuse) each ``ROBOTSTXT_``/``ROBOTSMETA_``
    setting neither the package nor Scrapy reads, and of ``ROBOTSTXT_PARSER``; once a crawl."""
    if crawler in _checked:
        return
    _checked.add(crawler)
    settings = crawler.settings
    unknown = {name: closest_name(name) for name in unknown_names(settings)}
    for name, closest in unknown.items():
        if closest in STRICT:
            refuse(
                f"{name} is not a setting, and a crawl without {closest} keeps what it was "
                f"meant to refuse: rename it {closest}"
            )
    for name, closest in unknown.items():
        logger.warning(
            "Unknown setting %s: neither scrapy-robotsmeta nor Scrapy reads it%s",
            name,
            f" (did you mean {closest}?)" if closest else "",
        )
    if (settings.getpriority("ROBOTSTXT_PARSER") or 0) > SETTINGS_PRIORITIES["default"]:
        logger.warning(
            "ROBOTSTXT_PARSER is set, but scrapy-robotsmeta does not use it: robots.txt is "
            "read by its own RFC 9309 parser whatever the setting says"
        )


def known_names() -> list[str]:
    """Every ``ROBOTSTXT_``/``ROBOTSMETA_`` name read: the package's, then Scrapy's."""
    scrapy_names = (name for name in dir(default_settings) if name.startswith(PREFIXES))
    return sorted({*DEFAULTS, *scrapy_names})


def unknown_names(settings: BaseSettings) -> list[str]:
    known = set(known_names())
    return sorted(n for n in settings if str(n).startswith(PREFIXES) and n not in known)


def closest_name(name: str) -> str | None:
    matches = difflib.get_close_matches(name, known_names(), n=1)
    return matches[0] if matches else None


def purposes(settings: BaseSettings) -> tuple[str, ...]:
    """The uses ROBOTSMETA_PURPOSE names, each once; one it does not know refuses the crawl."""
    try:
        names = PackageSettings(settings).getlist("ROBOTSMETA_PURPOSE")
        return tuple(dict.fromkeys(map(use_named, names)))
    except ValueError as exc:
        refuse(f"ROBOTSMETA_PURPOSE: {exc}")


def tdmrep_consulted(settings: BaseSettings) -> bool:
    """Whether the crawl consults TDMRep: as ROBOTSMETA_TDMREP says, or when it is None, when
    ROBOTSMETA_PURPOSE names a use a reservation speaks to (a purpose filter that ignored the
    reservation European publishers chose would not do what its user asked). Never when
    ROBOTSMETA_ENABLED is False: nothing would read it."""
    package = PackageSettings(settings)
    value = package.get("ROBOTSMETA_TDMREP")
    if not package.getbool("ROBOTSMETA_ENABLED"):
        return False  # the meta part reads it: without it, a fetched file would go unread
    if value is None or value == "":
        return any(use in TDM_USES for use in purposes(settings))
    try:
        return settings.getbool("ROBOTSMETA_TDMREP")
    except ValueError:
        refuse(
            f"ROBOTSMETA_TDMREP is {value!r}: set it to True, False, or None (consulted when "
            "ROBOTSMETA_PURPOSE names an AI use)"
        )


def check_start(crawler: Crawler) -> None:
    """Everything the package refuses to start with. The add-on checks it before Scrapy
    builds any component (Scrapy 2.13 turns an exception raised while it builds them into a
    second one of its own), RobotsTxtMiddleware again for a crawl enabled by hand."""
    check_settings(crawler)
    settings = crawler.settings
    if PackageSettings(settings).getbool("ROBOTSMETA_ENABLED"):
        purposes(settings)
    tdmrep_consulted(settings)
    if not settings.getbool("ROBOTSTXT_OBEY"):
        return
    if not settings.getbool("TWISTED_REACTOR_ENABLED", True):
        refuse(
            "scrapy_robotsmeta's RobotsTxtMiddleware needs the Twisted reactor (its timers and "
            "retries run on it): remove TWISTED_REACTOR_ENABLED = False"
        )
    _check_storage(settings.get("ROBOTSTXT_STORAGE", DEFAULTS["ROBOTSTXT_STORAGE"]))
    enabled = build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
    if any(_is_builtin(component) for component in enabled):
        refuse(
            "Scrapy's RobotsTxtMiddleware is enabled beside scrapy_robotsmeta's, and would "
            f'refuse requests of its own: add "{_BUILTIN_PATH}": None to '
            'DOWNLOADER_MIDDLEWARES (or enable the package with ADDONS = {"scrapy_robotsmeta.'
            'Addon": 0}, which does it)'
        )


def _check_storage(path: Any) -> None:
    from scrapy_robotsmeta.storage.base import Storage  # noqa: PLC0415 (cycle)

    try:
        storage = load_object(path)
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        storage, why = None, f"cannot be loaded ({exc})"
    else:
        why = "is not a storage class"
    if not (isinstance(storage, type) and issubclass(storage, Storage)):
        refuse(
            f"ROBOTSTXT_STORAGE = {path!r} {why}: write the import path of a storage class, "
            "scrapy_robotsmeta.storage.MemoryStorage or scrapy_robotsmeta.storage.RedisStorage"
        )


def _is_builtin(component: Any) -> bool:
    loaded = load_object(component) if isinstance(component, str) else component
    return isinstance(loaded, type) and issubclass(loaded, Builtin)


def component_entry(
    components: Mapping[Any, Any], cls: type, subclasses: bool = False
) -> tuple[Any, Any] | None:
    """The (key, priority) under which *cls* (or, if asked, a subclass) appears, whether keyed
    by class or by import path."""
    for key, priority in components.items():
        component = load_object(key) if isinstance(key, str) else key
        if component is cls or (
            subclasses and isinstance(component, type) and issubclass(component, cls)
        ):
            return key, priority
    return None
