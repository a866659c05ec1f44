"""RECAL and DP-RECAL: relay (token) primal–dual decentralized optimization.

Luqing Wang, Luyao Guo, Shaofu Yang & Xinli Shi, "Differentially Private Decentralized Optimization
with Relay Communication", 2024 (arXiv; the ar5iv source text does not print the id).

Problem (1): ``min_x Σ_i f_i(x) + n r(x)``. jaxdp's ℓ1 problems (``L1LeastSquares``,
``L1Logistic``) have per-agent losses ``data_i + ½·ridge‖x‖² + l1‖x‖₁``; their sum is
``Σ data_i + n(½·ridge‖x‖²) + n·l1‖x‖₁``, so RECAL takes the smooth
``f_i = data_i + ½·ridge‖x‖²`` (``loss.grad``; ``L_i = problem.smoothness()``) and
``n r = n·l1‖·‖₁``: ``prox_{nr}(v) = loss.prox(v, n)``, soft thresholding at ``n·l1`` (unit step,
(6b)). Which part of the paper's ``½‖x‖² + ½‖x‖₁`` is r is [UNSPECIFIED] in the paper; this is
one reading.

One iteration k (only the baton holder ``i = i_k`` acts; Algorithm 1 / eq. (7)):

.. code-block:: text

    h        = β (x^k − y_i^k)                              # (7a)  λ_i^{k+½} − λ_i^k
    x^{k+1}  = prox_{nr}( x^k − (ũ^k + h) )                 # (7b), Alg. 1: the noisy ũ^k
    y_i^{k+1}= y_i^k − α_i (∇f_i(y_i^k) − (λ_i^k + h))      # (7c)
    λ_i^{k+1}= λ_i^k + h + β[(x^{k+1} − x^k) − (y_i^{k+1} − y_i^k)]   # (7d)
    u^{k+1}  = u^k + λ_i^{k+1} − λ_i^k                      # (7e)
    τ_i     += 1;  ũ^{k+1} = u^{k+1} − σ_{τ_i} z, z ~ N(0, I)   # Alg. 1: σ²_τ = σ₁²R^{1−τ}
    i_{k+1}  ~ row i of the transition matrix (P = I − D⁻¹L by default, Assumption 2)

The token is the integer ``holder`` in the state and each step updates one row of ``y`` and ``λ``
(``.at[i].set``); vmap over seeds gives independent walks. Step sizes: ``β = 1/(2(n+1))`` and
``α_i ∈ (0, 2/(L_i+1))`` (Theorem 2); :func:`theory_params` picks ``α_i = 1/(L_i+1)``.

Stopping at a target PLF: ``params.xi`` = ξ. When the baton reaches an
agent that already has ξ activations the run freezes (state and messages stay), so every τ_i ≤ ξ and
the accountant is exact; :func:`plf` gives the PLF reached and ``state.iterations`` the iterations
executed (= baton messages). A run of K steps stops at K steps or at PLF ξ, whichever first.

Variants (``variant=``; errata in ``docs/errata.md``):

* ``"paper"`` (default): Algorithm 1 as printed, u updated from the **clean** ``u^k`` (step 6) while
  only ``ũ`` is transmitted. The noise then enters only through x and does not accumulate; this is
  the only reading consistent with the paper's ~1e-15 errors, but real agents cannot run it (the
  receiver never sees ``u^k``).
* ``"forwarded"``: agents forward what they receive, ``u^k := ũ^k``, so the noise accumulates into
  ``u = Σλ_i − Σε`` and the fixed point is biased (a test shows it).

Also reconstructed / chosen here (the paper does not say): the first holder ``i_1`` is uniform over
the agents (drawn in ``init``); ``x^1 = y_i^1 = x0·1``, ``λ^1 = 0``, ``ũ^1 = u^1 = 0`` (no noise
before the first activation); the noise index follows Algorithm 1 (the ε drawn at agent i's τ-th
activation enters the next holder's x-update), not (9b).

Privacy: DP-RECAL's guarantee is ε = ∞ (``DPRECAL.account``): the transmitted ``x^{k+1}``
reveals ``y_i^k`` and then the gradient exactly, whatever σ₁ (``jaxdp.attacks.relay``). Paper 003's
Lemma 6 ``ρ_τ = 8α²β²c²/σ_τ²`` and Theorem 4 (``jaxdp.algorithms.recal.privacy``) are kept as the
paper's curves, and for calibrating σ₁ to the paper's budget.

Shapes: N agents, d model dimension.
"""
from __future__ import annotations

