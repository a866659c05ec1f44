"""``jaxdp reproduce audit-table``: an empirical privacy audit of every private algorithm (issue 9).

For each algorithm whose ``privacy()`` returns a report (``jaxdp.algorithms.REGISTRY``) we build two
neighbouring problems as its paper's adjacency allows (objectives or data sets that differ at agent
0 only), run ``seeds`` replicates on each (disjoint seeds, one jitted ``vmap``), keep the messages
the attacker observes over a short horizon, reduce them to one score per run and turn the threshold
test's error rates into an ε lower bound with Clopper–Pearson 95 % confidence
(:func:`jaxdp.attacks.audit.epsilon_lower_bound`).

The score is the likelihood-ratio statistic of a product model fitted on the selection half of the
runs only (the half that also picks the threshold): per observed coordinate j, with μ0_j, μ1_j the
two inputs' means and s_j² the pooled variance,
``Σ_j (μ1_j − μ0_j) m_j / s_j²`` for Gaussian noise and ``Σ_j (|m_j − μ0_j| − |m_j − μ1_j|)/b_j``
(``b_j = s_j/√2``) for Laplace noise. It ignores correlations between coordinates, so it is a valid
but not always a strong test: a bound far below the claim says only that; a bound above it is a
finding.

Neighbours (``_pair``): least-squares data on every agent; agent 0's labels differ so that
``∇f_0 − ∇f_0' = v`` everywhere (a linear tilt, exact for least squares) with ``v`` as large as the
paper's adjacency allows in its norm (``"tilt"``); or one row of agent 0 differs (``"sample"``,
record-level adjacency of the minibatch/clipping papers); or one label of a logistic agent flips
(paper 002, features of norm ≤ 1 so ‖ℓ'‖ ≤ S1 = 1). Gradient-bounded papers (003's c, 002's S1) are
audited at a difference of c (half the worst case 2c), inside their assumption near x⁰.

Settings: each algorithm's ``default_params()`` (its paper's experiment settings) on its paper's
topology kind at N = 10 agents (papers 000 and 002 use 50 and 100; every claim is per agent and is
evaluated on the network actually run), short horizons (1–2 steps; 16 for the token methods,
whose agent 0 must first receive the token), float64 (the algorithms mix dtypes under x64).

Columns: claimed ε (the report's ``"theorem"`` curve: the paper's theorem, None where the paper
gives none), tight ε (dp-accounting: ``"pld"`` else ``"rdp"``), the accountant used for the verdict
when neither exists, the empirical bound, seeds per input, messages observed, verdict.
Controls: DPP² with u = 0 (its z⁰ = ∇f(x⁰) is sent in the clear since q⁰ = 0), DP-RECAL's x-channel
without a regularizer (:func:`jaxdp.attacks.relay.x_channel_gradients` as the statistic) and a
plain Gaussian mechanism (one DP-DGD step, both gradients clipped, exact ε by Balle & Wang 2018).
"""
from __future__ import annotations

import csv
import dataclasses
import functools
import json
import math
import time
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from jaxdp import algorithms, network, problems
from jaxdp.attacks import relay
from jaxdp.attacks.audit import (
    audit_observations,
    clopper_pearson_upper,
    epsilon_from_rates,
    epsilon_lower_bound,
    gaussian_mechanism_epsilon,
)
from jaxdp.experiments._plotting import figure, save
from jaxdp.experiments._report import Report
from jaxdp.privacy import PAPER_CORRECTED, PAPER_PRINTED

CONFIDENCE = 0.95
SELECT = 0.5  # share of each input's runs that fits the statistic and picks the threshold
TINY = {"seeds": 400, "batch": 400}
N_AGENTS = 10  # every family at N = 10 (the paper's topology kind): ε is per agent


