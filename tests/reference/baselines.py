"""Per-node references for the non-private baselines, written from each paper's node-level form.

Every function advances one step for every agent with explicit loops over agents and neighbours and
returns ``(state, messages)`` as numpy dicts. ``noise`` is the draw the JAX step received.
"""
import numpy as np

from tests.reference.common import local_grad, mix_node, neighbours


def dgd(st, noise, problem, W, p, k, private=False):
    N = W.shape[0]
    x = st["x"]
    new = np.zeros_like(x)
    for i in range(N):
        g = local_grad(problem, i, x[i])
        step = _agent(p["alpha"], i) / (k + 1) ** float(p["gamma"])
        if private:
            c = _agent(p["clip"], i)
            g = g * min(1.0, c / max(np.linalg.norm(g), 1e-300))
            g = g + _agent(p["sigma"], i) * c * noise["xi"][i]
        new[i] = mix_node(W, x, i) - step * g  # Nedić & Ozdaglar (2)
    return {"x": new}, {"x": x}


def _prox(problem, z, step):
    """Agent-wise prox of ``step · l1‖·‖₁`` (soft thresholding); the identity without ℓ1."""
    key = problem.loss.l1_key
    if key is None:
        return z
    t = step * float(problem.reg[key])
    return np.sign(z) * np.maximum(np.abs(z) - t, 0.0)


def extra(st, noise, problem, W, p, k):
    """PG-EXTRA (Shi, Ling, Wu & Yin, IEEE TSP 2015, eq. (4)); EXTRA (3.1)–(3.2) when z = x."""
    N, a = W.shape[0], float(p["alpha"])
    x, z, xp, gp = st["x"], st["z"], st["x_prev"], st["g_prev"]
    z_new, g = np.zeros_like(x), np.zeros_like(x)
    for i in range(N):
        g[i] = local_grad(problem, i, x[i])
        if k == 0:
            z_new[i] = mix_node(W, x, i) - a * g[i]  # (3.1): z¹ = W x⁰ − α∇F(x⁰)
        else:  # (4): z^{k+1} = z^k + W x^k − W~ x^{k−1} − α(g^k − g^{k−1}), W~ = (I+W)/2
            z_new[i] = z[i] + mix_node(W, x, i) - 0.5 * (xp[i] + mix_node(W, xp, i)) \
                - a * (g[i] - gp[i])
    wx = np.array([mix_node(W, x, i) for i in range(N)])  # what the stacked step keeps
    return {"x": _prox(problem, z_new, a), "z": z_new, "x_prev": x, "g_prev": g,
            "wx_prev": wx}, {"x": x}


def nids(st, noise, problem, W, p, k):
    """NIDS (Li, Shi & Yan, IEEE TSP 2019, Alg. 1); eq. (9) when z = x."""
    N, a = W.shape[0], float(p["alpha"])
    x, z, xp, gp = st["x"], st["z"], st["x_prev"], st["g_prev"]
    g = np.array([local_grad(problem, i, x[i]) for i in range(N)])
    v = x if k == 0 else 2 * x - xp - a * (g - gp)  # the message (x⁰, public, at k = 0)
    z_new = np.zeros_like(x)
    for i in range(N):  # z¹ = x⁰ − α∇F(x⁰); z^{k+1} = z^k − x^k + W~ v^k
        z_new[i] = x[i] - a * g[i] if k == 0 else z[i] - x[i] + 0.5 * (v[i] + mix_node(W, v, i))
    return {"x": _prox(problem, z_new, a), "z": z_new, "x_prev": x, "g_prev": g}, {"v": v}


def diging(st, noise, problem, W, p, k):
    N, a = W.shape[0], np.broadcast_to(np.asarray(p["alpha"], np.float64), (W.shape[0],))
    x, y, g = st["x"], st["y"], st["g"]
    xn, yn, gn = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    for i in range(N):
        xn[i] = mix_node(W, x, i) - a[i] * y[i]  # (3a), α_i per agent (uncoordinated)
    for i in range(N):
        gn[i] = local_grad(problem, i, xn[i])
        yn[i] = mix_node(W, y, i) + gn[i] - g[i]  # (3b)
    return {"x": xn, "y": yn, "g": gn}, {"x": x, "y": y}


def admm(st, noise, problem, W, p, k, local_steps, senders, receivers):
    """Relaxed ADMM with per-edge dicts z[(i, j)] (held by i about j), eq. (12)."""
    N = W.shape[0]
    rho, a = float(p["rho"]), float(p["relax"])
    x = st["x"]
    z = {(int(r), int(s)): st["z"][e] for e, (s, r) in enumerate(zip(senders, receivers))}
    nbrs = [sorted(j for (i2, j) in z if i2 == i) for i in range(N)]
    xn = np.zeros_like(x)
    for i in range(N):
        zsum = sum(z[(i, j)] for j in nbrs[i])
        phi = x[i].copy()
        for _ in range(local_steps):
            phi = phi - _agent(p["gamma"], i) * (
                local_grad(problem, i, phi) + rho * len(nbrs[i]) * phi - zsum)
        xn[i] = phi
    msg = {(i, j): z[(j, i)] - 2 * rho * xn[j] for (i, j) in z}  # m_{j→i}
    zn = {(i, j): (1 - a) * z[(i, j)] - a * msg[(i, j)] for (i, j) in z}
    to_edges = lambda d: np.array([d[(int(r), int(s))] for s, r in zip(senders, receivers)])
    return {"x": xn, "z": to_edges(zn)}, {"m": to_edges(msg)}


def _agent(v, i):
    v = np.asarray(v, np.float64)
    return float(v) if v.ndim == 0 else float(v[i])


__all__ = ["dgd", "extra", "nids", "diging", "admm", "neighbours"]
