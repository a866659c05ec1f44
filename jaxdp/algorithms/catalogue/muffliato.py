"""Muffliato-GD: local noise once per step, then several gossip rounds (Cyffers, Even, Bellet &
Massoulié, "Muffliato: Peer-to-Peer Privacy Amplification for Decentralized Optimization and
Averaging", NeurIPS 2022, Alg. 2, with plain gossip ``W^R`` in place of the Chebyshev-accelerated
polynomial of their Alg. 1)."""
from __future__ import annotations

import dataclasses

from jaxdp.algorithms.catalogue.classic import DPDGD, DGDState, _step_size


@dataclasses.dataclass(frozen=True)
class Muffliato(DPDGD):
    """Muffliato-GD: ``g̃_i = clip(∇f_i(x_i), C) + σCξ_i`` (one lattice Gaussian release per agent
    and step), ``y⁰ = x − α_k g̃``, then ``R`` gossip rounds ``y^{r+1} = W y^r`` (each a message:
    agent i sends ``y_i^r``, r = 0..R−1), and ``x⁺ = y^R`` (Cyffers et al. 2022, Alg. 2).

    Privacy (eavesdropper): every message ``y_i^r`` is a function of the released noisy gradients
    ``g̃`` of every agent and of the public ``x⁰``, so the R rounds are post-processing: each step
    is one Gaussian release per agent (Δ = 2C, σC), composed adaptively over steps — the report of
    :class:`~jaxdp.algorithms.DPDGD`. The paper's pairwise amplification (an observer v seeing
    only what it receives) is not used: ``threat="neighbours"`` falls back on this bound.

    Attributes:
      rounds: R, the gossip rounds per step (static, ≥ 1).
    """

    name = "muffliato"
    cites = ("Cyffers, Even, Bellet & Massoulié, NeurIPS 2022, Alg. 2 (Muffliato-GD), with "
             "simple gossip W^R (no Chebyshev acceleration)",
             "Abadi et al. 2016 (gradient clipping with Gaussian noise)")
    provenance = "paper"
    rounds: int = 4
    released_note = ("agent i's gossip values y_i^{k,r} to its neighbours, R rounds per step "
                     "(functions of the noisy gradients g̃^s, s ≤ k: post-processing)")
    models_note = ("x^K = W^R (x^{K-1} − α g̃^{K-1}): a post-processing of the accounted noisy "
                   "gradients")

    @property
    def rounds_per_step(self) -> int:
        """The declared linear form's ``R``: ``p^k = y^{k,0}``, rows ``W^r p^k``."""
        return self.rounds

    def __post_init__(self):
        if not isinstance(self.rounds, int) or isinstance(self.rounds, bool) or self.rounds < 1:
            raise ValueError(f"muffliato rounds must be an integer >= 1; got {self.rounds!r}")

    def step(self, state, noise, problem, network, params, k):
        x = state.x
        y = x - _step_size(params, k, x) * self._gradients(x, noise, problem, params)
        messages = {}
        for r in range(self.rounds):  # a fixed count: R product calls per step
            messages[f"y{r}"] = y
            y = network.mix(y, message=f"y{r}")
        return DGDState(x=y), messages
