"""What a channel step releases is read from its traced program (issue 23, "know the program").

* For every registered algorithm behind a channel, the calls read from the jaxpr are the calls a
  trace-time spy on the proxy sees (route, size, messages, bits, copies), and the report built
  from either is the same ε.
* A product inside a 3-round ``lax.scan`` is found with its 3 rounds (1 + 3 with a call outside),
  never counted once, and refused before anything runs, as are calls under ``while_loop``,
  ``cond``, ``vmap`` and an inner ``jit`` run twice from one trace.
* The marker leaves the compiled program unchanged.
"""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, channels
from jaxdp.algorithms.catalogue.classic import DGD, DGDState
from jaxdp.channels import _proxy
from jaxdp.channels._program import program_releases
from tests.release_counting import complete, small  # noqa: F401 -- fixtures

DELTA = 1e-5


def _through(inner, broadcast=False):
    alg = channels.with_channel(inner, channels.chain(channels.clip(1.0), channels.gaussian(1.0),
                                                      broadcast=broadcast))
    return alg, alg.default_params()


def _spied_log(alg, prob, net, params, monkeypatch):
    """``(release log, proxy)`` of one step counted the old way: a spy on the proxy's
    ``_begin`` records each call's route and shape as it is traced."""
    seen = []
    begin = _proxy.ChannelNetwork._begin

    def spy(self, product, X, message):
        out = begin(self, product, X, message)
        if self.level == 0:
            seen.append((out[2], out[1].shape, out[1].dtype))
        return out

    monkeypatch.setattr(_proxy.ChannelNetwork, "_begin", spy)
    proxies = []

    def one_step(key):
        state = alg.init(key, prob, net, params)
        noise = alg.noise(key, state, params, jnp.int32(0))
        proxies.append(alg.step_on_proxy(state, noise, prob, net, params, jnp.int32(0))[1])
        return 0

    jax.eval_shape(one_step, jax.random.key(0))
    monkeypatch.undo()
    log = []
    for route, (rows, d), dtype in seen:
        sent, bits, copies = _proxy.call_costs(alg.channels[route], net, rows, d,
                                               8 * np.dtype(dtype).itemsize)
        log.append((route, d, sent, bits, np.bincount(copies, minlength=net.n_agents)))
    return log, proxies[-1]


@pytest.mark.parametrize("broadcast", [False, True], ids=["per_message", "broadcast"])
@pytest.mark.parametrize("name", sorted(algorithms.REGISTRY))
def test_program_counts_equal_the_traced_calls_and_the_report_is_unchanged(
        complete, name, broadcast, monkeypatch):
    prob, net = complete
    with jax.enable_x64(True):
        alg, params = _through(algorithms.get(name), broadcast)
        spied, proxy = _spied_log(alg, prob, net, params, monkeypatch)
        program = alg.accounting.release_log(prob, net, params)
        assert [c[:4] for c in program] == [c[:4] for c in spied]
        for (*_, a), (*_, b) in zip(program, spied):
            np.testing.assert_array_equal(a, b)
        assert len(program) == proxy.calls
        assert sum(c[2] for c in program) == proxy.tally["sent"]
        assert sum(c[3] for c in program) == proxy.tally["bits"]
        costs = alg.costs_per_step(prob, net, params)
        assert costs["messages"] == proxy.tally["sent"]
        report = alg.privacy(prob, net, params, 3, delta=DELTA)
        monkeypatch.setattr(type(alg.accounting), "release_log", lambda self, *a: spied)
        old = alg.privacy(prob, net, params, 3, delta=DELTA)
        np.testing.assert_array_equal(np.asarray(report.epsilon), np.asarray(old.epsilon))


ROUNDS = 3


@dataclasses.dataclass(frozen=True)
class OnceThenScan(DGD):
    """One gossip round, then ``ROUNDS`` more in a ``lax.scan``."""

    name = "once_then_scan"

    def step(self, state, noise, problem, network, params, k):
        x = network.mix(state.x)
        x, _ = jax.lax.scan(lambda x, _: (network.mix(x), None), x, None, length=ROUNDS)
        return DGDState(x=x - params.alpha * problem.local_grads(x)), {"x": state.x}


def _program(alg, prob, net, params):
    """Every call of one step as the jaxpr has it (no refusal): ``[(rounds, inside)]``."""
    def one_step(key):
        state = alg.init(key, prob, net, params)
        noise = alg.noise(key, state, params, jnp.int32(0))
        alg.step_on_proxy(state, noise, prob, net, params, jnp.int32(0))
        return 0

    return [(c.rounds, c.inside) for c in program_releases(one_step, jax.random.key(0))]


