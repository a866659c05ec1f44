"""Declared linear forms (``Algorithm.linear_form``): the form is the program, and the ideal
curve it adds to pairwise reports is the matrix-factorization accountant's on that form."""
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels
from jaxdp.algorithms.catalogue.muffliato import Muffliato
from jaxdp.privacy import Coalition
from jaxdp.privacy.pairwise import (
    IDEAL_LINEAR,
    GossipForm,
    factorization_epsilon,
    gaussian_epsilon,
    ideal_curve,
)
from tests.harness import gossip_setup

N, D, K = 6, 3, 4
PARAMS = dict(alpha=np.array([0.3, 0.2, 0.25, 0.3, 0.1, 0.2]), gamma=0.5,
              clip=np.array([0.5, 0.4, 0.5, 0.6, 0.5, 0.5]), sigma=0.8)


@pytest.fixture(scope="module")
def setup():
    return gossip_setup(N, D)


def _transcript(alg, prob, net, params):
    """Run K steps with the float sampler; per node, the clipped gradients ``(K, N, D)``, the
    draws ``ξ`` ``(K, N, D)`` and the rows of the declared form: ``(k, r, i)`` messages (DGD:
    ``x^{k+1}``, the next step's message or the final model)."""
    key = jax.random.key(0)
    state = alg.init(key, prob, net, params)
    grads, draws, rows = [], [], []
    for k in range(K):
        x = np.asarray(state.x)
        g = np.asarray(prob.local_grads(jnp.asarray(x)))
        clip = np.broadcast_to(params.clip, (N,))
        grads.append(np.stack([g[i] * min(1.0, clip[i] / np.linalg.norm(g[i]))
                               for i in range(N)]))
        noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
        draws.append(np.asarray(noise["xi"]))
        state, messages = alg.step(state, noise, prob, net, params, k)
        if isinstance(alg, Muffliato):
            rows.extend(np.asarray(messages[f"y{r}"]) for r in range(alg.rounds))
        else:
            rows.append(np.asarray(state.x))  # x^{k+1}
    return np.stack(grads), np.stack(draws), np.stack(rows)


@pytest.mark.parametrize("alg", [algorithms.get("dp_dgd", sampler="float"),
                                 Muffliato(rounds=3, sampler="float")], ids=["dp_dgd", "muffliato"])
def test_declared_form_is_the_program(setup, alg):
    """The stacked step, fed the same draws, emits ``A c + B z`` of the declared form, per
    coordinate, at 1e-10 (per-agent α and C, decaying step size)."""
    prob, net = setup
    with jax.enable_x64(True):
        params = algorithms.DPDGDParams(**PARAMS)
        grads, draws, rows = _transcript(alg, prob, net, params)
        form = alg.linear_form(net, params)
        release = form.release(K)
    A, B = np.asarray(release.A), np.asarray(release.B)
    assert A.shape[0] == rows.shape[0] * N
    for coord in range(D):
        c = grads[:, :, coord].T  # (N, K): agent u's contribution at step t
        z = np.zeros(B.shape[1])
        z[:K * N] = draws[:, :, coord].reshape(-1)  # seeds ξ_i^k, ordered (k, i)
        expected = np.einsum("mut,ut->m", A, c) + B @ z
        np.testing.assert_allclose(expected, rows[:, :, coord].reshape(-1), rtol=0, atol=1e-10)
    assert release.senders.tolist() == list(range(N)) * rows.shape[0]
    W = np.asarray(net.dense("W"))
    np.testing.assert_array_equal(release.audience[:N], (W.T != 0) & ~np.eye(N, dtype=bool))


def _report(alg, setup, threat, steps=8, ideal=True, **kw):
    prob, net = setup
    with jax.enable_x64(True):
        return alg.privacy(prob, net, algorithms.DPDGDParams(**PARAMS), steps, delta=1e-5,
                           threat=threat, ideal=ideal, **kw)


