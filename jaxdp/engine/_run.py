"""Host wrappers around :func:`simulate`: ``run`` (many seeds) and ``sweep`` (seeds × a Params grid).

Both validate inputs on the host, vmap the pure core over seeds (and grid points), shard the seed axis
over all local devices, split the iterations into a few jitted chunks that carry the state between
them (a progress bar advances per chunk; the result equals one call), compile ahead of time so that
compile and run seconds are reported apart, and return a :class:`Trace`.
"""
from __future__ import annotations

import itertools
import math
import os
import platform
import time
from pathlib import Path
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxdp._compiler import compiler_options
from jaxdp._version import __version__
from jaxdp.engine._checks import (
    _check_int,
    _raise_if_dtype_mismatch,
    _raise_if_per_agent,
    _seed_list,
    _validate,
)
from jaxdp.engine._fingerprint import _fingerprint
from jaxdp.engine._simulate import evaluate_metrics, init_carry, simulate
from jaxdp.engine._trace import Trace, diverged_seeds, stack_traces
from jaxdp.network._spectral import EXACT_MAX_AGENTS

SEED_AXIS = "seeds"
AGENT_AXIS = "agents"
SHARDS = (SEED_AXIS, AGENT_AXIS)  # what run(shard=...) may split over the devices


def run(
    algorithm,
    problem,
    network,
    params=None,
    *,
    steps: int,
    seeds: int | Sequence[int] = 1,
    record_every: int | None = None,
    metrics=None,
    observe: bool = False,
    progress: bool = True,
    chunks: int | None = None,
    devices=None,
    shard: str = "seeds",
    resume_dir=None,
    seeds_per_block: int | None = None,
    memory_budget: float | None = None,
) -> Trace:
    """Run ``algorithm`` for ``steps`` iterations on every seed; returns a :class:`Trace`.

    Args:
      algorithm: an :class:`~jaxdp.algorithms.Algorithm`.
      problem: a :class:`~jaxdp.problems.Problem`.
      network: a :class:`~jaxdp.network.Network` or a time-varying network process.
      params: the algorithm's Params; ``None`` = ``algorithm.default_params()``.
      steps: number of iterations K.
      seeds: a count S (seeds ``0..S-1``) or an explicit list of integer seeds.
      record_every: metrics are taken every this many steps (must divide ``steps``); default:
        about 100 records.
      metrics: ``fn(problem, models) -> dict`` of scalars, or ``fn(problem, models, state)``;
        default ``problem.metrics``.
      observe: keep every step's messages and models (memory O(S·K·N·d)).
      progress: show a progress bar over chunks.
      chunks: number of jitted chunks (default: 10 when ``progress`` else 1).
      devices: devices to shard over (default: all local devices, but at most one per 8 seeds;
        with ``shard="agents"`` the most of them whose count divides N).
      shard: ``"seeds"`` splits the seeds over the devices (each holds the whole problem and
        network); ``"agents"`` splits the agent axis of the problem's data, of the network's
        per-agent arrays and of the state (every device runs every seed on N/D agents; XLA
        moves what a step reads across the split, e.g. the neighbours' models): for a graph
        whose data or state do not fit one device, or one seed on many CPU cores. The numbers
        do not depend on it (up to float rounding of sums over agents).
      resume_dir: make the run resumable: seeds are computed in blocks of ``seeds_per_block``,
        each block's trace is saved in this folder as soon as it is done, and a rerun with the
        same configuration loads finished blocks instead of recomputing them.
      seeds_per_block: block size for ``resume_dir`` (default: all seeds in 8 blocks).
      memory_budget: bytes one device may hold for the run's buffers (default: 80 % of the
        device's memory where the backend reports it, GPUs; else half the host's memory shared
        by the local devices). When a chunk's compiled program (its carry in and out, records,
        observed messages and XLA's temporaries) needs more, the run is split: more chunks
        first when ``observe`` holds the steps' messages, then sequential batches of seeds.
        The plan covers the run; XLA:GPU's autotuner may take about as much again while
        compiling (measured on an H200: a CNN's 24.5 GB plan, 49 GB peak before the first
        step); ``XLA_FLAGS=--xla_gpu_autotune_level=0`` avoids that peak.
        The numbers do not depend on the split (up to float rounding: other batch shapes
        vectorize reductions differently).

    Returns:
      A :class:`Trace` with metrics ``(S, R+1)``, the first record taken before step 0.

    Raises:
      ValueError: bad ``steps``, ``seeds``, ``record_every``, ``chunks`` or Params values, an
        empty problem, or a metric function that returns a non-scalar.
      TypeError: a Params leaf that is not a number (e.g. a string).
    """
    params = algorithm.default_params() if params is None else params
    _validate(algorithm, problem, network, [params])
    return _dispatch(algorithm, problem, network, params, None, resume_dir, seeds_per_block,
                     steps=steps, seeds=seeds, record_every=record_every, metrics=metrics,
                     observe=observe, progress=progress, chunks=chunks, devices=devices,
                     shard=shard, memory_budget=memory_budget)


