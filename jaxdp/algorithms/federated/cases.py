"""Audit cases of the federated family (``jaxdp reproduce audit-table``, collected by
:func:`jaxdp.experiments.audit.cases`): DP-FedAvg (central noise, Poisson clients) under both
relations it offers — a client's data set replaced (the default) and added/removed (McMahan et
al.'s) — and local-DP FedAvg, each at the worst pair of its user-level relation; and DP-FedAvg's
positive controls: a mutant that skips the clip under the unchanged report, and the replace pair
claimed under the add/remove curve, which the same audit must catch.
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
    l2,
    problem_pair,
    random_data,
    tilt,
    with_agent0,
)
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
        add_remove_case(net),
    ]


Z_ADD_REMOVE = 1.0  # z = 1: at z = 3 the add/remove guarantee is too small for 10⁴ runs to test
CONTROL_DELTA = 0.05


def add_remove_case(net) -> Case:
    """DP-FedAvg under McMahan et al.'s relation (``relation="add_remove_agent"``): client 0
    holds the tilted data set in one world (its one local step clips to C·v̂, the most a client
    can add) and no data in the other (zero labels: its gradient at x⁰ = 0 is 0, so its update is
    0, as a client without data) — the one-sided pair at distance C of the relation. q = ½, z = 1;
    the trusted server's observer sees the broadcast x¹."""
    pair = emptied_pair(N_AGENTS, 20, 5, l2(5, 1e3))
    alg = algorithms.DPFedAvg(local_steps=1, rate=0.5, relation="add_remove_agent")
    return Case("dp_fedavg:add_remove_agent", "issue 27 federated (client 0's data set added or "
                "removed; N = 10 on K_N, d = 5, E = 1, z = 1)", alg,
                alg.default_params().replace(z=Z_ADD_REMOVE), net, pair, 1,
                "the server's broadcast x¹", agent_rows("x"), threat="trusted_server")


def emptied_pair(n: int, m: int, d: int, v: np.ndarray, *, seed: int = 0,
                 dtype=np.float64) -> tuple:
    """Least squares: client 0's gradient is ``v/2`` at every x in the first problem
    (:func:`~jaxdp.algorithms.cases.tilt`'s labels) and 0 at x = 0 in the second (zero labels: the
    client with no data, whose update from x⁰ = 0 is 0); the other clients are the same."""
    feats, labels = random_data(n, m, d, seed)
    half = (m / 2) * feats[0] @ np.linalg.solve(feats[0].T @ feats[0], v)
    return problem_pair(feats, with_agent0(labels, slice(None), (-half, 0.0 * half)),
                        "least_squares", {"ridge": 0.0}, dtype)


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
                                control="positive", claimed=claim), replace_as_add_remove(real)]


def replace_as_add_remove(real: Case) -> Case:
    """Positive control: DP-FedAvg's replace pair (client 0's clipped update +C·v̂ against −C·v̂,
    :func:`audit_cases`) at z = 1, claimed under the add/remove-agent curve of the same run (a
    one-sided C where the release moves 2C when client 0 is selected). Read at δ =
    :data:`CONTROL_DELTA`, where 10⁴ evaluation runs can show more than the claim (as DP-DSGD's
    record-level control, :mod:`jaxdp.algorithms.dpsgd.cases`)."""
    params = real.params.replace(z=Z_ADD_REMOVE)
    claim = dataclasses.replace(real.algorithm, relation="add_remove_agent").privacy(
        real.pair[0], real.network, params, real.steps, delta=CONTROL_DELTA,
        threat=real.threat)
    return dataclasses.replace(real, id="control:dp_fedavg_replace_as_add_remove",
                               params=params, paper=real.paper + ", z = 1, claimed under "
                               "add/remove-agent", control="positive",
                               claimed=float(claim.epsilon[0]), delta=CONTROL_DELTA)
