"""``jaxdp reproduce mfdl-training`` (MFDL Fig. 3 analogue): the ideal releases against explicit
loops, the semantics of σ against jaxdp's own ideal value and hand derivations, the 1/σ rescale,
the LDP cap, bad input, and a tiny end-to-end run with a standard figure."""
import dataclasses
import json

import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms
from jaxdp._plotting import figure_problems, recording
from jaxdp.algorithms.catalogue.mafalda import IDEAL
from jaxdp.experiments import REPRODUCTIONS
from jaxdp.experiments.mfdl import broadcast_edges
from jaxdp.experiments.mfdl_training import (
    DELTA,
    METHODS,
    MODEL_CLIP,
    RHO,
    THREATS,
    calibrate,
    decor_release,
    digits_problem,
    florentine_network,
    gossip_form,
    method_release,
    mu_for_epsilon,
    threat_mus,
    unit_mu,
    worst_mu,
)
from jaxdp.privacy.pairwise import (
    LinearRelease,
    factorization_epsilon,
    gaussian_epsilon,
    observer_mu2,
    observers,
    participation_classes,
)

T = 3


@pytest.fixture(scope="module")
def W():
    return np.asarray(florentine_network().dense("W"))


def encoder(steps, seed=0):
    """A random lower-triangular encoder with a positive diagonal (not only MAFALDA's)."""
    C = np.tril(np.random.default_rng(seed).normal(size=(steps, steps)) * 0.3)
    return C + np.diag(1.0 + np.arange(steps) * 0.1)


def loop_rows(W, c, xi, rounds, decoder):
    """Reference, explicit loops over agents: ``y^{k,0}_i = x^k_i + c^k_i + (L ξ_i)^k``, the
    messages ``y^{k,r} = W^r y^{k,0}`` (``r < R``), ``x^{k+1} = W^R y^{k,0}``; rows in the
    release's order (step, round, agent)."""
    n, steps = c.shape
    x, rows = np.zeros(n), []
    for k in range(steps):
        y = np.array([x[i] + c[i, k] + sum(decoder[k, s] * xi[i, s] for s in range(k + 1))
                      for i in range(n)])
        for _ in range(rounds):
            rows.extend(y)
            y = np.array([sum(W[i, j] * y[j] for j in range(n)) for i in range(n)])
        x = y
    return np.array(rows)


@pytest.mark.parametrize("rounds,correlated", [(1, False), (1, True), (3, False)])
def test_gossip_release_equals_explicit_loops(W, rounds, correlated):
    """DP-DGD (R = 1, L = I), MAFALDA (L = C⁻¹), Muffliato (R = 3): ``A c + B z`` of the release
    equals the loops at 1e-10 with injected contributions and noise."""
    rng = np.random.default_rng(1)
    L = np.linalg.inv(encoder(T)) if correlated else np.eye(T)
    release = gossip_form(W, rounds, decoder=L if correlated else None).release(T)
    n = len(W)
    c, xi = rng.normal(size=(n, T)), rng.normal(size=(n, T))
    seeds = np.zeros(np.shape(release.B)[1])
    local = np.flatnonzero(np.asarray(release.knowers).sum(axis=1) == 1)[: n * T]
    seeds[local] = xi.T.ravel()  # the local seeds come first, time-major (gossip_release)
    ours = np.einsum("mus,us->m", np.asarray(release.A), c) + np.asarray(release.B) @ seeds
    np.testing.assert_allclose(ours, loop_rows(W, c, xi, rounds, L), atol=1e-10)


def test_decor_release_is_the_channel_law_per_message(W):
    """Each directed message carries its sender's contribution, its own draw (known to the
    sender) and ``±ρ`` times its link's secret (known to both ends, ``+`` from the smaller)."""
    senders, receivers = broadcast_edges(W > 0)
    release = decor_release((senders, receivers), len(W), RHO)
    A, B = np.asarray(release.A)[:, :, 0], np.asarray(release.B)
    E = len(senders)
    for e in range(E):
        assert A[e, senders[e]] == 1 and A[e].sum() == 1
        assert B[e, e] == 1 and np.sum(B[e, :E] != 0) == 1
        (link,) = np.flatnonzero(B[e, E:])
        assert B[e, E + link] == (RHO if senders[e] < receivers[e] else -RHO)
        assert set(np.flatnonzero(release.knowers[E + link])) == {senders[e], receivers[e]}
        rev = np.flatnonzero((senders == receivers[e]) & (receivers == senders[e]))[0]
        assert B[rev, E + link] == -B[e, E + link]  # cancels in the pair's sum