def sweep(
    algorithm,
    problem,
    network,
    params_grid,
    *,
    steps: int,
    seeds: int | Sequence[int] = 1,
    record_every: int | None = None,
    metrics=None,
    observe: bool = False,
    progress: bool = True,
    chunks: int | None = None,
    devices=None,
    shard: str = "seeds",
    resume_dir=None,
    seeds_per_block: int | None = None,
    memory_budget: float | None = None,
) -> Trace:
    """Like :func:`run` over a grid of Params: every leaf of ``params_grid`` has a leading axis G.

    Build the grid with :func:`grid`. All grid points share the same seeds (common random numbers),
    so differences between grid points are not blurred by different noise draws.

    Returns:
      A :class:`Trace` with metrics ``(S, G, R+1)`` and ``meta["grid"]`` holding the grid values.
    """
    sizes = {np.shape(v)[0] if np.ndim(v) else None for v in params_grid.values()}
    if None in sizes or len(sizes) != 1:
        raise ValueError(
            "every leaf of params_grid needs the same leading grid axis; build it with "
            f"jaxdp.grid(...). Leading sizes found: {sorted(map(str, sizes))}"
        )
    size = sizes.pop()
    points = [jax.tree.map(lambda a, g=g: a[g], params_grid) for g in range(size)]
    _validate(algorithm, problem, network, points)
    return _dispatch(algorithm, problem, network, params_grid, size, resume_dir, seeds_per_block,
                     steps=steps, seeds=seeds, record_every=record_every, metrics=metrics,
                     observe=observe, progress=progress, chunks=chunks, devices=devices,
                     shard=shard, memory_budget=memory_budget)


def grid(params, **axes):
    """The Cartesian product of ``axes`` over ``params``: leaves with a leading axis G.

    Example:
      >>> g = grid(DGDParams(), alpha=[0.01, 0.05])   # G = 2; other fields repeated
    """
    unknown = set(axes) - set(params.keys())
    if unknown:
        raise ValueError(f"grid: {sorted(unknown)} are not fields of {type(params).__name__} "
                         f"(fields: {sorted(params.keys())})")
    for name, values in axes.items():
        if isinstance(values, (str, bytes)) or not np.iterable(values):
            raise ValueError(f"grid: {name}={values!r} must be a list of values (one grid point "
                             f"each), e.g. {name}=[{values!r}]")
    names = list(axes)
    combos = list(itertools.product(*(list(axes[n]) for n in names)))
    if not combos:
        raise ValueError("grid: every axis needs at least one value")
    columns = {n: [c[i] for c in combos] for i, n in enumerate(names)}
    leaves = {}
    for field, value in params.items():
        if field in columns:
            leaves[field] = jnp.stack([jnp.asarray(v) for v in columns[field]])
        else:
            leaves[field] = jnp.broadcast_to(jnp.asarray(value), (len(combos),) + np.shape(value))
    return type(params)(**leaves)


