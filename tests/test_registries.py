"""Every vocabulary of the command line is one Registry, reachable by entry points.

An installed distribution is simulated without pip: a ``*.dist-info`` folder (``METADATA`` and
``entry_points.txt``) and the module it names, in a folder put on ``sys.path``;
``importlib.metadata`` finds it there as it finds a ``pip install``-ed package.
"""
from __future__ import annotations

import json
import textwrap
import uuid
import warnings

import numpy as np
import pytest

import jaxdp
from jaxdp import channels, experiments, network, problems
from jaxdp.cli import ENDED_WORSE, main
from jaxdp.engine import Trace

PLUGIN = '''
import dataclasses
from typing import ClassVar

import numpy as np

from jaxdp.channels import Transform, declare
from jaxdp.channels._base import per_row
from jaxdp.problems import from_arrays, partition


def myproblem(n_agents=4, m=8, d=3, *, seed=0, dtype=None):
    """A user's least-squares problem on its own data."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n_agents * m, d))
    y = z @ np.arange(1.0, d + 1.0)
    return from_arrays(*partition(z, y, n_agents, seed=seed), loss="least_squares",
                       reg={"ridge": 0.1}, name="myproblem", dtype=dtype)


@dataclasses.dataclass(frozen=True)
class Shrink(Transform):
    """Multiply every row by f in [0, 1]."""
    kind: ClassVar[str] = "mytransform"
    role: ClassVar[str] = "contraction"
    declared: ClassVar = (declare("f", domain="probability", doc="shrink factor"),)

    def apply(self, v, p, who, k, z=None):
        return v * per_row(p[self.fields[0]], who, v)


def mytransform(f: float = 0.5, *, name: str = "shrink"):
    """A user's transform: shrink every row by f."""
    return Shrink.build(name, {"f": f})


def mygraph(n, *, seed=0):
    """A user's graph: a ring with its chords i ~ i + 2."""
    import networkx as nx

    g = nx.cycle_graph(n)
    g.add_edges_from((i, (i + 2) % n) for i in range(n))
    return g


def myfigure(out_dir, seeds=None):
    """A user's reproduction: one claim, one file."""
    from pathlib import Path

    from jaxdp.experiments import Claim, Report

    (Path(out_dir) / "figure.txt").write_text("drawn")
    return Report("myfigure", "My figure", [Claim("C1", "it runs", "yes", "yes", True)])
'''


def _install(tmp_path, monkeypatch, groups: dict[str, dict[str, str]], *, on_path=True):
    """Write a distribution (its module and ``*.dist-info``) into ``tmp_path`` and put it on
    ``sys.path`` (unless already there); entry values name ``"MODULE:attr"`` with MODULE the
    plugin's module."""
    module = f"jaxdp_plugin_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value.replace('MODULE', module)}\n"
                                  for name, value in entries.items()) + "\n"
        for group, entries in groups.items()))
    if on_path:
        monkeypatch.syspath_prepend(str(tmp_path))
    return module


@pytest.fixture
def forget():
    """Unregister, after the test, the names a test's plugin added."""
    added = []
    yield lambda registry, *names: added.extend((registry, n) for n in names)
    for registry, name in added:
        registry.pop(name, None)


def test_a_user_problem_and_transform_reach_jaxdp_run_through_entry_points(
        tmp_path, monkeypatch, forget):
    assert "least_squares" in problems.PROBLEMS and "clip" in channels.TRANSFORMS  # read before
    _install(tmp_path, monkeypatch, {"jaxdp.problems": {"myproblem": "MODULE:myproblem"},
                                     "jaxdp.transforms": {"mytransform": "MODULE:mytransform"},
                                     "jaxdp.networks": {"mygraph": "MODULE:mygraph"}})
    forget(problems.PROBLEMS, "myproblem")
    forget(channels.TRANSFORMS, "mytransform")
    forget(network.GRAPHS, "mygraph")
    out = tmp_path / "run"
    code = main(["run", "dgd", "--problem", "myproblem", "--channel",
                 "clip:1.0+mytransform+gaussian:20", "--network", "mygraph", "--agents", "6",
                 "--seeds", "1", "--steps", "3", "--no-progress", "--out", str(out)])
    assert code in (0, ENDED_WORSE)
    saved = json.loads((out / "privacy.json").read_text())
    assert np.isfinite(saved["epsilon_max"])  # a contraction between clip and noise
    meta = Trace.load(out / "trace_dgd+clip+mytransform+gaussian.npz").meta
    assert meta["problem"]["name"] == "myproblem" and meta["params"]["shrink_f"] == 0.5
    assert meta["network"]["n_edges"] == 12  # the user's graph: 6 ring edges and 6 chords


