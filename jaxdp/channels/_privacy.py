"""The privacy report of a channel: a clip followed by noise is a mechanism on every message.

Whatever the inner algorithm computes, a message clipped to norm ``C`` has norm at most ``C``, so
two neighbouring data sets of agent ``j`` (the whole local objective replaced: relation
``"replace_agent"``) move each released vector by at most ``Δ = 2C`` (in the noise's norm: an ℓ∞
clip bounds the ℓ2 norm by ``C√D`` and the ℓ1 norm by ``C D``; an ℓ2 clip the ℓ1 norm by ``C√D``).
Every product call of a step releases agent ``j``'s row once per directed edge ``j → i`` of the
network the proxy runs on (per-message noise: one independent draw each) or once (broadcast); the
releases compose adaptively over calls and steps, since each is computed from agent ``j``'s data
and what it has received (Dwork & Roth 2014, Thm. 3.16 and the Gaussian/Laplace mechanisms, Thms.
3.6 and A.1). The counts are read from the traced step's program, where every product call is
marked (:meth:`~jaxdp.channels.ChannelAccounting.release_log`, :mod:`jaxdp.channels._program`), not
from the degrees: on a time-varying network the proxy runs on the union of the edge sets and
draws and records a copy on every directed edge of it at every step, links that are down at that
step (zero weight) included, and so does a static network whose links were masked with
``with_link_mask``; each of those copies is counted.

``m`` Gaussian releases of sensitivity ``Δ`` and scale ``σ`` compose exactly as one of scale
``σ/√m`` (μ-GDP composes as ``√(Σ μ²)``, Dong, Roth & Su 2022, Cor. 2), which is how they are
declared; Laplace releases are declared as ``m`` streams. Under ``threat="secret_pairs"`` a
pairwise-cancelling noise declares its SecLDP sensitivities instead
(:mod:`jaxdp.channels._correlated`; :func:`secret_pairs_report`).

The stage is found from the transforms' declared privacy roles (:attr:`Transform.role
<jaxdp.channels.Transform.role>`), and the events are declared by the noise transform itself
(:meth:`~jaxdp.channels._noise.Noise.events`): nothing here depends on which transforms exist.
"""
from __future__ import annotations

import numpy as np

from jaxdp.channels._base import ROLES
from jaxdp.channels._correlated import secret_pairs_factor
from jaxdp.privacy import Assumption, PrivacyReport
from jaxdp.privacy.contract import concat
from jaxdp.privacy.samplers import GAUSSIAN_RESOLUTION

THROUGH_PRODUCTS = Assumption(
    "the algorithm exchanges information only through the network's products (mix, apply_P, "
    "apply_L, apply_A, gather), which the channel intercepts",
    enforced=False,
    how="the proxy network refuses W, P and L; a product's row given to other agents while its "
        "self term is clean makes the report ∞ (declared: a federated server's sum; found: "
        "self_term_flow at the initial state); other reads of other agents' rows outside the "
        "products are not detected", holds=None)

SECRET_SEEDS = Assumption(
    "the observer does not know the pairwise seeds of the edges it is not on (an outsider knows "
    "none; a curious agent its own), and the pairwise draws are independent of everything else "
    "(data, the independent noise, other edges and calls)",
    enforced=False, how="the seeds are exchanged privately before the run (not modelled)",
    holds=None)


def private_stage(channel):
    """``(clip, noise)``: the last clip before the first noise, with only norm-non-increasing
    transforms between them (roles ``"clip"``, ``"contraction"``, ``"loss"``: top-k, random-k
    without the ``D/k`` scaling, losses; none with error feedback), or ``None``
    (:func:`stage_problem` says why).

    Transforms before the clip are bounded by it; those after the noise, error-feedback memories
    included, only depend on released values and earlier memory: post-processing. A lost message
    releases nothing; counting it as released is conservative. A transform that declares no
    role is trusted nowhere.
    """
    return None if stage_problem(channel) else _stage(channel)


def _stage(channel):
    ts = channel.transforms
    first = next(i for i, t in enumerate(ts) if t.role == "noise")
    last_clip = max(i for i in range(first) if ts[i].role == "clip")
    return ts[last_clip], ts[first]


