"""Keys of a resumable block (``run(..., resume_dir=...)``): a hash of everything that determines a
block's result, functions keyed by their code, so a changed metrics function never reuses a stale
block."""
from __future__ import annotations

import hashlib
import json

import jax
import numpy as np


def _fingerprint(algorithm, problem, network, params, kw) -> str:
    """A hash of everything that determines a block's result (data and graph included)."""
    h = hashlib.sha256()
    metric = kw.get("metrics")
    h.update(json.dumps({
        "algorithm": algorithm.config(),
        "params": {k: np.asarray(v).tolist() for k, v in params.items()},
        "steps": kw["steps"], "record_every": kw["record_every"], "observe": kw["observe"],
        "metrics": None if metric is None else function_key(metric),
        "jax_x64": bool(jax.config.jax_enable_x64),
    }, sort_keys=True, default=str).encode())
    for leaf in jax.tree.leaves((problem, network)):
        h.update(np.ascontiguousarray(np.asarray(leaf)).tobytes())
    return h.hexdigest()[:20]


def function_key(fn) -> str:
    """A key that changes when a function's behaviour can: its qualified name and a hash of its
    bytecode, constants (nested functions included), defaults and closure values. Globals it
    reads are not keyed. A callable object without code is keyed by its type and attributes."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"{type(fn).__qualname__}:{_value_key(getattr(fn, '__dict__', repr(fn)))}"
    h = hashlib.sha256(_code_bytes(code))
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    for extra in (fn.__defaults__, fn.__kwdefaults__, cells):
        h.update(_value_key(extra).encode())
    return f"{fn.__qualname__}:{h.hexdigest()[:16]}"


def _code_bytes(code) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode()]
    for const in code.co_consts:
        parts.append(_code_bytes(const) if hasattr(const, "co_code") else repr(const).encode())
    return b"".join(parts)


def _value_key(value) -> str:
    """A stable text for a default or closure value: functions by :func:`function_key`, arrays
    by their bytes, containers item by item, others by ``repr`` without memory addresses."""
    import re

    if callable(value) and hasattr(value, "__code__"):
        return function_key(value)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        arr = np.asarray(value)
        return hashlib.sha256(arr.tobytes() + str((arr.shape, arr.dtype)).encode()).hexdigest()
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_value_key(v) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: repr(kv[0]))
        return "{" + ",".join(f"{k!r}:{_value_key(v)}" for k, v in items) + "}"
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))

