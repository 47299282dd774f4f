"""Realistic HTML pages, made up deterministically: a full ``<head>`` (styles, scripts, Open
Graph, JSON-LD), navigation, an article of linked paragraphs and a footer."""

from __future__ import annotations

import random
from collections.abc import Sequence

_VOCABULARY = (
    "bot crawler index page site search product review guide news update price offer "
    "delivery account support contact blog article category archive season travel garden "
    "kitchen camera battery screen design history science market report weather sport"
)
_WORDS = _VOCABULARY.split()

# What the robots metas of a sample of pages say: most pages have none, as on the web.
ROBOTS_METAS: tuple[str | None, ...] = (
    *([None] * 6),
    '<meta name="robots" content="index, follow, max-image-preview:large">',
    '<meta name="robots" content="noindex">',
    '<meta name="robots" content="noarchive, max-snippet:50">',
    '<meta name="googlebot" content="nosnippet">',
)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _quote(rng: random.Random) -> str:
    """A quotation, its apostrophe written as many sites write it: ``&#8217;``."""
    return f"<q>The {rng.choice(_WORDS)}&#8217;s {rng.choice(_WORDS)}.</q>"


def _head(rng: random.Random, title: str, robots_meta: str | None) -> str:
    styles = "".join(
        f'<link rel="stylesheet" href="/static/css/{name}.{rng.randrange(10**8):08x}.css">\n'
        for name in ("main", "vendor", "print")
    )
    open_graph = "".join(
        f'<meta property="og:{key}" content="{_sentence(rng, 6)}">\n'
        for key in ("title", "description", "type", "site_name", "image", "url")
    )
    inline_style = "".join(
        f".c{i} {{ margin: {i % 7}px; padding: {i % 5}px; color: #{rng.randrange(16**6):06x}; }}\n"
        for i in range(60)
    )
    tracker = "".join(
        f"window.dataLayer.push({{'event': 'view', 'id': {rng.randrange(10**6)}}});\n"
        for _ in range(30)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n"
        f'<meta name="description" content="{_sentence(rng, 20)}">\n'
        f"{robots_meta or ''}\n{styles}{open_graph}"
        f'<script type="application/ld+json">{{"@type": "Article", "headline": "{title}"}}'
        f"</script>\n<style>\n{inline_style}</style>\n"
        f"<script>window.dataLayer = window.dataLayer || [];\n{tracker}</script>\n</head>\n"
    )


def page(
    rng: random.Random,
    links: Sequence[str],
    size: int,
    robots_meta: str | None = None,
    *,
    quote: bool = False,
    nofollow: Sequence[str] = (),
) -> str:
    """A page of about *size* characters whose body links to each of *links*, and from a
    comment below the article to each of *nofollow* with ``rel="nofollow ugc"``; with *quote*,
    its text holds a character reference."""
    title = _sentence(rng, 5)
    nav = "".join(f'<li><a href="{href}">{rng.choice(_WORDS)}</a></li>' for href in links[:8])
    parts = [
        _head(rng, title, robots_meta),
        f'<body class="page">\n<header><nav><ul>{nav}</ul></nav></header>\n<main><article>\n',
        f"<h1>{title}</h1>\n{_quote(rng) if quote else ''}\n",
    ]
    comments = "".join(
        f'<p>{_sentence(rng, 12)} <a href="{href}" rel="nofollow ugc">{rng.choice(_WORDS)}</a></p>'
        for href in nofollow
    )
    footer = (
        f'</article><aside class="comments">{comments}</aside></main>\n'
        '<footer><p>© Example</p></footer>\n<script src="/static/js/app.js">'
        "</script>\n</body>\n</html>\n"
    )
    length = sum(map(len, parts)) + len(footer)
    in_text = list(links[8:])
    while length < size or in_text:
        sentence = _sentence(rng, rng.randrange(12, 30))
        if in_text:
            href = in_text.pop()
            sentence += f' See <a href="{href}" class="c{rng.randrange(60)}">{title}</a>.'
        paragraph = f"<p>{sentence} {_sentence(rng, 25)}</p>\n"
        parts.append(paragraph)
        length += len(paragraph)
    parts.append(footer)
    return "".join(parts)
