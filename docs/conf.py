"""Sphinx configuration of the scrapy-robotsmeta documentation (``make docs``)."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))
# The extension of these docs (robotsmeta_docs) and the generator of its references.
sys.path.insert(0, str(DOCS / "_ext"))

project = "scrapy-robotsmeta"
author = "the scrapy-robotsmeta developers"
# Written once, in setup.cfg: the installed package's metadata gives it.
release = metadata.version("scrapy-robotsmeta")
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "robotsmeta_docs",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_heading_anchors = 3
exclude_patterns = ["_build"]
html_theme = "sphinx_rtd_theme"

autodoc_member_order = "bysource"
nitpick_ignore_regex = [
    # The build is offline, without intersphinx: the names of Scrapy, Twisted and the standard
    # library in signatures stay plain text.
    ("py:class", r"(scrapy|twisted|collections\.abc|datetime)\..+"),
    # Imported for type checking only, so autodoc knows their bare names: Scrapy's crawler and
    # request, and the package's own types that the storage interface passes (internal, not
    # documented).
    ("py:class", r"Crawler|Request|Origin|Published"),
]
