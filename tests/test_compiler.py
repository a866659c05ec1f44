"""The compiler policy (``jaxdp._compiler``): XLA:CPU without its YNNPACK fusions, which on
jaxlib 0.10 compute a float32 sum of a non-linear function of another sum wrongly. The repro
computes to rounding with the options, and a prototype algorithm whose gradient is written that
way runs under ``jaxdp.run`` as its float64 per-node reference does."""
import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

import jaxdp
from jaxdp import Algorithm, _compiler, network, param, problems
from jaxdp.engine._simulate import init_carry


def _tanh_gradient(x, z):
    """``Σ_m tanh(z_mᵀx) z_m`` per agent, with element-wise products: x (..., N, d) and
    z (..., N, m, d) of the same rank plus one."""
    return (jnp.tanh((z * x[..., None, :]).sum(-1))[..., None] * z).sum(-2)


def test_the_options_compute_a_sum_of_tanh_of_sums_to_rounding():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 200, 10)).astype(np.float32)
    x = 0.1 * rng.normal(size=(4, 50, 10)).astype(np.float32)
    z64, x64 = z.astype(np.float64), x.astype(np.float64)
    want = np.einsum("nmd,snm->snd", z64, np.tanh(np.einsum("nmd,snd->snm", z64, x64)))
    got = jax.jit(_tanh_gradient, compiler_options=jaxdp.compiler_options("cpu"))(x, z[None])
    np.testing.assert_allclose(np.asarray(got, np.float64), want, atol=1e-3)


def test_options_are_for_cpu_only():
    assert jaxdp.compiler_options("gpu") is None
    assert jaxdp.compiler_options("cpu") in (_compiler.CPU_OPTIONS, None)


@chex.dataclass(frozen=True)
class _Params:
    alpha: float = param(0.05, domain="positive", doc="α, the step size")


@chex.dataclass(frozen=True)
class _State:
    x: jax.Array


@dataclasses.dataclass(frozen=True)
class _TanhGD(Algorithm):
    """A prototype: x⁺ = W x − (α/m) Σ_m tanh(z_mᵀx) z_m, written with element-wise products."""

    name = "_tanh_gd"
    params_type = _Params

    def init(self, key, problem, network, params):  # a start per seed: the seeds differ
        shape = (network.n_agents, problem.dim)
        return _State(x=0.1 * jax.random.normal(key, shape, problem.features.dtype))

    def noise(self, key, state, params, k):
        return {}

    def step(self, state, noise, problem, network, params, k):
        z = problem.features
        g = _tanh_gradient(state.x, z) / z.shape[1]
        step = jnp.asarray(params.alpha, g.dtype)
        return _State(x=(network.mix(state.x) - step * g).astype(g.dtype)), {"x": state.x}


def _reference(x, z, w, alpha, steps) -> np.ndarray:
    """The prototype per node in float64 from its start ``x`` (N, d): explicit loops over agents
    and neighbours."""
    n, m, _ = z.shape
    for _ in range(steps):
        new = np.zeros_like(x)
        for i in range(n):
            mixed = sum(w[i, j] * x[j] for j in range(n) if w[i, j] != 0)
            grad = sum(np.tanh(z[i, s] @ x[i]) * z[i, s] for s in range(m)) / m
            new[i] = mixed - alpha * grad
        x = new
    return x


def test_a_prototype_with_that_gradient_runs_as_its_reference():
    """Four seeds of a float32 run: the seed axis makes the (S, N, m, d) sum that YNNPACK gets
    wrong (on jaxlib 0.10.2 with XLA's default options this run ends off by O(1))."""
    problem = problems.logistic(n_agents=50, m=200, d=10, seed=0, dtype=np.float32)
    net = network.make_network("random_geometric", 50, radius=0.3, seed=1)
    steps = 10
    trace = jaxdp.run(_TanhGD(), problem, net, _Params(), steps=steps, seeds=4,
                      record_every=steps, progress=False)
    assert trace.final_models.dtype == np.float32
    z, w = np.asarray(problem.features, np.float64), np.asarray(net.W, np.float64)
    error = 0.0
    for seed, final in enumerate(np.asarray(trace.final_models, np.float64)):
        start = init_carry(_TanhGD(), problem, net, _Params(), jax.random.key(seed)).state.x
        want = _reference(np.asarray(start, np.float64), z, w, 0.05, steps)
        error = max(error, np.abs(final - want).max())
    assert error < 1e-4, error


def test_the_api_pages_example_runs_and_shows_rounding(capsys):
    """docs/api/jaxdp.md's example: with jaxdp's options the nested sum is right to rounding."""
    from pathlib import Path
    page = Path(__file__).resolve().parent.parent / "docs" / "api" / "jaxdp.md"
    block = page.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, page.name, "exec"), {})  # noqa: S102
    safe, xla_defaults = (float(v) for v in capsys.readouterr().out.split())
    assert safe < 1e-3 and np.isfinite(xla_defaults)
