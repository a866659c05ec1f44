"""Helpers the ``jaxdp`` commands share: the setting (problem, network, ``NAME=VALUE`` arguments),
privacy (calibration, warnings), outputs and the checks made before a run starts.

The bottom layer of :mod:`jaxdp.cli`: it imports none of the command modules."""
from __future__ import annotations

import inspect
import json
import os
import sys
import time
from pathlib import Path

ENDED_WORSE = 3
"""The exit status of a ``run`` or ``compare`` whose seeds all stayed finite but some ended with a
larger objective than they started (1 is kept for diverged seeds, 2 for bad arguments)."""
MEANINGFUL_EPSILON = 100.0
"""Above this ε a guarantee protects nothing: ε bounds the log-likelihood ratio of any output
with and without an agent's data, and e^100 ≈ 3e43; deployed guarantees lie in 0.1-20. A report
above it gets a warning line (the default Params of DPP² give 1.8e13)."""
RESUME_DIR = ".resume"
"""The folder under ``--out`` where ``run`` and ``compare`` keep finished seed blocks."""
X_AXES = ("step", "rounds", "messages", "bits", "grad_calls", "sample_grads", "prox_calls",
          "hessian_calls")
"""The figure's x axes: iterations, or a static cost (``Algorithm.costs_per_step``) × steps."""


# -- helpers: setting, privacy, outputs -----------------------------------------------------------
def _setting(args, algs=()) -> dict:
    """The problem and network of ``run``/``compare``/``tradeoff``, after checking the counts.

    Without ``--network``: ``complete`` when every algorithm of ``algs`` has a server that
    averages the uploads (``Algorithm.server_average``: the federated family, DP-ADMM), else
    ``random_geometric``. ``run`` and ``tradeoff`` of such an algorithm on a graph that does not
    average are refused here, naming the flag; ``compare`` runs it on K_N beside the others
    (:func:`jaxdp.compare.network_for`). Without ``--metric``, ``args.metric`` becomes the
    problem's :func:`~jaxdp.engine.default_metric` (test accuracy on a model problem)."""
    from jaxdp import network, problems

    served = bool(algs) and all(getattr(a, "server_average", False) for a in algs)
    if args.network is None:
        args.network = "complete" if served else "random_geometric"
    elif served and len(algs) == 1 and args.network != "complete":
        raise ValueError(f"{algs[0].name}'s server is the average of the N clients' uploads (the "
                         f"complete graph K_N): --network {args.network} has no such server; omit "
                         f"--network (complete is its default), or run `jaxdp compare "
                         f"{algs[0].name} dp_dgd --network {args.network}` to set it beside a "
                         "decentralized algorithm on that graph")

    for flag in ("agents", "seeds", "steps", "record_every", "graph_seed", "data_seed"):
        value = getattr(args, flag)  # --config values skip argparse's type=int
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"--{flag.replace('_', '-')} must be an integer; got {value!r}")
        if value is not None and value < 1 and not flag.endswith("_seed"):
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 1; got {value}")
        if value is not None and value < 0:  # a seed: numpy's own error names no flag
            raise ValueError(f"--{flag.replace('_', '-')} must be a non-negative integer (a "
                             f"seed); got {value}")
    if getattr(args, "ideal", False) and getattr(args, "threat", None) in (None, "eavesdropper"):
        raise ValueError("--ideal adds the ideal curve under a threat model other than the "
                         "eavesdropper's; give one, e.g. --threat neighbours --ideal")
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
    if getattr(args, "metric", "") is None:  # the problem's own (jaxdp.engine.default_metric)
        from jaxdp.engine import default_metric

        metric = default_metric(prob)
        args.metric = [metric] if args.command == "compare" else metric
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
    return params, _report(alg, problem, net, params, args.steps, args.delta,
                           getattr(args, "threat", None), getattr(args, "ideal", False))


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


