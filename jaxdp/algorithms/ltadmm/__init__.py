"""LT-ADMM family (Ren et al. 2026): local-training ADMM, LT-ADMM-DP, the baselines PORTER and PriSMA,
and their accountants.

Modules: ``algorithm`` (the paper's method, LT-ADMM and LT-ADMM-VR), ``baselines`` (what the paper
compares it with), ``common`` (the exchange, soft clip, metrics and cost model they share),
``privacy`` (sensitivities, accountants and calibration) and ``theorem2`` (the paper's closed form).
"""
from jaxdp.algorithms.ltadmm import algorithm, baselines, common, privacy, theorem2

__all__ = ["algorithm", "baselines", "common", "privacy", "theorem2"]
