"""Model problems (issue 25): ``from_model`` against the closed-form problems, per-example
gradients and clipping against explicit loops, capability refusals, metrics."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp.algorithms import _sampling
from jaxdp.privacy import clip_by_norm
from jaxdp.problems import (
    STRUCTURED_CLIPPING, ModelProblem, clipped_grad_mean, from_arrays, from_model, mlp_apply,
    mlp_init, per_example_grads, per_example_sq_norms,
)


def _linear(params, x):
    return x @ params["w"]


def _pooled(seed=0, n=61, d=5):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    y = np.where(Z @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    parts = np.array_split(rng.permutation(n), 4)
    return Z, y, parts


def _mlp_problem(dtype=jnp.float64, apply=mlp_apply, **kw):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 3, 2))
    y = rng.integers(0, 3, size=50)
    parts = np.array_split(np.arange(40), 4)
    theta0 = mlp_init(jax.random.key(0), [6, 5, 3], dtype)
    return from_model(apply, theta0, x[:40], y[:40], parts=parts, test=(x[40:], y[40:]),
                      dtype=dtype, **kw)


def test_linear_logistic_model_reproduces_logistic_problem():
    """A linear apply with the logistic loss and weight decay c is Problem("logistic", lam=c)."""
    with jax.enable_x64(True):
        Z, y, parts = _pooled()
        lam = 0.05
        closed = from_arrays([Z[p] for p in parts], [y[p] for p in parts], loss="logistic",
                             reg={"lam": lam}, dtype=jnp.float64, reference=False)
        model = from_model(_linear, {"w": jnp.zeros(5, jnp.float64)}, Z, y, parts=parts,
                           loss="logistic", weight_decay=lam, dtype=jnp.float64)
        X = jax.random.normal(jax.random.key(3), (4, 5), jnp.float64)
        np.testing.assert_allclose(model.local_grads(X), closed.local_grads(X), rtol=0, atol=1e-10)
        np.testing.assert_allclose(model.local_losses(X), closed.local_losses(X), atol=1e-10)
        idx = jnp.tile(jnp.arange(3), (4, 1))
        np.testing.assert_allclose(_sampling.per_sample_grads(model, X, idx),
                                   _sampling.per_sample_grads(closed, X, idx), atol=1e-10)
        assert model.dim == closed.dim == 5


def test_param_pytree_round_trip_and_displacement():
    """Models are x = θ − θ₀ in ravel_pytree order; params_of(0) is θ₀."""
    with jax.enable_x64(True):
        problem = _mlp_problem()
        theta0 = mlp_init(jax.random.key(0), [6, 5, 3], jnp.float64)
        flat, _ = jax.flatten_util.ravel_pytree(theta0)
        assert problem.dim == flat.size == 6 * 5 + 5 + 5 * 3 + 3
        back = problem.params_of(jnp.zeros(problem.dim))
        jax.tree.map(lambda a, b: np.testing.assert_array_equal(a, b), back, theta0)
        shifted = problem.params_of(jnp.arange(problem.dim, dtype=jnp.float64))
        np.testing.assert_array_equal(jax.flatten_util.ravel_pytree(shifted)[0],
                                      flat + jnp.arange(problem.dim))


def test_local_grads_match_autodiff_of_theta():
    """∇f_i in x is ∇ of the masked mean loss in θ (a loop over agents and their real rows)."""
    with jax.enable_x64(True):
        problem = _mlp_problem(weight_decay=0.1)
        X = 0.1 * jax.random.normal(jax.random.key(2), (4, problem.dim), jnp.float64)
        got = problem.local_grads(X)
        for i in range(4):
            real = np.asarray(problem.mask[i]) > 0
            a, y = problem.features[i][real], problem.labels[i][real]

            def f(x, a=a, y=y):
                logits = mlp_apply(problem.params_of(x), a)
                ce = jax.nn.logsumexp(logits, axis=1) - logits[jnp.arange(len(y)), y]
                return jnp.mean(ce) + 0.05 * jnp.sum(x * x)

            np.testing.assert_allclose(got[i], jax.grad(f)(X[i]), atol=1e-10)


@pytest.mark.parametrize("max_elements", [1, 50, 10**9])
def test_per_example_grads_match_loop(max_elements):
    """vmap(grad) in micro-batches equals a Python loop over the rows, whatever the bound."""
    with jax.enable_x64(True):
        problem = _mlp_problem(max_elements=max_elements)
        x = 0.1 * jax.random.normal(jax.random.key(4), (problem.dim,), jnp.float64)
        a, y = problem.features[0], problem.labels[0]
        got = per_example_grads(problem.loss, x, a, y, problem.reg)
        one = jnp.ones((1,))
        for s in range(a.shape[0]):
            want = problem.loss.grad(x, a[s:s + 1], y[s:s + 1], one, problem.reg)
            np.testing.assert_allclose(got[s], want, atol=1e-10)


def _generic_mlp(params, x):
    """``mlp_apply`` under another name: not in STRUCTURED_CLIPPING, so the generic path."""
    return mlp_apply(params, x)


@pytest.mark.parametrize("apply,max_elements,weight_decay", [
    (mlp_apply, 10**9, 0.0), (mlp_apply, 10**9, 0.3),
    (_generic_mlp, 1, 0.0), (_generic_mlp, 70, 0.3), (_generic_mlp, 10**9, 0.0)])
def test_clipped_grad_mean_matches_loop(apply, max_elements, weight_decay):
    """Σ_s w_s clip(g_s, C) / Σ w (Abadi et al. 2016) against a per-sample loop: the MLP's ghost
    norms and the generic micro-batched norms, with and without the penalty in each row."""
    with jax.enable_x64(True):
        problem = _mlp_problem(max_elements=max_elements, weight_decay=weight_decay,
                               apply=apply)
        x = jax.random.normal(jax.random.key(5), (problem.dim,), jnp.float64)
        a, y = problem.features[1], problem.labels[1]
        w = jnp.asarray(np.random.default_rng(0).integers(0, 2, a.shape[0]), jnp.float64)
        C = 0.3
        want = np.zeros(problem.dim)
        for s in range(a.shape[0]):
            g = np.asarray(problem.loss.grad(x, a[s:s + 1], y[s:s + 1], jnp.ones(1), problem.reg))
            want += float(w[s]) * g * min(1.0, C / np.linalg.norm(g))
        got = clipped_grad_mean(problem.loss, x, a, y, w, C, problem.reg)
        np.testing.assert_allclose(got, want / float(jnp.sum(w)), atol=1e-10)
        norms = np.linalg.norm(per_example_grads(problem.loss, x, a, y, problem.reg), axis=1)
        assert norms.max() > C  # clipping was active
        unclipped = clipped_grad_mean(problem.loss, x, a, y, w, jnp.inf, problem.reg, 2.0)
        full = per_example_grads(problem.loss, x, a, y, problem.reg)
        np.testing.assert_allclose(unclipped, (w[:, None] * full).sum(0) / 2.0, atol=1e-10)


@pytest.mark.parametrize("apply", [mlp_apply, _generic_mlp])
def test_per_example_sq_norms_match_per_example_grads(apply):
    """The clipping pass's norms (ghost norms for the MLP, micro-batched vmap(grad) otherwise)
    are the per-example gradients' norms, penalty included."""
    with jax.enable_x64(True):
        problem = _mlp_problem(max_elements=60, weight_decay=0.3, apply=apply)
        x = jax.random.normal(jax.random.key(8), (problem.dim,), jnp.float64)
        a, y = problem.features[2], problem.labels[2]
        got = per_example_sq_norms(problem.loss, x, a, y, problem.reg)
        full = per_example_grads(problem.loss, x, a, y, problem.reg)
        np.testing.assert_allclose(got, np.sum(np.asarray(full) ** 2, axis=1), rtol=1e-12)
        assert (apply is mlp_apply) == (apply in STRUCTURED_CLIPPING)


