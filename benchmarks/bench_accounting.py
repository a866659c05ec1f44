"""Cost of the pairwise linear-gossip accountant against N and T, and at MFDL's scale (issue 24).

**Sweep** (``--sweep``). The structured accountant (``gossip_structure`` and ``gossip_mu2`` of
``jaxdp.privacy``: a Kalman recursion in JAX, the path of ``method="structured"``) and the dense one
(``linear_gossip_epsilon(method="dense")``, numpy, where its limits allow) with every agent
observing (``"neighbours"``), σ_ℓ = 0.5, σ_m = 1, Δ = 2, δ = 1e-5 (``bench_pairwise.py``'s
setting), one contribution (``first_step``) and one every step (``every_step``, band 1), on a
ring and on a connected Erdős–Rényi graph (``p = 2 ln N / N``, Metropolis W), against
N ∈ {16, 32, 64, 100, 200} at T = 100 and T ∈ {10, 30, 100, 300, 1000} at N = 32. Each cell runs
in a fresh process under ``/usr/bin/time -v`` (``bench_pairwise.measured``: peak RSS of the
whole process, XLA buffers included; tracemalloc does not see them). ``cold`` is the first call
(JAX compilation included), ``warm`` a second call on the same problem (skipped when the cold one
took over :data:`WARM_IF_BELOW` s); the exponents are least-squares slopes of log warm CPU-s
(cold where no warm) over the cells with N ≥ 32 or T ≥ 30. N = 200 exceeds
``LinearGossip``'s dense-accountant cap (N ≤ 100), so the problem is passed to the structured
accountant as a plain record with the same fields (:func:`gossip_form`).

**MFDL scale** (``--mfdl``). The graphs of Bellet et al. (MFDL, ICLR 2026; their
``experiments_housing.sh``): Florentine families (15 agents, from networkx), Facebook ego 414
(148 agents), Peertube (271) and Misskey (919), with their T (20 epochs × 16 batches = 320; Misskey
10 × 8 per correlation window, two windows: 160), every agent observing, every step contributing
(an upper bound on their cyclic participation: a superset of the steps), σ_ℓ = 1, σ_m = 0 (their
LDP noise: local, no per-message noise), Δ = 1, δ = 1e-6. The three real graphs are not in this
repository and the machine has no network: they are **synthetic** ``gnm`` graphs with the node
count of MFDL's scripts and an **assumed** edge count (:data:`MFDL_GRAPHS`; not the real graphs'
degrees, so the timing is indicative). Where all observers would take too long on the shared
machine a fixed sample of them is timed (the highest-degree agent and random ones) and the total
is extrapolated linearly in the number of observers (each observer is an independent problem of
the same size, up to its degree): stated in the row (``observers_timed``). And, for Florentine,
MFDL's own dense computation written here in numpy after their method (:func:`mfdl_dense`), and
jaxdp's dense accountant.

Usage (one thread; about 20 CPU-minutes each on a 2-core x86):
    python benchmarks/bench_accounting.py --sweep    # results/accounting_cpu.json + .png
    python benchmarks/bench_accounting.py --sweep --resume   # rerun only the cells not measured
    python benchmarks/bench_accounting.py --mfdl     # results/accounting_mfdl_cpu.json
    python benchmarks/bench_accounting.py --cell structured ring 32 100 first_step 0   # one cell
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import time
import types
from pathlib import Path

import numpy as np
from bench_pairwise import measured

HERE = Path(__file__).resolve().parent
WARM_IF_BELOW = 60.0
"""A warm (second) call is timed only when the cold one took fewer CPU seconds than this."""
SWEEP_N, SWEEP_T = (16, 32, 64, 100, 200), (10, 30, 100, 300, 1000)
N_AT, T_AT = 32, 100
"""The T sweep is at ``N = N_AT``; the N sweep at ``T = T_AT``."""
MFDL_GRAPHS = {"florentine": (15, None, 320, 0), "ego": (148, 1700, 320, 6),
               "peertube": (271, 1100, 320, 4), "misskey": (919, 20000, 160, 2)}
"""name → (agents, assumed edges (None: the real graph), T, observers timed (0: all))."""
SETTINGS = {"sweep": {"sigma_local": 0.5, "sigma_message": 1.0, "sensitivity": 2.0, "delta": 1e-5},
            "mfdl": {"sigma_local": 1.0, "sigma_message": 0.0, "sensitivity": 1.0, "delta": 1e-6}}


def graph_of(name: str, n: int):
    """A jaxdp ``Network`` (Metropolis W) named as in this module's docstring."""
    import networkx as nx

    from jaxdp.network import build_network, make_network
    if name == "ring":
        return make_network("ring", n)
    if name == "random":
        return make_network("erdos_renyi", n, p=min(1.0, 2 * np.log(n) / n), seed=0)
    if name == "florentine":
        return build_network(nx.convert_node_labels_to_integers(nx.florentine_families_graph()))
    agents, edges, _, _ = MFDL_GRAPHS[name]
    return make_network("gnm", agents, m=edges, seed=0)


