"""Eavesdroppers on RECAL's baton: gradients from the transmitted (x, ũ) (paper 003, App. A).

The adversary records every baton ``(i_k, x^k, ũ^k) → (x^{k+1}, ũ^{k+1})`` and knows the model's
structure (α_i, β, n, the regularizer) and the public initialization (``x^1 = y_i^1 = x0·1``,
``λ^1 = 0``, ``ũ^1 = 0``), as paper 003's threat model (§II-B) allows.

* :func:`appendix_a_gradients` — the paper's Appendix A recursion on the u-channel:
  ``λ_i⁺ = ũ^{k+1} − ũ^k + λ_i``, ``λ_i^{k+½} = λ_i + β(x^k − y_i)``,
  ``y_i⁺ = y_i + x^{k+1} − x^k + (λ^{k+½} − λ_i⁺)/β``, ``∇f_i(y_i) = (y_i − y_i⁺)/α_i + λ^{k+½}``.
  Exact for RECAL; for DP-RECAL it returns noisy estimates (the noise on ũ enters).
* :func:`x_channel_points` and :func:`x_channel_gradients` — the x-channel leak (errata page): with
  r = 0, ``x^{k+1} = x^k − ũ^k − β(x^k − y_i^k)``, so ``y_i^k = x^k + (x^{k+1} − x^k + ũ^k)/β``
  **exactly**, whatever noise ũ carries; tracking ``λ_i`` from 0 and waiting for the agent's next
  activation gives ``∇f_i(y_i^k)`` exactly. With an ℓ1 regularizer (soft threshold at n·l1) the
  inversion is exact on the support of ``x^{k+1}`` and unknown elsewhere.

All functions are pure JAX (one ``lax.scan`` over the transcript), so they vmap over seeds; the
two recursions are jitted (``n_agents`` static).
Shapes: K recorded iterations, N agents, d model dimension.
"""
from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

from jaxdp._types import Array


@chex.dataclass(frozen=True)
class Transcript:
    sender: Array  # (K,) int32 i_k
    x_in: Array  # (K, d) x^k the holder received
    u_in: Array  # (K, d) ũ^k the holder received
    x_out: Array  # (K, d) x^{k+1} it sent
    u_out: Array  # (K, d) ũ^{k+1} it sent
    active: Array  # (K,) bool, False once the run froze at its PLF


def transcript(messages: dict, x1: Array, u1: Array | None = None) -> Transcript:
    """The batons of one run from ``simulate(..., observe=True)``'s ``observed["messages"]``.

    Args:
      messages: dict with ``"x"``, ``"u"`` (K, d), ``"sender"``, ``"active"`` (K,).
      x1: (d,) the public initial x^1.
      u1: (d,) the initial ũ^1 (default 0).
    """
    x_out, u_out = jnp.asarray(messages["x"]), jnp.asarray(messages["u"])
    u1 = jnp.zeros_like(x1) if u1 is None else u1
    return Transcript(sender=jnp.asarray(messages["sender"], jnp.int32),
                      x_in=jnp.concatenate([x1[None], x_out[:-1]]),
                      u_in=jnp.concatenate([u1[None], u_out[:-1]]),
                      x_out=x_out, u_out=u_out, active=jnp.asarray(messages["active"], bool))


def x_channel_points(tr: Transcript, beta, *, n_agents: int = 1, l1: float = 0.0):
    """``y_{i_k}^k`` from consecutive batons (x-channel leak): (K, d) points, (K, d) known mask.

    Inverts ``x^{k+1} = prox_{nr}(x^k − ũ^k − β(x^k − y))``: with ``l1 = 0`` (r = 0) everywhere;
    with ``r = l1‖·‖₁`` only where ``x^{k+1} ≠ 0`` (there ``v = x^{k+1} + n·l1·sign(x^{k+1})``).
    """
    v = tr.x_out + n_agents * l1 * jnp.sign(tr.x_out)  # prox⁻¹ on the support
    known = (tr.x_out != 0) | (l1 == 0)
    y = tr.x_in + (v - tr.x_in + tr.u_in) / beta  # (7b) solved for y_i^k
    return y, known


