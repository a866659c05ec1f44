"""Gradient tracking with variance-reduced minibatch gradients (f_i = (1/m_i) Σ_h f_{i,h}).

Each f_{i,h} is one sample's loss plus the penalty, so the masked mean of the f_{i,h} is f_i.
Minibatches of ``batch_size`` distinct real rows are drawn per agent in ``noise`` and injected into
``step`` (the reference tests feed the same rows to a per-node loop).

* **GT-SAGA** — Xin, Khan & Kar, "Variance-reduced decentralized stochastic optimization with
  accelerated convergence", IEEE TSP 2020, Algorithm 1 (GT-SAGA), adapt-then-combine form:
  ``y⁺ = W(y + g^k − g^{k−1})``, ``x⁺ = W(x − α y⁺)``, y⁰ = g^{−1} = 0, SAGA table updated with
  the gradients evaluated at x^k.
* **GT-SARAH** — Xin, Khan & Kar, "Fast decentralized nonconvex finite-sum optimization with
  recursive variance reduction", SIAM J. Optim. 2022, Algorithm 2.1: a full local gradient every
  q + 1 steps, SARAH's recursive estimator in between.
* **GT-VR** — gradient tracking with the loopless SVRG estimator (Kovalev, Horváth & Richtárik,
  ALT 2020), as GT-SVRG of Xin, Khan & Kar 2020 but with the snapshot refreshed by an
  independent coin of probability p per agent and step.
"""
from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp

from jaxdp._types import AgentArray, Array
from jaxdp.algorithms._sampling import (
    check_minibatch, draw_batches, per_sample_grads, sample_counts,
)
from jaxdp.core import Algorithm, param, zeros_like_models
from jaxdp.algorithms.catalogue.classic import StepParams
from jaxdp.algorithms._checks import check_count
from jaxdp.algorithms.catalogue._common import step


@chex.dataclass(frozen=True)
class GTVRParams:
    alpha: float = param(0.05, domain="positive", doc="α, step size")
    p: float = param(0.3, domain="fraction",
                     doc="p, probability that an agent refreshes its snapshot at a step")


@chex.dataclass(frozen=True)
class SAGAState:
    x: AgentArray  # (N, d)
    y: AgentArray  # (N, d) tracker
    g: AgentArray  # (N, d) the last SAGA estimate g^{k−1}
    table: Array  # (N, m, d) ∇f_{i,h} at each row's last evaluation point (0 on padding)
    n_rows: Array  # (N,) int32 m_i


@chex.dataclass(frozen=True)
class SARAHState:
    x: AgentArray  # (N, d)
    x_prev: AgentArray  # (N, d)
    y: AgentArray  # (N, d) tracker, y⁰ = 0
    v: AgentArray  # (N, d) SARAH estimate, v^{−1} = 0
    n_rows: Array  # (N,) int32


@chex.dataclass(frozen=True)
class GTVRState:
    x: AgentArray  # (N, d)
    y: AgentArray  # (N, d) tracker, y⁰ = ∇F(x⁰)
    v: AgentArray  # (N, d) SVRG estimate, v⁰ = ∇F(x⁰)
    tau: AgentArray  # (N, d) snapshot τ
    mu: AgentArray  # (N, d) ∇F(τ)
    n_rows: Array  # (N,) int32


@dataclasses.dataclass(frozen=True)
class _Minibatch(Algorithm):
    batch_size: int = 1  # b, distinct rows per agent and step (static)

    def __post_init__(self):
        check_count(self.name, "batch_size", self.batch_size)

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        check_minibatch(self.name, problem, self.batch_size)

    def noise(self, key, state, params, k):
        del params, k
        return {"batch": _draw_batches(key, state.n_rows, self.batch_size)}  # (N, b)


_draw_batches = jax.jit(draw_batches, static_argnums=(2, 3))  # one compile, also when eager


def _batch_mean(problem, X, batch) -> AgentArray:
    """``(1/b) Σ_{h ∈ batch_i} ∇f_{i,h}(x_i)``, (N, d)."""
    return jnp.mean(per_sample_grads(problem, X, batch), axis=1)


