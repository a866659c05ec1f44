"""Flax and Equinox models as jaxdp problems, for real (issue 25).

A Flax linen module, a Flax nnx module and an Equinox module each become a problem through
``from_model``; the problem's gradient must equal the model library's own ``jax.grad`` of the
loss (computed here with optax's cross-entropy, not jaxdp's) at 1e-10 in float64; for the linen
and the Equinox module a few steps of DP-DSGD at a calibrated ε run through ``jaxdp.run`` (nnx
reaches the problem through the same kind of apply function as linen).

The libraries are optional (the ``models`` extra; the ``test`` extra installs them so that CI runs
these tests): without them the tests are skipped.
"""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.flatten_util import ravel_pytree

import jaxdp
from jaxdp import algorithms, privacy, problems

N_AGENTS, N_ROWS, HIDDEN = 4, 120, 8


@pytest.fixture(scope="module")
def data():
    images, labels = problems.load_digits()
    x, y = images[:N_ROWS].astype(np.float64), labels[:N_ROWS]
    parts = problems.split(y, N_AGENTS, "iid", seed=0)  # equal shards: one compiled library grad
    return x, y, parts, (images[N_ROWS:N_ROWS + 60].astype(np.float64), labels[N_ROWS:N_ROWS + 60])


def _float64(tree):
    return jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), tree)


def _flax_linen():
    nn = pytest.importorskip("flax.linen")

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            h = x.reshape(x.shape[0], -1)
            h = jnp.tanh(nn.Dense(HIDDEN, param_dtype=jnp.float64,
                                  precision=jax.lax.Precision.HIGHEST)(h))
            return nn.Dense(10, param_dtype=jnp.float64, precision=jax.lax.Precision.HIGHEST)(h)

    module = MLP()
    theta0 = module.init(jax.random.key(0), jnp.zeros((1, 8, 8), jnp.float64))
    return module.apply, _float64(theta0)


def _flax_nnx():
    nnx = pytest.importorskip("flax.nnx")

    class MLP(nnx.Module):
        def __init__(self, rngs):
            kw = {"param_dtype": jnp.float64, "precision": jax.lax.Precision.HIGHEST,
                  "rngs": rngs}
            self.hidden = nnx.Linear(64, HIDDEN, **kw)
            self.out = nnx.Linear(HIDDEN, 10, **kw)

        def __call__(self, x):
            return self.out(jnp.tanh(self.hidden(x.reshape(x.shape[0], -1))))

    graphdef, state = nnx.split(MLP(nnx.Rngs(0)))

    def apply(state, x):
        return nnx.merge(graphdef, state)(x)

    return apply, _float64(state)


def _equinox():
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(64, 10, HIDDEN, depth=1, activation=jnp.tanh, key=jax.random.key(0))
    params, static = eqx.partition(model, eqx.is_array)

    def apply(params, x):
        net = eqx.combine(params, static)
        return jax.vmap(net)(x.reshape(x.shape[0], -1))

    return apply, _float64(params)


MODELS = {"flax_linen": _flax_linen, "flax_nnx": _flax_nnx, "equinox": _equinox}


@pytest.mark.parametrize("name", MODELS)
def test_gradient_matches_the_model_librarys_own_grad(name, data):
    apply, theta0 = MODELS[name]()
    x, y, parts, test = data
    problem = problems.from_model(apply, theta0, x, y, parts=parts, test=test, dtype=jnp.float64)
    flat0, unravel = ravel_pytree(theta0)
    assert problem.dim == flat0.size

    def library_loss(params, xb, yb):  # the model library's forward pass, optax's loss
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(apply(params, xb), yb))

    X = 0.3 * jax.random.normal(jax.random.key(1), (N_AGENTS, problem.dim), jnp.float64)
    grads = np.asarray(problem.local_grads(X))
    losses = np.asarray(problem.local_losses(X))
    library_grad = jax.jit(jax.value_and_grad(library_loss))
    for i, part in enumerate(parts):
        theta = unravel(flat0 + X[i])  # the parameter pytree the model row X[i] stands for
        value, grad = library_grad(theta, x[part], y[part])
        np.testing.assert_allclose(losses[i], value, rtol=0, atol=1e-10)
        np.testing.assert_allclose(grads[i], ravel_pytree(grad)[0], rtol=0, atol=1e-10)
        assert np.linalg.norm(grads[i]) > 1e-3  # a gradient that could disagree
    # the problem's view of the parameters is the library's pytree
    same = jax.tree.map(lambda a, b: np.array_equal(a, b), problem.params_of(X[0]),
                        unravel(flat0 + X[0]))
    assert all(jax.tree.leaves(same))


@pytest.mark.parametrize("name", ["flax_linen", "equinox"])  # nnx: same path as linen
def test_dp_dsgd_runs_on_the_module_at_a_calibrated_epsilon(name, data):
    apply, theta0 = MODELS[name]()
    x, y, parts, test = data
    problem = problems.from_model(apply, theta0, x, y, parts=parts, test=test, dtype=jnp.float64)
    net = jaxdp.network.build_network(jaxdp.network.ring(N_AGENTS))
    alg, steps = algorithms.DPDSGD(batch_size=4), 6
    params = privacy.calibrate_params(alg, problem, net, algorithms.DPSGDParams(alpha=0.5), steps,
                                      epsilon=8.0, delta=1e-5)
    report = alg.privacy(problem, net, params, steps=steps)
    assert report.sound and 7.5 < report.epsilon_max <= 8.0 * (1 + 1e-6)
    trace = jaxdp.run(alg, problem, net, params, steps=steps, seeds=2, progress=False)
    assert not np.asarray(trace.diverged).any()
    accuracy = np.asarray(trace.metrics["test_accuracy"])
    assert np.isfinite(accuracy).all() and accuracy.shape == (2, steps + 1)
    moved = np.asarray(trace.metrics["objective"])
    assert (moved[:, -1] != moved[:, 0]).all()  # the models moved from θ₀
