"""Writes ``cli.md`` (the command-line page) from the ``jaxdp`` command's own parser.

:func:`jaxdp.cli.reference_markdown` renders every command's ``--help``; as a Sphinx extension
(``setup``) this module writes it into the source folder on ``builder-inited``, so the page cannot
drift from the parser. ``python docs/_ext/cli_reference.py`` writes it without Sphinx.
"""
from __future__ import annotations

import sys
from pathlib import Path


def write_cli_page(srcdir: Path) -> Path:
    """Write ``srcdir/cli.md``; returns its path (left untouched when its text is unchanged)."""
    from jaxdp.cli import reference_markdown

    path = Path(srcdir) / "cli.md"
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
