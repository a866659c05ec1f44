"""Whose noise reaches whose release: the check of an :attr:`Algorithm.noise_owner` declaration.

The eavesdropper bound moves to an observer made of agents only when the noise it charges to agent
``u``'s release is noise the observer does not know (:mod:`jaxdp.privacy._threat`). A ``"sender"``
declaration says: the noise in agent ``u``'s release at a step is drawn by ``u``. This module
reads that off the program: one step from ``init``, differentiated in each agent's rows of the
step's noise moved by one unit in each agent's rows in turn, gives which agents' draws each
released row moves.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def _floating(tree) -> list:
    return [leaf for leaf in jax.tree.leaves(tree) if jnp.issubdtype(jnp.result_type(leaf),
                                                                     jnp.floating)]


def _has_agent_axis(leaf, n: int) -> bool:
    return bool(np.ndim(leaf)) and np.shape(leaf)[0] == n


def shift_noise(noise, where):
    """``noise`` with every floating leaf ``leaf`` moved by ``where(leaf)`` (an array or 0): a
    whole unit moves the lattice sampler's release by its scale, so no tangent is needed."""
    def shift(leaf):
        return leaf + where(leaf) if jnp.issubdtype(leaf.dtype, jnp.floating) else leaf
    return jax.tree.map(shift, noise)


def shift_agent(noise, n: int, agent: int):
    """``noise`` with ``agent``'s rows of every floating leaf with an agent axis moved by one."""
    return shift_noise(noise, lambda leaf: jnp.zeros_like(leaf).at[agent].set(1)
                       if _has_agent_axis(leaf, n) else 0)


def noise_dependence(alg, problem, network, params, key=None) -> tuple[np.ndarray, list[str]]:
    """Which agents' noise each agent's release of one step moves.

    Runs ``init`` and step ``k = 0``, then step ``k = 1`` with, for each agent ``j``, a unit
    shift of ``j``'s rows (leading axis ``N``) of every floating noise leaf.

    Returns:
      ``(dep, shared)``: ``dep[i, j]`` is ``True`` when agent ``j``'s draws move agent ``i``'s
      released rows (leading axis ``N`` of a floating message); ``shared`` lists, in words, the
      draws or releases no single agent owns that a release depends on (a noise leaf without a
      leading agent axis, e.g. a token's one draw; a release without one, e.g. the token itself).
    """
    n = network.n_agents
    if problem.dim == n:
        raise ValueError(f"noise_dependence needs a model dimension d = {problem.dim} other than "
                         f"the N = {n} agents, to tell an agent axis from a coordinate axis")
    key = jax.random.key(0) if key is None else key
    state = alg.init(key, problem, network, params)
    first = alg.noise(jax.random.fold_in(key, 1), state, params, jnp.asarray(0))
    state, _ = alg.step(state, first, problem, network, params, jnp.asarray(0))
    noise = alg.noise(jax.random.fold_in(key, 2), state, params, jnp.asarray(1))
    later = alg.noise(jax.random.fold_in(key, 3), state, params, jnp.asarray(2))

    def released(drawn, reach_now: bool) -> list:
        """The floating releases of step 1, or of step 2 (drawing ``later``) where step 1's
        draws reach no release of step 1 (an algorithm that sends its model before the update)."""
        after, messages = alg.step(state, drawn, problem, network, params, jnp.asarray(1))
        if not reach_now:
            _, messages = alg.step(after, later, problem, network, params, jnp.asarray(2))
        return [np.asarray(m) for m in _floating(messages)]

    def changes(a, b) -> list:
        return [x != y for x, y in zip(a, b)]

    now = released(noise, True)
    reach_now = any(c.any() for c in changes(released(shift_noise(noise, lambda _: 1), True),
                                             now))
    base = released(noise, reach_now)
    shared = []
    dep = np.zeros((n, n), bool)
    for j in range(n):
        for out in changes(released(shift_agent(noise, n, j), reach_now), base):
            if _has_agent_axis(out, n):
                dep[:, j] |= out.reshape(n, -1).any(axis=1)
            elif out.any():
                shared.append(f"a release without an agent axis (shape {out.shape}) moves with "
                              f"agent {j}'s draws")
    for path, leaf in jax.tree_util.tree_leaves_with_path(noise):
        if not jnp.issubdtype(leaf.dtype, jnp.floating) or _has_agent_axis(leaf, n):
            continue
        alone = shift_noise(noise, lambda other, leaf=leaf: 1 if other is leaf else 0)
        if any(c.any() for c in changes(released(alone, reach_now), base)):
            shared.append(f"the draw {jax.tree_util.keystr(path)} (shape {leaf.shape}, no agent "
                          "axis) reaches a release")
    return dep, shared


def sender_mismatch(alg, problem, network, params, key=None) -> str:
    """``""`` when one traced step agrees with a ``"sender"`` declaration (every release moves
    only with its own agent's draws), else what disagrees, in words."""
    dep, shared = noise_dependence(alg, problem, network, params, key)
    off = [(int(i), int(j)) for i, j in zip(*np.nonzero(dep & ~np.eye(len(dep), dtype=bool)))]
    problems = list(shared) + ([f"agent i's release moves with agent j's draws for (i, j) in "
                                f"{off[:6]}"] if off else [])
    return f"{alg.name}: " + "; ".join(problems) if problems else ""
