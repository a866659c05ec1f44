"""Engine: chunking/record/device/continuation invariance, gradients, sweeps, Trace, divergence."""
import dataclasses
import json

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network
from jaxdp.engine import Trace, final_metrics, grid, simulate
from tests.harness import small_network, small_problem

DP = algorithms.DPDGD()
DP_PARAMS = algorithms.DPDGDParams(alpha=0.05, clip=1.0, sigma=0.5)


@pytest.fixture(scope="module")
def setup():
    return small_problem("logistic"), small_network()


def _run(setup, **kw):
    prob, net = setup
    kw = {"steps": 40, "seeds": 8, "progress": False, **kw}
    return jaxdp.run(DP, prob, net, DP_PARAMS, **kw)


def test_trace_is_identical_across_chunkings(setup):
    one, many = _run(setup, chunks=1), _run(setup, chunks=7, record_every=1)
    for k in one.metrics:
        np.testing.assert_array_equal(one.metrics[k], many.metrics[k])
    np.testing.assert_array_equal(one.final_models, many.final_models)


def test_memory_budget_splits_seeds_without_changing_results(setup):
    """A budget too small for all seeds at once runs them in batches with the same numbers."""
    whole = _run(setup, seeds=6)
    need = whole.meta["memory_per_device_mib"] * 2**20
    split = _run(setup, seeds=6, memory_budget=need / 2.5)
    assert split.meta["seed_batches"] >= 2 and whole.meta["seed_batches"] == 1
    for k in whole.metrics:  # other batch shapes vectorize reductions differently: rounding only
        np.testing.assert_allclose(split.metrics[k], whole.metrics[k], rtol=0, atol=1e-12)
    np.testing.assert_allclose(split.final_models, whole.final_models, rtol=0, atol=1e-12)


def test_memory_budget_shortens_chunks_when_observing(setup):
    """With observe, the per-step messages dominate: the run uses more chunks, same numbers."""
    whole = _run(setup, seeds=2, observe=True, chunks=1)
    need = whole.meta["memory_per_device_mib"] * 2**20
    split = _run(setup, seeds=2, observe=True, chunks=1, memory_budget=need / 3)
    assert split.meta["chunks"] > 1
    chex.assert_trees_all_equal(split.observed, whole.observed)


def test_memory_budget_too_small_for_one_seed_is_a_clear_error(setup):
    with pytest.raises(ValueError, match="memory_budget"):
        _run(setup, seeds=1, memory_budget=16)


def test_record_every_only_subsamples(setup):
    every1, every5 = _run(setup, record_every=1), _run(setup, record_every=5)
    np.testing.assert_array_equal(every5.steps, every1.steps[::5])
    for k in every1.metrics:
        np.testing.assert_allclose(every5.metrics[k], every1.metrics[k][:, ::5], rtol=0,
                                   atol=1e-12)


def test_one_device_equals_eight_devices(setup):
    assert len(jax.devices()) == 8
    single = _run(setup, devices=jax.devices()[:1])
    sharded = _run(setup, seeds=5, devices=jax.devices())  # 5 seeds padded to 8 devices
    for k in single.metrics:
        np.testing.assert_allclose(sharded.metrics[k], single.metrics[k][:5], rtol=0, atol=1e-12)


def test_few_seeds_use_few_devices(setup):
    assert len(_run(setup, seeds=3, steps=2).meta["devices"]) == 1
    assert len(_run(setup, seeds=16, steps=2).meta["devices"]) == 2
    assert len(_run(setup, seeds=640, steps=2).meta["devices"]) == 8


def test_2000_steps_equal_1000_plus_1000(setup):
    prob, net = setup
    key = jax.random.key(3)
    carry, _, _ = simulate(DP, prob, net, DP_PARAMS, key, steps=2000, record_every=2000)
    half, _, _ = simulate(DP, prob, net, DP_PARAMS, key, steps=1000, record_every=1000)
    rest, _, _ = simulate(DP, prob, net, DP_PARAMS, key, steps=1000, record_every=1000,
                          carry=half)
    assert int(rest.k) == 2000
    np.testing.assert_allclose(rest.state.x, carry.state.x, rtol=0, atol=1e-12)


