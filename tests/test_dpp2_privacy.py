"""Paper 000's accounting: Theorem 3 (printed, corrected, tight), Corollary 1, solvers, PLD/RDP."""
import math

import numpy as np
import pytest

from jaxdp import algorithms
from jaxdp.algorithms.dpp2 import privacy as acc
from jaxdp.privacy import PAPER_CORRECTED, PAPER_PRINTED, PrivacyReport, pld_epsilon, rdp_epsilon
from tests.harness import small_network, small_problem

KW = dict(d=10, delta=1.0, M=5.03)
FIG3 = dict(alpha=0.0994, u_e=1.0, u_w=0.994)


def test_c_tilde_by_hand():
    """c̃ = √d δ (1/u_e + α/u_w)/(1 − αM̄): Fig. 3's DPP² gives 6.957 δ."""
    by_hand = math.sqrt(10) * (1 / 1.0 + 0.0994 / 0.994) / (1 - 0.0994 * 5.03)
    np.testing.assert_allclose(acc.c_tilde(**FIG3, **KW), by_hand, rtol=1e-14)
    np.testing.assert_allclose(by_hand, 6.957, rtol=1e-4)
    assert acc.c_tilde(alpha=0.2, u_e=1.0, u_w=1.0, **KW) == np.inf  # αM̄ ≥ 1: no bound


def test_theorem3_variants_by_hand_at_short_horizons():
    """K = 2, r = 0.5: paper = c̃(2 + 4); corrected adds c̃; tight uses S_k = Σ_{t<k}(αM)^t."""
    a, r, d = 0.1, 0.5, 10
    c = float(acc.c_tilde(alpha=a, u_e=2.0, u_w=0.5, **KW))
    kw = dict(alpha=a, u_e=2.0, u_w=0.5, r=r, **KW)
    eps = {v: math.exp(acc.theorem3_log_epsilon(2, variant=v, **kw)[0])
           for v in ("paper", "corrected", "tight")}
    np.testing.assert_allclose(eps["paper"], c * (2 + 4), rtol=1e-13)
    np.testing.assert_allclose(eps["corrected"], c * (1 + 2 + 4), rtol=1e-13)
    am = a * 5.03
    S = [0.0, 1.0, 1 + am, 1 + am + am**2]
    tight = math.sqrt(d) * sum(r**-k * (S[k + 1] / 2.0 + a * S[k] / 0.5) for k in range(3))
    np.testing.assert_allclose(eps["tight"], tight, rtol=1e-13)
    assert eps["tight"] < eps["corrected"] and eps["paper"] < eps["corrected"]


def test_single_release_is_the_k0_gradient_release():
    """After one step only z⁰ has leaked: tight ε = √d δ/u_e, the printed theorem says 0."""
    curve = {v: acc.theorem3_log_epsilon_curve(3, alpha=0.1, u_e=4.0, u_w=1.0, r=0.9,
                                               variant=v, **KW)[0]
             for v in ("paper", "tight")}
    np.testing.assert_allclose(math.exp(curve["tight"][0]), math.sqrt(10) / 4.0, rtol=1e-14)
    assert curve["paper"][0] == -np.inf


def test_log_space_matches_notes_table_beyond_float64():
    """log10(ε/δ) at the paper's settings, including 10^500 at r̄ = 0.1, K = 500."""
    expected = {(0.1, 500): 500.9, (0.5, 500): 151.7, (0.9, 500): 24.7}
    for (r, K), value in expected.items():
        got = acc.theorem3_log_epsilon(K, r=r, variant="paper", **FIG3, **KW)[0] / acc.LN10
        assert abs(got - value) < 0.05, (r, K, got)
    figs12 = {(0.5, 100): 31.3, (0.9, 1000): 47.6, (0.95, 100): 4.4, (0.99, 1000): 7.2}
    for (r, K), value in figs12.items():
        got = acc.theorem3_log_epsilon(K, alpha=0.1, u_e=1.0, u_w=1.0, r=r, variant="paper",
                                       **KW)[0] / acc.LN10
        assert abs(got - value) < 0.06, (r, K, got)


def test_epsilon_decreases_in_u_e_u_w_and_r_and_grows_at_least_linearly_in_K():
    base = dict(alpha=0.1, u_e=1.0, u_w=1.0, r=0.9, **KW)
    for variant in ("paper", "corrected", "tight"):
        e = lambda **ch: acc.theorem3_log_epsilon(50, variant=variant, **{**base, **ch})[0]  # noqa
        assert e(u_e=2.0) < e() and e(u_w=2.0) < e() and e(r=0.95) < e()
    c = float(acc.c_tilde(alpha=0.1, u_e=1.0, u_w=1.0, **KW))
    assert math.exp(acc.theorem3_log_epsilon(50, variant="paper", **{**base, "r": 0.9999})[0]) \
        >= c * 50


