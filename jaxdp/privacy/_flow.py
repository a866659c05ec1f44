"""An information-flow check on the traced program (issue 36): private data leave an agent only
through a declared mechanism site, and no mechanism parameter depends on them.

Reviews kept finding new ways a release escaped its accountant (a rate computed from the record
count, a server row that kept a client's upload in the clear, a clip that overflowed to NaN). This
module checks the *class*: :func:`check_information_flow` traces ``init`` and a few ``step`` s of
an algorithm on a small problem and reads the program that runs, not the algorithm's claims.

Sources: the data arrays of the problem (``features``, ``labels``, the reference solution and the
test set; ``mask``, i.e. the record counts, too, unless the report's relation is
``replace_record``, under which the counts are the same on both sides). Sinks: the sites marked
with :func:`~jaxdp.privacy._sites.mechanism_site` (:func:`~jaxdp.privacy.add_noise`, hence every
channel noise; the Poisson and fixed-size minibatch samplers; federated client selection).

Three checks, each sound for what it reads:

1. **Static taint** (a walk of the jaxpr, through ``pjit``, ``scan`` and ``while`` to a fixpoint of
   their carries, every branch of ``cond``, ``custom_jvp`` / ``custom_vjp`` and ``checkpoint``;
   an equation it does not know taints all of its outputs when any input is tainted): every
   *parameter*, draw and key input of a site (σ, a sampling rate, a population size, selection
   weights) must be untainted, where the site's callee reads it. A release site's output is
   public; everything else propagates.
2. **Differential flow to others.** Per-agent resolution inside a jaxpr is not practical (a
   product mixes rows), so the same program is traced with every release site fed zeros instead
   of its value (:func:`~jaxdp.privacy._sites.public_inputs`, same parameters and draws) and run
   on data sets that differ only in agent ``u``'s data (fresh values and, unless the relation fixes
   it, one record fewer; then extreme magnitudes). What others can see must then be bit-identical:
   every message (the eavesdropper's view: a message is released by definition), and the state
   of every other agent (its rows of every per-agent leaf) and every shared leaf (a server's
   model, a token: a neighbour's, a coalition's and a server's view). Agent ``u``'s own rows may
   differ: they are its private state. A difference is a flow that bypasses every mechanism
   (a raw row through a product's self term broadcast by a server, an unmarked noise).
3. **Finite releases.** The real program on data where ``u``'s records are extreme (squares
   overflow) must keep what others see finite where it is finite on ordinary data: a non-finite
   release is not in the support of any noise, so one identifies the data set (ε = ∞).

What this does not see: values computed from the data on the host (``np.asarray(problem.mask)``
at trace time becomes a constant; the check cannot taint it), timing and message sizes, and who
owns the noise protecting a release (a token holder that adds the noise for others' releases is
an accountant's threat-model question: the program alone does not say who knows which draw).
The differential check is a test on chosen neighbours, not a proof for all of them; the static
walk is conservative (it may flag a parameter that merely shares an array with the data).
"""
from __future__ import annotations

import dataclasses
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

from jaxdp._compiler import jit
from jaxdp._jaxpr import sub_jaxprs
from jaxdp.privacy._sites import ROLES, parse_site, public_inputs

PRIVATE_LEAVES = ("features", "labels", "mask", "x_star", "f_star", "test_features",
                  "test_labels")
"""The Problem fields that are data (``reg`` is a declared hyperparameter)."""
VIEWS = {"message": "the messages on the links (every observer)",
         "row": "another agent's state (a neighbour, a coalition)",
         "shared": "state no single agent owns (a server, a token, a broadcast)",
         "parameter": "a mechanism's parameter"}
"""Where a violation is seen."""


@dataclasses.dataclass(frozen=True)
class Site:
    """One marked mechanism site of the traced program: ``action`` (``release`` or ``sample``),
    ``kind`` (``add_noise``, ``poisson``, ...), ``tags`` (its law and sampler), ``where`` (the
    constructs around it)."""

    action: str
    kind: str
    tags: str
    where: str


@dataclasses.dataclass(frozen=True)
class Violation:
    """A flow of private data that no mechanism covers.

    Attributes:
      check: ``"parameter"`` (static taint), ``"bypass"`` (differential), ``"non_finite"`` or
        ``"account"`` (the report claims noise the program does not add as it says).
      view: a key of :data:`VIEWS`: who sees it.
      where: the site and its input, or the leaf of the state / messages and the step.
      reason: a readable sentence.
    """

    check: str
    view: str
    where: str
    reason: str


