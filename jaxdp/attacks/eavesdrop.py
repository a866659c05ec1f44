"""Tier-1 eavesdropper on DPP² (paper 000: Ou et al. 2025, arXiv 2511.02283, Sec. III-C).

DPP²'s first tier merges the state and gradient with dual variables weighted by one scalar η^k per
step, secret to an outsider: ``y^k = x^k + (1 − η^k) d^k + w^k`` (16). The paper claims this keeps
protecting "even when noise variance approaches zero" (Sec. III-C). An eavesdropper who sees every
message y^k, z^k and knows α, β and P defeats it by least squares, one scalar per step:

* ``d⁰ = 0``, so ``s⁰ = x⁰ + w⁰ = y⁰``, and ``d^{k+1} = d^k + s^k`` with ``s^k = x^k + w^k``
  (the dual d is η-free, by (16)–(19)): the attacker tracks ``d̂`` from its own estimates ``ŝ``.
* (18) is ``x^{k+1} = s^k − α z^k + β P z^k + α e^k``, so ``x̂^{k+1} = ŝ^k − α z^k + β P z^k``.
* ``y^k − x̂^k = (1 − η^k) d^k + w^k + (x^k − x̂^k)``: one scalar over all N·d coordinates,
  ``1 − η̂^k = ⟨y^k − x̂^k, d̂^k⟩ / ‖d̂^k‖²``, then ``ŝ^k = y^k − (1 − η̂^k) d̂^k``.

With zero noise every step is exact (η̂ = η and x̂ = x to rounding); with noise the error is of the
order of the noise (α e^{k−1} in x̂, w^k in the residual). ρ is not needed. η⁰ multiplies d⁰ = 0 and
cannot be recovered (reported as NaN), nor can any η^k with d^k = 0; x̂⁰ = y⁰ = x⁰ + w⁰.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._compiler import jit
from jaxdp.engine import step_keys, sweep


class Tier1Recovery(NamedTuple):
    """What the eavesdropper recovers from K steps of messages.

    Attributes:
      eta: ``(K,)`` η̂^k; NaN where d^k = 0 (k = 0 always; k = 1 when y⁰ = 0).
      x: ``(K, N, d)`` x̂^k, the agents' states before step k.
      s: ``(K, N, d)`` ŝ^k, the noisy states x^k + w^k.
    """

    eta: jax.Array
    x: jax.Array
    s: jax.Array


def tier1_attack(y, z, P, alpha, beta) -> Tier1Recovery:
    """Recover η^k and x^k from DPP²'s messages by per-step least squares (jittable, vmappable).

    Args:
      y: ``(K, N, d)`` the y-messages of steps 0..K−1 (16).
      z: ``(K, N, d)`` the z-messages (17).
      P: ``(N, N)`` the algorithm's Laplacian-like matrix.
      alpha, beta: DPP²'s step parameters (18).

    Returns:
      A :class:`Tier1Recovery`.
    """
    y, z, P = jnp.asarray(y), jnp.asarray(z), jnp.asarray(P, jnp.asarray(y).dtype)

    def predict(s, z_k):  # x̂^{k+1} = ŝ^k − α z^k + β P z^k, (18) without e
        return s - alpha * z_k + beta * jnp.tensordot(P, z_k, axes=1)

    def step(carry, yz):
        d_hat, x_hat = carry
        y_k, z_k = yz
        dd = jnp.vdot(d_hat, d_hat)
        seen = dd > 0  # d^k = 0 (x⁰ = 0 without noise gives d¹ = 0): η^k is not identifiable
        one_minus_eta = jnp.where(seen, jnp.vdot(y_k - x_hat, d_hat) / jnp.where(seen, dd, 1), 0)
        s_k = y_k - one_minus_eta * d_hat  # least squares over all N·d coordinates
        eta = jnp.where(seen, 1 - one_minus_eta, jnp.nan)
        return (d_hat + s_k, predict(s_k, z_k)), (eta, x_hat, s_k)

    s0 = y[0]  # d⁰ = 0: y⁰ = x⁰ + w⁰
    _, (eta, x_hat, s_hat) = jax.lax.scan(step, (s0, predict(s0, z[0])), (y[1:], z[1:]))
    nan = jnp.full((1,), jnp.nan, y.dtype)
    return Tier1Recovery(eta=jnp.concatenate([nan, eta]), x=jnp.concatenate([s0[None], x_hat]),
                         s=jnp.concatenate([s0[None], s_hat]))


def eta_sequence(algorithm, params, seeds, steps: int, dtype) -> np.ndarray:
    """The η^0..η^{K−1} that runs of ``algorithm`` with integer ``seeds`` used (the ground truth).

    Rebuilds the engine's per-step keys (``jaxdp.engine._simulate``: the algorithm's noise key of
    step k is ``jaxdp.engine.step_keys(key(seed), k)[0]``); ``dtype`` is the run's
    float dtype (the draw depends on it).

    Returns:
      ``(S, K)`` for ``S`` seeds.
    """
    def eta_at(seed, k):
        noise_key, _ = step_keys(jax.random.key(seed), k)
        state = _XOnly(x=jnp.zeros((1, 1), dtype))  # η has its own stream: x's shape is moot
        return algorithm.noise(noise_key, state, params, k)["eta"]

    per_seed = jax.vmap(eta_at, in_axes=(None, 0))
    seeds = jnp.asarray(seeds, jnp.uint32)
    return np.asarray(jit(jax.vmap(per_seed, in_axes=(0, None)))(seeds, jnp.arange(steps)))


class _XOnly(NamedTuple):
    x: jax.Array


def tier1_recovery_study(algorithm, problem, network, params_grid, *, steps: int, seeds: int,
                         devices=None) -> dict:
    """Run DPP² over a Params grid (e.g. noise scales) and attack every run's messages.

    Args:
      algorithm: a :class:`~jaxdp.algorithms.DPP2` (random η).
      problem, network: as for :func:`jaxdp.sweep`.
      params_grid: ``DPP2Params`` with a leading grid axis G (build with :func:`jaxdp.grid`).
      steps: K.
      seeds: S.

    Returns:
      ``{"x_error": (S, G), "eta_error": (S, G)}``: per run, the median over k = 1..K−1 of the
      relative state error ``‖x̂^k − x^k‖/‖x^k‖`` and of ``|η̂^k − η^k|`` (where identifiable).
    """
    trace = sweep(algorithm, problem, network, params_grid, steps=steps, seeds=seeds,
                  record_every=steps, observe=True, progress=False, devices=devices)
    msgs, models = trace.observed["messages"], trace.observed["models"]  # (S, G, K, ...)
    x0 = np.zeros_like(models[:, :, :1])
    x_true = np.concatenate([x0, models[:, :, :-1]], axis=2)  # x^k, k = 0..K-1
    attack = jit(jax.vmap(jax.vmap(lambda y, z, a, b: tier1_attack(y, z, network.P, a, b),
                                   in_axes=(0, 0, 0, 0)), in_axes=(0, 0, None, None)))
    rec = attack(msgs["y"], msgs["z"], params_grid.alpha, params_grid.beta)
    err = np.linalg.norm(np.asarray(rec.x) - x_true, axis=(-2, -1))[..., 1:]
    x_err = np.median(err / np.linalg.norm(x_true, axis=(-2, -1))[..., 1:], axis=-1)
    grid_size = np.shape(params_grid.alpha)[0]
    etas = np.stack([eta_sequence(algorithm, jax.tree.map(lambda a, g=g: a[g], params_grid),
                                  trace.meta["seeds"], steps, problem.features.dtype)
                     for g in range(grid_size)], axis=1)  # (S, G, K)
    eta_err = np.nanmedian(np.abs(np.asarray(rec.eta) - etas)[..., 1:], axis=-1)
    return {"x_error": x_err, "eta_error": eta_err}


__all__ = ["Tier1Recovery", "eta_sequence", "tier1_attack", "tier1_recovery_study"]
