"""The linear-gossip accountant as a Kalman recursion in JAX: fast and differentiable (issue 24).

Same mechanism, observers and assumptions as :mod:`jaxdp.privacy._pairwise` (read its docstring:
non-adaptive contributions, **ideal real-valued Gaussian noise**, not the library's lattice
floats); this module computes the same ``Q = AᵀΣ⁻¹A`` quantities without forming ``Σ``.

**State-space form.** With the state ``p^k`` (the ``N`` agents' noisy values) the mechanism is
``p^{k+1} = W p^k + w^k + c^{k+1}``, ``p^0 = c^0 + w^{-1}``, and the observer sees
``y^k = H p^k + v^k``: ``H`` selects the senders of the observed edges ``O``, ``v^k_e = σ_m z^k_e``
(``R = σ_m² I``), ``w^k`` carries the fresh local noise of step ``k+1`` and the message noise of
step ``k`` (``Cov w = diag ρ``, ``ρ_i = σ_{ℓ,i}² + Σ_{e→i} σ_m² W_{i s(e)}²`` over noise the observer
does not know; ``P_0 = diag σ_ℓ²``), and ``Cov(w^k, v^k) = S``, ``S_{r(e) e} = σ_m² W_{r(e)s(e)}``
(an observed message's noise also enters its receiver's next state). The one-step predictor
(Kalman 1960; correlated noise: Anderson & Moore, *Optimal Filtering*, 1979, §5.5)

.. math::
    F_k = H P_k Hᵀ + R,\\quad K_k = (W P_k Hᵀ + S) F_k^{-1},\\quad
    P_{k+1} = W P_k Wᵀ + \\mathrm{diag}\\,ρ - K_k F_k K_kᵀ,\\quad A_k = W - K_k H

factors ``Σ = L\\,\\mathrm{blkdiag}(F_k)\\,Lᵀ`` with ``L`` block unit lower triangular (the
innovations ``ν = L^{-1} y`` are independent, ``Cov ν_k = F_k``), so ``yᵀΣ^{-1}y = Σ_k ν_kᵀ
F_k^{-1} ν_k`` for every ``y``. Applied to the mean shift of a unit contribution of agent ``u``
at step ``s`` the innovation is ``ν_j = H Φ(j, s) e_u`` (``Φ(j, s) = A_{j-1}⋯A_s``, ``j ≥ s``),
hence, with ``Λ_s = Hᵀ F_s^{-1} H + A_sᵀ Λ_{s+1} A_s`` (``Λ_T = 0``),

.. math::
    Q_{ks} = e_uᵀ Φ(s, k)ᵀ Λ_s e_u \\quad (k ≤ s), \\qquad Q_{ss} = (Λ_s)_{uu}.

``F_k`` must be positive definite (so ``Σ`` is): true when ``σ_m > 0``, or when the observed
senders are distinct and each has ``σ_ℓ > 0`` (``F_k ⪰ H diag(σ_ℓ²) Hᵀ``: the local draw of step
``k`` is independent of the past). Otherwise :func:`check_supported` refuses and the dense
accountant (pseudo-inverse, ``ε = ∞`` off the range) applies.

**One contribution** (``T_c = 1``): ``μ² = Δ² Q_{00} = Δ² Σ_k ‖F_k^{-1/2} H Φ(k,0) e_u‖²``, one
forward pass, exact. **Every step** (``T_c = T``): the dense accountant's ``Δ² Σ_{k,s} |Q_{ks}|``
(the module docstring of :mod:`jaxdp.privacy._pairwise`: sound for any per-step changes
``‖δ^s‖ ≤ Δ`` in any dimension) needs all ``T²`` entries. This module bounds it instead.

*Proposition.* Fix ``u`` and a band ``b ≥ 1``. Let ``t_{T-1} = 0`` and ``t_k = |A_k|ᵀ (t_{k+1} +
|Φ(k+b, k+1)ᵀ Λ_{k+b} e_u|)`` (entrywise absolute values; the term is ``0`` when ``k+b ≥ T``),
``τ_k = e_uᵀ Φ(k+b+1, k)ᵀ Λ_{k+b+1} Φ(k+b+1, k) e_u`` and ``β_k = Σ_{s>k+b} √Q_{ss}``. Then

.. math::
    Σ_{s>k} |Q_{ks}| ≤ r_k := Σ_{s=k+1}^{k+b} |Q_{ks}| + \\min\\big((t_k)_u,\\ √τ_k\\, β_k\\big),
    \\qquad Σ_{k,s} |Q_{ks}| ≤ B := Σ_k Q_{kk} + 2 Σ_k r_k .

*Proof.* (i) ``γ_k := Σ_{s>k+b} |Φ(s,k)ᵀ Λ_s e_u|`` (entrywise) satisfies ``γ_k ≤ t_k`` by
backward induction: ``γ_{T-1} = 0``, and ``Φ(s,k)ᵀ = A_kᵀ Φ(s,k+1)ᵀ`` splits ``γ_k`` into the
term ``s = k+b+1`` and ``γ_{k+1}``, each under ``|A_kᵀ x| ≤ |A_k|ᵀ|x|``; ``|A_k|ᵀ ≥ 0`` keeps the
order. Then ``Σ_{s>k+b} |Q_{ks}| = Σ_{s>k+b} |(Φ(s,k)ᵀ Λ_s e_u)_u| ≤ (γ_k)_u ≤ (t_k)_u``.
(ii) ``Λ_s = Σ_{j≥s} Φ(j,s)ᵀ Hᵀ F_j^{-1} H Φ(j,s) ⪰ 0``, so Cauchy–Schwarz in the ``Λ_s``
inner product gives ``|Q_{ks}| ≤ √(e_uᵀΦ(s,k)ᵀΛ_sΦ(s,k)e_u) √Q_{ss}``, and the first factor —
the energy of the whitened response to an impulse at ``k`` from step ``s`` on — does not
increase with ``s``, so it is at most ``√τ_k`` for ``s > k+b``. (iii) ``Q`` is symmetric with
``Q_{kk} = (Λ_k)_{uu} ≥ 0``. ∎

Also ``Σ|Q| ≤ (Σ_k √Q_{kk})²`` (``|Q_{ks}| ≤ √(Q_{kk} Q_{ss})``); the smaller of it and ``B`` is
returned. The entries within the band are exact, so for ``T ≤ b+1`` the result is the dense
accountant's ``Σ|Q|``; beyond, it is an upper bound on it, equal when every ``A_k`` and ``Λ_s
e_u`` are entrywise ``≥ 0``. The signed sum ``1ᵀQ1`` — attained by the same change at every step —
is computed alongside (the forward recursion with an impulse every step), and a result is marked
``exact`` where the bound is ``≤ 1ᵀQ1 (1 + 10⁻⁹)``.

**Cost.** Per observer and step, ``W`` is applied through padded neighbour lists (``N² d``,
``d`` the largest degree + 1) and the gain through its ``|O|`` columns (``N² |O|``): one
contribution ``O(T N² (d + |O|))``; every step about ``2b + 3`` times that, and memory
``T N |O|`` per observer for the backward pass (observers go in batches of
:data:`OBSERVER_BATCH`). Measured on a shared 2-core CPU, N = 100, T = 1000, every agent
observing, wall seconds at low load: one contribution 5 s (ring) and 7 s (random graph,
degree ≤ 12), every step 19 s and 23 s, under 0.62 GB. Below ``N = 32 d`` (:data:`DENSE_PER_DEGREE`)
``W`` is applied as one dense product over its support instead, the same values in a third of
the time on the random graph. Everything is ``jnp`` and differentiable in
``W``, ``σ_ℓ`` and ``σ_m`` (:func:`gossip_mu2`; :func:`edge_mixing` keeps ``W`` symmetric and stochastic).

**Limits of the bound.** With slowly decaying responses (a 100-ring) and ``T = 1000`` the
row bound grows faster than ``1ᵀQ1``: sound but loose (``exact`` is then false everywhere); the
dense accountant is the tighter one where it fits.

**A per-agent certificate** (opt-in: ``etas``). The dense accountant's ``Δ² Σ|Q|`` and
``Δ² T λ_max(Q)`` both bound ``sup tr(QG)`` over Gram matrices ``G ⪰ 0`` with ``G_{kk} ≤ Δ²``
(the squared sensitivity of per-step changes ``‖δ^k‖ ≤ Δ`` in any dimension). A diagonal ``D ⪰ Q``
bounds it by ``Δ² tr D`` (``tr((D − Q)G) ≥ 0``), and one is found by the dynamic programme of the
bounded-real lemma for the single-input system ``x_0 = e_u c_0``, ``x_{k+1} = A_k x_k + e_u
c_{k+1}``, whose output energy is ``cᵀQc = Σ_k x_kᵀ M_k x_k`` (``M_k = Hᵀ F_k^{-1} H``: the
innovations above).

*Proposition 2.* Fix ``u`` and ``η_k > 0`` (``k = 1..T−1``). Let ``X_{T−1} = M_{T−1}`` and, with
``w_{k+1} = X_{k+1} e_u``,

.. math::
    X_k = M_k + A_kᵀ \\Big(X_{k+1} + \\frac{w_{k+1} w_{k+1}ᵀ}{η_{k+1} (X_{k+1})_{uu}}\\Big) A_k

(the fraction ``0`` where ``(X_{k+1})_{uu} = 0``), ``D_{00} = (X_0)_{uu}`` and ``D_{kk} = (1 + η_k)
(X_k)_{uu}`` for ``k ≥ 1``. Then ``Q ⪯ D``, so ``Σ_{k,s} G_{ks} Q_{ks} ≤ Δ² Σ_k D_{kk}`` for every
admissible ``G``: ``μ² ≤ Δ² tr D``.

*Proof.* Every ``X_k ⪰ 0`` (induction: ``M_k ⪰ 0``, and a congruence of a sum of PSD matrices).
Claim, by backward induction on ``j``: for every ``c``, ``Σ_{k≥j} x_kᵀM_kx_k ≤ x_jᵀX_jx_j +
Σ_{k>j} D_{kk} c_k²``. ``j = T−1`` is the definition. For ``j < T−1`` write ``X = X_{j+1}``,
``p = A_j x_j``, ``x_{j+1} = p + e_u c_{j+1}``; then ``x_{j+1}ᵀXx_{j+1} = pᵀXp + 2c_{j+1}
(Xp)_u + c_{j+1}² X_{uu}`` and ``2c(Xp)_u ≤ (Xp)_u² / (η X_{uu}) + η X_{uu} c²`` (AM–GM; both
sides ``0`` when ``X_{uu} = 0``, as then ``X e_u = 0``). With ``(Xp)_u² = pᵀ w wᵀ p``, the induction
hypothesis at ``j+1`` and ``x_jᵀM_jx_j`` give the claim at ``j``. At ``j = 0``, ``x_0 = e_u c_0``
turns ``x_0ᵀX_0x_0`` into ``D_{00} c_0²``: ``cᵀQc ≤ cᵀDc`` for every ``c``. ∎

Any ``η_k`` is sound; the accountant takes, per agent and observer, the smallest ``tr D`` over
constant ``η ∈ etas`` (a recursion whose ``(X_k)_{uu}`` passes :data:`CERTIFICATE_LIMIT` gives
``∞``: in the cases measured, below a pair's critical ``η`` the recursion diverges and just
above it ``tr D`` is least, so the grid spans near (0.5) and far (32) pairs' critical values). The bound holds for every ``G``, hence also bounds the dense accountant's target; it can
be below the dense ``min(Σ|Q|, T λ_max(Q))`` (it is a feasible point of the semidefinite
programme ``min{tr D : D ⪰ Q diagonal}``, whose value is ``sup tr(QG)`` itself). Cost: one
``N × N`` recursion per agent, observer and ``η``: ``O(T N³ (d + |O|))`` per observer and
``η``, ``N`` times the rest of the every-step pass, and working memory ``len(etas) N³`` floats
per observer of a batch. Measured (three ``η``, every agent observing, CPU seconds on a shared
2-core CPU): a 32-ring at T = 100 13 s against 6.5 s without, at T = 1000 52 s against 7 s; a
100-ring at T = 100 647 s against 5 s. On one NVIDIA H200 (wall seconds, compilation included):
N = 100, T = 1000 in 16 s (ring) and 23 s (Erdős–Rényi, p = 0.05, degree ≤ 12) under 0.9 GB;
with 13 ``η`` (0.0625 … 256) 53 s and 76 s, and the random graph's headline then equals the
attained ``1ᵀQ1`` of its worst agent (exact).
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import einsum, matmul
from jaxdp.privacy._views import views as observer_views

OBSERVER_BATCH = 10
"""Observers per batch of the backward pass (memory ``OBSERVER_BATCH · T N |O|`` floats)."""


@dataclasses.dataclass(frozen=True)
class Observers:
    """The observers of a threat model as padded arrays (``V`` observers, ``Ō`` the largest
    number of observed edges): static structure only, no weights.

    Attributes:
      senders, receivers: ``(V, Ō)`` the observed edges' ends (``0`` where padded).
      mask: ``(V, Ō)`` 1 for a real observed edge, 0 for padding.
      members: ``(V, N)`` 1 for an agent whose noise and contributions the observer knows.
    """

    senders: np.ndarray
    receivers: np.ndarray
    mask: np.ndarray
    members: np.ndarray

    @classmethod
    def from_views(cls, views, senders, receivers, n_agents: int) -> Observers:
        """From :func:`jaxdp.privacy._views.views`' list and the network's directed edges."""
        width = max(1, max(len(v.edges) for v in views))
        shape = (len(views), width)
        s, r, mask = np.zeros(shape, np.int32), np.zeros(shape, np.int32), np.zeros(shape)
        members = np.zeros((len(views), n_agents))
        for i, view in enumerate(views):
            k = len(view.edges)
            s[i, :k], r[i, :k], mask[i, :k] = senders[view.edges], receivers[view.edges], 1.0
            members[i, view.members] = 1.0
        return cls(s, r, mask, members)


def neighbour_lists(W: np.ndarray) -> np.ndarray:
    """``(2, N, d)``: padded column indices of the nonzeros of each row of ``W`` and of ``Wᵀ``
    (``-1`` pads; ``d`` the largest count)."""
    def lists(M, d):
        nz = [np.flatnonzero(row) for row in M]
        return np.stack([np.concatenate([z, np.full(d - len(z), -1)]) for z in nz])
    W = np.asarray(W)
    d = max(1, int((W != 0).sum(axis=1).max()), int((W != 0).sum(axis=0).max()))
    return np.stack([lists(W, d), lists(W.T, d)]).astype(np.int32)


@dataclasses.dataclass(frozen=True)
class _Sparse:
    """``X ↦ M X`` and ``X ↦ |M| X`` (``X``: ``(..., N, m)``) through padded neighbour lists: ``(N, d)`` weights gathered
    from the dense ``M`` (differentiable in ``M``) and their columns."""

    weights: jax.Array
    cols: jax.Array

    @classmethod
    def of(cls, M, nbrs) -> _Sparse:
        rows = jnp.arange(M.shape[0])[:, None]
        cols = jnp.where(nbrs < 0, rows, nbrs)
        return cls(jnp.where(nbrs < 0, 0.0, M[rows, cols]), cols)

    def __call__(self, X):
        """``M X`` for ``X`` of shape ``(..., N, m)``."""
        return einsum("id,...idm->...im", self.weights, X[..., self.cols, :])

    def abs(self, X):
        """``|M| X``."""
        return einsum("id,...idm->...im", jnp.abs(self.weights), X[..., self.cols, :])


@dataclasses.dataclass(frozen=True)
class _Dense:
    """The same products as :class:`_Sparse` as one matrix product with ``M`` restricted to the
    neighbour lists' support (zero elsewhere, so its gradient in ``M`` is the lists' too)."""

    M: jax.Array

    @classmethod
    def of(cls, M, nbrs) -> _Dense:
        rows = jnp.broadcast_to(jnp.arange(M.shape[0])[:, None], nbrs.shape)
        support = jnp.zeros(M.shape, bool).at[rows, jnp.where(nbrs < 0, rows, nbrs)].max(nbrs >= 0)
        return cls(jnp.where(support, M, 0.0))

    def __call__(self, X):
        """``M X`` for ``X`` of shape ``(..., N, m)``."""
        return matmul(self.M, X)

    def abs(self, X):
        """``|M| X``."""
        return matmul(jnp.abs(self.M), X)


DENSE_PER_DEGREE = 32
"""Products go through :class:`_Dense` while ``N ≤ DENSE_PER_DEGREE · d`` (``d`` the padded
neighbour lists' width), else :class:`_Sparse`. Measured (N = 100, T = 1000, every agent observing,
one CPU thread): equal on a ring (d = 3), 2.9× faster on an Erdős–Rényi graph of d = 13 (every
step 27 s against 80 s wall)."""


def _mixing(M, nbrs):
    """``M``'s products: :class:`_Dense` or :class:`_Sparse` (:data:`DENSE_PER_DEGREE`)."""
    n, d = nbrs.shape
    return (_Dense if n <= DENSE_PER_DEGREE * d else _Sparse).of(M, nbrs)


