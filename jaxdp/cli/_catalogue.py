"""The catalogue commands of ``jaxdp``: ``list``, ``info``, ``demo`` and ``reproduce``, and the
docstring/Params text they print."""
from __future__ import annotations

import inspect
import time
from pathlib import Path

from jaxdp.cli._common import (_check_empty, _check_fresh, _check_out, _meaningless, _needs_remedy,
                               _remedy, _report, _show, _stage)


# -- commands -------------------------------------------------------------------------------------
def _cmd_list(args) -> int:
    from jaxdp import algorithms, channels, experiments, network, problems

    print("algorithms:")
    for name in algorithms.REGISTRY.names():
        cls = algorithms.REGISTRY[name]
        print(f"  {name:<24} {'private' if cls.is_private() else 'non-private':<12} "
              f"{plain(algorithms.REGISTRY.describe(name))}")
    for title, registry in (("problems", problems.PROBLEMS), ("channel transforms",
                                                             channels.TRANSFORMS),
                            ("networks", network.GRAPHS),
                            ("reproductions", experiments.REPRODUCTIONS)):
        print(f"{title}:")
        for name in registry.names():
            print(f"  {name:<24} {plain(registry.describe(name))}")
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
    print(_options_line(alg))
    print(f"noise_field: {cls.noise_field}"
          + ("  (--epsilon calibrates it)" if cls.noise_field else "  (--epsilon not supported)"))
    if cls.is_private():
        print("privacy: " + _default_privacy(alg))
    return 0


def _options_line(alg) -> str:
    """The static settings of ``alg`` (its dataclass fields) and their defaults."""
    from jaxdp.cli._common import static_fields

    shown = ", ".join(f"{f}={getattr(alg, f)!r}" for f in static_fields(type(alg)))
    return f"static settings (set with --option NAME=VALUE): {shown or 'none'}"


def _params_lines(alg) -> list[str]:
    """The Params of ``alg``: a heading, then one line per field (default and meaning)."""
    defaults = alg.default_params()
    meanings = _field_comments(alg.params_type)
    return [f"parameters of {alg.name} ({alg.params_type.__name__}; set with --param "
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


def _cmd_reproduce(args) -> int:
    from jaxdp.experiments import REPRODUCTIONS

    fn = REPRODUCTIONS.get(args.name)
    kw = {} if args.seeds is None else {"seeds": args.seeds}
    accepted = inspect.signature(fn).parameters
    if "progress" in accepted:  # bars (runs, sweeps) and lines (loops) inside the stages
        kw["progress"] = not args.no_progress
    if args.adult is not None:
        if "adult" not in accepted:
            raise ValueError(f"reproduction {args.name!r} does not read --adult")
        kw["adult"] = args.adult
    out = args.out or f"out/{args.name}"
    _check_empty(_check_out(out), args.force)
    Path(out).mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    _stage(f"[1/2] {args.name}: running (output in {out}; this may take minutes)")
    report = fn(out, **kw)
    _stage(f"[2/2] {args.name}: done in {time.perf_counter() - t0:.1f} s; "
           f"{sum(c.reproduced for c in report.claims)}/{len(report.claims)} claims reproduced")
    print(report.to_text())
    return 0


# -- helpers: catalogue ---------------------------------------------------------------------------
def _first_line(doc) -> str:
    """The docstring's first paragraph, joined into one line, as plain text."""
    from jaxdp._registry import first_paragraph

    return plain(first_paragraph(doc))


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
    if report.reason:  # why inf (e.g. a failed check on the data, with its remedy)
        why = f"ε = inf: {report.reason}"
        note = why if note is None else f"{note}\n  {why}"
    if _needs_remedy(report.epsilon_max):
        remedy = _remedy(alg, prob, net, alg.default_params(), 100, 1e-5)
        note = remedy if note is None else f"{note}\n  {remedy}"
    return (f"per {report.unit} ({report.relation}: {report.relation_text}); default Params, "
            f"10 agents on a ring, 100 steps: " + report.summary().splitlines()[0]
            + ("" if note is None else f"\n  {note}"))
