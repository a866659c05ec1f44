"""The check of the causal cone's round count on a run: how fast one agent's release spreads.

The cone (:mod:`jaxdp.privacy._cone`) composes only the releases of ``u`` that can reach ``v`` by
the horizon, with ``R`` rounds per step (:meth:`Accounting.cone_rounds
<jaxdp.core.Accounting.cone_rounds>`). :func:`reach_mismatch` runs the program twice, the
second time with agent ``u``'s noise at step 0 moved by one unit, and finds, for every other agent
``v``, the first step at which a message ``v`` receives (or sends: its own state) differs. A change
the cone says cannot have arrived yet is a mismatch: the declared or counted ``R`` is too small,
or the algorithm communicates off the network's edges.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._compiler import jit
from jaxdp.core._noise_owner import shift_agent


def _sent_rows(messages, rows: int) -> np.ndarray:
    """``(rows, ·)`` every floating message leaf with a leading axis of ``rows`` (``N``: one row
    per agent; ``2E``: one per directed link), side by side."""
    leaves = [np.asarray(m).reshape(rows, -1) for m in jax.tree.leaves(messages)
              if jnp.issubdtype(jnp.result_type(m), jnp.floating) and np.ndim(m)
              and np.shape(m)[0] == rows]
    return np.concatenate(leaves, axis=1) if leaves else np.zeros((rows, 0))


def first_arrivals(alg, problem, network, params, steps: int, source: int = 0,
                   key=None) -> np.ndarray:
    """``(N,)`` the first step (``0..steps − 1``) at which agent ``v``'s view — the messages of
    its in-neighbours on the union of the edge sets and the per-link messages addressed to it,
    and its own — moves with a unit shift of ``source``'s noise at step 0 (along each draw's
    declared agent axis); ``inf`` where it never moves within ``steps``."""
    n = network.n_agents
    key = jax.random.key(0) if key is None else key
    senders, receivers = (np.asarray(e) for e in network.base._host_edges())
    if senders.size == n:
        raise ValueError(f"first_arrivals: N = {n} agents and as many directed links: node and "
                         "link messages cannot be told apart")

    step = jit(lambda s, z, k: alg.step(s, z, problem, network, params, k))  # one compile

    def run(shift: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        state = alg.init(key, problem, network, params)
        sent = []
        for k in range(steps):
            noise = alg.noise(jax.random.fold_in(key, k), state, params, jnp.asarray(k))
            if shift and k == 0:
                noise = shift_agent(noise, n, source, alg.noise_agent_axes(noise))
            state, messages = step(state, noise, jnp.asarray(k))
            sent.append((_sent_rows(messages, n), _sent_rows(messages, senders.size)))
        return sent

    changed = [((a != b).any(axis=1), (p != q).any(axis=1))
               for (a, p), (b, q) in zip(run(False), run(True))]
    sees = np.eye(n, dtype=bool)
    sees[senders, receivers] = True  # sees[j, v]: v receives j's rows
    links = np.zeros((senders.size, n), bool)  # links[e, v]: v sends or receives link e's row
    links[np.arange(senders.size), senders] = links[np.arange(senders.size), receivers] = True
    moved = np.stack([(rows.astype(np.int64) @ sees + per_link.astype(np.int64) @ links) > 0
                      for rows, per_link in changed])  # (T, N)
    return np.where(moved.any(axis=0), np.argmax(moved, axis=0), np.inf)


def reach_mismatch(alg, problem, network, params, steps: int, source: int = 0,
                   key=None) -> str:
    """``""`` when no agent's view moves with ``source``'s step-0 release before the causal cone
    allows (:func:`~jaxdp.privacy.pairwise.cone_steps` with
    :meth:`~jaxdp.core.Accounting.cone_rounds`), else which, in words."""
    from jaxdp.privacy.pairwise import cone_steps, hop_distances

    rounds = alg.accounting.cone_rounds(problem, network, params)
    senders, receivers = network.base._host_edges()
    dist = hop_distances(senders, receivers, network.n_agents)[source]
    first = first_arrivals(alg, problem, network, params, steps, source, key)
    early = [(v, int(first[v]), dist[v]) for v in range(network.n_agents)
             if v != source and np.isfinite(first[v])
             and cone_steps(dist[v], int(first[v]) + 1, max(rounds, 1)) < 1]
    return "" if not early else (
        f"{alg.name}: with R = {rounds} round(s) per step, agent {source}'s step-0 release moved "
        "the view of (agent, at step, hop distance) " + ", ".join(map(str, early[:6])) +
        " before the causal cone allows")
