"""Federated baselines on the same engine (issue 27): a data-less server as the average of K_N
(:mod:`jaxdp.algorithms.federated._rounds`, where the design is argued), FedAvg, FedProx and
SCAFFOLD (:mod:`~jaxdp.algorithms.federated.algorithm`), and user-level DP-FedAvg with central
and local noise (:mod:`~jaxdp.algorithms.federated.private`)."""
from jaxdp.algorithms.federated._rounds import SELECTIONS, WEIGHTINGS, FedParams, FedState, Federated
from jaxdp.algorithms.federated.algorithm import FedAvg, FedProx, FedProxParams, Scaffold
from jaxdp.algorithms.federated.private import DPFedAvg, DPFedAvgParams, LDPFedAvg

CLASSES = (FedAvg, FedProx, Scaffold, DPFedAvg, LDPFedAvg)

__all__ = ["CLASSES", "DPFedAvg", "DPFedAvgParams", "LDPFedAvg", "FedAvg", "FedParams", "FedProx", "FedProxParams", "FedState", "Federated",
           "SELECTIONS", "Scaffold", "WEIGHTINGS"]
