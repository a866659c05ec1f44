"""Static per-step costs of an algorithm, counted by tracing one step with counting proxies.

:func:`count_step_costs` traces ``init`` and one ``step`` with :func:`jax.make_jaxpr` (nothing is
computed) on a problem whose loss and a network whose products are wrapped in *markers*: every
counted call runs inside a nested ``jax.jit`` named ``_jaxdp_cost__KIND``, so it stays visible in
the step's jaxpr wherever it happens, under ``vmap``, inside a ``lax.scan`` body or a branch of a
``lax.cond``. The jaxpr is then walked once; a marker inside a scan of length L counts L times.

Units (every count is summed over agents):

* ``grad_calls``: gradient evaluations of a local objective ∇f_i, in full local gradients: one per
  agent per ``problem.local_grads`` call; a minibatch gradient on b of the m (padded) rows counts
  b / m (so a variance-reduced method's axis is comparable with a full-gradient method's).
* ``sample_grads``: sample gradients ∇f_{i,h}: the rows every gradient ran over (m per full local
  gradient, padding rows included; b per agent for a minibatch).
* ``prox_calls``: evaluations of a local proximal operator (one per agent per ``problem.prox``).
* ``hessian_calls``: local Hessians (data term, ``loss.sample_curvatures``) in full local Hessians,
  as ``grad_calls``. A Hessian obtained by differentiating a gradient counts as gradient calls.
* ``rounds``: communication rounds: calls of ``mix``, ``apply_P``, ``apply_L``, ``apply_A`` and
  ``gather`` on the network.
* ``messages``: directed messages, ``2E`` per round (every agent sends its row to each neighbour;
  on a time-varying network, ``2E`` of the base graph: an upper bound).
* ``bits``: ``messages × D × bits per float`` with ``D`` the message size (the row's length).

The same call on the same operands counts once (``jnp.where(k == 0, W x, W x − ...)`` sends ``x``
once). Both branches of a ``lax.cond`` count, and ``jnp.where`` evaluates both of its operands, so
the counts are an upper bound for an algorithm that alternates (GT-SARAH's full-gradient steps); a
``lax.while_loop`` body counts once (its trip count is not static). A product recomputed on a
previous iterate counts again, as the code computes it (EXTRA keeps ``W x^{k−1}`` in its state for
this reason); an algorithm that knows better overrides
:meth:`~jaxdp.algorithms.Algorithm.costs_per_step`. Products computed through the dense matrices
(``network.W @ X``) and rows read by indexing bypass the proxy and are not counted: the algorithms
that communicate that way add theirs (the token algorithms' hop, LDP-DGD's reads of every agent on
K_N).
"""
from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp

from jaxdp._jaxpr import sub_jaxprs

COST_KEYS = ("grad_calls", "sample_grads", "prox_calls", "hessian_calls", "rounds", "messages",
             "bits")
"""The static cost axes, in the order of :func:`count_step_costs`'s dict."""

_PREFIX = "_jaxdp_cost__"
_PRODUCTS = ("mix", "apply_P", "apply_L", "apply_A", "gather")


def _marked(kind: str, fn):
    """``fn`` run inside a nested jit named ``_jaxdp_cost__{kind}`` (a marker in the jaxpr)."""
    def call(*args):
        return fn(*args)

    call.__name__ = call.__qualname__ = f"{_PREFIX}{kind}"
    return jax.jit(call)


