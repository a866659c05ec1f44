"""DP-RECAL's accountant (paper 003, Lemmas 5–6, Theorems 1 and 4): hand-computed values, the
notes' worked numbers, log-space calibration up to σ₁ ≈ 1e40, and dp-accounting on the same
Gaussian sequence."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, network, privacy
from jaxdp.algorithms import recal, recal_baselines, recal_privacy as acct


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
    assert float(privacy.zcdp_for_epsilon(12.0, 1e-3)) == pytest.approx(2.9586, abs=1e-4)
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
    """Lemma 5: 4 max_i α_i β c; notes §4.4: 2 α_i β c per agent."""
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
            closed = float(privacy.rdp_to_dp(privacy.DEFAULT_ORDERS,
                                             rho * jnp.asarray(privacy.DEFAULT_ORDERS), 1e-3))
        tight = float(privacy.rdp_epsilon(events, 1e-3)[0])
        assert tight == pytest.approx(closed, rel=1e-9)
        assert tight <= float(privacy.zcdp_to_dp(rho, 1e-3)) + 1e-12


def test_dp_recal_report_theorem_equals_zcdp_and_counts_activations():
    """The report's step axis counts activations, capped at ξ; Theorem 4 = composed zCDP."""
    prob = jnp.zeros(1)  # unused by privacy()
    net = network.make_network("ring", 8)
    params = recal.calibrate(algorithms.DPRECALParams(alpha=0.2, xi=300.0), 12.0)
    report = algorithms.DPRECAL().privacy(prob, net, params, steps=10_000)
    assert report.steps[-1] == 300
    np.testing.assert_allclose(report.curves["theorem"], report.curves["zcdp"], rtol=1e-10)
    assert report.worst("theorem") == pytest.approx(12.0, rel=1e-10)
    assert report.worst("rdp") < 12.0
    tight = algorithms.DPRECAL(sensitivity="tight").privacy(prob, net, params, steps=300)
    quarter = privacy.zcdp_to_dp(privacy.zcdp_for_epsilon(12.0, 1e-3) / 4, 1e-3)  # Δ/2: ρ/4
    assert tight.worst("theorem") == pytest.approx(float(quarter), rel=1e-10)


def test_realised_plf_gives_the_run_budget():
    """Theorem 1: ε of a run is Theorem 4 at its PLF; below the target PLF it is smaller."""
    params = recal.calibrate(algorithms.DPRECALParams(alpha=0.2, xi=300.0), 10.0)
    sens = acct.sensitivity(0.2, params.beta, params.c)
    eps = acct.plf_epsilon_table([150, 299, 300], sens=sens, log_sigma1=params.log_sigma1,
                                 log_R=params.log_R, delta=params.delta)
    assert eps[0] < eps[1] < eps[2] == pytest.approx(10.0, rel=1e-10)


def test_baseline_reports_use_their_sensitivities():
    """DP-NIDS Δ = 2αc and DP-ICADMM Δ_i = 2c/(β + 2ρd_i) on the same geometric schedule."""
    net = network.make_network("ring", 8)
    p = algorithms.DPStepParams(alpha=0.1, c=2.0, log_sigma1=1.0, log_R=0.05)
    nids = algorithms.DPNIDS().privacy(None, net, p, steps=40)
    want = acct.epsilon_after(40, sens=0.4, log_sigma1=1.0, log_R=0.05, delta=p.delta)
    assert nids.worst("theorem") == pytest.approx(float(want), rel=1e-12)
    q = algorithms.DPICADMMParams(rho=0.5, beta=1.0, c=2.0, log_sigma1=1.0, log_R=0.05)
    admm = algorithms.DPICADMM().privacy(None, net, q, steps=40)
    want = acct.epsilon_after(40, sens=4.0 / 3.0, log_sigma1=1.0, log_R=0.05, delta=q.delta)
    assert admm.worst("theorem") == pytest.approx(float(want), rel=1e-12)


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
    report = algorithms.DPICADMM().privacy(None, net, q.replace(log_sigma1=float(log_s1)), 2000)
    assert report.worst("theorem") == pytest.approx(12.0, rel=1e-9)
    assert report.worst("zcdp") == pytest.approx(12.0, rel=1e-9)
    fixed = algorithms.DPICADMM().privacy(None, net, q.replace(decay=1.0, log_sigma1=float(log_s1)),
                                          2000)
    assert fixed.worst("theorem") > 12.0  # the same σ with an undecayed step spends more
