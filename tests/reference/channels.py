"""Per-node references of channel transforms: explicit loops over receivers, their in-edges and
the coordinates of each message (numpy, float64).

A sender computes its message once up to the channel's first random transform (per-sender rows
and error-feedback memories), then each directed message goes through the rest with its own draws
(and per-edge memories); a lost message is replaced by the receiver's own row.
"""
from __future__ import annotations

import numpy as np

from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION, LAPLACE_RESOLUTION


def clip_row(v, c, norm="l2"):
    """``v · min(1, c / ‖v‖)``."""
    n = {"l2": np.sqrt(np.sum(v * v)), "linf": np.max(np.abs(v)), "l1": np.sum(np.abs(v))}[norm]
    return v * c / max(n, c)


def keep_largest(score, k):
    """0/1 mask of the ``k`` largest entries of ``score`` (ties: lowest index)."""
    mask = np.zeros(len(score))
    order = sorted(range(len(score)), key=lambda j: (-score[j], j))
    for j in order[:k]:
        mask[j] = 1.0
    return mask


def quantize_row(v, bits, norm, u=None):
    """QSGD: ``‖v‖ sign(v_j) ℓ_j / s``, ``ℓ_j`` the rounded (or stochastically rounded, with the
    uniforms ``u``) level of ``s |v_j| / ‖v‖``, coordinate by coordinate."""
    s = 2.0 ** bits - 1
    n = np.sqrt(np.sum(v * v)) if norm == "l2" else np.max(np.abs(v))
    out = np.zeros_like(v)
    if n == 0:
        return out
    for j in range(len(v)):
        a = s * abs(v[j]) / n
        if u is None:
            level = np.round(a)
        else:
            level = np.floor(a) + (1.0 if u[j] < a - np.floor(a) else 0.0)
        out[j] = np.sign(v[j]) * n * level / s
    return out


def lattice_row(v, scale, z, law):
    """The lattice release of a float64 row, coordinate by coordinate: ``γ = scale/R`` (R the
    declared Gaussian or Laplace resolution), ``a = round(clamp(v_j, ±2^50 γ)/γ)`` (half to
    even), then ``(a + z_j R) γ`` (``z_j R`` the integer draw)."""
    r = GAUSSIAN_RESOLUTION if law == "gaussian" else LAPLACE_RESOLUTION
    gamma = scale / r
    bound = 2.0 ** 50 * gamma
    out = np.empty_like(v)
    for j in range(len(v)):
        a = np.round(min(max(v[j], -bound), bound) / gamma)
        out[j] = (a + z[j] * r) * gamma
    return out


def transform_row(t, v, values, k, z):
    """One transform on one row ``v`` (``values`` its Params by field, ``z`` its draw)."""
    f = t.fields
    if t.kind == "clip":
        return clip_row(v, values[f[0]], t.norm)
    if t.kind in ("gaussian", "laplace"):
        scale = values[f[0]] * values[f[1]] ** k
        if t.sampler == "lattice":
            return lattice_row(v, scale, z, t.kind)
        return v + scale * z
    if t.kind == "top_k":
        return v * keep_largest(np.abs(v), t.k)
    if t.kind == "random_k":
        scale = len(v) / t.k if t.unbiased else 1.0
        return v * keep_largest(z, t.k) * scale
    if t.kind == "quantize":
        return quantize_row(v, t.bits, t.norm, z if t.stochastic else None)
    return v


def send(channel, i, v, values, k, z, memory, tag):
    """Transform ``i`` on row ``v`` with error feedback through ``memory[tag]`` if it has it."""
    t = channel.transforms[i]
    if not t.error_feedback:
        return transform_row(t, v, values, k, z)
    u = v + memory.get(tag, np.zeros_like(v))
    c = transform_row(t, u, values, k, z)
    memory[tag] = u - c
    return c


def messages(channel, x, senders, values, k, draws, memory, call="mix0"):
    """``(2E, D)`` received messages of one product call (before losses) and the new memory.

    Args:
      channel: the :class:`jaxdp.channels.Channel`.
      x: ``(N, D)`` the senders' rows.
      senders: ``(2E,)``.
      values: the channel's Params by field.
      k: the step.
      draws: ``{i: (R, D)}`` the standard draws of the random transforms.
      memory: ``{name: array}`` the channel memory (copied, not modified).
      call: the call's tag.
    """
    memory = {key: np.array(v) for key, v in memory.items()}
    rows = [t for t in range(len(channel.transforms)) if not channel.transforms[t].loss]
    cut = channel.first_random
    n = x.shape[0]
    per_sender = []
    for j in range(n):
        v = x[j].copy()
        for i in rows:
            if i >= cut and not channel.broadcast:
                break
            mem = {"r": memory[f"{call}/t{i}"][j]} if f"{call}/t{i}" in memory else {}
            v = send(channel, i, v, values, k, draws.get(i, [None] * n)[j], mem, "r")
            if mem:
                memory[f"{call}/t{i}"][j] = mem["r"]
        per_sender.append(v)
    out = np.zeros((len(senders), x.shape[1]))
    for e, j in enumerate(senders):
        v = per_sender[j].copy()
        if not channel.broadcast:
            for i in (r for r in rows if r >= cut):
                key = f"{call}/t{i}"
                mem = {"r": memory[key][e]} if key in memory else {}
                v = send(channel, i, v, values, k, draws[i][e] if i in draws else None, mem, "r")
                if mem:
                    memory[key][e] = mem["r"]
        out[e] = v
    return out, memory


def markov_step(previous, u, p_to_bad, p_to_good):
    """One step of a two-state chain per entry, loop by loop."""
    out = np.zeros(len(u), bool)
    for e in range(len(u)):
        out[e] = (u[e] >= p_to_good) if previous[e] else (u[e] < p_to_bad)
    return out


def dgd_step(x, grads, W, senders, receivers, alpha, received, lost):
    """``x_i⁺ = W_ii x_i + Σ_{e: j → i} W_ij (lost_e ? x_i : m_e) − α ∇f_i(x_i)``, per node."""
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = W[i, i] * x[i] - alpha * grads[i]
        for e in range(len(senders)):
            if receivers[e] != i:
                continue
            j = senders[e]
            out[i] += W[i, j] * (x[i] if lost[e] else received[e])
    return out
