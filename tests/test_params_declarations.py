"""Every Params field of every registered algorithm, and of an algorithm behind a channel, has its
facts declared once, as metadata.

Each field is declared with :func:`jaxdp.param` (domain, scalar or per agent, meaning, unit) on the
Params dataclass, or, for a channel's field, by its transform (:func:`jaxdp.channels.declare`,
carried onto the merged Params); ``Algorithm.validate`` enforces the domain and the shape. A field
whose declared domain is the whole real line must be checked by the algorithm's own ``validate``
(then a negative value must be refused), or be a real number of any sign by its meaning (listed in
:data:`UNBOUNDED` with why): the ranges are read from the declarations, never guessed from names.
"""
import dataclasses
import functools
import re

import chex
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, channels, network, problems
from jaxdp.algorithms import Algorithm, param, param_specs

UNBOUNDED = {
    "x0": "the starting point x⁰ = x0·1: any real number",
    "log_sigma1": "log σ₁ (natural log) of the first noise scale: any real number",
}
"""Fields that are unbounded by their meaning, with the reason."""

CHANNELS = ("clip:0.5+gaussian:2.0+drop:0.1", "pairwise_cancelling+link_failures:process=markov",
            "laplace:1.0+gilbert_elliott+activation:agents", "zero_sum+activation")
"""Channel stacks DGD is wrapped in: every transform kind with Params fields."""

NAMES = sorted(algorithms.REGISTRY) + [f"dgd+{spec}" for spec in CHANNELS]


@functools.lru_cache(maxsize=None)
def _get(name):
    """A registered algorithm, or ``dgd+SPEC``: DGD behind the channel ``SPEC``."""
    if name.startswith("dgd+"):
        return channels.with_channel(algorithms.DGD(), channels.parse_channel(name[4:]))
    return algorithms.get(name)


@pytest.fixture(scope="module")
def setting():
    prob = problems.least_squares(n_agents=4, m=6, d=3, seed=0)
    return prob, network.make_network("complete", 4)  # every family accepts K_4


def _declared(alg) -> set:
    """Fields whose declared domain is narrower than the reals."""
    return {f for f, spec in param_specs(alg.params_type).items() if spec.domain.text != "any real"}


def _fields(alg) -> list[str]:
    return [f.name for f in dataclasses.fields(alg.params_type)]


def _refuses_negative(alg, field, setting) -> bool:
    """The algorithm's own ``validate`` refuses ``field = -1`` with a ValueError naming it."""
    prob, net = setting
    try:
        alg.validate(alg.default_params().replace(**{field: -1.0}), prob, net)
    except ValueError as e:
        return field in str(e)
    return False


def unranged_fields() -> dict:
    """Algorithm name → its Params fields with no declared range (printed on failure)."""
    out = {}
    for name in NAMES:
        alg = _get(name)
        missing = [f for f in _fields(alg) if f not in _declared(alg)]
        if missing:
            out[name] = missing
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_field_is_declared_with_param(name):
    """Every field carries its metadata: a meaning, a domain and a shape (no bare field)."""
    params_type = _get(name).params_type
    bare = algorithms.undeclared_fields(params_type)
    assert not bare, f"{name}: {params_type.__name__}.{bare} are not declared with jaxdp.param"
    assert all(spec.doc for spec in param_specs(params_type).values())


@pytest.mark.parametrize("name", NAMES)
def test_every_field_has_a_range(name, setting):
    """A field declared on the whole real line is refused negative by the algorithm's own
    ``validate``, or is unbounded by its meaning (:data:`UNBOUNDED`)."""
    alg = _get(name)
    unchecked = [f for f in unranged_fields().get(name, [])
                 if not _refuses_negative(alg, f, setting)]
    unexplained = [f for f in unchecked if f not in UNBOUNDED]
    assert not unexplained, f"{name}: {unexplained}: no declared range and no reason in UNBOUNDED"


def _outside(domain) -> float:
    """A value just outside ``domain``."""
    if domain.lo is not None:
        return domain.lo if domain.lo_open else domain.lo - 1.0
    return domain.hi if domain.hi_open else domain.hi + 0.5


