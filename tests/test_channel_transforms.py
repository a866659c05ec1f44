"""Channel vocabulary: compression (with error feedback), drops, bursty losses and link processes,
against per-node references, plus their semantics, statistics, privacy stage and counters; and a
user's transform as one class (its Params field, its draws, a spec string once registered, its
declared privacy role honoured by the report)."""
import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, channels, network, problems
from jaxdp.channels import Transform
from tests.reference import channels as ref

N, D, M = 6, 5, 8


@pytest.fixture(scope="module")
def setup():
    with jax.enable_x64(True):
        rng = np.random.default_rng(0)
        prob = problems.from_arrays(rng.normal(size=(N, M, D)), rng.normal(size=(N, M)),
                                    loss="least_squares", reg={"ridge": 0.1}, reference=False)
        yield prob, network.make_network("gnm", N, m=8, seed=1)


CASES = {
    "top_k": lambda: channels.chain(channels.top_k(2)),
    "top_k_ef": lambda: channels.chain(channels.top_k(1, error_feedback=True)),
    "random_k": lambda: channels.chain(channels.random_k(2)),
    "random_k_biased_ef": lambda: channels.chain(
        channels.random_k(3, unbiased=False, error_feedback=True)),
    "quantize": lambda: channels.chain(channels.quantize(2)),
    "quantize_stochastic_linf": lambda: channels.chain(
        channels.quantize(3, stochastic=True, norm="linf")),
    "drop": lambda: channels.chain(channels.drop(0.3)),
    "gilbert_elliott": lambda: channels.chain(channels.gilbert_elliott(0.3, 0.4, 0.1, 0.9)),
    "link_iid": lambda: channels.chain(channels.link_failures(0.3)),
    "link_markov": lambda: channels.chain(
        channels.link_failures(0.3, process="markov", recover=0.4)),
    "cyclic": lambda: channels.chain(channels.activation("cyclic", period=3)),
    "poisson": lambda: channels.chain(channels.activation("poisson", rate=0.7)),
    "agents": lambda: channels.chain(channels.activation("agents", p=0.6)),
    "clip_topk_ef_gauss_drop": lambda: channels.chain(
        channels.clip(0.8), channels.top_k(2, error_feedback=True), channels.gaussian(0.3),
        channels.drop(0.2)),
    "clip_topk_ef_gauss_bcast": lambda: channels.chain(
        channels.clip(0.8), channels.top_k(2, error_feedback=True), channels.gaussian(0.3),
        channels.drop(0.2), broadcast=True),
    "quantize_ef_gauss": lambda: channels.chain(channels.quantize(2, error_feedback=True),
                                                channels.gaussian(0.2)),
}


def _uniform(key, i, size):
    return np.asarray(jax.random.uniform(jax.random.fold_in(key, i), (size,), jnp.float64))


def _reference_lost(channel, values, ck, net, k, links):
    """``(2E,)`` lost messages of call 0, loop by loop; ``links`` (updated) the chain states."""
    senders, receivers = np.asarray(net.senders), np.asarray(net.receivers)
    edge_id, E = np.asarray(net.edge_id), net.n_edges
    step_key, call_key = (jax.random.fold_in(ck, c) for c in (channels.STEP_CALL, 0))
    lost = np.zeros(2 * E, bool)
    for i in channel.losses:
        t = channel.transforms[i]
        p = [values[f] for f in t.fields]
        proc = getattr(t, "process", None)
        if t.kind == "drop":
            u = _uniform(call_key, i, 2 * E)
            now = np.array([u[e] < p[0] for e in range(2 * E)])
        elif t.kind == "gilbert_elliott":
            links[i] = ref.markov_step(links[i], _uniform(step_key, i, 2 * E), p[0], p[1])
            v = _uniform(call_key, i, 2 * E)
            now = np.array([v[e] < (p[3] if links[i][e] else p[2]) for e in range(2 * E)])
        elif t.kind == "link_failures":
            u = _uniform(step_key, i, E)
            down = (ref.markov_step(links[i], u, p[0], p[1]) if proc == "markov"
                    else np.array([u[e] < p[0] for e in range(E)]))
            links[i] = down
            now = np.array([down[edge_id[e]] for e in range(2 * E)])
        elif proc == "cyclic":
            now = np.array([(k + edge_id[e]) % t.period != 0 for e in range(2 * E)])
        elif proc == "poisson":
            u = _uniform(step_key, i, E)
            now = np.array([u[edge_id[e]] >= 1 - np.exp(-p[0]) for e in range(2 * E)])
        else:
            u = _uniform(step_key, i, N)
            now = np.array([not (u[senders[e]] < p[0] and u[receivers[e]] < p[0])
                            for e in range(2 * E)])
        lost |= now
    return lost


