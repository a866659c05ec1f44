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

The wire held fixed. Agent ``i``'s release may move with another agent's draws only through
messages already on the wire: the accountant composes ``i``'s releases adaptively, each a function
of ``i``'s data, of what is public (every message so far, this step's earlier rounds included) and
of ``i``'s own draws. So each message is judged with every *other* message of the step held at its
value (:func:`wire_held`, an evaluation of the step's jaxpr): DP-ADMM's trainer average (3c) of the
uploads, a later gossip round of Muffliato, DPP2's ``z`` (17) built on the neighbours' ``y`` then
move with nothing, or with their own agent's draws only. A value that carries a neighbour's draw
around the wire (an average of uploads that are not sent, the neighbour's draw itself re-sent)
still moves, and is caught. A draw that is nobody's privacy noise (DPP2's step η^k, public input
common to all nodes) is declared with agent axis ``None`` and not shifted. The check reads noise
only: a neighbour's raw *data* re-sent without noise is the information-flow check's
(:func:`~jaxdp.privacy.check_information_flow`).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Literal, jaxpr_as_fun

from jaxdp._compiler import jit


def _has_agent_axis(leaf, n: int, axis: int = 0) -> bool:
    return np.ndim(leaf) > axis and np.shape(leaf)[axis] == n


def shift_noise(noise, where):
    """``noise`` with every floating leaf ``leaf`` moved by ``where(leaf)`` (an array or 0): a
    whole unit moves the lattice sampler's release by its scale, so no tangent is needed."""
    def shift(leaf):
        return leaf + where(leaf) if jnp.issubdtype(leaf.dtype, jnp.floating) else leaf
    return jax.tree.map(shift, noise)


def _leaf_axes(axes) -> list:
    """The agent axis of each leaf (``None``: nobody's noise), in leaf order."""
    return jax.tree.leaves(axes, is_leaf=lambda a: a is None)


def _owned(leaf, axis) -> bool:
    """A draw that is some agent's privacy noise: floating, and not declared nobody's."""
    return axis is not None and jnp.issubdtype(leaf.dtype, jnp.floating)


def shift_agent(noise, n: int, agent: int, axes):
    """``noise`` with ``agent``'s slice of every floating leaf with an agent axis moved by one.

    ``axes``: the agent axis of each leaf (a pytree of ints of ``noise``'s structure, ``None``
    for a draw that is nobody's noise: :meth:`Algorithm.noise_agent_axes
    <jaxdp.core.Algorithm.noise_agent_axes>`).
    """
    leaves, tree = jax.tree.flatten(noise)

    def shift(leaf, axis):
        if not (_owned(leaf, axis) and _has_agent_axis(leaf, n, axis)):
            return leaf
        return leaf + jnp.zeros_like(leaf).at[(slice(None),) * axis + (agent,)].set(1)
    return tree.unflatten([shift(x, a) for x, a in zip(leaves, _leaf_axes(axes))])


def shift_owned(noise, axes):
    """``noise`` with every draw that is some agent's noise moved by one unit."""
    leaves, tree = jax.tree.flatten(noise)
    return tree.unflatten([x + 1 if _owned(x, a) else x
                           for x, a in zip(leaves, _leaf_axes(axes))])


def wire_held(alg, state, noise, problem, network, params, k=1, later=None):
    """One function per message leaf of the step (``jax.tree.leaves`` order): the draws ↦ that
    message, with every other message of the step held at its value under ``noise``.

    The step (and a second one drawing ``later``, for an algorithm that sends its model before
    its update: then the judged messages are the second step's) is traced as a function of the
    draws, and its jaxpr evaluated with each other message's variable pinned, inside ``jit`` and
    inside a ``jit``-ed callee that computes it; a sub-program that is not inlined (``scan``,
    ``cond``, ...) is run as a whole, so a message computed and used inside one is not held (the
    check is then stricter, never looser).
    """
    def messages(drawn):
        after, sent = alg.step(state, drawn, problem, network, params, jnp.asarray(k))
        if later is not None:
            _, sent = alg.step(after, later, problem, network, params, jnp.asarray(k + 1))
        return jax.tree.leaves(sent)

    closed = jax.make_jaxpr(messages)(noise)
    base = jaxpr_as_fun(closed)(*jax.tree.leaves(noise))
    outs = closed.jaxpr.outvars
    held = {v: x for v, x in zip(outs, base) if not isinstance(v, Literal)}

    def judge(out):
        if isinstance(out, Literal):
            return lambda drawn: out.val
        pinned = {v: x for v, x in held.items() if v is not out}
        return jit(lambda drawn: _evaluate(closed.jaxpr, closed.consts,
                                           jax.tree.leaves(drawn), pinned)[outs.index(out)])
    return [judge(out) for out in outs]


def _evaluate(jaxpr, consts, args, pinned: dict) -> list:
    """``jaxpr`` on ``args``, each variable of ``pinned`` set to its value where it is computed
    (through the callee of a ``jit`` / ``closed_call`` that computes one)."""
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    def write(v, x):
        env[v] = pinned.get(v, x)

    for v, x in zip(jaxpr.constvars, consts):
        write(v, x)
    for v, x in zip(jaxpr.invars, args):
        write(v, x)
    for eqn in jaxpr.eqns:
        inputs = [read(v) for v in eqn.invars]
        callee = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
        if isinstance(callee, ClosedJaxpr) and any(v in pinned for v in eqn.outvars):
            inner = {i: pinned[o] for i, o in zip(callee.jaxpr.outvars, eqn.outvars)
                     if o in pinned and not isinstance(i, Literal)}
            outs = _evaluate(callee.jaxpr, callee.consts, inputs, inner)
        else:
            with eqn.ctx.manager:  # as jax.core.eval_jaxpr binds an equation
                outs = eqn.primitive.bind(*inputs, **eqn.primitive.get_bind_params(eqn.params))
            outs = outs if eqn.primitive.multiple_results else [outs]
        for v, x in zip(eqn.outvars, outs):
            write(v, x)
    return [read(v) for v in jaxpr.outvars]


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
    """Which agents' noise each agent's release of one step moves, the wire held fixed.

    Runs ``init`` and step ``k = 0``, then step ``k = 1`` with, for each agent ``j``, a unit
    shift of ``j``'s slice (along its declared agent axis, :meth:`Algorithm.noise_agent_axes
    <jaxdp.core.Algorithm.noise_agent_axes>`; a draw declared ``None`` is nobody's noise and is
    not shifted) of every floating noise leaf; each message is evaluated with the step's other
    messages held (:func:`wire_held`).

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
    senders, _ = network.base._host_edges()  # the first graph's, when stacked (as the reach)
    if problem.dim == n or senders.size == n:
        raise ValueError(f"noise_dependence needs a model dimension d = {problem.dim} and a number "
                         f"of directed links 2E = {senders.size} other than the N = {n} agents, "
                         "to tell an agent axis from a coordinate or a link axis")
    key = jax.random.key(0) if key is None else key
    state = alg.init(key, problem, network, params)
    first = alg.noise(jax.random.fold_in(key, 1), state, params, jnp.asarray(0))
    state, _ = alg.step(state, first, problem, network, params, jnp.asarray(0))
    noise = alg.noise(jax.random.fold_in(key, 2), state, params, jnp.asarray(1))
    later = alg.noise(jax.random.fold_in(key, 3), state, params, jnp.asarray(2))
    axes = alg.noise_agent_axes(noise)
    floating = [jnp.issubdtype(m.dtype, jnp.floating) for m in jax.tree.leaves(jax.eval_shape(
        lambda: alg.step(state, noise, problem, network, params, jnp.asarray(1))[1]))]
    now = wire_held(alg, state, noise, problem, network, params)
    reach_now = any(np.any(np.asarray(f(shift_owned(noise, axes))) != np.asarray(f(noise)))
                    for f, fl in zip(now, floating) if fl)
    judges = now if reach_now else wire_held(alg, state, noise, problem, network, params,
                                             later=later)
    judges = [f for f, fl in zip(judges, floating) if fl]
    base = [np.asarray(f(noise)) for f in judges]

    def changes(drawn) -> list:
        return [np.asarray(f(drawn)) != b for f, b in zip(judges, base)]

    shared = []
    dep = np.zeros((n, n), bool)
    for j in range(n):
        for out in changes(shift_agent(noise, n, j, axes)):
            moved = _rows_moved(out, n, senders)
            if moved is not None:
                dep[:, j] |= moved
            elif out.any():
                shared.append(f"a release without an agent axis (shape {out.shape}) moves with "
                              f"agent {j}'s draws")
    paths = jax.tree_util.tree_leaves_with_path(noise)
    for (path, leaf), axis in zip(paths, _leaf_axes(axes)):
        if not _owned(leaf, axis) or _has_agent_axis(leaf, n, axis):
            continue
        alone = shift_noise(noise, lambda other, leaf=leaf: 1 if other is leaf else 0)
        if any(c.any() for c in changes(alone)):
            shared.append(f"the draw {jax.tree_util.keystr(path)} (shape {leaf.shape}, no agent "
                          f"axis at its declared axis {axis}) reaches a release")
    return dep, shared


def sender_mismatch(alg, problem, network, params, key=None) -> str:
    """``""`` when one traced step agrees with a ``"sender"`` declaration (every release moves
    only with its own agent's draws), else what disagrees, in words."""
    dep, shared = noise_dependence(alg, problem, network, params, key)
    off = [(int(i), int(j)) for i, j in zip(*np.nonzero(dep & ~np.eye(len(dep), dtype=bool)))]
    pairs = f"agent i's release moves with agent j's draws for (i, j) in {off[:6]}"
    problems = list(shared) + ([pairs] if off else [])
    return f"{alg.name}: " + "; ".join(problems) if problems else ""
