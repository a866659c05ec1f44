"""The federated family (issue 27): per-client references at 1e-10, selection, convergence, input
checks, and user-level DP-FedAvg (central and local noise) accounting."""
import functools
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.algorithms import federated
from tests.harness import Case, reference_match, small_problem
from tests.reference import federated as ref

# float64: enabled for every test by tests/conftest.py (the library never flips it)


def _case(name, fn, problem="least_squares", overrides=None, **config):
    keys = {"selection": "selection_scheme"}
    ref_config = {keys.get(k, k): v for k, v in config.items()}
    return Case(name, functools.partial(fn, **ref_config), config=config,
                overrides=overrides or {}, problem=problem, network="complete")


CASES = [
    _case("fedavg", ref.fedavg, local_steps=3),
    _case("fedavg", ref.fedavg, "logistic", {"alpha": 0.3, "server_lr": 0.7}, local_steps=2,
          selection="uniform", clients=3),
    _case("fedavg", ref.fedavg, "nonconvex_logistic", local_steps=4, selection="poisson",
          rate=0.5, weighting="uniform"),
    _case("fedprox", ref.fedprox, "logistic", {"mu": 0.5}, local_steps=3, clients=4),
    _case("fedprox", ref.fedprox, overrides={"alpha": jnp.array([.02, .03, .04, .05, .06, .07]),
                                              "mu": 0.2}, local_steps=2, selection="poisson",
          rate=0.6),
    _case("scaffold", ref.scaffold, local_steps=3),
    _case("scaffold", ref.scaffold, "logistic", {"alpha": 0.2, "server_lr": 0.8}, local_steps=2,
          clients=2),
    _case("scaffold", ref.scaffold, "nonconvex_logistic", local_steps=3, selection="poisson",
          rate=0.4),
    _case("fedavg", ref.fedavg, "logistic", local_steps=2, selection="data_size", clients=3),
    _case("fedavg", ref.fedavg, local_steps=2, selection="fair", clients=4),
    _case("fedavg", ref.fedavg, local_steps=2, selection="high_loss", clients=2),
    _case("fedprox", ref.fedprox, overrides={"mu": 0.3}, local_steps=3, selection="high_loss",
          clients=3),
    _case("fednova", ref.fednova, local_steps=(1, 2, 3, 1, 2, 3), selection="high_loss",
          clients=2),
    _case("scaffold", ref.scaffold, local_steps=2, selection="fair", clients=2),
    _case("scaffold", ref.scaffold, local_steps=2, selection="high_loss", clients=2),
    _case("feddyn", ref.feddyn, local_steps=2, selection="high_loss", clients=3),
    _case("fedlt", ref.fedlt, local_steps=2, selection="high_loss", clients=2),
    _case("fedadam", functools.partial(ref.fedopt, optimizer="adam"), local_steps=2,
          selection="high_loss", clients=3),
    _case("fedyogi", functools.partial(ref.fedopt, optimizer="yogi"), local_steps=2,
          selection="high_loss", clients=2, bias_correction=True),
    _case("fednova", ref.fednova, local_steps=(1, 2, 3, 4, 5, 6)),
    _case("feddyn", ref.feddyn, local_steps=3),
    _case("fedpd", ref.fedpd, "logistic", {"eta": 0.5}, local_steps=3),
    _case("fedlt", ref.fedlt, local_steps=3),
    _case("fedlt", ref.fedlt, "logistic", {"rho": 0.5, "alpha": 0.2}, local_steps=2,
          selection="poisson", rate=0.5),
    _case("fedpd", ref.fedpd, overrides={"p": 0.5, "alpha": 0.1}, local_steps=(1, 2, 3, 1, 2, 3)),
    _case("feddyn", ref.feddyn, "logistic", {"alpha": 0.2, "penalty": 0.5}, local_steps=2,
          selection="poisson", rate=0.4),
    _case("fednova", ref.fednova, "logistic", {"alpha": 0.3}, local_steps=(3, 1, 4, 1, 5, 2),
          selection="poisson", rate=0.6),
    _case("fedavg", ref.fedavg, local_steps=(2, 4, 1, 3, 1, 2), clients=4),
    _case("scaffold", ref.scaffold, "logistic", local_steps=(2, 4, 1, 3, 1, 2)),
    _case("fedadam", functools.partial(ref.fedopt, optimizer="adam"), local_steps=3),
    _case("fedyogi", functools.partial(ref.fedopt, optimizer="yogi"), "logistic",
          {"server_lr": 0.3, "b2": 0.9}, local_steps=2, clients=3),
    _case("fedadagrad", functools.partial(ref.fedopt, optimizer="adagrad"), "nonconvex_logistic",
          {"tau": 0.1}, local_steps=2, selection="poisson", rate=0.5),
    _case("fedadam", functools.partial(ref.fedopt, optimizer="adam"), "logistic",
          local_steps=2, clients=4, bias_correction=True),
    _case("fedyogi", functools.partial(ref.fedopt, optimizer="yogi"), overrides={"b2": 0.9},
          local_steps=2, bias_correction=True),
    _case("fedadagrad", functools.partial(ref.fedopt, optimizer="adagrad"), "logistic",
          {"tau": 0.1}, local_steps=2, bias_correction=True),
    _case("fedyogi", functools.partial(ref.fedopt, optimizer="yogi"), "nonconvex_logistic",
          {"tau": 0.05}, local_steps=2, v0=0.0),
    _case("dp_fedavg", ref.dp_fedavg, "logistic", {"clip": 0.05, "z": 0.5}, local_steps=3,
          rate=0.5),
    _case("dp_fedavg", ref.dp_fedavg, overrides={"clip": 10.0, "alpha": 0.02}, local_steps=2,
          rate=0.3),
    _case("ldp_fedavg", ref.ldp_fedavg, "logistic", {"clip": 0.05, "z": 0.5}, local_steps=2,
          clients=3),
    _case("ldp_fedavg", ref.ldp_fedavg, overrides={"clip": 0.1}, local_steps=3,
          selection="poisson", rate=0.5),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_stacked_round_matches_per_client_reference(case):
    """Fed the same selection draws, the stacked JAX round equals the loop over clients and the
    server's explicit sum to 1e-10 over 20 rounds."""
    reference_match(case, steps=20)


def test_every_federated_algorithm_is_registered_and_tested():
    tested = {c.name for c in CASES}
    for cls in federated.CLASSES:
        assert algorithms.REGISTRY[cls.name] is cls
        assert cls.name in tested


# -- parity with decent-bench (fixtures written by benchmarks/decentbench_fed_parity.py) -----------
FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "decentbench_fed"
FIXTURES = json.loads((FIXTURE_DIR / "fixtures.json").read_text())
NO_DECENTBENCH = {
    "dp_fedavg": "decent-bench has no DP-FedAvg",
    "ldp_fedavg": "decent-bench has no local-DP FedAvg",
}


def _fixture_problem(kind):
    data = np.load(FIXTURE_DIR / f"problem_{kind}.npz")
    reg = {"ridge": 0.0} if kind == "least_squares" else {"lam": 0.0}
    return problems.from_arrays(data["features"], data["labels"], loss=kind, reg=reg)


def _fixture_deviation(name, **config_changes):
    """Max |jaxdp − decent-bench| over the server models of the fixture's rounds."""
    entry = FIXTURES["fixtures"][name]
    config = {k: tuple(v) if isinstance(v, list) else v for k, v in entry["jaxdp_config"].items()}
    alg = algorithms.get(entry["jaxdp_name"], **{**config, **config_changes})
    params = alg.default_params().replace(**entry["jaxdp_params"])
    prob, net = _fixture_problem(entry["problem"]), network.make_network("complete", 6)
    _, _, seen = jaxdp.simulate(alg, prob, net, params, jax.random.key(0),
                                steps=FIXTURES["rounds"], observe=True)
    ref = np.load(FIXTURE_DIR / f"{name}.npz")["x"]
    return float(np.max(np.abs(np.asarray(seen["models"])[:, 0] - ref[1:])))


@pytest.mark.parametrize("name", sorted(FIXTURES["fixtures"]))
def test_matches_decentbench_fixture(name):
    """The server model of every round equals decent-bench's (every client selected, x⁰ = 0)
    to 1e-10 over 30 rounds."""
    assert _fixture_deviation(name) <= 1e-10


@pytest.mark.parametrize("change", [{"bias_correction": True, "v0": None}, {"v0": None}])
def test_fedadam_fixture_tells_the_printed_step_apart(change):
    """Positive control: optax's bias-corrected Adam, or v_{-1} = τ² instead of decent-bench's 0,
    leaves the FedAdam fixture by far more than its 1e-10 tolerance."""
    assert _fixture_deviation("fedadam", **change) > 1e-6


def test_every_federated_algorithm_has_a_fixture_or_a_reason():
    covered = {e["jaxdp_name"] for e in FIXTURES["fixtures"].values()}
    for cls in federated.CLASSES:
        assert (cls.name in covered) != (cls.name in NO_DECENTBENCH), cls.name


def _setting(n=6):
    return small_problem("least_squares", n_agents=n), network.make_network("complete", n)


def _select(scheme, u, m=2, rate=0.3, sizes=None, counts=None):
    n = u.shape[-1]
    sizes = jnp.ones(n) if sizes is None else jnp.asarray(sizes, float)
    counts = jnp.zeros(n, jnp.int32) if counts is None else jnp.asarray(counts)
    return np.asarray(jax.vmap(lambda v: federated._rounds.select(v, scheme, m, rate, sizes,
                                                                   counts))(u))


def test_selection_schemes_draw_what_they_claim():
    """Over 4000 rounds (4σ binomial bands): uniform picks exactly m clients, each with frequency
    m/N; Poisson each with frequency q; data size (m = 1) client k with n_k/Σn, and (m = 2)
    the pair frequencies of numpy's successive sampling; fair takes the least selected."""
    u = jax.random.uniform(jax.random.key(0), (4000, 6))
    band = 4 * np.sqrt(0.25 / 4000)
    uni = _select("uniform", u)
    assert np.all(uni.sum(axis=1) == 2)
    np.testing.assert_allclose(uni.mean(axis=0), 2 / 6, atol=band)
    np.testing.assert_allclose(_select("poisson", u).mean(axis=0), 0.3, atol=band)
    sizes = np.array([1.0, 2, 3, 4, 5, 15])
    one = _select("data_size", u, m=1, sizes=sizes)
    np.testing.assert_allclose(one.mean(axis=0), sizes / sizes.sum(), atol=band)
    two = _select("data_size", u, m=2, sizes=sizes)
    p = sizes / sizes.sum()
    first_or_second = p + np.array([sum(p[j] * p[i] / (1 - p[j]) for j in range(6) if j != i)
                                    for i in range(6)])
    np.testing.assert_allclose(two.mean(axis=0), first_or_second, atol=band)
    fair = _select("fair", u[:1], m=3, counts=[2, 0, 1, 0, 2, 1])[0]
    assert fair.tolist() == [False, True, True, True, False, False]


def test_high_loss_selects_the_largest_losses_with_random_ties():
    """decent-bench's HighLossSelection: the m largest F_k(x_k); equal losses split by the
    round's draws u (so each of two tied clients wins about half of the rounds)."""
    loss = jnp.array([0.5, 2.0, 1.0, 2.0, 0.1, 1.0])
    u = jax.random.uniform(jax.random.key(1), (2000, 6))
    pick = np.asarray(jax.vmap(lambda v: federated._rounds.select(
        v, "high_loss", 2, 1.0, jnp.ones(6), jnp.zeros(6, jnp.int32), loss))(u))
    assert pick[:, [1, 3]].all() and not pick[:, [0, 2, 4, 5]].any()
    three = np.asarray(jax.vmap(lambda v: federated._rounds.select(
        v, "high_loss", 3, 1.0, jnp.ones(6), jnp.zeros(6, jnp.int32), loss))(u))
    assert three[:, [1, 3]].all() and (three[:, 2] ^ three[:, 5]).all()
    np.testing.assert_allclose(three[:, 2].mean(), 0.5, atol=4 * np.sqrt(0.25 / 2000))


@pytest.mark.parametrize("name", ["dp_fedavg", "ldp_fedavg"])
def test_private_variants_refuse_the_data_dependent_high_loss_selection(name):
    with pytest.raises(ValueError, match="function of their data"):
        algorithms.get(name, selection="high_loss", clients=2)


def test_high_loss_is_refused_where_the_state_keeps_no_losses():
    """FedPD has no client sampling (every client each round, as decent-bench's FedPD)."""
    with pytest.raises(ValueError, match="fedpd: selection='high_loss' is not available"):
        algorithms.get("fedpd", selection="high_loss", clients=2)


def test_fedprox_with_mu_zero_is_fedavg():
    prob, net = _setting()
    a = jaxdp.simulate(algorithms.FedAvg(clients=3), prob, net, algorithms.FedParams(),
                       jax.random.key(0), steps=15)[1]
    b = jaxdp.simulate(algorithms.FedProx(clients=3), prob, net,
                       algorithms.FedProxParams(mu=0.0), jax.random.key(0), steps=15)[1]
    jax.tree.map(lambda p, q: np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-14), a, b)


