"""Issue 40, item 6: small rough edges a newcomer meets. Each test failed before its fix."""
import os
import stat

import jax
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.cli import ENDED_WORSE, main
from jaxdp.experiments._report import Report
from jaxdp.network._builders import GRAPHS


@pytest.fixture(scope="module")
def small():
    prob = problems.make_problem("least_squares", n_agents=4, m=5, d=2, seed=0)
    return prob, network.make_network("ring", 4)


def test_ideal_without_a_threat_is_refused_before_the_run(tmp_path, capsys):
    code = main(["run", "dp_dgd", "--ideal", "--agents", "4", "--seeds", "1", "--steps", "2",
                 "--out", str(tmp_path / "o"), "--no-progress"])
    err = capsys.readouterr().err
    assert code != 0 and "--ideal" in err and "--threat neighbours" in err
    assert not (tmp_path / "o").exists()


def test_a_batch_of_keys_to_final_metrics_is_named(small):
    prob, net = small
    alg = algorithms.DGD()
    with pytest.raises(ValueError, match=r"one key .* batch of shape \(3,\)"):
        jaxdp.final_metrics(alg, prob, net, alg.default_params(),
                            jax.random.split(jax.random.key(0), 3), steps=2)


def test_trace_save_to_a_directory_names_the_fix(small, tmp_path, monkeypatch):
    prob, net = small
    trace = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGD().default_params(), steps=2,
                      seeds=1, progress=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="needs a file name"):
        trace.save(".")


def test_trace_files_get_the_usual_mode(small, tmp_path):
    prob, net = small
    trace = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGD().default_params(), steps=2,
                      seeds=1, progress=False)
    mask = os.umask(0o022)
    try:
        path = trace.save(tmp_path / "run.npz")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # mkstemp's 0600 before


def test_a_report_lists_its_own_files(tmp_path):
    report = Report("x", "X")
    report.files.append(str(tmp_path / "a.png"))
    report.write(tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert str(tmp_path / "report.md") in text and str(tmp_path / "report.json") in text
    report.write(tmp_path)  # idempotent: listed once
    assert report.files.count(str(tmp_path / "report.md")) == 1


def test_list_describes_every_network(capsys):
    main(["list"])
    out = capsys.readouterr().out
    networks = out.split("networks:")[1].split(":\n")[0]
    for name in GRAPHS:
        line = next(row for row in networks.splitlines() if row.split()[:1] == [name])
        assert len(line.split()) > 1, f"{name} has no description"


def test_the_summary_table_aligns_long_metric_names(small):
    prob, net = small
    trace = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGD().default_params(), steps=2,
                      seeds=3, progress=False)
    trace.metrics["a_metric_name_much_longer_than_twenty"] = trace.metrics["objective"]
    lines = trace.summary_table().splitlines()
    assert len({len(line) for line in lines}) == 1, "\n".join(lines)


def test_a_negative_seed_flag_is_named(tmp_path, capsys):
    code = main(["run", "dgd", "--data-seed", "-1", "--agents", "4", "--seeds", "1", "--steps",
                 "2", "--out", str(tmp_path / "o"), "--no-progress"])
    assert code != 0
    assert "--data-seed" in capsys.readouterr().err


# -- issue 40, item 3: a run that ends worse than it started is said ---------------------------
def test_a_run_that_ends_worse_is_flagged_in_the_table_and_the_exit_status(tmp_path, capsys):
    code = main(["run", "dp_dgd", "--problem", "least_squares", "--network", "ring",
                 "--agents", "6", "--seeds", "3", "--steps", "10", "--param", "sigma=200",
                 "--out", str(tmp_path), "--no-progress"])
    captured = capsys.readouterr()
    assert code == ENDED_WORSE, captured.err
    assert "worse than the start" in captured.out and "worse than the start" in captured.err