@pytest.mark.parametrize("sampling", ["fixed", "poisson"])
def test_sampling_clipped_mean_on_model_problem_is_fused_and_exact(sampling):
    """The algorithms' per-sample clipping helper takes the model problem's micro-batched path
    and equals the generic (N, b, d) path; clip per agent."""
    with jax.enable_x64(True):
        problem = _mlp_problem(max_elements=40)
        X = jax.random.normal(jax.random.key(6), (4, problem.dim), jnp.float64)
        clip = jnp.array([0.1, 0.2, jnp.inf, 0.4])
        if sampling == "fixed":
            batch = jnp.tile(jnp.arange(1, 6), (4, 1))
        else:
            batch = jax.random.bernoulli(jax.random.key(7), 0.5, problem.mask.shape) * 1.0
        got = _sampling.per_sample_clipped_mean(problem, X, batch, clip, sampling=sampling,
                                                batch_size=5)
        idx, _ = _sampling.batch_rows(batch, sampling)
        generic = _sampling.per_sample_grads(problem, X, idx)
        want = _sampling.per_sample_clipped_mean(problem, X, batch, clip, generic,
                                                 sampling=sampling, batch_size=5)
        np.testing.assert_allclose(got, want, atol=1e-10)


def test_metrics_have_test_accuracy_and_no_x_star():
    problem = _mlp_problem(dtype=jnp.float32)
    metrics = problem.metrics(jnp.zeros((4, problem.dim), jnp.float32))
    assert {"objective", "test_loss", "test_accuracy", "agent_test_accuracy_mean",
            "agent_test_accuracy_min", "consensus_error"} <= set(metrics)
    assert "dist_to_opt" not in metrics and "suboptimality" not in metrics
    assert all(np.isfinite(v) for v in metrics.values())
    assert 0.0 <= float(metrics["test_accuracy"]) <= 1.0


