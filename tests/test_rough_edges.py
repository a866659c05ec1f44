"""Issue 23's rough edges, one test (or a few) each: every one failed on the code before the fix.

Tiny problems and few steps: each test runs in seconds.
"""
import json

import pytest

from jaxdp import algorithms, network, problems
from jaxdp.cli import main

CHANNEL = "clip:1.0+gaussian:0.5"


@pytest.fixture(scope="module")
def small():
    prob = problems.make_problem("least_squares", n_agents=6, m=5, d=3, seed=0)
    return prob, network.make_network("ring", 6)


def _run(tmp_path, *argv, progress=False):
    return main(["run", *argv, "--problem", "least_squares", "--network", "ring", "--agents", "6",
                 "--seeds", "2", "--steps", "10", "--out", str(tmp_path)]
                + ([] if progress else ["--no-progress"]))


# -- calibration: fast and visible ------------------------------------------------------------
def test_calibration_takes_few_reports_and_reports_each(small):
    from jaxdp.channels import parse_channels, with_channel
    from jaxdp.privacy import calibrate_params

    prob, net = small
    alg = with_channel(algorithms.get("nids"), parse_channels([CHANNEL]))
    seen = []
    tuned = calibrate_params(alg, prob, net, alg.default_params(), 20, epsilon=2.0, delta=1e-5,
                             on_probe=lambda value, eps: seen.append((value, eps)))
    assert 3 <= len(seen) <= 12  # a bisection to rtol 1e-6 took 26 reports
    assert seen[-1][0] == pytest.approx(float(tuned[alg.noise_field]))
    eps = alg.privacy(prob, net, tuned, 20, delta=1e-5).epsilon_max
    assert 2.0 * (1 - 1e-6) <= eps <= 2.0


def test_cli_prints_the_calibrated_value(tmp_path, capsys):
    assert _run(tmp_path, "nids", "--channel", CHANNEL, "--epsilon", "2", progress=True) == 0
    err = capsys.readouterr().err
    assert "calibrating gauss_sigma to ε = 2: report 1" in err
    assert "--epsilon 2 -> gauss_sigma = " in err


def test_explicit_noise_param_with_epsilon_is_refused(tmp_path, capsys):
    assert _run(tmp_path / "o", "nids", "--channel", CHANNEL, "--epsilon", "2", "--param",
                "gauss_sigma=3") == 2
    err = capsys.readouterr().err
    assert "--param gauss_sigma=3 conflicts with --epsilon 2" in err
    assert not (tmp_path / "o").exists()


# -- blow-ups are flagged -----------------------------------------------------------------------
def test_run_flags_a_blow_up_in_the_table_and_the_exit_status(tmp_path, capsys):
    """DGD at α = 1 on least squares: 0.2 -> 7e10 in 30 steps, finite: was "0/2" and exit 0."""
    code = main(["run", "dgd", "--problem", "least_squares", "--network", "ring", "--agents", "6",
                 "--seeds", "2", "--steps", "30", "--param", "alpha=1", "--no-progress",
                 "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1
    assert "2 blew up" in captured.err
    objective = next(r for r in captured.out.splitlines() if r.startswith("objective"))
    assert objective.rstrip().endswith("2/2")
    assert "blew up" in captured.out


def test_sweep_flags_the_blown_up_grid_point(small):
    from jaxdp.engine import grid, sweep

    prob, net = small
    dgd = algorithms.DGD()
    trace = sweep(dgd, prob, net, grid(dgd.default_params(), alpha=[0.05, 1.0]), steps=30,
                  seeds=2, progress=False)
    assert trace.diverged.tolist() == [[False, True], [False, True]]
    assert trace.blown_up().tolist() == [[False, True], [False, True]]
    assert "2 of them blew up" in trace.summary_table(["objective"])
