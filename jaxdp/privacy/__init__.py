"""Privacy: what a run releases, the guarantee of it, and the noise that makes it private.

The face (``__all__``) is what a user needs:

* the report and its parts: :class:`PrivacyReport` (``epsilon``: a sound bound or ``inf`` with the
  reason), :class:`Assumption`, :data:`RELATIONS`, the curve names :data:`GUARANTEE`,
  :data:`PAPER_PRINTED`, :data:`PAPER_CORRECTED`;
* threat models (``alg.privacy(..., threat=)``): :class:`Threat`, :class:`Eavesdropper` (the
  default), :class:`Neighbours`, :class:`Coalition`, :class:`SecretPairs`,
  :class:`TrustedServer`, :func:`parse_threat`;
* calibration: :func:`calibrate_params` (a run's Params at a target ε),
  :func:`calibrate_gaussian_sigma`, :func:`calibrate_laplace_scale`;
* accountants of a :class:`PrivacyEvents`: :func:`pld_epsilon`, :func:`rdp_epsilon`,
  :func:`closed_form_curve`, and :func:`poisson_gaussian_epsilon`;
* noise (jittable): :func:`noise_draws`, :func:`add_noise` for either of :data:`SAMPLERS`,
  :func:`clip_by_norm`, :func:`clip_factor_soft`;
* the information-flow check :func:`check_information_flow`.

Everything else lives in one public sub-module, each with its own ``__all__``:

* :mod:`jaxdp.privacy.contract`: what an algorithm declares and the engine checks (releases,
  mechanisms, noise owners, marked mechanism sites, the threat models' fallback, flow violations);
* :mod:`jaxdp.privacy.samplers`: the lattice and float samplers below :func:`add_noise` (draws,
  sensitivity, total variation, clamp, the sampler-error share);
* :mod:`jaxdp.privacy.closed_forms`: JAX closed forms (zCDP/RDP/pure DP curves and conversions,
  vmappable and differentiable);
* :mod:`jaxdp.privacy.pairwise`: pairwise accountants of linear gossip and matrix factorization
  (ideal Gaussian mechanism), the causal cone, MAFALDA's encoder and an optimised decoder;
* :mod:`jaxdp.privacy.papers`: the papers' printed and corrected curves (never a headline).
"""
# the public sub-modules, so that ``privacy.pairwise.gossip_release`` works after ``import jaxdp``
from jaxdp.privacy import closed_forms as closed_forms
from jaxdp.privacy import contract as contract
from jaxdp.privacy import pairwise as pairwise
from jaxdp.privacy import papers as papers
from jaxdp.privacy import samplers as samplers
from jaxdp.privacy._calibrate_params import calibrate_params
from jaxdp.privacy._calibration import calibrate_gaussian_sigma, calibrate_laplace_scale
from jaxdp.privacy._closed_form import closed_form_curve
from jaxdp.privacy._contract import RELATIONS, Assumption
from jaxdp.privacy._dp_accounting import pld_epsilon, poisson_gaussian_epsilon, rdp_epsilon
from jaxdp.privacy._events import PrivacyEvents
from jaxdp.privacy._flow import check_information_flow
from jaxdp.privacy._mechanisms import (
    SAMPLERS,
    add_noise,
    clip_by_norm,
    clip_factor_soft,
    noise_draws,
)
from jaxdp.privacy._report import GUARANTEE, PAPER_CORRECTED, PAPER_PRINTED, PrivacyReport
from jaxdp.privacy._threat import (
    Coalition,
    Eavesdropper,
    Neighbours,
    SecretPairs,
    Threat,
    TrustedServer,
    parse_threat,
)

__all__ = [
    "GUARANTEE",
    "PAPER_CORRECTED",
    "PAPER_PRINTED",
    "RELATIONS",
    "SAMPLERS",
    "Assumption",
    "Coalition",
    "Eavesdropper",
    "Neighbours",
    "PrivacyEvents",
    "PrivacyReport",
    "SecretPairs",
    "Threat",
    "TrustedServer",
    "add_noise",
    "calibrate_gaussian_sigma",
    "calibrate_laplace_scale",
    "calibrate_params",
    "check_information_flow",
    "clip_by_norm",
    "clip_factor_soft",
    "closed_form_curve",
    "noise_draws",
    "parse_threat",
    "pld_epsilon",
    "poisson_gaussian_epsilon",
    "rdp_epsilon",
]
