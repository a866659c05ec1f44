"""Plot the GPU headline ladder from ``gpu_driver.py``'s rows (issue 26).

Usage:
    python benchmarks/plot_gpu.py results/gpu_rows_nvidia_h200.jsonl   # writes results/gpu_headline_<device>.png

Left: DPP² at paper 000's setting, 500 steps, one fresh process per seed count, its wall time split
into import, compile and run. Right: updates (agent-steps) per second of the suite's workloads
against the number of seeds.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path: str) -> None:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    device = next(r["device_kind"] for r in rows if r["stage"] == "env")
    cells = [r["result"] for r in rows if r["name"] == "headline_dpp2" and r.get("result")]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    labels = [f"{c['seeds']:,}" for c in cells]
    parts = {"import": [c["import_s"] for c in cells],
             "compile": [c["compile_s"] for c in cells],
             "run": [c["run_with_compile_s"] - c["compile_s"] for c in cells]}
    bottom = [0.0] * len(cells)
    for name, values in parts.items():
        left.bar(labels, values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    left.axhline(10, color="k", ls="--", lw=1, label="target: 10 s")
    left.set(xlabel="seeds", ylabel="seconds from process start",
             title=f"DPP², 500 steps, paper setting ({device})")
    left.legend()
    for row in rows:
        if row["stage"] == "ladder" and row["name"].startswith("suite") and row.get("result"):
            by_workload: dict[str, list] = {}
            for r in row["result"]["rows"]:
                by_workload.setdefault(r["workload"], []).append(r)
            for workload, rs in by_workload.items():
                right.loglog([r["seeds"] for r in rs], [r["updates_per_second"] for r in rs],
                             "o-", label=workload)
    right.set(xlabel="seeds", ylabel="agent-steps / s", title="suite workloads, 500 steps")
    right.legend()
    fig.tight_layout()
    kind = Path(path).stem.removeprefix("gpu_rows_")
    out = Path(path).with_name(f"gpu_headline_{kind}.png")
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1])
