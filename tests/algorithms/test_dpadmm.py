"""Paper 002 (DP-ADMM): per-node star reference, invariants, sensitivity, errata, engine contract."""
import dataclasses
import functools
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.algorithms.dpadmm import algorithm as dpadmm
from jaxdp.algorithms.dpadmm import baselines as dpadmm_baselines
from jaxdp.algorithms.dpadmm import privacy as dpp
from jaxdp.algorithms.dpadmm.privacy import moments_accountant
from jaxdp.privacy import PAPER_PRINTED
from tests.harness import to_numpy
from tests.reference import dpadmm as ref

N = 5
REG = {"l2": ("logistic", {"lam": 0.17 / N}), "l1": ("l1_logistic", {"lam": 0.0, "l1": 0.17 / N})}


@functools.cache
def adult_like(kind="l2", n_rows=61, seed=0):
    """Unit-norm Adult-shaped rows (synthetic stand-in), unequal shards (13, 12, 12, 12, 12)."""
    features, labels = problems.adult_synthetic(n_rows + 40, seed=seed)
    features = problems.normalize_adult(features)
    loss, reg = REG[kind]
    return problems.from_arrays(*problems.partition(features[:n_rows], labels[:n_rows], N, seed=1),
                                loss=loss, reg=reg, test=(features[n_rows:], labels[n_rows:]))


def complete(backend="dense"):
    return network.make_network("complete", N, backend=backend)


TIGHT = {"inner_tol": 1e-13}
FLOAT = {"sampler": "float"}  # the update equations with v + σξ (the lattice is tested apart)
CASES = [  # (id, algorithm, params, problem kind, per-node reference)
    ("dp_admm-l2", algorithms.DPADMM(**FLOAT), algorithms.DPADMMParams(D_w=3.0), "l2",
     ref.dp_admm),
    ("dp_admm-l1", algorithms.DPADMM(**FLOAT), algorithms.DPADMMParams(D_w=3.0, eps=0.2), "l1",
     ref.dp_admm),
    ("dp_admm-l2-per-agent", algorithms.DPADMM(**FLOAT),
     algorithms.DPADMMParams(D_w=jnp.linspace(2.0, 4.0, N), eps=jnp.linspace(0.05, 0.5, N),
                             rho=jnp.linspace(0.5, 1.5, N)), "l2", ref.dp_admm),
    ("consensus-l2", algorithms.ConsensusADMM(**TIGHT), algorithms.ConsensusADMMParams(), "l2",
     ref.consensus_admm),
    ("consensus-l1", algorithms.ConsensusADMM(**TIGHT), algorithms.ConsensusADMMParams(rho=0.5),
     "l1", ref.consensus_admm),
    ("naive-paper-l2", algorithms.NaivePrivateADMM(variant="paper", **TIGHT, **FLOAT),
     algorithms.NaivePrivateADMMParams(eps=0.5), "l2",
     functools.partial(ref.naive_private_admm, variant="paper")),
    ("naive-corrected-l1", algorithms.NaivePrivateADMM(**TIGHT, **FLOAT),
     algorithms.NaivePrivateADMMParams(), "l1",
     functools.partial(ref.naive_private_admm, variant="corrected")),
]
IDS = [c[0] for c in CASES]


def _trajectory(alg, params, problem, net, steps, seed=0, noise_scale=1.0):
    """States and messages of ``steps`` jitted steps with the engine's noise (optionally scaled)."""
    key = jax.random.key(seed)
    state = alg.init(key, problem, net, params)
    step = functools.partial(_jit_step, alg)
    out = []
    for k in range(steps):
        noise = jax.tree.map(lambda a: noise_scale * a, alg.noise(jax.random.fold_in(key, k),
                                                                  state, params, k))
        new, messages = step(state, noise, problem, net, params, k)
        out.append((state, noise, new, messages))
        state = new
    return out


@functools.partial(jax.jit, static_argnums=0)
def _jit_step(alg, *args):
    """One compiled step per algorithm configuration, shared by every test."""
    return alg.step(*args)


