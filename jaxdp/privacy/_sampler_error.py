"""The lattice sampler's error in a report: its total-variation distance to the ideal rounded
mechanism over a run, added to δ (``(1 + e^ε)τ`` within a share ``SAMPLER_SHARE`` of δ, else
``inf``)."""
from __future__ import annotations

import numpy as np

from jaxdp.privacy._events import PrivacyEvents


SAMPLER_SHARE = 2.0 ** -6


LATTICE_NOTE = ("Lattice noise: the release is the continuous mechanism's output rounded to the "
                "lattice (post-processing; the sensitivity includes the rounding of the value), "
                "computed at δ(1 − 2⁻⁶); the sampler's distance to the ideal rounded law over the "
                "run, τ = {tv:.3g}, adds (1 + e^ε)τ ≤ 2⁻⁶δ to δ (inf where it would not).")


def run_sampler_tv(events: PrivacyEvents, draws: int) -> float:
    """``τ = Dη``: the run's total-variation distance from the ideal rounded mechanism."""
    from jaxdp.privacy._lattice import sampler_tv
    if not isinstance(draws, (int, np.integer)) or isinstance(draws, bool) or draws < 1:
        raise ValueError("PrivacyReport.from_events: events with lattice streams need "
                         f"lattice_draws >= 1 (the run's number of lattice draws); got {draws!r}")
    laws = {s.mechanism for s in events.lattice_streams}
    return float(draws) * max(sampler_tv(law) for law in laws)


def sampler_cap(delta: float, tv: float) -> float:
    """The largest ε at which ``(1 + e^ε)τ`` fits in the δ share kept for the sampler."""
    return np.log(SAMPLER_SHARE * delta / tv - 1.0) if SAMPLER_SHARE * delta > tv else -np.inf


def within_sampler_error(curves: dict, logs: dict, tv: float, delta: float):
    """``inf`` wherever ``(1 + e^ε)τ`` exceeds the δ share kept for the sampler."""
    cap = sampler_cap(delta, tv)
    out_curves, out_logs, final_bad = {}, {}, []
    for name, eps in curves.items():
        bad = ~(eps <= cap)
        final_bad.append(bad[:, -1])
        out_curves[name] = np.where(bad, np.inf, eps)
        if name in logs:
            out_logs[name] = np.where(bad, np.inf, logs[name])
    # the guarantee (the smallest curve) is inf for some agent only when every curve is
    capped = bool(final_bad) and bool(np.any(np.all(final_bad, axis=0)))
    reason = (f"every accountant gives ε above {cap:.3g} = log(2⁻⁶δ/τ − 1) for some agent: "
              f"the lattice sampler's distance to its ideal law over the run (τ = {tv:.3g}) "
              "then cannot be absorbed in δ, so no finite ε is certified for the released floats"
              if capped else "")
    return out_curves, out_logs, reason