def _noise(W, sigma_local, sigma_message, edges, members):
    """``(P_0 diagonal, ρ)`` for one observer: the noise it does not know."""
    n, (es, er) = W.shape[0], edges
    local = (1.0 - members) * jnp.broadcast_to(sigma_local, (n,)) ** 2
    edge_var = sigma_message ** 2 * (1.0 - members[es]) * W[er, es] ** 2
    return local, local + jax.ops.segment_sum(edge_var, er, num_segments=n)


def _forward(W, apply_w, local, rho, sigma_message, hs, hr, mask, steps, every_step):
    """The predictor recursion: ``(K_k, F_k^{-1})`` per step and the signed ``Σ_{k,s∈C} Q_{ks}``
    per agent (``C`` the contribution steps; ``Q_{00}`` for one contribution)."""
    n = W.shape[0]
    S = jnp.zeros((n, hs.size)).at[hr, jnp.arange(hs.size)].add(
        sigma_message ** 2 * W[hr, hs] * mask)
    R = jnp.where(mask > 0, sigma_message ** 2, 1.0)

    def step(carry, _):
        P, E, total = carry
        PH = P[:, hs] * mask[None, :]  # P Hᵀ
        F_inv = jnp.linalg.inv(PH[hs] * mask[:, None] + jnp.diag(R))
        gain_num = apply_w(PH) + S  # W P Hᵀ + S
        K = matmul(gain_num, F_inv)
        P_next = apply_w(apply_w(P).T) + jnp.diag(rho) - matmul(K, gain_num.T)
        nu = E[hs] * mask[:, None]  # every agent's innovation, (Ō, N)
        total = total + jnp.sum(nu * matmul(F_inv, nu), axis=0)
        E_next = apply_w(E) - matmul(K, nu) + every_step * jnp.eye(n)
        return ((P_next + P_next.T) / 2, E_next, total), (K, F_inv) if every_step else None

    init = (jnp.diag(local), jnp.eye(n), jnp.zeros(n))
    (_, _, total), gains = jax.lax.scan(step, init, None, length=steps)
    return gains, total


