"""Paper reproductions and the demo: one function per figure or table.

``REPRODUCTIONS`` maps a CLI name (``jaxdp reproduce NAME``) to a function ``fn(out_dir, **kw)``
returning a :class:`Report`: a :class:`~jaxdp._registry.Registry` whose entry-point group is
``jaxdp.reproductions``. Each paper family adds its entries here.
"""
from jaxdp._registry import Registry
from jaxdp.experiments._report import Claim, Report
from jaxdp.experiments.audit import audit_table
from jaxdp.experiments.baselines import baselines_convergence
from jaxdp.experiments.demo import demo
from jaxdp.experiments.dpadmm import dpadmm_accuracy, dpadmm_loss, dpadmm_table3
from jaxdp.experiments.dpp2 import dpp2_fig1, dpp2_fig2, dpp2_fig3
from jaxdp.experiments.ldp import ldp_fig1, ldp_fig2, ldp_figC, ldp_figD
from jaxdp.experiments.ltadmm import ltadmm_fig1, ltadmm_table1
from jaxdp.experiments.mfdl import mfdl
from jaxdp.experiments.mfdl_training import mfdl_training
from jaxdp.experiments.muffliato import muffliato
from jaxdp.experiments.recal import (recal_attack, recal_complexity, recal_eps, recal_table4,
                                     recal_table5)
from jaxdp.experiments.tuning import tune_dpadmm, tune_dpp2, tune_ltadmm

REPRODUCTIONS = Registry("reproduction", "jaxdp.reproductions", {
    "audit-table": audit_table,
    "baselines": baselines_convergence,
    "dpadmm-loss": dpadmm_loss,
    "dpadmm-accuracy": dpadmm_accuracy,
    "dpadmm-table3": dpadmm_table3,
    "dpp2-fig1": dpp2_fig1,
    "dpp2-fig2": dpp2_fig2,
    "dpp2-fig3": dpp2_fig3,
    "ldp-fig1": ldp_fig1,
    "ldp-fig2": ldp_fig2,
    "ldp-figC": ldp_figC,
    "ldp-figD": ldp_figD,
    "ltadmm-fig1": ltadmm_fig1,
    "ltadmm-table1": ltadmm_table1,
    "mfdl": mfdl,
    "mfdl-training": mfdl_training,
    "muffliato": muffliato,
    "recal-table4": recal_table4,
    "recal-table5": recal_table5,
    "recal-eps": recal_eps,
    "recal-attack": recal_attack,
    "recal-complexity": recal_complexity,
    "tune-dpp2": tune_dpp2,
    "tune-dpadmm": tune_dpadmm,
    "tune-ltadmm": tune_ltadmm,
}, how="jaxdp.experiments.REPRODUCTIONS.register(name, fn)")

__all__ = ["Claim", "REPRODUCTIONS", "Report", "audit_table", "baselines_convergence", "demo",
           "dpadmm_accuracy", "dpadmm_loss", "dpadmm_table3",
           "dpp2_fig1", "dpp2_fig2", "dpp2_fig3", "ldp_fig1", "ldp_fig2", "ldp_figC",
           "ldp_figD", "ltadmm_fig1", "ltadmm_table1", "mfdl", "mfdl_training", "muffliato",
           "recal_attack", "recal_complexity", "recal_eps", "recal_table4", "recal_table5",
           "tune_dpadmm", "tune_dpp2", "tune_ltadmm"]
