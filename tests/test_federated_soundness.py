"""Federated releases are sound under every threat model (issue 36, breaks 3 and 4).

Break 3: behind a channel, the server's sum is row 0 of a product, which keeps client 0's own
upload clean (``self_term="clean"``) and reaches every client in the broadcast. Break 4:
DP-FedAvg's uploads ``clip(Δ_k, C)`` carry no noise; only the trusted server's observer (its noisy
aggregate and broadcasts) has a finite ε.

float64: tests/conftest.py enables it for the whole test session.
"""
import csv
import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels, network
from jaxdp.algorithms.cases import l2, tilt
from jaxdp.cli import ENDED_WORSE, main
from jaxdp.privacy import Coalition, TrustedServer
from jaxdp.privacy.contract import as_threat

N, C, SIGMA, DELTA = 17, 1.0, 11.31, 1e-2
CLEAN = channels.chain(channels.clip(C), channels.gaussian(SIGMA))
ROUTED = channels.chain(channels.clip(C), channels.gaussian(SIGMA), broadcast=True,
                        self_term="released")


@pytest.fixture(scope="module")
def setting():
    """Client 0's data set replaced: its gradient at x⁰ = 0 is ±v/2 with ‖v‖ = 1000 (least
    squares), every other client's data the same; K_17."""
    return tilt(N, 20, 5, l2(5, 1e3)), network.make_network("complete", N)


def _round(alg, problem, net, seed=3):
    """One round from x⁰ with the draws of ``seed``: ``(next state, released messages)``."""
    params, key = alg.default_params(), jax.random.key(seed)
    state = alg.init(key, problem, net, params)
    noise = alg.noise(key, state, params, jnp.int32(0))
    return alg.step(state, noise, problem, net, params, jnp.int32(0))


# -- break 3: the server row behind a channel ---------------------------------------------------
@pytest.mark.parametrize("weighting", ["data", "uniform"])
def test_the_server_row_behind_a_clean_channel_leaks_and_the_report_is_inf(setting, weighting):
    """With the draws fixed, client 1's round-1 model moves with client 0's data by far more than
    the channel lets client 0's upload move it (≤ 2C·max w_k/Σ w_k, η_g = 1): the clean self
    term of the server's row carries the unclipped upload. The report was finite (2.77, δ = 1e-2)
    and is now inf with the reason."""
    (p0, p1), net = setting
    alg = channels.with_channel(algorithms.FedAvg(local_steps=1, weighting=weighting), CLEAN)
    x0, x1 = (np.asarray(_round(alg, p, net)[0].x) for p in (p0, p1))
    sizes = np.asarray(p0.mask.sum(axis=1), float) if weighting == "data" else np.ones(N)
    allowed = 2 * C * sizes.max() / sizes.sum()
    assert np.linalg.norm(x0[1] - x1[1]) > 10 * allowed
    report = alg.privacy(p0, net, alg.default_params(), 2, delta=DELTA)
    assert np.isinf(report.epsilon_max)
    assert ("data sizes" if weighting == "data" else "self_term='released'") in report.reason


def test_a_routed_server_row_is_a_post_processing_of_the_releases(setting):
    """A broadcast channel that releases the self term too: the server's sum is exactly the sum
    of the N released uploads (no clean row in it), so the broadcast is post-processing, and
    the report is finite."""
    (p0, _), net = setting
    alg = channels.with_channel(algorithms.FedAvg(local_steps=1, weighting="uniform"), ROUTED)
    state, released = _round(alg, p0, net)
    expected = np.sum(np.asarray(released["update"]), axis=0) / N  # η_g = 1, x⁰ = 0, |S| = N
    np.testing.assert_allclose(np.asarray(state.x), np.broadcast_to(expected, (N, 5)),
                               rtol=1e-12, atol=1e-12)
    report = alg.privacy(p0, net, alg.default_params(), 2, delta=DELTA)
    assert np.isfinite(report.epsilon_max) and not report.reason


def test_data_weighting_behind_a_channel_is_inf_even_when_routed(setting):
    """weighting='data': the server divides by Σ_S n_k, a function of client 0's data size that
    reaches every client outside the channel (the relation may change n_0)."""
    (p0, _), net = setting
    alg = channels.with_channel(algorithms.FedAvg(local_steps=1, weighting="data"), ROUTED)
    report = alg.privacy(p0, net, alg.default_params(), 2, delta=DELTA)
    assert np.isinf(report.epsilon_max) and "data sizes n_k" in report.reason


@dataclasses.dataclass(frozen=True)
class UndeclaredFedAvg(algorithms.FedAvg):
    """FedAvg that does not declare its broadcast server row: the finder must catch it."""

    broadcasts_product_row = False


