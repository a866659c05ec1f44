"""The privacy gate: every private algorithm's guarantee survives an adversarial audit.

For each case of :func:`jaxdp.experiments.audit.cases` — one per private algorithm of the
registry, at the worst-case neighbouring pair of its report's relation, plus controls — the
algorithm runs white-box on both inputs (``Case.ci_seeds`` runs each, one jitted ``vmap``), a
likelihood-ratio statistic fitted on half of the runs scores the released messages, and the
Clopper–Pearson 95 % lower bound on ε from the other half must stay at or below the report's
guarantee (``report.epsilon`` of agent 0, whose data differ). Positive controls — accountants that
under-report on purpose (half the sensitivity, a history-fixed sensitivity, a Poisson claim on
fixed-size batches, an add/remove claim on a replace pair, read at the case's ``delta``) or a
release in the clear — must be caught. Every sampling and relation an algorithm offers has its
case (issue 37; ``tests/algorithms/test_cases.py``). ``jaxdp reproduce audit-table``
runs the same cases at 10⁵ runs per input.

Audits per observer (issue 24): pairwise cases (``pairwise:ALG:GRAPH:vV``) attack one observing
agent's links only and hold the bound to ``report.pairwise[0, v]`` under ``threat="neighbours"``
(DP-DGD, Muffliato and DECOR on a ring and a random graph, a neighbour and a farther agent); the
positive control ``control:decor_neighbour`` claims DECOR's correlated noise against a neighbour
who knows the edge's secret and must be caught.

Issue 22's gate ("privacy that survives a real attacker") is here too:

* the float-grid support attack (tests/support_attack.py, Mironov CCS 2012) against every noise
  path — each private algorithm of the registry, its ports onto channels, and channels per
  message, broadcast and Laplace, on a static and a time-varying network — at float32 and
  float64, every ``add_noise`` call read by tests/release_tap.py: no release of the default
  lattice sampler is impossible under the neighbour; positive control, the float sampler's is;
  the clip paths also at a neighbour holding an extreme record (issue 36: every release finite);
* releases counted from what the channel proxy draws, on time-varying and masked networks, with
  the old degree count as a positive control, and products under ``lax.scan`` / ``vmap`` refused
  (tests/release_counting.py, collected here).
"""
import dataclasses
import functools
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import algorithms, network, privacy
from jaxdp.experiments import audit as table
from jaxdp.privacy import clip_by_norm
from tests.harness import registry_reports
from tests.release_counting import (  # noqa: F401 -- collected here: the gate's §2 and §3
    complete,
    sequence,
    small,
    test_every_registered_algorithm_runs_through_a_channel,
    test_masked_links_are_counted_as_the_transcript_records_them,
    test_products_under_scan_or_vmap_are_refused_before_the_run,
    test_rounds_in_a_python_loop_are_counted_and_keyed_per_round,
    test_time_varying_broadcast_is_one_copy_per_step,
    test_time_varying_gaussian_counts_every_copy_the_proxy_draws,
    test_time_varying_laplace_counts_every_copy_the_proxy_draws,
)
from tests.release_tap import as_dtype, messages_follow_the_releases, neighbour_runs
from tests.support_attack import float_in_support, lattice_in_support


@functools.cache
def _cases() -> dict:
    """The audit's cases by id (at collection, in every worker: the coverage check is
    test_every_registered_private_algorithm_has_a_case's, on its own probe of the registry)."""
    with jax.enable_x64(True):
        return {case.id: case for case in table.cases(check_coverage=False)}


def test_every_registered_private_algorithm_has_a_case():
    names = tuple(registry_reports())
    assert len(names) >= 19, names
    missing = sorted(set(names) - set(_cases()))
    assert not missing, f"private algorithms without a soundness case: {missing}"


def test_the_controls_include_three_under_reporting_accountants():
    under = [c for c in _cases().values()
             if c.control == "positive" and isinstance(c.claimed, float)]
    assert len(under) >= 3, [c.id for c in under]


@pytest.mark.parametrize("case_id", sorted(_cases()))
def test_empirical_lower_bound_stays_below_the_guarantee(case_id):
    case = _cases()[case_id]
    with jax.enable_x64(True):
        row = table.audit_case(case, seeds=case.ci_seeds, batch=case.ci_seeds)
    if case.control == "positive":
        assert row["verdict"] == "caught", row
    else:
        assert row["verdict"] == "sound", row
        assert row["guarantee"] is not None, row


