"""The GPU session of issue 26 in one call: correctness first, then the benchmark ladder, then a reserve.

Run by ``benchmarks/gpu.sh`` (which sets ``PYTHONPATH`` and installs carried wheels) or directly:

    python3 benchmarks/gpu_driver.py --out "$OUT" --budget 560     # on the GPU machine
    JAX_PLATFORMS=cpu python3 benchmarks/gpu_driver.py --rehearse --out /tmp/r   # CPU rehearsal

Every measurement is one JSON row appended (and flushed) to ``OUT/gpu_rows_<device>.jsonl`` the
moment it is taken, so a call cut off by its time limit keeps everything measured before. The first
row (``stage: "env"``) records the commit, device, driver, CUDA and jax/jaxlib/plugin versions,
``XLA_FLAGS``, the matmul-precision setting and jaxdp's precision policy.

Stages (each with a deadline inside ``--budget`` seconds; a stage that runs out records a
``"deadline"`` row and the next one starts):

1. **correctness** (``--stage1-s``): DPP² and LT-ADMM-DP at their paper settings, DGD through a
   ``clip+gaussian`` channel, and ``jax.grad`` of DPP²'s final objective, each run twice on the
   accelerator (bit-identical: ``deterministic``) and once on the CPU in the same process
   (``max_abs_diff``, ``max_rel_diff`` against it), with jaxdp's precision policy (HIGHEST) and
   with it replaced by DEFAULT (what the GPU would do without the policy: TF32 on Ampere/Hopper),
   recording the final consensus error and objective of each.
2. **ladder** (``--stage2-s``): the headline (DPP², paper setting, 500 steps, seeds 1 ... 65,536,
   each in a fresh process timed from its start: import + compile + run), the cold start
   (``bench_cold_start.py``: import, ``jaxdp --help``/``list``, compile time and program size at
   1/64/4096 seeds, a first and a repeated ``jaxdp run`` on the compilation cache), then the
   existing benchmarks (``bench_suite.py`` DPP²/DP-DGD/LT-ADMM-DP/DP-RECAL, ``bench_roofline.py``,
   ``bench_mixing.py --layouts``, ``bench_determinism.py``), each a subprocess under the stage's
   remaining time, whose JSON is copied into a row.
3. **reserve** (what is left): a ``jax.profiler`` trace of DPP² at the largest seed count that ran
   (written under ``OUT/profile``) and the compiled program's cost analysis.
4. **models** (``--models-s``, run before the reserve when listed in ``--stages``): neural-network
   workloads of issue 25 with DP-DSGD (Poisson batches, per-example clipping, lattice noise) on
   the packaged digits: the 64–32–10 MLP (``digits_mlp``) and the small CNN (``digits_cnn``:
   3×3 conv, 8 channels, 2×2 mean pool, dense 10; ghost clipping), 16 and 64 agents on a ring,
   seeds 1, 16, 256 (:data:`MODEL_SEEDS`), each cell in a fresh process: agent-steps per second of the
   compiled run, wall from spawn, compile time, jaxdp's program-size estimate and the device's
   peak memory (``memory_stats``; the process's peak RSS on CPU). A workload's seed ladder stops
   at its first failure or timeout. Its default 60 s covers the first cells only; a call of its
   own runs the whole grid:
   ``bash benchmarks/gpu.sh "$OUT" --stages 4 --budget 400 --models-s 390``.

5. **scale** (``--scale-s``, issue 38 goal 3 on the device): ``bench_scale.py``'s cells at
   1,000 steps (:data:`SCALE_CELLS`: DGD and DP-DGD at N = 10⁶, DGD behind the per-message
   ``clip+gaussian`` channel at 10⁵, then DGD at 10⁷ and the channel at 10⁶), each in a fresh
   process (graph, network and data built on the host, then compile and run), in that order until
   the stage's time runs out; each row is the cell's JSON (seconds per phase, agent-steps/s, what
   one device holds). A call of its own:
   ``bash benchmarks/gpu.sh "$OUT" --stages 5 --budget 560 --scale-s 550``.

``--rehearse`` runs the same code on tiny sizes (a few steps, a few seeds, the benchmarks skipped
except one tiny headline cell and one tiny CNN cell) so that
``tests/test_gpu_driver.py`` exercises it end to end on CPU; ``--stages 4 --rehearse`` runs the
model workloads alone.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

START = time.time()
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for path in (str(ROOT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

HEADLINE_SEEDS = (1, 256, 4096, 16384, 65536)
MODEL_WORKLOADS = ("digits_mlp", "digits_cnn")
MODEL_AGENTS = (16, 64)
MODEL_SEEDS = (1, 16, 256)
MODEL_STEPS = 100
SCALE_CELLS = (("dgd", 10**6), ("dp_dgd", 10**6), ("dgd+channel", 10**5), ("dgd", 10**7),
               ("dgd+channel", 10**6))
SCALE_STEPS = 1000


class Rows:
    """Append-only JSON lines, flushed after every row."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(path, "a", buffering=1)

    def write(self, stage: str, name: str, **fields) -> dict:
        row = {"stage": stage, "name": name, "t_s": round(time.time() - START, 3), **fields}
        self.file.write(json.dumps(row, default=_jsonable) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())
        print(json.dumps(row, default=_jsonable)[:400], flush=True)
        return row


