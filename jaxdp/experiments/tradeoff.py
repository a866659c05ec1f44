"""The privacy–utility trade-off of one algorithm in one call: an ε grid → the final metric.

:func:`tradeoff` calibrates the algorithm's noise to each target ε
(:func:`jaxdp.privacy.calibrate_params`), runs every point over the same seeds, and writes one
figure (the metric's final mean and 95 % band against the reported ε), a table (CSV and
Markdown) and each point's trace with its privacy report in ``meta["privacy"]``. ``jaxdp
tradeoff ALG --epsilons 0.5,1,2,4,8`` is the command-line form.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import math
import warnings
from pathlib import Path


@dataclasses.dataclass
class Tradeoff:
    """``rows`` (one dict per ε), ``traces`` (``{epsilon: Trace}``), the ``files`` written and
    the reference ``lines``."""

    rows: list
    traces: dict
    files: dict
    lines: dict = dataclasses.field(default_factory=dict)
    """The figure's reference levels: ``start`` (the metric's mean at the first record, the
    same for every ε) and, where there is one, the non-private counterpart's final mean."""

    @property
    def markdown(self) -> str:
        cols = list(self.rows[0])
        show = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        table = "\n".join(lines + ["| " + " | ".join(show(r[c]) for c in cols) + " |"
                                   for r in self.rows]) + "\n"
        notes = [f"{name}: {show(value)}" for name, value in self.lines.items()]
        worse = [f"{r['target_epsilon']:g}" for r in self.rows if r["ended_worse"]]
        if worse:
            notes.append(f"ε = {', '.join(worse)}: some seeds ended worse than the start "
                         "(objective above its first record): more noise than the run absorbs")
        return table + "".join(f"\n{n}" for n in notes) + ("\n" if notes else "")


