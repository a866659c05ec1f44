"""JAX closed forms of the Gaussian and Laplace mechanisms (vmappable, differentiable).

Pure-DP, zCDP and Rényi curves and their conversions to ``(ε, δ)``: :func:`laplace_epsilon_curve`,
:func:`gaussian_zcdp`, :func:`zcdp_to_dp`, :func:`zcdp_for_epsilon`, :func:`gaussian_rdp`,
:func:`rdp_to_dp` over :data:`DEFAULT_ORDERS`, their ``log_*`` forms (stable for gradients in
``log σ``), and :func:`gaussian_sigma_for_zcdp` (the σ at a target ε, differentiable in it). Bun &
Steinke, TCC 2016 (zCDP); Mironov, CSF 2017 (RDP); Canonne, Kamath & Steinke, NeurIPS 2020
(zCDP to DP). The host accountants of a :class:`~jaxdp.privacy.PrivacyEvents` are in
:mod:`jaxdp.privacy` (:func:`~jaxdp.privacy.closed_form_curve`, :func:`~jaxdp.privacy.pld_epsilon`,
:func:`~jaxdp.privacy.rdp_epsilon`).
"""
from jaxdp.privacy._calibration import gaussian_sigma_for_zcdp
from jaxdp.privacy._closed_form import (
    DEFAULT_ORDERS,
    gaussian_rdp,
    gaussian_zcdp,
    laplace_epsilon_curve,
    log_gaussian_zcdp,
    log_laplace_epsilon_curve,
    log_rdp_to_dp,
    log_zcdp_to_dp,
    rdp_to_dp,
    zcdp_for_epsilon,
    zcdp_to_dp,
)

__all__ = [
    "DEFAULT_ORDERS",
    "gaussian_rdp",
    "gaussian_sigma_for_zcdp",
    "gaussian_zcdp",
    "laplace_epsilon_curve",
    "log_gaussian_zcdp",
    "log_laplace_epsilon_curve",
    "log_rdp_to_dp",
    "log_zcdp_to_dp",
    "rdp_to_dp",
    "zcdp_for_epsilon",
    "zcdp_to_dp",
]