def test_scaffold_full_participation_reaches_the_solution_and_fedavg_drifts():
    """Heterogeneous least squares, E = 5, every client each round: SCAFFOLD's control variates
    remove the client drift (x* to 1e-12), FedAvg stops at a biased point (Karimireddy et al.
    2020, Thm. I / Sec. 3)."""
    prob, net = _setting()
    dist = {}
    for name in ("scaffold", "fedavg"):
        alg = algorithms.get(name)
        tr = jaxdp.run(alg, prob, net, alg.default_params().replace(alpha=0.05), steps=600,
                       seeds=1, progress=False)
        dist[name] = float(tr.final("dist_to_opt")[0])
    assert dist["scaffold"] < 1e-12
    assert dist["fedavg"] > 1e-8 and dist["fedavg"] > 1e4 * dist["scaffold"]


def test_fednova_with_equal_local_steps_is_fedavg():
    """τ_i = E for all: τ_eff = E and x − E Σ p_i (x − y_i)/E is FedAvg's average."""
    prob, net = _setting()
    a = jaxdp.simulate(algorithms.FedAvg(clients=4), prob, net, algorithms.FedParams(),
                       jax.random.key(1), steps=15)[1]
    b = jaxdp.simulate(algorithms.FedNova(clients=4), prob, net, algorithms.FedParams(),
                       jax.random.key(1), steps=15)[1]
    jax.tree.map(lambda p, q: np.testing.assert_allclose(p, q, rtol=1e-10, atol=1e-13), a, b)


