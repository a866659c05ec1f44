"""Static per-step costs (``Algorithm.costs_per_step``), counters as metrics and cost axes."""
import dataclasses

import chex
import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest

from jaxdp import algorithms, network, problems
from jaxdp.core import Algorithm, zeros_like_models
from jaxdp.algorithms.ldp.algorithm import local_hessians
from jaxdp.engine import final_metrics, grid, run, sweep
from jaxdp.core._costs import COST_KEYS

matplotlib.use("Agg")

N, M, D = 6, 20, 3


@pytest.fixture(scope="module")
def setting():
    prob = problems.least_squares(n_agents=N, m=M, d=D, seed=0)
    return prob, network.make_network("ring", N)


def costs(alg, setting, params=None):
    prob, net = setting
    return alg.costs_per_step(prob, net, alg.default_params() if params is None else params)


def expected(net, *, grads=0.0, samples=None, rounds=0, prox=0.0, hessians=0.0):
    """Costs from the units: ``rounds`` products of (N, D) float64 rows, ``grads`` local
    gradients of M rows each (unless ``samples`` says otherwise)."""
    messages = 2 * net.n_edges * rounds
    return {"grad_calls": grads, "sample_grads": grads * M if samples is None else samples,
            "prox_calls": prox, "hessian_calls": hessians, "rounds": float(rounds),
            "messages": float(messages), "bits": float(messages * D * 64)}


@pytest.mark.parametrize("name, rounds", [
    ("dgd", 1),  # x⁺ = W x − α∇F(x): one product
    ("nids", 1),  # x⁺ = W̃(2x − x⁻ − α(∇F − ∇F⁻)): one product (none in the first step's branch)
    ("extra", 1),  # W x^k (W x^{k−1} is kept from the previous round)
])
def test_one_gradient_per_agent_and_the_products_of_the_update(setting, name, rounds):
    assert costs(algorithms.get(name), setting) == expected(setting[1], grads=N, rounds=rounds)


def test_admm_counts_every_local_step_and_one_exchange(setting):
    alg = algorithms.get("admm")
    assert costs(alg, setting) == expected(setting[1], grads=N * alg.local_steps, rounds=1)


def test_minibatch_trackers_count_sample_gradients(setting):
    saga = algorithms.get("gt_saga", batch_size=2)
    assert costs(saga, setting) == pytest.approx(
        expected(setting[1], grads=N * 2 / M, samples=N * 2, rounds=2))
    sarah = algorithms.get("gt_sarah", batch_size=2)  # a full gradient (jnp.where: counted) and
    full, batch = N, 2 * N * 2  # the recursive estimator's two minibatch gradients
    assert costs(sarah, setting) == pytest.approx(
        expected(setting[1], grads=full + batch / M, samples=full * M + batch, rounds=2))


@chex.dataclass(frozen=True)
class _Params:
    alpha: float = 0.1


@chex.dataclass(frozen=True)
class _State:
    x: jax.Array
    dropped: jax.Array


@dataclasses.dataclass(frozen=True)
class _Probe(Algorithm):
    """A test algorithm: 3 local prox-gradient steps in a scan, a cond, a Hessian, two exchanges
    (one repeated on the same operand), and a counter of the steps it 'dropped'."""

    name = "probe"
    params_type = _Params
    counter_name: str = "dropped"

    def init(self, key, problem, network, params):
        return _State(x=zeros_like_models(problem, network), dropped=jnp.zeros((), jnp.int32))

    def step(self, state, noise, problem, network, params, k):
        def local(x, _):
            return problem.prox(x - params.alpha * problem.local_grads(x), params.alpha), None

        x, _ = jax.lax.scan(local, state.x, None, length=3)
        x = jax.lax.cond(k % 2 == 0, lambda v: network.mix(v), lambda v: v + 0 * jnp.sum(
            local_hessians(problem, v)), x)
        x = x + 0.0 * network.gather(x).sum() + 0.0 * network.gather(x).sum()  # the same message
        x = network.apply_L(x) * 0.0 + x
        return _State(x=x, dropped=state.dropped + k), {"x": x}

    def counters(self, state):
        return {self.counter_name: state.dropped}


def test_scan_cond_and_repeated_calls(setting):
    """A scan of 3 counts 3 times, both cond branches count, the same call counts once."""
    assert costs(_Probe(), setting) == expected(setting[1], grads=3 * N, prox=3 * N, hessians=N,
                                                rounds=3)


