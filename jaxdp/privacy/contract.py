"""The privacy contract's parts an algorithm author declares and the engine checks
(``docs/privacy.md``).

* What is released: :data:`RELEASES` (``check_release``), the mechanisms of a
  :class:`~jaxdp.privacy.PrivacyEvents` (:data:`MECHANISMS`, :func:`concat` of two),
  :func:`default_steps`, :func:`check_delta`.
* Who owns the noise an observer does not know: :data:`NOISE_OWNERS`; the threat-model names
  :data:`THREATS`, :func:`as_threat`, and the reason an analysis falls back
  (:func:`fallback_refusal`).
* Marked mechanism sites for the information-flow check
  (:func:`~jaxdp.privacy.check_information_flow`): :func:`mechanism_site`, :func:`marking`, and
  what the check returns, :class:`FlowReport` and its :class:`Violation` s.
"""
from jaxdp.privacy._contract import RELEASES, check_release, default_steps
from jaxdp.privacy._dp_accounting import check_delta
from jaxdp.privacy._events import MECHANISMS, concat
from jaxdp.privacy._flow import FlowReport, Violation
from jaxdp.privacy._sites import marking, mechanism_site
from jaxdp.privacy._threat import NOISE_OWNERS, THREATS, as_threat, fallback_refusal

__all__ = [
    "MECHANISMS",
    "NOISE_OWNERS",
    "RELEASES",
    "THREATS",
    "FlowReport",
    "Violation",
    "as_threat",
    "check_delta",
    "check_release",
    "concat",
    "default_steps",
    "fallback_refusal",
    "marking",
    "mechanism_site",
]
