"""Where a GPU run's peak memory goes: compile (XLA:GPU autotuning) or the run itself.

Stage 4 of ``gpu_driver.py`` found the process's ``peak_bytes_in_use`` about twice the memory
``jaxdp.run`` plans with (``memory_per_device_mib``: the compiled programs' arguments, outputs
and temporaries). This probe runs one DP-DSGD model cell in this process and reads the device's
``bytes_in_use`` / ``peak_bytes_in_use`` after the problem is built, after compilation and after
the run, beside the memory analysis of every compiled program, so the gap can be placed.

Usage (on the GPU machine; one JSON line per cell, also appended to OUT/memory_probe.jsonl):
    python3 benchmarks/gpu_memory_probe.py --out "$OUT" --cell digits_cnn 64 256
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def stats() -> dict:
    import jax
    s = jax.devices()[0].memory_stats() or {}
    return {k: round(s[k] / 2 ** 20, 1) for k in ("bytes_in_use", "peak_bytes_in_use") if k in s}


def probe(workload: str, agents: int, seeds: int, steps: int) -> dict:
    import numpy as np
    from gpu_driver import model_problem  # this script's folder is on sys.path

    import jaxdp
    from jaxdp import algorithms
    from jaxdp.engine import _run

    row = {"workload": workload, "agents": agents, "seeds": seeds, "steps": steps}
    problem = model_problem(workload, agents)
    net = jaxdp.network.build_network(jaxdp.network.ring(agents))
    row["after_problem_mib"] = stats()
    programs = []
    compile_ = _run._compile

    def logged(program, batch, lengths):
        out = compile_(program, batch, lengths)
        row["after_compile_mib"] = stats()
        for name, c in out.items():
            m = c.memory_analysis()
            sizes = ("argument_size_in_bytes", "output_size_in_bytes", "temp_size_in_bytes",
                     "alias_size_in_bytes", "generated_code_size_in_bytes")
            programs.append({"program": str(name),
                             **{k: round(getattr(m, k) / 2 ** 20, 1) for k in sizes}})
        return out
    _run._compile = logged
    batch = int(min(16, np.min(np.sum(np.asarray(problem.mask), axis=1))))
    t0 = time.time()
    trace = jaxdp.run(algorithms.DPDSGD(batch_size=batch), problem, net,
                      algorithms.DPSGDParams(alpha=0.5, clip=1.0, sigma=0.3), steps=steps,
                      seeds=seeds, record_every=steps, progress=False)
    row.update(wall_s=round(time.time() - t0, 2), after_run_mib=stats(), programs=programs,
               planned_mib=round(trace.meta["memory_per_device_mib"], 1),
               budget_mib=round(trace.meta["memory_budget_mib"], 1))
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("."))
    ap.add_argument("--cell", nargs=3, required=True, metavar=("WORKLOAD", "AGENTS", "SEEDS"))
    ap.add_argument("--steps", type=int, default=100)
    args = ap.parse_args()
    row = probe(args.cell[0], int(args.cell[1]), int(args.cell[2]), args.steps)
    line = json.dumps(row)
    print(line, flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "memory_probe.jsonl", "a") as f:
        f.write(line + "\n")


if __name__ == "__main__":
    main()
