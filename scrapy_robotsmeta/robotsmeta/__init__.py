"""Page-level robots rules (``<meta name="robots">``, ``X-Robots-Tag``), pure: no crawler.

``page`` reads the rules a response carries; ``directives`` turns them into the effective
:class:`~scrapy_robotsmeta.robotsmeta.directives.Directives` of one crawler.
"""
