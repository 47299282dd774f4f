"""The documentation's own Sphinx extension: the object types its pages link to, and the
directives that render the generated references.

- ``{setting}`NAME```, ``{stat}`NAME```, ``{reqmeta}`NAME```: roles linking to a setting, a
  stat (a template as declared, ``robotstxt/outcome/{kind}``) or a request meta key; with
  ``-n``, a role naming none of them fails the build.
- ``settings-reference``, ``stats-reference``, ``meta-keys-reference``: directives taking a
  group as argument, rendering its entries (Markdown from :mod:`references`, parsed as the page
  is, so only in MyST pages).
"""

from __future__ import annotations

from typing import Any, ClassVar

import references
from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


class ReferenceDirective(SphinxDirective):
    """Renders one group of a generated reference: ``{stats-reference} fetch``."""

    required_arguments = 1
    #: The directive's name, as :data:`references.DIRECTIVES` knows it.
    reference: ClassVar[str]

    def run(self) -> list[nodes.Node]:
        groups, render = references.DIRECTIVES[self.reference]
        group = self.arguments[0]
        if group not in groups:
            raise self.error(f"{self.reference}: no group {group!r} (groups: {', '.join(groups)})")
        for source in references.SOURCES:
            self.env.note_dependency(source)
        container = nodes.container()
        lines = render(group).splitlines()
        self.state.nested_parse(StringList(lines, source=self.get_source_info()[0]), 0, container)
        return list(container.children)


def _directive(name: str) -> type[ReferenceDirective]:
    return type(f"{name}_directive", (ReferenceDirective,), {"reference": name})


def setup(app: Sphinx) -> dict[str, Any]:
    for objtype in (references.SETTING, references.STAT, references.REQMETA):
        app.add_object_type(objtype, objtype, indextemplate=f"pair: %s; {objtype}")
    for name in references.DIRECTIVES:
        app.add_directive(name, _directive(name))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
