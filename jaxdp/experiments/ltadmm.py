"""Paper 004 (LT-ADMM-DP, arXiv 2604.02558): ``jaxdp reproduce ltadmm-fig1`` and ``ltadmm-table1``.

Setup (§VI): a 10-agent ring, n = 5 features, m_i = 1000 samples per agent,
minibatches of b = 8, logistic loss plus ε·Σ[x]²/(1+[x]²). LT-ADMM-DP: γ = β = ρ = 0.1, ζ = 1,
τ = 4, K = 4000, σ_e = 0.5, δ = 1e-4. PORTER: η = 0.1, C = 1, σ = 0.103. PriSMA: γ = η = 0.025,
C1 = C2 = 1, σ0 = 0.1794, σ1 = 0.0155. x-axis: modelled time with t_g = 0.1, t_c = 1 (Table I).

Assumed where the paper is silent: the data set is synthetic — a ~ N(0, I_5),
b = sign(aᵀx_true) with 10% of labels flipped, an iid split (``problems.nonconvex_logistic``
with ``smoothness=None``) — with regulariser weight ε = λ = 0.01 (ω = 1); 2000 held-out test rows;
x_0 = 0 for every method; the baselines are our reconstructions (``ltadmm.baselines``) with b = 8;
every method runs for the same modelled-time budget as LT-ADMM-DP's K rounds (PORTER ≈ K·1.4/2.1,
PriSMA ≈ K·1.4/1.2 iterations); ‖∇F(x̄)‖ uses F = (1/N)Σ f_i and accuracy is over all training
samples (``ltadmm.paper_metrics``); bands are 95% confidence intervals of the mean over seeds.
"""
from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np

from jaxdp import algorithms, network, problems
from jaxdp.algorithms.ltadmm import privacy as lp
from jaxdp.algorithms.ltadmm.algorithm import CostModel, paper_metrics
from jaxdp.engine import Trace, run, sweep
from jaxdp._plotting import (figure, finish, metric_label, plot_band, save,
                             set_yscale, setting_title, style_key)
from jaxdp.experiments._report import Report

PAPER_EPSILON, PAPER_DELTA = 19.6, 1e-4
TABLE1 = {"porter": 8.4, "prisma": 4.8, "lt_admm_dp": 1.4}  # time over τ = 4 iterations
LABELS = {"lt_admm_dp": "LT-ADMM-DP", "porter": "PORTER", "prisma": "PriSMA"}
CHECKPOINTS = (0.25, 0.5, 1.0)  # fractions of the time budget where "faster" is checked
SIGMA_SWEEP = (0.0, 0.25, 0.5, 1.0)
CLAIMS = {
    "ltadmm-fig1": ("eps-printed", "eps-theorem2", "eps-tight", "equal-privacy", "fig1a-grad",
                    "fig1b-accuracy", "equal-eps-grad", "equal-eps-accuracy", "remark1-noise"),
    "ltadmm-table1": ("table1-porter", "table1-prisma", "table1-ltadmm", "most-efficient",
                      "communication-rounds"),
}
TINY = {  # the reproduction tests' settings
    "ltadmm-fig1": {"seeds": 2, "rounds": 40, "record_every": 4, "per_sample_diagnostic": False},
    "ltadmm-table1": {"seeds": 2, "rounds": 40, "record_every": 4},
}


def paper_setup(seed: int = 0):
    """The §VI problem (assumed data, see the module docstring) and the 10-agent ring."""
    prob = problems.nonconvex_logistic(n_agents=10, m=1000, d=5, lam=0.01, omega=1.0,
                                       smoothness=None, seed=seed, test_m=2000)
    return prob, network.make_network("ring", 10)


def paper_methods() -> dict:
    """``{name: (algorithm, params)}`` at the paper's stated hyperparameters."""
    return {"lt_admm_dp": (algorithms.LTADMMDP(), algorithms.LTADMMDPParams()),
            "porter": (algorithms.PORTER(), algorithms.PORTERParams()),
            "prisma": (algorithms.PriSMA(), algorithms.PriSMAParams())}


