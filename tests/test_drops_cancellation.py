"""Correlated noise under message drops (issue 24): a lost message takes its coupled term out of
the receiver's sum, so DECOR's pairwise terms and Zip-DL's zero-sum noise no longer cancel; the
residual is exactly the lost messages' terms. The privacy reports do not change (a drop is
data-independent post-processing). docs/api/channels.md, *Drops and cancellation*."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, channels
from tests.harness import gossip_setup

N, D = 6, 3
SIGMA, SIGMA_COR, P = 0.5, 2.0, 0.3  # dyadic σ: the lattice step γ = σ/R is a power of two


@pytest.fixture(scope="module")
def setup():
    return gossip_setup(N, D)


def _received(net, noise, values, p, product="gather", seed=7):
    """One product call on zeros through ``noise → drop(p)``: per directed edge what the receiver
    gets (``gather``: the noise, or the receiver's own row 0 when lost) or the mixed rows."""
    chan = channels.chain(noise, channels.drop(p))
    proxy = channels.ChannelNetwork(net, chan, {**values, "drop_p": p}, 0, jax.random.key(seed))
    return np.asarray(getattr(proxy, product)(jnp.zeros((N, D))))


def _decor(net, cor, p, product="gather"):
    values = {"decor_sigma": SIGMA, "decor_decay": 1.0, "decor_sigma_cor": cor}
    return _received(net, channels.pairwise_cancelling(SIGMA, SIGMA_COR), values, p, product)


def test_decor_residual_is_exactly_the_lost_messages_terms(setup):
    """Without drops ``W_ij c_{j→i} + W_ji c_{i→j} = 0`` for every edge; with drops the network
    sum of the received pairwise terms is ``−Σ_{lost e} W_e c_e ≠ 0`` — and it is what the
    network sum of a ``mix`` moves by."""
    _, net = setup
    with jax.enable_x64(True):
        w, rev = np.asarray(net.w_edge)[:, None], np.asarray(net.reverse)
        full = _decor(net, SIGMA_COR, 0.0) - _decor(net, 0.0, 0.0)  # every c_e (exact: dyadic)
        np.testing.assert_array_equal(full, -full[rev])
        np.testing.assert_array_equal(w * full + (w * full)[rev], 0.0)
        lost = np.all(_decor(net, 0.0, P) == 0.0, axis=1)  # the receiver's own row: 0
        assert 0 < lost.sum() < 2 * net.n_edges
        received = _decor(net, SIGMA_COR, P) - _decor(net, 0.0, P)
        np.testing.assert_array_equal(received, np.where(lost[:, None], 0.0, full))
        residual = (w * received).sum(0)
        np.testing.assert_allclose(residual, -(w * full)[lost].sum(0), rtol=0, atol=1e-12)
        assert np.abs(residual).max() > 0.01 * SIGMA_COR  # the cancellation is broken
        moved = (_decor(net, SIGMA_COR, P, "mix") - _decor(net, 0.0, P, "mix")).sum(0)
        np.testing.assert_allclose(moved, residual, rtol=0, atol=1e-12)
        none = (_decor(net, SIGMA_COR, 0.0, "mix") - _decor(net, 0.0, 0.0, "mix")).sum(0)
        np.testing.assert_allclose(none, 0.0, rtol=0, atol=1e-12)


def test_zip_dl_sender_sum_is_minus_its_lost_messages_noise(setup):
    """A sender's Zip-DL noise sums to zero over its messages; what arrives sums to minus the
    noise of its lost messages."""
    _, net = setup
    with jax.enable_x64(True):
        values = {"zerosum_sigma": SIGMA, "zerosum_decay": 1.0}
        noise = channels.zero_sum(SIGMA)
        senders, broken = np.asarray(net.senders), 0
        for seed in (7, 8, 9):
            full = _received(net, noise, values, 0.0, seed=seed)
            got = _received(net, noise, values, P, seed=seed)
            lost = np.all(got == 0.0, axis=1)
            for j in range(N):
                out = senders == j
                np.testing.assert_array_equal(full[out].sum(0), 0.0)
                np.testing.assert_allclose(got[out].sum(0), -full[out & lost].sum(0), rtol=0,
                                           atol=1e-12)
                broken += bool(np.abs(got[out].sum(0)).max() > 0.01 * SIGMA)
        assert broken > 0


@pytest.mark.parametrize("threat", ["eavesdropper", "secret_pairs"])
def test_reports_do_not_change_with_drops(setup, threat):
    """A drop is data-independent post-processing: DECOR's ε with ``drop(0.3)`` is the ε
    without, under the eavesdropper and SecLDP; the positive control — a smaller σ — does
    change it."""
    prob, net = setup
    with jax.enable_x64(True):
        def eps(sigma, *loss):
            chan = channels.chain(channels.clip(0.7),
                                  channels.pairwise_cancelling(sigma, 4 * sigma), *loss)
            alg = channels.with_channel(algorithms.DGD(), chan)
            params = alg.params(algorithms.DGDParams(alpha=0.1))
            return alg.privacy(prob, net, params, 10, threat=threat).epsilon
        base = eps(4.0)
        assert np.all(np.isfinite(base))
        np.testing.assert_array_equal(eps(4.0, channels.drop(P)), base)
        assert np.all(eps(2.0, channels.drop(P)) > base)
