"""Reproduction of MFDL (Bellet, Cyffers, Frey, Gaudel, Lerévérend & Taïani, "Unified Privacy
Guarantees for Decentralized Learning via Matrix Factorization", ICLR 2026, arXiv:2510.17480).

``jaxdp reproduce mfdl``: their headline comparisons that need no dataset, on the Florentine
families graph (networkx; 15 agents, self-loops added, ``W = (A + I)`` row-normalised as in their
code). Everything is the IDEAL continuous-Gaussian mechanism's accounting
(:func:`jaxdp.privacy.pairwise.factorization_epsilon`), as in the paper; the runnable algorithm's
sound report is :class:`jaxdp.algorithms.Mafalda`'s.

1. Fig. 2 (accounting of Muffliato, one gossip round, user level, ``T = 10``, attacker 0, RDP at
   ``α = 2``): our MF accounting of ``ε_{u→0}`` against the values of the authors' public code
   for the same setting (``MFDL_FIG2_RDP``), and against Muffliato's own bound
   (:func:`jaxdp.privacy.papers.muffliato_corrected_rdp`: Cyffers et al., NeurIPS 2022, Thm 11 in
   its corrected arXiv version, clipped at the composition bound ``T`` as their code does).
   ``jaxdp reproduce muffliato`` draws the whole figure; this claim checks the numbers.
2. MAFALDA-SGD's encoder: MFDL's surrogate ``sens(C)² tr(G (CᵀC)⁻¹)`` of our optimum
   (certified by the dual bound) beside DP-SGD's identity and the authors' code's optimum
   (``MFDL_CODE_SURROGATE``, their ``MF_OPTIMAL_DL(post_average=True)`` evaluated on the same
   surrogate).
3. The same noise under LDP (the observer sees every message and knows the pairwise secrets),
   against the outsider (it knows none), SecLDP (the outsider or any one curious agent) and PNDP, and MAFALDA against DECOR and Muffliato/DP-SGD noise: the
   models' total noise variance at a fixed ideal ``μ`` (a scale-free number,
   ``μ_max² · Σ_k E‖noise of x^{k+1}‖²`` at unit scales; MFDL's utility surrogate).
4. Zip-DL (Biswas et al., PoPETs 2025) as :func:`jaxdp.channels.zero_sum` runs it (zero-sum noise
   over a sender's outgoing messages, its kept copy excluded; per-message rows of
   :func:`jaxdp.privacy.pairwise.gossip_release` with ``sigma_zero_sum``, ``zero_sum="ring"``, no
   local noise; the row "Zip-DL") in the same
   table: ``μ = ∞`` for every observer of all of a sender's messages (LDP, outsider, SecLDP's
   outsider), and under PNDP for the neighbours of a sender of degree 1 (its one message
   carries no noise); finite for every other pair. Zip-DL's paper puts the kept copy in the
   zero sum (its closed neighbourhood) precisely so that the messages' noise does not cancel for
   an observer of all of them (§3.2); neither it nor MFDL gives a number for this setting.
5. Zip-DL's own construction ("Zip-DL (paper, closed)": Alg. 1, the kept copy inside the zero
   sum weighted by the sender's row of ``W`` over its closed neighbourhood;
   ``gossip_release(zero_sum="closed")``, no local noise) in the same table: finite for every
   observer and every PNDP pair. Against the eavesdropper, by the chain rule of
   :func:`jaxdp.privacy.pairwise.gossip_release`'s docstring, agent ``i``'s value at one
   participation is ``T d_i(d_i − 1)/σ_z²`` on this graph (equal row weights, ``d_i`` the closed
   neighbourhood's size: the mean of a sender's messages carries only ``−N_{i→i}/(d_i − 1)``),
   so the best-connected agent is the worst. No paper gives a number for this setting: the row
   is what our code computes, the IDEAL Gaussian mechanism's value like the rest of the table.
   ``W`` is not symmetric here, so the noise is not removed from the network average.

No dataset is used (MFDL's Fig. 3 trains on Housing; it is not reproduced here).
"""
from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._plotting import figure, finish, save, setting_title
from jaxdp.experiments._report import Report
from jaxdp.privacy.pairwise import (
    factorization_epsilon,
    gossip_release,
    mafalda_encoder,
    model_noise,
    observer_mu2,
    observers,
    participation_classes,
    surrogate_loss,
    workload_gram,
)
from jaxdp.privacy.papers import muffliato_corrected_rdp

