"""Privacy: mechanisms, privacy events, accountants and noise calibration (design page, §8).

* Mechanisms (jittable, reparameterized): :func:`noise_draws` and :func:`add_noise` for either
  sampler of :data:`SAMPLERS` — the lattice mechanism (:func:`lattice_draws`,
  :func:`lattice_release`, :func:`lattice_sensitivity`, :func:`sampler_tv`), private as floats and
  the default, or the float sampler (:func:`laplace`, :func:`gaussian`, :func:`laplace_like`,
  :func:`gaussian_like`) —, :func:`clip_by_norm`, :func:`clip_factor_soft`.
* Events: :class:`PrivacyEvents` (what each agent releases at each step) and :func:`concat`.
* JAX closed forms (vmappable, differentiable): :func:`laplace_epsilon_curve`,
  :func:`log_laplace_epsilon_curve`, :func:`gaussian_zcdp`, :func:`zcdp_to_dp`,
  :func:`zcdp_for_epsilon`, :func:`gaussian_rdp`, :func:`rdp_to_dp`, :data:`DEFAULT_ORDERS`; and the
  host :func:`closed_form_curve` of a :class:`PrivacyEvents`.
* dp-accounting bridge (host): :func:`pld_epsilon`, :func:`rdp_epsilon` (continuous and lattice
  releases alike: a lattice release is a post-processing of the continuous mechanism),
  :func:`poisson_gaussian_epsilon` (one Poisson-subsampled Gaussian, add/remove or replace-one).
* :class:`PrivacyReport`: the guarantee (``epsilon``: the smallest sound curve) with its relation
  (:data:`RELATIONS`), coverage and :class:`Assumption` s, beside the papers' curves.
* Threat models (:mod:`jaxdp.privacy._threat`): :class:`Eavesdropper` (the default),
  :class:`Neighbours`, :class:`Coalition`, :class:`SecretPairs`, :class:`TrustedServer`
  (``alg.privacy(..., threat=)``; an algorithm's own default: ``Algorithm.default_threat``);
  the causal cone (:mod:`jaxdp.privacy._cone`: :func:`within_cone`, :func:`cone_pairwise`,
  :func:`cone_steps`, :func:`hop_distances`, the sound curve :data:`CONE`), the pairwise matrix
  any algorithm gets under the neighbours or a coalition threat where the fallback applies;
  :func:`linear_gossip_epsilon`, the exact ε of a non-adaptive :class:`LinearGossip` against
  each observer (pairwise ``ε_{u→v}``), with :func:`gaussian_epsilon`; its structured,
  differentiable form :func:`gossip_mu2` (a Kalman recursion in ``jnp``; :func:`gossip_structure`,
  :func:`edge_mixing`); and the matrix-factorization form with correlated noise (MFDL, ICLR
  2026): :class:`LinearRelease`, :func:`gossip_release` (local, per-message, pairwise and Zip-DL's
  zero-sum noise, :func:`out_edge_ring`), :func:`factorization_epsilon`,
  :func:`release_mu2` (``jnp``, differentiable in the correlation), ideal Gaussian values;
  MAFALDA-SGD's optimal encoder :func:`mafalda_encoder` (:func:`surrogate_loss`,
  :func:`workload_gram`, :func:`encoder_sensitivity2`, :func:`encoder_from_gram`), and a
  decoder optimised at a fixed pairwise budget :func:`pairwise_decoder` (:func:`model_noise`,
  :func:`worst_pair_mu2`);
  Muffliato's corrected pairwise Rényi bound (arXiv 2206.05091, Thm 11)
  :func:`muffliato_corrected_rdp` / :func:`muffliato_corrected_sum`, beside the exact value on the
  same scale (:func:`gaussian_rdp_of_mu`), and the printed gossip-averaging bound
  :func:`muffliato_printed_sum` (wrong: it under-reports; kept as the printed curve):
  ideal-mechanism curves, never a report's headline. An algorithm that declares its messages as
  a :class:`GossipForm` (``Algorithm.linear_form``) gets the curve :data:`IDEAL_LINEAR` in its
  reports under those threat models on request (``privacy(..., ideal=True)``; :func:`ideal_curve`,
  :func:`with_ideal_linear`, :data:`MAX_IDEAL_WORK`).
* Calibration: :func:`calibrate_gaussian_sigma`, :func:`calibrate_laplace_scale`,
  :func:`gaussian_sigma_for_zcdp` (differentiable); :func:`calibrate_params` (a run's Params
  at a target ε, through the algorithm's privacy report).
"""
from jaxdp.privacy._calibrate_params import calibrate_params
from jaxdp.privacy._calibration import (
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    gaussian_sigma_for_zcdp,
)
from jaxdp.privacy._closed_form import (
    DEFAULT_ORDERS,
    closed_form_curve,
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
from jaxdp.privacy._dp_accounting import (check_delta, pld_epsilon, poisson_gaussian_epsilon,
                                          rdp_epsilon)
from jaxdp.privacy._events import MECHANISMS, PrivacyEvents, concat
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
from jaxdp.privacy._mechanisms import (
    SAMPLERS,
    add_noise,
    check_sampler,
    clip_by_norm,
    clip_factor_soft,
    gaussian,
    gaussian_like,
    laplace,
    laplace_like,
    noise_draws,
)
from jaxdp.privacy._contract import (
    RELATIONS,
    RELEASES,
    Assumption,
    check_release,
    default_steps,
)
from jaxdp.privacy._flow import FlowReport, Violation, check_information_flow
from jaxdp.privacy._sites import marking, mechanism_site
from jaxdp.privacy._report import GUARANTEE, PAPER_CORRECTED, PAPER_PRINTED, PrivacyReport
from jaxdp.privacy._sampler_error import SAMPLER_SHARE, sampler_cap
from jaxdp.privacy._cone import CONE, cone_pairwise, cone_steps, hop_distances, within_cone
from jaxdp.privacy._threat import (
    NOISE_OWNERS,
    THREATS,
    Coalition,
    Eavesdropper,
    Neighbours,
    SecretPairs,
    Threat,
    TrustedServer,
    as_threat,
    fallback_refusal,
    parse_threat,
)
from jaxdp.privacy._pairwise import (
    LinearGossip,
    PairwiseResult,
    gaussian_epsilon,
    linear_gossip_epsilon,
)
from jaxdp.privacy._factorization import (
    LinearRelease,
    factorization_epsilon,
    observer_mu2,
    observers,
    participation_classes,
    release_mu2,
)
from jaxdp.privacy._gossip_release import block_powers, gossip_release, out_edge_ring
from jaxdp.privacy._mafalda import (
    encoder_from_gram,
    encoder_sensitivity2,
    mafalda_encoder,
    model_noise,
    pairwise_decoder,
    surrogate_loss,
    workload_gram,
    worst_pair_mu2,
)
from jaxdp.privacy._forms import (
    IDEAL_LINEAR,
    MAX_IDEAL_WORK,
    GossipForm,
    ideal_curve,
    with_ideal_linear,
)
from jaxdp.privacy._muffliato_bound import (
    gaussian_rdp_of_mu,
    muffliato_corrected_rdp,
    muffliato_corrected_sum,
    muffliato_printed_sum,
)
from jaxdp.privacy._pairwise_scan import (
    GossipStructure,
    edge_mixing,
    gossip_mu2,
    gossip_structure,
)

__all__ = [
    "CONE",
    "cone_pairwise",
    "cone_steps",
    "hop_distances",
    "within_cone",
    "NOISE_OWNERS",
    "FlowReport",
    "Violation",
    "check_information_flow",
    "marking",
    "mechanism_site",
    "THREATS",
    "fallback_refusal",
    "Coalition",
    "Eavesdropper",
    "GossipForm",
    "IDEAL_LINEAR",
    "MAX_IDEAL_WORK",
    "Neighbours",
    "SecretPairs",
    "Threat",
    "TrustedServer",
    "as_threat",
    "parse_threat",
    "LinearGossip",
    "ideal_curve",
    "with_ideal_linear",
    "PairwiseResult",
    "gaussian_epsilon",
    "linear_gossip_epsilon",
    "LinearRelease",
    "block_powers",
    "encoder_from_gram",
    "encoder_sensitivity2",
    "factorization_epsilon",
    "gossip_release",
    "observer_mu2",
    "observers",
    "out_edge_ring",
    "participation_classes",
    "release_mu2",
    "mafalda_encoder",
    "model_noise",
    "pairwise_decoder",
    "surrogate_loss",
    "workload_gram",
    "worst_pair_mu2",
    "gaussian_rdp_of_mu",
    "muffliato_corrected_rdp",
    "muffliato_corrected_sum",
    "muffliato_printed_sum",
    "GossipStructure",
    "edge_mixing",
    "gossip_mu2",
    "gossip_structure",
    "GAUSSIAN_DRAW_BOUND",
    "GAUSSIAN_RESOLUTION",
    "LAPLACE_RESOLUTION",
    "SAMPLERS",
    "add_noise",
    "check_sampler",
    "lattice_draws",
    "lattice_release",
    "lattice_sensitivity",
    "LatticeClampWarning",
    "clamp_bound",
    "clamp_warning",
    "noise_draws",
    "sampler_tv",
    "unit_roundoff",
    "GUARANTEE",
    "PAPER_CORRECTED",
    "PAPER_PRINTED",
    "RELATIONS",
    "RELEASES",
    "SAMPLER_SHARE",
    "sampler_cap",
    "Assumption",
    "DEFAULT_ORDERS",
    "MECHANISMS",
    "PrivacyEvents",
    "PrivacyReport",
    "calibrate_gaussian_sigma",
    "calibrate_laplace_scale",
    "calibrate_params",
    "check_delta",
    "check_release",
    "clip_by_norm",
    "clip_factor_soft",
    "closed_form_curve",
    "concat",
    "default_steps",
    "gaussian",
    "gaussian_like",
    "gaussian_rdp",
    "gaussian_sigma_for_zcdp",
    "gaussian_zcdp",
    "laplace",
    "laplace_epsilon_curve",
    "laplace_like",
    "log_gaussian_zcdp",
    "log_laplace_epsilon_curve",
    "log_rdp_to_dp",
    "log_zcdp_to_dp",
    "pld_epsilon",
    "poisson_gaussian_epsilon",
    "rdp_epsilon",
    "rdp_to_dp",
    "zcdp_for_epsilon",
    "zcdp_to_dp",
]
