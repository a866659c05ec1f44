"""The ``jaxdp`` command: ``list``, ``info``, ``demo``, ``run``, ``compare`` and ``reproduce``.

Bad arguments print one line (``jaxdp: error: ...``) and exit with status 2, never a traceback;
they are checked before any run starts (the output folder first). ``run`` and ``compare`` read
their arguments from a TOML file with ``--config`` (command-line flags win) and copy it verbatim
into the output folder.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
import tomllib
from pathlib import Path

_ERRORS = (ValueError, KeyError, TypeError, FileNotFoundError, ImportError, OSError)
X_AXES = ("step", "rounds", "messages", "bits", "grad_calls", "sample_grads", "prox_calls",
          "hessian_calls")
"""The figure's x axes: iterations, or a static cost (``Algorithm.costs_per_step``) × steps."""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        args = _parse(parser, argv)
    except _ERRORS as e:
        return _fail(e)
    if args.command is None:
        parser.print_help()
        return 0
    import jax

    from jaxdp.engine import use_cpu_cores

    try:
        use_cpu_cores()  # the command owns the process: shard seeds over every CPU core
    except RuntimeError:
        pass  # JAX already started (jaxdp.cli.main called from Python): keep its devices
    if getattr(args, "x64", False):
        jax.config.update("jax_enable_x64", True)  # the user asked for it on the command line
    try:
        return args.func(args)
    except BrokenPipeError:  # `jaxdp list | head`: the reader left; not an error of the input
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _ERRORS as e:
        return _fail(e)


def _fail(e: Exception) -> int:
    msg = e.args[0] if e.args and isinstance(e.args[0], str) else str(e)
    print(f"jaxdp: error: {msg}".splitlines()[0], file=sys.stderr)
    return 2


