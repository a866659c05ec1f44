r"""Paper 004's closed forms: Theorem 2 (ε, its Rényi order and its inverse σ_e) and the
moments-accountant σ that reproduces PORTER's printed noise; float64 numpy, broadcasting.

**Theorem 2** (LT-ADMM-DP, eq. (9)-(11)). With q = b/m_i, A = 2Kτζ²q²/σ_e² and L = log(1/δ):

.. math:: \varepsilon = \min_{\alpha > 1} \Big[\alpha A + \frac{L}{\alpha - 1}\Big]
          = A + 2\sqrt{A L}, \qquad \alpha^\star = 1 + \sqrt{L/A}, \qquad
          \sigma_e = \frac{\zeta q \sqrt{2K\tau}}{\sqrt{\varepsilon + L} - \sqrt{L}}

Erratum: the paper's "ε = 19.6" at its settings (K = 4000, τ = 4, ζ = 1, b = 8, m = 1000,
σ_e = 0.5, δ = 1e-4) is (9) with L = log₁₀(1/δ) = 4 (19.64); the RDP-to-DP conversion (Lemma 1,
Mironov 2017 Prop. 3) needs the natural log, which gives 25.56. Both are paper curves of the report
(:data:`~jaxdp.privacy.PAPER_PRINTED`, :data:`~jaxdp.privacy.PAPER_CORRECTED`), never the guarantee:
(9) is the small-q asymptotic q²·α(2ζ)²/(2σ_e²) of the Poisson-subsampled Gaussian RDP, used far
outside its regime (noise multiplier σ_e/(2ζ) = 0.25), and it assumes Poisson sampling while
Algorithm 1 draws fixed-size batches.

The guarantee, the accountants and calibration are in :mod:`jaxdp.algorithms.ltadmm.privacy`
(which re-exports these functions); there the two Theorem 2 readings are paper curves only.
"""
from __future__ import annotations

import math

import numpy as np


# -- Theorem 2 (closed form) ---------------------------------------------------------------------
def _log_inv_delta(delta, log_base) -> np.ndarray:
    """L = log(1/δ): natural (``log_base=None``, correct) or in ``log_base`` (10: as printed)."""
    value = -np.log(np.asarray(delta, np.float64))
    return value if log_base is None else value / math.log(log_base)


def theorem2_a(rounds, tau, zeta, batch_size, n_rows, sigma_e) -> np.ndarray:
    """A = 2Kτζ²q²/σ_e² with q = b/m (the RDP slope of Theorem 2's proof, (10) composed)."""
    q = np.asarray(batch_size, np.float64) / np.asarray(n_rows, np.float64)
    return 2.0 * rounds * tau * (np.asarray(zeta, np.float64) * q
                                 / np.asarray(sigma_e, np.float64)) ** 2


def theorem2_epsilon(rounds, tau, zeta, batch_size, n_rows, sigma_e, delta, *,
                     log_base=None) -> np.ndarray:
    """Theorem 2's ε_i, eq. (9): ``A + 2√(A L)`` (float64; broadcasts over its arguments).

    Args:
      rounds: K.
      tau: τ, local steps per round.
      zeta: ζ.
      batch_size: |B_i| = b.
      n_rows: m_i.
      sigma_e: σ_e.
      delta: δ_i.
      log_base: ``None`` for L = ln(1/δ) (correct); 10 reproduces the paper's printed 19.6.

    Example:
      >>> round(float(theorem2_epsilon(4000, 4, 1.0, 8, 1000, 0.5, 1e-4, log_base=10)), 4)
      19.6407
    """
    a = theorem2_a(rounds, tau, zeta, batch_size, n_rows, sigma_e)
    big_l = _log_inv_delta(delta, log_base)
    return a + 2.0 * np.sqrt(a * big_l)  # (9)


def theorem2_order(rounds, tau, zeta, batch_size, n_rows, sigma_e, delta, *,
                   log_base=None) -> np.ndarray:
    """The optimal Rényi order of (11): ``α* = 1 + √(L/A)``."""
    a = theorem2_a(rounds, tau, zeta, batch_size, n_rows, sigma_e)
    return 1.0 + np.sqrt(_log_inv_delta(delta, log_base) / a)


def theorem2_sigma(epsilon, rounds, tau, zeta, batch_size, n_rows, delta, *,
                   log_base=None) -> np.ndarray:
    """σ_e that gives ``epsilon`` by (9): ``ζ q √(2Kτ) / (√(ε + L) − √L)`` (closed-form inverse).

    Raises:
      ValueError: ``epsilon`` not > 0.
    """
    epsilon = np.asarray(epsilon, np.float64)
    if np.any(~(epsilon > 0)):
        raise ValueError(f"theorem2_sigma: epsilon must be > 0; got {epsilon}")
    big_l = _log_inv_delta(delta, log_base)
    q = np.asarray(batch_size, np.float64) / np.asarray(n_rows, np.float64)
    return np.asarray(zeta, np.float64) * q * np.sqrt(2.0 * rounds * tau) / (
        np.sqrt(epsilon + big_l) - np.sqrt(big_l))


def moments_accountant_sigma(epsilon, delta, steps, clip, n_rows, *, c=8.0, log_base=None):
    """``σ = c·C·√(T·log(1/δ)) / (m·ε)``: the Abadi et al. (2016, Thm 1) form for a per-sample
    clipped minibatch mean (noise multiplier c·q√(T log(1/δ))/ε times sensitivity C/b, q = b/m).

    A reconstruction, not in paper 004: with c = 8, T = Kτ = 16000, C = 1, m = 1000, ε = 19.6 and
    log₁₀ (the same slip as Theorem 2's 19.6) it gives 0.1033, the σ = 0.103 printed for PORTER.
    """
    big_l = _log_inv_delta(delta, log_base)
    return c * np.asarray(clip, np.float64) * np.sqrt(steps * big_l) / (
        np.asarray(n_rows, np.float64) * np.asarray(epsilon, np.float64))


__all__ = ["moments_accountant_sigma", "theorem2_a", "theorem2_epsilon", "theorem2_order",
           "theorem2_sigma"]
