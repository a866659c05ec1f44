"""The audit table (issue 9): every private algorithm has a case; controls behave; files exist;
observer rows (issue 24) carry their pair class."""
import json
import math
import os

import jax
import numpy as np
import pytest
from scipy import stats

from jaxdp.algorithms import cases
from jaxdp.attacks.audit import epsilon_lower_bound, gaussian_mechanism_epsilon
from jaxdp.experiments import REPRODUCTIONS
from jaxdp.experiments import audit as table


def _case(case_id):
    return next(c for c in table.cases() if c.id == case_id)


def test_every_private_algorithm_of_the_registry_has_an_audit_case():
    """The table covers every algorithm whose privacy() gives a report, plus three controls."""
    ids = [c.id for c in table.cases()]
    assert set(table.private_algorithms()) <= set(ids)
    assert len(table.private_algorithms()) >= 19
    assert {"control:dpp2_u0", "control:recal_x", "control:gaussian"} <= set(ids)
    assert REPRODUCTIONS["audit-table"] is table.audit_table


def test_neighbours_differ_only_at_agent_0_and_by_the_stated_amount():
    """Tilt: ∇f_0 − ∇f_0' = v at every x; sample / flip: one row of agent 0 differs."""
    v = np.array([0.3, -0.2, 0.1])
    p0, p1 = cases.tilt(4, 6, 3, v)
    X = np.random.default_rng(0).normal(size=(4, 3))
    gap = np.asarray(p0.local_grads(X) - p1.local_grads(X))
    np.testing.assert_allclose(gap[0], v, atol=1e-12)
    np.testing.assert_allclose(gap[1:], 0.0, atol=1e-12)
    for q0, q1 in (cases.sample(4, 6, 3, 50.0), cases.flip(4, 6, 3, lam=0.1)):
        differs = np.asarray(q0.labels != q1.labels)
        assert differs.sum() == 1 and differs[0, 0]
        np.testing.assert_array_equal(q0.features, q1.features)


def test_gaussian_mechanism_epsilon_solves_the_balle_wang_equation():
    """Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ at the returned ε, and ε grows with μ."""
    for mu in (0.5, 1.0, 2.0):
        eps = gaussian_mechanism_epsilon(mu, 1e-5)
        lhs = (stats.norm.cdf(-eps / mu + mu / 2)
               - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))
        assert lhs == pytest.approx(1e-5, rel=1e-6)
    assert gaussian_mechanism_epsilon(1.0, 1e-5) < gaussian_mechanism_epsilon(2.0, 1e-5)
    with pytest.raises(ValueError, match="mu"):
        gaussian_mechanism_epsilon(0.0, 1e-5)


def test_likelihood_ratio_scores_separate_a_shift_and_not_identical_inputs():
    """A Laplace shift gives a bound below its exact ε (= ‖Δ‖₁/b); equal inputs give none."""
    rng = np.random.default_rng(0)
    shift = np.array([0.5, 0.5, 0.0])  # exact pure ε = 1.0
    f0, f1 = rng.laplace(size=(40_000, 3)), rng.laplace(size=(40_000, 3)) + shift
    s0, s1 = table.likelihood_ratio_scores(f0, f1, "laplace")
    res = epsilon_lower_bound(s0, s1, delta=0.0)
    assert 0.3 < res.epsilon_lower < 1.0
    g0, g1 = rng.normal(size=(40_000, 3)), rng.normal(size=(40_000, 3))
    s0, s1 = table.likelihood_ratio_scores(g0, g1, "gaussian")
    assert epsilon_lower_bound(s0, s1, delta=1e-5).epsilon_lower < 0.1