MFDL_FIG2_RDP = (np.inf, 10.9109533486, 0.1300924848, 0.0603584592, 0.1591753296, 0.3324859211,
                 0.5089556268, 0.5363897541, 0.4365076955, 0.4559212388, 0.1278733205,
                 0.0647522412, 0.2517727721, 0.0676243383, 0.0212463925)
"""``ε_{u→0}`` (RDP, α = 2) per agent ``u`` from the authors' public implementation of their
Fig. 2 accounting (Florentine, T = 10, participation every step); their Muffliato bound is 10
(clipped) for every agent."""
MFDL_CODE_SURROGATE = 103.34924948382297
"""The surrogate of the authors' code's MAFALDA encoder (Florentine, T = 12, one epoch)."""
FIG2_STEPS, FIG2_ORDER, ATTACKER = 10, 2.0, 0
THREATS = ("LDP", "outsider", "SecLDP", "PNDP")
"""LDP: every message, the secrets known; outsider: every message, no secret; SecLDP: the worst
of the outsider and any one curious agent (its own secrets); PNDP: each agent's received rows."""
SURROGATE_STEPS = 12


def florentine():
    """``(W, adjacency)``: Florentine families, MFDL's gossip matrix (self-loops, rows
    normalised: :func:`jaxdp.experiments.muffliato.mfdl_matrix`)."""
    import networkx as nx

    from jaxdp.experiments.muffliato import mfdl_matrix
    W = mfdl_matrix(nx.florentine_families_graph())
    return W, W > 0


def broadcast_edges(adjacency):
    """``(senders, receivers)``: ``j → i`` wherever ``i`` averages ``j`` (``i ≠ j``)."""
    receivers, senders = np.nonzero(adjacency & ~np.eye(len(adjacency), dtype=bool))
    return senders, receivers


def fig2_mf_rdp(W, adjacency, steps: int = FIG2_STEPS, order: float = FIG2_ORDER):
    """``(N,)`` our MF accounting of Muffliato's ``ε_{u→attacker}`` (RDP at ``order``)."""
    release = _release(W, adjacency, steps)
    attacker = observers(release, "neighbours")[ATTACKER]
    mu2, _ = observer_mu2(release, attacker, participation_classes("every_step", steps), np)
    return order * np.asarray(mu2) / 2


def _release(W, adjacency, steps: int, decoder=None, sigma_pair: float = 0.0,
             zero_sum: str | None = None):
    """Unit-scale local noise on broadcast rows, or (``zero_sum``: ``"ring"``, jaxdp's channel,
    or ``"closed"``, Zip-DL's Alg. 1) Zip-DL's zero-sum message noise alone on per-message
    rows."""
    if zero_sum is not None:
        return gossip_release(jnp.asarray(W), broadcast_edges(adjacency), steps, 0.0,
                              sigma_zero_sum=1.0, zero_sum=zero_sum)
    return gossip_release(jnp.asarray(W), broadcast_edges(adjacency), steps, 1.0,
                          decoder=decoder, sigma_pair=sigma_pair, broadcast=True)


def pair_mu2(release, threat: str) -> np.ndarray:
    """``(N, observers)`` ideal ``μ²`` under ``threat``, single participation, ``0`` for an agent
    observing itself (not a pair)."""
    mu = factorization_epsilon(release, 1e-5, threat, participation=release.steps).mu
    if mu.shape[1] > 1:
        mu = np.where(np.eye(len(mu), dtype=bool), 0.0, mu)
    return mu ** 2


def worst_mu2(release, threat: str) -> float:
    """The worst ideal ``μ²`` over the pairs of ``threat`` (``inf`` if any pair's is)."""
    return float(np.max(pair_mu2(release, threat)))