@dataclasses.dataclass(frozen=True)
class Case:
    """One audited configuration.

    Attributes:
      id: row name (the registry name, or a control's name).
      paper: which paper (and where its adjacency comes from).
      algorithm, params, network: what runs.
      pair: the two neighbouring problems (differing at agent 0).
      steps: horizon K; the attacker sees the messages of steps 0..K−1.
      observed: the messages the attacker sees, in words.
      features: ``fn(observed) -> (D,)``, jittable: the observed numbers of one run.
      mechanism: ``"gaussian"`` or ``"laplace"``: which likelihood-ratio form scores them.
      control: ``""``, ``"positive"`` (must be caught) or ``"negative"`` (exact ε known).
      exact: the exact ε of a negative control.
      claimed: a claim given by hand (overrides the report's theorem curve), e.g. for DPP² u = 0.
      releases: the horizon the privacy report is asked for (default ``steps``); DP-DGD sends the
        model before its update, so K = 2 steps show one noisy gradient.
      ci_seeds: runs per input in the CI soundness gate (``tests/test_privacy_soundness.py``).

    An ordinary case is *sound* when the empirical lower bound stays at or below the report's
    guarantee for agent 0 (whose data differ). A positive control with a float ``claimed`` (an
    under-reported ε, built by the same accountant with a wrong sensitivity or sampling claim) is
    *caught* when the bound exceeds it; one without is caught when the bound reaches 90 % of what
    the seeds can show (:func:`max_bound`).
    """

    id: str
    paper: str
    algorithm: Any
    params: Any
    network: Any
    pair: tuple
    steps: int
    observed: str
    features: Callable
    mechanism: str = "gaussian"
    control: str = ""
    exact: float | None = None
    claimed: Any = None
    releases: int | None = None
    ci_seeds: int = 20_000


