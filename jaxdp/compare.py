"""Several algorithms on one problem and network, at the same ε where they are private.

:func:`compare` calibrates every private algorithm to the target ε with
:func:`jaxdp.privacy.calibrate_params` (before anything runs), runs each over the same seeds, and
writes one figure (mean and 95% band over seeds, one panel per metric) and one table of final
metrics (markdown and CSV) with each algorithm's guarantee ε. ``jaxdp compare`` calls it.

Algorithms whose server is the average of the uploads (``Algorithm.server_average``: the
federated family, DP-ADMM) run on the complete graph K_N of the same N clients
(:func:`network_for`), the others on the network given, so one call compares federated central
DP (``dp_fedavg``), federated local DP (``ldp_fedavg``) and a decentralized private algorithm
(``dp_dgd`` on a ring) at one ε; the table's ``network`` column says where each ran. ε is per
agent under each algorithm's own relation and observer (``report.released``): compare algorithms
whose relation is the same (all three above: one agent's whole data set replaced).
"""
from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path


@dataclasses.dataclass
class Comparison:
    """What :func:`compare` returns.

    Attributes:
      rows: one dict per algorithm: name, ε (``None`` if not private), the calibrated noise
        field, seeds, diverged seeds, seeds that ended worse than they started
        (``Trace.ended_worse``), and mean / CI half-width of each final metric.
      traces: algorithm name → :class:`~jaxdp.engine.Trace`.
      markdown: the table as markdown.
      files: the files written (``figure``, ``table_md``, ``table_csv``, traces, privacy).
      plans: algorithm name → ``(algorithm, Params, network)`` as run (after calibration).
    """

    rows: list
    traces: dict
    markdown: str
    files: dict
    plans: dict = dataclasses.field(default_factory=dict)