def test_per_agent_parameters_give_per_agent_budgets():
    u = np.array([1.0, 2.0, 4.0])
    log_eps = acc.theorem3_log_epsilon(20, alpha=0.1, u_e=u, u_w=u, r=0.9, **KW)
    np.testing.assert_allclose(np.diff(log_eps), -math.log(2.0), rtol=1e-12)


def test_solve_r_round_trips_and_rejects_infeasible_targets():
    kw = dict(alpha=0.1, u_e=1.0, u_w=1.0, **KW)
    for variant in ("paper", "corrected", "tight"):
        target = 1e6
        r = acc.solve_r(target, 100, variant=variant, **kw)
        assert math.exp(acc.theorem3_log_epsilon(100, r=r, variant=variant, **kw)[0]) <= target
        assert math.exp(acc.theorem3_log_epsilon(100, r=r * (1 - 1e-9), variant=variant,
                                                 **kw)[0]) > target * (1 - 1e-6)
    c = float(acc.c_tilde(**kw))
    with pytest.raises(ValueError, match=r"below the budget at r = 1"):
        acc.solve_r(0.5 * c * 100, 100, variant="paper", **kw)
    with pytest.raises(ValueError, match=r"epsilon must be > 0"):
        acc.solve_r(-1.0, 100, **kw)


def test_solve_u_round_trips():
    u_e, u_w = acc.solve_u(50.0, 30, alpha=0.1, r=0.9, ratio=0.5, **KW)
    assert u_w == pytest.approx(0.5 * u_e)
    eps = math.exp(acc.theorem3_log_epsilon(30, alpha=0.1, u_e=u_e, u_w=u_w, r=0.9, **KW)[0])
    np.testing.assert_allclose(eps, 50.0, rtol=1e-12)


def test_corollary1_as_printed_is_not_sufficient_and_the_corrected_one_is():
    """K = 10, ε/c̃ = 100: the printed r = 0.5995 gives Σ r^{-k} = 414; the exact r = 0.7122."""
    kw = dict(alpha=0.1, u_e=1.0, u_w=1.0, **KW)
    c = float(acc.c_tilde(**kw))
    paper = acc.corollary1(100 * c, 10, variant="paper", **kw)
    fixed = acc.corollary1(100 * c, 10, variant="corrected", **kw)
    np.testing.assert_allclose(paper.r_min, 0.01 ** (1 / 9), rtol=1e-12)
    assert sum(paper.r_min ** -k for k in range(1, 11)) == pytest.approx(414.0, abs=0.5)
    assert fixed.r_min == pytest.approx(0.7122, abs=1e-4)
    assert sum(fixed.r_min ** -k for k in range(1, 11)) <= 100 * (1 + 1e-9)
    # corrected u_e and α conditions are exactly c̃ < ε
    at = dict(alpha=fixed.alpha_max * (1 - 1e-9), u_e=1.0, u_w=1.0, **KW)
    assert float(acc.c_tilde(**at)) == pytest.approx(100 * c, rel=1e-6)
    np.testing.assert_allclose(fixed.u_e_min, math.sqrt(10) / (100 * c), rtol=1e-14)
    np.testing.assert_allclose(paper.u_e_min, math.sqrt(10) * 5.03 / (100 * c), rtol=1e-14)


def test_events_pure_dp_equals_the_tight_theorem():
    """The y/z releases as PrivacyEvents: their pure-DP sum is the tight Theorem 3 curve."""
    kw = dict(alpha=0.1, M=5.03, d=10, delta=1.0)
    ev = acc.dpp2_events(40, u_e=np.array([1.0, 3.0]), u_w=np.array([2.0, 0.5]),
                         r=np.array([0.9, 0.8]), **kw)
    report = PrivacyReport.from_events(ev, delta=1e-5, methods=("closed_form",),
                                       at_steps=np.arange(1, 41))
    tight = acc.theorem3_log_epsilon_curve(40, u_e=np.array([1.0, 3.0]),
                                           u_w=np.array([2.0, 0.5]), r=np.array([0.9, 0.8]),
                                           variant="tight", **kw)
    np.testing.assert_allclose(report.log10("pure_dp"), tight / acc.LN10, rtol=1e-12)
    np.testing.assert_allclose(acc.log10_pure_dp(ev), tight[:, -1] / acc.LN10, rtol=1e-12)


