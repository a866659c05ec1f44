"""CUDA lowering gate (issue 26): every registered algorithm's program, lowered for an NVIDIA GPU
without one (``jax.export(..., platforms=("cuda",))``), must be GPU-correct:

* every float ``dot_general`` carries ``jaxdp._precision.PRECISION`` (HIGHEST), so XLA:GPU cannot
  compute it in TF32;
* no host callback, and no custom call except the CUDA libraries' dense LU (cuSOLVER ``getrf`` and
  its pivot permutation, reached by ``jnp.linalg.solve`` in a few ADMM baselines: deterministic
  library kernels, no host round trip);
* no float scatter-add (a GPU executes one with atomics, so its sums are not bit-reproducible):
  the network's default products are order-fixed on both backends, with overflow edges, link
  failures and channels.

Each program is two steps of ``simulate`` on a float32 problem with 8 agents (the network has
overflow edges, so the fixed-order reduction is exercised); lowering takes well under a second
each and nothing is compiled.
"""
import re

import jax
import jax.numpy as jnp
import pytest
from jax import export

import jaxdp
from jaxdp import _precision, algorithms, channels, network, problems
from jaxdp.engine._simulate import simulate

STEPS = 2
ALLOWED_CUSTOM_CALLS = {"cusolver_getrf_ffi", "cu_lu_pivots_to_permutation"}
HOST_CALLBACK = re.compile(r"callback", re.IGNORECASE)


@pytest.fixture(scope="module")
def setting():
    """float32 problem and networks (dense and edge backends, and one with link failures)."""
    with jax.enable_x64(False):
        prob = problems.nonconvex_logistic(n_agents=8, m=6, d=3, seed=0)
        dense = network.make_network("random_geometric", 8, radius=0.5, seed=1)
        assert dense.overflow.shape[0] > 0  # scatter_sum reaches its overflow edges
        yield prob, {"dense": dense, "edges": dense.with_backend("edges"),
                     "failures": network.RandomLinkFailures(dense, 0.2)}


def lower(fn, *args) -> str:
    """StableHLO text of ``jax.jit(fn)`` lowered for CUDA (float32: x64 off while tracing)."""
    with jax.enable_x64(False):
        return export.export(jax.jit(fn), platforms=("cuda",))(*args).mlir_module()


def run_program(alg, prob, net, params):
    def f(params, seed):
        _, records, _ = simulate(alg, prob, net, params, jax.random.key(seed), steps=STEPS)
        return records
    return lower(f, params, jnp.uint32(0))


def gate(text: str, *, deterministic: bool = True) -> None:
    """The three assertions of the module doc on one program's StableHLO text."""
    precision = f"precision = [{_precision.PRECISION.name}, {_precision.PRECISION.name}]"
    dots = re.findall(r"stablehlo\.dot_general[^\n]*", text)
    float_dots = [d for d in dots if re.search(r"x?f(32|64)>", d)]
    assert float_dots, "no float dot_general: the check would be vacuous"
    loose = [d for d in float_dots if precision not in d]
    assert not loose, f"{len(loose)} float dot_general without {precision}: {loose[0][:300]}"
    calls = set(re.findall(r"custom_call\s*@([\w.$-]+)", text))
    calls |= set(re.findall(r'call_target_name\s*=\s*"([^"]+)"', text))
    assert not {c for c in calls if HOST_CALLBACK.search(c)}, f"host callback: {calls}"
    assert calls <= ALLOWED_CUSTOM_CALLS, f"custom calls {calls - ALLOWED_CUSTOM_CALLS}"
    if deterministic:
        adds = float_scatter_adds(text)
        assert not adds, f"{len(adds)} float scatter-add(s): {adds[0][:300]}"


def float_scatter_adds(text: str) -> list[str]:
    """The ``stablehlo.scatter`` ops whose update computation adds floats."""
    found = []
    for match in re.finditer(r'"stablehlo\.scatter"', text):
        body = text[match.start():text.find("stablehlo.return", match.start())]
        if "stablehlo.add" in body and re.search(r"tensor<f(16|32|64)>", body):
            found.append(body)
    return found


