"""What paper 002's reproductions share (see :mod:`jaxdp.experiments.dpadmm` for the setting):
the constants of Sec. VI and Table II, the :class:`Setup`, Sec. VI's metrics
(:func:`paper_metrics`), the data and the per-run split, the jitted runs over the (ε, δ) grid,
and small helpers for the reports and figures.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp import network, problems
from jaxdp.algorithms.dpadmm.algorithm import DPADMM, DPADMMParams, estimate_dw
from jaxdp.algorithms.dpadmm.baselines import (
    ConsensusADMM,
    ConsensusADMMParams,
    NaivePrivateADMM,
    NaivePrivateADMMParams,
)
from jaxdp.algorithms.dpadmm.privacy import PAPER_DELTAS, PAPER_EPS
from jaxdp.engine import grid, simulate
from jaxdp._plotting import setting_title

N_PROVIDERS, M_ROWS, N_PRETRAIN, N_TEST = 100, 210, 162, 9000  # Table II
LAMBDA, RHO, STEPS = 0.17, 1.0, 100  # Sec. VI
CONVENTION = {"l1": "thm3", "l2": "thm4"}
ALG2_SETTINGS = ((0.05, 1e-3), (0.1, 1e-3))  # Figs. 4 and 5
NEAR = 0.02  # "nearly as good as non-private": within 2 accuracy points (our reading of Sec. VI-B)
MUCH_BETTER = 0.05  # "much better accuracy than Algorithm 2": more than 5 points


@dataclasses.dataclass(frozen=True)
class Setup:
    """One reproduction's setting; the defaults are the paper's (Sec. VI, Table II).

    Attributes:
      seeds: runs (random split + noise); for ``dpadmm-table3``, timing repeats (best kept).
      steps: T.
      eps_grid, delta_grid: the per-iteration (ε, δ) grid.
      providers, rows: N and m_i (smaller values only to test the pipeline quickly).
      adult: path of the user's ``adult.data``; ``None`` uses the synthetic stand-in.
      progress: a progress bar over runs.
      sampler: the private algorithms' noise sampler (``"lattice"``, the default, or
        ``"float"``: the paper's real-valued law, for a lattice-vs-float comparison).
      first_run: the first run's index (its split and noise key); runs are
        ``first_run .. first_run + seeds − 1``, so two Setups can draw independent runs.
    """

    seeds: int = 10
    steps: int = STEPS
    eps_grid: tuple = PAPER_EPS
    delta_grid: tuple = PAPER_DELTAS
    providers: int = N_PROVIDERS
    rows: int = M_ROWS
    adult: str | None = None
    progress: bool = False
    sampler: str = "lattice"
    first_run: int = 0

    def loss(self, kind: str):
        """(loss name, per-provider reg with weight λ/N) of the ℓ1 or ℓ2 model."""
        c = LAMBDA / self.providers
        return ("l1_logistic", {"lam": 0.0, "l1": c}) if kind == "l1" else ("logistic",
                                                                               {"lam": c})

    @property
    def points(self) -> list:
        """(δ, ε) of each grid point, in ``jaxdp.grid``'s order (δ outer, ε inner)."""
        return [(dl, e) for dl in self.delta_grid for e in self.eps_grid]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.delta_grid), len(self.eps_grid)


def paper_metrics(problem, w_tilde, w, convention: str) -> dict:
    """Sec. VI's metrics along one trajectory, for t = 1..T.

    Args:
      problem: the training Problem (with its test set).
      w_tilde: (T, N, d) the released w̃_i^1..w̃_i^T (messages ``"w_tilde"``).
      w: (T, d) the broadcast w^1..w^T.
      convention: ``"thm3"`` (w̄_i^t averages w̃^0..w̃^{t−1}) or ``"thm4"`` (w̃^1..w̃^t).

    Returns:
      ``augmented_objective``, ``empirical_loss``, ``test_accuracy``: (T,) arrays.
    """
    t = jnp.arange(1, w.shape[0] + 1, dtype=w.dtype)
    if convention == "thm3":
        w_tilde = jnp.concatenate([jnp.zeros_like(w_tilde[:1]), w_tilde[:-1]])  # w̃^0 = 0
    w_bar_i = jnp.cumsum(w_tilde, axis=0) / t[:, None, None]  # Sec. V
    w_bar = jnp.cumsum(w, axis=0) / t[:, None]
    gap = jnp.sqrt(jnp.sum((w_bar_i - w_bar[:, None, :]) ** 2, axis=-1))  # (T, N)
    augmented = jnp.sum(jax.vmap(problem.local_losses)(w_bar_i) + gap, axis=1)  # β = 1
    data_only = dataclasses.replace(problem, reg={k: 0.0 * v for k, v in problem.reg.items()})
    correct = jnp.sign(w @ problem.test_features.T) == problem.test_labels[None, :]
    return {"augmented_objective": augmented,
            "empirical_loss": jax.vmap(data_only.objective)(w),
            "test_accuracy": jnp.mean(correct.astype(w.dtype), axis=1)}


# -- data and runs -----------------------------------------------------------------------------
def paper_data(setup: Setup):
    """Normalized (features, labels) and a description; the user's file or the stand-in."""
    if setup.adult is None:
        features, labels = problems.adult_synthetic(seed=0)
        source = "synthetic Adult stand-in (adult_synthetic, 30162 rows): not the UCI data"
    else:
        features, labels = problems.load_adult(setup.adult)
        source = f"UCI Adult from {setup.adult} ({len(labels)} complete rows)"
    need = N_PRETRAIN + setup.providers * setup.rows + 1
    if len(labels) < need:
        raise ValueError(f"the paper's split (Table II) needs at least {need} complete rows; "
                         f"{source} has {len(labels)}")
    return problems.normalize_adult(features), labels, source


