"""Muffliato's pairwise Rényi bounds: the corrected one for Muffliato-SGD with one gossip round per step,
and the printed one for gossip averaging (issue 24).

**The mechanism** (Cyffers, Even, Bellet & Massoulié, "Muffliato", NeurIPS 2022; arXiv
2206.05091): on a fixed graph with gossip matrix ``W``, at every step ``t = 1..T`` each agent adds
Gaussian noise ``N(0, σ²)`` to its contribution (a gradient step whose change between neighbouring
data sets is at most ``Δ_φ`` in ℓ2), then one gossip round ``x ← W x``: the
:class:`~jaxdp.privacy.pairwise.LinearGossip` mechanism with ``σ_ℓ = σ``, ``σ_m = 0``,
``sensitivity = Δ_φ`` and ``contributions = "every_step"``. Agent ``v`` observes the messages of the
agents ``w ∈ O(v) = {w : W_{vw} > 0}`` (its neighbours, and itself when ``W_{vv} > 0``).

**The corrected bound** (arXiv 2206.05091, latest version, Theorem 11, as transcribed by Bellet
et al., MFDL, ICLR 2026, arXiv 2510.17480, whose code states that it differs from the NeurIPS
2022 printed formula):

.. math::
    ε^T_{u→v}(α) ≤ \\frac{α Δ_φ^2}{2σ^2} \\sum_{t=1}^{T} \\sum_{j=t}^{T} \\sum_{w ∈ O(v)}
    \\frac{(W^{j-t})_{uw}}{\\lVert W^{j-t} e_w \\rVert^2}
    = \\frac{α Δ_φ^2}{2σ^2} \\sum_{s=0}^{T-1} (T-s) \\sum_{w ∈ O(v)}
    \\frac{(W^{s})_{uw}}{\\lVert W^{s} e_w \\rVert^2},

a Rényi-DP bound at every order ``α > 1`` (the second form is the change of variable
``s = j − t``). The theorem assumes a symmetric ``W``; for a row-stochastic one the index order
``(W^s)_{uw}`` and the column norm ``‖W^s e_w‖`` are MFDL's. MFDL also clips the sum at ``T``
(the local-DP composition of ``T`` Gaussian releases, sound for every observer): ``ldp_clip``.

**The printed (NeurIPS 2022) variant, for gossip averaging** (:func:`muffliato_printed_sum`):
one noisy value ``x̃ = x + σ η`` per agent, then ``T`` gossip rounds ``x^t = W^t x̃``; the
observer ``v`` sees its neighbours' values ``x_w^t``, ``t = 1..T``. The bound composes one
Gaussian mechanism per received message, each of sensitivity ``(W^t)_{wu} Δ`` and noise
``σ ‖(W^t)_{w,:}‖``:

.. math::
    ε^T_{u→v}(α) ≤ \\frac{α Δ^2}{2σ^2} \\sum_{t=1}^{T} \\sum_{w ∈ N(v), w ≠ v}
    \\frac{(W^t)_{wu}^2}{\\lVert (W^t)_{w,:} \\rVert^2},

as the authors' released code computes it (the squared
entry over the squared row norm, summed over ``v``'s neighbours without ``v`` and over the
powers ``W¹..W^T``; the paper's text itself could not be read here). **It is wrong**: the
messages share the same noise ``η``, so composing them as independent mechanisms does not bound
what an observer who combines them learns. On a 6-path with ``T = 3`` the observer ``v = 4``
receives 6 values in the 5 unknowns ``x̃_j, j ≠ v``, solves for ``x̃_0`` and faces agent 0's
local release itself (``ε(α) = αΔ²/(2σ²)``, the exact ideal value), while the formula gives
0.0068 of that. At ``T = 3`` it is below the exact value at 53 %, 71 %, 65 % and 61 % of
the ordered pairs of a 6-path, an 8-ring, the Florentine families and an Erdős–Rényi graph
(20 agents, p = 0.25) with these weights (``tests/test_muffliato_bound.py``), and an
empirical attack of the ideal mechanism catches it. It is kept as the printed curve (the
project's rule for a paper's error) and no report uses it.

**What the bound is worth.** It is the paper's bound for the IDEAL mechanism (real-valued
Gaussian noise); like :func:`~jaxdp.privacy.pairwise.linear_gossip_epsilon` it is not a bound for
the library's lattice noise mixed by ``W``, and no :class:`~jaxdp.privacy.PrivacyReport` uses it.
On every graph tested (paths, rings, Florentine families, Erdős–Rényi; tests/test_muffliato_bound.py)
it lies above the exact ideal value ``Δ²Σ|Q|`` of :mod:`jaxdp.privacy._pairwise` at every pair,
by a factor above 2 (7 or more at ``T = 10`` on the graphs of ``jaxdp reproduce muffliato``): sound
there, and loose.
"""
from __future__ import annotations

