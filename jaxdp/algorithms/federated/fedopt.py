r"""Adaptive federated optimization: FedAdam, FedYogi, FedAdagrad with optax server optimizers.

Reddi, Charles, Zaheer, Garrett, Rush, Konečný, Kumar & McMahan, "Adaptive federated
optimization", ICLR 2021, Algorithm 2 (FedOpt): the clients run FedAvg's local steps from ``x^t``;
the server forms the pseudo-gradient ``Δ_t = (1/|S|) Σ_{i∈S} (y_i − x^t)`` (``weighting``: uniform
as in the paper, or by data size) and takes one step of a server optimizer on ``−Δ_t``:
``x^{t+1} = x^t + ServerOpt(−Δ_t)``. Hyperparameters from Params: η = ``server_lr``, β₁, β₂,
τ = ``tau``.

Default (``bias_correction=False``): the server step exactly as printed in Reddi et al.'s
Algorithm 2 (lines "m_t = …", "v_t = …", "x_{t+1} = …"), an ``optax.GradientTransformation`` of
our own (:func:`reddi_server`):

* ``m_t = β₁ m_{t−1} + (1 − β₁) Δ_t``, ``m_{−1} = 0``;
* FedAdagrad ``v_t = v_{t−1} + Δ_t²``; FedYogi ``v_t = v_{t−1} − (1 − β₂) Δ_t² sign(v_{t−1} − Δ_t²)``;
  FedAdam ``v_t = β₂ v_{t−1} + (1 − β₂) Δ_t²``; ``v_{−1} = τ²`` (the paper's ``v_{−1} ≥ τ²``;
  the config field ``v0`` sets another value, e.g. 0 as decent-bench initializes it);
* ``x_{t+1} = x_t + η m_t / (√v_t + τ)``, no bias correction.

optax has no uncorrected form of these: ``optax.scale_by_adam`` always bias-corrects, and a chain
of ``optax.ema`` (``debias=False``) and ``optax.scale_by_rms`` cannot express ``m_t/√v_t`` with
``v_t`` the second moment of ``Δ_t`` rather than of ``m_t``, hence the small transformation.

``bias_correction=True``: optax's optimizers (the previous behaviour, kept as an option):

* FedAdam — ``optax.adam(η, β₁, β₂, eps=τ)``: Kingma & Ba's bias correction of ``m_t``, ``v_t``.
* FedYogi — ``optax.yogi(η, β₁, β₂, eps=τ)``: bias-corrected, ``v_{−1} = 10⁻⁶``.
* FedAdagrad — ``optax.adagrad(η, initial_accumulator_value=τ², eps=0)``: ``v_t = v_{t−1} + Δ_t²``,
  step ``ηΔ_t/√v_t``, without momentum.

The optimizer's state (a pytree shaped like one model ``(d,)``) is part of the algorithm's state;
``per_agent=False`` Params (one server).

A round whose Poisson selection is empty (``selection="poisson"``) has no pseudo-gradient: the
server skips it, keeping the model and the optimizer's moments (an update on Δ_t = 0 would still
move the model through the momentum m_t), as FedAvg leaves x^t and decent-bench skips the round.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, NamedTuple

import chex
import jax
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


class ReddiState(NamedTuple):
    """Server state of Reddi et al.'s Algorithm 2: first and second moments m_t, v_t."""

    m: jnp.ndarray
    v: jnp.ndarray


SECOND_MOMENT = {
    "adam": lambda v, d2, b2: b2 * v + (1 - b2) * d2,
    "yogi": lambda v, d2, b2: v - (1 - b2) * d2 * jnp.sign(v - d2),
    "adagrad": lambda v, d2, b2: v + d2,
}
"""Reddi et al. 2021, Algorithm 2: v_t from v_{t−1} and Δ_t² for each server optimizer."""


def reddi_server(optimizer: str, lr, b1, b2, tau, v0) -> optax.GradientTransformation:
    """Reddi et al. 2021, Algorithm 2 as printed: applied to the pseudo-gradient g = −Δ_t it
    returns ``η m_t / (√v_t + τ)`` (no bias correction; m_{−1} = 0, v_{−1} = v0)."""
    second_moment = SECOND_MOMENT[optimizer]

    def init(x):
        return ReddiState(m=jnp.zeros_like(x), v=jnp.full_like(x, v0))

    def update(g, state, params=None):
        del params
        delta = -g
        m = b1 * state.m + (1 - b1) * delta
        v = second_moment(state.v, delta * delta, b2)
        return lr * m / (jnp.sqrt(v) + tau), ReddiState(m=m, v=v)

    return optax.GradientTransformation(init, update)


