"""The two samplers below :func:`~jaxdp.privacy.add_noise` and :func:`~jaxdp.privacy.noise_draws`.

* The lattice mechanism (the default, private as floats): :func:`lattice_draws` (``z = K/R`` for
  an integer ``K`` of the discrete Gaussian or Laplace law, resolutions
  :data:`GAUSSIAN_RESOLUTION`, :data:`LAPLACE_RESOLUTION`), :func:`lattice_release`, the
  sensitivity a report uses :func:`lattice_sensitivity`, the sampler's distance to its law
  :func:`sampler_tv` and the run's share of δ for it (:data:`SAMPLER_SHARE`, :func:`sampler_cap`),
  the float range it must stay in (:func:`clamp_bound`, :data:`GAUSSIAN_DRAW_BOUND`,
  :func:`unit_roundoff`, :func:`clamp_warning`, :class:`LatticeClampWarning`).
* The float sampler (fast, exactly reparameterized; its report's guarantee is ``inf``):
  :func:`laplace`, :func:`gaussian`, :func:`laplace_like`, :func:`gaussian_like`.
* :func:`check_sampler`: the sampler name, checked against :data:`~jaxdp.privacy.SAMPLERS`.

The construction and its guarantee: ``docs/privacy.md`` (the lattice mechanism).
"""
from jaxdp.privacy._lattice import (
    GAUSSIAN_DRAW_BOUND,
    GAUSSIAN_RESOLUTION,
    LAPLACE_RESOLUTION,
    LatticeClampWarning,
    clamp_bound,
    clamp_warning,
    lattice_draws,
    lattice_release,
    lattice_sensitivity,
    sampler_tv,
    unit_roundoff,
)
from jaxdp.privacy._mechanisms import check_sampler, gaussian, gaussian_like, laplace, laplace_like
from jaxdp.privacy._sampler_error import SAMPLER_SHARE, sampler_cap

__all__ = [
    "GAUSSIAN_DRAW_BOUND",
    "GAUSSIAN_RESOLUTION",
    "LAPLACE_RESOLUTION",
    "SAMPLER_SHARE",
    "LatticeClampWarning",
    "check_sampler",
    "clamp_bound",
    "clamp_warning",
    "gaussian",
    "gaussian_like",
    "laplace",
    "laplace_like",
    "lattice_draws",
    "lattice_release",
    "lattice_sensitivity",
    "sampler_cap",
    "sampler_tv",
    "unit_roundoff",
]
