"""DP-RECAL's accountant (paper 003, Lemmas 5–6, Theorems 1 and 4): hand-computed values, the
paper's worked numbers, log-space calibration up to σ₁ ≈ 1e40, and dp-accounting on the same
Gaussian sequence."""
import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, network, privacy, problems
from jaxdp.algorithms.recal import algorithm as recal
from jaxdp.algorithms.recal import baselines as recal_baselines
from jaxdp.algorithms.recal import cases as recal_cases
from jaxdp.algorithms.recal import privacy as acct


def test_theorem4_on_a_hand_computed_schedule():
    """Δ = 4αβc = 1, σ₁ = 2, R = 4, ξ = 3: σ² = 4, 1, 1/4 so ρ = 1/8 + 1/2 + 2 = 2.625."""
    sens = acct.sensitivity(1.0, 0.25, 1.0)
    assert float(sens) == 1.0
    rho = acct.zcdp_after(3, sens=sens, log_sigma1=math.log(2.0), log_R=math.log(4.0))
    assert float(rho) == pytest.approx(2.625, rel=1e-14)
    eps = acct.epsilon_after(3, sens=sens, log_sigma1=math.log(2.0), log_R=math.log(4.0),
                             delta=math.exp(-2.0))
    assert float(eps) == pytest.approx(2.625 + 2 * math.sqrt(2.625 * 2.0), rel=1e-14)


def test_geometric_sum_equals_the_explicit_sum_and_its_constant_noise_limit():
    """ρ₁(R^ξ−1)/(R−1) = Σ_τ Δ²/(2σ_τ²); log R = 0 gives ξ ρ₁; ξ = 0 gives 0."""
    sens, log_s1, log_R = 0.3, 1.7, 0.07
    tau = np.arange(1, 51)
    explicit = np.sum(sens**2 / (2 * np.exp(2 * (log_s1 - 0.5 * (tau - 1) * log_R))))
    got = acct.zcdp_after(50, sens=sens, log_sigma1=log_s1, log_R=log_R)
    assert float(got) == pytest.approx(explicit, rel=1e-12)
    flat = acct.zcdp_after(50, sens=sens, log_sigma1=log_s1, log_R=0.0)
    assert float(flat) == pytest.approx(50 * sens**2 / (2 * math.exp(2 * log_s1)), rel=1e-12)
    assert float(acct.zcdp_after(0, sens=sens, log_sigma1=log_s1, log_R=log_R)) == 0.0


def test_notes_worked_numbers_at_epsilon_12():
    """Notes §4.2 (n = 8, β = 1/18, αc = 1, δ = 1e-3): ρ_tot = 2.9586; log10 σ₁ = 2.79 at
    (R, ξ) = (1.05, 300) and 40.9 at (1.10, 2000), beyond float32, exact in log space."""
    assert float(privacy.closed_forms.zcdp_for_epsilon(12.0, 1e-3)) == pytest.approx(2.9586,
                                                                                      abs=1e-4)
    sens = acct.sensitivity(1.0, 1.0 / 18.0, 1.0)
    for R, xi, printed in ((1.05, 300, "2.79"), (1.10, 300, "5.67"), (1.10, 2000, "40.9")):
        log_s1 = acct.calibrate_log_sigma1(12.0, 1e-3, xi, sens=sens, log_R=math.log(R))
        digits = len(printed.split(".")[1])
        assert f"{float(log_s1) / math.log(10):.{digits}f}" == printed
        eps = acct.epsilon_after(xi, sens=sens, log_sigma1=log_s1, log_R=math.log(R),
                                 delta=1e-3)
        assert float(eps) == pytest.approx(12.0, rel=1e-10)
        last = math.exp(float(acct.log_sigma(log_s1, math.log(R), xi)))
        assert last >= float(sens) / math.sqrt(2 * 2.9586)  # the noise floor σ_ξ ≥ Δ/√(2ρ_tot)


def test_calibration_is_differentiable_and_round_trips():
    """∂ε/∂log σ₁ from jax.grad matches central differences; calibrate(ε) gives back ε."""
    sens = 0.05
    f = lambda s: acct.epsilon_after(300.0, sens=sens, log_sigma1=s, log_R=0.05, delta=1e-3)  # noqa
    s0 = acct.calibrate_log_sigma1(5.0, 1e-3, 300.0, sens=sens, log_R=0.05)
    h = 1e-5
    assert float(jax.grad(f)(s0)) == pytest.approx(float((f(s0 + h) - f(s0 - h)) / (2 * h)),
                                                   rel=1e-6)
    assert float(f(s0)) == pytest.approx(5.0, rel=1e-12)