@pytest.mark.parametrize("method", ["DP-DGD", "MAFALDA-SGD", "DECOR"])
@pytest.mark.parametrize("threat", list(THREATS.values()))
def test_singular_safe_view_equals_the_accountant(W, method, threat):
    """:func:`worst_mu` is the worst pair of :func:`factorization_epsilon`'s μ."""
    release, _sens, _copies = method_release(method, W, T, encoder=encoder(T), threat=threat)
    res = factorization_epsilon(release, DELTA, threat, participation="every_step")
    ref = np.max(np.where(np.isfinite(res.mu), res.mu, 0.0))
    assert worst_mu(release, threat) == pytest.approx(ref, rel=1e-9)


def test_muffliato_rounds_are_post_processing_for_the_eavesdropper(W):
    """Σ is singular (later rounds are functions of earlier rows); the μ is LDP's ``√T``, and a
    neighbour's is no larger."""
    release = gossip_form(W, 3).release(T)
    assert worst_mu(release, "eavesdropper") == pytest.approx(np.sqrt(T), rel=1e-9)
    assert threat_mus("Muffliato-GD", W, T)["neighbours"] <= 2 * np.sqrt(T) * (1 + 1e-12)


def test_a_noiseless_contribution_is_infinite_not_dropped():
    """Positive control of the accountant's range test (singular views): a row that carries agent 1's
    contribution with no noise (Σ singular) gives μ = inf for agent 1, a finite μ for agent 0."""
    A = np.zeros((3, 2, 1))
    A[0, 0, 0] = A[1, 1, 0] = A[2, 0, 0] = 1.0
    B = np.array([[1.0], [0.0], [2.0]])  # row 1 = c_1 exactly; rows 0 and 2 share one draw
    release = LinearRelease(jnp.asarray(A), jnp.asarray(B), np.ones((3, 2), bool),
                            np.array([0, 1, 0]), np.zeros((1, 2), bool))
    obs = observers(release, "eavesdropper")[0]
    mu2, _ = observer_mu2(release, obs, participation_classes("every_step", 1), np)
    assert np.isinf(mu2[1])
    assert np.isinf(mu2[0])  # rows 0 and 2 (c_0 + z, c_0 + 2z) reveal c_0 = 2 y_0 − y_2
    B2 = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]])
    release = LinearRelease(jnp.asarray(A), jnp.asarray(B2), np.ones((3, 2), bool),
                            np.array([0, 1, 0]), np.zeros((2, 2), bool))
    mu2, _ = observer_mu2(release, obs, participation_classes("every_step", 1), np)
    assert np.isinf(mu2[1]) and mu2[0] == pytest.approx(1.0 + 0.25)


@pytest.mark.parametrize("method", METHODS)
def test_ldp_cap_is_the_view_of_all_rows_and_every_other_seed(W, method):
    """The cap of :func:`threat_mus`: an observer seeing every row and knowing every seed but the
    protected agent's own (and the pairwise secrets) has exactly LDP's μ for that agent."""
    release, sens, copies = method_release(method, W, T, encoder=encoder(T))
    classes = participation_classes("every_step", release.steps)
    everything = observers(release, "eavesdropper")[0]
    ldp = np.sqrt(copies) * sens * observer_mu2(release, everything, classes, np)[0] ** 0.5
    for u in (0, 4, 11):
        obs = dataclasses.replace(observers(release, "eavesdropper")[0],
                                  known=np.flatnonzero(~np.asarray(release.knowers)[:, u]))
        mu_u = np.sqrt(copies * observer_mu2(release, obs, classes, np)[0][u]) * sens
        assert mu_u == pytest.approx(ldp[u], rel=1e-8)


