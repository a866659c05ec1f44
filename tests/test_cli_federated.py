"""The federated family on the command line (issue 27): the three-way comparison at one ε
(federated central DP, federated local DP, decentralized DP) from one ``jaxdp compare``, the
static settings as ``--option``, and the network a server-average algorithm runs on."""
import csv
import json
import math

import pytest

from jaxdp import algorithms, network, problems
from jaxdp.cli import ENDED_WORSE, main
from jaxdp.compare import network_for
from jaxdp.engine import Trace

SMALL = ["--problem", "least_squares", "--agents", "5", "--seeds", "2", "--steps", "6",
         "--no-progress"]


def _rows(out):
    with open(out / "compare.csv") as f:
        return {r["algorithm"]: r for r in csv.DictReader(f)}


def test_three_families_at_one_epsilon_from_one_command(tmp_path, capsys):
    """Each family calibrated to the same sound ε: the federated ones on K_N (their server), DP-DGD
    on the ring; each row's ε is what its report gives on the network it really ran on (under its
    own observer: DP-FedAvg's trusted server), and the neighbours column says it is the
    eavesdropper bound (no tighter analysis exists): ∞ for DP-FedAvg, whose uploads a neighbour
    (the server) sees in the clear."""
    code = main(["compare", "dp_fedavg", "ldp_fedavg", "dp_dgd", *SMALL, "--network", "ring",
                 "--epsilon", "4", "--threat", "neighbours", "--option", "local_steps=2",
                 "--param", "clip=0.5", "--metric", "objective", "--out", str(tmp_path)])
    assert code in (0, ENDED_WORSE)  # finished; may end worse
    rows = _rows(tmp_path)
    assert list(rows) == ["dp_fedavg", "ldp_fedavg", "dp_dgd"]
    prob = problems.make_problem("least_squares", n_agents=5, seed=0)
    for name, row in rows.items():
        eps = float(row["epsilon"])
        assert eps == pytest.approx(4, rel=1e-4) and eps <= 4
        assert row["threat"] == "neighbours (eavesdropper bound)"
        assert float(row["epsilon_threat"]) == (math.inf if name == "dp_fedavg" else eps)
        fed = name != "dp_dgd"
        assert row["network"] == ("complete (server), N=5" if fed else "ring, N=5")
        alg = algorithms.get(name, **({"local_steps": 2} if fed else {}))
        field, value = row["noise_field"].split("=")
        params = alg.default_params().replace(clip=0.5, **{field: float(value)})
        net = network.make_network("complete" if fed else "ring", 5)
        again = alg.privacy(prob, net, params, 6).epsilon_max  # the report of what ran
        assert again == pytest.approx(eps, rel=1e-4)
        saved = json.loads((tmp_path / f"privacy_{name}.json").read_text())
        assert saved["epsilon_max"] == pytest.approx(eps, rel=1e-9)
    assert (tmp_path / "compare.png").stat().st_size > 1000


def test_a_federated_run_refuses_a_graph_without_its_server(tmp_path, capsys):
    assert main(["run", "fedavg", *SMALL, "--network", "ring", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "--network ring has no such server" in err and "jaxdp compare fedavg" in err


@pytest.mark.parametrize("argv, message", [
    (["run", "fedavg", "--option", "epochs=3"],
     "--option epochs: not a static setting of fedavg; theirs: clients, gather, local_steps"),
    (["run", "fedavg", "--option", "gather=sometimes"],
     "fedavg: gather must be True or False; got 'sometimes'"),
    (["run", "fedavg", "--option", "local_steps=0"], "local_steps must be an int >= 1; got 0"),
    (["run", "dp_fedavg", "--option", "selection=high_loss"], "a function of their data"),
    (["run", "ldp_fedavg", "--option", "selection=high_loss", "--option", "clients=2"],
     "not accounted by a report of each client's own releases"),
    (["compare", "fedavg", "dgd", "--param", "mu=0.1"], "--param mu: no algorithm compared has it"),
    (["compare", "dp_fedavg", "dp_dgd", "--epsilon", "2", "--param", "z=3"],
     "--param z=3 conflicts with --epsilon 2"),
])
def test_bad_federated_settings_fail_in_one_line_before_any_run(argv, message, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_info_lists_the_static_settings(capsys):
    assert main(["info", "dp_fedavg"]) == 0
    line = next(s for s in capsys.readouterr().out.splitlines() if s.startswith("static"))
    assert "local_steps=5" in line and "selection='poisson'" in line and "rate=0.5" in line


def test_network_for_gives_a_server_average_algorithm_k_n():
    ring = network.make_network("ring", 6)
    assert network_for(algorithms.get("dp_dgd"), ring) is ring
    served = network_for(algorithms.get("fedavg"), ring)
    assert served.n_agents == 6
    network.check_averaging(served, "fedavg")
    complete = network.make_network("complete", 6)
    assert network_for(algorithms.get("fedavg"), complete) is complete


def test_options_come_from_a_toml_table_and_the_server_is_the_default_network(tmp_path, capsys):
    """``[options]`` in --config: a list is a tuple (FedNova's per-client local steps); without
    --network a federated run gets K_N, its server's average."""
    config = tmp_path / "fed.toml"
    config.write_text('algorithm = "fednova"\nproblem = "least_squares"\nagents = 5\nseeds = 2\n'
                      'steps = 4\nno_progress = true\n\n[options]\nlocal_steps = [1, 2, 3, 1, 2]\n'
                      'selection = "high_loss"\nclients = 2\n')
    out = tmp_path / "out"
    assert main(["run", "--config", str(config), "--out", str(out)]) == 0
    meta = Trace.load(out / "trace_fednova.npz").meta
    assert tuple(meta["algorithm"]["local_steps"]) == (1, 2, 3, 1, 2)
    assert meta["algorithm"]["selection"] == "high_loss" and meta["algorithm"]["clients"] == 2
    assert meta["network"]["n_edges"] == 5 * 4 // 2  # K_5


def test_gather_is_an_option_and_false_keeps_the_masked_round(tmp_path, capsys):
    """``--option gather=false`` parses as the bool (the masked round, recorded in the trace)."""
    out = tmp_path / "out"
    assert main(["run", "fedavg", *SMALL, "--option", "clients=2", "--option", "gather=false",
                 "--out", str(out)]) == 0
    assert Trace.load(out / "trace_fedavg.npz").meta["algorithm"]["gather"] is False