def _transposed_step(apply_wt, K, sel):
    """``X ↦ A_kᵀ X`` (any leading batch axes of ``(N, N)`` blocks), ``A_k = W − K H``, ``sel``
    the ``(Ō, N)`` one-hot ``H`` (zero rows for padding)."""
    def apply(X):
        return apply_wt(X) - einsum("en,ie,...im->...nm", sel, K, X)
    return apply


def _backward(W, apply_wt, gains, hs, mask, band: int, etas=()):
    """``(Σ_k Q_kk, Σ_k r_k, (Σ_k √Q_kk)², D)`` per agent, ``r_k ≥ Σ_{s>k} |Q_ks|`` the row bound
    and ``D`` the certificate bound (``inf`` without ``etas``) of the module docstring."""
    n = W.shape[0]
    sel = jax.nn.one_hot(hs, n, dtype=W.dtype) * mask[:, None]
    first = mask * (jnp.argmax(hs[None, :] == hs[:, None], axis=1) == jnp.arange(hs.size))

    def step(carry, xs):
        # Λ_{k+1}; Φ(k+1+j, k+1)ᵀ Λ_{k+1+j} (j < band); t_{k+1}; M^{(m)}_{k+1} (m ≤ band)
        lam, near, tail, energy, cert, dead = carry
        K, F_inv = xs
        at = _transposed_step(apply_wt, K * mask[None, :], sel)
        near_k = at(jnp.concatenate([lam[None], near[:-1]]))  # Φ(k+1+j, k)ᵀ Λ_{k+1+j}
        def congruence(X):  # A_kᵀ X A_k
            return jnp.swapaxes(at(jnp.swapaxes(at(X), -1, -2)), -1, -2)
        energy_k = congruence(energy)
        weight = einsum("en,ef,fm->nm", sel, F_inv, sel)  # M_k = Hᵀ F_k⁻¹ H
        lam_k = weight + energy_k[0]
        cert_k, dead_k = _certificate_step(congruence, weight, cert, dead, etas)
        # t_k = |A_k|ᵀ (t_{k+1} + |Φ(k+band, k+1)ᵀ Λ_{k+band}|); |A_k| = |W| off the columns hs
        x = tail + jnp.abs(near[-1])
        out = apply_wt.abs(x)
        cols = jnp.abs(W[:, hs] - matmul(K * mask[None, :], matmul(sel, sel.T)))  # columns hs of A_k
        tail_k = out + matmul(sel.T, (matmul(cols.T, x) - out[hs]) * first[:, None])
        exact = jnp.sum(jnp.abs(jnp.diagonal(near_k, axis1=1, axis2=2)), axis=0)
        rows = (jnp.diagonal(lam_k), exact, jnp.diagonal(tail_k), jnp.diagonal(energy_k[-1]),
                cert_k[:, agents, agents, agents])
        energy_next = jnp.concatenate([lam_k[None], energy_k[:-1]])
        return (lam_k, near_k, tail_k, energy_next, cert_k, dead_k), rows

    zeros, agents, n_eta = jnp.zeros((n, n)), jnp.arange(n), len(etas)
    init = (zeros, jnp.zeros((band, n, n)), zeros, jnp.zeros((band + 1, n, n)),
            jnp.zeros((n_eta, n, n, n)), jnp.zeros((n_eta, n), bool))
    (*_, dead), (q_diag, exact, tail, energy, cert) = jax.lax.scan(step, init, gains, reverse=True)
    root = jnp.sqrt(jnp.maximum(q_diag, 1e-300))  # (T, N)
    later = jnp.cumsum(root[::-1], axis=0)[::-1]  # Σ_{s ≥ k} √Q_ss
    beyond = jnp.concatenate([later[band + 1:], jnp.zeros((min(band + 1, len(later)), n))])  # Σ_{s > k+band}
    schwarz = jnp.sqrt(jnp.maximum(energy, 1e-300)) * beyond
    rows = exact + jnp.minimum(tail, schwarz)
    return q_diag.sum(axis=0), rows.sum(axis=0), root.sum(axis=0) ** 2, _certified(cert, dead, etas)


