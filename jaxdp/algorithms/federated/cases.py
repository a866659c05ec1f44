"""Audit cases of the federated family (``jaxdp reproduce audit-table``, collected by
:func:`jaxdp.experiments.audit.cases`): DP-FedAvg (central noise, Poisson clients) and local-DP
FedAvg at the worst pair of their user-level relation.
"""
from __future__ import annotations

from jaxdp import algorithms, network
from jaxdp.algorithms.cases import N_AGENTS, Case, agent_rows, l2, tilt


def audit_cases() -> list[Case]:
    """Client 0's whole data set replaced by a tilted one: at x⁰ = 0 its gradient is ±v/2 with
    ``α‖v‖/2 = 25 ≫ C = 1`` (least squares, :func:`~jaxdp.algorithms.cases.tilt`), so its single
    local step (E = 1) clips to ∓C·v̂: the uploads differ by exactly 2C, the relation's worst case.
    DP-FedAvg: the attacker sees the server's first broadcast x¹ (q = 0.5, z = 3: the amplified
    curve is the guarantee); LDP-FedAvg: client 0's first upload (every client selected, z = 2)."""
    net = network.make_network("complete", N_AGENTS)
    pair = tilt(N_AGENTS, 20, 5, l2(5, 1e3))
    paper = "issue 27 federated (client 0's data set replaced; N = 10 on K_N, d = 5, E = 1)"
    central = algorithms.DPFedAvg(local_steps=1, rate=0.5)
    local = algorithms.LDPFedAvg(local_steps=1)
    return [
        Case("dp_fedavg", paper, central, central.default_params().replace(z=3.0), net, pair, 1,
             "the server's broadcast x¹", agent_rows("x")),
        Case("ldp_fedavg", paper, local, local.default_params().replace(z=2.0), net, pair, 1,
             "client 0's upload at round 0", agent_rows("update")),
    ]
