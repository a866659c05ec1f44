"""Algorithms: one sub-package per paper family (``dpp2``, ``ldp``, ``dpadmm``, ``recal``, ``ltadmm``:
algorithm, baselines and privacy side by side) and the non-private peer-to-peer ``catalogue``
(``classic``: DGD, EXTRA, NIDS, DIGing, ADMM, DP-DGD; and one module per small family), the
``federated`` baselines (FedAvg, FedProx, SCAFFOLD, FedNova, FedDyn, FedPD, Fed-LT, FedOpt,
DP-FedAvg), with
one registry.

``REGISTRY`` maps each algorithm's ``name`` to its class; :func:`get` builds one by name;
:func:`register` adds a user's algorithm (then ``jaxdp run/info/compare`` and the audit take it by
name), as does an entry point of the ``jaxdp.algorithms`` group. What a new algorithm needs is
public here: :class:`Algorithm`, :func:`param` (a Params field with its facts), :func:`per_agent`,
:func:`standard_draws` and :func:`zeros_like_models`.
"""
from jaxdp._types import per_agent
from jaxdp.core import (
    DOMAINS, PROVENANCES, Algorithm, Domain, ParamSpec, check_params, param, param_specs,
    standard_draws, undeclared_fields, zeros_like_models,
)
from jaxdp.algorithms._registry import ENTRY_POINT_GROUP, AlgorithmRegistry
from jaxdp.algorithms.catalogue.classic import (
    ADMM,
    DGD,
    DIGing,
    DPDGD,
    EXTRA,
    NIDS,
    ADMMParams,
    DGDParams,
    DPDGDParams,
    StepParams,
    TwoStepParams,
)
from jaxdp.algorithms.catalogue.mafalda import Mafalda
from jaxdp.algorithms.catalogue.muffliato import Muffliato
from jaxdp.algorithms.catalogue import (
    ATC, ATG, DLM, ED, GTSAGA, GTSARAH, GTVR, KGT, LED, ATCTracking, ATGParams, AugDGM, DLMParams,
    GTVRParams, LocalStepParams, ProxSkip, ProxSkipParams, SimpleGT, WangElia, YiPDParams,
    YiPrimalDual,
)
from jaxdp.algorithms.dpadmm.algorithm import DPADMM, DPADMMParams
from jaxdp.algorithms.dpadmm.baselines import (
    ConsensusADMM,
    ConsensusADMMParams,
    NaivePrivateADMM,
    NaivePrivateADMMParams,
)
from jaxdp.algorithms.dpp2.algorithm import DPP2, DPP2Params
from jaxdp.algorithms.federated import (
    DPFedAvg, DPFedAvgParams, FedAdagrad, FedAdam, FedAvg, FedDyn, FedDynParams, FedLT, FedLTParams,
    FedNova, FedOptParams, FedParams, FedPD, FedPDParams, FedProx, FedProxParams, FedYogi,
    LDPFedAvg, Scaffold,
)
from jaxdp.algorithms.dpp2.baselines import PPDC, DiaDSP, DiaDSPParams, PPDCParams
from jaxdp.algorithms.ldp.algorithm import LDPADMM, LDPDGD, LDPADMMParams, LDPDGDParams, LDPDGDStar
from jaxdp.algorithms.ldp.baselines import (
    DualPerturbedADMM,
    HuangDGD,
    IncreasingPenaltyADMM,
    IncreasingPenaltyADMMParams,
    OutputPerturbedADMM,
    PenaltyADMMParams,
)
from jaxdp.algorithms.ltadmm.algorithm import (
    LTADMM, LTADMMDP, LTADMMVR, LTADMMDPParams, LTADMMVRParams,
)
from jaxdp.algorithms.ltadmm.baselines import PORTER, PORTERParams, PriSMA, PriSMAParams
from jaxdp.algorithms.dpsgd.algorithm import DPDSGD, DPDSGT, DPSGDParams
from jaxdp.algorithms.recal.algorithm import DPRECAL, RECAL, DPRECALParams, RECALParams
from jaxdp.algorithms.recal.baselines import (
    DPEXTRA,
    DPICADMM,
    DPMRADMM,
    DPNIDS,
    DPRWADMM,
    DPICADMMParams,
    DPMRADMMParams,
    DPRWADMMParams,
    DPStepParams,
)

