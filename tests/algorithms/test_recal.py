"""Paper 003's family: RECAL / DP-RECAL (token) and the reconstructed DP baselines.

Per-node references (tests/reference/recal.py) with injected activation sequences and noise, the
PLF stop, the walk's stationary law, the "paper" vs "forwarded" variants, and convergence.
"""
import dataclasses
import functools
import os

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.algorithms.recal import algorithm as recal
from tests.harness import replayable, to_numpy
from tests.reference import recal as ref


def l1_problem(kind="l1_ls", n_agents=6, m=5, d=3, seed=0):
    """Features in [0, 1], ±1 labels, tiny."""
    rng = np.random.default_rng(seed)
    A = rng.random((n_agents, m, d))
    b = np.where(rng.random((n_agents, m)) < 0.5, 1.0, -1.0)
    loss, reg = {
        "l1_ls": (problems.L1LeastSquares(), {"ridge": 1.0, "l1": 0.05}),
        "l1_logistic": (problems.L1Logistic(), {"lam": 1.0, "l1": 0.05}),
        "ls": (problems.LeastSquares(), {"ridge": 0.1}),
    }[kind]
    return problems.from_arrays(A, b, loss=loss, reg=reg)


def geometric_net(n_agents=6):
    return network.make_network("random_geometric", n_agents, radius=0.6, seed=3)


ALPHA6 = jnp.array([0.10, 0.12, 0.08, 0.11, 0.09, 0.10])
TOKEN = dict(alpha=ALPHA6, beta=1.0 / 14.0, xi=6.0, x0=0.3)
PRIVATE = dict(log_sigma1=np.log(0.7), log_R=np.log(1.2), c=1.0)

# (id, algorithm, params, problem, reference step). The references are the printed, unclipped
# steps (enforce_bound=False); tests/test_enforced_bounds.py checks the clip is the identity where
# the gradient bound holds.
CASES = [
    ("recal-l1ls", algorithms.RECAL(), algorithms.RECALParams(**TOKEN), "l1_ls", ref.recal),
    ("recal-forwarded-logistic", algorithms.RECAL(variant="forwarded"),
     algorithms.RECALParams(**TOKEN), "l1_logistic",
     functools.partial(ref.recal, variant="forwarded")),
    ("dp_recal-l1ls", algorithms.DPRECAL(sampler="float"), algorithms.DPRECALParams(**TOKEN, **PRIVATE), "l1_ls",
     functools.partial(ref.recal, private=True)),
    ("dp_recal-forwarded-ls", algorithms.DPRECAL(variant="forwarded", sampler="float"),
     algorithms.DPRECALParams(**TOKEN, **PRIVATE), "ls",
     functools.partial(ref.recal, variant="forwarded", private=True)),
    ("dp_recal-lazy-logistic", algorithms.DPRECAL(transition="lazy", sampler="float"),
     algorithms.DPRECALParams(**TOKEN, **PRIVATE), "l1_logistic",
     functools.partial(ref.recal, private=True)),
    ("dp_nids-l1ls", algorithms.DPNIDS(enforce_bound=False).with_sampler("float"),
     algorithms.DPStepParams(alpha=0.2, x0=0.3, **PRIVATE),
     "l1_ls", ref.nids),
    ("dp_extra-l1logistic", algorithms.DPEXTRA(enforce_bound=False).with_sampler("float"),
     algorithms.DPStepParams(alpha=0.2, x0=0.3, **PRIVATE), "l1_logistic", ref.extra),
    ("dp_icadmm-l1ls", algorithms.DPICADMM(sampler="float", enforce_bound=False),
     algorithms.DPICADMMParams(rho=0.5, beta=jnp.linspace(1.0, 2.0, 6), x0=0.3, **PRIVATE),
     "l1_ls", ref.icadmm),
    ("dp_icadmm-decaying-l1logistic", algorithms.DPICADMM(sampler="float", enforce_bound=False),
     algorithms.DPICADMMParams(rho=0.5, beta=1.5, decay=0.95, x0=0.3, **PRIVATE), "l1_logistic",
     ref.icadmm),
    ("dp_rwadmm-l1logistic", algorithms.DPRWADMM(sampler="float", enforce_bound=False),
     algorithms.DPRWADMMParams(beta=5.0, xi=6.0, x0=0.3, **PRIVATE), "l1_logistic", ref.rwadmm),
    ("dp_mradmm-ls", algorithms.DPMRADMM(local_steps=4, sampler="float",
                                                enforce_bound=False),
     algorithms.DPMRADMMParams(rho=0.5, theta=1.1, gamma=0.1, x0=0.3, **PRIVATE), "ls",
     functools.partial(ref.mradmm, local_steps=4)),
]
IDS = [c[0] for c in CASES]


