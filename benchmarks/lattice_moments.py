"""Empirical moments of the lattice and float samplers against the exact laws (issue 22).

The lattice draws ``z = K/R`` should have the moments of the discrete Gaussian ``N_ℤ(0, R²)/R``
or the discrete Laplace ``P(K = k) ∝ e^{−|k|/R}`` (over R); the float draws those of N(0, 1) and
Laplace(1). For each sampler and law this draws ``--draws`` standard draws in float64 (in batches
of 10^6, independent keys) and reports the mean, variance, E z⁴ and P(|z| > t) at a few t, each
with its Monte-Carlo standard error and the z-score against the exact value: the exact moments of
the discrete laws are sums of the pmf over |k| ≤ 13R (Gaussian) or closed forms (Laplace:
Var K = 2q/(1 − q)², E K⁴ = 2q(1 + 10q + q²)/(1 − q)⁴ with q = e^{−1/R}).

Usage:
    python benchmarks/lattice_moments.py     # writes benchmarks/results/lattice_moments_cpu.json
"""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TAILS = {"gaussian": (1.0, 2.0, 3.0), "laplace": (1.0, 3.0, 6.0)}


def exact(law: str, sampler: str) -> dict:
    """Mean, variance, E z⁴ and tail masses of the law each sampler targets."""
    from jaxdp import privacy
    if sampler == "float":
        if law == "gaussian":
            tails = {t: math.erfc(t / math.sqrt(2)) for t in TAILS[law]}
            return {"mean": 0.0, "var": 1.0, "m4": 3.0, **{f"P(|z|>{t:g})": p
                                                        for t, p in tails.items()}}
        return {"mean": 0.0, "var": 2.0, "m4": 24.0,
                **{f"P(|z|>{t:g})": math.exp(-t) for t in TAILS[law]}}
    r = privacy.samplers.GAUSSIAN_RESOLUTION if law == "gaussian" else \
        privacy.samplers.LAPLACE_RESOLUTION
    if law == "gaussian":
        k = np.arange(-13 * r, 13 * r + 1, dtype=np.float64)
        p = np.exp(-k * k / (2.0 * r * r))
        p /= p.sum()
        z = k / r
        out = {"mean": 0.0, "var": float(p @ z**2), "m4": float(p @ z**4)}
        return out | {f"P(|z|>{t:g})": float(p[np.abs(z) > t].sum()) for t in TAILS[law]}
    q = math.exp(-1.0 / r)
    var = 2 * q / (1 - q) ** 2 / r**2
    m4 = 2 * q * (1 + 10 * q + q * q) / (1 - q) ** 4 / r**4
    # P(|K| > tR) = 2 q^{n+1} / (1 + q) with n = floor(tR)
    return {"mean": 0.0, "var": var, "m4": m4,
            **{f"P(|z|>{t:g})": 2 * q ** (math.floor(t * r) + 1) / (1 + q) for t in TAILS[law]}}


def empirical(law: str, sampler: str, draws: int, seed: int) -> dict:
    """Sums of z, z², z⁴ and the tail indicators over ``draws`` draws, with standard errors."""
    import jax

    from jaxdp.privacy import noise_draws
    batch = min(10**6, draws)
    acc = {"mean": [], "var": [], "m4": [], **{f"P(|z|>{t:g})": [] for t in TAILS[law]}}
    for b in range(draws // batch):
        key = jax.random.fold_in(jax.random.key(seed), b)
        z = np.asarray(noise_draws(key, (batch,), np.float64, law=law, sampler=sampler))
        acc["mean"].append(z)
        acc["var"].append(z * z)
        acc["m4"].append(z**4)
        for t in TAILS[law]:
            acc[f"P(|z|>{t:g})"].append((np.abs(z) > t).astype(np.float64))
    out = {}
    for name, parts in acc.items():
        x = np.concatenate(parts)
        out[name] = (float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)))
    return out


def main() -> None:
    import jax
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=10**7)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=str(HERE / "results" / "lattice_moments_cpu.json"))
    args = ap.parse_args()
    jax.config.update("jax_enable_x64", True)  # a script, not a library import
    rows = []
    for sampler in ("lattice", "float"):
        for law in ("gaussian", "laplace"):
            ref, emp = exact(law, sampler), empirical(law, sampler, args.draws, args.seed)
            row = {"sampler": sampler, "law": law}
            for name, (m, se) in emp.items():
                row[name] = {"empirical": m, "se": se, "exact": ref[name],
                             "z": (m - ref[name]) / se if se > 0 else 0.0}
            print(json.dumps(row), flush=True)
            rows.append(row)
    Path(args.out).write_text(json.dumps({"draws": args.draws, "seed": args.seed, "rows": rows},
                                         indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
