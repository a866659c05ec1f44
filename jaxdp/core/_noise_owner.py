"""Whose noise reaches whose release: the check of an :attr:`Algorithm.noise_owner` declaration.

The eavesdropper bound moves to an observer made of agents only when the noise it charges to agent
``u``'s release is noise the observer does not know (:mod:`jaxdp.privacy._threat`). A ``"sender"``
declaration says: the noise in agent ``u``'s release at a step is drawn by ``u``. This module
reads that off the program: one step from ``init``, run again with each agent's slice of the
step's noise moved by one unit in turn, gives which agents' draws each released row moves.

Layouts. A draw's agent axis is the one the algorithm declares
(:meth:`Algorithm.noise_agent_axes <jaxdp.core.Algorithm.noise_agent_axes>`, 0 unless declared);
a message's rows are the agents (leading axis ``N``) or the directed links (leading axis ``2E``,
row ``e`` sent by ``senders[e]``, as the audit's link view reads them).

Post-processing. A message computed only from the step's *other* messages and public values
(parameters, the network, constants) adds nothing to what is already on the wire: the trainer's
average (3c) of DP-ADMM's uploads, a later gossip round of Muffliato. :func:`post_processed` reads
that off the step's jaxpr (every path from the state, the data or the draws to it passes through
another message), and such a message is not attributed to an agent; the messages it is computed
from are, each on its own rows. A message that also reads the state, the data or a draw by a path
around the messages (a neighbour's raw value re-sent beside an average) is not post-processing.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Literal


def _floating(tree) -> list:
    return [leaf for leaf in jax.tree.leaves(tree) if jnp.issubdtype(jnp.result_type(leaf),
                                                                     jnp.floating)]


def _has_agent_axis(leaf, n: int, axis: int = 0) -> bool:
    return np.ndim(leaf) > axis and np.shape(leaf)[axis] == n


def shift_noise(noise, where):
    """``noise`` with every floating leaf ``leaf`` moved by ``where(leaf)`` (an array or 0): a
    whole unit moves the lattice sampler's release by its scale, so no tangent is needed."""
    def shift(leaf):
        return leaf + where(leaf) if jnp.issubdtype(leaf.dtype, jnp.floating) else leaf
    return jax.tree.map(shift, noise)


def shift_agent(noise, n: int, agent: int, axes=None):
    """``noise`` with ``agent``'s slice of every floating leaf with an agent axis moved by one.

    ``axes``: the agent axis of each leaf (a pytree of ints of ``noise``'s structure,
    :meth:`Algorithm.noise_agent_axes <jaxdp.core.Algorithm.noise_agent_axes>`); ``None``: 0.
    """
    axes = jax.tree.map(lambda _: 0, noise) if axes is None else axes

    def shift(leaf, axis):
        if not (jnp.issubdtype(leaf.dtype, jnp.floating) and _has_agent_axis(leaf, n, axis)):
            return leaf
        return leaf + jnp.zeros_like(leaf).at[(slice(None),) * axis + (agent,)].set(1)
    return jax.tree.map(shift, noise, axes)


def post_processed(alg, state, noise, problem, network, params, k=1) -> list[bool]:
    """For each message leaf of ``alg.step`` (``jax.tree.leaves`` order): ``True`` when it is
    computed only from the step's other messages and public values, so a post-processing of what
    is already on the wire.

    Reads the jaxpr of the step as a function of ``(state, noise, problem)``: a message is
    post-processing when no path from these inputs reaches it except through the variable of
    another message. Conservative: an equation with a sub-program (``jit``, ``scan``, ...) makes
    each of its outputs depend on all of its inputs, and the parameters, the network and the
    algorithm's fields are public (declared, never derived from the data).
    """
    def messages(state, noise, problem):
        return jax.tree.leaves(alg.step(state, noise, problem, network, params, jnp.asarray(k))[1])

    jaxpr = jax.make_jaxpr(messages)(state, noise, problem).jaxpr
    wire = [v for v in jaxpr.outvars if not isinstance(v, Literal)]
    return [isinstance(out, Literal)
            or out not in _private_reach(jaxpr, {v for v in wire if v is not out})
            for out in jaxpr.outvars]


def _private_reach(jaxpr, cut: set) -> set:
    """The variables of ``jaxpr`` that its inputs reach by a path through no variable of ``cut``
    (a cut variable is itself reached, but passes nothing on)."""
    reached = set(jaxpr.invars)

    def passes(v) -> bool:
        return not isinstance(v, Literal) and v in reached and v not in cut
    for eqn in jaxpr.eqns:
        if any(passes(v) for v in eqn.invars):
            reached.update(eqn.outvars)
    return reached


def _rows_moved(out, n: int, senders: np.ndarray) -> np.ndarray | None:
    """``(N,)`` which agents' released rows changed in ``out`` (a change mask of a message):
    rows of a leading agent axis, or the links' rows charged to their senders; ``None`` for a
    message with neither layout."""
    if _has_agent_axis(out, n):
        return out.reshape(n, -1).any(axis=1)
    if np.ndim(out) and np.shape(out)[0] == senders.size:
        moved = np.zeros(n, bool)
        np.logical_or.at(moved, senders, out.reshape(senders.size, -1).any(axis=1))
        return moved
    return None