# -- audits per observer (issue 24): pairwise cases against report.pairwise[0, v] ---------------
def _observer_cases() -> list:
    return [c for c in _cases().values() if c.observer is not None and not c.control]


def test_pairwise_observer_cases_cover_three_algorithms_two_graphs_and_every_pair_class():
    """DP-DGD, Muffliato and DECOR, each on a ring and a random graph, seen by a neighbour of agent
    0 and by an agent farther away; the classes neighbour, 2 hops and ≥3 hops all occur; the DECOR
    control names a neighbour and claims a finite, wrong ε."""
    from jaxdp.algorithms.cases import hops, pair_class

    seen = {}
    for c in _observer_cases():
        assert c.threat == "neighbours" and c.mechanism == "gaussian_cov"
        graph = c.id.split(":")[2]
        seen.setdefault((c.algorithm.name, graph), set()).add(
            pair_class(int(hops(c.network)[c.observer])))
    names = {"dp_dgd", "muffliato", "dgd+clip+pairwise_cancelling"}
    assert {a for a, _ in seen} == names and {g for _, g in seen} == {"ring", "erdos_renyi"}
    assert all(len(classes) == 2 and "neighbour" in classes for classes in seen.values()), seen
    assert set().union(*seen.values()) == {"neighbour", "2 hops", "≥3 hops"}
    control = _cases()["control:decor_neighbour"]
    assert control.observer == 1 and control.control == "positive"
    assert np.isfinite(control.claimed) and control.claimed > 0


def test_an_observer_view_is_its_links_only_per_node_reference():
    """link_view against an explicit loop over the network's links: the node-level rows of v's
    in-neighbours and v, the per-link copies into and out of v, every step, every message."""
    from jaxdp.algorithms.cases import link_view

    net = network.make_network("erdos_renyi", 10, p=0.3, seed=0)
    senders, receivers = np.asarray(net.senders), np.asarray(net.receivers)
    rng = np.random.default_rng(0)
    obs = {"messages": {"y": rng.normal(size=(3, 10, 2)),
                        "m": rng.normal(size=(3, senders.size, 2))}}
    for v in range(10):
        expect = []
        for name in ("m", "y"):  # sorted message names
            for t in range(3):
                if name == "y":
                    rows = [int(senders[e]) for e in range(senders.size) if receivers[e] == v]
                    expect += [obs["messages"]["y"][t, r] for r in rows + [v]]
                else:
                    links = ([e for e in range(senders.size) if receivers[e] == v]
                             + [e for e in range(senders.size) if senders[e] == v])
                    expect += [obs["messages"]["m"][t, e] for e in links]
        got = np.asarray(link_view(net, v)(obs))
        np.testing.assert_array_equal(got, np.concatenate(expect).ravel())
    with pytest.raises(ValueError, match="neither one row per agent"):
        link_view(net, 0)({"messages": {"z": np.zeros((1, 7, 2))}})


def test_the_documented_privacy_table_lists_every_private_algorithm():
    """docs/privacy_table.md (written by `jaxdp reproduce audit-table`) covers the registry."""
    from pathlib import Path

    table_md = (Path(__file__).parents[1] / "docs" / "privacy_table.md").read_text()
    missing = [n for n in registry_reports() if f"| `{n}` |" not in table_md]
    assert not missing, f"re-run `jaxdp reproduce audit-table`: {missing} not in the docs table"


# -- the float-grid support attack on every noise path (issue 22's gate) -----------------------
# Every noise path — the natively private algorithms, their ports onto channels, and channels per
# message, broadcast, aggregated and Laplace, on a static and a time-varying network — at its
# audit case's neighbouring pair, through tests/release_tap.py: every add_noise call of a short run
# on the first data set, and the neighbour's pre-noise value given that run's releases (replay).
# The default lattice sampler: every release is on the lattice and reachable under both data
# sets, and every message the attacker sees is a function of the releases (else the report must
# say ε = inf). Positive control: the float sampler is caught (tests/support_attack.py).
DTYPES = ("float64", "float32")  # the whole matrix: about 90 s of CPU (op-by-op compilation)


