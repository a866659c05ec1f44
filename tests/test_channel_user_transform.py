"""A user's channel transform is one class: it runs in a chain, gets Params fields, reads from a
spec string once registered, and the privacy report honours its declared role."""
import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, channels, network, problems
from jaxdp.channels import Transform

N, D, M = 6, 3, 8


@dataclasses.dataclass(frozen=True)
class Shrink(Transform):
    """``v · f`` with ``f`` in [0, 1] (a Params field): never raises a norm."""

    kind: ClassVar[str] = "shrink"
    role: ClassVar[str] = "contraction"

    def apply(self, v, p, who, k, z=None):
        return v * p[self.fields[0]]


def shrink(f: float = 0.5, *, name: str = "shrink") -> Shrink:
    return Shrink(name, ((f"{name}_f", float(f)),), domains=((f"{name}_f", "probability"),))


@dataclasses.dataclass(frozen=True)
class Flip(Transform):
    """``−v`` on a random half of the coordinates (its own uniform draws): post-processing."""

    kind: ClassVar[str] = "flip"
    role: ClassVar[str] = "post"

    @property
    def random(self) -> bool:
        return True

    def apply(self, v, p, who, k, z=None):
        return jnp.where(z < 0.5, -v, v)


@dataclasses.dataclass(frozen=True)
class Undeclared(Transform):
    """A transform that says nothing about its privacy role."""

    kind: ClassVar[str] = "undeclared"

    def apply(self, v, p, who, k, z=None):
        return 2.0 * v


@pytest.fixture(scope="module")
def setup():
    with jax.enable_x64(True):
        rng = np.random.default_rng(0)
        prob = problems.from_arrays(rng.normal(size=(N, M, D)), rng.normal(size=(N, M)),
                                    loss="least_squares", reg={"ridge": 0.1}, reference=False)
        yield prob, network.make_network("gnm", N, m=8, seed=1)


def _epsilon(prob, net, *transforms, **values):
    alg = channels.with_channel(algorithms.DGD(), channels.chain(*transforms))
    rep = alg.privacy(prob, net, alg.params(algorithms.DGDParams(alpha=0.1), **values), 3)
    return rep.epsilon, rep.reason


def test_user_transform_acts_on_rows_with_its_params_and_draws(setup):
    prob, net = setup
    with jax.enable_x64(True):
        chan = channels.chain(shrink(0.25), Flip("flip", ()))
        x = jnp.asarray(np.random.default_rng(1).normal(size=(N, D)))
        proxy = channels.ChannelNetwork(net, chan, {"shrink_f": 0.25}, 0, jax.random.key(3))
        got = np.asarray(proxy.gather(x))
        z = np.asarray(proxy.draws["gather0"][1])
        want = 0.25 * np.asarray(x)[np.asarray(net.senders)]
        np.testing.assert_allclose(got, np.where(z < 0.5, -want, want), rtol=1e-15)
        alg = channels.with_channel(algorithms.DGD(), chan)
        params = alg.params(algorithms.DGDParams(alpha=0.1), shrink_f=0.5)
        trace = jaxdp.run(alg, prob, net, params, steps=3, seeds=2, progress=False)
        assert np.all(np.isfinite(trace.final("consensus_error")))
        with pytest.raises(ValueError, match="shrink_f must be in \\[0, 1\\]"):
            alg.validate(params.replace(shrink_f=1.5), prob, net)


def test_report_honours_declared_roles(setup):
    prob, net = setup
    with jax.enable_x64(True):
        base, _ = _epsilon(prob, net, channels.clip(1.0), channels.gaussian(2.0))
        assert np.all(np.isfinite(base))
        # post-processing after the noise keeps ε; a contraction between clip and noise too
        after, _ = _epsilon(prob, net, channels.clip(1.0), channels.gaussian(2.0),
                            Flip("flip", ()))
        between, _ = _epsilon(prob, net, channels.clip(1.0), shrink(0.5), channels.gaussian(2.0))
        np.testing.assert_array_equal(after, base)
        np.testing.assert_array_equal(between, base)
        # "post" may raise a norm: not between the clip and the noise
        eps, reason = _epsilon(prob, net, channels.clip(1.0), Flip("flip", ()),
                               channels.gaussian(2.0))
        assert np.all(np.isinf(eps)) and "flip (it may raise the norm)" in reason
        # no declared role: trusted nowhere, before or after the noise
        for stack in [(channels.clip(1.0), Undeclared("u", ()), channels.gaussian(2.0)),
                      (channels.clip(1.0), channels.gaussian(2.0), Undeclared("u", ()))]:
            eps, reason = _epsilon(prob, net, *stack)
            assert np.all(np.isinf(eps)) and "undeclared, which declares no privacy role" in reason


def test_user_transform_reads_from_a_spec_once_registered(monkeypatch):
    monkeypatch.setitem(channels.TRANSFORMS, "shrink", shrink)
    chan = channels.parse_channel("clip:1.0+shrink:0.25+gaussian:0.5")
    assert chan == channels.chain(channels.clip(1.0), shrink(0.25), channels.gaussian(0.5))
    assert chan.name == "clip+shrink+gaussian"
    assert channels.private_stage(chan) == (chan.transforms[0], chan.transforms[2])
