"""``scrapy robots URL``: fetch one URL the way a crawl with scrapy-robotsmeta would, and say
why it was allowed or not and what the page says to robots."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, Spider
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES, BaseSettings
from scrapy.utils.datatypes import SequenceExclude

from scrapy_robotsmeta.addon import Addon
from scrapy_robotsmeta.commands.report import EXIT_ERROR, Page, Report, TdmPage
from scrapy_robotsmeta.defaults import PackageSettings
from scrapy_robotsmeta.downloadermiddleware import RobotsTxtMiddleware
from scrapy_robotsmeta.keys import ROBOTSTXT_FETCH, TDMREP_FETCH, TDMREP_META_KEY
from scrapy_robotsmeta.robotsmeta.page import (
    header_values,
    meta_contents,
    named_metas,
    read_usage_headers,
    tdmrep_values,
)
from scrapy_robotsmeta.robotstxt.origin import Origin, origin_of
from scrapy_robotsmeta.robotstxt.policy import is_unavailable_status
from scrapy_robotsmeta.robotstxt.status import Status
from scrapy_robotsmeta.spidermiddleware import directives_for, usage_for
from scrapy_robotsmeta.startup import ConfigurationError, component_entry, tdmrep_consulted
from scrapy_robotsmeta.usage.tdmrep import META_NAMES, NOT_CONSULTED_READING, TdmReading

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from scrapy_robotsmeta.robotsmeta.directives import Directives
    from scrapy_robotsmeta.usage.preferences import Preferences

_PROJECT = SETTINGS_PRIORITIES["project"]

_NOT_ENABLED = (
    "scrapy_robotsmeta.RobotsTxtMiddleware is not enabled: these settings disable Scrapy's "
    "RobotsTxtMiddleware, so the add-on did not replace it"
)
#: How long the command retries an unavailable robots.txt unless told (--robots-timeout).
DEFAULT_ROBOTS_TIMEOUT = 60.0
_RETRY_SETTINGS = ("ROBOTSTXT_RETRY_DELAY", "ROBOTSTXT_RETRY_MAX_DELAY")


def _seconds(value: str) -> float:
    seconds = float(value)
    if not seconds > 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {value}")
    return seconds


def _uncheckable(url: str) -> str | None:
    """Why robots.txt cannot be checked for *url*, or None when it can."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for an invalid port)
        Request(url)  # what the crawl will do with it, and Scrapy's own checks
    except ValueError as exc:
        return f"not a valid URL: {url} ({exc})"
    if parts.scheme.lower() not in ("http", "https"):
        return f"not an http(s) URL: {url}"
    if not parts.hostname or origin_of(url) is None:
        return f"no valid host in {url}"
    return None


