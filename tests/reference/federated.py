"""Per-node references for the federated family: a loop over clients, then a server.

Each function advances one round with explicit Python loops over the clients (selection, local
steps, upload) and a separate server that sums the uploads it receives, and returns
``(state, messages)`` as numpy dicts; ``noise`` holds the draws the JAX step received (the
selection draws ``u``, the server's or clients' standard noise draws).
"""
import numpy as np

from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION
from tests.reference.common import local_grad, local_loss_least_squares


def _a(v, i):
    v = np.asarray(v, np.float64)
    return float(v) if v.ndim == 0 else float(v[i])


def selection(u, scheme, clients, rate, sizes, counts, losses=None):
    """The selected clients, by a loop: Poisson ``u_i < q``; uniform: the ``clients`` smallest
    ``u``; data size: the ``clients`` largest ``log n_i − log(−log u_i)`` (Gumbel top-k); fair: the
    ``clients`` least selected so far, ties to the lower index; high loss: the ``clients`` largest
    losses, ties to the smaller ``u`` (decent-bench's HighLossSelection)."""
    n = len(u)
    m = n if clients is None else clients
    if scheme == "high_loss":
        return sorted(sorted(range(n), key=lambda i: (-losses[i], u[i]))[:m])
    if scheme == "poisson":
        return [i for i in range(n) if u[i] < rate]
    if scheme == "fair":
        return sorted(sorted(range(n), key=lambda i: (counts[i], i))[:m])
    if scheme == "data_size":
        keys = [np.log(sizes[i]) - np.log(-np.log(u[i])) for i in range(n)]
        return sorted(sorted(range(n), key=lambda i: (-keys[i], i))[:m])
    return sorted(sorted(range(n), key=lambda i: u[i])[:m])


def chosen_clients(st, noise, problem, scheme, clients, rate):
    return selection(noise["u"], scheme, clients, rate, data_sizes(problem), st["counts"],
                     st.get("loss"))


def losses_after(st, chosen, local_models, problem):
    """Under high-loss selection (the state has ``loss``): each chosen client's loss at the model
    it just trained; the others keep theirs. A state without ``loss`` is returned as it is."""
    if "loss" not in st:
        return {}
    loss = st["loss"].copy()
    for i in chosen:
        loss[i] = local_loss_least_squares(problem, i, local_models[i])
    return {"loss": loss}


def counts_after(st, chosen):
    """The cumulative selection counts after this round."""
    counts = st["counts"].copy()
    for i in chosen:
        counts[i] += 1
    return counts


def steps_of(steps, i):
    """Client i's number of local steps (one count for all, or a tuple per client)."""
    return steps[i] if isinstance(steps, tuple) else steps


def client_update(problem, i, x, alpha, steps, drift=lambda w: 0.0):
    """τ_i local gradient steps of client i from the server model ``x``."""
    w = x.copy()
    for _ in range(steps_of(steps, i)):
        w = w - alpha * (local_grad(problem, i, w) + drift(w))
    return w


def data_sizes(problem):
    return [float(np.asarray(problem.mask[i], np.float64).sum()) for i in range(problem.n_agents)]


def clip(v, c):
    norm = np.sqrt(np.sum(v * v))
    return v * min(1.0, c / norm) if norm > 0 else v


def _server_average(uploads, weights, chosen, d):
    total = sum(weights[i] for i in chosen)
    if total == 0:
        return np.zeros(d)
    return sum((weights[i] * uploads[i] for i in chosen), np.zeros(d)) / total


def fedavg(st, noise, problem, W, p, k, *, local_steps=5, selection_scheme="uniform",
           clients=None, rate=1.0, weighting="data", mu=None):
    """FedAvg (McMahan et al. 2017, Alg. 1); with ``mu``: FedProx (Li et al. 2020, Alg. 2)."""
    x = st["x"][0]
    n, d = st["x"].shape
    chosen = chosen_clients(st, noise, problem, selection_scheme, clients, rate)
    uploads = np.zeros((n, d))
    for i in chosen:
        drift = (lambda w: 0.0) if mu is None else (lambda w, i=i: _a(mu, i) * (w - x))
        uploads[i] = client_update(problem, i, x, _a(p["alpha"], i), local_steps, drift) - x
    trained = {i: x + uploads[i] for i in chosen}
    weights = data_sizes(problem) if weighting == "data" else [1.0] * n
    x_new = x + float(p["server_lr"]) * _server_average(uploads, weights, chosen, d)
    rows = np.tile(x_new, (n, 1))
    sent = np.array([weights[i] * uploads[i] for i in range(n)])  # n_k Δ_k (or Δ_k)
    return ({"x": rows, "counts": counts_after(st, chosen),
             **losses_after(st, chosen, trained, problem)}, {"update": sent, "x": rows})