def noise_dependence(alg, problem, network, params, key=None) -> tuple[np.ndarray, list[str]]:
    """Which agents' noise each agent's release of one step moves.

    Runs ``init`` and step ``k = 0``, then step ``k = 1`` with, for each agent ``j``, a unit
    shift of ``j``'s slice (along the declared agent axis, :meth:`Algorithm.noise_agent_axes
    <jaxdp.core.Algorithm.noise_agent_axes>`) of every floating noise leaf. A message that is a
    post-processing of the step's other messages (:func:`post_processed`) is not attributed.

    Returns:
      ``(dep, shared)``: ``dep[i, j]`` is ``True`` when agent ``j``'s draws move agent ``i``'s
      released rows (leading axis ``N`` of a floating message, or ``2E``: a link's row is its
      sender's); ``shared`` lists, in words, the draws or releases no single agent owns that a
      release depends on (a noise leaf without an agent axis, e.g. a token's one draw; a release
      without one, e.g. the token itself).

    Raises:
      ValueError: ``d = N`` or ``N = 2E`` (an agent axis could not be told from a coordinate or
        a link axis).
    """
    n = network.n_agents
    senders = np.asarray(network.base.senders)
    if problem.dim == n or senders.size == n:
        raise ValueError(f"noise_dependence needs a model dimension d = {problem.dim} and a number "
                         f"of directed links 2E = {senders.size} other than the N = {n} agents, "
                         "to tell an agent axis from a coordinate or a link axis")
    key = jax.random.key(0) if key is None else key
    step = jax.jit(lambda s, z, k: alg.step(s, z, problem, network, params, k))  # one compile
    state = alg.init(key, problem, network, params)
    first = alg.noise(jax.random.fold_in(key, 1), state, params, jnp.asarray(0))
    state, _ = step(state, first, jnp.asarray(0))
    noise = alg.noise(jax.random.fold_in(key, 2), state, params, jnp.asarray(1))
    later = alg.noise(jax.random.fold_in(key, 3), state, params, jnp.asarray(2))
    axes = alg.noise_agent_axes(noise)
    judged = [not pp and jnp.issubdtype(jnp.result_type(m), jnp.floating) for pp, m in zip(
        post_processed(alg, state, noise, problem, network, params),
        jax.tree.leaves(step(state, noise, jnp.asarray(1))[1]))]

    def released(drawn, reach_now: bool) -> list:
        """The floating releases of step 1 that are not post-processing, or of step 2 (drawing
        ``later``) where step 1's draws reach no release of step 1 (an algorithm that sends its
        model before the update)."""
        after, messages = step(state, drawn, jnp.asarray(1))
        if not reach_now:
            _, messages = step(after, later, jnp.asarray(2))
        return [np.asarray(m) for m, keep in zip(jax.tree.leaves(messages), judged) if keep]

    def changes(a, b) -> list:
        return [x != y for x, y in zip(a, b)]

    now = released(noise, True)
    reach_now = any(c.any() for c in changes(released(shift_noise(noise, lambda _: 1), True),
                                             now))
    base = released(noise, reach_now)
    shared = []
    dep = np.zeros((n, n), bool)
    for j in range(n):
        for out in changes(released(shift_agent(noise, n, j, axes), reach_now), base):
            moved = _rows_moved(out, n, senders)
            if moved is not None:
                dep[:, j] |= moved
            elif out.any():
                shared.append(f"a release without an agent axis (shape {out.shape}) moves with "
                              f"agent {j}'s draws")
    paths = jax.tree_util.tree_leaves_with_path(noise)
    for (path, leaf), axis in zip(paths, jax.tree.leaves(axes)):
        if not jnp.issubdtype(leaf.dtype, jnp.floating) or _has_agent_axis(leaf, n, axis):
            continue
        alone = shift_noise(noise, lambda other, leaf=leaf: 1 if other is leaf else 0)
        if any(c.any() for c in changes(released(alone, reach_now), base)):
            shared.append(f"the draw {jax.tree_util.keystr(path)} (shape {leaf.shape}, no agent "
                          f"axis at its declared axis {axis}) reaches a release")
    return dep, shared


def sender_mismatch(alg, problem, network, params, key=None) -> str:
    """``""`` when one traced step agrees with a ``"sender"`` declaration (every release moves
    only with its own agent's draws), else what disagrees, in words."""
    dep, shared = noise_dependence(alg, problem, network, params, key)
    off = [(int(i), int(j)) for i, j in zip(*np.nonzero(dep & ~np.eye(len(dep), dtype=bool)))]
    problems = list(shared) + ([f"agent i's release moves with agent j's draws for (i, j) in "
                                f"{off[:6]}"] if off else [])
    return f"{alg.name}: " + "; ".join(problems) if problems else ""