@dataclasses.dataclass(frozen=True)
class FlowReport:
    """What :func:`check_information_flow` found.

    Attributes:
      algorithm: the algorithm's name.
      relation: the report's neighbouring relation (``None``: no report or an infinite ε, so
        no claim to check).
      agent: the agent whose data differ in the differential checks.
      sites: the mechanism sites of the traced program.
      violations: every flow found (empty: none found).
    """

    algorithm: str
    relation: str | None
    agent: int
    sites: tuple[Site, ...] = ()
    violations: tuple[Violation, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations

    def under(self, threat: str) -> tuple[Violation, ...]:
        """The violations an observer of ``threat`` sees: the eavesdropper sees the messages
        (and every parameter violation); any other observer holds state too."""
        if threat == "eavesdropper":
            return tuple(v for v in self.violations if v.view in ("message", "parameter"))
        return self.violations

    def __str__(self) -> str:
        if self.relation is None:
            return f"{self.algorithm}: no finite guarantee claimed, nothing to check"
        lines = [f"{self.algorithm} ({self.relation}, agent {self.agent}): "
                 f"{len(self.sites)} mechanism sites, {len(self.violations)} violations"]
        lines += [f"  [{v.check} / {v.view}] {v.where}: {v.reason}" for v in self.violations]
        return "\n".join(lines)


def check_information_flow(alg, problem, network, params, *, steps: int = 2, agent: int = 0,
                           relation: str | None = None) -> FlowReport:
    """Check that ``alg``'s private data reach others only through its mechanism sites (module).

    Args:
      alg: an algorithm (a channel-wrapped one included).
      problem, network, params: a small run (N of a few agents, a few records each: every check
        runs the program).
      steps: steps traced (2 lets a value broadcast at step 1 reach others' state).
      agent: ``u``, the agent whose data differ.
      relation: the neighbouring relation; ``None`` reads it from ``alg.privacy`` (an algorithm
        whose report is ``None`` or whose ε is ``inf`` claims nothing and is not checked).

    Returns:
      A :class:`FlowReport`.
    """
    if not 0 <= agent < problem.n_agents:
        raise ValueError(f"check_information_flow: agent must be in [0, {problem.n_agents}); got "
                         f"{agent!r}")
    if relation is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = alg.privacy(problem, network, params, steps)
        if report is None or not np.isfinite(report.epsilon_max):
            return FlowReport(alg.name, None, agent)  # no finite claim to check
        relation = report.relation
    private = [f for f in PRIVATE_LEAVES if f != "mask" or relation != "replace_record"]
    program = _Program(alg, problem, network, params, steps)
    with public_inputs():
        masked = program.trace(problem)
    sources = {id(getattr(problem, f)) for f in private}
    walk = _Walk()
    walk.run(masked.jaxpr, [id(c) in sources for c in masked.consts] + [False])
    violations = list(walk.violations)
    u_problems = _neighbours(problem, agent, count=relation != "replace_record")
    violations += _bypasses(program, masked, problem, u_problems, agent)
    violations += _non_finite(program, problem, u_problems[-1], agent)
    violations += _unreleased(alg, walk.sites)
    return FlowReport(alg.name, relation, agent, tuple(walk.sites), tuple(violations))


def _unreleased(alg, sites) -> list[Violation]:
    """The accountant's claim against the program: a private algorithm releases through at least
    one marked release site, and with the sampler its report assumes."""
    releases = [s for s in sites if s.action == "release"]
    if not releases:
        return [Violation("account", "message", "the traced program",
                          f"{alg.name}.account reports a guarantee but the program has no marked "
                          "release site (noise added by hand is not a declared mechanism: use "
                          "jaxdp.privacy.add_noise)")]
    sampler = alg.sampler_of()
    wrong = [s for s in releases if sampler and not s.tags.endswith("_" + sampler)]
    return [Violation("account", "message", f"{s.kind}[{s.tags}] at {s.where}",
                      f"the report assumes the {sampler!r} sampler but this site uses another")
            for s in wrong]


class _Program:
    """``init`` and ``steps`` steps of ``alg`` as one function of the key, its problem closed
    over (each data array a constant of the jaxpr, found again by identity)."""

    def __init__(self, alg, problem, network, params, steps):
        self.alg, self.network, self.params, self.steps = alg, network, params, steps

    def run(self, problem, key):
        alg, net, params = self.alg, self.network, self.params
        state = alg.init(key, problem, net, params)
        out = []
        for k in range(self.steps):
            k = jnp.int32(k)
            noise = alg.noise(jax.random.fold_in(key, k), state, params, k)
            state, messages = alg.step(state, noise, problem, net, params, k)
            out.append((state, messages))
        return out

    def trace(self, problem) -> ClosedJaxpr:
        return jax.make_jaxpr(lambda key: self.run(problem, key))(jax.random.key(0))

    def evaluate(self, closed: ClosedJaxpr, problem, other):
        """The traced program run with ``other``'s data arrays in place of ``problem``'s."""
        swap = {id(getattr(problem, f)): getattr(other, f) for f in PRIVATE_LEAVES}
        consts = [swap.get(id(c), c) for c in closed.consts]
        flat = _compiled(closed.jaxpr)(consts, jax.random.key(0))
        shape = jax.eval_shape(lambda key: self.run(problem, key), jax.random.key(0))
        return jax.tree.unflatten(jax.tree.structure(shape), flat)


def _compiled(jaxpr: Jaxpr):
    """``jaxpr`` as one jitted function of its constants and inputs (compiled once per program,
    run on every data set)."""
    fun = _COMPILED.get(id(jaxpr))
    if fun is None or fun[0] is not jaxpr:
        fun = (jaxpr, jit(lambda consts, *args: jax.core.eval_jaxpr(jaxpr, consts, *args)))
        _COMPILED.clear()
        _COMPILED[id(jaxpr)] = fun
    return fun[1]


_COMPILED: dict = {}


# -- 1. static taint ------------------------------------------------------------------------------
class _Walk:
    """Taint propagation over a jaxpr; collects the sites and the tainted parameter inputs."""

    def __init__(self):
        self.sites: list[Site] = []
        self.violations: list[Violation] = []
        self._seen: set = set()

    def run(self, jaxpr: Jaxpr, taint_in: list[bool], where: tuple[str, ...] = ()) -> list[bool]:
        tainted = {v for v, t in zip([*jaxpr.constvars, *jaxpr.invars], taint_in) if t}
        for eqn in jaxpr.eqns:
            ins = [not isinstance(v, Literal) and v in tainted for v in eqn.invars]
            outs = self._eqn(eqn, ins, where)
            tainted.update(v for v, t in zip(eqn.outvars, outs) if t)
        return [not isinstance(v, Literal) and v in tainted for v in jaxpr.outvars]

    def _eqn(self, eqn, ins: list[bool], where) -> list[bool]:
        name = eqn.primitive.name
        site = parse_site(str(eqn.params.get("name", ""))) if name in ("pjit", "jit") else None
        if site is not None:
            return self._site(eqn, site, ins, where)
        if name == "scan":
            return self._scan(eqn, ins, where)
        if name == "while":
            return self._while(eqn, ins, where)
        if name == "cond":
            return self._cond(eqn, ins, where)
        subs = list(sub_jaxprs(eqn.params.values()))
        if len(subs) == 1 and len(subs[0].invars) + len(subs[0].constvars) == len(eqn.invars) \
                and len(subs[0].outvars) == len(eqn.outvars):
            return self.run(subs[0], ins, where + (name,))
        for sub in subs:  # unknown construct: everything it holds sees every input
            self.run(sub, [any(ins)] * (len(sub.constvars) + len(sub.invars)), where + (name,))
        return [any(ins)] * len(eqn.outvars)

    def _site(self, eqn, site, ins, where) -> list[bool]:
        action, kind, tags, letters = site
        inner = eqn.params["jaxpr"].jaxpr
        key = id(eqn)  # a loop body walked to its fixpoint is one site
        if key not in self._seen:
            self._seen.add(key)
            self.sites.append(Site(action, kind, tags, " > ".join(where) or "step"))
        read = _read_vars(inner)
        for i, (letter, t, var) in enumerate(zip(letters, ins, inner.invars)):
            if t and letter != "v" and var in read:
                v = Violation("parameter", "parameter", f"{kind}[{tags}] input {i} "
                              f"({ROLES[letter]}) at {' > '.join(where) or 'step'}",
                              f"the {ROLES[letter]} of mechanism site {kind!r} depends on private "
                              "data: every mechanism parameter must be public")
                if v not in self.violations:
                    self.violations.append(v)
        self.run(inner, ins, where + (kind,))
        if action == "release":
            return [False] * len(eqn.outvars)
        return [any(ins)] * len(eqn.outvars)

    def _scan(self, eqn, ins, where) -> list[bool]:
        body = eqn.params["jaxpr"].jaxpr
        nc, ncarry = eqn.params["num_consts"], eqn.params["num_carry"]
        carry = ins[nc:nc + ncarry]
        while True:
            outs = self.run(body, ins[:nc] + carry + ins[nc + ncarry:], where + ("scan",))
            new = [a or b for a, b in zip(carry, outs[:ncarry])]
            if new == carry:
                return new + outs[ncarry:]
            carry = new

    def _while(self, eqn, ins, where) -> list[bool]:
        cond, body = eqn.params["cond_jaxpr"].jaxpr, eqn.params["body_jaxpr"].jaxpr
        nc, nb = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
        cconsts, bconsts, carry = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]
        while True:
            stop = any(self.run(cond, cconsts + carry, where + ("while",)))
            outs = self.run(body, bconsts + carry, where + ("while",))
            new = [a or b or stop for a, b in zip(carry, outs)]
            if new == carry:
                return carry
            carry = new

    def _cond(self, eqn, ins, where) -> list[bool]:
        outs = [False] * len(eqn.outvars)
        for branch in eqn.params["branches"]:
            got = self.run(branch.jaxpr, ins[1:], where + ("cond",))
            outs = [a or b or ins[0] for a, b in zip(outs, got)]
        return outs