STATEFUL = {"memoryless": (), "drop": (channels.drop(0.2),),
            "error_feedback": (channels.top_k(2, error_feedback=True),)}


@pytest.mark.parametrize("extra", sorted(STATEFUL))
def test_a_product_in_a_scan_counts_its_rounds_and_is_refused_before_the_run(small, extra):
    """Also with a channel state (losses, error-feedback memory): the program's refusal, not a
    tracer leaking from the scan body."""
    prob, net = small
    with jax.enable_x64(True):
        alg = channels.with_channel(OnceThenScan(), channels.chain(
            channels.clip(1.0), *STATEFUL[extra], channels.gaussian(1.0)))
        params = alg.default_params()
        assert _program(alg, prob, net, params) == [(1, ()), (ROUNDS, ("scan(3)",))]  # 1 + 3
        match = (r"once_then_scan\+clip\+.*gaussian calls network.mix inside scan\(3\) "
                 r"\(3 runs per step\) within its step.*same noise")
        for check in (lambda: alg.validate(params, prob, net),
                      lambda: alg.privacy(prob, net, params, 2, delta=DELTA),
                      lambda: alg.costs_per_step(prob, net, params)):
            with pytest.raises(ValueError, match=match):
                check()


def _gossip(name, body):
    """A DGD whose step mixes through ``body(network, x)``."""
    def step(self, state, noise, problem, network, params, k):
        x = body(network, state.x)
        return DGDState(x=x - params.alpha * problem.local_grads(x)), {"x": state.x}

    cls = type(name, (DGD,), {"name": name, "step": step, "__module__": __name__})
    return dataclasses.dataclass(frozen=True)(cls)()


def _twice_in_one_jit(network, x):
    mixed = jax.jit(lambda v: network.mix(v))
    return mixed(mixed(x))


CONSTRUCTS = {
    "while_loop": lambda net, x: jax.lax.while_loop(lambda c: c[0] < 2,
                                                    lambda c: (c[0] + 1, net.mix(c[1])), (0, x))[1],
    "cond": lambda net, x: jax.lax.cond(jnp.sum(x) > 0, net.mix, lambda v: v, x),
    "vmap": lambda net, x: jax.vmap(net.mix, in_axes=1, out_axes=1)(x),
}


@pytest.mark.parametrize("where", sorted(CONSTRUCTS))
def test_products_under_while_cond_vmap_are_named_and_refused(small, where):
    prob, net = small
    with jax.enable_x64(True):
        alg, params = _through(_gossip(f"in_{where}", CONSTRUCTS[where]))
        assert [inside for _, inside in _program(alg, prob, net, params)] == [(where,)]
        with pytest.raises(ValueError, match=f"calls network.mix inside {where} .*same noise"):
            alg.validate(params, prob, net)


def test_a_jit_run_twice_from_one_trace_is_refused(small):
    """A cached inner jit traces its product once and runs it twice: one noise key for both."""
    prob, net = small
    with jax.enable_x64(True):
        alg, params = _through(_gossip("jit_twice", _twice_in_one_jit))
        assert _program(alg, prob, net, params) == [(1, ("jit",)), (1, ("jit",))]
        with pytest.raises(ValueError, match="inside jit"):
            alg.privacy(prob, net, params, 2, delta=DELTA)


def test_the_marker_leaves_the_compiled_program_unchanged(small, monkeypatch):
    """A run's metrics and their derivative in the noise scale lower to the same program with
    and without the marker (its tangent passes unmarked: a marked tangent reorders the
    derivative's sums, 1 ulp off)."""
    prob, net = small
    with jax.enable_x64(True):
        alg, params = _through(DGD())

        def loss(sigma):
            metrics = jaxdp.final_metrics(alg, prob, net, params.replace(gauss_sigma=sigma),
                                          jax.random.key(0), steps=3)
            return sum(jnp.sum(m) for m in jax.tree.leaves(metrics))

        def lowered():
            return [jax.jit(f).lower(0.5).as_text() for f in (loss, jax.grad(loss))]

        marked = lowered()
        assert len(alg.accounting.program(prob, net, params)) == 1  # the marker is in the jaxpr
        monkeypatch.setattr(_proxy, "mark", lambda flat, *a: flat)
        assert marked == lowered()
