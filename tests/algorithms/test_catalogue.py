"""The non-private catalogue: per-node references, both backends, runs, decent-bench parity."""
import functools
import json
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.algorithms import catalogue
from tests.harness import Case, reference_match, small_network, small_problem
from tests.reference import catalogue as ref


def _edges_ref(fn):
    def step(st, noise, problem, W, p, k):
        net = small_network()
        return fn(st, noise, problem, W, p, k, np.asarray(net.senders), np.asarray(net.receivers))
    return step


P_SMALL = np.asarray(small_network().P, np.float64)  # the Laplacian-like P of the case network
ALPHAS = (0.02, 0.03, 0.04, 0.05, 0.06, 0.07)  # uncoordinated per-agent steps

CASES = [
    Case("ed", ref.ed),
    Case("ed", ref.ed, problem="logistic", overrides={"alpha": 0.5}),
    Case("atc", ref.atc, problem="nonconvex_logistic"),
    Case("simple_gt", ref.simple_gt),
    Case("atc_tracking", ref.atc_tracking, problem="logistic"),
    Case("aug_dgm", ref.aug_dgm),
    Case("aug_dgm", ref.aug_dgm, overrides={"alpha": jnp.array(ALPHAS)}, problem="logistic"),
    Case("wang_elia", ref.wang_elia, problem="logistic"),
    Case("k_gt", functools.partial(ref.k_gt, local_steps=3), config={"local_steps": 3},
         overrides={"beta": 0.7}),
    Case("led", functools.partial(ref.led, local_steps=4), config={"local_steps": 4},
         problem="logistic", overrides={"beta": 0.3}),
    Case("prox_skip", ref.prox_skip, overrides={"p": 0.5, "beta": 0.4, "chi": 1.5}),
    Case("dlm", ref.dlm, problem="logistic"),
    Case("atg", _edges_ref(ref.atg), overrides={"relax": 0.7, "delta": 0.2}),
    Case("yi_pd", functools.partial(ref.yi_pd, P=P_SMALL), problem="nonconvex_logistic"),
    Case("yi_pd", functools.partial(ref.yi_pd, P=P_SMALL), problem="logistic",
         overrides={"gamma": 40.0, "omega": 3.0, "eta": 0.02}),
    Case("gt_saga", ref.gt_saga, config={"batch_size": 2}, problem="logistic"),
    Case("gt_sarah", functools.partial(ref.gt_sarah, inner_steps=3),
         config={"batch_size": 2, "inner_steps": 3}),
    Case("gt_vr", ref.gt_vr, config={"batch_size": 3}, overrides={"p": 0.4},
         problem="nonconvex_logistic"),
]
IDS = [c.id for c in CASES]


EDGES_BACKEND = {"ed", "wang_elia", "led", "dlm", "atg", "gt_sarah", "aug_dgm", "yi_pd"}

NO_DECENTBENCH = {"yi_pd": "decent-bench has no Yi et al. (2022) primal–dual method"}
"""Catalogue algorithms without a decent-bench fixture, with the reason."""


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stacked_step_matches_per_node_reference(case):
    """Fed the same noise and minibatches, the JAX step equals the per-node loop to 1e-10 over 30
    steps; the algorithms in ``EDGES_BACKEND`` run on the edge-list backend, the rest dense."""
    reference_match(case, steps=30, backend="edges" if case.name in EDGES_BACKEND else "dense")


def test_every_catalogue_algorithm_is_registered_and_tested():
    tested = {c.name for c in CASES}
    for cls in catalogue.CLASSES:
        assert algorithms.REGISTRY[cls.name] is cls
        assert cls.name in tested
        if cls.name not in NO_DECENTBENCH:
            assert cls.name in {e["jaxdp_name"] for e in FIXTURES["fixtures"].values()}


@pytest.mark.parametrize("name,overrides", [("led", {}), ("k_gt", {"beta": 1.0}), ("atg", {}),
                                            ("gt_saga", {}), ("gt_sarah", {}), ("gt_vr", {})])
def test_exact_and_variance_reduced_methods_reach_the_solution(name, overrides):
    """Through ``jaxdp.run`` on strongly convex least squares: the exact methods and the
    variance-reduced trackers (minibatch b = 1: no noise floor) reach x* to 1e-16."""
    prob, net = small_problem("least_squares"), small_network()
    alg = algorithms.get(name)
    params = alg.default_params().replace(**overrides)
    tr = jaxdp.run(alg, prob, net, params, steps=3000, seeds=1, progress=False)
    assert tr.final("dist_to_opt")[0] < 1e-16
    assert tr.final("consensus_error")[0] < 1e-16