def stage_problem(channel) -> str:
    """Why ``channel`` has no private stage (``""`` when it has one)."""
    ts = channel.transforms
    leaks = [t for t in ts if t.leak]
    if leaks:
        return f"has {leaks[0].kind}, whose messages leak: {leaks[0].leak}"
    undeclared = [t for t in ts if t.role not in ROLES]
    if undeclared:
        return (f"has {undeclared[0].kind}, which declares no privacy role (Transform.role), so "
                "the report cannot tell what it releases")
    first = next((i for i, t in enumerate(ts) if t.role == "noise"), None)
    if first is None:
        return "has no noise"
    clips = [i for i in range(first) if ts[i].role == "clip"]
    if not clips:
        return f"has no clip before its first noise ({ts[first].kind})"
    between = [t for t in ts[clips[-1] + 1:first] if not t.norm_non_increasing]
    if between:
        return (f"has {between[0].kind} ({between[0].norm_note}) between its clip and its noise, "
                "so the clip no longer bounds the released norm")
    return ""


def channel_report(alg, problem, network, params, steps: int, *, delta: float):
    """The report of ``alg`` (a :class:`~jaxdp.channels.WithChannel`) over ``steps`` steps: the
    releases of every route the step uses, composed."""
    return _report(alg, problem, network, params, steps, delta, secret_pairs=False)[0]


def secret_pairs_report(alg, problem, network, params, steps: int, *, delta: float):
    """``(report, "")`` under :class:`~jaxdp.privacy.SecretPairs` when a route's noise has a
    SecLDP analysis (:mod:`jaxdp.channels._correlated`: DECOR with an integer ``σ_cor/σ``), the
    other routes keeping their eavesdropper events; else ``(None, why not)``."""
    return _report(alg, problem, network, params, steps, delta, secret_pairs=True)


def _report(alg, problem, network, params, steps, delta, *, secret_pairs: bool):
    """``(report, why)``: the eavesdropper report, or under ``secret_pairs`` the SecLDP one
    (``None`` and why not when no route has that analysis)."""
    log = alg.accounting.release_log(problem, network, params)
    channels = alg.channels
    used = list(dict.fromkeys(route for route, *_ in log))
    missing = [route for route in used if stage_problem(channels[route])]
    if secret_pairs and (missing or not used):
        return None, "no channel with a clip before its noise"
    if missing or not used:
        return _without_stage(alg, problem, network, params, steps, delta, missing), ""
    parts = [_events(alg, channels[route], network, params, steps,
                     [(d, copies) for r, d, _, _, copies in log if r == route],
                     problem.features.dtype, secret_pairs)
             for route in used]
    if secret_pairs and all(why for _, why in parts):
        return None, "; ".join(dict.fromkeys(why for _, why in parts))
    events = concat([e for e, _ in parts])
    routes = "; ".join(f"{'every message' if route == '*' else f'message {route!r}'} through "
                       f"{channels[route].name}" for route in used)
    per = " per sender and call" if all(channels[r].per_sender_copies for r in used) else \
        (" per directed message unless broadcast (one per directed edge j → i of the network "
         "the channel runs on: a time-varying network's union of edge sets, links down at a "
         "step included)")
    contract = {
        "methods": ("closed_form", "rdp", "pld"), "relation": "replace_agent",
        "released": f"{alg.inner.name}'s messages, {len(log)} product call(s) per step "
                    f"({routes}), one draw{per}, steps 0..K−1",
        "assumptions": tuple(_clip_assumption(channels[route]) for route in used)
        + (THROUGH_PRODUCTS,) + ((SECRET_SEEDS,) if secret_pairs else ())}
    if not secret_pairs:
        return alg.accounting.report_from_events(events, problem, network, params, steps,
                                                 delta=delta, **contract), ""
    # The ideal mechanism of the SecLDP coupling also needs the coupled draws' ideal law: at most
    # one per undirected edge and call, i.e. at most one per independent draw.
    draws = 2 * alg.accounting.lattice_draw_count(problem, network, params, steps)
    return PrivacyReport.from_events(events, delta, lattice_draws=draws, **contract), ""


