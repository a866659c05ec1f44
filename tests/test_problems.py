"""Tests of jaxdp.problems: losses against per-sample loops, masks, minibatches, reference
solutions, smoothness and gradient bounds, metrics, seeds, errors, dtypes and pytrees."""

import dataclasses
import json
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import problems
from jaxdp.problems import LOSSES, from_arrays, make_problem, partition

# ℓ1 losses (smooth part + prox) are tested in test_problems_l1_adult.py
SMOOTH_LOSSES = sorted(k for k, cls in LOSSES.items() if cls.l1_key is None)

SYNTHETIC = sorted(set(problems.PROBLEMS) - set(problems.MODEL_PROBLEMS))
"""The synthetic problem builders (the registry less the model problems)."""
SMALL = {  # name -> builder kwargs for a small instance
    "least_squares": {"n_agents": 4, "m": 12, "d": 3, "ridge": 0.1, "seed": 3},
    "logistic": {"n_agents": 4, "m": 12, "d": 3, "lam": 0.05, "seed": 3, "test_m": 30},
    "nonconvex_logistic": {
        "n_agents": 4,
        "m": 12,
        "d": 3,
        "lam": 0.2,
        "omega": 2.0,
        "smoothness": 3.0,
        "seed": 3,
    },
}
REG = {
    "least_squares": {"ridge": 0.3},
    "logistic": {"lam": 0.07},
    "nonconvex_logistic": {"lam": 0.4, "omega": 1.5},
}


# --- per-sample reference: explicit loops over agents, samples and coordinates -----------------
def _dot(z, x):
    return sum(z[k] * x[k] for k in range(len(x)))


def _reference_loss_grad(name, x, rows, targets, reg):
    """f_i(x) and ∇f_i(x) of one agent from its real rows, by explicit loops."""
    d, m = len(x), len(targets)
    loss, grad = 0.0, np.zeros(d)
    for z, y in zip(rows, targets, strict=True):
        t = _dot(z, x)
        if name == "least_squares":
            loss += 0.5 * (t - y) ** 2
            slope = t - y
        else:
            loss += math.log1p(math.exp(-y * t))
            slope = -y / (1.0 + math.exp(y * t))
        for k in range(d):
            grad[k] += slope * z[k] / m
    loss /= m
    for k in range(d):
        if name == "nonconvex_logistic":
            lam, om = reg["lam"], reg["omega"]
            loss += lam * om * x[k] ** 2 / (1.0 + om * x[k] ** 2)
            grad[k] += 2.0 * lam * om * x[k] / (1.0 + om * x[k] ** 2) ** 2
        else:
            c = reg["ridge" if name == "least_squares" else "lam"]
            loss += 0.5 * c * x[k] ** 2
            grad[k] += c * x[k]
    return loss, grad


def _shards(name, seed=0, sizes=(5, 9, 1, 7), d=3):
    """Unequal per-agent shards with labels suited to the loss."""
    rng = np.random.default_rng(seed)
    features = [rng.standard_normal((s, d)) for s in sizes]
    if name == "least_squares":
        labels = [rng.standard_normal(s) for s in sizes]
    else:
        labels = [rng.choice([-1.0, 1.0], size=s) for s in sizes]
    return features, labels


def _unequal_problem(name, seed=0):
    features, labels = _shards(name, seed)
    problem = from_arrays(features, labels, loss=name, reg=REG[name], reference=False)
    return problem, features, labels


def _random_models(problem, seed=1, scale=1.0):
    return scale * jax.random.normal(jax.random.key(seed), (problem.n_agents, problem.dim))


