"""Declared linear forms: an algorithm's messages as ``A c + B z``, and the ideal curve they give.

An algorithm whose messages are linear in its agents' clipped contributions and its Gaussian
noise declares that form (``Algorithm.linear_form``) instead of being recognised by name; the
privacy contract then adds, under a threat model other than the eavesdropper, the curve
:data:`IDEAL_LINEAR`: the matrix-factorization accountant
(:func:`jaxdp.privacy.pairwise.factorization_epsilon`; Bellet, Cyffers, Frey, Gaudel, Lerévérend &
Taïani, ICLR 2026, arXiv:2510.17480) applied to the declared form at every reported step. The form
is checked against the program in the tests: the stacked algorithm, fed the same noise, emits
exactly ``A c + B z``.

**The form** (:class:`GossipForm`): broadcast gossip of noisy contributions with ``R`` rounds per
step, ``p^k = W^R p^{k−1} + a_i s_k (c_i^k + σ_i ξ_i^k)`` (``p^{−1} = 0``, ``s_k = (k+1)^{−γ}``),
agent ``i`` sending ``(W^r p^k)_i`` to its out-neighbours for ``r < R``. DGD on noisy clipped
gradients (``R = 1``, ``p^k = x^{k+1}``, ``a_i = −α_i``) and Muffliato-GD (``p^k = y^{k,0}``) are
of this form. The rows are the messages and, for DGD, the final model ``x^K`` (the sound report
also charges the ``K``-th gradient): dropping rows only lowers ε, so the curve covers the
``"messages"`` release too.

**What the curve is not**: the ε of the continuous Gaussian mechanism with contributions fixed in
advance. The library's noise is a lattice (a discrete Gaussian mixed by real weights is not
Gaussian) and each gradient depends on the messages received before, so it is never the guarantee.
"""
from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._precision import einsum, matmul
from jaxdp.privacy._factorization import (
    MAX_CONTRIBUTIONS,
    MAX_ROWS,
    LinearRelease,
    factorization_epsilon,
)
from jaxdp.privacy._gossip_release import gossip_release
from jaxdp.privacy._pairwise import gaussian_epsilon
from jaxdp.privacy._threat import as_threat

IDEAL_LINEAR = "ideal linear gossip (non-adaptive Gaussian)"
"""A report's curve: the matrix-factorization ε of the algorithm's declared linear form."""

MAX_IDEAL_WORK = 2e10
"""The most multiply-adds a report spends on :data:`IDEAL_LINEAR` (about 10 s on one core)."""

IDEAL_LINEAR_NOTE = (
    "The matrix-factorization accountant on this algorithm's declared linear form (its messages "
    "as A c + B z, checked against the program in the tests), against {observer}, user level "
    "(every step's contribution may change by its clip bound): the ε of the continuous Gaussian "
    "mechanism with contributions fixed in advance. It covers neither the lattice floats on the "
    "wire nor gradients that depend on received messages (it is not a bound for an adaptive "
    "run): never the guarantee.")


@dataclasses.dataclass(frozen=True)
class GossipForm:
    """Broadcast gossip of noisy contributions, ``R`` rounds per step (module docstring).

    Attributes:
      W: ``(N, N)`` mixing matrix (``x_i ← Σ_j W_ij x_j``; ``j`` sends to ``i`` where
        ``W_ij ≠ 0``).
      rounds: ``R ≥ 1``.
      scale: ``(N,)`` ``a_i``, the contribution's coefficient (``−α_i`` for a gradient step).
      noise: ``(N,)`` ``σ_i``, the std of the Gaussian added to a contribution.
      sensitivity: ``(N,)`` how far one contribution may move (``2C_i`` replacing an agent).
      decay: ``γ``: the step ``k`` carries ``s_k = (k+1)^{−γ}``.
      decoder: ``None`` (independent draws), or a ``(T, T)`` lower-triangular noise decoder
        ``L`` for runs of up to ``T`` steps: the noise of step ``k`` is ``σ_i (L ξ_i)^k``
        (MFDL's ``C⁻¹`` for an encoder ``C``: MAFALDA-SGD's correlated noise).
    """

    W: np.ndarray
    rounds: int
    scale: np.ndarray
    noise: np.ndarray
    sensitivity: np.ndarray
    decay: float = 0.0
    decoder: np.ndarray | None = None

    def fits(self, steps: int) -> str:
        """``""`` when the dense accountant takes ``steps`` steps, else why not."""
        n = self.W.shape[0]
        if self.decoder is not None and steps > len(self.decoder):
            return f"the noise decoder covers {len(self.decoder)} steps, not {steps}"
        if n * steps > MAX_CONTRIBUTIONS or n * steps * self.rounds > MAX_ROWS:
            return (f"N·K = {n}·{steps} contributions and {n * steps * self.rounds} rows exceed "
                    f"the dense accountant's {MAX_CONTRIBUTIONS} and {MAX_ROWS}")
        return ""

    def work(self, threat, at_steps) -> float:
        """About the multiply-adds of :func:`ideal_curve` (per observer and reported step: the
        view's covariance ``M²·Nk`` and its eigendecomposition ``M³``, ``M`` its rows)."""
        n, k = self.W.shape[0], np.asarray(at_steps, np.float64)
        in_degree = int(np.max(np.sum((self.W != 0) & ~np.eye(n, dtype=bool), axis=1)))
        rows = {"neighbours": in_degree, "secret_pairs": n}.get(threat.name, n) * self.rounds * k
        observers = {"neighbours": n, "secret_pairs": n + 1}.get(threat.name, 1)
        return float(observers * np.sum(rows ** 2 * n * k + rows ** 3))

    def release(self, steps: int) -> LinearRelease:
        """The :class:`~jaxdp.privacy.pairwise.LinearRelease` of the first ``steps`` steps; rows
        ordered ``(k, r, i)``, seeds ``ξ_i^k`` ordered ``(k, i)`` (one compiled program per
        shape)."""
        n = self.W.shape[0]
        receivers, senders = np.nonzero(self.W * (1 - np.eye(n)))
        decoder = None if self.decoder is None else np.asarray(self.decoder)[:steps, :steps]
        A, B = _gossip_rows(jnp.asarray(self.W, jnp.float64), jnp.asarray(self.scale),
                            jnp.asarray(self.noise), self.decay, decoder,
                            (tuple(senders), tuple(receivers)), steps, self.rounds)
        audience = np.zeros((n, n), bool)
        audience[senders, receivers] = True
        per_row = steps * self.rounds
        return LinearRelease(A, B, np.tile(audience, (per_row, 1)), np.tile(np.arange(n), per_row),
                             np.repeat(np.eye(n, dtype=bool)[None], steps, axis=0).reshape(-1, n))

    def truncate(self, release: LinearRelease, steps: int) -> LinearRelease:
        """The host (numpy) release of the first ``steps`` steps of ``release`` (built for more):
        its first rows and contribution columns, equal to :meth:`release` ``(steps)`` (a step's
        messages depend on the past only)."""
        rows = steps * self.rounds * self.W.shape[0]
        return LinearRelease(np.asarray(release.A)[:rows, :, :steps],
                             np.asarray(release.B)[:rows], release.audience[:rows],
                             release.senders[:rows], release.knowers)