def mfdl(out_dir="out/mfdl", *, fig2_steps: int = FIG2_STEPS,
         surrogate_steps: int = SURROGATE_STEPS, iterations: int = 200,
         progress: bool = False) -> Report:
    """The claims of the module docstring (float64)."""
    del progress
    with jax.enable_x64(True):
        return _mfdl(Path(out_dir), fig2_steps, surrogate_steps, iterations)


def _mfdl(out: Path, fig2_steps: int, steps: int, iterations: int) -> Report:
    report = Report("mfdl", "MFDL (ICLR 2026): MF accounting, MAFALDA-SGD's encoder, threat "
                    "models (Florentine families; ideal Gaussian mechanism)")
    out.mkdir(parents=True, exist_ok=True)
    W, adj = florentine()
    ours = fig2_mf_rdp(W, adj, fig2_steps)
    theirs = np.asarray(MFDL_FIG2_RDP)
    thm11 = muffliato_corrected_rdp(W, fig2_steps, FIG2_ORDER, ldp_clip=True)[:, ATTACKER]
    others = np.arange(len(W)) != ATTACKER
    composition = FIG2_ORDER / 2 * fig2_steps  # the LDP value: T Gaussian releases at α
    if fig2_steps == FIG2_STEPS:
        _fig2_claim(report, ours[others], theirs[others], composition)
    far = others & (ours < composition * (1 - 1e-6))  # not the attacker's direct neighbour
    ratio = np.max(ours[far & (thm11 > 0)] / thm11[far & (thm11 > 0)], initial=0.0)
    report.claim("fig2-tighter", "MF accounting is tighter than Muffliato's Thm 11 for every agent "
                 "not adjacent to the attacker", paper="Fig. 2: MF below Muffliato's bound (their "
                 "code: Thm 11 gives 10, the composition bound, for every agent here)",
                 ours=f"Thm 11: {_fmt(thm11[others])}; MF/Thm 11 ≤ {ratio:.3g} on {far.sum()} "
                 "agents", reproduced=bool(np.all(ours[far] <= thm11[far]) and ratio < 1
                                           and far.sum() >= 10))
    C, loss = mafalda_encoder(W, steps, iterations=iterations)
    gram = workload_gram(jnp.asarray(W), steps)
    single = participation_classes(steps, steps)
    ldp = float(surrogate_loss(jnp.eye(steps), gram, single))
    loss = float(loss)
    code = f"authors' code's encoder: {MFDL_CODE_SURROGATE:.6g}" if steps == SURROGATE_STEPS \
        else "authors' code: T = 12 only"
    report.claim("mafalda-surrogate", f"MAFALDA's optimal encoder lowers MFDL's surrogate below "
                 f"DP-SGD's independent noise (Florentine, T = {steps}, one participation)",
                 paper=f"MAFALDA below DP-SGD (Fig. 3); {code}",
                 ours=f"{loss:.6g} (optimum; DP-SGD {ldp:.6g}: −{100 * (1 - loss / ldp):.1f} %)",
                 reproduced=loss < ldp and (steps != SURROGATE_STEPS
                                            or loss <= MFDL_CODE_SURROGATE * (1 + 1e-9)))

    table = _threat_table(W, adj, steps, np.asarray(jnp.linalg.inv(C)))
    decor = {t: table[("DECOR", t)] for t in THREATS}
    tol = 1 + 1e-9
    report.claim("threat-order", "the same noise (DECOR: local + pairwise secrets) is accounted "
                 "no looser under SecLDP and PNDP than under LDP, and strictly tighter against "
                 "the outsider who knows no secret (SecLDP's and PNDP's worst pair here is an "
                 "agent of degree 1, all of whose secrets its one neighbour knows)",
                 paper="the trust models' order LDP ⪰ SecLDP, PNDP",
                 ours=", ".join(f"{t}: worst μ² {v[0]:.3g}" for t, v in decor.items()),
                 reproduced=decor["outsider"][0] < decor["LDP"][0]
                 and max(decor["SecLDP"][0], decor["PNDP"][0]) <= decor["LDP"][0] * tol)
    ldp_rows = {m: table[(m, "LDP")][0] * table[(m, "LDP")][1] for m in ("MAFALDA", "DP-SGD",
                                                                         "DECOR")}
    report.claim("mafalda-vs-baselines", "at a fixed LDP μ, MAFALDA's noise on the models is the "
                 "smallest (vs DP-SGD/Muffliato and DECOR)", paper="MAFALDA-SGD outperforms "
                 "(Fig. 3, Housing)", ours=", ".join(f"{m}: {v:.4g}" for m, v in ldp_rows.items()),
                 reproduced=ldp_rows["MAFALDA"] < min(ldp_rows["DP-SGD"], ldp_rows["DECOR"]))
    _zip_dl_claim(report, W, adj, steps, table)
    _zip_closed_claim(report, W, adj, steps, table)
    report.files.append(_plot(out, ours, thm11, table))
    np.savez(out / "mfdl.npz", fig2_mf=ours, fig2_thm11=thm11, fig2_code=theirs,
             encoder=np.asarray(C), surrogate=loss, surrogate_ldp=ldp,
             table_rows=np.array([" ".join(k) for k in table]),
             table_mu2=np.array([v[0] for v in table.values()]),
             table_variance=np.array([v[1] for v in table.values()]))
    report.files.append(str(out / "mfdl.npz"))
    report.notes += [("Ideal continuous-Gaussian accounting throughout, as in MFDL; the runnable "
                     "MAFALDA-SGD's sound (lattice, adaptive) ε is its privacy report's."),
                     ("No dataset: MFDL's Housing/FEMNIST training (Fig. 3) is not run. "
                     "\"Zip-DL\" is jaxdp's zero_sum channel (the kept copy outside the zero "
                     "sum); \"Zip-DL (paper, closed)\" the paper's closed-neighbourhood "
                     "construction, accounted only (no channel runs it)."),
                     ("MFDL's code minimises tr(X⁻¹ SᵀS) with S Sᵀ = J G J (its Cholesky "
                     "surrogate), not tr(G X⁻¹): its encoder is slightly off the paper's "
                     "surrogate optimum (claim mafalda-surrogate).")]
    report.write(out)
    return report