def test_fednova_removes_fedavgs_objective_inconsistency():
    """Heterogeneous local work τ = (1, …, 6), E-step local GD with a small step: FedAvg converges
    to a point biased toward the clients that run longer (Wang et al. 2020, Thm 1); FedNova's
    normalized average lands an order of magnitude closer to x*."""
    prob, net = _setting()
    taus = (1, 2, 3, 4, 5, 6)
    dist = {}
    for cls in (algorithms.FedAvg, algorithms.FedNova):
        tr = jaxdp.run(cls(local_steps=taus), prob, net, algorithms.FedParams(alpha=0.01),
                       steps=3000, seeds=1, progress=False)
        dist[cls.name] = float(tr.final("dist_to_opt")[0])
    assert dist["fednova"] < 0.1 * dist["fedavg"], dist


@pytest.mark.parametrize("name", ["fedadam", "fedyogi", "fedadagrad"])
def test_adaptive_server_optimizers_descend(name):
    """FedAdam / FedYogi / FedAdagrad cut the distance to x* by two orders of magnitude."""
    prob, net = _setting()
    alg = algorithms.get(name, local_steps=2)
    tr = jaxdp.run(alg, prob, net, steps=400, seeds=1, progress=False)
    assert tr.final("dist_to_opt")[0] < 1e-2 * float(jnp.sum(prob.x_star ** 2))


