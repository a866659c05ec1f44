"""A channel transform's Params fields are declared once (a class-level tuple of
:func:`jaxdp.channels.declare` specs), and the noise field, the merged Params' specs, validation
and ``jaxdp run ALG --channel SPEC --help`` are all read from that declaration."""
import dataclasses
import re
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels, network, problems
from jaxdp.algorithms import param_specs
from jaxdp.cli import main

N, D, M = 5, 3, 6
STEPS, EPS, DELTA = 4, 2.0, 1e-5


@pytest.fixture(scope="module")
def setup():
    with jax.enable_x64(True):
        rng = np.random.default_rng(0)
        prob = problems.from_arrays(rng.normal(size=(N, M, D)), rng.normal(size=(N, M)),
                                    loss="least_squares", reg={"ridge": 0.1}, reference=False)
        yield prob, network.make_network("ring", N)


@dataclasses.dataclass(frozen=True)
class RandomSign(channels.Transform):
    """``±v``, one random sign per row (its own uniform draw): ‖−v‖ = ‖v‖, a random contraction
    that declares no Params field."""

    kind: ClassVar[str] = "random_sign"
    role: ClassVar[str] = "contraction"
    random: ClassVar[bool] = True

    def apply(self, v, p, who, k, z=None):
        return jnp.where(z[:, :1] < 0.5, -v, v)


def _calibrates(setup, channel):
    """The channel's noise field is its Gaussian's σ, whatever stands before it, and the
    calibrator reaches the target ε with it."""
    prob, net = setup
    from jaxdp.privacy import calibrate_params

    alg = channels.with_channel(algorithms.DGD(), channel)
    assert alg.noise_field == "gauss_sigma"
    with jax.enable_x64(True):
        params = alg.params(algorithms.DGDParams(alpha=0.1))
        tuned = calibrate_params(alg, prob, net, params, STEPS, epsilon=EPS, delta=DELTA)
        eps = alg.privacy(prob, net, tuned, STEPS, delta=DELTA).epsilon_max
    assert np.isfinite(float(tuned.gauss_sigma)) and float(tuned.gauss_sigma) > 0
    assert eps == pytest.approx(EPS, rel=1e-3) and eps <= EPS * (1 + 1e-9)


def test_a_user_random_transform_before_the_noise_calibrates(setup):
    _calibrates(setup, channels.chain(channels.clip(1.0), RandomSign("rsign", ()),
                                      channels.gaussian(0.5)))


def test_a_biased_random_k_before_the_noise_calibrates(setup):
    _calibrates(setup, channels.parse_channel("clip:1.0+random_k:2,unbiased=false+gaussian:0.5"))


KINDS = ["clip:0.7", "gaussian:0.4", "laplace:0.3", "drop:0.2", "gilbert_elliott",
         "link_failures:0.1,process=markov", "activation", "activation:agents",
         "pairwise_cancelling", "zero_sum"]


def _outside(domain) -> float:
    """A value just outside ``domain``."""
    if domain.lo is not None:
        return domain.lo if domain.lo_open else domain.lo - 1.0
    return domain.hi + 0.5


@pytest.mark.parametrize("spec", KINDS)
def test_merged_params_carry_every_channel_fields_spec(spec, setup):
    """``param_specs`` of a wrapped algorithm lists the channel's fields like the algorithm's:
    the constructor's value as the default, a meaning and a domain (the transform's own
    declaration); validation refuses a value just outside it, naming the field and the rule."""
    prob, net = setup
    channel = channels.parse_channel(spec)
    alg = channels.with_channel(algorithms.DGD(), channel)
    specs = param_specs(alg.params_type)
    assert list(specs)[:len(param_specs(algorithms.DGDParams))] == \
        list(param_specs(algorithms.DGDParams))
    defaults = dataclasses.fields(alg.params_type)
    for field, value in channel.defaults:
        t = next(t for t in channel.transforms if field in t.fields)
        assert specs[field].doc and specs[field].domain.text != "any real", field
        assert specs[field] == t.spec(field)
        assert next(f.default for f in defaults if f.name == field) == value
        if not specs[field].per_agent:
            assert t.undirected
        bad = alg.default_params().replace(**{field: _outside(specs[field].domain)})
        with pytest.raises(ValueError, match=re.escape(
                f"{field} must be {specs[field].domain.text}")):
            alg.validate(bad, prob, net)


def test_every_field_a_transform_holds_is_declared():
    """A field the class does not declare is refused at construction, naming it."""
    with pytest.raises(ValueError, match=r"random_sign.*'rsign_f'.*declares"):
        RandomSign("rsign", (("rsign_f", 0.5),))


def test_run_help_lists_the_channel_fields_with_their_domains(capsys):
    with pytest.raises(SystemExit):
        main(["run", "dgd", "--channel", "clip:1.0+drop:0.3", "--help"])
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()
             if line.startswith("  ") and len(line.split()) > 2}
    alg = channels.with_channel(algorithms.DGD(), channels.parse_channel("clip:1.0+drop:0.3"))
    for field, spec in param_specs(alg.params_type).items():
        assert field in lines, field
        assert spec.summary in " ".join(lines[field].split()), field
    assert "in [0, 1]" in lines["drop_p"] and "> 0" in lines["clip_norm"]