import dataclasses
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, Array
from jaxdp.algorithms.recal import privacy as acct
from jaxdp.core import Algorithm, param
from jaxdp.network import sample_next_agent, transition_matrix
from jaxdp.network import TRANSITIONS
from jaxdp.privacy import PAPER_CORRECTED, PAPER_PRINTED, PrivacyReport, add_noise, noise_draws

VARIANTS = ("paper", "forwarded")


# -- Params -------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class RECALParams:
    alpha: float = param(0.1, domain="positive",
                         doc="α_i, primal step of (7c); α_i ∈ (0, 2/(L_i+1))")
    beta: float = param(1.0 / 18.0, domain="positive", per_agent=False,
                        doc="β = 1/(2(n+1)), dual step of (7a)/(7d); 1/18 for the paper's n = 8")
    xi: float = param(300.0, domain="positive",
                      doc="ξ, target PLF: the run freezes before any agent's (ξ+1)-th activation")
    x0: float = param(0.0, doc="x^1 = y_i^1 = x0·1, the starting point (unspecified in the paper)")


@chex.dataclass(frozen=True)
class DPRECALParams:
    alpha: float = param(0.1, domain="positive", doc="α_i, primal step of (7c)")
    beta: float = param(1.0 / 18.0, domain="positive", per_agent=False,
                        doc="β = 1/(2(n+1)), (7a)/(7d)")
    xi: float = param(300.0, domain="positive", doc="ξ, target PLF (Tables IV/V: 300)")
    x0: float = param(0.0, doc="x^1 = y_i^1 = x0·1")
    log_sigma1: float = param(0.0, doc="log σ₁ (natural log): σ_τ = σ₁ R^{−(τ−1)/2}, Alg. 1")
    log_R: float = param(math.log(1.05), domain="nonnegative",
                         doc="log R ≥ 0, R the noise attenuation (Theorem 4: R > 1)")
    c: float = param(1.0, domain="positive",
                     doc="c, gradient bound of Assumption 3 (accountant only; no clipping)")
    delta: float = param(1e-3, domain="probability", per_agent=False,
                         doc="δ that calibrate() targets (Figs. 2/5); reports take privacy(delta=)")


# -- State --------------------------------------------------------------------------------------
@chex.dataclass(frozen=True)
class RECALState:
    x: Array  # (d,) baton primal x^k
    u: Array  # (d,) u^k = Σ_i λ_i^k carried with the baton ("forwarded": equals ũ^k)
    u_tilde: Array  # (d,) transmitted ũ^k
    y: AgentArray  # (N, d) local copies y_i
    lam: AgentArray  # (N, d) local duals λ_i
    tau: Array  # (N,) int32 activation counters τ_i
    holder: Array  # () int32 the baton holder i_k
    T: Array  # (N, N) transition matrix of the walk
    iterations: Array  # () int32 iterations executed (= baton messages)