def _equations(jaxpr) -> int:
    """The number of equations of a jaxpr, those of its sub-jaxprs (loop bodies, branches)
    included."""
    subs = [getattr(v, "jaxpr", v) for eqn in jaxpr.eqns for p in eqn.params.values()
            for v in (p if isinstance(p, (tuple, list)) else (p,))]
    return len(jaxpr.eqns) + sum(_equations(v) for v in subs if hasattr(v, "eqns"))


def test_program_size_does_not_grow_with_rows():
    """The per-example program is a loop: its jaxpr has the same size for 8 and 800 rows."""
    problem = _mlp_problem(dtype=jnp.float32, max_elements=200)
    x = jnp.zeros(problem.dim, jnp.float32)

    def size(b):
        a = jnp.zeros((b, 3, 2), jnp.float32)
        y = jnp.zeros((b,), jnp.int32)
        fn = lambda a, y: clipped_grad_mean(problem.loss, x, a, y, jnp.ones(b), 1.0, problem.reg)
        return _equations(jax.make_jaxpr(fn)(a, y).jaxpr)

    assert size(8) == size(800)  # only the shapes' digits change


def test_dgd_runs_and_learns_on_model_problem():
    problem = _mlp_problem(dtype=jnp.float64)  # the run's dtype (x64 is on in the tests)
    net = jaxdp.network.build_network(jaxdp.network.ring(4))
    alg = jaxdp.algorithms.DGD()
    params = alg.params_type(alpha=0.5)
    trace = jaxdp.run(alg, problem, net, params, steps=40, seeds=1, progress=False)
    obj = np.asarray(trace.metrics["objective"])[0]
    assert obj[-1] < obj[0]


def test_algorithms_needing_more_refuse_before_the_run():
    """An algorithm declaring a need the problem lacks is refused by the engine, by name."""
    problem = _mlp_problem(dtype=jnp.float32)
    net = jaxdp.network.build_network(jaxdp.network.ring(4))
    alg = jaxdp.algorithms.REGISTRY["recal"]()
    with pytest.raises(ValueError, match="recal cannot run on problem .*smoothness"):
        jaxdp.run(alg, problem, net, steps=2, progress=False)
    wrapped = jaxdp.channels.with_channel(alg, jaxdp.channels.parse_channel("drop:0.1"))
    assert "smoothness" in wrapped.requirements()  # a wrapper needs what it wraps
    exact = jaxdp.algorithms.LDPADMM(primal="exact", private=False)
    assert "hessian" in exact.requirements()
    with pytest.raises(ValueError, match="hessian"):
        jaxdp.run(exact, problem, net, steps=2, progress=False)


def test_model_problem_refuses_smoothness_and_bounds_are_inf():
    problem = _mlp_problem(dtype=jnp.float32)
    with pytest.raises(ValueError, match="no smoothness bound"):
        problem.smoothness()
    assert np.all(np.isinf(problem.gradient_bound()))
    assert isinstance(problem, ModelProblem) and "x_star" not in problem.capabilities


