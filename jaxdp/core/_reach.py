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

from jaxdp.core._noise_owner import shift_agent


def _sent_rows(messages, n: int) -> np.ndarray:
    """``(N, ·)`` every floating message leaf with a leading agent axis, side by side."""
    leaves = [np.asarray(m).reshape(n, -1) for m in jax.tree.leaves(messages)
              if jnp.issubdtype(jnp.result_type(m), jnp.floating) and np.ndim(m)
              and np.shape(m)[0] == n]
    return np.concatenate(leaves, axis=1) if leaves else np.zeros((n, 0))


def first_arrivals(alg, problem, network, params, steps: int, source: int = 0,
                   key=None) -> np.ndarray:
    """``(N,)`` the first step (``0..steps − 1``) at which agent ``v``'s view — the messages of
    its in-neighbours on the union of the edge sets, and its own — moves with a unit shift of
    ``source``'s noise at step 0; ``inf`` where it never moves within ``steps``."""
    n = network.n_agents
    key = jax.random.key(0) if key is None else key

    def run(shift: bool) -> list[np.ndarray]:
        state = alg.init(key, problem, network, params)
        sent = []
        for k in range(steps):
            noise = alg.noise(jax.random.fold_in(key, k), state, params, jnp.asarray(k))
            if shift and k == 0:
                noise = shift_agent(noise, n, source, alg.noise_agent_axes(noise))
            state, messages = alg.step(state, noise, problem, network, params, jnp.asarray(k))
            sent.append(_sent_rows(messages, n))
        return sent

    changed = np.stack([(a != b).any(axis=1) for a, b in zip(run(False), run(True))])  # (T, N)
    senders, receivers = network.base._host_edges()
    sees = np.eye(n, dtype=bool)
    sees[np.asarray(senders), np.asarray(receivers)] = True  # sees[j, v]: v receives j's rows
    moved = (changed.astype(np.int64) @ sees.astype(np.int64)) > 0  # (T, N)
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