_CLASSES = (DGD, DPDGD, Muffliato, Mafalda, EXTRA, NIDS, DIGing, ADMM, DPP2, DiaDSP, PPDC,
            LDPADMM, LDPDGD, LDPDGDStar, DualPerturbedADMM, OutputPerturbedADMM,
            IncreasingPenaltyADMM, HuangDGD,
            RECAL, DPRECAL, DPNIDS, DPEXTRA, DPICADMM, DPRWADMM, DPMRADMM,
            ConsensusADMM, NaivePrivateADMM, DPADMM,
            LTADMMDP, LTADMM, LTADMMVR, PORTER, PriSMA, DPDSGD, DPDSGT,
            ED, ATC, SimpleGT, ATCTracking, AugDGM, WangElia, KGT, LED, ProxSkip, DLM, ATG,
            YiPrimalDual, GTSAGA, GTSARAH, GTVR,
            FedAvg, FedProx, Scaffold, FedNova, FedDyn, FedPD, FedLT, FedAdam, FedYogi,
            FedAdagrad, DPFedAvg, LDPFedAvg)
REGISTRY = AlgorithmRegistry(_CLASSES)


def get(name: str, **config) -> Algorithm:
    """The algorithm registered under ``name``, built with static ``config``.

    Raises:
      ValueError: unknown name (the message lists the known ones and how to add one).
    """
    return REGISTRY.get(name)(**config)


def register(cls: type, *, replace: bool = False) -> type:
    """Register a user's algorithm class under its ``name``, so that :func:`get`, ``jaxdp run/
    info/compare/list``, the docs catalogue and the audit take it by name; returns ``cls``.

    ``cls`` is a frozen dataclass subclass of :class:`Algorithm` whose ``params_type`` declares
    its fields with :func:`param`; a private one overrides :meth:`Algorithm.account`. Undo with
    :func:`unregister`. Installed packages can instead declare an entry point of the group
    ``jaxdp.algorithms`` (name: the algorithm's ``name``, value: ``"module:Class"``).

    Raises:
      TypeError: not a dataclass subclass of :class:`Algorithm` with a Params dataclass.
      ValueError: no ``name``, or a name already taken by another class (unless ``replace``).
    """
    return REGISTRY.register(cls, replace=replace)


def unregister(name: str) -> type:
    """Remove the algorithm registered under ``name`` and return its class.

    Raises:
      KeyError: no algorithm of that name.
    """
    return REGISTRY.unregister(name)


__all__ = ["Algorithm", "DOMAINS", "Domain", "ENTRY_POINT_GROUP", "PROVENANCES", "ParamSpec",
           "REGISTRY", "check_params", "get", "param", "param_specs", "per_agent", "register",
           "standard_draws", "undeclared_fields", "unregister", "zeros_like_models"] + [
    c.__name__ for c in _CLASSES] + [
    "ADMMParams", "DGDParams", "DPDGDParams", "StepParams", "TwoStepParams",
    "DPP2Params", "DiaDSPParams", "PPDCParams",
    "LDPADMMParams", "LDPDGDParams", "PenaltyADMMParams", "IncreasingPenaltyADMMParams",
    "RECALParams", "DPRECALParams", "DPStepParams", "DPICADMMParams", "DPRWADMMParams",
    "DPMRADMMParams", "ConsensusADMMParams", "NaivePrivateADMMParams", "DPADMMParams",
    "LTADMMDPParams", "LTADMMVRParams", "PORTERParams", "PriSMAParams", "DPSGDParams",
    "LocalStepParams", "ProxSkipParams", "DLMParams", "ATGParams", "YiPDParams",
    "GTVRParams", "FedParams", "FedProxParams", "FedDynParams", "FedPDParams", "FedLTParams",
    "FedOptParams", "DPFedAvgParams"]