@pytest.mark.parametrize("backend", ["dense", "edges"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_dgd_through_transform_matches_per_node_reference(setup, case, backend):
    """Three steps of DGD through each transform, fed the same standard draws, against explicit
    loops over receivers and in-edges; the channel memory (error feedback, chains) too."""
    prob, net = setup
    with jax.enable_x64(True):
        net = net.with_backend(backend)
        alg = channels.with_channel(algorithms.DGD(), CASES[case]())
        params = alg.params(algorithms.DGDParams(alpha=0.1))
        values = {f: float(v) for f, v in alg.split(params)[1].items()}
        chan = alg.channel
        state = alg.init(jax.random.key(5), prob, net, params)
        x0 = np.random.default_rng(3).normal(size=(N, D))
        stateful = isinstance(state, channels.ChannelState)
        assert stateful == chan.stateful
        state = state.replace(inner=state.inner.replace(x=jnp.asarray(x0))) if stateful else \
            state.replace(x=jnp.asarray(x0))
        x, memory = x0, {m: np.asarray(v) for m, v in (state.memory if stateful else {}).items()}
        links = {int(m[1:]): v for m, v in memory.items() if m.startswith("t")}
        W, senders = net.dense("W"), np.asarray(net.senders)
        rows = N if chan.broadcast else 2 * net.n_edges
        for k in range(3):
            noise = alg.noise(jax.random.key(10 + k), state, params, jnp.int32(k))
            recorded = alg.channel_draws(state, noise, prob, net, params, jnp.int32(k))
            state, released = alg.step(state, noise, prob, net, params, jnp.int32(k))
            ck = noise["channel"]
            draws = {i: np.asarray(d) for i, d in recorded.get("mix0", {}).items()}
            assert all(d.shape == (rows, D) for d in draws.values())
            received, memory = ref.messages(chan, x, senders, values, k, draws, memory)
            lost = _reference_lost(chan, values, ck, net, k, links)
            grads = np.asarray(prob.local_grads(jnp.asarray(x)))
            x = ref.dgd_step(x, grads, W, senders, np.asarray(net.receivers), 0.1, received, lost)
            got = state.inner.x if stateful else state.x
            np.testing.assert_allclose(np.asarray(got), x, rtol=0, atol=1e-10)
            memory.update({f"t{i}": v for i, v in links.items() if chan.transforms[i].stateful})
            if stateful:
                assert set(state.memory) == set(memory)
                for name, v in memory.items():
                    np.testing.assert_allclose(np.asarray(state.memory[name]), v, rtol=0,
                                               atol=1e-10, err_msg=name)
                assert int(state.counts["messages_dropped"]) >= 0
        assert "mix0" in released


def test_error_feedback_memory_telescopes():
    """EF: Σ_k c_k + e_K = Σ_k v_k for each sender (nothing is lost, only delayed)."""
    with jax.enable_x64(True):
        chan = channels.chain(channels.top_k(1, error_feedback=True))
        rng = np.random.default_rng(1)
        vs = [jnp.asarray(rng.normal(size=(N, D))) for _ in range(4)]
        memory, sent = {}, []
        for k, v in enumerate(vs):
            sent.append(chan.apply(v, {}, jnp.arange(N), k, {}, memory=memory, tag="mix0"))
        np.testing.assert_allclose(sum(sent) + memory["mix0/t0"], sum(vs), rtol=0, atol=1e-12)
        assert np.all(np.count_nonzero(np.asarray(sent[0]), axis=1) == 1)


@pytest.mark.parametrize("product", ["mix", "apply_P", "apply_L"])
def test_losses_keep_row_sums(setup, product):
    """A lost message is replaced by the receiver's row: W 1 = 1 and P 1 = L 1 = 0 still hold."""
    net = setup[1]
    with jax.enable_x64(True):
        chan = channels.chain(channels.drop(0.5))
        proxy = channels.ChannelNetwork(net, chan, {"drop_p": 0.5}, 0, jax.random.key(2))
        ones = jnp.ones((N, 2))
        out = getattr(proxy, product)(ones)
        np.testing.assert_allclose(out, ones if product == "mix" else 0 * ones, atol=1e-12)
        assert 0 < int(proxy.tally["dropped"]) < 2 * net.n_edges  # some, not all, were lost


def test_lost_link_is_the_link_mask_product(setup):
    """A failed link through the channel gives Network.with_link_mask's W, P and L products, and
    ``gather`` returns the receiver's own row on it."""
    net = setup[1]
    with jax.enable_x64(True):
        chan = channels.chain(channels.link_failures(0.4))
        key = jax.random.key(9)
        X = jnp.asarray(np.random.default_rng(0).normal(size=(N, 3)))
        proxy = channels.ChannelNetwork(net, chan, {"link_p": 0.4}, 0, key)
        down = np.asarray(proxy._links["*"][0])
        assert 0 < down.sum() < net.n_edges
        masked = net.with_link_mask(jnp.asarray(~down))
        for product in ("mix", "apply_P", "apply_L"):
            np.testing.assert_allclose(getattr(proxy, product)(X), getattr(masked, product)(X),
                                       rtol=0, atol=1e-12)
        lost = down[np.asarray(net.edge_id)]
        got = np.asarray(proxy.gather(X))
        want = np.where(lost[:, None], np.asarray(X)[np.asarray(net.receivers)],
                        np.asarray(X)[np.asarray(net.senders)])
        np.testing.assert_allclose(got, want, rtol=0, atol=0)


def test_iid_link_failures_have_the_frequency_of_random_link_failures(setup):
    """Per-edge failure frequency of the channel's iid links and RandomLinkFailures agree (both p):
    K = 4000 draws per edge, each frequency has sd √(p(1−p)/K) ≈ 0.0072; allow 5 sd per edge for
    each against p (E = 8 edges: a false alarm has probability < 1e-5)."""
    net = setup[1]
    p, K = 0.3, 4000
    t = channels.link_failures(p)
    keys = jax.random.split(jax.random.key(0), K)
    ours = jax.vmap(lambda k: t.link_state({"link_p": p}, k, None, net, 0))(keys)
    theirs = ~jax.vmap(network.RandomLinkFailures(net, p).link_mask)(keys)
    sd = np.sqrt(p * (1 - p) / K)
    for freq in (np.asarray(ours).mean(0), np.asarray(theirs).mean(0)):
        assert freq.shape == (net.n_edges,)
        np.testing.assert_array_less(np.abs(freq - p), 5 * sd)


def test_gilbert_elliott_stationary_loss_rate(setup):
    """Loss rate of GE = π_good loss_good + π_bad loss_bad, π_bad = p_gb / (p_gb + p_bg).

    Tolerance: the per-chain time average over T steps of the loss has variance at most
    ``(lb − lg)² π_b π_g (1 + λ) / ((1 − λ) T) + 1/(4T)`` (λ = 1 − p_gb − p_bg: the chain's
    autocorrelation; the second term the per-call Bernoulli), chains independent across the
    2E edges and S seeds; 5 sd of the mean."""
    prob, net = setup
    p_gb, p_bg, lg, lb = 0.1, 0.3, 0.05, 0.8
    T, S = 200, 64
    with jax.enable_x64(True):
        alg = channels.with_channel(algorithms.DGD(), channels.gilbert_elliott(p_gb, p_bg, lg, lb))
        params = alg.default_params()

        def one(seed_key):
            state = alg.init(seed_key, prob, net, params)

            def body(s, k):
                noise = alg.noise(jax.random.fold_in(seed_key, k), s, params, k)
                return alg.step(s, noise, prob, net, params, k)[0], None

            state, _ = jax.lax.scan(body, state, jnp.arange(T))
            return state.counts["messages_dropped"], state.counts["messages_sent"]

        dropped, sent = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(1), S))
        rate = float(np.sum(dropped)) / float(np.sum(sent))
        pb = p_gb / (p_gb + p_bg)
        lam = 1 - p_gb - p_bg
        var = ((lb - lg) ** 2 * pb * (1 - pb) * (1 + lam) / (1 - lam) + 0.25) / T
        sd = np.sqrt(var / (2 * net.n_edges * S))
        assert abs(rate - ((1 - pb) * lg + pb * lb)) < 5 * sd
        assert int(np.sum(sent)) == S * T * 2 * net.n_edges