def test_dp_accounting_agrees_on_one_release_and_is_tighter_on_many():
    """dp-accounting on the same Laplace releases: ≈ Δ/b for one, below the pure sum for many."""
    one = acc.laplace_decay_events(np.array([0.7]), 2.0, 0.9, 1, "one")
    pld = pld_epsilon(one, 1e-5, 1e-4)[0]
    assert pld == pytest.approx(0.35, rel=2e-3)
    ev = acc.dpp2_events(60, u_e=30.0, u_w=30.0, r=0.99, alpha=0.1, M=5.03, d=10, delta=1.0)
    pure = 10 ** acc.log10_pure_dp(ev)[0]
    pld_many, rdp_many = pld_epsilon(ev, 1e-5, 1e-3)[0], rdp_epsilon(ev, 1e-5)[0]
    assert pld_many < pure and rdp_many < pure
    assert pld_many < rdp_many * 1.05
    assert pld_many > 0.2 * pure


def _lattice_slack(d):
    """What the lattice adds to every release's Δ/θ (ℓ1, rounding of d coordinates)."""
    from jaxdp.privacy.samplers import lattice_sensitivity

    return float(lattice_sensitivity(0.0, d, 1.0, np.float64, law="laplace", clipped=False))


def test_dpp2_privacy_report_has_printed_corrected_and_accounted_curves():
    """The real-valued mechanism (float sampler, "ideal" curves): PLD ≤ pure DP = the tight
    Theorem 3 ≤ the corrected one. The default lattice guarantee adds one rounding slack per
    data-bearing release (y and z, every step but y⁰, which carries no data and is the same
    float under both data sets) to the pure sum, with the discrete-Laplace PLD below it."""
    prob, net = small_problem("logistic"), small_network()
    p = algorithms.DPP2Params(alpha=0.05, r=0.9, u_w=20.0, u_e=20.0)
    ideal = algorithms.DPP2(adjacency=0.5, sampler="float").privacy(prob, net, p, steps=30,
                                                                      delta=1e-6)
    rep = algorithms.DPP2(adjacency=0.5).privacy(prob, net, p, steps=30, delta=1e-6)
    assert {PAPER_PRINTED, PAPER_CORRECTED, "pure_dp", "pld"} <= set(rep.methods)
    assert set(rep.sound) == {"pure_dp", "pld"} and rep.delta == 1e-6 and rep.events.lattice
    assert rep.relation == "replace_agent" and rep.unit == "agent"
    assert np.all(ideal.epsilon == np.inf) and ideal.sound == ("guarantee",)
    assert np.all(rep.final(PAPER_PRINTED) < rep.final(PAPER_CORRECTED))
    assert np.all(ideal.final("ideal pure_dp") <= rep.final(PAPER_CORRECTED))
    assert np.all(ideal.final("ideal pld") <= ideal.final("ideal pure_dp"))
    M = float(np.max(prob.smoothness()))
    tight = acc.theorem3_log_epsilon(29, d=prob.dim, delta=0.5, alpha=0.05, M=M, u_e=20.0,
                                     u_w=20.0, r=0.9, variant="tight")
    np.testing.assert_allclose(ideal.log10("ideal pure_dp")[:, -1], tight[0] / acc.LN10,
                               rtol=1e-12)
    np.testing.assert_allclose(rep.final("pure_dp"), np.exp(tight[0]) + 59 * _lattice_slack(
        prob.dim), rtol=1e-12)
    assert np.all(rep.final("pld") <= rep.final("pure_dp"))
    assert np.all(ideal.final("ideal pld") < rep.final("pld"))
    np.testing.assert_allclose(rep.epsilon, np.minimum(rep.final("pld"), rep.final("pure_dp")))
    assumed = {a.holds for a in rep.assumptions}
    assert assumed == {None, True}  # δ-adjacency not checkable, M̄ computed from the problem


