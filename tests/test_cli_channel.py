"""``parse_channel`` and ``jaxdp run/compare --channel``: any algorithm, any channel stack."""
import json

import numpy as np
import pytest

from jaxdp import channels
from jaxdp.channels import chain, clip, gaussian, parse_channel
from jaxdp.cli import ENDED_WORSE, main
from jaxdp.engine import Trace

SMALL = ["--problem", "least_squares", "--network", "ring", "--agents", "6", "--seeds", "2",
         "--steps", "10", "--no-progress"]


@pytest.mark.parametrize("spec, built", [
    ("clip:1.0+gaussian:0.5", chain(clip(1.0), gaussian(0.5))),
    ("gaussian:sigma=0.5,decay=0.99", chain(gaussian(0.5, decay=0.99))),
    ("clip:2,norm=linf + gaussian:0.5 + broadcast",
     chain(clip(2.0, norm="linf"), gaussian(0.5), broadcast=True)),
    ("clip:1e+1+gaussian:sigma=2E-1,sampler=float+aggregate",
     chain(clip(10.0), gaussian(0.2, sampler="float"), aggregate=True)),
])
def test_parse_channel_builds_the_stack(spec, built):
    assert parse_channel(spec) == built


@pytest.mark.parametrize("channel", [chain(clip(1.0), gaussian(1.0)),
                                     chain(clip(1.0), gaussian(1.0), broadcast=True),
                                     chain(clip(1.0), gaussian(1.0, sampler="float"), aggregate=True)])
def test_a_channel_name_parses_back_to_the_channel(channel):
    assert parse_channel(channel.name) == channel


def test_values_are_converted_by_the_constructor_signature(monkeypatch):
    """A constructor added to TRANSFORMS is parsed without any change to the parser."""
    seen = {}

    def shout(level: int, *, gain: float = 1.0, loud: bool = False, mode: str = "a",
              name: str = "shout"):
        seen.update(level=level, gain=gain, loud=loud, mode=mode)
        return clip(1.0, name=name)

    monkeypatch.setitem(channels.TRANSFORMS, "shout", shout)
    parse_channel("shout:3,gain=2,loud=yes,mode=b")
    assert seen == {"level": 3, "gain": 2.0, "loud": True, "mode": "b"}
    assert type(seen["level"]) is int and type(seen["gain"]) is float


@pytest.mark.parametrize("spec, message", [
    ("nope:1", "unknown channel transform 'nope' in 'nope:1'; known: "),
    ("gaussian:foo=1", "gaussian has no argument 'foo'"),
    ("clip:abc", "clip: c needs a number; got 'abc'"),
    ("clip:1,2", "clip takes at most 1 positional value(s) (c); got 2"),
    ("clip++gaussian", "has an empty stage"),
    ("", "a channel spec must be a non-empty string"),
    ("gaussian:sigma=1,0.5", "positional value '0.5' after a named one"),
    ("clip:-1", "must be > 0"),
])
def test_parse_channel_errors_name_the_problem(spec, message):
    with pytest.raises(ValueError) as e:
        parse_channel(spec)
    assert message in str(e.value)
    if "unknown channel transform" in message:
        assert all(kind in str(e.value) for kind in channels.TRANSFORMS)


def test_missing_required_argument_is_named(monkeypatch):
    monkeypatch.setitem(channels.TRANSFORMS, "needy", lambda k, *, name="n": clip(1.0))
    with pytest.raises(ValueError, match="needy needs k: e.g. needy:k=..."):
        parse_channel("needy")


def test_run_with_a_private_channel_prints_a_finite_epsilon(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "dgd", *SMALL, "--channel", "clip:1.0+gaussian:0.5", "--epsilon", "2",
                 "--x", "step", "--x", "bits", "--out", str(out)]) in (0, ENDED_WORSE)
    printed = capsys.readouterr().out
    saved = json.loads((out / "privacy.json").read_text())
    assert np.isfinite(saved["epsilon_max"]) and saved["epsilon_max"] <= 2.0 * (1 + 1e-9)
    assert saved["epsilon_max"] == pytest.approx(2.0, rel=1e-4)
    assert f"ε = {saved['epsilon_max']:.4g}" in printed and "clip+gaussian" in printed
    trace = Trace.load(out / "trace_dgd+clip+gaussian.npz")
    assert trace.meta["params"]["gauss_sigma"] != 0.5  # calibrated
    assert trace.meta["costs_per_step"]["rounds"] == 1.0


def test_run_sets_channel_params_with_param(tmp_path, capsys):
    assert main(["run", "dgd", *SMALL, "--channel", "clip:1.0+gaussian:0.5+broadcast",
                 "--param", "gauss_sigma=3.0", "--param", "alpha=0.05",
                 "--out", str(tmp_path)]) in (0, ENDED_WORSE)  # finished; may end worse
    info = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    trace = Trace.load(info["trace"])  # the '/' of "/bcast" is not a folder
    assert trace.meta["params"]["gauss_sigma"] == 3.0 and trace.meta["params"]["alpha"] == 0.05
    assert json.loads((tmp_path / "privacy.json").read_text())["epsilon_max"] < np.inf


