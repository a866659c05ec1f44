"""Decentralized DP-SGD family: DP-DSGD (D-PSGD with DP-SGD's per-agent mechanism) and DP-DSGT
(stochastic gradient tracking on the same noisy gradients).

Modules: ``algorithm`` (both methods) and ``cases`` (their audit cases). Their privacy is the
per-sample-clipped, subsampled Gaussian release of PORTER, accounted by the shared event builder
:func:`jaxdp.algorithms.ltadmm.privacy.privacy_events`.
"""
from jaxdp.algorithms.dpsgd import algorithm

__all__ = ["algorithm"]