def test_sensitivity_paper_and_tight():
    """Lemma 5: 4 max_i α_i β c; per agent: 2 α_i β c."""
    alpha = jnp.array([0.1, 0.3, 0.2])
    assert float(acct.sensitivity(alpha, 0.1, 2.0)) == pytest.approx(4 * 0.3 * 0.1 * 2.0)
    np.testing.assert_allclose(acct.sensitivity(alpha, 0.1, 2.0, "tight"), 2 * alpha * 0.2)
    with pytest.raises(ValueError, match="sensitivity kind must be one of"):
        acct.sensitivity(alpha, 0.1, 2.0, "loose")


def test_closed_form_matches_dp_accounting_on_the_same_gaussian_sequence():
    """dp-accounting's RDP of the sequence σ_τ (σ₁ ≈ 1e40 included) equals the closed form
    RDP(α) = α·ρ converted the same way, and its ε never exceeds the zCDP conversion."""
    sens = 0.2
    for eps, log_R, xi in ((5.0, math.log(1.05), 300), (12.0, math.log(1.10), 2000)):
        log_s1 = float(acct.calibrate_log_sigma1(eps, 1e-3, xi, sens=sens, log_R=log_R))
        events = acct.release_events(1, xi, sens=sens, log_sigma1=log_s1, log_R=log_R,
                                     description="test")
        rho = float(acct.zcdp_after(xi, sens=sens, log_sigma1=log_s1, log_R=log_R))
        with jax.enable_x64(True):
            closed = float(privacy.closed_forms.rdp_to_dp(
                privacy.closed_forms.DEFAULT_ORDERS,
                rho * jnp.asarray(privacy.closed_forms.DEFAULT_ORDERS), 1e-3))
        tight = float(privacy.rdp_epsilon(events, 1e-3)[0])
        assert tight == pytest.approx(closed, rel=1e-9)
        assert tight <= float(privacy.closed_forms.zcdp_to_dp(rho, 1e-3)) + 1e-12


def _ring_problem(n=8, d=3, l1=0.0, seed=0):
    """Least squares + ½‖x‖² (+ l1‖x‖₁) on a ring, small gradients at 0."""
    rng = np.random.default_rng(seed)
    feats = rng.normal(size=(n, 10, d)) / np.sqrt(d)
    labels = 0.1 * rng.normal(size=(n, 10))
    return problems.from_arrays(feats, labels, loss=problems.L1LeastSquares(),
                                reg={"ridge": 1.0, "l1": l1}, reference=False,
                                dtype=np.float64)


def test_dp_recal_guarantee_is_infinite_and_keeps_theorem4_as_the_papers_curves():
    """The x channel leaks the gradient: ε = inf with the reason; Theorem 4 (Lemma 5's Δ, then
    the per-agent Δ_i = 2α_iβc) are the paper's curves at min(k, ξ) activations, never sound."""
    net = network.make_network("ring", 8)
    params = recal.calibrate(algorithms.DPRECALParams(alpha=0.2, xi=300.0), 12.0, delta=1e-3)
    report = algorithms.DPRECAL().privacy(_ring_problem(), net, params, steps=10_000,
                                          delta=1e-3)
    assert np.all(np.isinf(report.epsilon)) and "reveals" in report.reason
    assert privacy.PAPER_PRINTED not in report.sound
    assert report.worst(privacy.PAPER_PRINTED) == pytest.approx(12.0, rel=1e-10)
    quarter = privacy.closed_forms.zcdp_to_dp(privacy.closed_forms.zcdp_for_epsilon(12.0, 1e-3) / 4,
                                              1e-3)  # Δ/2: ρ/4
    assert report.worst(privacy.PAPER_CORRECTED) == pytest.approx(float(quarter), rel=1e-10)


class _Hearing:
    """The network with every neighbour's release fixed to ``R``: ``(W X)_i = W_ii X_i +
    Σ_{j≠i} W_ij R_j`` (the agent mixes its own exact value, as the channel does)."""

    def __init__(self, net, R):
        self.net, self.R = net, R

    def __getattr__(self, name):
        return getattr(self.net, name)

    def mix(self, X, *, message=None):
        del message
        return self.net.mix(self.R) + self.net.w_diag[:, None] * (X - self.R)


