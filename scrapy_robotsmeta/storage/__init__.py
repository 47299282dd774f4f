"""Where the robots.txt part keeps origin states and parked requests: ``ROBOTSTXT_STORAGE``.

- :class:`MemoryStorage` (the default): this process's memory, parked requests spilling to
  disk, and kept in ``JOBDIR`` across a pause.
- :class:`RedisStorage`: shared by every process of one crawl (a scrapy-redis fleet), so that
  each robots.txt is fetched once for all of them and parked requests outlive any one of them.
"""

from scrapy_robotsmeta.storage.base import Storage
from scrapy_robotsmeta.storage.memory import MemoryStorage
from scrapy_robotsmeta.storage.redis import RedisStorage

__all__ = ["MemoryStorage", "RedisStorage", "Storage"]