def _numpy(tree):
    """``to_numpy`` through nested states (DP-NIDS/DP-EXTRA: the core state in a counter)."""
    if hasattr(tree, "items"):
        return {key: _numpy(v) for key, v in tree.items()}
    return np.asarray(tree, np.float64)


def match_reference(alg, prob, net, params, ref_step, steps=40, noise_fn=None, tol=1e-10):
    """Drive the JAX step and the per-node reference with the same noise; compare every step."""
    key = jax.random.key(0)
    state = alg.init(key, prob, net, params)
    st_ref, p = _numpy(state), to_numpy(params)
    W = np.asarray(net.W, np.float64)
    step = jax.jit(alg.step)
    for k in range(steps):
        noise = (noise_fn(k) if noise_fn is not None
                 else alg.noise(jax.random.fold_in(key, k), state, params, k))
        given = replayable(alg, state, noise, prob, net, params, k)  # a channel's own draws
        state, messages = step(state, noise, prob, net, params, k)
        st_ref, ref_messages = ref_step(st_ref, given, prob, W, p, k)
        chex.assert_trees_all_close(_numpy(state), st_ref, rtol=0, atol=tol)
        chex.assert_trees_all_close(_numpy(messages), ref_messages, rtol=0, atol=tol)
    return state


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stacked_step_matches_per_node_reference(case):
    """Fed the same walk and noise, the JAX step equals the per-node loop to 1e-10 for 40 steps."""
    _, alg, params, kind, ref_step = case
    match_reference(alg, l1_problem(kind), geometric_net(), params, ref_step)


MIXING = ("dp_nids-l1ls", "dp_extra-l1logistic", "dp_recal-l1ls")  # W̃/W products; a walk


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in MIXING], ids=MIXING)
def test_dense_and_edge_backends_give_the_same_numbers(case):
    """On the edge backend (no (N, N) matrices) DP-NIDS, DP-EXTRA and DP-RECAL's walk give the
    dense backend's models and messages to 1e-12 over 30 steps."""
    _, alg, params, kind, _ = case
    prob, dense = l1_problem(kind), geometric_net()
    edges = dense.with_backend("edges")
    assert edges.dense_matrices is None
    key = jax.random.key(2)
    runs = [jax.jit(lambda net: jaxdp.simulate(alg, prob, net, params, key, steps=30,
                                               observe=True))(net) for net in (dense, edges)]
    (c_dense, _, seen_dense), (c_edges, _, seen_edges) = runs
    chex.assert_trees_all_close(to_numpy(alg.models(c_dense.state)),
                                to_numpy(alg.models(c_edges.state)), rtol=0, atol=1e-12)
    chex.assert_trees_all_close(to_numpy(seen_dense["messages"]),
                                to_numpy(seen_edges["messages"]), rtol=0, atol=1e-12)


def test_injected_activation_sequence_and_noise_match_reference():
    """Any injected holder sequence (not only walks) and Gaussian draws drive both identically."""
    rng = np.random.default_rng(7)
    seq = rng.integers(0, 6, size=60)
    z = rng.standard_normal((60, 3))
    alg, params = algorithms.DPRECAL(sampler="float"), algorithms.DPRECALParams(**TOKEN, **PRIVATE)
    state = match_reference(
        alg, l1_problem(), geometric_net(), params.replace(xi=1e6),
        functools.partial(ref.recal, private=True), steps=60,
        noise_fn=lambda k: {"next": jnp.int32(seq[k]), "z": jnp.asarray(z[k])})
    assert int(state.iterations) == 60