def _same_transcript_differences(alg, params, pair, net, steps):
    """Agent 0's released difference at each step when both data sets produce the *same*
    transcript: the second run's noise is the first run's shifted so that its release equals the
    first run's (σ = 1), i.e. its core algorithm hears the first run's releases, so the difference
    of the means is what an adaptive-composition sensitivity must bound."""
    key = jax.random.PRNGKey(3)
    s0 = alg.init(key, pair[0], net, params)
    s1 = alg.init(key, pair[1], net, params)
    name = "v" if isinstance(alg, algorithms.DPNIDS) else "x"
    inner_params = alg.split(params)[0]
    out = []
    for k in map(jnp.asarray, range(steps)):
        noise = alg.noise(jax.random.fold_in(key, k), s0, params, k)
        n0, m0 = alg.step(s0, noise, pair[0], net, params, k)
        _, m1 = alg.step(s1, noise, pair[1], net, params, k)
        gap = m0[name] - m1[name]  # σ = 1: shifting the noise by the gap equalises the releases
        np.testing.assert_allclose(gap[1:], 0.0, atol=1e-12)  # only agent 0's data differs
        inner, _ = alg.inner.step(s1.inner, {}, pair[1], _Hearing(net, m0[name]), inner_params, k)
        out.append(np.asarray(gap[0]))
        s0, s1 = n0, s1.replace(inner=inner)
    return np.linalg.norm(np.stack(out), axis=-1)


@pytest.mark.parametrize("name", ["dp_nids", "dp_extra"])
def test_synchronous_sensitivities_bound_and_attain_the_worst_pair(name):
    """Agent 0's gradient is ±c·u (a linear tilt, difference 2c everywhere): from one transcript
    its released difference never exceeds the derived Δ_k and attains it at the first releases
    (DP-NIDS: 4αc, twice Lemma 5's; DP-EXTRA: 2αc then 2αc(1 + W_00))."""
    with jax.enable_x64(True):
        net = network.make_network("ring", 8)
        pair = recal_cases.recal_pair(8, 22)
        alg = algorithms.get(name).with_sampler("float")  # shifted draws: equal float releases
        params = algorithms.DPStepParams(log_sigma1=0.0, log_R=0.0)
        steps = 6
        gaps = _same_transcript_differences(alg, params, pair, net, steps)
        report = alg.privacy(pair[0], net, params, steps)
        sens = alg._sensitivity(np.asarray(net.w_diag), params.alpha, params.c, steps, 0.0)
        assert report.events.sensitivity.shape == (8, steps)
        np.testing.assert_allclose(report.events.sensitivity, sens)
        assert np.all(gaps <= sens[0] + 1e-9)
        attained = 2 if name == "dp_nids" else 3
        np.testing.assert_allclose(gaps[1:attained], sens[0, 1:attained], rtol=1e-6)
        first = 4 * params.alpha * params.c if name == "dp_nids" else 2 * params.alpha
        assert sens[0, 1] == pytest.approx(first)


def test_rwadmm_charges_every_token_after_the_agents_first_activation():
    """From one transcript (tokens made equal), agent 0's data moves every later token; the
    difference is 4c/(nβ) at its first activation and never exceeds the derived Δ."""
    with jax.enable_x64(True):
        net = network.make_network("ring", 8)
        pair = recal_cases.recal_pair(8, 22)
        alg = algorithms.DPRWADMM(sampler="float")  # shifted draws give equal float releases
        params = algorithms.DPRWADMMParams(log_sigma1=0.0, log_R=0.0)
        key = next(k for k in map(jax.random.PRNGKey, range(100))  # agent 0 holds first
                   if int(alg.init(k, pair[0], net, params).holder) == 0)
        s0, s1 = alg.init(key, pair[0], net, params), alg.init(key, pair[1], net, params)
        gaps, senders = [], []
        for k in map(jnp.asarray, range(24)):
            noise = alg.noise(jax.random.fold_in(key, k), s0, params, k)
            n0, m0 = alg.step(s0, noise, pair[0], net, params, k)
            _, m1 = alg.step(s1, noise, pair[1], net, params, k)
            gap = m0["x"] - m1["x"]
            n1, m1 = alg.step(s1, {**noise, "z": noise["z"] + gap}, pair[1], net, params, k)
            np.testing.assert_allclose(m0["x"], m1["x"], atol=1e-12)
            gaps.append(float(np.linalg.norm(gap)))
            senders.append(int(m0["sender"]))
            s0, s1 = n0, n1
        sens = acct.rwadmm_sensitivity(8, params.beta, params.c, 24)
        assert senders[0] == 0 and senders.count(0) >= 2
        assert gaps[0] == pytest.approx(sens[0], rel=1e-6)
        assert all(g > 0.1 * sens[0] for g in gaps)  # charged to agent 0 whoever holds the token
        assert max(gaps) <= sens[1] + 1e-12
        report = alg.privacy(pair[0], net, params, 24)
        np.testing.assert_allclose(report.events.sensitivity[0], sens)