def test_printed_theorem_is_zero_after_one_step_but_the_guarantee_is_not():
    prob, net = small_problem(), small_network()
    rep = algorithms.DPP2().privacy(prob, net, algorithms.DPP2Params(), steps=1)
    assert np.all(rep.final(PAPER_PRINTED) == 0.0)
    ideal = algorithms.DPP2(sampler="float").privacy(prob, net, algorithms.DPP2Params(), steps=1)
    np.testing.assert_allclose(ideal.final("ideal pure_dp"), np.sqrt(prob.dim) / 1.0, rtol=1e-12)
    np.testing.assert_allclose(rep.final("pure_dp"), np.sqrt(prob.dim) + _lattice_slack(
        prob.dim), rtol=1e-12)  # z⁰ (y⁰ has Δ = 0: the same float under both data sets)
    assert "not a proven bound" in rep.table() or "not a valid bound" in rep.table()


@pytest.mark.parametrize("lib", ["numpy", "jax"])
def test_the_one_sound_accountant_is_the_reports_and_runs_in_numpy_and_jax(lib):
    """``dpp2_log_epsilon`` (what calibration uses) equals the real-valued report's pure_dp
    curve (float sampler, "ideal pure_dp"), the pure-DP composition of the events, in numpy and
    in JAX (and JAX differentiates it)."""
    import jax
    import jax.numpy as jnp

    prob, net = small_problem(), small_network()
    p = algorithms.DPP2Params(alpha=0.05, r=0.9, u_w=3.0, u_e=2.0)
    alg = algorithms.DPP2(adjacency=2.0, sampler="float")
    kw = alg.accounting_inputs(prob, net, p)
    rep = alg.privacy(prob, net, p, steps=40)
    with jax.enable_x64(True):
        xp = np if lib == "numpy" else jnp
        ours = np.asarray(acc.dpp2_log_epsilon(40, xp=xp, **{
            k: (xp.asarray(v) if k in ("u_e", "u_w", "r") else v) for k, v in kw.items()}))
        np.testing.assert_allclose(ours[:, rep.steps - 1] / acc.LN10,
                                   rep.log10("ideal pure_dp"), rtol=1e-12)
        events = acc.dpp2_events(40, **kw)
        np.testing.assert_allclose(ours[:, -1] / acc.LN10, acc.log10_pure_dp(events), rtol=1e-12)
        if lib == "jax":  # ε ∝ 1/u at u_e = u_w = u: d log ε / d log u = −1
            fixed = {k: v for k, v in kw.items() if k not in ("u_e", "u_w")}
            grad = jax.grad(lambda lu: acc.dpp2_log_epsilon(
                40, u_e=jnp.exp(lu), u_w=jnp.exp(lu), xp=jnp, **fixed)[0, -1])(0.3)
            np.testing.assert_allclose(grad, -1.0, rtol=1e-12)


def test_accumulated_sensitivities_bound_and_attain_the_matched_observation_difference():
    """Replay one transcript under two neighbours f_0, f_0′ = f_0 + ⟨a, x⟩ with f_0 = −(M/2)‖x‖²
    (nonconvex, M-smooth) and ‖a‖₂ = δ along (1, …, 1): the noise that explains the same y^k, z^k
    differs by ‖Δw^k‖₁ = √d α δ S_k and ‖Δe^k‖₁ = √d δ S_{k+1} exactly (the declared Δ), so the
    sensitivities carry the hidden state and are attained."""
    rng = np.random.default_rng(0)
    d, K, alpha, M, delta = 3, 6, 0.2, 1.5, 0.7
    grad0 = lambda x: -M * x  # noqa: E731
    a = np.full(d, delta / np.sqrt(d))
    grad1 = lambda x: -M * x + a  # noqa: E731
    beta, rho, eta = 0.05, 2.0, 0.4
    Py = rng.normal(size=(K, d))  # the neighbourhood's part of the transcript (public)
    Pz = rng.normal(size=(K, d))
    y, z = rng.normal(size=(K, d)), rng.normal(size=(K, d))  # any observed transcript
    sens_y, sens_z = acc.dpp2_sensitivities(K, d=d, delta=delta, alpha=alpha, M=M)
    states = []
    for grad in (grad0, grad1):
        x, dd, q, noise = np.zeros(d), np.zeros(d), np.zeros(d), []
        for k in range(K):
            w = y[k] - x - (1 - eta) * dd  # (16) solved for the noise
            e = z[k] - grad(x) - eta * q - rho * Py[k]  # (17)
            noise.append((w, e))
            x = x + w - alpha * (z[k] - e) + beta * Pz[k]  # (18)
            dd, q = eta * dd + y[k], eta * q + rho * Py[k]  # (19)
        states.append(noise)
    for k in range(K):
        dw = np.abs(states[0][k][0] - states[1][k][0]).sum()
        de = np.abs(states[0][k][1] - states[1][k][1]).sum()
        np.testing.assert_allclose([dw, de], [sens_y[k], sens_z[k]], rtol=1e-10, atol=1e-12)