@pytest.mark.parametrize("name", NAMES)
def test_declared_ranges_are_enforced(name, setting):
    """Each declared field refuses a value outside its domain, naming the field and the rule."""
    prob, net = setting
    alg = _get(name)
    for field, spec in param_specs(alg.params_type).items():
        if field not in _declared(alg):
            continue
        params = alg.default_params().replace(**{field: _outside(spec.domain)})
        with pytest.raises(ValueError, match=re.escape(f"{field} must be {spec.domain.text}")):
            alg.validate(params, prob, net)


@pytest.mark.parametrize("name", NAMES)
def test_scalar_fields_refuse_one_value_per_agent(name, setting):
    prob, net = setting
    alg = _get(name)
    for field, spec in param_specs(alg.params_type).items():
        value = np.full(4, np.asarray(alg.default_params()[field], np.float64))
        params = alg.default_params().replace(**{field: value})
        if spec.per_agent:
            continue
        with pytest.raises(ValueError, match=re.escape(f"{field} must be a scalar")):
            alg.validate(params, prob, net)


@chex.dataclass(frozen=True)
class _ToyParams:
    alpha: float = param(0.1, domain="positive", per_agent=False, doc="α, step size", unit="1")
    p: float = param(0.5, domain="fraction", doc="p, a probability in (0, 1]")
    shift: float = 0.0


@pytest.mark.parametrize("field, value, message", [
    ("alpha", 0.0, "alpha must be > 0 for every agent; got 0"),
    ("alpha", np.full(4, 0.1), "alpha must be a scalar"),
    ("p", np.array([0.5, 1.0, 0.0, 0.5]), "p must be in (0, 1] for every agent; got 0 at agent 2"),
    ("p", 1.5, "p must be in (0, 1]"),
    ("shift", np.inf, "shift must be finite"),
    ("shift", np.ones(3), "shift must be a scalar or have shape (4,)"),
])
def test_validation_reads_the_metadata(field, value, message):
    with pytest.raises(ValueError, match=re.escape(f"_ToyParams.{message}")):
        algorithms.check_params(_ToyParams().replace(**{field: value}), 4)
    algorithms.check_params(_ToyParams(shift=-3.0, p=np.array([0.1, 1.0, 0.5, 0.2])), 4)


def test_param_metadata_and_its_errors():
    specs = param_specs(_ToyParams)
    assert (specs["alpha"].domain.text, specs["alpha"].per_agent, specs["alpha"].unit) == \
        ("> 0", False, "1")
    assert specs["p"].shape_text == "scalar or (N,)" and specs["shift"].doc == ""
    assert algorithms.undeclared_fields(_ToyParams) == ["shift"]
    assert jaxdp.param is param and jaxdp.Algorithm is Algorithm
    with pytest.raises(ValueError, match="unknown domain 'postive'"):
        param(1.0, domain="postive", doc="x")
    with pytest.raises(ValueError, match="doc= must say"):
        param(1.0, doc="")
    assert algorithms.Domain(-1.0, 2.0, hi_open=True).text == "in [-1, 2)"


def test_old_class_tuples_are_refused_with_the_way_to_migrate():
    with pytest.raises(TypeError, match=r"declares positive, scalar as class tuples.*jaxdp.param"):
        @dataclasses.dataclass(frozen=True)
        class Old(Algorithm):  # noqa: F841
            params_type = _ToyParams
            positive = ("alpha",)
            scalar = ("alpha",)


def test_overriding_privacy_is_refused():
    with pytest.raises(TypeError, match=r"override account\(self, problem, network, params, "):
        @dataclasses.dataclass(frozen=True)
        class Legacy(Algorithm):  # noqa: F841
            def privacy(self, problem, network, params, steps):
                return None


def test_provenance_is_one_of_the_declared_kinds():
    with pytest.raises(TypeError, match=r"provenance must be one of \('paper', 'standard'"):
        @dataclasses.dataclass(frozen=True)
        class Vague(Algorithm):  # noqa: F841
            provenance = "folklore"
