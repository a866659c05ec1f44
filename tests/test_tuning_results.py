"""Issue 9's worked tuning results: the JAX accountants, the fixed budget, the reproductions."""
import json
import math

import jax
import numpy as np
import pytest

from jaxdp import algorithms
from jaxdp.algorithms import dpp2_privacy, ltadmm_privacy
from jaxdp.algorithms.dpadmm_privacy import moments_accountant, moments_accountant_bruteforce
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
    """ln ε of the JAX closed form equals dpp2_privacy's tight Theorem 3 to 1e-10."""
    params = algorithms.DPP2Params(alpha=alpha, r=r, u_e=u_e, u_w=u_w)
    ours = float(T.dpp2_log_epsilon(params, 300, **DPP2_KW))
    ref = dpp2_privacy.theorem3_log_epsilon_curve(300, variant="tight", d=10, delta=1.0,
                                                  alpha=alpha, M=5.03, u_e=u_e, u_w=u_w, r=r)
    np.testing.assert_allclose(ours, ref[0, -1], rtol=1e-10)


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


@pytest.mark.parametrize("total", [0.05, 0.5009, 1.0193, 3.0, 40.0])
def test_dpadmm_inverse_moments_accountant_meets_the_total_exactly(total):
    """Theorem 2's ε̄ of the JAX inverse equals the total; the JAX ε̄ equals the float64 one."""
    eps = float(T.dpadmm_step_epsilon(total, 100, 1e-3))
    np.testing.assert_allclose(moments_accountant(100, eps, 1e-3)[0], total, rtol=1e-10)
    np.testing.assert_allclose(moments_accountant_bruteforce(100, eps, 1e-3)[0], total,
                               rtol=1e-10)
    np.testing.assert_allclose(float(T.moments_accountant_jax(100, eps, 1e-3)), total,
                               rtol=1e-10)


def test_ltadmm_jax_sigma_equals_theorem2_sigma():
    """σ_e of the JAX closed form equals ltadmm_privacy.theorem2_sigma (ln) to 1e-10."""
    for eps in (0.5, 5.0, 25.56, 300.0):
        ours = float(T.ltadmm_sigma(eps, 200, 4, 0.7, 8, 1000, 1e-4))
        ref = float(ltadmm_privacy.theorem2_sigma(eps, 200, 4, 0.7, 8, 1000, 1e-4))
        np.testing.assert_allclose(ours, ref, rtol=1e-10)
        params = algorithms.LTADMMDPParams(zeta=0.7, sigma_e=ours)
        np.testing.assert_allclose(float(T.theorem2_epsilon_jax(200, algorithms.LTADMMDP(), 1000,
                                                                params)), eps, rtol=1e-10)


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
    if name == "tune-dpadmm":
        return moments_accountant(steps, params["eps"], params["delta"])[0]
    return ltadmm_privacy.theorem2_epsilon(steps, 4, params["zeta"], 8, 1000, params["sigma_e"],
                                           1e-4)


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