REMEDY_EPSILONS = (1.0, 4.0, 8.0)
"""The targets a remedy line gives the noise for: strong, usual and weak guarantees."""


def _needs_remedy(epsilon) -> bool:
    """A report shown to a person needs a remedy when its ε is inf or beyond
    :data:`MEANINGFUL_EPSILON` (``None``: not private, nothing to fix)."""
    return epsilon is not None and not epsilon <= MEANINGFUL_EPSILON


def _remedy(alg, problem, net, params, steps: int, delta: float) -> str:
    """The noise that reaches each ε of :data:`REMEDY_EPSILONS` at the same steps and δ, as one
    line (where ``alg`` has no noise field, which Params to raise). Each value is a
    :func:`~jaxdp.privacy.calibrate_params` (seconds), so this is for a report printed to a
    person, never for ``alg.privacy`` itself; a target the noise cannot reach is named with
    calibration's reason."""
    import numpy as np

    from jaxdp.privacy import calibrate_params

    field = alg.noise_field
    if field is None:
        return (f"remedy: {alg.name} declares no noise field that --epsilon could calibrate: "
                f"raise its noise Params (`jaxdp info {alg.name}` lists them) or lower --steps")
    found = []
    for eps in REMEDY_EPSILONS:
        try:
            tuned = calibrate_params(alg, problem, net, params, steps, epsilon=eps, delta=delta,
                                     rtol=1e-3)  # printed to 4 digits, rounded up
            found.append(f"ε = {eps:g}: {field} = {_round_up(float(np.max(tuned[field]))):.4g}")
        except ValueError as e:
            found.append(f"ε = {eps:g}: unreachable by {field} ({str(e).splitlines()[0]})")
    return (f"remedy: at δ = {delta:g} after {steps} steps, " + "; ".join(found)
            + f" (`--epsilon E` sets {field} so, or `--param {field}=VALUE`; fewer --steps "
            "also lower ε)")


def _round_up(value: float, digits: int = 4) -> float:
    """``value`` rounded up to ``digits`` significant digits: a printed noise scale is never
    below the calibrated one, so it keeps ε at or under its target."""
    import math

    if value == 0 or not math.isfinite(value):
        return value
    unit = 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1)
    return math.ceil(value / unit) * unit


def _print_remedy(epsilon, alg, problem, net, params, steps: int, delta: float) -> None:
    """Print :func:`_remedy` under a report whose ``epsilon`` is inf or meaningless."""
    if _needs_remedy(epsilon):
        print(_remedy(alg, problem, net, params, steps, delta))


def _warn_meaningless(epsilon, name: str, field) -> None:
    line = _meaningless(epsilon, name, field)
    if line is not None:
        _stage("jaxdp: " + line)


def _report(alg, problem, net, params, steps, delta, threat=None, ideal=False):
    """The privacy report under the contract against ``threat`` (a ``--threat`` spec; ``None``:
    the algorithm's own ``default_threat``), with the ideal curve when ``ideal`` (``--ideal``),
    or ``None`` (not private)."""
    from jaxdp.privacy import parse_threat
    return alg.privacy(problem, net, params, steps, delta=delta,
                       threat=None if threat is None else parse_threat(threat), ideal=ideal)


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


def _check_empty(out: Path, force: bool) -> None:
    """Refuse, before any work, to write into a folder that already holds something (an earlier
    reproduction's figures, tables and report, or anything else) unless ``--force``."""
    found = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    if found and not force:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise ValueError(f"--out {str(out)!r} is not empty (it holds {shown}): choose another "
                         "--out, or pass --force to write over its files")


