"""The audit cases no single family owns (collected by :func:`jaxdp.experiments.audit.cases`):
the core baseline (DP-DGD), the channel routes (a clip + Gaussian channel on any algorithm) and
the controls that need :mod:`jaxdp.attacks` or no family (DP-RECAL's x-channel inversion, the
Gaussian mechanism). Each paper family declares its own cases in
``jaxdp/algorithms/<family>/cases.py``.
"""
from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np

from jaxdp import algorithms, network
from jaxdp.algorithms.cases import (
    N_AGENTS,
    Case,
    agent_rows,
    all_rows,
    hops,
    l2,
    link_view,
    pair_class,
    tilt,
)
from jaxdp.attacks import relay
from jaxdp.attacks.audit import gaussian_mechanism_epsilon

AUDIT_DGD_PARAMS = algorithms.DPDGDParams(alpha=0.05, clip=1.0, sigma=1.0)
"""The DP-DGD/Muffliato mechanism the audit attacks (``docs/audit_table.json``): fixed here, not
the Params defaults (which are chosen for a newcomer's first run and may change)."""


def x_channel(problem_0, alpha, beta, n: int, v, agent: int = 0):
    """DP-RECAL's x-channel (paper 003, Algorithm 1 step 5): agent 0's recovered gradient minus f_0's, along v.

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


def baseline_cases() -> list[Case]:
    net = network.make_network("ring", 10)
    return [Case("dp_dgd", "core baseline (clipped DGD; both gradients clipped: Δ = 2C)",
                 algorithms.DPDGD(), AUDIT_DGD_PARAMS, net,
                 tilt(10, 20, 5, l2(5, 1e3)), 2, "agent 0's x⁰, x¹", agent_rows("x"),
                 claimed=None, releases=1),
            Case("muffliato", "Muffliato-GD (Cyffers et al. 2022, Alg. 2): DP-DGD's release, then "
                 "3 gossip rounds (post-processing: Δ = 2C, one release per step)",
                 algorithms.Muffliato(rounds=3), AUDIT_DGD_PARAMS, net,
                 tilt(10, 20, 5, l2(5, 1e3)), 2, "every agent's gossip values y⁰..y² at steps 0, 1",
                 all_rows("y0", "y1", "y2"), claimed=None, releases=2)]


def channel_cases() -> list[Case]:
    """DGD + clip(ℓ2, C = 1) + Gaussian(σ = 4) per directed message, agent-level worst pair.

    Agent 0's gradient at x⁰ = 0 is ±v/2 with ‖αv/2‖ = 25 ≫ C, so its clipped message x¹_0
    saturates in opposite directions (difference 2C); the attacker sees every copy of agent 0's
    x⁰, x¹ its neighbours receive (x⁰ = 0 carries nothing: the report's 2 steps are loose by √2).
    """
    from jaxdp import channels

    net = network.make_network("ring", N_AGENTS)
    alg = channels.with_channel(algorithms.DGD(),
                                channels.chain(channels.clip(1.0), channels.gaussian(4.0)))
    from_0 = np.flatnonzero(np.asarray(net.senders) == 0)
    # top-k between the clip and the noise (norm non-increasing: the report keeps Δ = 2C)
    topk = channels.with_channel(algorithms.DGD(), channels.chain(
        channels.clip(1.0), channels.top_k(3), channels.gaussian(4.0)))
    return [Case(f"channel:{alg.name}", "channel (clip + Gaussian on any algorithm; Δ = 2C per message)",
                 alg, alg.default_params(), net, tilt(N_AGENTS, 20, 5, l2(5, 1e3)), 2,
                 "every copy of agent 0's x⁰, x¹ received by its neighbours",
                 lambda obs: obs["messages"]["mix0"][:, from_0].ravel()),
            Case(f"channel:{topk.name}", "channel (clip + top-3 of 5 + Gaussian; Δ = 2C per "
                 "message)", topk, topk.default_params(), net,
                 tilt(N_AGENTS, 20, 5, l2(5, 1e3)), 2,
                 "every copy of agent 0's x⁰, x¹ received by its neighbours",
                 lambda obs: obs["messages"]["mix0"][:, from_0].ravel())]

# -- pairwise network DP: one observing agent (issue 24) --------------------------------------
OBSERVER_GRAPHS = {"ring": ({}, (1, 3)), "erdos_renyi": ({"p": 0.3, "seed": 0}, (1, 2))}
"""Graph name → (its ``make_network`` arguments at N = 10, the distances of the two observers
from agent 0): the first agent (lowest index) at each distance observes. The random graph
(seed 0, 18 edges) has agent 0's neighbours 1, 4, 9 and agent 2 at two hops."""
OBSERVER_SEEDS = 4_000
"""Runs per input of each observer case in the CI gate (12 cases: kept within the gate's time)."""
DECOR_SIGMAS = (4.0, 8.0)
"""DECOR's (σ_ind, σ_cor) in the observer cases, as the gate's noise-path matrix runs it."""


def decor(sigma_ind: float, sigma_cor: float):
    """DGD + clip(ℓ2, C = 1) + DECOR's pairwise-cancelling noise (Allouah et al., ICML 2024,
    Eq. (3)): ``(algorithm, params)``."""
    from jaxdp import channels

    alg = channels.with_channel(algorithms.DGD(), channels.chain(
        channels.clip(1.0), channels.pairwise_cancelling(sigma_ind, sigma_cor)))
    return alg, alg.default_params()


def observed_algorithms() -> dict:
    """Name → ``(algorithm, params, horizon(h), releases(K))``: what the observer cases run.

    ``horizon(h)`` is the first K whose messages reach an observer ``h`` hops from agent 0 (whose
    gradient enters its message of step 1 in DGD, and its round-0 message of step 0 in Muffliato,
    reaching one more hop per message); ``releases(K)`` is the horizon the report is asked for
    (DP-DGD sends its model before the update: K messages, K − 1 noisy gradients)."""
    return {"dp_dgd": (algorithms.DPDGD(), AUDIT_DGD_PARAMS, lambda h: h + 1,
                       lambda k: k - 1),
            "muffliato": (algorithms.Muffliato(rounds=3), AUDIT_DGD_PARAMS,
                          lambda h: -(-h // 3), lambda k: k),
            "decor": (*decor(*DECOR_SIGMAS), lambda h: h + 1, lambda k: k)}


def observer_case(name: str, graph: str, observer: int, **kw) -> Case:
    """The pairwise case of ``name`` on ``graph``: agent ``observer``'s view of agent 0."""
    alg, params, horizon, releases = observed_algorithms()[name]
    net = network.make_network(graph, N_AGENTS, **OBSERVER_GRAPHS[graph][0])
    h = int(hops(net)[observer])
    steps = horizon(h)
    return Case(f"pairwise:{name}:{graph}:v{observer}",
                f"{alg.name} against agent {observer} ({pair_class(h)} of agent 0, {graph})",
                alg, params, net, tilt(N_AGENTS, 20, 5, l2(5, 1e3)), steps,
                f"agent {observer}'s links ({pair_class(h)}), steps 0..{steps - 1}",
                link_view(net, observer), mechanism="gaussian_cov", releases=releases(steps),
                ci_seeds=OBSERVER_SEEDS, threat="neighbours", observer=observer, **kw)


def observer_cases() -> list[Case]:
    """DP-DGD, Muffliato (R = 3) and DECOR, each on a ring and a connected Erdős–Rényi graph, seen
    by a neighbour of agent 0 and by an agent two or three hops away (:data:`OBSERVER_GRAPHS`)."""
    out = []
    for graph, (kw, distances) in OBSERVER_GRAPHS.items():
        dist = hops(network.make_network(graph, N_AGENTS, **kw))
        for h in distances:
            v = int(np.flatnonzero(dist == h)[0])
            out += [observer_case(name, graph, v) for name in observed_algorithms()]
    return out


def decor_neighbour_control() -> Case:
    """Positive control: DECOR against a curious neighbour, claimed as if the pairwise-cancelling
    noise also hid the message (σ² = σ_ind² + σ_cor² per message: the same accountant on
    ``pairwise_cancelling(√(σ_ind² + σ_cor²), 0)``). The neighbour knows its edge's secret
    (``c_{0→v} = −c_{v→0}``): the copy it receives plus the copy it sends carries agent 0's
    message under independent noise only (2σ_ind², plus its own clipped model)."""
    sigma_ind, sigma_cor = 0.5, 8.0
    case = observer_case("decor", "ring", 1)
    alg, params = decor(sigma_ind, sigma_cor)
    wrong, wrong_params = decor(float(np.hypot(sigma_ind, sigma_cor)), 0.0)
    claim = wrong.privacy(case.pair[0], case.network, wrong_params, case.releases,
                          threat="neighbours").pairwise[0, 1]
    return dataclasses.replace(
        case, id="control:decor_neighbour", algorithm=alg, params=params, control="positive",
        claimed=float(claim), paper=f"DECOR (σ_ind = {sigma_ind}, σ_cor = {sigma_cor}) against "
        "neighbour 1, claimed with σ² = σ_ind² + σ_cor² (the neighbour's edge secret ignored)")


def controls() -> list[Case]:
    n, d = 8, 22
    recal_pair = tilt(n, 30, d, l2(d, 1.0), dtype=np.float64)  # r = 0: no regularizer
    recal_params = algorithms.DPRECALParams()
    dgd_net = network.make_network("ring", 10)
    mu = 1.0  # Δ/(σC) = 2C/(2C)
    return [
        Case("control:recal_x", "003 DP-RECAL, r = 0, x-channel inversion (Alg. 1 step 5)",
             algorithms.DPRECAL(), recal_params, network.make_network("ring", n), recal_pair,
             4 * n, "every baton (x, ũ, sender) of 32 steps",
             x_channel(recal_pair[0], recal_params.alpha, recal_params.beta, n,
                       l2(d, 1.0)), control="positive"),
        Case("control:gaussian", "Gaussian mechanism: one DP-DGD step, Δ/σ = 1",
             algorithms.DPDGD(), algorithms.DPDGDParams(clip=1.0, sigma=2.0), dgd_net,
             tilt(10, 20, 5, l2(5, 1e3)), 2, "agent 0's x⁰, x¹", agent_rows("x"),
             control="negative", exact=gaussian_mechanism_epsilon(mu, 1e-5), claimed=None,
             releases=1),
        decor_neighbour_control(),
    ]

