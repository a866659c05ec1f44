"""The ``jaxdp`` command: ``list``, ``info``, ``demo``, ``run``, ``compare``, ``tradeoff`` and
``reproduce``.

Bad arguments print one line (``jaxdp: error: ...``) and exit with status 2, never a traceback;
they are checked before any run starts (the output folder first, and that it holds no earlier
run's files unless ``--force``). ``run``, ``compare`` and ``tradeoff`` read their arguments from a
TOML file with ``--config`` (command-line flags win) and copy it verbatim into the output folder.
``run`` exits with status 1 when a seed diverged (NaN/inf) or blew up
(:data:`jaxdp.engine.BLOWUP_FACTOR`); Ctrl-C prints one line, with the ``--resume`` command for
``run`` and ``compare``, and exits with status 130.
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
MEANINGFUL_EPSILON = 100.0
"""Above this ε a guarantee protects nothing: ε bounds the log-likelihood ratio of any output
with and without an agent's data, and e^100 ≈ 3e43; deployed guarantees lie in 0.1-20. A report
above it gets a warning line (the default Params of DPP² give 1.8e13)."""
RESUME_DIR = ".resume"
"""The folder under ``--out`` where ``run`` and ``compare`` keep finished seed blocks."""
X_AXES = ("step", "rounds", "messages", "bits", "grad_calls", "sample_grads", "prox_calls",
          "hessian_calls")
"""The figure's x axes: iterations, or a static cost (``Algorithm.costs_per_step``) × steps."""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        _algorithm_help(parser, argv)
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
    except KeyboardInterrupt:
        return _interrupted(args, argv)
    except BrokenPipeError:  # `jaxdp list | head`: the reader left; not an error of the input
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _ERRORS as e:
        return _fail(e)


def _interrupted(args, argv) -> int:
    """Ctrl-C: one line (no traceback) saying how to continue; exit status 130."""
    import shlex

    if args.command in ("run", "compare"):
        again = argv if "--resume" in argv else [*argv, "--resume"]
        print(f"jaxdp: interrupted; resume with: jaxdp {shlex.join(again)} (finished seed "
              f"blocks are kept in {os.path.join(args.out, RESUME_DIR)})", file=sys.stderr)
    else:
        print("jaxdp: interrupted", file=sys.stderr)
    return 130


def _fail(e: Exception) -> int:
    msg = e.args[0] if e.args and isinstance(e.args[0], str) else str(e)
    print(f"jaxdp: error: {msg}".splitlines()[0], file=sys.stderr)
    return 2


# -- parser ---------------------------------------------------------------------------------------
class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Show every default in ``--help``."""


class _HelpWithEpilog(argparse.RawDescriptionHelpFormatter, _Help):
    """Every default, and an epilog kept as written (an algorithm's Params and metrics)."""


def _algorithm_help(parser, argv) -> None:
    """``jaxdp run ALG --help`` (or ``tradeoff``/``compare``): the help ends with ALG's Params
    (their defaults and meanings, as ``jaxdp info`` lists them) and the problem's metrics."""
    if len(argv) < 2 or not {"-h", "--help"} & set(argv) or \
            argv[0] not in ("run", "tradeoff", "compare"):
        return
    from jaxdp import algorithms

    names = [a for a in argv[1:] if a in algorithms.REGISTRY]
    if not names:
        return
    sub = parser._subparsers._group_actions[0].choices[argv[0]]  # noqa: SLF001
    problem = argv[argv.index("--problem") + 1] if "--problem" in argv[:-1] else \
        "nonconvex_logistic"
    blocks = ["\n".join(_params_lines(algorithms.get(name))) for name in names]
    sub.epilog = "\n\n".join(blocks + [_metrics_line(problem)])
    sub.formatter_class = _HelpWithEpilog


def _metrics_line(problem: str) -> str:
    """The metrics ``--metric`` may name on ``problem`` (a tiny instance is built to list them)."""
    import jax
    import jax.numpy as jnp

    from jaxdp import problems

    try:
        prob = problems.make_problem(problem, n_agents=2, seed=0)
        names = jax.eval_shape(prob.metrics, jnp.zeros((2, prob.dim)))
    except Exception as e:  # noqa: BLE001 — a help text, not a run
        return f"metrics: (not listed: {str(e).splitlines()[0]})"
    return (f"metrics of {problem} (--metric): {', '.join(sorted(names))}; plus the algorithm's "
            "counters")


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
    _force_argument(s, resume=False)
    s.set_defaults(func=_cmd_demo)

    s = sub.add_parser("run", formatter_class=_Help,
                       help="run one algorithm over many seeds; write trace, CSV, plot, ε")
    s.add_argument("algorithm", nargs="?", default=None,
                   help="registry name (see `jaxdp list`); may come from --config")
    _setting_arguments(s, out="out")
    _param_argument(s)
    s.add_argument("--metric", default="grad_norm_sq", help="metric to plot")
    s.set_defaults(func=_cmd_run)

    s = sub.add_parser("compare", formatter_class=_Help,
                       help="several algorithms at the same ε: one figure, one table")
    s.add_argument("algorithms", nargs="*", help="registry names; may come from --config")
    _setting_arguments(s, out="compare_out")
    s.add_argument("--metric", action="append", default=None,
                   help="metric to plot and tabulate (repeatable; default: grad_norm_sq)")
    s.set_defaults(func=_cmd_compare)

    s = sub.add_parser("tradeoff", formatter_class=_Help,
                       help="privacy-utility curve: ε grid -> final metric, one figure + table")
    s.add_argument("algorithm", nargs="?", default=None,
                   help="a private algorithm (or any algorithm with --channel); may come from "
                        "--config")
    s.add_argument("--epsilons", default="0.5,1,2,4,8",
                   help="comma-separated target ε per agent: the noise is calibrated to each")
    _setting_arguments(s, out="tradeoff_out", resume=False)
    _param_argument(s)
    s.add_argument("--metric", default="grad_norm_sq", help="final metric tabulated and plotted")
    s.set_defaults(func=_cmd_tradeoff)

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


def _param_argument(s) -> None:
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="override a Params field, e.g. --param alpha=0.01 (repeatable; "
                        "`jaxdp info ALG` lists them)")