def test_seeds_differ_and_are_reproducible(setup):
    a, b = _run(setup), _run(setup, seeds=[0, 1, 2, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(a.final_models, b.final_models)
    assert not np.allclose(a.final_models[0], a.final_models[1])


def _mean_final_loss(params, prob, net, keys, alg=DP):
    f = lambda key: final_metrics(alg, prob, net, params, key, steps=30)["objective"]  # noqa
    return jnp.mean(jax.vmap(f)(keys))


@pytest.mark.parametrize("field", ["alpha", "sigma"])
def test_grad_through_simulate_matches_central_differences(setup, field):
    """d(mean final objective)/d(step size or noise scale) over common seeds = central FD, for
    the float sampler (exactly reparameterized). The lattice run's gradient is the straight-through
    one (its rounding has zero derivative almost everywhere, so FD cannot see it): within 1 % of
    the gradient of the same run with the rounding left out (same lattice draws, v + s z)."""
    prob, net = setup
    keys = jax.vmap(jax.random.key)(jnp.arange(16))
    float_dp = dataclasses.replace(DP, sampler="float")
    loss = lambda v, alg=float_dp: _mean_final_loss(  # noqa: E731
        DP_PARAMS.replace(**{field: v}), prob, net, keys, alg)
    v0 = float(DP_PARAMS[field])
    g = jax.grad(loss)(v0)
    h = 1e-5
    fd = (loss(v0 + h) - loss(v0 - h)) / (2 * h)
    assert np.isfinite(g) and abs(g) > 1e-8
    np.testing.assert_allclose(g, fd, rtol=1e-5)
    g_lattice = jax.grad(lambda v: loss(v, DP))(v0)
    g_unrounded = jax.grad(lambda v: loss(v, _LatticeDrawsUnrounded()))(v0)
    np.testing.assert_allclose(g_lattice, g_unrounded, rtol=1e-2)


@dataclasses.dataclass(frozen=True)
class _LatticeDrawsUnrounded(algorithms.DPDGD):
    """DP-DGD drawing lattice noise but adding it as ``g + σCz`` (no rounding to the lattice)."""

    def _gradients(self, x, noise, problem, params):
        return algorithms.DPDGD(sampler="float")._gradients(x, noise, problem, params)


def test_no_retrace_when_only_param_values_change(setup):
    prob, net = setup
    traces = []

    @jax.jit
    def f(params):
        traces.append(1)
        return final_metrics(DP, prob, net, params, jax.random.key(0), steps=5)["objective"]

    f(DP_PARAMS)
    f(DP_PARAMS.replace(alpha=0.01, sigma=2.0))
    assert len(traces) == 1


def test_sweep_equals_loop_of_runs(setup):
    prob, net = setup
    g = grid(DP_PARAMS, alpha=[0.02, 0.05], sigma=[0.1, 1.0])
    swept = jaxdp.sweep(DP, prob, net, g, steps=20, seeds=3, progress=False)
    assert swept.metrics["objective"].shape == (3, 4, 21)
    for i, (alpha, sigma) in enumerate([(0.02, 0.1), (0.02, 1.0), (0.05, 0.1), (0.05, 1.0)]):
        single = jaxdp.run(DP, prob, net, DP_PARAMS.replace(alpha=alpha, sigma=sigma), steps=20,
                           seeds=3, progress=False)
        np.testing.assert_allclose(swept.metrics["objective"][:, i], single.metrics["objective"],
                                   rtol=0, atol=1e-12)


def test_grid_rejects_unknown_fields():
    with pytest.raises(ValueError, match=r"\['beta'\] are not fields of DPDGDParams"):
        grid(DP_PARAMS, beta=[1.0])


def test_diverging_seeds_are_flagged_and_left_out_of_the_mean():
    prob, net = small_problem("least_squares"), small_network()
    alpha = jnp.array([0.05, 0.05, 0.05, 0.05, 0.05, 0.05])
    ok = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=alpha), steps=30,
                   seeds=2, progress=False)
    assert not ok.diverged.any()
    bad = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(alpha=alpha * 1000),
                    steps=300, seeds=2, progress=False)
    assert bad.diverged.all() and bad.meta["n_diverged"] == 2
    assert np.all(np.isnan(bad.mean("objective")[-1:]))


