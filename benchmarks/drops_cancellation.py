"""What a dropped message does to correlated noise that should cancel (issue 24).

DECOR (``pairwise_cancelling``: ``c_{j→i} = −c_{i→j}`` per undirected edge) and Zip-DL
(``zero_sum``: a sender's noise sums to zero over its messages) cancel only if every message
arrives. A lost message (``drop``: the receiver uses its own row instead) takes its coupled
term out of the network sum, and the term of the reverse message no longer has a partner: the
network sum of the received pairwise terms is ``−Σ_{lost e} W_e c_e`` (zero without drops), so
per undirected edge the residual has variance ``2p(1−p) W_ij² σ_cor²``.

Two measurements, every channel behind ``clip`` and before ``drop(p)``, p ∈ {0, 0.01, 0.05, 0.1,
0.2}, lattice sampler, float64, on a connected Erdős–Rényi graph (N = 32, p_edge = 0.2, seed 0,
Metropolis W):

* **Residual noise of one gossip round**: the standard deviation, over :data:`DRAWS` keys, of
  the network average ``(1/N) Σ_i (W̃ 0)_i`` of one ``mix`` of the zero matrix through the channel
  (the noise alone: a lost message is replaced by the receiver's row, 0), per coordinate; beside
  the closed form ``√(σ² (1−p) Σ_e W_e² + σ_cor² 2p(1−p) Σ_{ij} W_ij²)/N`` for DECOR and
  ``σ √((1−p) Σ_e W_e²)/N`` for independent noise.
* **DGD's final error** on a ridge least-squares problem (:data:`LSQ`), :data:`STEPS` steps,
  :data:`SEEDS` seeds: the mean over seeds of ``dist_to_opt`` at the end.

Channels: DECOR (σ_ind = σ, σ_cor = ρσ, ρ = 4); independent Gaussian noise of the same privacy
(**eavesdropper**: σ itself, the report DECOR gets — its pairwise part is post-processing;
**SecLDP**: the σ' whose eavesdropper ε equals DECOR's ``threat="secret_pairs"`` ε, found by
bisection on the reports); Zip-DL at σ (its report is ``inf``: each sender's messages sum to its
value in the clear); and no noise. The reports do not change with ``p`` (a drop is
data-independent post-processing: docs/api/channels.md, *Drops and cancellation*).

Usage:
    python benchmarks/drops_cancellation.py      # writes results/drops_cancellation_cpu.json
"""
from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jaxdp
from jaxdp import algorithms, channels, network, problems

HERE = Path(__file__).resolve().parent
DROPS = (0.0, 0.01, 0.05, 0.1, 0.2)
N, SIGMA, RHO, CLIP, DELTA = 32, 15.0, 4, 1.0, 1e-5
DRAWS, STEPS, SEEDS, D_MIX = 2000, 50, 20, 4
IMPOSSIBLE = 1e3 * SIGMA * (1 + RHO)
"""No network average of one lattice round can reach this (each draw is at most ``13σ``)."""
ATTEMPTS = 3
LSQ = {"n_agents": N, "m": 8, "d": 3, "ridge": 0.1, "seed": 0}


def noises(sigma_secldp: float) -> dict:
    """The noise stages compared (``None``: no noise)."""
    return {"decor": channels.pairwise_cancelling(SIGMA, RHO * SIGMA),
            "independent (same eavesdropper ε)": channels.gaussian(SIGMA),
            "independent (same SecLDP ε)": channels.gaussian(sigma_secldp),
            "zip_dl": channels.zero_sum(SIGMA), "no noise": None}


def dgd(noise, p: float):
    """DGD with every message through ``clip → noise → drop(p)``, and its params."""
    stages = [channels.clip(CLIP)] + ([noise] if noise is not None else []) + [channels.drop(p)]
    alg = channels.with_channel(algorithms.DGD(), channels.chain(*stages))
    return alg, alg.params(algorithms.DGDParams(alpha=0.05))


def epsilon(noise, prob, net, threat: str) -> float:
    alg, params = dgd(noise, 0.0)
    return float(alg.privacy(prob, net, params, STEPS, threat=threat, delta=DELTA).epsilon_max)


def same_secldp_sigma(prob, net) -> tuple[float, float]:
    """``(σ', DECOR's SecLDP ε)``: the independent Gaussian σ' of equal eavesdropper ε, by
    bisection on ``log σ'`` (25 halvings)."""
    target = epsilon(channels.pairwise_cancelling(SIGMA, RHO * SIGMA), prob, net, "secret_pairs")
    lo, hi = np.log(SIGMA), np.log(SIGMA) + np.log(4.0)
    for _ in range(25):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if epsilon(channels.gaussian(float(np.exp(mid))), prob, net,
                                      "eavesdropper") > target else (lo, mid)
    return float(np.exp(hi)), target


