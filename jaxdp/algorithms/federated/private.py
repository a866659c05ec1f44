r"""User-level DP-FedAvg: central noise at a trusted server, or local noise at each client.

* **DP-FedAvg** (central DP) — McMahan, Ramage, Talwar & Zhang, "Learning differentially private
  recurrent language models", ICLR 2018, Algorithm 1 with uniform client weights ``w_k = 1``, flat
  clipping and the fixed-denominator estimator ``f̃_f``: each round the server Poisson-samples
  clients with probability q, each selected client runs E local steps from ``x^t`` and uploads
  ``clip(Δ_k, C) = Δ_k·min(1, C/‖Δ_k‖)``; the server releases
  ``r^t = Σ_{k∈S_t} clip(Δ_k, C) + N(0, z²C²I)`` (lattice Gaussian, the library's default
  sampler) and sets ``x^{t+1} = x^t + η_g r^t/(qN)`` (the paper's σ = zS/(qW) on Δ, W = qN·1).
  Trusted server (:class:`~jaxdp.privacy.TrustedServer`, its default threat model): the uploads
  are not observed; the observer sees the broadcast models ``x^t``, a post-processing of
  ``r^0..r^{t−1}``. Every observer that sees an upload (the eavesdropper, the server as a
  neighbour, a coalition, an outsider of ``secret_pairs``) sees ``clip(Δ_k, C)`` in the clear,
  a deterministic function of client k's data: its report is ``inf``, with that reason.
* **LDP-FedAvg** (local DP: noise before upload; the server is the observer) — each selected
  client uploads ``clip(Δ_k, C) + N(0, z²C²I)`` (lattice Gaussian), the server averages the uploads
  as FedAvg (:mod:`jaxdp.algorithms.federated.algorithm`). The local randomizer of the local
  model of DP (Kasiviswanathan et al. 2011) applied to FedAvg's update, as in the local-DP
  baselines of federated learning (e.g. Truex et al. 2020).

**Relation and accounting.** Both report under ``replace_agent`` by default: one client's whole
data set replaced (user-level; the clients, as agents of the network, stay). DP-FedAvg also offers
McMahan et al.'s own relation, ``relation="add_remove_agent"``: one client's data set added or
removed (the client stays, with no data, so its update is 0). The clip bounds what the data can
move (enforced), and everything else a client computes from is the released model.

* Local: each round, each client's upload has Δ = 2C (both clipped updates have norm ≤ C) with
  noise zC; its selection is the server's public choice (no amplification claimed): K releases of
  a lattice Gaussian, composed (zCDP and RDP).
* Central, guarantee without amplification: given the selection, replacing client k's data moves
  ``Σ_{S} clip(Δ)`` by at most 2C (C adding or removing it), plus the float error of the
  server's sum (:func:`sum_slack`), with noise zC, K rounds composed. **With Poisson
  amplification** (a second sound curve; the guarantee is the smaller): the released sum is a
  post-processing of the continuous Gaussian mechanism on the lattice-rounded sum
  (:mod:`jaxdp.privacy._lattice`), each client's contribution to it of norm at most
  ``C' = lattice_sensitivity(C·sum_slack)``, present with probability q. Replace-one: the
  dp-accounting PLD of the pair ``((1 − q)N(0, σ²) + qN(−C', σ²), (1 − q)N(0, σ²) + qN(C', σ²))``
  (``REPLACE_ONE``); add/remove: its Poisson-subsampled Gaussian of sensitivity ``C'``
  (:func:`jaxdp.privacy.poisson_gaussian_epsilon`). Rounds compose adaptively in the PLD. The
  lattice sampler's distance to its ideal law is charged as in every lattice report.
"""
from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.algorithms.federated._rounds import (
    FedState, Federated, broadcast, local_descent, server_sum,
)
from jaxdp.core import param
from jaxdp.network import averaging_gap
from jaxdp.privacy import (
    Assumption,
    PrivacyEvents,
    PrivacyReport,
    TrustedServer,
    add_noise,
    clip_by_norm,
    noise_draws,
    poisson_gaussian_epsilon,
)
from jaxdp.privacy.samplers import (
    SAMPLER_SHARE,
    lattice_sensitivity,
    sampler_cap,
    sampler_tv,
    unit_roundoff,
)

