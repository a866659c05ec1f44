"""Paper 002's privacy accounting: Theorem 2's moments accountant and the comparison table."""
import math

import numpy as np
import pytest
from scipy.stats import norm

from jaxdp.algorithms.dpadmm import privacy as dpp
from jaxdp.privacy.closed_forms import DEFAULT_ORDERS, gaussian_rdp, rdp_to_dp

# A golden grid computed independently: (ε, δ) -> (ε̄, τ*) for T = 100.
GOLDEN = {
    (0.01, 1e-3): (0.0988, 140), (0.02, 1e-3): (0.1982, 70), (0.05, 1e-3): (0.5009, 28),
    (0.07, 1e-3): (0.7061, 20), (0.1, 1e-3): (1.0193, 14), (0.2, 1e-3): (2.1087, 7),
    (0.01, 1e-4): (0.0991, 186), (0.05, 1e-4): (0.5007, 37), (0.1, 1e-4): (1.0148, 19),
    (0.2, 1e-4): (2.0834, 9), (0.01, 1e-5): (0.0993, 232), (0.05, 1e-5): (0.5006, 46),
    (0.1, 1e-5): (1.0118, 23), (0.2, 1e-5): (2.0671, 12), (0.01, 1e-6): (0.0994, 279),
    (0.02, 1e-6): (0.1991, 139), (0.05, 1e-6): (0.5005, 56), (0.07, 1e-6): (0.7031, 40),
    (0.1, 1e-6): (1.0098, 28), (0.2, 1e-6): (2.0553, 14),
}


def test_moments_accountant_reproduces_the_papers_two_printed_values():
    """Sec. VI-B prints ε̄ = 0.5009 (ε = 0.05) and 1.0193 (ε = 0.1) at δ = 1e-3, T = 100."""
    eps_bar, tau = dpp.moments_accountant(100, [0.05, 0.1], 1e-3)
    assert [round(float(v), 4) for v in eps_bar] == [0.5009, 1.0193]
    assert tau.tolist() == [28, 14]


def test_moments_accountant_matches_the_notes_golden_grid_and_a_brute_force_search():
    """Every (ε, δ) of that table, to 4 decimals and the same τ*; the floor/ceil minimum
    equals a search over τ = 1..1e5."""
    for (eps, delta), (value, tau) in GOLDEN.items():
        ours, ours_tau = dpp.moments_accountant(100, eps, delta)
        assert round(float(ours), 4) == value and int(ours_tau) == tau
        brute, brute_tau = dpp.moments_accountant_bruteforce(100, eps, delta)
        assert float(ours) == pytest.approx(brute, rel=1e-14) and brute_tau == tau


def test_moments_accountant_by_hand_at_one_point():
    """ε = 0.05, δ = 1e-3, T = 100, τ = 28: a = T ε²/(4 ln 1250), ε̄ = 29 a + ln(1000)/28."""
    a = 100 * 0.05**2 / (4 * math.log(1250))
    assert float(dpp.moments_accountant(100, 0.05, 1e-3)[0]) == pytest.approx(
        29 * a + math.log(1000) / 28, rel=1e-14)


def test_moments_accountant_is_rdp_at_integer_orders_with_the_standard_conversion():
    """App. A's log-moment T τ(τ+1) ε²/(4 ln(1.25/δ)) is the Gaussian RDP at α = τ + 1 times τ."""
    orders = np.arange(2.0, 400.0)
    for eps, delta in ((0.05, 1e-3), (0.2, 1e-6), (0.01, 1e-4)):
        z = dpp.noise_multiplier(eps, delta)
        rdp = gaussian_rdp(orders, np.ones(100), np.full(100, z))
        ours = float(dpp.moments_accountant(100, eps, delta)[0])
        assert float(rdp_to_dp(orders, rdp, delta, method="standard")) == pytest.approx(
            ours, rel=1e-12)


def test_tight_accountants_are_below_the_papers_bound_and_pld_matches_exact_gaussian_dp():
    """For every grid point: PLD ≤ RDP ≤ ε̄ (the paper's bound is valid, not optimistic); PLD is
    within 1e-3 above the exact Gaussian-DP ε (Balle & Wang 2018) of μ = √T/z."""
    rows = dpp.composition_table()
    assert len(rows) == 24
    for r in rows:
        assert r["pld"] <= r["rdp"] <= r["moments_accountant"]
        mu = math.sqrt(100) / dpp.noise_multiplier(r["eps"], r["delta"])
        lo, hi = 0.0, 10.0
        for _ in range(100):  # exact ε at δ by bisection
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _gdp_delta(mu, mid) > r["delta"] else (lo, mid)
        assert hi - 1e-9 <= r["pld"] <= hi + 1e-3


