"""Mechanism sites: the places where private data may leave an agent, marked in the traced program.

A function decorated with :func:`mechanism_site` runs inside a nested ``jax.jit`` named
``_jaxdp_mech__{kind}__{roles}`` (the way :mod:`jaxdp.engine._costs` marks gradient calls), so the
call stays visible in the jaxpr of a step wherever it happens (a scan body, a branch, under
``vmap``); XLA inlines the nested jit, so the compiled program is the one without the marker.
Every array argument of the site has a declared *role*, one letter per array leaf in ``roles``:

* ``v``: the value the site works on (it may depend on private data). A *release* site
  (``releases=True``, e.g. :func:`~jaxdp.privacy.add_noise`) makes it private: its output is
  public. A *sampling* site (a Poisson or fixed-size minibatch, a client selection) only reads it.
* ``p``: a mechanism parameter (a noise scale, a sampling rate, a population size, selection
  weights): it must be public, never derived from private data.
* ``z``: standard noise draws or uniforms; ``k``: a PRNG key. Public too.

:func:`jaxdp.privacy.check_information_flow` reads these markers. While :func:`public_inputs` is
active, a release site is fed a fixed public value (zeros of the value's shape) instead of its
value, with the same parameters and draws: whatever else still depends on the data then bypasses
every mechanism. Within :func:`marking(False) <marking>` a site runs as plain code (a channel's
inner algorithm, whose report charges only the channel's own sites).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect

import jax
import jax.numpy as jnp

PREFIX = "_jaxdp_mech__"
"""The name prefix of a marked site's nested jit."""
ROLES = {"v": "value", "p": "parameter", "z": "draw", "k": "key"}
"""Role letters of a site's array leaves."""

_PUBLIC = contextvars.ContextVar("jaxdp_public_inputs", default=False)
_MARKING = contextvars.ContextVar("jaxdp_marking", default=True)


@contextlib.contextmanager
def marking(on: bool):
    """Within the block, sites are marked (``on``) or run as plain code. A channel runs its inner
    algorithm unmarked and its own noise marked (:class:`~jaxdp.channels.WithChannel`): its
    accountant charges the channel's releases alone, for any value the inner step computes, so
    the inner algorithm's own noise and minibatches are computation before the mechanism, not
    mechanisms of the report (their parameters may then read the data, as any value may)."""
    token = _MARKING.set(on)
    try:
        yield
    finally:
        _MARKING.reset(token)


@contextlib.contextmanager
def public_inputs():
    """Within the block, every release site traced is fed zeros instead of its value."""
    token = _PUBLIC.set(True)
    try:
        yield
    finally:
        _PUBLIC.reset(token)


def mechanism_site(kind: str, roles: dict[str, str], *, releases: bool):
    """Decorator: run the function as the marked site ``kind`` (see the module).

    Args:
      kind: the site's name (``"add_noise"``, ``"poisson"``, ...).
      roles: ``{argument name: role letter}`` for the array arguments, in the order they are
        passed to the nested jit; every other argument is static (hashable: a law, a shape).
      releases: the site's output is a private release of its ``v`` input.
    """
    bad = {a: r for a, r in roles.items() if r not in ROLES}
    if bad:
        raise ValueError(f"mechanism_site {kind!r}: unknown roles {bad}; use {sorted(ROLES)}")

    def decorate(fn):
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def site(*args, **kwargs):
            if not _MARKING.get():
                return fn(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arrays = [bound.arguments[a] for a in roles]
            if releases and _PUBLIC.get():
                arrays = [jnp.zeros_like(x) if roles[a] == "v" else x
                          for a, x in zip(roles, arrays)]
            static = tuple((a, x) for a, x in bound.arguments.items() if a not in roles)
            letters = "".join(roles[a] * len(jax.tree.leaves(x)) for a, x in zip(roles, arrays))
            return _marked(fn, kind, tuple(roles), letters, static, releases)(*arrays)

        return site

    return decorate


@functools.cache
def _marked(fn, kind: str, names: tuple[str, ...], letters: str, static: tuple, releases: bool):
    """The nested jit of one site configuration (cached: one traced callee per configuration)."""
    tags = "_".join(str(x) for _, x in static if isinstance(x, str))
    action = "release" if releases else "sample"

    def call(*arrays):
        return fn(**dict(zip(names, arrays)), **dict(static))

    call.__name__ = call.__qualname__ = (f"{PREFIX}{action}__{kind}"
                                         f"{'__' + tags if tags else ''}__{letters}")
    return jax.jit(call)


def parse_site(name: str):
    """``(action, kind, tags, letters)`` of a marked site's jit name, or ``None``."""
    if not name.startswith(PREFIX):
        return None
    parts = name[len(PREFIX):].split("__")
    tags = parts[2] if len(parts) == 4 else ""
    return parts[0], parts[1], tags, parts[-1]