def test_history_fixed_accounting_under_reports_and_the_guarantee_is_above_the_papers_curve():
    """The guarantee of DP-NIDS exceeds the paper's history-fixed curve; the audit's positive
    control claims exactly that accountant on Lemma 5's Δ = 2αc."""
    net = network.make_network("ring", 8)
    params = algorithms.DPStepParams(log_sigma1=-1.0)
    report = algorithms.DPNIDS().privacy(_ring_problem(), net, params, 2)
    claimed = recal_cases.nids_history_fixed_epsilon(params, net, 2)
    assert report.epsilon[0] > claimed
    assert report.worst(privacy.PAPER_PRINTED) < report.epsilon_max


def test_prox_residual_widens_the_synchronous_sensitivity():
    """With an ℓ1 term the prox residual adds 2αl1√d per occurrence: larger Δ, never smaller."""
    net = network.make_network("ring", 8)
    params = algorithms.DPStepParams()
    plain = algorithms.DPNIDS().privacy(_ring_problem(), net, params, 5)
    l1 = algorithms.DPNIDS().privacy(_ring_problem(l1=0.5), net, params, 5)
    assert np.all(l1.events.sensitivity >= plain.events.sensitivity)
    assert l1.epsilon_max > plain.epsilon_max
    assert acct.prox_residual_bound(_ring_problem(l1=0.5), 0.05) == pytest.approx(
        2 * 0.05 * 0.5 * math.sqrt(3))


def test_mradmm_inexact_solve_sensitivity():
    """T gradient steps of size γ on a 2ρd-strongly convex penalty: 2γcΣ_{s<T} q^s, below the
    exact argmin's c/(ρd) and tending to it."""
    got = acct.mradmm_solve_sensitivity(0.05, 2.0, 1.0, 20)
    assert float(got) == pytest.approx(2 * 0.05 * (1 - 0.8 ** 20) / 0.2, rel=1e-12)
    assert float(acct.mradmm_solve_sensitivity(0.05, 2.0, 1.0, 10_000)) == pytest.approx(0.5)
    # q = 0: only the last step's gradient moves the iterate, 2γc
    assert float(acct.mradmm_solve_sensitivity(0.25, 2.0, 1.0, 3)) == pytest.approx(0.5)


def test_reports_name_relation_assumption_and_model_coverage():
    """Every family member: replace_agent, the gradient bound enforced by the step's clip (the
    unclipped variant on least squares + ridge, with no bound over all x, fails: inf), models covered where they are releases and inf where they are not."""
    net = network.make_network("ring", 8)
    prob = _ring_problem()
    for name in ("dp_nids", "dp_extra", "dp_icadmm", "dp_rwadmm", "dp_mradmm"):
        alg = algorithms.get(name)
        report = alg.privacy(prob, net, alg.default_params(), 4)
        assert report.relation == "replace_agent"
        (assumption,) = report.assumptions
        assert assumption.enforced and assumption.holds is True  # the step clips at c
        models = alg.privacy(prob, net, alg.default_params(), 4, release="messages+models")
        if alg.models_covered:
            np.testing.assert_allclose(models.epsilon, report.epsilon)
        else:
            assert np.all(np.isinf(models.epsilon))
        paper = dataclasses.replace(alg, enforce_bound=False)  # unclipped: ridge, no bound in x
        failed = paper.privacy(prob, net, alg.default_params(), 4)
        assert np.all(np.isinf(failed.epsilon)) and "FAILS on this problem" in failed.reason


def test_realised_plf_gives_the_run_budget():
    """Theorem 1: ε of a run is Theorem 4 at its PLF; below the target PLF it is smaller."""
    params = recal.calibrate(algorithms.DPRECALParams(alpha=0.2, xi=300.0), 10.0)
    sens = acct.sensitivity(0.2, params.beta, params.c)
    eps = acct.plf_epsilon_table([150, 299, 300], sens=sens, log_sigma1=params.log_sigma1,
                                 log_R=params.log_R, delta=params.delta)
    assert eps[0] < eps[1] < eps[2] == pytest.approx(10.0, rel=1e-10)


