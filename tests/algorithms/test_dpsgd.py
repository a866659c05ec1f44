"""Decentralized DP-SGD family (DP-DSGD, DP-DSGT): per-node references, releases counted from the
program, the privacy report against the shared event builder, model problems, bad input."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.algorithms.ltadmm import privacy as shared
from jaxdp.privacy import calibrate_params
from tests.harness import Case, reference_match, small_network, small_problem
from tests.reference import dpsgd as ref

CASES = [
    Case("dp_dsgd", functools.partial(ref.dp_dsgd, batch_size=3),
         config={"sampler": "float", "batch_size": 3}, problem="logistic"),
    Case("dp_dsgd", functools.partial(ref.dp_dsgd, sampling="fixed"),
         config={"sampler": "float", "batch_size": 4, "sampling": "fixed"},
         overrides={"alpha": jnp.linspace(0.05, 0.3, 6), "clip": 0.2}),
    Case("dp_dsgt", functools.partial(ref.dp_dsgt, batch_size=3),
         config={"sampler": "float", "batch_size": 3}, overrides={"clip": 0.3},
         problem="nonconvex_logistic"),
    Case("dp_dsgt", functools.partial(ref.dp_dsgt, sampling="fixed"),
         config={"sampler": "float", "batch_size": 5, "sampling": "fixed"},
         overrides={"sigma": jnp.linspace(0.0, 0.5, 6)}, problem="logistic"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_stacked_step_matches_per_node_reference(case):
    """Fed the same minibatches and noise, the JAX step equals the per-node loop to 1e-10."""
    reference_match(case, steps=10)


@pytest.mark.parametrize("name", ["dp_dsgd", "dp_dsgt"])
def test_one_release_per_step_counted_from_the_program(name):
    """Every ``add_noise`` call of K steps, read from the running program: K calls, each one
    (N, d) noisy gradient — the tracker adds none (it is post-processing), so the report's K
    releases per agent are all there is."""
    from tests.release_tap import tapped_run

    prob, net = small_problem("logistic"), small_network()
    alg = algorithms.get(name, batch_size=3)
    run = tapped_run(alg, prob, net, alg.default_params(), steps=4)
    assert len(run.releases) == 4
    assert all(r.r.size == prob.n_agents * prob.dim for r in run.releases)
    report = alg.privacy(prob, net, alg.default_params(), 4)
    assert int(report.steps[-1]) == 4


@pytest.mark.parametrize("name", ["dp_dsgd", "dp_dsgt"])
@pytest.mark.parametrize("sampling, relation", [("poisson", "add_remove_record"),
                                                ("fixed", "replace_record")])
def test_report_is_the_shared_event_builders_finite_epsilon(name, sampling, relation):
    """At N = 6, m = 8, b = 4, C = 1, σ = 1 (noise multiplier 4), K = 20, δ = 1e-5: a finite
    ε under the sampling's relation, equal to the report built from
    :func:`jaxdp.algorithms.ltadmm.privacy.privacy_events` (PORTER's builder); the float sampler's
    report is inf (idealized curves only)."""
    prob, net = small_problem("logistic"), small_network()
    declared = {"records": 8} if sampling == "poisson" else {}  # the public n: q = 4/8
    alg = algorithms.get(name, batch_size=4, sampling=sampling, **declared)
    params, steps, delta = algorithms.DPSGDParams(sigma=1.0), 20, 1e-5
    report = alg.privacy(prob, net, params, steps, delta=delta)
    assert report.relation == relation
    eps = np.asarray(report.epsilon)
    assert np.all(np.isfinite(eps)) and np.all(eps > 0) and np.all(eps < 26.6), eps
    events = shared.privacy_events(alg, prob, params, steps)
    assert events.sampling == ("poisson" if sampling == "poisson" else "without_replacement")
    np.testing.assert_allclose(
        eps, shared.epsilon(alg, prob, params, steps, delta=delta), rtol=1e-9)
    porter = algorithms.PORTER(batch_size=4, sampling=sampling, **declared)
    same = shared.epsilon(porter, prob, algorithms.PORTERParams(sigma=1.0), steps, delta=delta)
    np.testing.assert_allclose(eps, same, rtol=1e-9)  # one release per step, same (Δ, σ, q)
    floats = dataclasses.replace(alg, sampler="float").privacy(prob, net, params, steps,
                                                               delta=delta)
    assert np.all(np.isinf(floats.epsilon))


@pytest.mark.parametrize("name", ["dp_dsgd", "dp_dsgt"])
def test_calibrated_sigma_meets_the_target(name):
    prob, net = small_problem("logistic"), small_network()
    alg = algorithms.get(name, batch_size=4, records=8)
    params = shared.calibrate_noise(alg, prob, algorithms.DPSGDParams(), 50, 8.0, delta=1e-5)
    eps = alg.privacy(prob, net, params, 50, delta=1e-5).epsilon
    assert np.max(eps) <= 8.0 and np.max(eps) > 7.9


@pytest.mark.parametrize("name", ["dp_dsgd", "dp_dsgt"])
def test_runs_on_a_model_problem_and_learns(name):
    """Both train a small MLP on digits (a ModelProblem) and reach a decent accuracy quickly
    (low noise); on a linear problem they reduce the loss."""
    prob = problems.digits_mlp(n_agents=4, hidden=16, seed=0, dtype=jnp.float64)
    net = network.make_network("ring", 4)
    alg = algorithms.get(name, batch_size=16)
    params = algorithms.DPSGDParams(alpha=0.5, clip=1.0, sigma=0.01)
    result = jaxdp.run(alg, prob, net, params, steps=150, progress=False)
    acc = float(np.asarray(result.metrics["test_accuracy"])[0, -1])
    assert acc > 0.6, acc


def test_batch_larger_than_a_shard_gives_the_clear_error_before_accounting():
    """batch_size > m_i: the shared event builder runs the minibatch check first (calibration
    calls privacy() before validation), for every minibatched algorithm."""
    prob, net = small_problem("logistic"), small_network()  # m = 8 per agent
    for alg, params in ((algorithms.PORTER(batch_size=9), algorithms.PORTERParams()),
                        (algorithms.PORTER(batch_size=9, sampling="poisson"),
                         algorithms.PORTERParams()),
                        (algorithms.DPDSGD(batch_size=9), algorithms.DPSGDParams())):
        with pytest.raises(ValueError, match=r"batch_size=9 exceeds the (8 samples of agent 0|"
                                             r"shard capacity M = 8)"):
            alg.privacy(prob, net, params, 10)
        with pytest.raises(ValueError, match=r"batch_size=9 exceeds"):
            calibrate_params(alg, prob, net, params, 10, epsilon=4.0, delta=1e-5)
