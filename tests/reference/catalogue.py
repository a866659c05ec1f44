"""Per-node references for the non-private catalogue, written from each paper's node-level form.

Every function advances one step for every agent with explicit loops over agents and neighbours and
returns ``(state, messages)`` as numpy dicts. ``noise`` is the draw the JAX step received (the
minibatch rows, the coins).
"""
import numpy as np

from tests.reference.common import local_grad, mix_node, neighbours, sigmoid


def _a(v, i):
    v = np.asarray(v, np.float64)
    return float(v) if v.ndim == 0 else float(v[i])


def _grads(problem, X):
    return np.array([local_grad(problem, i, X[i]) for i in range(X.shape[0])])


def _mix(W, X):
    return np.array([mix_node(W, X, i) for i in range(X.shape[0])])


def _half_mix(W, X):
    return np.array([0.5 * (X[i] + mix_node(W, X, i)) for i in range(X.shape[0])])


def _laplacian(W, X, i):
    """Σ_{j∈N_i} (x_i − x_j), unweighted."""
    return sum((X[i] - X[j] for j in neighbours(W, i)), np.zeros_like(X[i]))


# -- diffusion -------------------------------------------------------------------------------------
def atc(st, noise, problem, W, p, k):
    x = st["x"]
    psi = np.array([x[i] - _a(p["alpha"], i) * local_grad(problem, i, x[i])
                    for i in range(len(x))])
    return {"x": _mix(W, psi), "psi": psi}, {"psi": psi}


def ed(st, noise, problem, W, p, k):
    x = st["x"]
    psi = np.array([x[i] - _a(p["alpha"], i) * local_grad(problem, i, x[i])
                    for i in range(len(x))])
    phi = x + psi - st["psi"]
    return {"x": _half_mix(W, phi), "psi": psi}, {"phi": phi}


def simple_gt(st, noise, problem, W, p, k):
    x, N = st["x"], len(st["x"])
    psi = np.array([x[i] - _a(p["alpha"], i) * local_grad(problem, i, x[i]) for i in range(N)])
    new = np.array([psi[i] - st["psi"][i] + mix_node(W, x, i) for i in range(N)])
    return {"x": new, "psi": psi}, {"x": x}


# -- tracking --------------------------------------------------------------------------------------
def atc_tracking(st, noise, problem, W, p, k):
    x, y, g, N = st["x"], st["y"], st["g"], len(st["x"])
    s = np.array([x[i] - _a(p["alpha"], i) * y[i] for i in range(N)])
    xn = _mix(W, s)
    gn = _grads(problem, xn)
    yn = np.array([mix_node(W, y, i) + gn[i] - g[i] for i in range(N)])
    return {"x": xn, "y": yn, "g": gn}, {"s": s, "y": y}


def aug_dgm(st, noise, problem, W, p, k):
    x, y, g, N = st["x"], st["y"], st["g"], len(st["x"])
    s = np.array([x[i] - _a(p["alpha"], i) * y[i] for i in range(N)])
    xn = _mix(W, s)
    gn = _grads(problem, xn)
    q = y + gn - g
    return {"x": xn, "y": _mix(W, q), "g": gn}, {"s": s, "y": q}


def wang_elia(st, noise, problem, W, p, k):
    x, z, N = st["x"], st["z"], len(st["x"])
    K = 0.5 * (np.eye(N) - W)
    m = x + z
    xn = np.array([x[i] - mix_node(K, m, i) - _a(p["alpha"], i) * local_grad(problem, i, x[i])
                   for i in range(N)])
    zn = np.array([z[i] + mix_node(K, x, i) for i in range(N)])
    return {"x": xn, "z": zn}, {"m": m, "x": x}


# -- local updates ---------------------------------------------------------------------------------
def k_gt(st, noise, problem, W, p, k, local_steps):
    x, c, N = st["x"], st["c"], len(st["x"])
    z, msg = np.zeros_like(x), np.zeros_like(x)
    for i in range(N):
        a, b = _a(p["alpha"], i), _a(p["beta"], i)
        xi = x[i].copy()
        for _ in range(local_steps):  # Alg. 1 lines 5-7
            xi = xi - a * (local_grad(problem, i, xi) + c[i])
        z[i] = (x[i] - xi) / (local_steps * a)
        msg[i] = x[i] - local_steps * b * a * z[i]
    cn = np.array([c[i] - z[i] + mix_node(W, z, i) for i in range(N)])  # line 9
    return {"x": _mix(W, msg), "c": cn}, {"x": msg, "z": z}  # line 10