@dataclasses.dataclass(frozen=True)
class NoisePath:
    """A noise path: what runs, on which neighbouring pair, for how many steps."""

    id: str
    algorithm: Any
    params: Any
    network: Any
    pair: tuple
    steps: int


def _channel_paths(case) -> list[NoisePath]:
    """The channels the audit's DGD + clip + per-message Gaussian case does not already cover, on
    its pair: broadcast, aggregated, Laplace, per-message noise on a time-varying network, and the
    correlated noises (DECOR's pairwise-cancelling, Zip-DL's zero-sum)."""
    from jaxdp import channels
    from jaxdp.network import NetworkSequence

    tv = NetworkSequence([case.network, network.make_network("star", case.network.n_agents)])
    chains = {  # id: (chain, network)
        "channel:broadcast_gaussian": (channels.chain(
            channels.clip(1.0), channels.gaussian(4.0), broadcast=True), case.network),
        "channel:per_message_laplace": (channels.chain(
            channels.clip(1.0, norm="l1"), channels.laplace(4.0)), case.network),
        "channel:time_varying_gaussian": (channels.chain(
            channels.clip(1.0), channels.gaussian(4.0)), tv),
        "channel:time_varying_laplace": (channels.chain(
            channels.clip(1.0, norm="l1"), channels.laplace(4.0)), tv),
        "channel:pairwise_cancelling": (channels.chain(  # DECOR: σ_ind accounted
            channels.clip(1.0), channels.pairwise_cancelling(4.0, 8.0)), case.network),
        "channel:zero_sum": (channels.chain(  # Zip-DL: inf, its releases still on the lattice
            channels.clip(1.0), channels.zero_sum(4.0)), case.network),
    }
    out = []
    for name, (chain, net) in chains.items():
        alg = channels.with_channel(algorithms.DGD(), chain)
        out.append(NoisePath(name, alg, alg.default_params(), net, case.pair, case.steps))
    return out


@functools.cache
def _noise_paths() -> dict[str, NoisePath]:
    """Every non-control audit case (one per private algorithm of the registry, plus DGD through
    clip + Gaussian channels) and the channel paths of :func:`_channel_paths`."""
    with jax.enable_x64(True):
        ordinary = [c for c in _cases().values() if not c.control and c.observer is None]
        paths = [NoisePath(c.id, c.algorithm, c.params, c.network, c.pair, c.steps)
                 for c in ordinary]
        channel = next(c for c in ordinary if c.id == "channel:dgd+clip+gaussian")
        return {p.id: p for p in paths + _channel_paths(channel)}


FLOAT_NOT_ATTACKED = {
    # id: why the float sampler's release is not a raw grid draw added to a value (the lattice
    # default of these paths is attacked above like every other)
    "channel:dgd+clip+gaussian": "float per-message Gaussian: messages drawn given their "
                                 "receiver sums (exact Gaussian conditioning), not v + s·z",
    "channel:dgd+clip+top_k+gaussian": "float per-message Gaussian: messages drawn given sums",
    "channel:time_varying_gaussian": "float per-message Gaussian: messages drawn given sums",
    "ldp_dvp_admm": "objective perturbation: the noise enters the dual of an exact primal step, "
                    "never added to a released value; the report is inf on either sampler",
    "ldp_pp_admm": "objective perturbation, as ldp_dvp_admm",
}


def test_the_aggregated_channel_is_float_only_and_claims_nothing():
    """``aggregate=True`` (receiver sums of float Gaussian messages, the messages never drawn) has
    no lattice form and no raw release to attack: it is refused with the lattice sampler and its
    report's guarantee is inf."""
    from jaxdp import channels

    with pytest.raises(ValueError, match="float-sampled Gaussian"):
        channels.chain(channels.clip(1.0), channels.gaussian(4.0), aggregate=True)
    case = _cases()["channel:dgd+clip+gaussian"]
    alg = channels.with_channel(algorithms.DGD(), channels.chain(
        channels.clip(1.0), channels.gaussian(4.0, sampler="float"), aggregate=True))
    with jax.enable_x64(True):
        report = alg.privacy(case.pair[0], case.network, alg.default_params(), case.steps)
    assert np.isinf(report.epsilon_max) and "float sampler" in report.reason