def gossip_form(net, steps: int, contributions: str, setting: str):
    """The accounting problem: a ``LinearGossip`` up to its cap of 100 agents, else a record with
    the same fields (the structured accountant needs no more)."""
    from jaxdp.privacy.pairwise import LinearGossip
    s = SETTINGS[setting]
    W = net.dense("W", max_agents=max(net.n_agents, 100))
    fields = {"W": W, "senders": np.asarray(net.senders), "receivers": np.asarray(net.receivers),
                  "steps": steps, "sensitivity": s["sensitivity"], "sigma_local": s["sigma_local"],
                  "sigma_message": s["sigma_message"], "contributions": contributions}
    if net.n_agents <= 100:
        return LinearGossip(**fields)
    fields["sigma_local"] = np.full(net.n_agents, float(s["sigma_local"]))
    return types.SimpleNamespace(n_agents=net.n_agents, **fields)


def chosen(structure, form, timed: int):
    """``structure`` (every agent observing) restricted to ``timed`` observers: the
    highest-degree agent and a fixed random sample (all of them when ``timed`` is 0)."""
    if not timed or timed >= form.n_agents:
        return structure
    degree = np.bincount(form.receivers, minlength=form.n_agents)
    rest = np.setdiff1d(np.arange(form.n_agents), [degree.argmax()])
    pick = [int(degree.argmax())] + np.random.default_rng(0).choice(rest, timed - 1,
                                                                     replace=False).tolist()
    obs = structure.observers
    return dataclasses.replace(structure, observers=dataclasses.replace(
        obs, senders=obs.senders[pick], receivers=obs.receivers[pick], mask=obs.mask[pick],
        members=obs.members[pick]))


def clocked(fn):
    """``(result, cpu s, wall s)`` of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def structured(form, setting: str, timed: int) -> dict:
    """The structured accountant (``gossip_structure`` and ``gossip_mu2``: the path of
    ``linear_gossip_epsilon(method="structured")``) on the chosen observers, cold then (if quick)
    warm; ``μ = Δ √bound``."""
    from jaxdp.privacy.pairwise import gaussian_epsilon, gossip_mu2, gossip_structure

    def account():
        structure = chosen(gossip_structure(form, "neighbours"), form, timed)
        bound, _ = gossip_mu2(form.W, form.sigma_local, form.sigma_message, structure)
        return form.sensitivity * np.sqrt(np.asarray(bound)), structure.observers.mask.shape[0]

    (mu, observers), cpu, wall = clocked(account)
    row = {"cold_cpu_s": cpu, "cold_wall_s": wall, "observers_timed": observers}
    if cpu < WARM_IF_BELOW:
        _, row["warm_cpu_s"], row["warm_wall_s"] = clocked(account)
    eps = gaussian_epsilon(mu, SETTINGS[setting]["delta"])
    row["max_epsilon"] = float(eps[np.isfinite(eps)].max())
    return row


def dense(form, setting: str) -> dict:
    """jaxdp's dense accountant (refusals recorded with their reason)."""
    from jaxdp.privacy.pairwise import linear_gossip_epsilon
    try:
        result, cpu, wall = clocked(lambda: linear_gossip_epsilon(
            form, SETTINGS[setting]["delta"], "neighbours", method="dense"))
    except (ValueError, TypeError) as err:
        return {"refused": str(err)}
    eps = result.epsilon
    return {"cold_cpu_s": cpu, "cold_wall_s": wall, "observers_timed": form.n_agents,
            "max_epsilon": float(eps[np.isfinite(eps)].max())}


