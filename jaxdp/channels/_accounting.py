"""The report helpers of an algorithm behind a channel: :class:`ChannelAccounting`.

:class:`~jaxdp.channels.WithChannel` keeps the contract (its routes, Params, ``init``, ``noise``,
``step``, ``account``); what its report reads off one traced step lives here, reached as
``alg.accounting``: the product calls of the step (:meth:`ChannelAccounting.program`, the
releases), their sizes, copies and costs (:meth:`~ChannelAccounting.release_log`), the lattice
draws of a run, and the values that bypass the channel (:meth:`~ChannelAccounting.bypass`,
:func:`self_term_flow`).

Imports the transforms' layers below it (``_program``, ``_proxy``), never ``_wrap``: the wrapper
imports this module.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._compiler import jit
from jaxdp.channels._program import ProductCall, program_releases, refusal
from jaxdp.channels._proxy import Probe, call_costs
from jaxdp.core import Accounting


@dataclasses.dataclass(frozen=True)
class ChannelAccounting(Accounting):
    """:class:`~jaxdp.core.Accounting` of a :class:`~jaxdp.channels.WithChannel` ``alg``: the
    releases are the proxy network's product calls of one traced step, so the lattice draws are
    counted from them, not from ``noise`` (which holds only the channel's key)."""

    def calls_per_step(self, problem, network, params) -> list[int]:
        """The message size ``D`` of every product call in one traced step (each call is a
        release through the channel; both branches of a ``jnp.where`` count)."""
        return [d for _, d, _, _ in self.call_log(problem, network, params)]

    def call_log(self, problem, network, params) -> list[tuple[str, int, int, int]]:
        """``(route, message size D, messages sent, bits sent)`` of every product call of one
        traced step."""
        return [call[:4] for call in self.release_log(problem, network, params)]

    def release_log(self, problem, network, params) -> list[tuple[str, int, int, int, Any]]:
        """:meth:`call_log` with, per call, ``(N,)`` int: the independent noisy copies of each
        sender's row the call draws (``1`` broadcast, else one per directed edge of the network
        the proxy runs on: for a time-varying network the union of its edge sets, the same at
        every step), each times the runs of the call per step. Read from the step's traced
        program (:meth:`program`).

        Raises:
          ValueError: a product call whose noise would repeat (inside a ``lax.scan``/``vmap``/...
            of the step).
        """
        alg = self.alg
        net, channels = network.base, alg.channels
        log = []
        for c in self.program(problem, network, params):
            sent, bits, copies = call_costs(channels[c.route], net, c.rows, c.size, c.float_bits)
            copies = np.bincount(np.asarray(copies, np.int64), minlength=net.n_agents)
            log.append((c.route, c.size, c.rounds * sent, c.rounds * bits, c.rounds * copies))
        return log

    def program(self, problem, network, params) -> list[ProductCall]:
        """This channel's product calls in one traced step, read from the step's jaxpr
        (:func:`~jaxdp.channels._program.program_releases`; the calls of a channel the inner
        algorithm sends through itself are its own).

        Raises:
          ValueError: a call whose noise would repeat (:func:`~jaxdp.channels._program.refusal`),
            before anything runs.
        """
        alg = self.alg
        net = network.base

        def one_step(key):
            state = alg.init(key, problem, net, params)
            noise = alg.noise(key, state, params, jnp.int32(0))
            alg.step_on_proxy(state, noise, problem, net, params, jnp.int32(0))
            return 0

        calls = [c for c in program_releases(one_step, jax.random.key(0)) if c.level == 0]
        why = refusal(calls, alg.name)
        if why:
            raise ValueError(why)
        return calls

    def lattice_draw_count(self, problem, network, params, steps: int) -> int:
        """``D``: the lattice draws of a run, from the program of one traced step (each
        call's copies times its message size) times ``steps``."""
        alg = self.alg
        lattice = {route for route, c in alg.routes if any(t.lattice for t in c.transforms)}
        return steps * sum(d * int(np.sum(copies)) for route, d, _, _, copies
                           in self.release_log(problem, network, params) if route in lattice)

    def bypass(self, problem, network, params) -> str:
        """``""``, or how the data reaches other agents outside the channel's releases: the inner
        algorithm reads the data to choose who sends or to weigh what its server computes
        (``selection_reads_data``, ``server_reads_data``: a federated selection by loss or data
        size, a server weighting by data size), a step with no product call at all (its messages
        reach the others outside the channel), a row of a product that keeps a clean self term
        reaches every agent (declared, :attr:`WithChannel.broadcasts_product_row
        <jaxdp.channels.WithChannel.broadcasts_product_row>`: a federated server's
        sum), or the others' next state moves with agent 0's clean self term
        (:func:`self_term_flow`, found by running one step)."""
        alg = self.alg
        for hook in ("selection_reads_data", "server_reads_data"):
            why = getattr(alg.inner, hook, lambda: "")()
            if why:
                return why
        if not self.release_log(problem, network, params):
            return (f"{alg.inner.name}'s step makes no product call on the network it is given, "
                    "so nothing it sends passes through the channel (it reads the other agents' "
                    "rows some other way): the channel covers none of its messages")
        clean = self.clean_self_routes(problem, network, params)
        if clean and alg.broadcasts_product_row:
            return (f"{alg.inner.name} gives a row of a product to every agent (its server's "
                    f"sum, N·(W U)_0), and the channel of {clean[0]!r} keeps that row's own "
                    "upload clean and un-noised (self_term='clean'), so the broadcast holds "
                    "client 0's upload outside the channel; send the uploads through a "
                    "broadcast channel whose self term is released too: "
                    "chain(..., broadcast=True, self_term='released') (spec '.../bcast/self')")
        return _cached_flow(alg, problem, network, params) if clean else ""

    def clean_self_routes(self, problem, network, params) -> list[str]:
        """The routes the step sends through whose channel keeps the sender's own row clean in
        its products (``self_term="clean"``)."""
        alg = self.alg
        channels = alg.channels
        used = dict.fromkeys(route for route, *_ in self.release_log(problem, network, params))
        return [route for route in used if channels[route].self_term == "clean"]


PROBE_SHIFT = 1e3
"""The shift :func:`self_term_flow` gives agent u's clean self terms (large: a flow moves the
others' rows far beyond the rounding of two compiled orders of the same sums)."""
PROBE_ROUNDING = 64
"""The differences :func:`self_term_flow` tolerates, in units of the dtype's ε times the leaf's
largest magnitude (XLA may fuse and reassociate the probed program's sums differently)."""


def self_term_flow(alg, problem, network, params, agent: int = 0) -> str:
    """``""``, or why agent ``agent``'s clean self term reaches other agents: one step from the
    initial state is run twice with the same draws, the second (:class:`Probe`) sending every
    product call's operand of the first (so every release is the same) and with ``agent``'s
    clean self term in every product moved by :data:`PROBE_SHIFT`; every row of the next state
    that is not ``agent``'s own (a leaf with one row per agent: the other rows; any other leaf:
    all of it) must come out bit-identical, since under the channel's accounting the others
    hold only released values and their own. A difference is a flow that bypasses the channel
    (a server row or a broadcast built from a product's row, a self term kept and then
    shared). A finder at one state, not a proof: the declared cases are refused without it
    (:meth:`ChannelAccounting.bypass`)."""
    net = network.base
    n = net.n_agents
    key = jax.random.key(0)

    def next_states():
        state = alg.init(key, problem, net, params)
        noise = alg.noise(key, state, params, jnp.int32(0))
        record = Probe()
        replay = Probe(agent, PROBE_SHIFT, replay=record.operands)
        return tuple(alg.step_on_proxy(state, noise, problem, net, params, jnp.int32(0),
                                       probe=probe)[0][0] for probe in (record, replay))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base, moved = jit(next_states)()
    others = np.arange(n) != agent
    paths = jax.tree_util.tree_flatten_with_path(base)[0]
    for (path, a), b in zip(paths, jax.tree_util.tree_leaves(moved)):
        a, b = np.asarray(a), np.asarray(b)
        if a.ndim and a.shape[0] == n:
            a, b = a[others], b[others]
        if not _same(a, b):
            return (f"{alg.inner.name}'s state {jax.tree_util.keystr(path)} of agents other "
                    f"than {agent} depends on agent {agent}'s own row of a product, which the "
                    "channel keeps clean (self_term='clean'): that value reaches other agents "
                    "outside the channel's releases (found by moving the self term, "
                    "jaxdp.channels.self_term_flow)")
    return ""


_FLOWS: dict = {}


def _cached_flow(alg, problem, network, params) -> str:
    """:func:`self_term_flow`, once per algorithm and structure of the run (the shapes of the
    problem's arrays, the network's size and edges, the Params type): a calibration asks for
    the report of the same run at many noise scales."""
    shapes = tuple((np.shape(x), str(getattr(x, "dtype", type(x))))
                   for x in jax.tree_util.tree_leaves(problem))
    net = network.base
    key = (alg, type(params), type(problem), shapes, net.n_agents,
           np.asarray(net.senders).tobytes(), np.asarray(net.receivers).tobytes())
    if key not in _FLOWS:
        _FLOWS[key] = self_term_flow(alg, problem, network, params)
    return _FLOWS[key]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """``a`` and ``b`` equal up to :data:`PROBE_ROUNDING` (exactly, for integers and booleans;
    NaN where both are)."""
    if not np.issubdtype(a.dtype, np.inexact) or a.size == 0:
        return np.array_equal(a, b)
    scale = 1.0 + float(np.max(np.abs(np.where(np.isfinite(a), a, 0))))
    tol = PROBE_ROUNDING * float(np.finfo(a.dtype).eps) * scale
    close = np.abs(a - b) <= tol
    return bool(np.all(close | (np.isnan(a) & np.isnan(b)) | (a == b)))
