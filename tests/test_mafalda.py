"""MAFALDA-SGD (MFDL, ICLR 2026): per-node reference, its lattice-sound report, the ideal MF
curve beside it, and an audit (likelihood-ratio attack on the worst pair, with a wrong-claim
control)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms
from jaxdp.algorithms.catalogue.mafalda import IDEAL, Mafalda
from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION as R
from jaxdp.privacy.samplers import lattice_sensitivity
from tests.harness import gossip_setup

N, D = 6, 3
ENCODER = np.array([[1.0, 0, 0], [0.45, 0.9, 0], [-0.2, 0.35, 0.8]])


@pytest.fixture(scope="module")
def setup():
    return gossip_setup(N, D)


def _release(v, s, xi, sampler):
    """One agent's release of ``v`` (noise std ``s``): float or lattice (γ = s/R)."""
    if sampler == "float":
        return v + s * xi
    return (s / R) * (np.round(v / (s / R)) + xi * R)


def _reference(x, hist, xi, k, prob, W, p, sampler):
    """Per node i: c_i^k = clip(∇f_i(x_i)), R_i^k = release(Σ_{s≤k} C_ks c_i^s), ĝ_i^k from
    Σ_{s≤k} C_ks ĝ_i^s = R_i^k, y_i = x_i − α ĝ_i^k, x_i⁺ = Σ_j W_ij y_j (MFDL)."""
    C, T = ENCODER, len(ENCODER)
    grads = np.asarray(prob.local_grads(jnp.asarray(x)))
    y = np.zeros_like(x)
    for i in range(N):
        c = grads[i] * min(1.0, p.clip / np.linalg.norm(grads[i]))
        hist["c"][i].append(c)
        if k < T:
            enc = sum(C[k, s] * hist["c"][i][s] for s in range(k + 1))
            rel = _release(enc, p.sigma * p.clip, xi[i], sampler)
            g = (rel - sum(C[k, s] * hist["g"][i][s] for s in range(k))) / C[k, k]
        else:
            g = _release(c, p.sigma * p.clip, xi[i], sampler)
        hist["g"][i].append(g)
        y[i] = x[i] - p.alpha * g
    return np.array([sum(W[i, j] * y[j] for j in range(N)) for i in range(N)]), y


@pytest.mark.parametrize("backend,sampler", [("dense", "lattice"), ("edges", "float")])
def test_steps_match_per_node_reference(setup, backend, sampler):
    prob, net = setup
    with jax.enable_x64(True):
        net = net.with_backend(backend)
        alg = Mafalda(encoder=ENCODER, sampler=sampler)
        params = algorithms.DPDGDParams(alpha=0.3, clip=0.5, sigma=0.8)
        key = jax.random.key(0)
        state = alg.init(key, prob, net, params)
        x, W = np.asarray(state.x), net.dense("W")
        hist = {"c": [[] for _ in range(N)], "g": [[] for _ in range(N)]}
        step = jax.jit(alg.step)
        for k in range(5):  # past T = 3: the identity extension
            noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
            state, messages = step(state, noise, prob, net, params, k)
            x, y = _reference(x, hist, np.asarray(noise["xi"]), k, prob, W, params, sampler)
            np.testing.assert_allclose(np.asarray(messages["y"]), y, rtol=0, atol=1e-10)
            np.testing.assert_allclose(np.asarray(state.x), x, rtol=0, atol=1e-10)
            x = np.asarray(state.x)


def test_report_is_dp_dgd_for_the_identity_and_grows_with_the_row_sums(setup):
    prob, net = setup
    with jax.enable_x64(True):
        params = algorithms.DPDGDParams(clip=1.0, sigma=4.0)
        plain = algorithms.DPDGD().privacy(prob, net, params, 10)
        ident = Mafalda().privacy(prob, net, params, 10)
        np.testing.assert_allclose(ident.epsilon, plain.epsilon, rtol=1e-9)
        corr = Mafalda(encoder=ENCODER).privacy(prob, net, params, 10)
        rows = np.r_[np.abs(ENCODER).sum(1), np.ones(7)]  # k ≥ T: the identity
        want = lattice_sensitivity(2.0 * rows, D, 4.0, np.float64, law="gaussian")
        np.testing.assert_allclose(corr.events.streams[0].sensitivity[0], want, rtol=1e-12)
        assert np.all(corr.epsilon > plain.epsilon)  # row sums > 1: a larger sound bound
        assert IDEAL in corr.curves and IDEAL not in corr.sound
        assert np.all(corr.curves[IDEAL][:, -1] <= corr.epsilon)  # Σ|X_st| ≤ Σ_k (Σ_s|C_ks|)²
        neighbours = Mafalda(encoder=ENCODER).privacy(prob, net, params, 10, threat="neighbours")
        assert neighbours.threat_fallback


def test_bad_encoders_are_refused_naming_the_value():
    with pytest.raises(ValueError, match="lower triangular"):
        Mafalda(encoder=[[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="diagonal"):
        Mafalda(encoder=[[1.0, 0.0], [0.5, 0.0]])
    with pytest.raises(ValueError, match="square"):
        Mafalda(encoder=[[1.0, 0.0]])


@pytest.mark.slow
def test_optimal_encoder_runs_with_a_finite_report(setup):
    prob, net = setup
    with jax.enable_x64(True):
        alg = Mafalda.optimal(net, 4)
        C = np.asarray(alg.encoder)
        assert C.shape == (4, 4) and np.allclose(np.triu(C, 1), 0)
        params = algorithms.DPDGDParams(clip=1.0, sigma=4.0)
        report = alg.privacy(prob, net, params, 4)
        assert np.isfinite(report.epsilon_max)


def _audit(case, seeds):
    from jaxdp.experiments import audit as table
    with jax.enable_x64(True):
        return table.audit_case(case, seeds=seeds, batch=seeds)


def test_audit_stays_below_the_guarantee_and_catches_the_claim_that_ignores_the_encoder():
    """Worst pair (agent 0's gradients ±v/2, ‖v‖ ≫ C: clipped to opposite directions); the attack
    recovers agent 0's releases. Sound: the empirical bound ≤ the report. Control: an encoder with
    row sums (1, 7) claimed at DP-DGD's ε (Δ = 2C per step, the encoder ignored; σ = 12, so that
    4000 runs per input can show it) is caught."""
    import dataclasses

    from jaxdp.algorithms.catalogue.cases import audit_cases
    case = audit_cases()[0]
    row = _audit(case, 4000)
    assert row["verdict"] == "sound", row
    assert 0 < row["empirical_lower"] <= row["guarantee"]
    strong = dataclasses.replace(audit_cases(encoder=((1.0, 0.0), (6.0, 1.0)))[0],
                                 params=algorithms.DPDGDParams(sigma=12.0))
    with jax.enable_x64(True):
        plain = algorithms.DPDGD().privacy(strong.pair[0], strong.network, strong.params, 2)
    wrong = dataclasses.replace(strong, id="mafalda_sgd:encoder-ignored", control="positive",
                                claimed=float(plain.epsilon[0]))
    assert _audit(wrong, 4000)["verdict"] == "caught"
