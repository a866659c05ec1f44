"""The algorithm contract, below both :mod:`jaxdp.algorithms` and :mod:`jaxdp.channels`.

:class:`Algorithm` (static configuration on the object, numbers in a Params pytree, one step =
``noise`` then a deterministic ``step``) and the Params field declarations (:func:`param`,
:func:`check_params`). Channels wrap any :class:`Algorithm`, and the paper families' baselines
are built from channels, so the contract sits under both; users reach it as
``jaxdp.algorithms.Algorithm``, ``jaxdp.algorithms.param``, … (re-exported there).
"""
from jaxdp.core._algorithm import (
    FLOAT_SAMPLER_REASON, PROBLEM_NEEDS, PROVENANCES, Algorithm, check_problem_supports,
    standard_draws, zeros_like_models,
)
from jaxdp.core._accounting import Accounting
from jaxdp.core._noise_owner import noise_dependence, sender_mismatch, wire_held
from jaxdp.core._reach import first_arrivals, reach_mismatch
from jaxdp.core._params import (
    DOMAINS, Domain, ParamSpec, check_params, check_per_agent_value, check_value, param,
    param_spec, param_specs, undeclared_fields,
)

__all__ = ["Accounting", "Algorithm", "DOMAINS", "Domain", "FLOAT_SAMPLER_REASON", "PROBLEM_NEEDS",
           "PROVENANCES", "ParamSpec", "check_params", "check_problem_supports",
           "check_per_agent_value", "check_value", "first_arrivals", "noise_dependence", "param",
           "wire_held",
           "param_spec", "param_specs", "reach_mismatch", "sender_mismatch", "standard_draws",
           "undeclared_fields", "zeros_like_models"]