# -- Algorithms ---------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TokenAlgorithm(Algorithm):
    """Shared machinery of token (random-walk) algorithms: RECAL, DP-RECAL and DP-RWADMM.

    The state holds the holder ``holder`` (() int32), the activation counters ``tau`` ((N,) int32),
    the transition matrix ``T`` and ``iterations``; ``noise`` draws the next holder from row
    ``holder`` of T (and standard Gaussian draws ``z`` of the model's shape when ``private``,
    from the subclass's ``sampler``: ``"lattice"`` or ``"float"``);
    ``step`` runs :meth:`_activate` unless the holder already has ξ = ``params.xi`` activations, in
    which case the whole state freezes.

    Static configuration:
      transition: ``"uniform"`` (P = I − D⁻¹L, paper 003 Assumption 2), ``"metropolis"``,
        ``"lazy"``, or a user-given row-stochastic matrix as a tuple of N tuples (supported on the
        graph's edges and diagonal).
    """

    # jaxdp.privacy.contract.NOISE_OWNERS: the token holder draws the noise on every agent's term
    noise_owner = "agents"
    private = False
    transition: str | tuple = "uniform"

    def noise(self, key, state, params, k):
        del params, k
        out = {"next": sample_next_agent(jax.random.fold_in(key, 0), state.T, state.holder)}
        if self.private:
            out["z"] = noise_draws(jax.random.fold_in(key, 1), state.x.shape, state.x.dtype,
                                   sampler=self.sampler_of())
        return out

    def step(self, state, noise, problem, network, params, k):
        del k
        i = state.holder
        active = state.tau[i] < params.xi  # never exceed ξ activations
        new, sent = self._activate(state, noise, problem, network.n_agents, params)
        new = jax.tree.map(lambda a, b: jnp.where(active, a, b), new, state)
        sent = jax.tree.map(lambda a, b: jnp.where(active, a, b), sent, self._sent(state))
        return new, {**sent, "sender": i, "receiver": new.holder, "active": active}

    def models(self, state):
        return jnp.broadcast_to(state.x, state.y.shape)  # the token's model is every agent's

    def costs_per_step(self, problem, network, params) -> dict[str, float]:
        """The counted costs plus the token: one hop per step carrying :meth:`_sent` (the holder
        is read by indexing, which the counting proxy does not see)."""
        costs = super().costs_per_step(problem, network, params)
        sent = jax.eval_shape(lambda key: self._sent(self.init(key, problem, network, params)),
                              jax.random.key(0))
        bits = sum(math.prod(a.shape) * a.dtype.itemsize * 8 for a in jax.tree.leaves(sent))
        return {**costs, "rounds": costs["rounds"] + 1, "messages": costs["messages"] + 1,
                "bits": costs["bits"] + bits}

    def plf_and_messages(self, state) -> dict:
        """PLF reached (max_i τ_i) and messages sent (one token per iteration), per seed."""
        return {"plf": plf(state), "messages": state.iterations}

    # -- hooks -------------------------------------------------------------------------------------
    def _activate(self, state, noise, problem, n, params):
        """The holder's update: returns ``(new_state, what the token carries)``."""
        raise NotImplementedError

    def _sent(self, state) -> dict:
        """What the token carries in ``state`` (sent again when frozen)."""
        raise NotImplementedError

    def _walk_state(self, key, network, dtype) -> dict:
        n = network.n_agents
        return {"tau": jnp.zeros((n,), jnp.int32),
                "holder": jax.random.randint(key, (), 0, n, dtype=jnp.int32),  # i_1 (unspecified)
                "T": self._transition(network).astype(dtype),
                "iterations": jnp.zeros((), jnp.int32)}

    def _transition(self, network) -> Array:
        if isinstance(self.transition, str):
            return transition_matrix(network, self.transition)
        return jnp.asarray(np.asarray(self.transition, np.float64))

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        _check_transition(self.transition, network)


