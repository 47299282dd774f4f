"""Feed exports of real crawls in every built-in format (``exporters.py``): the robots field
readable in each, CSV with one column per directive, XML without "None" text."""

from __future__ import annotations

import asyncio
import csv
import json
import marshal
import os
import pickle
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from scrapy import Request, Spider
from scrapy.exporters import CsvItemExporter as ScrapyCsvItemExporter
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.misc import load_object

from scrapy_robotsmeta.exporters import ROBOTS_FIELD_KEYS, CsvItemExporter, XmlItemExporter
from scrapy_robotsmeta.testing import Site, html, links_page, static
from tests.crawl import crawl

ROBOTS_COLUMNS = [f"robots.{key}" for key in ROBOTS_FIELD_KEYS]


def demo_site(site: Site) -> list[str]:
    """Pages whose directives differ in every way a cell can: bools, null and set integers,
    strings, a date."""
    site.add(
        {
            "/robots.txt": static("User-agent: *\nDisallow: /private\n"),
            "/": links_page("/plain", "/snippet", "/event", head="<title>Home</title>"),
            "/plain": html("<title>Plain</title>"),
            "/snippet": html(
                '<title>Snippet</title><meta name="robots" content="max-snippet:0, noindex">'
            ),
            "/event": html(
                "<title>Event</title>",
                headers={"X-Robots-Tag": "unavailable_after: 2026-12-31T23:59:59Z"},
            ),
        }
    )
    return [site.url("/")]


async def export(site: Site, tmp_path: Path, format_: str, **settings: Any) -> Path:
    path = tmp_path / f"items.{format_}"
    feed = {"format": format_, **settings.pop("feed_options", {})}
    await crawl(demo_site(site), settings={"FEEDS": {str(path): feed}, **settings})
    return path


def csv_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8", newline="") as lines:
        reader = csv.DictReader(lines)
        return list(reader.fieldnames or []), list(reader)


def by_path(site: Site, rows: list[dict[str, str]], url_column: str = "url") -> dict[str, Any]:
    return {row[url_column].removeprefix(site.origin): row for row in rows}


@deferred_f_from_coro_f
async def test_csv_has_one_column_per_directive(site: Site, tmp_path: Path) -> None:
    header, rows = csv_rows(await export(site, tmp_path, "csv"))
    assert header == ["url", *ROBOTS_COLUMNS]
    assert all(None not in row and len(row) == len(header) for row in rows)
    pages = by_path(site, rows)
    assert set(pages) == {"/", "/plain", "/snippet", "/event"}
    assert pages["/plain"]["robots.index"] == "True"
    assert pages["/plain"]["robots.max_snippet"] == ""
    assert pages["/plain"]["robots.max_image_preview"] == "large"
    snippet = pages["/snippet"]
    assert (snippet["robots.index"], snippet["robots.snippet"]) == ("False", "False")
    assert snippet["robots.max_snippet"] == "0"
    assert pages["/event"]["robots.unavailable_after"] == "2026-12-31T23:59:59+00:00"
    assert not any("{" in cell for row in rows for cell in row.values())


@deferred_f_from_coro_f
async def test_csv_feed_export_fields_listing_robots_gives_its_columns(
    site: Site, tmp_path: Path
) -> None:
    header, rows = csv_rows(
        await export(site, tmp_path, "csv", FEED_EXPORT_FIELDS=["robots", "url", "missing"])
    )
    assert header == [*ROBOTS_COLUMNS, "url", "missing"]
    assert by_path(site, rows)["/snippet"]["robots.max_snippet"] == "0"


@deferred_f_from_coro_f
async def test_csv_feed_export_fields_renaming_robots_renames_its_columns(
    site: Site, tmp_path: Path
) -> None:
    fields = {"url": "URL", "robots": "Robots"}
    header, rows = csv_rows(await export(site, tmp_path, "csv", FEED_EXPORT_FIELDS=fields))
    assert header == ["URL", *(f"Robots.{key}" for key in ROBOTS_FIELD_KEYS)]
    assert by_path(site, rows, "URL")["/snippet"]["Robots.index"] == "False"


@deferred_f_from_coro_f
async def test_csv_feed_export_fields_without_robots_has_no_robots_column(
    site: Site, tmp_path: Path
) -> None:
    header, _ = csv_rows(await export(site, tmp_path, "csv", FEED_EXPORT_FIELDS=["url"]))
    assert header == ["url"]


@deferred_f_from_coro_f
async def test_csv_without_header_line_has_the_same_columns_in_every_row(
    site: Site, tmp_path: Path
) -> None:
    path = await export(
        site,
        tmp_path,
        "csv",
        feed_options={"item_export_kwargs": {"include_headers_line": False}},
    )
    with path.open(encoding="utf-8", newline="") as lines:
        rows = list(csv.reader(lines))
    assert len(rows) == 4
    assert {len(row) for row in rows} == {1 + len(ROBOTS_FIELD_KEYS)}


@deferred_f_from_coro_f
async def test_xml_writes_no_none_text(site: Site, tmp_path: Path) -> None:
    path = await export(site, tmp_path, "xml")
    items = ElementTree.parse(path).getroot().findall("item")
    assert len(items) == 4
    assert all(element.text != "None" for element in ElementTree.parse(path).iter())
    plain = next(item for item in items if item.findtext("url", "").endswith("/plain"))
    robots = plain.find("robots")
    assert robots is not None
    assert [child.tag for child in robots] == list(ROBOTS_FIELD_KEYS)
    assert robots.findtext("max_snippet") == ""
    assert robots.findtext("index") == "True"