AMPLIFIED = "Poisson pld"
AMPLIFIED_NOTE = (
    "privacy loss distribution (dp-accounting PLDAccountant) of the Poisson-subsampled Gaussian "
    "of which the lattice release is a post-processing, each client's contribution of norm ≤ C' "
    "(the clip with the server sum's float error and the lattice rounding), {relation}, composed "
    "over the rounds at δ(1 − 2⁻⁶); the sampler's distance τ is charged as in every lattice "
    "report")
_PAIRS = {"replace_agent": "replace-one pair ((1−q)N(0)+qN(−C'), (1−q)N(0)+qN(C')) (REPLACE_ONE)",
          "add_remove_agent": "add/remove-one pairs (ADD_OR_REMOVE_ONE)"}
CLEAR_UPLOADS = (
    "DP-FedAvg's uploads clip(Δ_k, C) carry no noise (the trusted server adds it to their sum): "
    "an observer who sees an upload (the eavesdropper on every link, the server as a client's "
    "neighbour, a coalition, an outsider of secret_pairs) sees a deterministic function of "
    "client k's data; the guarantee covers only the trusted server's observer, who sees its "
    "noisy aggregate and broadcasts (threat='trusted_server', the default)")
"""Why DP-FedAvg has no finite ε for an observer who sees the uploads."""
CLIP_ASSUMPTION = Assumption("‖clip(Δ_k, C)‖₂ ≤ C for every client update Δ_k, so two data sets "
                             "of one client move its upload by ≤ 2C", enforced=True,
                             how="clip_by_norm(Δ_k, C)")


@chex.dataclass(frozen=True)
class DPFedAvgParams:
    alpha: float = param(0.05, domain="positive", doc="η, client learning rate")
    server_lr: float = param(1.0, domain="positive", per_agent=False,
                             doc="η_g, server step on the averaged update")
    clip: float = param(1.0, domain="positive", per_agent=False,
                        doc="C (S), ℓ2 clip of each client's update (McMahan et al. 2018)")
    z: float = param(1.0, domain="positive", per_agent=False,
                     doc="z, noise multiplier: noise std zC on the released sum or upload")


@dataclasses.dataclass(frozen=True)
class _Private(Federated):
    params_type = DPFedAvgParams
    noise_field = "z"
    models_covered = True
    models_note = "the model is x^K, the server's broadcast, a post-processing of the releases"
    sampler: str = "lattice"  # "lattice" (private as floats) or "float" (report: inf)

    def __post_init__(self):
        if self.selection == "high_loss":
            raise ValueError(f"{self.selection_reads_data()}; use selection='uniform' or "
                             "'poisson' (data-independent)")
        super().__post_init__()

    def clipped_updates(self, state, problem, params, rows):
        """``clip(Δ_k, C)`` of the clients ``rows`` computes (E local steps from the server
        model; ``(N, d)``, or ``(K, d)`` gathered, :class:`~jaxdp.algorithms.federated.Rows`)."""
        x = state.x
        y = local_descent(x, problem, params.alpha, self.local_steps, jnp.zeros_like, rows)
        return clip_by_norm(y - rows.take(x), params.clip)