# -- neighbouring problems ----------------------------------------------------------------------
def _data(n: int, m: int, d: int, seed: int):
    """Gaussian rows of norm ≈ 1 and Gaussian labels for every agent."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, m, d)) / np.sqrt(d), rng.normal(size=(n, m))


def _problems(features, label_sets, loss, reg, dtype) -> tuple:
    return tuple(problems.from_arrays(features, lab, loss=loss, reg=reg, reference=False,
                                      dtype=dtype) for lab in label_sets)


def _with_agent0(labels, rows, values) -> list:
    """Copies of ``labels`` whose agent-0 entries ``rows`` are set to each of ``values``."""
    out = []
    for v in values:
        lab = labels.copy()
        lab[0, rows] = v
        out.append(lab)
    return out


def _tilt(n: int, m: int, d: int, v: np.ndarray, *, loss="least_squares", reg=None, seed=0,
          dtype=np.float64):
    """Least squares: agent 0's gradient is ``+v/2`` at 0 in one problem, ``−v/2`` in the other.

    ``∇f_0(x) = Aᵀ(Ax − b)/m``: labels ``b = ∓(m/2) A (AᵀA)⁻¹ v`` give a gradient difference of
    exactly ``v`` at every x (a linear tilt of f_0).
    """
    feats, labels = _data(n, m, d, seed)
    half = (m / 2) * feats[0] @ np.linalg.solve(feats[0].T @ feats[0], v)
    return _problems(feats, _with_agent0(labels, slice(None), (-half, half)), loss,
                     {"ridge": 0.0} if reg is None else reg, dtype)


def _sample(n: int, m: int, d: int, size: float, *, seed=0, dtype=np.float64):
    """Least squares: agent 0's first row is labelled ``+size`` in one problem, ``−size`` in the
    other."""
    feats, labels = _data(n, m, d, seed)
    return _problems(feats, _with_agent0(labels, 0, (size, -size)), "least_squares",
                     {"ridge": 0.0}, dtype)


def _flip(n: int, m: int, d: int, *, lam: float, seed=0, dtype=np.float64):
    """Logistic, rows of norm 1 (‖ℓ'‖ ≤ 1): agent 0's first label flipped in the second problem."""
    feats, labels = _data(n, m, d, seed)
    feats /= np.linalg.norm(feats, axis=-1, keepdims=True)
    labels = np.sign(labels) + (labels == 0)
    return _problems(feats, _with_agent0(labels, 0, (labels[0, 0], -labels[0, 0])), "logistic",
                     {"lam": lam}, dtype)


def _l2(d: int, size: float) -> np.ndarray:
    """A vector of ℓ2 norm ``size`` along (1, …, 1): the worst case of an ℓ1 (Laplace) release."""
    return np.full(d, size / np.sqrt(d))


# -- what the attacker observes -----------------------------------------------------------------
def agent_rows(*keys, agent: int = 0):
    """Agent ``agent``'s row of each message in ``keys`` at every observed step."""
    return lambda obs: jnp.concatenate([obs["messages"][k][:, agent].ravel() for k in keys])


def all_rows(*keys):
    """Every entry of each message in ``keys`` at every observed step (e.g. per-edge messages)."""
    return lambda obs: jnp.concatenate([obs["messages"][k].ravel() for k in keys])


def dpp2_residual(rho, net, agent: int = 0):
    """DPP²: agent 0's ``z − ρ(P y)`` at every step (17): ``∇f_0(x) + η q + e`` once the public
    ``ρ P y`` (from the y-messages of agent 0 and its neighbours) is removed."""
    def features(obs):
        y, z = obs["messages"]["y"], obs["messages"]["z"]
        return (z - rho * jax.vmap(net.apply_P)(y))[:, agent].ravel()
    return features


def first_activation(*keys, agent: int = 0):
    """Token methods: the baton ``keys`` sent by ``agent`` at its first activation (0 if none)."""
    def features(obs):
        msg = obs["messages"]
        mine = (msg["sender"] == agent) & msg["active"]
        k = jnp.argmax(mine)
        return jnp.concatenate([jnp.where(jnp.any(mine), msg[key][k], 0).ravel() for key in keys])
    return features


def x_channel(problem_0, alpha, beta, n: int, v, agent: int = 0):
    """DP-RECAL's x-channel (notes 003 §4.5): agent 0's recovered gradient minus f_0's, along v.

    0 under problem_0 and −‖v‖² under its neighbour (exact, whatever the ũ noise); 1 when agent 0
    completed no activation in the horizon.
    """
    v = jnp.asarray(v)

    def features(obs):
        msg = obs["messages"]
        tr = relay.transcript(msg, jnp.zeros_like(msg["x"][0]))
        points, grads, who, valid = relay.x_channel_gradients(tr, alpha, beta, n)
        mine = valid & (who == agent)
        k = jnp.argmax(mine)
        rows = jnp.broadcast_to(points[k], (n, points.shape[1]))
        gap = (grads[k] - problem_0.local_grads(rows)[agent]) @ v
        return jnp.where(jnp.any(mine), gap, 1.0)[None]
    return features


# -- the cases ----------------------------------------------------------------------------------
def cases() -> list[Case]:
    """Every private algorithm of the registry at its paper settings, then the controls."""
    rows = (_dpp2_family() + _ldp_family() + _recal_family() + _dpadmm_family()
            + _ltadmm_family() + _baseline_family())
    covered = {c.id for c in rows}
    missing = sorted(set(private_algorithms()) - covered)
    if missing:
        raise ValueError(f"audit-table has no case for the private algorithm(s) {missing}")
    return rows + _controls()


@functools.cache
def private_algorithms() -> tuple[str, ...]:
    """Registry names whose ``privacy()`` returns a report on a small problem."""
    prob = _tilt(4, 40, 2, np.zeros(2), dtype=np.float64)[0]
    net = network.make_network("ring", 4)
    return tuple(name for name, cls in algorithms.REGISTRY.items()
                 if cls().privacy(prob, net, cls().default_params(), 1) is not None)


def _dpp2_family() -> list[Case]:
    net, pair = _dpp2_setup()
    paper = "000 DPP² (δ-adjacency, δ = 1; N = 10 RGG, d = 10)"
    params = algorithms.DPP2Params()
    return [
        Case("dpp2", paper, algorithms.DPP2(), params, net, pair, 2,
             "z − ρPy of agent 0 at steps 0, 1 (its z and its neighbourhood's y)",
             dpp2_residual(params.rho, net), "laplace"),
        Case("diadsp", paper, algorithms.DiaDSP(), algorithms.DiaDSPParams(), net, pair, 2,
             "agent 0's x̃, ỹ at steps 0, 1", agent_rows("x", "y"), "laplace"),
        Case("ppdc", paper, algorithms.PPDC(), algorithms.PPDCParams(), net, pair, 3,
             "agent 0's x̃ at steps 0–2", agent_rows("x"), "laplace"),
    ]


def _dpp2_setup():
    """Paper 000's setting at N = 10 (RGG, d = 10) and a δ = 1 tilt (δ-adjacency, Def. 1)."""
    net = network.make_network("random_geometric", N_AGENTS, radius=0.5, seed=69)
    return net, _tilt(N_AGENTS, 20, 10, _l2(10, 1.0))


def _ldp_family() -> list[Case]:
    net = network.make_network("gnm", 10, m=20, seed=0)
    pair = _tilt(10, 20, 14, np.full(14, 0.01))  # ‖∇f_0 − ∇f_0'‖∞ = B_∞ = 0.01 (Lemma 2.1)
    paper = "001 LDP (‖Δ∇f‖∞ ≤ B_∞ = 0.01; N = 10, d = 14)"
    names = [name for name in private_algorithms() if name.startswith("ldp_")]
    return [Case(name, paper, algorithms.get(name), algorithms.get(name).default_params(), net,
                 pair, 1, "agent 0's x¹", agent_rows("x"),
                 "laplace") for name in names]


def _recal_family() -> list[Case]:
    n, d = 8, 22
    net = network.make_network("ring", n)
    pair = _tilt(n, 30, d, _l2(d, 1.0), loss=problems.L1LeastSquares(),
                 reg={"ridge": 1.0, "l1": 0.5})  # ‖∇f‖ ≤ c = 1 near x⁰: difference c
    paper = "003 DP-RECAL (‖∇f_i‖ ≤ c = 1, difference c; N = 8 ring, d = 22, ℓ1 + ½‖x‖²)"
    grid = [("dp_nids", algorithms.DPNIDS(), "v"), ("dp_extra", algorithms.DPEXTRA(), "x"),
            ("dp_icadmm", algorithms.DPICADMM(), "x"), ("dp_mradmm", algorithms.DPMRADMM(), "x")]
    rows = [Case("dp_recal", paper, algorithms.DPRECAL(), algorithms.DPRECALParams(), net, pair,
                 2 * n, "baton (x, ũ) sent at agent 0's first activation in 16 steps",
                 first_activation("x", "u")),
            Case("dp_rwadmm", paper, algorithms.DPRWADMM(), algorithms.DPRWADMMParams(), net,
                 pair, 2 * n, "token z̃ sent at agent 0's first activation in 16 steps",
                 first_activation("x"))]
    rows += [Case(name, paper, alg, alg.default_params(), net, pair, 2,
                  f"agent 0's {key} at steps 0, 1", agent_rows(key)) for name, alg, key in grid]
    return rows


def _dpadmm_family() -> list[Case]:
    net = network.make_network("complete", N_AGENTS)
    pair = _flip(N_AGENTS, 21, 14, lam=1e-3)  # one record of agent 0 differs (‖ℓ'‖ ≤ S1 = 1)
    paper = "002 DP-ADMM (one record of provider 0; N = 10 complete, d = 14, m_i = 21)"
    return [Case(name, paper, alg, alg.default_params(), net, pair, 1,
                 "provider 0's w̃ at step 0", agent_rows("w_tilde"))
            for name, alg in (("naive_private_admm", algorithms.NaivePrivateADMM()),
                              ("dp_admm", algorithms.DPADMM()))]


def _ltadmm_family() -> list[Case]:
    net = network.make_network("ring", 10)
    paper = "004 LT-ADMM-DP (one record of agent 0; N = 10 ring, d = 5, m = 100)"
    records = _sample(10, 100, 5, 1e4)  # the record's gradient saturates every clip
    return [
        Case("lt_admm_dp", paper, algorithms.LTADMMDP(), algorithms.LTADMMDPParams(), net,
             records, 1,
             "every edge message m of round 0", all_rows("m")),
        Case("porter", paper, algorithms.PORTER(), algorithms.PORTERParams(), net, records, 1,
             "agent 0's q_v, q_h at step 0", agent_rows("q_v", "q_h")),
        Case("prisma", paper, algorithms.PriSMA(), algorithms.PriSMAParams(), net, records, 2,
             "agent 0's x at steps 0, 1", agent_rows("x")),
    ]


def _baseline_family() -> list[Case]:
    net = network.make_network("ring", 10)
    return [Case("dp_dgd", "core baseline (clipped DGD; both gradients clipped: Δ = 2C)",
                 algorithms.DPDGD(), algorithms.DPDGDParams(), net,
                 _tilt(10, 20, 5, _l2(5, 1e3)), 2, "agent 0's x⁰, x¹", agent_rows("x"),
                 claimed=None, releases=1)]


def _controls() -> list[Case]:
    dpp2_net, dpp2_pair = _dpp2_setup()
    n, d = 8, 22
    recal_pair = _tilt(n, 30, d, _l2(d, 1.0), dtype=np.float64)  # r = 0: no regularizer
    recal_params = algorithms.DPRECALParams()
    dgd_net = network.make_network("ring", 10)
    mu = 1.0  # Δ/(σC) = 2C/(2C)
    return [
        Case("control:dpp2_u0", "000 DPP² tier 1 alone (u_w = u_e = 0)", algorithms.DPP2(),
             algorithms.DPP2Params(u_w=0.0, u_e=0.0), dpp2_net, dpp2_pair,
             2, "agent 0's y⁰, z⁰, y¹, z¹", agent_rows("y", "z"), control="positive",
             claimed="tier 1 'protects as noise → 0' (no ε)"),
        Case("control:recal_x", "003 DP-RECAL, r = 0, x-channel inversion (notes §4.5)",
             algorithms.DPRECAL(), recal_params, network.make_network("ring", n), recal_pair,
             4 * n, "every baton (x, ũ, sender) of 32 steps",
             x_channel(recal_pair[0], recal_params.alpha, recal_params.beta, n,
                       _l2(d, 1.0)), control="positive"),
        Case("control:gaussian", "Gaussian mechanism: one DP-DGD step, Δ/σ = 1",
             algorithms.DPDGD(), algorithms.DPDGDParams(clip=1.0, sigma=2.0), dgd_net,
             _tilt(10, 20, 5, _l2(5, 1e3)), 2, "agent 0's x⁰, x¹", agent_rows("x"),
             control="negative", exact=gaussian_mechanism_epsilon(mu, 1e-5), claimed=None,
             releases=1),
    ]


# -- running ------------------------------------------------------------------------------------
def observe_features(case: Case, seeds: int, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """``(seeds, D)`` observed features on each input (seeds 0.. and seeds.. 2·seeds), float64."""
    f0, f1 = audit_observations(case.algorithm, case.pair, case.network, case.params,
                                case.features, steps=case.steps,
                                seeds=(range(seeds), range(seeds, 2 * seeds)), batch=batch)
    return f0.astype(np.float64), f1.astype(np.float64)


def likelihood_ratio_scores(f0: np.ndarray, f1: np.ndarray, mechanism: str,
                            fit: float = SELECT) -> tuple[np.ndarray, np.ndarray]:
    """Scores of a product-model likelihood ratio fitted on the first ``fit`` share of each input.

    Gaussian: ``Σ_j (μ1_j − μ0_j) m_j / s_j²``; Laplace: ``Σ_j (|m_j − μ0_j| − |m_j − μ1_j|)/b_j``.
    A coordinate with no spread (a noise-free message) gets a tiny floor, so a deterministic
    difference separates perfectly.
    """
    k0, k1 = int(fit * len(f0)), int(fit * len(f1))
    mu0, mu1 = f0[:k0].mean(0), f1[:k1].mean(0)
    var = np.concatenate([f0[:k0] - mu0, f1[:k1] - mu1]).var(0)
    var = var + 1e-12 * var.max() + 1e-300
    if mechanism == "laplace":
        b = np.sqrt(var / 2)
        score = lambda f: np.sum((np.abs(f - mu0) - np.abs(f - mu1)) / b, axis=1)  # noqa: E731
    else:
        score = lambda f: f @ ((mu1 - mu0) / var)  # noqa: E731
    return score(f0), score(f1)


def audit_case(case: Case, *, seeds: int, batch: int) -> dict:
    """One row of the table: the guarantee, the paper's curves, the empirical bound, the verdict.

    Besides the report's δ, the same scores are tested against the guarantee's whole privacy
    profile at :data:`PROFILE_DELTAS` (a stronger audit: a sound ε(δ) curve must hold at every δ,
    and a larger δ is where a few thousand runs can come close to it); ``ratio`` is the best
    empirical/guarantee over those δ.
    """
    start = time.perf_counter()
    f0, f1 = observe_features(case, seeds, batch)
    s0, s1 = likelihood_ratio_scores(f0, f1, case.mechanism)
    horizon = case.releases or case.steps
    report = case.algorithm.privacy(case.pair[0], case.network, case.params, horizon)
    delta = float(report.delta) if report is not None else 1e-5
    res = epsilon_lower_bound(s0, s1, delta=delta, confidence=CONFIDENCE, select_fraction=SELECT)
    guarantee = None if report is None else float(report.epsilon[0])
    profile = _profile(case, s0, s1, guarantee, horizon)
    limit = max_bound(res.n0, delta)
    reference = (case.exact if case.exact is not None
                 else case.claimed if isinstance(case.claimed, float) else guarantee)
    ratios = [lo / g for lo, g in profile.values() if g and math.isfinite(g)]
    row_verdict = verdict(res.epsilon_lower, reference, case.control, limit,
                          isinstance(case.claimed, float))
    if row_verdict == "sound" and any(lo > g for lo, g in profile.values()):
        row_verdict = "UNSOUND"
    return {"algorithm": case.id, "paper": case.paper, "guarantee": guarantee,
            "headline": None if report is None else report.headline,
            "relation": None if report is None else report.relation,
            "released": None if report is None else report.released,
            "assumptions": [] if report is None else [str(a) for a in report.assumptions],
            "reason": None if report is None else report.reason,
            "paper_printed": _curve(report, PAPER_PRINTED),
            "paper_corrected": _curve(report, PAPER_CORRECTED),
            "claimed_eps": case.claimed if isinstance(case.claimed, float) else None,
            "exact_eps": case.exact, "reference_eps": reference,
            "empirical_lower": res.epsilon_lower, "empirical_point": res.epsilon_point,
            "ratio": max(ratios) if ratios else None,
            "profile": {f"{d:g}": {"lower": lo, "guarantee": g} for d, (lo, g) in profile.items()},
            "ideal_audit": ideal_audit(report, res.n0, delta),
            "max_possible": limit, "seeds": seeds, "delta": delta, "steps": case.steps,
            "observed": case.observed, "statistic": f"{case.mechanism} likelihood ratio",
            "control": case.control, "fpr": res.fpr, "fnr": res.fnr, "verdict": row_verdict,
            "seconds": time.perf_counter() - start}


PROFILE_DELTAS = (1e-5, 1e-3, 1e-2, 5e-2)
"""The δ at which the scores are also tested against the guarantee's ε(δ)."""


def _profile(case: Case, s0, s1, guarantee, horizon: int) -> dict:
    """δ → (empirical lower bound, agent 0's guarantee at δ), for ordinary and negative cases."""
    if case.control == "positive" or guarantee is None:
        return {}
    out = {}
    for d in PROFILE_DELTAS:
        report = case.algorithm.privacy(case.pair[0], case.network, case.params, horizon,
                                        delta=d)
        bound = epsilon_lower_bound(s0, s1, delta=d, confidence=CONFIDENCE,
                                    select_fraction=SELECT).epsilon_lower
        out[d] = (bound, float(report.epsilon[0]))
    return out


def ideal_audit(report, n: int, delta: float) -> float | None:
    """The bound an exact likelihood-ratio audit with ``n`` evaluation runs per input would reach
    in expectation, when agent 0's releases are full-batch Gaussians (else ``None``).

    Gaussian releases compose into one Gaussian with ``μ = √(Σ_t (Δ_t/σ_t)²)`` (Dong, Roth & Su
    2019, Cor. 3.3), whose exact test at threshold ``t`` has FPR ``1 − Φ(t)`` and FNR ``Φ(t − μ)``.
    Their expected counts over ``n`` runs go through the same Clopper–Pearson limits as the audit,
    maximised over ``t``. This is the ceiling that ``n`` runs put on *any* audit of the guarantee's
    mechanism: an empirical/guarantee ratio far below 1 at a ceiling near the empirical value is
    the sample size, not a loose accountant.
    """
    events = None if report is None else report.events
    if events is None or any(s.mechanism != "gaussian" or np.any(s.sampling_rate[0] < 1)
                             for s in events.streams):
        return None
    k = int(report.steps[-1])
    mu = math.sqrt(sum(float(np.sum(np.exp(2 * s.log_ratio[0, :k]))) for s in events.streams))
    return ideal_gaussian_audit(mu, n, delta)


def ideal_gaussian_audit(mu: float, n: int, delta: float) -> float:
    """The expected Clopper–Pearson bound of an exact threshold test on a Gaussian mechanism with
    ``μ = Δ/σ`` and ``n`` evaluation runs per input (see :func:`ideal_audit`)."""
    alpha = (1 - CONFIDENCE) / 2
    best = 0.0
    for t in np.linspace(-2.0, mu + 8.0, 2001):
        fp, fn = stats.norm.sf(t) * n, stats.norm.cdf(t - mu) * n
        best = max(best, epsilon_from_rates(clopper_pearson_upper(int(round(fp)), n, alpha),
                                            clopper_pearson_upper(int(round(fn)), n, alpha),
                                            delta))
    return best


def _curve(report, method: str):
    """Agent 0's ε at the end of the report (float64), or None."""
    if report is None or method is None or method not in report.methods:
        return None
    return float(report.final(method)[0])


def max_bound(n: int, delta: float) -> float:
    """The largest bound ``n`` evaluation runs per input can give (no error at all)."""
    limit = clopper_pearson_upper(0, n, (1 - CONFIDENCE) / 2)
    return epsilon_from_rates(limit, limit, delta)


def verdict(lower: float, reference, control: str, limit: float, claimed: bool = False) -> str:
    """``sound`` / ``UNSOUND`` (the bound exceeds the guarantee or exact ε), or a positive
    control's outcome.

    A positive control with an under-reported ε (``claimed``) is caught when the bound exceeds it;
    one without is caught when its bound reaches 90 % of ``limit``, the most the seeds can show
    (:func:`max_bound`): the leak is then limited only by the seed count.
    """
    above = reference is not None and math.isfinite(reference) and lower > reference
    if control == "positive":
        caught = above if claimed else lower >= 0.9 * limit
        return "caught" if caught else "missed"
    if reference is None:
        return "no guarantee"
    return "UNSOUND" if above else "sound"


# -- the reproduction ---------------------------------------------------------------------------
def audit_table(out_dir="out/audit-table", *, seeds: int = 100_000, batch: int = 25_000,
                progress: bool = False, only=None) -> Report:
    """Audit every private algorithm; write ``audit_table.{png,json,csv}`` and the report.

    Args:
      seeds: runs per neighbouring input (half fits the test, half evaluates it).
      batch: runs per compiled call.
      only: optional ids to run (a subset; the report then lacks the others' claims).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with jax.enable_x64(True):
        for case in cases():
            if only is not None and case.id not in only:
                continue
            rows.append(audit_case(case, seeds=seeds, batch=min(batch, seeds)))
            if progress:
                r = rows[-1]
                print(f"{r['algorithm']:>20}: ε ≥ {r['empirical_lower']:.3g} ({r['verdict']}, "
                      f"{r['seconds']:.1f} s)", flush=True)
    report = Report("audit-table", "Empirical privacy audit of every private algorithm")
    report.files += _write_data(out, rows) + [_plot(out, rows), _write_privacy_table(out, rows)]
    _claims(report, rows)
    report.notes += _notes(seeds)
    report.write(out)
    return report


def _write_data(out: Path, rows: list[dict]) -> list[str]:
    (out / "audit_table.json").write_text(json.dumps(rows, indent=2))
    with open(out / "audit_table.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return [str(out / "audit_table.json"), str(out / "audit_table.csv")]


def _plot(out: Path, rows: list[dict]) -> str:
    """Per algorithm: the guarantee, the paper's printed curve, the ideal-audit ceiling and the
    empirical lower bound (log scale; inf drawn at the top, values below a floor at the floor)."""
    fig, (ax,) = figure(width=11, height=4.5)
    x = np.arange(len(rows))
    floor = 1e-4
    finite = [r[k] for r in rows for k in ("guarantee", "empirical_lower", "paper_printed")
              if isinstance(r[k], float) and math.isfinite(r[k])]
    top = 10 * max(finite, default=10.0)
    for key, marker, label in (("guarantee", "s", "guarantee (report.epsilon)"),
                               ("paper_printed", "o", "paper, as printed"),
                               ("claimed_eps", "x", "under-reported (positive control)"),
                               ("exact_eps", "D", "exact (Gaussian)"),
                               ("ideal_audit", "^", "ideal audit at these seeds"),
                               ("empirical_lower", "v", "empirical lower bound (95 %)")):
        vals = np.array([r[key] if isinstance(r[key], float) else np.nan for r in rows])
        vals = np.where(np.isinf(vals), top, vals)
        ax.scatter(x, np.maximum(vals, floor), marker=marker, label=label, zorder=3)
    ax.axhline(top, color="0.6", lw=0.8, ls=":")
    ax.text(len(rows) - 0.5, top, "ε = ∞", va="bottom", ha="right", fontsize=8, color="0.4")
    ax.set_yscale("log")
    ax.set_xticks(x, [r["algorithm"] for r in rows], rotation=60, ha="right", fontsize=8)
    ax.set_ylabel(f"ε (values below {floor:g} drawn at {floor:g})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save(fig, out / "audit_table.png")


def privacy_table(rows: list[dict]) -> str:
    """Markdown: one row per audited private algorithm — unit and relation, what is released, the
    guarantee and its accountant, assumptions, the paper's printed claim and whether it holds, the
    empirical bound and the best empirical/guarantee ratio over the ε(δ) profile."""
    head = ("| algorithm | unit: relation | released | guarantee ε (accountant) | assumptions | "
            "paper, as printed | printed claim | empirical ε ≥ | ratio |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        if r["control"]:
            continue
        printed = r["paper_printed"]
        if printed is None:
            holds = "no claim"
        elif r["empirical_lower"] > printed:
            holds = "**refuted** by the audit"
        elif r["guarantee"] is not None and printed < r["guarantee"]:
            holds = "below the guarantee: not proven"
        else:
            holds = "consistent"
        guarantee = ("∞" if r["guarantee"] is not None and math.isinf(r["guarantee"])
                     else _fmt(r["guarantee"]))
        why = f" — {r['reason']}" if r.get("reason") else ""
        lines.append(
            f"| `{r['algorithm']}` | {_relation_cell(r['relation'])} | {r['released']} | "
            f"{guarantee} ({r['headline'] or 'none'}){why} | "
            f"{'; '.join(r['assumptions']) or '—'} | {_fmt(printed)} | {holds} | "
            f"{r['empirical_lower']:.3g} | {_fmt(r['ratio'])} |")
    return "\n".join(lines) + "\n"


def _relation_cell(relation) -> str:
    from jaxdp.privacy import RELATIONS

    if relation is None:
        return "—"
    unit, text = RELATIONS[relation]
    return f"{unit}: {text}"


def _write_privacy_table(out: Path, rows: list[dict]) -> str:
    path = out / "privacy_table.md"
    path.write_text(privacy_table(rows))
    return str(path)


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _claims(report: Report, rows: list[dict]) -> None:
    for r in rows:
        ours = (f"ε ≥ {r['empirical_lower']:.4g} (point {r['empirical_point']:.4g}; at most "
                f"{r['max_possible']:.3g} with these seeds; an exact audit of the guarantee's "
                f"mechanism would reach {_fmt(r['ideal_audit'])}) over {r['seeds']} seeds per "
                f"input, observing {r['observed']}; δ = {r['delta']:g}")
        if r["control"] == "positive":
            what = (f"the bound exceeds the under-reported ε = {_fmt(r['claimed_eps'])}"
                    if r["claimed_eps"] is not None else "bound ≥ 90 % of what the seeds allow")
            report.claim(f"control-{r['algorithm'].split(':')[1]}",
                         f"positive control ({r['paper']}): the audit catches it ({what})",
                         paper=f"guarantee {_fmt(r['guarantee'])}", ours=ours,
                         reproduced=r["verdict"] == "caught")
        elif r["control"] == "negative":
            report.claim("control-gaussian", "negative sanity: the bound stays below the exact ε "
                         "of a Gaussian mechanism", paper=f"exact ε = {r['exact_eps']:.4g}",
                         ours=ours, reproduced=r["verdict"] == "sound")
        else:
            report.claim(f"audit-{r['algorithm']}",
                         f"{r['algorithm']} ({r['paper']}): empirical lower bound ≤ the "
                         f"guarantee ({r['verdict']})",
                         paper=f"guarantee {_fmt(r['guarantee'])} ({r['headline']}, "
                               f"{r['relation']}); paper as printed {_fmt(r['paper_printed'])}, "
                               f"corrected {_fmt(r['paper_corrected'])}",
                         ours=ours + f"; empirical/guarantee {_fmt(r['ratio'])}",
                         reproduced=r["verdict"] == "sound")


def _notes(seeds: int) -> list[str]:
    return [
        f"{seeds} runs per neighbouring input; the first half fits the likelihood-ratio statistic "
        "and picks the threshold, the second half gives the Clopper–Pearson bound (95 %, jointly).",
        "Neighbours: the worst case of each report's relation (jaxdp/experiments/audit.py): a "
        "linear tilt of agent 0's least-squares objective at the adjacency bound, a changed or "
        "displacing record, or a flipped label; each case says what the attacker observes.",
        "The guarantee is report.epsilon for agent 0 (the smallest sound accountant); the paper's "
        "printed and corrected theorems are shown beside it and are never the guarantee.",
        "'ideal audit' is the bound an exact likelihood-ratio test with the same number of runs "
        "would reach on the guarantee's own (Gaussian) mechanism: where the empirical bound is near "
        "it, a ratio below 1 is the sample size, not a loose accountant.",
    ]
