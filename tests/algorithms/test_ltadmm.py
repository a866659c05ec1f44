"""Paper 004's family (LT-ADMM-DP, LT-ADMM, PORTER, PriSMA): references, invariants, errata,
costs and the reproductions."""
import dataclasses
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
from jaxdp.algorithms._sampling import (
    draw_batches,
    draw_poisson,
    poisson_rate,
    per_sample_clipped_mean,
    per_sample_grads,
)
from jaxdp.algorithms.ltadmm.algorithm import CostModel, LTADMMEdgeState, paper_metrics, soft_clip
from jaxdp.experiments import REPRODUCTIONS
from tests.harness import Case, reference_match, small_network, small_problem
from tests.reference import ltadmm as ref


def _lt_ref(local_steps, clip="soft", **sampling):
    net = small_network()
    return functools.partial(ref.lt_admm_dp, senders=np.asarray(net.senders),
                             receivers=np.asarray(net.receivers), local_steps=local_steps,
                             clip=clip, **sampling)


def _vr_ref(local_steps, **options):
    net = small_network()
    return functools.partial(ref.lt_admm_vr, senders=np.asarray(net.senders),
                             receivers=np.asarray(net.receivers), local_steps=local_steps,
                             **options)


VR_CASES = [
    Case("lt_admm_vr", _vr_ref(3), config={"batch_size": 3, "local_steps": 3},
         overrides={"gamma": 0.2, "rho": 0.5}, problem="logistic"),
    Case("lt_admm_vr", _vr_ref(2, table="round", refresh="next"),
         config={"batch_size": 2, "local_steps": 2, "table": "round", "refresh": "next",
                 "variant": "paper", "x0": "random"},
         overrides={"gamma": jnp.linspace(0.05, 0.3, 6), "beta": jnp.linspace(0.3, 0.1, 6),
                    "rho": 0.7}, problem="nonconvex_logistic"),
    Case("lt_admm_vr", _vr_ref(4, refresh="next"), config={"batch_size": 5, "refresh": "next"}),
]