@pytest.mark.parametrize("kwargs, match", [
    ({"loss": "hinge"}, "unknown loss 'hinge'"),
    ({"parts": [np.arange(3), np.array([], int)]}, "agent 1 has no sample"),
    ({"parts": [np.arange(3), np.array([99])]}, "outside"),
    ({"labels": np.full(40, 7)}, "class label 7 is not an integer in \\[0, 3\\)"),
    ({"weight_decay": -1.0}, "weight_decay"),
    ({"max_elements": 0}, "max_elements"),
])
def test_bad_input_is_named(kwargs, match):
    rng = np.random.default_rng(0)
    base = dict(features=rng.normal(size=(40, 3, 2)), labels=rng.integers(0, 3, 40),
                parts=np.array_split(np.arange(40), 4))
    base.update(kwargs)
    theta0 = mlp_init(jax.random.key(0), [6, 5, 3], jnp.float32)
    features, labels = base.pop("features"), base.pop("labels")
    with pytest.raises(ValueError, match=match):
        from_model(mlp_apply, theta0, features, labels, **base)


def test_integer_parameter_leaf_is_refused():
    with pytest.raises(ValueError, match=r"parameter \['n'\] has dtype int"):
        from_model(_linear, {"w": jnp.zeros(2), "n": jnp.zeros(1, jnp.int32)},
                   np.zeros((4, 2)), np.ones(4), parts=[np.arange(4)], loss="logistic")


def _python_blocks(page):
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / page).read_text()
    return [b.split("```")[0] for b in text.split("```python\n")[1:]]


def test_models_page_examples_run(capsys):
    """docs/models.md's Python examples run as written (DGD learns: accuracy printed > 0.5)."""
    for block in _python_blocks("models.md"):
        exec(compile(block, "docs/models.md", "exec"), {})
    out = capsys.readouterr().out
    first = out.split("]")[0].strip("[ \n").split()
    assert all(float(a) > 0.5 for a in first)
    assert "total  1438" in out  # 1,797 − 359 held out


def test_cli_runs_digits_mlp_with_a_split(tmp_path, capsys):
    from jaxdp.cli import main
    code = main(["run", "dgd", "--problem", "digits_mlp", "--split", "shards:2", "--agents", "4",
                 "--network", "ring", "--param", "alpha=0.5", "--steps", "20", "--seeds", "1",
                 "--problem-param", "hidden=8", "--out", str(tmp_path), "--force"])
    assert code == 0
    assert "test_accuracy" in capsys.readouterr().out


def test_cli_split_on_a_linear_problem_is_refused(tmp_path, capsys):
    from jaxdp.cli import main
    assert main(["run", "dgd", "--problem", "nonconvex_logistic", "--split", "iid", "--agents",
                 "4", "--steps", "2", "--out", str(tmp_path)]) == 2
    assert "--split: nonconvex_logistic has no split argument" in capsys.readouterr().err


@pytest.mark.slow
def test_every_registered_algorithm_runs_or_is_refused_by_name():
    """On a model problem each algorithm runs (finite metrics) or is refused before the run by
    a ValueError naming the problem or its loss."""
    problem = problems_digits(hidden=0)
    net = jaxdp.network.make_network("complete", 4)
    for name in sorted(jaxdp.algorithms.REGISTRY):
        alg = jaxdp.algorithms.get(name)
        try:
            trace = jaxdp.run(alg, problem, net, steps=2, seeds=1, progress=False,
                              record_every=2)
        except ValueError as e:
            assert "digits_mlp" in str(e) or "'model'" in str(e), (name, str(e))
            continue
        assert np.isfinite(np.asarray(trace.metrics["objective"])).all(), name


def problems_digits(**kw):
    return jaxdp.problems.digits_mlp(4, split="iid", dtype=jnp.float64, **kw)