OPTIMIZERS = {
    "adam": lambda p: optax.adam(p.server_lr, b1=p.b1, b2=p.b2, eps=p.tau),
    "yogi": lambda p: optax.yogi(p.server_lr, b1=p.b1, b2=p.b2, eps=p.tau),
    "adagrad": lambda p: optax.adagrad(p.server_lr, initial_accumulator_value=p.tau ** 2,
                                       eps=0.0),
}
"""Server optimizer name → bias-corrected optax transform built from Params (see the module)."""


@dataclasses.dataclass(frozen=True)
class FedOpt(Federated):
    """FedOpt (Reddi et al. 2021, Algorithm 2) with the server optimizer ``optimizer``."""

    optimizer: ClassVar[str] = "adam"
    params_type = FedOptParams
    provenance = "standard"
    tracks_loss = True
    weighting: str = "uniform"
    bias_correction: bool = False
    v0: float | None = None

    def __post_init__(self):
        super().__post_init__()
        if self.v0 is not None and not self.v0 >= 0:
            raise ValueError(f"{type(self).__name__}: v0 must be >= 0 (v_{{-1}} of Reddi et al.'s "
                             f"Algorithm 2) or None for τ²; got {self.v0!r}")
        if self.bias_correction and self.v0 is not None:
            raise ValueError(f"{type(self).__name__}: v0={self.v0!r} applies to the printed "
                             "server step only; optax's (bias_correction=True) fixes its own")

    def server(self, params):
        """The server optimizer: Reddi's printed step, or optax's with ``bias_correction``."""
        if self.bias_correction:
            return OPTIMIZERS[self.optimizer](params)
        v0 = params.tau ** 2 if self.v0 is None else self.v0
        return reddi_server(self.optimizer, params.server_lr, params.b1, params.b2, params.tau, v0)

    def init(self, key, problem, network, params):
        base = super().init(key, problem, network, params)
        return self.extend(base, FedOptState, opt=self.server(params).init(base.x[0]))

    def step(self, state, noise, problem, network, params, k):
        del k
        n, x = state.x.shape[0], state.x
        rows = self.rows(noise, state, problem)
        y = local_descent(x, problem, params.alpha, self.local_steps, jnp.zeros_like, rows)
        upload = rows.put(y - rows.take(x))
        delta, sent = self.average(network, upload, self.weights(problem, rows.mask, x.dtype),
                                   "update")
        update, opt = self.server(params).update(-delta, state.opt, x[0])  # pseudo-gradient −Δ_t
        # A round that selects nobody has no Δ_t: the server skips it (model and moments kept),
        # as FedAvg's average of nothing leaves x^t and decent-bench skips the round.
        anyone = jnp.any(rows.mask)
        opt = jax.tree.map(lambda new, old: jnp.where(anyone, new, old), opt, state.opt)
        x_new = broadcast(jnp.where(anyone, x[0] + update, x[0]), n)
        state = self.advance(state, rows, y, problem, x=x_new, opt=opt)
        return state, {"update": sent, "x": x_new}


@dataclasses.dataclass(frozen=True)
class FedAdam(FedOpt):
    """FedAdam (Reddi et al. 2021, Algorithm 2): printed server step on −Δ_t; see the module."""

    name = "fedadam"
    cites = (("Reddi et al., ICLR 2021, Algorithm 2 (FedAdam), server step as printed "
              "(optax.adam with bias_correction=True)"),)
    optimizer = "adam"


@dataclasses.dataclass(frozen=True)
class FedYogi(FedOpt):
    """FedYogi (Reddi et al. 2021, Algorithm 2): printed server step on −Δ_t; see the module."""

    name = "fedyogi"
    cites = (("Reddi et al., ICLR 2021, Algorithm 2 (FedYogi), server step as printed "
              "(optax.yogi with bias_correction=True)"),)
    optimizer = "yogi"


@dataclasses.dataclass(frozen=True)
class FedAdagrad(FedOpt):
    """FedAdagrad (Reddi et al. 2021, Algorithm 2): printed server step on −Δ_t (v_{−1} = τ²);
    see the module."""

    name = "fedadagrad"
    cites = (("Reddi et al., ICLR 2021, Algorithm 2 (FedAdagrad), server step as printed "
              "(optax.adagrad with bias_correction=True)"),)
    optimizer = "adagrad"


__all__ = [
    "OPTIMIZERS",
    "SECOND_MOMENT",
    "FedAdagrad",
    "FedAdam",
    "FedOpt",
    "FedOptParams",
    "FedOptState",
    "FedYogi",
    "ReddiState",
    "reddi_server",
]
