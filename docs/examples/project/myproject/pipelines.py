"""An item pipeline that reads the robots field scrapy-robotsmeta puts in every item."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Spider
from scrapy.exceptions import DropItem


class SearchRulesPipeline:
    """What a search index owes each page's robots rules: no item of a page past its
    ``unavailable_after`` date, and no longer description than the snippet it allows."""

    def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        adapter = ItemAdapter(item)
        robots = adapter["robots"]
        # An ISO 8601 UTC time, or None: the package leaves comparing it with now to you.
        expires = robots["unavailable_after"]
        if expires is not None and datetime.fromisoformat(expires) <= datetime.now(timezone.utc):
            raise DropItem(f"{adapter['url']} is unavailable after {expires}")
        # max_snippet is None (no limit) or a length, 0 when the page says nosnippet.
        limit = robots["max_snippet"]
        if limit is not None and adapter.get("description"):
            adapter["description"] = adapter["description"][:limit]
        return item