@functools.partial(jax.jit, static_argnums=0)
def _release(alg, state, noise, problem, params, k):
    """The local release (3a)-(3b) alone, compiled once per configuration."""
    return alg._release(state, noise, problem, params, k)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stacked_step_matches_per_node_star_reference(case):
    """Fed the same noise, the engine's complete-graph step equals the explicit star (trainer loop)
    to 1e-10 at every one of 25 steps, states and messages."""
    _, alg, params, kind, reference = case
    problem, net = adult_like(kind), complete()
    ref_state = to_numpy(alg.init(None, problem, net, params))
    p = to_numpy(params)
    for k, (_, noise, new, messages) in enumerate(_trajectory(alg, params, problem, net, 25)):
        ref_state, ref_messages = reference(ref_state, to_numpy(noise), problem, p, k)
        chex.assert_trees_all_close(to_numpy(new), ref_state, rtol=0, atol=1e-10)
        chex.assert_trees_all_close(to_numpy(messages), ref_messages, rtol=0, atol=1e-10)


@pytest.mark.parametrize("case", CASES[::3], ids=IDS[::3])
def test_dual_sum_is_zero_and_broadcast_is_the_mean_after_the_first_step(case):
    """Σ_i γ_i^k = 0 for k ≥ 1 (eq. (24)) and every provider receives w^k = mean_i w̃_i^k."""
    _, alg, params, kind, _ = case
    for _, _, new, _ in _trajectory(alg, params, adult_like(kind), complete(), 15):
        scale = 1.0 + float(jnp.max(jnp.abs(new.gamma)))
        assert float(jnp.max(jnp.abs(new.gamma.sum(axis=0)))) < 1e-12 * scale
        np.testing.assert_allclose(new.w, jnp.broadcast_to(new.w_tilde.mean(0), new.w.shape),
                                   atol=1e-12 * scale)


def _applied_sigma(alg, params, problem, state, k):
    """The noise std the step applies to provider rows: w̃(ξ = 1) − w̃(ξ = 0), (N,)."""
    ones = {"xi": jnp.ones_like(state.w_tilde)}
    zeros = {"xi": jnp.zeros_like(state.w_tilde)}
    return (_release(alg, state, ones, problem, params, k)
            - _release(alg, state, zeros, problem, params, k))[:, 0]


@pytest.mark.parametrize("kind", ["l2", "l1"])
def test_noise_to_sensitivity_ratio_is_constant_and_matches_the_declared_releases(kind):
    """σ_{i,k}/Δ_{i,k} = √(2 ln(1.25/δ))/ε at every k ≥ 1 (Thm 1 with Lemma 1) and twice that at
    k = 0 (Δ_0 is taken at the public w̃⁰ = 0); the step applies exactly the σ that privacy()
    declares; the gradient-space noise (ρ + 1/η)σ is constant in k. (The real-valued mechanism:
    the float sampler's events carry Lemma 1's Δ; the lattice adds its rounding slack.)"""
    alg, problem, net = algorithms.DPADMM(**FLOAT), adult_like(kind), complete()
    params = algorithms.DPADMMParams(D_w=2.5, eps=0.07, delta=1e-5)
    events = alg.privacy(problem, net, params, steps=30).events
    ratio = events.scale / events.sensitivity
    z = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.07
    np.testing.assert_allclose(ratio[:, 1:], z, rtol=1e-12)
    np.testing.assert_allclose(ratio[:, 0], 2 * z, rtol=1e-12)
    m = np.asarray(problem.mask).sum(1)
    inv_eta = np.asarray(dpadmm.inverse_step_size(
        problem, params.replace(**{f: float(v) for f, v in params.items()}),
        np.arange(1, 31.0)[None, :], np))
    grad_noise = (1.0 + inv_eta) * events.scale  # ρ = 1
    expected = 2 * math.sqrt(2 * math.log(1.25 / 1e-5)) / (m * 0.07)  # s_i
    np.testing.assert_allclose(grad_noise, np.broadcast_to(expected[:, None], (N, 30)),
                               rtol=1e-12)
    assert np.all(np.diff(events.scale, axis=1) < 0)  # σ_{i,k} decreases with k
    state = _trajectory(alg, params, problem, net, 3)[-1][2]
    for k in (3, 17, 29):
        np.testing.assert_allclose(_applied_sigma(alg, params, problem, state, k),
                                   events.scale[:, k], rtol=1e-12)