# -- parser ---------------------------------------------------------------------------------------
class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Show every default in ``--help``."""


def _parser() -> argparse.ArgumentParser:
    from jaxdp import __version__

    p = argparse.ArgumentParser(prog="jaxdp", formatter_class=_Help,
                                description="Simulate differentially private decentralized "
                                            "optimization.")
    p.add_argument("--version", action="version", version=f"jaxdp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("list", formatter_class=_Help,
                       help="algorithms (private or not), problems, networks, reproductions")
    s.set_defaults(func=_cmd_list)

    s = sub.add_parser("info", formatter_class=_Help,
                       help="an algorithm's citation, parameters and privacy")
    s.add_argument("algorithm", help="registry name (see `jaxdp list`)")
    s.set_defaults(func=_cmd_info)

    s = sub.add_parser("demo", formatter_class=_Help,
                       help="DP-DGD vs DGD on DPP²'s problem, 100 seeds: figure + table")
    s.add_argument("--out", default="demo_out", help="output folder")
    s.add_argument("--seeds", type=int, default=100, help="seeds per algorithm")
    s.add_argument("--steps", type=int, default=300, help="iterations K")
    s.add_argument("--epsilon", type=float, default=10.0, help="per-agent privacy target")
    s.add_argument("--no-progress", action="store_true", help="hide progress bars")
    s.set_defaults(func=_cmd_demo)

    s = sub.add_parser("run", formatter_class=_Help,
                       help="run one algorithm over many seeds; write trace, CSV, plot, ε")
    s.add_argument("algorithm", nargs="?", default=None,
                   help="registry name (see `jaxdp list`); may come from --config")
    _setting_arguments(s, out="out")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="override a Params field, e.g. --param alpha=0.01 (repeatable; "
                        "`jaxdp info ALG` lists them)")
    s.add_argument("--metric", default="grad_norm_sq", help="metric to plot")
    s.set_defaults(func=_cmd_run)

    s = sub.add_parser("compare", formatter_class=_Help,
                       help="several algorithms at the same ε: one figure, one table")
    s.add_argument("algorithms", nargs="*", help="registry names; may come from --config")
    _setting_arguments(s, out="compare_out")
    s.add_argument("--metric", action="append", default=None,
                   help="metric to plot and tabulate (repeatable; default: grad_norm_sq)")
    s.set_defaults(func=_cmd_compare)

    s = sub.add_parser("reproduce", formatter_class=_Help,
                       help="reproduce a paper figure/table (see `jaxdp list`)")
    s.add_argument("name", help="a reproduction (see `jaxdp list`)")
    s.add_argument("--out", default=None, help="output folder (None: out/NAME)")
    s.add_argument("--seeds", type=int, default=None,
                   help="override the number of seeds (None: the reproduction's own)")
    s.add_argument("--adult", default=None, metavar="PATH",
                   help="UCI Adult file (adult.data) for reproductions that use it")
    s.add_argument("--no-progress", action="store_true",
                   help="hide the progress bars and lines inside the stages")
    s.set_defaults(func=_cmd_reproduce)  # each reproduction runs in float64 by itself
    return p


def _setting_arguments(s, *, out: str) -> None:
    """The problem, network, seeds, privacy and output arguments ``run`` and ``compare`` share."""
    s.add_argument("--config", default=None, metavar="TOML",
                   help="read arguments from a TOML file (flags given here win); copied "
                        "verbatim into the output folder")
    s.add_argument("--problem", default="nonconvex_logistic", help="problem (see `jaxdp list`)")
    s.add_argument("--network", default="random_geometric", help="graph family")
    s.add_argument("--agents", type=int, default=50, help="agents N")
    s.add_argument("--graph-seed", type=int, default=1, help="seed of a random graph")
    s.add_argument("--graph-param", action="append", default=[], metavar="NAME=VALUE",
                   help="graph family argument, e.g. --graph-param radius=0.3 (repeatable); "
                        "built in: radius=0.3 (random_geometric), p=0.2 (erdos_renyi), m=2N (gnm)")
    s.add_argument("--weights", default="metropolis",
                   help="mixing weights: metropolis, max_degree, laplacian")
    s.add_argument("--backend", default="dense", help="mixing backend: dense, edges or auto")
    s.add_argument("--data-seed", type=int, default=0, help="seed of the problem's data")
    s.add_argument("--seeds", type=int, default=16, help="Monte-Carlo seeds")
    s.add_argument("--steps", type=int, default=500, help="iterations K")
    s.add_argument("--record-every", type=int, default=None,
                   help="record metrics every this many steps (None: about 200 records)")
    s.add_argument("--epsilon", type=float, default=None,
                   help="calibrate the noise of a private algorithm to this ε per agent "
                        "(None: keep its Params)")
    s.add_argument("--delta", type=float, default=1e-5, help="δ of the privacy guarantee")
    s.add_argument("--out", default=out, help="output folder")
    s.add_argument("--channel", action="append", default=None, metavar="[MESSAGE=]SPEC",
                   help="send every message through a channel stack: STAGE+STAGE+..., each "
                        "KIND[:VALUE,...,NAME=VALUE] with KIND in jaxdp.channels.TRANSFORMS "
                        "(clip, gaussian, laplace, top_k, ...) or the mode broadcast / "
                        "aggregate / self; e.g. \"clip:1.0+gaussian:sigma=0.5,decay=0.99\". "
                        "Repeatable with a MESSAGE= prefix: that named message's own stack "
                        "(\"y=clip:2.0,name=cy+gaussian:1.0,name=gy\"). Its Params "
                        "(clip_norm, gauss_sigma, ...) are set with --param, and --epsilon "
                        "calibrates its noise")
    s.add_argument("--x", action="append", default=None, choices=X_AXES,
                   help="x axis of the figure (repeatable: one panel each; default: step): "
                        "iterations or a cost counted per step")
    s.add_argument("--x64", action="store_true", help="run in float64")
    s.add_argument("--no-progress", action="store_true", help="hide progress bars")


def _parse(parser, argv):
    """Parse ``argv``; with ``--config``, the TOML file's values become the defaults first."""
    args = parser.parse_args(argv)
    path = getattr(args, "config", None)
    if path is None:
        return args
    config = _read_config(path)
    sub = parser._subparsers._group_actions[0].choices[args.command]  # noqa: SLF001
    known = {a.dest for a in sub._actions}  # noqa: SLF001
    unknown = sorted(set(config) - known - {"params", "graph_params"})
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {unknown} for `jaxdp {args.command}`; known: "
                         f"{', '.join(sorted(known - {'help', 'func', 'config'}))}, params, "
                         "graph_params")
    defaults = {k: v for k, v in config.items() if k not in ("params", "graph_params")}
    defaults["param"] = [f"{k}={v}" for k, v in config.get("params", {}).items()]
    defaults["graph_param"] = [f"{k}={v}" for k, v in config.get("graph_params", {}).items()]
    sub.set_defaults(**defaults)
    args = parser.parse_args(argv)
    args.config_text = Path(path).read_text()
    return args


