"""MAFALDA-SGD's optimal encoder and a decoder optimised at a fixed pairwise budget (MFDL: Bellet,
Cyffers, Frey, Gaudel, Lerévérend & Taïani, ICLR 2026, arXiv:2510.17480): :func:`mafalda_encoder`
minimises MFDL's utility surrogate at a fixed LDP budget; :func:`pairwise_decoder` the models'
noise at a fixed worst pairwise ``μ`` (:func:`~jaxdp.privacy.pairwise.release_mu2`). Ideal
Gaussian mechanism, non-adaptive contributions (:mod:`jaxdp.privacy._factorization`).
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._compiler import jit
from jaxdp._precision import einsum, matmul
from jaxdp.privacy._factorization import (
    LinearRelease,
    Observer,
    observer_mu2,
    observers,
    participation_classes,
)
from jaxdp.privacy._gossip_release import block_powers, gossip_release

# --- MAFALDA-SGD's correlation (MFDL) ---------------------------------------------------------

def workload_gram(W, steps: int, first_power: int = 1):
    """``(T, T)``: ``G = Σ_i A_iᵀ A_i``, ``A = W̃`` (:func:`block_powers`, first power 1: the
    models after averaging) and ``A_i`` its ``T`` columns of agent ``i``. With one encoder ``C``
    shared by the agents (noise ``C^{-1} z_i``), the noise's total variance on the models is
    ``‖A (I_N ⊗ C^{-1})‖_F² = tr(G (CᵀC)^{-1})`` (MFDL, the surrogate MAFALDA minimises)."""
    n = W.shape[0]
    A = block_powers(W, steps, first_power).reshape(steps * n, steps, n)
    return einsum("msi,mti->st", A, A)


def encoder_sensitivity2(C, classes):
    """``max_P Σ_{s,t∈P} |(CᵀC)_{st}|``: the squared sensitivity of ``C c`` for contributions that
    may change (``‖δ_s‖ ≤ 1``) at the steps of one participation class (MFDL's ``sens(C)²``, which
    needs ``CᵀC ≥ 0``; this bound needs nothing)."""
    X = jnp.abs(matmul(C.T, C))
    return jnp.max(einsum("ps,st,pt->p", jnp.asarray(classes), X, jnp.asarray(classes)))


def surrogate_loss(C, gram, classes):
    """MFDL's utility surrogate at a fixed LDP budget: ``sens(C)² · tr(G (CᵀC)^{-1})`` (scale
    free: the noise variance on the models when the noise multiplier gives ``μ = Δ/σ_z``
    for the release ``C c + σ_z z``). ``C`` lower triangular, invertible."""
    inv = jax.scipy.linalg.solve_triangular(C, jnp.eye(C.shape[0]), lower=True)
    return encoder_sensitivity2(C, classes) * jnp.trace(matmul(matmul(inv.T, gram), inv))


def _feasible(theta, same):
    """The Gram ``X = CᵀC`` from free parameters: ``X₀ = I/epochs`` plus the projection of
    ``theta`` onto MFDL's constraints (zero between two steps of one class, the diagonal's sum over
    each class unchanged), so that ``sens(C) = 1`` exactly (MFDL, after Choquette-Choo et al.,
    NeurIPS 2023, multi-participation): an affine map, so the loss stays convex. ``same``:
    ``(T, T)``, 1 where two steps share a participation class."""
    sym = (theta + theta.T) / 2
    epochs = jnp.sum(same, axis=1)
    diag = jnp.diag(sym) - matmul(same, jnp.diag(sym)) / epochs
    return jnp.diag(1 / epochs + diag) + sym * (1 - same)


def encoder_from_gram(X):
    """The lower-triangular ``C`` with ``CᵀC = X`` (``X`` positive definite): the Cholesky factor
    of the reversed matrix, reversed (``C = J chol(J X J)ᵀ J``, ``J`` the anti-identity)."""
    flip = jnp.flip(jnp.flip(X, 0), 1)
    return jnp.flip(jnp.flip(jnp.linalg.cholesky(flip).T, 0), 1)


def _gram_loss(theta, gram, same):
    """``tr(G X^{-1})`` at the feasible ``X`` of ``theta`` (``inf`` outside the PD cone)."""
    chol = jnp.linalg.cholesky(_feasible(theta, same))
    value = jnp.trace(jax.scipy.linalg.cho_solve((chol, True), gram))
    return jnp.where(jnp.isfinite(value), value, jnp.inf)


@functools.cache
def _lbfgs():
    """optax's L-BFGS (imported on first use: optax is not needed to import jaxdp)."""
    import optax
    return optax, optax.lbfgs()


@jax.jit
def _lbfgs_step(carry, gram, same):
    """One L-BFGS step of :func:`mafalda_encoder` (compiled once per ``T``)."""
    optax, lbfgs = _lbfgs()
    theta, state = carry

    def loss(theta):
        return _gram_loss(theta, gram, same)

    value, grad = optax.value_and_grad_from_state(loss)(theta, state=state)
    updates, state = lbfgs.update(grad, state, theta, value=value, grad=grad, value_fn=loss)
    return optax.apply_updates(theta, updates), state