@dataclasses.dataclass(frozen=True)
class RECAL(TokenAlgorithm):
    """RECAL, eq. (7): the relay primal–dual method without noise (paper 003, §IV).

    Static configuration:
      variant: ``"paper"`` or ``"forwarded"`` (only matters with noise; see the module docstring).
      transition: see :class:`TokenAlgorithm`.
    """

    name = "recal"
    cites = ("Wang, Guo, Yang & Shi 2024 (DP-RECAL, paper 003), eq. (7)",)
    provenance = "paper"
    params_type = RECALParams
    requires = ("smoothness",)  # validate() checks α_i < 2/(L_i + 1)
    variant: str = "paper"

    def init(self, key, problem, network, params):
        n, d = network.n_agents, problem.dim
        dtype = problem.features.dtype
        x1 = jnp.full((d,), params.x0, dtype)
        zero = jnp.zeros((d,), dtype)
        return RECALState(
            x=x1, u=zero, u_tilde=zero,  # λ^1 = 0 so u^1 = ũ^1 = 0 (Alg. 1)
            y=jnp.broadcast_to(x1, (n, d)), lam=jnp.zeros((n, d), dtype),
            **self._walk_state(key, network, dtype))

    def _activate(self, state, noise, problem, n, params):
        new = _activate(state, noise, problem, n, params, self.variant, self._release)
        return new, self._sent(new)

    def _sent(self, state):
        return {"x": state.x, "u": state.u_tilde}  # the baton (x^{k+1}, ũ^{k+1})

    def _release(self, noise, params, tau_i, u):
        """The transmitted ``ũ`` given the exact ``u^{k+1}`` (RECAL: ``u`` itself)."""
        del noise, params, tau_i
        return u

    def validate(self, params, problem, network) -> None:
        """Base checks plus: the variant, the transition matrix, α_i < 2/(L_i+1) (Theorem 2) and
        the Schur-complement condition 1/β > n + max_i 1/(1/α_i − L_i/2) of the saddle-point
        system.

        Raises:
          ValueError: naming the bad value.
        """
        super().validate(params, problem, network)
        if self.variant not in VARIANTS:
            raise ValueError(f"{self.name}: variant must be one of {VARIANTS}; "
                             f"got {self.variant!r}")
        n = network.n_agents
        L = problem.smoothness()
        alpha = np.broadcast_to(np.asarray(params.alpha, np.float64), (n,))
        bound = 2.0 / (L + 1.0)
        bad = alpha >= bound
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{self.params_type.__name__}.alpha must be < 2/(L_i+1) = "
                             f"{bound[i]:.6g} (Theorem 2); got {alpha[i]:g} at agent {i}")
        schur = n + np.max(1.0 / (1.0 / alpha - L / 2.0))
        if not 1.0 / float(params.beta) > schur:
            raise ValueError(f"{self.params_type.__name__}.beta must be < 1/(n + max_i "
                             f"1/(1/α_i − L_i/2)) = {1.0 / schur:.6g} (Schur complement); "
                             f"got {float(params.beta):g}")


