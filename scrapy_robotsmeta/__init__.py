"""scrapy-robotsmeta: robots.txt (RFC 9309) and page-level robots directives for Scrapy."""

from scrapy_robotsmeta.addon import Addon
from scrapy_robotsmeta.directives import Directives
from scrapy_robotsmeta.downloadermiddleware import RobotsTxtMiddleware
from scrapy_robotsmeta.robotstxt import RobotsTxt, Rule, Verdict
from scrapy_robotsmeta.spidermiddleware import RobotsMetaMiddleware, directives_for

__all__ = [
    "Addon",
    "Directives",
    "RobotsMetaMiddleware",
    "RobotsTxt",
    "RobotsTxtMiddleware",
    "Rule",
    "Verdict",
    "directives_for",
]
