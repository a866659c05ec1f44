"""Every class of bad input of issue 14 gets a clear error (or a correct result), one test each.

Command-line errors are one line ``jaxdp: error: ...`` with status 2, raised before the run starts
(the tests give settings that would otherwise run: a late error would first write a trace).
"""
import json
import os
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, network, problems
from jaxdp.cli import main
from jaxdp.engine import Trace, grid, run, simulate, sweep

SMALL = ["--problem", "least_squares", "--network", "ring", "--agents", "6", "--seeds", "2",
         "--steps", "10", "--no-progress"]


def _one_line_error(capsys, argv, *needles):
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith("jaxdp: error:") and len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.fixture(scope="module")
def setting():
    prob = problems.least_squares(n_agents=6, m=10, d=3, seed=0)
    return prob, network.make_network("ring", 6)


# 1 -----------------------------------------------------------------------------------------------
def test_out_under_a_file_fails_first(tmp_path, capsys):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    _one_line_error(capsys, ["run", "dgd", *SMALL, "--out", str(blocker / "sub")], "is a file")
    assert not list(tmp_path.glob("**/*.npz"))  # nothing ran


# 2 -----------------------------------------------------------------------------------------------
def test_out_in_unwritable_folder_fails_first(tmp_path, capsys):
    if os.geteuid() == 0:  # root writes through permission bits: use a read-only filesystem
        target = Path("/sys/jaxdp_out")
        if not Path("/sys").is_dir():
            pytest.skip("no read-only folder to test with")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        target = locked / "out"
    _one_line_error(capsys, ["run", "dgd", *SMALL, "--out", str(target)], "--out")


# 3 -----------------------------------------------------------------------------------------------
def test_every_seed_diverging_is_said(tmp_path, capsys):
    code = main(["run", "dgd", *SMALL, "--param", "alpha=1e6", "--steps", "200",
                 "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1
    assert "all 2 seeds of dgd diverged" in captured.err
    assert "log-scaled" not in captured.err
    trace = Trace.load(tmp_path / "trace_dgd.npz")
    assert trace.diverged.all()
    with pytest.raises(ValueError, match="all 2 seeds diverged"):
        trace.plot("objective")


# 4 -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [b"not a zip file at all", b"PK\x03\x04truncated", b""])
def test_corrupted_trace_file(tmp_path, content):
    path = tmp_path / "trace.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a readable jaxdp trace") as e:
        Trace.load(path)
    assert "pickle" not in str(e.value)


# 5 -----------------------------------------------------------------------------------------------
def test_unknown_format_version(tmp_path):
    trace = Trace(metrics={"m": np.ones((2, 3))}, steps=np.arange(3),
                  diverged=np.zeros(2, bool), final_models=np.zeros((2, 4, 1)))
    path = trace.save(tmp_path / "t.npz")
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(str(arrays["__meta__"]))
    meta["format_version"] = 99
    arrays["__meta__"] = np.array(json.dumps(meta))
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="format_version 99"):
        Trace.load(path)


# 6 -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", [1.5, 0.0, 1.0, -0.1, "0.9"])
def test_band_level_outside_unit_interval(level):
    trace = Trace(metrics={"m": np.ones((3, 2))}, steps=np.arange(2),
                  diverged=np.zeros(3, bool), final_models=np.zeros((3, 1, 1)))
    with pytest.raises(ValueError, match="level must be a coverage in"):
        trace.band("m", level=level)


# 7 -----------------------------------------------------------------------------------------------
def test_sweep_summary_counts_diverged_per_grid_point(setting):
    prob, net = setting
    alg = algorithms.DGD()
    trace = sweep(alg, prob, net, grid(alg.default_params(), alpha=[0.05, 1e6]), steps=200,
                  seeds=3, progress=False)
    lines = trace.summary_table(["objective"]).splitlines()[1:]
    assert len(lines) == 2
    assert "alpha=0.05" in lines[0] and lines[0].rstrip().endswith("0/3")
    assert "alpha=1e+06" in lines[1] and lines[1].rstrip().endswith("3/3")
    assert [r["diverged"] for r in trace.summary_rows(["objective"])] == [0, 3]


# 8 -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("agents", ["0", "-5"])
def test_agents_zero_or_negative(tmp_path, capsys, agents):
    argv = ["run", "dgd", *SMALL, "--out", str(tmp_path)]
    argv[argv.index("--agents") + 1] = agents
    _one_line_error(capsys, argv, f"--agents must be >= 1; got {agents}")
    for n in (0, -5):
        with pytest.raises(ValueError, match="n_agents to be an int >= 1"):
            problems.least_squares(n_agents=n)
        with pytest.raises(ValueError, match="a network needs n >= 1 agents"):
            network.make_network("ring", n)


# 9 -----------------------------------------------------------------------------------------------
def test_record_every_zero(tmp_path, capsys, setting):
    _one_line_error(capsys, ["run", "dgd", *SMALL, "--record-every", "0", "--out", str(tmp_path)],
                    "--record-every must be >= 1; got 0")
    prob, net = setting
    with pytest.raises(ValueError, match="record_every must be an int >= 1"):
        run(algorithms.DGD(), prob, net, steps=10, record_every=0, progress=False)


# 10 ----------------------------------------------------------------------------------------------
def test_grid_of_a_prime_number_of_agents_is_not_a_path(tmp_path, capsys):
    with pytest.raises(ValueError, match="grid of 7 nodes.*would be a path"):
        network.make_network("grid", 7)
    assert network.make_network("grid", 6).n_agents == 6  # 2 x 3 still works
    argv = ["run", "dgd", *SMALL, "--out", str(tmp_path)]
    argv[argv.index("--network") + 1], argv[argv.index("--agents") + 1] = "grid", "7"
    _one_line_error(capsys, argv, "grid of 7 nodes")


