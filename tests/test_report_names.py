"""What a report prints: curve names a list can hold, and indices a terminal can show.

The summary and the tables list curve names joined by ", ", so a name with a comma reads as two
curves (DP-FedAvg's sound curves printed "pld, pld, Poisson"); and the summary is printed on a
terminal, where a TeX index ``x_i^{k+1}`` (DP-DGD's "Covers" line) shows as typed.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from jaxdp import algorithms, network, problems
from jaxdp._text import terminal_scripts
from jaxdp.privacy import PrivacyReport


@functools.cache
def _reports() -> dict:
    """Every registry algorithm's report on a small problem (4 agents, one step), by name."""
    rng = np.random.default_rng(0)
    prob = problems.from_arrays(rng.normal(size=(4, 40, 2)), rng.normal(size=(4, 40)),
                                loss="least_squares", reg={"ridge": 0.0}, reference=False)
    net = network.make_network("ring", 4)
    out = {}
    for name, cls in algorithms.REGISTRY.items():
        alg = cls()
        with warnings.catch_warnings():  # least-squares data fail some papers' assumptions
            warnings.simplefilter("ignore")
            report = alg.privacy(prob, net, alg.default_params(), 1)
        if report is not None:
            out[name] = report
    return out


def test_no_curve_name_of_any_private_algorithm_holds_a_comma():
    reports = _reports()
    assert len(reports) >= 19, sorted(reports)
    named = {n: [m for m in r.curves if "," in m] for n, r in reports.items()}
    assert not any(named.values()), {n: m for n, m in named.items() if m}


def test_a_report_refuses_a_curve_name_with_a_comma():
    with pytest.raises(ValueError, match="comma.*'pld, Poisson'"):
        PrivacyReport(steps=np.array([1]), curves={"pld, Poisson": np.ones((2, 1))}, delta=1e-5)


def test_every_summary_prints_indices_as_plain_text():
    """DP-DGD's "Covers" line printed ``x_i^{k+1}``; every summary now writes ``x_i^(k+1)``."""
    summaries = {n: r.summary() for n, r in _reports().items()}
    raw = {n: s for n, s in summaries.items() if "^{" in s or "_{" in s}
    assert not raw, raw
    assert "x_i^(k+1) carries g̃_i^k" in summaries["dp_dgd"]
    assert terminal_scripts("r^0..r^{K−1}, β_{k+1}, x_i^k") == "r^0..r^(K−1), β_(k+1), x_i^k"