def test_costs_count_the_selected_clients_and_the_server_round_trip():
    """FedAvg with m = 3 of N = 6, E = 5: 15 local gradients and 3 uploads + 6 broadcasts per
    round; SCAFFOLD has two server products (model and control variate)."""
    prob, net = _setting()
    fed = algorithms.FedAvg(clients=3).costs_per_step(prob, net, algorithms.FedParams())
    assert (fed["grad_calls"], fed["rounds"], fed["messages"]) == (15.0, 1.0, 9.0)
    assert fed["bits"] == 9.0 * prob.dim * 64 or fed["bits"] == 9.0 * prob.dim * 32
    sca = algorithms.Scaffold(selection="poisson", rate=0.5).costs_per_step(
        prob, net, algorithms.FedParams())
    assert (sca["grad_calls"], sca["rounds"], sca["messages"]) == (15.0, 2.0, 18.0)


def test_the_server_average_is_checked_to_the_weights_precision():
    """K_N with Metropolis or max-degree weights is a server's average (float64 and float32,
    where 1/N is not exact); a ring is not, and the error names the gap."""
    for weights in ("metropolis", "max_degree"):
        assert network.check_averaging(network.make_network("complete", 10, weights=weights),
                                       "x") < 1e-15
    with jax.enable_x64(False):
        net32 = network.make_network("complete", 10)
    assert 0 < network.averaging_gap(net32) < 1e-7
    network.check_averaging(net32, "x")
    with pytest.raises(ValueError, match=r"fedavg needs the central server's average.* = 0\.233"):
        network.check_averaging(network.make_network("ring", 10), "fedavg")