def _jsonable(value):
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:
        pass
    return repr(value)


def _run(cmd, timeout=None) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        return (done.stdout or done.stderr).strip()
    except (OSError, subprocess.SubprocessError) as err:
        return f"unavailable: {type(err).__name__}"


def commit() -> str:
    found = _run(["git", "rev-parse", "HEAD"], timeout=10)
    if len(found) == 40:
        return found
    head = ROOT / ".git" / "HEAD"  # no git binary: read the ref by hand
    try:
        ref = head.read_text().strip()
        if ref.startswith("ref: "):
            return (ROOT / ".git" / ref[5:]).read_text().strip()
        return ref
    except OSError:
        return "unknown"


def environment() -> dict:
    import importlib.metadata as md

    import jax

    import jaxdp
    from jaxdp import _precision

    devices = jax.devices()
    versions = {}
    for dist in md.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name.startswith(("jax", "nvidia-", "dp-accounting", "numpy", "scipy")):
            versions[name] = dist.version
    missing = []
    for module in ("dp_accounting", "networkx", "scipy", "chex", "optax", "pandas", "matplotlib"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    return {
        "commit": commit(),
        "dirty": bool(_run(["git", "status", "--porcelain", "--untracked-files=no"], timeout=10)),
        "platform": devices[0].platform,
        "device_kind": devices[0].device_kind,
        "n_devices": len(devices),
        "nvidia_smi": _run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                            "clocks.max.sm,clocks.max.mem", "--format=csv,noheader"], timeout=20),
        "cuda_version": _run(["nvidia-smi", "--query", "--display=COMPUTE"], timeout=20)[-200:]
        if devices[0].platform == "gpu" else None,
        "jax": jax.__version__,
        "jaxdp": getattr(jaxdp, "__version__", None),
        "packages": versions,
        "missing_modules": missing,
        "python": sys.version.split()[0],
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", ""),
        "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", ""),
        "jax_default_matmul_precision": str(jax.config.jax_default_matmul_precision),
        "jax_enable_x64": bool(jax.config.jax_enable_x64),
        "jaxdp_precision_policy": _precision.PRECISION.name,
    }


def _kind(device) -> str:
    """The device's name as a file-name part: ``nvidia_h200``, ``cpu``."""
    return "".join(c if c.isalnum() else "_" for c in device.device_kind).strip("_").lower()