def test_sigma_semantics_match_mafalda_and_dpdgd_reports(W):
    """The σ fed to MAFALDA-SGD (any encoder; the identity is DP-DGD's noise) is the σ of the
    release: our LDP ideal ε equals the ideal curve jaxdp's own MAFALDA report names. Positive
    control: a release with the sensitivity halved (a wrong message definition) does not."""
    problem, network = digits_problem(), florentine_network()
    sigma = 3.0
    params = algorithms.DPDGDParams(alpha=0.5, clip=1.0, sigma=sigma)
    for C in (encoder(T), np.eye(T)):
        alg = algorithms.REGISTRY["mafalda_sgd"](encoder=C)
        named = np.max(alg.privacy(problem, network, params, T, delta=DELTA).curves[IDEAL])
        mu1 = unit_mu("MAFALDA-SGD", W, T, "eavesdropper", encoder=C)
        assert float(gaussian_epsilon(mu1 / sigma, DELTA)) == pytest.approx(named, rel=1e-9)
        assert float(gaussian_epsilon(mu1 / 2 / sigma, DELTA)) < 0.9 * named
    assert unit_mu("DP-DGD", W, T, "eavesdropper") == pytest.approx(
        unit_mu("MAFALDA-SGD", W, T, "eavesdropper", encoder=np.eye(T)), rel=1e-12)


def test_decor_by_hand(W):
    """DECOR at σ = 1 (per-message draws, ρ = σ_cor/σ, model clip C_m, Δ = 2C_m): LDP sees
    ``deg_u`` copies per step; a neighbour one message whose secret it knows; SecLDP's worst is a
    curious neighbour: ``(deg_u − 1) f + 1`` messages' worth, ``f = (1 + ρ²)/(1 + 2ρ²)`` (the
    channel's continuous value)."""
    deg = (W > 0).sum(axis=1) - 1
    f = (1 + RHO ** 2) / (1 + 2 * RHO ** 2)
    mus = threat_mus("DECOR", W, T)
    dm = 2 * MODEL_CLIP
    assert mus["eavesdropper"] == pytest.approx(dm * np.sqrt(T * deg.max()), rel=1e-9)
    assert mus["neighbours"] == pytest.approx(dm * np.sqrt(T), rel=1e-9)
    assert mus["secret_pairs"] == pytest.approx(
        dm * np.sqrt(T * np.max((deg - 1) * f + 1)), rel=1e-9)


def test_mu_rescales_as_one_over_sigma(W):
    """Every noise scaled by σ (B → σB) divides the accountant's μ by σ, so one accountant call
    per method and threat and the closed-form :func:`calibrate` give the target ε."""
    for method in METHODS:
        release, *_ = method_release(method, W, T, encoder=encoder(T), threat="secret_pairs")
        scaled = LinearRelease(release.A, 2.5 * jnp.asarray(release.B), release.audience,
                               release.senders, release.knowers)
        for threat in THREATS.values():
            assert worst_mu(scaled, threat) == pytest.approx(worst_mu(release, threat) / 2.5,
                                                             rel=1e-9)
    for eps in (0.5, 5.0, 80.0):
        sigma = calibrate(7.0, eps)
        got = float(gaussian_epsilon(7.0 / sigma, DELTA))
        assert eps * (1 - 1e-9) <= got <= eps  # never above the target
        assert mu_for_epsilon(eps) == pytest.approx(7.0 / sigma, rel=1e-15)


@pytest.mark.parametrize("kw,match", [({"steps": 0}, "steps"), ({"steps": 61}, "steps"),
                                      ({"seeds": 1}, "seeds"), ({"epsilons": (5.0, 2.0)},
                                                                "epsilons"),
                                      ({"epsilons": (-1.0,)}, "epsilons"),
                                      ({"encoder_iterations": 0}, "encoder_iterations")])
def test_bad_settings_are_named_before_running(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        REPRODUCTIONS["mfdl-training"](tmp_path, **kw)


def test_reproduction_runs_at_tiny_settings_with_a_standard_figure(tmp_path):
    with recording() as figures:
        report = REPRODUCTIONS["mfdl-training"](tmp_path, steps=3, seeds=2, epsilons=(10.0,),
                                                encoder_iterations=5)
    assert {c.id for c in report.claims} == {"mafalda-vs-dpsgd-ldp", "mafalda-best",
                                             "pndp-muffliato", "secldp-decor"}
    assert "IDEAL" in report.notes[0]
    (fig,) = figures
    assert figure_problems(fig) == [], fig.get_suptitle()
    rows = json.loads((tmp_path / "mfdl_training.json").read_text())["rows"]
    assert len(rows) == len(METHODS) * len(THREATS)
    for r in rows:
        assert r["ideal_epsilon"] == pytest.approx(10.0, rel=1e-9)
        # the ideal value never exceeds the promise made for the same run
        assert r["sound_epsilon"] >= r["ideal_epsilon"], r
        assert np.isfinite(r["test_loss_mean"])
