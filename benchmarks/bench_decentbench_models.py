"""jaxdp vs decent-bench's ``PyTorchCost`` on a small MLP: decentralized DP-SGD on the packaged
digits (issue 25).

One command (from jaxdp's environment, in the repository root)::

    python benchmarks/bench_decentbench_models.py --repeats 1   # ~11 min on 2 cores
    python benchmarks/bench_decentbench_models.py --quick       # 2 trials x 5 steps: a smoke
    python benchmarks/bench_decentbench_models.py --jaxdp-only --repeats 3  # jaxdp's rows again

creates ``.decentbench-torch-venv`` (Python 3.13; decent-bench and PyPI's torch, ~5.8 GB with
its CUDA libraries: PyTorch's CPU-only wheel index was unreachable from the machine that measured
this) on first use — a venv of its own, so that the headline's ``.decentbench-venv`` stays
without torch (decent-bench imports torch when it is installed, ~450 MiB of resident memory in
every run) — and writes ``results/decentbench_models_cpu.json``.

Workload (the same on both sides; jaxdp builds it and exports the arrays): ``digits_mlp`` —
the packaged UCI digits, 20 % held out (seed 0), the rest split iid among N = 16 agents (seed 0),
a 64–32–10 tanh MLP (2,410 parameters, θ₀ LeCun-normal with seed 0, biases 0), cross-entropy,
float32 — on a ring with Metropolis W; every agent starts at θ₀; b = 32 samples per agent per
step, α = 0.5, 100 steps. Rows:

* ``dp_dsgd``: DP-SGD's gradient (Abadi et al. 2016: per-example gradients clipped to C = 1, their
  mean plus N(0, σ²I), σ = 0.02) in D-PSGD's step x_i ← Σ_j W_ij x_j − α g̃_i (Lian et al. 2017).
  jaxdp: ``DPDSGD(batch_size=b, sampling="fixed")`` (b distinct rows per step; lattice noise, its
  default). decent-bench has no private SGD: its ``DGD`` with this gradient built from
  ``PyTorchCost``'s per-sample gradients (``_decentbench_torch_side.py``, ~15 lines).
* ``dgd``: non-private decentralized SGD: decent-bench's own ``DGD`` on ``PyTorchCost`` (one
  autograd minibatch gradient); jaxdp's ``DPDSGD`` with C = 10⁶ (no gradient here comes near;
  jaxdp's parameters must be finite) and σ = 0: the same gradient, computed per example, clipped
  and averaged (more work on jaxdp's side).

decent-bench draws its minibatches without replacement across successive steps (reshuffled each
epoch), jaxdp b distinct rows afresh each step: the same per-step work, near-identical laws.
decent-bench runs ``benchmark(..., max_processes=1)`` (its documentation advises against
multiprocessing with PyTorch) in torch float32 on one torch thread (its fastest here), the rest as
in ``bench_decentbench.py`` (no progress steps, metrics or history). jaxdp: ``jaxdp.run`` with the
trials as vmapped seeds (1, 30 and 256; decent-bench 30), median of ``--repeats`` runs, compile
time apart; cells of more than 30 trials run ``--steps-over-30`` (20) steps: a rate. Agreement: the test
loss and accuracy of the agents' average model after the last step, mean over trials, on both
sides (``test_accuracy``/``test_loss`` in the JSON).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_decentbench as headline  # this directory: the headline's code paths
import numpy as np
from decentbench_parity import PYTHON313, ensure_venv

WORK = {"agents": 16, "hidden": 32, "batch": 32, "alpha": 0.5, "clip": 1.0, "sigma": 0.02}
STEPS = 100
ALGS = {"dp_dsgd": {}, "dgd": {"clip": 1e6, "sigma": 0.0}}  # jaxdp's overrides (C finite)
TORCH_VENV = headline.ROOT / ".decentbench-torch-venv"
SIDE = headline.HERE / "_decentbench_torch_side.py"


def ensure_torch_venv(python: Path) -> Path:
    """``.decentbench-torch-venv`` with decent-bench and torch (the package index's build)."""
    exe = ensure_venv(python, TORCH_VENV)
    if subprocess.run([str(exe), "-c", "import torch"], capture_output=True,
                      check=False).returncode:
        subprocess.run([str(exe), "-m", "pip", "install", "-q", "torch"], check=True)
    return exe


def problem_and_network():
    """jaxdp's digits MLP problem (float32) and ring network."""
    import jax.numpy as jnp

    import jaxdp
    from jaxdp.problems import digits_mlp

    prob = digits_mlp(WORK["agents"], split="iid", seed=0, hidden=WORK["hidden"],
                      dtype=jnp.float32)
    return prob, jaxdp.network.build_network(jaxdp.network.ring(WORK["agents"]))


def torch_order(layers) -> np.ndarray:
    """θ flattened as torch's ``parameters()`` of Linear–Tanh–Linear: per layer the weight
    (out, in) = jaxdp's W (in, out) transposed, then the bias."""
    return np.concatenate([np.concatenate([np.asarray(l["W"]).T.ravel(), np.asarray(l["b"])])
                           for l in layers]).astype(np.float32)


def export_spec(path: Path) -> None:
    """The shards (padded, with their mask), θ₀, the test set, W and edges, the hyperparameters."""
    import jax.numpy as jnp

    prob, net = problem_and_network()
    n, m = prob.mask.shape
    W = np.asarray(net.W, np.float32)
    iu = np.triu_indices(n, 1)
    theta0 = torch_order(prob.params_of(jnp.zeros(prob.dim, jnp.float32)))
    np.savez(path, features=np.asarray(prob.features, np.float32).reshape(n, m, -1),
             labels=np.asarray(prob.labels), mask=np.asarray(prob.mask), theta0=theta0,
             test_x=np.asarray(prob.test_features, np.float32).reshape(len(prob.test_labels), -1),
             test_y=np.asarray(prob.test_labels), W=W,
             edges=np.stack([iu[0], iu[1]], 1)[W[iu] != 0], **WORK)


def jaxdp_cell(name: str, trials: int, steps: int) -> dict:
    """One jaxdp run of ``trials`` vmapped seeds (in this process)."""
    import jaxdp
    from jaxdp.algorithms import DPDSGD

    jaxdp.use_cpu_cores()
    prob, net = problem_and_network()
    alg = DPDSGD(batch_size=WORK["batch"], sampling="fixed")
    hyper = {**{k: WORK[k] for k in ("alpha", "clip", "sigma")}, **ALGS[name]}
    params = alg.default_params().replace(**hyper)
    alg.validate(params, prob, net)
    trace, row = headline.timed_jaxdp(alg, prob, net, params, steps, trials)
    work = trials * steps * WORK["agents"]
    last = {k: np.asarray(trace.metrics[k])[:, -1].tolist() for k in ("test_loss",
                                                                         "test_accuracy")}
    return {**row, "alg": name, "agent_iterations": work,
            "agent_iterations_per_second": work / row["run_seconds"], **last}


def run_decentbench(exe: Path, spec: Path, name: str, trials: int, steps: int) -> dict:
    return headline.subprocess_json([str(exe), str(SIDE), str(spec), name, str(trials),
                                     str(steps)])


def record(rows: list[dict], r: dict) -> None:
    """Append ``r`` with the load after it, and print it."""
    rows.append({**r, "uptime": headline.uptime()})
    print(f"{r['impl']:>12} {r['alg']:>8} trials={r['trials']:>3}: "
          f"{r['agent_iterations_per_second']:.3e} agent-it/s, wall {r['wall_seconds']:.2f}s, "
          f"test acc {np.mean(r['test_accuracy']):.3f}", flush=True)


def summarize(rows: list[dict]) -> None:
    """Mean test loss/accuracy per row; per jaxdp row the speed-up over decent-bench's row of the
    same algorithm (``headline.decentbench_peer``). Raises if a side did not learn
    (decent-bench's ``benchmark`` logs and swallows errors)."""
    for r in rows:  # idempotent: called after every row
        r["test_accuracy_mean"] = float(np.mean(r["test_accuracy"]))
        r["test_loss_mean"] = float(np.mean(r["test_loss"]))
        if not np.isfinite(r["test_loss_mean"]) or r.get("completed_trials", 1) < 1:
            raise RuntimeError(f"{r['impl']} {r['alg']} did not run")
    for r in rows:
        db = headline.decentbench_peer(rows, r) if r["impl"] == "jaxdp" else None
        if db is not None:
            rate = "agent_iterations_per_second"
            r["speedup"], r["speedup_vs_trials"] = r[rate] / db[rate], db["trials"]
            if db["trials"] == r["trials"] and db["iterations"] == r["iterations"]:
                r["test_accuracy_gap"] = r["test_accuracy_mean"] - db["test_accuracy_mean"]


def table(rows: list[dict]) -> str:
    """The README's table of a results file."""
    lines = [("| trials | implementation | algorithm | steps | agent-it/s | wall s | compile s | "
              "peak RSS MiB | test loss | test accuracy | speed-up |"),
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        rss = max(r["peak_rss_mib"], r.get("peak_rss_children_mib", 0.0))
        speed = f"{r['speedup']:.3g}×" if "speedup" in r else ""
        lines.append(f"| {r['trials']} | {r['impl']} | {r['alg']} | {r['iterations']} | "
                     f"{r['agent_iterations_per_second']:.3g} | {r['wall_seconds']:.1f} | "
                     f"{r['compile_seconds']:.1f} | {rss:.0f} | {r['test_loss_mean']:.3f} | "
                     f"{r['test_accuracy_mean']:.3f} | {speed} |")
    return "\n".join(lines)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, nargs="+", default=[1, 30, 256],
                    help="jaxdp's seed counts")
    ap.add_argument("--db-trials", type=int, nargs="*", default=[30],
                    help="the trial counts decent-bench also runs")
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--steps-over-30", type=int, default=20,
                    help="steps of the cells with more than 30 trials (a rate: the cost of a "
                         "step is constant; compile time apart)")
    ap.add_argument("--algs", nargs="+", choices=list(ALGS), default=list(ALGS))
    ap.add_argument("--repeats", type=int, default=3, help="jaxdp runs per cell (median)")
    ap.add_argument("--python", default=str(PYTHON313), help="a Python >= 3.13 for the venv")
    ap.add_argument("--quick", action="store_true", help="2 trials x 5 steps, 1 repeat")
    ap.add_argument("--jaxdp-only", action="store_true",
                    help="re-measure jaxdp's rows only, keeping the decent-bench rows (and their "
                         "machine record) of --out: no venv needed")
    ap.add_argument("--out", default=str(headline.HERE / "results" /
                                         "decentbench_models_cpu.json"))
    ap.add_argument("--table", action="store_true",
                    help="re-derive --out's speed-ups and print it as a markdown table")
    ap.add_argument("--cell", nargs=4, metavar=("SPEC", "ALG", "TRIALS", "STEPS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if min(args.trials + [args.steps, args.steps_over_30, args.repeats]) < 1:
        ap.error("--trials, --steps, --steps-over-30 and --repeats must be >= 1")
    if args.quick:
        args.trials, args.db_trials, args.steps, args.repeats = [2], [2], 5, 1
        args.out = str(Path(tempfile.gettempdir()) / "decentbench_models_quick.json")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.cell:
        _, alg, trials, steps = args.cell
        print(json.dumps(jaxdp_cell(alg, int(trials), int(steps))))
        return 0
    if args.table:
        results = json.loads(Path(args.out).read_text())
        summarize(results["rows"])  # re-derived: the file's speed-ups follow this code
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
        print(table(results["rows"]))
        return 0
    load = {"before": headline.uptime()}
    if args.jaxdp_only:  # the peer's rows and machine record kept; jaxdp's measured again
        kept = json.loads(Path(args.out).read_text())
        exe, rows, args.db_trials = kept["machine"], [r for r in kept["rows"]
                                                      if r["impl"] != "jaxdp"], []
    else:
        exe, rows = ensure_torch_venv(Path(args.python)), []
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.npz"
        export_spec(spec)
        for trials in args.trials:
            steps = args.steps if trials <= 30 else args.steps_over_30
            for alg in args.algs:
                if trials in args.db_trials:
                    record(rows, run_decentbench(exe, spec, alg, trials, steps))
                    write(args, exe, rows, load)
                record(rows, headline.run_jaxdp(spec, alg, trials, steps, args.repeats,
                                                script=__file__))
                write(args, exe, rows, load)  # each row kept as soon as it is measured
    load["after"] = headline.uptime()
    write(args, exe, rows, load)
    print(table(rows))
    print(f"wrote {args.out}")
    return 0


def write(args, exe: Path | dict, rows: list[dict], load: dict) -> None:
    """``--out``: the machine, the workload and the rows so far (summarized)."""
    summarize(rows)
    workload = {**WORK, "steps": args.steps, "steps_over_30_trials": args.steps_over_30,
                "split": "iid", "network": "ring, Metropolis W",
                "dataset": "packaged UCI digits, 20 % test (seed 0)", "loss": "cross_entropy",
                "jaxdp_sampling": "fixed", "repeats_jaxdp": args.repeats,
                "command": "python benchmarks/bench_decentbench_models.py " + " ".join(args.argv)}
    if isinstance(exe, dict):  # --jaxdp-only: decent-bench's side as recorded, jaxdp's now
        import jax
        machine = {**exe, "jax": jax.__version__, "uptime_jaxdp_rerun": load}
    else:
        machine = headline.machine_info(load, ("torch",), python=exe)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": machine, "workload": workload,
                                          "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
