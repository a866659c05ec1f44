"""The gathered federated round (only the K selected clients computed) against the masked one
(every client computed, the unselected masked out): the same key gives bit-identical states,
messages and models; the gathered round really computes K rows; the privacy reports and the
accounted costs are unchanged."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.algorithms import federated
from jaxdp.engine import count_step_costs
from jaxdp.privacy import add_noise
from tests.harness import small_problem

# float64: enabled for every test by tests/conftest.py (the library never flips it)
N, K, ROUNDS = 7, 3, 8

GATHERED = [
    ("fedavg", "least_squares", {}, {}),
    ("fedavg", "logistic", {"selection": "high_loss"}, {}),
    ("fedavg", "least_squares", {"selection": "fair"}, {}),
    ("fedavg", "logistic", {"selection": "data_size", "weighting": "data"}, {}),
    ("fedprox", "logistic", {}, {"mu": 0.3, "alpha": jnp.linspace(0.02, 0.08, N)}),
    ("scaffold", "nonconvex_logistic", {}, {"alpha": jnp.linspace(0.02, 0.08, N)}),
    ("scaffold", "least_squares", {"selection": "high_loss"}, {}),
    ("fednova", "least_squares", {"local_steps": (1, 2, 3, 4, 1, 2, 3)}, {}),
    ("feddyn", "logistic", {}, {}),
    ("fedlt", "least_squares", {}, {}),
    ("fedadam", "logistic", {}, {}),
    ("fedyogi", "least_squares", {"bias_correction": True}, {}),
    ("ldp_fedavg", "logistic", {}, {"clip": 0.05, "z": 0.5}),
]


def _setting(kind="least_squares"):
    return small_problem(kind, n_agents=N), network.make_network("complete", N)


def _run(alg, prob, net, params, steps=ROUNDS):
    """``(carry, observed)`` of ``steps`` rounds in one compiled program (as ``jaxdp.run``)."""
    carry, _, seen = jax.jit(lambda key: jaxdp.simulate(alg, prob, net, params, key, steps=steps,
                                                        observe=True))(jax.random.key(3))
    return carry, seen


def _build(name, kind, config, overrides):
    """``(gathered, masked, problem, network, params)``: K = 3 of N = 7 clients."""
    prob, net = _setting(kind)
    config = {"local_steps": 2, "clients": K, **config}
    gathered = algorithms.get(name, **config)
    masked = algorithms.get(name, **config, gather=False)
    assert gathered.gathers(N) and not masked.gathers(N)
    return gathered, masked, prob, net, gathered.default_params().replace(**overrides)


def _ids(cases):
    return [f"{c[0]}-{c[1]}-{'-'.join(map(str, c[2].values()))}" for c in cases]


@pytest.mark.parametrize("case", GATHERED, ids=_ids(GATHERED))
def test_gathered_round_equals_the_masked_round_bit_for_bit(case):
    """Fed the same state and draws, one gathered round (``jit(step)``) returns the masked
    round's state and messages to the bit (``assert_array_equal``) in each of 8 rounds: each
    selected client's rows are computed from its own rows alone, its noise row drawn for all N
    and taken by its index, and the scatter puts them where the mask keeps them; the server
    sums the same ``(N, d)`` uploads in the same order."""
    gathered, masked, prob, net, params = _build(*case)
    step_g, step_m = jax.jit(gathered.step), jax.jit(masked.step)
    key = jax.random.key(5)
    state = masked.init(key, prob, net, params)
    for k in range(ROUNDS):
        noise = masked.noise(jax.random.fold_in(key, k), state, params, k)
        out_g = step_g(state, noise, prob, net, params, k)
        state, messages = step_m(state, noise, prob, net, params, k)
        jax.tree.map(np.testing.assert_array_equal, out_g, (state, messages))
    counts = np.asarray(state.counts)
    assert counts.sum() == K * ROUNDS and (counts > 0).sum() > K  # the selections vary


WHOLE_RUN = [GATHERED[1], GATHERED[5], GATHERED[-1]]


@pytest.mark.parametrize("case", WHOLE_RUN, ids=_ids(WHOLE_RUN))
def test_gathered_run_equals_the_masked_run_to_1e_12(case):
    """Run as one compiled program of 8 rounds (``simulate`` under ``jit``, as ``jaxdp.run``),
    the gathered and masked runs agree to 1e-12 (not to the bit): XLA compiles the ``(K, ·)``
    and ``(N, ·)`` loop bodies separately and may fuse or block their products differently,
    which can change a rounding by an ulp (seen: 2.2e-16 on FedAvg), then carried on."""
    gathered, masked, prob, net, params = _build(*case)
    run_g, run_m = _run(gathered, prob, net, params), _run(masked, prob, net, params)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=0, atol=1e-12), run_g, run_m)


@dataclasses.dataclass(frozen=True)
class PositionalLDP(algorithms.LDPFedAvg):
    """A wrong gathered LDP-FedAvg (a positive control): the K selected clients take the noise
    rows 0..K−1 by their position in the gathered stack instead of their own rows."""

    def step(self, state, noise, problem, network, params, k):
        rows = self.rows(noise, state, problem)
        noisy = add_noise(self.clipped_updates(state, problem, params, rows),
                          params.z * params.clip, noise["xi"][:K], sampler=self.sampler)
        avg, _ = self.average(network, rows.put(noisy),
                              self.weights(problem, rows.mask, state.x.dtype), "update")
        x_new = federated._rounds.broadcast(state.x[0] + params.server_lr * avg, N)
        return federated.FedState(x=x_new, counts=state.counts + rows.mask), {
            "update": rows.put(noisy), "x": x_new}


def test_noise_taken_by_stack_position_breaks_the_equality():
    """Positive control: a gathered round whose randomness depends on the position in the stack
    differs from the masked round (so the equality above would catch it)."""
    prob, net = _setting("logistic")
    wrong = PositionalLDP(local_steps=2, clients=K)
    params = wrong.default_params().replace(clip=0.05, z=0.5)
    _, seen_wrong = _run(wrong, prob, net, params)
    _, seen_masked = _run(algorithms.LDPFedAvg(local_steps=2, clients=K, gather=False), prob, net,
                          params)
    assert not np.array_equal(seen_wrong["models"], seen_masked["models"])


@pytest.mark.parametrize(("config", "gathers"), [
    ({"clients": K}, True), ({"clients": K, "selection": "high_loss"}, True),
    ({"clients": K, "gather": False}, False), ({"clients": N}, False), ({}, False),
    ({"selection": "poisson", "rate": 0.4}, False)])
def test_only_a_fixed_count_below_n_gathers(config, gathers):
    """Poisson sampling (a varying count), every client, or ``gather=False``: the masked round.
    The traced local work is K·E gradients gathered, N·E masked; the accounted cost is the
    selected clients' in both."""
    prob, net = _setting()
    alg = algorithms.FedAvg(local_steps=2, **config)
    assert alg.gathers(N) is gathers
    params = alg.default_params()
    traced = count_step_costs(alg, prob, net, params)["grad_calls"]
    assert traced == 2 * (K if gathers else N)
    expected = 2 * N * alg.participation(N)
    assert alg.costs_per_step(prob, net, params)["grad_calls"] == pytest.approx(expected)