def test_yi_pd_reaches_the_solution():
    """Yi et al.'s primal–dual method (no noise) reaches x* of strongly convex least squares to
    machine precision; η = 0.01 is a small step, hence PPDC's 8000 steps."""
    prob, net = small_problem("least_squares"), small_network()
    tr = jaxdp.run(algorithms.YiPrimalDual(), prob, net, steps=8000, progress=False,
                   record_every=100)
    assert tr.final("dist_to_opt")[0] < 1e-18
    assert tr.final("consensus_error")[0] < 1e-18


def test_yi_pd_is_ppdc_without_noise():
    """PPDC with u_x = 0 is Yi et al.'s primal–dual method step for step (same γ, ω, η)."""
    prob, net = small_problem("nonconvex_logistic"), small_network()
    a = jaxdp.simulate(algorithms.YiPrimalDual(), prob, net, algorithms.YiPDParams(),
                       jax.random.key(0), steps=50)[1]
    b = jaxdp.simulate(algorithms.PPDC(), prob, net, algorithms.PPDCParams(u_x=0.0),
                       jax.random.key(0), steps=50)[1]
    chex.assert_trees_all_close(a, b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ["atc", "prox_skip"])
def test_biased_and_randomized_methods_descend(name):
    """ATC (an O(α) bias) and ProxSkip (random communication rounds, two seeds) cut the distance
    to x* by three orders of magnitude."""
    prob, net = small_problem("least_squares"), small_network()
    tr = jaxdp.run(algorithms.get(name), prob, net, steps=1500, seeds=2, progress=False)
    assert np.all(tr.final("dist_to_opt") < 1e-3 * float(jnp.sum(prob.x_star ** 2)))


@pytest.mark.parametrize("name", ["k_gt", "gt_saga"])
def test_gradient_through_the_run_matches_finite_differences(name):
    """``jax.grad`` of the final distance to x* in the step size α (through local-step scans and
    the SAGA table updates, same minibatches) equals a central finite difference."""
    prob, net = small_problem("logistic"), small_network()
    alg = algorithms.get(name)

    @jax.jit
    def final(alpha):
        params = alg.default_params().replace(alpha=alpha)
        _, rec, _ = jaxdp.simulate(alg, prob, net, params, jax.random.key(3), steps=25,
                                   record_every=25)
        return rec["dist_to_opt"][-1]

    g = jax.grad(final)(0.05)
    h = 1e-6
    fd = (final(0.05 + h) - final(0.05 - h)) / (2 * h)
    assert abs(g) > 1e-6
    np.testing.assert_allclose(g, fd, rtol=1e-5)


# -- parity with decent-bench (fixtures written by benchmarks/decentbench_parity.py) ---------------
FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "decentbench"
FIXTURES = json.loads((FIXTURE_DIR / "fixtures.json").read_text())


@functools.lru_cache(maxsize=None)
def _fixture_inputs():
    probs = {}
    for kind, reg in (("least_squares", {"ridge": 0.0}), ("logistic", {"lam": 0.0})):
        data = np.load(FIXTURE_DIR / f"problem_{kind}.npz")
        probs[kind] = problems.from_arrays(data["features"], data["labels"], loss=kind, reg=reg)
    net = network.build_network(np.asarray(FIXTURES["adjacency"]),
                                weights=np.asarray(FIXTURES["W"]))
    return probs, net


def _decentbench(name):
    return np.load(FIXTURE_DIR / f"{name}.npz")["x"]


@pytest.mark.parametrize("name", sorted(FIXTURES["fixtures"]))
def test_matches_decentbench_fixture(name):
    """jaxdp through ``jaxdp.run`` follows decent-bench's trajectory (same problem, W, x⁰ = 0,
    float64) to 1e-10, aligned by the fixture's documented step map."""
    entry = FIXTURES["fixtures"][name]
    probs, net = _fixture_inputs()
    np.testing.assert_allclose(net.dense("W"), np.asarray(FIXTURES["W"]), rtol=0, atol=1e-15)
    ref = _decentbench(name)
    per, shift = entry["jaxdp_steps_per_iteration"], entry["decentbench_iteration_offset"]
    steps = per * (ref.shape[0] - 1 - shift)
    alg = algorithms.get(entry["jaxdp_name"], **entry["jaxdp_config"])
    params = alg.default_params().replace(**entry["jaxdp_params"])
    tr = jaxdp.run(alg, probs[entry["problem"]], net, params, steps=steps, record_every=steps,
                   observe=True, progress=False)
    ours = np.concatenate([np.zeros((1,) + ref.shape[1:]), tr.observed["models"][0]])
    np.testing.assert_allclose(ours[::per], ref[shift:], rtol=0, atol=1e-10)
    assert np.abs(ref[-1]).max() > 1e-2  # the trajectory moved away from x⁰ = 0


