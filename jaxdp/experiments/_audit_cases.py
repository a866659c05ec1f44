"""The audit cases no single family owns (collected by :func:`jaxdp.experiments.audit.cases`):
the core baseline (DP-DGD), the channel routes (a clip + Gaussian channel on any algorithm) and
the controls that need :mod:`jaxdp.attacks` or no family (DP-RECAL's x-channel inversion, the
Gaussian mechanism). Each paper family declares its own cases in
``jaxdp/algorithms/<family>/cases.py``.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxdp import algorithms, network
from jaxdp.algorithms.cases import N_AGENTS, Case, agent_rows, all_rows, l2, tilt
from jaxdp.attacks import relay
from jaxdp.attacks.audit import gaussian_mechanism_epsilon


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
                 algorithms.DPDGD(), algorithms.DPDGDParams(), net,
                 tilt(10, 20, 5, l2(5, 1e3)), 2, "agent 0's x⁰, x¹", agent_rows("x"),
                 claimed=None, releases=1),
            Case("muffliato", "Muffliato-GD (Cyffers et al. 2022, Alg. 2): DP-DGD's release, then "
                 "3 gossip rounds (post-processing: Δ = 2C, one release per step)",
                 algorithms.Muffliato(rounds=3), algorithms.DPDGDParams(), net,
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
    ]