@dataclasses.dataclass(frozen=True)
class DPRECAL(RECAL):
    """DP-RECAL, Algorithm 1: RECAL with Gaussian noise on the transmitted ũ (paper 003, §V).

    ``ũ^{k+1} = u^{k+1} − σ_{τ_i} z`` with ``σ_τ = σ₁ R^{−(τ−1)/2}`` indexed by the active agent's
    own activation count (Alg. 1). Static ``sensitivity``: ``"paper"`` (Lemma 5, 4αβc) or
    ``"tight"`` (2α_iβc), the Δ that :func:`calibrate` uses; the privacy report's guarantee is
    ε = inf (:meth:`account`) and shows both as the paper's curves. Static ``sampler``:
    ``"lattice"`` (default: ``ũ`` on the lattice ``(σ_τ/R)ℤ^d``, :func:`~jaxdp.privacy.add_noise`)
    or ``"float"``; either way the x channel leaks, so the guarantee stays inf.
    """

    name = "dp_recal"
    cites = ("Wang, Guo, Yang & Shi 2024 (DP-RECAL, paper 003), Algorithm 1",)
    provenance = "paper"
    params_type = DPRECALParams
    private = True
    sensitivity: str = "paper"
    sampler: str = "lattice"  # "lattice" (private as floats) or "float"

    def _release(self, noise, params, tau_i, u):
        """``ũ = u − σ_τ z`` (Alg. 1 l.7; ``−z`` has the law of ``z``), on the lattice by
        default."""
        sigma = jnp.exp(acct.log_sigma(params.log_sigma1, params.log_R, tau_i))  # σ_τ, Alg. 1
        return add_noise(u, sigma.astype(u.dtype), -noise["z"], sampler=self.sampler)

    models_covered = True
    models_note = "the token's x, which every baton carries in the clear"

    def account(self, problem, network, params, steps, *, delta):
        """ε = inf: the transmitted x^{k+1} reveals the holder's gradient exactly.

        ``x^{k+1} = prox_{nr}(x^k − ũ^k − β(x^k − y_i^k))`` gives ``y_i^k`` from two batons, and
        (7c)/(7d) then give ``∇f_i(y_i^k)`` from the next ones, whatever σ₁ (``jaxdp.attacks.relay``
        inverts it). Paper 003's Theorem 4 on the ũ channel (Lemma 5's Δ = 4αβc, and the
        per-agent 2α_iβc) is kept as the paper's curves, evaluated at ``min(k, ξ)`` activations
        (Theorem 1); both also fix the sender's history, while u carries every λ_i clean.
        """
        n = network.n_agents
        del problem
        report = PrivacyReport.infinite(
            n, steps, delta, relation="replace_agent",
            reason="the baton's x is sent without noise and x^{k+1} = prox_{nr}(x^k − ũ^k − "
                   "β(x^k − y_i^k)) reveals y_i^k, then ∇f_i(y_i^k) by (7c)-(7d), whatever σ₁; "
                   "no finite ε bounds the release",
            released="the baton (x^{k+1}, ũ^{k+1}) sent by the holder at every iteration k < K")
        activations = np.minimum(report.steps, int(float(params.xi)))
        kw = dict(log_sigma1=float(params.log_sigma1), log_R=float(params.log_R), delta=delta)
        for name, kind in ((PAPER_PRINTED, "paper"), (PAPER_CORRECTED, "tight")):
            sens = np.broadcast_to(np.asarray(acct.sensitivity(
                np.asarray(params.alpha), float(params.beta), float(params.c), kind)), (n,))
            eps, log10 = acct.theorem4_curve(n, activations, sens=sens, **kw)
            what = "Lemma 5: Δ = 4 max_i α_i β c" if kind == "paper" else "Δ_i = 2α_iβc"
            report = report.with_curve(
                name, eps, f"ũ channel only, {what}; {acct.THEOREM4_NOTE}; the x channel is "
                           "ignored", log10=log10)
        return report

    def validate(self, params, problem, network) -> None:
        super().validate(params, problem, network)
        if self.sensitivity not in acct.SENSITIVITIES:
            raise ValueError(f"dp_recal: sensitivity must be one of {acct.SENSITIVITIES}; "
                             f"got {self.sensitivity!r}")
        if not 0.0 < float(params.delta) < 1.0:
            raise ValueError(f"DPRECALParams.delta must be in (0, 1); got {float(params.delta)}")


# -- the update ---------------------------------------------------------------------------------
def _activate(state: RECALState, noise, problem, n: int, params, variant: str,
              release) -> RECALState:
    """One activation of the holder i = i_k: eq. (7) with Algorithm 1's noise."""
    i, beta = state.holder, params.beta
    alpha_i = jnp.broadcast_to(jnp.asarray(params.alpha), (n,))[i]
    x, yi, li = state.x, state.y[i], state.lam[i]
    h = beta * (x - yi)  # (7a): λ_i^{k+½} − λ_i^k
    x_new = prox_nr(problem, x - (state.u_tilde + h), n)  # (7b) with ũ^k (Alg. 1 l.3)
    g = local_grad(problem, i, yi)
    y_new = yi - alpha_i * (g - (li + h))  # (7c)
    l_new = li + h + beta * ((x_new - x) - (y_new - yi))  # (7d)
    u_new = state.u + (l_new - li)  # (7e), Alg. 1 l.6
    tau_i = state.tau[i] + 1
    ut_new = release(noise, params, tau_i, u_new)  # Alg. 1 l.7: ũ = u − ε
    return state.replace(
        x=x_new, u=u_new if variant == "paper" else ut_new, u_tilde=ut_new,
        y=state.y.at[i].set(y_new), lam=state.lam.at[i].set(l_new),
        tau=state.tau.at[i].set(tau_i), holder=jnp.asarray(noise["next"], jnp.int32),
        iterations=state.iterations + 1)


