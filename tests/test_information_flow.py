"""Information flow on the traced program (issue 36, "make the next break impossible").

:func:`jaxdp.privacy.check_information_flow` reads the program a step runs: no mechanism parameter
may depend on private data (static taint through jit, scan, while, cond, custom_vjp, checkpoint),
nothing another agent or the server sees may depend on agent u's data once every mechanism site is
fed a public input, and no release may turn non-finite on extreme records.

* Positive controls: leaking mutants of DP-DGD (the raw gradient added to the message, a noise
  scale from the record count, a Poisson rate from the record count, a term outside the
  mechanism that turns NaN on extreme records) are caught; the static walk sees a tainted
  parameter through every construct.
* The gate: every registered algorithm (``algorithms.REGISTRY``, so a user's registered class
  too), with and without a clip + Gaussian channel. A representative handful runs by default;
  the whole registry with ``--runslow``. The known breaks are ``xfail(strict=True)`` naming the
  break (flip them as the fixes merge). One check covers every threat model: what reaches another
  agent's state feeds that agent's later releases, which every observer sees.
"""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels, network, problems
from jaxdp.algorithms._sampling import poisson_keep, sample_counts
from jaxdp.algorithms.catalogue.classic import DPDGD
from jaxdp.privacy import add_noise, check_information_flow, clip_by_norm
from jaxdp.privacy._flow import _Walk
from jaxdp._types import per_agent

N = 5  # no state axis of the registry's defaults has this size by accident

BROKEN: dict = {}
"""(name, through a channel) -> what the check finds: nothing since issue 36's fixes (breaks 1-3
xfailed here before them). A channel's inner noise and minibatches are computation before its
mechanism (``jaxdp.privacy.contract.marking``), so DP-ADMM's σ_i from m_i and a fixed-size
population m_i no longer count as parameters of a channel port's report."""


@functools.cache
def _setting(complete: bool):
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        prob = problems.from_arrays(rng.normal(size=(N, 12, 2)), rng.normal(size=(N, 12)),
                                    loss="least_squares", reg={"ridge": 0.0}, reference=False)
    return prob, network.make_network("complete" if complete else "ring", N)


def _flow(alg, **kw):
    inner = getattr(alg, "inner", alg)
    prob, net = _setting(bool(inner.server_average))
    with jax.enable_x64(True):
        return check_information_flow(alg, prob, net, alg.default_params(), **kw)


def _channelled(alg):
    return channels.with_channel(alg, channels.chain(channels.clip(1.0), channels.gaussian(50.0)))


def _gate(name: str, channel: bool):
    """The check on the registered algorithm ``name`` (a channel's port when ``channel``)."""
    alg = algorithms.get(name)
    return _flow(_channelled(alg) if channel else alg)


# -- positive controls -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LeakyMessage(DPDGD):
    """Adds a little of the raw gradient to the noisy one it sends."""

    name = "leaky_message"

    def _gradients(self, x, noise, problem, params):
        return super()._gradients(x, noise, problem, params) + 1e-3 * problem.local_grads(x)


@dataclasses.dataclass(frozen=True)
class CountedScale(DPDGD):
    """Noise scale σC·m_i/M: proportional to the agent's record count."""

    name = "counted_scale"

    def _gradients(self, x, noise, problem, params):
        g = clip_by_norm(problem.local_grads(x), params.clip)
        count = sample_counts(problem).astype(x.dtype) / problem.n_samples
        return add_noise(g, per_agent(params.sigma * params.clip * count, x), noise["xi"])


@dataclasses.dataclass(frozen=True)
class CountedRate(DPDGD):
    """Each agent's gradient weighted by a Poisson batch of rate 4/m_i."""

    name = "counted_rate"

    def _gradients(self, x, noise, problem, params):
        rate = jnp.broadcast_to((4.0 / sample_counts(problem))[:, None], problem.mask.shape)
        kept = poisson_keep(jax.random.key(1), rate, problem.mask > 0, dtype=x.dtype)
        return super()._gradients(x, noise, problem, params) * jnp.mean(kept)


