"""Paper 000's family (DPP², DiaDSP, PPDC): reference, invariants, convergence, theory, figures."""
import functools
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxdp
from jaxdp import algorithms, network, problems
from jaxdp.algorithms.dpp2.algorithm import DPP2State, theory_check, theory_params
from tests.harness import Case, reference_match, small_network, small_problem
from tests.reference import dpp2 as ref

P_SMALL = np.asarray(small_network().P, np.float64)
PER_AGENT = {"u_w": jnp.linspace(0.5, 1.5, 6), "u_e": jnp.linspace(2.0, 0.2, 6),
             "r": jnp.linspace(0.0, 0.99, 6)}

F = {"sampler": "float"}  # DPP2's update equations with v + θ Lap(1) (the lattice: tested apart)
CASES = [
    Case("dpp2", functools.partial(ref.dpp2, P=P_SMALL), config=F),
    Case("dpp2", functools.partial(ref.dpp2, P=P_SMALL), config=F, problem="nonconvex_logistic"),
    Case("dpp2", functools.partial(ref.dpp2, P=P_SMALL), config={"eta_mode": "constant", **F},
         overrides={"eta": 0.3, **PER_AGENT}, problem="logistic"),
    Case("diadsp", ref.diadsp, config=F, problem="nonconvex_logistic"),
    Case("diadsp", ref.diadsp, config=F, overrides={"alpha": jnp.linspace(0.01, 0.1, 6), **{
        k: v for k, v in PER_AGENT.items() if k == "r"}, "u_x": jnp.linspace(0.1, 1, 6)}),
    Case("ppdc", functools.partial(ref.ppdc, P=P_SMALL), config=F, problem="nonconvex_logistic"),
    Case("ppdc", functools.partial(ref.ppdc, P=P_SMALL), config=F, overrides={"u_x": PER_AGENT["u_w"],
                                                                      "r": PER_AGENT["r"]}),
]
IDS = [c.id for c in CASES]


def _hat_w(problem, X):
    m = problem.metrics(X)
    return {"W": m["consensus_error"] + m["stationarity"]}


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stacked_step_matches_per_node_reference(case):
    """Fed the same noise, the JAX step equals Algorithm 1's per-node loop to 1e-10, 25 steps."""
    reference_match(case, steps=25)


@pytest.mark.parametrize("case", CASES[::3], ids=IDS[::3])
def test_edge_backend_equals_dense(case):
    """Dense and edge-list products with P (and W) give the same trajectory."""
    runs = []
    for backend in ("dense", "edges"):
        alg, prob, net, params = case.build(backend)
        runs.append(jaxdp.simulate(alg, prob, net, params, jax.random.key(1), steps=20)[1])
    chex.assert_trees_all_close(*runs, rtol=1e-9, atol=1e-12)


def test_jit_equals_no_jit():
    """The jitted DPP² run equals the op-by-op one."""
    alg, prob, net, params = CASES[2].build()
    run = lambda: jaxdp.simulate(alg, prob, net, params, jax.random.key(2), steps=2)[1]  # noqa
    jitted = jax.jit(run)()
    with jax.disable_jit():
        plain = run()
    chex.assert_trees_all_close(jitted, plain, rtol=1e-10, atol=1e-12)


def _observe(alg, prob, net, params, steps=60, seed=3):
    _, _, seen = jaxdp.simulate(alg, prob, net, params, jax.random.key(seed), steps=steps,
                                observe=True)
    return seen


def test_eta_does_not_change_x_or_z():
    """Same Laplace draws, other η sequence: x and z agree to rounding, y differs."""
    prob, net = small_problem("nonconvex_logistic"), small_network()
    params = algorithms.DPP2Params(r=0.9)
    a = _observe(algorithms.DPP2(eta_stream=0, **F), prob, net, params)  # exact arithmetic:
    b = _observe(algorithms.DPP2(eta_stream=1, **F), prob, net, params)  # the lattice's rounding
    c = _observe(algorithms.DPP2(eta_mode="constant", **F), prob, net,  # of y depends on η
                 params.replace(eta=0.9))
    for other in (b, c):
        scale = np.max(np.abs(a["models"]))
        np.testing.assert_allclose(other["models"], a["models"], rtol=0, atol=1e-11 * scale)
        np.testing.assert_allclose(other["messages"]["z"], a["messages"]["z"], rtol=0,
                                   atol=1e-11 * np.max(np.abs(a["messages"]["z"])))
        assert np.max(np.abs(other["messages"]["y"] - a["messages"]["y"])) > 1e-2