# -- stage 1: correctness ------------------------------------------------------------------------
def cases(tiny: bool) -> dict:
    """name -> (function of nothing returning a pytree of arrays, description)."""
    import jax

    import jaxdp
    from jaxdp import algorithms, channels, network, problems
    from jaxdp.engine._simulate import simulate

    if tiny:
        prob = problems.nonconvex_logistic(n_agents=8, m=10, d=3, seed=0)
        net = network.make_network("random_geometric", 8, radius=0.5, seed=1)
        lt_prob, lt_net, steps = prob, net.with_backend("edges"), 5
    else:
        from jaxdp.experiments.dpp2 import paper_network, paper_problem
        from jaxdp.experiments.ltadmm import paper_setup

        prob, net = paper_problem(), paper_network()
        (lt_prob, lt_net), steps = paper_setup(), 500
    key = jax.random.key(0)

    def final(alg, problem, network_, params):
        def fn():
            carry, records, _ = simulate(alg, problem, network_, params, key, steps=steps,
                                         record_every=steps)
            return {"models": alg.models(carry.state), "records": records}
        return fn

    dpp2 = algorithms.DPP2()
    ltadmm = algorithms.LTADMMDP()
    chan = channels.with_channel(algorithms.DGD(),
                                 channels.parse_channel("clip:1.0+gaussian:0.5"))

    def grad():
        return jax.grad(lambda p: jaxdp.final_metrics(dpp2, prob, net, p, key, steps=steps)[
            "objective"])(dpp2.default_params())

    return {"dpp2": final(dpp2, prob, net, dpp2.default_params()),
            "lt_admm_dp": final(ltadmm, lt_prob, lt_net, ltadmm.default_params()),
            "dgd_channel": final(chan, prob, net, chan.params(chan.inner.default_params())),
            "grad_dpp2": grad}


def _flat(tree):
    import jax
    import numpy as np

    return np.concatenate([np.ravel(np.asarray(a, np.float64)) for a in jax.tree.leaves(tree)])


@contextlib.contextmanager
def precision_policy(name: str):
    """Trace with jaxdp's precision policy replaced (``DEFAULT``: what XLA picks, TF32 on GPUs)."""
    import jax

    from jaxdp import _precision

    old = _precision.PRECISION
    _precision.PRECISION = getattr(jax.lax.Precision, name)
    try:
        yield
    finally:
        _precision.PRECISION = old


def stage1(rows: Rows, out: Path, tiny: bool, deadline: float) -> None:
    import jax
    import numpy as np

    if not tiny and jax.devices()[0].platform == "gpu":  # tests/gpu first: a pass/fail per check
        env = dict(os.environ, JAX_PLATFORMS="cuda,cpu", PYTHONPATH=os.pathsep.join(
            [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        try:
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "tests/gpu"],
                                  capture_output=True, text=True, cwd=ROOT, env=env,
                                  timeout=max(deadline - time.time() - 60, 5))
            rows.write("correctness", "tests_gpu", returncode=done.returncode,
                       tail=done.stdout[-3000:], stderr_tail=done.stderr[-2000:])
        except (OSError, subprocess.SubprocessError) as err:
            rows.write("correctness", "tests_gpu", error=repr(err))

    cpu = jax.devices("cpu")[0]
    accel = jax.devices()[0]
    arrays = {}  # every compared value, saved to OUT/correctness_<device>.npz at the end
    for policy in ("HIGHEST", "DEFAULT"):
        with precision_policy(policy):
            for name, fn in cases(tiny).items():
                if tiny and policy != "HIGHEST" and name != "dpp2":
                    continue  # the rehearsal runs the DEFAULT policy on one case only
                if time.time() > deadline:
                    rows.write("correctness", "deadline", policy=policy, case=name)
                    break
                t0 = time.time()
                try:
                    with jax.default_device(accel):
                        first = _flat(jax.jit(fn)())
                        second = _flat(jax.jit(fn)())
                    with jax.default_device(cpu):
                        on_cpu = _flat(jax.jit(fn)())
                except Exception as err:  # recorded, the next case runs
                    rows.write("correctness", name, policy=policy, error=repr(err)[:2000])
                    continue
                # Metrics undefined by design (dist_to_opt without a reference x*) are NaN on both
                # sides: compare where the CPU value is finite, and require the same NaN pattern.
                defined = np.isfinite(on_cpu)
                diff = np.abs(first - on_cpu)[defined]
                scale = np.maximum(np.abs(on_cpu[defined]), 1e-30)
                arrays[f"{name}_{policy}_gpu"], arrays[f"{name}_{policy}_cpu"] = first, on_cpu
                rows.write("correctness", name, policy=policy, device=accel.device_kind,
                           deterministic=bool(np.array_equal(first, second, equal_nan=True)),
                           finite=bool(np.array_equal(np.isfinite(first), defined)),
                           n_undefined=int((~defined).sum()),
                           max_abs_diff=float(diff.max()), max_rel_diff=float((diff / scale).max()),
                           rel_l2_diff=float(np.linalg.norm(diff) / max(np.linalg.norm(
                               on_cpu[defined]), 1e-30)),
                           norm=float(np.linalg.norm(first[defined])), n_values=int(first.size),
                           seconds=round(time.time() - t0, 3))
    if arrays:
        np.savez(out / f"correctness_{_kind(accel)}.npz", **arrays)


# -- stage 2: the ladder -------------------------------------------------------------------------
def headline_cell(seeds: int, steps: int) -> dict:
    """One DPP² run at the paper setting in this (fresh) process: import + compile + run."""
    t_import = time.time()
    import jax

    import jaxdp
    from jaxdp import algorithms
    from jaxdp.experiments.dpp2 import paper_network, paper_problem

    prob, net = paper_problem(), paper_network()
    t0 = time.time()
    trace = jaxdp.run(algorithms.DPP2(), prob, net, algorithms.DPP2Params(), steps=steps,
                      seeds=seeds, record_every=steps, progress=False)
    done = time.time()
    return {"seeds": seeds, "steps": steps, "device": jax.devices()[0].device_kind,
            "import_s": round(t0 - t_import, 3), "run_with_compile_s": round(done - t0, 3),
            "compile_s": trace.meta.get("compile_seconds"),
            "consensus_error_mean": float(trace.final("consensus_error").mean())}


def subprocess_row(rows: Rows, stage: str, name: str, cmd: list, timeout: float,
                   json_out: Path | None = None) -> bool:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    t0 = time.time()
    if timeout < 5:
        rows.write(stage, name, skipped="deadline", cmd=cmd)
        return False
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env=env)
    except subprocess.TimeoutExpired:
        rows.write(stage, name, timed_out=True, timeout_s=round(timeout, 1), cmd=cmd)
        return False
    wall = round(time.time() - t0, 3)
    result = None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if json_out is not None and json_out.exists():
        result = json.loads(json_out.read_text())
    elif lines:
        result = json.loads(lines[-1])
    rows.write(stage, name, returncode=done.returncode, wall_from_spawn_s=wall, cmd=cmd,
               result=result, stderr_tail=done.stderr[-1500:] if done.returncode else "")
    return done.returncode == 0


