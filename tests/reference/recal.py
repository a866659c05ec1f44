"""Per-node references for paper 003's family: RECAL / DP-RECAL (Algorithm 1) and the baselines.

Written from the node-level pseudocode with explicit loops over agents, neighbours, samples and
coordinates (numpy, float64). Each function advances one step and returns ``(state, messages)`` as
numpy dicts; ``noise`` is the draw the JAX step received (``next`` holder, standard ``z``/``xi``).
"""
import math

import numpy as np

from tests.reference.common import neighbours, sigmoid


def smooth_grad(problem, i, x):
    """∇ of agent i's smooth part (data + ridge) by a loop over its real samples."""
    A = np.asarray(problem.features[i], np.float64)
    b = np.asarray(problem.labels[i], np.float64)
    mask = np.asarray(problem.mask[i], np.float64)
    reg = {k: float(v) for k, v in problem.reg.items()}
    logistic = problem.loss.classifier
    g = np.zeros_like(x)
    for s in range(A.shape[0]):
        if mask[s] == 0:
            continue
        t = A[s] @ x
        g += (-b[s] * sigmoid(-b[s] * t) if logistic else t - b[s]) * A[s]
    g /= mask.sum()
    return g + reg.get("lam" if logistic else "ridge", 0.0) * x


def soft(v, t):
    """Soft thresholding, coordinate by coordinate."""
    out = np.zeros_like(v)
    for q in range(v.shape[0]):
        out[q] = math.copysign(max(abs(v[q]) - t, 0.0), v[q])
    return out


def l1_weight(problem):
    key = problem.loss.l1_key
    return 0.0 if key is None else float(problem.reg[key])


def sigma(p, t):
    """σ_t = σ₁ R^{−(t−1)/2} from log σ₁ and log R."""
    return math.exp(float(p["log_sigma1"]) - 0.5 * (t - 1) * float(p["log_R"]))


def _agent(v, i):
    v = np.asarray(v, np.float64)
    return float(v) if v.ndim == 0 else float(v[i])


def _copy(st):
    return {k: np.array(v, copy=True) for k, v in st.items()}


# -- RECAL / DP-RECAL (Algorithm 1) -------------------------------------------------------------
def recal(st, noise, problem, W, p, k, variant="paper", private=False):
    new = _copy(st)
    N = st["y"].shape[0]
    i_k = int(st["holder"])
    active = st["tau"][i_k] < float(p["xi"])
    beta = float(p["beta"])
    for i in range(N):
        if i != i_k or not active:
            continue  # agents i ≠ i_k keep their state
        x, y, lam = st["x"], st["y"][i], st["lam"][i]
        lam_half = lam + beta * (x - y)  # (7a)
        x_new = soft(x - (st["u_tilde"] + lam_half - lam), N * l1_weight(problem))  # (7b), Alg. 1
        y_new = y - _agent(p["alpha"], i) * (smooth_grad(problem, i, y) - lam_half)  # (7c)
        lam_new = lam_half + beta * ((x_new - x) - (y_new - y))  # (7d)
        u_new = st["u"] + lam_new - lam  # (7e)
        tau = st["tau"][i] + 1
        eps = sigma(p, tau) * noise["z"] if private else 0.0 * u_new
        new["x"], new["y"][i], new["lam"][i], new["tau"][i] = x_new, y_new, lam_new, tau
        new["u_tilde"] = u_new - eps  # Alg. 1: ũ^{k+1} = u^{k+1} − ε^k
        new["u"] = u_new if variant == "paper" else new["u_tilde"]
        new["holder"] = float(noise["next"])  # the baton goes to the drawn neighbour
        new["iterations"] = st["iterations"] + 1
    msgs = {"x": new["x"], "u": new["u_tilde"], "sender": float(i_k),
            "receiver": float(new["holder"]), "active": float(active)}
    return new, msgs


# -- DP-RWADMM (Walkman token) ------------------------------------------------------------------
def rwadmm(st, noise, problem, W, p, k):
    new = _copy(st)
    N = st["y"].shape[0]
    i_k = int(st["holder"])
    active = st["tau"][i_k] < float(p["xi"])
    beta = float(p["beta"])
    for i in range(N):
        if i != i_k or not active:
            continue
        zt, y, lam = st["x"], st["y"][i], st["lam"][i]
        y_new = zt - (smooth_grad(problem, i, y) + lam) / beta  # (W1)
        lam_new = lam + beta * (y_new - zt)  # (W2)
        t_new = st["t"] + ((y_new + lam_new / beta) - (y + lam / beta)) / N  # (W3)
        z_new = soft(t_new, l1_weight(problem) / beta)  # (W4)
        tau = st["tau"][i] + 1
        new["y"][i], new["lam"][i], new["tau"][i] = y_new, lam_new, tau
        new["t"], new["z"] = t_new, z_new
        new["x"] = z_new + sigma(p, tau) * noise["z"]
        new["holder"] = float(noise["next"])
        new["iterations"] = st["iterations"] + 1
    return new, {"x": new["x"], "sender": float(i_k), "receiver": float(new["holder"]),
                 "active": float(active)}


# -- synchronous baselines ----------------------------------------------------------------------
def _mix_own_exact(M, clean, sent, i):
    """Σ_j M_ij x_j with agent i's own exact value and its neighbours' transmitted ones."""
    out = M[i, i] * clean[i]
    for j in neighbours(M, i):
        out = out + M[i, j] * sent[j]
    return out


def _n_messages(W):
    return sum(len(neighbours(W, i)) for i in range(W.shape[0]))  # directed edges, 2E


def _prox(problem, z, step):
    return np.array([soft(z[i], step * l1_weight(problem)) for i in range(z.shape[0])])