def budget_steps(alg, rounds: int, record_every: int, cost: CostModel = CostModel()) -> int:
    """Engine steps of ``alg`` within the time of ``rounds`` LT-ADMM-DP rounds (τ = 4), rounded
    down to a multiple of ``record_every``."""
    budget = rounds * cost.time_per_step(algorithms.LTADMMDP())
    steps = int(budget / cost.time_per_step(alg) + 1e-9)
    return max(record_every, steps - steps % record_every)


# -- Fig. 1 ---------------------------------------------------------------------------------------
def ltadmm_fig1(out_dir="out/ltadmm-fig1", *, seeds: int = 10, rounds: int = 4000,
                record_every: int = 20, progress: bool = False,
                per_sample_diagnostic: bool = True) -> Report:
    """Fig. 1 of paper 004: ‖∇F(x̄)‖ and accuracy against modelled time, and the privacy spent.

    Runs the three methods at the paper's parameters, then again with every method's noise
    calibrated to the paper's (ε, δ) = (19.6, 1e-4) under one tight accountant (RDP, Poisson
    subsampling); sweeps σ_e for Remark 1. Writes ``fig1.png``, the traces, ``fig1.json`` and
    ``report.md``. Runs in float64.

    Args:
      out_dir: output folder.
      seeds: Monte-Carlo replicates (≥ 10 for the paper-scale run).
      rounds: LT-ADMM-DP rounds K (the time budget is K·(τt_g + t_c)).
      record_every: LT-ADMM-DP rounds (and baseline iterations) between records.
      progress: progress bars.
      per_sample_diagnostic: also run LT-ADMM-DP with per-sample clipping at the tight ε (a note
        and a dotted line, not a claim).
    """
    with jax.enable_x64(True):
        return _fig1(Path(out_dir), seeds, rounds, record_every, progress, per_sample_diagnostic)