@pytest.mark.parametrize("name", sorted(algorithms.REGISTRY))
def test_every_algorithm_lowers_for_cuda_with_full_precision_and_fixed_order(setting, name):
    prob, nets = setting
    alg = algorithms.REGISTRY[name]()
    gate(run_program(alg, prob, nets["dense"], alg.default_params()))


@pytest.mark.parametrize("name", ["dpp2", "lt_admm_dp", "admm", "gt_saga"])
def test_edge_backend_lowers_without_scatter_add(setting, name):
    prob, nets = setting
    alg = algorithms.get(name)
    gate(run_program(alg, prob, nets["edges"], alg.default_params()))


def test_link_failures_lower_without_scatter_add(setting):
    """Each step rebuilds the dense matrices (a unique-index scatter-set, no add) and moves the
    lost weights to the diagonals (``scatter_sum``, order-fixed)."""
    prob, nets = setting
    alg = algorithms.get("dgd")
    gate(run_program(alg, prob, nets["failures"], alg.default_params()))


def test_opt_in_scatter_reduction_is_what_the_gate_catches(setting):
    """The gate is not vacuous: ``with_reduction("scatter")`` lowers to a float scatter-add."""
    prob, nets = setting
    alg = algorithms.get("lt_admm_dp")
    text = run_program(alg, prob, nets["edges"].with_reduction("scatter"), alg.default_params())
    assert float_scatter_adds(text)
    gate(text, deterministic=False)


@pytest.mark.parametrize("spec", ["clip:1.0+gaussian:0.5", "clip:1.0+gaussian:0.5+broadcast",
                                  "top_k:k=2+clip:1.0+gaussian:0.5"])
def test_channel_runs_lower_for_cuda(setting, spec):
    prob, nets = setting
    alg = channels.with_channel(algorithms.get("dgd"), channels.parse_channel(spec))
    gate(run_program(alg, prob, nets["dense"], alg.params(alg.inner.default_params())))


def test_lossy_broadcast_channel_lowers_with_full_precision(setting):
    prob, nets = setting
    alg = channels.with_channel(algorithms.get("dgd"),
                                channels.parse_channel("drop:0.3+clip:1.0+gaussian:0.5+broadcast"))
    gate(run_program(alg, prob, nets["dense"], alg.params(alg.inner.default_params())))


def test_gradient_through_a_run_lowers_for_cuda(setting):
    """``jax.grad`` of DPP²'s final objective in its step size: the transposed products keep the
    precision and the backward pass adds no scatter."""
    prob, nets = setting
    alg = algorithms.get("dpp2")

    def f(params, seed):
        def objective(p):
            return jaxdp.final_metrics(alg, prob, nets["dense"], p, jax.random.key(seed),
                                       steps=STEPS)["objective"]
        return jax.grad(objective)(params)

    gate(lower(f, alg.default_params(), jnp.uint32(0)))


@pytest.mark.parametrize("model", ["digits_mlp", "digits_cnn"])
@pytest.mark.parametrize("name", ["dp_dsgd", "dgd"])
def test_digits_models_lower_for_cuda_with_full_precision(name, model):
    """The packaged model problems (the GPU driver's model stage runs them): the models' own
    products (the CNN's patch extraction included), their per-example gradients (ghost clipping
    under DP-DSGD) and the test metrics keep the precision, and the cross-entropy's backward pass
    adds no float scatter."""
    with jax.enable_x64(False):
        kw = {"hidden": 8} if model == "digits_mlp" else {"channels": 2}
        prob = problems.make_problem(model, n_agents=8, split="iid", dtype=jnp.float32, **kw)
        net = network.make_network("ring", 8)
    alg = algorithms.DPDSGD(batch_size=4) if name == "dp_dsgd" else algorithms.get(name)
    gate(run_program(alg, prob, net, alg.default_params()))
