"""Audit cases of the DPP² (paper 000) family (``jaxdp reproduce audit-table``, collected by
:func:`jaxdp.experiments.audit.cases`): DPP², DiaDSP and PPDC at the paper's
δ-adjacency, and the u = 0 control.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxdp import algorithms, network
from jaxdp.algorithms.cases import N_AGENTS, Case, agent_rows, l2, tilt

def audit_cases() -> list[Case]:
    """Paper 000: every release of agent 0 over 2–3 steps, as residuals against the white-box
    replay under the first input (the exact likelihood ratio for these linear dynamics: the
    neighbour only shifts each residual by a constant)."""
    net, pair = audit_setup()
    paper = "000 DPP² (δ-adjacency, δ = 1 along (1, …, 1), ℓ1 = √d·ℓ2; N = 10 RGG, d = 10)"
    params = algorithms.DPP2Params()
    f0 = pair[0].local_grads

    def dpp2_features(obs):  # η constant (public): y⁰ carries nothing, z⁰, y¹, z¹ do
        y, z, eta = obs["messages"]["y"], obs["messages"]["z"], params.eta
        Py, Pz = jax.vmap(net.apply_P)(y), jax.vmap(net.apply_P)(z)
        x1 = y[0] - params.alpha * (f0(jnp.zeros_like(y[0])) + params.rho * Py[0]) \
            + params.beta * Pz[0]  # (18) given the transcript, x⁰ = 0
        res = (z[0] - params.rho * Py[0] - f0(jnp.zeros_like(y[0])),  # e⁰ under input 0
               y[1] - (1 - eta) * y[0] - x1,  # w¹ under input 0 (d¹ = y⁰)
               z[1] - params.rho * Py[1] - eta * params.rho * Py[0] - f0(x1))  # e¹ (q¹ = ρPy⁰)
        return jnp.concatenate([r[0] for r in res])

    dia = algorithms.DiaDSPParams()

    def diadsp_features(obs):  # x̃⁰ carries nothing; ỹ⁰, x̃¹, ỹ¹ do
        xt, yt = obs["messages"]["x"], obs["messages"]["y"]
        zero = jnp.zeros_like(xt[0])
        x1 = net.mix(xt[0]) - dia.alpha * f0(zero)  # x¹ = W x̃⁰ − α y⁰, y⁰ = ∇F(0)
        res = (yt[0] - f0(zero), xt[1] - x1,
               yt[1] - net.mix(yt[0]) - f0(x1) + f0(zero))
        return jnp.concatenate([r[0] for r in res])

    pp = algorithms.PPDCParams()

    def ppdc_features(obs):  # x̃⁰ carries nothing; x̃¹, x̃² do
        xt = obs["messages"]["x"]
        Px = jax.vmap(net.apply_P)(xt)
        x1 = -pp.eta * (pp.gamma * Px[0] + f0(jnp.zeros_like(xt[0])))
        v1 = pp.eta * pp.omega * Px[0]
        x2 = x1 - pp.eta * (pp.gamma * Px[1] + pp.omega * v1 + f0(x1))
        return jnp.concatenate([(xt[1] - x1)[0], (xt[2] - x2)[0]])

    return [
        Case("dpp2", paper, algorithms.DPP2(eta_mode="constant"), params, net, pair, 2,
             "agent 0's y⁰, z⁰, y¹, z¹ and its neighbourhood's y, z (η public), as residuals "
             "against the replay under input 0", dpp2_features, "laplace"),
        Case("diadsp", paper, algorithms.DiaDSP(), dia, net, pair, 2,
             "agent 0's x̃, ỹ at steps 0, 1 and its neighbourhood's, as residuals",
             diadsp_features, "laplace"),
        Case("ppdc", paper, algorithms.PPDC(), pp, net, pair, 3,
             "agent 0's x̃ at steps 0–2 and its neighbourhood's, as residuals", ppdc_features,
             "laplace"),
    ]


def audit_setup():
    """Paper 000's setting at N = 10 (RGG, d = 10) and a δ = 1 tilt (δ-adjacency, Def. 1)."""
    net = network.make_network("random_geometric", N_AGENTS, radius=0.5, seed=69)
    return net, tilt(N_AGENTS, 20, 10, l2(10, 1.0))


def audit_controls() -> list[Case]:
    """Positive control: DPP² tier 1 alone (u = 0), whose z⁰ = ∇f(x⁰) is sent in the clear."""
    dpp2_net, dpp2_pair = audit_setup()
    return [
        Case("control:dpp2_u0", "000 DPP² tier 1 alone (u_w = u_e = 0)", algorithms.DPP2(),
             algorithms.DPP2Params(u_w=0.0, u_e=0.0), dpp2_net, dpp2_pair,
             2, "agent 0's y⁰, z⁰, y¹, z¹", agent_rows("y", "z"), control="positive",
             claimed="tier 1 'protects as noise → 0' (no ε)"),
    ]


def dpp2_residual(rho, net, agent: int = 0):
    """DPP²: agent 0's ``z − ρ(P y)`` at every step (17): ``∇f_0(x) + η q + e`` once the public
    ``ρ P y`` (from the y-messages of agent 0 and its neighbours) is removed."""
    def features(obs):
        y, z = obs["messages"]["y"], obs["messages"]["z"]
        return (z - rho * jax.vmap(net.apply_P)(y))[:, agent].ravel()
    return features