@pytest.mark.parametrize("threat", ["neighbours", "secret_pairs", Coalition([1, 4])])
def test_ideal_curve_is_the_accountant_on_the_form(setup, threat):
    """At every reported step: the accountant on a freshly built ``release(k)`` (the report
    truncates one release), scaled by each agent's ``2C``, each agent's worst observer."""
    alg = Muffliato(rounds=2)
    report = _report(alg, setup, threat)
    form = alg.linear_form(setup[1], algorithms.DPDGDParams(**PARAMS))
    for j in (0, len(report.steps) // 2, -1):
        k = report.steps[j]
        result = factorization_epsilon(form.release(int(k)), 1e-5, threat)
        mu = np.asarray(result.mu) * (2 * PARAMS["clip"])[:, None]
        worst = (np.max(np.where(np.eye(N, dtype=bool), 0, mu), axis=1) if mu.shape[1] == N
                 else mu[:, 0])
        np.testing.assert_allclose(report.curves[IDEAL_LINEAR][:, j],
                                   gaussian_epsilon(worst, 1e-5), rtol=1e-9)
    assert IDEAL_LINEAR not in report.sound
    if isinstance(threat, Coalition):
        assert np.all(np.isinf(report.curves[IDEAL_LINEAR][[1, 4]]))
        assert np.all(np.isfinite(report.curves[IDEAL_LINEAR][[0, 2, 3, 5]]))


def test_ideal_neighbours_curve_stays_below_the_eavesdroppers_composition(setup):
    """What a neighbour knows is a function of the eavesdropper's view and of its own noise,
    independent of agent u's data; the eavesdropper's exact ideal value for DP-DGD is
    k Gaussian releases of ``2C`` at ``σC``: ``μ² = 4k/σ²``. The bound the accountant returns
    must keep that order (``Σ|Q|`` alone does not where ``Q`` has negative entries)."""
    report = _report(algorithms.get("dp_dgd"), setup, "neighbours", steps=10)
    composed = gaussian_epsilon(2 * np.sqrt(report.steps) / PARAMS["sigma"], 1e-5)
    assert np.all(report.curves[IDEAL_LINEAR] <= composed[None, :] * (1 + 1e-9))


def test_no_curve_where_no_form_applies(setup):
    """Not asked for (the default: calibration calls privacy in a loop); the eavesdropper's
    report is the reference; a channel changes the messages (no form is declared for the wrapped
    algorithm); final models released to everyone are not rows of the form; a run too large for
    the dense accountant, or too costly for a report, says why."""
    dgd = algorithms.get("dp_dgd")
    assert IDEAL_LINEAR not in _report(dgd, setup, "neighbours", ideal=False).curves
    assert IDEAL_LINEAR not in _report(dgd, setup, "eavesdropper").curves
    assert IDEAL_LINEAR not in _report(dgd, setup, "neighbours",
                                       release="messages+models").curves
    wrapped = channels.with_channel(algorithms.get("dgd"), channels.chain(
        channels.clip(1.0), channels.gaussian(1.0)))
    prob, net = setup
    with jax.enable_x64(True):
        report = wrapped.privacy(prob, net, wrapped.default_params(), 4, delta=1e-5,
                                 threat="neighbours", ideal=True)
    assert IDEAL_LINEAR not in report.curves
    big = _report(dgd, setup, "neighbours", steps=600)
    assert IDEAL_LINEAR not in big.curves and "exceed the dense accountant" in big.threat_note
    costly = _report(dgd, setup, "secret_pairs", steps=400)  # the outsider sees all N·K rows
    assert IDEAL_LINEAR not in costly.curves and "multiply-adds" in costly.threat_note


def test_form_rejects_nothing_silently():
    """A non-stochastic W is the caller's: the form takes it as declared (checked elsewhere);
    ``fits`` names both limits."""
    form = GossipForm(W=np.eye(3), rounds=2, scale=-np.ones(3), noise=np.ones(3),
                      sensitivity=2 * np.ones(3))
    assert form.fits(10) == ""
    assert "3000" in form.fits(1001) and "4000" in form.fits(1001)
    epsilon, why = ideal_curve(form, "neighbours", [2000], 1e-5)
    assert epsilon is None and "exceed" in why


def test_cli_run_ideal_prints_and_saves_the_curve_beside_the_guarantee(tmp_path, capsys):
    from jaxdp.cli import main
    args = ["run", "muffliato", "--problem", "least_squares", "--network", "ring", "--agents", "6",
            "--seeds", "2", "--steps", "4", "--no-progress", "--threat", "neighbours", "--ideal",
            "--out", str(tmp_path)]
    assert main(args) == 0
    saved = json.loads((tmp_path / "privacy.json").read_text())
    assert IDEAL_LINEAR in saved["methods"] and IDEAL_LINEAR not in saved["sound"]
    assert "Beside it, not a guarantee: " + IDEAL_LINEAR in capsys.readouterr().out
