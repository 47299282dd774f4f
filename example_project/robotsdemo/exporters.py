"""A CSV exporter that gives each key of a dict field its own column."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from itemadapter import ItemAdapter
from scrapy.exporters import CsvItemExporter


class FlatCsvItemExporter(CsvItemExporter):
    """``{"robots": {"index": True, ...}}`` is written as a column ``robots.index``, and so on.

    The columns are those of the first item, unless FEEDS gives ``fields``.
    """

    def export_item(self, item: Any) -> None:
        super().export_item(flatten(ItemAdapter(item).asdict()))


def flatten(fields: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in fields.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat
