"""The algorithm contract stays narrow and jaxdp's packages stay acyclic (issue 39, item 4).

Counted members: the public names (no leading ``_``) that a class or one of its bases defined in
jaxdp declares, methods, properties and class attributes alike, less the dataclass fields (the
configuration a user declares). The bounds are the counts after the report helpers moved to
:class:`~jaxdp.core.Accounting` (``alg.accounting``): growing the contract is a deliberate edit
here. The import graph is read with :mod:`ast` (nothing imported), every ``import`` statement of
every module, at module level or inside a function, except those under ``if TYPE_CHECKING:``.
"""
from __future__ import annotations

import ast
import collections
import dataclasses
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "jaxdp"
MAX_MEMBERS = {"Algorithm": 30, "WithChannel": 42}  # +1: noise_agent_axes, the layout of the draws


def public_members(cls) -> set[str]:
    """The counted members of ``cls`` (module docstring)."""
    fields = {f.name for f in dataclasses.fields(cls)}
    return {name for k in cls.__mro__ if k.__module__.startswith("jaxdp")
            for name in vars(k) if not name.startswith("_") and name not in fields}


@pytest.mark.parametrize("name", sorted(MAX_MEMBERS))
def test_the_contract_has_at_most_its_declared_members(name):
    from jaxdp.channels import WithChannel
    from jaxdp.core import Algorithm

    cls = {"Algorithm": Algorithm, "WithChannel": WithChannel}[name]
    members = public_members(cls)
    assert len(members) <= MAX_MEMBERS[name], sorted(members)


def _modules() -> dict[str, pathlib.Path]:
    def name(p):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return {name(p): p for p in ROOT.rglob("*.py")}


def _type_checking_nodes(tree) -> set[int]:
    """The ids of the statements under ``if TYPE_CHECKING:`` (not run)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def _imports(module: str, path: pathlib.Path, modules) -> set[tuple[str, int]]:
    """``(imported jaxdp module, line)`` of every runtime import in ``path``."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    skipped, found = _type_checking_nodes(tree), set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                     for a in node.names]
        else:
            continue
        for target in names:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.split(".")[0] == "jaxdp":
                found.add((target, node.lineno))
    return found


def _package(module: str) -> str:
    """``jaxdp.core._algorithm`` -> ``core``; the facade ``jaxdp`` itself -> ``jaxdp``."""
    return module.split(".")[1] if "." in module else "jaxdp"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _graphs():
    """``(package graph with the import lines of each edge, file graph)``; the facade
    ``jaxdp/__init__.py`` reaches every sub-package (lazily), so importing it from one closes
    a cycle."""
    modules = _modules()
    packages = {_package(m) for m in modules}
    edges = collections.defaultdict(dict)
    files = collections.defaultdict(set)
    for module, path in modules.items():
        for target, line in _imports(module, path, modules):
            files[module].add(target)
            a, b = _package(module), _package(target)
            if a != b:
                edges[a].setdefault(b, f"{module}:{line}")
    edges["jaxdp"].update({p: "jaxdp/__init__.py (lazy)" for p in packages - {"jaxdp"}})
    return edges, files


def test_no_import_cycle_among_jaxdp_packages():
    edges, _ = _graphs()
    graph = {a: set(bs) for a, bs in edges.items()}
    found = [[f"{a} -> {b} ({edges[a][b]})" for a in comp for b in sorted(graph[a]) if b in comp]
             for comp in _cycles(graph)]
    assert not found, found
    assert "engine" not in edges["core"], edges["core"]["engine"]


def test_no_import_cycle_among_files():
    _, files = _graphs()
    found = _cycles(files)
    assert not found, found


def test_the_finder_sees_a_function_level_cycle():
    """A lazy import inside a function closes a cycle too (the finder is not blind to it)."""
    assert _cycles({"core": {"engine"}, "engine": {"core"}, "x": {"core"}}) == [["core", "engine"]]
    tree = ast.parse("def f():\n    from jaxdp.engine import run\n")
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))