def mafalda_encoder(W, steps: int, participation=None, iterations: int = 200):
    """MAFALDA-SGD's encoder: argmin of :func:`surrogate_loss` (MFDL, their "OPTIMAL_DL_POSTAVG":
    one encoder for every agent, the post-averaging workload) over MFDL's feasible set (``X = CᵀC``
    with no correlation between two steps of one participation class and ``sens(C) = 1``), by
    L-BFGS (optax) on ``tr(G X^{-1})`` through ``jax.grad``, from ``X = I/epochs`` (DP-SGD's
    independent noise). A convex program: single participation has the dual certificate
    ``max_{v ≥ 0, Σv = 1} (tr (V^{1/2} G V^{1/2})^{1/2})²`` (tested).

    Args:
      participation: an int ``b`` (:func:`participation_classes`; default ``T``: single
        participation).

    Returns:
      ``(C, loss)``: ``C`` lower triangular with sensitivity 1, and its surrogate loss.
    """
    b = steps if participation is None else participation
    if not isinstance(b, (int, np.integer)):
        raise TypeError(f"mafalda_encoder needs an int participation interval; got {b!r}")
    classes = jnp.asarray(participation_classes(b, steps))
    same = matmul(classes.T, classes)
    gram = workload_gram(jnp.asarray(W), steps)
    theta = jnp.zeros((steps, steps))
    carry = (theta, _lbfgs()[1].init(theta))
    for _ in range(iterations):
        carry = _lbfgs_step(carry, gram, same)
    C = encoder_from_gram(_feasible(carry[0], same))
    return C, surrogate_loss(C, gram, classes)


# --- correlated noise optimised at a fixed pairwise budget -------------------------------------

def model_noise(release: LinearRelease, W=None):
    """The models' total noise variance ``Σ_k E‖n(x^{k+1})‖²``, ``jnp``: ``‖models‖_F²`` of the
    map :func:`gossip_release` records (message noise included), else, for a hand-built
    ``broadcast`` release (rows ``p^k``; MFDL's post-averaging workload), ``‖(I_T ⊗ W) B‖_F²``."""
    if release.models is not None:
        return jnp.sum(jnp.asarray(release.models) ** 2)
    models = matmul(jnp.kron(jnp.eye(release.steps), jnp.asarray(W)), jnp.asarray(release.B))
    return jnp.sum(models ** 2)


def worst_pair_mu2(release: LinearRelease, obs: list[Observer], classes):
    """``max`` over observers and the agents outside them of ``μ²/Δ²`` (``jnp``, differentiable
    almost everywhere)."""
    worst = [jnp.max(jnp.where(np.isin(np.arange(release.n_agents), o.members), 0.0,
                               observer_mu2(release, o, classes)[0])) for o in obs]
    return jnp.max(jnp.stack(worst))


def pairwise_decoder(W, edges, steps: int, threat="neighbours", participation=None, start=None,
                     iterations: int = 300, learning_rate: float = 0.02):
    """A noise decoder ``L`` (lower triangular, one for every agent) minimising the models' noise
    at a fixed worst pairwise ``μ`` under ``threat``: ``max_{u,v} μ²_{u→v}(L) · ‖(I ⊗ W) B(L)‖²``
    (scale free: :func:`model_noise` at the noise scale that gives the budget), by Adam (optax)
    on ``jax.grad`` through :func:`release_mu2`, from ``start`` (default ``I``; e.g. the inverse
    of :func:`mafalda_encoder`'s encoder, MFDL's optimum for the LDP observer), keeping the best
    iterate. Ideal Gaussian mechanism (module docstring); broadcast rows, local noise only.

    Returns:
      ``(L, objective at L, objective at start)``.
    """
    import optax
    W = jnp.asarray(W)
    classes = participation_classes(steps if participation is None else participation, steps)
    obs = observers(gossip_release(W, edges, steps, 1.0, broadcast=True), threat)

    def objective(theta):
        release = gossip_release(W, edges, steps, 1.0, decoder=jnp.tril(theta), broadcast=True)
        return worst_pair_mu2(release, obs, classes) * model_noise(release, W)

    step_fn = jit(jax.value_and_grad(objective))
    opt = optax.adam(learning_rate)
    theta = jnp.eye(steps) if start is None else jnp.tril(jnp.asarray(start))
    state = opt.init(theta)
    first, _ = step_fn(theta)
    best = (first, theta)
    for _ in range(iterations):
        value, grad = step_fn(theta)
        best = min(best, (value, theta), key=lambda b: float(b[0]))
        updates, state = opt.update(grad, state)
        theta = optax.apply_updates(theta, updates)
    return jnp.tril(best[1]), best[0], first