def test_compare_counts_the_runs_that_ended_worse(small, tmp_path, capsys):
    code = main(["compare", "dgd", "dp_dgd", "--problem", "least_squares", "--network", "ring",
                 "--agents", "6", "--seeds", "2", "--steps", "10", "--param", "sigma=200",
                 "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == ENDED_WORSE
    header = next(line for line in out.splitlines() if line.startswith("| algorithm"))
    assert "ended_worse" in header
    dpdgd = next(line for line in out.splitlines() if line.startswith("| dp_dgd"))
    column = header.split("|").index(" ended_worse ")
    assert int(dpdgd.split("|")[column]) >= 1


def test_ended_worse_is_per_seed_and_skips_diverged_seeds():
    from jaxdp.engine._trace import ended_worse

    values = np.array([[1.0, 2.0], [2.0, 1.0], [1.0, np.inf]])
    assert ended_worse({"objective": values}).tolist() == [True, False, False]
    assert not ended_worse({"grad_norm_sq": values}).any()  # no objective, nothing said


# -- issue 40, item 2: a user model is checked once, before anything compiles ------------------
@pytest.fixture(scope="module")
def digits():
    rng = np.random.default_rng(0)
    images, labels = rng.normal(size=(40, 8, 8)), rng.integers(0, 10, 40)
    return images, labels, problems.split(labels, 2, seed=0)


def test_an_unpartitioned_equinox_module_is_named(digits):
    eqx = pytest.importorskip("equinox")
    images, labels, parts = digits
    model = eqx.nn.MLP(64, 10, 8, 1, key=jax.random.key(0))
    with pytest.raises(ValueError, match=r"\.activation is a .*not an array.*eqx.partition"):
        problems.from_model(lambda m, xb: jax.vmap(m)(xb), model, images.reshape(-1, 64), labels,
                            parts=parts)


def test_images_of_the_wrong_shape_name_the_shape_and_the_fix(digits):
    eqx = pytest.importorskip("equinox")
    images, labels, parts = digits
    params, static = eqx.partition(eqx.nn.MLP(64, 10, 8, 1, key=jax.random.key(0)),
                                   eqx.is_inexact_array)
    apply = lambda p, xb: jax.vmap(eqx.combine(p, static))(xb)  # noqa: E731
    with pytest.raises(ValueError, match=r"shape \(1, 8, 8\).*reshape the features"):
        problems.from_model(apply, params, images, labels, parts=parts)
    assert problems.from_model(apply, params, images.reshape(-1, 64), labels, parts=parts).dim


def test_batch_statistics_are_refused_with_the_privacy_reason(digits):
    nn = pytest.importorskip("flax.linen")
    images, labels, parts = digits

    class Normalized(nn.Module):
        @nn.compact
        def __call__(self, xb):
            return nn.Dense(10)(nn.BatchNorm(use_running_average=False)(nn.Dense(4)(xb)))

    module = Normalized()
    variables = module.init(jax.random.key(0), images.reshape(-1, 64)[:2])
    with pytest.raises(ValueError, match="batch statistics mix the examples"):
        problems.from_model(module.apply, variables, images.reshape(-1, 64), labels, parts=parts)


def test_outputs_without_the_batch_axis_are_named(digits):
    images, labels, parts = digits
    w = {"w": np.zeros((64, 10))}
    with pytest.raises(ValueError, match="batch as their leading axis"):
        problems.from_model(lambda p, xb: xb[0] @ p["w"], w, images.reshape(-1, 64), labels,
                            parts=parts)


# -- issue 40, item 1: a newcomer's first ε is a real one, and an inf says what to change ------
def test_the_default_run_of_dp_dgd_gives_a_meaningful_epsilon():
    """``jaxdp run dp_dgd`` with every default: its report's ε lies in [1, 10] (it was inf)."""
    from jaxdp.cli._common import _report, _setting
    from jaxdp.cli._parsing import _parser

    args = _parser().parse_args(["run", "dp_dgd"])
    alg = algorithms.get("dp_dgd")
    setting = _setting(args, (alg,))
    report = _report(alg, setting["problem"], setting["network"], alg.default_params(),
                     args.steps, args.delta)
    assert 1 <= report.epsilon_max <= 10, report.summary()


def test_an_inf_report_prints_the_noise_that_reaches_each_target(tmp_path, capsys):
    """The remedy line's σ for each ε (1, 4, 8) is a sound suggestion: the report at that σ is
    at most the target and close to it."""
    import re

    steps, delta = 4, 1e-5
    code = main(["run", "dp_dgd", "--problem", "least_squares", "--network", "ring", "--agents",
                 "4", "--seeds", "1", "--steps", str(steps), "--param", "sigma=0.01",
                 "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code in (0, ENDED_WORSE) and "ε = inf" in out
    found = dict(re.findall(r"ε = (\d+): sigma = ([\d.e+]+)", out.split("remedy:")[1]))
    assert sorted(map(float, found)) == [1, 4, 8], out
    prob = problems.make_problem("least_squares", n_agents=4, seed=0)
    alg = algorithms.get("dp_dgd")
    for target, sigma in found.items():
        eps = alg.privacy(prob, network.make_network("ring", 4),
                          alg.default_params().replace(sigma=float(sigma)), steps,
                          delta=delta).epsilon_max
        assert 0.99 * float(target) <= eps <= float(target), (target, sigma, eps)


def test_info_of_an_algorithm_whose_default_is_inf_names_the_remedy(capsys):
    assert main(["info", "dpp2"]) == 0
    out = capsys.readouterr().out
    assert "ε = inf" in out and "remedy: dpp2" in out


# -- issue 40, item 4: a model problem is judged by its test accuracy by default ---------------
MODEL_RUN = ["--problem", "digits_mlp", "--network", "ring", "--agents", "4", "--seeds", "1",
             "--steps", "2", "--no-progress"]


@pytest.mark.slow  # two digits_mlp compilations: about 40 s on two shared cores
def test_run_and_compare_plot_test_accuracy_on_a_model_problem(tmp_path, capsys):
    code = main(["run", "dgd", *MODEL_RUN, "--out", str(tmp_path / "run")])
    assert code in (0, ENDED_WORSE) and (tmp_path / "run" / "dgd_test_accuracy.png").exists()
    code = main(["compare", "dgd", *MODEL_RUN, "--out", str(tmp_path / "cmp")])
    header = next(line for line in capsys.readouterr().out.splitlines()
                  if line.startswith("| algorithm"))
    assert code in (0, ENDED_WORSE) and " test_accuracy " in header and "grad_norm" not in header


def test_the_default_metric_is_the_problems_own(small):
    from jaxdp.engine import default_metric

    assert default_metric(small[0]) == "grad_norm_sq"  # no held-out data: stationarity
    assert default_metric(problems.make_problem("digits_mlp", n_agents=2, seed=0)) == \
        "test_accuracy"


# -- issue 40, item 5: the privacy-utility figure has its references and says what ended worse --
def test_the_tradeoff_has_reference_lines_plain_ticks_and_says_ended_worse(small, tmp_path):
    from jaxdp.experiments.tradeoff import tradeoff

    prob, net = small
    result = tradeoff(algorithms.get("dp_dgd"), prob, net, [0.5, 8], steps=10, seeds=2,
                      metric="objective", progress=False, out_dir=tmp_path)
    start = float(result.traces[0.5].band("objective")[0][0])
    assert result.lines["start"] == pytest.approx(start)
    assert np.isfinite(result.lines["non-private dgd"])
    worst = result.rows[0]  # ε = 0.5 on 10 steps: σ ≈ 50, far more noise than the step absorbs
    assert worst["ended_worse"] >= 1 and "ε = 0.5: some seeds ended worse" in result.markdown
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator

    fig, ax = plt.subplots()  # the tick helper: ε grid ticks written plainly, no minor labels
    ax.set_xscale("log")
    from jaxdp.experiments.tradeoff import _plain_ticks

    _plain_ticks(ax.xaxis, [0.5, 3, 4])
    fig.canvas.draw()
    assert isinstance(ax.xaxis.get_major_locator(), FixedLocator)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5", "3", "4"]
    assert not any(t.get_text() for t in ax.xaxis.get_minorticklabels())
    plt.close(fig)


# -- issue 40, item 7: a federated round that selects nobody ------------------------------------
@pytest.mark.parametrize("name", ["fedadam", "fedyogi", "fedadagrad", "fedavg"])
def test_a_round_with_no_selected_client_leaves_the_server_model(name):
    """Poisson selection at a tiny rate selects nobody in the first rounds: the server model (and
    FedAdam's moments) stay where they were; a momentum step on Δ = 0 moved it by 0.066 before."""
    prob = problems.make_problem("least_squares", n_agents=4, m=5, d=2, seed=0)
    net = network.make_network("complete", 4)
    alg = algorithms.get(name, selection="poisson", rate=1e-6)
    everyone = algorithms.get(name, selection="poisson", rate=1.0)
    params = alg.default_params()
    key = jax.random.key(0)
    state = everyone.init(key, prob, net, params)
    state, _ = everyone.step(state, everyone.noise(key, state, params, 0), prob, net, params, 0)
    for k in range(1, 3):  # the first round left momentum that an empty round could replay
        noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
        new, _ = alg.step(state, noise, prob, net, params, k)
        np.testing.assert_array_equal(np.asarray(new.x), np.asarray(state.x))
        state = new
