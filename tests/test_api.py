"""Public API: every name in every ``__all__`` imports; library import changes no JAX config."""
import importlib
import subprocess
import sys

import pytest

MODULES = ["jaxdp", "jaxdp.algorithms", "jaxdp.engine", "jaxdp.network", "jaxdp.privacy",
           "jaxdp.problems", "jaxdp.experiments"]


@pytest.mark.parametrize("module", MODULES)
def test_every_exported_name_exists(module):
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.__all__ lists {name!r} but it is missing"


def test_import_does_not_touch_jax_config_or_start_the_backend():
    code = ("import jax; before = (jax.config.jax_enable_x64, jax.config.jax_numpy_rank_promotion);"
            "import jaxdp, jaxdp.experiments, jaxdp.cli;"
            "after = (jax.config.jax_enable_x64, jax.config.jax_numpy_rank_promotion);"
            "assert before == after, (before, after);"
            "jaxdp.use_cpu_cores(3); assert len(jax.devices()) == 3")
    env = {"PATH": "", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_trace_exports_to_pandas():
    pd = pytest.importorskip("pandas")
    import numpy as np

    from jaxdp.engine import Trace

    tr = Trace(metrics={"m": np.arange(6.0).reshape(2, 3)}, steps=np.array([0, 5, 10]),
               diverged=np.zeros(2, bool), final_models=np.zeros((2, 1, 1)))
    df = tr.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 6
    assert df[df.seed == 1].value.tolist() == [3.0, 4.0, 5.0]


def test_to_pandas_is_a_main_dependency():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert any(dep.startswith("pandas") for dep in project["dependencies"])


# -- calibrate_params -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small():
    from jaxdp import algorithms, network, problems

    prob = problems.least_squares(n_agents=5, m=10, d=3, seed=0)
    return algorithms.DPDGD(), prob, network.make_network("ring", 5)


@pytest.mark.parametrize("epsilon", [0.5, 8.0])
def test_calibrate_params_hits_the_target(small, epsilon):
    from jaxdp.privacy import calibrate_params

    alg, prob, net = small
    params = alg.default_params().replace(alpha=0.02)
    tuned = calibrate_params(alg, prob, net, params, 30, epsilon=epsilon, delta=1e-5)
    eps = alg.privacy(prob, net, tuned, 30, delta=1e-5).epsilon_max
    assert eps <= epsilon and eps == pytest.approx(epsilon, rel=1e-5)
    assert tuned.alpha == 0.02  # the other fields are kept
    looser = calibrate_params(alg, prob, net, params, 30, epsilon=2 * epsilon, delta=1e-5)
    assert looser.sigma < tuned.sigma  # more ε, less noise


def test_calibrate_params_errors(small):
    from jaxdp import algorithms
    from jaxdp.privacy import calibrate_params

    alg, prob, net = small
    with pytest.raises(ValueError, match=r"unreachable.*reachable ε lies in \["):
        calibrate_params(alg, prob, net, alg.default_params(), 30, epsilon=1e300, delta=1e-5)
    dgd = algorithms.DGD()
    with pytest.raises(ValueError, match="dgd does not support --epsilon"):
        calibrate_params(dgd, prob, net, dgd.default_params(), 30, epsilon=1.0, delta=1e-5)
    for bad in (0.0, -1.0, float("inf"), "1"):
        with pytest.raises(ValueError, match="epsilon must be"):
            calibrate_params(alg, prob, net, alg.default_params(), 30, epsilon=bad, delta=1e-5)
    with pytest.raises(ValueError, match="does not decrease as alpha grows"):
        calibrate_params(alg, prob, net, alg.default_params(), 30, epsilon=1.0, delta=1e-5,
                         field="alpha")


# -- figures --------------------------------------------------------------------------------------
def test_log_axis_chosen_from_the_data_range():
    import numpy as np

    from jaxdp._plotting import choose_log

    assert choose_log([0.0, 1e-3, 1.0])  # zeros allowed, three decades
    assert not choose_log([30.0, 34.0, 41.0])  # narrow range: linear (no 3.4×10¹ ticks)
    assert not choose_log([-1.0, 10.0, 1000.0])  # negative values: linear
    assert not choose_log([np.nan, np.inf])


def test_figure_labels_zeros_legend_and_title(tmp_path):
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    from jaxdp.engine import Trace
    from jaxdp._plotting import figure, finish, save, setting_title

    steps = np.arange(4)
    consensus = np.array([[0.0, 1.0, 1e-2, 1e-4], [0.0, 2.0, 2e-2, 2e-4]])
    trace = Trace(metrics={"consensus_error": consensus, "objective": consensus + 30},
                  steps=steps, diverged=np.zeros(2, bool), final_models=np.zeros((2, 3, 1)))
    fig, axes = figure(2)
    trace.plot("consensus_error", ax=axes[0], label="A")
    trace.plot("objective", ax=axes[1], label="A")
    assert axes[0].get_yscale() == "log" and axes[1].get_yscale() == "linear"
    assert np.isnan(axes[0].lines[0].get_ydata()[0])  # the 0 at step 0 is left off the log axis
    assert "consensus error" in axes[0].get_ylabel() and "$" in axes[0].get_ylabel()
    assert trace.plot("objective", ax=axes[1], logy=True).get_yscale() == "log"  # overridable
    title = setting_title("least_squares", "ring", 6, 2, 1.0)
    finish(fig, axes, title)
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["A"]
    assert fig._suptitle.get_text() == "least_squares on ring, N = 6, 2 seeds, ε = 1"
    png = save(fig, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000 and png.endswith("f.png")
