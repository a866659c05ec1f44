"""Every noise path's releases, read at the one mechanism they all call (issue 22's gate).

Every private algorithm of the registry and every channel adds its noise with
:func:`jaxdp.privacy.add_noise` (``v + s·z`` for the float sampler, the lattice release
``γ(round(v/γ) + K)`` for the default one). :func:`tapped_run` runs one replicate exactly as the
engine does (:func:`jaxdp.engine._simulate.step_once`), op by op (``jax.disable_jit``: a
``lax.scan`` of a step runs as a Python loop, so every call is seen with its values), with
``add_noise`` replaced, in every module that bound it, by a :class:`Tap` that records each call's
pre-noise value ``v``, scale ``s`` and release ``r`` (computed by the library's own ``add_noise``,
jitted, as the attacker of :mod:`tests.support_attack` recomputes it). The samplers' draws are
compiled too (:func:`_draws`, :func:`_lattice_draws`), as in every real run. Exceptions: the
float per-message Gaussian channel draws its messages given their receiver sums and the
objective-perturbation baselines put their noise in a dual, not in ``add_noise`` — their messages
are then not a function of the recorded releases (:func:`messages_follow_the_releases`), which a
finite ε must not allow.

Replay (the neighbour's support given the transcript): the run on the neighbouring data set is
driven with the same key and every ``add_noise`` call returns the first run's release instead of
its own, so the recorded ``v'`` is the neighbour's pre-noise value *given the first run's
releases* — the conditional an attacker of adaptive composition tests the release against. A
call whose shape or law differs from the first run's (data-dependent control flow) raises.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.engine._simulate import init_carry, step_once
from jaxdp.privacy import _mechanisms

_ADD_NOISE = _mechanisms.add_noise


@dataclasses.dataclass(frozen=True)
class Release:
    """One ``add_noise`` call: flat ``v``, ``s`` (broadcast to ``r``) and ``r``, all in ``r``'s
    dtype, with the law and sampler."""

    v: np.ndarray
    scale: np.ndarray
    r: np.ndarray
    law: str
    sampler: str

    @property
    def dtype(self) -> str:
        return self.r.dtype.name


@functools.partial(jax.jit, static_argnames=("law", "sampler"))
def _release(v, scale, z, *, law, sampler):
    return _ADD_NOISE(v, scale, z, law=law, sampler=sampler)


class Tap:
    """A stand-in for ``add_noise`` that records every call (and, given ``replay``, returns the
    replayed run's releases in order)."""

    def __init__(self, replay: list[Release] | None = None):
        self.releases: list[Release] = []
        self.replay = replay

    def __call__(self, v, scale, z, *, law: str = "gaussian", sampler: str = "lattice"):
        if any(isinstance(a, jax.core.Tracer) for a in (v, scale, z)):
            raise TypeError("add_noise called under a transformation the tap cannot see through "
                            "(vmap or an inner jit): its releases cannot be recorded")
        with jax.disable_jit(False):
            out = _release(v, scale, z, law=law, sampler=sampler)
        dtype = out.dtype
        flat = lambda a: np.broadcast_to(  # noqa: E731
            np.asarray(jnp.asarray(a).astype(dtype)), out.shape).ravel()
        self.releases.append(Release(flat(v), flat(scale), np.asarray(out).ravel(), law, sampler))
        if self.replay is None:
            return out
        i = len(self.releases) - 1
        if i >= len(self.replay):
            raise AssertionError(f"the neighbour's run made more than {len(self.replay)} releases")
        given = self.replay[i]
        if given.r.shape != self.releases[-1].r.shape or (given.law, given.sampler) != (
                law, sampler):
            raise AssertionError(f"release {i} differs in shape or law between the neighbours")
        return jnp.asarray(given.r.reshape(out.shape), dtype)


_DRAWS = _mechanisms._draws
_compiled_draws = jax.jit(_DRAWS, static_argnums=(1, 2, 3))


def _draws(key, shape, dtype, from_tail):
    """The float sampler's draws compiled, as every run compiles them (op by op, ``ndtri`` and
    ``log`` differ from the compiled ones by a few ulps, and the attacker recomputes the
    compiled draws)."""
    with jax.disable_jit(False):
        return _compiled_draws(key, tuple(shape), dtype, from_tail)


_LATTICE_DRAWS = _mechanisms.lattice_draws
_compiled_lattice_draws = jax.jit(_LATTICE_DRAWS, static_argnums=(1, 2), static_argnames="law")


def _lattice_draws(key, shape, dtype=None, *, law="gaussian"):
    """The lattice sampler's draws compiled, as every run compiles them: integer table lookups
    and an exact scaling by ``1/R``, so the same ``K/R`` as op by op, from one program per shape
    that every tapped run shares instead of some hundred operations dispatched one at a time."""
    with jax.disable_jit(False):
        return _compiled_lattice_draws(key, tuple(shape), None if dtype is None
                                       else jnp.dtype(dtype), law=law)


@contextlib.contextmanager
def tapping(tap: Tap):
    """``add_noise`` replaced by ``tap`` in every loaded ``jaxdp`` module that bound it, and the
    float and lattice draws compiled (:func:`_draws`, :func:`_lattice_draws`)."""
    patched = [m for name, m in list(sys.modules.items())
               if name.startswith("jaxdp") and getattr(m, "add_noise", None) is _ADD_NOISE]
    try:
        for module in patched:
            module.add_noise = tap
        _mechanisms._draws = _draws
        _mechanisms.lattice_draws = _lattice_draws
        yield tap
    finally:
        for module in patched:
            module.add_noise = _ADD_NOISE
        _mechanisms._draws = _DRAWS
        _mechanisms.lattice_draws = _LATTICE_DRAWS


@dataclasses.dataclass(frozen=True)
class Run:
    """A tapped run: its ``add_noise`` calls in order and every step's messages (numpy)."""

    releases: list[Release]
    messages: list[dict]


def tapped_run(alg, problem, network, params, steps: int, seed: int = 0,
               replay: list[Release] | None = None) -> Run:
    """``steps`` steps of one replicate, op by op, as the engine steps it."""
    key = jax.random.key(seed)
    messages = []
    with tapping(Tap(replay)) as tap, jax.disable_jit():
        carry = init_carry(alg, problem, network, params, key)
        for _ in range(steps):
            carry, sent = step_once(alg, problem, network, params, key, carry)
            messages.append(jax.tree.map(np.asarray, sent))
    if replay is not None and len(tap.releases) != len(replay):
        raise AssertionError(f"{len(tap.releases)} releases against {len(replay)}")
    return Run(tap.releases, messages)


def neighbour_runs(alg, pair, network, params, steps: int, seed: int = 0) -> tuple[Run, Run]:
    """The run on ``pair[0]`` and the replay on ``pair[1]``: the second run's releases hold the
    neighbour's ``v'`` and ``s'`` given the first run's transcript (their ``r`` are the first
    run's), and its messages are what the neighbour sends given that transcript."""
    first = tapped_run(alg, pair[0], network, params, steps, seed)
    return first, tapped_run(alg, pair[1], network, params, steps, seed, replay=first.releases)


def messages_follow_the_releases(first: Run, replayed: Run) -> list[str]:
    """The messages (step/name) that differ between the two runs: empty when every message is a
    function of the releases alone (given the same key), i.e. post-processing of them."""
    differ = []
    for k, (a, b) in enumerate(zip(first.messages, replayed.messages, strict=True)):
        for path, x in jax.tree_util.tree_leaves_with_path(a):
            y = _at(b, path)
            if not np.array_equal(x, y, equal_nan=np.issubdtype(x.dtype, np.inexact)):
                differ.append(f"step {k}: {jax.tree_util.keystr(path)}")
    return differ


def _at(tree, path):
    for entry in path:
        tree = tree[getattr(entry, "key", getattr(entry, "idx", None))]
    return tree


def as_dtype(tree, dtype):
    """``tree`` (a problem or network) with its float64 leaves cast to ``dtype``."""
    return jax.tree.map(lambda a: a.astype(dtype) if getattr(a, "dtype", None) == jnp.float64
                        else a, tree)