def compare(names, problem, network, *, steps: int, seeds: int = 16, epsilon: float | None = None,
            delta: float = 1e-5, record_every: int | None = None, metrics=None,
            params: dict | None = None, out_dir="compare_out", progress: bool = True,
            title: str | None = None, channel=None, x=("step",), resume_dir=None,
            seeds_per_block: int | None = None, on_probe=None, threat=None,
            network_name: str | None = None, options: dict | None = None) -> Comparison:
    """Run ``names`` on one setting at one ε; write a figure and a table into ``out_dir``.

    Args:
      names: registry names (``jaxdp list``), at least one, no repeats.
      problem, network: the setting every algorithm runs on.
      steps, seeds, record_every: as in :func:`jaxdp.run`.
      epsilon: the target ε per agent of every private algorithm (its ``noise_field`` is
        calibrated); ``None`` keeps each algorithm's Params and reports its ε.
      delta: δ of every guarantee.
      metrics: metric keys to plot (one panel each) and tabulate; ``None``: the problem's
        :func:`~jaxdp.engine.default_metric` (test accuracy on a model problem).
      params: optional name → Params overriding an algorithm's defaults before calibration.
      out_dir: output folder (created).
      title: figure title, or ``fn(epsilon) -> title`` called with ``epsilon`` (``None`` when
        no algorithm compared is private); default: the setting.
      channel: send every algorithm's messages through this channel (a
        :class:`~jaxdp.channels.Channel`, ``{message: Channel}``, or spec(s) for
        :func:`~jaxdp.channels.parse_channels`, ``"clip:1.0+gaussian:0.5"``); ``epsilon`` then
        calibrates the channel's noise.
      x: the figure's x axes (one panel per metric and x): ``"step"`` or a cost of
        :meth:`~jaxdp.engine.Trace.cost` (``"rounds"``, ``"bits"``, ``"grad_calls"``, ...).
      resume_dir, seeds_per_block: make each algorithm's run resumable (see
        :func:`jaxdp.engine.run`): its blocks go to ``resume_dir/NAME``.
      on_probe: ``None`` or ``fn(algorithm)`` returning the ``on_probe`` callback given to
        :func:`~jaxdp.privacy.calibrate_params` for that algorithm (calibration progress).
      threat: ``None``, or a second observer (a :class:`~jaxdp.privacy.Threat` or its
        ``--threat`` spec, e.g. ``"neighbours"``) whose report is added to the table (columns
        ``threat``, ``epsilon_threat``; ``"(eavesdropper bound)"`` where the algorithm has no
        tighter analysis for it and the report falls back on the eavesdropper bound). The noise
        is calibrated to ``epsilon`` under each algorithm's own observer (the headline:
        ``Algorithm.default_threat``, the eavesdropper but for DP-FedAvg's trusted server)
        either way.
      network_name: how the table's ``network`` column names ``network`` (default: its type).
      options: optional name → static configuration given to :func:`jaxdp.algorithms.get`
        (``{"dp_fedavg": {"local_steps": 2, "rate": 0.2}}``).

    Raises:
      ValueError: an unknown or repeated name; ``epsilon`` given and a private algorithm without a
        ``noise_field`` or with ε unreachable; a metric an algorithm does not record (all checked
        before any run starts).
    """
    from jaxdp import algorithms
    from jaxdp.privacy import calibrate_params

    from jaxdp.engine import default_metric

    names = list(names)
    metrics = [default_metric(problem)] if metrics is None else metrics
    if not names or len(set(names)) != len(names):
        raise ValueError(f"compare needs distinct algorithm names; got {names}")
    channel = _channel(channel)
    xs = (x,) if isinstance(x, str) else tuple(x)
    threat = _threat(threat)
    plans, nets = {}, {}
    for name in names:  # every check and calibration before the first run
        alg = algorithms.get(name, **(options or {}).get(name, {}))
        if channel is not None:
            from jaxdp.channels import with_channel

            alg = with_channel(alg, channel)
        p = (params or {}).get(name) or alg.default_params()
        net = nets[name] = network_for(alg, network)
        alg.validate(p, problem, net)
        if epsilon is not None and alg.is_private():  # raises where it cannot be calibrated
            p = calibrate_params(alg, problem, net, p, steps, epsilon=epsilon, delta=delta,
                                 on_probe=on_probe(alg) if on_probe else None)
        plans[name] = (alg, p, _privacy(alg, problem, net, p, steps, delta)
                       if alg.is_private() else None)
    _check_metric_names(plans, nets, problem, list(metrics))
    resume = {"seeds_per_block": seeds_per_block}
    traces = {name: _run(alg, problem, nets[name], p, steps, seeds, record_every, progress,
                         resume_dir=None if resume_dir is None
                         else Path(resume_dir) / name.replace("/", "_"), **resume)
              for name, (alg, p, _) in plans.items()}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [{**_row(name, plans[name], traces[name], list(metrics)),
             **_setting_columns(plans[name], nets[name], problem, steps, delta, threat,
                                 network_name or type(network).__name__)}
            for name in names]
    files = _write(out, rows, traces, plans, list(metrics), title, problem, network, seeds,
                   epsilon, xs)
    return Comparison(rows=rows, traces=traces, markdown=_markdown(rows), files=files,
                      plans={name: (alg, p, nets[name]) for name, (alg, p, _) in plans.items()})


def network_for(alg, network):
    """The network ``alg`` runs on in a comparison on ``network``: K_N of the same N when its
    server is the average of the uploads (``alg.server_average``) and ``network`` does not
    average, else ``network``."""
    from jaxdp.network import check_averaging, make_network

    if not getattr(alg, "server_average", False):
        return network
    try:
        check_averaging(network, alg.name)
    except ValueError:  # not the server's average: K_N of the same clients
        return make_network("complete", network.n_agents)
    return network


def _threat(threat):
    """``None``, or the threat model of a spec (checked before any run)."""
    if threat is None or not isinstance(threat, str):
        return threat
    from jaxdp.privacy import parse_threat

    return parse_threat(threat)


def _setting_columns(plan, net, problem, steps, delta, threat, network_name) -> dict:
    """The table's ``network`` column (``complete`` for a server's average), and under a second
    ``threat`` its name and ε (marked where it is the eavesdropper bound)."""
    alg, params, report = plan
    name = "complete (server)" if getattr(alg, "server_average", False) else network_name
    columns = {"network": f"{name}, N={net.n_agents}"}
    if threat is None:
        return columns
    seen = None if report is None else _privacy(alg, problem, net, params, steps, delta, threat)
    columns["threat"] = threat.name + (" (eavesdropper bound)" if seen is not None
                                       and seen.threat_fallback else "")
    columns["epsilon_threat"] = None if seen is None else seen.epsilon_max
    return columns


def _channel(channel):
    """Channel spec(s) parsed (errors before any run), a Channel or routes as they are, or
    ``None``."""
    if not channel or not isinstance(channel, (str, list, tuple)):
        return channel or None
    from jaxdp.channels import parse_channels

    return parse_channels(channel)