def test_equal_builds_share_one_static_loss():
    """The loss (apply, layout, θ₀ by content) is static metadata: two builds of the same model
    hash equal (one compiled program); another θ₀ does not."""
    a = jaxdp.problems.digits_mlp(4, hidden=4, dtype=jnp.float64)
    b = jaxdp.problems.digits_mlp(4, hidden=4, dtype=jnp.float64)
    c = jaxdp.problems.digits_mlp(4, hidden=4, dtype=jnp.float64, init_seed=1)
    assert a.loss == b.loss and hash(a.loss) == hash(b.loss)
    assert a.loss != c.loss
    assert jax.tree.structure(a) == jax.tree.structure(b)


def test_step_costs_count_image_rows():
    """The cost counter counts gradient rows of (8, 8) images: DGD computes every agent's full
    local gradient once a step (N grad calls, every real and padded row)."""
    problem = jaxdp.problems.digits_mlp(4, hidden=4, dtype=jnp.float64)
    net = jaxdp.network.build_network(jaxdp.network.ring(4))
    costs = jaxdp.algorithms.DGD().costs_per_step(problem, net, jaxdp.algorithms.DGDParams())
    assert costs["grad_calls"] == pytest.approx(4.0)
    assert costs["sample_grads"] == pytest.approx(4 * problem.n_samples)


def _cnn_apply(params, x):
    """A tiny CNN on (b, 8, 8) images: 3×3 conv with 4 channels, tanh, 2×2 mean pool, linear.

    The conv is written as patches times the kernel (im2col); ``lax.conv_general_dilated``
    works as well (the test below)."""
    patches = jax.lax.conv_general_dilated_patches(x[:, None], (3, 3), (1, 1), "SAME")
    h = jnp.einsum("bpij,cp->bcij", patches, params["conv"].reshape(4, 9))  # (b, 4, 8, 8)
    h = jnp.tanh(h + params["conv_b"][None, :, None, None])
    h = h.reshape(h.shape[0], 4, 4, 2, 4, 2).mean(axis=(3, 5)).reshape(h.shape[0], -1)
    return h @ params["out"] + params["out_b"][None, :]


def test_a_cnn_trains_with_dgd_on_a_dirichlet_split():
    """Any apply works: a small CNN on the digits, non-IID split, the objective decreases."""
    images, labels = jaxdp.problems.load_digits()
    parts = jaxdp.problems.split(labels[:400], 4, "dirichlet:0.5", seed=0)
    k1, k2 = jax.random.split(jax.random.key(0))
    theta0 = {"conv": 0.3 * jax.random.normal(k1, (4, 1, 3, 3), jnp.float64),
              "conv_b": jnp.zeros(4, jnp.float64),
              "out": 0.1 * jax.random.normal(k2, (64, 10), jnp.float64),
              "out_b": jnp.zeros(10, jnp.float64)}
    problem = from_model(_cnn_apply, theta0, images[:400], labels[:400], parts=parts,
                         test=(images[400:600], labels[400:600]), dtype=jnp.float64)
    assert problem.dim == 36 + 4 + 640 + 10
    net = jaxdp.network.build_network(jaxdp.network.ring(4))
    trace = jaxdp.run(jaxdp.algorithms.DGD(), problem, net, jaxdp.algorithms.DGDParams(alpha=1.0),
                      steps=60, seeds=1, progress=False, record_every=60)
    objective = np.asarray(trace.metrics["objective"])[0]
    accuracy = np.asarray(trace.metrics["test_accuracy"])[0]
    assert objective[-1] < 0.7 * objective[0] and accuracy[-1] > accuracy[0]


def _conv_apply(params, x):
    """A tiny CNN: 3×3 lax.conv_general_dilated (1 → 2 channels, SAME) of (b, 4, 4) images,
    tanh, dense."""
    h = jnp.tanh(jax.lax.conv_general_dilated(x[:, None], params["k"], (1, 1), "SAME"))
    return h.reshape(x.shape[0], -1) @ params["W"] + params["b"][None, :]


def _conv_problem(dtype):
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(24, 4, 4)), rng.integers(0, 3, size=24)
    keys = jax.random.split(jax.random.key(1))
    theta0 = {"k": 0.3 * jax.random.normal(keys[0], (2, 1, 3, 3), dtype),
              "W": 0.2 * jax.random.normal(keys[1], (32, 3), dtype), "b": jnp.zeros(3, dtype)}
    return from_model(_conv_apply, theta0, x, y, parts=np.array_split(np.arange(24), 4),
                      dtype=dtype, weight_decay=0.1)