@dataclasses.dataclass(frozen=True)
class CountingLoss:
    """A loss whose gradient, prox and curvature calls are marked; everything else delegates.

    Hashable (a frozen dataclass of the wrapped loss), so the problem stays a valid pytree.
    """

    inner: object

    def __getattr__(self, name):
        if name == "inner":  # not set yet (copy, unpickling)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __call__(self, *args, **kw):
        return self.inner(*args, **kw)

    def grad(self, x, features, labels, mask, reg):
        """The inner gradient, marked ``grad`` (its first operand, the rows, sets the count)."""
        fn = _marked("grad", lambda f, *rest: self.inner.grad(rest[0], f, *rest[1:]))
        return fn(features, x, labels, mask, reg)

    def shard_grad(self, x, features, labels, mask, reg):
        """The inner whole-shard gradient, marked ``grad`` like :meth:`grad` (one per row)."""
        fn = _marked("grad", lambda f, *rest: self.inner.shard_grad(rest[0], f, *rest[1:]))
        return fn(features, x, labels, mask, reg)

    def prox(self, x, step, reg, **kw):
        """The inner prox, marked ``prox`` (one per model row)."""
        return _marked("prox", lambda v, s, r: self.inner.prox(v, s, r, **kw))(x, step, reg)

    def sample_curvatures(self, t, y, **kw):
        """The inner curvatures, marked ``hess`` (one per data row)."""
        return _marked("hess", lambda a, b: self.inner.sample_curvatures(a, b, **kw))(t, y)


class CountingNetwork:
    """A network whose products and ``gather`` are marked ``round``; other attributes delegate."""

    def __init__(self, network):
        self._net = network

    def __getattr__(self, name):
        if name in _PRODUCTS:
            product = getattr(self._net, name)
            return lambda X, message=None: _marked(
                f"round__{name}", lambda v: product(v, message=message))(X)
        return getattr(self._net, name)


def count_step_costs(algorithm, problem, network, params) -> dict[str, float]:
    """Per-step costs of ``algorithm`` on this setting, summed over agents (see the module doc).

    Returns:
      ``{key: float}`` for every key of :data:`COST_KEYS`.
    """
    net = getattr(network, "base", network)
    counting = problem  # a problem that is not a Problem dataclass: its gradients are not seen
    if dataclasses.is_dataclass(problem) and hasattr(problem, "loss"):
        counting = dataclasses.replace(problem, loss=CountingLoss(problem.loss))
    proxy = CountingNetwork(net)

    def one_step(state, key, k):
        noise = algorithm.noise(key, state, params, k)
        return algorithm.step(state, noise, counting, proxy, params, k)

    key = jax.random.key(0)
    state = jax.eval_shape(lambda key: algorithm.init(key, problem, net, params), key)
    closed = jax.make_jaxpr(one_step)(state, key, jnp.int32(0))  # each state leaf its own input
    totals = dict.fromkeys(COST_KEYS, 0.0)
    _walk(closed.jaxpr, 1.0, totals, problem, net)
    return totals


def _walk(jaxpr, times: float, totals: dict, problem, net) -> None:
    """Add every marker of ``jaxpr`` (and of the jaxprs nested in its equations) to ``totals``."""
    seen = set()
    for eqn in jaxpr.eqns:
        name = str(eqn.params.get("name", ""))
        if name.startswith(_PREFIX):
            once = (name, tuple(id(v) for v in eqn.invars))
            if once not in seen:  # the same call on the same operands is one call
                seen.add(once)
                _count(name[len(_PREFIX):].split("__")[0], eqn, times, totals, problem, net)
            continue
        inner = times * eqn.params["length"] if eqn.primitive.name == "scan" else times
        for sub in sub_jaxprs(eqn.params.values()):
            _walk(sub, inner, totals, problem, net)


def _count(kind: str, eqn, times: float, totals: dict, problem, net) -> None:
    first = eqn.invars[0].aval
    size = math.prod(first.shape)
    if kind == "grad":  # first operand: the rows (..., feature shape), e.g. (..., d) or (..., 8, 8)
        rows = size / math.prod(problem.features.shape[2:])
        totals["sample_grads"] += times * rows
        totals["grad_calls"] += times * rows / problem.n_samples
    elif kind == "hess":  # first operand: the margins t (..., m)
        totals["hessian_calls"] += times * size / problem.n_samples
    elif kind == "prox":  # first operand: the models (..., d)
        totals["prox_calls"] += times * size / problem.dim
    else:  # a round: the operand is (N, ...), one row of D numbers per agent
        messages = 2 * net.n_edges
        row = size / max(first.shape[0], 1) if first.shape else 1
        totals["rounds"] += times
        totals["messages"] += times * messages
        totals["bits"] += times * messages * row * 8 * first.dtype.itemsize