def _setting_arguments(s, *, out: str, resume: bool = True) -> None:
    """The problem, network, seeds, privacy and output arguments ``run`` and ``compare`` share."""
    s.add_argument("--config", default=None, metavar="TOML",
                   help="read arguments from a TOML file (flags given here win); copied "
                        "verbatim into the output folder")
    s.add_argument("--problem", default="nonconvex_logistic", help="problem (see `jaxdp list`)")
    s.add_argument("--dim", type=int, default=None,
                   help="the problem's dimension d (None: the problem's default)")
    s.add_argument("--samples", type=int, default=None,
                   help="samples per agent m (None: the problem's default)")
    s.add_argument("--noise", type=float, default=None,
                   help="the problem's noise: `noise` of least_squares, `label_noise` of "
                        "nonconvex_logistic (None: the default)")
    s.add_argument("--reg", type=float, default=None,
                   help="the problem's regularization: `ridge` of least_squares, `lam` of the "
                        "logistic problems (None: the default)")
    s.add_argument("--problem-param", action="append", default=[], metavar="NAME=VALUE",
                   help="any other argument of the problem's builder, e.g. --problem-param "
                        "omega=2 (repeatable; TOML: a [problem_params] table)")
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
    _force_argument(s, resume)


def _force_argument(s, resume: bool = True) -> None:
    s.add_argument("--force", action="store_true",
                   help="overwrite the files of an earlier run in --out (without it, a run "
                        "refuses to write over them)")
    if resume:
        s.add_argument("--resume", action="store_true",
                       help=f"continue an interrupted run into the same --out: the seed blocks "
                            f"it finished (kept in OUT/{RESUME_DIR} until the run completes) "
                            "are loaded, not recomputed; implies --force")