def test_grad_through_dropped_compressed_run(setup):
    """``jax.grad`` in the step size α through DGD with drops, top-k and Gaussian noise (the loss
    pattern and the kept coordinates are locally constant) matches central differences."""
    prob, net = setup
    with jax.enable_x64(True):
        alg = channels.with_channel(algorithms.DGD(), channels.chain(
            channels.top_k(3), channels.gaussian(0.1, sampler="float"), channels.drop(0.3)))
        params = alg.params(algorithms.DGDParams(alpha=0.05))
        key = jax.random.key(3)

        def f(alpha):
            p = params.replace(alpha=alpha)
            return jaxdp.final_metrics(alg, prob, net, p, key, steps=10)["consensus_error"]

        g = float(jax.grad(f)(0.05))
        h = 1e-6
        fd = (float(f(0.05 + h)) - float(f(0.05 - h))) / (2 * h)
        assert np.isfinite(g) and abs(g) > 1e-8
        assert g == pytest.approx(fd, rel=1e-5)


def test_run_over_seeds_and_sweep_over_drop_p(setup):
    """``drop_p = 0`` is DGD itself; seeds differ with drops; sweep over ``drop_p``."""
    prob, net = setup
    with jax.enable_x64(True):
        alg = channels.with_channel(algorithms.DGD(), channels.drop(0.5))
        params = alg.params(algorithms.DGDParams(alpha=0.05))
        trace = jaxdp.run(alg, prob, net, params, steps=15, seeds=3, progress=False)
        final = trace.final("consensus_error")
        assert final.shape == (3,) and len(np.unique(final)) == 3
        dropped = np.asarray(trace.final("messages_dropped"))  # the engine records the counters
        assert np.all(dropped > 0) and np.all(dropped < 15 * 2 * net.n_edges)
        grid = jaxdp.grid(params, drop_p=[0.0, 0.6])
        swept = jaxdp.sweep(alg, prob, net, grid, steps=15, seeds=2, progress=False)
        err = np.asarray(swept.final("consensus_error"))
        plain = jaxdp.run(algorithms.DGD(), prob, net, alg.split(params)[0], steps=15, seeds=2,
                          progress=False).final("consensus_error")
        np.testing.assert_allclose(err[:, 0], plain, rtol=1e-12)
        assert np.all(np.abs(err[:, 1] - err[:, 0]) > 1e-9)


