"""Issue 9's worked tuning results: the JAX accountants, the fixed budget, the reproductions."""
import json
import math

import jax
import numpy as np
import pytest

from jaxdp import algorithms
from jaxdp.algorithms.dpadmm import privacy as dpadmm_privacy
from jaxdp.algorithms.dpp2 import privacy as dpp2_privacy
from jaxdp.algorithms.ltadmm import privacy as ltadmm_privacy
from jaxdp.experiments import REPRODUCTIONS
from jaxdp.experiments import tuning as T

DPP2_KW = dict(d=10, adjacency=1.0, M=5.03)
TINY = {  # one budget each, a few steps: the pipeline, not the numbers
    "tune-dpp2": dict(steps=20, r_grid=(0.9,)),
    "tune-dpadmm": dict(steps=5, eps_grid=(0.05,), providers=10, rows=30),
    "tune-ltadmm": dict(rounds=5, eps_grid=()),
}


@pytest.mark.parametrize("alpha, r, u_e, u_w", [(0.0994, 0.9, 1.0, 0.994), (0.3, 0.5, 2.0, 0.1),
                                                (0.01, 0.99, 1e-3, 5.0)])
def test_dpp2_jax_accountant_equals_the_family_float64_accountant(alpha, r, u_e, u_w):
    """ln ε of the JAX closed form equals dpp2_privacy's sound accountant (the report's pure-DP
    curve, dpp2_log_epsilon) and its tight Theorem 3 to 1e-10."""
    params = algorithms.DPP2Params(alpha=alpha, r=r, u_e=u_e, u_w=u_w)
    ours = float(T.dpp2_log_epsilon(params, 300, **DPP2_KW))
    kw = dict(d=10, delta=1.0, alpha=alpha, M=5.03, u_e=u_e, u_w=u_w, r=r)
    ref = dpp2_privacy.theorem3_log_epsilon_curve(300, variant="tight", **kw)
    np.testing.assert_allclose(ours, ref[0, -1], rtol=1e-10)
    np.testing.assert_allclose(ours, dpp2_privacy.dpp2_log_epsilon(300, **kw)[0, -1], rtol=1e-10)


def test_dpp2_jax_accountant_is_differentiable_in_alpha_and_r():
    """The gradient of ln ε in (α, r) matches central finite differences."""
    @jax.jit
    def log_eps(alpha, r):
        return T.dpp2_log_epsilon(algorithms.DPP2Params(alpha=alpha, r=r), 200, **DPP2_KW)

    grad = jax.grad(log_eps, argnums=(0, 1))(0.1, 0.9)
    h = 1e-6
    fd = ((log_eps(0.1 + h, 0.9) - log_eps(0.1 - h, 0.9)) / (2 * h),
          (log_eps(0.1, 0.9 + h) - log_eps(0.1, 0.9 - h)) / (2 * h))
    np.testing.assert_allclose(grad, fd, rtol=1e-6)


@pytest.mark.parametrize("total", [0.05, 0.5, 1.0, 3.0])
def test_dpadmm_calibration_meets_the_reports_zcdp_guarantee_exactly(total):
    """The tuning calibration (eps_for_zcdp_guarantee) gives a per-iteration ε whose privacy
    report's zCDP curve is the total (1e-9), and the jnp formula the loop differentiates
    (zcdp_guarantee) is that curve; the guarantee (PLD) lies below it."""
    fam = T.dpadmm_family(steps=20, providers=4, rows=10)
    paper = fam.paper_points[fam.headline]
    calibrated = fam.calibrator(total)(paper)
    report = fam.algorithm.privacy(fam.problem, fam.network, calibrated, 20, delta=T.DPADMM_DELTA)
    np.testing.assert_allclose(report.worst("zcdp"), total, rtol=1e-9)
    np.testing.assert_allclose(float(fam.jax_spent(calibrated)), total, rtol=1e-9)
    np.testing.assert_allclose(fam.spent(calibrated), total, rtol=1e-9)
    assert report.epsilon_max <= total


