"""A user's algorithm is first-class: ``jaxdp.register`` makes it known by name to ``get``, the
command line (``run``/``info``/``list``/``compare``) and the audit's registry scan; an entry point
of the ``jaxdp.algorithms`` group does the same for an installed package. Every test unregisters
what it registered (no leak into the registry-wide tests)."""
import dataclasses
import json
import warnings

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import Algorithm, algorithms, param, per_agent, privacy
from jaxdp import _registry
from jaxdp.algorithms._registry import AlgorithmRegistry
from jaxdp.cli import ENDED_WORSE, main

SMALL = ["--problem", "least_squares", "--network", "ring", "--agents", "4", "--seeds", "2",
         "--steps", "5", "--no-progress"]


@chex.dataclass(frozen=True)
class ToyParams:
    alpha: float = param(0.05, domain="positive", doc="α, the toy's step size", unit="1")
    sigma: float = param(8.0, domain="positive", doc="σ, noise multiplier of the toy")
    clip: float = param(1.0, domain="positive", per_agent=False, doc="C, the toy's clip")


@chex.dataclass(frozen=True)
class ToyState:
    x: jax.Array


@dataclasses.dataclass(frozen=True)
class ToyDPGD(Algorithm):
    """A toy private gradient method: x⁺ = W x − α (clip(∇F(x), C) + σC ξ)."""

    name = "toy_dpgd"
    params_type = ToyParams
    noise_field = "sigma"
    sampler: str = "lattice"

    def init(self, key, problem, network, params):
        return ToyState(x=jnp.zeros((network.n_agents, problem.dim)))

    def noise(self, key, state, params, k):
        return {"xi": privacy.noise_draws(key, state.x.shape, state.x.dtype,
                                          sampler=self.sampler)}

    def step(self, state, noise, problem, network, params, k):
        g = privacy.clip_by_norm(problem.local_grads(state.x), params.clip)
        g = privacy.add_noise(g, per_agent(params.sigma * params.clip, g), noise["xi"],
                              sampler=self.sampler)
        return ToyState(x=network.mix(state.x) - per_agent(params.alpha, g) * g), {"x": state.x}

    def account(self, problem, network, params, steps, *, delta):
        n = network.n_agents
        sigma = np.broadcast_to(np.asarray(params.sigma, float), (n,))
        events = self.accounting.declare_releases(privacy.PrivacyEvents.from_schedule(
            "gaussian", sensitivity=2 * float(params.clip), scale=(sigma * params.clip)[:, None],
            n_agents=n, steps=steps, description="g̃_i^k"), problem)
        return self.accounting.report(events, problem, network, params, steps, delta=delta,
                           relation="replace_agent", assumptions=(privacy.Assumption(
                               "‖clip(∇f_i, C)‖ ≤ C", enforced=True, how="clip"),))


@pytest.fixture
def toy():
    jaxdp.register(ToyDPGD)
    try:
        yield ToyDPGD
    finally:
        jaxdp.unregister("toy_dpgd")
    assert "toy_dpgd" not in algorithms.REGISTRY


def test_registered_algorithm_runs_from_the_command_line_with_its_epsilon(toy, tmp_path, capsys):
    assert algorithms.get("toy_dpgd") == ToyDPGD()
    assert main(["run", "toy_dpgd", *SMALL, "--out", str(tmp_path)]) in (0, ENDED_WORSE)
    out = capsys.readouterr().out
    saved = json.loads((tmp_path / "privacy.json").read_text())
    assert np.isfinite(saved["epsilon_max"]) and f"ε = {saved['epsilon_max']:.4g}" in out
    code = main(["run", "toy_dpgd", *SMALL, "--epsilon", "5", "--out", str(tmp_path / "e")])
    assert code in (0, ENDED_WORSE)
    saved = json.loads((tmp_path / "e" / "privacy.json").read_text())
    assert saved["epsilon_max"] == pytest.approx(5.0, rel=1e-4)