def test_eta_is_one_scalar_in_the_unit_interval_per_step():
    """η^k is a () draw in (0, 1), the same for every agent, and independent of w and e."""
    alg, state = algorithms.DPP2(), DPP2State(x=jnp.zeros((6, 3)), d=jnp.zeros((6, 3)),
                                              q=jnp.zeros((6, 3)))
    etas = jnp.stack([alg.noise(jax.random.key(k), state, alg.default_params(), k)["eta"]
                      for k in range(200)])
    assert etas.shape == (200,) and float(etas.min()) > 0 and float(etas.max()) < 1
    assert 0.4 < float(etas.mean()) < 0.6
    n0 = alg.noise(jax.random.key(0), state, alg.default_params(), 0)
    n1 = algorithms.DPP2(eta_stream=5).noise(jax.random.key(0), state, alg.default_params(), 0)
    np.testing.assert_array_equal(n0["w"], n1["w"])
    assert n0["eta"] != n1["eta"]


def test_dual_variables_keep_the_invariants_q_equals_rho_P_d_and_d_sums_noisy_states():
    """q^k = ρ P d^k and d^k = Σ_{t<k} (x^t + w^t) for every k (w^t = u_w r^t Lap, float)."""
    alg, prob, net = algorithms.DPP2(**F), small_problem("logistic"), small_network()
    params = algorithms.DPP2Params(r=0.9, u_w=0.5)
    state = alg.init(None, prob, net, params)
    total = jnp.zeros_like(state.x)
    for k in range(40):
        noise = alg.noise(jax.random.key(k), state, params, k)
        total = total + state.x + params.u_w * params.r**k * noise["w"]
        state, _ = alg.step(state, noise, prob, net, params, k)
        np.testing.assert_allclose(state.q, params.rho * net.P @ state.d, atol=1e-10)
        np.testing.assert_allclose(state.d, total, atol=1e-10)


@pytest.mark.parametrize("name", ["dpp2", "ppdc"])
def test_zero_noise_converges_to_reference_solution_on_strongly_convex_problem(name):
    """Without noise, DPP² and PPDC reach x* of a strongly convex problem to machine precision."""
    prob, net = small_problem("least_squares"), small_network()
    alg = algorithms.get(name)
    zero = {"dpp2": {"u_w": 0.0, "u_e": 0.0}, "ppdc": {"u_x": 0.0}}[name]
    steps = {"dpp2": 3000, "ppdc": 8000}[name]  # PPDC's η = 0.01 is a small step
    tr = jaxdp.run(alg, prob, net, alg.default_params().replace(**zero), steps=steps,
                   progress=False, record_every=100)
    assert tr.final("dist_to_opt")[0] < 1e-18
    assert tr.final("consensus_error")[0] < 1e-18


def test_decaying_noise_still_converges_exactly():
    """With Laplace noise u r^k, DPP² still reaches x* (exact convergence, the paper's claim), with
    real-valued noise (float sampler): the lattice clamps releases at 2²⁴ u r^k, which stops it
    near step 200 here (DPP2's docstring)."""
    prob, net = small_problem("least_squares"), small_network()
    tr = jaxdp.run(algorithms.DPP2(**F), prob, net, algorithms.DPP2Params(r=0.9), steps=3000,
                   seeds=4, progress=False, record_every=100)
    assert np.all(tr.final("dist_to_opt") < 1e-16)


def test_diadsp_without_noise_is_diging():
    """DiaDSP with u_x = u_y = 0 is gradient tracking (DIGing) step for step."""
    prob, net = small_problem("nonconvex_logistic"), small_network()
    a = jaxdp.simulate(algorithms.DiaDSP(), prob, net,
                       algorithms.DiaDSPParams(alpha=0.05, u_x=0.0, u_y=0.0), jax.random.key(0),
                       steps=50)[1]
    b = jaxdp.simulate(algorithms.DIGing(), prob, net, algorithms.StepParams(alpha=0.05),
                       jax.random.key(0), steps=50)[1]
    chex.assert_trees_all_close(a, b, rtol=1e-10, atol=1e-14)