def _read_vars(jaxpr: Jaxpr) -> set:
    """The variables of ``jaxpr`` that an equation or its output reads."""
    read = {v for e in jaxpr.eqns for v in e.invars if not isinstance(v, Literal)}
    return read | {v for v in jaxpr.outvars if not isinstance(v, Literal)}


# -- 2. differential flow --------------------------------------------------------------------------
def _neighbours(problem, u: int, *, count: bool) -> list:
    """Problems that differ from ``problem`` in agent ``u``'s data only: fresh values (and one
    record fewer when ``count``), then extreme values whose squares overflow."""
    rng = np.random.default_rng(1)
    feats = np.array(problem.features)
    labels = np.array(problem.labels)
    mask = np.array(problem.mask)
    fresh_f, fresh_l, fresh_m = feats.copy(), labels.copy(), mask.copy()
    fresh_f[u] = 3.0 * rng.normal(size=feats.shape[1:])
    fresh_l[u] = 3.0 * rng.normal(size=labels.shape[1:])
    if count:
        last = int(mask[u].sum()) - 1
        fresh_m[u, last:] = 0
        fresh_f[u, last:] = 0
        fresh_l[u, last:] = 0
    big = float(np.sqrt(np.finfo(feats.dtype).max)) * 4.0
    huge_f, huge_l = feats.copy(), labels.copy()
    huge_f[u] = big * np.where(rng.random(size=feats.shape[1:]) < 0.5, -1.0, 1.0)
    huge_l[u] = big
    def build(f, y, m):
        return dataclasses.replace(problem, features=jnp.asarray(f, problem.features.dtype),
                                   labels=jnp.asarray(y, problem.labels.dtype),
                                   mask=jnp.asarray(m, problem.mask.dtype))
    return [build(fresh_f, fresh_l, fresh_m), build(huge_f, huge_l, mask)]


