"""Shared test machinery: a case table entry, small problems and networks, and the reference match."""
from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable

import chex
import jax
import numpy as np

from jaxdp import algorithms, channels, network, problems


def small_problem(kind="least_squares", n_agents=6, seed=0):
    if kind == "least_squares":
        return problems.least_squares(n_agents=n_agents, m=8, d=3, ridge=0.1, seed=seed)
    if kind == "logistic":
        return problems.logistic(n_agents=n_agents, m=8, d=3, lam=0.1, seed=seed)
    return problems.nonconvex_logistic(n_agents=n_agents, m=8, d=3, seed=seed)


@functools.cache
def registry_reports() -> dict:
    """Every registered algorithm's privacy report on a small problem (4 agents, one step), by
    name; algorithms that are not private (``privacy()`` gives ``None``) are left out. Built from
    the registry itself, not from the audit's case list, so a list that forgets an algorithm
    cannot hide it; once per session."""
    rng = np.random.default_rng(0)
    prob = problems.from_arrays(rng.normal(size=(4, 40, 2)), rng.normal(size=(4, 40)),
                                loss="least_squares", reg={"ridge": 0.0}, reference=False)
    net = network.make_network("ring", 4)
    out = {}
    for name, cls in algorithms.REGISTRY.items():
        alg = cls()
        with warnings.catch_warnings():  # least-squares data fail some papers' assumptions
            warnings.simplefilter("ignore")
            report = alg.privacy(prob, net, alg.default_params(), 1)
        if report is not None:
            out[name] = report
    return out


def small_network(kind="random_geometric", n_agents=6, backend="dense"):
    kw = {"radius": 0.6, "seed": 3} if kind == "random_geometric" else {}
    return network.make_network(kind, n_agents, backend=backend, **kw)


def gossip_setup(n_agents: int, dim: int):
    """A float64 ridge least-squares problem (8 rows per agent) on a random ``gnm`` graph with 8
    edges: the setting of the correlated-noise tests (DECOR, Zip-DL, Muffliato)."""
    rng = np.random.default_rng(0)
    with jax.enable_x64(True):
        prob = problems.from_arrays(rng.normal(size=(n_agents, 8, dim)),
                                    rng.normal(size=(n_agents, 8)), loss="least_squares",
                                    reg={"ridge": 0.1}, reference=False)
    return prob, network.make_network("gnm", n_agents, m=8, seed=1)


@dataclasses.dataclass(frozen=True)
class Case:
    """One row of an algorithm case table: everything needed to build and check a run."""

    name: str  # registry name
    reference: Callable  # per-node step (state, noise, problem, W, params, k) -> (state, messages)
    config: dict = dataclasses.field(default_factory=dict)
    overrides: dict = dataclasses.field(default_factory=dict)
    problem: str = "least_squares"
    network: str = "random_geometric"
    tol: float = 1e-10

    @property
    def id(self):
        extra = "-".join(f"{k}={v}" for k, v in {**self.config, **self.overrides}.items())
        return f"{self.name}[{self.problem}{'-' + extra if extra else ''}]"

    def build(self, backend="dense"):
        config = dict(self.config)
        through_channels = issubclass(algorithms.REGISTRY[self.name], channels.WithChannel)
        sampler = config.pop("sampler", None) if through_channels else None
        alg = algorithms.get(self.name, **config)
        if sampler is not None:  # a ported algorithm's noise lives in its channels
            alg = alg.with_sampler(sampler)
        params = alg.default_params().replace(**self.overrides)
        return alg, small_problem(self.problem), small_network(self.network, backend=backend), params


def to_numpy(tree):
    return jax.tree.map(lambda a: np.asarray(a, np.float64), dict(tree.items()) if hasattr(
        tree, "items") else tree)


def replayable(alg, state, noise, prob, net, params, k):
    """The draws of one step as numpy: an algorithm with channels replaces its channel key by
    the channel's standard draws, ``{"inner": ..., "channel": {message: {transform: draw}}}``."""
    if isinstance(alg, channels.WithChannel):
        draws = alg.channel_draws(state, noise, prob, net, params, k)
        return {"inner": to_numpy(noise["inner"]), "channel": to_numpy(draws)}
    return to_numpy(noise)


def reference_match(case: Case, steps: int = 12, seed: int = 0, backend="dense"):
    """Drive the JAX step and the per-node reference with the same noise; compare every step."""
    alg, prob, net, params = case.build(backend)
    key = jax.random.key(seed)
    state = alg.init(key, prob, net, params)
    ref = to_numpy(state)
    W = net.dense("W")  # either backend
    p = to_numpy(params)
    step = jax.jit(alg.step)
    for k in range(steps):
        noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
        given = replayable(alg, state, noise, prob, net, params, k)
        state, messages = step(state, noise, prob, net, params, k)
        ref, ref_messages = case.reference(ref, given, prob, W, p, k)
        chex.assert_trees_all_close(to_numpy(state), ref, rtol=0, atol=case.tol)
        chex.assert_trees_all_close(to_numpy(messages), ref_messages, rtol=0, atol=case.tol)
    return state
