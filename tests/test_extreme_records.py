"""No finite record can make a release non-finite (issue 36, break 1).

A record that passes ``Problem.validate`` can have a gradient that overflows: least squares with
``a = M e₁, y = M`` has ``∇ = a(aᵀx − y)`` of order ``M²`` (``inf`` for M = 1e20 in float32 or
1e160 in float64), an image of 1e20 pixels overflows the ghost norm ``(‖h‖² + 1)‖δ‖²``. A clip
written ``g · C / max(‖g‖, C)`` then computed ``inf · 0 = NaN`` and the lattice release passed
it on: a NaN release, which no ordinary data set produces, identifies the data set (ε = ∞ in
truth). Here every clip site (per record, per agent, per client, ghost and generic per-example
clipping, the soft clip, the channels' ℓ2 / ℓ1 / ℓ∞ clip) and the lattice release, in float32
and float64: every output finite, of norm ≤ C, every release on the lattice.
"""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels, network, privacy, problems
from jaxdp.problems import clipped_grad_mean
from tests.release_tap import as_dtype, tapped_run
from tests.support_attack import lattice_in_support

MAGNITUDES = {"float32": (1e20, 1e38), "float64": (1e160, 1e300)}
"""Extreme magnitudes per dtype: each squared overflows (and 1e38 / 1e300 nearly overflow
alone)."""
DTYPES = tuple(MAGNITUDES)
SLACK = {"float32": 1e-5, "float64": 1e-12}  # the float error of a computed clip, ≪ these


def extreme_rows(dtype: str) -> np.ndarray:
    """(9, 3) rows: huge finite rows (their norm or its square overflows), ``±inf``, NaN, an
    ordinary row, zero and a tiny one."""
    m1, m2 = MAGNITUDES[dtype]
    return np.array([[m1, 0, 0], [m2, m2, 0], [m2, -m2, m2], [np.inf, 1, 0], [-np.inf, 0, 0],
                     [np.nan, 1, 0], [3, 4, 0], [0, 0, 0], [1e-30, 0, 0]], dtype)


def extreme_record(problem, magnitude: float):
    """``problem`` with agent 0's first record replaced by ``a = M e₁, y = M`` (validated: it is
    a legal record); its gradient ``a(aᵀx − y)`` overflows once ``M²`` does."""
    features = np.array(problem.features)
    labels = np.array(problem.labels)
    features[0, 0] = 0.0
    features[0, 0, 0] = magnitude
    labels[0, 0] = magnitude
    return dataclasses.replace(problem, features=jnp.asarray(features),
                               labels=jnp.asarray(labels)).validate()


def _least_squares(dtype: str, n: int = 4, m: int = 6, d: int = 3, magnitude=None):
    rng = np.random.default_rng(0)
    prob = problems.from_arrays(rng.normal(size=(n, m, d)) / np.sqrt(d), rng.normal(size=(n, m)),
                                loss="least_squares", reg={"ridge": 0.0}, reference=False,
                                dtype=dtype)
    return prob if magnitude is None else extreme_record(prob, magnitude)


def _check_clipped(out: np.ndarray, c: float, dtype: str, norm_ord=2) -> None:
    """Finite rows of norm ≤ c (up to the computed clip's float error)."""
    out = np.asarray(out, np.float64)
    assert np.isfinite(out).all(), out
    assert (np.linalg.norm(out, ord=norm_ord, axis=-1) <= c * (1 + SLACK[dtype])).all()