def test_metrics_undefined_without_a_reference_do_not_flag_seeds():
    """A problem built without x* has NaN ``dist_to_opt``/``suboptimality`` from the first record;
    that is not a divergence (it flagged every seed of DPP²'s paper problem before)."""
    from jaxdp import problems

    prob = problems.nonconvex_logistic(n_agents=6, m=10, d=3, seed=0, reference=False)
    net = small_network()
    for record_every in (1, 20):
        trace = jaxdp.run(algorithms.DGD(), prob, net, algorithms.DGDParams(), steps=20,
                          seeds=2, record_every=record_every, progress=False)
        assert np.isnan(trace.final("dist_to_opt")).all()
        assert not trace.diverged.any() and trace.meta["n_diverged"] == 0


def test_band_excludes_diverged_seed():
    tr = Trace(metrics={"m": np.array([[1.0, 1.0], [3.0, 3.0], [np.nan, np.inf]])},
               steps=np.array([0, 1]), diverged=np.array([False, False, True]),
               final_models=np.zeros((3, 2, 1)))
    mean, lo, hi = tr.band("m")
    np.testing.assert_allclose(mean, [2.0, 2.0])
    np.testing.assert_allclose(hi - mean, 1.959964 * np.sqrt(2) / np.sqrt(2), rtol=1e-5)
    with pytest.raises(KeyError, match="unknown metric 'x'"):
        tr.band("x")


def test_trace_save_load_roundtrip(setup, tmp_path):
    tr = _run(setup, observe=True, steps=10, seeds=2)
    assert tr.observed["messages"]["x"].shape == (2, 10, 6, 3)
    path = tr.save(tmp_path / "t.npz")
    back = Trace.load(path)
    for k in tr.metrics:
        np.testing.assert_array_equal(back.metrics[k], tr.metrics[k])
    np.testing.assert_array_equal(back.observed["messages"]["x"], tr.observed["messages"]["x"])
    assert back.meta["algorithm"]["name"] == "dp_dgd"
    json.dumps(back.meta)
    assert not list(tmp_path.glob("*.tmp*"))


def test_observed_messages_are_the_models_before_each_step(setup):
    tr = _run(setup, observe=True, steps=6, seeds=1)
    np.testing.assert_array_equal(tr.observed["messages"]["x"][0, 1:],
                                  tr.observed["models"][0, :-1])


def test_run_rejects_bad_arguments(setup):
    prob, net = setup
    with pytest.raises(ValueError, match="record_every must divide steps"):
        _run(setup, steps=10, record_every=3)
    with pytest.raises(ValueError, match="seeds must be >= 1"):
        _run(setup, seeds=0)
    with pytest.raises(ValueError, match="distinct non-negative"):
        _run(setup, seeds=[1, 1])
    other = small_network(n_agents=7)
    with pytest.raises(ValueError, match="network has 7 agents but the problem has data for 6"):
        jaxdp.run(DP, prob, other, DP_PARAMS, steps=2, progress=False)


def test_time_varying_link_failures_run_and_differ_from_static(setup):
    prob, net = setup
    failing = network.RandomLinkFailures(net, 0.5)
    a = jaxdp.run(algorithms.DGD(), prob, failing, steps=30, seeds=2, progress=False)
    b = jaxdp.run(algorithms.DGD(), prob, net, steps=30, seeds=2, progress=False)
    assert not np.allclose(a.final_models, b.final_models)
    assert not np.allclose(a.final_models[0], a.final_models[1])  # the failures differ per seed