def test_info_and_list_read_the_declarations(toy, capsys):
    assert main(["info", "toy_dpgd"]) == 0
    out = capsys.readouterr().out
    assert "toy_dpgd: ToyDPGD (private)" in out
    assert "α, the toy's step size [> 0; scalar or (N,); unit 1]" in out
    assert "C, the toy's clip [> 0; scalar]" in out
    assert "noise_field: sigma" in out and "ε = " in out
    assert main(["list"]) == 0
    assert any(line.split()[:2] == ["toy_dpgd", "private"]
               for line in capsys.readouterr().out.splitlines())


def test_compare_takes_a_registered_name(toy, tmp_path, capsys):
    assert main(["compare", "dgd", "toy_dpgd", *SMALL, "--metric", "objective",
                 "--out", str(tmp_path)]) in (0, ENDED_WORSE)  # finished; may end worse
    rows = (tmp_path / "compare.csv").read_text().splitlines()
    assert any(row.startswith("toy_dpgd,") for row in rows[1:])


def test_register_refuses_what_is_not_an_algorithm_and_taken_names(toy):
    with pytest.raises(TypeError, match="subclass of jaxdp.Algorithm"):
        jaxdp.register(ToyParams)
    clash = dataclasses.dataclass(frozen=True)(type("Clash", (ToyDPGD,), {"name": "dgd"}))
    with pytest.raises(ValueError, match="'dgd' is taken by jaxdp.algorithms"):
        jaxdp.register(clash)
    nameless = dataclasses.dataclass(frozen=True)(type("Nameless", (Algorithm,),
                                                       {"params_type": ToyParams}))
    with pytest.raises(ValueError, match="needs a class attribute name"):
        jaxdp.register(nameless)
    assert jaxdp.register(ToyDPGD) is ToyDPGD  # registering the same class again is a no-op
    with pytest.raises(KeyError, match="no algorithm named 'nope'"):
        jaxdp.unregister("nope")


class _EntryPoint:
    def __init__(self, name, target):
        self.name, self.value, self._target = name, f"tests:{name}", target

    def load(self):
        if isinstance(self._target, Exception):
            raise self._target
        return self._target


def test_entry_points_are_read_on_first_use(monkeypatch):
    eps = [_EntryPoint("toy_dpgd", ToyDPGD), _EntryPoint("broken", ImportError("no module"))]
    seen = []
    monkeypatch.setattr(_registry, "entry_points",
                        lambda group: seen.append(group) or eps)
    registry = AlgorithmRegistry([algorithms.DGD])
    assert seen == []  # nothing loaded at construction
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert set(registry) == {"dgd", "toy_dpgd"}
    assert seen == ["jaxdp.algorithms"] and registry["toy_dpgd"] is ToyDPGD
    assert any("'broken'" in str(w.message) and "skipped" in str(w.message) for w in caught)
    assert len(registry) == 2 and seen == ["jaxdp.algorithms"]  # read once


def test_the_report_constructor_requires_the_relation_and_the_assumptions():
    from jaxdp import network, problems

    prob = problems.least_squares(n_agents=4, m=6, d=3, seed=0)
    net = network.make_network("ring", 4)
    events = privacy.PrivacyEvents.from_schedule("gaussian", 2.0, 4.0, n_agents=4, steps=3)
    alg, params = ToyDPGD(sampler="float"), ToyParams()
    with pytest.raises(TypeError, match="relation"):
        alg.accounting.report(events, prob, net, params, 3, delta=1e-5, assumptions=())
    with pytest.raises(TypeError, match="assumptions"):
        alg.accounting.report(events, prob, net, params, 3, delta=1e-5, relation="replace_agent")
    report = alg.accounting.report(events, prob, net, params, 3, delta=1e-5,
                                   relation="replace_record", assumptions=(), released="x")
    assert (report.relation, report.assumptions, report.released) == ("replace_record", (), "x")