def test_counters_and_costs_per_step(setup):
    prob, net = setup
    with jax.enable_x64(True):
        E2 = 2 * net.n_edges
        alg = channels.with_channel(algorithms.DGD(), channels.chain(channels.top_k(2),
                                                                     channels.drop(0.4)))
        params = alg.default_params()
        state = alg.init(jax.random.key(0), prob, net, params)
        for k in range(3):
            state = alg.step(state, alg.noise(jax.random.key(k), state, params, k), prob, net,
                             params, k)[0]
        c = alg.counters(state)
        bits = 2 * (64 + 3)  # k (value, index) pairs, ⌈log₂ 5⌉ = 3
        assert int(c["messages_sent"]) == 3 * E2
        assert int(c["messages_received"]) + int(c["messages_dropped"]) == 3 * E2
        assert 0 < int(c["messages_dropped"]) < 3 * E2
        assert float(c["bits_sent"]) == 3 * E2 * bits
        costs = alg.costs_per_step(prob, net, params)
        assert costs["messages"] == E2 and costs["bits"] == E2 * bits
        plain = channels.with_channel(algorithms.DGD(), channels.chain(
            channels.quantize(4), broadcast=True))
        assert plain.counters(plain.init(jax.random.key(0), prob, net,
                                         plain.default_params())) == {}
        costs = plain.costs_per_step(prob, net, plain.default_params())
        assert costs["messages"] == N and costs["bits"] == N * (64 + D * 5)


def _report(prob, net, *transforms):
    alg = channels.with_channel(algorithms.DGD(), channels.chain(*transforms))
    return alg.privacy(prob, net, alg.default_params(), 3)