def _read_config(path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--config: no file {str(path)!r}")
    try:
        config = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"--config {str(path)!r} is not valid TOML: {e}") from None
    return {k.replace("-", "_"): v for k, v in config.items()}


# -- commands -------------------------------------------------------------------------------------
def _cmd_list(args) -> int:
    from jaxdp import algorithms, experiments, network, problems

    print("algorithms:")
    for name in sorted(algorithms.REGISTRY):
        cls = algorithms.REGISTRY[name]
        print(f"  {name:<24} {'private' if _is_private(cls) else 'non-private':<12} "
              f"{_first_line(cls.__doc__)}")
    for title, names in (("problems", problems.PROBLEMS), ("networks", network.GRAPHS),
                         ("reproductions", experiments.REPRODUCTIONS)):
        print(f"{title}:")
        for name in sorted(names):
            print(f"  {name:<24} {_first_line(getattr(names[name], '__doc__', ''))}")
    return 0


def _cmd_info(args) -> int:
    from jaxdp import algorithms

    alg = algorithms.get(args.algorithm)
    cls = type(alg)
    print(f"{alg.name}: {cls.__name__} ({'private' if _is_private(cls) else 'non-private'})")
    print(f"  {_first_line(cls.__doc__)}")
    if cls.cites:
        print(f"citation: {'; '.join(cls.cites)}")
    print(f"parameters ({cls.params_type.__name__}; set with --param NAME=VALUE):")
    defaults = alg.default_params()
    meanings = _field_comments(cls.params_type)
    for field in defaults.keys():
        print(f"  {field:<12} default {_show(defaults[field]):<10} {meanings.get(field, '')}")
    print(f"noise_field: {cls.noise_field}"
          + ("  (--epsilon calibrates it)" if cls.noise_field else "  (--epsilon not supported)"))
    if _is_private(cls):
        print("privacy: " + _default_privacy(alg))
    return 0


def _cmd_demo(args) -> int:
    from jaxdp.experiments import demo

    _check_out(args.out)
    report = demo(args.out, seeds=args.seeds, steps=args.steps, epsilon=args.epsilon,
                  progress=not args.no_progress)
    print(report.to_text())
    print((Path(args.out) / "final_metrics.md").read_text())
    return 0


def _cmd_run(args) -> int:
    from jaxdp import algorithms
    from jaxdp.engine import run

    if args.algorithm is None:
        raise ValueError("run needs an ALGORITHM (or `algorithm = \"...\"` in --config)")
    out = _check_out(args.out)
    setting = _setting(args)
    alg = _with_channel(algorithms.get(args.algorithm), args.channel)
    params = _override(alg.default_params(), args.param)
    params, report = _private_params(alg, setting, params, args)
    trace = run(alg, setting["problem"], setting["network"], params, steps=args.steps,
                seeds=args.seeds, record_every=args.record_every,
                progress=not args.no_progress)
    out.mkdir(parents=True, exist_ok=True)
    files = _write_run(out, _stem(alg.name), trace, report, args)
    print(trace.summary_table())
    if report is not None:
        print(report.summary())
    if files.get("plot") is None:
        print(f"jaxdp: all {trace.n_seeds} seeds of {alg.name} diverged (NaN/inf); no plot "
              "written: lower the step size", file=sys.stderr)
    print(json.dumps({**files, "compile_seconds": round(trace.meta["compile_seconds"], 3),
                      "run_seconds": round(trace.meta["run_seconds"], 3)}))
    return 1 if files.get("plot") is None else 0


def _cmd_compare(args) -> int:
    from jaxdp.compare import compare

    if len(args.algorithms) < 1:
        raise ValueError("compare needs at least one ALGORITHM (or `algorithms = [...]` in "
                         "--config)")
    out = _check_out(args.out)
    setting = _setting(args)
    result = compare(args.algorithms, setting["problem"], setting["network"], steps=args.steps,
                     seeds=args.seeds, epsilon=args.epsilon, delta=args.delta,
                     record_every=args.record_every, metrics=args.metric or ["grad_norm_sq"],
                     out_dir=out, progress=not args.no_progress, title=_title(args),
                     channel=args.channel, x=args.x or ["step"])
    _write_config(out, args)
    print(result.markdown)
    print(json.dumps(result.files))
    return 0