@functools.partial(jax.jit, static_argnames=("n_agents",))
def x_channel_gradients(tr: Transcript, alpha, beta, n_agents: int):
    """Exact local gradients from the x-channel (r = 0), one activation late.

    At agent i's activation k the recovered ``y_i^k`` completes its previous activation k′:
    ``∇f_i(y_i^{k′}) = (y_i^{k′} − y_i^k)/α_i + λ_i^{k′} + β(x^{k′} − y_i^{k′})`` (7a, 7c) and
    ``λ_i ← λ_i + β(x^{k′+1} − y_i^k)`` (7d), with ``λ_i = 0`` and ``y_i = x^1`` initially.

    Returns:
      ``(points, grads, agent, valid)``: (K, d) the point y_i^{k′} and (K, d) the gradient there,
      (K,) the agent, (K,) whether step k completed a previous activation of its agent.
    """
    y_now, _ = x_channel_points(tr, beta)
    alpha = jnp.broadcast_to(jnp.asarray(alpha, y_now.dtype), (n_agents,))
    d = y_now.shape[1]
    init = {"lam": jnp.zeros((n_agents, d), y_now.dtype),
            "y": jnp.zeros((n_agents, d), y_now.dtype),
            "x_in": jnp.zeros((n_agents, d), y_now.dtype),
            "x_out": jnp.zeros((n_agents, d), y_now.dtype), "seen": jnp.zeros((n_agents,), bool)}

    def visit(c, row):
        i, y, x_in, x_out, act = row
        lam, y_prev, xp_in, xp_out = c["lam"][i], c["y"][i], c["x_in"][i], c["x_out"][i]
        lam_half = lam + beta * (xp_in - y_prev)  # (7a) at the previous activation
        grad = (y_prev - y) / alpha[i] + lam_half  # (7c) solved for the gradient
        lam_new = lam + beta * (xp_out - y)  # (7d)
        valid = c["seen"][i] & act
        seen_lam = jnp.where(valid, lam_new, lam)
        c = {"lam": c["lam"].at[i].set(seen_lam), "y": c["y"].at[i].set(jnp.where(act, y, y_prev)),
             "x_in": c["x_in"].at[i].set(jnp.where(act, x_in, xp_in)),
             "x_out": c["x_out"].at[i].set(jnp.where(act, x_out, xp_out)),
             "seen": c["seen"].at[i].set(c["seen"][i] | act)}
        return c, (y_prev, grad, i, valid)

    rows = (tr.sender, y_now, tr.x_in, tr.x_out, tr.active)
    _, (points, grads, agent, valid) = jax.lax.scan(visit, init, rows)
    return points, grads, agent, valid


@functools.partial(jax.jit, static_argnames=("n_agents",))
def appendix_a_gradients(tr: Transcript, alpha, beta, n_agents: int, x1: Array):
    """The paper's Appendix A recursion on the u-channel (exact for RECAL, noisy for DP-RECAL).

    Returns:
      ``(points, grads, agent)``: (K, d) the inferred y_{i_k}^k, (K, d) the inferred
      ``∇f_{i_k}(y_{i_k}^k)`` and (K,) the agent.
    """
    d = x1.shape[0]
    alpha = jnp.broadcast_to(jnp.asarray(alpha, x1.dtype), (n_agents,))
    init = {"lam": jnp.zeros((n_agents, d), x1.dtype),
            "y": jnp.broadcast_to(x1, (n_agents, d))}

    def visit(c, row):
        i, x_in, x_out, u_in, u_out, act = row
        lam, y = c["lam"][i], c["y"][i]
        lam_half = lam + beta * (x_in - y)  # App. A l.1
        lam_new = u_out - u_in + lam  # App. A l.2
        y_new = y + x_out - x_in + (lam_half - lam_new) / beta  # App. A l.3
        grad = (y - y_new) / alpha[i] + lam_half  # App. A l.4
        c = {"lam": c["lam"].at[i].set(jnp.where(act, lam_new, lam)),
             "y": c["y"].at[i].set(jnp.where(act, y_new, y))}
        return c, (y, grad, i)

    rows = (tr.sender, tr.x_in, tr.x_out, tr.u_in, tr.u_out, tr.active)
    _, out = jax.lax.scan(visit, init, rows)
    return out


__all__ = ["Transcript", "appendix_a_gradients", "transcript", "x_channel_gradients",
           "x_channel_points"]
