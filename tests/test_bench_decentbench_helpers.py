"""Helpers of the decent-bench benchmarks (issues 25, 27): the parameter layout that
``benchmarks/bench_decentbench_models.py`` hands decent-bench (θ flattened in torch's order for
Linear–Tanh–Linear must compute jaxdp's ``mlp_apply``), and which decent-bench row a jaxdp row's
speed-up is taken against, and the logistic workload's two sides (the same loss)."""
import itertools
import sys
from pathlib import Path

import jax
import numpy as np

from jaxdp.problems import mlp_apply, mlp_init

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_decentbench import LAM, decentbench_peer, export_spec, jaxdp_inputs
from bench_decentbench_models import torch_order


def torch_layout_forward(flat: np.ndarray, sizes, x: np.ndarray) -> np.ndarray:
    """torch's ``Sequential(Linear, Tanh, ..., Linear)`` forward on ``parameters()`` = ``flat``:
    per layer a weight (out, in) then a bias (out,), y = h Wᵀ + b."""
    h, at = x, 0
    for k, (a, b) in enumerate(itertools.pairwise(sizes)):
        weight = flat[at:at + a * b].reshape(b, a)
        bias = flat[at + a * b:at + a * b + b]
        at += a * b + b
        h = h @ weight.T + bias
        if k < len(sizes) - 2:
            h = np.tanh(h)
    assert at == flat.size
    return h


def test_torch_order_computes_mlp_apply():
    sizes = [64, 32, 10]
    layers = mlp_init(jax.random.key(3), sizes, dtype=np.float64)
    layers = [{"W": l["W"], "b": l["b"] + 0.1 * (i + 1)} for i, l in enumerate(layers)]
    x = np.random.default_rng(0).normal(size=(5, 64))
    flat = torch_order(layers).astype(np.float64)
    np.testing.assert_allclose(torch_layout_forward(flat, sizes, x),
                               np.asarray(mlp_apply(layers, x)), rtol=1e-5, atol=1e-5)


def test_decentbench_peer_prefers_same_trials_then_the_largest():
    def row(impl, alg, trials):
        return {"impl": impl, "alg": alg, "trials": trials}
    rows = [row("decent-bench", "fedavg", 30), row("decent-bench", "fedavg", 2),
            row("decent-bench", "fedprox", 256), row("jaxdp", "fedavg", 256)]
    assert decentbench_peer(rows, row("jaxdp", "fedavg", 2)) is rows[1]
    assert decentbench_peer(rows, row("jaxdp", "fedavg", 256)) is rows[0]
    assert decentbench_peer(rows, row("jaxdp", "scaffold", 30)) is None


def test_logistic_workload_is_decentbench_logistic_plus_l2(tmp_path):
    """jaxdp's problem of ``--loss logistic`` is decent-bench's ``LogisticRegressionCost`` on the
    labels mapped to {0, 1} plus ``LAM · L2RegularizerCost`` (½‖x‖²), their formulas in numpy."""
    import pytest

    spec_path = tmp_path / "spec.npz"
    export_spec(spec_path, loss="logistic")
    spec = np.load(spec_path)
    assert set(np.unique(spec["b"])) == {-1.0, 1.0} and str(spec["loss"]) == "logistic"
    with jax.enable_x64(True):
        prob, _ = jaxdp_inputs(str(spec_path))
        x = np.random.default_rng(1).normal(size=spec["A"].shape[2])
        ours = np.asarray(prob.local_losses(np.broadcast_to(x, (len(spec["A"]), x.size))))
    A, b01 = spec["A"], (spec["b"] + 1) / 2
    sig = 1 / (1 + np.exp(-(A @ x)))
    theirs = -np.mean(b01 * np.log(sig) + (1 - b01) * np.log(1 - sig), axis=1) + LAM * x @ x / 2
    np.testing.assert_allclose(ours, theirs, rtol=2e-6)  # float32 data
    with pytest.raises(ValueError, match="loss must be one of"):
        export_spec(tmp_path / "bad.npz", loss="hinge")