CERTIFICATE_LIMIT = 1e100
"""A certificate recursion whose ``X_k`` has a diagonal entry past this is abandoned (its bound set to ``inf``)
before it can overflow (an ``inf`` or ``nan`` would also poison the gradients of the others)."""


def _certificate_step(congruence, weight, X, dead, etas):
    """One backward step of the per-agent certificate (module docstring) for every ``η`` of
    ``etas`` and every agent ``u`` (``X``: ``(len(etas), N, N, N)``, ``X[:, u]`` agent ``u``'s
    ``X_{k+1}``): ``X_k = M_k + A_kᵀ (X_{k+1} + w wᵀ / (η (X_{k+1})_{uu})) A_k``, ``w = X_{k+1}
    e_u`` (``congruence``: ``X ↦ A_kᵀ X A_k``); a pair is zeroed and marked ``dead`` once past
    :data:`CERTIFICATE_LIMIT`."""
    if not etas:
        return X, dead
    agents = jnp.arange(X.shape[-1])
    w = jnp.moveaxis(X[:, agents, :, agents], 0, 1)  # (η, u, N): X[η, u] e_u
    diag = X[:, agents, agents, agents]  # (η, u)
    eta = jnp.asarray(etas)[:, None]
    scale = jnp.where(diag > 0, 1.0 / (eta * jnp.where(diag > 0, diag, 1.0)), 0.0)
    Y = X + scale[..., None, None] * w[..., :, None] * w[..., None, :]
    X_k = weight[None, None] + congruence(Y)
    dead_k = dead | (jnp.max(jnp.diagonal(X_k, axis1=-2, axis2=-1), axis=-1) > CERTIFICATE_LIMIT)
    return jnp.where(dead_k[..., None, None], 0.0, X_k), dead_k