def led(st, noise, problem, W, p, k, local_steps):
    x, y, N = st["x"], st["c"], len(st["x"])
    phi = np.zeros_like(x)
    for i in range(N):
        f = x[i].copy()
        for _ in range(local_steps):  # (2a)
            f = f - _a(p["alpha"], i) * local_grad(problem, i, f) - _a(p["beta"], i) * y[i]
        phi[i] = f
    xn = _mix(W, phi)  # diffusion
    return {"x": xn, "c": y + phi - xn}, {"phi": phi}  # (2c)


def prox_skip(st, noise, problem, W, p, k):
    x, y, N = st["x"], st["c"], len(st["x"])
    theta = bool(noise["u"] < float(p["p"]))
    z = np.array([x[i] - _a(p["alpha"], i) * local_grad(problem, i, x[i]) - y[i]
                  for i in range(N)])
    chi = float(p["chi"])
    Wa = np.eye(N) - (np.eye(N) - W) / (2 * chi)
    if theta:
        xn = _mix(Wa, z)
        yn = np.array([y[i] + _a(p["beta"], i) * (z[i] - xn[i]) for i in range(N)])
        sent = z
    else:
        xn, yn, sent = z, y, np.zeros_like(z)
    return {"x": xn, "c": yn}, {"z": sent, "communicated": float(theta)}


# -- primal-dual -----------------------------------------------------------------------------------
def dlm(st, noise, problem, W, p, k):
    x, z, N, c = st["x"], st["z"], len(st["x"]), float(p["rho"])
    s = np.array([_laplacian(W, x, i) for i in range(N)])
    xn = np.array([x[i] - _a(p["alpha"], i) * (local_grad(problem, i, x[i]) + c * s[i] + z[i])
                   for i in range(N)])  # primal
    sn = np.array([_laplacian(W, xn, i) for i in range(N)])
    return {"x": xn, "z": z + c * sn, "s": sn}, {"x": xn}  # dual


def atg(st, noise, problem, W, p, k, senders, receivers):
    x, N = st["x"], len(st["x"])
    rho, a = float(p["rho"]), float(p["relax"])
    zy = {(int(r), int(s)): st["z_y"][e] for e, (s, r) in enumerate(zip(senders, receivers))}
    zs = {(int(r), int(s)): st["z_s"][e] for e, (s, r) in enumerate(zip(senders, receivers))}
    y, s, xn = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    for i in range(N):
        nb = neighbours(W, i)
        den = 1 + rho * len(nb)
        y[i] = (x[i] + sum((zy[(i, j)] for j in nb), np.zeros_like(x[i]))) / den
        s[i] = (local_grad(problem, i, x[i]) + sum((zs[(i, j)] for j in nb),
                                                   np.zeros_like(x[i]))) / den
        gam = _a(p["gamma"], i)
        xn[i] = (1 - gam) * x[i] + gam * (y[i] - _a(p["delta"], i) * s[i])
    my = {(i, j): zy[(j, i)] - 2 * rho * y[j] for (i, j) in zy}  # m_{j→i}
    ms = {(i, j): zs[(j, i)] - 2 * rho * s[j] for (i, j) in zs}
    to_edges = lambda d: np.array([d[(int(r), int(s_))] for s_, r in zip(senders, receivers)])
    return ({"x": xn, "z_y": to_edges({e: (1 - a) * zy[e] - a * my[e] for e in zy}),
             "z_s": to_edges({e: (1 - a) * zs[e] - a * ms[e] for e in zs})},
            {"m_y": to_edges(my), "m_s": to_edges(ms)})


def yi_pd(st, noise, problem, W, p, k, P):
    """Yi et al. 2022, Algorithm 1 (first order): every node sends x_i; with (Px)_i = Σ_j p_ij x_j,
    x_i⁺ = x_i − η(γ (Px)_i + ω v_i + ∇f_i(x_i)) and v_i⁺ = v_i + ηω (Px)_i."""
    del noise, W, k
    x, v, N = st["x"], st["v"], P.shape[0]
    eta, gamma, omega = float(p["eta"]), float(p["gamma"]), float(p["omega"])
    xn, vn = np.zeros_like(x), np.zeros_like(v)
    for i in range(N):
        Px = mix_node(P, x, i)  # Σ_{j ∈ N_i ∪ {i}} p_ij x_j
        xn[i] = x[i] - eta * (gamma * Px + omega * v[i] + local_grad(problem, i, x[i]))
        vn[i] = v[i] + eta * omega * Px
    return {"x": xn, "v": vn}, {"x": x}