def _fig1(out: Path, seeds: int, rounds: int, record_every: int, progress: bool,
          diagnostic: bool) -> Report:
    prob, net = paper_setup()
    cost = CostModel()
    methods = paper_methods()
    steps = {name: budget_steps(alg, rounds, record_every, cost)
             for name, (alg, _) in methods.items()}
    budget = rounds * cost.time_per_step(methods["lt_admm_dp"][0])
    report = Report("ltadmm-fig1", "Paper 004, Fig. 1: LT-ADMM-DP vs PORTER and PriSMA under DP")
    report.notes += [__doc__.split("\n\n")[2].replace("\n", " "),
                     f"Seeds: {seeds}; steps run: " + ", ".join(
                         f"{LABELS[n]} {s}" for n, s in steps.items())
                     + f" (time budget {budget:g})."]
    privacy = {name: _privacy(alg, prob, p, steps[name]) for name, (alg, p) in methods.items()}
    calibrated = {name: lp.calibrate_noise(alg, prob, p, steps[name], PAPER_EPSILON,
                                           delta=PAPER_DELTA)
                  for name, (alg, p) in methods.items()}
    # one sweep per method (one compilation, common random numbers): [stated, calibrated, (σ_e
    # sweep for LT-ADMM-DP)]
    points = {name: [p, calibrated[name]] for name, (_, p) in methods.items()}
    points["lt_admm_dp"] += [methods["lt_admm_dp"][1].replace(sigma_e=s) for s in SIGMA_SWEEP]
    traces = {}
    for name, (alg, _) in methods.items():
        tr = sweep(alg, prob, net, _stack(points[name]), steps=steps[name], seeds=seeds,
                   record_every=record_every, metrics=paper_metrics, progress=progress)
        traces[name] = ([_grid_point(tr, g) for g in range(len(points[name]))],
                        cost.time_axis(alg, tr.steps))
    stated = {n: (pts[0], t) for n, (pts, t) in traces.items()}
    fair = {n: (pts[1], t) for n, (pts, t) in traces.items()}
    noise_sweep = (traces["lt_admm_dp"][0][2:], traces["lt_admm_dp"][1])
    per_sample = (_per_sample_at_paper_epsilon(prob, net, steps["lt_admm_dp"], seeds,
                                               record_every, progress) if diagnostic else None)

    _privacy_claims(report, privacy, steps)
    _comparison_claims(report, stated, budget, "fig1a-grad", "fig1b-accuracy",
                       "at the paper's stated noise")
    _comparison_claims(report, fair, budget, "equal-eps-grad", "equal-eps-accuracy",
                       f"with every method calibrated to (ε, δ) = ({PAPER_EPSILON}, "
                       f"{PAPER_DELTA}) by each one's guarantee (fixed-size batches: replace-one, "
                       "sampled without replacement)")
    _remark1_claim(report, noise_sweep, budget)
    report.notes.append(_early_note(stated, budget))
    if per_sample is not None:
        report.notes.append(_per_sample_note(per_sample, fair, budget))

    fig, axes = figure(3, width=4.6, height=3.6)
    _plot(axes[0], stated, fair, "grad_norm", "gradient norm")
    _plot(axes[1], stated, fair, "accuracy", "training accuracy")
    for ax, metric in zip(axes[:2] if per_sample is not None else (), ("grad_norm", "accuracy")):
        trace, times, _ = per_sample
        plot_band(ax, times, trace.mean(metric), log=ax.get_yscale() == "log", color="C0",
                  linestyle=":", linewidth=1.2,
                  label=f"LT-ADMM-DP, per-sample clip, tight ε = {PAPER_EPSILON}")
    style_key(axes[0], "solid: the paper's σ")
    style_key(axes[0], f"dashed: every method at tight ε = {PAPER_EPSILON}", linestyle="--")
    _plot_sweep(axes[2], noise_sweep)
    finish(fig, axes, "Paper 004 Fig. 1 (mean, 95% band): " + setting_title(
        "nonconvex logistic regression (§VI)", "a ring", 10, seeds,
        f"ε = {PAPER_EPSILON:g}, δ = {PAPER_DELTA:g} (dashed); the paper's σ (solid)"))
    report.files.append(save(fig, out / "fig1.png"))
    for name, (pts, _) in traces.items():
        report.files.append(str(pts[0].save(out / f"trace_stated_{name}.npz")))
        report.files.append(str(pts[1].save(out / f"trace_equal_eps_{name}.npz")))
    if per_sample is not None:
        report.files.append(str(per_sample[0].save(
            out / "trace_equal_eps_lt_admm_dp_per_sample.npz")))
    data = {"steps": steps, "time_per_step": {n: cost.time_per_step(a)
                                              for n, (a, _) in methods.items()},
            "time_budget": budget, "seeds": seeds,
            "privacy_stated_worst_agent": privacy,
            "calibrated_noise_guarantee": {n: {f: np.asarray(p[f]).tolist()
                                         for f in lp.NOISE_FIELDS[n]}
                                     for n, p in calibrated.items()},
            "final_window_mean_ci95": {
                tag: {n: _final(tr, t, budget) for n, (tr, t) in runs.items()}
                for tag, runs in (("stated", stated), ("equal_eps", fair))},
            "per_sample_clip_equal_eps": None if per_sample is None else {
                "sigma_e": per_sample[2], **_final(per_sample[0], per_sample[1], budget)},
            "sigma_sweep": {str(s): _final(tr, noise_sweep[1], budget)
                            for s, tr in zip(SIGMA_SWEEP, noise_sweep[0])}}
    (out / "fig1.json").write_text(json.dumps(data, indent=2))
    report.files.append(str(out / "fig1.json"))
    report.write(out)
    return report


def _per_sample_at_paper_epsilon(prob, net, rounds, seeds, record_every, progress):
    """LT-ADMM-DP with standard per-sample clipping (sensitivity ζ/b instead of 2ζ), its σ_e
    calibrated to the paper's (ε, δ) by the same accountant: ``(trace, times, σ_e)``."""
    alg = algorithms.LTADMMDP(clip="per_sample")
    params = lp.calibrate_noise(alg, prob, algorithms.LTADMMDPParams(), rounds, PAPER_EPSILON,
                                delta=PAPER_DELTA)
    tr = run(alg, prob, net, params, steps=rounds, seeds=seeds, record_every=record_every,
             metrics=paper_metrics, progress=progress)
    return tr, CostModel().time_axis(alg, tr.steps), float(np.asarray(params.sigma_e))