def _certified(diag, dead, etas):
    """``D = min_η [(X_0)_{uu} + (1 + η) Σ_{k≥1} (X_k)_{uu}]`` per agent (``diag``: ``(T,
    len(etas), N)`` the certificate's ``(X_k)_{uu}``; ``inf`` for a dead pair)."""
    if not etas:
        return jnp.full(diag.shape[-1], jnp.inf)
    bound = diag[0] + (1.0 + jnp.asarray(etas)[:, None]) * diag[1:].sum(axis=0)
    return jnp.min(jnp.where(dead, jnp.inf, bound), axis=0)


@dataclasses.dataclass(frozen=True)
class GossipStructure:
    """The static part of an accounting problem (hashable: no weights, no noise scales).

    Attributes:
      edges: ``(2, 2E)`` every directed edge's sender and receiver.
      nbrs: :func:`neighbour_lists` of ``W``.
      observers: :class:`Observers`.
      steps: ``T``.
      every_step: contributions at every step (else only at ``k = 0``).
      band: every step: the entries ``Q_{ks}``, ``0 < s − k ≤ band``, computed exactly (the rest
        bounded); cost and memory of the backward pass grow linearly with it.
      etas: every step: the ``η`` grid of the per-agent certificate (module docstring,
        Proposition 2); empty: not computed.
    """

    edges: np.ndarray
    nbrs: np.ndarray
    observers: Observers
    steps: int
    every_step: bool
    band: int = 1
    etas: tuple[float, ...] = ()


