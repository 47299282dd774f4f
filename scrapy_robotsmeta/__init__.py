"""scrapy-robotsmeta: robots.txt (RFC 9309) and page-level robots directives for Scrapy."""

from importlib.metadata import PackageNotFoundError, version

from scrapy_robotsmeta.addon import Addon
from scrapy_robotsmeta.downloadermiddleware import RobotsTxtMiddleware
from scrapy_robotsmeta.robotsmeta.directives import Directives
from scrapy_robotsmeta.robotstxt import RobotsTxt, Rule, Verdict
from scrapy_robotsmeta.spidermiddleware import RobotsMetaMiddleware, directives_for, usage_for
from scrapy_robotsmeta.usage.preferences import USES, Preferences, Statement
from scrapy_robotsmeta.usage.tdmrep import TdmReading

try:
    __version__ = version("scrapy-robotsmeta")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "USES",
    "Addon",
    "Directives",
    "Preferences",
    "RobotsMetaMiddleware",
    "RobotsTxt",
    "RobotsTxtMiddleware",
    "Rule",
    "Statement",
    "TdmReading",
    "Verdict",
    "__version__",
    "directives_for",
    "usage_for",
]