def _gdp_delta(mu, eps):
    """δ(ε) of μ-Gaussian DP (Dong, Roth & Su 2019, Cor. 2.13)."""
    return norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def test_composition_columns_by_hand_and_their_order():
    """Plain T ε at T δ; DRV √(2T ln(1/δ)) ε + T ε (e^ε − 1) at (T+1) δ (2.1148 at ε = 0.05,
    δ = 1e-3 by hand); the optimal (KOV) composition ≤ DRV ≤ plain; the MA ε̄ ≤ KOV."""
    rows = {(r["eps"], r["delta"]): r for r in dpp.composition_table([0.05, 0.2], [1e-3, 1e-6])}
    r = rows[(0.05, 1e-3)]
    assert (r["plain"], r["plain_delta"]) == pytest.approx((5.0, 0.1))
    assert r["advanced_drv"] == pytest.approx(
        math.sqrt(200 * math.log(1000)) * 0.05 + 5 * math.expm1(0.05), rel=1e-14)
    assert round(r["advanced_drv"], 4) == 2.1148 and r["advanced_delta"] == pytest.approx(0.101)
    for r in rows.values():
        assert r["moments_accountant"] <= r["advanced_optimal"] <= r["advanced_drv"] <= r["plain"]
    md = dpp.table_markdown(list(rows.values()))
    assert md.count("\n") == 5 and "| 0.05 | 0.001 | 0.5009 | 28 |" in md


def test_advanced_composition_below_the_spent_delta_is_infinite():
    """T steps of (ε, δ) cannot be composed at a total δ below 1 − (1 − δ)^T."""
    assert dpp.advanced_composition_optimal(100, 0.05, 1e-3, 1e-3) == math.inf


def test_dp_accounting_rdp_equals_the_improved_conversion_at_its_default_orders():
    """The table's RDP column (dp-accounting) equals our closed form at dp-accounting's orders with
    the improved conversion, and is below the paper's integer-order standard conversion."""
    events = dpp.gaussian_releases(100, 0.05, 1e-3)
    assert events.scale[0, 0] == pytest.approx(math.sqrt(2 * math.log(1250)) / 0.05)
    z = dpp.noise_multiplier(0.05, 1e-3)
    improved = float(rdp_to_dp(DEFAULT_ORDERS, gaussian_rdp(DEFAULT_ORDERS, np.ones(100),
                                                            np.full(100, z)), 1e-3))
    row = dpp.composition_table([0.05], [1e-3])[0]
    assert row["rdp"] == pytest.approx(improved, rel=1e-9) and row["rdp"] < 0.5009


@pytest.mark.parametrize("args, match", [
    ((0, 0.05, 1e-3), "T >= 1"), ((100, 0.0, 1e-3), "eps > 0"), ((100, 0.05, 1.0), "delta < 1"),
])
def test_moments_accountant_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        dpp.moments_accountant(*args)


def test_moments_accountant_with_a_separate_total_delta():
    """With total_delta = δ it is the paper's formula; a larger total δ lowers ε̄ (ln(1/δ) term)."""
    same = dpp.moments_accountant(100, 0.05, 1e-3, total_delta=1e-3)[0]
    assert float(same) == float(dpp.moments_accountant(100, 0.05, 1e-3)[0])
    assert float(dpp.moments_accountant(100, 0.05, 1e-3, total_delta=1e-2)[0]) < float(same)
    with pytest.raises(ValueError, match="total_delta=1.0"):
        dpp.moments_accountant(100, 0.05, 1e-3, total_delta=1.0)


@pytest.mark.parametrize("eps, delta, match", [
    (0.0, 1e-3, r"\.eps .* must be in \(0, 1\]; got 0.0"),
    (1.5, 1e-3, r"\.eps .* must be in \(0, 1\]; got 1.5"),
    (0.1, 0.0, r"\.delta .* must be one value in \(0, 1\); got 0.0"),
    (0.1, 1.0, r"\.delta .* must be one value in \(0, 1\); got 1.0"),
    (0.1, float("nan"), r"\.delta .* got nan"),
])
def test_check_noise_params_names_the_bad_value(eps, delta, match):
    with pytest.raises(ValueError, match=match):
        dpp.check_noise_params("DPADMMParams", eps, delta)


def _small_run():
    from jaxdp import algorithms, network, problems

    features, labels = problems.adult_synthetic(60, seed=0)
    problem = problems.from_arrays(*problems.partition(problems.normalize_adult(features), labels,
                                                       4, seed=1),
                                   loss="logistic", reg={"lam": 0.01}, reference=False)
    return algorithms.DPADMM(), problem, network.make_network("complete", 4)


