"""Audit cases of the federated family (``jaxdp reproduce audit-table``, collected by
:func:`jaxdp.experiments.audit.cases`): DP-FedAvg (central noise, Poisson clients) and local-DP
FedAvg at the worst pair of their user-level relation, and DP-FedAvg's positive control: a
mutant that skips the clip under the unchanged report, which the same audit must catch.
"""
from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from jaxdp import algorithms, network
from jaxdp.algorithms.cases import N_AGENTS, Case, agent_rows, l2, tilt
from jaxdp.algorithms.federated._rounds import local_descent
from jaxdp.algorithms.federated.private import DPFedAvg


def audit_cases() -> list[Case]:
    """Client 0's whole data set replaced by a tilted one: at x⁰ = 0 its gradient is ±v/2 with
    ``α‖v‖/2 = 25 ≫ C = 1`` (least squares, :func:`~jaxdp.algorithms.cases.tilt`), so its single
    local step (E = 1) clips to ∓C·v̂: the uploads differ by exactly 2C, the relation's worst case.
    DP-FedAvg: the attacker sees the server's first broadcast x¹ (q = 0.5, z = 3: the amplified
    curve is the guarantee), the trusted server's observer (its threat model); LDP-FedAvg: client
    0's first upload (every client selected, z = 2)."""
    net = network.make_network("complete", N_AGENTS)
    pair = tilt(N_AGENTS, 20, 5, l2(5, 1e3))
    paper = "issue 27 federated (client 0's data set replaced; N = 10 on K_N, d = 5, E = 1)"
    central = algorithms.DPFedAvg(local_steps=1, rate=0.5)
    local = algorithms.LDPFedAvg(local_steps=1)
    return [
        Case("dp_fedavg", paper, central, central.default_params().replace(z=3.0), net, pair, 1,
             "the server's broadcast x¹", agent_rows("x"), threat="trusted_server"),
        Case("ldp_fedavg", paper, local, local.default_params().replace(z=2.0), net, pair, 1,
             "client 0's upload at round 0", agent_rows("update")),
    ]


@dataclasses.dataclass(frozen=True)
class UnclippedDPFedAvg(DPFedAvg):
    """A wrong DP-FedAvg: the client updates are uploaded unclipped, while the report (inherited)
    still assumes ‖clip(Δ_k, C)‖ ≤ C. A positive control of the audit, never registered."""

    def clipped_updates(self, state, problem, params, rows):
        x = state.x
        return (local_descent(x, problem, params.alpha, self.local_steps, jnp.zeros_like, rows)
                - rows.take(x))


def audit_controls() -> list[Case]:
    """DP-FedAvg's case (:func:`audit_cases`) run by :class:`UnclippedDPFedAvg`, with the real
    DP-FedAvg's guarantee as the claim (the report unchanged): the audit must find a lower bound
    above it. (Half the noise, z = 1.5 for the accounted 3, is no control here: the guarantee at
    this pair is loose enough, 2.06 against an empirical 0.6 at 10⁵ runs, that the mutant's own
    ε may lie below it, and 2·10⁴ runs find 0.55.)"""
    real = next(c for c in audit_cases() if c.id == "dp_fedavg")
    claim = float(real.algorithm.privacy(real.pair[0], real.network, real.params,
                                         real.steps).epsilon[0])
    return [dataclasses.replace(real, id="control:dp_fedavg_unclipped",
                                algorithm=UnclippedDPFedAvg(local_steps=1, rate=0.5),
                                paper=real.paper + ", updates not clipped; report unchanged",
                                control="positive", claimed=claim)]