def _privacy(alg, problem, network, params, steps, delta, threat=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return alg.privacy(problem, network, params, steps, delta=delta, threat=threat)


def _run(alg, problem, network, params, steps, seeds, record_every, progress, **resume):
    from jaxdp.engine import run

    return run(alg, problem, network, params, steps=steps, seeds=seeds,
               record_every=record_every, progress=progress, **resume)


def _check_metric_names(plans, nets, problem, metrics) -> None:
    """Refuse, before any run, a metric that some compared algorithm's trace will not hold."""
    from jaxdp.engine import metric_names

    for name, (alg, params, _) in plans.items():
        known = metric_names(alg, problem, nets[name], params)
        unknown = [m for m in metrics if m not in known]
        if unknown:
            raise ValueError(f"compare: metric(s) {unknown} are not recorded for {name} on this "
                             f"problem; its metrics are {list(known)}")


def _row(name, plan, trace, metrics) -> dict:
    alg, params, report = plan
    field = alg.noise_field
    row = {"algorithm": name,
           "epsilon": None if report is None else report.epsilon_max,
           "noise_field": "" if report is None or field is None
           else f"{field}={float(params[field]):.6g}",
           "seeds": trace.n_seeds, "diverged": int(trace.diverged.sum()),
           "ended_worse": int(trace.ended_worse().sum())}
    for m in metrics:
        if bool(trace.diverged.all()):
            row[m], row[f"{m}_ci95"] = float("nan"), float("nan")
            continue
        mean, lo, hi = (float(a[-1]) for a in trace.band(m))
        row[m], row[f"{m}_ci95"] = mean, (hi - lo) / 2
    return row


def _markdown(rows) -> str:
    cols = list(rows[0])
    fmt = lambda v: "non-private" if v is None else (f"{v:.4g}" if isinstance(v, float)  # noqa
                                                      else str(v))
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _write(out, rows, traces, plans, metrics, title, problem, network, seeds, epsilon,
           xs=("step",)) -> dict:
    import csv

    import numpy as np

    from jaxdp._plotting import choose_log, figure, finish, save, setting_title

    files = {"table_md": str(out / "compare.md"), "table_csv": str(out / "compare.csv")}
    Path(files["table_md"]).write_text(_markdown(rows))
    with open(files["table_csv"], "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    for name, trace in traces.items():
        report = plans[name][2]
        if report is not None:
            trace.meta["privacy"] = report.to_dict()  # the ε travels with the trace
        files[f"trace_{name}"] = str(trace.save(out / f"trace_{name}.npz"))
        files[f"csv_{name}"] = str(trace.write_csv(out / f"trace_{name}.csv"))
        if report is not None:
            path = out / f"privacy_{name}.json"
            path.write_text(json.dumps(report.to_dict(), indent=2))
            files[f"privacy_{name}"] = str(path)
    panels = [(m, x) for m in metrics for x in xs]
    fig, axes = figure(len(panels))
    for ax, (m, x) in zip(axes, panels):
        shown = [r for r in rows if not bool(traces[r["algorithm"]].diverged.all())]
        logy = choose_log(np.concatenate([traces[r["algorithm"]].mean(m).ravel()
                                          for r in shown])) if shown else False
        for row in shown:  # one scale per panel, chosen from every line on it
            traces[row["algorithm"]].plot(m, ax=ax, logy=logy, x=x,
                                          label=_label(row, plans[row["algorithm"]][0].name))
    if not any(plan[2] is not None for plan in plans.values()):
        epsilon = None  # no private algorithm: no ε in the title
    if callable(title):
        title = title(epsilon)
    title = title or setting_title(problem.name, type(network).__name__, network.n_agents,
                                   seeds, epsilon)
    finish(fig, axes, title)
    files["figure"] = save(fig, out / "compare.png")
    return files


def _label(row, shown: str | None = None) -> str:
    """The legend entry: ``shown`` (the algorithm as run, its channel included) or the row's
    name, its ε and the diverged seeds."""
    eps = row["epsilon"]
    suffix = " (non-private)" if eps is None else f" (ε = {eps:.3g})"
    diverged = f", {row['diverged']}/{row['seeds']} diverged" if row["diverged"] else ""
    worse = (f", {row['ended_worse']}/{row['seeds']} ended worse" if row.get("ended_worse")
             else "")
    return (shown or row["algorithm"]) + suffix + diverged + worse