def test_random_activation_freezes_sleeping_agents(setup):
    prob, net = setup
    sleepy = network.RandomActivation(net, 0.5)
    alg = algorithms.DGD()
    params = alg.default_params()
    key = jax.random.key(0)
    carry, _, seen = simulate(alg, prob, sleepy, params, key, steps=4, observe=True)
    models = np.asarray(seen["models"])
    from jaxdp.engine import step_keys

    for k in range(1, 4):
        active = np.asarray(sleepy.active_mask(step_keys(key, k)[1]))
        frozen = ~active.astype(bool)
        np.testing.assert_array_equal(models[k][frozen], models[k - 1][frozen])
        assert frozen.any() and (~frozen).any()


def test_float32_run_stays_float32():
    prob = small_problem("logistic")
    prob32 = jax.tree.map(lambda a: a.astype(jnp.float32) if a.dtype == jnp.float64 else a, prob)
    net32 = jax.tree.map(lambda a: a.astype(jnp.float32) if a.dtype == jnp.float64 else a,
                         small_network())
    params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float32), DP_PARAMS)
    carry, rec, _ = simulate(DP, prob32, net32, params, jax.random.key(0), steps=3)
    assert carry.state.x.dtype == jnp.float32
    assert all(v.dtype == jnp.float32 for v in rec.values() if v.dtype.kind == "f")


def test_metric_functions_may_read_the_algorithm_state(setup):
    """A three-argument metric function receives the state (e.g. ergodic averages, duals)."""
    prob, net = setup

    def with_state(problem, models, state):
        return {"x_sum": jnp.sum(state.x), "models_sum": jnp.sum(models)}

    tr = _run(setup, steps=5, seeds=2, metrics=with_state)
    np.testing.assert_allclose(tr.metrics["x_sum"], tr.metrics["models_sum"])
    two = _run(setup, steps=5, seeds=2, metrics=lambda p, m: {"n": jnp.sum(m)})
    np.testing.assert_allclose(two.metrics["n"], tr.metrics["models_sum"])


def test_resumable_run_loads_finished_blocks_and_equals_a_plain_run(setup, tmp_path):
    """An interrupted sweep continues from its finished blocks without recomputing them."""
    plain = _run(setup, seeds=6, steps=10)
    first = _run(setup, seeds=6, steps=10, resume_dir=tmp_path, seeds_per_block=2)
    assert first.meta["blocks"] == 3 and first.meta["blocks_loaded"] == 0
    (block_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    files = sorted(block_dir.glob("*.npz"))
    assert len(files) == 3
    files[1].unlink()  # as if the run had been killed while computing the second block
    again = _run(setup, seeds=6, steps=10, resume_dir=tmp_path, seeds_per_block=2)
    assert again.meta["blocks_loaded"] == 2
    for k in plain.metrics:
        np.testing.assert_allclose(again.metrics[k], plain.metrics[k], rtol=0, atol=1e-12)
    other = _run(setup, seeds=6, steps=12, resume_dir=tmp_path, seeds_per_block=2)
    assert other.meta["blocks_loaded"] == 0  # another configuration: another folder


def test_resumable_sweep(setup, tmp_path):
    prob, net = setup
    g = grid(DP_PARAMS, alpha=[0.02, 0.05])
    a = jaxdp.sweep(DP, prob, net, g, steps=8, seeds=4, progress=False, resume_dir=tmp_path)
    b = jaxdp.sweep(DP, prob, net, g, steps=8, seeds=4, progress=False, resume_dir=tmp_path)
    assert b.meta["blocks_loaded"] == b.meta["blocks"] == 4
    np.testing.assert_array_equal(a.metrics["objective"], b.metrics["objective"])
    assert a.metrics["objective"].shape == (4, 2, 9)


def test_checkpointed_gradient_equals_plain_gradient(setup):
    """jax.checkpoint per record block changes memory, not the gradient."""
    prob, net = setup
    key = jax.random.key(5)

    def loss(alpha, every):
        p = DP_PARAMS.replace(alpha=alpha)
        return final_metrics(DP, prob, net, p, key, steps=40, checkpoint_every=every)["objective"]

    plain = jax.grad(loss)(0.05, None)
    remat = jax.grad(loss)(0.05, 8)
    np.testing.assert_allclose(remat, plain, rtol=1e-12)
