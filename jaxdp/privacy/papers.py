"""The papers' own curves, kept beside the exact values to show where they differ (never a
report's headline; ``docs/errata.md``).

Muffliato (Cyffers, Even, Bellet & Massoulié, NeurIPS 2022, arXiv 2206.05091): the corrected
pairwise Rényi bound of its Thm 11 (:func:`muffliato_corrected_rdp`, summed over steps:
:func:`muffliato_corrected_sum`), the printed gossip-averaging bound
(:func:`muffliato_printed_sum`: it under-reports, kept as printed), and the exact ideal value on
the same Rényi scale (:func:`gaussian_rdp_of_mu`, of a Gaussian mechanism with ``μ = Δ/σ``; the
exact ``μ`` is :func:`~jaxdp.privacy.pairwise.linear_gossip_epsilon`'s).
"""
from jaxdp.privacy._muffliato_bound import (
    gaussian_rdp_of_mu,
    muffliato_corrected_rdp,
    muffliato_corrected_sum,
    muffliato_printed_sum,
)

__all__ = [
    "gaussian_rdp_of_mu",
    "muffliato_corrected_rdp",
    "muffliato_corrected_sum",
    "muffliato_printed_sum",
]
