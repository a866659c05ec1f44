"""What a step releases, read from its traced program.

Every product call of the proxy network passes its ``(N, D)`` rows through :func:`mark`, an
identity primitive (``jaxdp_product``) whose parameters name the product, the route and the
call's number. It lowers to its operand, so the compiled program is unchanged; but it stays in the
step's jaxpr wherever the call was traced — inside a ``lax.scan`` body, a ``while_loop``, a
``lax.cond`` branch, an inner ``jit`` — and ``vmap`` rebinds it with ``batched=True``.

:func:`program_releases` traces a step with :func:`jax.make_jaxpr`, walks the jaxpr into every
sub-program and returns one :class:`ProductCall` per marker found: its route, message size (from
the marker's operand shape), the constructs around it and how many times it runs per step (the
product of the enclosing scan lengths). This is the one source of the channel privacy report's
release counts, the cost counters and the check that refuses calls whose noise would repeat
(:func:`refusal`).
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses

import jax
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from jaxdp._jaxpr import sub_jaxprs

product_p = Primitive("jaxdp_product")
"""The identity marking one product call (params ``product``, ``route``, ``call``, ``level``,
``batched``)."""
product_p.def_impl(lambda x, **_: x)
product_p.def_abstract_eval(lambda x, **_: x)
mlir.register_lowering(product_p, lambda ctx, x, **_: [x])


def _jvp(primals, tangents, **params):
    """The tangent passes unmarked: the derivative program is the one without markers."""
    return product_p.bind(primals[0], **params), tangents[0]


ad.primitive_jvps[product_p] = _jvp


def _batch(args, dims, **params):
    """Under ``vmap`` the call stays one marker, flagged ``batched``: its rows are a batch of
    messages drawn with one key."""
    return product_p.bind(args[0], **{**params, "batched": True}), dims[0]


batching.primitive_batchers[product_p] = _batch


def mark(flat, product: str, route: str, call: int, level: int = 0):
    """``flat`` unchanged, marked in the traced program as call ``call`` of ``product`` on
    ``route`` by a proxy ``level`` channels deep (0: the outermost channel; a channel-wrapped
    algorithm wrapped again sends through a proxy of level 1 running on one of level 0)."""
    return product_p.bind(flat, product=product, route=route, call=call, level=level,
                          batched=False)


_ANALYSING = contextvars.ContextVar("jaxdp_analysing", default=False)


@contextlib.contextmanager
def analysing():
    """While the step is traced for :func:`program_releases`, the proxy lets products run in
    sub-traces (scan bodies, branches, vmap), so the analysis sees and names them."""
    token = _ANALYSING.set(True)
    try:
        yield
    finally:
        _ANALYSING.reset(token)


def is_analysing() -> bool:
    """Whether a step is being traced for :func:`program_releases`."""
    return _ANALYSING.get()


@dataclasses.dataclass(frozen=True)
class ProductCall:
    """One product call of a traced step.

    Attributes:
      product: ``mix``, ``apply_P``, ``apply_L``, ``apply_A`` or ``gather``.
      route: the route taken (``"*"`` or a message name).
      call: the call's number in trace order (its noise key).
      level: the depth of the proxy that made the call (0: the outermost channel).
      rows: the rows sent ``N`` (the marker's operand is ``(N, D)``).
      size: the flattened message size ``D``.
      float_bits: the width of one float of the message.
      rounds: times the call runs per step (the product of the enclosing ``scan`` lengths).
      inside: the constructs around the call, outermost first (``"scan(3)"``, ``"while_loop"``,
        ``"cond"``, ``"vmap"``, ``"jit"``, ...; empty at the step's top level).
    """

    product: str
    route: str
    call: int
    level: int
    rows: int
    size: int
    float_bits: int
    rounds: int = 1
    inside: tuple[str, ...] = ()


def program_releases(step_fn, *example_args) -> list[ProductCall]:
    """Every product call of ``step_fn(*example_args)``, read from its jaxpr (in trace order,
    sub-programs where they sit)."""
    with analysing():
        closed = jax.make_jaxpr(step_fn)(*example_args)
    return list(_walk(closed.jaxpr, 1, ()))


def _walk(jaxpr, rounds: int, inside: tuple[str, ...]):
    for eqn in jaxpr.eqns:
        if eqn.primitive is product_p:
            yield _call(eqn, rounds, inside + (("vmap",) if eqn.params["batched"] else ()))
            continue
        for sub, times, where in _subprograms(eqn):
            yield from _walk(sub, rounds * times, inside + (where,))


def _call(eqn, rounds: int, inside: tuple[str, ...]) -> ProductCall:
    aval = eqn.invars[0].aval
    p = eqn.params
    return ProductCall(p["product"], p["route"], p["call"], p["level"], int(aval.shape[0]),
                       int(np.prod(aval.shape[1:], dtype=np.int64)),
                       8 * np.dtype(aval.dtype).itemsize, rounds, inside)


def _subprograms(eqn):
    """``(jaxpr, runs per run of eqn, construct name)`` of each sub-program of ``eqn``: a scan
    body runs ``length`` times; a while loop's body an unknown number (counted once, named); a
    branch of a cond at most once (every branch is counted: an upper bound); anything else that
    carries a jaxpr (``jit``, ``custom_jvp``, ``checkpoint``, ...) once."""
    name = eqn.primitive.name
    if name == "scan":
        length = int(eqn.params["length"])
        return [(eqn.params["jaxpr"].jaxpr, length, f"scan({length})")]
    where = {"while": "while_loop", "pjit": "jit"}.get(name, name)  # JAX < 0.7 names jit pjit
    return [(sub, 1, where) for sub in sub_jaxprs(eqn.params.values())]


def refusal(calls: list[ProductCall], owner: str) -> str:
    """Why ``calls`` cannot be released soundly (``""`` when they can).

    The proxy numbers calls when the step is traced, keys each call's noise by that number and
    records what it released in the step's own trace. So every call must sit at the top level of
    the step's program: one inside a scan, while loop, cond branch, vmap or inner jit would draw
    the same noise every time it runs (a cached inner jit called twice runs one traced call
    twice) and leak its records out of its sub-trace. Counting is not the obstacle: the calls
    carry their rounds (:attr:`ProductCall.rounds`).
    """
    for c in calls:
        if c.inside:
            what = f"{c.product}(message={c.route!r})" if c.route != "*" else c.product
            runs = f" ({c.rounds} runs per step)" if c.rounds > 1 else ""
            return nested_call(owner, what, " > ".join(c.inside) + runs)
    return ""


def nested_call(owner: str, what: str, where: str) -> str:
    """The refusal of a product call ``what`` traced inside ``where`` of ``owner``'s step."""
    return (f"{owner} calls network.{what} inside {where} within its step; a channel numbers "
            "product calls when the step is traced and keys each call's noise by that number, so "
            "every round of the loop (every vmapped row) would get the same noise and be "
            "accounted as one release. Call the product in a Python loop (one traced call per "
            "round) instead")