def _early_note(stated, budget) -> str:
    values = {n: _ci(_window(tr, t, "grad_norm", 0.05 * budget, 0.01 * budget))[0]
              for n, (tr, t) in stated.items()}
    return (f"Early transient (not a claim): at 5% of the budget (t = {0.05 * budget:g}) the mean "
            "‖∇F(x̄)‖ at the paper's σ is " + ", ".join(f"{LABELS[n]} {v:.3g}"
                                                         for n, v in values.items()) + ".")


def _per_sample_note(per_sample, fair, budget) -> str:
    trace, times, sigma = per_sample
    grad = _ci(_window(trace, times, "grad_norm", budget, 0.05 * budget))
    acc = _ci(_window(trace, times, "accuracy", budget, 0.05 * budget))
    others = {n: _ci(_window(tr, t, "grad_norm", budget, 0.05 * budget))[0]
              for n, (tr, t) in fair.items()}
    return ("Diagnostic (not a paper claim): LT-ADMM-DP with standard per-sample clipping (Δ = ζ/b "
            f"instead of the soft clip's 2ζ) at the same tight ε = {PAPER_EPSILON} needs σ_e = "
            f"{sigma:.4g} and ends at ‖∇F(x̄)‖ = {grad[0]:.4g} [{grad[1]:.3g}, {grad[2]:.3g}], "
            f"accuracy {acc[0]:.4f}; in the equal-ε run the three methods end at " + ", ".join(
                f"{LABELS[n]} {v:.4g}" for n, v in others.items()) + ".")


def _stack(points):
    """Params points -> one Params whose leaves have a leading grid axis (for ``sweep``)."""
    return jax.tree.map(lambda *xs: np.stack([np.asarray(x, np.float64) for x in xs]), *points)


def _grid_point(trace: Trace, g: int) -> Trace:
    """The run of grid point ``g`` of a sweep, as a plain ``(S, R)`` trace."""
    return Trace(metrics={k: v[:, g] for k, v in trace.metrics.items()}, steps=trace.steps,
                 diverged=trace.diverged[:, g], final_models=trace.final_models[:, g],
                 meta={**trace.meta, "grid_point": g})


def _run_methods(methods, steps, prob, net, seeds, record_every, progress) -> dict:
    """``{name: (trace, time axis)}`` at each method's Params."""
    cost, out = CostModel(), {}
    for name, (alg, params) in methods.items():
        tr = run(alg, prob, net, params, steps=steps[name], seeds=seeds,
                 record_every=record_every, metrics=paper_metrics, progress=progress)
        out[name] = (tr, cost.time_axis(alg, tr.steps))
    return out


def _privacy(alg, prob, params, steps) -> dict:
    """Worst-agent ε: the guarantee, its zCDP and RDP curves, and Theorem 2 for LT-ADMM-DP."""
    methods = ["guarantee", "zcdp", "rdp"] + (["paper_printed", "paper_corrected"]
                                              if alg.name == "lt_admm_dp" else [])
    return {m: float(np.max(lp.epsilon(alg, prob, params, steps, m, delta=PAPER_DELTA)))
            for m in methods}


def _privacy_claims(report, privacy, steps):
    lt = privacy["lt_admm_dp"]
    report.claim("eps-printed", "Theorem 2 at σ_e = 0.5, δ = 1e-4 gives ε_i = 19.6 (as printed)",
                 paper="19.6", ours=f"{lt['paper_printed']:.4f} with L = log₁₀(1/δ) (the "
                 "printed number's reading)", reproduced=abs(lt["paper_printed"] - 19.6) < 0.05)
    report.claim("eps-theorem2", "Theorem 2's formula (9) with the natural log its RDP→DP "
                 "conversion requires gives 19.6", paper="19.6",
                 ours=f"{lt['paper_corrected']:.4f} (ln): the printed 19.6 needs log₁₀, an "
                 "erratum", reproduced=abs(lt["paper_corrected"] - 19.6) < 0.05)
    report.claim("eps-tight", "σ_e = 0.5 makes LT-ADMM-DP (19.6, 1e-4)-DP for each agent",
                 paper="ε = 19.6", ours=f"guarantee {lt['guarantee']:.4g} (fixed-size batches: "
                 f"replace-one, Δ = 2ζ; RDP sampled without replacement {lt['rdp']:.4g}, zCDP "
                 f"{lt['zcdp']:.4g})", reproduced=lt["guarantee"] <= PAPER_EPSILON)
    finals = {n: privacy[n]["guarantee"] for n in privacy}
    ratio = max(finals.values()) / min(finals.values())
    report.claim("equal-privacy", "PORTER (σ = 0.103) and PriSMA (σ0 = 0.1794, σ1 = 0.0155) "
                 "spend the same ε as LT-ADMM-DP (\"the same privacy level\"); checked by one "
                 "guarantee (fixed-size batches, replace-one), equal within 10%",
                 paper="ε = 19.6 for all three",
                 ours="; ".join(f"{LABELS[n]} {privacy[n]['guarantee']:.4g} over {steps[n]} steps"
                                for n in privacy)
                 + " (baselines: our reconstruction's sensitivities)",
                 reproduced=ratio <= 1.1)