def _stage(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _show(value) -> str:
    import numpy as np

    value = np.asarray(value)
    return f"{value.item():g}" if value.ndim == 0 else str(value.tolist())


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


def _options(items, names) -> dict:
    """``--option NAME=VALUE`` strings → ``{algorithm: static configuration}`` for
    :func:`jaxdp.algorithms.get`: each NAME is a field of the algorithm's dataclass (its static
    settings: ``local_steps``, ``selection``, ``clients``, ``rate``, ``weighting`` of the
    federated family, ``sampler``, ...), given to every algorithm of ``names`` that declares it;
    a NAME none declares is an error listing theirs. VALUE: an int, a float, ints separated by
    commas (a tuple), ``none``, or text; the algorithm's class checks it."""
    from jaxdp import algorithms

    values = {}
    for item in items or []:
        name, sep, value = str(item).partition("=")
        if not sep:
            raise ValueError(f"--option expects NAME=VALUE; got {item!r}")
        values[name] = _literal(value)
    config = {n: {} for n in names}
    for alg_name in (n for n in names if n in algorithms.REGISTRY):
        declared = static_fields(algorithms.REGISTRY[alg_name])
        config[alg_name] = {k: v for k, v in values.items() if k in declared}
    for name in values:
        if not any(name in c for c in config.values()):
            known = sorted({f for n in names if n in algorithms.REGISTRY
                            for f in static_fields(algorithms.REGISTRY[n])})
            raise ValueError(f"--option {name}: not a static setting of {', '.join(names)}; "
                             f"theirs: {', '.join(known) or 'none'}")
    return config


def static_fields(cls) -> list[str]:
    """The static settings of an algorithm class: its dataclass fields (``--option``)."""
    import dataclasses

    return [f.name for f in dataclasses.fields(cls) if f.init]


def _literal(text: str):
    """An ``--option`` value: int, float, a tuple of ints (``1,2,3``, or a TOML list ``[1, 2, 3]``),
    ``None``, ``true``/``false`` (a bool) or the text."""
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1] + ("," if "," not in text else "")
    if text.lower() == "none":
        return None
    if "," in text:
        try:
            return tuple(int(v) for v in text.split(",") if v.strip())
        except ValueError:
            raise ValueError(f"--option: {text!r} is neither a number nor ints separated by "
                             "commas") from None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _shared_params(algs: dict, items, args) -> dict:
    """``--param NAME=VALUE`` of ``compare``: ``{name: Params}`` for ``algs`` (registry name ->
    algorithm as run), each value set in every algorithm whose Params declare NAME (a NAME none
    declares is an error; a noise field is refused with ``--epsilon``, which calibrates it)."""
    values = _assignments(items, "--param")
    fields = {name: alg.default_params().keys() for name, alg in algs.items()}
    for name in values:
        if not any(name in f for f in fields.values()):
            raise ValueError(f"--param {name}: no algorithm compared has it; their parameters: "
                             + ", ".join(sorted({k for f in fields.values() for k in f})))
    out = {}
    for name, alg in algs.items() if values else ():
        if args.epsilon is not None and alg.noise_field in values:
            _refuse_noise_param(alg, args, f"--epsilon {args.epsilon:g}")
        mine = [f"{k}={v}" for k, v in values.items() if k in fields[name]]
        out[name] = _override(alg.default_params(), mine)
    return out


def _override(params, items):
    """Apply ``--param NAME=VALUE`` strings to a Params dataclass."""
    values = _assignments(items, "--param")
    for name in values:
        if name not in params.keys():
            raise ValueError(f"unknown parameter {name!r} for {type(params).__name__}; "
                             f"fields: {', '.join(sorted(params.keys()))}")
    return params.replace(**{k: float(v) for k, v in values.items()})


_PROBLEM_FLAGS = {"dim": ("d",), "samples": ("m",), "noise": ("noise", "label_noise"),
                  "reg": ("ridge", "lam"), "split": ("split",)}
"""``--dim``/``--samples``/``--noise``/``--reg``/``--split`` -> the builder arguments they may
set."""


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
        value = getattr(args, flag, None)
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
            "gnm": {"m": 2 * n}, "random_sparse": {"degree": min(10, n - 1)}}.get(name, {})
