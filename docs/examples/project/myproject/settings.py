"""Settings of the documentation's example project: scrapy-robotsmeta enabled by its add-on."""

BOT_NAME = "myproject"
SPIDER_MODULES = ["myproject.spiders"]
NEWSPIDER_MODULE = "myproject.spiders"

# The crawler's product token, "examplebot", is the name robots.txt groups and bot-named
# metas address.
USER_AGENT = "ExampleBot/1.0 (+https://example.com/bot)"

ADDONS = {"scrapy_robotsmeta.Addon": 0}
ROBOTSTXT_OBEY = True

# [pipeline]
# What each page told search engines, applied to the items (see myproject/pipelines.py).
ITEM_PIPELINES = {"myproject.pipelines.SearchRulesPipeline": 300}
# Every item in items.jsonl; in ai-train.jsonl, only those whose page does not refuse AI
# training (see myproject/feeds.py).
FEEDS = {
    "items.jsonl": {"format": "jsonlines"},
    "ai-train.jsonl": {"format": "jsonlines", "item_filter": "myproject.feeds.AiTrainFilter"},
}
# [/pipeline]
FEED_EXPORT_ENCODING = "utf-8"
