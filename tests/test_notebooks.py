"""The notebooks are valid nbformat ≥ 4.5 documents: every cell has an ``id`` (no
``MissingIDFieldWarning`` when nbformat, myst-nb or Jupyter read them)."""
import warnings
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_cell_has_an_id(path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # MissingIDFieldWarning would be raised here
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) >= (4, 5)
    ids = [cell["id"] for cell in nb.cells]
    assert len(set(ids)) == len(ids)


def test_every_notebook_is_in_the_docs_toctree():
    """docs/conf.py copies every notebook into docs/notebooks; each must be listed in the
    notebooks page's toctree, or Sphinx warns (a failed -W build) and the page is unreachable."""
    index = (ROOT / "docs" / "notebooks" / "index.md").read_text()
    toctree = index.split("```{toctree}")[1].split("```")[0].split()
    for path in NOTEBOOKS:
        assert path.stem in toctree, f"{path.name} is not in docs/notebooks/index.md's toctree"