def _clip_assumption(channel) -> Assumption:
    clip, noise = _stage(channel)
    return Assumption(f"every released row has {clip.norm} norm ≤ C before the {noise.kind} "
                      "noise (the transforms between the clip and the noise do not increase "
                      "norms), so any two local data sets give Δ ≤ 2C",
                      enforced=True, how=f"clip at C ({clip.bound_field})")


def _events(alg, channel, network, params, steps, calls, dtype, secret_pairs=False):
    """``(events, why)``: the releases of one route whose product calls are ``calls``:
    ``(message size D, (N,) independent copies of each sender's row the call draws)``, as the
    step's program has them; under ``secret_pairs`` with the noise's SecLDP sensitivities where
    it has them (``why``: ``""``), else the eavesdropper's and why not."""
    clip, noise = _stage(channel)
    n, values = network.n_agents, alg.split(params)[1]
    d = max(d for d, _ in calls)
    releases = np.sum([np.asarray(c, np.int64) for _, c in calls], axis=0)  # (N,) per step
    c = np.broadcast_to(np.asarray(values[clip.bound_field], np.float64), (n,))
    log_scale = noise.log_scales(values, n, steps)
    sens = noise.sensitivity((2.0 * c * clip.bound(d, noise.sensitivity_norm))[:, None], d,
                             log_scale, dtype)
    what = f"T(x_j) = clip(x_j, C) + {noise.kind} noise ({'lattice' if noise.lattice else 'float'})"
    why = _secret_pairs_why(noise, values, dtype) if secret_pairs else "not asked"
    if not why:
        rho, _ = noise.secret_pairs_ratio(values, dtype)
        phi = secret_pairs_factor(rho, sens, np.exp(log_scale) / GAUSSIAN_RESOLUTION, d)
        known = _curious_messages(calls, network.base, releases)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(releases[:, None] > 0,
                             (known + (releases[:, None] - known) * phi) / releases[:, None], 1.0)
        sens = sens * np.sqrt(share)
        what += (f"; SecLDP: sensitivity × √φ (σ_cor/σ = {rho}, the outsider or one curious "
                 "agent; module jaxdp.channels._correlated)")
    return noise.events(sens, n, steps, log_scale, releases, what), why


def _secret_pairs_why(noise, values, dtype) -> str:
    """Why ``noise`` has no SecLDP analysis here (``""`` when it has one)."""
    if not hasattr(noise, "secret_pairs_ratio"):
        return f"the {noise.kind} noise has no analysis beyond its per-message releases"
    if not noise.lattice:
        return "the float sampler's releases are not private as floats"
    return noise.secret_pairs_ratio(values, dtype)[1]


def _curious_messages(calls, net, releases):
    """``(N,)``: per step, the messages each sender sends on one undirected edge (those a curious
    neighbour, who knows that edge's seed, sees without the coupled noise): each call's copies
    over the sender's out-degree, rounded up, at most the sender's releases."""
    degree = np.maximum(np.bincount(np.asarray(net.senders), minlength=net.n_agents), 1)
    per_call = [np.ceil(np.asarray(c, np.float64) / degree) for _, c in calls]
    return np.minimum(np.sum(per_call, axis=0), releases)


def _without_stage(alg, problem, network, params, steps, delta, missing):
    """A used route without clip + noise (or no product call): the inner algorithm's report (the
    channels post-process its messages), else ``inf``."""
    inner = alg.inner.account(problem, network, alg.split(params)[0], steps, delta=delta)
    channels = alg.channels
    why = "; ".join(f"the channel {channels[r].name!r} {stage_problem(channels[r])}"
                    for r in missing) or "the algorithm called no network product, so the " \
        "channel saw no message"
    leaks = any(t.leak for r in missing for t in channels[r].transforms)
    stage = "" if leaks else (" (no clip followed by noise with only norm-non-increasing "
                              "transforms between)")
    reason = f"{why}{stage}, and {alg.inner.name} is not private"
    if inner is None:
        return PrivacyReport.infinite(network.n_agents, steps, delta, reason,
                                      released=f"every message of {alg.inner.name}")
    assumption = Assumption(f"the channel only post-processes the messages {alg.inner.name}'s "
                            "report covers", enforced=False, how="the channel draws independent "
                            "noise on the products' operands", holds=None)
    return inner.with_contract(assumptions=inner.assumptions + (assumption,))
