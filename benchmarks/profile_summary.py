"""Top GPU kernels of a ``jax.profiler`` trace: where a step's device time goes (issue 26).

Usage:
    python benchmarks/profile_summary.py TRACE_DIR [--top 15] [--out results/profile_X.json]

``TRACE_DIR`` is what ``jax.profiler.trace(dir)`` wrote (``gpu_driver.py``'s stage 3 writes
``OUT/profile``); the summary sums each kernel's duration over the device's events (the Chrome
trace ``*.trace.json.gz`` beside the xplane file) and prints the share, count and mean of each.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import json
from pathlib import Path


def kernel_times(trace_dir: Path) -> dict[str, tuple[int, float]]:
    """kernel name -> (launches, total µs) over every device process of the newest trace."""
    path = sorted(Path(trace_dir).rglob("*.trace.json.gz"))[-1]
    events = json.load(gzip.open(path))["traceEvents"]
    device_pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") ==
                   "process_name" and "/device:" in e["args"]["name"]}
    count, total = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e["pid"] in device_pids:
            count[e["name"]] += 1
            total[e["name"]] += e["dur"]
    return {name: (count[name], total[name]) for name in total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace_dir")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--out")
    args = ap.parse_args()
    times = kernel_times(Path(args.trace_dir))
    whole = sum(t for _, t in times.values())
    rows = [{"kernel": name, "share": t / whole, "launches": n, "mean_us": t / n}
            for name, (n, t) in sorted(times.items(), key=lambda kv: -kv[1][1])[:args.top]]
    for r in rows:
        print(f"{100 * r['share']:5.1f} %  {r['launches']:6d} x {r['mean_us']:8.1f} us  "
              f"{r['kernel'][:90]}")
    if args.out:
        Path(args.out).write_text(json.dumps({"device_us": whole, "top": rows}, indent=1))


if __name__ == "__main__":
    main()