def test_zero_gradient_counterexample_disagreement_never_decays():
    """∇f ≡ 0, no noise, (α, β, ρ) inside (24)–(27): the consensus error stays."""
    N, d = 6, 3
    prob = problems.from_arrays(np.zeros((N, 4, d)), np.zeros((N, 4)), loss="least_squares",
                                reg={"ridge": 0.0}, reference=False)
    net = small_network()
    params = theory_params(net.P, 0.0, u_w=0.0, u_e=0.0)
    assert theory_check(params.alpha, params.beta, params.rho, net.P, 0.0).satisfied
    alg = algorithms.DPP2()
    x0 = jax.random.normal(jax.random.key(0), (N, d))
    state = DPP2State(x=x0, d=jnp.zeros_like(x0), q=jnp.zeros_like(x0))
    noise = {"w": jnp.zeros_like(x0), "e": jnp.zeros_like(x0), "eta": jnp.asarray(0.5)}

    def body(s, k):
        return alg.step(s, noise, prob, net, params, k)[0], None

    final, _ = jax.lax.scan(body, state, jnp.arange(20000))
    err = lambda x: float(jnp.sum((x - x.mean(0, keepdims=True)) ** 2))  # noqa: E731
    assert err(final.x) > 0.3 * err(x0)
    lam, V = np.linalg.eigh(np.asarray(net.P))
    for lam_j, v in zip(lam[1:], V[:, 1:].T):  # each disagreement mode: (x, d) ↦ a 2x2 map
        columns = []
        for a, c in ((1.0, 0.0), (0.0, 1.0)):
            mode = jnp.outer(v, jnp.ones(d))
            s = DPP2State(x=a * mode, d=c * mode, q=params.rho * lam_j * c * mode)
            s, _ = alg.step(s, noise, prob, net, params, 0)
            columns.append([float(s.x[:, 0] @ v), float(s.d[:, 0] @ v)])
        np.testing.assert_allclose(np.linalg.det(np.array(columns).T), 1.0, atol=1e-9)


def test_theory_check_flags_the_papers_setting_and_accepts_theory_params():
    """The paper's (0.1, 0.05, 10) violates (25) and (27) ~100x; theory_params passes (R8)."""
    net = network.make_network("random_geometric", 50, radius=0.3, seed=69)
    chk = theory_check(0.1, 0.05, 10.0, net.P, 5.03)
    assert not chk.satisfied
    assert not chk.conditions["alpha"] and not chk.conditions["rho"] and chk.conditions["G_pd"]
    np.testing.assert_allclose(chk.alpha_max, 0.25 / (5.03 + 10.5 * 5.03**2), rtol=1e-12)
    np.testing.assert_allclose(chk.alpha_max, 9.24e-4, rtol=1e-3)
    assert 100 < 0.1 / chk.alpha_max < 110 and 10.0 * chk.lam_min < 1
    p = theory_params(net.P, 5.03)
    good = theory_check(p.alpha, p.beta, p.rho, net.P, 5.03)
    assert good.satisfied, good.summary()
    assert not theory_check(p.alpha, p.beta, 0.5 * good.rho_min, net.P, 5.03).satisfied


def test_params_validation_names_the_bad_value():
    """G ⊁ 0, per-agent α, a bad η mode and negative scales are rejected with the value named."""
    prob = small_problem()
    lap = network.make_network("random_geometric", 6, radius=0.6, seed=3, P="laplacian")
    alg = algorithms.DPP2()
    with pytest.raises(ValueError, match=r"G = αI − βP must be positive definite .* ≤ 0"):
        jaxdp.run(alg, prob, lap, algorithms.DPP2Params(beta=0.09), steps=2, progress=False)
    net = small_network()
    with pytest.raises(ValueError, match=r"DPP2Params.alpha must be a scalar"):
        jaxdp.run(alg, prob, net, algorithms.DPP2Params(alpha=jnp.full(6, 0.1)), steps=2)
    with pytest.raises(ValueError, match=r"eta_mode must be 'random' or 'constant'; got 'x'"):
        jaxdp.run(algorithms.DPP2(eta_mode="x"), prob, net, steps=2)
    with pytest.raises(ValueError, match=r"DPP2Params.u_e must be >= 0 .* got -1"):
        jaxdp.run(alg, prob, net, algorithms.DPP2Params(u_e=-1.0), steps=2)
    with pytest.raises(ValueError, match=r"DPP2Params.r must be in \[0, 1\] .* got 1.5"):
        jaxdp.run(alg, prob, net, algorithms.DPP2Params(r=1.5), steps=2)
    with pytest.raises(ValueError, match=r"PPDCParams.gamma must be a scalar"):
        jaxdp.run(algorithms.PPDC(), prob, net, algorithms.PPDCParams(gamma=jnp.ones(6)), steps=2)


