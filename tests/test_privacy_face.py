"""The shape of ``jaxdp.privacy`` (issue 39): a small face, public sub-modules each documented on
the API page, and privacy modules whose imports form no circle."""
import ast
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


def _imports(path: pathlib.Path) -> set[str]:
    """The privacy modules ``path`` imports, at module level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jaxdp.privacy"):
            found.add(node.module)
            for alias in node.names:  # from jaxdp.privacy import _lattice / pairwise
                if (PRIVACY / f"{alias.name}.py").exists():
                    found.add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("jaxdp.privacy")}
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in PRIVACY.glob("*.py"):
        name = "jaxdp.privacy" + ("" if path.stem == "__init__" else f".{path.stem}")
        graph[name] = _imports(path) - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports in ``graph`` (depth-first search), or ``None``."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle_among_the_privacy_modules():
    assert (cycle := _cycle(_graph())) is None, " -> ".join(cycle)
