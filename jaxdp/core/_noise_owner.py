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
    leaves, tree = jax.tree.flatten(noise)
    floats = [i for i, leaf in enumerate(leaves) if jnp.issubdtype(leaf.dtype, jnp.floating)]

    later = alg.noise(jax.random.fold_in(key, 3), state, params, jnp.asarray(2))

    def released(*values):
        """The floating releases of step 1, or of step 2 (drawing ``later``) where step 1's
        draws reach no release of step 1 (an algorithm that sends its model before the update)."""
        full = list(leaves)
        for i, v in zip(floats, values):
            full[i] = v
        after, messages = alg.step(state, jax.tree.unflatten(tree, full), problem, network,
                                   params, jnp.asarray(1))
        if not reach_now:
            _, messages = alg.step(after, later, problem, network, params, jnp.asarray(2))
        return _floating(messages)

    reach_now = True
    now = released(*[leaves[i] for i in floats])
    reach_now = any(np.any(np.asarray(a) != np.asarray(b)) for a, b in zip(
        released(*[leaves[i] + 1 for i in floats]), now))

    base = released(*[leaves[i] for i in floats])

    def moved(shifts) -> list:
        """Which released entries change when the draws move by ``shifts`` (a whole unit: the
        lattice sampler's release moves by its scale; no tangent is needed)."""
        out = released(*[leaves[i] + s for i, s in zip(floats, shifts)])
        return [np.asarray(a) != np.asarray(b) for a, b in zip(out, base)]

    names = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path(noise)]
    shared = []
    dep = np.zeros((n, n), bool)
    for j in range(n):
        shifts = [jnp.zeros_like(leaves[i]).at[j].set(1) if leaves[i].ndim and
                  leaves[i].shape[0] == n else jnp.zeros_like(leaves[i]) for i in floats]
        for out in moved(shifts):
            if out.ndim and out.shape[0] == n:
                dep[:, j] |= out.reshape(n, -1).any(axis=1)
            elif out.any():
                shared.append(f"a release without an agent axis (shape {out.shape}) moves with "
                              f"agent {j}'s draws")
    for i in floats:
        if leaves[i].ndim and leaves[i].shape[0] == n:
            continue
        shifts = [jnp.ones_like(leaves[k]) if k == i else jnp.zeros_like(leaves[k])
                  for k in floats]
        if any(out.any() for out in moved(shifts)):
            shared.append(f"the draw {names[i]} (shape {leaves[i].shape}, no agent axis) reaches "
                          "a release")
    return dep, shared


def sender_mismatch(alg, problem, network, params, key=None) -> str:
    """``""`` when one traced step agrees with a ``"sender"`` declaration (every release moves
    only with its own agent's draws), else what disagrees, in words."""
    dep, shared = noise_dependence(alg, problem, network, params, key)
    off = [(int(i), int(j)) for i, j in zip(*np.nonzero(dep & ~np.eye(len(dep), dtype=bool)))]
    problems = list(shared) + ([f"agent i's release moves with agent j's draws for (i, j) in "
                                f"{off[:6]}"] if off else [])
    return f"{alg.name}: " + "; ".join(problems) if problems else ""
