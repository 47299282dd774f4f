"""Settings of the demo project: an ordinary Scrapy project with scrapy-robotsmeta enabled."""

BOT_NAME = "robotsdemo"
SPIDER_MODULES = ["robotsdemo.spiders"]
NEWSPIDER_MODULE = "robotsdemo.spiders"

# All it takes to enable scrapy-robotsmeta.
ADDONS = {"scrapy_robotsmeta.Addon": 0}
ROBOTSTXT_OBEY = True

# Its product token, "examplebot", is the name robots.txt groups and bot-named metas must use.
USER_AGENT = "ExampleBot/1.0 (+https://example.com/bot)"

# The demo site runs on this machine: no need to be polite to it.
DOWNLOAD_DELAY = 0
# Retry an unavailable robots.txt at once and give up on it after 3 s, so that the demo's
# flaky and down origins resolve in seconds; the defaults are meant for real sites.
ROBOTSTXT_RETRY_DELAY = 0.2
ROBOTSTXT_UNAVAILABLE_TIMEOUT = 3

# Read TDMRep (tdmrep.json, tdm-reservation headers and metas) into every item. A crawl whose
# ROBOTSMETA_PURPOSE names an AI use reads it without this.
ROBOTSMETA_TDMREP = True

FEED_EXPORT_ENCODING = "utf-8"
# The add-on's CSV exporter gives each directive its own column (robots.index, robots.follow…).
FEEDS = {
    "output/items.jsonl": {"format": "jsonlines", "overwrite": True},
    "output/items.csv": {"format": "csv", "overwrite": True},
}