def test_convolution_runs_inside_run_with_a_private_algorithm():
    """A lax.conv_general_dilated model through jaxdp.run (seeds vmapped over a sharded axis)
    with DP-DSGD: the kernel's gradient batches (NotImplementedError before the rows were tied
    to the model), and its clipped mean is the per-example loop's."""
    problem = _conv_problem(jnp.float64)
    assert problem.loss.tie_rows
    x = 0.5 * jax.random.normal(jax.random.key(9), (problem.dim,), jnp.float64)
    a, y = problem.features[0], problem.labels[0]
    w = jnp.ones(a.shape[0], jnp.float64)
    row_grad = jax.jit(lambda a, y: problem.loss.grad(x, a, y, jnp.ones(1), problem.reg))
    want = sum(clip_by_norm(row_grad(a[s:s + 1], y[s:s + 1]), 0.2) for s in range(a.shape[0]))
    got = clipped_grad_mean(problem.loss, x, a, y, w, 0.2, problem.reg)
    np.testing.assert_allclose(got, want / a.shape[0], atol=1e-10)
    net = jaxdp.network.build_network(jaxdp.network.ring(4))
    alg = jaxdp.algorithms.REGISTRY["dp_dsgd"](batch_size=3)
    objective = lambda problem, X: {"objective": problem.objective(jnp.mean(X, axis=0))}
    trace = jaxdp.run(alg, problem, net, alg.params_type(alpha=0.1, clip=1.0, sigma=0.5),
                      steps=2, seeds=2, record_every=2, metrics=objective, progress=False)
    objective = np.asarray(trace.metrics["objective"])
    assert objective.shape[0] == 2 and np.all(np.isfinite(objective))
    assert not np.allclose(objective[0], objective[1])  # the seeds draw different noise


# --- the packaged CNN (digits_cnn) and its ghost clipping ---------------------------------------
def _cnn_rows(weight_decay=0.3, rows=10):
    problem = jaxdp.problems.digits_cnn(4, channels=3, weight_decay=weight_decay,
                                        dtype=jnp.float64)
    x = 0.5 * jax.random.normal(jax.random.key(11), (problem.dim,), jnp.float64)
    return problem, x, problem.features[1][:rows], problem.labels[1][:rows]


def test_cnn_apply_is_the_convolution():
    """cnn_apply's patches × kernel is lax.conv_general_dilated (SAME) of the same kernel, then
    ReLU, 2×2 mean pool and the dense layer (written out independently here)."""
    problem, x, a, _ = _cnn_rows()
    params = problem.params_of(x)
    kernel = params["conv"]["w"].reshape(3, 1, 3, 3)
    z = jax.lax.conv_general_dilated(a[:, None], kernel, (1, 1), "SAME",
                                     precision=jax.lax.Precision.HIGHEST)
    h = jax.nn.relu(z + params["conv"]["b"][None, :, None, None])
    pooled = (h[:, :, 0::2, 0::2] + h[:, :, 1::2, 0::2] + h[:, :, 0::2, 1::2]
              + h[:, :, 1::2, 1::2]) / 4
    want = pooled.reshape(a.shape[0], -1) @ params["dense"]["w"] + params["dense"]["b"][None]
    np.testing.assert_allclose(jaxdp.problems.cnn_apply(params, a), want, atol=1e-12)
    assert jaxdp.problems.digits_cnn(2).dim == 1370  # 8 channels: 72 + 8 + 1280 + 10