def tradeoff(algorithm, problem, network, epsilons, *, steps: int, seeds: int = 16,
             delta: float = 1e-5, params=None, metric: str | None = None,
             record_every: int | None = None, out_dir=None, progress: bool = True,
             title: str | None = None, on_probe=None) -> Tradeoff:
    """Run ``algorithm`` calibrated to each ε of ``epsilons``; the final ``metric`` per ε.

    Args:
      algorithm: a private :class:`~jaxdp.algorithms.Algorithm` with a ``noise_field``.
      problem, network: the setting.
      epsilons: the target ε per agent (each ``> 0``; at least one).
      steps, seeds, record_every: as :func:`jaxdp.engine.run`.
      delta: the δ of every guarantee.
      params: the Params kept at every point but the noise field (default Params when ``None``).
      metric: the metric tabulated and plotted; ``None``: the problem's
        :func:`~jaxdp.engine.default_metric` (test accuracy on a model problem).
      out_dir: where ``tradeoff.png``, ``tradeoff.csv``, ``tradeoff.md``, the traces and
        ``privacy_eps{ε}.json`` go (``None``: nothing written).
      progress, on_probe: progress bars of the runs; ``on_probe(epsilon)`` returns the
        ``on_probe`` callback given to :func:`~jaxdp.privacy.calibrate_params` for that ε.

    Raises:
      ValueError: no ε, an ε that is not a finite number > 0, or one that cannot be reached
        (every calibration is done before the first run).
    """
    from jaxdp.engine import default_metric, run
    from jaxdp.privacy import calibrate_params

    epsilons = _check_epsilons(epsilons)
    metric = default_metric(problem) if metric is None else metric
    params = algorithm.default_params() if params is None else params
    algorithm.validate(params, problem, network)
    points = {}
    for eps in epsilons:  # every calibration before the first run
        tuned = calibrate_params(algorithm, problem, network, params, steps, epsilon=eps,
                                 delta=delta, on_probe=on_probe(eps) if on_probe else None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # assumptions: the caller saw them once
            points[eps] = (tuned, algorithm.privacy(problem, network, tuned, steps, delta=delta))
    traces = {eps: run(algorithm, problem, network, tuned, steps=steps, seeds=seeds,
                       record_every=record_every, progress=progress)
              for eps, (tuned, _) in points.items()}
    rows = [_row(algorithm, eps, *points[eps], traces[eps], metric) for eps in epsilons]
    reference = non_private_reference(algorithm, params)
    lines = {"start": _final(traces[epsilons[0]], metric, first=True)}
    if reference is not None:
        ref = run(reference[0], problem, network, reference[1], steps=steps, seeds=seeds,
                  record_every=record_every, progress=progress)
        lines[f"non-private {reference[0].name}"] = _final(ref, metric)
    result = Tradeoff(rows=rows, traces=traces, files={}, lines=lines)
    if out_dir is not None:
        result.files = _write(Path(out_dir), result, points, algorithm.name, metric,
                              title or f"{algorithm.name}: {metric} against ε (δ = {delta:g}, "
                                       f"{steps} steps, {seeds} seeds)")
    return result


def _check_epsilons(epsilons) -> list[float]:
    values = [epsilons] if isinstance(epsilons, (int, float)) else list(epsilons)
    if not values:
        raise ValueError("tradeoff needs at least one ε")
    for eps in values:
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or \
                not (math.isfinite(eps) and eps > 0):
            raise ValueError(f"every ε must be a finite number > 0; got {eps!r}")
    return sorted(float(e) for e in values)


def _row(algorithm, eps, tuned, report, trace, metric) -> dict:
    field = algorithm.noise_field
    ok = not bool(trace.diverged.all())
    mean, lo, hi = ((float(a[-1]) for a in trace.band(metric)) if ok
                    else (math.nan, math.nan, math.nan))
    return {"target_epsilon": eps, "epsilon": float(report.epsilon_max),
            field: float(tuned[field]), metric: mean, f"{metric}_ci95": (hi - lo) / 2,
            "diverged": int(trace.diverged.sum()), "ended_worse": int(trace.ended_worse().sum()),
            "seeds": trace.n_seeds}


def _final(trace, metric: str, first: bool = False) -> float:
    """The metric's mean over the seeds that did not diverge, at the last (or first) record."""
    if bool(trace.diverged.all()):
        return math.nan
    return float(trace.band(metric)[0][0 if first else -1])


def non_private_reference(algorithm, params):
    """``(algorithm, Params)``: the non-private method ``algorithm`` adds noise to, with every
    Params field the two share taken from ``params`` (the step size); ``None`` when there is
    none. It is the channel's ``inner`` algorithm, else the nearest non-private registered
    parent class (DP-DGD and Muffliato: DGD, Nedić & Ozdaglar 2009)."""
    from jaxdp.algorithms import REGISTRY

    inner = getattr(algorithm, "inner", None)
    if inner is None or inner.is_private():
        registered = set(REGISTRY.values())
        cls = next((c for c in type(algorithm).__mro__[1:]
                    if c in registered and not c.is_private()), None)
        inner = None if cls is None else cls()
    if inner is None:
        return None
    base = inner.default_params()
    shared = {k: params[k] for k in base.keys() if k in params.keys()}
    return inner, base.replace(**shared)


def _write(out: Path, result: Tradeoff, points, name: str, metric: str, title: str) -> dict:
    from jaxdp._plotting import choose_log, figure, finish, metric_label, save

    out.mkdir(parents=True, exist_ok=True)
    files = {"table_md": out / "tradeoff.md", "table_csv": out / "tradeoff.csv"}
    files["table_md"].write_text(result.markdown)
    with open(files["table_csv"], "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(result.rows[0]))
        writer.writeheader()
        writer.writerows(result.rows)
    stem = name.replace("/", "_")
    for eps, trace in result.traces.items():
        report = points[eps][1]
        trace.meta["privacy"] = report.to_dict()  # the ε travels with the trace
        files[f"trace_eps{eps:g}"] = trace.save(out / f"trace_{stem}_eps{eps:g}.npz")
        path = out / f"privacy_eps{eps:g}.json"
        path.write_text(json.dumps(report.to_dict(), indent=2))
        files[f"privacy_eps{eps:g}"] = path
    fig, (ax,) = figure(1)
    rows = [r for r in result.rows if math.isfinite(r[metric])]
    xs, ys = [r["epsilon"] for r in rows], [r[metric] for r in rows]
    ax.errorbar(xs, ys, yerr=[r[f"{metric}_ci95"] for r in rows], marker="o", capsize=3,
                label=name)
    worse = [r for r in rows if r["ended_worse"]]
    if worse:
        ax.plot([r["epsilon"] for r in worse], [r[metric] for r in worse], "x", color="C3",
                markersize=9, label="some seeds ended worse than the start")
    for (label, level), style in zip(result.lines.items(), (":", "--"), strict=False):
        if math.isfinite(level):
            ax.axhline(level, linestyle=style, color="0.4" if style == ":" else "C2",
                       label=f"{label} ({level:.3g})")
    levels = ys + [v for v in result.lines.values() if math.isfinite(v)]
    ax.set_xscale("log")
    _plain_ticks(ax.xaxis, [r["target_epsilon"] for r in result.rows])
    if choose_log(levels):
        ax.set_yscale("log")
        positive = [v for v in levels if v > 0]
        _plain_ticks(ax.yaxis, decades=math.log10(max(positive) / min(positive)))
    ax.set_xlabel(r"reported $\varepsilon$ per agent (max over agents)")
    ax.set_ylabel(f"final {metric_label(metric)}")
    finish(fig, [ax], title)
    files["figure"] = save(fig, out / "tradeoff.png")
    return {k: str(v) for k, v in files.items()}


def _plain_ticks(axis, at=None, decades: float = 1.0) -> None:
    """A log axis with few, plainly written ticks: at the values ``at`` (the ε grid), else at
    1, 2 and 5 per decade over at most two ``decades`` of data and at powers of ten (at most
    six) over more; no minor labels (matplotlib's ``3×10⁰4×10⁰`` overlaps otherwise)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    subs = (1.0, 2.0, 5.0) if decades <= 2 else (1.0,)
    axis.set_major_locator(FixedLocator(at) if at is not None
                           else LogLocator(subs=subs, numticks=6))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())