def test_positive_controls_are_caught_and_the_gaussian_bound_stays_below_its_exact_epsilon():
    """At 2e4 seeds: DPP² with u = 0 and DP-RECAL's x-channel reach the seed-count limit; a
    Gaussian mechanism with μ = 1 gives a positive bound below its exact ε."""
    seeds = 20_000
    with jax.enable_x64(True):
        rows = {cid: table.audit_case(_case(cid), seeds=seeds, batch=seeds)
                for cid in ("control:dpp2_u0", "control:recal_x", "control:gaussian")}
    limit = table.max_bound(seeds // 2, 1e-5)
    for cid in ("control:dpp2_u0", "control:recal_x"):
        assert rows[cid]["verdict"] == "caught"
        assert rows[cid]["empirical_lower"] > 0.9 * limit, rows[cid]
    gauss = rows["control:gaussian"]
    assert gauss["verdict"] == "sound"
    assert 0.3 * gauss["exact_eps"] < gauss["empirical_lower"] < gauss["exact_eps"], gauss


def _check_files(out):
    for name in ("audit_table.png", "audit_table.json", "audit_table.csv", "report.md"):
        assert os.path.getsize(out / name) > 0


def test_a_tiny_table_writes_its_files_and_one_claim_per_row(tmp_path):
    """Tiny settings on one algorithm, one control and one observer case: files exist, claim ids
    follow the rows. The eavesdropper row has no observer and stays in the privacy table; the
    observer row carries threat, observer, hops and pair class, its claim is
    report.pairwise[0, v], and it is in observer_table.md, not in the privacy table."""
    far = "pairwise:dp_dgd:erdos_renyi:v2"
    report = table.audit_table(tmp_path, **table.TINY, only=("dpp2", "control:gaussian", far))
    assert {c.id for c in report.claims} == {"audit-dpp2", "control-gaussian", f"audit-{far}"}
    _check_files(tmp_path)
    rows = {r["algorithm"]: r for r in json.loads((tmp_path / "audit_table.json").read_text())}
    assert rows["dpp2"]["observer"] is None and rows["dpp2"]["threat"] == "eavesdropper"
    row = rows[far]
    assert (row["threat"], row["observer"], row["hops"], row["pair_class"]) == (
        "neighbours", 2, 2, "2 hops")
    case = _case(far)
    with jax.enable_x64(True):
        pairwise = case.algorithm.privacy(case.pair[0], case.network, case.params, case.releases,
                                          threat="neighbours").pairwise
    assert row["guarantee"] == float(pairwise[0, 2])
    privacy_md = (tmp_path / "privacy_table.md").read_text()
    assert "| `dpp2` |" in privacy_md and "pairwise:" not in privacy_md
    assert f"| 2 hops | `{far}` | 2 |" in (tmp_path / "observer_table.md").read_text()
    with open(tmp_path / "audit_table.csv") as fh:
        header = fh.readline().strip().split(",")
    assert header[-4:] == ["threat", "observer", "hops", "pair_class"]


@pytest.mark.slow
def test_the_tiny_full_table_has_every_claim_id(tmp_path):
    """Tiny settings over every case: one claim per private algorithm and per control."""
    report = table.audit_table(tmp_path, **table.TINY)
    cases = table.cases()
    assert set(table.private_algorithms()) <= {c.id for c in cases}
    expected = {f"audit-{c.id}" for c in cases if not c.control}
    expected |= {f"control-{c.id.split(':')[1]}" for c in cases if c.control}
    assert {c.id for c in report.claims} == expected
    _check_files(tmp_path)


def test_the_ideal_audit_ceiling_is_below_the_exact_epsilon_and_grows_with_the_runs():
    """μ = 1: an exact test over 5e4 runs shows ~0.6 of ε at δ = 1e-5 but ~0.9 at δ = 1e-2."""
    exact = gaussian_mechanism_epsilon(1.0, 1e-5)
    ceilings = [table.ideal_gaussian_audit(1.0, n, 1e-5) for n in (10_000, 50_000, 1_000_000)]
    assert ceilings[0] < ceilings[1] < ceilings[2] < exact
    assert 0.5 < ceilings[1] / exact < 0.7
    wide = table.ideal_gaussian_audit(1.0, 50_000, 1e-2) / gaussian_mechanism_epsilon(1.0, 1e-2)
    assert 0.85 < wide < 1.0


# -- audits per observer (issue 24) -------------------------------------------------------------
def test_the_full_covariance_ratio_finds_a_difference_hidden_by_correlated_noise():
    """A message ``a + c`` and its partner ``b − c`` (c: large noise shared with opposite signs,
    as DECOR's edge secret): the product model sees the shift in ``a`` through c's variance only;
    the full-covariance ratio adds the two and sees it through the independent noise (exact
    μ = 1/√2 against 1/√65), so its bound is far higher — and stays below the exact ε."""
    rng = np.random.default_rng(1)

    def draw(shift, n=40_000):
        a, b, c = rng.normal(size=(3, n))
        return np.stack([a + shift + 8 * c, b - 8 * c], axis=1)
    f0, f1 = draw(0.0), draw(1.0)
    bounds = {m: epsilon_lower_bound(*table.likelihood_ratio_scores(f0, f1, m),
                                     delta=1e-2).epsilon_lower
              for m in ("gaussian", "gaussian_cov")}
    assert bounds["gaussian_cov"] > 0.5 > bounds["gaussian"] + 0.3, bounds
    assert bounds["gaussian_cov"] < gaussian_mechanism_epsilon(1 / np.sqrt(2), 1e-2)


def _row(case_id, pair_class, hops, ratio, control="", claimed=None, guarantee=5.0):
    return {"algorithm": case_id, "observer": 1, "pair_class": pair_class, "hops": hops,
            "ratio": ratio, "control": control, "claimed_eps": claimed, "guarantee": guarantee,
            "empirical_lower": 1.0, "verdict": "caught" if control else "sound"}


def test_the_observer_table_gives_empirical_over_claimed_per_pair_class():
    """Rows ordered by distance, one summary line per class with its largest ratio; a control
    shows the ε it claimed, not the report's, and does not enter the summary."""
    rows = [_row("pairwise:a:ring:v3", "≥3 hops", 3, 0.01),
            _row("pairwise:a:ring:v1", "neighbour", 1, 0.6),
            _row("pairwise:b:ring:v1", "neighbour", 1, 0.2),
            _row("control:x", "neighbour", 1, None, "positive", 2.17, float("inf")),
            {**_row("dp_dgd", None, None, 0.4), "observer": None}]
    text = table.observer_table(rows)
    lines = text.splitlines()
    assert lines[2].startswith("| neighbour | `pairwise:a:ring:v1`")
    assert lines[5].startswith("| ≥3 hops |") and "`dp_dgd`" not in text
    assert "| 2.17 | 1 |" in lines[4]
    assert "- neighbour: 3 case(s), largest empirical/claimed 0.6" in lines
    assert "- ≥3 hops: 1 case(s), largest empirical/claimed 0.01" in lines