def test_a_user_reproduction_reaches_jaxdp_reproduce_through_an_entry_point(
        tmp_path, monkeypatch, forget, capsys):
    _install(tmp_path, monkeypatch, {"jaxdp.reproductions": {"my-figure": "MODULE:myfigure"}})
    forget(experiments.REPRODUCTIONS, "my-figure")
    out = tmp_path / "out"
    assert main(["reproduce", "my-figure", "--out", str(out), "--no-progress"]) == 0
    assert (out / "figure.txt").read_text() == "drawn"
    assert "1/1 claims reproduced" in capsys.readouterr().err


def test_jaxdp_list_prints_entry_point_entries_with_their_descriptions(
        tmp_path, monkeypatch, forget, capsys):
    _install(tmp_path, monkeypatch, {"jaxdp.problems": {"myproblem": "MODULE:myproblem"},
                                     "jaxdp.transforms": {"mytransform": "MODULE:mytransform"}})
    forget(problems.PROBLEMS, "myproblem")
    forget(channels.TRANSFORMS, "mytransform")
    assert main(["list"]) == 0
    printed = capsys.readouterr().out
    assert "A user's least-squares problem on its own data." in printed
    assert "A user's transform: shrink every row by f." in printed


@pytest.mark.parametrize("registry, group", [
    ("algorithms.REGISTRY", "jaxdp.algorithms"), ("problems.PROBLEMS", "jaxdp.problems"),
    ("channels.TRANSFORMS", "jaxdp.transforms"), ("network.GRAPHS", "jaxdp.networks"),
    ("experiments.REPRODUCTIONS", "jaxdp.reproductions")])
def test_every_vocabulary_is_a_registry_with_its_own_group(registry, group):
    from jaxdp._registry import Registry

    module, name = registry.split(".")
    registry = getattr(getattr(jaxdp, module), name)
    assert isinstance(registry, Registry) and registry.group == group


def test_an_unknown_name_lists_the_known_ones_and_how_to_add_one():
    with pytest.raises(ValueError) as e:
        network.GRAPHS.get("moebius")
    message = str(e.value)
    assert "unknown graph 'moebius'; known: complete, erdos_renyi" in message
    assert "GRAPHS.register" in message and "'jaxdp.networks'" in message
    with pytest.raises(KeyError):  # mapping code still sees a KeyError
        network.GRAPHS["moebius"]
    assert network.GRAPHS.get("moebius", None) is None
    with pytest.raises(ValueError, match="unknown problem 'svm'.*jaxdp.problems"):
        problems.make_problem("svm")


def test_register_refuses_a_taken_name_unless_replace():
    from jaxdp._registry import Registry

    registry = Registry("thing", "jaxdp.test_things", {"a": abs})
    with pytest.raises(ValueError, match="name 'a' is taken by builtins.abs; .*replace=True"):
        registry.register("a", min)
    assert registry.register("a", abs) is abs  # the same object again: a no-op

    @registry.register("b", description="the b thing")
    def b():
        """Ignored: the description is given."""

    assert registry.register("a", min, replace=True) is min and registry["a"] is min
    assert registry.names() == ["a", "b"] and registry.describe("b") == "the b thing"
    with pytest.raises(ValueError, match="identifier"):
        registry.register("two words", max)
    with pytest.raises(TypeError, match="must be callable"):
        registry.register("c", 3)
    assert registry.unregister("b") is b and "b" not in registry
    with pytest.raises(KeyError, match="no thing named 'b'"):
        registry.unregister("b")


def test_a_broken_entry_point_names_its_distribution_and_entry(tmp_path, monkeypatch):
    from jaxdp._registry import Registry

    registry = Registry("thing", "jaxdp.test_things", {"a": abs})
    assert registry.names() == ["a"]  # read before the package is installed
    module = _install(tmp_path, monkeypatch, {"jaxdp.test_things": {
        "good": "MODULE:myproblem", "gone": "MODULE:nothing_here", "a": "MODULE:myproblem"}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.names() == ["a", "good"]  # sys.path changed: scanned again
    texts = [str(w.message) for w in caught]
    assert any(f"'gone' = '{module}:nothing_here' of {module} failed to load" in t
               and "AttributeError" in t and "skipped" in t for t in texts)
    assert any("'a'" in t and "taken" in t for t in texts)  # a plugin cannot shadow a name
    assert registry["a"] is abs
    with pytest.raises(ValueError, match=f"'gone' = '{module}:nothing_here' of {module} failed"):
        registry.get("gone")


def test_a_miss_scans_the_group_again(tmp_path, monkeypatch):
    from jaxdp._registry import Registry

    registry = Registry("thing", "jaxdp.test_things", {"a": abs})
    assert "a" in registry
    (tmp_path / "site").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert registry.names() == ["a"]  # scanned with the new (empty) folder on the path
    _install(tmp_path / "site", monkeypatch, {"jaxdp.test_things": {"late": "MODULE:myproblem"}},
             on_path=False)
    assert registry["late"].__name__ == "myproblem"  # installed after the last scan
