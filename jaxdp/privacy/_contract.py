"""What a privacy report's contract is made of: neighbouring relations, what a report may cover,
the assumptions a guarantee rests on, and the formatting of huge budgets."""
from __future__ import annotations

import dataclasses

import numpy as np


RELATIONS = {
    "add_remove_record": ("record", "one record added to or removed from one agent's data set"),
    "replace_record": ("record", "one record of one agent's data set replaced by another"),
    "replace_agent": ("agent", "one agent's whole local data set (its objective f_i) replaced"),
    "add_remove_agent": ("agent", "one agent's whole local data set added or removed (McMahan et "
                                  "al. 2018's user-adjacent data sets: the agent stays, with no "
                                  "data)"),
}
"""Neighbouring relations: key → (privacy unit, meaning). Bounds on *how much* the replaced data
may differ (a gradient bound, a clipping norm) are :class:`Assumption` s of the report."""


RELEASES = ("messages", "messages+models")
"""What a report may cover: every message sent, or the messages and the final models too."""


HUGE_LOG10 = 300.0  # beyond this, ε is shown as 10^x and plotted as log10 ε


def check_release(release: str) -> str:
    """Return ``release`` after checking it is one of :data:`RELEASES`."""
    if release not in RELEASES:
        raise ValueError(f"release must be one of {RELEASES}; got {release!r}")
    return release


def default_steps(steps: int, num: int = 50) -> np.ndarray:
    """At most ``num`` evenly spaced step counts in ``[1, K]``, always including ``K``."""
    return np.unique(np.round(np.linspace(1, steps, min(steps, num))).astype(int))


def format_log10(log10_eps: float) -> str:
    """ε from its log10, plainly when it fits, as ``10^x`` when huge."""
    if np.isnan(log10_eps):
        return "nan"
    if np.isinf(log10_eps):
        return "inf" if log10_eps > 0 else "0"
    if abs(log10_eps) < HUGE_LOG10:
        return f"{10.0 ** log10_eps:.4g}"
    return f"10^{log10_eps:.2f}"


@dataclasses.dataclass(frozen=True)
class Assumption:
    """One condition the guarantee rests on.

    Attributes:
      statement: the condition, with its constants (``"‖∇f_i(x)‖₂ ≤ c = 1 for every x"``).
      enforced: ``True`` when the algorithm makes it hold whatever the data (clipping);
        ``False`` when it is assumed of the data.
      how: how it is enforced, or how (and where) it was checked on the problem's data.
      holds: the outcome of that check: ``True``/``False``, or ``None`` when it cannot be checked
        (e.g. a bound on a neighbour that is not given). ``False`` makes the report's guarantee
        ``inf`` (:meth:`PrivacyReport.with_checks_applied`), with :meth:`failure` as the reason.
      remedy: what to change so that the check passes (a public bound to declare, a clip to
        enforce); read by :meth:`failure`.
    """

    statement: str
    enforced: bool
    how: str = ""
    holds: bool | None = None
    remedy: str = ""

    @property
    def status(self) -> str:
        """``"enforced"``, or ``"assumed"`` with the outcome of its check."""
        if self.enforced:
            return "enforced"
        return {True: "assumed (holds on this problem)", False: "assumed (FAILS on this problem)",
                None: "assumed (not checkable)"}[self.holds]

    def __str__(self) -> str:
        return f"{self.statement} [{self.status}{': ' + self.how if self.how else ''}]"

    def failure(self) -> str:
        """Why a failed check leaves no finite ε: the assumption, the check's finding (the bound
        and the largest value found, in :attr:`how`) and what to change."""
        remedy = self.remedy or DEFAULT_REMEDY
        return (f"the guarantee assumes {self.statement}, which FAILS on this problem "
                f"({self.how or 'checked on the data'}); to get a finite ε: {remedy}")


DEFAULT_REMEDY = ("run on data that satisfy the assumption, or declare a larger public bound (not "
                  "read from the data) in the Params")
"""What :meth:`Assumption.failure` suggests when the assumption names no remedy."""


def noise_assumption(noise_owner: str | None, what: str) -> Assumption:
    """The assumption under which the eavesdropper bound moves to another threat model: the
    algorithm's declaration of whose noise protects its releases, which the observer must not
    know (:func:`~jaxdp.privacy.contract.fallback_refusal`)."""
    declared = ("nothing (no Algorithm.noise_owner)" if noise_owner is None
                else f"{noise_owner!r}")
    return Assumption(
        f"the eavesdropper accountant charges each agent's releases to noise the observer does "
        f"not know, composed adaptively given the whole transcript; {what} declares {declared}",
        enforced=False, how="declared on the algorithm class (Algorithm.noise_owner); the tests "
        "compare a 'sender' declaration with the noise each agent's release draws in one traced "
        "step (jaxdp.core.noise_dependence)", holds=None)