def test_run_freezes_at_the_target_plf_and_counts_activations():
    """τ_i never exceeds ξ; once the baton reaches an agent with ξ activations nothing changes."""
    prob, net = l1_problem(), geometric_net()
    alg = algorithms.RECAL()
    params = algorithms.RECALParams(**{**TOKEN, "xi": 5.0})
    carry, _, seen = jaxdp.simulate(alg, prob, net, params, jax.random.key(3), steps=200,
                                    observe=True)
    st = carry.state
    assert int(recal.plf(st)) == 5
    assert int(jnp.sum(st.tau)) == int(st.iterations) == int(jnp.sum(seen["messages"]["active"]))
    assert int(st.iterations) < 200
    stopped = int(st.iterations)
    np.testing.assert_array_equal(seen["models"][stopped:], seen["models"][-1:].repeat(
        200 - stopped, axis=0))
    assert alg.plf_and_messages(st) == {"plf": 5, "messages": stopped}


def test_dual_sum_invariant_u_equals_sum_of_lambdas():
    """"paper" variant: u = Σ_i λ_i after every step (Σλ¹ = 0, (7e)), noise or not; ũ = u − ε."""
    prob, net = l1_problem(), geometric_net()
    for alg, params in ((algorithms.RECAL(), algorithms.RECALParams(**TOKEN)),
                        (algorithms.DPRECAL(), algorithms.DPRECALParams(**TOKEN, **PRIVATE))):
        carry, _, _ = jaxdp.simulate(alg, prob, net, params.replace(xi=1e6), jax.random.key(1),
                                     steps=150)
        np.testing.assert_allclose(carry.state.u, carry.state.lam.sum(axis=0), atol=1e-12)
    assert float(jnp.max(jnp.abs(carry.state.u - carry.state.u_tilde))) > 0


def _ring_problem(kind="l1_ls"):
    return l1_problem(kind, n_agents=8, m=6, d=4, seed=2), network.make_network("ring", 8)


def test_recal_reaches_the_composite_optimum_on_the_even_ring():
    """T1: RECAL converges to the FISTA x* of the ℓ1 problem on the (periodic) ring with n = 8."""
    prob, net = _ring_problem()
    params = recal.theory_params(prob, net).replace(xi=1e9, x0=1.0)
    _, rec, _ = jaxdp.simulate(algorithms.RECAL(), prob, net, params, jax.random.key(0),
                               steps=12000, record_every=12000)
    assert float(rec["dist_to_opt"][-1]) < 1e-18


def test_forwarded_variant_is_biased_while_paper_variant_converges():
    """Errata: forwarding ũ accumulates the noise into u (a permanent bias); Alg. 1 as printed
    (clean u) converges with geometrically decaying noise."""
    prob, net = _ring_problem("ls")
    base = recal.theory_params(prob, net, algorithms.DPRECALParams()).replace(
        xi=1e9, x0=1.0, log_sigma1=0.0, log_R=np.log(1.1))
    final = {}
    for variant in ("paper", "forwarded"):
        _, rec, _ = jaxdp.simulate(algorithms.DPRECAL(variant=variant), prob, net, base,
                                   jax.random.key(0), steps=10000, record_every=10000)
        final[variant] = float(rec["dist_to_opt"][-1])
    assert final["paper"] < 1e-18
    assert final["forwarded"] > 1e-2


