"""GPU checks of issue 26, as tests that skip on a machine without a GPU.

Run on a GPU machine with ``JAX_PLATFORMS=cuda,cpu python3 -m pytest -q tests/gpu`` (the test
conftest defaults ``JAX_PLATFORMS`` to ``cpu``; ``benchmarks/gpu_driver.py`` runs them in stage 1): the
network products and a DPP² run agree with the CPU in the same process, are bit-identical from run
to run on the GPU, and keep full float32 precision (the policy of ``jaxdp._precision``).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, network, problems
from jaxdp.engine._simulate import simulate


def _gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


pytestmark = pytest.mark.skipif(not _gpus(), reason="needs a GPU")


@pytest.fixture(scope="module")
def setting():
    with jax.enable_x64(False):
        prob = problems.nonconvex_logistic(n_agents=50, m=200, d=10, seed=0)
        net = network.make_network("random_geometric", 50, radius=0.3, seed=1)
        yield prob, net


def _on(device, fn, *args):
    with jax.enable_x64(False), jax.default_device(device):
        return np.asarray(jax.jit(fn)(*args))


@pytest.mark.parametrize("backend", ["dense", "edges"])
def test_products_match_cpu_to_float32_rounding_and_repeat_bitwise(setting, backend):
    _, net = setting
    net = net.with_backend(backend)
    X = np.random.default_rng(0).normal(size=(64, 50, 10)).astype(np.float32)
    fn = jax.vmap(lambda x: net.mix(x) + net.scatter_sum(x[net.senders]))
    gpu, cpu = jax.devices("gpu")[0], jax.devices("cpu")[0]
    first, second = _on(gpu, fn, X), _on(gpu, fn, X)
    assert np.array_equal(first, second)
    # TF32 would leave errors near 1e-3 relative; full float32 stays near 1e-6
    np.testing.assert_allclose(first, _on(cpu, fn, X), rtol=1e-5, atol=1e-5)


def test_dpp2_run_is_reproducible_and_matches_the_cpu(setting):
    prob, net = setting
    alg = algorithms.DPP2()

    def final(key):
        carry, records, _ = simulate(alg, prob, net, alg.default_params(), key, steps=500,
                                     record_every=500)
        return records["consensus_error"][-1], alg.models(carry.state)

    keys = jax.random.split(jax.random.key(0), 8)
    gpu, cpu = jax.devices("gpu")[0], jax.devices("cpu")[0]
    fn = jax.vmap(final)
    with jax.enable_x64(False):
        with jax.default_device(gpu):
            a, models_a = jax.jit(fn)(keys)
            b, models_b = jax.jit(fn)(keys)
        with jax.default_device(cpu):
            c, models_c = jax.jit(fn)(jax.device_put(keys, cpu))
    assert np.array_equal(np.asarray(models_a), np.asarray(models_b))
    # The GPU follows the CPU's trajectory to float32 rounding (H200, jax 0.11.2: consensus error
    # 0.0360029 on both, models within ~1e-7 relative). The first version of this test asserted a
    # consensus error < 1e-5, a figure from an emulation; both platforms give 0.036 here.
    np.testing.assert_allclose(np.asarray(a), np.asarray(c), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(models_a), np.asarray(models_c), rtol=1e-3, atol=1e-3)


def test_lowered_program_for_this_gpu_carries_highest_precision(setting):
    prob, net = setting
    X = jnp.ones((50, 10), jnp.float32)
    text = jax.jit(net.mix).lower(X).as_text()
    assert "HIGHEST" in text and "stablehlo.scatter" not in text


def test_grad_through_a_run_matches_the_cpu(setting):
    """``jax.grad`` of DPP²'s final objective in its parameters, 100 steps: the GPU's gradient is
    the CPU's to float32 rounding under the HIGHEST policy (H200: relative ℓ2 difference 1.1e-4
    at 500 steps); with XLA's DEFAULT precision (TF32) it was off by 125 %."""
    from jaxdp.engine import final_metrics

    prob, net = setting
    alg = algorithms.DPP2()
    key = jax.random.key(0)

    def grad():
        return jax.grad(lambda p: final_metrics(alg, prob, net, p, key, steps=100)["objective"])(
            alg.default_params())

    with jax.enable_x64(False):
        with jax.default_device(jax.devices("gpu")[0]):
            g_gpu = np.concatenate([np.ravel(x) for x in jax.tree.leaves(jax.jit(grad)())])
        with jax.default_device(jax.devices("cpu")[0]):
            g_cpu = np.concatenate([np.ravel(x) for x in jax.tree.leaves(jax.jit(grad)())])
    assert np.all(np.isfinite(g_gpu))
    assert np.linalg.norm(g_gpu - g_cpu) <= 1e-2 * np.linalg.norm(g_cpu), (g_gpu, g_cpu)
