#!/bin/bash
# The GPU measurements of issue 8 in one call (for a machine with an NVIDIA GPU and jax[cuda12]):
#   bash benchmarks/gpu.sh [OUT_DIR]      # default OUT_DIR=benchmarks/results
# DPP² at 1…65,536 seeds × 500 steps (target: 65,536 seeds in < 10 s including compile), the roofline
# of its step, LT-ADMM-DP and DP-RECAL throughput, and the edge-product formulations (slots vs
# segment_sum/scatter-add) on the GPU's jaxlib.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-benchmarks/results}
mkdir -p "$OUT"
python -c "import jax; print(jax.__version__, jax.devices())" | tee "$OUT/gpu_env.txt"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >> "$OUT/gpu_env.txt" || true
python benchmarks/bench_suite.py --impls jaxdp --workloads dpp2 dgd --seeds 1 16 256 4096 65536 --out "$OUT/suite_gpu.json"
python benchmarks/bench_suite.py --impls jaxdp --workloads ltadmm recal --seeds 1 256 4096 65536 --out "$OUT/suite_gpu_token.json"
python benchmarks/bench_roofline.py --workloads dpp2 ltadmm --seeds 256 4096 65536 --out "$OUT/roofline_gpu.json"
python benchmarks/bench_mixing.py --layouts --out "$OUT/mixing_gpu.json"   # writes mixing_layouts_gpu.json beside it