def test_gradient_wrt_noise_scale_and_step_matches_central_differences():
    """jax.grad of a final metric w.r.t. α and u_w is finite and matches finite differences."""
    prob, net = small_problem("logistic"), small_network()
    alg, key = algorithms.DPP2(**F), jax.random.key(4)  # the lattice rounds: piecewise constant

    @jax.jit
    def loss(p):
        return jaxdp.final_metrics(alg, prob, net, p, key, steps=15)["objective"]

    p = algorithms.DPP2Params(u_w=0.3, u_e=0.2, r=0.8)
    g = jax.jit(jax.grad(loss))(p)
    for field in ("alpha", "u_w"):
        h = 1e-6
        fd = (loss(p.replace(**{field: p[field] + h})) - loss(p.replace(**{field: p[field] - h})))
        np.testing.assert_allclose(g[field], fd / (2 * h), rtol=1e-5)


def test_dpp2_is_registered_with_its_baselines():
    for name, cls in (("dpp2", algorithms.DPP2), ("diadsp", algorithms.DiaDSP),
                      ("ppdc", algorithms.PPDC)):
        assert algorithms.REGISTRY[name] is cls and cls.name == name


# -- reproductions (tiny settings: files and claim ids, not verdicts) -----------------------------
TINY = {
    "dpp2-fig1": ({"steps": 40, "check_steps": 20, "counterexample_steps": 50},
                  ("R1", "R2", "R3", "R5", "R8", "R9")),
    "dpp2-fig2": ({"steps": 40, "attack_steps": 12}, ("R4", "R10")),
    "dpp2-fig3": ({"steps": 40}, ("R6", "R7")),
}


@pytest.mark.parametrize("name", sorted(TINY))
def test_reproduction_writes_figure_data_and_every_claim(tmp_path, name):
    """Each reproduction writes its PNG, data and report, with every claim id it owns."""
    from jaxdp.experiments import REPRODUCTIONS

    kw, ids = TINY[name]
    report = REPRODUCTIONS[name](tmp_path, seeds=2, **kw)
    claimed = {c.id.split(".")[0] for c in report.claims}
    assert set(ids) <= claimed, report.to_text()
    assert (tmp_path / "report.md").exists() and (tmp_path / "report.json").exists()
    assert any(f.endswith(".png") for f in report.files)
    assert any(f.endswith((".npz", ".json")) for f in report.files)
    assert all(Path(f).exists() for f in report.files)
    assert "ε" in (tmp_path / "report.md").read_text()  # the budget of every curve is reported


def test_lattice_release_is_the_float_release_rounded_to_the_lattice():
    """The default sampler: fed the same state and lattice draws, y differs from the float y by at
    most γ_w = u_w r^k/R per coordinate, y/γ_w and z/γ_e are integers (the float y's is not), and
    a zero scale (u = 0) releases the noise-free value, as the float sampler does."""
    from jaxdp.privacy.samplers import LAPLACE_RESOLUTION as R

    prob, net = small_problem("logistic"), small_network()
    lattice, flt = algorithms.DPP2(), algorithms.DPP2(**F)
    params = algorithms.DPP2Params(u_w=0.5, u_e=2.0, r=0.9)
    state = lattice.init(None, prob, net, params)
    step_l, step_f = jax.jit(lattice.step), jax.jit(flt.step)
    fractions = []
    for k in range(6):
        noise = lattice.noise(jax.random.key(k), state, params, k)
        new, msg = step_l(state, noise, prob, net, params, k)
        _, msg_f = step_f(state, noise, prob, net, params, k)
        g_w, g_e = 0.5 * 0.9**k / R, 2.0 * 0.9**k / R
        y, yf, z = (np.asarray(msg["y"]), np.asarray(msg_f["y"]), np.asarray(msg["z"]))
        assert np.all(np.abs(y - yf) <= g_w * (1 + 1e-6)), k
        for v, g in ((y, g_w), (z, g_e)):
            assert np.max(np.abs(v / g - np.round(v / g))) < 1e-6, k
        fractions.append(np.abs(yf / g_w - np.round(yf / g_w)))
        state = new
    assert np.median(np.concatenate(fractions)) > 0.1
    silent = params.replace(u_w=0.0, u_e=0.0)  # θ = 0: no noise, no NaN
    zero = lattice.init(None, prob, net, silent)
    noise = lattice.noise(jax.random.key(0), zero, silent, 0)
    chex.assert_trees_all_close(step_l(zero, noise, prob, net, silent, 0),
                                step_f(zero, noise, prob, net, silent, 0), rtol=0, atol=0)