# ---------------------------------------------------------------------------------------------
def _dispatch(algorithm, problem, network, params, grid_size, resume_dir, seeds_per_block, **kw):
    if kw["shard"] not in SHARDS:
        raise ValueError(f"shard must be one of {SHARDS}; got {kw['shard']!r}")
    if kw["shard"] == AGENT_AXIS and jax.process_count() > 1:
        raise ValueError("shard='agents' splits the agents over one process's devices; with "
                         f"{jax.process_count()} processes (jax.distributed) shard the seeds")
    if resume_dir is None:
        if jax.process_count() > 1:
            return _execute_multiprocess(algorithm, problem, network, params, grid_size, **kw)
        return _execute(algorithm, problem, network, params, grid_size, **kw)
    seed_list = _seed_list(kw.pop("seeds"))
    block = seeds_per_block or max(1, math.ceil(len(seed_list) / 8))
    if block < 1:
        raise ValueError(f"seeds_per_block must be >= 1; got {seeds_per_block}")
    folder = Path(resume_dir) / _fingerprint(algorithm, problem, network, params, kw)
    folder.mkdir(parents=True, exist_ok=True)
    blocks = [seed_list[i:i + block] for i in range(0, len(seed_list), block)]
    paths = [folder / f"seeds_{b[0]}-{b[-1]}_{len(b)}.npz" for b in blocks]
    loaded = sum(path.exists() for path in paths)
    programs = {}  # blocks of one size share their compiled programs
    for b, path in list(zip(blocks, paths))[jax.process_index()::jax.process_count()]:
        if not path.exists():  # with several processes, each computes every P-th block
            _execute(algorithm, problem, network, params, grid_size, seeds=b, programs=programs,
                     **kw).save(path)
    if jax.process_count() > 1:  # wait for the other processes' blocks (shared filesystem)
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices("jaxdp resumable blocks")
    traces = [Trace.load(path) for path in paths]
    out = stack_traces(traces)
    out.meta.update(
        seeds=seed_list, resume_dir=str(folder), blocks=len(traces), blocks_loaded=loaded,
        n_diverged=int(np.sum(out.diverged)),
        compile_seconds=sum(t.meta["compile_seconds"] for t in traces),
        run_seconds=sum(t.meta["run_seconds"] for t in traces))
    return out


def _execute_multiprocess(algorithm, problem, network, params, grid_size, *, seeds, **kw):
    """Each of the P processes (``jax.distributed``) runs a contiguous slice of the seeds on its
    own devices; the slices are gathered (``process_allgather``) into one Trace on every process."""
    from jax.experimental import multihost_utils

    seed_list = _seed_list(seeds)
    n_proc, me = jax.process_count(), jax.process_index()
    per = math.ceil(len(seed_list) / n_proc)
    padded = seed_list + [max(seed_list) + 1 + i for i in range(per * n_proc - len(seed_list))]
    mine = _execute(algorithm, problem, network, params, grid_size,
                    seeds=padded[me * per:(me + 1) * per], **kw)
    local = {"metrics": mine.metrics, "diverged": mine.diverged,
             "final_models": mine.final_models, "observed": mine.observed}
    gathered = multihost_utils.process_allgather(local)  # leaves: (P, per, ...)
    merge = lambda a: np.asarray(a).reshape((-1,) + np.shape(a)[2:])[:len(seed_list)]  # noqa
    merged = jax.tree.map(merge, gathered)
    meta = dict(mine.meta, seeds=seed_list, processes=n_proc,
                n_diverged=int(np.sum(merged["diverged"])))
    return Trace(metrics=merged["metrics"], steps=mine.steps, diverged=merged["diverged"],
                 final_models=merged["final_models"], observed=merged["observed"], meta=meta)