def test_thousands_of_walks_visit_agents_at_the_stationary_law():
    """Lemma 1: 2000 vmapped walks; activation frequencies → g_i = d_i/2m on an irregular graph."""
    prob, net = l1_problem(), geometric_net()
    alg, params = algorithms.RECAL(), algorithms.RECALParams(**{**TOKEN, "xi": 1e6})
    keys = jax.random.split(jax.random.key(0), 2000)
    run = jax.jit(jax.vmap(lambda key: jaxdp.simulate(alg, prob, net, params, key, steps=60,
                                                      record_every=60)[0].state.tau))
    tau = np.asarray(run(keys))
    freq = tau.sum(axis=0) / tau.sum()
    deg = np.asarray(net.degrees)
    np.testing.assert_allclose(freq, deg / deg.sum(), atol=0.01)
    assert len({tuple(t) for t in tau[:50]}) > 40  # the walks are independent


def test_vmap_over_seeds_equals_a_loop_of_single_runs():
    """Each vmapped replicate is the single run with its own key."""
    prob, net = l1_problem(), geometric_net()
    alg, params = algorithms.DPRECAL(), algorithms.DPRECALParams(**TOKEN, **PRIVATE)
    keys = jax.random.split(jax.random.key(0), 3)
    one = jax.jit(lambda k: jaxdp.simulate(alg, prob, net, params, k, steps=30)[1]["objective"])
    single = [one(k) for k in keys]
    batched = jax.jit(jax.vmap(one))(keys)
    np.testing.assert_allclose(batched, np.stack(single), rtol=1e-12)


def test_user_given_transition_matrix_equals_the_named_kind():
    """A tuple-of-tuples matrix drives the same walk as the kind it spells out."""
    prob, net = l1_problem(), geometric_net()
    T = np.asarray(network.transition_matrix(net, "lazy"))
    params = algorithms.RECALParams(**TOKEN)
    runs = [jaxdp.simulate(algorithms.RECAL(transition=t), prob, net, params, jax.random.key(4),
                           steps=30)[0].state.tau for t in ("lazy", tuple(map(tuple, T)))]
    np.testing.assert_array_equal(*runs)


def test_baselines_reduce_to_the_core_nids_and_extra():
    """Without noise DP-NIDS and DP-EXTRA are the core NIDS and EXTRA (prox forms), with and
    without an ℓ1 term, from x⁰ = x0·1: the gradient clip at a c above every gradient of the
    run is the identity."""
    net = geometric_net()
    for kind in ("ls", "l1_ls"):
        prob = l1_problem(kind)
        for mine, core in ((algorithms.DPNIDS(), algorithms.NIDS()),
                           (algorithms.DPEXTRA(), algorithms.EXTRA())):
            a = jaxdp.simulate(mine, prob, net, algorithms.DPStepParams(
                alpha=0.2, x0=0.3, log_sigma1=-900.0, c=1e6), jax.random.key(0), steps=40)[1]
            b = jaxdp.simulate(core, prob, net, core.params_type(alpha=0.2, x0=0.3),
                               jax.random.key(0), steps=40)[1]
            chex.assert_trees_all_close(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,params", [
    ("dp_nids", algorithms.DPStepParams(alpha=0.3)),
    ("dp_extra", algorithms.DPStepParams(alpha=0.15)),
    ("dp_icadmm", algorithms.DPICADMMParams(rho=1.0, beta=2.5)),
    ("dp_rwadmm", algorithms.DPRWADMMParams(beta=5.0, xi=1e9)),
])
def test_noise_free_baselines_reach_the_composite_optimum(name, params):
    """With σ₁ → 0 every reconstructed baseline converges to x* of the ℓ1 problem."""
    prob, net = _ring_problem()
    alg = algorithms.get(name)
    if hasattr(alg, "sampler"):  # σ₁ → 0 is the float sampler's limit (the lattice needs σ > 0)
        alg = dataclasses.replace(alg, sampler="float")
    _, rec, _ = jaxdp.simulate(alg, prob, net,
                               params.replace(log_sigma1=-900.0, x0=1.0), jax.random.key(0),
                               steps=3000, record_every=3000)
    assert float(rec["dist_to_opt"][-1]) < 1e-18