import numpy as np


def _check(W, steps: int, sensitivity: float, sigma: float) -> np.ndarray:
    W = np.asarray(W, np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 2:
        raise ValueError(f"W must be a square (N, N) matrix with N >= 2; got shape {W.shape}")
    if not np.all(np.isfinite(W)) or np.any(W < 0):
        raise ValueError("W must be finite and entrywise >= 0 (a gossip matrix)")
    if isinstance(steps, bool) or int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be an integer >= 1; got {steps!r}")
    if not (sensitivity > 0 and np.isfinite(sensitivity)):
        raise ValueError(f"sensitivity must be finite and > 0; got {sensitivity!r}")
    if not (sigma > 0 and np.isfinite(sigma)):
        raise ValueError(f"sigma must be finite and > 0; got {sigma!r}")
    return W


def muffliato_corrected_sum(W, steps: int) -> np.ndarray:
    """``(N, N)``: the double sum of Theorem 11 (module docstring), ``S[u, v] = Σ_s (T−s)
    Σ_{w∈O(v)} (W^s)_{uw} / ‖W^s e_w‖²``, for every pair at once (one ``(N, N)`` product per
    ``s``; ``T`` matrix powers). ``ε_{u→v}(α) = α Δ² S[u, v] / (2σ²)``; ``S`` is the squared
    Gaussian sensitivity (μ², in noise units) that the bound implies."""
    W = _check(W, steps, 1.0, 1.0)
    observes = (W > 0).astype(np.float64)  # observes[v, w]: v receives w's message
    total, power = np.zeros_like(W), np.eye(W.shape[0])
    for s in range(int(steps)):
        total += (steps - s) * (power / np.sum(power * power, axis=0)) @ observes.T
        power = power @ W
    return total


def muffliato_printed_sum(W, steps: int) -> np.ndarray:
    """``(N, N)``: the printed gossip-averaging sum (module docstring; WRONG, kept as the printed
    curve), ``S[u, v] = Σ_{t=1}^{T} Σ_{w ∈ N(v), w ≠ v} (W^t)_{wu}² / ‖(W^t)_{w,:}‖²``, every
    pair at once; ``ε_{u→v}(α) = α Δ² S[u, v] / (2σ²)``."""
    W = _check(W, steps, 1.0, 1.0)
    neighbours = ((W > 0) & ~np.eye(W.shape[0], dtype=bool)).astype(np.float64)  # [v, w]
    total, power = np.zeros_like(W), W.copy()
    for _ in range(int(steps)):
        per_message = power ** 2 / np.sum(power ** 2, axis=1, keepdims=True)  # [w, u]
        total += (neighbours @ per_message).T
        power = power @ W
    return total


def muffliato_corrected_rdp(W, steps: int, alpha: float, *, sensitivity: float = 1.0,
                            sigma: float = 1.0, ldp_clip: bool = False) -> np.ndarray:
    """``(N, N)`` ``ε_{u→v}(α)`` of Muffliato's corrected Theorem 11 (arXiv 2206.05091; module
    docstring), ``[u, v]`` indexed, ``inf`` on the diagonal.

    Args:
      W: ``(N, N)`` the gossip matrix (the theorem's is symmetric and stochastic).
      steps: ``T``.
      alpha: the Rényi order ``α > 1``.
      sensitivity: ``Δ_φ``; sigma: ``σ``, the local noise std.
      ldp_clip: clip the sum at ``T`` (MFDL's choice: the local-DP composition bound).

    Raises:
      ValueError: a malformed ``W`` or a parameter out of its domain, naming it.
    """
    W = _check(W, steps, sensitivity, sigma)
    if not (alpha > 1 and np.isfinite(alpha)):
        raise ValueError(f"alpha must be a finite Rényi order > 1; got {alpha!r}")
    total = muffliato_corrected_sum(W, steps)
    if ldp_clip:
        total = np.minimum(total, float(steps))
    eps = alpha * sensitivity ** 2 * total / (2 * sigma ** 2)
    np.fill_diagonal(eps, np.inf)
    return eps


def gaussian_rdp_of_mu(mu, alpha: float) -> np.ndarray:
    """``α μ² / 2``: the Rényi divergence of order ``α`` between ``N(0, 1)`` and ``N(μ, 1)``
    (Mironov, CSF 2017, Prop. 7): the exact accountant's ``μ`` (an upper bound ``Δ√Σ|Q|``, see
    :mod:`jaxdp.privacy._pairwise`) on the RDP scale of Muffliato's bound. Host float64, one
    order; :func:`~jaxdp.privacy.closed_forms.gaussian_rdp` is the ``jnp`` form over orders and
    steps."""
    mu = np.asarray(mu, np.float64)
    return alpha * mu * mu / 2
