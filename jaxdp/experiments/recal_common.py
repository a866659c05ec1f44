"""What paper 003's reproductions share (see :mod:`jaxdp.experiments.recal` for the data sets and
the hyperparameters chosen): the constants, the data sets and the §6.1 problem, the jitted seed
runs, the calibration of DP-RECAL and of the baselines to (ε, δ) at a PLF, and the legend names
and geometric-mean panel of the figures.
"""
from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp import algorithms, problems
from jaxdp.algorithms.recal import algorithm as recal
from jaxdp.algorithms.recal import baselines as ra
from jaxdp.algorithms.recal import privacy as acct
from jaxdp.attacks import inversion, relay
from jaxdp.engine import simulate
from jaxdp._plotting import metric_label, plot_band, set_yscale

N_AGENTS = 8
LOG_R = float(np.log(1.05))
DELTA = 1e-3
X0 = 1.0
DECAY = 0.999  # γ of the decaying rows' α_k = α₀γ^k (unreported): α at k = 2000 is e^{−2}α₀
PAPER_COMM = {"dp_recal": 2400, "dp_nids": 4800, "dp_extra": 9600, "dp_icadmm": 9600,
              "dp_rwadmm": 9600, "dp_mradmm": 19200, "dp_admm13-decay": 6400,
              "dp_mradmm-decay": 128000}


# -- data -----------------------------------------------------------------------------------------
def synthetic_data(n_samples: int = 4000, n_features: int = 22, *, seed: int = 0,
                   label_noise: float = 0.1):
    """ijcnn1-like stand-in: features min–max normalized to [0, 1], balanced ±1 labels.

    Raw features are N(0, 1) mixed by a random matrix (correlated, as real features are), then
    min–max scaled per feature; labels are the sign of a planted linear score minus its median
    (balanced classes), each flipped with probability ``label_noise``.
    """
    rng = np.random.default_rng(seed)
    raw = rng.standard_normal((n_samples, n_features)) @ rng.standard_normal(
        (n_features, n_features))
    Z = (raw - raw.min(axis=0)) / (raw.max(axis=0) - raw.min(axis=0))
    score = Z @ rng.standard_normal(n_features)
    y = np.where(score > np.median(score), 1.0, -1.0)
    y = np.where(rng.random(n_samples) < label_noise, -y, y)
    return Z, y


def datasets(mnist_dir=None, *, synthetic_samples: int = 4000,
             names=("synthetic", "digits", "mnist")) -> dict:
    """The data sets available here among ``names``: ``synthetic``, ``digits`` (scikit-learn, when
    installed), ``mnist`` (IDX files in ``mnist_dir``, when given)."""
    out = {}
    if "synthetic" in names:
        out["synthetic"] = synthetic_data(synthetic_samples)
    if "digits" in names:
        try:
            out["digits"] = inversion.digits((0, 1))
        except ImportError:
            pass
    if "mnist" in names and mnist_dir is not None:
        out["mnist"] = inversion.load_mnist(mnist_dir, (0, 1))
    return out


def recal_problem(features, labels, model: str, l1: float = 0.5, seed: int = 0,
                  n_agents: int = N_AGENTS):
    """Paper 003 §6.1: (1/n)Σ_i (1/m_i)Σ_j ℓ + ½‖x‖² + l1‖x‖₁, split equally over 8 agents."""
    feats, labs = problems.partition(features, labels, n_agents, seed=seed)
    m = min(len(b) for b in labs)  # equal shards (§6.1)
    feats, labs = [f[:m] for f in feats], [b[:m] for b in labs]
    if model == "linear":
        loss, reg = problems.L1LeastSquares(), {"ridge": 1.0, "l1": l1}
    else:
        loss, reg = problems.L1Logistic(), {"lam": 1.0, "l1": l1}
    return problems.from_arrays(np.stack(feats), np.stack(labs), loss=loss, reg=reg,
                                name=f"recal-{model}")  # static: same for every l1