CASES = [
    *VR_CASES,
    Case("lt_admm_dp", _lt_ref(3), config={"sampler": "float", "batch_size": 3, "local_steps": 3}),
    Case("lt_admm_dp", _lt_ref(2, "per_sample"),
         config={"sampler": "float", "batch_size": 4, "local_steps": 2, "clip": "per_sample"},
         overrides={"zeta": 0.3}, problem="logistic"),
    Case("lt_admm_dp", _lt_ref(3), config={"sampler": "float", "batch_size": 5, "local_steps": 3, "variant": "paper",
                                           "x0": "random"},
         overrides={"zeta": 0.2, "sigma_e": 0.1, "rho": 0.7}, problem="nonconvex_logistic"),
    Case("lt_admm", _lt_ref(4), config={"sampler": "float", "batch_size": 8, "local_steps": 4}),
    Case("porter", ref.porter, config={"sampler": "float", "batch_size": 3}, overrides={"gamma": 0.5},
         problem="logistic"),
    Case("porter", functools.partial(ref.porter, compress_k=2),
         config={"sampler": "float", "batch_size": 3, "compress_k": 2}),
    Case("prisma", ref.prisma, config={"sampler": "float", "batch_size": 3}, overrides={"eta": 0.3, "clip2": 0.05},
         problem="nonconvex_logistic"),
    # Poisson minibatches: each row with probability b/m_i, the sum divided by b
    Case("lt_admm_dp", _lt_ref(2, sampling="poisson", batch_size=3),
         config={"sampler": "float", "batch_size": 3, "local_steps": 2, "sampling": "poisson"}),
    Case("lt_admm_dp", _lt_ref(2, "per_sample", sampling="poisson", batch_size=4),
         config={"sampler": "float", "batch_size": 4, "local_steps": 2, "clip": "per_sample", "sampling": "poisson"},
         overrides={"zeta": 0.3}, problem="logistic"),
    Case("porter", functools.partial(ref.porter, sampling="poisson", batch_size=3),
         config={"sampler": "float", "batch_size": 3, "sampling": "poisson"}, overrides={"gamma": 0.5},
         problem="logistic"),
    Case("prisma", functools.partial(ref.prisma, sampling="poisson", batch_size=3),
         config={"sampler": "float", "batch_size": 3, "sampling": "poisson"}, overrides={"eta": 0.3, "clip2": 0.05},
         problem="nonconvex_logistic"),
]
IDS = [c.id for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stacked_step_matches_per_node_reference(case):
    """Fed the same minibatches and noise, the JAX step equals the per-node loop to 1e-10."""
    reference_match(case, steps=10)


@pytest.mark.parametrize("case", VR_CASES, ids=[c.id for c in VR_CASES])
def test_lt_admm_vr_matches_its_reference_on_the_edge_list_backend(case):
    """The same per-node SAGA loop on the edge-list network backend (dense: the table above)."""
    reference_match(case, steps=10, backend="edges")


def test_per_agent_step_sizes_match_the_reference():
    """(N,) step sizes and noise scales scale agent rows (the reference indexes them per agent)."""
    case = Case("lt_admm_dp", _lt_ref(2), config={"sampler": "float", "batch_size": 3,
                                                  "local_steps": 2},
                overrides={"gamma": jnp.linspace(0.05, 0.2, 6), "beta": jnp.linspace(0.3, 0.1, 6),
                           "sigma_e": jnp.linspace(0.0, 0.5, 6)})
    reference_match(case, steps=5)


def _trajectory(alg, prob, net, params, steps, seed=1):
    run = jax.jit(lambda p: jaxdp.simulate(alg, prob, net, p, jax.random.key(seed), steps=steps,
                                           observe=True)[2]["models"])
    return run(params)


def test_node_sum_form_equals_edge_form():
    """The node sums y = AᵀZ, ỹ = AᵀPZ give the edge form's trajectory (irregular graph, 25 rounds,
    nonzero x_0 and the printed z_0 so that y_0, ỹ_0 are not zero)."""
    prob, net = small_problem("logistic"), small_network()
    params = algorithms.LTADMMDPParams(zeta=0.5, sigma_e=0.2, rho=0.4)
    runs = [_trajectory(algorithms.LTADMMDP(batch_size=3, form=form, variant="paper", x0="random"),
                        prob, net, params, 25) for form in ("edge", "node")]
    chex.assert_trees_all_close(runs[0], runs[1], rtol=0, atol=1e-10)
    assert float(jnp.max(jnp.abs(runs[0]))) > 0.05  # the trajectory moved


def test_edge_list_backend_equals_dense():
    """The node form's adjacency product agrees across network backends."""
    prob = small_problem("logistic")
    alg = algorithms.LTADMMDP(batch_size=3, form="node")
    runs = [_trajectory(alg, prob, small_network(backend=b), alg.default_params(), 15)
            for b in ("dense", "edges")]
    chex.assert_trees_all_close(runs[0], runs[1], rtol=0, atol=1e-12)


def _states(alg, prob, net, params, rounds, gamma_zero=False):
    """Host loop over ``step`` (``gamma_zero`` bypasses validation to switch gradients off)."""
    key = jax.random.key(3)
    state = alg.init(jax.random.fold_in(key, 99), prob, net, params)
    if gamma_zero:
        params = params.replace(gamma=0.0)

    @jax.jit
    def advance(state, k):
        noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
        return alg.step(state, noise, prob, net, params, k)[0]

    out = [state]
    for k in range(rounds):
        out.append(advance(out[-1], k))
    return out


@pytest.mark.parametrize("variant", ["fixed", "paper"])
def test_bridge_variables_conserve_rho_weighted_degree_sum(variant):
    """1ᵀZ_k = ρ Σ_i d_i x_{i,k} for every k ≥ 1 (notes §3.2), from k = 0 for the fixed z_0."""
    prob, net = small_problem("nonconvex_logistic"), small_network()
    params = algorithms.LTADMMDPParams(rho=0.7, zeta=0.5, sigma_e=0.3)
    alg = algorithms.LTADMMDP(batch_size=3, variant=variant, x0="random")
    states = _states(alg, prob, net, params, 15)
    residual = [float(jnp.max(jnp.abs(jnp.sum(s.z, 0) - 0.7 * jnp.sum(net.degrees[:, None] * s.x,
                                                                          0)))) for s in states]
    assert max(residual[1:]) < 1e-12
    assert (residual[0] < 1e-12) == (variant == "fixed")


@pytest.mark.parametrize("variant", ["fixed", "paper"])
def test_paper_initialisation_moves_the_mean_in_round_zero(variant):
    """Erratum: with z_ij,0 = x_i,0 (Alg. 1 l.1) the consensus terms do not cancel in round 0, so
    x̄ moves without any gradient; with z_ij,0 = ρ x_i,0 the mean obeys (13) from the start."""
    prob, net = small_problem("least_squares"), small_network()
    params = algorithms.LTADMMDPParams(rho=0.5, sigma_e=0.0)
    alg = algorithms.LTADMMDP(batch_size=3, variant=variant, x0="random")
    means = np.array([np.asarray(jnp.mean(s.x, 0)) for s in _states(alg, prob, net, params, 6,
                                                                  gamma_zero=True)])
    drift = np.abs(np.diff(means, axis=0)).max(axis=1)  # |x̄_{k+1} − x̄_k| per round
    assert drift[1:].max() < 1e-12  # (13) with zero gradients, once the invariant holds
    assert (drift[0] > 1e-3) == (variant == "paper")


def test_non_private_lt_admm_converges_exactly_on_a_strongly_convex_problem():
    """Full-batch LT-ADMM (σ_e = 0, ζ = ∞) reaches the exact minimizer and consensus (notes R9)."""
    prob, net = small_problem("least_squares"), small_network()
    alg = algorithms.LTADMM(batch_size=8, local_steps=4)
    params = alg.default_params().replace(gamma=0.2, beta=0.1, rho=0.5)  # β < 2/(τλ_u ρ) = 0.195
    tr = jaxdp.run(alg, prob, net, params, steps=400, record_every=400, progress=False)
    assert tr.final("dist_to_opt")[0] < 1e-20
    assert tr.final("consensus_error")[0] < 1e-20


def test_soft_clipping_biases_the_fixed_point_under_heterogeneity():
    """With ζ < ∞ the limit is a consensus point where Σ_i μ_i ∇f_i = 0, not x* (notes §3.2)."""
    prob, net = small_problem("least_squares"), small_network()
    alg = algorithms.LTADMMDP(batch_size=8, local_steps=4)
    params = algorithms.LTADMMDPParams(gamma=0.2, beta=0.1, rho=0.5, zeta=0.3, sigma_e=0.0)
    tr = jaxdp.run(alg, prob, net, params, steps=600, record_every=600, progress=False)
    x = tr.final_models[0]
    assert tr.final("consensus_error")[0] < 1e-20
    g = np.asarray(prob.local_grads(jnp.asarray(x)))
    mu = 0.3 / (0.3 + np.linalg.norm(g, axis=1, keepdims=True))
    assert np.linalg.norm((mu * g).sum(0)) < 1e-10  # fixed point of the clipped dynamics
    assert np.linalg.norm(g.sum(0)) > 1e-3  # but not a stationary point of f
    assert tr.final("dist_to_opt")[0] > 1e-8


def test_minibatches_are_uniform_subsets_without_replacement():
    """Floyd's sampler: distinct rows in [0, m_i), each row drawn with frequency b/m_i."""
    rows = jnp.array([5, 12, 30], jnp.int32)
    draws = np.asarray(draw_batches(jax.random.key(0), rows, 4, (20000,)))  # (S, N, b)
    assert draws.shape == (20000, 3, 4) and draws.dtype == np.int32
    srt = np.sort(draws, axis=-1)
    assert np.all(np.diff(srt, axis=-1) > 0)  # distinct within every batch
    for i, m in enumerate(np.asarray(rows)):
        assert draws[:, i].min() == 0 and draws[:, i].max() == m - 1
        freq = np.bincount(draws[:, i].ravel(), minlength=m) / 20000
        assert np.max(np.abs(freq - 4 / m)) < 5 * np.sqrt((4 / m) * (1 - 4 / m) / 20000)
    pairs = np.mean(np.any(draws[:, 0] == 0, -1) & np.any(draws[:, 0] == 1, -1))
    assert abs(pairs - 4 * 3 / (5 * 4)) < 0.02  # pairwise inclusion b(b−1)/(m(m−1)) = 0.6


def test_every_subset_is_equally_likely():
    """All C(6, 3) = 20 subsets of 6 rows appear with frequency 1/20 (chi-square, 20000 draws)."""
    from scipy import stats

    draws = np.sort(np.asarray(draw_batches(jax.random.key(3), jnp.array([6], jnp.int32), 3,
                                            (20000,)))[:, 0], axis=-1)
    codes = (draws * np.array([36, 6, 1])).sum(-1)
    _, counts = np.unique(codes, return_counts=True)
    assert counts.size == 20
    assert stats.chisquare(counts).pvalue > 1e-3


def _program_size(batch_size: int) -> int:
    """Lines of the printed jaxpr of one sampler call, loop bodies included (the unrolled Floyd
    grew like b²)."""
    jaxpr = jax.make_jaxpr(lambda k: draw_batches(k, jnp.full((4,), 400, jnp.int32), batch_size,
                                                  (3,)))(jax.random.key(0))
    return str(jaxpr).count("\n")


def test_sampler_program_size_does_not_grow_with_the_batch_size():
    """b = 8 and b = 200 give the same program (a fori_loop), so compile time is flat in b."""
    assert _program_size(8) == _program_size(200)
    hlo = [len(jax.jit(lambda k, b=b: draw_batches(k, jnp.full((4,), 400, jnp.int32), b))
               .lower(jax.random.key(0)).as_text()) for b in (8, 200)]
    assert abs(hlo[1] - hlo[0]) < 200  # only the printed constants differ


def test_poisson_minibatches_keep_each_real_row_with_probability_b_over_m():
    rows = jnp.arange(10)[None, :] < jnp.array([[10], [5]])  # m = 10 and 5 (padding after)
    rate = poisson_rate(2, (10, 5), 10, 2, jnp)  # declared n = m: q = 2/n
    w = np.asarray(draw_poisson(jax.random.key(4), rows, rate, (40000,), jnp.float64))
    assert set(np.unique(w)) <= {0.0, 1.0} and np.all(w[:, 1, 5:] == 0)
    freq = w.mean(0)
    np.testing.assert_allclose(freq[0], 0.2, atol=5 * np.sqrt(0.16 / 40000))
    np.testing.assert_allclose(freq[1, :5], 0.4, atol=5 * np.sqrt(0.24 / 40000))
    both = np.mean(w[:, 0, 0] * w[:, 0, 1])  # independent rows
    assert abs(both - 0.04) < 5 * np.sqrt(0.04 / 40000)


def test_per_sample_gradients_average_to_the_minibatch_gradient():
    prob = small_problem("nonconvex_logistic")
    X = jax.random.normal(jax.random.key(1), (6, 3))
    batch = draw_batches(jax.random.key(2), jnp.full((6,), 8, jnp.int32), 5)
    per = per_sample_grads(prob, X, batch)
    np.testing.assert_allclose(per.mean(1), prob.local_grads(X, batch), atol=1e-14)
    np.testing.assert_allclose(per_sample_clipped_mean(prob, X, batch, jnp.inf), per.mean(1),
                               atol=1e-14)
    clipped = per_sample_clipped_mean(prob, X, batch, 1e-3)
    assert np.all(np.linalg.norm(clipped, axis=1) <= 1e-3 + 1e-15)


def test_soft_clip_is_the_papers_factor_and_infinite_zeta_keeps_the_gradient():
    g = jnp.array([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4]])
    np.testing.assert_allclose(soft_clip(g, 1.0), g * jnp.array([[1 / 6.0], [1.0], [1 / 1.5]]),
                               atol=1e-15)
    np.testing.assert_allclose(soft_clip(g, jnp.array([1.0, 2.0, jnp.inf])),
                               g * jnp.array([[1 / 6.0], [1.0], [1.0]]), atol=1e-15)


