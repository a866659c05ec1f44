"""Rewrite the measured part of ``tests/slow_tests.txt`` from a ``--durations=0`` output.

    python -m pytest -n 2 -q --durations=0 > durations.txt
    python tests/list_slow_tests.py durations.txt            # threshold 4 s (setup+call+teardown)

Tests whose total time is above the threshold move behind ``--runslow``; the hand-picked entries
(the file's first part, up to the ``# measured`` line) are kept as they are, and so are the ids
measured slow before (a default run no longer sees them); :data:`KEPT` stays in the default run.
"""
from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

FILE = Path(__file__).with_name("slow_tests.txt")
MARK = "# measured"
KEPT = {"test_bench_cold_start.py::test_bench_cold_start_tiny",
        "test_threat_soundness.py::test_positive_control_a_false_sender_declaration_is_caught"}
"""Slow but kept in the default run on purpose: the CPU rehearsal of the cold start (import,
compile, cache), so a regression shows in CI without a GPU; the sender check's positive control
(a soundness check in the default run must be shown able to fail there)."""
LINE = re.compile(r"([\d.]+)s (?:call|setup|teardown)\s+tests/(.+?)\s*$")  # ids may hold spaces


def measured(durations: str, threshold: float) -> list[str]:
    """Node ids (relative to ``tests/``) whose total time exceeds ``threshold`` seconds."""
    total = collections.Counter()
    for line in durations.splitlines():
        if m := LINE.match(line):
            total[m.group(2)] += float(m.group(1))
    return sorted(node for node, seconds in total.items()
                  if seconds > threshold and node not in KEPT)


def main(path: str, threshold: float = 4.0) -> None:
    kept, _, earlier = (FILE.read_text() if FILE.exists() else "").partition(MARK)
    earlier = {line for line in earlier.splitlines()[1:] if line.strip()}  # already slow: not in
    nodes = sorted(earlier | set(measured(Path(path).read_text(), threshold)))  # a default run
    FILE.write_text(f"{kept}{MARK}: above a threshold (setup + call + teardown) in a `--durations` "
                    f"run of the default tier on two cores (the latest rewrite: {threshold:g} s)\n"
                    + "".join(f"{node}\n" for node in nodes))
    print(f"{len(nodes)} measured slow tests written to {FILE}")


if __name__ == "__main__":
    main(sys.argv[1], *map(float, sys.argv[2:]))