def test_a_non_private_channel_reports_infinity_with_the_reason(tmp_path, capsys):
    assert main(["run", "dgd", *SMALL, "--channel", "clip:1.0", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    saved = json.loads((tmp_path / "privacy.json").read_text())
    assert saved["epsilon_max"] == float("inf") and "dgd is not private" in saved["reason"]
    assert f"ε = inf: {saved['reason']}" in printed


@pytest.mark.parametrize("argv, message", [
    (["--channel", "nope:1"], "unknown channel transform 'nope'"),
    (["--channel", "clip:1.0", "--epsilon", "1"], "does not support --epsilon"),
    (["--channel", "clip:1.0+gaussian:0.5", "--param", "gauss_sigma=-1"],
     "gauss_sigma must be > 0"),
])
def test_bad_channel_arguments_fail_before_the_run(argv, message, tmp_path, capsys):
    out = tmp_path / "never"
    assert main(["run", "dgd", *SMALL, *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("jaxdp: error:") and message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_compare_wraps_every_algorithm_and_plots_a_cost_axis(tmp_path, capsys):
    assert main(["compare", "dgd", "nids", *SMALL, "--channel", "clip:1.0+gaussian:0.5",
                 "--epsilon", "3", "--x", "step", "--x", "rounds", "--metric", "objective",
                 "--out", str(tmp_path)]) in (0, ENDED_WORSE)  # finished; may end worse
    rows = (tmp_path / "compare.csv").read_text().splitlines()
    eps = [float(r.split(",")[1]) for r in rows[1:]]
    assert eps == pytest.approx([3.0, 3.0], rel=1e-4)
    assert (tmp_path / "privacy_nids.json").exists() and (tmp_path / "compare.png").exists()


def test_help_shows_the_channel_grammar(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--channel [MESSAGE=]SPEC" in text and "clip:1.0+gaussian:sigma=0.5,decay=0.99" in text
    assert "--x AXIS" in text and "one of step, rounds, messages, bits, grad_calls" in text


def test_a_lossy_channel_records_its_counters_beside_the_static_costs(tmp_path, capsys):
    assert main(["run", "dgd", *SMALL, "--channel", "drop:0.5", "--out", str(tmp_path)]) == 0
    trace = Trace.load(tmp_path / "trace_dgd+drop.npz")
    dropped = trace.cost("messages_dropped")  # a counter: its mean over seeds
    assert dropped[0] == 0 and np.all(np.diff(dropped) >= 0) and dropped[-1] > 0
    assert np.array_equal(trace.cost("messages_sent"), trace.cost("messages"))  # 2E per step
    assert np.all(dropped <= trace.cost("messages"))


def test_config_file_takes_channel_and_x(tmp_path, capsys):
    config = tmp_path / "exp.toml"
    config.write_text('algorithm = "dgd"\nchannel = "clip:1.0+gaussian:0.5"\nx = "rounds"\n')
    assert main(["run", "--config", str(config), *SMALL, "--out", str(tmp_path / "a")]) == 0
    assert (tmp_path / "a" / "trace_dgd+clip+gaussian.npz").exists()
    config.write_text('algorithm = "dgd"\nx = ["flops"]\n')
    assert main(["run", "--config", str(config), *SMALL, "--out", str(tmp_path / "b")]) == 2
    assert "--x must be one of step, rounds" in capsys.readouterr().err


def test_parse_channels_routes_named_messages():
    routes = channels.parse_channels(["x=clip:1.0,name=cx+gaussian:0.5,name=gx+broadcast+self",
                                      "gaussian:0.2"])
    assert routes == {"x": chain(clip(1.0, name="cx"), gaussian(0.5, name="gx"), broadcast=True,
                                 self_term="released"), "*": chain(gaussian(0.2))}
    assert parse_channel(routes["x"].name) == chain(clip(1.0), gaussian(1.0), broadcast=True,
                                                    self_term="released")
    assert channels.parse_channels("clip:1.0") == chain(clip(1.0))
    with pytest.raises(ValueError, match="two channel specs for message 'x'"):
        channels.parse_channels(["x=clip:1.0", "x=gaussian:1.0"])


def test_run_routes_each_named_message_through_its_channel(tmp_path, capsys):
    """DIGing's x and y with clip + Gaussian stacks of their own: a finite ε composed from both,
    the y noise set with --param."""
    out = tmp_path / "run"
    assert main(["run", "diging", *SMALL, "--channel", "x=clip:1.0,name=cx+gaussian:4.0,name=gx",
                 "--channel", "y=clip:2.0,name=cy+gaussian:1.0,name=gy+broadcast",
                 "--param", "gy_sigma=30.0", "--out", str(out)]) in (0, ENDED_WORSE)
    capsys.readouterr()
    saved = json.loads((out / "privacy.json").read_text())
    assert np.isfinite(saved["epsilon_max"])
    assert "message 'x' through clip+gaussian" in saved["released"]
    assert "message 'y' through clip+gaussian/bcast" in saved["released"]
    trace = Trace.load(next(out.glob("trace_*.npz")))
    assert trace.meta["params"]["gy_sigma"] == 30.0