def gossip_mu2(W, sigma_local, sigma_message, structure: GossipStructure):
    """``(bound, signed)``: ``(N, V)`` ``μ²/Δ²`` per agent and observer — the sound bound
    (module docstring: ``Q_{00}`` for one contribution, ``min(B, (Σ_k√Q_kk)², tr D)`` for every
    step, ``tr D`` Proposition 2's where ``structure.etas`` is not empty)
    and the attained signed sum ``Σ_{k,s} Q_{ks}`` (equal to the bound for one contribution) —
    ``inf`` for members. Pure ``jnp``: differentiable in ``W`` (dense ``(N, N)``, nonzero only
    where ``structure.nbrs`` say), ``sigma_local`` (scalar or ``(N,)``) and ``sigma_message``."""
    W = jnp.asarray(W)
    apply_w, apply_wt = _mixing(W, structure.nbrs[0]), _mixing(W.T, structure.nbrs[1])
    edges, obs = jnp.asarray(structure.edges), structure.observers

    def one(args):
        hs, hr, mask, members = args
        local, rho = _noise(W, sigma_local, sigma_message, edges, members)
        gains, signed = _forward(W, apply_w, local, rho, sigma_message, hs, hr, mask,
                                 structure.steps, structure.every_step)
        if not structure.every_step:
            bound = signed
        else:
            diag, rows, schwarz, certified = _backward(W, apply_wt, gains, hs, mask,
                                                       structure.band, structure.etas)
            bound = jnp.minimum(jnp.minimum(diag + 2 * rows, schwarz), certified)
        out = members > 0
        return jnp.where(out, jnp.inf, bound), jnp.where(out, jnp.inf, signed)

    args = tuple(jnp.asarray(a) for a in (obs.senders, obs.receivers, obs.mask, obs.members))
    if obs.mask.shape[0] <= OBSERVER_BATCH:
        bound, signed = jax.vmap(one)(args)
    else:
        bound, signed = jax.lax.map(one, args, batch_size=OBSERVER_BATCH)
    return bound.T, signed.T