def prox_nr(problem, v: Array, n: int) -> Array:
    """``prox_{n r}(v)``, unit step, r = l1‖·‖₁: soft threshold at n·l1 (identity without ℓ1)."""
    return problem.loss.prox(v, n, problem.reg)


def local_grad(problem, i, y: Array) -> Array:
    """∇f_i(y) of agent ``i`` (traced index): the smooth part of its loss, (d,)."""
    return problem.loss.grad(y, problem.features[i], problem.labels[i], problem.mask[i],
                             problem.reg)


def plf(state) -> Array:
    """Θ_K = max_i τ_i(K), the privacy leakage frequency reached (§III)."""
    return jnp.max(state.tau, axis=-1)


def theory_params(problem, network, params=None):
    """The paper's step rules: ``β = 1/(2(n+1))`` and ``α_i = 1/(L_i+1)`` (half of Theorem 2's
    bound 2/(L_i+1)); other fields from ``params`` (default: RECAL's defaults)."""
    params = RECALParams() if params is None else params
    L = problem.smoothness()
    return params.replace(alpha=jnp.asarray(1.0 / (L + 1.0)),  # Theorem 2
                          beta=1.0 / (2.0 * (network.n_agents + 1)))  # (6)


def calibrate(params: DPRECALParams, epsilon: float, *, delta: float | None = None,
              plf_target: float | None = None, sensitivity: str = "paper") -> DPRECALParams:
    """``params`` with ``log σ₁`` set so that PLF ξ spends exactly (ε, δ) (Theorem 4 inverted).

    Args:
      params: DP-RECAL params (α, β, c, log R, δ, ξ are read).
      epsilon: target ε.
      delta: δ (default ``params.delta``).
      plf_target: ξ (default ``params.xi``).
      sensitivity: ``"paper"`` or ``"tight"`` (the largest Δ_i is used for ``"tight"``).
    """
    delta = float(params.delta) if delta is None else delta
    plf_target = float(params.xi) if plf_target is None else plf_target
    sens = float(np.max(np.asarray(acct.sensitivity(np.asarray(params.alpha), float(params.beta),
                                                    float(params.c), sensitivity))))
    log_sigma1 = float(acct.calibrate_log_sigma1(epsilon, delta, plf_target, sens=sens,
                                                 log_R=float(params.log_R)))
    return params.replace(log_sigma1=log_sigma1, delta=delta)


def _check_transition(transition, network) -> None:
    """Host check of a user-given transition matrix (or a known kind)."""
    if isinstance(transition, str):
        if transition not in TRANSITIONS:
            raise ValueError(f"unknown transition {transition!r}; known: {TRANSITIONS} or an "
                             "(N, N) matrix as a tuple of tuples")
        return
    T = np.asarray(transition, np.float64)
    n = network.n_agents
    if T.shape != (n, n):
        raise ValueError(f"transition matrix must be ({n}, {n}); got shape {T.shape}")
    if np.any(T < 0) or not np.allclose(T.sum(axis=1), 1.0, atol=1e-9):
        raise ValueError("transition matrix must be non-negative with rows summing to 1; "
                         f"row sums {T.sum(axis=1).round(12).tolist()}")
    support = network.dense("L") != 0  # either backend
    off = (T > 0) & ~support
    if off.any():
        i, j = np.argwhere(off)[0]
        raise ValueError(f"transition matrix moves the baton from agent {i} to {j}, "
                         "which are not neighbours")


__all__ = ["DPRECAL", "DPRECALParams", "RECAL", "RECALParams", "RECALState", "TokenAlgorithm",
           "VARIANTS",
           "calibrate", "local_grad", "plf", "prox_nr", "theory_params"]
