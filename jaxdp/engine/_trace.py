"""``Trace``: the host-side result of a run or sweep.

Arrays are numpy, shaped ``(S, R)`` for a run and ``(S, G, R)`` for a sweep (S seeds, G grid points,
R records). A seed whose metrics or final models are not finite, or that blew up (its final
``objective`` is more than ``BLOWUP_FACTOR`` = 1e6 times its start, floored at 1: see
:func:`blown_up`), is flagged in ``diverged`` and left out of every mean and band: it is reported,
never silently averaged.

On disk a trace is one ``.npz`` file (``allow_pickle=False``): the arrays, plus the metadata as a JSON
string under the key ``__meta__``. Reading it never executes code. Writes go to a temporary file that
is renamed into place, so an interrupted save never leaves a half-written trace.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1


def _umask_mode() -> int:
    """``0666`` less the process umask: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


BLOWUP_FACTOR = 1e6
"""A seed blew up when ``|f(x_K)| > BLOWUP_FACTOR · max(|f(x_0)|, 1)``. A stable method, noisy or
not, stays within a few decades of its start; 6 decades of growth is geometric growth (DGD at
α = 1 on least squares: 0.2 → 7e10 in 30 steps) that a few more steps turn into inf."""
BLOWUP_METRIC = "objective"


def blown_up(metrics: dict) -> np.ndarray:
    """``(S, [G])`` bool: finite seeds whose final ``objective`` exceeds ``BLOWUP_FACTOR`` times
    its first record (floored at 1); all False when the metrics have no ``objective``."""
    values = metrics.get(BLOWUP_METRIC)
    if values is None:
        return np.zeros(np.shape(next(iter(metrics.values())))[:-1], bool) if metrics else \
            np.zeros(0, bool)
    first, last = np.abs(values[..., 0]), np.abs(values[..., -1])
    with np.errstate(invalid="ignore"):
        return np.isfinite(last) & (last > BLOWUP_FACTOR * np.maximum(first, 1.0))


def ended_worse(metrics: dict) -> np.ndarray:
    """``(S, [G])`` bool: seeds whose final ``objective`` is finite and above its first record —
    a run that made things worse (too much noise, too large a step) without blowing up. They stay
    in the means (the outcome is real) and are reported beside them; all False without an
    ``objective``."""
    values = metrics.get(BLOWUP_METRIC)
    if values is None:
        return blown_up(metrics)  # all False: no objective
    first, last = values[..., 0], values[..., -1]
    with np.errstate(invalid="ignore"):
        return np.isfinite(last) & np.isfinite(first) & (last > first)


def diverged_seeds(models: np.ndarray, metrics: dict) -> np.ndarray:
    """``(S, [G])`` bool: seeds whose final models are not finite, whose ``objective`` is not
    finite at some record or blew up (:func:`blown_up`), or whose other metric turned non-finite
    after a finite first record. A metric undefined from its first record (``dist_to_opt`` and
    ``suboptimality`` of a problem built without a reference x*) says nothing about the seed."""
    out = ~np.all(np.isfinite(models), axis=(-2, -1))
    for name, values in metrics.items():
        bad = ~np.isfinite(values)
        if name != BLOWUP_METRIC:
            bad &= np.isfinite(values[..., :1])
        out |= bad.any(axis=-1)
    return out | blown_up(metrics)