# -- variance reduced ------------------------------------------------------------------------------
def _data(problem):
    """The problem's arrays on the host once per step: (features, labels, reg, loss name)."""
    reg = {key: float(v) for key, v in problem.reg.items()}
    return (np.asarray(problem.features, np.float64), np.asarray(problem.labels, np.float64), reg,
            problem.loss.name)


def sample_grad(data, i, h, x):
    """∇f_{i,h}(x): sample h's loss gradient plus the penalty, by hand."""
    A, B, reg, loss = data
    a, b = A[i, h], B[i, h]
    if loss == "least_squares":
        return (a @ x - b) * a + reg.get("ridge", 0.0) * x
    g = -b * sigmoid(-b * (a @ x)) * a
    if loss == "logistic":
        return g + reg.get("lam", 0.0) * x
    lam, om = reg["lam"], reg["omega"]
    return g + 2 * lam * om * x / (1 + om * x * x) ** 2


def _batch_mean(data, i, rows, x):
    return sum(sample_grad(data, i, int(h), x) for h in rows) / len(rows)


def gt_saga(st, noise, problem, W, p, k):
    x, y, g, table, N = st["x"], st["y"], st["g"], st["table"].copy(), len(st["x"])
    batch, data = noise["batch"], _data(problem)
    gn = np.zeros_like(x)
    for i in range(N):
        m_i = int(st["n_rows"][i])
        avg = sum(table[i, h] for h in range(m_i)) / m_i
        fresh = {int(h): sample_grad(data, i, int(h), x[i]) for h in batch[i]}
        gn[i] = sum(fresh[h] - table[i, h] for h in fresh) / len(fresh) + avg
        for h, v in fresh.items():
            table[i, h] = v
    q = y + gn - g
    yn = _mix(W, q)
    s = np.array([x[i] - _a(p["alpha"], i) * yn[i] for i in range(N)])
    return ({"x": _mix(W, s), "y": yn, "g": gn, "table": table, "n_rows": st["n_rows"]},
            {"q": q, "s": s})


def gt_sarah(st, noise, problem, W, p, k, inner_steps):
    x, xp, y, v, N = st["x"], st["x_prev"], st["y"], st["v"], len(st["x"])
    vn, data = np.zeros_like(x), _data(problem)
    for i in range(N):
        if k % (inner_steps + 1) == 0:
            vn[i] = local_grad(problem, i, x[i])
        else:
            rows = noise["batch"][i]
            vn[i] = v[i] + _batch_mean(data, i, rows, x[i]) - _batch_mean(data, i, rows, xp[i])
    yn = np.array([mix_node(W, y, i) + vn[i] - v[i] for i in range(N)])
    xn = np.array([mix_node(W, x, i) - _a(p["alpha"], i) * yn[i] for i in range(N)])
    return {"x": xn, "x_prev": x, "y": yn, "v": vn, "n_rows": st["n_rows"]}, {"y": y, "x": x}


def gt_vr(st, noise, problem, W, p, k):
    x, y, v, N = st["x"], st["y"], st["v"], len(st["x"])
    tau, mu = st["tau"].copy(), st["mu"].copy()
    s = np.array([x[i] - _a(p["alpha"], i) * y[i] for i in range(N)])
    xn = _mix(W, s)
    vn, data = np.zeros_like(x), _data(problem)
    for i in range(N):
        if noise["u"][i] < float(p["p"]):
            tau[i], mu[i] = xn[i], local_grad(problem, i, xn[i])
        rows = noise["batch"][i]
        vn[i] = _batch_mean(data, i, rows, xn[i]) - _batch_mean(data, i, rows, tau[i]) + mu[i]
    q = y + vn - v
    return ({"x": xn, "y": _mix(W, q), "v": vn, "tau": tau, "mu": mu, "n_rows": st["n_rows"]},
            {"s": s, "q": q})
