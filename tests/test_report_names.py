"""What a report prints: curve names a list can hold, and indices a terminal can show.

The summary and the tables list curve names joined by ", ", so a name with a comma reads as two
curves (DP-FedAvg's sound curves printed "pld, pld, Poisson"); and the summary is printed on a
terminal, where a TeX index ``x_i^{k+1}`` (DP-DGD's "Covers" line) shows as typed.
"""
from __future__ import annotations

import numpy as np
import pytest

from jaxdp._text import terminal_scripts
from jaxdp.privacy import PrivacyReport
from tests.harness import registry_reports


def test_no_curve_name_of_any_private_algorithm_holds_a_comma():
    reports = registry_reports()
    assert len(reports) >= 19, sorted(reports)
    named = {n: [m for m in r.curves if "," in m] for n, r in reports.items()}
    assert not any(named.values()), {n: m for n, m in named.items() if m}


def test_a_report_refuses_a_curve_name_with_a_comma():
    with pytest.raises(ValueError, match="comma.*'pld, Poisson'"):
        PrivacyReport(steps=np.array([1]), curves={"pld, Poisson": np.ones((2, 1))}, delta=1e-5)


def test_every_summary_prints_indices_as_plain_text():
    """DP-DGD's "Covers" line printed ``x_i^{k+1}``; every summary now writes ``x_i^(k+1)``."""
    summaries = {n: r.summary() for n, r in registry_reports().items()}
    raw = {n: s for n, s in summaries.items() if "^{" in s or "_{" in s}
    assert not raw, raw
    assert "x_i^(k+1) carries g̃_i^k" in summaries["dp_dgd"]
    assert terminal_scripts("r^0..r^{K−1}, β_{k+1}, x_i^k") == "r^0..r^(K−1), β_(k+1), x_i^k"
