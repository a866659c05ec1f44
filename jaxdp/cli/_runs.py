"""The commands of ``jaxdp`` that run algorithms: ``run``, ``compare`` and ``tradeoff``."""
from __future__ import annotations

import json

from jaxdp.cli._common import (ENDED_WORSE, RESUME_DIR, _check_fresh, _check_out, _done,
                               _options, _override, _print_remedy, _private_params,
                               _probe_printer, _refuse_noise_param,
                               _seeds_per_block, _setting, _shared_params, _stage, _stem, _title,
                               _warn_meaningless, _with_channel, _write_config, _write_run)


def _cmd_run(args) -> int:
    from jaxdp.engine import run

    if args.algorithm is None:
        raise ValueError("run needs an ALGORITHM (or `algorithm = \"...\"` in --config)")
    out = _check_out(args.out)
    alg = _built(args.algorithm, args)
    setting = _setting(args, (alg,))  # sets the default --metric from the problem
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
        _print_remedy(report.epsilon_max, alg, setting["problem"], setting["network"], params,
                      args.steps, args.delta)
        _print_ideal(report)
        _warn_meaningless(report.epsilon_max, alg.name, alg.noise_field)
    print(json.dumps({**files, "compile_seconds": round(trace.meta["compile_seconds"], 3),
                      "run_seconds": round(trace.meta["run_seconds"], 3)}))
    return _divergence_status(trace, alg.name)


def _print_ideal(report) -> None:
    """The ideal curve of ``--ideal`` (worst agent, last step), below the guarantee."""
    from jaxdp.privacy.pairwise import IDEAL_LINEAR
    if IDEAL_LINEAR in report.curves:
        print(f"Beside it, not a guarantee: {IDEAL_LINEAR}: ε = "
              f"{float(report.curves[IDEAL_LINEAR][:, -1].max()):.4g} (max over agents)")


def _built(name: str, args):
    """The algorithm ``name`` with its ``--option`` settings and ``--channel``."""
    from jaxdp import algorithms

    config = _options(args.option, [name])[name]
    return _with_channel(algorithms.get(name, **config), args.channel)


def _divergence_status(trace, name: str) -> int:
    """The exit status of a run: 1, with a line on stderr, when any seed diverged (NaN/inf),
    blew up (``jaxdp.engine.BLOWUP_FACTOR``) or ended worse than it started
    (``Trace.ended_worse``); the files are written either way."""
    from jaxdp.engine import BLOWUP_FACTOR

    n_div, n_blown = int(trace.diverged.sum()), int(trace.blown_up().sum())
    if n_div == 0:
        worse = trace.worse_line()
        if worse:
            _stage(f"jaxdp: {name}: {worse}")
        return ENDED_WORSE if worse else 0
    if n_div == trace.n_seeds:
        _stage(f"jaxdp: all {trace.n_seeds} seeds of {name} diverged ({n_blown} blew up, the "
               "others NaN/inf); no plot written: lower the step size")
    else:
        _stage(f"jaxdp: {n_div} of {trace.n_seeds} seeds of {name} diverged ({n_blown} blew up: "
               f"objective > {BLOWUP_FACTOR:.0e}x its start; the others NaN/inf); they are left "
               "out of the means: lower the step size")
    return 1


def _cmd_compare(args) -> int:
    from jaxdp import algorithms
    from jaxdp.compare import compare

    if len(args.algorithms) < 1:
        raise ValueError("compare needs at least one ALGORITHM (or `algorithms = [...]` in "
                         "--config)")
    out = _check_out(args.out)
    _check_fresh(out, ["compare.md", "compare.csv", "compare.png"], args.force or args.resume)
    options = _options(args.option, args.algorithms)
    algs = [algorithms.get(n, **options[n]) for n in args.algorithms]
    params = _shared_params({n: _with_channel(a, args.channel)
                             for n, a in zip(args.algorithms, algs, strict=True)}, args.param, args)
    setting = _setting(args, algs)
    result = compare(args.algorithms, setting["problem"], setting["network"], steps=args.steps,
                     seeds=args.seeds, epsilon=args.epsilon, delta=args.delta,
                     record_every=args.record_every, metrics=args.metric,
                     out_dir=out, progress=not args.no_progress,
                     title=lambda epsilon: _title(args, epsilon, private=epsilon is not None),
                     channel=args.channel, x=args.x or ["step"], resume_dir=out / RESUME_DIR,
                     seeds_per_block=_seeds_per_block(args.seeds),
                     on_probe=lambda alg: _probe_printer(alg.noise_field, args.epsilon, args, []),
                     threat=args.threat, network_name=args.network, options=options,
                     params=params)
    _write_config(out, args)
    _done(out)
    print(result.markdown)
    for row in result.rows:
        alg, params, net = result.plans[row["algorithm"]]
        _print_remedy(row["epsilon"], alg, setting["problem"], net, params, args.steps,
                      args.delta)
        _warn_meaningless(row["epsilon"], row["algorithm"], alg.noise_field)
    print(json.dumps(result.files))
    status = {_divergence_status(trace, name) for name, trace in result.traces.items()}
    return 1 if 1 in status else max(status)  # a diverged seed outranks one that ended worse


def _cmd_tradeoff(args) -> int:
    from jaxdp.experiments.tradeoff import tradeoff

    if args.algorithm is None:
        raise ValueError("tradeoff needs an ALGORITHM (or `algorithm = \"...\"` in --config)")
    if args.epsilon is not None:
        raise ValueError("tradeoff calibrates to every ε of --epsilons; --epsilon is for run "
                         "and compare")
    epsilons = _epsilon_list(args.epsilons)
    out = _check_out(args.out)
    _check_fresh(out, ["tradeoff.md", "tradeoff.csv", "tradeoff.png"], args.force)
    alg = _built(args.algorithm, args)
    setting = _setting(args, (alg,))
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