def _grads(problem, X):
    return np.asarray(problem.local_grads(jnp.asarray(X)))


def test_decentbench_ed_is_nids_after_the_first_step():
    """The documented ED/NIDS relation on decent-bench's ED trajectory: x¹ = W̄(x⁰ − α∇F(x⁰))
    (NIDS's x¹ = x⁰ − α∇F(x⁰) is different), then NIDS's recursion
    x^{k+1} = W̄(2x^k − x^{k−1} − α(∇F(x^k) − ∇F(x^{k−1})))."""
    entry = FIXTURES["fixtures"]["ed"]
    probs, _ = _fixture_inputs()
    prob, alpha = probs[entry["problem"]], entry["jaxdp_params"]["alpha"]
    X = _decentbench("ed")[:40]
    Wbar = 0.5 * (np.eye(X.shape[1]) + np.asarray(FIXTURES["W"]))
    G = np.stack([_grads(prob, x) for x in X])
    np.testing.assert_allclose(X[1], Wbar @ (X[0] - alpha * G[0]), atol=1e-13)
    assert np.abs(X[1] - (X[0] - alpha * G[0])).max() > 1e-3
    for k in range(1, len(X) - 1):
        pred = Wbar @ (2 * X[k] - X[k - 1] - alpha * (G[k] - G[k - 1]))
        np.testing.assert_allclose(X[k + 1], pred, atol=1e-13)


def test_decentbench_atc_is_adapt_then_combine_not_dgd():
    """decent-bench's ATC obeys x⁺ = W(x − α∇F(x)) and is not DGD's x⁺ = Wx − α∇F(x)."""
    entry = FIXTURES["fixtures"]["atc"]
    assert FIXTURES["fixtures"]["dgd"]["decentbench_kwargs"] == entry["decentbench_kwargs"]
    probs, _ = _fixture_inputs()
    prob, alpha = probs[entry["problem"]], entry["jaxdp_params"]["alpha"]
    W = np.asarray(FIXTURES["W"])
    X = _decentbench("atc")[:40]
    for k in range(len(X) - 1):
        np.testing.assert_allclose(X[k + 1], W @ (X[k] - alpha * _grads(prob, X[k])), atol=1e-13)
    assert np.abs(X - _decentbench("dgd")[:40]).max() > 1e-3


def test_static_config_and_params_are_checked():
    with pytest.raises(ValueError, match=r"k_gt: local_steps must be an integer >= 1 \(a count .*"
                                         r"loops and shapes\); got 0"):
        algorithms.KGT(local_steps=0)
    with pytest.raises(ValueError, match=r"gt_saga: batch_size must be an integer >= 1 \(.*\); "
                                         r"got 0"):
        algorithms.GTSAGA(batch_size=0)
    with pytest.raises(ValueError, match=r"got 2\.0"):  # a float count is refused, by value
        algorithms.KGT(local_steps=2.0)
    assert algorithms.KGT(local_steps=np.int64(2)).local_steps == 2  # NumPy ints are counts
    prob, net = small_problem(), small_network()
    with pytest.raises(ValueError, match="batch_size=9 exceeds the 8 samples of agent 0"):
        jaxdp.run(algorithms.GTSARAH(batch_size=9), prob, net, steps=2, progress=False)
    with pytest.raises(ValueError, match=r"ProxSkipParams.chi must be >= 1; got 0.5"):
        jaxdp.run(algorithms.ProxSkip(), prob, net, algorithms.ProxSkipParams(chi=0.5), steps=2,
                  progress=False)
    with pytest.raises(ValueError, match=r"ProxSkipParams.p must be a scalar .* shape \(6,\)"):
        jaxdp.run(algorithms.ProxSkip(), prob, net, algorithms.ProxSkipParams(p=jnp.ones(6)),
                  steps=2, progress=False)
    with pytest.raises(ValueError, match=r"YiPDParams.gamma must be a scalar"):
        jaxdp.run(algorithms.YiPrimalDual(), prob, net, algorithms.YiPDParams(gamma=jnp.ones(6)),
                  steps=2, progress=False)
    with pytest.raises(ValueError, match=r"ATGParams.relax must be in \(0, 1\]"):
        jaxdp.run(algorithms.ATG(), prob, net, algorithms.ATGParams(relax=1.5), steps=2,
                  progress=False)
