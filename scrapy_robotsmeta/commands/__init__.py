"""Scrapy commands of scrapy-robotsmeta, registered through the ``scrapy.commands`` entry point."""