def test_icadmm_report_uses_its_sensitivities():
    """DP-ICADMM Δ_i = 2c/(β + 2ρd_i) on the geometric schedule: its history is in the
    transcript, so the paper's curve is the real-valued zCDP curve (the float sampler's "ideal
    zcdp"); the lattice guarantee adds the rounding, Δ + (σ_t/R)(1 + 2uL)√d, at δ(1 − 2⁻⁶)."""
    net = network.make_network("ring", 8)
    prob = _ring_problem()
    q = algorithms.DPICADMMParams(rho=0.5, beta=1.0, c=2.0, log_sigma1=2.0, log_R=0.05)
    ideal = algorithms.DPICADMM(sampler="float").privacy(prob, net, q, steps=40, delta=1e-3)
    want = acct.epsilon_after(40, sens=4.0 / 3.0, log_sigma1=2.0, log_R=0.05, delta=1e-3)
    assert ideal.worst("ideal zcdp") == pytest.approx(float(want), rel=1e-12)
    assert np.isinf(ideal.epsilon_max) and "float sampler" in ideal.reason
    admm = algorithms.DPICADMM().privacy(prob, net, q, steps=40, delta=1e-3)
    assert set(admm.sound) == {"zcdp", "rdp", "pld"}  # a lattice release: every accountant
    assert admm.worst(privacy.PAPER_PRINTED) == pytest.approx(float(want), rel=1e-12)
    sigma = np.exp(acct.release_log_scale(np.arange(1, 41), 2.0, 0.05))
    sens = np.asarray(privacy.samplers.lattice_sensitivity(4.0 / 3.0, prob.dim, sigma, np.float64,
                                                  law="gaussian", clipped=False))
    rho = np.sum(sens ** 2 / (2 * sigma ** 2))
    lattice = float(privacy.closed_forms.zcdp_to_dp(rho, 1e-3 * (1 - 2.0 ** -6)))
    assert admm.worst("zcdp") == pytest.approx(lattice, rel=1e-12)
    assert float(want) < lattice < 1.01 * float(want) < 19  # below the sampler's cap
    assert admm.epsilon_max <= lattice


def test_schedule_calibration_spends_exactly_the_target_with_decaying_sensitivities():
    """A constant Δ gives Theorem 4's σ₁; the decaying-step DP-ADMM row's Δ_t = 2cγ^{t−1}α₀ over
    2000 releases, calibrated in log space, spends exactly ε = 12 in the generic zCDP sum."""
    log_R = np.log(1.05)
    const = acct.calibrate_log_sigma1(12.0, 1e-3, 300, sens=0.3, log_R=log_R)
    sched = acct.calibrate_log_sigma1_schedule(12.0, 1e-3, np.full(300, 0.3), log_R=log_R)
    assert float(sched) == pytest.approx(float(const), rel=1e-12)
    net = network.make_network("ring", 8)
    q = algorithms.DPICADMMParams(rho=1.0, beta=2.0, decay=0.999, c=1.5, log_R=log_R)
    sens = recal_baselines.icadmm_sensitivity(net, q, 2000)
    assert sens[0, -1] == pytest.approx(2 * 1.5 * 0.999 ** 1999 / 6.0, rel=1e-12)
    log_s1 = acct.calibrate_log_sigma1_schedule(12.0, q.delta, sens.max(axis=0), log_R=log_R)
    prob = _ring_problem()
    ideal = algorithms.DPICADMM(sampler="float")
    report = ideal.privacy(prob, net, q.replace(log_sigma1=float(log_s1)), 2000, delta=q.delta)
    assert report.worst("ideal " + privacy.PAPER_PRINTED) == pytest.approx(12.0, rel=1e-9)
    assert report.worst("ideal zcdp") == pytest.approx(12.0, rel=1e-9)
    fixed = ideal.privacy(prob, net, q.replace(decay=1.0, log_sigma1=float(log_s1)), 2000,
                          delta=q.delta)
    assert fixed.worst("ideal " + privacy.PAPER_PRINTED) > 12.0  # same σ, undecayed step: more
    lattice = algorithms.DPICADMM().privacy(prob, net, q.replace(log_sigma1=float(log_s1)), 2000,
                                            delta=q.delta)  # the rounding costs a little
    assert lattice.worst(privacy.PAPER_PRINTED) == pytest.approx(12.0, rel=1e-9)
    assert 12.0 < lattice.worst("zcdp") < 12.5 and lattice.epsilon_max <= lattice.worst("zcdp")
