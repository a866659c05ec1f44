"""Issue 40, item 6: small rough edges a newcomer meets. Each test failed before its fix."""
import os
import stat

import jax
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.cli import main
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
        line = next(l for l in networks.splitlines() if l.split()[:1] == [name])
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