def test_bad_configuration_is_refused_before_the_run():
    prob, net = _setting()
    with pytest.raises(ValueError, match="selection must be one of .* got 'random'"):
        algorithms.FedAvg(selection="random")
    with pytest.raises(ValueError, match=r"rate \(Poisson client sampling q\) must be in"):
        algorithms.FedAvg(selection="poisson", rate=1.5)
    with pytest.raises(ValueError, match="local_steps must be an int >= 1; got 0"):
        algorithms.Scaffold(local_steps=0)
    with pytest.raises(ValueError, match="local_steps must be an int >= 1; got 0"):
        algorithms.FedNova(local_steps=(1, 0, 2))
    with pytest.raises(ValueError, match="FedPD has no client sampling.* clients=3"):
        algorithms.FedPD(clients=3)
    with pytest.raises(ValueError, match="weighting must be 'uniform'; got 'data'"):
        algorithms.FedDyn(weighting="data")
    with pytest.raises(ValueError, match=r"one count per client \(6\); got 2"):
        jaxdp.run(algorithms.FedNova(local_steps=(1, 2)), prob, net, steps=2, progress=False)
    with pytest.raises(ValueError, match=r"FedOptParams.b1 must be in \[0, 1\) .* got 1"):
        jaxdp.run(algorithms.FedAdam(), prob, net, algorithms.FedOptParams(b1=1.0), steps=2,
                  progress=False)
    with pytest.raises(ValueError, match=r"FedYogi: v0 must be >= 0 .* got -1.0"):
        algorithms.FedYogi(v0=-1.0)
    with pytest.raises(ValueError, match=r"FedAdam: v0=0.0 applies to the printed server step"):
        algorithms.FedAdam(bias_correction=True, v0=0.0)
    with pytest.raises(ValueError, match="clients must be <= the N = 6 clients .* got 9"):
        jaxdp.run(algorithms.FedAvg(clients=9), prob, net, steps=2, progress=False)
    with pytest.raises(ValueError, match=r"network.W must be 11ᵀ/N"):
        jaxdp.run(algorithms.FedAvg(), prob, network.make_network("ring", 6), steps=2,
                  progress=False)




# -- DP-FedAvg and LDP-FedAvg: the reports ------------------------------------------------------
def _report(alg, z, steps, n=10, delta=1e-5):
    prob, net = _setting(n)
    return alg.privacy(prob, net, alg.default_params().replace(z=z), steps, delta=delta)


def test_dp_fedavg_guarantee_is_the_amplified_replace_one_curve_above_the_ideal():
    """q = 0.1, z = 5, 100 rounds, δ = 1e-5: the guarantee is the Poisson-amplified replace-one
    PLD curve (finite, ≈ 1.56), within 1 % above the ideal continuous Gaussian's REPLACE_ONE ε
    (dp-accounting, 1.553) — the lattice rounding and the sampler's share of δ — and far below
    the unamplified curves (inf: ρ = 8 exceeds the lattice sampler's cap). Before the rounded
    lattice (Mironov's weak triangle on Zhu & Wang's bound): 5.76."""
    import dp_accounting

    from jaxdp.algorithms.federated.private import AMPLIFIED

    report = _report(algorithms.DPFedAvg(rate=0.1), 5.0, 100)
    assert report.relation == "replace_agent" and report.headline == AMPLIFIED
    assert report.reason == ""  # the capped curves' reason is dropped: the guarantee is finite
    ideal = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    ideal.compose(dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(5.0)), 100)
    assert ideal.get_epsilon(1e-5) < report.epsilon_max < 1.01 * ideal.get_epsilon(1e-5)
    assert np.isinf(report.worst("rdp")) and np.isinf(report.worst("pld"))


def test_dp_fedavg_add_remove_relation_is_mcmahans_and_needs_half_the_unamplified_shift():
    """relation="add_remove_agent": the report names McMahan et al.'s relation, its unamplified
    curves use Δ = C (not 2C) and its amplified curve is dp-accounting's add/remove Poisson PLD."""
    replace = _report(algorithms.DPFedAvg(rate=1.0), 40.0, 10)
    add_remove = _report(algorithms.DPFedAvg(rate=1.0, relation="add_remove_agent"), 40.0, 10)
    assert add_remove.relation == "add_remove_agent" and replace.relation == "replace_agent"
    ratio = add_remove.events.sensitivity[0, 0] / replace.events.sensitivity[0, 0]
    assert 0.5 < ratio < 0.52  # C against 2C, each plus the same lattice rounding term
    assert add_remove.epsilon_max < replace.epsilon_max