def _run_pair(path: NoisePath, dtype: str, sampler: str, seed: int = 0):
    """The tapped run on ``path.pair[0]`` and the replay on ``path.pair[1]`` in ``dtype``."""
    alg = path.algorithm if sampler == "lattice" else _as_float(path.algorithm)
    pair = tuple(as_dtype(p, dtype) for p in path.pair)
    with jax.enable_x64(True):
        return neighbour_runs(alg, pair, as_dtype(path.network, dtype), path.params, path.steps,
                              seed)


@functools.cache
def _guarantee(path_id: str) -> float:
    """Agent 0's ε in the default sampler's report (float64 data)."""
    path = _noise_paths()[path_id]
    with jax.enable_x64(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # least-squares pairs fail some papers' assumptions
        report = path.algorithm.privacy(path.pair[0], path.network, path.params, path.steps)
    return np.inf if report is None else float(report.epsilon[0])


def _as_float(alg):
    from jaxdp import channels

    if isinstance(alg, channels.WithChannel):
        return alg.with_sampler("float")
    return dataclasses.replace(alg, sampler="float")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("path_id", sorted(_noise_paths()))
def test_no_release_of_a_noise_path_is_impossible_under_the_neighbour(path_id, dtype):
    """The default sampler: every released coordinate is ``fl(nγ)`` for an integer n reachable
    from the value under either data set (``|n − a(v)| ≤ K_max``), so the attacker of
    tests/support_attack.py never rules one out; a finite guarantee needs releases, a pair that
    moves them and messages that are functions of them."""
    first, replayed = _run_pair(_noise_paths()[path_id], dtype, "lattice")
    epsilon = _guarantee(path_id)
    moved = 0
    for mine, theirs in zip(first.releases, replayed.releases, strict=True):
        assert mine.sampler == "lattice" and mine.dtype == dtype  # a float32 run releases float32
        kw = {"law": mine.law, "dtype": mine.dtype}
        assert lattice_in_support(mine.r, None, mine.scale, **kw).all()  # on the lattice
        assert lattice_in_support(mine.r, mine.v, mine.scale, **kw).all()
        assert lattice_in_support(mine.r, theirs.v, theirs.scale, **kw).all()
        moved += int(np.sum(mine.v != theirs.v))
    count = sum(r.r.size for r in first.releases)
    print(f"{path_id} {dtype}: {count} coordinates in {len(first.releases)} releases "
          f"({sorted({r.dtype for r in first.releases})}), {moved} moved by the pair, none "
          f"impossible; agent 0's ε {epsilon:.3g}")
    if np.isfinite(epsilon):
        assert moved > 0, "the pair moves no release: the attack would be vacuous"
        leaks = messages_follow_the_releases(first, replayed)
        assert not leaks, f"messages not a function of the releases, yet ε = {epsilon}: {leaks}"


EXTREME_PATHS = ("dp_dgd", "dp_fedavg", "channel:dgd+clip+gaussian",
                 "channel:per_message_laplace")
"""Clip paths (per agent, per client, per message ℓ2 + Gaussian and ℓ1 + Laplace) also audited
at an extreme-record neighbour; every clip site is in tests/test_extreme_records.py."""
EXTREME = {"float32": 1e20, "float64": 1e200}  # squared, both overflow: an inf gradient


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("path_id", EXTREME_PATHS)
def test_no_release_under_an_extreme_record_is_impossible_under_the_neighbour(path_id, dtype):
    """The neighbour of the path's first data set whose agent 0 holds the legal record
    ``a = M e₁, y = M`` (its gradient overflows to ``inf``; issue 36): every release of the run
    on it is finite, on the lattice, and possible under the ordinary data set given the
    transcript (a NaN release, impossible under any ordinary data, identified it before the clip
    mapped non-finite rows to the public 0)."""
    from tests.test_extreme_records import extreme_record

    path = _noise_paths()[path_id]
    ordinary = path.pair[0]
    pair = (extreme_record(ordinary, EXTREME[dtype]), ordinary)
    first, replayed = _run_pair(dataclasses.replace(path, pair=pair), dtype, "lattice")
    assert first.releases
    for mine, theirs in zip(first.releases, replayed.releases, strict=True):
        kw = {"law": mine.law, "dtype": mine.dtype}
        assert np.isfinite(mine.r).all() and np.isfinite(mine.v).all()
        assert lattice_in_support(mine.r, None, mine.scale, **kw).all()
        assert lattice_in_support(mine.r, theirs.v, theirs.scale, **kw).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("path_id", sorted(set(_noise_paths()) - set(FLOAT_NOT_ATTACKED)))
def test_the_float_sampler_of_a_noise_path_is_caught(path_id, dtype):
    """Positive control: with ``sampler="float"`` the same attacker (sound: the truth is always
    possible) finds a released coordinate impossible under the neighbour in one of at most
    ``FLOAT_SEEDS`` runs (a path moving few coordinates escapes a run with probability ~0.6 per
    coordinate)."""
    for seed in range(FLOAT_SEEDS):
        impossible, moved = _float_attack(*_run_pair(_noise_paths()[path_id], dtype, "float",
                                                     seed))
        print(f"{path_id} {dtype} float, seed {seed}: {impossible} of {moved} moved coordinates "
              "impossible under the neighbour")
        if impossible:
            break
    assert impossible > 0


FLOAT_SEEDS = 4


def _float_attack(first, replayed) -> tuple[int, int]:
    """``(impossible, moved)``: coordinates ruled out under the neighbour, and those the pair
    moves; asserts the attack is sound (never rules out the truth)."""
    impossible = moved = 0
    for mine, theirs in zip(first.releases, replayed.releases, strict=True):
        assert mine.sampler == "float"
        kw = {"law": mine.law, "dtype": mine.dtype}
        possible, undecided = float_in_support(mine.r, mine.v, mine.scale, **kw)
        assert possible.all() and not undecided.any()
        differs = mine.v != theirs.v
        if differs.any():
            possible, _ = float_in_support(mine.r[differs], theirs.v[differs],
                                           theirs.scale[differs], **kw)
            impossible += int(np.sum(~possible))
            moved += int(np.sum(differs))
    return impossible, moved


# -- the gate's own positive controls: mutants of DP-DGD that leak past the lattice -------------
@dataclasses.dataclass(frozen=True)
class _LeakyDPDGD(algorithms.DPDGD):
    """DP-DGD whose noisy gradient also carries 2⁻²⁰ of the clipped one: the messages are not a
    function of the releases."""

    def _gradients(self, x, noise, problem, params):
        g = clip_by_norm(problem.local_grads(x), params.clip)
        return super()._gradients(x, noise, problem, params) + 2.0 ** -20 * g


@dataclasses.dataclass(frozen=True)
class _DataScaledDPDGD(algorithms.DPDGD):
    """DP-DGD whose noise scale moves with the clipped gradient: the lattice ``γ = s/R`` itself
    depends on the data, so a release is off the neighbour's lattice."""

    def _gradients(self, x, noise, problem, params):
        g = clip_by_norm(problem.local_grads(x), params.clip)
        scale = params.sigma * params.clip * (1.0 + jnp.abs(g[:, :1]))
        return privacy.add_noise(g, scale, noise["xi"])  # the module attribute: tapped


def _gate_verdict(alg) -> str:
    """What the lattice test above concludes on ``alg`` in place of DP-DGD (float64)."""
    path = dataclasses.replace(_noise_paths()["dp_dgd"], algorithm=alg)
    first, replayed = _run_pair(path, "float64", "lattice")
    for mine, theirs in zip(first.releases, replayed.releases, strict=True):
        if not lattice_in_support(mine.r, theirs.v, theirs.scale, law=mine.law,
                                  dtype=mine.dtype).all():
            return "impossible release"
    return "leaking messages" if messages_follow_the_releases(first, replayed) else "sound"


@pytest.mark.parametrize("alg, verdict", [(algorithms.DPDGD(), "sound"),
                                          (_LeakyDPDGD(), "leaking messages"),
                                          (_DataScaledDPDGD(), "impossible release")],
                         ids=["dp_dgd", "leaky", "data_scaled"])
def test_the_gate_catches_a_release_that_leaks_past_the_lattice(alg, verdict):
    assert _gate_verdict(alg) == verdict
