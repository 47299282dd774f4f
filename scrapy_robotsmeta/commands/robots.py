"""``scrapy robots URL``: fetch one URL the way a crawl with scrapy-robotsmeta would, and say
why it was allowed or not and what the page says to robots."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.datatypes import SequenceExclude
from w3lib.url import is_url

from scrapy_robotsmeta.addon import Addon, component_entry
from scrapy_robotsmeta.commands.report import EXIT_ERROR, Check, Page, Report
from scrapy_robotsmeta.downloadermiddleware import RobotsTxtMiddleware
from scrapy_robotsmeta.pagemeta import header_values, meta_contents
from scrapy_robotsmeta.spidermiddleware import directives_for

if TYPE_CHECKING:
    from argparse import ArgumentParser, Namespace
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

    from scrapy_robotsmeta.directives import Directives

_CMDLINE = SETTINGS_PRIORITIES["cmdline"]

_NOT_ENABLED = (
    "scrapy_robotsmeta.RobotsTxtMiddleware is not enabled: these settings disable Scrapy's "
    "RobotsTxtMiddleware, so the add-on did not replace it"
)
_NO_WAIT = (
    "a crawl keeps retrying an unavailable robots.txt for ROBOTSTXT_UNAVAILABLE_TIMEOUT "
    "seconds before it drops the origin's requests; this command does not wait "
    "(-s ROBOTSTXT_UNAVAILABLE_TIMEOUT=N waits N s)"
)


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

    def failed(self, failure: Failure) -> None:
        # Scrapy sets the request on the failures it passes to an errback.
        self.request, self.failure = getattr(failure, "request", None), failure


class Command(ScrapyCommand):
    requires_project = False
    # The report is the output; -L INFO (or DEBUG) shows the crawl's log as well.
    default_settings = {"LOG_LEVEL": "ERROR"}  # noqa: RUF012 (ScrapyCommand declares it)

    def __init__(self) -> None:
        super().__init__()
        #: Whether the user's command line set ROBOTSTXT_UNAVAILABLE_TIMEOUT (see below).
        self.waits = False
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
            "X-Robots-Tag headers, robots metas and effective directives. Exit status: 0 "
            "allowed, 1 disallowed by robots.txt, 2 fetch error (robots.txt unavailable, page "
            "not downloaded)."
        )

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument(
            "--user-agent",
            metavar="UA",
            help="send this User-Agent and take the product token from it "
            "(overrides USER_AGENT and ROBOTSTXT_USER_AGENT)",
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def process_options(self, args: list[str], opts: Namespace) -> None:
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
        if opts.user_agent:
            settings.set("USER_AGENT", opts.user_agent, priority="cmdline")
            settings.set("ROBOTSTXT_USER_AGENT", None, priority="cmdline")
        # A question about one URL wants an answer now: a crawl waits out a robots.txt outage
        # for minutes, the command reports it at once, unless told on its command line.
        self.waits = (settings.getpriority("ROBOTSTXT_UNAVAILABLE_TIMEOUT") or 0) >= _CMDLINE
        if not self.waits:
            settings.set("ROBOTSTXT_UNAVAILABLE_TIMEOUT", 0, priority="cmdline")
        # Nothing the project exports is produced by this fetch: leave its feed files alone.
        settings.set("FEEDS", {}, priority="cmdline")
        self.notes = tuple(notes)

    def run(self, args: list[str], opts: Namespace) -> None:
        if len(args) != 1 or not is_url(args[0]):
            raise UsageError("give one http(s) URL", print_help=False)
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
            return Report(url, "", "", (), None, why, self.notes)
        token = middleware.token.for_request(request)
        # The URLs the fetch went through: the one asked for, then each redirect target.
        urls = [*request.meta.get("redirect_urls", ()), request.url]
        checks = tuple(Check.of(u, middleware.state_of(u), token) for u in urls)
        notes = self.notes
        if not self.waits and any(check.policy == "unavailable" for check in checks):
            notes += (_NO_WAIT,)
        page = None
        if response is not None:
            page = Page(
                response.url,
                response.status,
                tuple(header_values(response)),
                tuple(meta_contents(response, token)),
                spider.directives.to_dict() if spider.directives is not None else None,
            )
        error = failure.getErrorMessage() if failure is not None else None
        # A request refused by robots.txt never reached UserAgentMiddleware, which sets the
        # header from USER_AGENT (RobotsTxtMiddleware reads the setting the same way).
        header = request.headers.get(b"User-Agent")
        user_agent = header.decode("latin-1") if header else crawler.settings.get("USER_AGENT")
        return Report(url, user_agent or "", token, checks, page, error, notes)