@dataclasses.dataclass
class Trace:
    """Metrics of a batch of runs.

    Attributes:
      metrics: ``{name: array (S, [G,] R)}``.
      steps: ``(R,)`` the iteration count at each record (0 = before the first step).
      diverged: ``(S, [G])`` bool; True where a seed produced NaN/inf or blew up
        (:func:`blown_up`).
      final_models: ``(S, [G,] N, d)`` models after the last step.
      observed: ``{"messages": {...}, "models": ...}`` with arrays ``(S, [G,] K, ...)`` when the run
        was made with ``observe=True``; else empty.
      meta: JSON-serialisable metadata (algorithm, params, network, problem, versions, timings,
        ``costs_per_step``: the algorithm's static per-step costs, read by :meth:`cost`).
    """

    metrics: dict
    steps: np.ndarray
    diverged: np.ndarray
    final_models: np.ndarray
    observed: dict = dataclasses.field(default_factory=dict)
    meta: dict = dataclasses.field(default_factory=dict)

    # -- summaries --------------------------------------------------------------------------------
    @property
    def n_seeds(self) -> int:
        return int(self.diverged.shape[0])

    def final(self, name: str) -> np.ndarray:
        """The last record of a metric, shape ``(S, [G])``."""
        return self._metric(name)[..., -1]

    def mean(self, name: str) -> np.ndarray:
        """Mean over non-diverged seeds, shape ``([G,] R)``."""
        return self.band(name)[0]

    def band(self, name: str, level: float = 0.95, kind: str = "ci"):
        """``(mean, low, high)`` over the seeds that did not diverge, each ``([G,] R)``.

        Args:
          name: metric name.
          level: coverage of the band.
          kind: ``"ci"`` — a normal-approximation confidence interval of the mean
            (mean ± z·sd/√S); ``"quantile"`` — the central ``level`` quantile range of the seeds.

        Raises:
          KeyError: unknown metric.
          ValueError: unknown ``kind``, or ``level`` outside ``(0, 1)``.
        """
        if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) \
                or not 0 < level < 1:
            raise ValueError(f"level must be a coverage in (0, 1), e.g. 0.95; got {level!r}")
        values = np.where(self._ok_mask(), self._metric(name), np.nan)
        with np.errstate(invalid="ignore"), _quiet_nan_warnings():
            mean = np.nanmean(values, axis=0)
            if kind == "quantile":
                lo, hi = np.nanquantile(values, [(1 - level) / 2, (1 + level) / 2], axis=0)
            elif kind == "ci":
                count = np.sum(~np.isnan(values), axis=0)
                sd = np.nanstd(values, axis=0, ddof=1) if values.shape[0] > 1 else 0 * mean
                half = _normal_quantile((1 + level) / 2) * sd / np.sqrt(np.maximum(count, 1))
                lo, hi = mean - half, mean + half
            else:
                raise ValueError(f"kind must be 'ci' or 'quantile'; got {kind!r}")
        return mean, lo, hi

    @property
    def is_sweep(self) -> bool:
        """True for a sweep's trace (metrics ``(S, G, R)``)."""
        return self.diverged.ndim == 2

    def grid_labels(self) -> list[str]:
        """One label per grid point naming its values (``"alpha=0.01, gamma=0"``); ``[]`` for a
        run. Fields that are equal at every grid point are left out."""
        if not self.is_sweep:
            return []
        size = self.diverged.shape[1]
        params = self.meta.get("params", {})
        columns = {k: np.asarray(v) for k, v in params.items()
                   if np.ndim(v) >= 1 and np.shape(v)[0] == size}
        varying = {k: v for k, v in columns.items()
                   if not all(np.array_equal(v[0], v[g]) for g in range(size))}
        if not varying:
            return [f"grid[{g}]" for g in range(size)]
        return [", ".join(f"{k}={_short(v[g])}" for k, v in varying.items()) for g in range(size)]

    def summary_table(self, names=None) -> str:
        """A plain-text table of final metrics: mean, 95% CI half-width, diverged seeds.

        A sweep has one row per (metric, grid point), labelled with the grid values, and the
        diverged seeds counted at that grid point. A last line says how many of them blew up
        (finite but past :data:`BLOWUP_FACTOR`), when any did.
        """
        names = names or sorted(self.metrics)
        labels = self.grid_labels()
        row_label = lambda name, g: f"{name} [{labels[g]}]" if labels else name  # noqa: E731
        points = range(max(1, len(labels)))
        width = max([20, *(len(row_label(n, g)) for n in names for g in points)])
        rows = [f"{'metric':<{width}} {'mean':>12} {'95% CI ±':>12} "
                f"{'diverged':>{10 + len(str(self.n_seeds))}}"]
        n_div = np.atleast_1d(np.sum(self.diverged, axis=0))
        for name in names:
            mean, lo, hi = (np.atleast_1d(np.asarray(a)[..., -1]) for a in self.band(name))
            for g, (m, l, h) in enumerate(zip(mean, lo, hi)):
                label = row_label(name, g)
                rows.append(f"{label:<{width}} {m:>12.4e} {(h - l) / 2:>12.2e} "
                            f"{int(n_div[g]):>9d}/{self.n_seeds}")
        n_blown = int(np.sum(self.blown_up()))
        if n_blown:
            rows.append(f"diverged: {n_blown} of them blew up ({BLOWUP_METRIC} grew more than "
                        f"{BLOWUP_FACTOR:.0e}x its start; left out of the means)")
        line = self.worse_line()
        if line:
            rows.append(line)
        return "\n".join(rows)

    def blown_up(self) -> np.ndarray:
        """``(S, [G])`` bool: the seeds that blew up (finite, counted in ``diverged``)."""
        return blown_up(self.metrics) & self.diverged

    def ended_worse(self) -> np.ndarray:
        """``(S, [G])`` bool: the seeds that did not diverge but ended with a larger
        ``objective`` than their first record (:func:`ended_worse`)."""
        return ended_worse(self.metrics) & ~self.diverged

    def worse_line(self) -> str:
        """One line saying how many seeds ended worse than they started, with the mean
        ``objective`` at the first and last record; ``""`` when none did."""
        worse = self.ended_worse()
        if not worse.any():
            return ""
        values = self.metrics[BLOWUP_METRIC][worse]
        return (f"worse than the start: {int(worse.sum())} of {worse.size} seed runs ended with "
                f"{BLOWUP_METRIC} above its first record (mean {np.mean(values[..., 0]):.4g} -> "
                f"{np.mean(values[..., -1]):.4g}): more noise than the problem can absorb, or "
                "too large a step")

    def summary_rows(self, names=None) -> list[dict]:
        """The final-metric table as records (``grid`` label, metric, mean, CI half-width,
        diverged, seeds), e.g. for a CSV file."""
        names = names or sorted(self.metrics)
        labels = self.grid_labels() or [""]
        n_div = np.atleast_1d(np.sum(self.diverged, axis=0))
        out = []
        for name in names:
            mean, lo, hi = (np.atleast_1d(np.asarray(a)[..., -1]) for a in self.band(name))
            for g, (m, l, h) in enumerate(zip(mean, lo, hi)):
                out.append({"grid": labels[g], "metric": name, "mean": float(m),
                            "ci95_half_width": float((h - l) / 2), "diverged": int(n_div[g]),
                            "seeds": self.n_seeds})
        return out

    def write_csv(self, path, names=None) -> Path:
        """Write :meth:`summary_rows` as CSV (no pandas needed); returns the path."""
        import csv

        rows = self.summary_rows(names)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["metric"])
            writer.writeheader()
            writer.writerows(rows)
        return path

    def to_pandas(self):
        """Long-format ``pandas.DataFrame``: one row per (seed, [grid,] record, metric).

        Raises:
          ImportError: pandas is not installed (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Trace.to_pandas needs pandas: pip install pandas") from None

        frames = []
        for name, arr in self.metrics.items():
            idx = np.indices(arr.shape).reshape(arr.ndim, -1)
            cols = {"seed": idx[0], "step": self.steps[idx[-1]], "metric": name}
            if arr.ndim == 3:
                cols["grid"] = idx[1]
            cols["value"] = arr.reshape(-1)
            frames.append(pd.DataFrame(cols))
        return pd.concat(frames, ignore_index=True)

    def cost(self, name: str) -> np.ndarray:
        """The cumulative cost ``name`` at each record, ``(R,)``.

        ``"step"`` is the iteration count; a key of ``meta["costs_per_step"]`` (``"rounds"``,
        ``"messages"``, ``"bits"``, ``"grad_calls"``, ``"sample_grads"``, ``"prox_calls"``,
        ``"hessian_calls"``: see :meth:`jaxdp.algorithms.Algorithm.costs_per_step`) is steps ×
        its per-step count; any other name is a counter the algorithm records with the metrics
        (``"messages_dropped"``): its mean over the seeds that did not diverge, ``([G,] R)``.

        Raises:
          KeyError: a name that is neither (the message lists the known ones).
        """
        costs = self.meta.get("costs_per_step") or {}
        if name == "step":
            return np.asarray(self.steps, np.float64)
        if name in costs:
            return np.asarray(self.steps, np.float64) * float(costs[name])
        if name in self.metrics:
            return self.mean(name)
        raise KeyError(f"unknown cost {name!r}; this trace has 'step', {sorted(costs)} (per-step "
                       f"costs) and the metrics {sorted(self.metrics)}")

    def plot_against(self, name: str, xs=("step", "rounds"), axes=None, **kw):
        """``name`` against each of ``xs`` side by side (iterations and a cost axis in one call).

        Args:
          name: metric name.
          xs: the x axes, each as ``x`` of :meth:`plot`.
          axes: one matplotlib Axes per x (default: a new figure).
          **kw: passed to :meth:`plot` (``label``, ``grid_index``, ``logy``, line style).

        Returns:
          ``(figure, axes)``.
        """
        xs = (xs,) if isinstance(xs, str) else tuple(xs)
        if axes is None:
            from jaxdp._plotting import figure

            fig, axes = figure(len(xs))
        else:
            axes = list(axes)
            fig = axes[0].figure
            if len(axes) != len(xs):
                raise ValueError(f"plot_against needs one Axes per x; got {len(axes)} for {xs}")
        for ax, x in zip(axes, xs):
            self.plot(name, ax=ax, x=x, **kw)
        return fig, axes

    def plot(self, name: str, ax=None, label=None, logy=None, grid_index=None, x: str = "step",
             **kw):
        """Mean over seeds with its 95% band against iterations or a cost (matplotlib).

        Args:
          name: metric name; the axis label comes from ``METRIC_LABELS``
            (``jaxdp._plotting``).
          ax: a matplotlib Axes (default: the current one).
          x: the x axis: ``"step"`` (iterations) or a cost of :meth:`cost` (``"rounds"``,
            ``"messages"``, ``"bits"``, ``"grad_calls"``, a counter metric, ...).
          label: legend label of the line.
          logy: ``True``/``False`` forces the y scale; ``None`` chooses log when the positive
            data span more than a decade (``choose_log``). On a log axis
            zeros and negative values are left out (the consensus error is 0 at step 0).
          grid_index: the grid point to plot; required for a sweep's trace.

        Raises:
          ValueError: a sweep's trace without ``grid_index`` (or one out of range), or every seed
            diverged (nothing to plot).
          KeyError: an unknown metric or ``x``.
        """
        import matplotlib.pyplot as plt

        from jaxdp._plotting import choose_log, metric_label

        self.cost(x)  # an unknown x fails before anything is drawn
        ax = ax or plt.gca()
        diverged = self.diverged
        if self.is_sweep:
            size = self.diverged.shape[1]
            if grid_index is None:
                raise ValueError(f"this trace is a sweep over {size} grid points: pass "
                                 f"grid_index=0..{size - 1} ({'; '.join(self.grid_labels())})")
            if not -size <= grid_index < size:
                raise ValueError(f"grid_index must be in 0..{size - 1}; got {grid_index}")
            diverged = diverged[:, grid_index]
        elif grid_index is not None:
            raise ValueError("grid_index is for a sweep's trace; this trace is a single run")
        if np.all(diverged):
            raise ValueError(f"all {self.n_seeds} seeds diverged (NaN/inf metrics or models): "
                             f"nothing to plot for {name!r}; lower the step size")
        mean, lo, hi = self.band(name)
        if grid_index is not None:
            mean, lo, hi = mean[grid_index], lo[grid_index], hi[grid_index]
        logy = choose_log(mean) if logy is None else bool(logy)
        if logy:  # zeros cannot sit on a log axis: leave them out, clip the band at the data
            positive = mean > 0
            floor = np.nanmin(mean[positive]) if np.any(positive) else 1.0
            mean = np.where(positive, mean, np.nan)
            lo = np.where(positive, np.maximum(lo, floor * 1e-3), np.nan)
            hi = np.where(positive, hi, np.nan)
        xs = self.cost(x)
        if xs.ndim > 1:  # a counter of a sweep: (G, R)
            xs = xs[grid_index]
        (line,) = ax.plot(xs, mean, label=label, **kw)
        ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_yscale("log" if logy else "linear")
        ax.set_xlabel("iteration $k$" if x == "step" else metric_label(x))
        ax.set_ylabel(metric_label(name))
        return ax

    # -- persistence ------------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write the trace atomically to ``path`` (``.npz``); returns the path."""
        path = Path(path)
        if path.is_dir() or not path.name or path.name in (".", ".."):
            raise ValueError(f"Trace.save needs a file name, e.g. {str(path / 'trace.npz')!r}; "
                             f"got the directory {str(path)!r}")
        if path.suffix != ".npz":
            path = path.with_suffix(".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {
            "steps": self.steps,
            "diverged": self.diverged,
            "final_models": self.final_models,
            **{f"metrics/{k}": v for k, v in self.metrics.items()},
            **{f"observed/{k}": v for k, v in _flatten(self.observed).items()},
        }
        meta = {"format_version": FORMAT_VERSION, **self.meta}
        arrays["__meta__"] = np.array(json.dumps(meta, default=_json_default))
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp.npz")
        os.close(fd)
        try:
            np.savez_compressed(tmp, **arrays)
            os.chmod(tmp, _umask_mode())  # mkstemp's 0600 would outlive the rename
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        return path

    @classmethod
    def load(cls, path) -> "Trace":
        """Read a trace written by :meth:`save` (no pickle: arrays and JSON only).

        Raises:
          FileNotFoundError: no file at ``path``.
          ValueError: the file is not a trace (corrupted, truncated, or another kind of file), or
            its ``format_version`` is not one this version of jaxdp reads.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no trace file at {str(path)!r}")
        try:
            return cls._read(path)
        except (ValueError, OSError, KeyError, EOFError, json.JSONDecodeError) as e:
            if isinstance(e, _FormatError):
                raise ValueError(str(e)) from None
            raise ValueError(f"{str(path)!r} is not a readable jaxdp trace (corrupted, truncated "
                             f"or not written by Trace.save): {type(e).__name__}") from None

    @classmethod
    def _read(cls, path: Path) -> "Trace":
        import zipfile

        try:
            archive = np.load(path, allow_pickle=False)
        except zipfile.BadZipFile as e:
            raise ValueError("not a zip archive") from e
        if not hasattr(archive, "files"):
            raise ValueError("a single array, not an .npz archive")
        with archive as f:
            meta = json.loads(str(f["__meta__"]))
            version = meta.get("format_version")
            if version != FORMAT_VERSION:
                raise _FormatError(f"{str(path)!r} has trace format_version {version!r}; this "
                                   f"version of jaxdp reads format_version {FORMAT_VERSION}")
            metrics = {k[len("metrics/"):]: f[k] for k in f.files if k.startswith("metrics/")}
            observed = {k[len("observed/"):]: f[k] for k in f.files if k.startswith("observed/")}
            return cls(
                metrics=metrics,
                steps=f["steps"],
                diverged=f["diverged"],
                final_models=f["final_models"],
                observed=_unflatten(observed),
                meta=meta,
            )

    # -- internals --------------------------------------------------------------------------------
    def _metric(self, name: str) -> np.ndarray:
        if name not in self.metrics:
            raise KeyError(f"unknown metric {name!r}; this trace has {sorted(self.metrics)}")
        return self.metrics[name]

    def _ok_mask(self) -> np.ndarray:
        return ~self.diverged[..., None]


class _FormatError(ValueError):
    """A trace file of a format version this jaxdp does not read."""


def _short(value) -> str:
    """A grid value for a label: ``0.01``, ``[0.1, 0.2]``."""
    value = np.asarray(value)
    if value.ndim == 0:
        return f"{value.item():g}" if value.dtype.kind in "fc" else str(value.item())
    return "[" + ", ".join(f"{v:g}" for v in value.ravel()[:4]) + (", ...]" if value.size > 4
                                                                       else "]")


def stack_traces(traces: list[Trace]) -> Trace:
    """Concatenate traces of the same configuration along the seed axis."""
    first = traces[0]
    cat = lambda arrs: np.concatenate(arrs, axis=0)  # noqa: E731
    return Trace(
        metrics={k: cat([t.metrics[k] for t in traces]) for k in first.metrics},
        steps=first.steps,
        diverged=cat([t.diverged for t in traces]),
        final_models=cat([t.final_models for t in traces]),
        observed=_unflatten({k: cat([_flatten(t.observed)[k] for t in traces])
                             for k in _flatten(first.observed)}),
        meta=first.meta,
    )


def _flatten(tree: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = np.asarray(v)
    return out


def _unflatten(flat: dict) -> dict:
    out: dict = {}
    for key, v in flat.items():
        node = out
        *parents, leaf = key.split("/")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = v
    return out


def _json_default(o):
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.floating, np.integer, np.bool_)):
        return o.item()
    return str(o)


def _normal_quantile(p: float) -> float:
    """Inverse standard normal CDF by bisection on ``math.erf`` (no scipy needed)."""
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


class _quiet_nan_warnings:
    """Silence numpy's all-NaN slice warnings (every seed of a grid point diverged)."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", category=RuntimeWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)