METHODS = ("DP-SGD", "MAFALDA", "DECOR", "Zip-DL", "Zip-DL (paper, closed)")
"""The threat table's rows: "Zip-DL" is jaxdp's ``zero_sum`` channel (the ring), "Zip-DL (paper,
closed)" the paper's closed-neighbourhood construction
(:func:`jaxdp.privacy.pairwise.gossip_release`)."""
ZIP_CLOSED = METHODS[-1]


def _fig2_claim(report: Report, ours, theirs, composition: float) -> None:
    """Ours equals the authors' value where their ``Σ|Q|`` is the bound, and is below it where
    ``|P| λ_max(Q)`` is tighter (an observer whose ``Q`` has negative entries)."""
    same = np.abs(ours - theirs) <= 1e-6 * theirs
    below = ~same & (ours < theirs)
    gap = float(np.max(np.abs(ours[same] - theirs[same]) / theirs[same], initial=0.0))
    lower = "; ".join(f"{o:.4g} vs {t:.4g}" for o, t in zip(ours[below], theirs[below]))
    report.claim("fig2-mf-accounting", ("MF accounting of Muffliato (PNDP, T = 10, attacker "
                 "0, RDP α = 2) on Florentine"), paper=f"authors' code: {_fmt(theirs)}",
                 ours=f"{_fmt(ours)}: equal on {same.sum()} agents (max relative gap {gap:.1e})"
                 + (f", below on {below.sum()} ({lower}: their Σ|Q| exceeds the composition "
                    f"value {composition:g} that every observer here is under; our "
                    "min(Σ|Q|, T λ_max(Q)) returns it)" if below.any() else ""),
                 reproduced=bool(np.all(same | below) and same.sum() >= len(ours) - 1))


