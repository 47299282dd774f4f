"""Usage preferences: what a site lets its content be used for (search, AI input, AI training).

They come from robots.txt (``Content-Signal``, ``Content-Usage``), from response headers
(``Content-Usage``, ``Content-Signal``) and from page rules (``noai``, ``noimageai``).
"""