def mfdl_dense(W, steps: int, interval: int, sigma: float, delta: float):
    """MFDL's dense LDP accounting under pairwise network DP, after their method (Bellet et al.,
    ICLR 2026, §3–4; their ``build_DL_workload``, ``build_projection_workload`` and
    ``compute_sensitivity_rectangularworkload``): the privacy workload ``G`` (``nT × nT``, block
    ``(t, s) = W^{t−s}``, time-major), for each attacker ``v`` the rows ``B = P_v G`` of the
    states of ``v``'s neighbours and itself, ``X = B⁺B`` (a pseudo-inverse of a ``(k T) × (n T)``
    matrix), and ``sens_{u→v} = max_t √Σ_{a,b ∈ I_t} |X_{ab}|`` over the cyclic participations
    ``I_t`` of ``u`` (every ``interval`` steps); ``ε`` of the Gaussian of ``μ = sens/σ``.

    Returns ``(ε (N, N) cyclic, ε (N, N) every step)`` (``inf`` on the diagonal).
    """
    from jaxdp.privacy.pairwise import gaussian_epsilon
    n = W.shape[0]
    G = np.zeros((steps, n, steps, n))
    power = np.eye(n)
    for lag in range(steps):
        for s in range(steps - lag):
            G[s + lag, :, s, :] = power
        power = power @ W
    G = G.reshape(steps * n, steps * n)
    cyclic, every = np.full((n, n), np.inf), np.full((n, n), np.inf)
    for v in range(n):
        rows = np.flatnonzero(W[v] > 0)  # v's neighbours and v (observe_own)
        B = G.reshape(steps, n, steps * n)[:, rows].reshape(-1, steps * n)
        X = np.abs(np.linalg.pinv(B) @ B).reshape(steps, n, steps, n)
        for u in np.setdiff1d(np.arange(n), [v]):
            Xu = X[:, u, :, u]
            sums = [Xu[t::interval, t::interval].sum() for t in range(interval)]
            cyclic[u, v], every[u, v] = np.sqrt(max(sums)), np.sqrt(Xu.sum())
    return tuple(gaussian_epsilon(m / sigma, delta) for m in (cyclic, every))