@functools.partial(jax.jit, static_argnums=(5, 6, 7))
def _gossip_rows(W, scale, noise, decay, decoder, edges, steps: int, rounds: int):
    """``(A, B)`` of :meth:`GossipForm.release`: :func:`~jaxdp.privacy.pairwise.gossip_release` with
    ``W^R`` (its local seeds only: the others are zero here), then the rows ``W^r p^k``."""
    n = W.shape[0]
    s = jnp.arange(1, steps + 1, dtype=W.dtype) ** -decay
    L = jnp.diag(s) if decoder is None else matmul(jnp.diag(s), decoder)
    base = gossip_release(jnp.linalg.matrix_power(W, rounds), tuple(map(np.asarray, edges)),
                          steps, sigma_local=scale * noise, decoder=L, broadcast=True)
    A = base.A * (scale[None, :, None] * s[None, None, :])
    powers = jnp.stack([jnp.linalg.matrix_power(W, r) for r in range(rounds)])
    A = einsum("rij,kjut->kriut", powers, A.reshape(steps, n, n, steps))
    B = einsum("rij,kjz->kriz", powers, base.B[:, :steps * n].reshape(steps, n, -1))
    return A.reshape(-1, n, steps), B.reshape(steps * rounds * n, -1)


def ideal_curve(form: GossipForm, threat, at_steps, delta: float) -> tuple[np.ndarray, str]:
    """``((N, K') ε, note)``: :data:`IDEAL_LINEAR` of ``form`` at each step count of ``at_steps``
    — each agent against its worst observer of ``threat`` (not the eavesdropper: its report is the
    reference) — or ``(None, why not)`` when the dense accountant does not take the run."""
    threat = as_threat(threat)
    if threat.name == "eavesdropper":
        raise ValueError("the ideal linear curve is for the pairwise and secret threat models")
    why = form.fits(int(np.max(at_steps)))
    if not why and form.work(threat, at_steps) > MAX_IDEAL_WORK:
        why = (f"about {form.work(threat, at_steps):.1e} multiply-adds, above the "
               f"{MAX_IDEAL_WORK:.0e} a report spends on it "
               "(call jaxdp.privacy.pairwise.ideal_curve with fewer steps)")
    if why:
        return None, why
    steps = np.asarray(at_steps, np.int64)
    with jax.enable_x64(True):  # the accountant's float64, whatever the caller's setting
        full = form.release(int(steps.max()))
    columns = []
    for k in steps:  # the first k steps' rows and contributions: the same release, truncated
        result = factorization_epsilon(form.truncate(full, int(k)), delta, threat)
        columns.append(result.worst_mu * form.sensitivity)
    observer = {"neighbours": "each agent's worst single observer v ≠ u (max_v ε_{u→v})",
                "secret_pairs": "the outsider and every single curious agent"}.get(
        threat.name, "the coalition (its members are not protected)")
    return gaussian_epsilon(np.stack(columns, axis=1), delta), \
        IDEAL_LINEAR_NOTE.format(observer=observer)


def with_ideal_linear(report, form: GossipForm, threat, delta: float):
    """``report`` with :data:`IDEAL_LINEAR` at its steps, or its threat note saying why not."""
    epsilon, note = ideal_curve(form, threat, report.steps, delta)
    if epsilon is None:
        return dataclasses.replace(report, threat_note=f"{report.threat_note} The ideal linear "
                                   f"curve is not computed: {note}.")
    return report.with_curve(IDEAL_LINEAR, epsilon, note)
