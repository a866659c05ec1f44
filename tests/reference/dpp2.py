"""Per-node references for paper 000's family, written from the node-level pseudocode.

DPP² follows Algorithm 1 line by line (every agent computes y_i, then every agent z_i, then the
updates). DiaDSP and PPDC follow the node-level forms of ``jaxdp/algorithms/dpp2/baselines.py``'s
docstring. Explicit loops over agents and neighbours, numpy float64. ``noise`` holds the standard
draws the JAX step received; ``P`` (or ``W``) is the network's dense matrix.
"""
import numpy as np

from tests.reference.common import local_grad, mix_node


def _agent(v, i):
    v = np.asarray(v, np.float64)
    return float(v) if v.ndim == 0 else float(v[i])


def _theta(p, scale, i, k):
    """θ_i^k = u_i r_i^k (Alg. 1 l.5), with 0⁰ = 1."""
    return _agent(p[scale], i) * _agent(p["r"], i) ** k


def dpp2(st, noise, problem, W, p, k, P):
    """Algorithm 1, lines 5–10, for every node i."""
    del W
    N = P.shape[0]
    x, d, q, eta = st["x"], st["d"], st["q"], float(noise["eta"])
    alpha, beta, rho = float(p["alpha"]), float(p["beta"]), float(p["rho"])
    w = np.array([_theta(p, "u_w", i, k) * noise["w"][i] for i in range(N)])  # l.5
    e = np.array([_theta(p, "u_e", i, k) * noise["e"][i] for i in range(N)])  # l.5
    y = np.array([x[i] + (1 - eta) * d[i] + w[i] for i in range(N)])  # l.6, sent
    Py = np.array([mix_node(P, y, i) for i in range(N)])  # Σ_{j∈N_i∪{i}} p_ij y_j
    z = np.array([local_grad(problem, i, x[i]) + eta * q[i] + rho * Py[i] + e[i]
                  for i in range(N)])  # l.7, sent
    x_new = np.array([x[i] + w[i] - alpha * (z[i] - e[i]) + beta * mix_node(P, z, i)
                      for i in range(N)])  # l.8
    d_new = np.array([eta * d[i] + y[i] for i in range(N)])  # l.9
    q_new = np.array([eta * q[i] + rho * Py[i] for i in range(N)])  # l.10
    return {"x": x_new, "d": d_new, "q": q_new}, {"y": y, "z": z}


def diadsp(st, noise, problem, W, p, k):
    """DiaDSP: every node sends x̃_i, ỹ_i; then x_i⁺ = Σ_j w_ij x̃_j − α y_i, y_i⁺ = ..."""
    N = W.shape[0]
    x, y, g = st["x"], st["y"], st["g"]
    xi, zeta = noise["channel"]["x"][0], noise["channel"]["y"][0]  # Lap(1), one per agent
    xt = np.array([x[i] + _theta(p, "u_x", i, k) * xi[i] for i in range(N)])
    yt = np.array([y[i] + _theta(p, "u_y", i, k) * zeta[i] for i in range(N)])
    x_new = np.array([mix_node(W, xt, i) - _agent(p["alpha"], i) * y[i] for i in range(N)])
    g_new = np.array([local_grad(problem, i, x_new[i]) for i in range(N)])
    y_new = np.array([mix_node(W, yt, i) + g_new[i] - g[i] for i in range(N)])
    return {"x": x_new, "y": y_new, "g": g_new}, {"x": xt, "y": yt}


def ppdc(st, noise, problem, W, p, k, P):
    """PPDC: every node sends x̃_i; x_i⁺ = x_i − η(γ Σ_j p_ij x̃_j + ω v_i + ∇f_i(x_i)); v_i⁺."""
    del W
    N = P.shape[0]
    x, v = st["x"], st["v"]
    eta, gamma, omega = float(p["eta"]), float(p["gamma"]), float(p["omega"])
    xi = noise["channel"]["x"][0]  # Lap(1), one per agent
    xt = np.array([x[i] + _theta(p, "u_x", i, k) * xi[i] for i in range(N)])
    x_new, v_new = np.zeros_like(x), np.zeros_like(v)
    for i in range(N):
        Px = mix_node(P, xt, i)
        x_new[i] = x[i] - eta * (gamma * Px + omega * v[i] + local_grad(problem, i, x[i]))
        v_new[i] = v[i] + eta * omega * Px
    return {"x": x_new, "v": v_new}, {"x": xt}


__all__ = ["dpp2", "diadsp", "ppdc"]
