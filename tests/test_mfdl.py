"""``jaxdp reproduce mfdl`` (MFDL, ICLR 2026): tiny settings, the Fig. 2 accounting against the
authors' values, and the figure's standard."""
import jax
import numpy as np

from jaxdp._plotting import figure_problems, recording
from jaxdp.experiments import REPRODUCTIONS
from jaxdp.experiments.mfdl import (
    ATTACKER,
    MFDL_FIG2_RDP,
    THREATS,
    ZIP_CLOSED,
    fig2_mf_rdp,
    florentine,
)


def test_fig2_accounting_equals_the_authors_values():
    with jax.enable_x64(True):
        W, adj = florentine()
        ours = fig2_mf_rdp(W, adj, 10)
    theirs = np.asarray(MFDL_FIG2_RDP)
    assert np.isinf(ours[ATTACKER]) and np.isinf(theirs[ATTACKER])
    finite = np.isfinite(theirs)
    ours, theirs = ours[finite], theirs[finite]
    same = np.isclose(ours, theirs, rtol=1e-7, atol=0)
    assert same.sum() == 13, (ours, theirs)  # every agent but the attacker's neighbour 0...
    # ...where their Σ|Q| (10.91) exceeds the composition value T α / 2 = 10, which bounds
    # every observer here (its knowledge is the eavesdropper's plus its own noise): the
    # spectral bound T λ_max(Q) returns it
    np.testing.assert_allclose(ours[~same], 10.0, rtol=1e-9)
    assert np.all(theirs[~same] > 10.5)


def test_reproduction_runs_at_tiny_settings_with_a_standard_figure(tmp_path):
    with recording() as figures:
        report = REPRODUCTIONS["mfdl"](tmp_path, fig2_steps=3, surrogate_steps=4, iterations=30)
    ids = {c.id: c for c in report.claims}
    assert set(ids) == {"fig2-tighter", "mafalda-surrogate", "threat-order",
                        "mafalda-vs-baselines", "zip-dl-threats",
                        "zip-dl-closed-threats"}  # fig2: T = 10 only
    assert ids["mafalda-surrogate"].reproduced and ids["threat-order"].reproduced
    assert ids["zip-dl-threats"].reproduced, ids["zip-dl-threats"].ours
    assert ids["zip-dl-closed-threats"].reproduced, ids["zip-dl-closed-threats"].ours
    saved = np.load(tmp_path / "mfdl.npz")
    table = dict(zip(saved["table_rows"], saved["table_mu2"]))
    ring = [table[f"Zip-DL {t}"] for t in THREATS]
    closed = [table[f"{ZIP_CLOSED} {t}"] for t in THREATS]
    assert np.all(np.isinf(ring[:3])) and np.all(np.isfinite(closed)), (ring, closed)
    # the paper's construction against the eavesdropper: T · max_i d_i(d_i − 1), d_i the closed
    # neighbourhood's size (gossip_release's chain rule; equal row weights on Florentine)
    _, adj = florentine()
    size = adj.sum(1)  # the self-loop is in adj
    np.testing.assert_allclose(closed[0], 4 * np.max(size * (size - 1)), rtol=1e-8)
    assert closed[1] == closed[0] and closed[2] >= closed[0] * (1 - 1e-9)
    (fig,) = figures
    assert figure_problems(fig) == [], fig.get_suptitle()
    assert (tmp_path / "report.md").exists()