def fedprox(st, noise, problem, W, p, k, **config):
    return fedavg(st, noise, problem, W, p, k, mu=p["mu"], **config)


def scaffold(st, noise, problem, W, p, k, *, local_steps=5, selection_scheme="uniform",
             clients=None, rate=1.0):
    """SCAFFOLD (Karimireddy et al. 2020, Alg. 1, option II), uniform server average."""
    x, c = st["x"][0], st["c"][0]
    n, d = st["x"].shape
    chosen = chosen_clients(st, noise, problem, selection_scheme, clients, rate)
    d_y, d_c, ci = np.zeros((n, d)), np.zeros((n, d)), st["ci"].copy()
    for i in chosen:
        a = _a(p["alpha"], i)
        y = client_update(problem, i, x, a, local_steps, lambda w, i=i: c - st["ci"][i])
        ci_plus = st["ci"][i] - c + (x - y) / (steps_of(local_steps, i) * a)
        d_y[i], d_c[i] = y - x, ci_plus - st["ci"][i]
        ci[i] = ci_plus
    x_new = x + float(p["server_lr"]) * _server_average(d_y, [1.0] * n, chosen, d)
    c_new = c + sum((d_c[i] for i in chosen), np.zeros(d)) / n
    rows, c_rows = np.tile(x_new, (n, 1)), np.tile(c_new, (n, 1))
    return ({"x": rows, "counts": counts_after(st, chosen), "c": c_rows, "ci": ci,
             **losses_after(st, chosen, x + d_y, problem)},
            {"update": d_y, "control": d_c, "x": rows, "c": c_rows})


def lattice(v, scale, z, resolution=GAUSSIAN_RESOLUTION):
    """The lattice Gaussian release γ(round(v/γ) + zR), γ = scale/R (no clamp at these sizes)."""
    gamma = scale / resolution
    return (np.round(v / gamma) + z * resolution) * gamma


def dp_fedavg(st, noise, problem, W, p, k, *, local_steps=5, rate=0.5):
    """DP-FedAvg (McMahan et al. 2018, Alg. 1): Poisson clients, clipped uploads, the server's
    sum released with lattice noise zC, x ← x + η_g r/(qN)."""
    x = st["x"][0]
    n, d = st["x"].shape
    chosen = chosen_clients(st, noise, problem, "poisson", None, rate)
    total = np.zeros(d)
    for i in chosen:
        w = client_update(problem, i, x, _a(p["alpha"], i), local_steps)
        total = total + clip(w - x, float(p["clip"]))
    r = lattice(total, float(p["z"] * p["clip"]), noise["xi"])
    rows = np.tile(x + float(p["server_lr"]) * r / (rate * n), (n, 1))
    return {"x": rows, "counts": counts_after(st, chosen)}, {"x": rows}


def ldp_fedavg(st, noise, problem, W, p, k, *, local_steps=5, selection_scheme="uniform",
               clients=None, rate=1.0):
    """Local-DP FedAvg: each selected client uploads its clipped update with lattice noise zC;
    the server averages the uploads uniformly."""
    x = st["x"][0]
    n, d = st["x"].shape
    chosen = chosen_clients(st, noise, problem, selection_scheme, clients, rate)
    uploads = np.zeros((n, d))
    for i in chosen:
        w = client_update(problem, i, x, _a(p["alpha"], i), local_steps)
        uploads[i] = lattice(clip(w - x, float(p["clip"])), float(p["z"] * p["clip"]),
                             noise["xi"][i])
    x_new = x + float(p["server_lr"]) * _server_average(uploads, [1.0] * n, chosen, d)
    rows = np.tile(x_new, (n, 1))
    return {"x": rows, "counts": counts_after(st, chosen)}, {"update": uploads, "x": rows}