def test_mradmm_converges_and_releases_on_odd_iterations_only():
    """Recycled ADMM: PLF = ⌈K/2⌉ and it still converges on a smooth problem (r = 0)."""
    prob, net = _ring_problem("ls")
    alg = algorithms.DPMRADMM(sampler="float")  # σ₁ = 0: no lattice
    params = algorithms.DPMRADMMParams(rho=1.0, gamma=0.1, log_sigma1=-900.0, x0=1.0)
    carry, rec, _ = jaxdp.simulate(alg, prob, net, params, jax.random.key(0), steps=801,
                                   record_every=801)
    counts = alg.plf_and_messages(carry.state)
    assert int(counts["plf"]) == 401 and int(counts["messages"]) == 801 * 2 * net.n_edges
    assert float(rec["dist_to_opt"][-1]) < 1e-16


def test_message_counts_per_iteration():
    """RECAL sends one baton per iteration; NIDS 2E from the second iteration, EXTRA 2E always."""
    prob, net = l1_problem(), geometric_net()
    E = net.n_edges
    rec = jaxdp.simulate(algorithms.RECAL(), prob, net,
                         algorithms.RECALParams(**{**TOKEN, "xi": 1e6}), jax.random.key(0),
                         steps=20)[0].state
    assert algorithms.RECAL().plf_and_messages(rec)["messages"] == 20
    for alg, per_release, releases in ((algorithms.DPNIDS(), 2 * E * 19, 19),
                                       (algorithms.DPEXTRA(), 2 * E * 20, 19)):
        st = jaxdp.simulate(alg, prob, net, algorithms.DPStepParams(), jax.random.key(0),
                            steps=20)[0].state
        assert alg.plf_and_messages(st) == {"plf": releases, "messages": per_release}


def test_bad_inputs_raise_clear_errors():
    """Step rules of Theorem 2, β's Schur condition, variants, walks, the ADMM decay and r for
    MRADMM."""
    prob, net = l1_problem(), geometric_net()
    run = functools.partial(jaxdp.run, steps=2, progress=False)
    with pytest.raises(ValueError, match=r"alpha must be < 2/\(L_i\+1\)"):
        run(algorithms.RECAL(), prob, net, algorithms.RECALParams(alpha=5.0))
    with pytest.raises(ValueError, match=r"beta must be < 1/\(n \+ max_i"):
        run(algorithms.RECAL(), prob, net, algorithms.RECALParams(alpha=0.1, beta=0.2))
    with pytest.raises(ValueError, match="variant must be one of"):
        run(algorithms.RECAL(variant="noisy"), prob, net, algorithms.RECALParams())
    with pytest.raises(ValueError, match="unknown transition 'random'"):
        run(algorithms.RECAL(transition="random"), prob, net, algorithms.RECALParams())
    bad = np.full((6, 6), 1.0 / 6.0)
    with pytest.raises(ValueError, match="which are not neighbours"):
        run(algorithms.RECAL(transition=tuple(map(tuple, bad))), prob, net,
            algorithms.RECALParams())
    with pytest.raises(ValueError, match="log_R must be >= 0"):
        run(algorithms.DPRECAL(), prob, net, algorithms.DPRECALParams(log_R=-0.1))
    with pytest.raises(ValueError, match="sensitivity must be one of"):
        run(algorithms.DPRECAL(sensitivity="loose"), prob, net, algorithms.DPRECALParams())
    with pytest.raises(ValueError, match=r"decay must be in \(0, 1\]; got 1.5"):
        run(algorithms.DPICADMM(), prob, net, algorithms.DPICADMMParams(decay=1.5))
    with pytest.raises(ValueError, match="smooth problems only"):
        run(algorithms.DPMRADMM(), prob, net, algorithms.DPMRADMMParams())


# -- reproductions (tiny settings: files and claim ids, not whether claims pass) ----------------
# Compilation dominates: the runs are jitted with the problem as an argument, so rows that differ
# only in values (ℓ1 weight, σ₁, decaying vs fixed step at the same horizon) share a compile.
TINY = dict(seeds=1, synthetic_samples=48, data=("synthetic",))
TABLE_CLAIMS = ["best-accuracy", "least-communication", "machine-precision-l1",
                "machine-precision-r0", "mradmm-vs-recal", "mradmm-decay-vs-recal"]