MAX_BYTES = 1.5e9
"""The largest memory the structured accountant may plan for (stored gains or the certificate's
working memory of one batch) on a CPU; see :func:`planning_limit`."""


def planning_limit() -> float:
    """:data:`MAX_BYTES`, or half the default device's memory where it reports one (a GPU),
    whichever is larger: an N = 100 random graph's certificate needs 3.4 GB per batch."""
    stats = jax.devices()[0].memory_stats() or {}
    return max(MAX_BYTES, 0.5 * stats.get("bytes_limit", 0))


def edge_mixing(weights, edges, n_agents: int):
    """``W = I − Σ_e w_e (1_i − 1_j)(1_i − 1_j)ᵀ`` over undirected ``edges`` ``(2, E)``: symmetric
    with rows summing to 1 for any ``weights`` (doubly stochastic while ``W_ii ≥ 0``), so a
    gradient step on ``weights`` stays in the family. Differentiable in ``weights``."""
    i, j = jnp.asarray(edges)
    off = jnp.zeros((n_agents, n_agents)).at[i, j].add(weights).at[j, i].add(weights)
    return jnp.eye(n_agents) + off - jnp.diag(off.sum(axis=1))


def _check_etas(etas) -> tuple[float, ...]:
    """``etas`` as a tuple of floats, each finite and ``> 0`` (else ``ValueError`` naming it)."""
    out = tuple(float(e) for e in np.atleast_1d(np.asarray(etas, np.float64)))
    bad = [e for e in out if not (np.isfinite(e) and e > 0)]
    if bad:
        raise ValueError(f"etas must be finite and > 0 (the certificate's split ratios); got {bad}")
    return out