def _window(trace, times, metric, end, width):
    """Per-seed mean of ``metric`` over records with time in ``(end − width, end]`` (at least the
    last record at or before ``end``): ``(S,)`` over the seeds that did not diverge."""
    before = np.nonzero(times <= end + 1e-9)[0]
    keep = before[times[before] > end - width - 1e-9]
    keep = keep if keep.size else before[-1:]
    return np.mean(trace.metrics[metric][~trace.diverged][:, keep], axis=1)


def _ci(values):
    mean = float(np.mean(values))
    half = 1.96 * float(np.std(values, ddof=1)) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return mean, mean - half, mean + half


def _comparison_claims(report, runs, budget, grad_id, acc_id, how):
    width = 0.05 * budget
    lt_label = LABELS["lt_admm_dp"]

    def better(metric, frac, lower):
        rows, ok = [], True
        lt = _ci(_window(*runs["lt_admm_dp"], metric, frac * budget, width))
        for name in ("porter", "prisma"):
            other = _ci(_window(*runs[name], metric, frac * budget, width))
            ok &= (lt[2] < other[1]) if lower else (lt[1] > other[2])
            rows.append(f"{LABELS[name]} {other[0]:.4g} [{other[1]:.3g}, {other[2]:.3g}]")
        text = f"t={frac * budget:g}: {lt_label} {lt[0]:.4g} [{lt[1]:.3g}, {lt[2]:.3g}] vs " \
            + ", ".join(rows)
        return ok, text

    checks = [better("grad_norm", f, True) for f in CHECKPOINTS]
    report.claim(grad_id, f"LT-ADMM-DP converges faster in modelled time: lower ‖∇F(x̄)‖ than "
                 f"PORTER and PriSMA at 25%, 50% and 100% of the budget ({how}; mean over the "
                 "last 5% of the budget before each point, 95% CIs disjoint)",
                 paper="Fig. 1(a): LT-ADMM-DP below both curves",
                 ours="; ".join(t for _, t in checks), reproduced=all(ok for ok, _ in checks))
    ok, text = better("accuracy", 1.0, False)
    report.claim(acc_id, f"LT-ADMM-DP reaches a higher classification accuracy than PORTER and "
                 f"PriSMA ({how}; end of the budget, 95% CIs disjoint)",
                 paper="Fig. 1(b): LT-ADMM-DP above both curves", ours=text, reproduced=ok)


def _remark1_claim(report, noise_sweep, budget):
    traces, times = noise_sweep
    plateau = [float(np.mean(_window(tr, times, "grad_norm", budget, 0.5 * budget)))
               for tr in traces]  # the plateau: mean over the second half of the run
    report.claim("remark1-noise", "Remark 1: the steady-state error grows with the noise "
                 "variance σ_e² (reducing the perturbation improves optimality)",
                 paper="O(γτ(ζ² + σ_e²)) term of (8)",
                 ours="plateau ‖∇F(x̄)‖ (mean over the second half) = " + ", ".join(
                     f"{p:.4g} (σ_e={s})" for s, p in zip(SIGMA_SWEEP, plateau)),
                 reproduced=bool(np.all(np.diff(plateau) > 0)))