def one_cell(method: str, graph: str, n: int, steps: int, contributions: str,
             timed: int) -> dict:
    """One measurement in this process (``method``: structured, dense or mfdl_dense)."""
    setting = "mfdl" if graph in MFDL_GRAPHS else "sweep"
    net = graph_of(graph, n)
    form = gossip_form(net, steps, contributions, setting)
    if method == "mfdl_dense":
        s = SETTINGS[setting]
        (cyc, every), cpu, wall = clocked(lambda: mfdl_dense(form.W, steps, 16, s["sigma_local"],
                                                             s["delta"]))
        row = {"cold_cpu_s": cpu, "cold_wall_s": wall, "observers_timed": n,
               "max_epsilon": float(every[np.isfinite(every)].max()),
               "max_epsilon_cyclic": float(cyc[np.isfinite(cyc)].max())}
    else:
        row = structured(form, setting, timed) if method == "structured" else dense(form, setting)
    degree = np.bincount(form.receivers, minlength=form.n_agents)
    return {"method": method, "graph": graph, "n": form.n_agents, "steps": steps,
            "contributions": contributions, "edges": int(len(form.senders) // 2),
            "max_degree": int(degree.max()), **row}


def sweep_cells():
    """The N sweep at T = T_AT and the T sweep at N = N_AT, both graphs and contributions."""
    grid = [(n, T_AT) for n in SWEEP_N] + [(N_AT, t) for t in SWEEP_T if t != T_AT]
    cells = [("structured", g, n, t, c, 0) for n, t in grid for g in ("ring", "random")
             for c in ("first_step", "every_step")]
    cells += [("dense", g, n, t, c, 0) for n, t in grid if n <= 100
              for g in ("ring", "random") for c in ("first_step", "every_step")]
    return cells


def mfdl_cells():
    cells = [("structured", g, n, t, "every_step", k) for g, (n, _, t, k) in MFDL_GRAPHS.items()]
    return cells + [("dense", "florentine", 15, 320, "every_step", 0),
                    ("mfdl_dense", "florentine", 15, 320, "every_step", 0)]


def slopes(rows, axis: str) -> dict:
    """Least-squares exponent of CPU seconds in ``axis`` per (method, graph, contributions)."""
    out = {}
    fixed = {"n": ("steps", T_AT), "steps": ("n", N_AT)}[axis]
    for key in sorted({(r["method"], r["graph"], r["contributions"]) for r in rows}):
        pts = [(r[axis], r.get("warm_cpu_s", r.get("cold_cpu_s"))) for r in rows
               if (r["method"], r["graph"], r["contributions"]) == key
               and r[fixed[0]] == fixed[1] and r[axis] >= 30 and "cold_cpu_s" in r]
        if len(pts) >= 3:
            x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
            out["/".join(key)] = float(np.polyfit(x, y, 1)[0])
    return out


def plot(rows, path: Path):
    """Two log–log panels: CPU seconds against N (T = T_AT) and against T (N = N_AT)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (axis, fixed, value) in zip(axes, (("n", "steps", T_AT), ("steps", "n", N_AT))):
        for key in sorted({(r["method"], r["graph"], r["contributions"]) for r in rows}):
            pts = sorted((r[axis], r.get("warm_cpu_s", r.get("cold_cpu_s"))) for r in rows
                         if (r["method"], r["graph"], r["contributions"]) == key
                         and r[fixed] == value and "cold_cpu_s" in r)
            if pts:
                ax.plot(*zip(*pts), marker="o" if key[0] == "structured" else "s",
                        ls="-" if key[2] == "first_step" else "--", label="/".join(key))
        ax.set(xscale="log", yscale="log", xlabel=axis.replace("n", "N agents").replace(
            "steps", "T steps"), ylabel="CPU s (warm; cold where no warm)",
            title=f"{'T' if fixed == 'steps' else 'N'} = {value}")
        ticks = sorted({r[axis] for r in rows if r[fixed] == value})
        ax.set_xticks(ticks, [str(t) for t in ticks])  # the measured sizes, not 10^k labels
        ax.set_xticks([], minor=True)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def run(cells, limit: float, done=()) -> list:
    """Every cell in a fresh process, in order; within one line (method, graph, contributions,
    and which sweep: N at fixed T or T at fixed N) the cells after one over ``limit`` CPU-s are
    skipped (recorded) to cap the total. ``done``: rows already measured, kept (``--resume``)."""
    def key(values):
        return tuple(str(v) for v in values)

    kept = {key(r[k] for k in KEY): r for r in done if "cold_cpu_s" in r or "refused" in r}
    rows, slow = [], set()
    for cell in cells:
        method, graph, n, steps, contributions, _ = cell
        line = (method, graph, contributions, n == N_AT and steps != T_AT)
        if key(cell[:5]) in kept:
            rows.append(kept[key(cell[:5])])
        elif line in slow:
            rows.append(dict(zip(KEY, cell[:5]),
                             skipped=f"a smaller cell of this line took over {limit} CPU-s"))
        else:
            rows.append(measured(__file__, "--cell", *cell))
            print({k: v for k, v in rows[-1].items() if k != "refused"}, flush=True)
            if rows[-1].get("cold_cpu_s", 0) > limit:
                slow.add(line)
    return rows


KEY = ("method", "graph", "n", "steps", "contributions")


def machine() -> dict:
    import jax
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "processor":
            platform.processor(), "python": platform.python_version(), "jax": jax.__version__,
            "load_avg_at_start": os.getloadavg(),
            "note": "shared 2-core machine (about 5 engineers): wall times inflated by the load; "
                    "cpu_s is the process's own CPU time, OMP_NUM_THREADS=1"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cell", nargs=6)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--mfdl", action="store_true")
    parser.add_argument("--resume", action="store_true",
                        help="with --sweep: keep the measured cells of the JSON, run the others")
    args = parser.parse_args()
    if args.cell:
        import jax
        jax.config.update("jax_enable_x64", True)  # this script's own process
        method, graph, n, steps, contributions, timed = args.cell
        print(json.dumps(one_cell(method, graph, int(n), int(steps), contributions, int(timed))))
        return
    if args.sweep:
        info = machine()
        path = HERE / "results" / "accounting_cpu.json"
        done = json.loads(path.read_text())["cells"] if args.resume else ()
        rows = run(sweep_cells(), limit=120.0, done=done)
        payload = {"machine": info, "load_avg_at_end": os.getloadavg(),
                   "exponent_in_N": slopes(rows, "n"), "exponent_in_T": slopes(rows, "steps"),
                   "cells": rows}
        path.write_text(json.dumps(payload, indent=1) + "\n")
        plot(rows, HERE / "results" / "accounting_cpu.png")
    if args.mfdl:
        info = machine()
        rows = run(mfdl_cells(), limit=float("inf"))
        for r in rows:
            if r.get("observers_timed") and r.get("cold_cpu_s") is not None:
                r["extrapolated_all_observers_cpu_s"] = r["cold_cpu_s"] * r["n"] / r[
                    "observers_timed"]
        payload = {"machine": info, "load_avg_at_end": os.getloadavg(),
                   "mfdl_published": {"ram_gb": 200, "hours": 10, "cores": 256,
                                      "machine_ram_gb": 512, "source": "MFDL README, housing "
                                      "step 1 (workloads) and step 2 (simulations), all graphs"},
                   "graphs": {k: dict(zip(("agents", "assumed_edges", "steps", "timed"), v))
                              for k, v in MFDL_GRAPHS.items()}, "cells": rows}
        (HERE / "results" / "accounting_mfdl_cpu.json").write_text(
            json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