def _cmd_reproduce(args) -> int:
    from jaxdp.experiments import REPRODUCTIONS

    if args.name not in REPRODUCTIONS:
        raise ValueError(f"unknown reproduction {args.name!r}; known: "
                         f"{', '.join(sorted(REPRODUCTIONS))}")
    fn = REPRODUCTIONS[args.name]
    kw = {} if args.seeds is None else {"seeds": args.seeds}
    accepted = inspect.signature(fn).parameters
    if "progress" in accepted:  # bars (runs, sweeps) and lines (loops) inside the stages
        kw["progress"] = not args.no_progress
    if args.adult is not None:
        if "adult" not in accepted:
            raise ValueError(f"reproduction {args.name!r} does not read --adult")
        kw["adult"] = args.adult
    out = args.out or f"out/{args.name}"
    _check_out(out).mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    _stage(f"[1/2] {args.name}: running (output in {out}; this may take minutes)")
    report = fn(out, **kw)
    _stage(f"[2/2] {args.name}: done in {time.perf_counter() - t0:.1f} s; "
           f"{sum(c.reproduced for c in report.claims)}/{len(report.claims)} claims reproduced")
    print(report.to_text())
    return 0


# -- helpers: setting, privacy, outputs -----------------------------------------------------------
def _setting(args) -> dict:
    """The problem and network of ``run``/``compare``, after checking the counts."""
    from jaxdp import network, problems

    for flag in ("agents", "seeds", "steps", "record_every"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 1; got {value}")
    if isinstance(args.x, str):  # x = "bits" in a --config file
        args.x = [args.x]
    bad_x = [x for x in (args.x or []) if x not in X_AXES]  # --config values skip argparse
    if bad_x:
        raise ValueError(f"--x must be one of {', '.join(X_AXES)}; got {bad_x[0]!r}")
    if args.record_every is not None and args.steps % args.record_every:
        raise ValueError(f"--record-every must divide --steps; got --steps {args.steps}, "
                         f"--record-every {args.record_every}")
    prob = problems.make_problem(args.problem, n_agents=args.agents, seed=args.data_seed)
    graph_kw = {**_graph_defaults(args.network, args.agents),
                **_assignments(args.graph_param, "--graph-param")}
    net = network.make_network(args.network, args.agents, seed=args.graph_seed,
                               weights=args.weights, backend=args.backend, **graph_kw)
    return {"problem": prob, "network": net}


def _private_params(alg, setting, params, args):
    """``(params, report)``: calibrated to ``--epsilon`` when given; ``report`` is ``None`` for
    a non-private algorithm. Everything is checked before the run starts."""
    from jaxdp.privacy import calibrate_params

    problem, net = setting["problem"], setting["network"]
    alg.validate(params, problem, net)
    if args.epsilon is not None:
        if not _is_private(type(alg)):
            raise ValueError(f"{alg.name} does not support --epsilon: it is not private")
        params = calibrate_params(alg, problem, net, params, args.steps, epsilon=args.epsilon,
                                  delta=args.delta)
    return params, _report(alg, problem, net, params, args.steps, args.delta)


def _report(alg, problem, net, params, steps, delta):
    """The privacy report under the contract, or ``None`` (not private)."""
    return alg.privacy(problem, net, params, steps, delta=delta)


def _write_run(out: Path, name: str, trace, report, args) -> dict:
    """Trace (npz), final metrics (CSV), ε (privacy.json), TOML copy and the plot."""
    from jaxdp.experiments._plotting import finish, save

    files = {"trace": str(trace.save(out / f"trace_{name}.npz")),
             "csv": str(trace.write_csv(out / f"trace_{name}.csv"))}
    if report is not None:
        path = out / "privacy.json"
        path.write_text(json.dumps(report.to_dict(), indent=2))
        files["privacy"] = str(path)
    _write_config(out, args)
    if bool(trace.diverged.all()):
        files["plot"] = None
        return files
    fig, axes = trace.plot_against(args.metric, xs=args.x or ["step"], label=name)
    eps = None if report is None else report.epsilon_max
    finish(fig, axes, _title(args, eps))
    files["plot"] = save(fig, out / f"{name}_{args.metric}.png")
    return files


def _with_channel(alg, spec):
    """``alg`` with its messages through the channel spec(s) of ``--channel``, or ``alg``."""
    if not spec:
        return alg
    from jaxdp.channels import parse_channels, with_channel

    return with_channel(alg, parse_channels(spec))


def _stem(name: str) -> str:
    """A file-name stem for an algorithm's name (``"dgd+clip+gaussian/bcast"`` has a '/')."""
    return name.replace("/", "_")


def _title(args, epsilon=None) -> str:
    from jaxdp.experiments._plotting import setting_title

    return setting_title(args.problem, args.network, args.agents, args.seeds,
                         epsilon if epsilon is not None else args.epsilon)


def _write_config(out: Path, args) -> None:
    text = getattr(args, "config_text", None)
    if text is not None:
        (out / Path(args.config).name).write_text(text)


def _check_out(path) -> Path:
    """Check, before any work and without creating anything, that the output folder can be made
    and written; fail in one line when it lies under a file or an unwritable folder. The folder
    itself is created only once the run's other checks (ε calibration included) have passed."""
    import tempfile

    out = Path(path)
    existing = next(p for p in (out, *out.parents, Path.cwd()) if p.exists())
    if not existing.is_dir():
        raise ValueError(f"--out {str(out)!r}: {str(existing)!r} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(out)!r}: the folder {str(existing)!r} is not writable")
    try:  # a probe file in the nearest existing folder, removed on close (read-only filesystems)
        with tempfile.TemporaryFile(dir=existing, prefix=".jaxdp_write_test"):
            pass
    except OSError as e:
        raise ValueError(f"--out {str(out)!r} cannot be written: {e.strerror or e}") from None
    return out


def _stage(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- helpers: catalogue ---------------------------------------------------------------------------
def _is_private(cls) -> bool:
    """An algorithm is private when it overrides :meth:`Algorithm.account` (or ``privacy``)."""
    from jaxdp.algorithms import Algorithm

    return cls.account is not Algorithm.account or cls.privacy is not Algorithm.privacy


def _first_line(doc) -> str:
    lines = [line.strip() for line in (doc or "").strip().splitlines()]
    first = []
    for line in lines:  # the first sentence/paragraph, joined
        if not line:
            break
        first.append(line)
    return " ".join(first)


def _field_comments(params_type) -> dict:
    """``{field: meaning [domain; shape; unit]}`` from each Params field's declared metadata."""
    from jaxdp.algorithms import param_specs

    return {name: spec.summary for name, spec in param_specs(params_type).items()}


def _show(value) -> str:
    import numpy as np

    value = np.asarray(value)
    return f"{value.item():g}" if value.ndim == 0 else str(value.tolist())


def _default_privacy(alg) -> str:
    """The relation and ε of the default Params on a small default setting (10 agents on a ring,
    nonconvex logistic regression, 100 steps)."""
    import warnings

    from jaxdp import network, problems

    try:
        prob = problems.make_problem("nonconvex_logistic", n_agents=10, seed=0)
        net = network.make_network("ring", 10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = _report(alg, prob, net, alg.default_params(), 100, 1e-5)
    except Exception as e:  # noqa: BLE001 — a catalogue line, not a run
        return f"(not computed on the default setting: {str(e).splitlines()[0]})"
    if report is None:
        return "(privacy() returns no report)"
    return (f"per {report.unit} ({report.relation}: {report.relation_text}); default Params, "
            f"10 agents on a ring, 100 steps: " + report.summary().splitlines()[0])


# -- helpers: arguments ---------------------------------------------------------------------------
def _assignments(items, flag: str) -> dict:
    """Parse ``NAME=VALUE`` strings into ``{name: float}`` (ints stay ints)."""
    values = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"{flag} expects NAME=VALUE; got {item!r}")
        try:
            values[name] = int(value) if value.lstrip("-").isdigit() else float(value)
        except ValueError:
            raise ValueError(f"{flag} {name} needs a number; got {value!r}") from None
    return values


def _override(params, items):
    """Apply ``--param NAME=VALUE`` strings to a Params dataclass."""
    values = _assignments(items, "--param")
    for name in values:
        if name not in params.keys():
            raise ValueError(f"unknown parameter {name!r} for {type(params).__name__}; "
                             f"fields: {', '.join(sorted(params.keys()))}")
    return params.replace(**{k: float(v) for k, v in values.items()})


def _graph_defaults(name: str, n: int) -> dict:
    """Arguments the random families need, so that ``--network NAME`` works on its own."""
    return {"random_geometric": {"radius": 0.3}, "erdos_renyi": {"p": 0.2},
            "gnm": {"m": 2 * n}}.get(name, {})


if __name__ == "__main__":
    sys.exit(main())