@pytest.mark.parametrize("steps", [1, 7, 100])
def test_zcdp_guarantee_is_the_reports_zcdp_curve_and_its_inverse(steps):
    """One formula: the jnp zcdp_guarantee (used to calibrate in tuning) equals the report's
    "zcdp" curve to 1e-9 — the lattice report's (the default) with ``lattice_dim=d``, the float
    sampler's "ideal zcdp" without — and eps_for_zcdp_guarantee inverts it."""
    import dataclasses

    alg, problem, net = _small_run()
    params = alg.default_params().replace(eps=0.3, delta=1e-4)
    for sampler, dim, curve in (("lattice", problem.dim, "zcdp"), ("float", None, "ideal zcdp")):
        run = dataclasses.replace(alg, sampler=sampler)
        for delta in (1e-5, 1e-2):
            report = run.privacy(problem, net, params, steps, delta=delta)
            ours = float(dpp.zcdp_guarantee(0.3, 1e-4, steps, delta, lattice_dim=dim))
            np.testing.assert_allclose(report.final(curve), ours, rtol=1e-9)
            if sampler == "lattice":
                assert report.epsilon_max <= ours * (1 + 1e-12)
            back = float(dpp.eps_for_zcdp_guarantee(ours, 1e-4, steps, delta, lattice_dim=dim))
            assert back == pytest.approx(0.3, rel=1e-9)
    lattice = float(dpp.zcdp_guarantee(0.3, 1e-4, steps, 1e-5, lattice_dim=problem.dim))
    assert lattice > float(dpp.zcdp_guarantee(0.3, 1e-4, steps, 1e-5))  # the rounding slack


def test_release_ratios_halve_the_first_release_only():
    r = dpp.release_ratios(0.5, 1e-3, 4)
    z = float(dpp.noise_multiplier(0.5, 1e-3))
    np.testing.assert_allclose(r, [0.5 / z, 1 / z, 1 / z, 1 / z], rtol=1e-15)


def test_report_flags_data_that_break_the_s1_assumption():
    """Rows of norm 2 > S1 = 1, the paper's unprojected step (``enforce_bound=False``): the
    assumption is checked on the data and ε is inf, the reason naming the bound, the largest
    record and what to change. The default step projects the records: finite, enforced."""
    import dataclasses

    enforced, problem, net = _small_run()
    alg = dataclasses.replace(enforced, enforce_bound=False)
    big = dataclasses.replace(problem, features=2.0 * problem.features)
    projected = enforced.privacy(big, net, alg.default_params(), 3)
    assert np.isfinite(projected.epsilon_max) and projected.assumptions[0].enforced
    report = alg.privacy(big, net, alg.default_params(), 3)
    assert report.failed_assumptions() and report.relation == "replace_record"
    assert np.all(np.isinf(report.epsilon)) and "‖a‖₂ ≤ S1 = 1" in report.reason
    assert "max ‖a‖ =" in report.reason and "S1" in report.reason.split("finite ε")[-1]
    assert alg.privacy(problem, net, alg.default_params(), 3).failed_assumptions() == ()


def test_one_release_guarantee_is_the_exact_gaussian_and_the_half_control_is_below_it():
    """At one step DP-ADMM is one Gaussian release of μ = Δ_0/σ. The real-valued mechanism (float
    sampler, "ideal pld") is within 2 % above the exact ε (Balle & Wang 2018). The default lattice
    guarantee is one discrete Gaussian release of μ' = μ + s (s the rounding slack, ≈ 1e-3 μ
    here), at or above its exact ε; the audit's positive control, the same accountant on halved
    sensitivities, is at or above the exact ε of μ'/2 and below the guarantee."""
    import dataclasses

    import jax

    from jaxdp.attacks.audit import gaussian_mechanism_epsilon
    from jaxdp.algorithms.dpadmm import cases

    with jax.enable_x64(True):
        (control,) = [c for c in cases.audit_cases() if c.control == "positive"]
        args = (control.pair[0], control.network, control.params, 1)
        report = control.algorithm.privacy(*args)
        ideal = dataclasses.replace(control.algorithm, sampler="float").privacy(*args)
    mu = float(np.exp(ideal.events.log_ratio[0, 0]))
    assert mu == pytest.approx(1 / (2 * float(dpp.noise_multiplier(1.0, 0.99))), rel=1e-12)
    exact = gaussian_mechanism_epsilon(mu, 1e-5)
    assert exact <= ideal.curves["ideal pld"][0, -1] <= 1.02 * exact
    lattice_mu = float(np.exp(report.events.log_ratio[0, 0]))
    slack = dpp.lattice_ratio_slack(control.pair[0].dim)
    assert lattice_mu == pytest.approx(mu + slack, rel=1e-9) and slack < 2e-3 * mu
    assert gaussian_mechanism_epsilon(lattice_mu, 1e-5) <= report.epsilon[0]
    half = gaussian_mechanism_epsilon(lattice_mu / 2, 1e-5)
    assert half <= control.claimed < report.epsilon[0]
