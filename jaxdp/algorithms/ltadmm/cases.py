"""Audit cases of the LT-ADMM-DP (paper 004) family (``jaxdp reproduce audit-table``, collected by
:func:`jaxdp.experiments.audit.cases`): LT-ADMM-DP, PORTER and PriSMA under
replace-one, and the Poisson-claim control; with the record pair and the observations that
recover each method's noisy gradients.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxdp import algorithms, network, problems
from jaxdp.algorithms.cases import N_AGENTS, Case, add_remove_pair, record_pair, sent_by


def audit_cases() -> list[Case]:
    """Paper 004's family under replace-one (fixed-size batches): agent 0's record labelled ±1e6
    saturates every clip in opposite directions (Δ = 2ζ or 2C/b when it is in the batch), every
    other gradient is 0 at x = 0. LT-ADMM-DP at one round of one local step with b = m = 8 is a
    single Gaussian release (the tightness case); PORTER and PriSMA draw b = 8 of m = 16 rows."""
    net = network.make_network("ring", N_AGENTS)
    paper = "004 LT-ADMM-DP family (one record of agent 0 replaced; N = 10 ring, d = 5)"
    full, half = record_pair(N_AGENTS, 8, 5, 1e6), record_pair(N_AGENTS, 16, 5, 1e6)
    porter, prisma = algorithms.PORTERParams(), algorithms.PriSMAParams()
    return [
        Case("lt_admm_dp", paper + ", b = m = 8, τ = 1", algorithms.LTADMMDP(local_steps=1),
             algorithms.LTADMMDPParams(sigma_e=2.0), net, full, 1,
             "agent 0's edge messages of round 0 (2ργ·g̃, one Gaussian release)",
             sent_by("m", net)),
        Case("porter", paper + ", b = 8 of m = 16", algorithms.PORTER(), porter, net, half, 2,
             "agent 0's Ĝ¹, Ĝ², recovered from every agent's q_v",
             porter_gradients(net, porter.gamma)),
        Case("prisma", paper + ", b = 8 of m = 16 (the record moves the C1 term; the C2 term "
             "of a gradient difference does not depend on the label)", algorithms.PriSMA(),
             prisma, net, half, 2, "agent 0's v⁰, recovered from every agent's x⁰, x¹",
             prisma_terms(net, prisma.gamma, prisma.eta)),
        _porter_poisson_claim(net, full),
    ] + poisson_cases(net)


def poisson_cases(net) -> list[Case]:
    """The three methods on Poisson batches (``sampling="poisson"``, b = 8 of a declared m = 16,
    q = ½) under both relations they offer: add/remove-one (the default), agent 0's record
    labelled 1e6 in one problem and a zero-gradient row in the other (the Poisson sum with and
    without its term, :func:`~jaxdp.algorithms.cases.add_remove_pair`), and replace-one
    (:func:`poisson_replace_cases`)."""
    paper = ("004 LT-ADMM-DP family, Poisson batches (one record of agent 0 added/removed; "
             "N = 10 ring, d = 5, q = 8/16)")
    pair = add_remove_pair(N_AGENTS, 16, 5, 1e6)
    soft = soft_clip_pair(N_AGENTS, 16, 5, replace=False)  # the soft clip's worst pair
    poisson = {"sampling": "poisson", "records": 16}
    porter = algorithms.PORTERParams()
    prisma = algorithms.PriSMAParams(sigma0=0.125, sigma1=0.125)  # finite: the defaults give inf
    return [
        Case("lt_admm_dp:poisson", paper + ", τ = 1; the soft clip's worst pair (soft_clip_pair)",
             algorithms.LTADMMDP(local_steps=1, **poisson),
             algorithms.LTADMMDPParams(sigma_e=2.0), net, soft, 1,
             "agent 0's edge messages of round 0 (2ργ·g̃, one Gaussian release)",
             sent_by("m", net)),
        Case("porter:poisson", paper, algorithms.PORTER(**poisson), porter, net, pair, 2,
             "agent 0's Ĝ¹, Ĝ², recovered from every agent's q_v",
             porter_gradients(net, porter.gamma)),
        Case("prisma:poisson", paper, algorithms.PriSMA(**poisson), prisma, net, pair, 2,
             "agent 0's v⁰, recovered from every agent's x⁰, x¹",
             prisma_terms(net, prisma.gamma, prisma.eta)),
    ] + poisson_replace_cases(net, record_pair(N_AGENTS, 16, 5, 1e6))


def poisson_replace_cases(net, pair) -> list[Case]:
    """The three methods on Poisson batches under replace-one (``sampling="poisson"``,
    ``relation="replace_record"``, b = 8 of a declared m = 16, q = ½): the same ±1e6 record pair,
    whose clipped term is +C/b (or +ζ/b) in one world and −C/b in the other whenever it is sampled
    — the antipodal pair of dp-accounting's REPLACE_ONE PLD, the worst for the relation (twice
    add/remove's one-sided shift). LT-ADMM-DP at one round of one local step is one release, on
    its own worst pair (:func:`soft_clip_pair`): its soft clip acts on the *mean*, so the ±1e6
    pair, which moves the release by ±ζ around 0, is not the worst.
    PriSMA at σ0 = σ1 = 0.125 (its paper's σ1 = 0.0155 has ε = inf, which no audit can test)."""
    paper = ("004 LT-ADMM-DP family, Poisson batches (one record of agent 0 replaced by its "
             "antipode after clipping; N = 10 ring, d = 5, q = 8/16)")
    poisson = {"sampling": "poisson", "records": 16, "relation": "replace_record"}
    porter = algorithms.PORTERParams()
    prisma = algorithms.PriSMAParams(sigma0=0.125, sigma1=0.125)  # finite: the defaults give inf
    return [
        Case("lt_admm_dp:poisson_replace_record",
             paper + ", τ = 1; the soft clip's worst pair (soft_clip_pair)",
             algorithms.LTADMMDP(local_steps=1, **poisson), algorithms.LTADMMDPParams(sigma_e=2.0),
             net, soft_clip_pair(N_AGENTS, 16, 5, replace=True), 1, "agent 0's edge messages of round 0 (2ργ·g̃, one Gaussian release)",
             sent_by("m", net)),
        Case("porter:poisson_replace_record", paper, algorithms.PORTER(**poisson), porter, net,
             pair, 2, "agent 0's Ĝ¹, Ĝ², recovered from every agent's q_v",
             porter_gradients(net, porter.gamma)),
        Case("prisma:poisson_replace_record", paper, algorithms.PriSMA(**poisson), prisma, net,
             pair, 2, "agent 0's v⁰, recovered from every agent's x⁰, x¹",
             prisma_terms(net, prisma.gamma, prisma.eta)),
    ]


def soft_clip_pair(n: int, m: int, d: int, *, replace: bool, big: float = 1e12,
                   rest: float = 1e4, seed: int = 0, dtype=np.float64):
    """The worst neighbouring pair of LT-ADMM-DP's soft clip (7) on Poisson batches: every row of
    agent 0 has one feature a; its other m − 1 records have label ``rest`` (each gradient −rest·a
    at x = 0, so a batch holding any of them is soft-clipped to about −ζ·â) and record 0 has label
    −``big`` in the first problem (gradient +big·a, which outweighs all the others: a batch holding
    it is clipped to about +ζ·â). In the second problem record 0 is a zero-gradient row (add/remove:
    the absent record) or, ``replace``, one more record like the others (label ``rest``).

    Whenever record 0 is sampled the release moves from about −ζ·â to +ζ·â, 2ζ(1 − O(b/rest))
    apart: the declared Δ = 2ζ, approached. Replacing, the batch without the record is clipped
    where the replacement's is (−ζ·â), so the two worlds are ``(1 − q)N(−ζâ) + qN(+ζâ)`` against
    ``N(−ζâ)`` (up to the empty batch, probability (1 − q)^{m−1}): the pair the report charges
    (:mod:`jaxdp.privacy._dp_accounting`, ``"poisson_replace_bounded"``), attained; every other
    agent's labels are 0."""
    rng = np.random.default_rng(seed)
    feats = rng.normal(size=(n, m, d)) / np.sqrt(d)
    feats[0] = feats[0, :1]
    pair = []
    for first in (-big, rest if replace else 0.0):
        labels = np.zeros((n, m))
        labels[0, 1:], labels[0, 0] = rest, first
        pair.append(problems.from_arrays(feats, labels, loss="least_squares",
                                         reg={"ridge": 0.0}, reference=False, dtype=dtype))
    return tuple(pair)


def _porter_poisson_claim(net, pair) -> Case:
    """Positive control: PORTER on fixed-size batches (b = m = 8, one release) accounted as the
    old code did — Poisson q = b/m with add/remove sensitivity C/b — where the replaced record
    displaces another and moves the clipped mean by 2C/b. The claimed ε is that accountant's
    (``sampling="poisson"``) report: 1.99 against an exact 4.38. At q = 8/9 (claim 1.88, exact
    3.51) the audit catches it at 2·10⁴ runs (2.08) but not at 10⁵ (1.74): the amplification
    leaves too small a gap for a δ = 1e-5 audit to show reliably."""
    params, steps = algorithms.PORTERParams(sigma=0.25), 1
    claim = algorithms.PORTER(sampling="poisson").privacy(pair[0], net, params, steps)
    return Case("control:porter_poisson_claim", "004 PORTER, fixed-size batches claimed as "
                "Poisson (q = b/m, Δ = C/b)", algorithms.PORTER(), params, net, pair, steps,
                "agent 0's Ĝ¹, recovered from every agent's q_v",  # one release
                porter_gradients(net, params.gamma), control="positive",
                claimed=float(claim.epsilon[0]))


def porter_gradients(net, gamma: float, agent: int = 0):
    """Audit features: agent 0's noisy gradients Ĝ¹..Ĝ^K, recovered exactly from every agent's
    q_v (identity compressor): G_v^k = Σ_{t<k} q_v^t and Ĝ^{k+1} = Ĝ^k + q_v^k − γ(W − I)G_v^k."""
    def features(obs):
        q_v = obs["messages"]["q_v"]  # (K, N, d)
        g_v, g, out = jnp.zeros_like(q_v[0]), jnp.zeros_like(q_v[0]), []
        for k in range(q_v.shape[0]):
            g = g + q_v[k] - gamma * (net.mix(g_v) - g_v)
            g_v = g_v + q_v[k]
            out.append(g[agent])
        return jnp.concatenate(out)
    return features


def prisma_terms(net, gamma: float, eta: float, agent: int = 0):
    """Audit features: agent 0's noisy momentum terms, recovered from every agent's x:
    v^t = (W x^t − x^{t+1})/γ (S3), then v⁰ and v^t − (1−η)v^{t−1} (S1)-(S2)."""
    def features(obs):
        x = obs["messages"]["x"]  # (K, N, d): x^0..x^{K−1}
        v = [(net.mix(x[t]) - x[t + 1])[agent] / gamma for t in range(x.shape[0] - 1)]
        return jnp.concatenate([v[0]] + [v[t] - (1 - eta) * v[t - 1] for t in range(1, len(v))])
    return features
