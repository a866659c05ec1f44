"""Muffliato-GD (Cyffers et al., NeurIPS 2022, Alg. 2): per-node reference and its report."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms
from jaxdp.algorithms.catalogue.muffliato import Muffliato
from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION as R
from tests.harness import gossip_setup

N, D, ROUNDS = 6, 3, 3


@pytest.fixture(scope="module")
def setup():
    return gossip_setup(N, D)


def _reference(x, xi, prob, W, p, sampler):
    """Per node: g̃_i = release(clip(∇f_i(x_i), C); σC, ξ_i), y_i = x_i − α g̃_i, then R rounds
    y_i ← Σ_j W_ij y_j, each node's value before a round being its message."""
    grads = np.asarray(prob.local_grads(jnp.asarray(x)))
    y = np.zeros_like(x)
    for i in range(N):
        g = grads[i] * min(1.0, p.clip / np.linalg.norm(grads[i]))
        s = p.sigma * p.clip
        noisy = g + s * xi[i] if sampler == "float" else (s / R) * (np.round(g / (s / R))
                                                                    + xi[i] * R)
        y[i] = x[i] - p.alpha * noisy
    messages = {}
    for r in range(ROUNDS):
        messages[f"y{r}"] = y.copy()
        y = np.array([sum(W[i, j] * y[j] for j in range(N)) for i in range(N)])
    return y, messages


@pytest.mark.parametrize("backend", ["dense", "edges"])
@pytest.mark.parametrize("sampler", ["lattice", "float"])
def test_steps_match_per_node_reference(setup, sampler, backend):
    prob, net = setup
    with jax.enable_x64(True):
        net = net.with_backend(backend)
        alg = Muffliato(rounds=ROUNDS, sampler=sampler)
        params = algorithms.DPDGDParams(alpha=0.3, clip=0.5, sigma=0.8)
        key = jax.random.key(0)
        state = alg.init(key, prob, net, params)
        x, W = np.asarray(state.x), net.dense("W")
        step = jax.jit(alg.step)
        for k in range(5):
            noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
            state, messages = step(state, noise, prob, net, params, k)
            x, ref_messages = _reference(x, np.asarray(noise["xi"]), prob, W, params, sampler)
            np.testing.assert_allclose(np.asarray(state.x), x, rtol=0, atol=1e-10)
            for name, m in ref_messages.items():
                np.testing.assert_allclose(np.asarray(messages[name]), m, rtol=0, atol=1e-10)
            x = np.asarray(state.x)


def test_report_counts_one_release_per_agent_and_step(setup):
    """The R gossip rounds are post-processing: the report is DP-DGD's (one Gaussian release of
    Δ = 2C, σC per agent and step), whatever R; one add_noise per step in the program."""
    prob, net = setup
    with jax.enable_x64(True):
        params = algorithms.DPDGDParams(clip=1.0, sigma=4.0)
        reports = [Muffliato(rounds=r).privacy(prob, net, params, 30) for r in (1, 5)]
        plain = algorithms.DPDGD().privacy(prob, net, params, 30)
        for report in reports:
            assert np.isfinite(report.epsilon_max)
            np.testing.assert_allclose(report.epsilon, plain.epsilon, rtol=1e-12)
            assert "post-processing" in report.released
        ev = reports[1].events
        np.testing.assert_allclose(ev.scale, 4.0)  # σC, not divided by R
        for r in (1, 5):  # the program that runs: one lattice release per step, whatever R
            alg = Muffliato(rounds=r)
            state = alg.init(jax.random.key(0), prob, net, params)
            noise = alg.noise(jax.random.key(0), state, params, 0)
            program = jax.make_jaxpr(functools.partial(alg.step, problem=prob, network=net,
                                                       params=params, k=0))(state, noise)
            assert _releases(program.jaxpr) == 1  # one marked add_noise (lattice_release)
            assert str(program).count("dot_general") >= r  # the R gossip products
        neighbours = Muffliato().privacy(prob, net, params, 30, threat="neighbours")
        assert neighbours.threat_fallback
    with pytest.raises(ValueError, match="rounds"):
        Muffliato(rounds=0)


def test_more_rounds_reach_consensus(setup):
    prob, net = setup
    with jax.enable_x64(True):
        params = algorithms.DPDGDParams(alpha=0.1, clip=1.0, sigma=1.0)
        spread = {}
        for r in (1, 8):
            alg = Muffliato(rounds=r)
            key = jax.random.key(1)
            state = alg.init(key, prob, net, params)
            for k in range(20):
                noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
                state, _ = alg.step(state, noise, prob, net, params, k)
            x = np.asarray(state.x)
            spread[r] = float(np.linalg.norm(x - x.mean(0)))
        assert spread[8] < 0.2 * spread[1], spread


def _releases(jaxpr) -> int:
    """Marked release sites (``jaxdp.privacy.contract.mechanism_site``) in a jaxpr and its
    sub-jaxprs."""
    from jaxdp._jaxpr import sub_jaxprs
    from jaxdp.privacy._sites import parse_site

    count = 0
    for eqn in jaxpr.eqns:
        site = parse_site(str(eqn.params.get("name", "")))
        if site is not None and site[0] == "release":
            count += 1
            continue
        count += sum(_releases(sub) for sub in sub_jaxprs(eqn.params.values()))
    return count