@dataclasses.dataclass(frozen=True)
class NaNOutside(DPDGD):
    """``release + 0·g``: zero on ordinary data, NaN once g overflows."""

    name = "nan_outside"

    def _gradients(self, x, noise, problem, params):
        return super()._gradients(x, noise, problem, params) + 0.0 * problem.local_grads(x)


@pytest.mark.parametrize("mutant, check", [
    (LeakyMessage(), "bypass"), (CountedScale(), "parameter"), (CountedRate(), "parameter"),
    (NaNOutside(), "non_finite")], ids=lambda v: getattr(v, "name", v))
def test_leaking_mutants_are_caught(mutant, check):
    report = _flow(mutant)
    assert check in {v.check for v in report.violations}, str(report)


def _tainted_scale(route: str):
    """A step-like function whose noise scale reaches ``add_noise`` through ``route``."""
    def fn(data, v, z):
        scale = jnp.sum(data) * 0.0 + 1.0  # depends on the data (syntactically)
        if route == "scan":
            scale = jax.lax.scan(lambda c, _: (c * 1.0, None), scale, None, length=3)[0]
        elif route == "while":
            scale = jax.lax.fori_loop(0, jnp.int32(2) + 0 * jnp.int32(v[0]), lambda i, s: s,
                                      scale)
        elif route == "cond":
            scale = jax.lax.cond(v[0] > 0, lambda s: s, lambda s: 2.0 * s, scale)
        elif route == "checkpoint":
            scale = jax.checkpoint(lambda s: s * 1.0)(scale)
        elif route == "custom_vjp":
            scale = _identity_vjp(scale)
        return add_noise(v, scale, z)
    return fn


@jax.custom_vjp
def _identity_vjp(s):
    return s


_identity_vjp.defvjp(lambda s: (s, None), lambda _, g: (g,))


@pytest.mark.parametrize("route", ["direct", "scan", "while", "cond", "checkpoint", "custom_vjp"])
@pytest.mark.parametrize("tainted", [True, False])
def test_the_static_walk_follows_a_parameter_through_every_construct(route, tainted):
    closed = jax.make_jaxpr(_tainted_scale(route))(jnp.ones(3), jnp.ones(3), jnp.ones(3))
    walk = _Walk()
    walk.run(closed.jaxpr, [False] * len(closed.consts) + [tainted, False, False])
    assert [v.check for v in walk.violations] == (["parameter"] if tainted else [])
    assert [s.kind for s in walk.sites] == ["add_noise"]


def test_a_registered_algorithm_gets_the_gate():
    """The gate takes any registered name: a user's leaking class is caught by the same call."""
    algorithms.register(LeakyMessage)
    try:
        assert not _gate(LeakyMessage.name, False).ok
    finally:
        algorithms.unregister(LeakyMessage.name)


def test_a_non_private_algorithm_is_not_checked_but_its_channel_port_is():
    assert _gate("dgd", False).relation is None
    report = _gate("dgd", True)
    assert report.relation is not None and report.sites


# -- the gate --------------------------------------------------------------------------------------
def _case(name: str, channel: bool, slow: bool = True):
    marks = [pytest.mark.slow] if slow else []
    why = BROKEN.get((name, channel))
    if why:
        marks.append(pytest.mark.xfail(strict=True, reason=why))
    return pytest.param(name, channel, marks=marks, id=f"{name}{'+channel' if channel else ''}")


FAST = [("dp_dgd", False), ("dp_admm", False), ("dp_dsgd", False), ("dgd", True),
        ("fedavg", True)]


@pytest.mark.parametrize("name, channel", [_case(n, c, slow=False) for n, c in FAST]
                         + [_case(n, c) for n in sorted(algorithms.REGISTRY) for c in (False, True)
                            if (n, c) not in FAST])
def test_private_data_leave_an_agent_only_through_a_mechanism(name, channel):
    report = _gate(name, channel)
    assert report.ok, str(report)