def structure_of(form, views, band: int = 1, etas=()) -> GossipStructure:
    """The :class:`GossipStructure` of a :class:`~jaxdp.privacy.pairwise.LinearGossip` and its
    observers.

    Raises:
      ValueError: an ``F_k`` that may be singular (no message noise and an observed sender
        repeated or without local noise: the dense accountant handles it), or a batch of stored
        gains or of the certificate's working memory beyond :func:`planning_limit`, or an ``η`` of
        ``etas`` not finite and positive.
    """
    obs = Observers.from_views(views, form.senders, form.receivers, form.n_agents)
    if not form.sigma_message > 0:
        for hs, mask in zip(obs.senders, obs.mask, strict=True):
            seen = hs[mask > 0]
            if len(set(seen.tolist())) < seen.size or np.any(form.sigma_local[seen] <= 0):
                raise ValueError("the structured accountant needs sigma_message > 0, or distinct "
                                 "observed senders with sigma_local > 0 (else Σ may be singular): "
                                 "use method='dense'")
    every = form.contributions == "every_step"
    batch = min(OBSERVER_BATCH, len(views))
    width = obs.mask.shape[1]
    need, limit = 8.0 * batch * form.steps * width * (form.n_agents + width) * every, planning_limit()
    if need > limit:
        raise ValueError(f"the structured accountant would store {need:.2g} bytes of gains "
                         f"(limit {limit:g}) for T = {form.steps}, {width} observed edges")
    etas, nbrs = _check_etas(etas), neighbour_lists(form.W)
    etas = etas if every else ()
    work = 8.0 * batch * len(etas) * form.n_agents ** 3 * (nbrs.shape[-1] + 2)
    if work > limit:
        raise ValueError(f"the per-agent certificate would hold {work:.2g} bytes (limit "
                         f"{limit:g}) for N = {form.n_agents}, {len(etas)} etas, degree "
                         f"{nbrs.shape[-1] - 1}: fewer etas, or none")
    return GossipStructure(np.stack([form.senders, form.receivers]), nbrs, obs, form.steps,
                           every, band, etas)


def gossip_structure(form, threat="neighbours", band: int = 1, etas=()) -> GossipStructure:
    """The :class:`GossipStructure` of ``form`` (a :class:`~jaxdp.privacy.pairwise.LinearGossip`)
    against ``threat``'s observers (:func:`jaxdp.privacy._views.views`): the static argument of
    :func:`gossip_mu2`. Raises as :func:`structure_of`."""
    return structure_of(form, observer_views(form, threat), band, etas)


def structured_mu(form, views, band: int = 1, etas=()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(μ, exact, signed)``: ``(N, V)`` as :func:`jaxdp.privacy._pairwise.observer_mu` stacked
    over ``views``, from :func:`gossip_mu2` in float64 (a scoped ``jax.enable_x64``): ``μ = Δ
    √bound``, ``exact`` where the bound is attained (one contribution, or ``bound ≤ 1ᵀQ1 (1 +
    10⁻⁹)``), and ``signed = Δ² 1ᵀQ1``."""
    structure = structure_of(form, views, band, etas)
    with jax.enable_x64(True):
        bound, signed = (np.asarray(a) for a in gossip_mu2(
            form.W, form.sigma_local, form.sigma_message, structure))
    exact = np.isinf(bound) | (bound <= signed * (1 + 1e-9))
    return form.sensitivity * np.sqrt(bound), exact, form.sensitivity ** 2 * signed