# -- running ----------------------------------------------------------------------------------
# The runs are jitted at module level with the problem, network and params as arguments, so runs
# that differ only in values (ℓ1 weight, σ₁ for another ε, ...) share one compilation.
@functools.partial(jax.jit, static_argnames=("alg", "steps", "record_every", "counts"))
def relative_errors(alg, prob, net, params, keys, *, steps, record_every, counts=False):
    """vmap over ``keys`` of one run: final states and records (S, R) of RE = ‖x̄ − x*‖/‖x⁰ − x*‖
    (``"re"``), with ``counts`` also the PLF and messages so far (``alg.plf_and_messages``)."""
    scale = jnp.linalg.norm(X0 - prob.x_star)

    def metrics(problem, models, state):  # RE only: less to compile than every metric
        re = {"re": jnp.linalg.norm(jnp.mean(models, axis=0) - problem.x_star) / scale}
        return {**re, **alg.plf_and_messages(state)} if counts else re

    def one(key):
        carry, rec, _ = simulate(alg, prob, net, params, key, steps=steps,
                                 record_every=record_every, metrics=metrics)
        return carry.state, rec

    return jax.vmap(one)(keys)


def run_seeds(alg, prob, net, params, *, steps: int, seeds: int, record_every: int):
    """vmap of ``simulate`` over seeds: ``(final states, RE records (S, R), seconds)``.

    Compiled ahead of time so the seconds are run time only.
    """
    keys = jax.random.split(jax.random.key(0), seeds)
    args = (alg, prob, net, params, keys)
    compiled = relative_errors.lower(*args, steps=steps, record_every=record_every).compile()
    t0 = time.perf_counter()
    states, rec = jax.block_until_ready(compiled(*args[1:]))
    return states, np.asarray(rec["re"]), time.perf_counter() - t0


@functools.partial(jax.jit, static_argnames=("alg", "steps"))
def observe_run(alg, prob, net, params, key, *, steps: int) -> dict:
    """``simulate(..., observe=True)``'s per-step messages and models of one run (jitted)."""
    return simulate(alg, prob, net, params, key, steps=steps, observe=True)[2]


def gradient_bound(prob, net, steps: int = 2400) -> float:
    """c of Assumption 3: the largest ‖∇f_i(y_i)‖ along a non-private RECAL run."""
    params = recal.theory_params(prob, net).replace(xi=1e9, x0=X0)
    seen = observe_run(algorithms.RECAL(), prob, net, params, jax.random.key(0), steps=steps)
    x1 = jnp.full((prob.dim,), X0)
    tr = relay.transcript(seen["messages"], x1)
    _, grads, _ = relay.appendix_a_gradients(tr, params.alpha, params.beta, net.n_agents, x1)
    return float(jnp.max(jnp.linalg.norm(grads, axis=1)))


def dp_recal_params(prob, net, epsilon: float, c: float, xi: float = 300.0):
    """DP-RECAL at ε with PLF ξ: the paper's steps, log σ₁ from Theorem 4 inverted."""
    base = recal.theory_params(prob, net, algorithms.DPRECALParams()).replace(
        xi=xi, x0=X0, c=c, log_R=LOG_R, delta=DELTA)
    return recal.calibrate(base, epsilon)


def sigma_table(sens, epsilon: float, plf: int) -> dict:
    """σ₁ calibrated so that ``plf`` releases with sensitivity ``sens`` (scalar, or (plf,) per
    release) spend exactly (ε, δ); σ at the last release; the first release's Δ."""
    sens_t = np.broadcast_to(np.asarray(sens, np.float64), (int(plf),))
    log_s1 = float(acct.calibrate_log_sigma1_schedule(epsilon, DELTA, sens_t, log_R=LOG_R))
    last = float(acct.log_sigma(log_s1, LOG_R, plf))
    return {"log_sigma1": log_s1, "log10_sigma1": log_s1 / np.log(10),
            "sigma_last": float(np.exp(last)), "sensitivity": float(sens_t[0])}


def _calibrated(alg, params, steps, sens, epsilon, c, plf):
    """``(alg, params with x⁰, c, R, δ and σ₁ for (ε, δ) at ``plf`` releases, steps, σ table)``."""
    sig = sigma_table(sens, epsilon, plf)
    params = params.replace(x0=X0, c=c, log_R=LOG_R, delta=DELTA, log_sigma1=sig["log_sigma1"])
    return alg, params, steps, sig


