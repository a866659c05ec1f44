"""Per-node references for the decentralized DP-SGD family (``jaxdp/algorithms/dpsgd``), with
explicit loops over agents and neighbours.

* DP-DSGD (D): x_i⁺ = Σ_j W_ij x_j − α g̃_i(x_i);
* DP-DSGT (T): x_i⁺ = Σ_j W_ij x_j − α y_i, g̃_i⁺ = g̃_i(x_i⁺), y_i⁺ = Σ_j W_ij y_j + g̃_i⁺ − g̃_i;

with g̃_i (G) = (1/b) Σ_{h∈B_i} clip_C(∇f_{i,h}(x_i)) + σ ξ_i, B_i the drawn minibatch (fixed rows,
or the Poisson rows with weight 1 and the sum divided by the expected size b).
"""
import numpy as np

from tests.reference.common import mix_node
from tests.reference.ltadmm import clipped_sample_mean, minibatch


def _agent(v, i):
    v = np.asarray(v, np.float64)
    return float(v) if v.ndim == 0 else float(v[i])


def noisy_gradient(problem, noise, p, i, x_i, sampling, batch_size):
    """(G) for agent i at x_i."""
    rows, b = minibatch(noise["batch"][i], sampling, batch_size)
    return clipped_sample_mean(problem, i, rows, x_i, _agent(p["clip"], i), divisor=b) \
        + _agent(p["sigma"], i) * noise["xi"][i]


def dp_dsgd(st, noise, problem, W, p, k, *, sampling="poisson", batch_size=None):
    """DP-DSGD (D) for every agent."""
    del k
    x = st["x"]
    xn = np.zeros_like(x)
    for i in range(W.shape[0]):
        g = noisy_gradient(problem, noise, p, i, x[i], sampling, batch_size)
        xn[i] = mix_node(W, x, i) - _agent(p["alpha"], i) * g
    return {**st, "x": xn}, {"x": x}


def dp_dsgt(st, noise, problem, W, p, k, *, sampling="poisson", batch_size=None):
    """DP-DSGT (T) for every agent."""
    del k
    x, y, g = st["x"], st["y"], st["g"]
    xn, yn, gn = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    for i in range(W.shape[0]):
        xn[i] = mix_node(W, x, i) - _agent(p["alpha"], i) * y[i]
        gn[i] = noisy_gradient(problem, noise, p, i, xn[i], sampling, batch_size)
    for i in range(W.shape[0]):
        yn[i] = mix_node(W, y, i) + gn[i] - g[i]
    return {**st, "x": xn, "y": yn, "g": gn}, {"x": x, "y": y}


__all__ = ["dp_dsgd", "dp_dsgt", "noisy_gradient"]