def reference_markdown(width: int = 100) -> str:
    """The command-line reference as Markdown: each command's ``--help``, verbatim (the site's
    command-line page is generated from it, so it cannot drift from the parser)."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)  # argparse wraps help to the terminal's width
    try:
        parser = _parser()
        sub = parser._subparsers._group_actions[0]  # noqa: SLF001
        helps = {a.dest: a.help for a in sub._choices_actions}  # noqa: SLF001
        parts = ["# Command line", "",
                 "Generated from the `jaxdp` command's own parser: each section is the output of "
                 "`jaxdp COMMAND --help`. `jaxdp run ALG --help` also lists ALG's parameters and "
                 "the problem's metrics.", "", "```text", parser.format_help().rstrip(), "```"]
        for name, command in sub.choices.items():
            parts += ["", f"## jaxdp {name}", "", helps.get(name, ""), "", "```text",
                      command.format_help().rstrip(), "```"]
        return "\n".join(parts) + "\n"
    finally:
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


def _parse(parser, argv):
    """Parse ``argv``; with ``--config``, the TOML file's values become the defaults first."""
    args = parser.parse_args(argv)
    path = getattr(args, "config", None)
    if path is None:
        return args
    config = _read_config(path)
    sub = parser._subparsers._group_actions[0].choices[args.command]  # noqa: SLF001
    known = {a.dest for a in sub._actions}  # noqa: SLF001
    unknown = sorted(set(config) - known - set(_TABLES))
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {unknown} for `jaxdp {args.command}`; known: "
                         f"{', '.join(sorted(known - {'help', 'func', 'config'}))}, "
                         f"{', '.join(_TABLES)}")
    defaults = {k: v for k, v in config.items() if k not in _TABLES}
    for table, dest in _TABLES.items():
        if table in config and dest in known:
            defaults[dest] = [f"{k}={v}" for k, v in config[table].items()]
    sub.set_defaults(**defaults)
    args = parser.parse_args(argv)
    args.config_text = Path(path).read_text()
    return args


