"""Per-node numpy building blocks for the reference implementations (explicit loops, float64)."""
import numpy as np


def sigmoid(t):
    return 1.0 / (1.0 + np.exp(-t))


def local_grad(problem, i, x):
    """∇f_i(x) of the smooth part by an explicit loop over agent i's real samples (masked mean)."""
    A = np.asarray(problem.features[i], np.float64)
    b = np.asarray(problem.labels[i], np.float64)
    mask = np.asarray(problem.mask[i], np.float64)
    reg = {k: float(v) for k, v in problem.reg.items()}
    name = problem.loss.name.removeprefix("l1_")  # ℓ1 losses: the smooth part (the prox is apart)
    g = np.zeros_like(x)
    for s in range(A.shape[0]):
        if mask[s] == 0:
            continue
        a = A[s]
        if name == "least_squares":
            g += (a @ x - b[s]) * a
        else:  # logistic and nonconvex logistic: d/dx softplus(-y a.x)
            g += -b[s] * sigmoid(-b[s] * (a @ x)) * a
    g /= mask.sum()
    if name == "least_squares":
        g += reg.get("ridge", 0.0) * x
    elif name == "logistic":
        g += reg.get("lam", 0.0) * x
    elif name == "nonconvex_logistic":
        lam, om = reg["lam"], reg["omega"]
        g += 2 * lam * om * x / (1 + om * x * x) ** 2
    return g


def local_loss_least_squares(problem, i, x):
    """f_i(x) of least squares by a loop over agent i's real samples: the masked mean of
    ½(a·x − b)² plus ½·ridge·‖x‖²."""
    A = np.asarray(problem.features[i], np.float64)
    b = np.asarray(problem.labels[i], np.float64)
    mask = np.asarray(problem.mask[i], np.float64)
    total = sum(0.5 * (A[s] @ x - b[s]) ** 2 for s in range(A.shape[0]) if mask[s])
    return total / mask.sum() + 0.5 * float(problem.reg.get("ridge", 0.0)) * float(x @ x)


def neighbours(M, i):
    """Indices j != i with M[i, j] != 0."""
    return [j for j in range(M.shape[0]) if j != i and M[i, j] != 0]


def mix_node(M, X, i):
    """Σ_{j ∈ N_i ∪ {i}} M_ij x_j with an explicit loop."""
    out = M[i, i] * X[i]
    for j in neighbours(M, i):
        out = out + M[i, j] * X[j]
    return out