def test_the_self_term_finder_catches_an_undeclared_broadcast_and_spares_dgd(setting):
    """An algorithm that shares a product's row without declaring it is found by moving client
    0's clean self term with the releases fixed (jaxdp.channels.self_term_flow): inf. DGD, whose
    agent i keeps row i of the product for itself, is not flagged."""
    from jaxdp.channels import self_term_flow

    (p0, _), net = setting
    alg = channels.with_channel(UndeclaredFedAvg(local_steps=1, weighting="uniform"), CLEAN)
    assert "self_term_flow" in self_term_flow(alg, p0, net, alg.default_params())
    report = alg.privacy(p0, net, alg.default_params(), 2, delta=DELTA)
    assert np.isinf(report.epsilon_max) and "state .x" in report.reason
    dgd = channels.with_channel(algorithms.DGD(), CLEAN)
    ring = network.make_network("ring", N)
    assert self_term_flow(dgd, p0, ring, dgd.default_params()) == ""
    assert np.isfinite(dgd.privacy(p0, ring, dgd.default_params(), 2, delta=DELTA).epsilon_max)


# -- break 4: DP-FedAvg's observer --------------------------------------------------------------
@pytest.fixture(scope="module")
def central(setting):
    (p0, _), net = setting
    alg = algorithms.DPFedAvg(local_steps=1, rate=0.5)
    return alg, p0, net, alg.default_params().replace(z=3.0)


def test_dp_fedavg_uploads_are_in_the_clear(setting, central):
    """Client 0's upload clip(Δ_0, C) is a deterministic function of its data: the two data sets
    give uploads 2C apart (δ = 1 for any finite ε against an observer who sees it)."""
    (p0, p1), net = setting
    alg, _, _, params = central
    state = alg.init(jax.random.key(0), p0, net, params)
    rows = algorithms.federated.Rows(jnp.ones(N, bool))
    u0, u1 = (np.asarray(alg.clipped_updates(state, p, params, rows))[0] for p in (p0, p1))
    np.testing.assert_allclose(np.linalg.norm(u0 - u1), 2 * C, rtol=1e-9)


@pytest.mark.parametrize("threat", ["eavesdropper", "neighbours", "secret_pairs", Coalition([1])])
def test_dp_fedavg_is_inf_for_every_observer_who_sees_an_upload(central, threat):
    alg, p0, net, params = central
    report = alg.privacy(p0, net, params, 10, threat=threat)
    assert np.isinf(report.epsilon_max) and report.threat == as_threat(threat).name
    assert "uploads clip(Δ_k, C) carry no noise" in report.reason


def test_dp_fedavg_is_finite_only_for_the_trusted_server_its_default(central):
    alg, p0, net, params = central
    default = alg.privacy(p0, net, params, 10)
    for threat in ("trusted_server", TrustedServer()):
        named = alg.privacy(p0, net, params, 10, threat=threat)
        np.testing.assert_array_equal(named.epsilon, default.epsilon)
    assert default.threat == "trusted_server" and not default.threat_fallback
    assert np.isfinite(default.epsilon_max) and "trusted server" in default.threat_note


def test_ldp_fedavg_names_the_server_and_keeps_its_bound_for_every_observer(central):
    """The local randomizer's noisy uploads are what the eavesdropper sees: its report stands,
    and the trusted server, who sees less, gets the same bound (the fallback)."""
    _, p0, net, params = central
    alg = algorithms.LDPFedAvg(local_steps=1)
    eaves = alg.privacy(p0, net, params, 10)
    server = alg.privacy(p0, net, params, 10, threat="trusted_server")
    assert eaves.threat == "eavesdropper" and np.isfinite(eaves.epsilon_max)
    np.testing.assert_array_equal(server.epsilon, eaves.epsilon)
    assert server.threat_fallback


def test_cli_compare_under_neighbours_gives_dp_fedavg_no_finite_epsilon(tmp_path):
    """``jaxdp compare dp_fedavg --threat neighbours``: the headline (the trusted server) is
    finite; the neighbours column is inf (a neighbour, the server, sees the uploads)."""
    code = main(["compare", "dp_fedavg", "--problem", "least_squares", "--agents", "5",
                 "--seeds", "1", "--steps", "3", "--no-progress", "--threat", "neighbours",
                 "--param", "z=3", "--out", str(tmp_path)])
    assert code in (0, ENDED_WORSE)  # finished; the tiny run may end worse
    with open(tmp_path / "compare.csv") as f:
        row = next(csv.DictReader(f))
    assert math.isfinite(float(row["epsilon"]))
    assert float(row["epsilon_threat"]) == math.inf