def test_closed_form_step_minimizes_the_approximate_augmented_lagrangian():
    """(3a): with ξ = 0, each row is the minimizer of (2): ∇_w L̂ vanishes there (autodiff)."""
    alg, params = algorithms.DPADMM(**FLOAT), algorithms.DPADMMParams(D_w=3.0, rho=0.7)
    for kind in ("l2", "l1"):
        problem = adult_like(kind)
        state = _trajectory(alg, params, problem, complete(), 6)[-1][2]
        k = 6
        zeros = {"xi": jnp.zeros_like(state.w_tilde)}
        w_new = _release(alg, state, zeros, problem, params, k)
        inv_eta = dpadmm.inverse_step_size(problem, params, jnp.asarray(k + 1.0), jnp)
        g = dpadmm.subgradient(problem, state.w_tilde)

        for i in range(N):
            grad = jax.grad(_lhat)(w_new[i], g[i], state.w_tilde[i], state.gamma[i], state.w[i],
                                   0.7, inv_eta[i])
            assert float(jnp.linalg.norm(grad)) < 1e-12


def _lhat(x, g, w_tilde, gamma, w, rho, inv_eta):
    """(2) for one provider, up to terms constant in x."""
    return (g @ (x - w_tilde) - gamma @ (x - w) + rho / 2 * jnp.sum((x - w) ** 2)
            + inv_eta / 2 * jnp.sum((x - w_tilde) ** 2))


def test_lemma1_sensitivity_bounds_the_change_from_replacing_one_record():
    """Lemma 1: replacing one (a, b) of provider i moves w_i^{k+1} by at most 2 S1/(m_i(ρ + 1/η))
    (the noise-free w_i^{k+1} of (3a) against the float sampler's declared, real-valued Δ)."""
    alg, params = algorithms.DPADMM(**FLOAT), algorithms.DPADMMParams(D_w=2.0)
    rng = np.random.default_rng(5)
    for kind in ("l2", "l1"):
        problem = adult_like(kind)
        state = _trajectory(alg, params, problem, complete(), 5)[-1][2]
        zeros = {"xi": jnp.zeros_like(state.w_tilde)}
        base = _release(alg, state, zeros, problem, params, 5)
        bound = alg.privacy(problem, complete(), params, steps=6).events.sensitivity[:, 5]
        worst = 0.0
        for _ in range(20):
            i, s = rng.integers(N), rng.integers(12)
            a = np.abs(rng.normal(size=problem.dim))
            a /= np.linalg.norm(a)  # a neighbour with ‖a'‖ = 1, label flipped at random
            neighbour = dataclasses_replace_row(problem, i, s, a, rng.choice([-1.0, 1.0]))
            moved = _release(alg, state, zeros, neighbour, params, 5)
            change = float(jnp.linalg.norm(moved[i] - base[i]))
            assert change <= bound[i] * (1 + 1e-12)
            worst = max(worst, change / bound[i])
        assert worst > 0.1  # the bound is not vacuous for these neighbours


@pytest.mark.parametrize("kind", ["l2", "l1"])
def test_flipped_label_attains_the_declared_sensitivities_from_the_same_transcript(kind):
    """The audit's worst pair (one label of a unit-norm row flipped) moves DP-ADMM's noise-free
    release by exactly the declared Δ_0 at k = 0 (w̃⁰ = 0) and by Δ_k/2 ≤ Δ_k at later steps fed
    the same released state; Algorithm 2's by at most its declared Δ."""
    problem, net = adult_like(kind), complete()
    i, s = 1, 3
    flipped = dataclasses_replace_row(problem, i, s, problem.features[i, s],
                                      -problem.labels[i, s])
    cases = [(algorithms.DPADMM(**FLOAT), algorithms.DPADMMParams(D_w=2.0))]
    if kind == "l2":
        cases.append((algorithms.NaivePrivateADMM(**TIGHT, **FLOAT),
                      algorithms.NaivePrivateADMMParams()))
    for alg, params in cases:
        declared = alg.privacy(problem, net, params, 6).events.sensitivity[i]
        for k, (state, _, _, _) in enumerate(_trajectory(alg, params, problem, net, 6)):
            zeros = {"xi": jnp.zeros_like(state.w_tilde)}
            change = float(jnp.linalg.norm(_release(alg, state, zeros, flipped, params, k)[i]
                                           - _release(alg, state, zeros, problem, params, k)[i]))
            assert change <= declared[k] * (1 + 1e-9), (alg.name, k)
            if isinstance(alg, algorithms.DPADMM):
                expected = 1.0 if k == 0 else 0.5  # ∇ℓ moves by exactly ‖a‖ = S1 at any w
                assert change == pytest.approx(expected * declared[k], rel=1e-6), k