@pytest.mark.parametrize("format_", ["json", "jsonlines"])
@deferred_f_from_coro_f
async def test_json_formats_keep_the_field_as_an_object(
    site: Site, tmp_path: Path, format_: str
) -> None:
    text = (await export(site, tmp_path, format_)).read_text("utf-8")
    items = json.loads(text) if format_ == "json" else [json.loads(x) for x in text.splitlines()]
    assert len(items) == 4
    assert all(list(item["robots"]) == list(ROBOTS_FIELD_KEYS) for item in items)
    assert {item["robots"]["max_snippet"] for item in items} == {None, 0}


@deferred_f_from_coro_f
async def test_pickle_and_marshal_keep_the_field(site: Site, tmp_path: Path) -> None:
    for format_, load in (("pickle", pickle.load), ("marshal", marshal.load)):
        items = []
        with (await export(site, tmp_path, format_)).open("rb") as data:
            while True:
                try:
                    items.append(load(data))
                except EOFError:
                    break
        assert len(items) == 4, format_
        assert all(item["robots"]["follow"] is True for item in items)


@deferred_f_from_coro_f
async def test_a_feed_exporter_the_user_set_is_kept(site: Site, tmp_path: Path) -> None:
    """The add-on registers its exporters only for formats the user gave none."""
    user_csv = "scrapy.exporters.CsvItemExporter"
    path = tmp_path / "items.csv"
    result = await crawl(
        demo_site(site),
        settings={"FEED_EXPORTERS": {"csv": user_csv}, "FEEDS": {str(path): {"format": "csv"}}},
    )
    exporters = result.crawler.settings.getwithbase("FEED_EXPORTERS")
    assert load_object(exporters["csv"]) is ScrapyCsvItemExporter
    assert load_object(exporters["xml"]) is XmlItemExporter
    header, _ = csv_rows(path)
    assert header == ["url", "robots"]


@deferred_f_from_coro_f
async def test_exporters_work_set_by_hand_without_the_addon(site: Site, tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    await crawl(
        demo_site(site),
        settings={
            "ADDONS": {},
            "SPIDER_MIDDLEWARES": {"scrapy_robotsmeta.RobotsMetaMiddleware": 950},
            "FEED_EXPORTERS": {"csv": "scrapy_robotsmeta.exporters.CsvItemExporter"},
            "FEEDS": {str(path): {"format": "csv"}},
        },
    )
    header, _ = csv_rows(path)
    assert header == ["url", *ROBOTS_COLUMNS]
    assert CsvItemExporter.__mro__[1] is ScrapyCsvItemExporter


@deferred_f_from_coro_f
async def test_csv_follows_robotsmeta_item_field(site: Site, tmp_path: Path) -> None:
    header, rows = csv_rows(
        await export(site, tmp_path, "csv", ROBOTSMETA_ITEM_FIELD="page_rules")
    )
    assert header == ["url", *(f"page_rules.{key}" for key in ROBOTS_FIELD_KEYS)]
    assert by_path(site, rows)["/snippet"]["page_rules.index"] == "False"


class StartItemSpider(Spider):
    """Yields an item from start(), before any response: that item has no robots field."""

    name = "start_item"

    def __init__(self, start_urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls

    async def start(self) -> Any:
        yield {"url": "start"}
        for url in self.start_urls:
            yield Request(url)

    def parse(self, response: Response) -> Any:
        yield {"url": response.url}


@deferred_f_from_coro_f
async def test_csv_first_item_without_the_field_still_gives_its_columns(
    site: Site, tmp_path: Path
) -> None:
    """A dict item from start() has no robots field: the columns are there all the same, with
    empty cells for it, so the pages' items that follow keep theirs."""
    path = tmp_path / "items.csv"
    demo_site(site)
    await crawl(
        [site.url("/snippet")],
        settings={"FEEDS": {str(path): {"format": "csv"}}},
        spider_cls=StartItemSpider,
    )
    header, rows = csv_rows(path)
    assert header == ["url", *ROBOTS_COLUMNS]
    assert [row["url"] for row in rows] == ["start", site.url("/snippet")]
    assert all(rows[0][column] == "" for column in ROBOTS_COLUMNS)
    assert rows[1]["robots.index"] == "False"


@deferred_f_from_coro_f
async def test_csv_with_the_meta_part_off_has_no_robots_columns(
    site: Site, tmp_path: Path
) -> None:
    path = await export(site, tmp_path, "csv", ROBOTSMETA_ENABLED=False)
    header, _ = csv_rows(path)
    assert header == ["url"]


SPIDER = """
import scrapy


class Spider(scrapy.Spider):
    name = "pages"
    custom_settings = {
        "ADDONS": {"scrapy_robotsmeta.Addon": 0},
        "ROBOTSTXT_OBEY": True,
        "TELNETCONSOLE_ENABLED": False,
    }

    def __init__(self, start_url, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start_url]

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        yield from response.follow_all(css="a")
"""


@deferred_f_from_coro_f
async def test_scrapy_runspider_o_items_csv(site: Site, tmp_path: Path) -> None:
    """``scrapy runspider spider.py -o items.csv`` with the add-on: ``csv.DictReader`` reads one
    value per directive."""
    (tmp_path / "spider.py").write_text(SPIDER, "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPY_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "scrapy",
        "runspider",
        "spider.py",
        "-a",
        f"start_url={demo_site(site)[0]}",
        "-o",
        "items.csv",
        cwd=tmp_path,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    assert process.returncode == 0, output.decode()
    header, rows = csv_rows(tmp_path / "items.csv")
    assert header == ["url", "title", *ROBOTS_COLUMNS]
    pages = by_path(site, rows)
    assert pages["/snippet"]["title"] == "Snippet"
    assert pages["/snippet"]["robots.max_snippet"] == "0"
    assert pages["/event"]["robots.unavailable_after"] == "2026-12-31T23:59:59+00:00"