@pytest.mark.parametrize("name,kwargs,claims", [
    ("recal-eps", dict(plf=3.0, models=("logistic",), **TINY),
     ["order", "budget", "near-nonprivate"]),
    ("recal-table4", dict(plf=3, plf_decay=3, **TINY), TABLE_CLAIMS),
    ("recal-table5", dict(plf=3, plf_decay=3, **TINY), TABLE_CLAIMS),
    ("recal-attack", dict(steps=16, dlg_steps=5),
     ["recal-leaks", "dp-recal-u-channel-protects", "dp-recal-protects-without-regularizer"]),
    ("recal-complexity", dict(seeds=1, ns=(4,), graphs=("ring",), steps=20,
                              samples_per_agent=3),
     ["recal-plf-flat-ring", "recal-iterations-linear-ring", "recal-fewest-messages-ring",
      "recal-lowest-plf-ring"]),
])
def test_reproduction_writes_its_files_and_every_claim(tmp_path, name, kwargs, claims):
    """Each paper-003 reproduction writes PNG + data + report.md with all its claim ids."""
    from jaxdp.experiments import REPRODUCTIONS

    report = REPRODUCTIONS[name](tmp_path, **kwargs)
    ids = [c.id for c in report.claims]
    for prefix in claims:
        assert any(i.startswith(prefix) for i in ids), (prefix, ids)
    assert (tmp_path / "report.md").exists() and (tmp_path / "report.json").exists()
    assert any(f.endswith(".png") for f in report.files)
    assert any(f.endswith(".json") for f in report.files)
    assert all(os.path.exists(f) for f in report.files)


LATTICE = [  # (algorithm, params, the released message); the test sets σ₁ = 1/2
    (algorithms.DPRECAL(), algorithms.DPRECALParams(**TOKEN, **PRIVATE), "u"),
    (algorithms.DPICADMM(), algorithms.DPICADMMParams(rho=0.5, beta=1.5, x0=0.3, **PRIVATE), "x"),
    (algorithms.DPRWADMM(), algorithms.DPRWADMMParams(beta=5.0, xi=6.0, x0=0.3, **PRIVATE), "x"),
    (algorithms.DPMRADMM(local_steps=4),
     algorithms.DPMRADMMParams(rho=0.5, theta=1.1, gamma=0.1, x0=0.3, **PRIVATE), "x"),
]


@pytest.mark.parametrize("alg, params, name", LATTICE, ids=[c[0].name for c in LATTICE])
def test_lattice_release_is_the_float_release_rounded_to_the_lattice(alg, params, name):
    """The default (lattice) step equals the float step fed the same draws up to the lattice
    rounding, |Δ| ≤ γ = σ/R per coordinate, and its release is an exact multiple of γ."""
    from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION

    assert alg.sampler == "lattice"
    params = params.replace(log_sigma1=np.log(0.5))  # γ = 2⁻¹/R: integer multiples are exact
    prob, net = l1_problem("ls" if alg.name == "dp_mradmm" else "l1_ls"), geometric_net()
    key = jax.random.key(5)
    state = alg.init(key, prob, net, params)
    k = jnp.asarray(0)
    noise = alg.noise(key, state, params, k)
    _, lattice = alg.step(state, noise, prob, net, params, k)
    _, floats = dataclasses.replace(alg, sampler="float").step(state, noise, prob, net, params, k)
    gamma = float(np.exp(np.log(0.5))) / GAUSSIAN_RESOLUTION
    assert gamma == 0.5 / GAUSSIAN_RESOLUTION  # a power of two
    released, exact = np.asarray(lattice[name]), np.asarray(floats[name])
    assert np.max(np.abs(released - exact)) <= gamma * (1 + 1e-9)
    assert np.max(np.abs(released - exact)) > 0  # the rounding happened
    np.testing.assert_array_equal(released / gamma, np.round(released / gamma))