def _final(trace, times, budget) -> dict:
    return {m: _ci(_window(trace, times, m, budget, 0.05 * budget))
            for m in ("grad_norm", "accuracy", "test_accuracy", "consensus_error")}


def _plot(ax, stated, fair, metric, title):
    """Each method's mean and 95% band against modelled time: the paper's σ solid, every method
    at the same ε dashed; log y when the data span a decade."""
    curves = [(name, trace.band(metric), times, dashed)
              for dashed, runs in ((False, stated), (True, fair))
              for name, (trace, times) in runs.items()]
    log = set_yscale(ax, *(band[0] for _, band, _, _ in curves))
    for name, (mean, lo, hi), times, dashed in curves:
        style = {"linestyle": "--", "linewidth": 1.0} if dashed else {"label": LABELS[name]}
        plot_band(ax, times, mean, lo, hi, log=log, color=COLORS[name], **style)
    ax.set(xlabel=TIME_LABEL, ylabel=metric_label(metric), title=title)


COLORS = {"lt_admm_dp": "C0", "porter": "C1", "prisma": "C2"}
TIME_LABEL = r"modelled time ($t_g = 0.1$, $t_c = 1$)"


def _plot_sweep(ax, noise_sweep):
    """LT-ADMM-DP's gradient norm for each σ_e of Remark 1 (colours after the methods')."""
    traces, times = noise_sweep
    bands = [tr.band("grad_norm") for tr in traces]
    log = set_yscale(ax, *(b[0] for b in bands))
    for i, ((mean, lo, hi), s) in enumerate(zip(bands, SIGMA_SWEEP)):
        plot_band(ax, times, mean, lo, hi, log=log, color=f"C{3 + i}",
                  label=f"LT-ADMM-DP, σ_e = {s}")
    ax.set(xlabel=TIME_LABEL, ylabel=metric_label("grad_norm"), title="Remark 1: σ_e sweep")


# -- Table I ---------------------------------------------------------------------------------
def ltadmm_table1(out_dir="out/ltadmm-table1", *, seeds: int = 10, rounds: int = 4000,
                  record_every: int = 5, progress: bool = False) -> Report:
    """Table I of paper 004: time per τ iterations under (t_g, t_c), and measured communication.

    The cost of each method comes from its declared gradient evaluations and the communication
    rounds its ``step`` actually returns (one message stream per round); the runs at the paper's
    parameters give the modelled time and the communication rounds each method needs to reach
    ‖∇F(x̄)‖ ≤ 0.1. Writes ``table1.md``, ``table1.json``, ``table1.png`` and ``report.md``.
    """
    with jax.enable_x64(True):
        return _table1(Path(out_dir), seeds, rounds, record_every, progress)


