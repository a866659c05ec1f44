"""Pairwise accountants of linear gossip and matrix factorization: the exact ``ε_{u→v}`` of the
IDEAL continuous-Gaussian mechanism with non-adaptive contributions, against each observer of a
threat model (:class:`~jaxdp.privacy.Neighbours`, :class:`~jaxdp.privacy.Coalition`, ...).
Curves named "ideal" in a report, never its headline (``docs/privacy.md``).

* Linear gossip (:class:`LinearGossip`, independent noise): :func:`linear_gossip_epsilon` (a
  :class:`PairwiseResult`), :func:`gaussian_epsilon` (Balle & Wang, ICML 2018, Thm 8); its
  structured, differentiable form :func:`gossip_mu2` (a Kalman recursion in ``jnp``:
  :func:`gossip_structure`, :class:`GossipStructure`, :func:`edge_mixing`).
* Matrix factorization with correlated noise (MFDL: Bellet et al., ICLR 2026): a
  :class:`LinearRelease` ``y = A c + B z``, built by :func:`gossip_release` (local, per-message,
  pairwise and Zip-DL's zero-sum noise, :func:`out_edge_ring`; :func:`block_powers`), accounted by
  :func:`factorization_epsilon` (:func:`observers`, :func:`observer_mu2`,
  :func:`participation_classes`, :func:`release_mu2` in ``jnp``, differentiable).
* MAFALDA-SGD's optimal encoder :func:`mafalda_encoder` (:func:`surrogate_loss`,
  :func:`workload_gram`, :func:`encoder_sensitivity2`, :func:`encoder_from_gram`) and a decoder
  optimised at a fixed pairwise budget :func:`pairwise_decoder` (:func:`model_noise`,
  :func:`worst_pair_mu2`).
* An algorithm's declared linear form (:class:`GossipForm`, ``Algorithm.linear_form``) and its
  report curve :data:`IDEAL_LINEAR` (:func:`ideal_curve`, :func:`with_ideal_linear`,
  :data:`MAX_IDEAL_WORK`).
* The causal cone (:data:`CONE`: :func:`within_cone`, :func:`cone_pairwise`, :func:`cone_steps`,
  :func:`hop_distances`): the sound pairwise matrix any algorithm gets under the neighbours or a
  coalition threat where the fallback applies.
"""
from jaxdp.privacy._cone import CONE, cone_pairwise, cone_steps, hop_distances, within_cone
from jaxdp.privacy._factorization import (
    LinearRelease,
    factorization_epsilon,
    observer_mu2,
    observers,
    participation_classes,
    release_mu2,
)
from jaxdp.privacy._forms import (
    IDEAL_LINEAR,
    MAX_IDEAL_WORK,
    GossipForm,
    ideal_curve,
    with_ideal_linear,
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
from jaxdp.privacy._pairwise import (
    LinearGossip,
    PairwiseResult,
    gaussian_epsilon,
    linear_gossip_epsilon,
)
from jaxdp.privacy._pairwise_scan import GossipStructure, edge_mixing, gossip_mu2, gossip_structure

__all__ = [
    "CONE",
    "IDEAL_LINEAR",
    "MAX_IDEAL_WORK",
    "GossipForm",
    "GossipStructure",
    "LinearGossip",
    "LinearRelease",
    "PairwiseResult",
    "block_powers",
    "cone_pairwise",
    "cone_steps",
    "edge_mixing",
    "encoder_from_gram",
    "encoder_sensitivity2",
    "factorization_epsilon",
    "gaussian_epsilon",
    "gossip_mu2",
    "gossip_release",
    "gossip_structure",
    "hop_distances",
    "ideal_curve",
    "linear_gossip_epsilon",
    "mafalda_encoder",
    "model_noise",
    "observer_mu2",
    "observers",
    "out_edge_ring",
    "pairwise_decoder",
    "participation_classes",
    "release_mu2",
    "surrogate_loss",
    "with_ideal_linear",
    "within_cone",
    "workload_gram",
    "worst_pair_mu2",
]
