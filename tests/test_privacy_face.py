"""The shape of ``jaxdp.privacy`` (issue 39): a small face, public sub-modules each documented on
the API page (that its modules import one way only is checked with every other file's imports, in
``tests/test_contract_size.py``)."""
import importlib
import pathlib
import re

import jaxdp.privacy

ROOT = pathlib.Path(__file__).resolve().parents[1]
PRIVACY = ROOT / "jaxdp" / "privacy"
API_PAGE = ROOT / "docs" / "api" / "privacy.md"
SUBMODULES = ("contract", "samplers", "closed_forms", "pairwise", "papers")


def _documented(module: str) -> set[str]:
    """The members the API page lists for ``module`` (its ``automodule`` ``:members:`` line)."""
    page = API_PAGE.read_text()
    block = re.search(rf"\.\. automodule:: {re.escape(module)}\n((?:   :.*\n)+)", page)
    assert block, f"docs/api/privacy.md has no automodule for {module}"
    members = re.search(r":members:(.*)", block.group(1)).group(1)
    return {m.strip() for m in members.split(",") if m.strip()}


def test_the_face_is_small():
    assert len(jaxdp.privacy.__all__) <= 30
    assert len(set(jaxdp.privacy.__all__)) == len(jaxdp.privacy.__all__)


def test_every_public_name_is_importable_from_one_documented_place():
    places = {"jaxdp.privacy": jaxdp.privacy.__all__}
    for sub in SUBMODULES:
        places[f"jaxdp.privacy.{sub}"] = importlib.import_module(f"jaxdp.privacy.{sub}").__all__
    seen = {}
    for module, names in places.items():
        mod = importlib.import_module(module)
        for name in names:
            getattr(mod, name)
            assert name not in seen, f"{name} is public in both {seen[name]} and {module}"
            seen[name] = module
        assert set(names) == _documented(module), module
