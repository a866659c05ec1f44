"""The non-private baselines: per-node reference match, contract properties, convergence."""
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms
from tests.harness import Case, reference_match, small_network, small_problem
from tests.reference import baselines as ref


def _admm_ref(local_steps):
    def step(st, noise, problem, W, p, k):
        net = small_network()
        return ref.admm(st, noise, problem, W, p, k, local_steps,
                        np.asarray(net.senders), np.asarray(net.receivers))
    return step


CASES = [
    Case("dgd", ref.dgd),
    Case("dgd", ref.dgd, overrides={"gamma": 0.5}, problem="nonconvex_logistic"),
    Case("dp_dgd", functools.partial(ref.dgd, private=True), config={"sampler": "float"},
         overrides={"clip": 0.5, "sigma": 0.3},
         problem="logistic"),
    Case("extra", ref.extra),
    Case("extra", ref.extra, problem="logistic"),
    Case("nids", ref.nids),
    Case("nids", ref.nids, problem="nonconvex_logistic"),
    Case("diging", ref.diging),
    Case("diging", ref.diging, problem="logistic"),
    Case("diging", ref.diging, overrides={"alpha": jnp.linspace(0.02, 0.08, 6)}),
    Case("admm", _admm_ref(10)),
    Case("admm", _admm_ref(3), config={"local_steps": 3}, overrides={"relax": 0.8},
         problem="logistic"),
]
IDS = [c.id for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stacked_step_matches_per_node_reference(case):
    """Fed the same noise, the JAX step equals the per-node loop to 1e-10 at every step."""
    reference_match(case)


@pytest.mark.parametrize("case", CASES[::2], ids=IDS[::2])
def test_edge_backend_equals_dense(case):
    """Dense and edge-list mixing give the same trajectory."""
    runs = []
    for backend in ("dense", "edges"):
        alg, prob, net, params = case.build(backend)
        _, rec, _ = jaxdp.simulate(alg, prob, net, params, jax.random.key(1), steps=20)
        runs.append(rec)
    chex.assert_trees_all_close(*runs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES[::3], ids=IDS[::3])
def test_jit_equals_no_jit(case):
    alg, prob, net, params = case.build()
    run = lambda: jaxdp.simulate(alg, prob, net, params, jax.random.key(2), steps=5)[1]  # noqa
    jitted = jax.jit(run)()
    with jax.disable_jit():
        plain = run()
    chex.assert_trees_all_close(jitted, plain, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["extra", "nids", "diging", "admm"])
def test_exact_methods_converge_to_reference_solution(name):
    """On a strongly convex problem the exact methods reach x* to near machine precision."""
    prob = small_problem("least_squares")
    net = small_network()
    alg = algorithms.get(name)
    tr = jaxdp.run(alg, prob, net, steps=1500, seeds=1, progress=False)
    assert tr.final("dist_to_opt")[0] < 1e-18
    assert tr.final("consensus_error")[0] < 1e-18


def test_dgd_constant_step_stalls_but_decaying_step_approaches():
    """DGD with constant α stops at an O(α) neighbourhood; a decaying step goes further."""
    prob, net = small_problem("least_squares"), small_network()
    const = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=0.1), steps=2000,
                      progress=False).final("dist_to_opt")[0]
    half = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=0.05), steps=4000,
                     progress=False).final("dist_to_opt")[0]
    assert 1e-10 < half < const
    assert 2.0 < const / half < 8.0  # squared distance scales like α²


def test_dp_dgd_privacy_report_matches_zcdp_closed_form():
    """DP-DGD: ρ per step = (2C)²/(2σ²C²) = 2/σ², composed over K steps, for the real-valued
    mechanism (the float sampler's "ideal" curve); on the lattice Δ = 2C(1 + (d + 4)u) + γ(1 +
    2uL)√d, γ = σC/R, at δ(1 − 2⁻⁶)."""
    from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION

    prob, net = small_problem("logistic"), small_network()
    p = algorithms.DPDGDParams(sigma=4.0, clip=0.7)
    ideal = algorithms.DPDGD(sampler="float").privacy(prob, net, p, steps=50)
    rho = 50 * 2 / 4.0**2
    expected = rho + 2 * np.sqrt(rho * np.log(1 / ideal.delta))
    np.testing.assert_allclose(ideal.final("ideal zcdp"), expected, rtol=1e-9)
    assert np.all(ideal.final("ideal rdp") <= ideal.final("ideal zcdp") + 1e-9)
    report = algorithms.DPDGD().privacy(prob, net, p, steps=50)
    u, d = 2.0 ** -53, prob.dim  # the tests run in float64
    sens = 2 * 0.7 * (1 + (d + 4) * u) + 4.0 * 0.7 / GAUSSIAN_RESOLUTION * (1 + 2 * u * 2 ** 50) \
        * np.sqrt(d)
    rho = 50 * sens ** 2 / (2 * (4.0 * 0.7) ** 2)
    delta = report.delta * (1 - 2.0 ** -6)
    np.testing.assert_allclose(report.final("zcdp"), rho + 2 * np.sqrt(rho * np.log(1 / delta)),
                               rtol=1e-9)
    assert np.all(report.final("rdp") <= report.final("zcdp") + 1e-9)


def test_params_validation_names_the_bad_value():
    prob, net = small_problem(), small_network()
    with pytest.raises(ValueError, match=r"DGDParams.alpha must be > 0 .* got -0.1"):
        jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=-0.1), steps=2)
    with pytest.raises(ValueError, match=r"alpha must be > 0 for every agent; got 0 at agent 2"):
        alpha = jnp.array([0.1, 0.1, 0.0, 0.1, 0.1, 0.1])
        jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=alpha), steps=2)
    with pytest.raises(ValueError, match=r"shape \(6,\)"):
        jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=jnp.ones(3)), steps=2)
    with pytest.raises(TypeError, match="params must be DGDParams"):
        jaxdp.run(algorithms.DGD(), prob, net, algorithms.StepParams(), steps=2)
    with pytest.raises(ValueError, match="unknown algorithm 'nope'; known: admm"):
        algorithms.get("nope")


def test_per_agent_step_sizes_are_aligned_with_agents():
    """A (N,) step size scales agent rows, not coordinates (rank promotion is 'raise' in tests)."""
    prob, net = small_problem(), small_network()
    alpha = jnp.linspace(0.01, 0.06, 6)
    alg = algorithms.DGD()
    state = alg.init(None, prob, net, algorithms.DGDParams(alpha=alpha))
    state, _ = alg.step(state, {}, prob, net, algorithms.DGDParams(alpha=alpha), 0)
    x1 = -alpha[:, None] * prob.local_grads(jnp.zeros((6, 3)))
    np.testing.assert_allclose(state.x, x1, atol=1e-14)


def test_registry_keys_match_class_names_and_exports():
    for key, cls in algorithms.REGISTRY.items():
        assert cls.name == key
        assert cls.__name__ in algorithms.__all__
        assert getattr(algorithms, cls.__name__) is cls