def _bypasses(program, masked, problem, others, u) -> list[Violation]:
    base = program.evaluate(masked, problem, problem)
    found = []
    for other in others:
        found += _differences(base, program.evaluate(masked, problem, other), u,
                              problem.n_agents, _differs)
        if found:
            return found
    return found


def _non_finite(program, problem, extreme, u) -> list[Violation]:
    real = program.trace(problem)
    base = program.evaluate(real, problem, problem)
    return _differences(base, program.evaluate(real, problem, extreme), u, problem.n_agents,
                        _turns_non_finite)


def _differs(a, b) -> bool:
    return not np.array_equal(a, b, equal_nan=True)


def _turns_non_finite(a, b) -> bool:
    if not np.issubdtype(a.dtype, np.inexact):
        return False
    return bool(np.any(np.isfinite(a) & ~np.isfinite(b)))


def _differences(base, other, u: int, n: int, test) -> list[Violation]:
    """One violation per leaf of what others see where ``test(base, other)`` holds."""
    found = []
    for step, ((s0, m0), (s1, m1)) in enumerate(zip(base, other)):
        for view, tree0, tree1 in (("message", m0, m1), ("state", s0, s1)):
            for (path, a), b in zip(jax.tree_util.tree_leaves_with_path(tree0),
                                    jax.tree.leaves(tree1)):
                a, b = _numbers(a), _numbers(b)
                axis = list(a.shape).index(n) if view == "state" and n in a.shape else None
                if axis is not None:
                    keep = np.arange(n) != u
                    a, b, seen = np.compress(keep, a, axis), np.compress(keep, b, axis), "row"
                else:
                    seen = "message" if view == "message" else "shared"
                if test(a, b):
                    where = f"step {step + 1}, {view}{jax.tree_util.keystr(path)}"
                    found.append(Violation(
                        "bypass" if test is _differs else "non_finite", seen, where,
                        _why(test, seen, u)))
    return found


def _why(test, seen: str, u: int) -> str:
    who = {"message": "a message", "row": "another agent's state",
           "shared": "state shared with others"}[seen]
    if test is _differs:
        return (f"{who} depends on agent {u}'s data with every mechanism fed a public input: a "
                "flow that bypasses every mechanism site")
    return (f"{who} is non-finite when agent {u}'s records are extreme (finite otherwise): a "
            "non-finite release identifies the data set")


def _numbers(x) -> np.ndarray:
    if jnp.issubdtype(jnp.asarray(x).dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)
