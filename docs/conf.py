"""Sphinx configuration of the jaxdp site (built in CI with ``sphinx-build -W --keep-going``)."""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jaxdp  # noqa: E402

project = "jaxdp"
author = "the jaxdp authors"
copyright = "the jaxdp authors"
release = getattr(jaxdp, "__version__", "")

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "catalogue",  # docs/_ext/catalogue.py: writes catalogue/*.md from the registry
    "cli_reference",  # docs/_ext/cli_reference.py: writes cli_reference.md from the parser
]
# privacy_table.md is written by `jaxdp reproduce audit-table` and included by privacy.md, and
# cli_reference.md (every command's --help) is written by the cli_reference extension and included
# by cli.md: neither is a page of its own
exclude_patterns = ["_build", "**.ipynb_checkpoints", "jupyter_execute", "privacy_table.md",
                    "cli_reference.md"]
html_theme = "furo"
html_title = "jaxdp"
html_static_path = ["_static"]
html_css_files = ["jaxdp.css"]         # docs/_static/jaxdp.css: table and code-block layout

# -- MyST and notebooks ---------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3
nb_execution_mode = "cache"            # the notebooks are stored without outputs: run them once
nb_execution_timeout = 300
nb_execution_raise_on_error = True     # a notebook that fails fails the build
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")

# -- autodoc ----------------------------------------------------------------------------------------
autodoc_default_options = {"show-inheritance": True}  # :members: per directive
autodoc_member_order = "bysource"
autodoc_typehints = "none"             # the docstrings state shapes and types
autoclass_content = "class"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True               # "Attributes:" as fields, not duplicate object entries
napoleon_custom_sections = [("Class attributes", "params_style"),
                            ("Static configuration", "params_style")]


# -- the notebooks live in notebooks/ at the repository root: copy them in before reading ------------
def _copy_notebooks(app) -> None:
    import shutil

    for src in sorted((HERE.parent / "notebooks").glob("*.ipynb")):
        dst = HERE / "notebooks" / src.name
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            shutil.copyfile(src, dst)


def _escape_bars(app, what, name, obj, options, lines) -> None:
    """``|x|`` in a docstring is an absolute value or a set size, never a reST substitution; its
    TeX-style ``x^{k+1}`` is shown as ``xᵏ⁺¹`` (prose is not math: ``jaxdp._text``)."""
    from catalogue import docstring_text

    lines[:] = docstring_text("\n".join(lines)).split("\n")


def setup(app):
    app.connect("builder-inited", _copy_notebooks)
    app.connect("autodoc-process-docstring", _escape_bars)