# -- the clip functions ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_by_norm_is_finite_and_clipped_for_every_row(dtype):
    """Huge finite rows are clipped along their direction (the norm is computed on the row scaled
    by a power of two); rows with an ``inf`` or NaN entry become the zero vector."""
    g = extreme_rows(dtype)
    with jax.enable_x64(dtype == "float64"):
        out = np.asarray(privacy.clip_by_norm(jnp.asarray(g), 1.0))
        soft = np.asarray(privacy.clip_factor_soft(jnp.asarray(g), 1.0))
    _check_clipped(out, 1.0, dtype)
    _check_clipped(soft, 1.0, dtype)
    huge = g[:3] / np.abs(g[:3]).max(axis=1, keepdims=True)  # their directions, exactly
    np.testing.assert_allclose(out[:3], huge / np.linalg.norm(huge, axis=1, keepdims=True),
                               rtol=1e-6)
    np.testing.assert_allclose(soft[:3], out[:3], rtol=1e-6)  # ζ/(ζ + ‖g‖) → ζ/‖g‖
    assert (out[3:6] == 0).all() and (soft[3:6] == 0).all()  # inf / NaN rows: the public 0
    np.testing.assert_allclose(out[6], [0.6, 0.8, 0.0], rtol=1e-6)
    assert (out[7] == 0).all() and out[8, 0] == g[8, 0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm, order", [("l2", 2), ("l1", 1), ("linf", np.inf)])
def test_the_channel_clip_is_finite_and_clipped_in_every_norm(norm, order, dtype):
    """The channels' ``clip`` (per message and broadcast both call it on their rows)."""
    from jaxdp.privacy._mechanisms import clip_rows

    g = extreme_rows(dtype)
    with jax.enable_x64(dtype == "float64"):
        out = channels.clip(2.0, norm=norm).apply(jnp.asarray(g), {"clip_norm": 2.0}, None, 0)
        col = clip_rows(jnp.asarray(g), jnp.full((9, 1), 2.0, dtype), norm)  # per-row C
    _check_clipped(out, 2.0, dtype, order)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(col))
    assert (np.asarray(out)[3:6] == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_clipping_keeps_its_gradients_on_ordinary_rows(dtype):
    """The gradient of the clip in ``g`` and ``C`` is the analytic one (and finite at g = 0)."""
    g = np.array([[3.0, 4.0], [0.0, 0.0], [0.1, 0.2]], dtype)
    with jax.enable_x64(dtype == "float64"):
        grad_g = jax.jit(jax.grad(lambda g: jnp.sum(privacy.clip_by_norm(g, 1.0)[:, 0])))(
            jnp.asarray(g))
        grad_c = jax.jit(jax.grad(lambda c: jnp.sum(privacy.clip_by_norm(jnp.asarray(g), c))))(
            jnp.asarray(1.0, dtype))
    n = 5.0  # row 0 is clipped: d(g₀/‖g‖)/dg = (I − ĝĝᵀ)/‖g‖; rows 1, 2 pass unchanged
    np.testing.assert_allclose(np.asarray(grad_g), [[(1 - 0.36) / n, -0.48 / n], [1, 0], [1, 0]],
                               rtol=1e-6)
    np.testing.assert_allclose(float(grad_c), 7.0 / 5.0, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_non_finite_value_is_released_on_the_lattice(dtype):
    """The lattice release maps NaN to the public point 0 and ``±inf`` to the clamp ``±Lγ``:
    finite and on the lattice γℤ, for both laws."""
    v = np.array([np.nan, np.inf, -np.inf, 0.5], dtype)
    with jax.enable_x64(dtype == "float64"):
        for law in ("gaussian", "laplace"):
            z = privacy.noise_draws(jax.random.key(0), v.shape, dtype, law=law)
            r = np.asarray(privacy.add_noise(jnp.asarray(v), 1.0, z, law=law))
            assert np.isfinite(r).all(), (law, r)
            assert lattice_in_support(r, None, np.ones_like(v), law=law, dtype=dtype).all()
            zero = np.asarray(privacy.add_noise(jnp.zeros_like(jnp.asarray(v)), 1.0, z, law=law))
            assert r[0] == zero[0]  # NaN is released as 0 would be


# -- per-example clipping of model problems (ghost and generic) -----------------------------
def _linear(params, x):  # not in STRUCTURED_CLIPPING: the generic per-example path
    return x @ params["w"]


def _model_problem(dtype: str, path: str):
    """The library MLP (ghost clipping) on 3 classes, or a linear model with the mse loss (the
    generic path; its residual ``aᵀθ − y`` is ``inf`` for the largest extreme row, so that row's
    gradient, weighted 0, is NaN unless the row is replaced)."""
    rng = np.random.default_rng(0)
    x, parts = rng.normal(size=(8, 4)), [np.arange(8)]
    if path == "ghost":
        theta0 = problems.mlp_init(jax.random.key(0), (4, 5, 3), dtype)
        return problems.from_model(problems.mlp_apply, theta0, x, np.arange(8) % 3, parts=parts,
                                   dtype=dtype)
    return problems.from_model(_linear, {"w": jnp.full(4, 1e10, dtype)}, x, rng.normal(size=8),
                               parts=parts, loss="mse", dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("path", ["ghost", "generic"])
def test_model_clipping_adds_at_most_c_for_an_extreme_row(path, dtype):
    """A row whose every feature is M (1e20 / 1e38 in float32, 1e160 / 1e300 in float64) in a
    batch: the clipped sum is finite and differs from the sum without that row by at most C (the
    row adds a clipped gradient, or the public 0 when its norm or gradient overflowed)."""
    c = 0.1
    with jax.enable_x64(dtype == "float64"):
        prob = _model_problem(dtype, path)
        feats, labels = np.array(prob.features[0]), np.array(prob.labels[0])
        x = jnp.zeros(prob.x_star.shape, dtype)  # the offset from θ₀ (the runs' start)
        mean = jax.jit(lambda f, y, w: clipped_grad_mean(prob.loss, x, f, y, w, c, prob.reg,
                                                         denominator=1.0))
        ones = jnp.ones(feats.shape[0], dtype)
        rest = np.asarray(mean(jnp.asarray(feats), jnp.asarray(labels), ones.at[0].set(0.0)))
        for magnitude in MAGNITUDES[dtype]:
            bad = feats.copy()
            bad[0], labels[0] = magnitude, (magnitude if path == "generic" else labels[0])
            out = np.asarray(mean(jnp.asarray(bad), jnp.asarray(labels), ones))
            assert np.isfinite(out).all(), (path, magnitude)
            assert np.linalg.norm(out - rest) <= c * (1 + SLACK[dtype]), (path, magnitude)


# -- every clip path of the algorithms, through the releases they make -----------------------
def _dsgd(**kw):
    return algorithms.DPDSGD(batch_size=2, **kw)


def _channel(*chain, **kw):
    return channels.with_channel(algorithms.DGD(), channels.chain(*chain, **kw))


SLOW = pytest.mark.slow
CLIP_PATHS = {  # id: (algorithm, dtypes run by default; the others run with --runslow)
    "dp_dgd": (algorithms.DPDGD(), DTYPES),  # per-agent clip_by_norm
    "muffliato": (algorithms.Muffliato(rounds=2), DTYPES),
    "mafalda_sgd": (algorithms.Mafalda(), DTYPES),
    "dp_dsgd": (_dsgd(), ()),  # per-record clip_by_norm
    "lt_admm_dp": (algorithms.LTADMMDP(batch_size=2, local_steps=1), ("float64",)),  # soft clip
    "dp_fedavg": (algorithms.DPFedAvg(local_steps=1, rate=0.5), ("float64",)),  # per client
    "ldp_fedavg": (algorithms.LDPFedAvg(local_steps=1), ("float64",)),
    "channel:clip+gaussian": (_channel(channels.clip(1.0), channels.gaussian(4.0)), ("float64",)),
    "channel:broadcast": (_channel(channels.clip(1.0), channels.gaussian(4.0), broadcast=True),
                          ()),
    "channel:l1+laplace": (_channel(channels.clip(1.0, norm="l1"), channels.laplace(4.0)),
                           ("float64",)),
}


def _clip_path_params() -> list:
    return [pytest.param(path, dtype, marks=() if dtype in default else SLOW)
            for path, (_, default) in sorted(CLIP_PATHS.items()) for dtype in DTYPES]


def _check_releases(run, dtype: str) -> int:
    """Every release finite, on the lattice and from a finite value; returns their count."""
    for rel in run.releases:
        assert rel.dtype == dtype and rel.sampler == "lattice"
        assert np.isfinite(rel.v).all() and np.isfinite(rel.r).all()
        assert lattice_in_support(rel.r, None, rel.scale, law=rel.law, dtype=dtype).all()
        assert lattice_in_support(rel.r, rel.v, rel.scale, law=rel.law, dtype=dtype).all()
    return len(run.releases)


@pytest.mark.parametrize("path, dtype", _clip_path_params())
def test_an_extreme_record_releases_only_finite_lattice_points(path, dtype):
    """Agent 0's first record is ``a = M e₁, y = M`` (its gradient ``inf`` at every x): two
    steps of each clip path, every ``add_noise`` call read (tests/release_tap.py)."""
    alg = CLIP_PATHS[path][0]
    params = alg.default_params()
    with jax.enable_x64(True):
        net = as_dtype(network.make_network("ring", 4), dtype)
        prob = as_dtype(_least_squares("float64", magnitude=MAGNITUDES[dtype][0]), dtype)
        assert not np.isfinite(np.asarray(prob.local_grads(jnp.zeros((4, 3), dtype)))).all()
        assert _check_releases(tapped_run(alg, prob, net, params, 2), dtype) > 0