def baselines_at(prob, net, epsilon: float, c: float, plf: int = 300) -> dict:
    """Every fixed-step ℓ1 baseline calibrated to (ε, δ) at PLF ``plf``:
    ``name -> (algorithm, params, steps, {log σ₁, σ at the last release, Δ})``."""
    L = float(np.max(prob.smoothness()))
    deg = 2.0  # the ring
    a_nids, a_extra, rho, b_admm, b_rw = 1.0 / L, 0.5 / L, 1.0, L, 2.0 * L
    out = {
        "dp_nids": (algorithms.DPNIDS(), algorithms.DPStepParams(alpha=a_nids), plf + 1,
                    2 * a_nids * c),
        "dp_extra": (algorithms.DPEXTRA(), algorithms.DPStepParams(alpha=a_extra), plf + 1,
                     2 * a_extra * c),
        "dp_icadmm": (algorithms.DPICADMM(), algorithms.DPICADMMParams(rho=rho, beta=b_admm), plf,
                      2 * c / (b_admm + 2 * rho * deg)),
        "dp_rwadmm": (algorithms.DPRWADMM(), algorithms.DPRWADMMParams(beta=b_rw, xi=plf),
                      12 * plf, 4 * c / (N_AGENTS * b_rw)),
    }
    return {name: _calibrated(*run, epsilon, c, plf) for name, run in out.items()}


def admm13_at(prob, net, epsilon: float, c: float, plf: int = 2000):
    """DP-ADMM [13]'s decaying-step row (reconstructed: IC-ADMM + PVP, ``α_k = α₀γ^k`` with
    γ = ``DECAY``), calibrated over its ``plf`` releases with their decaying Δ_t."""
    L = float(np.max(prob.smoothness()))
    params = algorithms.DPICADMMParams(rho=1.0, beta=L, decay=DECAY, c=c)
    sens = ra.icadmm_sensitivity(net, params, plf).max(axis=0)
    return _calibrated(algorithms.DPICADMM(), params, plf, sens, epsilon, c, plf)


def mradmm_at(prob, net, epsilon: float, c: float, plf: int = 300, theta: float = 1.0):
    """DP-MRADMM at (ε, δ) with ``plf`` private (odd) iterations, K = 2·plf; ``theta`` > 1 is the
    decaying-step row (penalty ρθ^{t−1}, so Δ_t = c/(ρθ^{t−1}d_i) decays too)."""
    L = float(np.max(prob.smoothness()))
    rho, deg = 1.0, 2.0
    params = algorithms.DPMRADMMParams(rho=rho, theta=theta, gamma=1.0 / (L + 2 * rho * deg), c=c)
    sens = ra.mradmm_sensitivity(net, params, plf).max(axis=0)
    return _calibrated(algorithms.DPMRADMM(), params, 2 * plf, sens, epsilon, c, plf)


COUNTS = {"plf": "PLF (releases per agent)", "messages": "messages sent"}
NAMES = {"recal": "RECAL", "dp_recal": "DP-RECAL", "dp_nids": "DP-NIDS", "dp_extra": "DP-EXTRA",
         "dp_icadmm": "DP-IC-ADMM", "dp_rwadmm": "DP-RW-ADMM", "dp_mradmm": "DP-MRADMM",
         "dp_admm13": "DP-ADMM [13]"}


def display_name(name: str) -> str:
    """A method's legend name: ``dp_admm13-decay`` → ``DP-ADMM [13], decaying step``;
    ``-r0``: no ℓ1 term."""
    base, *tags = name.split("-")
    words = {"decay": "decaying step", "r0": "r = 0"}
    return ", ".join([NAMES.get(base, base)] + [words.get(t, t) for t in tags])


def geometric_mean_panel(ax, curves: dict, per_record: int, *, offset: int = 0,
                          log: bool | None = None) -> None:
    """Geometric mean over seeds of each ``(seeds, records)`` RE array against
    ``record · per_record + offset``; log y when the data span a decade (or ``log``). A record
    where some seed is exactly at x* has mean 0: left off the log axis, not drawn at a floor."""
    with np.errstate(divide="ignore"):
        means = {k: np.exp(np.mean(np.log(np.asarray(re, np.float64)), axis=0))
                 for k, re in curves.items()}
    log = set_yscale(ax, *means.values(), log=log)
    for label, mean in means.items():
        plot_band(ax, np.arange(mean.shape[0]) * per_record + offset, mean, log=log, label=label)
    ax.set_ylabel(metric_label("re"))


__all__ = ["COUNTS", "DECAY", "DELTA", "LOG_R", "N_AGENTS", "NAMES", "PAPER_COMM", "X0",
           "admm13_at", "baselines_at", "datasets", "display_name", "dp_recal_params",
           "geometric_mean_panel", "gradient_bound", "mradmm_at", "observe_run", "recal_problem",
           "relative_errors", "run_seeds", "sigma_table", "synthetic_data"]