def nids(st, noise, problem, W, p, k):
    """DP-NIDS: NIDS Alg. 1 with ṽ_i = v_i + σ_k ξ_i sent (one draw per agent, the channel's);
    at k = 0 nothing is used: the channel's release is the public x⁰ + σ_0 ξ."""
    N, a = W.shape[0], float(p["alpha"])
    inner = st["inner"]
    x, z, xp, gp = inner["x"], inner["z"], inner["x_prev"], inner["g_prev"]
    g = np.array([smooth_grad(problem, i, x[i]) for i in range(N)])
    v = x.copy() if k == 0 else 2 * x - xp - a * (g - gp)  # the mixed operand (x⁰ at k = 0)
    xi = noise["channel"]["v"][0]
    v_sent = np.array([v[i] + sigma(p, k) * xi[i] for i in range(N)])  # σ_k = σ₁R^{−(k−1)/2}
    Wt = 0.5 * (np.eye(N) + W)
    z_new = np.zeros_like(x)
    for i in range(N):
        z_new[i] = x[i] - a * g[i] if k == 0 else z[i] - x[i] + _mix_own_exact(Wt, v, v_sent, i)
    new = {"inner": {"x": _prox(problem, z_new, a), "z": z_new, "x_prev": x, "g_prev": g},
           "releases": st["releases"] + (k > 0),
           "messages": st["messages"] + (0 if k == 0 else _n_messages(W))}
    return new, {"v": v_sent}


def extra(st, noise, problem, W, p, k):
    """DP-EXTRA: PG-EXTRA (4) with x̃_i = x_i + σ_k ξ_i sent at every step (k = 0: public x⁰)."""
    N, a = W.shape[0], float(p["alpha"])
    inner = st["inner"]
    x, z, xp, gp = inner["x"], inner["z"], inner["x_prev"], inner["g_prev"]
    g = np.array([smooth_grad(problem, i, x[i]) for i in range(N)])
    xi = noise["channel"]["x"][0]
    x_sent = np.array([x[i] + sigma(p, k) * xi[i] for i in range(N)])
    Wx = np.array([_mix_own_exact(W, x, x_sent, i) for i in range(N)])  # W x^k as heard
    z_new = np.zeros_like(x)
    for i in range(N):
        if k == 0:
            z_new[i] = Wx[i] - a * g[i]
        else:  # W̃ x^{k−1} = ½(x^{k−1} + W x^{k−1} as heard at k − 1)
            z_new[i] = z[i] + Wx[i] - 0.5 * (xp[i] + inner["wx_prev"][i]) - a * (g[i] - gp[i])
    new = {"inner": {"x": _prox(problem, z_new, a), "z": z_new, "x_prev": x, "g_prev": g,
                     "wx_prev": Wx},
           "releases": st["releases"] + (k > 0), "messages": st["messages"] + _n_messages(W)}
    return new, {"x": x_sent}


def icadmm(st, noise, problem, W, p, k):
    """IC-ADMM (Chang, Hong & Wang 2015) per node, primal perturbation (Zhang & Zhu 2017)."""
    N, rho = W.shape[0], float(p["rho"])
    x, pd = st["x"], st["p"]
    releases = st["releases"] + 1
    x_sent = np.zeros_like(x)
    for i in range(N):
        nb = neighbours(W, i)
        denom = (_agent(p["beta"], i) + 2 * rho * len(nb)) / float(p["decay"]) ** k  # 1/α_k
        beta = denom - 2 * rho * len(nb)  # β_k
        v = beta * x[i] - smooth_grad(problem, i, x[i]) - pd[i]
        for j in nb:
            v = v + rho * (x[i] + x[j])
        x_new = soft(v / denom, l1_weight(problem) / denom)
        x_sent[i] = x_new + sigma(p, releases[i]) * noise["xi"][i]
    p_new = np.zeros_like(pd)
    for i in range(N):
        p_new[i] = pd[i] + rho * sum(x_sent[i] - x_sent[j] for j in neighbours(W, i))
    return ({"x": x_sent, "p": p_new, "releases": releases,
             "messages": st["messages"] + _n_messages(W)}, {"x": x_sent})


def mradmm(st, noise, problem, W, p, k, local_steps):
    N = W.shape[0]
    rho = float(p["rho"]) * float(p["theta"]) ** (k // 2)
    x, pd = st["x"], st["p"]
    odd = k % 2 == 0
    releases = st["releases"] + (1 if odd else 0)
    x_new = np.zeros_like(x)
    for i in range(N):
        nb = neighbours(W, i)
        anchor = sum(rho * (x[i] + x[j]) for j in nb)
        if odd:  # private step: inexact argmin, then output perturbation
            phi = x[i].copy()
            for _ in range(local_steps):
                grad = smooth_grad(problem, i, phi) + pd[i] + 2 * rho * len(nb) * phi - anchor
                phi = phi - _agent(p["gamma"], i) * grad
            x_new[i] = phi + sigma(p, releases[i]) * noise["xi"][i]
        else:  # recycled step: gradient from the odd step's optimality condition
            g = -st["p_odd"][i] - 2 * rho * len(nb) * x[i] + sum(
                rho * (st["x_odd"][i] + st["x_odd"][j]) for j in nb)
            x_new[i] = (anchor - g - pd[i]) / (2 * rho * len(nb))
    p_new = np.zeros_like(pd)
    for i in range(N):
        p_new[i] = pd[i] + rho * sum(x_new[i] - x_new[j] for j in neighbours(W, i))
    new = {"x": x_new, "p": p_new, "x_odd": x if odd else st["x_odd"],
           "p_odd": pd if odd else st["p_odd"], "releases": releases,
           "messages": st["messages"] + _n_messages(W)}
    return new, {"x": x_new}
