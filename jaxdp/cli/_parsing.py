"""The ``jaxdp`` command's argparse parser, ``--config`` TOML defaults, and the command-line
reference (:func:`reference_markdown`) the site's command-line page is generated from."""
from __future__ import annotations

import argparse
import os
import tomllib
from pathlib import Path

from jaxdp.cli._catalogue import (_cmd_demo, _cmd_info, _cmd_list, _cmd_reproduce, _options_line,
                                  _params_lines)
from jaxdp.cli._common import RESUME_DIR, X_AXES, _with_channel
from jaxdp.cli._runs import _cmd_compare, _cmd_run, _cmd_tradeoff


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Show every default in ``--help``."""


class _HelpWithEpilog(argparse.RawDescriptionHelpFormatter, _Help):
    """Every default, and an epilog kept as written (an algorithm's Params and metrics)."""


def _algorithm_help(parser, argv) -> None:
    """``jaxdp run ALG --help`` (or ``tradeoff``/``compare``): the help ends with ALG's Params
    (their defaults and meanings, as ``jaxdp info`` lists them; with ``--channel SPEC``, ALG
    behind that channel, whose Params add the channel's declared fields) and the problem's
    metrics."""
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
    algs = [algorithms.get(name) for name in names]
    blocks = ["\n".join([*_params_lines(_with_channel(alg, _channel_specs(argv))),
                          _options_line(alg)]) for alg in algs]
    sub.epilog = "\n\n".join(blocks + [_metrics_line(problem)])
    sub.formatter_class = _HelpWithEpilog


def _channel_specs(argv) -> list[str] | None:
    """The ``--channel SPEC`` / ``--channel=SPEC`` values of ``argv`` (``None``: none)."""
    specs = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--channel"]
    specs += [a.split("=", 1)[1] for a in argv if a.startswith("--channel=")]
    return specs or None


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
    from jaxdp._version import __version__

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
    s.add_argument("--threat", default=None, metavar="MODEL",
                   help="who observes: eavesdropper (every message; the default unless the "
                        "algorithm names another: trusted_server for dp_fedavg), neighbours "
                        "(each agent sees what it receives: pairwise ε), secret_pairs, "
                        "trusted_server (only what a trusted server publishes), or "
                        "coalition:I,J,... (colluding agents); without a tighter analysis the "
                        "eavesdropper bound is reported, and privacy.json says so")
    s.add_argument("--ideal", action="store_true",
                   help="with a --threat other than eavesdropper, also compute the ideal "
                        "Gaussian-mechanism curve of algorithms that declare a linear form "
                        "(DP-DGD, Muffliato): printed and in privacy.json, never the guarantee")
    _param_argument(s)
    _option_argument(s)
    s.add_argument("--metric", default=None,
                   help="metric to plot (default: the first of test_accuracy, test_loss, grad_norm_sq that the problem records)")
    s.set_defaults(func=_cmd_run)

    s = sub.add_parser("compare", formatter_class=_Help,
                       help="several algorithms at the same ε: one figure, one table")
    s.add_argument("algorithms", nargs="*", help="registry names; may come from --config")
    _setting_arguments(s, out="compare_out")
    _param_argument(s, "; in compare, set in every algorithm that has it")
    _option_argument(s)
    s.add_argument("--threat", default=None, metavar="MODEL",
                   help="also report every ε under this observer (neighbours, secret_pairs, "
                        "trusted_server, coalition:I,J,...): table columns threat and "
                        "epsilon_threat, marked '(eavesdropper bound)' where an algorithm has no "
                        "tighter analysis; the noise is calibrated to --epsilon under each "
                        "algorithm's own observer (the eavesdropper; dp_fedavg: trusted_server) "
                        "either way")
    s.add_argument("--metric", action="append", default=None,
                   help="metric to plot and tabulate (repeatable; default: the first of test_accuracy, test_loss, grad_norm_sq that the problem records)")
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
    _option_argument(s)
    s.add_argument("--metric", default=None,
                   help="final metric tabulated and plotted (default: the first of test_accuracy, test_loss, grad_norm_sq that the problem records)")
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
    _force_argument(s, resume=False)
    s.set_defaults(func=_cmd_reproduce)  # each reproduction runs in float64 by itself
    for name, s in sub.choices.items():
        if name != "list":  # the commands that compile
            _cache_argument(s)
    return p


def _cache_argument(s) -> None:
    """``--no-compile-cache``: the opt-out of JAX's persistent compilation cache, which the
    command turns on in ``$JAXDP_CACHE_DIR`` (default ``~/.cache/jaxdp/xla``; docs/cli.md)."""
    s.add_argument("--no-compile-cache", action="store_true",
                   help="do not read or write compiled programs in the persistent cache "
                        "($JAXDP_CACHE_DIR, default ~/.cache/jaxdp/xla; JAXDP_CACHE_DIR= "
                        "turns it off too)")


def _param_argument(s, where: str = "") -> None:
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="override a Params field, e.g. --param alpha=0.01 (repeatable; "
                        f"`jaxdp info ALG` lists them{where})")


def _option_argument(s) -> None:
    s.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="set a static setting of the algorithm (a field of its class, e.g. "
                        "--option local_steps=3 --option selection=poisson --option rate=0.2 "
                        "for the federated family; `jaxdp info ALG` lists them); in compare, "
                        "given to every algorithm that has it (repeatable; TOML: an [options] "
                        "table)")


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
    s.add_argument("--split", default=None,
                   help="how a model problem (a builder with a `split` argument, as in `jaxdp "
                        "list`) splits its data among the agents: iid, "
                        "dirichlet:α, shards:s, label_quantity:k or size_skew:α (None: iid)")
    s.add_argument("--network", default=None,
                   help="graph family (None: complete for an algorithm whose server averages "
                        "the clients' uploads, the federated family and DP-ADMM, else "
                        "random_geometric; compare runs those on the complete graph K_N of the "
                        "same N and the others on this network)")
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
    s.add_argument("--x", action="append", default=None, choices=X_AXES, metavar="AXIS",
                   help="x axis of the figure (repeatable: one panel each; default: step): "
                        f"iterations or a cost counted per step, one of {', '.join(X_AXES)}")
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


def reference_markdown(width: int = 88) -> str:
    """The command-line reference as Markdown: each command's ``--help``, verbatim, one literal
    block per command under a ``### jaxdp NAME --help`` heading (the site's command-line page
    includes it, so it cannot drift from the parser). ``width`` is the terminal width argparse
    wraps to: 88, the widest line the site's code column shows whole."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)  # argparse wraps help to the terminal's width
    try:
        parser = _parser()
        sub = parser._subparsers._group_actions[0]  # noqa: SLF001
        helps = {a.dest: a.help for a in sub._choices_actions}  # noqa: SLF001
        parts = ["Generated from the `jaxdp` command's own parser: each block is the output of "
                 "`jaxdp COMMAND --help`. `jaxdp run ALG --help` also lists ALG's parameters "
                 "and the problem's metrics.", "", "### jaxdp --help", "", "```text",
                 parser.format_help().rstrip(), "```"]
        for name, command in sub.choices.items():
            parts += ["", f"### jaxdp {name} --help", "", helps.get(name, ""), "", "```text",
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


_TABLES = {"params": "param", "graph_params": "graph_param", "problem_params": "problem_param",
           "options": "option"}
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