@pytest.mark.parametrize("weight_decay", [0.0, 0.3])
def test_cnn_ghost_clipping_matches_the_per_example_loop(weight_decay):
    """cnn_clipping's one-pass norms are the per-example gradients' norms (penalty included) and
    its clipped sum is Σ_s w_s clip(g_s, C) of a loop over the rows (Abadi et al. 2016)."""
    problem, x, a, y = _cnn_rows(weight_decay)
    assert jaxdp.problems.cnn_apply in STRUCTURED_CLIPPING
    full = np.asarray(per_example_grads(problem.loss, x, a, y, problem.reg))
    got = per_example_sq_norms(problem.loss, x, a, y, problem.reg)
    np.testing.assert_allclose(got, np.sum(full ** 2, axis=1), rtol=1e-10)
    w = jnp.asarray(np.random.default_rng(3).integers(0, 2, a.shape[0]), jnp.float64)
    C = 0.5 * float(np.median(np.linalg.norm(full, axis=1)))
    want = np.zeros(problem.dim)
    for s in range(a.shape[0]):
        g = np.asarray(problem.loss.grad(x, a[s:s + 1], y[s:s + 1], jnp.ones(1), problem.reg))
        want += float(w[s]) * g * min(1.0, C / np.linalg.norm(g))
    clipped = clipped_grad_mean(problem.loss, x, a, y, w, C, problem.reg)
    np.testing.assert_allclose(clipped, want / float(jnp.sum(w)), atol=1e-10)
    unclipped = clipped_grad_mean(problem.loss, x, a, y, w, jnp.inf, problem.reg, 2.0)
    np.testing.assert_allclose(unclipped, (np.asarray(w)[:, None] * full).sum(0) / 2.0,
                               atol=1e-10)


def test_digits_cnn_bad_channels_is_named():
    with pytest.raises(ValueError, match="channels must be an int >= 1; got 0"):
        jaxdp.problems.digits_cnn(4, channels=0)


def test_cli_runs_digits_cnn_with_a_private_algorithm(tmp_path, capsys):
    """``--problem digits_cnn`` runs DP-DSGD on a non-IID split from the command line."""
    from jaxdp.cli import ENDED_WORSE, main
    code = main(["run", "dp_dsgd", "--problem", "digits_cnn", "--split", "dirichlet:0.3",
                 "--agents", "4", "--network", "ring", "--param", "alpha=0.5", "--param",
                 "clip=1.0", "--param", "sigma=1.0", "--steps", "5", "--seeds", "1",
                 "--problem-param", "channels=2", "--out", str(tmp_path), "--force"])
    assert code in (0, ENDED_WORSE)  # 5 steps at σ = 1: finished, the loss may end higher
    assert "test_accuracy" in capsys.readouterr().out


def test_from_model_default_dtype_follows_jax_and_runs():
    """Without a dtype, from_model uses JAX's default float (float64 under the tests' x64), so
    the problem runs inside jaxdp.run (a float32 default failed there under x64)."""
    Z, y, parts = _pooled()
    problem = from_model(_linear, {"w": jnp.zeros(5)}, Z, y, parts=parts, loss="logistic")
    assert problem.features.dtype == jnp.float64
    net = jaxdp.network.build_network(jaxdp.network.ring(4))
    trace = jaxdp.run(jaxdp.algorithms.DGD(), problem, net, jaxdp.algorithms.DGDParams(alpha=0.5),
                      steps=2, seeds=1, progress=False, record_every=2)
    assert np.all(np.isfinite(np.asarray(trace.metrics["objective"])))


def test_cnn_ghost_clipped_rows_stay_within_c_and_a_wrong_norm_does_not():
    """What DP-SGD's sensitivity rests on: every row's contribution combine(e_s·scale) to the
    clipped sum has norm <= C (= C where the row was clipped). Positive control: the same
    scaling computed from a norm without the kernel's term lets a row exceed C."""
    problem, x, a, y = _cnn_rows(weight_decay=0.3, rows=12)
    sq, combine = STRUCTURED_CLIPPING[jaxdp.problems.cnn_apply](problem.loss, x, a, y,
                                                                problem.reg)
    C = 0.5 * float(jnp.sqrt(jnp.min(sq)))  # every row is clipped
    rows = lambda scale: np.linalg.norm(
        jax.vmap(lambda e: combine(e * scale))(jnp.eye(a.shape[0])), axis=1)
    np.testing.assert_allclose(rows(C / jnp.maximum(jnp.sqrt(sq), C)), C, rtol=1e-12)
    full = np.asarray(per_example_grads(problem.loss, x, a, y, problem.reg))
    kernel = full[:, 3:30]  # leaves in order: conv b (3 channels), conv w (3 × 9), dense ...
    wrong = jnp.asarray(np.sum(full ** 2, axis=1) - np.sum(kernel ** 2, axis=1))
    assert rows(C / jnp.maximum(jnp.sqrt(wrong), C)).max() > 1.01 * C