def test_sum_slack_is_one_plus_rounding_on_k_n():
    """On K_N (Metropolis) the server's computed sum is within rounding of the exact one; on a
    ring row 0 of W weighs a client by up to 1/3 > 1/N, and the bound grows with it."""
    from jaxdp.algorithms.federated.private import sum_slack

    net = network.make_network("complete", 10)
    assert 1.0 < sum_slack(net, jnp.float64) < 1 + 1e-12
    assert 1.0 < sum_slack(net, jnp.float32) < 1 + 1e-4
    assert sum_slack(network.make_network("ring", 10), jnp.float64) > 3.0


def test_ldp_fedavg_is_k_releases_of_2c_at_zc_and_equals_the_unamplified_central_curve():
    """Local noise: each round's upload has Δ = 2C, σ = zC (no amplification: the server sees who
    uploads); the central report's unamplified RDP curve has the same Δ/σ up to the float slack."""
    local = _report(algorithms.LDPFedAvg(), 8.0, 20)
    central = _report(algorithms.DPFedAvg(rate=0.5), 8.0, 20)
    assert local.relation == central.relation == "replace_agent"
    np.testing.assert_allclose(local.curves["rdp"], central.curves["rdp"], rtol=1e-9)
    assert central.epsilon_max < local.epsilon_max  # amplification by q = 0.5


@pytest.mark.parametrize("cls", [algorithms.DPFedAvg, algorithms.LDPFedAvg])
def test_float_sampler_reports_inf_with_the_reason(cls):
    report = _report(cls(sampler="float"), 8.0, 5)
    assert np.isinf(report.epsilon_max) and "float sampler" in report.reason


def test_dp_fedavg_refuses_selection_without_the_poisson_estimator():
    with pytest.raises(ValueError, match="needs selection='poisson' and weighting='uniform'"):
        algorithms.DPFedAvg(selection="uniform")
    with pytest.raises(ValueError, match="data sizes.* got weighting='data', selection='uniform'"):
        algorithms.LDPFedAvg(weighting="data")
    with pytest.raises(ValueError, match="data sizes.* selection='data_size'"):
        algorithms.LDPFedAvg(selection="data_size", clients=2)
    with pytest.raises(ValueError, match=r"DPFedAvgParams.z must be > 0 .* got -1"):
        prob, net = _setting()
        jaxdp.run(algorithms.DPFedAvg(), prob, net, algorithms.DPFedAvgParams(z=-1.0), steps=2,
                  progress=False)


def test_federated_versus_dgd_on_least_squares():
    """FedAvg (E = 5, every client) reaches a smaller distance to x* than DGD on the complete
    graph with the same step and rounds (communication rounds, the federated claim)."""
    prob, net = _setting()
    fed = jaxdp.run(algorithms.FedAvg(), prob, net, steps=100, seeds=1, progress=False)
    dgd = jaxdp.run(algorithms.DGD(), prob, net, steps=100, seeds=1, progress=False)
    assert fed.final("dist_to_opt")[0] < dgd.final("dist_to_opt")[0]


@pytest.mark.parametrize("selection", ["high_loss", "data_size"])
def test_a_channel_on_a_data_dependent_selection_reports_inf_with_the_reason(selection):
    """clip + Gaussian on FedAvg's uploads accounts each client's own uploads; a selection by
    loss or data size makes the other clients' uploads depend on one client's data: ε = inf."""
    from jaxdp import channels

    prob, net = _setting()
    fed = algorithms.get("fedavg", selection=selection, clients=2)
    alg = channels.with_channel(fed, channels.chain(channels.clip(1.0), channels.gaussian(2.0)))
    report = alg.privacy(prob, net, alg.default_params(), 5)
    assert np.isinf(report.epsilon_max) and "depends on the data the relation" in report.reason
    uniform = channels.with_channel(algorithms.get("fedavg", clients=2, weighting="uniform"),
                                    channels.chain(channels.clip(1.0), channels.gaussian(2.0),
                                                   broadcast=True, self_term="released"))
    control = uniform.privacy(prob, net, uniform.default_params(), 2)  # data-independent; the
    # server's row released too (tests/test_federated_soundness.py)
    assert np.isfinite(control.epsilon_max) and not control.reason