def stage2(rows: Rows, out: Path, tiny: bool, deadline: float, only=None) -> None:
    py = sys.executable
    me = str(Path(__file__).resolve())
    seeds = (2,) if tiny else HEADLINE_SEEDS
    steps = 10 if tiny else 500
    for s in seeds if only is None or "headline_dpp2" in only else ():
        ok = subprocess_row(rows, "ladder", "headline_dpp2",
                            [py, me, "--cell", "headline", str(s), str(steps)],
                            timeout=deadline - time.time())
        if not ok:
            break
    if only is None or "cold_start" in only:  # issue 38: import, --help, compile vs seeds, cache
        path = out / "cold_start.json"
        sizes = ["--tiny", "--seeds", "1", "--steps", "2"] if tiny else []
        subprocess_row(rows, "ladder", "cold_start",
                       [py, str(HERE / "bench_cold_start.py"), *sizes, "--repeats", "1",
                        "--out", str(path)], timeout=deadline - time.time(), json_out=path)
    if tiny:
        return
    bench = [
        ("suite_dpp2_dgd", ["bench_suite.py", "--impls", "jaxdp", "--workloads", "dpp2", "dgd",
                            "--seeds", "1", "256", "4096", "65536"], "suite_gpu.json"),
        ("suite_ltadmm_recal", ["bench_suite.py", "--impls", "jaxdp", "--workloads", "ltadmm",
                                "recal", "--seeds", "1", "256", "4096", "65536"],
         "suite_gpu_token.json"),
        ("roofline", ["bench_roofline.py", "--workloads", "dpp2", "ltadmm", "--seeds", "256",
                      "4096", "65536"], "roofline_gpu.json"),
        ("mixing_layouts", ["bench_mixing.py", "--layouts"], "mixing_layouts_gpu.json"),
        ("determinism", ["bench_determinism.py", "--quick"], "determinism_gpu.json"),
    ]
    for name, args, target in bench:
        if only is not None and name not in only:
            continue
        path = out / target
        subprocess_row(rows, "ladder", name, [py, str(HERE / args[0]), *args[1:], "--out",
                                              str(path)], timeout=deadline - time.time(),
                       json_out=path)