def test_costs_give_table_one_and_count_the_messages():
    """Table I: τ(t_g + 2t_c) = 8.4, τ(2t_g + t_c) = 4.8, τt_g + t_c = 1.4 at τ = 4; the declared
    communication rounds are the message streams each step returns."""
    cost = CostModel()
    expected = {"porter": 8.4, "prisma": 4.8, "lt_admm_dp": 1.4}
    prob, net = small_problem("logistic"), small_network()
    for name, time in expected.items():
        alg = algorithms.get(name, batch_size=3)
        assert cost.time_per_iterations(alg, 4) == pytest.approx(time, rel=1e-12)
        params = alg.default_params()

        def messages(key, alg=alg, params=params):
            state = alg.init(key, prob, net, params)
            return alg.step(state, alg.noise(key, state, params, 0), prob, net, params, 0)[1]

        assert len(jax.eval_shape(messages, jax.random.key(0))) == alg.costs()[1]
    np.testing.assert_allclose(cost.time_axis(algorithms.LTADMMDP(), [0, 10]), [0.0, 14.0])


def test_bad_configuration_and_params_are_named():
    prob, net = small_problem(), small_network()
    with pytest.raises(ValueError, match="clip must be one of"):
        algorithms.LTADMMDP(clip="hard")
    with pytest.raises(ValueError, match=r"lt_admm_dp: local_steps must be an integer >= 1 \(a count .*\); got 0"):
        algorithms.LTADMMDP(local_steps=0)
    with pytest.raises(ValueError, match="batch_size=9 exceeds the 8 samples of agent 0"):
        jaxdp.run(algorithms.LTADMMDP(batch_size=9), prob, net, steps=2, progress=False)
    with pytest.raises(ValueError, match=r"LTADMMDPParams.sigma_e must be >= 0 .* got -0.1"):
        jaxdp.run(algorithms.LTADMMDP(batch_size=3), prob, net,
                  algorithms.LTADMMDPParams(sigma_e=-0.1), steps=2, progress=False)
    with pytest.raises(ValueError, match=r"LTADMMDPParams.zeta must be > 0"):
        jaxdp.run(algorithms.LTADMMDP(batch_size=3), prob, net,
                  algorithms.LTADMMDPParams(zeta=0.0), steps=2, progress=False)
    with pytest.raises(TypeError, match="params must be LTADMMDPParams"):
        jaxdp.run(algorithms.LTADMMDP(batch_size=3), prob, net, algorithms.PORTERParams(),
                  steps=2, progress=False)
    with pytest.raises(ValueError, match=r"PriSMAParams.eta must be in \[0, 1\]"):
        jaxdp.run(algorithms.PriSMA(batch_size=3), prob, net, algorithms.PriSMAParams(eta=1.5),
                  steps=2, progress=False)
    with pytest.raises(ValueError, match="compress_k must be an integer >= 0"):
        algorithms.PORTER(compress_k=-1)
    padded = problems.from_arrays(np.ones((2, 4, 2)), np.ones((2, 4)), loss="logistic",
                                  reg={"lam": 0.1}, mask=np.array([[1, 0, 1, 1], [1, 1, 1, 1.]]))
    with pytest.raises(ValueError, match="agent 0's real rows must come first"):
        jaxdp.run(algorithms.LTADMMDP(batch_size=2), padded, network.make_network("path", 2),
                  steps=2, progress=False)