def test_privacy_stage_with_compression(setup):
    """Norm-non-increasing transforms between the clip and the noise keep the bound (same events
    as clip + noise); quantize, unbiased random-k and error feedback there break it (∞, named);
    error feedback before the clip or anything after the noise is fine."""
    prob, net = setup
    with jax.enable_x64(True):
        base = _report(prob, net, channels.clip(0.5), channels.gaussian(1.0)).epsilon
        assert np.all(np.isfinite(base))
        for ok in ([channels.clip(0.5), channels.top_k(2), channels.gaussian(1.0)],
                   [channels.clip(0.5), channels.random_k(2, unbiased=False), channels.drop(0.3),
                    channels.gaussian(1.0)],
                   [channels.top_k(2, error_feedback=True), channels.clip(0.5),
                    channels.gaussian(1.0)],
                   [channels.clip(0.5), channels.gaussian(1.0),
                    channels.quantize(2, error_feedback=True)]):
            np.testing.assert_allclose(_report(prob, net, *ok).epsilon, base, rtol=1e-12)
        for bad, word in (([channels.clip(0.5), channels.quantize(2), channels.gaussian(1.0)],
                           "quantize"),
                          ([channels.clip(0.5), channels.random_k(2), channels.gaussian(1.0)],
                           "D/k scaling"),
                          ([channels.clip(0.5), channels.top_k(2, error_feedback=True),
                            channels.gaussian(1.0)], "error feedback")):
            rep = _report(prob, net, *bad)
            assert np.all(np.isinf(rep.epsilon)) and word in rep.reason


def test_bad_configuration_is_refused(setup):
    prob, net = setup
    for make, match in ((lambda: channels.top_k(0), "top_k k must be an integer >= 1"),
                        (lambda: channels.random_k(1.5), "random_k k"),
                        (lambda: channels.quantize(0), "quantize bits"),
                        (lambda: channels.drop(1.5), r"drop p must be in \[0, 1\]"),
                        (lambda: channels.gilbert_elliott(0.0, 0.0), "stationary"),
                        (lambda: channels.gilbert_elliott(-0.1), "p_gb"),
                        (lambda: channels.link_failures(0.1, process="x"), "process"),
                        (lambda: channels.activation("cyclic", period=0), "period"),
                        (lambda: channels.activation("poisson", rate=-1.0), "rate"),
                        (lambda: channels.chain(channels.top_k(1, error_feedback=True),
                                                channels.gaussian(1.0, sampler="float"),
                                                aggregate=True),
                         "aggregate")):
        with pytest.raises(ValueError, match=match):
            make()
    with jax.enable_x64(True):
        big = channels.with_channel(algorithms.DGD(), channels.top_k(D + 1))
        with pytest.raises(ValueError, match=f"top_k\\(k={D + 1}\\).*D = {D}"):
            big.validate(big.default_params(), prob, net)
        alg = channels.with_channel(algorithms.DGD(), channels.chain(
            channels.drop(0.1), channels.link_failures(0.1)))
        with pytest.raises(ValueError, match=r"drop_p must be in \[0, 1\]"):
            alg.validate(alg.default_params().replace(drop_p=1.2), prob, net)
        with pytest.raises(ValueError, match="link_p must be a scalar"):
            alg.validate(alg.default_params().replace(link_p=jnp.full((N,), 0.1)), prob, net)
        alg.validate(alg.default_params().replace(drop_p=jnp.full((N,), 0.0)), prob, net)


def test_aggregate_with_drops_equals_per_message_without_noise(setup):
    """Aggregated noise with drops: the same lost messages and the same deterministic part as
    per-message noise (σ tiny, so only the deterministic parts are compared)."""
    prob, net = setup
    with jax.enable_x64(True):
        stack = (channels.clip(0.8), channels.gaussian(1e-14, sampler="float"), channels.drop(0.4))
        x = jnp.asarray(np.random.default_rng(2).normal(size=(N, D)))
        outs = []
        for aggregate in (False, True):
            alg = channels.with_channel(algorithms.DGD(), channels.chain(
                *stack, aggregate=aggregate))
            params = alg.params(algorithms.DGDParams(alpha=0.1))
            state = alg.init(jax.random.key(0), prob, net, params)
            state = state.replace(inner=state.inner.replace(x=x))
            noise = alg.noise(jax.random.key(4), state, params, 1)
            outs.append(alg.step(state, noise, prob, net, params, 1)[0])
        np.testing.assert_allclose(outs[1].inner.x, outs[0].inner.x, rtol=0, atol=1e-10)
        assert int(outs[0].counts["messages_dropped"]) == int(outs[1].counts["messages_dropped"])
        assert int(outs[0].counts["messages_dropped"]) > 0
        assert float(jnp.max(jnp.abs(outs[0].inner.x - (x - 0.1 * prob.local_grads(x))))) > 1e-3