@dataclasses.dataclass(frozen=True)
class GTSAGA(_Minibatch):
    """GT-SAGA (Xin et al. 2020, Alg. 1), ATC form, batch B_i^k of b rows:

    ``g^k_i = (1/b) Σ_{h∈B} (∇f_{i,h}(x_i^k) − T_{i,h}) + (1/m_i) Σ_h T_{i,h}``, then
    ``T_{i,h} ← ∇f_{i,h}(x_i^k)`` for h ∈ B; ``y⁺ = W(y + g^k − g^{k−1})``; ``x⁺ = W(x − α y⁺)``.
    T starts at ∇f_{i,h}(x⁰); y⁰ = g^{−1} = 0.
    """

    name = "gt_saga"
    cites = ("Xin, Khan & Kar, IEEE TSP 2020, Algorithm 1 (GT-SAGA)",)
    provenance = "standard"
    params_type = StepParams

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        rows = jnp.broadcast_to(jnp.arange(problem.n_samples), problem.mask.shape)
        table = per_sample_grads(problem, x0, rows) * problem.mask[..., None]
        return SAGAState(x=x0, y=jnp.zeros_like(x0), g=jnp.zeros_like(x0), table=table,
                         n_rows=sample_counts(problem))

    def step(self, state, noise, problem, network, params, k):
        del k
        batch = noise["batch"]
        fresh = per_sample_grads(problem, state.x, batch)  # (N, b, d)
        stale = jax.vmap(lambda t, idx: t[idx])(state.table, batch)
        avg = jnp.sum(state.table, axis=1) / state.n_rows[:, None].astype(state.x.dtype)
        g = jnp.mean(fresh - stale, axis=1) + avg
        table = jax.vmap(lambda t, idx, v: t.at[idx].set(v))(state.table, batch, fresh)
        q = state.y + g - state.g
        y_new = network.mix(q, message="q")
        s = state.x - step(params.alpha, state.x) * y_new
        x_new = network.mix(s, message="s")
        return SAGAState(x=x_new, y=y_new, g=g, table=table, n_rows=state.n_rows), \
            {"q": q, "s": s}


@dataclasses.dataclass(frozen=True)
class GTSARAH(_Minibatch):
    """GT-SARAH (Xin et al. 2022, Alg. 2.1), q = ``inner_steps``:

    ``v^k = ∇F(x^k)`` when k ≡ 0 (mod q + 1), else
    ``v^k = v^{k−1} + (1/b) Σ_{h∈B}(∇f_{i,h}(x_i^k) − ∇f_{i,h}(x_i^{k−1}))``;
    ``y⁺ = W y + v^k − v^{k−1}``; ``x⁺ = W x − α y⁺``; y⁰ = v^{−1} = 0.
    """

    name = "gt_sarah"
    cites = ("Xin, Khan & Kar, SIAM J. Optim. 2022 (GT-SARAH)",)
    provenance = "standard"
    params_type = StepParams
    inner_steps: int = 5  # q, SARAH steps between two full local gradients (static)

    def __post_init__(self):
        super().__post_init__()
        check_count(self.name, "inner_steps", self.inner_steps)

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        z = jnp.zeros_like(x0)
        return SARAHState(x=x0, x_prev=x0, y=z, v=z, n_rows=sample_counts(problem))

    def step(self, state, noise, problem, network, params, k):
        x, batch = state.x, noise["batch"]
        recursive = state.v + _batch_mean(problem, x, batch) - _batch_mean(
            problem, state.x_prev, batch)
        v = jnp.where(k % (self.inner_steps + 1) == 0, problem.local_grads(x), recursive)
        y_new = network.mix(state.y, message="y") + v - state.v
        x_new = network.mix(x, message="x") - step(params.alpha, x) * y_new
        return SARAHState(x=x_new, x_prev=x, y=y_new, v=v, n_rows=state.n_rows), \
            {"y": state.y, "x": x}


@dataclasses.dataclass(frozen=True)
class GTVR(_Minibatch):
    """GT-VR: ``x⁺ = W(x − α y)``; with probability p (coin ℓ_i) ``τ_i ← x_i⁺`` and
    ``μ_i ← ∇f_i(τ_i)``; ``v⁺ = (1/b) Σ_{h∈B}(∇f_{i,h}(x_i⁺) − ∇f_{i,h}(τ_i)) + μ_i``;
    ``y⁺ = W(y + v⁺ − v)``. τ⁰ = x⁰ and y⁰ = v⁰ = μ⁰ = ∇F(x⁰).
    """

    name = "gt_vr"
    cites = (
        "Kovalev, Horváth & Richtárik, ALT 2020 (loopless SVRG)",
        "Xin, Khan & Kar 2020 (GT-SVRG)",
    )
    provenance = "standard"
    params_type = GTVRParams

    def init(self, key, problem, network, params):
        del key, params
        x0 = zeros_like_models(problem, network)
        g0 = problem.local_grads(x0)
        return GTVRState(x=x0, y=g0, v=g0, tau=x0, mu=g0, n_rows=sample_counts(problem))

    def noise(self, key, state, params, k):
        out = super().noise(jax.random.fold_in(key, 0), state, params, k)
        return {**out, "u": jax.random.uniform(jax.random.fold_in(key, 1), state.n_rows.shape,
                                                state.x.dtype)}  # ℓ_i = [u_i < p]

    def step(self, state, noise, problem, network, params, k):
        del k
        s = state.x - step(params.alpha, state.x) * state.y
        x_new = network.mix(s, message="s")
        snap = (noise["u"] < params.p)[:, None]
        tau = jnp.where(snap, x_new, state.tau)
        mu = jnp.where(snap, problem.local_grads(x_new), state.mu)
        batch = noise["batch"]
        v = _batch_mean(problem, x_new, batch) - _batch_mean(problem, tau, batch) + mu
        q = state.y + v - state.v
        y_new = network.mix(q, message="q")
        return GTVRState(x=x_new, y=y_new, v=v, tau=tau, mu=mu, n_rows=state.n_rows), \
            {"s": s, "q": q}


__all__ = ["GTSAGA", "GTSARAH", "GTVR", "GTVRParams"]