@pytest.mark.parametrize("name", SMOOTH_LOSSES)
def test_local_losses_and_grads_match_per_sample_loop(name):
    """Local losses and gradients equal an explicit per-agent, per-sample loop (1e-10)."""
    problem, features, labels = _unequal_problem(name)
    X = _random_models(problem)
    losses, grads = problem.local_losses(X), problem.local_grads(X)
    for i in range(problem.n_agents):
        ref_loss, ref_grad = _reference_loss_grad(
            name, np.asarray(X[i]), features[i], labels[i], REG[name]
        )
        np.testing.assert_allclose(losses[i], ref_loss, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(grads[i], ref_grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", SMOOTH_LOSSES)
def test_closed_form_grad_equals_autodiff(name):
    """Loss.grad (closed form) equals jax.grad of the loss, padding included."""
    problem, _, _ = _unequal_problem(name)
    X = _random_models(problem, scale=2.0)
    autodiff = jax.vmap(jax.grad(problem.loss), in_axes=(0, 0, 0, 0, None))(
        X, problem.features, problem.labels, problem.mask, problem.reg
    )
    chex.assert_trees_all_close(problem.local_grads(X), autodiff, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", SMOOTH_LOSSES)
def test_masked_shards_equal_unpadded_computation(name):
    """A padded, masked shard gives the loss and gradient of the same shard without padding."""
    problem, features, labels = _unequal_problem(name)
    X = _random_models(problem)
    losses, grads = problem.local_losses(X), problem.local_grads(X)
    for i, (z, y) in enumerate(zip(features, labels, strict=True)):
        args = (jnp.asarray(z), jnp.asarray(y), jnp.ones(len(y)), problem.reg)
        np.testing.assert_allclose(losses[i], problem.loss(X[i], *args), rtol=1e-13)
        np.testing.assert_allclose(grads[i], problem.loss.grad(X[i], *args), rtol=1e-12)


@pytest.mark.parametrize("d", [2, 12])
def test_least_squares_shard_gradient_on_both_sides_of_m_equals_d(d):
    """Least squares' whole-shard gradient (normal equations when m ≥ d, the rows when d > m:
    padded m = 9 here) equals the per-sample loop and the minibatch form on every row (1e-10)."""
    features, labels = _shards("least_squares", sizes=(5, 9, 1, 7), d=d)
    problem = from_arrays(features, labels, loss="least_squares", reg=REG["least_squares"],
                          reference=False)
    X = _random_models(problem)
    grads = problem.local_grads(X)
    rows = jnp.broadcast_to(jnp.arange(problem.n_samples), problem.mask.shape)
    np.testing.assert_allclose(grads, problem.local_grads(X, rows), rtol=1e-10, atol=1e-12)
    for i in range(problem.n_agents):
        _, ref = _reference_loss_grad("least_squares", np.asarray(X[i]), features[i],
                                      labels[i], REG["least_squares"])
        np.testing.assert_allclose(grads[i], ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_least_squares_normal_equations_do_not_overflow_before_the_gradient(dtype):
    """A finite record whose square overflows (1e20 in float32, 1e160 in float64) leaves the
    whole-shard gradient finite where the rows form is (at x = 0 and near it): the rows are
    scaled by a power of two before ``ZᵀDZ``, not ``inf · 0 = NaN``."""
    magnitude = {"float32": 1e20, "float64": 1e160}[dtype]
    rng = np.random.default_rng(0)
    features = rng.normal(size=(2, 6, 3))
    features[0, 0] = [magnitude, 0.0, 0.0]
    problem = from_arrays(features, rng.normal(size=(2, 6)), loss="least_squares",
                          reg={"ridge": 0.0}, reference=False, dtype=dtype)
    args = (problem.features, problem.labels, problem.mask)
    for x in (jnp.zeros((2, 3), dtype), jnp.full((2, 3), 1e-30 * magnitude ** -0.5, dtype)):
        rows = jax.vmap(problem.loss.grad, in_axes=(0, 0, 0, 0, None))(x, *args, problem.reg)
        assert np.isfinite(np.asarray(rows)).all()
        np.testing.assert_allclose(problem.local_grads(x), rows,
                                   rtol={"float32": 1e-5, "float64": 1e-12}[dtype])


def test_least_squares_normal_equations_leave_the_step_loop():
    """Inside a loop over steps, least squares' ``ZᵀDZ`` and ``ZᵀDy`` are computed once: the
    compiled loop carries the (N, d, d) normal matrices, not the (N, m, d) rows (XLA's
    loop-invariant code motion; a step then costs d² per agent, not 2md)."""
    problem = problems.least_squares(4, 30, 3, seed=0)

    def descend(problem, x):
        step = lambda x, _: (x - 0.1 * problem.local_grads(x), None)
        return jax.lax.scan(step, x, None, length=20)[0]

    text = jax.jit(descend).lower(problem, jnp.zeros((4, 3))).compile().as_text()
    carried = [line for line in text.splitlines() if " while(" in line]
    assert len(carried) == 1
    dtype = jnp.dtype(problem.features.dtype).name.replace("float", "f")
    assert f"{dtype}[4,3,3]" in carried[0] and f"{dtype}[4,30,3]" not in carried[0]


@pytest.mark.parametrize("name", SMOOTH_LOSSES)
def test_minibatch_grads_match_loop_on_chosen_rows(name):
    """With batch_idx, the loss and gradient are those of the chosen rows only (repeats counted)."""
    problem, features, labels = _unequal_problem(name)
    rng = np.random.default_rng(7)
    batch_idx = np.stack([rng.integers(0, len(y), size=4) for y in labels])
    X = _random_models(problem)
    losses = problem.local_losses(X, batch_idx=jnp.asarray(batch_idx))
    grads = jax.jit(problem.local_grads)(X, jnp.asarray(batch_idx))
    for i, rows in enumerate(batch_idx):
        ref_loss, ref_grad = _reference_loss_grad(
            name, np.asarray(X[i]), features[i][rows], labels[i][rows], REG[name]
        )
        np.testing.assert_allclose(losses[i], ref_loss, rtol=1e-10)
        np.testing.assert_allclose(grads[i], ref_grad, rtol=1e-10, atol=1e-12)


def test_objective_and_global_grad_are_sums_of_local_terms():
    """objective(x) = Σ_i f_i(x) and global_grad(x) = Σ_i ∇f_i(x) at a shared model."""
    problem, _, _ = _unequal_problem("nonconvex_logistic")
    x = jnp.array([0.3, -1.2, 0.7])
    X = jnp.tile(x, (problem.n_agents, 1))
    np.testing.assert_allclose(problem.objective(x), jnp.sum(problem.local_losses(X)), rtol=1e-13)
    np.testing.assert_allclose(problem.global_grad(x), jax.grad(problem.objective)(x), rtol=1e-12)


# --- reference solutions ----------------------------------------------------------------------
@pytest.mark.parametrize("name", SYNTHETIC)
def test_reference_solution_is_stationary(name):
    """x* from the float64 host solver has ||∇f(x*)|| < 1e-9, and f* = f(x*)."""
    problem = make_problem(name)
    assert float(jnp.linalg.norm(problem.global_grad(problem.x_star))) < 1e-9
    np.testing.assert_allclose(problem.f_star, problem.objective(problem.x_star), rtol=1e-12)


@pytest.mark.parametrize("ridge", [0.0, 0.5])
def test_least_squares_reference_matches_lstsq(ridge):
    """x* equals numpy lstsq of the weighted, ridge-augmented system (unequal shards)."""
    features, labels = _shards("least_squares", sizes=(6, 11, 4))
    problem = from_arrays(features, labels, loss="least_squares", reg={"ridge": ridge})
    N, d = len(labels), features[0].shape[1]
    A = np.concatenate([a / np.sqrt(len(a)) for a in features] + [np.sqrt(N * ridge) * np.eye(d)])
    b = np.concatenate([y / np.sqrt(len(y)) for y in labels] + [np.zeros(d)])
    np.testing.assert_allclose(problem.x_star, np.linalg.lstsq(A, b, rcond=None)[0], rtol=1e-10)


def test_reference_is_skipped_with_nan():
    """reference=False leaves x* and f* as NaN."""
    problem = problems.logistic(n_agents=3, m=5, d=2, reference=False)
    assert problem.x_star.shape == (2,) and bool(jnp.all(jnp.isnan(problem.x_star)))
    assert problem.f_star.shape == () and bool(jnp.isnan(problem.f_star))


# --- smoothness and gradient bounds -----------------------------------------------------------
def test_nonconvex_rescale_gives_paper_smoothness():
    """Default nonconvex_logistic (paper 000 §6.1) has max_i M_i = 5.03 exactly."""
    problem = problems.nonconvex_logistic()
    assert (problem.n_agents, problem.n_samples, problem.dim) == (50, 200, 10)
    np.testing.assert_allclose(problem.smoothness().max(), 5.03, rtol=1e-13)
    unscaled = problems.nonconvex_logistic(smoothness=None, reference=False)
    assert 0.2 < unscaled.smoothness().max() < 0.6  # about 0.39 with N(0, I) data


@pytest.mark.parametrize("name", SYNTHETIC)
def test_smoothness_bounds_hessian_eigenvalues(name):
    """M_i >= max |eigenvalue of ∇²f_i(x)| at random points and at 0 (exact for least squares)."""
    problem = make_problem(name, **SMALL[name])
    hessians = jax.vmap(jax.hessian(problem.loss), in_axes=(0, 0, 0, 0, None))
    bound = problem.smoothness()
    for seed, scale in [(0, 0.0), (1, 0.3), (2, 1.0), (3, 3.0)]:
        H = hessians(
            _random_models(problem, seed, scale),
            problem.features,
            problem.labels,
            problem.mask,
            problem.reg,
        )
        top = np.abs(np.linalg.eigvalsh(np.asarray(H))).max(axis=1)
        assert np.all(top <= bound * (1 + 1e-12))
        if name == "least_squares":
            np.testing.assert_allclose(top, bound, rtol=1e-12)


def test_gradient_bounds():
    """Logistic data-term bound max ||z|| covers every per-sample gradient; the nonconvex penalty's
    bound is attained at omega x^2 = 1/3; least squares and ridge-logistic are unbounded."""
    assert np.all(
        np.isinf(make_problem("least_squares", **SMALL["least_squares"]).gradient_bound())
    )
    problem = problems.logistic(n_agents=3, m=8, d=4, lam=0.1)
    assert np.all(np.isinf(problem.gradient_bound()))
    radius = np.linalg.norm(np.asarray(problem.features), axis=2).max(axis=1)
    np.testing.assert_allclose(problem.gradient_bound(data_only=True), radius, rtol=1e-14)
    per_sample = jax.vmap(
        jax.vmap(jax.grad(lambda x, z, y: jnp.logaddexp(0.0, -y * (z @ x))), in_axes=(None, 0, 0)),
        in_axes=(None, 0, 0),
    )
    g = per_sample(100.0 * jnp.ones(4), problem.features, problem.labels)
    assert np.all(np.linalg.norm(np.asarray(g), axis=2).max(axis=1) <= radius)

    nonconvex = make_problem("nonconvex_logistic", **SMALL["nonconvex_logistic"])
    reg, loss = nonconvex.reg, nonconvex.loss
    x = jnp.full(3, 1.0 / jnp.sqrt(3.0 * reg["omega"]))
    penalty_part = nonconvex.gradient_bound() - nonconvex.gradient_bound(data_only=True)
    np.testing.assert_allclose(penalty_part, jnp.linalg.norm(loss.penalty_grad(x, reg)), rtol=1e-12)
    X = _random_models(nonconvex, scale=2.0)
    assert np.all(
        np.linalg.norm(np.asarray(nonconvex.local_grads(X)), axis=1) <= nonconvex.gradient_bound()
    )


# --- metrics ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SYNTHETIC)
def test_metrics_at_consensus_on_reference(name):
    """At X = 1 x*ᵀ: no consensus error, no gradient, no distance, no suboptimality."""
    problem = make_problem(name, **SMALL[name])
    out = jax.jit(problems.Problem.metrics)(
        problem, jnp.tile(problem.x_star, (problem.n_agents, 1))
    )
    for key in ("consensus_error", "grad_norm_sq", "stationarity", "dist_to_opt"):
        assert float(out[key]) < 1e-20, key
    assert abs(float(out["suboptimality"])) < 1e-12
    assert ("test_accuracy" in out) == (name == "logistic")  # the only small case with a test set


def test_metrics_match_numpy_formulas():
    """Each metric at non-consensus models equals its numpy formula."""
    problem = problems.logistic(n_agents=5, m=20, d=3, seed=4, test_m=40)
    X = _random_models(problem, seed=5)
    out = problem.metrics(X)
    Xn = np.asarray(X)
    x_bar = Xn.mean(axis=0)
    local = np.asarray(problem.local_grads(X))
    expected = {
        "objective": float(problem.objective(x_bar)),
        "grad_norm_sq": float(np.sum(np.asarray(problem.global_grad(x_bar)) ** 2)),
        "consensus_error": float(np.sum((Xn - x_bar) ** 2)),
        "stationarity": float(np.sum(local.sum(axis=0) ** 2)) / 5,
        "dist_to_opt": float(np.sum((x_bar - np.asarray(problem.x_star)) ** 2)),
        "suboptimality": float(problem.objective(x_bar) - problem.f_star),
        "test_accuracy": float(
            np.mean(
                np.sign(np.asarray(problem.test_features) @ x_bar)
                == np.asarray(problem.test_labels)
            )
        ),
    }
    assert set(out) == set(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(out[key], value, rtol=1e-12, err_msg=key)


def test_metrics_are_differentiable_in_models_and_reg():
    """Metric gradients in X and in a reg leaf are finite; d objective / d lam = N ||x||^2 / 2."""
    problem = problems.logistic(n_agents=3, m=6, d=2, lam=0.1)
    X = _random_models(problem)
    grads = jax.grad(
        lambda X: problem.metrics(X)["stationarity"] + problem.metrics(X)["objective"]
    )(X)
    chex.assert_tree_all_finite(grads)
    x = jnp.array([0.5, -2.0])
    d_lam = jax.grad(lambda lam: dataclasses.replace(problem, reg={"lam": lam}).objective(x))(0.1)
    np.testing.assert_allclose(d_lam, 3 * 0.5 * float(x @ x), rtol=1e-13)


# --- builders ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SYNTHETIC)
def test_seeds_are_reproducible_and_distinct(name):
    """The same data seed gives the same data; another seed gives other data."""
    kw = {**SMALL[name], "reference": False}
    a, b = make_problem(name, **kw), make_problem(name, **kw)
    c = make_problem(name, **{**kw, "seed": kw["seed"] + 1})
    chex.assert_trees_all_equal(a.features, b.features)
    chex.assert_trees_all_equal(a.labels, b.labels)
    assert not np.allclose(a.features, c.features)


def test_builder_shapes_and_test_sets():
    """Builders give the documented shapes; test rows are drawn after, apart from, training rows."""
    p = problems.least_squares(n_agents=3, m=4, d=2, test_fraction=0.5)
    assert p.features.shape == (3, 4, 2) and p.test_features.shape == (6, 2)
    assert "test_accuracy" not in p.metrics(jnp.zeros((3, 2)))  # not a classifier
    q = problems.least_squares(n_agents=3, m=4, d=2)
    assert q.test_features.shape == (0, 2) and q.test_labels.shape == (0,)
    chex.assert_trees_all_equal(p.features, q.features)
    r = problems.logistic(n_agents=3, m=4, d=2, test_m=7)
    assert r.test_labels.shape == (7,) and set(np.unique(r.labels)) <= {-1.0, 1.0}
    assert r.summary()["n_test"] == 7


def test_partition_gives_near_equal_masked_shards():
    """23 rows over 5 agents: shards of 5, 5, 5, 4, 4 covering every row once; masks follow."""
    rng = np.random.default_rng(0)
    Z, y = rng.standard_normal((23, 3)), rng.choice([-1.0, 1.0], 23)
    feats, labs = partition(Z, y, 5, seed=1)
    assert [len(b) for b in labs] == [5, 5, 5, 4, 4]
    np.testing.assert_array_equal(np.sort(np.concatenate(feats), axis=0), np.sort(Z, axis=0))
    problem = from_arrays(feats, labs, loss="logistic", reg={"lam": 0.1})
    np.testing.assert_array_equal(problem.mask.sum(axis=1), [5, 5, 5, 4, 4])
    blocks, _ = partition(Z, y, 5, seed=1, shuffle=False)
    np.testing.assert_array_equal(blocks[0], Z[:5])
    again, _ = partition(Z, y, 5, seed=1)
    np.testing.assert_array_equal(again[2], feats[2])


def test_summary_is_json_serialisable():
    """summary() goes through json.dumps and names the problem, loss, sizes and reg."""
    s = json.loads(
        json.dumps(make_problem("nonconvex_logistic", **SMALL["nonconvex_logistic"]).summary())
    )
    assert s["name"] == "nonconvex_logistic" and s["loss"] == "nonconvex_logistic"
    assert (s["n_agents"], s["n_samples"], s["dim"]) == (4, 12, 3)
    assert s["reg"] == {"lam": 0.2, "omega": 2.0}


def test_public_names_and_registries():
    """Every __all__ name exists; registry keys equal the names of what they hold."""
    for name in problems.__all__:
        assert hasattr(problems, name), name
    assert all(key == cls.name for key, cls in LOSSES.items())
    assert all(
        make_problem(key, **SMALL[key], reference=False).name == key for key in SYNTHETIC
    )


# --- pytree, jit, vmap, dtype -----------------------------------------------------------------
def test_problem_is_a_pytree_with_static_loss_and_name():
    """Leaves are the data fields; jit and vmap over stacked problems work; loss/name are static."""
    problem = make_problem("nonconvex_logistic", **SMALL["nonconvex_logistic"])
    leaves, treedef = jax.tree.flatten(problem)
    assert len(leaves) == 9  # features, labels, mask, 2 reg leaves, x_star, f_star, 2 test arrays
    rebuilt = jax.tree.unflatten(treedef, leaves)
    assert rebuilt.loss == problem.loss and rebuilt.name == problem.name
    X = _random_models(problem)
    chex.assert_trees_all_close(
        jax.jit(problems.Problem.local_grads)(problem, X), problem.local_grads(X), rtol=1e-14
    )
    other = make_problem("nonconvex_logistic", **{**SMALL["nonconvex_logistic"], "seed": 9})
    stacked = jax.tree.map(lambda a, b: jnp.stack([a, b]), problem, other)
    values = jax.vmap(lambda p: p.objective(jnp.ones(3)))(stacked)
    np.testing.assert_allclose(
        values, [problem.objective(jnp.ones(3)), other.objective(jnp.ones(3))], rtol=1e-13
    )


def test_float32_problem_stays_float32():
    """dtype=float32 keeps data, gradients and metrics in float32; so does x64 disabled locally."""
    problem = problems.nonconvex_logistic(n_agents=4, m=10, d=3, dtype=jnp.float32)
    X = _random_models(problem).astype(jnp.float32)
    for leaf in jax.tree.leaves(problem):
        assert leaf.dtype == jnp.float32
    assert problem.local_grads(X).dtype == jnp.float32
    assert problem.local_losses(X, jnp.zeros((4, 2), jnp.int32)).dtype == jnp.float32
    assert all(v.dtype == jnp.float32 for v in problem.metrics(X).values())
    with jax.enable_x64(False):
        p32 = problems.logistic(n_agents=3, m=5, d=2, test_m=4)
        out = p32.metrics(jnp.ones((3, 2), jnp.float32))
        assert p32.features.dtype == jnp.float32
        assert all(v.dtype == jnp.float32 for v in out.values())
        assert np.isfinite(float(out["grad_norm_sq"]))


# --- errors -----------------------------------------------------------------------------------
def test_nan_data_is_rejected_naming_field_and_agent():
    features, labels = _shards("logistic")
    features[2][0, 1] = np.nan
    with pytest.raises(ValueError, match=r"features has a non-finite value .* at agent 2"):
        from_arrays(features, labels, loss="logistic", reg={"lam": 0.1})
    Z = np.zeros((3, 4, 2))
    y = np.ones((3, 4))
    y[1, 3] = np.inf
    with pytest.raises(ValueError, match=r"labels has a non-finite value .* at agent 1"):
        from_arrays(Z, y, loss="least_squares", reg={"ridge": 0.0})


def test_empty_shard_is_rejected():
    features, labels = _shards("logistic", sizes=(3, 0, 2))
    with pytest.raises(ValueError, match="no real sample for agent 1"):
        from_arrays(features, labels, loss="logistic", reg={"lam": 0.1})
    mask = np.ones((3, 4))
    mask[2] = 0.0
    with pytest.raises(ValueError, match="no real sample for agent 2"):
        from_arrays(
            np.ones((3, 4, 2)), np.ones((3, 4)), loss="logistic", reg={"lam": 0.1}, mask=mask
        )


def test_unknown_names_are_rejected_with_the_known_ones():
    with pytest.raises(
        ValueError, match=r"unknown problem 'svm'.*least_squares.*nonconvex_logistic"
    ):
        make_problem("svm")
    with pytest.raises(ValueError, match=r"unknown loss 'hinge'.*logistic"):
        from_arrays(np.ones((2, 3, 1)), np.ones((2, 3)), loss="hinge", reg={})


def test_shape_mismatches_are_rejected():
    with pytest.raises(ValueError, match=r"from_arrays: features must be \(N, m, d\)"):
        from_arrays(np.ones((2, 3, 4)), np.ones((2, 4)), loss="least_squares", reg={"ridge": 0.0})
    with pytest.raises(ValueError, match=r"agent 1 needs features \(m_i, d = 2\)"):
        from_arrays(
            [np.ones((3, 2)), np.ones((2, 3))],
            [np.ones(3), np.ones(2)],
            loss="least_squares",
            reg={"ridge": 0.0},
        )
    with pytest.raises(ValueError, match=r"agent 0 needs features"):
        from_arrays([np.ones((3, 2))], [np.ones(4)], loss="least_squares", reg={"ridge": 0.0})
    with pytest.raises(ValueError, match=r"test_labels must have shape \(2,\)"):
        from_arrays(
            np.ones((2, 3, 1)),
            np.ones((2, 3)),
            loss="logistic",
            reg={"lam": 0.0},
            test=(np.ones((2, 1)), np.ones(3)),
        )


def test_bad_reg_labels_and_settings_are_rejected():
    with pytest.raises(
        ValueError, match=r"reg for loss 'nonconvex_logistic' must have keys \['lam', 'omega'\]"
    ):
        from_arrays(
            np.ones((2, 3, 1)), np.ones((2, 3)), loss="nonconvex_logistic", reg={"lam": 1.0}
        )
    with pytest.raises(ValueError, match=r"labels must be ±1 .* at agent 1"):
        from_arrays(
            np.ones((2, 3, 1)),
            np.array([[1.0, -1, 1], [1, 0.5, 1]]),
            loss="logistic",
            reg={"lam": 0.0},
        )
    with pytest.raises(ValueError, match=r"reg\['lam'\] must be a finite scalar >= 0"):
        from_arrays(np.ones((2, 3, 1)), np.ones((2, 3)), loss="logistic", reg={"lam": -1.0})
    with pytest.raises(ValueError, match="smoothness must exceed"):
        problems.nonconvex_logistic(n_agents=2, m=3, d=2, lam=1.0, omega=1.0, smoothness=1.5)
    with pytest.raises(ValueError, match=r"n_agents must be in \[1, n = 3\]"):
        partition(np.ones((3, 2)), np.ones(3), 4, seed=0)


@dataclasses.dataclass(frozen=True)
class _L1Logistic(problems.Logistic):
    """A loss added the documented way: logistic + lam·‖x‖₁ (papers 002/003), nonsmooth."""

    name = "l1_logistic"

    def penalty(self, x, reg, xp=jnp):
        return reg["lam"] * xp.sum(xp.abs(x))

    def penalty_grad(self, x, reg, xp=jnp):
        return reg["lam"] * xp.sign(x)

    def penalty_smoothness(self, reg):
        return math.inf


def test_a_new_loss_class_plugs_in():
    """A subclass overriding the penalty works in a Problem; the reference solver refuses it."""
    features, labels = _shards("logistic")
    problem = from_arrays(features, labels, loss=_L1Logistic(), reg={"lam": 0.1}, reference=False)
    X = _random_models(problem)
    autodiff = jax.vmap(jax.grad(problem.loss), in_axes=(0, 0, 0, 0, None))(
        X, problem.features, problem.labels, problem.mask, problem.reg
    )
    chex.assert_trees_all_close(problem.local_grads(X), autodiff, rtol=1e-12)
    assert np.all(np.isinf(problem.smoothness()))
    with pytest.raises(NotImplementedError, match="reference=False"):
        from_arrays(features, labels, loss=_L1Logistic(), reg={"lam": 0.1})