def test_models_are_not_covered():
    prob, net = small_problem(), small_network()
    for alg, p in ((algorithms.DPP2(), algorithms.DPP2Params()),
                   (algorithms.DiaDSP(), algorithms.DiaDSPParams()),
                   (algorithms.PPDC(), algorithms.PPDCParams())):
        msgs = alg.privacy(prob, net, p, steps=4)
        both = alg.privacy(prob, net, p, steps=4, release="messages+models")
        assert np.all(np.isfinite(msgs.epsilon)) and np.all(np.isinf(both.epsilon))
        assert both.reason == alg.models_note and "reveal" in both.reason


def test_noise_free_or_zero_decay_budget_is_infinite():
    prob, net = small_problem(), small_network()
    for p in (algorithms.DPP2Params(u_w=0.0, u_e=0.0), algorithms.DPP2Params(r=0.0)):
        rep = algorithms.DPP2().privacy(prob, net, p, steps=10)
        assert np.all(np.isinf(rep.epsilon)) and "without Laplace noise" in rep.reason
        assert np.all(np.isinf(rep.final(PAPER_CORRECTED)))
    rep = algorithms.PPDC().privacy(prob, net, algorithms.PPDCParams(u_x=0.0), steps=3)
    assert np.all(np.isinf(rep.epsilon))
    with pytest.raises(ValueError, match=r"need u > 0 and r > 0; got min u = 0"):
        acc.laplace_decay_events(np.ones(3), 0.0, 0.9, 3, "y")


def test_baseline_sensitivities_by_hand():
    """DiaDSP: a = (0, αδ, ...), b = (δ, 2δ + Mαδ, ...); PPDC: a = (0, ηδ, (2 + ηM)ηδ)."""
    a, b = acc.diadsp_sensitivities(3, d=4, delta=1.0, alpha=0.1, M=2.0)
    np.testing.assert_allclose(a, 2 * np.array([0.0, 0.1, 0.1 * (2 + 2 * 0.1)]), rtol=1e-14)
    np.testing.assert_allclose(b, 2 * np.array([1.0, 2 + 2 * 0.1, 2 + 2 * (0.1 * 2.2 + 0.1)]),
                               rtol=1e-14)
    ppdc = acc.ppdc_sensitivities(3, d=4, delta=1.0, eta=0.1, M=2.0)
    np.testing.assert_allclose(ppdc, 2 * np.array([0.0, 0.1, 1.2 * 0.1 + 0.1]), rtol=1e-14)


def test_baseline_privacy_reports_use_those_sensitivities():
    """DiaDSP and PPDC: the real-valued pure-DP sum Σ Δ_k/θ_k by hand (float sampler, "ideal"),
    and on the lattice one rounding slack more per data-bearing release."""
    prob, net = small_problem("logistic"), small_network()
    M, slack = float(np.max(prob.smoothness())), _lattice_slack(prob.dim)
    alg, params = algorithms.PPDC(), algorithms.PPDCParams(r=0.9)
    sens = acc.ppdc_sensitivities(5, d=prob.dim, delta=1.0, eta=0.01, M=M)
    by_hand = np.sum(sens / (1.0 * 0.9 ** np.arange(5)))
    ideal = alg.with_sampler("float").privacy(prob, net, params, steps=5)
    np.testing.assert_allclose(ideal.final("ideal pure_dp"), by_hand, rtol=1e-12)
    np.testing.assert_allclose(alg.privacy(prob, net, params, steps=5).final("pure_dp"),
                               by_hand + slack * np.count_nonzero(sens), rtol=1e-12)
    alg, params = algorithms.DiaDSP(), algorithms.DiaDSPParams(r=0.9)
    a, b = acc.diadsp_sensitivities(5, d=prob.dim, delta=1.0, alpha=0.01, M=M)
    by_hand = np.sum((a / 2.0 + b / 5.0) / 0.9 ** np.arange(5))
    ideal = alg.with_sampler("float").privacy(prob, net, params, steps=5)
    np.testing.assert_allclose(ideal.final("ideal pure_dp"), by_hand, rtol=1e-12)
    np.testing.assert_allclose(
        alg.privacy(prob, net, params, steps=5).final("pure_dp"),
        by_hand + slack * (np.count_nonzero(a) + np.count_nonzero(b)), rtol=1e-12)
