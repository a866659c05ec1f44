"""The reproductions' lattice-vs-float reruns (issue 22, ``benchmarks/lattice_reproductions.py``):
the sampler reaches every private algorithm of a DP-ADMM Setup, a bad one is refused before any
run, and the run offsets select exactly the runs of a longer series (so disjoint offsets give
independent runs)."""
import jax
import numpy as np
import pytest

from jaxdp.experiments import dpadmm_common as dc
from jaxdp.experiments import ldp

TINY = {"providers": 2, "rows": 5, "steps": 2, "eps_grid": (1.0,), "delta_grid": (1e-3,)}


@pytest.mark.parametrize("sampler", ["lattice", "float"])
def test_dpadmm_setup_sampler_reaches_every_private_algorithm(sampler):
    configs = dc._configs(dc.Setup(sampler=sampler, **TINY), "l2", 1.0, ((0.1, 1e-3),),
                          ("paper", "corrected"))
    private = {name: alg for name, (alg, _) in configs.items() if alg.sampler_of() is not None}
    assert set(private) == {"dp_admm", "alg2_paper", "alg2_corrected"}
    assert {alg.sampler for alg in private.values()} == {sampler}


def test_dpadmm_bad_sampler_is_refused_before_a_run():
    setup = dc.Setup(seeds=1, sampler="exact", **TINY)
    with pytest.raises(ValueError, match="sampler must be one of .*'exact'"):
        dc.run_family(setup, dc.paper_data(setup), "l1")


def test_dpadmm_first_run_selects_the_runs_of_a_longer_series():
    both = dc.Setup(seeds=2, **TINY)
    second = dc.Setup(seeds=1, first_run=1, **TINY)
    long, _ = dc.run_family(both, dc.paper_data(both), "l1")
    short, _ = dc.run_family(second, dc.paper_data(second), "l1")
    acc = "test_accuracy"
    np.testing.assert_array_equal(short["dp_admm"][acc][0], long["dp_admm"][acc][1])
    assert not np.array_equal(long["dp_admm"]["augmented_objective"][0],
                              long["dp_admm"]["augmented_objective"][1])


def test_ldp_offsets_select_the_instances_and_keys_of_a_longer_series():
    pool = ldp._pool(None, ldp.Report("x", "x"))
    four = ldp._instances(pool, 4, 4, 3)
    last = ldp._instances(pool, 4, 4, 1, first=2)
    np.testing.assert_array_equal(last[0][0].features, four[2][0].features)
    alg = ldp.algorithms.LDPDGDStar()
    with jax.enable_x64(True):
        long = ldp._curves(alg, alg.default_params(), four, 3, False, "", first_key=0)
        short = ldp._curves(alg, alg.default_params(), last, 3, False, "", first_key=2)
    np.testing.assert_array_equal(short["error"][0], long["error"][2])
    assert not np.array_equal(long["error"][1], long["error"][2])


def test_dpp2_fig3_runs_every_method_on_the_papers_float_law():
    """DiaDSP's and PPDC's noise decays as u·r̄^k like DPP²'s: under the lattice sampler their
    releases are clamped from some step on (a different algorithm), so Fig. 3 compares all three
    on the float law, and their budgets name the idealized curve they come from."""
    from jaxdp.experiments import dpp2
    assert {alg.sampler_of() for alg, _ in dpp2.fig3_methods().values()} == {"float"}
    prob, net = dpp2.paper_problem(n_agents=4), dpp2.network.make_network("ring", 4)
    alg, params = dpp2.fig3_methods()["PPDC"]
    for r, steps in ((0.5, 5), (0.1, 500)):  # the second's real-valued ε overflows to ∞
        with jax.enable_x64(True):
            budget = dpp2._log10_budget(alg, prob, net, params.replace(r=r), steps)
        assert list(budget) == ["ideal pure_dp"] and np.isfinite(budget["ideal pure_dp"])
        with jax.enable_x64(True):  # every curve of a float-sampler report is named "ideal …"
            report = alg.privacy(prob, net, params.replace(r=r), steps)
        assert "pure_dp" not in report.curves and "ideal pure_dp" in report.curves
        assert not np.isfinite(report.epsilon_max) and report.sound == ("guarantee",)
        assert dpp2._fmt_budget(budget).startswith("ideal pure_dp: ε=10^")
