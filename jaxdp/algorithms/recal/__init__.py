"""RECAL family (Wang, Guo, Yang & Shi 2024): relay (token) primal–dual optimization, DP-RECAL, the
private baselines and their accountants.

Modules: ``algorithm`` (the paper's method), ``baselines`` (what the paper compares it with:
DP-NIDS and DP-EXTRA, re-exporting ``admm_baselines``: DP-ADMM, DP-RWADMM and DP-MRADMM),
``privacy`` (sensitivities and accountants).
"""
from jaxdp.algorithms.recal import admm_baselines, algorithm, baselines, privacy

__all__ = ["admm_baselines", "algorithm", "baselines", "privacy"]
