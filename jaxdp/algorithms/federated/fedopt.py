r"""Adaptive federated optimization: FedAdam, FedYogi, FedAdagrad with optax server optimizers.

Reddi, Charles, Zaheer, Garrett, Rush, Konečný, Kumar & McMahan, "Adaptive federated
optimization", ICLR 2021, Algorithm 2 (FedOpt): the clients run FedAvg's local steps from ``x^t``;
the server forms the pseudo-gradient ``Δ_t = (1/|S|) Σ_{i∈S} (y_i − x^t)`` (``weighting``: uniform
as in the paper, or by data size) and takes one step of a server optimizer on ``−Δ_t``:
``x^{t+1} = x^t + ServerOpt(−Δ_t)``. The optimizer is optax's (the library's choice for
optimizers), with hyperparameters from Params (η = ``server_lr``, β₁, β₂, τ = ``tau``):

* FedAdam — ``optax.adam(η, β₁, β₂, eps=τ)``: Reddi's FedAdam with Kingma & Ba's bias correction
  of ``m_t`` and ``v_t`` (the paper's Algorithm 2 has none; with it the first steps are not
  damped by ``(1 − β)``).
* FedYogi — ``optax.yogi(η, β₁, β₂, eps=τ)``: ``v_t = v_{t−1} − (1 − β₂)Δ_t² sign(v_{t−1} − Δ_t²)``
  as in Reddi et al. (Zaheer et al. 2018), with optax's bias correction and ``v_{−1} = 10⁻⁶``.
* FedAdagrad — ``optax.adagrad(η, initial_accumulator_value=τ², eps=0)``: ``v_t = v_{t−1} + Δ_t²``,
  ``v_{−1} = τ²`` (Reddi's ``v_{−1} ≥ τ²``), step ``ηΔ_t/√v_t``, without momentum (β₁ = 0, one of
  the paper's settings; τ enters through ``v_{−1}``).

The optimizer's state (optax's pytree, shaped like one model ``(d,)``) is part of the algorithm's
state; ``per_agent=False`` Params (one server).
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import chex
import jax.numpy as jnp
import optax

from jaxdp._types import AgentArray
from jaxdp.algorithms.federated._rounds import Federated, broadcast, local_descent
from jaxdp.core import Domain, param

OPEN_UNIT = Domain(0.0, 1.0, hi_open=True)


@chex.dataclass(frozen=True)
class FedOptParams:
    alpha: float = param(0.05, domain="positive", doc="η_l, client learning rate")
    server_lr: float = param(0.1, domain="positive", per_agent=False,
                             doc="η, server learning rate of the optimizer")
    b1: float = param(0.9, domain=OPEN_UNIT, per_agent=False, doc="β₁, first-moment decay")
    b2: float = param(0.99, domain=OPEN_UNIT, per_agent=False, doc="β₂, second-moment decay")
    tau: float = param(1e-3, domain="positive", per_agent=False,
                       doc="τ, adaptivity (optax eps; FedAdagrad: v_{−1} = τ²)")


@chex.dataclass(frozen=True)
class FedOptState:
    x: AgentArray  # (N, d) server model (equal rows)
    counts: jnp.ndarray  # (N,) int past selections of each client
    opt: Any  # optax state of the server optimizer, shaped like one model (d,)


OPTIMIZERS = {
    "adam": lambda p: optax.adam(p.server_lr, b1=p.b1, b2=p.b2, eps=p.tau),
    "yogi": lambda p: optax.yogi(p.server_lr, b1=p.b1, b2=p.b2, eps=p.tau),
    "adagrad": lambda p: optax.adagrad(p.server_lr, initial_accumulator_value=p.tau ** 2,
                                       eps=0.0),
}
"""Server optimizer name → optax transform built from Params (see the module)."""


@dataclasses.dataclass(frozen=True)
class FedOpt(Federated):
    """FedOpt (Reddi et al. 2021, Algorithm 2) with the optax server optimizer ``optimizer``."""

    optimizer: ClassVar[str] = "adam"
    params_type = FedOptParams
    provenance = "standard"
    weighting: str = "uniform"

    def server(self, params):
        return OPTIMIZERS[self.optimizer](params)

    def init(self, key, problem, network, params):
        base = super().init(key, problem, network, params)
        return FedOptState(x=base.x, counts=base.counts,
                           opt=self.server(params).init(base.x[0]))

    def step(self, state, noise, problem, network, params, k):
        del k
        n, x = state.x.shape[0], state.x
        mask = self.select_clients(noise, state, problem)
        y = local_descent(x, problem, params.alpha, self.local_steps, jnp.zeros_like)
        upload = jnp.where(mask[:, None], y - x, 0)
        delta, sent = self.average(network, upload, self.weights(problem, mask, x.dtype),
                                   "update")
        update, opt = self.server(params).update(-delta, state.opt, x[0])  # pseudo-gradient −Δ_t
        x_new = broadcast(x[0] + update, n)
        state = FedOptState(x=x_new, counts=state.counts + mask, opt=opt)
        return state, {"update": sent, "x": x_new}


@dataclasses.dataclass(frozen=True)
class FedAdam(FedOpt):
    """FedAdam (Reddi et al. 2021, Algorithm 2): server step optax.adam on −Δ_t; see the module."""

    name = "fedadam"
    cites = ("Reddi et al., ICLR 2021, Algorithm 2 (FedAdam), server optax.adam",)
    optimizer = "adam"


@dataclasses.dataclass(frozen=True)
class FedYogi(FedOpt):
    """FedYogi (Reddi et al. 2021, Algorithm 2): server step optax.yogi on −Δ_t; see the module."""

    name = "fedyogi"
    cites = ("Reddi et al., ICLR 2021, Algorithm 2 (FedYogi), server optax.yogi",)
    optimizer = "yogi"


@dataclasses.dataclass(frozen=True)
class FedAdagrad(FedOpt):
    """FedAdagrad (Reddi et al. 2021, Algorithm 2): server step optax.adagrad on −Δ_t (v_{−1} =
    τ², no momentum); see the module."""

    name = "fedadagrad"
    cites = ("Reddi et al., ICLR 2021, Algorithm 2 (FedAdagrad), server optax.adagrad",)
    optimizer = "adagrad"


__all__ = ["FedAdagrad", "FedAdam", "FedOpt", "FedOptParams", "FedOptState", "FedYogi",
           "OPTIMIZERS"]