_TABLES = {"params": "param", "graph_params": "graph_param", "problem_params": "problem_param"}
"""TOML tables of ``--config`` and the repeatable ``NAME=VALUE`` flag each fills."""


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
        print(f"  {name:<24} {'private' if cls.is_private() else 'non-private':<12} "
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
    print(f"{alg.name}: {cls.__name__} ({'private' if cls.is_private() else 'non-private'})")
    print(f"  {_first_line(cls.__doc__)}")
    if cls.cites:
        print(f"citation: {'; '.join(cls.cites)}")
    print("\n".join(_params_lines(alg)))
    print(f"noise_field: {cls.noise_field}"
          + ("  (--epsilon calibrates it)" if cls.noise_field else "  (--epsilon not supported)"))
    if cls.is_private():
        print("privacy: " + _default_privacy(alg))
    return 0


def _params_lines(alg) -> list[str]:
    """The Params of ``alg``: a heading, then one line per field (default and meaning)."""
    cls = type(alg)
    defaults = alg.default_params()
    meanings = _field_comments(cls.params_type)
    return [f"parameters of {alg.name} ({cls.params_type.__name__}; set with --param "
            "NAME=VALUE):"] + [f"  {field:<12} default {_show(defaults[field]):<10} "
                               f"{meanings.get(field, '')}" for field in defaults.keys()]


def _cmd_demo(args) -> int:
    from jaxdp.experiments import demo

    _check_fresh(_check_out(args.out), ["privacy.json", "demo.png", "final_metrics.csv"],
                 args.force)
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
    stem = _stem(alg.name)
    _check_fresh(out, [f"trace_{stem}.npz", f"trace_{stem}.csv", f"{stem}_{args.metric}.png"]
                 + (["privacy.json"] if alg.is_private() else []),
                 args.force or args.resume)
    params = _override(alg.default_params(), args.param)
    params, report = _private_params(alg, setting, params, args)
    trace = run(alg, setting["problem"], setting["network"], params, steps=args.steps,
                seeds=args.seeds, record_every=args.record_every,
                progress=not args.no_progress, resume_dir=out / RESUME_DIR,
                seeds_per_block=_seeds_per_block(args.seeds), chunks=10)  # Ctrl-C: within a
    #                                                                     tenth of a block
    out.mkdir(parents=True, exist_ok=True)
    files = _write_run(out, stem, trace, report, args)
    _done(out)
    print(trace.summary_table())
    if report is not None:
        print(report.summary())
        _warn_meaningless(report.epsilon_max, alg.name, alg.noise_field)
    print(json.dumps({**files, "compile_seconds": round(trace.meta["compile_seconds"], 3),
                      "run_seconds": round(trace.meta["run_seconds"], 3)}))
    return _divergence_status(trace, alg.name)


def _divergence_status(trace, name: str) -> int:
    """The exit status of a run: 1, with a line on stderr, when any seed diverged (NaN/inf) or
    blew up (``jaxdp.engine.BLOWUP_FACTOR``); the files are written either way."""
    from jaxdp.engine import BLOWUP_FACTOR

    n_div, n_blown = int(trace.diverged.sum()), int(trace.blown_up().sum())
    if n_div == 0:
        return 0
    if n_div == trace.n_seeds:
        _stage(f"jaxdp: all {trace.n_seeds} seeds of {name} diverged ({n_blown} blew up, the "
               "others NaN/inf); no plot written: lower the step size")
    else:
        _stage(f"jaxdp: {n_div} of {trace.n_seeds} seeds of {name} diverged ({n_blown} blew up: "
               f"objective > {BLOWUP_FACTOR:.0e}x its start; the others NaN/inf); they are left "
               "out of the means: lower the step size")
    return 1


def _cmd_compare(args) -> int:
    from jaxdp.compare import compare

    if len(args.algorithms) < 1:
        raise ValueError("compare needs at least one ALGORITHM (or `algorithms = [...]` in "
                         "--config)")
    out = _check_out(args.out)
    _check_fresh(out, ["compare.md", "compare.csv", "compare.png"], args.force or args.resume)
    setting = _setting(args)
    result = compare(args.algorithms, setting["problem"], setting["network"], steps=args.steps,
                     seeds=args.seeds, epsilon=args.epsilon, delta=args.delta,
                     record_every=args.record_every, metrics=args.metric or ["grad_norm_sq"],
                     out_dir=out, progress=not args.no_progress,
                     title=lambda epsilon: _title(args, epsilon, private=epsilon is not None),
                     channel=args.channel, x=args.x or ["step"], resume_dir=out / RESUME_DIR,
                     seeds_per_block=_seeds_per_block(args.seeds),
                     on_probe=lambda alg: _probe_printer(alg.noise_field, args.epsilon, args, []))
    _write_config(out, args)
    _done(out)
    print(result.markdown)
    for row in result.rows:
        _warn_meaningless(row["epsilon"], row["algorithm"], None)
    print(json.dumps(result.files))
    return 0


def _cmd_tradeoff(args) -> int:
    from jaxdp import algorithms
    from jaxdp.experiments.tradeoff import tradeoff

    if args.algorithm is None:
        raise ValueError("tradeoff needs an ALGORITHM (or `algorithm = \"...\"` in --config)")
    if args.epsilon is not None:
        raise ValueError("tradeoff calibrates to every ε of --epsilons; --epsilon is for run "
                         "and compare")
    epsilons = _epsilon_list(args.epsilons)
    out = _check_out(args.out)
    _check_fresh(out, ["tradeoff.md", "tradeoff.csv", "tradeoff.png"], args.force)
    setting = _setting(args)
    alg = _with_channel(algorithms.get(args.algorithm), args.channel)
    if not alg.is_private() or alg.noise_field is None:
        raise ValueError(f"{alg.name} has no noise to calibrate (not private, or no "
                         "noise_field): tradeoff needs a private algorithm or a --channel with "
                         "noise")
    _refuse_noise_param(alg, args, "--epsilons")
    params = _override(alg.default_params(), args.param)
    result = tradeoff(alg, setting["problem"], setting["network"], epsilons, steps=args.steps,
                      seeds=args.seeds, delta=args.delta, params=params, metric=args.metric,
                      record_every=args.record_every, out_dir=out,
                      progress=not args.no_progress, title=_title(args, "ε on the x axis"),
                      on_probe=lambda eps: _probe_printer(alg.noise_field, eps, args, []))
    _write_config(out, args)
    print(result.markdown)
    print(json.dumps(result.files))
    return 0


def _epsilon_list(text) -> list[float]:
    """``--epsilons 0.5,1,2`` (or a TOML list) as floats, each a finite number > 0."""
    import math

    items = text if isinstance(text, list) else str(text).split(",")
    values = []
    for item in items:
        try:
            value = float(item)
        except (TypeError, ValueError):
            raise ValueError(f"--epsilons needs comma-separated numbers; got {item!r} in "
                             f"{text!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"--epsilons: every ε must be finite and > 0; got {item!r}")
        values.append(value)
    return values


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

    for flag in ("agents", "seeds", "steps", "record_every", "graph_seed", "data_seed"):
        value = getattr(args, flag)  # --config values skip argparse's type=int
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"--{flag.replace('_', '-')} must be an integer; got {value!r}")
        if value is not None and value < 1 and not flag.endswith("_seed"):
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 1; got {value}")
    if isinstance(args.x, str):  # x = "bits" in a --config file
        args.x = [args.x]
    bad_x = [x for x in (args.x or []) if x not in X_AXES]  # --config values skip argparse
    if bad_x:
        raise ValueError(f"--x must be one of {', '.join(X_AXES)}; got {bad_x[0]!r}")
    if args.record_every is not None and args.steps % args.record_every:
        raise ValueError(f"--record-every must divide --steps; got --steps {args.steps}, "
                         f"--record-every {args.record_every}")
    prob = problems.make_problem(args.problem, n_agents=args.agents, seed=args.data_seed,
                                 **_problem_arguments(args))
    graph_kw = {**_graph_defaults(args.network, args.agents),
                **_assignments(args.graph_param, "--graph-param")}
    net = network.make_network(args.network, args.agents, seed=args.graph_seed,
                               weights=args.weights, backend=args.backend, **graph_kw)
    return {"problem": prob, "network": net}


def _private_params(alg, setting, params, args):
    """``(params, report)``: calibrated to ``--epsilon`` when given; ``report`` is ``None`` for
    a non-private algorithm. Everything is checked before the run starts."""
    problem, net = setting["problem"], setting["network"]
    alg.validate(params, problem, net)
    if args.epsilon is not None:
        if not alg.is_private():
            raise ValueError(f"{alg.name} does not support --epsilon: it is not private")
        _refuse_noise_param(alg, args, f"--epsilon {args.epsilon:g}")
        params = _calibrate(alg, problem, net, params, args)
    return params, _report(alg, problem, net, params, args.steps, args.delta)


def _refuse_noise_param(alg, args, flag: str) -> None:
    """``--param NOISE_FIELD=...`` with a flag that calibrates that field: a clear error."""
    given = _assignments(getattr(args, "param", []), "--param")
    if alg.noise_field in given:
        raise ValueError(f"--param {alg.noise_field}={given[alg.noise_field]:g} conflicts with "
                         f"{flag}: {flag.split()[0]} sets {alg.noise_field} by calibration; give "
                         "one of them")


def _probe_printer(field: str, epsilon: float, args, probes: list):
    """An ``on_probe`` for :func:`calibrate_params`: counts the reports in ``probes`` and prints
    one stderr line each (unless ``--no-progress``)."""
    def on_probe(value, eps):
        probes.append(value)
        if not args.no_progress:
            _stage(f"jaxdp: calibrating {field} to ε = {epsilon:g}: report {len(probes)}, "
                   f"{field} = {value:.6g} -> ε = {eps:.6g}")
    return on_probe


def _calibrate(alg, problem, net, params, args):
    """``params`` with the noise field calibrated to ``--epsilon``: one stderr line per report
    probed (unless ``--no-progress``) and one with the value chosen."""
    from jaxdp.privacy import calibrate_params

    field, probes, t0 = alg.noise_field, [], time.perf_counter()
    params = calibrate_params(alg, problem, net, params, args.steps, epsilon=args.epsilon,
                              delta=args.delta,
                              on_probe=_probe_printer(field, args.epsilon, args, probes))
    _stage(f"jaxdp: --epsilon {args.epsilon:g} -> {field} = {_show(params[field])} "
           f"({len(probes)} reports, {time.perf_counter() - t0:.1f} s)")
    return params


def _meaningless(epsilon, name: str, field) -> str | None:
    """A warning when ``epsilon`` is finite and beyond :data:`MEANINGFUL_EPSILON`, else ``None``."""
    import math

    if epsilon is None or not (math.isfinite(epsilon) and epsilon > MEANINGFUL_EPSILON):
        return None
    return (f"warning: ε = {epsilon:.3g} for {name} is beyond any meaningful guarantee "
            f"(> {MEANINGFUL_EPSILON:g}: an output may become e^ε times likelier); its Params are "
            f"not calibrated: use --epsilon, or raise {field or 'its noise'}")


def _warn_meaningless(epsilon, name: str, field) -> None:
    line = _meaningless(epsilon, name, field)
    if line is not None:
        _stage("jaxdp: " + line)


def _report(alg, problem, net, params, steps, delta):
    """The privacy report under the contract, or ``None`` (not private)."""
    return alg.privacy(problem, net, params, steps, delta=delta)


def _write_run(out: Path, name: str, trace, report, args) -> dict:
    """Trace (npz), final metrics (CSV), ε (privacy.json), TOML copy and the plot."""
    from jaxdp._plotting import finish, save

    if report is not None:
        trace.meta["privacy"] = report.to_dict()  # the ε travels with the trace
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
    finish(fig, axes, _title(args, eps, private=report is not None))
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


def _title(args, epsilon=None, private: bool = True) -> str:
    """The figure's title: the setting, and ε (the report's, else ``--epsilon``) when the run is
    private."""
    from jaxdp._plotting import setting_title

    shown = epsilon if epsilon is not None else args.epsilon
    return setting_title(args.problem, args.network, args.agents, args.seeds,
                         shown if private else None)


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


def _seeds_per_block(seeds: int) -> int:
    """Resumable blocks that keep every device busy: at least 8 seeds per device, at most 4
    blocks (the blocks share one compilation)."""
    import jax

    return max(8 * len(jax.local_devices()), -(-seeds // 4))


def _done(out: Path) -> None:
    """The run completed: its resumable blocks are no longer needed."""
    import shutil

    shutil.rmtree(out / RESUME_DIR, ignore_errors=True)


def _check_fresh(out: Path, names, force: bool) -> None:
    """Refuse, before any work, to write over files an earlier run left in ``out`` (its ε in
    ``privacy.json`` included) unless ``--force``."""
    found = [name for name in names if (out / name).exists()]
    if found and not force:
        raise ValueError(f"--out {str(out)!r} already holds {', '.join(found)} from an earlier "
                         "run: choose another --out, or pass --force to overwrite them")


def _stage(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- helpers: catalogue ---------------------------------------------------------------------------
def _first_line(doc) -> str:
    """The docstring's first paragraph, joined into one line, as plain text."""
    lines = [line.strip() for line in (doc or "").strip().splitlines()]
    first = []
    for line in lines:  # the first sentence/paragraph, joined
        if not line:
            break
        first.append(line)
    return plain(" ".join(first))


def plain(text: str) -> str:
    """reStructuredText inline markup as plain terminal text: ``:class:`~a.b.C``` -> ``C``,
    ``:func:`Title <target>``` -> ``Title``, double/single backticks and ``**bold**`` dropped."""
    import re

    def role(m):
        inner = m.group(2).strip()
        title = re.match(r"(.*?)\s*<[^>]*>$", inner)
        if title:
            return title.group(1)
        return inner[1:].rsplit(".", 1)[-1] if inner.startswith("~") else inner

    text = re.sub(r":([a-z]+):`([^`]+)`", role, text)
    text = re.sub(r"``(.+?)``", r"\1", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text)
    return re.sub(r"(?<![\w`])`([^`]+)`(?![\w`])", r"\1", text)


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
    note = _meaningless(report.epsilon_max, alg.name, alg.noise_field)
    return (f"per {report.unit} ({report.relation}: {report.relation_text}); default Params, "
            f"10 agents on a ring, 100 steps: " + report.summary().splitlines()[0]
            + ("" if note is None else f"\n  {note}"))


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


_PROBLEM_FLAGS = {"dim": ("d",), "samples": ("m",), "noise": ("noise", "label_noise"),
                  "reg": ("ridge", "lam")}
"""``--dim``/``--samples``/``--noise``/``--reg`` -> the builder arguments they may set."""


def _problem_arguments(args) -> dict:
    """The builder arguments of ``--dim``, ``--samples``, ``--noise``, ``--reg`` and
    ``--problem-param``, checked against the builder's signature."""
    from jaxdp import problems

    if args.problem not in problems.PROBLEMS:
        return {}  # make_problem names the known problems
    accepted = set(inspect.signature(problems.PROBLEMS[args.problem]).parameters)
    kw = _assignments(args.problem_param, "--problem-param")
    for name in kw:
        if name not in accepted - {"n_agents", "seed"}:
            raise ValueError(f"--problem-param {name}: not an argument of {args.problem}; its "
                             f"arguments: {', '.join(sorted(accepted - {'n_agents', 'seed'}))}")
    for flag, names in _PROBLEM_FLAGS.items():
        value = getattr(args, flag)
        if value is None:
            continue
        target = next((n for n in names if n in accepted), None)
        if target is None:
            raise ValueError(f"--{flag}: {args.problem} has no {' or '.join(names)} argument")
        kw[target] = value
    return kw


def _graph_defaults(name: str, n: int) -> dict:
    """Arguments the random families need, so that ``--network NAME`` works on its own."""
    return {"random_geometric": {"radius": 0.3}, "erdos_renyi": {"p": 0.2},
            "gnm": {"m": 2 * n}}.get(name, {})


if __name__ == "__main__":
    sys.exit(main())
