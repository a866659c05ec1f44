"""Record-level replace-one under Poisson sampling (issue 37): offered by the DP-SGD-style
algorithms as ``relation="replace_record"``, accounted by dp-accounting's REPLACE_ONE PLD of the
Poisson-subsampled Gaussian (pair ±C/b: each record's clipped term has norm ≤ C/b), refused where
the sampling cannot support the relation, and checked against the exact privacy profile of the
mixture pair on a tiny case."""
import json

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from jaxdp import algorithms
from jaxdp.algorithms.ltadmm import privacy as shared
from jaxdp.cli import main
from jaxdp.privacy import PrivacyEvents, PrivacyReport, rdp_epsilon
from tests.harness import small_network, small_problem

B, RECORDS, C, SIGMA, DELTA = 4, 8, 1.0, 1.0, 1e-5  # q = 1/2, noise multiplier σb/C = 4


def _dpa_epsilon(noise_multiplier, q, steps, relation, interval=1e-3):
    """dp-accounting's PLDAccountant on ``steps`` Poisson-subsampled Gaussians, built directly."""
    import dp_accounting as dpa

    acct = dpa.pld.PLDAccountant(relation, value_discretization_interval=interval)
    event = dpa.GaussianDpEvent(noise_multiplier)
    acct.compose(event if q == 1 else dpa.PoissonSampledDpEvent(q, event), steps)
    return acct.get_epsilon(DELTA)


def _report(relation, steps, sampler="lattice", name="dp_dsgd"):
    alg = algorithms.get(name, batch_size=B, sampling="poisson", records=RECORDS, relation=relation,
                         sampler=sampler)
    prob, net = small_problem("logistic"), small_network()
    params = algorithms.get(name).params_type(sigma=SIGMA, clip=C)
    if sampler == "float":  # the ideal mechanism's events, through the report's accountants
        events = shared.privacy_events(alg, prob, params, steps)
        return PrivacyReport.from_events(events, DELTA, at_steps=[steps]), events
    return alg.privacy(prob, net, params, steps, delta=DELTA), None


@pytest.mark.parametrize("name", ["dp_dsgd", "porter"])
def test_replace_one_pld_is_dp_accountings_replace_one_built_directly(name):
    """Δ = C/b is the REPLACE_ONE sensitivity (dp-accounting's pair qN(∓Δ) + (1 − q)N(0)), so the
    report's PLD equals the PLDAccountant's at noise multiplier σb/C to 1e-6; it has no RDP curve
    (dp-accounting has none for this event), and the events say ``"poisson_replace_one"``."""
    import dp_accounting as dpa

    steps = 5
    report, events = _report("replace_record", steps, "float", name)
    assert events.sampling == "poisson_replace_one"
    assert set(report.curves) == {"zcdp", "pld"}
    direct = _dpa_epsilon(SIGMA * B / C, B / RECORDS, steps, dpa.NeighboringRelation.REPLACE_ONE)
    np.testing.assert_allclose(report.curves["pld"][:, -1], direct, rtol=1e-6)
    with pytest.raises(ValueError, match="RdpAccountant has no REPLACE_ONE"):
        rdp_epsilon(events, DELTA)