def test_gradient_through_a_run_matches_finite_differences():
    """d loss / d(γ, σ_e) through 3 rounds of LT-ADMM-DP (minibatches and noise held fixed; the
    float sampler: the lattice's rounding is piecewise constant, its tangent straight-through)."""
    prob, net = small_problem("logistic"), small_network()
    alg = algorithms.LTADMMDP(batch_size=3, local_steps=2, sampler="float")
    base = algorithms.LTADMMDPParams(zeta=0.5, sigma_e=0.3)

    def loss(gamma, sigma):
        p = base.replace(gamma=gamma, sigma_e=sigma)
        return jaxdp.final_metrics(alg, prob, net, p, jax.random.key(0), steps=3,
                                   metrics=paper_metrics)["loss"]

    grads = jax.jit(jax.grad(loss, argnums=(0, 1)))(0.1, 0.3)
    value, h = jax.jit(loss), 1e-6
    fd = ((value(0.1 + h, 0.3) - value(0.1 - h, 0.3)) / (2 * h),
          (value(0.1, 0.3 + h) - value(0.1, 0.3 - h)) / (2 * h))
    np.testing.assert_allclose(grads, fd, rtol=1e-5)


def test_paper_metrics_use_the_average_objective_and_training_accuracy():
    prob = problems.nonconvex_logistic(n_agents=4, m=20, d=3, lam=0.01, smoothness=None, seed=1,
                                       test_m=30)
    X = jax.random.normal(jax.random.key(0), (4, 3))
    m = paper_metrics(prob, X)
    x_bar = X.mean(0)
    np.testing.assert_allclose(m["grad_norm"], jnp.linalg.norm(prob.global_grad(x_bar)) / 4)
    acc = np.mean(np.sign(np.asarray(prob.features) @ np.asarray(x_bar)) == np.asarray(prob.labels))
    np.testing.assert_allclose(m["accuracy"], acc)
    assert set(m) == {"grad_norm", "accuracy", "loss", "consensus_error", "test_accuracy"}