# -- stage 3: reserve ----------------------------------------------------------------------------
def stage3(rows: Rows, out: Path, tiny: bool, deadline: float) -> None:
    import jax

    import jaxdp
    from jaxdp import algorithms
    from jaxdp.engine._simulate import simulate

    if time.time() > deadline - 10:
        rows.write("reserve", "deadline")
        return
    if tiny:
        from jaxdp import network, problems

        prob = problems.nonconvex_logistic(n_agents=8, m=10, d=3, seed=0)
        net = network.make_network("random_geometric", 8, radius=0.5, seed=1)
        seeds, steps = 2, 5
    else:
        from jaxdp.experiments.dpp2 import paper_network, paper_problem

        prob, net, seeds, steps = paper_problem(), paper_network(), 4096, 500
    alg, params = algorithms.DPP2(), algorithms.DPP2Params()
    keys = jax.random.split(jax.random.key(0), seeds)
    fn = jax.jit(jax.vmap(lambda k: simulate(alg, prob, net, params, k, steps=steps,
                                             record_every=steps)[1]))
    compiled = fn.lower(keys).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    rows.write("reserve", "cost_analysis_dpp2", seeds=seeds, steps=steps,
               cost={k: float(v) for k, v in (cost or {}).items()
                     if k in ("flops", "bytes accessed", "transcendentals")})
    jax.block_until_ready(compiled(keys))
    trace_dir = out / "profile"
    t0 = time.time()
    with jax.profiler.trace(str(trace_dir)):
        jax.block_until_ready(compiled(keys))
    rows.write("reserve", "profile_dpp2", seeds=seeds, steps=steps, dir=str(trace_dir),
               run_s=round(time.time() - t0, 3), jaxdp_version=getattr(jaxdp, "__version__", None))


# -- stage 4: neural-network workloads (issue 25) -------------------------------------------------
def model_problem(workload: str, agents: int):
    """``digits_mlp`` or ``digits_cnn`` (the library builders), float32, an IID split among
    ``agents``."""
    import jax.numpy as jnp

    from jaxdp import problems

    if workload not in MODEL_WORKLOADS:
        raise ValueError(f"unknown model workload {workload!r}; use one of {MODEL_WORKLOADS}")
    return problems.make_problem(workload, n_agents=agents, split="iid", dtype=jnp.float32)


def model_cell(workload: str, agents: int, seeds: int, steps: int) -> dict:
    """One DP-DSGD run of a model workload in this (fresh) process: import + compile + run.

    σ is fixed (the cost of a step does not depend on it); b = min(16, smallest shard)."""
    t_import = time.time()
    import jax
    import numpy as np

    import jaxdp
    from jaxdp import algorithms

    problem = model_problem(workload, agents)
    net = jaxdp.network.build_network(jaxdp.network.ring(agents))
    batch = int(min(16, np.min(np.sum(np.asarray(problem.mask), axis=1))))
    alg = algorithms.DPDSGD(batch_size=batch)
    params = algorithms.DPSGDParams(alpha=0.5, clip=1.0, sigma=0.3)
    t0 = time.time()
    trace = jaxdp.run(alg, problem, net, params, steps=steps, seeds=seeds, record_every=steps,
                      progress=False)
    done = time.time()
    device = jax.devices()[0]
    stats = device.memory_stats() or {}
    import resource

    return {"workload": workload, "agents": agents, "seeds": seeds, "steps": steps,
            "batch_size": batch, "dim": problem.dim, "padded_rows": int(problem.features.shape[1]),
            "device": device.device_kind, "import_s": round(t0 - t_import, 3),
            "run_with_compile_s": round(done - t0, 3),
            "compile_s": trace.meta.get("compile_seconds"),
            "run_s": trace.meta.get("run_seconds"),
            "agent_steps_per_second": trace.meta.get("agent_steps_per_second"),
            "seed_steps_per_second": seeds * steps / max(trace.meta["run_seconds"], 1e-12),
            "seed_batches": trace.meta.get("seed_batches"),
            "program_mib_estimate": trace.meta.get("memory_per_device_mib"),
            "peak_bytes_in_use": stats.get("peak_bytes_in_use"),
            "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "test_accuracy_mean": float(np.mean(trace.final("test_accuracy"))),
            "n_diverged": trace.meta.get("n_diverged")}