def _threat_table(W, adj, steps: int, decoder) -> dict:
    """``(method, threat) → (μ_max², variance)`` at unit scales (single participation); their
    product is the models' noise variance at any fixed ``μ``. LDP: the secrets are known (Zip-DL
    has none: LDP is its outsider)."""
    rows = {}
    for method, kw in zip(METHODS, ({}, {"decoder": decoder}, {"sigma_pair": 1.0},
                                    {"zero_sum": "ring"}, {"zero_sum": "closed"})):
        release = _release(W, adj, steps, **kw)
        variance = float(model_noise(release))
        local = _release(W, adj, steps, **dict(kw, sigma_pair=0.0))
        rows[(method, "LDP")] = (worst_mu2(local, "eavesdropper"), variance)
        rows[(method, "outsider")] = (worst_mu2(release, "eavesdropper"), variance)
        rows[(method, "SecLDP")] = (worst_mu2(release, "secret_pairs"), variance)
        rows[(method, "PNDP")] = (worst_mu2(release, "neighbours"), variance)
    return rows


def _zip_dl_claim(report: Report, W, adj, steps: int, table) -> None:
    """Claim 4 of the module docstring: where Zip-DL's zero-sum noise (jaxdp's channel) is ∞."""
    pndp = pair_mu2(_release(W, adj, steps, zero_sum="ring"), "neighbours")  # (u, v)
    senders, receivers = broadcast_edges(adj)
    degree = np.bincount(senders, minlength=len(W))
    neighbour = np.zeros(pndp.shape, bool)
    neighbour[senders, receivers] = True
    leaked = neighbour & (degree[:, None] == 1)
    finite = ~np.eye(len(W), dtype=bool) & ~leaked
    observers_inf = [t for t in ("LDP", "outsider", "SecLDP") if np.isinf(table[("Zip-DL", t)][0])]
    report.claim("zip-dl-threats", "Zip-DL's zero-sum noise, the kept copy outside the sum "
                 "(jaxdp's zero_sum channel), gives an observer of all of a sender's messages its "
                 "value in the clear (μ = ∞ under LDP, against the outsider and under SecLDP) and "
                 "under PNDP exactly the neighbours of a degree-1 sender; every other pair is "
                 f"finite (Florentine, T = {steps}, unit σ_z, no local noise)",
                 paper="Zip-DL §3.2 (PoPETs 2025): with the sender's own copy inside the zero sum "
                 "(its closed neighbourhood) the noises of the messages it sends do not cancel "
                 "out for attackers around it, i.e. without that copy they do; no number for "
                 "this setting (nor in MFDL)",
                 ours=f"∞ under {', '.join(observers_inf) or 'none'}; PNDP ∞ on "
                 f"{int(np.sum(np.isinf(pndp)))} pairs ({int(leaked.sum())} degree-1 senders' "
                 f"neighbours), worst finite μ² {np.max(pndp[finite]):.3g} on the other "
                 f"{int(finite.sum())}; model noise {table[('Zip-DL', 'PNDP')][1]:.4g} (DP-SGD "
                 f"{table[('DP-SGD', 'PNDP')][1]:.4g})",
                 reproduced=len(observers_inf) == 3 and np.array_equal(np.isinf(pndp), leaked))