@pytest.mark.parametrize("name", ["ltadmm-fig1", "ltadmm-table1"])
def test_reproduction_writes_its_files_and_every_claim(name, tmp_path):
    """Tiny settings: the figure, data and report exist and every claim id is reported."""
    from jaxdp.experiments import ltadmm as exp

    report = REPRODUCTIONS[name](tmp_path, **exp.TINY[name])
    assert (tmp_path / "report.md").exists()
    data = json.loads((tmp_path / "report.json").read_text())
    assert [c["id"] for c in data["claims"]] == list(exp.CLAIMS[name])
    assert all(c["verdict"] in ("reproduced", "not reproduced") for c in data["claims"])
    assert all(Path(f).exists() for f in report.files)
    assert any(str(f).endswith(".png") for f in report.files)


# -- LT-ADMM-VR ---------------------------------------------------------------------------------
def test_lt_admm_vr_node_sum_form_equals_edge_form():
    """As for LT-ADMM: the node sums y = AᵀZ, ỹ = AᵀPZ give the edge form's trajectory."""
    prob, net = small_problem("logistic"), small_network()
    params = algorithms.LTADMMVRParams(gamma=0.2, rho=0.4)
    runs = [_trajectory(algorithms.LTADMMVR(batch_size=3, form=form, variant="paper",
                                            x0="random"), prob, net, params, 25)
            for form in ("edge", "node")]
    chex.assert_trees_all_close(runs[0], runs[1], rtol=0, atol=1e-10)
    assert float(jnp.max(jnp.abs(runs[0]))) > 0.05


