"""Settings of a scrapy-redis fleet whose workers obey robots.txt as one crawler."""

BOT_NAME = "fleetproject"
SPIDER_MODULES = ["fleetproject.spiders"]
NEWSPIDER_MODULE = "fleetproject.spiders"

USER_AGENT = "ExampleBot/1.0 (+https://example.com/bot)"

# scrapy-redis: one request queue and one duplicate filter, in Redis, for every worker.
SCHEDULER = "scrapy_redis.scheduler.Scheduler"
DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"
# Keep the queue when a worker closes: otherwise the first one to close empties it for all.
SCHEDULER_PERSIST = True
# A worker that has had nothing to do for this many seconds closes (0, scrapy-redis's
# default, waits for new start URLs for ever).
MAX_IDLE_TIME_BEFORE_CLOSE = 60

# scrapy-robotsmeta: one robots.txt state for the whole fleet, in the same Redis. Each
# origin's robots.txt is fetched once for every worker, and the requests that wait for it
# wait in Redis, where any worker can release them.
ADDONS = {"scrapy_robotsmeta.Addon": 0}
ROBOTSTXT_OBEY = True
ROBOTSTXT_STORAGE = "scrapy_robotsmeta.storage.RedisStorage"

# The Redis of both. RedisStorage reads ROBOTSTXT_REDIS_URL when it is set, else this one.
REDIS_URL = "redis://localhost:6379/0"
