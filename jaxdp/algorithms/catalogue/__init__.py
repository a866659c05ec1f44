"""The peer-to-peer catalogue (one module per small family; ``classic`` holds DGD, EXTRA, NIDS,
DIGing, relaxed ADMM and DP-DGD).

All follow the contract of :mod:`jaxdp.core` and use only the network's products
(``mix``, ``apply_L``, ``apply_P``, ``gather``, ``scatter_sum``), so the dense and edge backends
both work.
"""
from jaxdp.algorithms.catalogue.diffusion import ATC, ED, SimpleGT
from jaxdp.algorithms.catalogue.local_updates import KGT, LED, ProxSkip, ProxSkipParams
from jaxdp.algorithms.catalogue._common import LocalStepParams
from jaxdp.algorithms.catalogue.primal_dual import (
    ATG, DLM, ATGParams, DLMParams, YiPDParams, YiPrimalDual,
)
from jaxdp.algorithms.catalogue.tracking import ATCTracking, AugDGM, WangElia
from jaxdp.algorithms.catalogue.variance_reduced import GTSAGA, GTSARAH, GTVR, GTVRParams

CLASSES = (ED, ATC, SimpleGT, ATCTracking, AugDGM, WangElia, KGT, LED, ProxSkip, DLM, ATG,
           YiPrimalDual, GTSAGA, GTSARAH, GTVR)
PARAMS = ("LocalStepParams", "ProxSkipParams", "DLMParams", "ATGParams", "YiPDParams",
          "GTVRParams")

__all__ = [c.__name__ for c in CLASSES] + list(PARAMS) + ["CLASSES", "PARAMS"]