def _auto_devices(n_seeds: int, min_seeds_per_device: int = 8) -> list:
    """All local devices, but no more than one per ``min_seeds_per_device`` seeds.

    Sharding a handful of seeds costs more in padding and synchronisation than it saves: on 2 CPU
    cores one seed of the DGD benchmark runs 3x slower on 2 devices than on one, 16 seeds 1.3x
    faster, 256 seeds 1.6x faster (benchmarks/README.md).
    """
    local = jax.local_devices()
    return local[: max(1, min(len(local), n_seeds // min_seeds_per_device))]


def _agent_devices(devices, n_agents: int) -> list:
    """The devices to split ``n_agents`` over: ``devices`` when given (their count must divide
    N: XLA splits an axis in equal parts), else the most local devices whose count divides N."""
    if devices:
        devices = list(devices)
        if n_agents % len(devices):
            raise ValueError(
                f"shard='agents' splits the N = {n_agents} agents in equal parts, so the device "
                f"count must divide N; got {len(devices)} devices (pass devices= a list whose "
                "length divides N, or leave it to pick the most that do)")
        return devices
    local = jax.local_devices()
    return local[:max(c for c in range(1, len(local) + 1) if n_agents % c == 0)]


def _default_record_every(steps: int) -> int:
    if steps <= 200:
        return 1
    return next(r for r in range(math.ceil(steps / 200), steps + 1) if steps % r == 0)


def _chunk_plan(records: int, chunks: int) -> list[int]:
    """Records per chunk: equal sizes plus one remainder (at most two compilations)."""
    chunks = max(1, min(chunks, records))
    size = math.ceil(records / chunks)
    plan = [size] * (records // size)
    if records % size:
        plan.append(records % size)
    return plan


def _execute(algorithm, problem, network, params, grid_size, *, steps, seeds, record_every,
             metrics, observe, progress, chunks, devices, shard=SEED_AXIS, memory_budget=None,
             programs=None) -> Trace:
    _check_int("steps", steps)
    _check_int("record_every", record_every, allow_none=True)
    _check_int("chunks", chunks, allow_none=True)
    record_every = _default_record_every(steps) if record_every is None else int(record_every)
    if steps % record_every:
        raise ValueError(
            f"record_every must divide steps; got steps={steps}, record_every={record_every}")
    seed_list = _seed_list(seeds)
    if shard == AGENT_AXIS:
        devices = _agent_devices(devices, network.n_agents)
    else:
        devices = list(devices or _auto_devices(len(seed_list)))
    unit = len(devices) if shard == SEED_AXIS else 1  # a seed batch is a multiple of this
    budget = _memory_budget(devices) if memory_budget is None else float(memory_budget)
    if budget <= 0:
        raise ValueError(f"memory_budget must be a positive number of bytes; got {memory_budget}")
    programs = {} if programs is None else programs
    program = programs.get((shard, *devices))
    if program is None:
        program = programs[(shard, *devices)] = _Program(
            algorithm, problem, network, params, grid_size, record_every, metrics, observe,
            Mesh(np.array(devices), (shard,)))

    t0 = time.perf_counter()
    records = steps // record_every
    n_chunks = min(records, chunks or (10 if progress else 1))
    batch = len(seed_list) + (-len(seed_list)) % unit
    while True:  # shrink until one chunk's program fits the budget
        plan = _chunk_plan(records, n_chunks)
        compiled = _compile(program, batch, sorted(set(plan)))
        need = max(_program_bytes(c) for c in compiled.values())
        if need <= budget:
            break
        if observe and n_chunks < records:  # the steps' messages dominate: shorter chunks
            n_chunks = min(records, 2 * n_chunks)
        elif batch > unit:  # then fewer seeds at a time
            fit = max(1, int(batch * budget / need / unit))
            batch = min(batch - unit, fit * unit)
        else:
            raise ValueError(
                f"{'one seed per device' if unit > 1 else 'one seed'} needs "
                f"{need / 2**20:.1f} MiB per device, more than "
                f"memory_budget = {budget / 2**20:.1f} MiB: raise the budget, record less often "
                "(record_every) or run without observe")
    compile_seconds = time.perf_counter() - t0
    costs = _costs_per_step(algorithm, problem, network, params, grid_size)  # once it compiled

    batches = [seed_list[i:i + batch] for i in range(0, len(seed_list), batch)]
    bar = _progress_bar(steps * len(batches), progress, algorithm.name)
    t1 = time.perf_counter()
    outs = [program.run(compiled, plan, b + [max(b) + 1 + i for i in range(batch - len(b))],
                        bar, record_every) for b in batches]
    run_seconds = time.perf_counter() - t1
    if bar is not None:
        bar.close()

    cat = lambda *a: np.concatenate(a, axis=0)  # noqa: E731
    metrics_np, models, observed_np = (jax.tree.map(cat, *parts) for parts in zip(*outs))
    keep = slice(0, len(seed_list))
    metrics_np, models = {k: v[keep] for k, v in metrics_np.items()}, models[keep]
    observed_np = jax.tree.map(lambda a: a[keep], observed_np)
    diverged = diverged_seeds(models, metrics_np)

    meta = _metadata(algorithm, problem, network, params, grid_size, seed_list, steps,
                     record_every, devices, compile_seconds, run_seconds, diverged)
    meta.update(costs_per_step=costs, seed_batches=len(batches), chunks=len(plan), shard=shard,
                memory_per_device_mib=need / 2**20, memory_budget_mib=budget / 2**20)
    return Trace(metrics=metrics_np, steps=np.arange(0, steps + 1, record_every),
                 diverged=diverged, final_models=models, observed=observed_np, meta=meta)


def _compile(program, batch, lengths) -> dict:
    """``program.compile``, with a failure that a precision mismatch or per-agent Params values
    explain said so."""
    try:
        return program.compile(batch, lengths)
    except (TypeError, ValueError) as e:  # broadcasting: TypeError, or ValueError under rank
        #                                   promotion "raise"; scan: mixed carry dtypes
        _raise_if_dtype_mismatch(program.problem, program.network, e)
        _raise_if_per_agent(program.algorithm, program.params, program.grid_size, e)
        raise


def _costs_per_step(algorithm, problem, network, params, grid_size) -> dict[str, float]:
    """The algorithm's static per-step costs (host, before compiling): at the first grid point
    of a sweep (the counts depend on shapes and static configuration, not on Params values)."""
    import warnings

    point = params if grid_size is None else jax.tree.map(lambda a: a[0], params)
    try:
        found = algorithm.costs_per_step(problem, network, point)
    except Exception as e:  # noqa: BLE001 — metadata: the run goes on without cost axes
        warnings.warn(f"{algorithm.name}: costs_per_step failed ({type(e).__name__}: {e}); the "
                      "trace has no cost axes (override costs_per_step to declare them)",
                      stacklevel=3)
        return {}
    return {k: float(v) for k, v in found.items()}


class _Program:
    """The compiled pieces of a run for one batch size: ``start`` (init + first record) and one
    chunk program per chunk length; seeds (axis 0) sharded over the mesh, the carry donated
    between chunks. The problem and the network are arguments, not closed-over constants: one
    copy per device serves every seed, and the memory analysis counts them."""

    def __init__(self, algorithm, problem, network, params, grid_size, record_every, metrics,
                 observe, mesh):
        self.algorithm, self.problem, self.network = algorithm, problem, network
        self.params, self.grid_size, self.record_every = params, grid_size, record_every
        self.metrics, self.observe = metrics, observe
        self.by_agents = mesh.axis_names == (AGENT_AXIS,)
        # by agents the seeds are replicated, and the data's and the carry's agent axes split
        self.sharding = NamedSharding(mesh, PartitionSpec(*[] if self.by_agents else [SEED_AXIS]))
        if self.by_agents:
            self.problem, self.network = jax.device_put(
                (problem, network), self._agent_shardings((problem, network), batch_axes=0))
        self._compiled = {}  # (batch, chunk lengths) -> programs: reused by resumable blocks

    def _agent_shardings(self, tree, batch_axes: int):
        """Per leaf of ``tree``: split over the mesh the axis after ``batch_axes`` leading batch
        axes where it has the agents' length N or the directed links' 2E (when the devices
        divide it: per-link work such as a channel's noise is split too), else replicated. A
        layout only: a leaf whose axis has that length by coincidence is split too, which costs
        transfers, not correctness."""
        mesh = self.sharding.mesh
        lengths = {self.network.n_agents}
        links = 2 * getattr(self.network, "n_edges", 0)
        if links and links % mesh.size == 0:
            lengths.add(links)

        def place(leaf):
            shape = np.shape(leaf)
            if len(shape) > batch_axes and shape[batch_axes] in lengths:
                return NamedSharding(mesh, PartitionSpec(*[None] * batch_axes, AGENT_AXIS))
            return NamedSharding(mesh, PartitionSpec())
        return jax.tree.map(place, tree)

    def _jit(self, fn, *args, **options):
        """``jax.jit(fn)`` lowered at ``args`` and compiled with jaxdp's compiler options for
        the mesh's platform (:func:`jaxdp.compiler_options`); by agents, the outputs' agent (and
        link) axes, after the seed and grid axes, split as the inputs' are, so that a chunk's
        carry comes out as the next chunk takes it in."""
        if self.by_agents:
            options["out_shardings"] = self._agent_shardings(
                jax.eval_shape(fn, *args), 1 + (self.grid_size is not None))
        kind = self.sharding.mesh.devices.flat[0].platform
        return jax.jit(fn, compiler_options=compiler_options(kind),
                       **options).lower(*args).compile()

    def _over_batch(self, fn):
        """Map ``fn(params, key, carry, problem, network)`` over seeds (axis 0) and the grid
        (axis 1); problem and network are shared."""
        if self.grid_size is not None:
            fn = jax.vmap(fn, in_axes=(0, None, 0, None, None))
        return jax.vmap(fn, in_axes=(None, 0, 0, None, None))

    def _start(self, p, key, _, problem, network):
        carry = init_carry(self.algorithm, problem, network, p, key)
        return carry, evaluate_metrics(self.metrics, self.algorithm, problem, carry.state)

    def _chunk(self, n_steps):
        def fn(p, key, carry, problem, network):
            return simulate(self.algorithm, problem, network, p, key, steps=n_steps,
                            record_every=self.record_every, metrics=self.metrics,
                            observe=self.observe, carry=carry)
        return fn

    def keys(self, seeds):
        return jax.device_put(jax.vmap(jax.random.key)(jnp.asarray(seeds, jnp.uint32)),
                              self.sharding)

    def compile(self, batch: int, lengths) -> dict:
        key = (batch, tuple(lengths))
        if key not in self._compiled:
            self._compiled[key] = self._compile(batch, lengths)
        return self._compiled[key]

    def _compile(self, batch: int, lengths) -> dict:
        keys = self.keys(list(range(batch)))
        dummy = jnp.zeros((batch,) + ((self.grid_size,) if self.grid_size else ()))
        data = (self.problem, self.network)
        start_fn, start_args = self._over_batch(self._start), (self.params, keys, dummy, *data)
        start = self._jit(start_fn, *start_args, out_shardings=self.sharding)
        carry_shapes = jax.tree.map(  # the carry as start returns it, without computing it
            lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding),
            start.out_info[0])
        compiled = {"start": start}
        for n_rec in lengths:
            compiled[n_rec] = self._jit(self._over_batch(self._chunk(n_rec * self.record_every)),
                                        self.params, keys, carry_shapes, *data, donate_argnums=2)
        return compiled

    def run(self, compiled, plan, seeds, bar, record_every):
        """One batch of seeds through every chunk; host arrays ``(metrics, models, observed)``."""
        keys = self.keys(seeds)
        dummy = jnp.zeros((len(seeds),) + ((self.grid_size,) if self.grid_size else ()))
        data = (self.problem, self.network)
        carry, first = compiled["start"](self.params, keys, dummy, *data)
        records, observed = [jax.tree.map(lambda a: np.asarray(a)[..., None], first)], []
        for n_rec in plan:
            carry, rec, seen = compiled[n_rec](self.params, keys, carry, *data)
            records.append(jax.device_get(rec))
            observed.append(jax.device_get(seen))  # to the host: device memory stays flat
            if bar is not None:
                bar.update(n_rec * record_every)
        step_axis = 1 if self.grid_size is None else 2
        models_fn = jax.vmap(self.algorithm.models)  # models() is written for one replicate
        if self.grid_size is not None:
            models_fn = jax.vmap(models_fn)
        metrics = {k: np.concatenate([np.asarray(r[k]) for r in records], axis=-1)
                   for k in records[0]}
        models = np.asarray(models_fn(carry.state))
        seen = (jax.tree.map(lambda *a: np.concatenate(a, axis=step_axis), *observed)
                if self.observe else {})
        return metrics, models, seen


def _program_bytes(compiled) -> int:
    """Device bytes a compiled program holds at once: arguments + outputs + temporaries, less
    the donated (aliased) buffers. XLA's CPU backend reports no temporaries."""
    stats = compiled.memory_analysis()
    if stats is None:
        return 0
    return (stats.argument_size_in_bytes + stats.output_size_in_bytes
            + stats.temp_size_in_bytes - stats.alias_size_in_bytes)


def _memory_budget(devices) -> float:
    """80 % of a device's memory where the backend reports it (GPUs), else half the host's
    physical memory shared by the local CPU devices."""
    stats = devices[0].memory_stats() or {}
    if "bytes_limit" in stats:
        return 0.8 * stats["bytes_limit"]
    host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return 0.5 * host / len(devices)


def _progress_bar(total: int, enabled: bool, name: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"{name}", unit="step", leave=False)


def _metadata(algorithm, problem, network, params, grid_size, seeds, steps, record_every,
              devices, compile_seconds, run_seconds, diverged) -> dict:
    def summary(obj, **options):
        fn = getattr(obj, "summary", None)
        return fn(**options) if fn is not None else {"type": type(obj).__name__}

    leaves = {k: np.asarray(v).tolist() for k, v in params.items()}
    agent_steps = len(seeds) * (grid_size or 1) * steps * network.n_agents
    # the spectra only where they are exact (dense): Lanczos on a large graph costs more host
    # time than the run (network.summary() gives them on request)
    exact = network.n_agents <= EXACT_MAX_AGENTS
    return {
        "algorithm": algorithm.config(),
        "params": leaves,
        "grid_size": grid_size,
        "network": summary(network, **({} if exact else {"spectra": False})),
        "problem": summary(problem),
        "seeds": seeds,
        "steps": steps,
        "record_every": record_every,
        "n_diverged": int(np.sum(diverged)),
        "compile_seconds": compile_seconds,
        "run_seconds": run_seconds,
        "agent_steps_per_second": agent_steps / max(run_seconds, 1e-12),
        "devices": [str(d) for d in devices],
        "dtype": str(jnp.asarray(problem.features).dtype),
        "versions": {"jaxdp": __version__, "jax": jax.__version__,
                     "numpy": np.__version__, "python": platform.python_version()},
    }