def dataclasses_replace_row(problem, i, s, a, b):
    import dataclasses

    return dataclasses.replace(problem, features=problem.features.at[i, s].set(a),
                               labels=problem.labels.at[i, s].set(b))


@pytest.mark.parametrize("kind", ["l2", "l1"])
def test_exact_local_solve_meets_its_stated_tolerance(kind):
    """Algorithm 1's inner solve: the subproblem's residual (gradient / prox-gradient mapping) is
    ≤ 1e-10 · max(1, residual at the warm start), and the ℓ1 optimality condition holds."""
    problem = adult_like(kind)
    rng = np.random.default_rng(2)
    gamma, w = (jnp.asarray(rng.normal(size=(N, problem.dim))) for _ in range(2))
    x = jax.jit(dpadmm_baselines.exact_local_solve)(problem, gamma, w, 1.0)
    smooth = problem.local_grads(x) - gamma + (x - w)
    if kind == "l2":
        r0 = problem.local_grads(w) - gamma
        assert np.all(np.linalg.norm(smooth, axis=1) <= 1e-10 * np.maximum(
            1, np.linalg.norm(r0, axis=1)))
    else:
        c = problem.reg["l1"]
        on = np.abs(np.asarray(x)) > 1e-12
        np.testing.assert_allclose(np.asarray(smooth)[on], -c * np.sign(np.asarray(x))[on],
                                   atol=1e-9)
        assert np.all(np.abs(np.asarray(smooth)[~on]) <= c + 1e-9)


def test_gradients_flow_through_the_exact_solve_and_the_dp_admm_schedule():
    """jax.grad of the final objective w.r.t. ρ (Algorithm 1, implicit differentiation of the
    inner solve) and w.r.t. D_w (DP-ADMM, float sampler: the lattice's rounding is piecewise
    constant, its tangent the straight-through dv + z·dσ) match central differences."""
    problem, net, key = adult_like("l2"), complete(), jax.random.key(3)
    for alg, params, field in ((algorithms.ConsensusADMM(inner_tol=1e-13),
                                algorithms.ConsensusADMMParams(rho=0.8), "rho"),
                               (algorithms.DPADMM(**FLOAT), algorithms.DPADMMParams(D_w=2.0),
                                "D_w")):
        @jax.jit
        def f(v, alg=alg, params=params, field=field):
            return jaxdp.final_metrics(alg, problem, net, params.replace(**{field: v}), key,
                                       steps=4)["objective"]
        v0 = float(params[field])
        grad = float(jax.jit(jax.grad(f))(v0))
        h = 1e-5
        fd = (float(f(v0 + h)) - float(f(v0 - h))) / (2 * h)
        assert np.isfinite(grad) and abs(grad - fd) <= 1e-6 * max(1.0, abs(fd))


def test_paper_sensitivity_of_algorithm_2_is_the_printed_one_and_disrupts_training():
    """Erratum (docs/errata.md, DP-ADMM): the printed σ_i uses Δ = 2 S1 N/(m_i λ), (ρ + λ/N)/(λ/N) times
    the corrected Δ; with it the objective blows up, with the corrected one it does not."""
    problem, net = adult_like("l2"), complete()
    params = algorithms.NaivePrivateADMMParams(eps=0.1)
    z = math.sqrt(2 * math.log(1.25 / params.delta)) / params.eps  # σ = Δ z, Alg. 2 l.5
    sens = {v: algorithms.NaivePrivateADMM(variant=v).privacy(problem, net, params, steps=5)
            .events.scale[:, 0] / z for v in ("paper", "corrected")}
    m = np.asarray(problem.mask).sum(1)
    lam = 0.17 / N
    np.testing.assert_allclose(sens["paper"], 2 * N / (m * 0.17), rtol=1e-12)  # 2 S1 N/(m λ)
    np.testing.assert_allclose(sens["paper"] / sens["corrected"], (1 + lam) / lam, rtol=1e-12)
    final = {v: float(problem.objective(_trajectory(
        algorithms.NaivePrivateADMM(variant=v, **TIGHT), params, problem, net, 30)[-1][2].w[0]))
        for v in ("paper", "corrected")}
    start = float(problem.objective(jnp.zeros(problem.dim)))
    assert final["paper"] > 100 * start > final["corrected"]