# 11 ----------------------------------------------------------------------------------------------
def test_unreachable_epsilon_names_the_range(tmp_path, capsys):
    err = _one_line_error(capsys, ["run", "dp_dgd", *SMALL, "--epsilon", "1e300",
                                   "--out", str(tmp_path)], "unreachable", "reachable ε lies in")
    assert "sigma must be finite" not in err
    _one_line_error(capsys, ["run", "dgd", *SMALL, "--epsilon", "1", "--out", str(tmp_path)],
                    "dgd does not support --epsilon")
    assert not list(tmp_path.glob("*.npz"))  # checked before the run


# 12 ----------------------------------------------------------------------------------------------
def test_params_given_as_strings(setting):
    prob, net = setting
    params = algorithms.DGDParams(alpha="0.05")
    with pytest.raises(TypeError, match="DGDParams.alpha must be a number"):
        run(algorithms.DGD(), prob, net, params, steps=5, progress=False)


# 13 ----------------------------------------------------------------------------------------------
def test_int_instead_of_a_key(setting):
    prob, net = setting
    alg = algorithms.DGD()
    with pytest.raises(TypeError, match=r"jax.random.key\(3\)"):
        simulate(alg, prob, net, alg.default_params(), 3, steps=5)
    carry, _, _ = simulate(alg, prob, net, alg.default_params(), jax.random.key(3), steps=5)
    assert carry.state.x.shape == (6, 3)


# 14 ----------------------------------------------------------------------------------------------
def test_metric_function_returning_an_array(setting):
    prob, net = setting

    def per_agent(problem, models):
        return {"norms": jnp.linalg.norm(models, axis=1)}

    with pytest.raises(ValueError, match=r"'norms' of shape \(6,\).*scalar per replicate"):
        run(algorithms.DGD(), prob, net, steps=5, metrics=per_agent, progress=False)


# 15 ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("chunks", [0, -1, 1.5])
def test_chunks_zero(setting, chunks):
    prob, net = setting
    with pytest.raises(ValueError, match="chunks must be an int >= 1"):
        run(algorithms.DGD(), prob, net, steps=10, chunks=chunks, progress=False)


# 16 ----------------------------------------------------------------------------------------------
def test_sweep_trace_plotted_without_grid_index(setting):
    import matplotlib

    matplotlib.use("Agg")
    prob, net = setting
    alg = algorithms.DGD()
    trace = sweep(alg, prob, net, grid(alg.default_params(), alpha=[0.01, 0.05]), steps=10,
                  seeds=2, progress=False)
    with pytest.raises(ValueError, match=r"sweep over 2 grid points: pass grid_index=0..1 "
                                         r"\(alpha=0.01; alpha=0.05\)"):
        trace.plot("objective")
    assert trace.plot("objective", grid_index=1) is not None


# 17 ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{"n_agents": 0}, {"d": 0}, {"m": 0}])
def test_empty_problem(kw):
    with pytest.raises(ValueError, match="int >= 1"):
        problems.least_squares(**kw)
    n, m, d = kw.get("n_agents", 2), kw.get("m", 3), kw.get("d", 2)
    with pytest.raises(ValueError, match="Problem is empty"):
        problems.from_arrays(np.zeros((n, m, d)), np.zeros((n, m)), loss="least_squares",
                             reg={"ridge": 0.0}, reference=False)



@pytest.mark.parametrize("name", ["extra", "nids"])
def test_a_per_agent_step_size_is_refused_where_the_update_needs_one_alpha(name):
    """N == d would silently multiply α along the model axis: `scalar` fields refuse (N,)
    (DIGing takes one α per agent: its reference test runs one)."""
    import numpy as np

    from jaxdp import algorithms, network, problems

    prob = problems.least_squares(n_agents=4, m=6, d=4, seed=0)
    net = network.make_network("ring", 4)
    alg = algorithms.get(name)
    with pytest.raises(ValueError, match=r"alpha must be a scalar"):
        alg.validate(alg.default_params().replace(alpha=np.full(4, 0.1)), prob, net)
    alg.validate(alg.default_params(), prob, net)


# 1b ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["run", "dp_dgd"], ["compare", "dgd", "dp_dgd"]])
def test_unreachable_epsilon_leaves_no_output_folder(tmp_path, capsys, command):
    """The --out checks create nothing: a run refused before it starts leaves no empty folder."""
    out = tmp_path / "new" / "out"
    _one_line_error(capsys, [*command, *SMALL, "--epsilon", "1e300", "--out", str(out)],
                    "unreachable")
    assert not (tmp_path / "new").exists()
    assert list(tmp_path.iterdir()) == []  # nor a probe file left behind


def test_compare_refuses_an_unknown_metric_before_any_run(tmp_path, monkeypatch):
    """`compare --metric` names are checked from the traces' shapes before the first run (a
    typo used to surface only after every algorithm had run)."""
    from jaxdp import compare as compare_module

    prob = problems.least_squares(n_agents=4, m=6, d=4, seed=0)
    net = network.make_network("ring", 4)
    ran = []
    monkeypatch.setattr(compare_module, "_run", lambda *a, **k: ran.append(a))
    with pytest.raises(ValueError, match=r"\['objectiv'\] are not recorded for dgd"):
        compare_module.compare(["dgd", "dp_dgd"], prob, net, steps=3, seeds=2,
                               metrics=("objective", "objectiv"), out_dir=tmp_path / "o")
    assert ran == []