def fednova(st, noise, problem, W, p, k, *, local_steps=5, selection_scheme="uniform",
            clients=None, rate=1.0, weighting="data"):
    """FedNova (Wang et al. 2020, eq. (6)-(7)): normalized updates d_i = (x − y_i)/τ_i,
    x⁺ = x − η_g τ_eff Σ p_i d_i."""
    x = st["x"][0]
    n, d = st["x"].shape
    chosen = chosen_clients(st, noise, problem, selection_scheme, clients, rate)
    uploads, trained = np.zeros((n, d)), {}
    for i in chosen:
        y = trained[i] = client_update(problem, i, x, _a(p["alpha"], i), local_steps)
        uploads[i] = (x - y) / steps_of(local_steps, i)
    sizes = data_sizes(problem) if weighting == "data" else [1.0] * n
    total = sum(sizes[i] for i in chosen)
    tau_eff = sum(sizes[i] * steps_of(local_steps, i) for i in chosen) / total if chosen else 0.0
    x_new = x - float(p["server_lr"]) * tau_eff * _server_average(uploads, sizes, chosen, d)
    rows = np.tile(x_new, (n, 1))
    sent = np.array([sizes[i] * uploads[i] for i in range(n)])
    return ({"x": rows, "counts": counts_after(st, chosen),
             **losses_after(st, chosen, trained, problem)}, {"update": sent, "x": rows})


def fedopt(st, noise, problem, W, p, k, *, optimizer, local_steps=5, selection_scheme="uniform",
           clients=None, rate=1.0, bias_correction=False, v0=None):
    """FedOpt (Reddi et al. 2021, Alg. 2): pseudo-gradient −Δ_t, then the server step written out
    elementwise: as printed (m_t, v_t, x + η m_t/(√v_t + τ), no bias correction) or, with
    ``bias_correction``, optax's adam / yogi / adagrad (bias-corrected moments; Adagrad's sum)."""
    x = st["x"][0]
    n, d = st["x"].shape
    chosen = chosen_clients(st, noise, problem, selection_scheme, clients, rate)
    uploads = np.zeros((n, d))
    for i in chosen:
        uploads[i] = client_update(problem, i, x, _a(p["alpha"], i), local_steps) - x
    g = -_server_average(uploads, [1.0] * n, chosen, d)
    if not len(chosen):  # nobody selected: the server skips the round (model and moments kept)
        rows = np.tile(x, (n, 1))
        return ({"x": rows, "counts": counts_after(st, chosen), "opt": st["opt"],
                 **losses_after(st, chosen, x + uploads, problem)}, {"update": uploads, "x": rows})
    lr, b1, b2, tau = (float(p[f]) for f in ("server_lr", "b1", "b2", "tau"))
    if not bias_correction:
        del v0  # the state's v_{-1} was set by init
        return _fedopt_printed(st, chosen, uploads, g, optimizer, lr, b1, b2, tau, problem)
    inner, rest = st["opt"][0], st["opt"][1:]
    new_x = np.zeros(d)
    if optimizer == "adagrad":
        s = inner.sum_of_squares + g * g
        for j in range(d):
            new_x[j] = x[j] - lr * (g[j] / np.sqrt(s[j]) if s[j] > 0 else 0.0)
        inner = inner._replace(sum_of_squares=s)
    else:
        mu = b1 * inner.mu + (1 - b1) * g
        if optimizer == "adam":
            nu = b2 * inner.nu + (1 - b2) * g * g
        else:  # yogi
            nu = inner.nu - (1 - b2) * np.sign(inner.nu - g * g) * g * g
        t = inner.count + 1
        for j in range(d):
            m_hat, v_hat = mu[j] / (1 - b1 ** t), nu[j] / (1 - b2 ** t)
            new_x[j] = x[j] - lr * m_hat / (np.sqrt(v_hat) + tau)
        inner = inner._replace(count=t, mu=mu, nu=nu)
    rows = np.tile(new_x, (n, 1))
    return ({"x": rows, "counts": counts_after(st, chosen), "opt": (inner, *rest),
             **losses_after(st, chosen, x + uploads, problem)},
            {"update": uploads, "x": rows})


def _fedopt_printed(st, chosen, uploads, g, optimizer, lr, b1, b2, tau, problem):
    """Reddi et al. 2021, Algorithm 2's server lines, one coordinate at a time."""
    x, (m, v) = st["x"][0], st["opt"]
    n, d = st["x"].shape
    m_new, v_new, new_x = np.zeros(d), np.zeros(d), np.zeros(d)
    for j in range(d):
        delta = -g[j]
        m_new[j] = b1 * m[j] + (1 - b1) * delta
        if optimizer == "adam":
            v_new[j] = b2 * v[j] + (1 - b2) * delta ** 2
        elif optimizer == "yogi":
            v_new[j] = v[j] - (1 - b2) * delta ** 2 * np.sign(v[j] - delta ** 2)
        else:
            v_new[j] = v[j] + delta ** 2
        new_x[j] = x[j] + lr * m_new[j] / (np.sqrt(v_new[j]) + tau)
    rows = np.tile(new_x, (n, 1))
    return ({"x": rows, "counts": counts_after(st, chosen), "opt": type(st["opt"])(m_new, v_new),
             **losses_after(st, chosen, x + uploads, problem)},
            {"update": uploads, "x": rows})