def test_privacy_report_paper_curve_is_the_moments_accountant_and_dominates_tight_ones():
    """privacy(): "paper (as printed)" equals ε̄(t, ε, δ) at every reported t (report δ = Thm 1's
    δ, the paper's reading); the real-valued mechanism (float sampler, "ideal" curves) has PLD ≤
    RDP ≤ the paper's; the default lattice guarantee is the least of zCDP, RDP and PLD (the PLD),
    above the ideal PLD by its rounding slack only; replace-one-record."""
    problem, net = adult_like("l2"), complete()
    params = algorithms.DPADMMParams(D_w=2.0, eps=0.1, delta=1e-3)
    ideal = algorithms.DPADMM(**FLOAT).privacy(problem, net, params, steps=100, delta=1e-3)
    report = algorithms.DPADMM().privacy(problem, net, params, steps=100, delta=1e-3)
    expected = moments_accountant(report.steps, 0.1, 1e-3)[0]
    np.testing.assert_allclose(report.curves[PAPER_PRINTED], np.broadcast_to(expected, (N, len(
        report.steps))), rtol=1e-12)
    assert round(report.worst(PAPER_PRINTED), 4) == 1.0193
    assert ideal.epsilon_max == np.inf and ideal.sound == ("guarantee",)
    assert ideal.worst("ideal pld") <= ideal.worst("ideal rdp") <= report.worst(PAPER_PRINTED)
    assert report.sound == ("zcdp", "rdp", "pld")
    assert report.epsilon_max == report.worst("pld") <= report.worst("rdp") <= report.worst("zcdp")
    slack = dpp.lattice_ratio_slack(problem.dim)  # Δ/σ grows by s: ≈ 100 s/(Δ/σ) % more ε
    assert ideal.worst("ideal pld") < report.epsilon_max < ideal.worst("ideal pld") * (
        1 + 2 * slack * float(dpp.noise_multiplier(0.1, 1e-3)))
    assert PAPER_PRINTED not in report.sound and report.relation == "replace_record"
    naive = algorithms.NaivePrivateADMM().privacy(problem, net, algorithms.NaivePrivateADMMParams(
        eps=0.1), steps=100, delta=1e-3)
    assert naive.worst(PAPER_PRINTED) == pytest.approx(report.worst(PAPER_PRINTED), rel=1e-12)
    assert naive.epsilon_max > report.epsilon_max  # DP-ADMM's first release is at Δ/2


@pytest.mark.parametrize("kind", ["l2", "l1"])
def test_lattice_release_is_the_float_release_rounded_to_the_lattice(kind):
    """The default sampler: fed the same lattice draws z = K/R, the lattice release of w~ differs
    from the float one w + σz by at most γ = σ/R per coordinate (the rounding of w to γℤ), and
    w~/γ is an integer (the float release's is not); the report covers it (lattice events)."""
    from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION as R

    problem, net = adult_like(kind), complete()
    for lattice, params in ((algorithms.DPADMM(), algorithms.DPADMMParams(D_w=3.0)),
                            (algorithms.NaivePrivateADMM(**TIGHT),
                             algorithms.NaivePrivateADMMParams())):
        flt = dataclasses.replace(lattice, sampler="float")
        events = lattice.privacy(problem, net, params, steps=8).events
        assert events.lattice and lattice.sampler == "lattice"
        fractions = []
        for k, (state, noise, new, _) in enumerate(_trajectory(lattice, params, problem, net, 8)):
            gamma = events.scale[:, k:k + 1] / R
            release = np.asarray(new.w_tilde)
            float_release = np.asarray(_release(flt, state, noise, problem, params, k))
            assert np.all(np.abs(release - float_release) <= gamma * (1 + 1e-9)), (lattice.name, k)
            n = release / gamma
            assert np.max(np.abs(n - np.round(n))) < 1e-6, (lattice.name, k)
            fractions.append(np.abs(float_release / gamma - np.round(float_release / gamma)))
        assert np.median(np.concatenate(fractions)) > 0.1  # the float release is off the lattice