def test_replace_one_lies_between_add_remove_and_no_amplification():
    """Same run, K = 20: ε(add/remove) < ε(replace-one) < ε of the Gaussian of sensitivity 2C/b
    without amplification (dp-accounting, q = 1) ≤ the zCDP curve; the lattice report's headline
    (the guarantee) under replace-one is its PLD and is above the float events'."""
    import dp_accounting as dpa

    steps = 20
    add = _report(None, steps, "float")[0].curves["pld"][:, -1]
    rep_report = _report("replace_record", steps, "float")[0]
    rep = rep_report.curves["pld"][:, -1]
    plain = _dpa_epsilon(SIGMA * B / (2 * C), 1.0, steps, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    assert np.all(add < rep) and np.all(rep < plain), (add, rep, plain)
    assert np.all(plain <= rep_report.curves["zcdp"][:, -1])
    lattice = _report("replace_record", steps)[0]
    assert lattice.relation == "replace_record"
    assert np.all(lattice.epsilon >= rep) and np.all(lattice.epsilon < 1.05 * rep)


def _profile(a, b, q, sigma, eps):
    """δ(ε) of one step, P = (1−q)N(0,σ²) + qN(a,σ²) against Q = (1−q)N(0,σ²) + qN(b,σ²), by
    quadrature of (p − e^ε q)₊ on a fine grid (for comparing pairs on the line)."""
    x = np.linspace(-12 * sigma - 2, 12 * sigma + 2, 40001)
    p = (1 - q) * stats.norm.pdf(x, 0, sigma) + q * stats.norm.pdf(x, a, sigma)
    qq = (1 - q) * stats.norm.pdf(x, 0, sigma) + q * stats.norm.pdf(x, b, sigma)
    return integrate.simpson(np.maximum(p - np.exp(eps) * qq, 0.0), x=x)


class _Antipodal:
    """The worst pair, P = (1−q)N(0,σ²) + qN(−s,σ²), Q = its mirror image: its privacy loss
    L(x) = log p(x)/q(x) decreases in x, so one step's δ(ε) = P(X ≤ x*) − e^ε Q(X ≤ x*) at
    L(x*) = ε (exact, by the normal cdf), and two steps' δ(ε) = E_{x~P} δ₁(ε − L(x)) (a smooth
    1-D integral)."""

    def __init__(self, s, q, sigma):
        self.s, self.q, self.sigma = s, q, sigma

    def _log(self, x, c):
        lo = stats.norm.logpdf(x, 0, self.sigma) + np.log1p(-self.q)
        return np.logaddexp(lo, stats.norm.logpdf(x, c, self.sigma) + np.log(self.q))

    def loss(self, x):
        return self._log(x, -self.s) - self._log(x, self.s)

    def _cdf(self, x, c):
        return ((1 - self.q) * stats.norm.cdf(x / self.sigma)
                + self.q * stats.norm.cdf((x - c) / self.sigma))

    def delta(self, eps, steps=1):
        if steps == 2:
            return integrate.quad(lambda x: np.exp(self._log(x, -self.s)) * self.delta(
                eps - self.loss(x)), -10 * self.sigma - 2, 10 * self.sigma + 2, limit=200,
                epsabs=1e-11)[0]
        x = optimize.brentq(lambda x: self.loss(x) - eps, -200, 200, xtol=1e-14)
        return self._cdf(x, -self.s) - np.exp(eps) * self._cdf(x, self.s)


@pytest.mark.parametrize("steps", [1, 2])
def test_report_bounds_the_exact_epsilon_of_the_mixture_pair_within_a_few_percent(steps):
    """The exact ε at δ of the worst pair (contributions ±C/b, σ; symmetric, so one direction
    suffices): the report's ε (float events) is ≥ it and within 3 %. Collinear pairs that are not
    antipodal (a, b in [−C/b, C/b]) have a smaller δ(ε): the antipodal pair is the worst on the
    line (dp-accounting's REPLACE_ONE pair)."""
    s, q, delta = C / B, B / RECORDS, 1e-3
    pair = _Antipodal(s, q, SIGMA)
    events = _report("replace_record", steps, "float")[1]
    got = float(PrivacyReport.from_events(events, delta, at_steps=[steps]).curves["pld"][0, -1])
    exact = optimize.brentq(lambda e: pair.delta(e, steps) - delta, 0.1, 5, xtol=1e-9)
    assert exact <= got <= 1.03 * exact, (exact, got)
    worst = _profile(-s, s, q, SIGMA, exact / 2)
    assert worst == pytest.approx(pair.delta(exact / 2), rel=1e-6)  # the quadrature is accurate
    for a, b in [(0.0, s), (-s / 2, s), (-s, s / 3), (s / 2, -s / 4), (s, s / 2)]:
        assert _profile(a, b, q, SIGMA, exact / 2) < worst


@pytest.mark.parametrize("name", ["dp_dsgd", "dp_dsgt", "lt_admm_dp", "porter", "prisma"])
def test_a_relation_the_sampling_cannot_support_is_refused_before_anything_runs(name):
    with pytest.raises(ValueError, match="relation='add_remove_record' is not accounted under "
                                         "sampling='fixed'"):
        algorithms.get(name, sampling="fixed", relation="add_remove_record")
    with pytest.raises(ValueError, match="relation='replace_agent'"):
        algorithms.get(name, sampling="poisson", relation="replace_agent")
    assert shared.relation(algorithms.get(name, sampling="poisson")) == "add_remove_record"
    assert shared.relation(algorithms.get(name, sampling="fixed")) == "replace_record"


def test_the_cli_offers_replace_one_under_poisson(tmp_path, capsys):
    """``--option relation=replace_record`` reaches the algorithm: the saved report's relation and
    ε are the replace-one ones; a relation the sampling cannot support fails in one line."""
    common = ["--problem", "least_squares", "--agents", "4", "--seeds", "1", "--steps", "3",
              "--no-progress", "--option", "batch_size=2"]
    assert main(["run", "dp_dsgd", *common, "--option", "relation=replace_record",
                 "--out", str(tmp_path / "r")]) in (0, 3)
    saved = json.loads((tmp_path / "r" / "privacy.json").read_text())
    assert saved["relation"] == "replace_record"
    assert main(["run", "dp_dsgd", *common, "--option", "sampling=fixed", "--option",
                 "relation=add_remove_record", "--out", str(tmp_path / "bad")]) == 2
    assert "is not accounted under sampling='fixed'" in capsys.readouterr().err