class _Probe(Spider):
    """Requests one URL, follows its redirects as any crawl does, and keeps what came back."""

    name = "robots"

    def __init__(self, url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.url = url
        #: The last request of the fetch (a redirect target, if any), whatever its fate.
        self.request: Request | None = None
        self.response: Response | None = None
        self.directives: Directives | None = None
        self.usage: Preferences | None = None
        self.failure: Failure | None = None

    async def start(self) -> AsyncIterator[Request]:
        yield Request(
            self.url,
            callback=self.parse,
            errback=self.failed,
            dont_filter=True,
            # Any status is an answer worth reporting; 3xx still redirect, as in a crawl.
            meta={"handle_httpstatus_list": SequenceExclude(range(300, 400))},
        )

    def parse(self, response: Response, **kwargs: Any) -> None:
        self.request, self.response = response.request, response
        self.directives = directives_for(response)
        self.usage = usage_for(response)

    def failed(self, failure: Failure) -> None:
        # Scrapy sets the request on the failures it passes to an errback.
        self.request, self.failure = getattr(failure, "request", None), failure


class Command(ScrapyCommand):
    requires_project = False
    # The report is the output; -L INFO (or DEBUG) shows the crawl's log as well.
    default_settings = {"LOG_LEVEL": "ERROR"}  # noqa: RUF012 (ScrapyCommand declares it)

    def __init__(self) -> None:
        super().__init__()
        #: How long robots.txt is retried here, and in a crawl with these settings.
        self.robots_timeout = DEFAULT_ROBOTS_TIMEOUT
        self.crawl_robots_timeout = DEFAULT_ROBOTS_TIMEOUT
        self.notes: tuple[str, ...] = ()

    def syntax(self) -> str:
        return "[options] <url>"

    def short_desc(self) -> str:
        return "Explain what scrapy-robotsmeta decides for a URL"

    def long_desc(self) -> str:
        return (
            "Fetch a URL as a crawl with scrapy-robotsmeta would (robots.txt first, redirects "
            "followed) and print the origin, the robots.txt fetch and the policy that applied, "
            "the product token, the group and the rule that decided, then the page's "
            "X-Robots-Tag headers, robots metas and effective directives, and the usage "
            "preferences (search, AI input, AI training) with where each was read. Each try of "
            "robots.txt waits up to DOWNLOAD_TIMEOUT; an unavailable robots.txt (5xx, 429, "
            "network error) is retried for up to --robots-timeout seconds, every try "
            "reported. Exit status: 0 allowed, 1 disallowed by robots.txt, 2 fetch error "
            "(robots.txt unavailable, page not downloaded) or a URL that cannot be checked."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--user-agent",
            metavar="UA",
            help="send this User-Agent and take the product token from it "
            "(overrides USER_AGENT and ROBOTSTXT_USER_AGENT)",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--robots-timeout",
            metavar="SECONDS",
            type=_seconds,
            help="retry an unavailable robots.txt for up to this long before reporting it "
            f"unavailable (default: {DEFAULT_ROBOTS_TIMEOUT:g}, or "
            "-s ROBOTSTXT_UNAVAILABLE_TIMEOUT=N)",
        )

    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        settings = self.settings
        assert settings is not None
        notes = []
        if not settings.getbool("ROBOTSTXT_OBEY") and settings.getpriority("ROBOTSTXT_OBEY"):
            notes.append("ROBOTSTXT_OBEY is False here: a crawl would not check robots.txt")
        # The command explains the package's decision, whatever the project does by default.
        settings.set("ROBOTSTXT_OBEY", True, priority="cmdline")
        if component_entry(settings["ADDONS"], Addon) is None:
            settings["ADDONS"].set(Addon, 0, priority="cmdline")
        notes += _consult_tdmrep(settings)
        if opts.user_agent:
            settings.set("USER_AGENT", opts.user_agent, priority="cmdline")
            settings.set("ROBOTSTXT_USER_AGENT", None, priority="cmdline")
        self._set_robots_timeout(opts.robots_timeout)
        # Nothing the project exports is produced by this fetch: leave its feed files alone.
        settings.set("FEEDS", {}, priority="cmdline")
        self.notes = tuple(notes)

    def _set_robots_timeout(self, option: float | None) -> None:
        """A question about one URL wants an answer within a minute, where a crawl waits out
        a robots.txt outage for ten by default: the command's limit is its option, else the
        ROBOTSTXT_UNAVAILABLE_TIMEOUT the project (or the command line) sets, else a minute.
        Each try still gets up to DOWNLOAD_TIMEOUT within it: a slow robots.txt is not an
        unavailable one."""
        settings = self.settings
        assert settings is not None
        name = "ROBOTSTXT_UNAVAILABLE_TIMEOUT"
        self.crawl_robots_timeout = PackageSettings(settings).getfloat(name)
        if option is not None:
            self.robots_timeout = option
        elif _set_by_user(settings, name):
            self.robots_timeout = self.crawl_robots_timeout
        settings.set(name, self.robots_timeout, priority="cmdline")
        # The package's default retry delays (doubling up to a minute) would leave few retries
        # in the command's limit: shorter ones show whether the outage ends within it. Delays
        # the project sets are its crawl's, and kept.
        delays = (min(1.0, self.robots_timeout / 10), min(10.0, self.robots_timeout / 4))
        for setting, delay in zip(_RETRY_SETTINGS, delays, strict=True):
            if not _set_by_user(settings, setting):
                shorter = min(delay, PackageSettings(settings).getfloat(setting))
                settings.set(setting, shorter, priority="cmdline")
        settings["DOWNLOADER_MIDDLEWARES"].set(RetryNotice, 999, priority="cmdline")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one http(s) URL", print_help=False)
        why = _uncheckable(args[0])
        if why is not None:
            # One line, no usage text nor traceback: the URL is the only thing wrong.
            print(f"scrapy robots: error: {why}", file=sys.stderr)
            self.exitcode = EXIT_ERROR
            return
        assert self.crawler_process is not None
        crawler = self.crawler_process.create_crawler(_Probe)
        self.crawler_process.crawl(crawler, url=args[0])
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = EXIT_ERROR  # the crawl did not start; Scrapy logged why
            return
        report = self._report(args[0], crawler)
        print(report.as_json() if opts.json else report.as_text())
        self.exitcode = report.exit_status

    def _report(self, url: str, crawler: Crawler) -> Report:
        spider = crawler.spider
        assert isinstance(spider, _Probe)
        middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
        request, response, failure = spider.request, spider.response, spider.failure
        if middleware is None or request is None:
            why = _NOT_ENABLED if middleware is None else "no answer came; see the log (-L INFO)"
            return Report(url, "", "", "", (), None, why, self.notes)
        token = middleware.token.for_request(request)
        # Page-level rules address the crawler by its name as written (archive.org_bot), not
        # by its robots.txt token (archive), which names another crawler.
        name = middleware.token.name_for_request(request)
        # The URLs the fetch went through: the one asked for, then each redirect target.
        urls = [*request.meta.get("redirect_urls", ()), request.url]
        checks = tuple(middleware.explain(u, request) for u in urls)
        notes = self.notes
        if any(check.policy is Status.UNAVAILABLE for check in checks):
            notes += (self._unavailable_note(),)
        page = None
        if response is not None:
            page = Page(
                response.url,
                response.status,
                tuple(header_values(response)),
                tuple(meta_contents(response, name)),
                spider.directives.to_dict() if spider.directives is not None else None,
                spider.usage,
                read_usage_headers(response).ignored,
                _tdm_page(middleware, response, spider.usage),
            )
        error = failure.getErrorMessage() if failure is not None else None
        user_agent = middleware.token.header(request)
        return Report(url, user_agent, token, name, checks, page, error, notes)

    def _unavailable_note(self) -> str:
        note = f"robots.txt was retried here for up to {self.robots_timeout:g} s"
        if self.robots_timeout < self.crawl_robots_timeout:
            note += (
                "; a crawl retries it for ROBOTSTXT_UNAVAILABLE_TIMEOUT "
                f"({self.crawl_robots_timeout:g} s) before it drops the origin's requests "
                "(--robots-timeout N waits N s here)"
            )
        return note


def _consult_tdmrep(settings: BaseSettings) -> list[str]:
    """The command reads TDMRep unless told not to (ROBOTSMETA_TDMREP): the note that a crawl
    with these settings would not, if so."""
    if _set_by_user(settings, "ROBOTSMETA_TDMREP"):
        return []
    try:
        consulted = tdmrep_consulted(settings)
    except ConfigurationError:
        return []  # the crawl refuses to start, saying why
    settings.set("ROBOTSMETA_TDMREP", True, priority="cmdline")
    if consulted:
        return []
    return [
        "TDMRep is read here; a crawl with these settings does not consult it (it does with "
        "ROBOTSMETA_TDMREP = True, or a ROBOTSMETA_PURPOSE naming an AI use)"
    ]


def _tdm_page(
    middleware: RobotsTxtMiddleware, response: Response, usage: Preferences | None
) -> TdmPage | None:
    """What TDMRep said of *response*, by source; None when it was not consulted."""
    if usage is None or usage.tdmrep is None:
        return None
    request = response.request
    recorded = request.meta.get(TDMREP_META_KEY) if request is not None else None
    file = recorded if isinstance(recorded, TdmReading) else NOT_CONSULTED_READING
    origin = origin_of(response.url)
    state = middleware.core.peek(origin) if origin is not None else None
    reason = state.tdmrep.reason if state is not None and state.tdmrep is not None else ""
    headers, metas = tdmrep_values(response, named_metas(response, META_NAMES))
    return TdmPage(file, reason, headers, metas, usage.tdmrep)


def _set_by_user(settings: BaseSettings, name: str) -> bool:
    """Whether the project, a spider or the command line set *name*."""
    return (settings.getpriority(name) or 0) >= _PROJECT


class RetryNotice:
    """Says on stderr, at an origin's first unavailable robots.txt answer, that the command
    retries it and until when: a command that waits in silence looks hung."""

    def __init__(self, crawler: Crawler) -> None:
        self.timeout = PackageSettings(crawler.settings).getfloat("ROBOTSTXT_UNAVAILABLE_TIMEOUT")
        self.noticed: set[Origin] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RetryNotice:
        return cls(crawler)

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        if is_unavailable_status(response.status):
            self._notice(request, f"HTTP {response.status}")
        return response

    def process_exception(
        self, request: Request, exception: Exception, spider: Any = None
    ) -> None:
        self._notice(request, type(exception).__name__)

    def _notice(self, request: Request, answer: str) -> None:
        origin = origin_of(request.url)
        if not request.meta.get(ROBOTSTXT_FETCH) or origin is None or origin in self.noticed:
            return
        if request.meta.get(TDMREP_FETCH):
            return  # an unreadable tdmrep.json is not retried: no wait to announce
        self.noticed.add(origin)
        until = time.strftime("%H:%M:%S", time.localtime(time.time() + self.timeout))
        print(
            f"scrapy robots: robots.txt of {origin} unavailable ({answer}); retrying until "
            f"{until} ({self.timeout:g} s: --robots-timeout, or ROBOTSTXT_UNAVAILABLE_TIMEOUT)",
            file=sys.stderr,
        )