def test_complete_graph_weights_and_backends_give_the_same_trajectory():
    """The trainer's average is W = 11ᵀ/N: Metropolis and max-degree weights, dense and edge-list
    products all give the same run."""
    alg, params, problem = algorithms.DPADMM(), algorithms.DPADMMParams(D_w=3.0), adult_like("l2")
    runs = [_trajectory(alg, params, problem, net, 20)[-1][2]
            for net in (complete(), complete("edges"),
                        network.make_network("complete", N, weights="max_degree"))]
    chex.assert_trees_all_close(runs[0], runs[1], rtol=1e-10, atol=1e-12)
    chex.assert_trees_all_close(runs[0], runs[2], rtol=1e-10, atol=1e-12)


def test_sweep_over_the_privacy_grid_equals_single_runs_with_common_noise():
    """jaxdp.sweep over (ε, δ) equals separate runs; grid points share the seed's noise draws."""
    alg, problem, net = algorithms.DPADMM(), adult_like("l2"), complete()
    base = algorithms.DPADMMParams(D_w=3.0)
    tr = jaxdp.sweep(alg, problem, net, jaxdp.grid(base, eps=[0.05, 0.2], delta=[1e-3, 1e-6]),
                     steps=6, seeds=2, progress=False)
    single = jaxdp.run(alg, problem, net, base.replace(eps=0.2, delta=1e-6), steps=6, seeds=2,
                       progress=False)
    np.testing.assert_allclose(tr.metrics["objective"][:, 3], single.metrics["objective"],
                               rtol=1e-10)


@pytest.mark.parametrize("kind", ["l2", "l1"])
def test_algorithm_1_converges_to_the_reference_solution(kind):
    """Non-private consensus ADMM reaches the centralized x* (Newton / FISTA reference)."""
    problem = adult_like(kind)
    steps = 400 if kind == "l2" else 2000  # ℓ1 (no strong convexity) converges more slowly
    tr = jaxdp.run(algorithms.ConsensusADMM(), problem, complete(), steps=steps, seeds=1,
                   record_every=steps, progress=False)
    assert tr.final("dist_to_opt")[0] < 1e-12
    assert tr.final("consensus_error")[0] < 1e-12


def test_validation_names_the_bad_value():
    """Bad networks, privacy parameters, losses and variants raise ValueError naming them."""
    problem, net = adult_like("l2"), complete()
    dp, naive = algorithms.DPADMM(), algorithms.NaivePrivateADMM
    with pytest.raises(ValueError, match=r"network.W must be 11ᵀ/N.*max \|W − 11ᵀ/N\| = 0.2"):
        jaxdp.run(dp, problem, network.make_network("ring", N), steps=2)
    with pytest.raises(ValueError, match=r"DPADMMParams.eps must be in \(0, 1\].*got 2"):
        jaxdp.run(dp, problem, net, algorithms.DPADMMParams(eps=2.0), steps=2)
    with pytest.raises(ValueError, match=r"DPADMMParams.D_w must be > 0"):
        jaxdp.run(dp, problem, net, algorithms.DPADMMParams(D_w=0.0), steps=2)
    with pytest.raises(ValueError, match=r"S1 = 0.5 is below the data's per-sample gradient bound"):
        jaxdp.run(algorithms.DPADMM(enforce_bound=False), problem, net,
                  algorithms.DPADMMParams(S1=0.5), steps=2)  # the default projects the records
    with pytest.raises(ValueError, match=r"derived for logistic regression.*'least_squares'"):
        jaxdp.run(dp, problems.least_squares(n_agents=N, m=6, d=3), net, steps=2)
    l1_ridge = problems.from_arrays(problem.features, problem.labels, mask=problem.mask,
                                    loss="l1_logistic", reg={"lam": 0.1, "l1": 0.01},
                                    reference=False)
    with pytest.raises(ValueError, match=r"reg\['lam'\] must be 0; got 0.1"):
        jaxdp.run(dp, l1_ridge, net, steps=2)
    with pytest.raises(ValueError, match=r"variant='paper'\) needs an ℓ2 weight"):
        jaxdp.run(naive(variant="paper"), adult_like("l1"), net, steps=2)
    with pytest.raises(ValueError, match=r"variant must be 'paper' or 'corrected'; got 'x'"):
        jaxdp.run(naive(variant="x"), problem, net, steps=2)
    with pytest.raises(ValueError, match=r"NaivePrivateADMMParams.delta .* in \(0, 1\); got 1"):
        jaxdp.run(naive(), problem, net, algorithms.NaivePrivateADMMParams(delta=1.0), steps=2)
    for bad in ({"delta": 0.0}, {"delta": 1.0}, {"delta": 2.0}, {"eps": 0.0}):
        name = next(iter(bad))
        with pytest.raises(ValueError, match=rf"DPADMMParams.{name} .*got {bad[name]:g}"):
            dp.privacy(problem, net, algorithms.DPADMMParams(**bad), 3)
        with pytest.raises(ValueError, match=rf"DPADMMParams.{name}\b.*must be"):
            jaxdp.run(dp, problem, net, algorithms.DPADMMParams(**bad), steps=2)