def _table1(out: Path, seeds, rounds, record_every, progress) -> Report:
    prob, net = paper_setup()
    cost, tau = CostModel(), algorithms.LTADMMDP().local_steps
    methods = paper_methods()
    report = Report("ltadmm-table1", "Paper 004, Table I: computation time over τ iterations")
    rows = {}
    for name, (alg, params) in methods.items():
        comm = _measured_communication(alg, prob, net, params)
        grads, _ = alg.costs()
        iters = alg.local_iterations()
        rows[name] = {
            "time_per_tau_iterations": cost.time_per_iterations(alg, tau),
            "gradient_evaluations_per_tau_iterations": grads * tau / iters,
            "communication_rounds_per_tau_iterations": comm["rounds"] * tau / iters,
            "vectors_sent_per_tau_iterations": comm["vectors"] * tau / iters,
            "floats_sent_per_tau_iterations": comm["floats"] * tau / iters,
        }
    runs = _run_methods(methods, {n: budget_steps(a, rounds, record_every, cost)
                                  for n, (a, _) in methods.items()},
                        prob, net, seeds, record_every, progress)
    for name, (trace, times) in runs.items():
        alg = methods[name][0]
        rows[name]["time_to_grad_0.1"] = _time_to(trace, times, "grad_norm", 0.1)
        rows[name]["communication_rounds_to_grad_0.1"] = (
            rows[name]["time_to_grad_0.1"] / cost.time_per_step(alg) * alg.costs()[1])
    for name, expected in TABLE1.items():
        got = rows[name]["time_per_tau_iterations"]
        report.claim(f"table1-{name.replace('lt_admm_dp', 'ltadmm')}",
                     f"{LABELS[name]} costs {expected} time units over τ = {tau} iterations "
                     "(t_g = 0.1, t_c = 1)", paper=str(expected), ours=f"{got:.4g}",
                     reproduced=abs(got - expected) < 1e-9)
    times = {n: r["time_per_tau_iterations"] for n, r in rows.items()}
    report.claim("most-efficient", "LT-ADMM-DP is the most efficient (least time per τ "
                 "iterations)", paper="1.4 < 4.8 < 8.4",
                 ours=", ".join(f"{LABELS[n]} {t:.3g}" for n, t in times.items()),
                 reproduced=min(times, key=times.get) == "lt_admm_dp")
    comms = {n: r["communication_rounds_per_tau_iterations"] for n, r in rows.items()}
    report.claim("communication-rounds", "Communication rounds over τ iterations are 2τ "
                 "(PORTER), τ (PriSMA) and 1 (LT-ADMM-DP), counted from the messages each step "
                 "sends", paper="8, 4, 1 (Table I's t_c coefficients)",
                 ours=", ".join(f"{LABELS[n]} {c:g}" for n, c in comms.items()),
                 reproduced=comms == {"porter": 2.0 * tau, "prisma": 1.0 * tau,
                                      "lt_admm_dp": 1.0})
    report.notes.append("Modelled time and communication rounds to reach ‖∇F(x̄)‖ ≤ 0.1 (mean "
                        "curve over seeds, paper's parameters; inf = not reached in the budget): "
                        + "; ".join(f"{LABELS[n]} {r['time_to_grad_0.1']:.4g} time, "
                                    f"{r['communication_rounds_to_grad_0.1']:.4g} rounds"
                                    for n, r in rows.items()))
    (out).mkdir(parents=True, exist_ok=True)
    (out / "table1.json").write_text(json.dumps(rows, indent=2))
    (out / "table1.md").write_text(_table_markdown(rows))
    fig, (ax,) = figure(1)
    ax.bar([LABELS[n] for n in rows], [times[n] for n in rows], color=["C0", "C1", "C2"])
    ax.set(ylabel=f"modelled time over τ = {tau} iterations",
           title="$t_g = 0.1$ per gradient, $t_c = 1$ per round")
    finish(fig, [ax], "Paper 004 Table I: " + setting_title(
        "nonconvex logistic regression (§VI)", "a ring", 10, seeds,
        "the paper's σ (cost does not depend on ε)"))
    report.files += [save(fig, out / "table1.png"), str(out / "table1.md"),
                     str(out / "table1.json")]
    report.write(out)
    return report


def _measured_communication(alg, prob, net, params) -> dict:
    """Communication of one step, from the messages ``step`` returns: rounds = message streams;
    vectors = one per directed edge for an edge message (2E, d), one per neighbour for a
    broadcast (N, d) (each agent sends it to its d_i neighbours)."""
    def one_step(key):
        state = alg.init(key, prob, net, params)
        return alg.step(state, alg.noise(key, state, params, 0), prob, net, params, 0)[1]

    messages = jax.eval_shape(one_step, jax.random.key(0))  # shapes only: nothing is computed
    two_e = 2 * net.n_edges
    vectors = sum(two_e for m in messages.values())  # edge messages and broadcasts alike
    floats = sum(two_e * int(np.prod(np.shape(m)[1:])) for m in messages.values())
    return {"rounds": len(messages), "vectors": vectors, "floats": floats}


def _time_to(trace, times, metric, level) -> float:
    mean = trace.mean(metric)
    hit = np.nonzero(mean <= level)[0]
    return float(times[hit[0]]) if hit.size else float("inf")


def _table_markdown(rows) -> str:
    cols = list(next(iter(rows.values())))
    lines = ["| method | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, r in rows.items():
        lines.append(f"| {LABELS[name]} | " + " | ".join(f"{r[c]:.4g}" for c in cols) + " |")
    return "\n".join(lines) + "\n"


__all__ = ["ltadmm_fig1", "ltadmm_table1", "paper_methods", "paper_setup", "budget_steps"]