def stage4(rows: Rows, out: Path, tiny: bool, deadline: float) -> None:
    py = sys.executable
    me = str(Path(__file__).resolve())
    agents = (16,) if tiny else MODEL_AGENTS
    seeds = (2,) if tiny else MODEL_SEEDS
    steps = 5 if tiny else MODEL_STEPS
    workloads = MODEL_WORKLOADS[-1:] if tiny else MODEL_WORKLOADS  # the rehearsal: the CNN cell
    for n in agents:  # breadth first: both workloads at 16 agents before 64
        for workload in workloads:
            for s in seeds:
                ok = subprocess_row(rows, "models", f"{workload}_dp_dsgd",
                                    [py, me, "--cell", f"model:{workload}:{n}", str(s),
                                     str(steps)], timeout=deadline - time.time())
                if not ok:
                    break


# -- stage 5: scale (issue 38, goal 3) -------------------------------------------------------------
def stage5(rows: Rows, out: Path, tiny: bool, deadline: float) -> None:
    del out  # each cell's JSON is its row
    cells = (("dgd", 200), ("dgd+channel", 200)) if tiny else SCALE_CELLS
    steps = 2 if tiny else SCALE_STEPS
    for name, n in cells:
        subprocess_row(rows, "scale", f"{name}_{n}",
                       [sys.executable, str(HERE / "bench_scale.py"), "--cell", name, str(n),
                        str(steps)], timeout=deadline - time.time())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or str(HERE / "results"))
    ap.add_argument("--budget", type=float, default=560.0, help="seconds for all stages")
    ap.add_argument("--stage1-s", type=float, default=150.0)
    ap.add_argument("--stage2-s", type=float, default=330.0)
    ap.add_argument("--models-s", type=float, default=60.0,
                    help="seconds for stage 4 (the model workloads)")
    ap.add_argument("--scale-s", type=float, default=300.0,
                    help="seconds for stage 5 (the scale cells)")
    ap.add_argument("--stages", type=int, nargs="+", default=[1, 2, 4, 3],
                    help="stages in the order run: 1 correctness, 2 ladder, 4 models, 3 reserve "
                         "(5, scale: in a call of its own)")
    ap.add_argument("--ladder", nargs="+", default=None, metavar="NAME",
                    help="stage 2 runs only these (headline_dpp2, suite_dpp2_dgd, ...)")
    ap.add_argument("--rehearse", "--tiny", action="store_true", dest="tiny",
                    help="tiny sizes (the CPU rehearsal of tests/test_gpu_driver.py)")
    ap.add_argument("--cell", nargs=3, metavar=("KIND", "SEEDS", "STEPS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cell:
        if args.cell[0].startswith("model:"):
            _, workload, agents = args.cell[0].split(":")
            result = model_cell(workload, int(agents), int(args.cell[1]), int(args.cell[2]))
        else:
            result = headline_cell(int(args.cell[1]), int(args.cell[2]))
        print(json.dumps(result), flush=True)
        return

    import jax

    out = Path(args.out)
    env = environment()
    rows = Rows(out / f"gpu_rows_{_kind(jax.devices()[0])}.jsonl")
    rows.write("env", "environment", rehearse=args.tiny, argv=sys.argv, **env)
    end = START + args.budget
    stage_ends = {1: min(end, time.time() + args.stage1_s), 3: end}
    for stage in args.stages:
        seconds = {2: args.stage2_s, 4: args.models_s, 5: args.scale_s}.get(stage)
        if seconds is not None:  # these stages' clocks start when they do
            stage_ends[stage] = min(end, time.time() + seconds)
        run = {1: stage1, 2: stage2, 3: stage3, 4: stage4, 5: stage5}[stage]
        try:
            run(rows, out, args.tiny, stage_ends[stage], **({"only": args.ladder} if stage == 2
                                                            else {}))
        except Exception as err:  # a stage that breaks is recorded; the next one runs
            rows.write(f"stage{stage}", "error", error=repr(err)[:2000])
    rows.write("done", "done", total_s=round(time.time() - START, 3), platform=jax.devices()[0]
               .platform)


if __name__ == "__main__":
    main()