TINY = {"seeds": 2, "steps": 4, "eps_grid": (0.05, 0.2), "delta_grid": (1e-3, 1e-6),
        "providers": 4, "rows": 10}
CLAIMS = {
    "dpadmm_loss": [f"{k}-{c}" for k in ("l1", "l2") for c in (
        "convergent", "faster-larger-eps", "faster-larger-delta", "nonprivate-envelope")]
    + ["alg2-disrupted-eps0.05"],
    "dpadmm_accuracy": [f"{k}-{c}" for k in ("l1", "l2") for c in (
        "poor-at-small-eps", "accuracy-increases-with-eps", "accuracy-increases-with-delta",
        "near-nonprivate")] + ["l2-better-than-alg2"],
    "dpadmm_table3": ["eps-bar-0.05", "eps-bar-0.1", "eps-bar-valid", "eps-bar-sqrt-T",
                      "table3-order", "table3-alg2-grows"],
}
FILES = {"dpadmm_loss": ["dpadmm_loss.png", "dpadmm_loss_alg2.png", "curves.npz"],
         "dpadmm_accuracy": ["dpadmm_accuracy.png", "accuracy.npz"],
         "dpadmm_table3": ["dpadmm_table3.png", "privacy_table.md", "privacy_table.json",
                           "timings.json"]}


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_reproduction_writes_its_files_and_every_claim(name, tmp_path):
    """Tiny settings (4 providers × 10 rows, 4 steps, a 2 × 2 grid): figure, data, report.md with
    every claim id (whether or not it is reproduced at this size)."""
    from jaxdp import experiments

    kw = dict(TINY, seeds=1) if name == "dpadmm_table3" else TINY
    report = getattr(experiments, name)(tmp_path, **kw)
    assert [c.id for c in report.claims] == CLAIMS[name]
    for f in FILES[name] + ["report.md", "report.json"]:
        assert (tmp_path / f).stat().st_size > 0
    assert "synthetic Adult stand-in" in (tmp_path / "report.md").read_text()


def test_cli_passes_adult_only_to_reproductions_that_read_it(tmp_path, capsys):
    """`jaxdp reproduce NAME --adult PATH`: forwarded as adult= (a too-small file is refused with
    the split's size), refused by reproductions without an adult parameter."""
    from jaxdp import cli

    small = tmp_path / "adult.data"
    small.write_text("39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, "
                     "Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K\n")
    assert cli.main(["reproduce", "dpadmm-table3", "--adult", str(small),
                     "--out", str(tmp_path / "o")]) == 2
    assert "needs at least 21163 complete rows" in capsys.readouterr().err
    assert cli.main(["reproduce", "baselines", "--adult", str(small)]) == 2
    assert "does not read --adult" in capsys.readouterr().err


def test_float32_problem_gives_a_float32_run():
    """DP-ADMM on float32 data and a float32 network keeps float32 states (Python-float Params
    are weakly typed)."""
    problem = adult_like("l2")
    with jax.enable_x64(False):
        net = complete()
    p32 = problems.from_arrays(np.asarray(problem.features), np.asarray(problem.labels),
                               mask=np.asarray(problem.mask), loss="logistic",
                               reg={"lam": 0.17 / N}, dtype=jnp.float32, reference=False)
    final = _trajectory(algorithms.DPADMM(), algorithms.DPADMMParams(D_w=3.0), p32, net, 3)[-1][2]
    assert {leaf.dtype for leaf in jax.tree.leaves(final)} == {jnp.dtype(jnp.float32)}
