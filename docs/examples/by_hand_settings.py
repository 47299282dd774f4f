"""scrapy-robotsmeta enabled by hand: every component the add-on enables, in a settings.py."""

ROBOTSTXT_OBEY = True
DOWNLOADER_MIDDLEWARES = {
    # Never leave Scrapy's own beside it: the crawl refuses to start if you do.
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "scrapy_robotsmeta.RobotsTxtMiddleware": 100,
    # Decodes robots.txt bodies within the spec's size limit, before HttpCompression (590).
    "scrapy_robotsmeta.fetcher.RobotsTxtBodyMiddleware": 591,
}
SPIDER_MIDDLEWARES = {"scrapy_robotsmeta.RobotsMetaMiddleware": 950}
FEED_EXPORTERS = {
    "csv": "scrapy_robotsmeta.exporters.CsvItemExporter",
    "xml": "scrapy_robotsmeta.exporters.XmlItemExporter",
}
