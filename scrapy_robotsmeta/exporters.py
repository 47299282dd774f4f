"""Feed exporters that write the ``robots`` item field readably in CSV and XML.

JSON, JSON lines, pickle and marshal write the field's dict as it is. Scrapy's CSV exporter
would write it as one cell holding a Python repr, and its XML exporter writes ``None`` as the
text ``None``; the add-on registers these two in ``FEED_EXPORTERS`` in their place.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import exporters
from scrapy.utils.python import to_unicode

from scrapy_robotsmeta.defaults import DEFAULTS, PackageSettings
from scrapy_robotsmeta.evidence import ITEM_KEY, evidence_file
from scrapy_robotsmeta.robotsmeta.directives import NO_RULES
from scrapy_robotsmeta.usage.preferences import NO_PREFERENCES

if TYPE_CHECKING:
    from io import BytesIO

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: The keys of the item field, in their order (the directives, the usage preferences, then
#: TDMRep's reservation, policy and file): one CSV column each.
ROBOTS_FIELD_KEYS = (*NO_RULES.to_dict(), *NO_PREFERENCES.to_dict())


# Public as get_serialized_fields since Scrapy 2.14.
_SERIALIZED_FIELDS = (
    "get_serialized_fields"
    if hasattr(exporters.BaseItemExporter, "get_serialized_fields")
    else "_get_serialized_fields"
)


class CsvItemExporter(exporters.CsvItemExporter):
    """Scrapy's CSV exporter, with the robots field written as one column per directive.

    The field ``robots`` becomes the columns ``robots.index``, ``robots.follow``… (all of
    :data:`ROBOTS_FIELD_KEYS`, whatever the item holds: an item without the field gets empty
    cells). The columns are fixed by the first item, with the robots field when it is a dict,
    or by ``FEED_EXPORT_FIELDS``, where listing ``robots`` gives all its columns and
    ``{"robots": "R"}`` names them ``R.index``…; so every row has the same columns, with or
    without a header line. With *evidence*, one more column, ``robots.evidence``, holds the
    item's evidence as JSON.
    """

    def __init__(
        self,
        file: BytesIO,
        *,
        robots_field: str = DEFAULTS["ROBOTSMETA_ITEM_FIELD"],
        evidence: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(file, **kwargs)
        self.robots_field = robots_field
        self._keys = (*ROBOTS_FIELD_KEYS, ITEM_KEY) if evidence else ROBOTS_FIELD_KEYS
        self._columns: list[str] | None = None
        self._robots_column: str | None = None
        self._fields_guessed = False
        self._warned_dropped = False

    @classmethod
    def from_crawler(cls, crawler: Crawler, file: BytesIO, **kwargs: Any) -> CsvItemExporter:
        settings = PackageSettings(crawler.settings)
        field = settings.get("ROBOTSMETA_ITEM_FIELD")
        if not settings.getbool("ROBOTSMETA_ENABLED"):
            field = ""  # no item gets the field: a key of that name is the spider's own
        evidence = evidence_file(settings) is not None
        return cls(file, robots_field=field or "", evidence=evidence, **kwargs)

    def export_item(self, item: Any) -> None:
        if self._columns is None:
            self._columns = self._fix_columns(item)
            if self.include_headers_line:
                self.csv_writer.writerow(self._columns)
        elif self._fields_guessed and not self._warned_dropped:
            self._warn_dropped(item)
        serialized = getattr(self, _SERIALIZED_FIELDS)
        cells = serialized(item, default_value="", include_empty=True)
        row = [self._text(value) for name, value in cells for value in self._cells(name, value)]
        self.csv_writer.writerow(row)

    def _fix_columns(self, item: Any) -> list[str]:
        if not self.fields_to_export:
            # As Scrapy does: the declared fields, or the keys of the first dict item. A dict
            # yielded without a response (from start()) has no robots field yet later ones do.
            guessed = list(ItemAdapter(item).field_names())
            if self.robots_field and isinstance(item, dict) and self.robots_field not in guessed:
                guessed.append(self.robots_field)
            self.fields_to_export = guessed
            self._fields_guessed = True
        fields = self.fields_to_export
        names: list[str]
        if isinstance(fields, Mapping):
            self._robots_column = fields.get(self.robots_field)
            names = list(fields.values())
        else:
            names = self.fields_to_export = list(fields)
            self._robots_column = self.robots_field if self.robots_field in names else None
        return [column for name in names for column in self._expand(name)]

    def _expand(self, column: str) -> list[str]:
        if self.robots_field and column == self._robots_column:
            return [f"{column}.{key}" for key in self._keys]
        return [column]

    def _cells(self, column: str, value: Any) -> Iterator[Any]:
        if not self.robots_field or column != self._robots_column:
            yield value
            return
        directives = value if isinstance(value, Mapping) else {}
        for key in ROBOTS_FIELD_KEYS:
            yield directives.get(key)
        if len(self._keys) > len(ROBOTS_FIELD_KEYS):
            evidence = directives.get(ITEM_KEY)
            yield None if evidence is None else json.dumps(evidence, ensure_ascii=False)

    def _text(self, value: Any) -> Any:
        return to_unicode(value, self.encoding) if isinstance(value, bytes) else value

    def _warn_dropped(self, item: Any) -> None:
        assert self.fields_to_export is not None
        dropped = set(ItemAdapter(item).field_names()) - set(self.fields_to_export)
        if dropped:
            self._warned_dropped = True
            logger.warning(
                "The CSV feed has the columns of its first item, so the fields %s of a later "
                "item are not written; list every field in FEED_EXPORT_FIELDS to keep them.",
                sorted(dropped),
            )


class XmlItemExporter(exporters.XmlItemExporter):
    """Scrapy's XML exporter, writing ``None`` (in the robots field or any other) as an empty
    element rather than the text ``None``."""

    def serialize_field(self, field: Any, name: str, value: Any) -> Any:
        return _none_as_empty(super().serialize_field(field, name, value))


def _none_as_empty(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Mapping):
        return {key: _none_as_empty(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_none_as_empty(item) for item in value]
    return value