def test_lt_admm_vr_estimate_averages_to_the_full_local_gradient():
    """Over all C(8, 2) = 28 minibatches, one SAGA local step from a stale table (after 5 rounds)
    averages to the full-batch LT-ADMM step from the same x and z (E_B g = ∇f_i(φ)); single
    minibatches do not."""
    prob, net = small_problem("logistic"), small_network()
    vr = algorithms.LTADMMVR(batch_size=2, local_steps=1)
    params = algorithms.LTADMMVRParams(gamma=0.3, rho=0.5)
    state = _states(vr, prob, net, params, 5)[-1]
    subsets = [(a, b) for a in range(8) for b in range(a + 1, 8)]
    steps = np.array([vr.step(state, {"batch": jnp.full((1, 6, 2), jnp.array(s))}, prob, net,
                              params, 0)[0].x for s in subsets])
    full = algorithms.LTADMM(batch_size=8, local_steps=1)
    plain = LTADMMEdgeState(x=state.x, z=state.z, n_rows=state.n_rows, rows=state.rows)
    batch = {"batch": jnp.broadcast_to(jnp.arange(8), (1, 6, 8)), "e": jnp.zeros((1, 6, 3))}
    exact = np.asarray(full.step(plain, batch, prob, net, algorithms.LTADMMDPParams(
        **params, zeta=jnp.inf, sigma_e=0.0), 0)[0].x)
    np.testing.assert_allclose(steps.mean(0), exact, rtol=0, atol=1e-13)
    assert np.max(np.abs(steps - exact)) > 1e-4  # each single estimate differs


