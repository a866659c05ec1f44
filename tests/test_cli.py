"""The ``jaxdp`` command, the demo, the core reproduction and the README's Python examples."""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from jaxdp import algorithms
from jaxdp.cli import ENDED_WORSE, main
from jaxdp.engine import Trace
from jaxdp.experiments import REPRODUCTIONS, baselines_convergence, demo

README = Path(__file__).resolve().parents[1] / "README.md"


def test_list_names_everything(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("dgd", "admm", "nonconvex_logistic", "random_geometric", "baselines"):
        assert name in out


def test_run_writes_trace_and_plot(tmp_path, capsys):
    code = main(["run", "extra", "--problem", "least_squares", "--network", "ring", "--agents",
                 "6", "--seeds", "2", "--steps", "20", "--param", "alpha=0.1", "--no-progress",
                 "--out", str(tmp_path)])
    assert code == 0
    info = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    trace = Trace.load(info["trace"])
    assert trace.metrics["objective"].shape == (2, 21)
    assert trace.meta["params"]["alpha"] == 0.1
    assert Path(info["plot"]).stat().st_size > 1000


@pytest.mark.parametrize("argv, message", [
    (["run", "nope"], "unknown algorithm 'nope'"),
    (["run", "dgd", "--param", "alpha"], "--param expects NAME=VALUE"),
    (["run", "dgd", "--param", "beta=1"], "unknown parameter 'beta' for DGDParams"),
    (["run", "dgd", "--param", "alpha=abc"], "--param alpha needs a number"),
    (["run", "dgd", "--network", "moebius"], "moebius"),
    (["run", "dgd", "--param", "alpha=-1", "--steps", "2"], "DGDParams.alpha must be > 0"),
    (["reproduce", "nope"], "unknown reproduction 'nope'"),
])
def test_bad_arguments_give_one_clear_line(argv, message, capsys, tmp_path):
    assert main(argv + ["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("jaxdp: error:") and message in err and len(err.splitlines()) == 1


def test_help_on_every_command(capsys):
    for cmd in ("list", "demo", "run", "reproduce"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
    assert "usage: jaxdp" in capsys.readouterr().out


def test_demo_writes_figure_table_and_report(tmp_path):
    report = demo(tmp_path, seeds=4, steps=20, n_agents=10, progress=False)
    for name in ("demo.png", "final_metrics.md", "final_metrics.csv", "report.md", "privacy.json"):
        assert (tmp_path / name).stat().st_size > 0
    privacy = next(c for c in report.claims if c.id == "privacy")
    assert privacy.reproduced, privacy.ours
    table = (tmp_path / "final_metrics.md").read_text()
    assert "DGD (non-private)" in table and "DP-DGD" in table


def test_baselines_reproduction_reports_each_claim(tmp_path):
    report = baselines_convergence(tmp_path, steps=3000)
    assert {c.id for c in report.claims} >= {"extra-exact", "dgd-neighbourhood"}
    assert all(c.reproduced for c in report.claims), report.to_text()
    assert "reproduced" in (tmp_path / "report.md").read_text()
    assert REPRODUCTIONS["baselines"] is baselines_convergence
    data = np.load(tmp_path / "final_dist_to_opt.npz")
    assert data["extra"] < 1e-20


def test_readme_python_examples_run(tmp_path, monkeypatch):
    """Every ```python block of the README runs (with fewer seeds and steps)."""
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2
    namespace = {}
    for block in blocks:
        if "jax.distributed" in block:
            continue  # the cluster example (tested in test_multiprocess.py)
        small = re.sub(r"seeds=\d+", "seeds=4", block)
        small = re.sub(r"steps=\d+", "steps=20", small)
        exec(compile(small, "README.md", "exec"), namespace)  # noqa: S102
    import jaxdp

    trace = jaxdp.run(namespace["MyDGD"](), namespace["problem"], namespace["net"],
                      namespace["MyDGDParams"](), steps=10, seeds=2, progress=False)
    assert not trace.diverged.any()


NOTEBOOKS = sorted((README.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_run_top_to_bottom(nb, tmp_path, monkeypatch):
    """Every notebook's code cells run in order (small settings), so notebooks never rot."""
    monkeypatch.chdir(tmp_path)
    import matplotlib

    matplotlib.use("Agg")
    namespace = {}
    for cell in json.loads(nb.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"]).replace("jaxdp.use_cpu_cores()", "pass")
        src = re.sub(r"SEEDS, STEPS = \d+, \d+", "SEEDS, STEPS = 8, 20", src)
        src = src.replace("steps=100", "steps=10")
        src = re.sub(r"STEPS, ITERS = \d+, \d+", "STEPS, ITERS = 20, 3", src)
        src = re.sub(r"SEEDS = [\d_]+", "SEEDS = 2_000", src)
        exec(compile(src, str(nb), "exec"), namespace)  # noqa: S102


# -- issue 14: what a researcher needs from the command line --------------------------------------
SMALL = ["--problem", "least_squares", "--network", "ring", "--agents", "6", "--seeds", "2",
         "--steps", "10", "--no-progress"]


def test_version(capsys):
    import jaxdp

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"jaxdp {jaxdp.__version__}"


def test_every_help_shows_its_defaults(capsys):
    for cmd in ("run", "compare", "demo", "reproduce"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert "(default:" in out, cmd
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for shown in ("(default: nonconvex_logistic)", "else random_geometric",  # --network: by
                  "(default: 50)", "(default: 16)", "(default: 500)", "(default: out)"):  # algorithm
        assert shown in out, shown


def test_list_gives_one_line_per_algorithm_with_privacy(capsys):
    from jaxdp import algorithms

    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    start = out.index("algorithms:") + 1  # the section ends at the next unindented heading
    lines = out[start:next(i for i in range(start, len(out)) if not out[i].startswith(" "))]
    for name in algorithms.REGISTRY:
        (line,) = [ln for ln in lines if ln.split()[:1] == [name]]
        assert line.split()[1] in ("private", "non-private") and len(line.split()) > 2, line
    assert next(ln for ln in lines if ln.split()[:1] == ["dp_dgd"]).split()[1] == "private"
    assert next(ln for ln in lines if ln.split()[:1] == ["dgd"]).split()[1] == "non-private"


def test_info_gives_citation_params_and_privacy(capsys):
    assert main(["info", "dp_dgd"]) == 0
    out = capsys.readouterr().out
    assert "dp_dgd: DPDGD (private)" in out
    assert "Abadi et al. 2016" in out  # the citation from the module docstring
    defaults = algorithms.DPDGDParams()
    assert re.search(rf"sigma\s+default {defaults.sigma:g}\s+σ, noise multiplier", out)
    assert re.search(rf"clip\s+default {defaults.clip:g}\s+C, gradient clipping norm", out)
    assert "noise_field: sigma" in out
    assert "per agent (replace_agent" in out and "ε = " in out
    assert main(["info", "extra"]) == 0
    out = capsys.readouterr().out
    assert "(non-private)" in out and "Shi, Ling, Wu & Yin" in out and "noise_field: None" in out


def test_run_private_prints_epsilon_and_writes_privacy_and_csv(tmp_path, capsys):
    assert main(["run", "dp_dgd", *SMALL, "--out", str(tmp_path)]) in (0, ENDED_WORSE)
    out = capsys.readouterr().out
    saved = json.loads((tmp_path / "privacy.json").read_text())
    assert f"ε = {saved['epsilon_max']:.4g}" in out and "δ = 1e-05" in out
    assert "per agent" in out
    csv = (tmp_path / "trace_dp_dgd.csv").read_text().splitlines()
    assert csv[0] == "grid,metric,mean,ci95_half_width,diverged,seeds"
    trace = Trace.load(tmp_path / "trace_dp_dgd.npz")
    objective = next(line for line in csv if ",objective," in line).split(",")
    assert float(objective[2]) == pytest.approx(trace.mean("objective")[-1])


def test_run_epsilon_calibrates_the_noise(tmp_path, capsys):
    assert main(["run", "dp_dgd", *SMALL, "--epsilon", "3", "--delta", "1e-6",
                 "--out", str(tmp_path)]) in (0, ENDED_WORSE)  # finished; may end worse
    saved = json.loads((tmp_path / "privacy.json").read_text())
    assert saved["epsilon_max"] == pytest.approx(3.0, rel=1e-5) and saved["epsilon_max"] <= 3.0
    assert saved["delta"] == 1e-6
    assert Trace.load(tmp_path / "trace_dp_dgd.npz").meta["params"]["sigma"] > 1.0


def test_compare_at_the_same_epsilon_writes_one_figure_and_table(tmp_path, capsys):
    code = main(["compare", "dgd", "dp_dgd", *SMALL, "--epsilon", "4", "--metric", "objective",
                 "--metric", "consensus_error", "--out", str(tmp_path)])
    assert code in (0, ENDED_WORSE)  # finished; may end worse
    rows = (tmp_path / "compare.csv").read_text().splitlines()
    assert rows[0].startswith("algorithm,epsilon,noise_field,seeds,diverged,ended_worse,"
                              "objective,")
    by_name = {r.split(",")[0]: r.split(",") for r in rows[1:]}
    assert by_name["dgd"][1] == "" and float(by_name["dp_dgd"][1]) == pytest.approx(4, rel=1e-5)
    assert "| dgd | non-private |" in (tmp_path / "compare.md").read_text()
    assert (tmp_path / "compare.png").stat().st_size > 1000
    assert (tmp_path / "trace_dp_dgd.csv").exists() and (tmp_path / "privacy_dp_dgd.json").exists()


def test_config_file_is_read_and_recorded_verbatim(tmp_path, capsys):
    config = tmp_path / "exp.toml"
    text = ('# my experiment\nalgorithm = "extra"\nproblem = "least_squares"\nnetwork = "ring"\n'
            'agents = 6\nseeds = 2\nsteps = 10\nno_progress = true\n\n[params]\nalpha = 0.07\n')
    config.write_text(text)
    out = tmp_path / "out"
    assert main(["run", "--config", str(config), "--seeds", "3", "--out", str(out)]) == 0
    trace = Trace.load(out / "trace_extra.npz")
    assert trace.meta["params"]["alpha"] == 0.07 and trace.n_seeds == 3  # the flag wins
    assert (out / "exp.toml").read_text() == text
    bad = tmp_path / "bad.toml"
    bad.write_text('algoritm = "extra"\n')
    assert main(["run", "--config", str(bad), "--out", str(out)]) == 2
    assert "unknown key(s) ['algoritm']" in capsys.readouterr().err


def test_reproduce_prints_progress(tmp_path, capsys, monkeypatch):
    from jaxdp.experiments import REPRODUCTIONS
    from jaxdp.experiments._report import Report

    def fake(out, seeds=3):
        report = Report("fake", "a fake reproduction")
        report.claim("c", "a claim", paper=1, ours=1, reproduced=True)
        return report

    monkeypatch.setitem(REPRODUCTIONS, "fake", fake)
    assert main(["reproduce", "fake", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[1/2] fake: running") and err[1].startswith("[2/2] fake: done in")
    assert "1/1 claims reproduced" in err[1]


def test_reproduce_refuses_a_non_empty_out_unless_force(tmp_path, capsys, monkeypatch):
    from jaxdp.experiments._report import Report

    calls = []

    def fake(out, seeds=3):
        calls.append(out)
        (Path(out) / "figure.png").write_text("new")
        return Report("fake", "a fake reproduction")

    monkeypatch.setitem(REPRODUCTIONS, "fake", fake)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["reproduce", "fake", "--out", str(out)]) == 0  # an empty folder is fine
    assert main(["reproduce", "fake", "--out", str(out)]) == 2  # the earlier run's files
    err = capsys.readouterr().err
    assert "is not empty (it holds figure.png)" in err and "--force" in err
    (out / "figure.png").write_text("old")
    assert main(["reproduce", "fake", "--out", str(out)]) == 2
    assert (out / "figure.png").read_text() == "old" and len(calls) == 1  # nothing ran
    assert main(["reproduce", "fake", "--out", str(out), "--force"]) == 0
    assert (out / "figure.png").read_text() == "new" and len(calls) == 2


def test_sweep_table_labels_rows_with_grid_values():
    from jaxdp import algorithms, network, problems
    from jaxdp.engine import grid, sweep

    prob = problems.least_squares(n_agents=4, m=5, d=2, seed=0)
    net = network.make_network("ring", 4)
    alg = algorithms.DGD()
    trace = sweep(alg, prob, net, grid(alg.default_params(), alpha=[0.01, 0.02], gamma=[0.0]),
                  steps=5, seeds=2, progress=False)
    rows = trace.summary_table(["objective"]).splitlines()
    assert rows[1].startswith("objective [alpha=0.01]") and rows[2].startswith(
        "objective [alpha=0.02]")
