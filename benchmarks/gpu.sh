#!/bin/bash
# The GPU session of issue 26 in one call (a machine with an NVIDIA GPU; jax with its CUDA plugin
# already installed, as on the device image):
#   bash benchmarks/gpu.sh [OUT_DIR] [extra gpu_driver.py flags]   # default OUT_DIR=$OUT or benchmarks/results
# No pip install of jaxdp: PYTHONPATH points at this checkout. The only installs are wheels carried
# under wheels/ (e.g. dp-accounting's, fetched beforehand with
# `pip download dp-accounting --no-deps -d wheels/` on a machine with an index), installed with
# --no-index --no-deps. Stages, deadlines and the JSON rows are documented in gpu_driver.py; every
# row is written the moment it is measured, to OUT_DIR/gpu_rows_<device>.jsonl.
# CPU rehearsal (what tests/test_gpu_driver.py runs): JAX_PLATFORMS=cpu bash benchmarks/gpu.sh /tmp/r --rehearse
# The model workloads (issue 25: digits MLP and CNN with DP-DSGD, 16/64 agents, seeds 1-256) alone:
#   bash benchmarks/gpu.sh "$OUT" --stages 4 --budget 400 --models-s 390
# and rehearsed on CPU: JAX_PLATFORMS=cpu bash benchmarks/gpu.sh /tmp/r --rehearse --stages 4
# The scale cells (issue 38 goal 3: 1,000 steps, 10^6 and 10^7 agents) alone:
#   bash benchmarks/gpu.sh "$OUT" --stages 5 --budget 560 --scale-s 550
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-benchmarks/results}}
shift || true
mkdir -p "$OUT_DIR"
# The driver holds the GPU while its subprocesses (tests/gpu, each ladder cell) run: without this
# each process would preallocate 75 % of the memory and the second one would fail.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if compgen -G "wheels/*.whl" > /dev/null; then
    python3 -m pip install --no-index --no-deps --quiet wheels/*.whl 2>&1 | tail -3 || true
fi
exec python3 benchmarks/gpu_driver.py --out "$OUT_DIR" "$@"