def test_counters_are_recorded_with_the_metrics_and_as_cost_axes(setting):
    prob, net = setting
    trace = run(_Probe(), prob, net, steps=6, seeds=2, record_every=2, progress=False)
    cumulative = np.cumsum(np.arange(6))[1::2]  # Σ_{j<k} j after k = 2, 4, 6 steps
    assert np.array_equal(trace.metrics["dropped"], np.tile([0, *cumulative], (2, 1)))
    assert "objective" in trace.metrics  # the metric function's keys are still there
    assert np.array_equal(trace.cost("dropped"), [0, *cumulative])
    last = final_metrics(_Probe(), prob, net, _Params(), jax.random.key(0), steps=4)
    assert int(last["dropped"]) == 0 + 1 + 2 + 3


def test_a_counter_named_like_a_metric_is_refused(setting):
    prob, net = setting
    with pytest.raises(ValueError, match=r"counters \['objective'\] have the names of metrics"):
        run(_Probe(counter_name="objective"), prob, net, steps=2, progress=False)


def test_trace_costs_are_steps_times_the_static_counts(setting):
    prob, net = setting
    alg = algorithms.get("dgd")
    trace = run(alg, prob, net, steps=8, seeds=2, record_every=2, progress=False)
    per_step = costs(alg, setting)
    assert trace.meta["costs_per_step"] == per_step
    for key in COST_KEYS:
        assert np.array_equal(trace.cost(key), trace.steps * per_step[key])
    assert np.array_equal(trace.cost("step"), trace.steps)
    with pytest.raises(KeyError, match="unknown cost 'flops'"):
        trace.cost("flops")
    swept = sweep(alg, prob, net, grid(alg.default_params(), alpha=[0.01, 0.02]), steps=4,
                  progress=False)
    assert np.array_equal(swept.cost("rounds"), swept.steps * 1.0)


def test_plot_against_a_cost_axis(setting):
    from jaxdp._plotting import METRIC_LABELS

    prob, net = setting
    trace = run(algorithms.get("dgd"), prob, net, steps=8, seeds=2, progress=False)
    fig, axes = trace.plot_against("objective", xs=("step", "grad_calls"))
    assert [ax.get_xlabel() for ax in axes] == [METRIC_LABELS["step"], METRIC_LABELS["grad_calls"]]
    assert np.array_equal(axes[1].lines[0].get_xdata(), trace.cost("grad_calls"))
    with pytest.raises(KeyError, match="unknown cost"):
        trace.plot("objective", x="flops")
    matplotlib.pyplot.close(fig)


def test_every_registered_algorithm_has_costs(setting):
    prob, net = setting
    for name, cls in algorithms.REGISTRY.items():
        alg = cls()
        found = alg.costs_per_step(prob, net, alg.default_params())
        assert set(found) >= set(COST_KEYS) and all(v >= 0 for v in found.values()), name


def test_communication_the_proxy_cannot_see_is_declared(setting):
    """A token hop (read by indexing) and LDP-DGD's reads of every x_j on K_N add their round."""
    prob, _ = setting
    for graph, ldp_messages in (("ring", 2 * N), ("complete", N * (N - 1))):
        net = network.make_network(graph, N)
        ldp = algorithms.LDPDGD()
        assert ldp.costs_per_step(prob, net, ldp.default_params())["messages"] == ldp_messages
        for name, baton in (("recal", 2 * D), ("dp_rwadmm", D)):  # (x, ũ) and x̃
            alg = algorithms.get(name)
            found = alg.costs_per_step(prob, net, alg.default_params())
            width = np.dtype(prob.features.dtype).itemsize * 8
            assert (found["rounds"], found["messages"]) == (1, 1), name
            assert found["bits"] == baton * width, name


@dataclasses.dataclass(frozen=True)
class _Opaque(_Probe):
    """Passes the network through ``jax.jit`` as an argument: the counting proxy is no pytree."""

    name = "opaque"

    def step(self, state, noise, problem, network, params, k):
        x = jax.jit(lambda net, v: net.mix(v))(network, state.x)
        return _State(x=x, dropped=state.dropped), {"x": x}


def test_a_step_the_proxies_cannot_trace_runs_without_cost_axes(setting):
    prob, net = setting
    with pytest.warns(UserWarning, match="opaque: costs_per_step failed"):
        trace = run(_Opaque(), prob, net, steps=2, progress=False)
    assert trace.meta["costs_per_step"] == {} and np.isfinite(trace.final("objective")).all()
    with pytest.raises(KeyError, match="unknown cost 'bits'"):
        trace.cost("bits")