def residual(noise, p: float, net) -> tuple[float, int]:
    """``(std, attempts)``: the std of the network average of one ``mix`` of zeros through the
    channel over :data:`DRAWS` keys. An attempt with a coordinate non-finite or above
    :data:`IMPOSSIBLE` (none can be: a lattice draw is at most ``13σ`` per message) is discarded
    and recomputed, up to :data:`ATTEMPTS` times (``attempts`` says how many it took; see
    benchmarks/README.md: such outputs were seen on this machine and not reproduced)."""
    alg, params = dgd(noise, p)
    values = alg.split(params)[1]

    def one(key, zeros):
        proxy = channels.ChannelNetwork(net, alg.channels, values, 0, key)
        return proxy.mix(zeros).mean(axis=0)

    keys = jax.random.split(jax.random.key(1), DRAWS)
    for attempt in range(1, ATTEMPTS + 1):
        avg = np.asarray(jax.jit(jax.vmap(one, in_axes=(0, None)))(keys, jnp.zeros((N, D_MIX))))
        if np.all(np.abs(avg) <= IMPOSSIBLE):
            return float(np.std(avg)), attempt
    return float("nan"), ATTEMPTS


def predicted(kind: str, sigma: float, p: float, net) -> float | None:
    """The closed form of the module docstring (``None`` for Zip-DL and no noise)."""
    w2 = float(np.sum(np.asarray(net.w_edge) ** 2))  # Σ over directed edges = 2 Σ_{i<j} W_ij²
    cor = {"decor": (RHO * sigma) ** 2 * p * (1 - p) * w2}.get(kind, 0.0)
    if kind not in ("decor",) and not kind.startswith("independent"):
        return None
    return float(np.sqrt(sigma ** 2 * (1 - p) * w2 + cor) / N)


def final_error(noise, prob, net) -> list:
    """Mean over seeds of the final ``dist_to_opt`` of DGD, one value per drop probability."""
    alg, params = dgd(noise, 0.0)
    swept = jaxdp.sweep(alg, prob, net, jaxdp.grid(params, drop_p=list(DROPS)), steps=STEPS,
                        seeds=SEEDS, progress=False)
    return np.asarray(swept.final("dist_to_opt")).mean(axis=0).tolist()


def main():
    jax.config.update("jax_enable_x64", True)  # this script's own process
    start = time.time()
    prob = problems.least_squares(**LSQ)
    net = network.make_network("erdos_renyi", N, p=0.2, seed=0)
    sigma_secldp, eps_secldp = same_secldp_sigma(prob, net)
    rows = []
    for kind, noise in noises(sigma_secldp).items():
        eps = {t: (epsilon(noise, prob, net, t) if noise is not None else 0.0)
               for t in ("eavesdropper", "secret_pairs")}
        errors = final_error(noise, prob, net)
        sigma = {"decor": SIGMA, "zip_dl": SIGMA, "no noise": 0.0,
                 "independent (same eavesdropper ε)": SIGMA}.get(kind, sigma_secldp)
        for p, err in zip(DROPS, errors):
            row = {"channel": kind, "sigma": sigma, "drop_p": p,
                   **dict(zip(("avg_noise_std", "attempts"),
                              residual(noise, p, net) if noise is not None else (0.0, 1))),
                   "avg_noise_std_predicted": predicted(kind, sigma, p, net),
                   "dgd_final_dist": err, "epsilon_eavesdropper": eps["eavesdropper"],
                   "epsilon_secret_pairs": eps["secret_pairs"]}
            rows.append(row)
            print(row, flush=True)
    payload = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "jax": jax.__version__, "load_avg": os.getloadavg()},
               "setting": {"n": N, "graph": "erdos_renyi p=0.2 seed 0, Metropolis",
                           "edges": int(net.n_edges), "sigma": SIGMA, "rho": RHO, "clip": CLIP,
                           "delta": DELTA, "steps": STEPS, "seeds": SEEDS, "draws": DRAWS,
                           "mix_dim": D_MIX, "problem": LSQ,
                           "sigma_same_secldp": sigma_secldp, "decor_secldp_epsilon": eps_secldp},
               "wall_s": time.time() - start, "rows": rows}
    (HERE / "results" / "drops_cancellation_cpu.json").write_text(
        json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
