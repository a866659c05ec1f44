"""Threat models in the privacy contract (issue 24): defaults unchanged, the fallback says so.

float64: tests/conftest.py enables it for the whole test session.
"""
import json

import numpy as np
import pytest

from jaxdp import channels
from jaxdp.algorithms import DGD
from jaxdp.cli import ENDED_WORSE, main
from jaxdp.privacy import Coalition, Eavesdropper, Neighbours, SecretPairs, parse_threat
from jaxdp.privacy.contract import as_threat
from tests.harness import small_network, small_problem

STEPS = 20


@pytest.fixture(scope="module")
def run():
    problem, network = small_problem(), small_network()
    alg = channels.with_channel(DGD(), channels.chain(channels.clip(1.0), channels.gaussian(30.0)))
    return alg, problem, network, alg.default_params()


def _privacy(run, **kw):
    alg, problem, network, params = run
    return alg.privacy(problem, network, params, STEPS, **kw)


def test_default_is_the_eavesdropper_and_unchanged(run):
    default = _privacy(run)
    for threat in ("eavesdropper", Eavesdropper()):
        explicit = _privacy(run, threat=threat)
        np.testing.assert_array_equal(explicit.epsilon, default.epsilon)
        assert explicit.threat == "eavesdropper" and not explicit.threat_fallback
    assert default.threat == "eavesdropper" and not default.threat_fallback
    assert default.pairwise is None and default.unprotected == ()
    assert "Threat model" not in default.summary()
    assert np.isfinite(default.epsilon_max)


@pytest.mark.parametrize("threat", ["neighbours", "secret_pairs", Neighbours(), SecretPairs()])
def test_without_a_tighter_analysis_the_eavesdropper_bound_is_returned_and_said(run, threat):
    default, report = _privacy(run), _privacy(run, threat=threat)
    np.testing.assert_array_equal(report.epsilon, default.epsilon)
    assert report.threat == as_threat(threat).name and report.threat_fallback
    assert "eavesdropper bound" in report.threat_note
    assert f"Threat model ({report.threat})" in report.summary()
    saved = report.to_dict()
    assert saved["threat"] == report.threat and saved["threat_fallback"] is True


def test_neighbours_report_holds_the_pairwise_matrix(run):
    report = _privacy(run, threat="neighbours")
    n = report.epsilon.size
    assert report.pairwise.shape == (n, n)
    assert np.all(np.isinf(np.diag(report.pairwise)))
    off = ~np.eye(n, dtype=bool)  # the causal cone: at most u's bound, all of it at a neighbour
    assert np.all(report.pairwise[off] <= np.repeat(report.epsilon, n)[off.ravel()])
    np.testing.assert_allclose(np.max(np.where(off, report.pairwise, 0), axis=1), report.epsilon)


def test_a_coalition_does_not_protect_its_members(run):
    default, report = _privacy(run), _privacy(run, threat=Coalition([0, 2]))
    assert report.unprotected == (0, 2) and report.threat == "coalition"
    assert np.all(np.isinf(report.epsilon[[0, 2]]))
    np.testing.assert_array_equal(report.epsilon[[1, 3, 4, 5]], default.epsilon[[1, 3, 4, 5]])
    assert report.epsilon_max == pytest.approx(np.max(default.epsilon[[1, 3, 4, 5]]))


def test_bad_threats_are_refused(run):
    with pytest.raises(ValueError, match="needs its agents"):
        as_threat("coalition")
    with pytest.raises(ValueError, match="unknown threat model"):
        as_threat("insider")
    with pytest.raises(ValueError, match="not agents"):
        _privacy(run, threat=Coalition([0, 99]))
    with pytest.raises(ValueError, match="at least one"):
        Coalition([])
    with pytest.raises(ValueError, match="already under"):
        _privacy(run, threat="neighbours").under_threat("secret_pairs")
    assert parse_threat("coalition:0,3") == Coalition((0, 3))
    assert parse_threat("neighbours") == Neighbours()


def test_cli_run_threat_is_recorded(tmp_path, capsys):
    args = ["run", "dp_dgd", "--problem", "least_squares", "--network", "ring", "--agents", "6",
            "--seeds", "2", "--steps", "10", "--no-progress", "--threat", "neighbours",
            "--out", str(tmp_path)]
    assert main(args) in (0, ENDED_WORSE)  # finished; the tiny run may end worse
    saved = json.loads((tmp_path / "privacy.json").read_text())
    assert saved["threat"] == "neighbours" and saved["threat_fallback"] is True
    assert "Threat model (neighbours)" in capsys.readouterr().out
