"""The tier-1 eavesdropper on DPP²: exact without noise, degrading with noise."""
import jax
import jax.numpy as jnp
import numpy as np

import jaxdp
from jaxdp import algorithms
from jaxdp.attacks import eta_sequence, tier1_attack, tier1_recovery_study
from tests.harness import small_network, small_problem


PROB, NET = small_problem("nonconvex_logistic"), small_network()


@jax.jit
def _attacked_run(p, key):
    """40 steps of DPP², observed, then the attack: (recovery, true x^k)."""
    _, _, seen = jaxdp.simulate(algorithms.DPP2(sampler="float"), PROB, NET, p, key, steps=40,
                                observe=True)  # the paper's real-valued noise
    x_true = jnp.concatenate([jnp.zeros_like(seen["models"][:1]), seen["models"][:-1]])
    rec = tier1_attack(seen["messages"]["y"], seen["messages"]["z"], NET.P, p.alpha, p.beta)
    return rec, x_true


def _messages(u, seed=0):
    p = algorithms.DPP2Params(u_w=u, u_e=u, r=0.95)
    rec, x_true = _attacked_run(p, jax.random.key(seed))
    return rec, x_true, algorithms.DPP2(sampler="float"), p


def test_zero_noise_attack_recovers_eta_and_x_exactly():
    """u = 0: every identifiable η^k and every x^k are recovered to rounding."""
    rec, x_true, alg, p = _messages(0.0)
    np.testing.assert_allclose(rec.x, x_true, atol=1e-10)
    etas = eta_sequence(alg, p, [0], 40, jnp.float64)[0]
    known = ~np.isnan(np.asarray(rec.eta))
    assert known.sum() >= 38  # k = 0 (d⁰ = 0) and k = 1 (d¹ = y⁰ = x⁰ = 0) are unidentifiable
    np.testing.assert_allclose(np.asarray(rec.eta)[known], etas[known], atol=1e-9)


def test_eta_sequence_draws_one_sequence_per_seed():
    """Ground-truth η: in (0, 1), different per seed, the constant in constant mode.

    (That it equals what the engine used is checked above: the attack recovers it exactly.)
    """
    alg, p = algorithms.DPP2(), algorithms.DPP2Params()
    etas = eta_sequence(alg, p, [0, 1], 5, jnp.float64)
    assert etas.shape == (2, 5) and np.all((etas > 0) & (etas < 1))
    assert not np.allclose(etas[0], etas[1])
    const = eta_sequence(algorithms.DPP2(eta_mode="constant"), p.replace(eta=0.3), [0], 4,
                         jnp.float64)
    np.testing.assert_allclose(const, 0.3)


def test_recovery_error_grows_with_the_noise_scale():
    """The median state error rises with u and is of the order of the noise."""
    errors = []
    for u in (1e-9, 1e-6, 1e-3):
        rec, x_true, _, _ = _messages(u)
        err = jnp.linalg.norm(rec.x[1:] - x_true[1:], axis=(1, 2)) / jnp.linalg.norm(
            x_true[1:], axis=(1, 2))
        errors.append(float(jnp.median(err)))
    assert errors[0] < errors[1] < errors[2]
    assert errors[0] < 1e-6 and errors[2] > 1e-5


def test_recovery_study_shapes_and_exactness_at_zero_noise():
    grid = jaxdp.grid(algorithms.DPP2Params(r=0.9), u_w=[0.0, 1e-4])
    grid = grid.replace(u_e=grid.u_w)
    res = tier1_recovery_study(algorithms.DPP2(sampler="float"), PROB, NET, grid, steps=20,
                               seeds=3)
    assert res["x_error"].shape == (3, 2) and res["eta_error"].shape == (3, 2)
    assert np.all(res["x_error"][:, 0] < 1e-10) and np.all(res["eta_error"][:, 0] < 1e-9)
    assert np.all(res["x_error"][:, 1] > res["x_error"][:, 0])