@dataclasses.dataclass(frozen=True)
class DPFedAvg(_Private):
    """DP-FedAvg (McMahan et al. 2018, Algorithm 1; central noise, trusted server); see the
    module. Poisson client sampling with rate ``rate`` = q is required (the estimator's qN)."""

    # jaxdp.privacy.contract.NOISE_OWNERS: the trusted server draws the noise of the aggregate it
    # releases
    noise_owner = "server"
    name = "dp_fedavg"
    cites = ("McMahan, Ramage, Talwar & Zhang, ICLR 2018, Algorithm 1 (DP-FedAvg, f̃_f)",)
    provenance = "standard"
    default_threat = "trusted_server"
    selection: str = "poisson"
    rate: float = 0.5
    weighting: str = "uniform"
    relation: str = "replace_agent"  # or "add_remove_agent" (McMahan et al. 2018)

    def __post_init__(self):
        super().__post_init__()
        if self.relation not in _PAIRS:
            raise ValueError(f"{self.name}: relation must be one of {sorted(_PAIRS)}; got "
                             f"{self.relation!r}")
        if self.selection != "poisson" or self.weighting != "uniform":
            raise ValueError(f"{self.name}: McMahan et al.'s estimator Σ clip(Δ_k)/(qN) needs "
                             f"selection='poisson' and weighting='uniform'; got "
                             f"selection={self.selection!r}, weighting={self.weighting!r}")

    def noise(self, key, state, params, k):
        keys = jax.random.split(key)
        draws = super().noise(keys[0], state, params, k)
        xi = noise_draws(keys[1], state.x.shape[1:], state.x.dtype, sampler=self.sampler)
        return {**draws, "xi": xi}

    def step(self, state, noise, problem, network, params, k):
        del k
        n, x = state.x.shape[0], state.x
        rows = self.rows(noise, state, problem)  # Poisson: every client
        uploads = rows.put(self.clipped_updates(state, problem, params, rows))
        total = server_sum(network, uploads, "update")  # the trusted server's sum
        r = add_noise(total, params.z * params.clip, noise["xi"], sampler=self.sampler)
        x_new = broadcast(x[0] + params.server_lr * r / (self.rate * n), n)
        return FedState(x=x_new, counts=state.counts + rows.mask), {"x": x_new}

    def account(self, problem, network, params, steps, *, delta):
        """The eavesdropper's report: ``inf`` (:data:`CLEAR_UPLOADS`). Every other observer but
        the trusted server's falls back on it (:meth:`account_under`)."""
        del params
        return PrivacyReport.infinite(
            network.n_agents, steps, delta, CLEAR_UPLOADS, relation=self.relation,
            released="every message on every link, the clients' clipped uploads included")

    def account_under(self, threat, problem, network, params, steps, *, delta):
        """Under :class:`~jaxdp.privacy.TrustedServer` the central-DP report
        (:meth:`server_report`); every other observer sees the uploads (``(None, why)``: the
        fallback on :meth:`account`, ``inf``)."""
        if not isinstance(threat, TrustedServer):
            return None, CLEAR_UPLOADS
        note = (f"{threat.describe()}. The server's noise zC on Σ_S clip(Δ_k, C) protects what it "
                "publishes; the uploads themselves carry no noise and are not covered")
        report = self.server_report(problem, network, params, steps, delta=delta)
        return report.with_contract(threat=threat.name, threat_note=note), ""

    def server_report(self, problem, network, params, steps, *, delta):
        """The central-DP report of the server's releases ``r^t`` (see the module): what the
        trusted server's observer sees."""
        n, c, scale = network.n_agents, float(params.clip), float(params.z * params.clip)
        c_eff = c * sum_slack(network, problem.features.dtype)
        replace = self.relation == "replace_agent"
        events = self.accounting.declare_releases(PrivacyEvents.from_schedule(
            "gaussian", sensitivity=np.full((n, 1), (2 if replace else 1) * c_eff),
            scale=np.full((n, 1), scale), n_agents=n, steps=steps,
            description="r^t = Σ_{k∈S_t} clip(Δ_k, C) + σξ, σ = zC, t < K (server)"), problem)
        report = self.accounting.report(
            events, problem, network, params, steps, delta=delta,
            methods=("closed_form", "rdp", "pld"),
            relation=self.relation,
            released="the server's broadcast x^1..x^K (a post-processing of r^0..r^{K−1}); the "
                     "uploads to the trusted server are not observed",
            assumptions=(CLIP_ASSUMPTION, Assumption(
                f"clients are Poisson-sampled with q = {self.rate:g} by the server, independently "
                "of the data, and the selection is not released", enforced=True,
                how="u_k < q from the round's key")))
        if self.sampler_of() != "lattice" or self.rate == 1.0:
            return report
        dim, dtype = problem.dim, problem.features.dtype
        mu = float(lattice_sensitivity(c_eff, dim, scale, dtype, law="gaussian")) / scale
        draws = self.accounting.lattice_draw_count(problem, network, params, steps)
        tv = draws * sampler_tv("gaussian")
        eps = amplified_epsilon(mu, self.rate, report.steps, delta, tv, replace=replace)
        note = AMPLIFIED_NOTE.format(relation=_PAIRS[self.relation])
        return report.with_curve(AMPLIFIED, np.broadcast_to(eps, (n, eps.size)).copy(),
                                 note, sound=True)