# -- a user's transform: one class ---------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Shrink(Transform):
    """``v · f`` with ``f`` in [0, 1] (a Params field): never raises a norm."""

    kind: ClassVar[str] = "shrink"
    role: ClassVar[str] = "contraction"
    declared: ClassVar = (channels.declare("f", domain="probability", doc="f, the factor"),)

    def apply(self, v, p, who, k, z=None):
        return v * p[self.fields[0]]


def shrink(f: float = 0.5, *, name: str = "shrink") -> Shrink:
    return Shrink.build(name, {"f": f})


@dataclasses.dataclass(frozen=True)
class Flip(Transform):
    """``−v`` on a random half of the coordinates (its own uniform draws): post-processing."""

    kind: ClassVar[str] = "flip"
    role: ClassVar[str] = "post"
    random: ClassVar[bool] = True

    def apply(self, v, p, who, k, z=None):
        return jnp.where(z < 0.5, -v, v)


@dataclasses.dataclass(frozen=True)
class Undeclared(Transform):
    """A transform that says nothing about its privacy role."""

    kind: ClassVar[str] = "undeclared"

    def apply(self, v, p, who, k, z=None):
        return 2.0 * v


def _epsilon(prob, net, *transforms, **values):
    alg = channels.with_channel(algorithms.DGD(), channels.chain(*transforms))
    rep = alg.privacy(prob, net, alg.params(algorithms.DGDParams(alpha=0.1), **values), 3)
    return rep.epsilon, rep.reason


def test_user_transform_acts_on_rows_with_its_params_and_draws(setup):
    prob, net = setup
    with jax.enable_x64(True):
        chan = channels.chain(shrink(0.25), Flip("flip", ()))
        x = jnp.asarray(np.random.default_rng(1).normal(size=(N, 3)))
        proxy = channels.ChannelNetwork(net, chan, {"shrink_f": 0.25}, 0, jax.random.key(3))
        got = np.asarray(proxy.gather(x))
        z = np.asarray(proxy.draws["gather0"][1])
        want = 0.25 * np.asarray(x)[np.asarray(net.senders)]
        np.testing.assert_allclose(got, np.where(z < 0.5, -want, want), rtol=1e-15)
        alg = channels.with_channel(algorithms.DGD(), chan)
        params = alg.params(algorithms.DGDParams(alpha=0.1), shrink_f=0.5)
        trace = jaxdp.run(alg, prob, net, params, steps=3, seeds=2, progress=False)
        assert np.all(np.isfinite(trace.final("consensus_error")))
        with pytest.raises(ValueError, match="shrink_f must be in \\[0, 1\\]"):
            alg.validate(params.replace(shrink_f=1.5), prob, net)


def test_report_honours_declared_roles(setup):
    prob, net = setup
    with jax.enable_x64(True):
        base, _ = _epsilon(prob, net, channels.clip(1.0), channels.gaussian(2.0))
        assert np.all(np.isfinite(base))
        # post-processing after the noise keeps ε; a contraction between clip and noise too
        after, _ = _epsilon(prob, net, channels.clip(1.0), channels.gaussian(2.0),
                            Flip("flip", ()))
        between, _ = _epsilon(prob, net, channels.clip(1.0), shrink(0.5), channels.gaussian(2.0))
        np.testing.assert_array_equal(after, base)
        np.testing.assert_array_equal(between, base)
        # "post" may raise a norm: not between the clip and the noise
        eps, reason = _epsilon(prob, net, channels.clip(1.0), Flip("flip", ()),
                               channels.gaussian(2.0))
        assert np.all(np.isinf(eps)) and "flip (it may raise the norm)" in reason
        # no declared role: trusted nowhere, before or after the noise
        for stack in [(channels.clip(1.0), Undeclared("u", ()), channels.gaussian(2.0)),
                      (channels.clip(1.0), channels.gaussian(2.0), Undeclared("u", ()))]:
            eps, reason = _epsilon(prob, net, *stack)
            assert np.all(np.isinf(eps)) and "undeclared, which declares no privacy role" in reason


def test_user_transform_reads_from_a_spec_once_registered(monkeypatch):
    monkeypatch.setitem(channels.TRANSFORMS, "shrink", shrink)
    chan = channels.parse_channel("clip:1.0+shrink:0.25+gaussian:0.5")
    assert chan == channels.chain(channels.clip(1.0), shrink(0.25), channels.gaussian(0.5))
    assert chan.name == "clip+shrink+gaussian"
    assert channels.private_stage(chan) == (chan.transforms[0], chan.transforms[2])