def test_dp_fedavg_keeps_the_masked_round_and_both_reports_are_unchanged():
    """DP-FedAvg samples Poisson (never gathers); LDP-FedAvg's report (K releases per client of
    Δ = 2C at σ = zC) does not depend on the round's layout."""
    prob, net = _setting()
    assert not algorithms.DPFedAvg(clients=K).gathers(N)
    reports = [algorithms.LDPFedAvg(clients=K, gather=g).privacy(
        prob, net, algorithms.DPFedAvgParams(z=4.0), 10) for g in (True, False)]
    assert reports[0].headline == reports[1].headline
    for name, curve in reports[0].curves.items():
        np.testing.assert_array_equal(curve, reports[1].curves[name])


def _mlp_problem():
    """A small model problem: a 4-2-3 tanh MLP, cross-entropy, 7 agents of 6 samples."""
    rng = np.random.default_rng(1)
    theta0 = problems.mlp_init(jax.random.key(0), [4, 2, 3], jnp.float64)
    return problems.from_model(problems.mlp_apply, theta0, rng.normal(size=(42, 4)),
                               rng.integers(0, 3, size=42),
                               parts=np.array_split(np.arange(42), N), dtype=jnp.float64)


def test_take_agents_gives_each_agents_own_gradient():
    """``take_agents(idx).local_grads(X[idx])`` is row for row ``local_grads(X)[idx]``, and the
    losses likewise: to the bit for a margin loss (a per-agent matrix-vector product), to 1e-13
    relative for a model problem (its vmapped layers are batched products whose blocking XLA
    may choose by the batch size: seen 6e-16)."""
    idx = jnp.array([1, 4, 5])
    for prob, rtol in ((small_problem("logistic", n_agents=N), 0.0), (_mlp_problem(), 1e-13)):
        X = 0.1 * jax.random.normal(jax.random.key(0), (N, prob.dim))
        sub = prob.take_agents(idx)
        assert sub.n_agents == 3 and type(sub) is type(prob)
        for method in ("local_grads", "local_losses"):
            call = jax.jit(lambda p, X, method=method: getattr(p, method)(X))
            np.testing.assert_allclose(call(sub, X[idx]), call(prob, X)[idx], rtol=rtol, atol=0)


def test_gather_must_be_a_bool():
    with pytest.raises(ValueError, match="fedavg: gather must be True or False; got 'False'"):
        algorithms.FedAvg(clients=K, gather="False")