@dataclasses.dataclass(frozen=True)
class LDPFedAvg(_Private):
    """Local-DP FedAvg: each client clips its update to C and adds lattice Gaussian noise zC
    before the upload; the server (the observer) averages the selected uploads; see the module."""

    # jaxdp.privacy.contract.NOISE_OWNERS: each agent's releases carry its own fresh noise only
    noise_owner = "sender"
    name = "ldp_fedavg"
    cites = ("McMahan et al., AISTATS 2017, Algorithm 1 (FedAvg) with a local Gaussian "
             "randomizer on each clipped upload (local DP, Kasiviswanathan et al. 2011)",)
    provenance = "standard"
    weighting: str = "uniform"

    def __post_init__(self):
        super().__post_init__()
        if self.weighting != "uniform" or self.selection == "data_size":
            raise ValueError(f"{self.name}: the server would read the clients' data sizes, which "
                             "the relation (a client's whole data set replaced) may change: "
                             "weighting must be 'uniform' and selection not 'data_size'; got "
                             f"weighting={self.weighting!r}, selection={self.selection!r}")

    def noise(self, key, state, params, k):
        keys = jax.random.split(key)
        draws = super().noise(keys[0], state, params, k)
        return {**draws, "xi": noise_draws(keys[1], state.x.shape, state.x.dtype,
                                           sampler=self.sampler)}

    def step(self, state, noise, problem, network, params, k):
        del k
        n, x = state.x.shape[0], state.x
        rows = self.rows(noise, state, problem)
        noisy = add_noise(self.clipped_updates(state, problem, params, rows),
                          params.z * params.clip, rows.take(noise["xi"]), sampler=self.sampler)
        uploads = rows.put(noisy)  # only the selected clients upload
        avg, _ = self.average(network, uploads, self.weights(problem, rows.mask, x.dtype),
                              "update")
        x_new = broadcast(x[0] + params.server_lr * avg, n)
        return FedState(x=x_new, counts=state.counts + rows.mask), {"update": uploads,
                                                                      "x": x_new}

    def account(self, problem, network, params, steps, *, delta):
        n, c, scale = network.n_agents, float(params.clip), float(params.z * params.clip)
        events = self.accounting.declare_releases(PrivacyEvents.from_schedule(
            "gaussian", sensitivity=np.full((n, 1), 2 * c), scale=np.full((n, 1), scale),
            n_agents=n, steps=steps,
            description="client k's upload clip(Δ_k, C) + σξ_k, σ = zC, every round t < K"),
            problem)
        return self.accounting.report(
            events, problem, network, params, steps, delta=delta,
            methods=("closed_form", "rdp", "pld"),
            relation="replace_agent",
            released="every client's noisy upload to the server (the observer) in each round, "
                     "counted whether or not it is selected; the broadcasts are post-processing",
            assumptions=(CLIP_ASSUMPTION,))


# -- accounting helpers -------------------------------------------------------------------------
def sum_slack(network, dtype) -> float:
    """The factor by which the server's computed sum ``N·(W U)_0`` can exceed the exact sum's
    sensitivity: ``(1 + N·gap)(1 + 2Nγ_{N+2})`` with ``gap = max|W − 11ᵀ/N|`` and
    ``γ_n = nu/(1 − nu)`` (Higham 2002, §3.1, for the N-term dot product and the product by N):
    client k's weight is at most ``(1 + N·gap)/N``, and each of the two runs' sums has float error
    at most ``γ_{N+2}·N·max_j ‖U_j‖`` (whatever the summation order). It holds for any W, so a
    report on another network (which ``validate`` refuses to run) is still a bound."""
    n, u = network.n_agents, unit_roundoff(dtype)
    gamma = (n + 2) * u / (1 - (n + 2) * u)
    return (1 + n * averaging_gap(network)) * (1 + 2 * n * gamma)


def amplified_epsilon(mu: float, q: float, at_steps, delta: float, tv: float, *,
                      replace: bool) -> np.ndarray:
    """``(K',)`` ε after each of ``at_steps`` rounds of the Poisson-subsampled Gaussian of
    ``μ = C'/σ`` (:func:`~jaxdp.privacy.poisson_gaussian_epsilon`) at δ(1 − 2⁻⁶), ``inf`` where
    the sampler's ``(1 + e^ε)τ`` exceeds ``2⁻⁶δ``."""
    eps = poisson_gaussian_epsilon(mu, q, at_steps, delta * (1 - SAMPLER_SHARE), replace=replace)
    return np.where(eps <= sampler_cap(delta, tv), eps, np.inf)


__all__ = ["AMPLIFIED", "CLEAR_UPLOADS", "DPFedAvg", "DPFedAvgParams", "LDPFedAvg",
           "amplified_epsilon", "sum_slack"]