def test_lt_admm_vr_converges_exactly_where_minibatch_lt_admm_stalls():
    """b = 2 of m = 8 rows, same γ, β, ρ and seeds: the SAGA rounds reach x* to 1e-20, LT-ADMM on
    the plain minibatch mean (6) stays at a noise floor above 1e-8."""
    prob, net = small_problem("least_squares"), small_network()
    params = algorithms.LTADMMVRParams(gamma=0.2, beta=0.1, rho=0.5)
    vr = jaxdp.run(algorithms.LTADMMVR(batch_size=2), prob, net, params, steps=600, seeds=3,
                   record_every=600, progress=False)
    sgd = jaxdp.run(algorithms.LTADMM(batch_size=2), prob, net,
                    algorithms.LTADMMDPParams(**params, zeta=jnp.inf, sigma_e=0.0), steps=600,
                    seeds=3, record_every=600, progress=False)
    assert np.all(vr.final("dist_to_opt") < 1e-20)
    assert np.all(vr.final("consensus_error") < 1e-20)
    assert np.all(sgd.final("dist_to_opt") > 1e-8)


def test_lt_admm_vr_sweeps_and_differentiates_through_a_run():
    """A sweep over γ runs every grid point; d loss / dγ through 3 rounds is finite and equals the
    central finite difference (minibatches held fixed by the key)."""
    prob, net = small_problem("logistic"), small_network()
    alg = algorithms.LTADMMVR(batch_size=3, local_steps=2)
    base = algorithms.LTADMMVRParams(rho=0.5)
    swept = jaxdp.sweep(alg, prob, net, jaxdp.grid(base, gamma=[0.1, 0.3]), steps=20, seeds=2,
                        progress=False)
    objective = swept.final("objective")  # (seeds, grid)
    assert objective.shape == (2, 2) and np.all(np.isfinite(objective))
    assert objective[0, 0] != objective[0, 1]

    def final_loss(gamma):
        return jaxdp.final_metrics(alg, prob, net, base.replace(gamma=gamma), jax.random.key(0),
                                   steps=3, metrics=paper_metrics)["loss"]

    grad = float(jax.jit(jax.grad(final_loss))(0.2))
    h = 1e-6
    fd = (float(final_loss(0.2 + h)) - float(final_loss(0.2 - h))) / (2 * h)
    assert np.isfinite(grad) and grad != 0.0
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def _vr_program_size(m: int, batch_size: int) -> int:
    """Lines of the jaxpr of one LT-ADMM-VR noise draw and step with m rows and b = batch_size."""
    prob = problems.least_squares(n_agents=6, m=m, d=3, ridge=0.1, seed=0, reference=False)
    net, alg = small_network(), algorithms.LTADMMVR(batch_size=batch_size, local_steps=3)
    params = alg.default_params()
    state = alg.init(jax.random.key(0), prob, net, params)

    def one(key):
        noise = alg.noise(key, state, params, 0)
        return alg.step(state, noise, prob, net, params, 0)

    return str(jax.make_jaxpr(one)(jax.random.key(1))).count("\n")


def test_lt_admm_vr_program_size_does_not_grow_with_the_samples_or_the_batch():
    """The table and the batch are array axes, the local steps a scan: one program for all m, b."""
    assert _vr_program_size(8, 2) == _vr_program_size(64, 32)


