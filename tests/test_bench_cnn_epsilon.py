"""``benchmarks/cnn_epsilon_accuracy.py`` (issue 37): its continuous-ideal column is the
Poisson-subsampled Gaussian of the run's own mechanism — q = b/M (M the shard capacity, no
``records`` declared) and noise multiplier σ/(C/b), since (G) divides the clipped sum by b — so it
lies below the sound headline at the same σ; the σ it needs for a target ε meets that target; and
the table marks a headline above its target."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import cnn_epsilon_accuracy as bench


@pytest.fixture(scope="module")
def notebook():
    return bench.setting()


def test_ideal_is_the_runs_mechanism_and_below_the_sound_headline(notebook):
    problem, net, alg, params = notebook
    sigma, steps = 0.3, 20
    ideal = bench.continuous_ideal(alg, problem, params, sigma, steps)
    assert ideal["q"] == pytest.approx(bench.BATCH / problem.n_samples)
    assert ideal["noise_multiplier"] == pytest.approx(sigma * bench.BATCH / bench.CLIP)
    sound = alg.privacy(problem, net, params.replace(sigma=sigma), steps=steps,
                        delta=bench.DELTA).epsilon_max
    assert ideal["ideal_pld_epsilon"] <= ideal["ideal_rdp_epsilon"]
    assert ideal["ideal_pld_epsilon"] <= sound <= 1.1 * ideal["ideal_pld_epsilon"]


def test_table_flags_a_headline_above_its_target():
    row = {"target": 1.0, "sigma": 0.5, "calibrate_s": 1.0, "headline_method": "rdp",
           "ideal_pld_epsilon": 0.5, "ideal_rdp_epsilon": 0.6, "accuracy_mean": 0.5,
           "accuracy_std": 0.1}
    ref = {"accuracy_mean": 0.8, "accuracy_std": 0.0}
    ok = bench.table({"rows": [{**row, "headline_epsilon": 1.0, "headline_le_target": True}],
                      "non_private": ref})
    bad = bench.table({"rows": [{**row, "headline_epsilon": 1.2, "headline_le_target": False}],
                       "non_private": ref})
    assert "> target" not in ok and "> target" in bad


@pytest.mark.slow  # ~15 s: Brent's search over a PLD accountant
def test_ideal_sigma_meets_its_target_on_the_continuous_accountant(notebook):
    problem, _, alg, params = notebook
    sigma = bench.ideal_sigma(alg, problem, params, 20, 2.0)["ideal_sigma"]
    eps = bench.continuous_ideal(alg, problem, params, sigma, 20)["ideal_pld_epsilon"]
    assert eps == pytest.approx(2.0, rel=1e-2)
