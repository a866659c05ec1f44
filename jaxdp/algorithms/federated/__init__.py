"""Federated baselines on the same engine: a data-less server as the average of K_N
(:mod:`jaxdp.algorithms.federated._rounds`, where the design is argued); FedAvg, FedProx,
SCAFFOLD, FedNova, FedDyn, FedPD and Fed-LT (:mod:`~jaxdp.algorithms.federated.algorithm`);
FedAdam, FedYogi and FedAdagrad with optax server optimizers
(:mod:`~jaxdp.algorithms.federated.fedopt`); user-level DP-FedAvg with central and local noise
(:mod:`~jaxdp.algorithms.federated.private`)."""
from jaxdp.algorithms.federated._rounds import (
    SELECTIONS, WEIGHTINGS, FedLossState, FedParams, FedState, Federated, Rows,
)
from jaxdp.algorithms.federated.algorithm import (
    FedAvg, FedDyn, FedDynParams, FedLT, FedLTParams, FedNova, FedPD, FedPDParams, FedProx,
    FedProxParams, Scaffold,
)
from jaxdp.algorithms.federated.fedopt import FedAdagrad, FedAdam, FedOptParams, FedYogi
from jaxdp.algorithms.federated.private import DPFedAvg, DPFedAvgParams, LDPFedAvg

CLASSES = (FedAvg, FedProx, Scaffold, FedNova, FedDyn, FedPD, FedLT, FedAdam, FedYogi, FedAdagrad,
           DPFedAvg, LDPFedAvg)

__all__ = ["CLASSES", "DPFedAvg", "DPFedAvgParams", "FedAdagrad", "FedAdam", "FedAvg", "FedDyn",
           "FedDynParams", "FedLT", "FedLTParams", "FedLossState", "FedNova", "FedOptParams",
           "FedPD", "FedPDParams", "FedParams", "FedProx", "FedProxParams", "FedState", "FedYogi",
           "Federated", "LDPFedAvg", "Rows", "SELECTIONS", "Scaffold", "WEIGHTINGS"]
