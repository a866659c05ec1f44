"""Audit cases of the catalogue family that :mod:`jaxdp.experiments._audit_cases` does not hold
(DP-DGD and Muffliato live there): MAFALDA-SGD (MFDL, ICLR 2026).

The attacker inverts the post-processing: from every agent's half-step ``y^k`` it recovers agent
0's decoded gradient ``ĝ_0^k = (x_0^k − y_0^k)/α`` (``x^0 = 0``, ``x^k = W y^{k−1}``) and re-encodes
its releases ``R_0^k = Σ_{s≤k} C_ks ĝ_0^s`` (independent Gaussians given the data), on which the
product likelihood ratio is the optimal test for a mean shift.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxdp import network
from jaxdp.algorithms.cases import N_AGENTS, Case, l2, tilt
from jaxdp.algorithms.catalogue.classic import DPDGDParams
from jaxdp.algorithms.catalogue.mafalda import Mafalda

AUDIT_ENCODER = ((1.0, 0.0), (0.6, 0.8))
"""Non-negative: the adaptive bound's Σ_k(Σ_s C_ks)² equals MF's Σ|CᵀC| (the audit can reach it)."""


def releases_of_agent0(W, alpha: float, encoder, agent: int = 0):
    """Features ``(R_agent^0, …, R_agent^{K−1})`` recovered from every agent's ``y`` messages."""
    W, C = jnp.asarray(W), jnp.asarray(encoder)

    def features(obs):
        y = obs["messages"]["y"]  # (K, N, d)
        x = jnp.concatenate([jnp.zeros_like(y[:1]), jnp.einsum("ij,kjd->kid", W, y[:-1])])
        g = (x[:, agent] - y[:, agent]) / alpha  # (K, d)
        steps = g.shape[0]
        return jnp.einsum("ks,sd->kd", C[:steps, :steps], g).ravel()
    return features


def audit_cases(encoder=AUDIT_ENCODER) -> list[Case]:
    net = network.make_network("ring", N_AGENTS)
    params = DPDGDParams(alpha=0.05, clip=1.0, sigma=1.0)  # the audited mechanism, not defaults
    return [Case("mafalda_sgd", "MAFALDA-SGD (MFDL, ICLR 2026): lattice releases "
                 "R^k = Σ_s C_ks c^s + Z^k, adaptive composition with Δ_k = 2C·Σ_s|C_ks|",
                 Mafalda(encoder=encoder), params, net, tilt(N_AGENTS, 20, 5, l2(5, 1e3)), 2,
                 "every agent's half-steps y⁰, y¹ (agent 0's releases R⁰, R¹ recovered)",
                 releases_of_agent0(np.asarray(net.dense("W")), float(params.alpha), encoder),
                 claimed=None, releases=2)]