def test_lt_admm_vr_is_non_private_and_names_bad_configuration():
    prob, net = small_problem(), small_network()
    alg = algorithms.LTADMMVR(batch_size=3)
    assert alg.privacy(prob, net, alg.default_params(), steps=5) is None
    with pytest.raises(ValueError, match="table must be one of"):
        algorithms.LTADMMVR(table="snapshot")
    with pytest.raises(ValueError, match="refresh must be one of"):
        algorithms.LTADMMVR(refresh="later")
    with pytest.raises(ValueError, match=r"lt_admm: local_steps must be an integer >= 1 \(a count .*\); got 0"):
        algorithms.LTADMMVR(local_steps=0)
    with pytest.raises(ValueError, match="batch_size=9 exceeds the 8 samples of agent 0"):
        jaxdp.run(algorithms.LTADMMVR(batch_size=9), prob, net, steps=2, progress=False)
    with pytest.raises(ValueError, match=r"LTADMMVRParams.rho must be a scalar"):
        jaxdp.run(alg, prob, net, algorithms.LTADMMVRParams(rho=jnp.full(6, 0.5)), steps=2,
                  progress=False)
    with pytest.raises(ValueError, match=r"LTADMMVRParams.gamma must be > 0 .* got -0.1"):
        jaxdp.run(alg, prob, net, algorithms.LTADMMVRParams(gamma=-0.1), steps=2, progress=False)


LATTICE = [
    (algorithms.LTADMMDP(batch_size=3, local_steps=2), algorithms.LTADMMDPParams(sigma_e=0.5),
     "e"),
    (algorithms.LTADMMDP(batch_size=3, local_steps=1, clip="per_sample", sampling="poisson"),
     algorithms.LTADMMDPParams(zeta=0.3, sigma_e=0.25), "e"),
    (algorithms.PORTER(batch_size=3), algorithms.PORTERParams(sigma=0.125), "xi"),
    (algorithms.PriSMA(batch_size=3), algorithms.PriSMAParams(sigma0=0.25, sigma1=0.0625), "xi"),
]


@pytest.mark.parametrize("alg, params, draws", LATTICE,
                         ids=[f"{a.name}-{a.clip if a.name == 'lt_admm_dp' else a.sampling}"
                              for a, _, _ in LATTICE])
def test_lattice_release_is_the_float_release_rounded_to_the_lattice(alg, params, draws):
    """The default (lattice) noisy term equals the float one fed the same draws up to the lattice
    rounding, |Δ| ≤ γ = σ/R per coordinate, and it is an exact multiple of γ (σ a power of two).

    The noisy term: LT-ADMM-DP's g̃ of (7) at the first local step; PORTER's Ĝ (g_prev); PriSMA's
    v⁰ at k = 0 and, at k = 1, the released increment read back as v¹ − (1 − η)v⁰ (a float
    subtraction: integer up to it)."""
    from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION

    assert alg.sampler == "lattice"
    prob, net = small_problem("logistic"), small_network()
    floats = dataclasses.replace(alg, sampler="float")
    key = jax.random.key(3)
    state = alg.init(key, prob, net, params)
    for k in range(2 if alg.name == "prisma" else 1):
        k = jnp.asarray(k)
        noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
        new, _ = alg.step(state, noise, prob, net, params, k)
        ref, _ = floats.step(state, noise, prob, net, params, k)
        if alg.name == "lt_admm_dp":  # g̃ of (7) at the first local step
            batch, e = noise["batch"][0], noise["e"][0]
            sigma, tol = params.sigma_e, 0.0
            released = alg._perturbed_gradient(state.x, batch, e, prob, params)
            exact = floats._perturbed_gradient(state.x, batch, e, prob, params)
        elif alg.name == "porter":
            sigma, released, exact, tol = params.sigma, new.g_prev, ref.g_prev, 0.0
        else:
            sigma = params.sigma0 if int(k) == 0 else params.sigma1
            eta = params.eta if int(k) else 0.0
            released = np.asarray(new.v) - (1 - eta) * np.asarray(state.v)
            exact = np.asarray(ref.v) - (1 - eta) * np.asarray(state.v)
            tol = 0.0 if int(k) == 0 else 1e-15
        gamma = sigma / GAUSSIAN_RESOLUTION
        released, exact = np.asarray(released), np.asarray(exact)
        assert np.max(np.abs(released - exact)) <= gamma + tol
        assert np.max(np.abs(released - exact)) > 0  # the rounding happened
        if tol == 0.0:
            np.testing.assert_array_equal(released / gamma, np.round(released / gamma))
        else:  # read back through float arithmetic: integer up to that arithmetic
            np.testing.assert_allclose(released / gamma, np.round(released / gamma), rtol=0,
                                       atol=tol / gamma)
        state = new