def _zip_closed_claim(report: Report, W, adj, steps: int, table) -> None:
    """Claim 5 of the module docstring: Zip-DL's closed-neighbourhood construction, what our
    accountant computes (no paper number exists for this setting)."""
    pndp = pair_mu2(_release(W, adj, steps, zero_sum="closed"), "neighbours")
    off = ~np.eye(len(W), dtype=bool)
    worst = {t: table[(ZIP_CLOSED, t)][0] for t in THREATS}
    closed_size = np.sum(adj | np.eye(len(W), dtype=bool), axis=1)  # d_i (equal row weights)
    chain = steps * np.max(closed_size * (closed_size - 1))  # the LDP value by the chain rule
    tol = 1 + 1e-9
    report.claim("zip-dl-closed-threats", "Zip-DL's own construction (Alg. 1: the kept copy "
                 "inside the weighted zero sum over the closed neighbourhood) is finite for every "
                 "observer: LDP (= the outsider: no secrets; the chain rule's value), SecLDP "
                 "(no lower than the outsider: a curious agent sees as much and knows its own "
                 "seeds) and every PNDP pair, "
                 f"degree-1 senders' neighbours included (Florentine, T = {steps}, unit σ_z, no "
                 "local noise; ideal Gaussian mechanism)",
                 paper="Zip-DL §3.2, Alg. 1 (PoPETs 2025): the closed neighbourhood keeps the "
                 "noises of the messages a node sends from cancelling out; neither it nor MFDL "
                 "gives a number for this setting: this row is what our code computes",
                 ours=", ".join(f"{t}: worst μ² {v:.4g}" for t, v in worst.items())
                 + f" (LDP by the chain rule: T·max d_i(d_i − 1) = {chain:g}); PNDP finite on "
                 f"all {int(off.sum())} pairs; model noise "
                 f"{table[(ZIP_CLOSED, 'PNDP')][1]:.4g} (ring {table[('Zip-DL', 'PNDP')][1]:.4g}, "
                 f"DP-SGD {table[('DP-SGD', 'PNDP')][1]:.4g})",
                 reproduced=bool(all(np.isfinite(v) and v > 0 for v in worst.values())
                                 and np.all(np.isfinite(pndp[off]))
                                 and np.isclose(worst["LDP"], worst["outsider"], rtol=1e-9)
                                 and np.isclose(worst["LDP"], chain, rtol=1e-8)
                                 and worst["SecLDP"] * tol >= worst["outsider"]))


def _plot(out: Path, fig2_mf, thm11, table) -> str:
    fig, (ax, ax_t) = figure(2)
    shown = np.isfinite(fig2_mf) & (fig2_mf > 0)  # log axis: an agent the attacker cannot reach
    ax.semilogy(np.flatnonzero(shown), fig2_mf[shown], "o", label="MF accounting (ours)")
    shown = (thm11 > 0) & np.isfinite(fig2_mf)  # not the attacker itself
    ax.semilogy(np.flatnonzero(shown), thm11[shown], "x", label="Muffliato Thm 11 (clipped at T)")
    ax.set(xlabel="protected agent u", ylabel="RDP ε(u → 0), α = 2",
           title="Fig. 2: Muffliato on Florentine, T = 10")
    ax.legend()
    values = np.array([[table[(m, t)][0] * table[(m, t)][1] for t in THREATS] for m in METHODS])
    finite = values[np.isfinite(values) & (values > 0)]
    top = 2 * np.max(finite)  # log axis: the closed Zip-DL row is 100× the others'
    ax_t.set_yscale("log")
    for j, threat in enumerate(THREATS):
        x = np.arange(len(METHODS)) + 0.2 * (j - 1.5)
        bars = ax_t.bar(x, np.minimum(values[:, j], top), 0.2, label=threat, color=f"C{j}")
        for bar, value in zip(bars, values[:, j]):
            if np.isinf(value):  # ∞: a hatched bar to the top of the axes
                bar.set_hatch("//")
                ax_t.text(bar.get_x() + bar.get_width() / 2, top, "∞", ha="center",
                          va="bottom")
    ax_t.set_ylim(0.5 * np.min(finite), 4 * top)
    ax_t.set_xticks(np.arange(len(METHODS)), [m.replace(" (", "\n(") for m in METHODS])
    ax_t.set(ylabel="noise variance at fixed μ (log)",
             title="noise on the models at equal μ (hatched: ∞)")
    ax_t.legend()
    finish(fig, [ax, ax_t], "MFDL (ICLR 2026), ideal MF accounting: "
           + setting_title("Muffliato / MAFALDA / DECOR / Zip-DL noise", "Florentine families", len(fig2_mf),
                           "no", epsilon="ε per panel (ideal Gaussian)"))
    return save(fig, out / "mfdl.png")


def _fmt(values) -> str:
    return "[" + ", ".join(f"{v:.4g}" for v in values) + "]"
