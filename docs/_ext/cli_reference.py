"""Writes ``cli_reference.md`` (the reference part of the command-line page) from the ``jaxdp``
command's own parser.

:func:`jaxdp.cli.reference_markdown` renders every command's ``--help``; as a Sphinx extension
(``setup``) this module writes it into the source folder on ``builder-inited``, and ``cli.md`` (the
hand-written guide: what each command is for, an example and its output) includes it, so the
reference cannot drift from the parser. ``python docs/_ext/cli_reference.py`` writes it without
Sphinx.
"""
from __future__ import annotations

import sys
from pathlib import Path

PAGE = "cli_reference.md"
"""The generated file (ignored by git, excluded from the pages in ``conf.py``: included only)."""


def write_cli_page(srcdir: Path) -> Path:
    """Write ``srcdir/cli_reference.md``; returns its path (left untouched when unchanged)."""
    from jaxdp.cli import reference_markdown

    path = Path(srcdir) / PAGE
    text = reference_markdown()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def _on_builder_inited(app) -> None:
    write_cli_page(Path(app.srcdir))


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True}


if __name__ == "__main__":
    print(write_cli_page(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1]))
