"""Paper 000 (DPP², Ou, Wang, Liu & Lu, arXiv 2511.02283), Figs. 1–3, and claims R1–R10
of the reproduction.

Setting (Sec. VI): N = 50 agents, d = 10, m = 200, nonconvex regularized logistic loss
(λ = 1e-3, ω = 1) with features rescaled so that M̄ = 5.03 and labels independent of the features
(``label_noise=0.5``, our reading of "randomly generated"; data seed 0, the same data in
every figure); the random geometric graph with radius 0.3 and 255 edges (seed 69); P = I − W_MH;
x⁰ = 0; η^k ~ U(0, 1). Curves are over ``seeds`` noise seeds (Laplace draws and η), float64.

* ``dpp2-fig1``: ū = 1, r̄ ∈ {0, 0.5, 0.9, 0.95, 0.97, 0.98, 0.99}; Ŵ = ‖x − x̄‖² +
  (1/N)‖Σ∇f_i(x_i)‖² against k. Claims R1 (η-invariance), R2 (dual invariants), R3 (order and
  exact convergence), R5 (tail slope 2 log r̄), R8 (theory helper), R9 (∇f ≡ 0 counterexample).
* ``dpp2-fig2``: r̄ = 0.95, ū ∈ {0, 0.1, 0.3, 0.6, 1, 3, 5}; Ŵ against k. Claims R4 (order by ū)
  and R10 (the tier-1 eavesdropper: recovery error against the noise scale).
* ``dpp2-fig3``: r̄ ∈ {0.1, ..., 0.9}, K = 500; ‖(1/N)Σ∇f_i(x_i^K)‖² for DPP², DiaDSP and PPDC at
  Fig. 3's parameters. Claims R6 (comparison) and R7 (accountant).

Every report lists the privacy budget each curve spent, as log10(ε/δ) (δ of Def. 1; the paper
never gives δ): Theorem 3 as printed and corrected for DPP², our per-step accounting for the
baselines (``jaxdp.algorithms.dpp2.privacy``).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp import algorithms, network, problems
from jaxdp._compiler import jit
from jaxdp.algorithms.dpp2 import privacy as acc
from jaxdp.algorithms.dpp2.algorithm import DPP2State, theory_check, theory_params
from jaxdp.attacks.eavesdrop import tier1_recovery_study
from jaxdp.engine import sweep
from jaxdp.engine import grid as make_grid
from jaxdp._plotting import (figure, finish, metric_label, plot_band, save,
                             set_yscale, setting_title)
from jaxdp.experiments._report import Report

FIG1_R = (0.0, 0.5, 0.9, 0.95, 0.97, 0.98, 0.99)
FIG2_U = (0.0, 0.1, 0.3, 0.6, 1.0, 3.0, 5.0)
FIG3_R = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
ATTACK_U = (0.0, 1e-12, 1e-9, 1e-6, 1e-3, 1e-1, 1.0)
FLOOR = 1e-20  # Ŵ below this is "at the floating-point floor" for the claims (float64 ~1e-27)
M_BAR = 5.03
PROBLEM = "nonconvex logistic (Sec. VI)"
NETWORK = "a random geometric graph (r = 0.3, 255 edges)"
EPS_PER_CURVE = "ε per curve in the report (Theorem 3)"
UTILITY = algorithms.DPP2(sampler="float")
"""The figures' runs: the paper's real-valued Laplace noise, drawn as floats. The lattice sampler
(DPP2's default, private as floats) clamps a release at 2²⁴θ^k (float64), so once u r^k is that far
below the iterates its releases saturate and the exact convergence the figures show is lost; the
budgets of these runs (Theorem 3, ε/δ up to 10^500) are no finite guarantee either way."""


def paper_problem(seed: int = 0, n_agents: int = 50):
    """Sec. VI's problem: N = 50, m = 200, d = 10, λ = 1e-3, ω = 1, M̄ = 5.03, random labels."""
    return problems.nonconvex_logistic(n_agents=n_agents, m=200, d=10, lam=1e-3, omega=1.0,
                                       smoothness=M_BAR, seed=seed, label_noise=0.5,
                                       reference=False)


def paper_network():
    """A random geometric graph with radius 0.3 and exactly 255 edges, P = I − W_MH."""
    return network.make_network("random_geometric", 50, radius=0.3, seed=69)


def hat_w(problem, X):
    """Figs. 1–2: Ŵ = ‖x − x̄‖² + (1/N)‖Σ_i ∇f_i(x_i)‖²."""
    m = problem.metrics(X)
    return {"W_hat": m["consensus_error"] + m["stationarity"]}


def mean_gradient_sq(problem, X):
    """Fig. 3: ‖(1/N) Σ_i ∇f_i(x_i)‖²."""
    return {"mean_grad_sq": problem.metrics(X)["stationarity"] / X.shape[0]}


# -- reproductions ------------------------------------------------------------------------------
def dpp2_fig1(out_dir="out/dpp2-fig1", *, seeds: int = 20, steps: int = 3000,
              check_steps: int = 200, counterexample_steps: int = 20000,
              progress: bool = False) -> Report:
    """Fig. 1 (effect of r̄) with claims R1, R2, R3, R5, R8, R9; writes PNG, data, report.

    Args:
      out_dir: output folder.
      seeds: noise seeds per curve.
      steps: iterations of the figure.
      check_steps: iterations of the invariance checks (R1, R2).
      counterexample_steps: iterations of the ∇f ≡ 0 run (R9).
      progress: progress bars.
    """
    with jax.enable_x64(True):
        out, prob, net = Path(out_dir), paper_problem(), paper_network()
        report = Report("dpp2-fig1", "DPP² Fig. 1: effect of the noise decay rate r̄ (ū = 1)")
        base = algorithms.DPP2Params(alpha=0.1, beta=0.05, rho=10.0, u_w=1.0, u_e=1.0)
        tr = sweep(UTILITY, prob, net, make_grid(base, r=FIG1_R), steps=steps,
                   seeds=seeds, record_every=_every(steps), metrics=hat_w, progress=progress)
        labels = [f"r̄={r:g}" for r in FIG1_R]
        _curve_figure(tr, "W_hat", labels, out / "fig1.png", report,
                      "DPP² Fig. 1 (ū = 1, α = 0.1, β = 0.05, ρ = 10)", seeds)
        report.files.append(str(tr.save(out / "fig1_trace.npz")))
        _budgets(report, out / "fig1_budgets.json", base, labels, [{"r": r} for r in FIG1_R],
                 steps, prob, net)
        _claim_invariances(report, prob, net, base.replace(r=0.95), check_steps)
        _claim_order(report, "R3", tr, FIG1_R, "r̄", "ū = 1: curves ordered by r̄ (0 and 0.5 "
                     "fastest, 0.99 slowest); all converge exactly (to the fp floor) after a "
                     "transient hump", steps, exact=True)
        _claim_tail_slope(report, tr, FIG1_R)
        _claim_theory(report, net)
        _claim_counterexample(report, net, counterexample_steps)
        report.write(out)
        return report


def dpp2_fig2(out_dir="out/dpp2-fig2", *, seeds: int = 20, steps: int = 1000,
              attack_steps: int = 100, progress: bool = False) -> Report:
    """Fig. 2 (effect of ū) with claim R4, and the tier-1 attack study R10 (second PNG)."""
    with jax.enable_x64(True):
        out, prob, net = Path(out_dir), paper_problem(), paper_network()
        report = Report("dpp2-fig2", "DPP² Fig. 2: effect of the noise scale ū (r̄ = 0.95)")
        base = algorithms.DPP2Params(alpha=0.1, beta=0.05, rho=10.0, r=0.95)
        tr = sweep(UTILITY, prob, net, _noise_grid(base, FIG2_U), steps=steps,
                   seeds=seeds, record_every=_every(steps), metrics=hat_w, progress=progress)
        labels = [f"ū={u:g}" for u in FIG2_U]
        _curve_figure(tr, "W_hat", labels, out / "fig2.png", report,
                      "DPP² Fig. 2 (r̄ = 0.95, α = 0.1, β = 0.05, ρ = 10)", seeds)
        report.files.append(str(tr.save(out / "fig2_trace.npz")))
        _budgets(report, out / "fig2_budgets.json", base, labels,
                 [{"u_w": u, "u_e": u} for u in FIG2_U], steps, prob, net)
        _claim_order(report, "R4", tr, FIG2_U, "ū", "r̄ = 0.95: curves ordered by ū (0 fastest, "
                     "5 slowest)", steps, exact=False)
        _claim_linear_start(report, tr)
        _claim_attack(report, prob, net, base, seeds, attack_steps, out)
        report.write(out)
        return report


def fig3_methods() -> dict:
    """Fig. 3's methods at the paper's "same privacy" parameters: ``{label: (algorithm, Params)}``
    (the noise decay r̄ is swept over :data:`FIG3_R`).

    All three draw the paper's real-valued Laplace noise as floats, as :data:`UTILITY` does:
    DiaDSP's and PPDC's scales decay as u·r̄^k too, and under the lattice sampler (their default)
    their releases are clamped from some step on — at K = 500 DiaDSP's final stationarity is then
    the same for every seed and every r̄ (10^−2.60 against the float law's 10^0.32) and PPDC's
    moves by up to three decades (``benchmarks/lattice_reproductions.py``). Their budgets are
    then the real-valued mechanism's (the report's ``ideal`` curve), as DPP²'s Theorem 3 is."""
    return {
        "DPP²": (UTILITY, algorithms.DPP2Params(
            alpha=0.0994, beta=0.05, rho=10.0, u_w=0.994, u_e=1.0)),
        "DiaDSP": (algorithms.DiaDSP().with_sampler("float"),
                   algorithms.DiaDSPParams(alpha=0.01, u_x=2.0, u_y=5.0)),
        "PPDC": (algorithms.PPDC().with_sampler("float"),
                 algorithms.PPDCParams(gamma=65.0, omega=5.0, eta=0.01, u_x=1.0)),
    }


def dpp2_fig3(out_dir="out/dpp2-fig3", *, seeds: int = 20, steps: int = 500,
              progress: bool = False) -> Report:
    """Fig. 3 (DPP², DiaDSP, PPDC at the paper's "same privacy" parameters) with R6 and R7."""
    with jax.enable_x64(True):
        out, prob, net = Path(out_dir), paper_problem(), paper_network()
        report = Report("dpp2-fig3", f"DPP² Fig. 3: ‖(1/N)Σ∇f_i(x_i^K)‖² against r̄, K={steps}")
        methods = fig3_methods()
        finals, budgets, bands = {}, {}, []
        fig, (ax,) = figure(width=6.0, height=4.2)
        for label, (alg, p) in methods.items():
            tr = sweep(alg, prob, net, make_grid(p, r=FIG3_R), steps=steps, seeds=seeds,
                       record_every=_every(steps), metrics=mean_gradient_sq, progress=progress)
            report.files.append(str(tr.save(out / f"fig3_trace_{alg.name}.npz")))
            mean, lo, hi = tr.band("mean_grad_sq", level=0.9, kind="quantile")
            finals[label] = {"mean": mean[:, -1], "q05": lo[:, -1], "q95": hi[:, -1],
                             "mean_half_way": mean[:, len(tr.steps) // 2],
                             "norm_x_bar": np.linalg.norm(tr.final_models.mean(axis=-2),
                                                          axis=-1).mean(axis=0),
                             "diverged": tr.diverged.sum(axis=0)}
            bands.append((mean[:, -1], lo[:, -1], hi[:, -1], label))
            budgets[label] = [_log10_budget(alg, prob, net, p.replace(r=r), steps)
                              for r in FIG3_R]
        log = set_yscale(ax, *(b[0] for b in bands))
        for mean_k, lo_k, hi_k, label in bands:
            plot_band(ax, FIG3_R, mean_k, lo_k, hi_k, log=log, alpha=0.2, marker="o", label=label)
        ax.set(xlabel=r"noise decay rate $\bar r$",
               ylabel=metric_label("mean_grad_sq") + f" at $K = {steps}$")
        finish(fig, [ax], "DPP² Fig. 3 (mean, 5–95% band): " + setting_title(
            PROBLEM, NETWORK, 50, seeds, EPS_PER_CURVE))
        report.files.append(save(fig, out / "fig3.png"))
        data = {"r": list(FIG3_R), **{f"{m}/{k}": np.asarray(v).tolist()
                                       for m, d in finals.items() for k, v in d.items()},
                "log10_eps_over_delta": budgets}
        report.files.append(_write_json(out / "fig3_data.json", data))
        for label in methods:
            report.notes.append(
                f"privacy spent by {label} at each r̄ (log10 ε/δ), idealized: the real-valued "
                "mechanism (Theorem 3, 'ideal' curves), not a bound for these float-sampler "
                "runs' transcripts: " + ", ".join(
                    f"{r:g}: {_fmt_budget(b)}" for r, b in zip(FIG3_R, budgets[label])))
            report.notes.append(f"{label}: final ‖x̄‖ (mean over seeds) per r̄: " + ", ".join(
                f"{v:.3g}" for v in finals[label]["norm_x_bar"]))
        _claim_comparison(report, finals, budgets)
        _claim_accountant(report, steps)
        report.write(out)
        return report


# -- claims --------------------------------------------------------------------------------------
def _claim_invariances(report, prob, net, params, steps):
    """R1 and R2 from one jitted scan: two η streams in lockstep on the same Laplace draws."""
    alg_a = algorithms.DPP2(eta_stream=0, sampler="float")  # exact-arithmetic invariance
    alg_b = algorithms.DPP2(eta_stream=1, sampler="float")
    zero = alg_a.init(None, prob, net, params)
    rel = lambda a, b: jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(a))  # noqa: E731

    def body(carry, k):
        a, b, total = carry
        key = jax.random.fold_in(jax.random.key(0), k)
        noise_a, noise_b = alg_a.noise(key, a, params, k), alg_b.noise(key, b, params, k)
        total = total + a.x + params.u_w * params.r ** k * noise_a["w"]  # Σ_{t≤k} (x^t + w^t)
        a, msg_a = alg_a.step(a, noise_a, prob, net, params, k)
        b, msg_b = alg_b.step(b, noise_b, prob, net, params, k)
        return (a, b, total), {
            "dx": rel(a.x, b.x), "dz": rel(msg_a["z"], msg_b["z"]),
            "dy": jnp.max(jnp.abs(msg_a["y"] - msg_b["y"])),
            "q": rel(a.q, params.rho * net.apply_P(a.d)), "d": rel(a.d, total)}

    _, out = jit(lambda: jax.lax.scan(body, (zero, zero, jnp.zeros_like(zero.x)),
                                      jnp.arange(steps)))()
    m = {k: float(jnp.max(v)) for k, v in out.items()}
    report.claim("R1", "for identical Laplace draws, two η sequences give the same x-trajectory "
                 "and z-messages (to rounding); only y differs",
                 paper="η has no effect on x (Sec. IV, (20)–(21)); notes: Δx 1.5e-12, Δz 2.2e-13, "
                 "Δy O(10)",
                 ours=f"max relative Δx = {m['dx']:.1e}, Δz = {m['dz']:.1e}; max Δy = "
                      f"{m['dy']:.3g} ({steps} steps)",
                 reproduced=m["dx"] < 1e-9 and m["dz"] < 1e-9 and m["dy"] > 1e-3)
    report.claim("R2", "dual invariants: q^k = ρPd^k and d^k = Σ_{t<k}(x^t + w^t)",
                 paper="q^k = ρLd^k (Sec. IV)", ours=f"max relative error "
                 f"{m['q']:.1e} (q), {m['d']:.1e} (d) over {steps} steps",
                 reproduced=m["q"] < 1e-10 and m["d"] < 1e-10)


def _claim_order(report, cid, tr, values, symbol, statement, steps, *, exact: bool):
    """Curves ordered by the grid value at k = 500 (ties allowed below FLOOR); optionally all
    below FLOOR at the end (exact convergence)."""
    mean = tr.mean("W_hat")  # (G, R)
    k_mid = min(500, steps)
    at = mean[:, np.searchsorted(tr.steps, k_mid)]
    ordered = all(b >= a or max(a, b) < FLOOR for a, b in zip(at[:-1], at[1:]))
    final = mean[:, -1]
    hump = np.max(mean, axis=1) / mean[:, 0]
    at_floor = bool(np.all(final < FLOOR))
    report.claim(cid, statement, paper="qualitative (figure only)",
                 ours=f"mean Ŵ at k={k_mid}: " + ", ".join(
                     f"{symbol}={v:g}: {a:.1e}" for v, a in zip(values, at))
                 + f" (ordered: {ordered}); at k={steps}: " + ", ".join(f"{a:.1e}" for a in final)
                 + f" (all below {FLOOR:g}: {at_floor}); hump max/initial: "
                 + ", ".join(f"{h:.2g}" for h in hump),
                 reproduced=ordered and (at_floor or not exact))


def _claim_tail_slope(report, tr, r_values):
    mean = np.log10(tr.mean("W_hat"))
    parts, ok = [], True
    for g, r in enumerate(r_values):
        if r < 0.97:
            continue
        slope, expected = _tail_slope(tr.steps, mean[g]), 2 * math.log10(r)
        parts.append(f"r̄={r:g}: {slope:.4f} vs 2log10 r̄ = {expected:.4f}")
        ok &= bool(np.isfinite(slope) and abs(slope / expected - 1) < 0.2)
    report.claim("R5", "in the noise-limited tail, log10 Ŵ falls by 2 log10 r̄ per iteration "
                 "(Theorem 2's rate is at least r̄²)", paper="rate ≥ r̄² (Thm 2); notes: −0.0172 "
                 "vs −0.0175 (r̄=0.98), −0.0084 vs −0.0087 (r̄=0.99)",
                 ours="; ".join(parts) + " (fit: second half of the records after the hump's "
                 f"peak and above {FLOOR:g}; tolerance 20%; a curve whose noise-limited phase "
                 f"lies below {FLOOR:g} is fitted on its faster transient)", reproduced=ok)


def _tail_slope(steps, log_w) -> float:
    """Slope of log10 Ŵ per iteration on the second half of the post-peak records above FLOOR."""
    start = int(np.argmax(log_w))
    idx = np.arange(start, len(log_w))
    idx = idx[log_w[idx] > math.log10(FLOOR)]
    idx = idx[len(idx) // 2:]
    if len(idx) < 3:
        return math.nan
    return float(np.polyfit(steps[idx], log_w[idx], 1)[0])


def _claim_theory(report, net):
    chk = theory_check(0.1, 0.05, 10.0, net.P, M_BAR)
    report.notes.append("theory_check(α=0.1, β=0.05, ρ=10, P=I−W_MH, M̄=5.03):\n    "
                        + chk.summary().replace("\n", "\n    "))
    ok = (abs(chk.alpha_max / 9.24e-4 - 1) < 1e-2) and not chk.satisfied
    report.claim("R8", "theory helper: for M̄ = 5.03, α must be below ξ6/ξ7 = 9.24e-4; the paper's "
                 "(α, β, ρ) = (0.1, 0.05, 10) is outside the proven regime",
                 paper="conditions (24)–(27); notes: α_max = 9.24e-4, ρλ_min(P) > 1 violated",
                 ours=f"α_max = {chk.alpha_max:.4g} (α/α_max = {0.1 / chk.alpha_max:.0f}); ρ_min = "
                      f"{chk.rho_min:.4g} vs ρ = 10 (ρλ_min = {10 * chk.lam_min:.2f}); "
                      f"violated: {sorted(k for k, v in chk.conditions.items() if not v)}",
                 reproduced=ok)


def _claim_counterexample(report, net, steps):
    n, d = net.n_agents, 10
    prob = problems.from_arrays(np.zeros((n, 2, d)), np.zeros((n, 2)), loss="least_squares",
                                reg={"ridge": 0.0}, reference=False)
    params = theory_params(net.P, 0.0, u_w=0.0, u_e=0.0)
    inside = theory_check(params.alpha, params.beta, params.rho, net.P, 0.0).satisfied
    alg = UTILITY
    x0 = jax.random.normal(jax.random.key(0), (n, d))
    noise = {"w": jnp.zeros_like(x0), "e": jnp.zeros_like(x0), "eta": jnp.asarray(0.5)}

    def body(s, k):
        return alg.step(s, noise, prob, net, params, k)[0], None

    final, _ = jit(lambda s: jax.lax.scan(body, s, jnp.arange(steps)))(
        DPP2State(x=x0, d=jnp.zeros_like(x0), q=jnp.zeros_like(x0)))
    err = lambda x: float(jnp.sum((x - x.mean(0, keepdims=True)) ** 2))  # noqa: E731
    ratio = err(final.x) / err(x0)
    report.claim("R9", "counterexample to Lemma 1 / Theorems 1–2: with ∇f ≡ 0 and no noise, at "
                 "(α, β, ρ) satisfying (24)–(27) for M̄ = 0, the consensus error does not decay "
                 "(documented behaviour, not a failure)",
                 paper="Thm 1–2 claim convergence for every f meeting A1–A3: "
                 "‖x − x̄‖² 408 → ~200 after 50 000 iterations",
                 ours=f"(α, β, ρ) = ({params.alpha:.3g}, {params.beta:.3g}, {params.rho:.3g}), "
                      f"inside the conditions: {inside}; ‖x − x̄‖² {err(x0):.4g} → "
                      f"{err(final.x):.4g} after {steps} iterations (ratio {ratio:.3f})",
                 reproduced=inside and ratio > 0.1)


def _claim_linear_start(report, tr):
    g = FIG2_U.index(0.0)
    log_w = np.log10(tr.mean("W_hat")[g])
    above = np.flatnonzero(log_w > math.log10(FLOOR))
    idx = above[: max(3, len(above))]
    slope, icpt = np.polyfit(tr.steps[idx], log_w[idx], 1)
    resid = log_w[idx] - (slope * tr.steps[idx] + icpt)
    r2 = 1 - np.sum(resid**2) / np.sum((log_w[idx] - log_w[idx].mean()) ** 2)
    rises = int(np.sum(np.diff(log_w[idx]) >= 0))
    report.claim("R4.linear", "ū = 0 (no noise) converges linearly from the start",
                 paper="linear (Fig. 2); notes: slope ≈ −0.058 decades/iteration",
                 ours=f"slope {slope:.4f} decades/iteration over k ≤ {tr.steps[idx[-1]]}, "
                      f"R² = {r2:.4f}; monotone: {rises == 0} (log10 Ŵ rises at {rises} of "
                      f"{len(idx) - 1} records: a linear trend with oscillations; the rule "
                      "required both)",
                 reproduced=rises == 0 and r2 > 0.95)


def _claim_attack(report, prob, net, base, seeds, steps, out):
    grid = _noise_grid(base, ATTACK_U)
    res = tier1_recovery_study(UTILITY, prob, net, grid, steps=steps, seeds=seeds)
    fig, axes = figure(2)
    for ax, key, label in zip(axes, ("x_error", "eta_error"),
                              (r"median $\|\hat x^k - x^k\| / \|x^k\|$",
                               r"median $|\hat\eta^k - \eta^k|$")):
        vals = np.asarray(res[key])
        mean, lo, hi = vals.mean(0), np.quantile(vals, 0.05, 0), np.quantile(vals, 0.95, 0)
        plot_band(ax, ATTACK_U, mean, lo, hi, log=set_yscale(ax, mean), alpha=0.2, marker="o",
                  color="C0", label="mean over seeds, 5–95% band")
        ax.set_xscale("symlog", linthresh=1e-12)  # u = 0 sits at 0, not on a log axis
        ax.set_xticks(ATTACK_U, [f"{u:g}" for u in ATTACK_U], fontsize=7)
        ax.set(xlabel=r"noise scale $u_w = u_e$", ylabel=label)
    finish(fig, axes, f"tier-1 eavesdropper (knows α, β, P; K = {steps}, r̄ = 0.95): "
           + setting_title(PROBLEM, NETWORK, 50, seeds, "ε not computed (u = 0: no privacy)"))
    report.files.append(save(fig, out / "attack.png"))
    report.files.append(_write_json(out / "attack_data.json", {
        "u": list(ATTACK_U), **{k: np.asarray(v).tolist() for k, v in res.items()}}))
    x_err = np.mean(res["x_error"], axis=0)
    eta_err = np.mean(res["eta_error"], axis=0)
    exact = bool(x_err[0] < 1e-10 and eta_err[0] < 1e-10)
    grows = bool(np.all(np.diff(x_err[:5]) > 0))
    report.claim("R10", "with zero noise, an eavesdropper who knows (α, β, P) recovers η^k and x^k "
                 "exactly by least squares; the error grows with the noise scale",
                 paper="Sec. III-C claims tier 1 protects 'even when noise variance approaches "
                 "zero'; exact recovery (~1e-12) at u = 0",
                 ours="mean over seeds of the median relative x error: " + ", ".join(
                     f"u={u:g}: {e:.1e}" for u, e in zip(ATTACK_U, x_err))
                 + "; η error: " + ", ".join(f"{e:.1e}" for e in eta_err),
                 reproduced=exact and grows)


def _claim_comparison(report, finals, budgets):
    m = {k: np.asarray(v["mean"]) for k, v in finals.items()}
    half = {k: np.asarray(v["mean_half_way"]) for k, v in finals.items()}
    lowest = all(np.all(m["DPP²"] < m[o]) for o in ("DiaDSP", "PPDC"))
    gain = {k: half[k] / m[k] for k in m}  # decrease over the second half of the run
    plateau = {k: bool(np.all(gain[k] < 2)) for k in ("DiaDSP", "PPDC")}
    report.claim("R6", "K = 500: final stationarity increases with r̄ for all three methods, DPP² "
                 "is lowest at every r̄, DiaDSP and PPDC plateau (neighbourhood only)",
                 paper="qualitative (Fig. 3): DPP² superior at the same privacy level",
                 ours="; ".join(f"{k}: " + ", ".join(f"{v:.1e}" for v in m[k]) for k in m),
                 reproduced=lowest and all(_increasing(m[k]) for k in m) and all(
                     plateau.values()))
    report.claim("R6.lowest", "DPP² is lowest at every r̄", paper="DPP² superior",
                 ours="DPP² / best other, per r̄: " + ", ".join(
                     f"{a / min(b, c):.1e}" for a, b, c in zip(m["DPP²"], m["DiaDSP"], m["PPDC"])),
                 reproduced=lowest)
    for k in m:
        report.claim(f"R6.{k}", f"{k}: final stationarity increases with r̄",
                     paper="larger r̄ (more privacy) converges more slowly",
                     ours=f"r̄ 0.1 → 0.9: {m[k][0]:.2e} → {m[k][-1]:.2e}; increasing: "
                          f"{_increasing(m[k])}",
                     reproduced=_increasing(m[k]))
    report.claim("R6.plateau", "DiaDSP and PPDC plateau: their metric falls less than 2x over the "
                 "second half of the run, at every r̄",
                 paper="they converge to a neighbourhood only (Sec. I, Table I)",
                 ours="decrease from k = K/2 to K, per r̄: " + "; ".join(
                     f"{k}: {min(gain[k]):.3g}..{max(gain[k]):.3g}" for k in plateau),
                 reproduced=all(plateau.values()))
    same = {k: f"{min(v):.1f}..{max(v):.1f}" for k, v in
            ((k, [max(b.values()) for b in bs]) for k, bs in budgets.items())}
    report.notes.append("'same privacy budgets' is nominal: log10(ε/δ) of the idealized budgets "
                        "above (real-valued mechanisms, not bounds for the float transcripts) "
                        "ranges over r̄ per method: "
                        + ", ".join(f"{k} {v}" for k, v in same.items()))


def _claim_accountant(report, steps):
    kw = dict(d=10, delta=1.0, M=M_BAR)
    c = float(acc.c_tilde(alpha=0.0994, u_e=1.0, u_w=0.994, **kw))
    table = {r: float(acc.theorem3_log_epsilon(500, alpha=0.0994, u_e=1.0, u_w=0.994, r=r,
                                               variant="paper", **kw)[0]) / acc.LN10
             for r in (0.1, 0.5, 0.9)}
    notes_table = {0.1: 500.9, 0.5: 151.7, 0.9: 24.7}
    def log_eps(u_e=1.0, u_w=1.0, r=0.9):
        return float(acc.theorem3_log_epsilon(100, alpha=0.1, u_e=u_e, u_w=u_w, r=r,
                                              variant="corrected", **kw)[0])

    monotone = log_eps(u_e=2.0) < log_eps() and log_eps(u_w=2.0) < log_eps() and log_eps(
        r=0.95) < log_eps()
    c1 = float(acc.c_tilde(alpha=0.1, u_e=1.0, u_w=1.0, **kw))
    cor = acc.corollary1(100 * c1, 10, alpha=0.1, u_e=1.0, u_w=1.0, variant="paper", **kw)
    total = sum(cor.r_min ** -k for k in range(1, 11))
    true_r = acc.solve_r(100 * c1, 10, alpha=0.1, u_e=1.0, u_w=1.0, variant="paper", **kw)
    ok = (abs(c / 6.957 - 1) < 1e-3 and all(abs(table[r] - v) < 0.05 for r, v in
                                            notes_table.items())
          and monotone and total > 100 and abs(true_r - 0.7122) < 1e-3)
    report.claim("R7", "accountant: reproduces Theorem 3 (Fig. 3 DPP²: c̃ = 6.957δ), is monotone "
                 "in u_e, u_w, r, and flags Corollary 1's counterexample (K = 10, ε/c̃ = 100)",
                 paper="Theorem 3; Corollary 1's r-range; notes: log10 ε/δ at K=500 = 500.9, "
                 "151.7, 24.7 for r̄ = 0.1, 0.5, 0.9; corollary's r gives a sum of 414, true "
                 "threshold 0.7122",
                 ours=f"c̃ = {c:.4f}δ; log10 ε/δ = " + ", ".join(
                     f"{table[r]:.1f} (r̄={r:g})" for r in table)
                 + f"; monotone: {monotone}; Corollary 1 r = {cor.r_min:.4f} gives Σ r^{{-k}} = "
                   f"{total:.0f} > 100; exact threshold r = {true_r:.4f}",
                 reproduced=ok)


# -- helpers -------------------------------------------------------------------------------------
def _every(steps: int) -> int:
    """About 100 records; a divisor of ``steps``."""
    return next(r for r in range(max(1, steps // 100), steps + 1) if steps % r == 0)


def _noise_grid(base, values):
    """u_w = u_e = u for each u in ``values`` (a grid that is not a Cartesian product)."""
    g = make_grid(base, u_w=values)
    return g.replace(u_e=g.u_w)


def _increasing(v) -> bool:
    return bool(np.all(np.diff(np.asarray(v)) > 0))


def _curve_figure(tr, metric, labels, path, report, title, seeds):
    """Mean over seeds with its 5–95% quantile band, one line per grid point; log scale when the
    data span more than a decade."""
    fig, (ax,) = figure(width=6.5, height=4.2)
    mean, lo, hi = tr.band(metric, level=0.9, kind="quantile")
    log = set_yscale(ax, mean)
    for g, label in enumerate(labels):
        plot_band(ax, tr.steps, mean[g], lo[g], hi[g], log=log, label=label)
    ax.set(xlabel="iteration $k$", ylabel=metric_label(metric))
    finish(fig, [ax], f"{title}, mean and 5–95% band:\n"
           + setting_title(PROBLEM, NETWORK, 50, seeds, EPS_PER_CURVE))
    report.files.append(save(fig, path))
    report.notes.append(f"{int(tr.diverged.sum())} diverged (seed, curve) pairs")


def _log10_budget(alg, prob, net, params, steps) -> dict:
    """log10(ε/δ) spent by one curve after ``steps`` steps (releases k = 0..steps−1)."""
    if isinstance(alg, algorithms.DPP2):
        kw = alg.accounting_inputs(prob, net, params)
        return {v: float(np.max(acc.theorem3_log_epsilon_curve(steps, variant=v, **kw)[:, -1]))
                / acc.LN10 for v in ("paper", "corrected", "tight")}
    report = alg.privacy(prob, net, params, steps)
    if alg.sampler_of() == "lattice":
        return {"pure_dp": float(np.max(report.log10("pure_dp")[:, -1]))}
    # the float sampler's curves are the real-valued mechanism's, named "ideal …"
    return {"ideal pure_dp": float(np.max(report.log10("ideal pure_dp")[:, -1]))}


def _budgets(report, path, base, labels, changes, steps, prob, net):
    alg = algorithms.DPP2(sampler="float")
    budgets = {lab: _log10_budget(alg, prob, net, base.replace(**ch), steps)
               for lab, ch in zip(labels, changes)}
    report.files.append(_write_json(path, {"steps": steps, "log10_eps_over_delta": budgets}))
    report.notes.append(f"privacy spent by each curve after {steps} steps, log10(ε/δ), Theorem 3 "
                        "printed / corrected (k = 0 added) / tight: " + "; ".join(
                            f"{lab}: {_fmt_budget(b)}" for lab, b in budgets.items()))


def _fmt_budget(b: dict) -> str:
    """``curve: ε=10^x`` per curve; an ``ideal`` curve is the real-valued mechanism's, which does
    not cover the floating-point transcript (the float sampler's runs)."""
    return " / ".join(f"{k}: " + ("ε=∞" if not math.isfinite(v) else f"ε=10^{v:.1f}")
                      for k, v in b.items())


def _write_json(path: Path, data) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=lambda o: np.asarray(o).tolist()))
    return str(path)


__all__ = ["dpp2_fig1", "dpp2_fig2", "dpp2_fig3", "fig3_methods", "hat_w", "mean_gradient_sq",
           "paper_network", "paper_problem"]