def paper_split(setup: Setup, features, labels, kind: str, run: int):
    """Table II for run ``run``: (training Problem with its test rows, D_w from 162 rows)."""
    n_train = setup.providers * setup.rows
    order = np.random.default_rng(1000 + run).permutation(len(labels))
    pre, train = order[:N_PRETRAIN], order[N_PRETRAIN:N_PRETRAIN + n_train]
    test = order[N_PRETRAIN + n_train:][:N_TEST]
    loss, reg = setup.loss(kind)
    shape = (setup.providers, setup.rows)
    problem = problems.from_arrays(
        features[train].reshape(shape + features.shape[1:]), labels[train].reshape(shape),
        loss=loss, reg=reg, test=(features[test], labels[test]), name=f"adult-{kind}",
        reference=False)
    return problem, estimate_dw(features[pre], labels[pre], loss=problem.loss, reg=reg)


def _trajectories(alg, problem, net, params_grid, key, steps, convention):
    """Every grid point of one run (vmapped), metrics from the observed messages: (G, T) each."""
    def one(p):
        _, _, seen = simulate(alg, problem, net, p, key, steps=steps, record_every=steps,
                              metrics=lambda *_: {}, observe=True)
        messages = seen["messages"]
        return paper_metrics(problem, messages["w_tilde"], messages["w"][:, 0], convention)

    return jax.vmap(one)(params_grid)


_trajectories_jit = jax.jit(_trajectories, static_argnames=("alg", "steps", "convention"))


def _configs(setup, kind, D_w, alg2_settings, alg2_variants):
    """Algorithm → (instance, Params grid) for one run; ``D_w`` is the run's estimate."""
    dp = grid(DPADMMParams(rho=RHO, D_w=D_w), delta=setup.delta_grid, eps=setup.eps_grid)
    out = {"dp_admm": (DPADMM(sampler=setup.sampler), dp),
           "nonprivate": (ConsensusADMM(), grid(ConsensusADMMParams(rho=RHO), rho=[RHO]))}
    if kind == "l2" and alg2_settings:
        eps, delta = zip(*alg2_settings)
        naive = NaivePrivateADMMParams(rho=RHO)
        pts = jax.tree.map(lambda *v: jnp.stack(v), *[naive.replace(eps=e, delta=dl)
                                                      for e, dl in zip(eps, delta)])
        for variant in alg2_variants:
            out[f"alg2_{variant}"] = (NaivePrivateADMM(variant=variant, sampler=setup.sampler),
                                      pts)
    return out


def run_family(setup, data, kind, alg2_settings=(), alg2_variants=("paper",)):
    """All runs of one regularizer: {algorithm: {metric: (R, G, T)}}, and the D_w per run."""
    features, labels, _ = data
    net = network.make_network("complete", setup.providers)
    out, dws = {}, []
    runs = range(setup.first_run, setup.first_run + setup.seeds)
    for r in progress_iter(runs, setup.progress, f"dpadmm {kind}"):
        problem, D_w = paper_split(setup, features, labels, kind, r)
        dws.append(D_w)
        for name, (alg, params) in _configs(setup, kind, D_w, alg2_settings,
                                            alg2_variants).items():
            for g in range(np.shape(params.rho)[0]):  # host validation, as jaxdp.sweep does
                alg.validate(jax.tree.map(lambda a, g=g: a[g], params), problem, net)
            res = _trajectories_jit(alg, problem, net, params, jax.random.key(r), setup.steps,
                                    CONVENTION[kind])
            for metric, value in res.items():
                out.setdefault(name, {}).setdefault(metric, []).append(np.asarray(value))
    return {n: {m: np.stack(v) for m, v in ms.items()} for n, ms in out.items()}, np.array(dws)


def progress_iter(it, enabled, desc):
    if not enabled:
        return it
    from tqdm.auto import tqdm

    return tqdm(it, desc=desc, leave=False)


def mean_se(a: np.ndarray, axis=0):
    n = a.shape[axis]
    return a.mean(axis), a.std(axis, ddof=1) / np.sqrt(n) if n > 1 else np.zeros_like(a.mean(axis))


def save_npz(path: Path, results: dict, **extra) -> str:
    flat = {f"{kind}/{alg}/{metric}": value for kind, algs in results.items()
            for alg, metrics in algs.items() for metric, value in metrics.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **flat, **extra)
    return str(path)


KIND = {"l1": "ℓ1-regularized", "l2": "ℓ2-regularized"}


def title_setting(setup, kinds: str, epsilon: str = "per-iteration ε and total ε̄ in the legend",
             seeds: int | None = None) -> str:
    """The title's setting: model, data, the complete graph, N, runs and what ε is."""
    data = "synthetic Adult stand-in" if setup.adult is None else "UCI Adult"
    return setting_title(f"{kinds}-regularized logistic regression on {data}",
                         "the complete graph", setup.providers,
                         setup.seeds if seeds is None else seeds, epsilon)


def viridis_colors(n):
    import matplotlib

    return [matplotlib.colormaps["viridis"](x) for x in np.linspace(0, 0.9, n)]


__all__ = ["ALG2_SETTINGS", "CONVENTION", "KIND", "LAMBDA", "MUCH_BETTER", "M_ROWS", "NEAR",
           "N_PRETRAIN", "N_PROVIDERS", "N_TEST", "RHO", "STEPS", "Setup", "mean_se",
           "paper_data", "paper_metrics", "paper_split", "progress_iter", "run_family",
           "save_npz", "title_setting", "viridis_colors"]