@pytest.mark.parametrize("eps", [5.0, 50.0, 3000.0])
def test_ltadmm_calibration_meets_the_reports_zcdp_curve_exactly(eps):
    """The tuning calibration (ltadmm_privacy.zcdp_sigma with the lattice coefficients) gives a
    σ_e whose lattice report's zCDP curve is the target (1e-9) and the guarantee below it; above
    the sampler's cap (ε ≈ 20) the zCDP curve is inf and the budget is the same formula uncapped,
    while the fixed-batch amplified curves (Wang, Balle & Kasiviswanathan's RDP, 2.41 at ε = 50;
    the PLD of the dominating pairs, 0.99, the headline) stay finite at ε = 50 and not at 3000."""
    fam = T.ltadmm_family(rounds=5, eps_grid=())
    calibrated = fam.calibrator(eps)(fam.paper_points[0].replace(zeta=0.7))
    report = fam.algorithm.privacy(fam.problem, fam.network, calibrated, 5, delta=T.LTADMM_DELTA)
    if eps < 19:
        np.testing.assert_allclose(report.worst("zcdp"), eps, rtol=1e-9)
        assert report.epsilon_max <= eps * (1 + 1e-12)
    else:
        assert np.isinf(report.worst("zcdp"))
        assert np.isfinite(report.epsilon_max) == (eps == 50.0)
        assert report.epsilon_max == min(report.worst(m) for m in report.sound)
    np.testing.assert_allclose(float(fam.jax_spent(calibrated)), eps, rtol=1e-9)
    np.testing.assert_allclose(fam.spent(calibrated), eps, rtol=1e-9)


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("tuning")
    return {name: (REPRODUCTIONS[name](out / name, seeds=2, held_out=4, iterations=2, **kw),
                   out / name) for name, kw in TINY.items()}


@pytest.mark.parametrize("name", list(TINY))
def test_reproduction_writes_its_files_and_every_claim(tiny_runs, name):
    """Each tuning reproduction writes the frontier PNG, its json and a report with every claim."""
    report, out = tiny_runs[name]
    for f in ("frontier.png", "frontier.json", "report.md", "report.json"):
        assert (out / f).is_file(), f
    assert [c.id for c in report.claims] == list(T.CLAIMS)


def _spent(name, params, steps):
    """The family's float64 accountant on tuned hyperparameters read back from the json."""
    if name == "tune-dpp2":
        return dpp2_privacy.theorem3_log_epsilon_curve(
            steps, variant="tight", d=10, delta=1.0, alpha=params["alpha"], M=5.03,
            u_e=params["u_e"], u_w=params["u_w"], r=params["r"])[0, -1]
    if name == "tune-dpadmm":  # the lattice sampler: its rounding slack and δ share
        prob = T.dpadmm_family(steps=steps, providers=10, rows=30).problem
        return float(dpadmm_privacy.zcdp_guarantee(params["eps"], params["delta"], steps,
                                                   T.DPADMM_DELTA, lattice_dim=prob.dim,
                                                   dtype=prob.features.dtype))
    fam_alg = algorithms.LTADMMDP()  # the lattice sampler: the report's coefficients and δ share
    from jaxdp.experiments.ltadmm import paper_setup
    return float(ltadmm_privacy.zcdp_epsilon(
        steps * 4, 2.0 * params["zeta"], params["sigma_e"],
        ltadmm_privacy.accounting_delta(fam_alg, T.LTADMM_DELTA),
        lattice=ltadmm_privacy.lattice_coefficients(fam_alg, paper_setup()[0])))


@pytest.mark.parametrize("name", list(TINY))
def test_calibrated_epsilon_equals_the_target_after_tuning(tiny_runs, name):
    """After tuning moved the free hyperparameters, the budget spent equals the target to 1e-9."""
    data = json.loads((tiny_runs[name][1] / "frontier.json").read_text())
    for point in data["points"]:
        tuned, paper = point["tuned_params"], point["paper_params"]
        assert any(not math.isclose(tuned[f], paper[f]) for f in data["fields"])
        spent = _spent(name, tuned, data["steps"])
        np.testing.assert_allclose(spent, point["budget"], rtol=1e-9)


def test_tune_rejects_a_unit_field_outside_the_open_interval():
    """tune's unit_fields (logit space) must be tuned fields with start values in (0, 1)."""
    from jaxdp.tune import tune

    params = algorithms.DPP2Params(r=1.0)
    with pytest.raises(ValueError, match="unit field 'r' must be one of the tuned fields"):
        tune(algorithms.DPP2(), None, None, params, fields=("alpha", "r"), unit_fields=("r",),
             steps=2)
    with pytest.raises(ValueError, match="unit field 'r' must be one of the tuned fields"):
        tune(algorithms.DPP2(), None, None, params.replace(r=0.5), fields=("alpha",),
             unit_fields=("r",), steps=2)


def test_log_utility_records_the_utility_itself_and_descends():
    """With log_utility=True the history holds the mean utility (not its log) and it decreases."""
    from jaxdp.tune import mean_utility, seed_keys, tune
    from tests.harness import small_network, small_problem

    prob, net = small_problem("logistic"), small_network()
    start = algorithms.DPDGDParams(alpha=0.01, clip=0.2, sigma=1.0)
    res = tune(algorithms.DPDGD(), prob, net, start, fields=("alpha",), steps=10, seeds=2,
               held_out_seeds=2, iterations=3, log_utility=True)
    direct = mean_utility(algorithms.DPDGD(), prob, net, start, seed_keys(range(2)), steps=10,
                          utility="objective")
    np.testing.assert_allclose(res.history[0]["utility"], direct, rtol=1e-12)
    assert res.history[-1]["utility"] < res.history[0]["utility"]
