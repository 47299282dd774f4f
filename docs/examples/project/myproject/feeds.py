"""A feed filter that reads the robots field scrapy-robotsmeta puts in every item."""

from __future__ import annotations

from typing import Any

from itemadapter import ItemAdapter
from scrapy.extensions.feedexport import ItemFilter


class AiTrainFilter(ItemFilter):
    """Lets into its feed the items of pages that do not refuse AI training: ``ai_train`` is
    True (allowed) or None (nothing said), never False."""

    def accepts(self, item: Any) -> bool:
        return ItemAdapter(item)["robots"]["ai_train"] is not False