def feddyn(st, noise, problem, W, p, k, *, local_steps=5, selection_scheme="uniform",
           clients=None, rate=1.0):
    """FedDyn (Acar et al. 2021, Alg. 1): local steps on f_i − ⟨g_i, θ⟩ + (α/2)‖θ − θ^t‖²,
    g_i ← g_i − α(θ_i − θ^t); h ← h − (α/N)Σ(θ_i − θ^t); θ = mean θ_i − h/α."""
    x, h, a = st["x"][0], st["h"][0], float(p["penalty"])
    n, d = st["x"].shape
    chosen = chosen_clients(st, noise, problem, selection_scheme, clients, rate)
    uploads, g = np.zeros((n, d)), st["g"].copy()
    for i in chosen:
        y = client_update(problem, i, x, _a(p["alpha"], i), local_steps,
                          lambda w, i=i: -st["g"][i] + a * (w - x))
        uploads[i] = y - x
        g[i] = st["g"][i] - a * (y - x)
    x_new = x
    if chosen:
        h = h - a / n * sum((uploads[i] for i in chosen), np.zeros(d))
        x_new = sum((x + uploads[i] for i in chosen), np.zeros(d)) / len(chosen) - h / a
    rows = np.tile(x_new, (n, 1))
    return ({"x": rows, "counts": counts_after(st, chosen), "h": np.tile(h, (n, 1)), "g": g,
             **losses_after(st, chosen, x + uploads, problem)},
            {"update": uploads, "x": rows})


def fedpd(st, noise, problem, W, p, k, *, local_steps=5):
    """FedPD (Zhang et al. 2021, Alg. 1): local steps on the augmented Lagrangian from x_i, dual
    and centre updates per client; with the coin ≥ p the server averages the centres."""
    eta = float(p["eta"])
    n, d = st["x"].shape
    xi, lam, cand = st["xi"].copy(), st["lam"].copy(), np.zeros((n, d))
    for i in range(n):
        c = st["center"][i]
        xi[i] = client_update(problem, i, st["xi"][i], _a(p["alpha"], i), local_steps,
                              lambda w, i=i, c=c: st["lam"][i] + (w - c) / eta)
        lam[i] = st["lam"][i] + (xi[i] - c) / eta
        cand[i] = xi[i] + eta * lam[i]
    sync = noise["coin"] >= float(p["p"])
    if sync:
        avg = sum((cand[i] for i in range(n)), np.zeros(d)) / n
        x_rows, center, sent = np.tile(avg, (n, 1)), np.tile(avg, (n, 1)), cand
    else:
        x_rows, center, sent = st["x"], cand, np.zeros((n, d))
    state = {"x": x_rows, "counts": counts_after(st, range(n)), "xi": xi, "lam": lam,
             "center": center}
    return state, {"center": sent, "x": x_rows}


def fedlt(st, noise, problem, W, p, k, *, local_steps=5, selection_scheme="uniform",
          clients=None, rate=1.0):
    """Fed-LT: y = mean z_i; a selected client runs E steps on f_i + (1/2ρ)‖w − (2y − z_i)‖²
    from its x_i, then z_i ← z_i + 2(x_i − y)."""
    n, d = st["x"].shape
    rho = float(p["rho"])
    y = sum((st["z"][i] for i in range(n)), np.zeros(d)) / n
    chosen = chosen_clients(st, noise, problem, selection_scheme, clients, rate)
    xi, z = st["xi"].copy(), st["z"].copy()
    for i in chosen:
        v = 2 * y - st["z"][i]
        xi[i] = client_update(problem, i, st["xi"][i], _a(p["alpha"], i), local_steps,
                              lambda w, v=v: (w - v) / rho)
        z[i] = st["z"][i] + 2 * (xi[i] - y)
    rows = np.tile(y, (n, 1))
    return ({"x": rows, "counts": counts_after(st, chosen), "xi": xi, "z": z,
             **losses_after(st, chosen, xi, problem)},
            {"z": st["z"], "x": rows})
