"""The algorithm contract (design page, §4): static configuration on the object, dynamic numbers in Params.

An algorithm is a frozen dataclass holding only static configuration (variants, counts). Its
hyperparameters live in a ``Params`` pytree (``chex.dataclass(frozen=True)``) so that they can be
vmapped over a grid and differentiated. One step of a run is

.. code-block:: python

    noise = algorithm.noise(key_k, state, params, k)       # every random draw of step k
    state, messages = algorithm.step(state, noise, problem, network, params, k)

``step`` is pure and deterministic given ``noise``; ``noise`` writes every draw as
``scale * standard_draw`` so metrics are differentiable in the noise scales and the same draws can be
injected into a per-node reference implementation in the tests.
"""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import AgentArray, Array, PRNGKey
from jaxdp.core._accounting import Accounting
from jaxdp.core._costs import count_step_costs
from jaxdp.core._params import check_params
from jaxdp.privacy.samplers import check_sampler

FLOAT_SAMPLER_REASON = (
    "the float sampler (sampler='float') adds floating-point Gaussian/Laplace draws, whose outputs "
    "form a sparse set of floats that the data shift: a released coordinate can be impossible "
    "under the neighbouring data set, so no finite ε covers the floats released; the real-valued "
    "mechanism's curves are kept as 'ideal …' for comparison. Use sampler='lattice' (the default) "
    "for a guarantee")

Params = Any  # a chex dataclass of floats / (N,) arrays
State = Any  # a pytree; per-agent leaves have a leading axis N
Noise = Any  # a pytree of every draw of one step ({} for deterministic algorithms)
Messages = dict  # what crosses the network at one step, e.g. {"x": (N, d)}
PROVENANCES = ("paper", "standard", "baseline", "reconstruction")
"""The values of :attr:`Algorithm.provenance`."""
LEGACY_DECLARATIONS = ("positive", "nonnegative", "unit_interval", "scalar")
"""Class tuples that declared Params ranges before :func:`~jaxdp.algorithms.param` (refused)."""


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """Base class: subclasses set ``name`` and ``params_type`` and implement the math.

    Subclasses are frozen dataclasses whose fields are static configuration only, so two equal
    configurations hash equal and share one compiled program.

    Class attributes:
      name: registry key, lower case (``"dgd"``).
      cites: the works the class implements, as short references with the equation or algorithm
        (``("Nedić & Ozdaglar, IEEE TAC 2009, eq. (2)",)``); ``jaxdp info`` and the docs show them.
      provenance: what the code is of the cited work (:data:`PROVENANCES`): ``"paper"`` (a
        paper's algorithm as published), ``"standard"`` (a standard method as its work gives it),
        ``"baseline"`` (a paper's comparison method, parts reconstructed) or ``"reconstruction"``
        (rebuilt where the source gives no equations); ``None``: not declared.
      params_type: the ``Params`` dataclass; ``params_type()`` gives the paper's defaults. Its
        fields are declared with :func:`~jaxdp.algorithms.param` (domain, scalar or per agent,
        meaning, unit): :meth:`validate`, ``jaxdp info`` and the docs read them.
      models_covered: the final models are a post-processing of the releases :meth:`account`
        accounts for (``release="messages+models"`` then has the same ε); ``False`` makes that
        report ``inf`` with :attr:`models_note` as the reason. ``False`` unless shown.
      models_note: why the models are covered, or what they leak.
      noise_field: the Params field that scales the noise (ε decreases as it grows), used to
        calibrate a run to a target ε; ``None`` when the algorithm cannot be calibrated that way.
      requires: what the algorithm needs from a problem beyond local gradients, among
        :data:`PROBLEM_NEEDS` (e.g. ``("hessian",)``); a problem's ``capabilities`` must hold
        them, else :func:`check_problem_supports` refuses the run before it starts (a model
        problem gives only gradients). Override :meth:`requirements` when they depend on the
        configuration.
      noise_owner: whose noise protects the releases the accountant charges, a key of
        :data:`~jaxdp.privacy.contract.NOISE_OWNERS`: ``"sender"`` (each agent's releases by noise
        it draws alone), ``"agents"`` (another agent's, e.g. a token holder's), ``"pairs"`` (seeds
        shared with a neighbour) or ``"server"``. ``None`` (the default): not declared, so under
        a threat model other than the eavesdropper's the report is ``inf`` unless
        :meth:`account_under` gives a tighter analysis. A private algorithm declares it; the
        tests check a ``"sender"`` declaration against one traced step
        (:func:`~jaxdp.core.noise_dependence`).
      rounds_declared: the sequential communication rounds of one step, for an algorithm that
        communicates beyond the network products one traced step counts (a product through the
        dense matrices, by indexing, or in a ``lax.while_loop``); ``None``: counted
        (:meth:`Accounting.cone_rounds <jaxdp.core._accounting.Accounting.cone_rounds>`,
        :mod:`jaxdp.privacy._cone`).
      server_average: the algorithm's server (or trainer) is the average of its N uploads,
        computed as a row of ``network.mix`` on the complete graph K_N
        (:func:`~jaxdp.network.check_averaging`): it runs only there, and ``jaxdp run`` and
        :func:`jaxdp.compare.compare` give it K_N of the same N (:func:`jaxdp.compare.network_for`).
      default_threat: the threat model :meth:`privacy` reports against when none is named (a
        name of :data:`~jaxdp.privacy.contract.THREATS`): ``"eavesdropper"``, or the only observer
        the algorithm's guarantee covers (DP-FedAvg: ``"trusted_server"``).
    """

    name: ClassVar[str] = "algorithm"
    cites: ClassVar[tuple[str, ...]] = ()
    provenance: ClassVar[str | None] = None
    params_type: ClassVar[type] = type(None)
    noise_field: ClassVar[str | None] = None
    models_covered: ClassVar[bool] = False
    models_note: ClassVar[str] = ("the final models are not shown to be a post-processing of the "
                                  "accounted releases")
    requires: ClassVar[tuple[str, ...]] = ()
    server_average: ClassVar[bool] = False
    noise_owner: ClassVar[str | None] = None
    default_threat: ClassVar[str] = "eavesdropper"
    rounds_declared: ClassVar[int | None] = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        old = [a for a in LEGACY_DECLARATIONS if a in vars(cls)]
        if old:
            raise TypeError(
                f"{cls.__name__} declares {', '.join(old)} as class tuples, which jaxdp no longer "
                "reads: declare each Params field with jaxdp.param(default, domain='positive' | "
                "'nonnegative' | 'probability' | 'fraction', per_agent=False for a scalar field, "
                "doc='its meaning')")
        if cls.provenance not in (None, *PROVENANCES):
            raise TypeError(f"{cls.__name__}.provenance must be one of {PROVENANCES} or None; got "
                            f"{cls.provenance!r}")
        from jaxdp.privacy.contract import NOISE_OWNERS
        if cls.noise_owner not in (None, *NOISE_OWNERS):
            raise TypeError(f"{cls.__name__}.noise_owner must be one of {sorted(NOISE_OWNERS)} "
                            f"or None; got {cls.noise_owner!r}")
        if "privacy" in vars(cls):
            raise TypeError(f"{cls.__name__} overrides privacy(): override account(self, problem, "
                            "network, params, steps, *, delta) instead (privacy() checks the "
                            "inputs, then calls it)")

    # -- contract ---------------------------------------------------------------------------------
    def requirements(self) -> frozenset[str]:
        """What this configuration needs from a problem beyond gradients: ``requires``, and
        what a wrapped algorithm (an ``inner`` field, e.g. a channel's) needs."""
        inner = getattr(self, "inner", None)
        wrapped = inner.requirements() if isinstance(inner, Algorithm) else frozenset()
        return frozenset(self.requires) | wrapped

    def default_params(self) -> Params:
        """The paper's experiment settings."""
        return self.params_type()

    def init(self, key: PRNGKey, problem, network, params: Params) -> State:
        raise NotImplementedError

    def noise(self, key: PRNGKey, state: State, params: Params, k: Array) -> Noise:
        """Every random draw of step ``k``; deterministic algorithms draw nothing."""
        del key, state, params, k
        return {}

    def noise_agent_axes(self, noise: Noise):
        """The axis of each draw of :meth:`noise` that holds the agents: a pytree of ints of
        ``noise``'s structure, 0 (the leading axis) unless an algorithm whose draws are laid out
        otherwise says so (LT-ADMM-DP's ``(τ, N, d)``: 1), or ``None`` for a draw that is nobody's
        privacy noise (DPP2's step η^k, a public input). The checks of whose noise reaches a
        release (:func:`~jaxdp.core.noise_dependence`, :func:`~jaxdp.core.reach_mismatch`) shift
        each agent's slice along it; a draw whose axis is not of size N is owned by no one agent."""
        return jax.tree.map(lambda _: 0, noise)

    def step(self, state: State, noise: Noise, problem, network, params: Params, k: Array):
        """One iteration: returns ``(new_state, messages)``."""
        raise NotImplementedError

    def models(self, state: State) -> AgentArray:
        """The agents' current models, shape ``(N, d)``."""
        return state.x

    @classmethod
    def is_private(cls) -> bool:
        """Whether the algorithm accounts for its releases (it overrides :meth:`account`, or
        :meth:`privacy` for the library's own wrappers)."""
        return cls.account is not Algorithm.account or cls.privacy is not Algorithm.privacy

    def privacy(self, problem, network, params: Params, steps: int, *, delta: float = 1e-5,
                release: str = "messages", threat=None, ideal: bool = False):
        """The privacy guarantee of ``steps`` steps: a :class:`jaxdp.privacy.PrivacyReport`.

        ``report.epsilon`` (per agent) and ``report.epsilon_max`` are the guarantee: a sound
        upper bound under ``report.relation`` and ``report.assumptions``, or ``inf`` with
        ``report.reason``. The paper's printed and corrected theorems are extra curves, never the
        guarantee. An assumption that a check on ``problem`` finds false makes the guarantee
        ``inf``, with the assumption, the bound, the largest value found and what to change in
        ``report.reason`` (:meth:`~jaxdp.privacy.PrivacyReport.with_checks_applied`, for every
        algorithm).

        Args:
          problem, network, params: the run.
          steps: the number of steps run (``K ≥ 1``).
          delta: the δ of every (ε, δ) curve, in ``(0, 1)``.
          release: ``"messages"`` (every message sent) or ``"messages+models"`` (and the final
            models: ``inf`` where they leak beyond the messages).
          threat: who observes (:mod:`jaxdp.privacy._threat`): ``None`` for the algorithm's
            :attr:`default_threat` (``"eavesdropper"``, every message on every link, unless the
            algorithm declares another), ``"eavesdropper"``, ``"neighbours"`` (pairwise: each
            agent sees what it receives), ``"secret_pairs"``, ``"trusted_server"`` (what a
            trusted server publishes), or a :class:`~jaxdp.privacy.Threat` such as
            ``Coalition([0, 3])``. Without a tighter analysis for this algorithm, the
            eavesdropper bound is returned where the observer does not know the noise that
            protects the releases (:attr:`noise_owner`), else ``inf`` with the reason; the report
            says so (``report.threat_fallback``). Under ``"neighbours"`` or a coalition it is then
            tightened by the causal cone (:mod:`jaxdp.privacy._cone`: only the releases that can
            reach the observer by the horizon are composed; ``report.pairwise``).
          ideal: also add :data:`~jaxdp.privacy.pairwise.IDEAL_LINEAR` under a threat model other
            than the eavesdropper's, where the algorithm declares a linear form
            (:meth:`linear_form`): the ideal Gaussian mechanism's curve for contributions fixed
            in advance, never the guarantee and not a bound for an adaptive run (gradients that
            depend on received messages)
            (dense: seconds to minutes; skipped, with the reason in ``report.threat_note``,
            beyond :data:`~jaxdp.privacy.pairwise.MAX_IDEAL_WORK` or the accountant's sizes).

        Returns:
          The report, or ``None`` for a non-private algorithm.

        Raises:
          ValueError: ``steps < 1``, δ outside ``(0, 1)``, an unknown ``release``, or Params the
            accountant cannot use (naming the value).
        """
        from jaxdp.privacy.contract import as_threat, check_delta, check_release

        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"{self.name}.privacy: steps must be an int >= 1; got {steps!r}")
        threat = self.default_threat if threat is None else threat
        delta, release, threat = check_delta(delta), check_release(release), as_threat(threat)
        if network is not None and network.n_agents != problem.n_agents:  # None: not needed
            raise ValueError(f"{self.name}.privacy: the network has {network.n_agents} agents but "
                             f"the problem has data for {problem.n_agents}")
        threat = threat.check(problem.n_agents)
        report, why = self.account_under(threat, problem, network, params, int(steps),
                                         delta=delta)
        tight = report is not None
        if not tight:
            report = self.account(problem, network, params, int(steps), delta=delta)
        if report is None:
            return None
        if self.sampler_of() == "float":  # named "ideal ..." even where the ideal overflows
            report = report.idealized(FLOAT_SAMPLER_REASON)
        if release == "messages+models":
            report = report.covering_models(self.models_covered, self.models_note)
        if not tight:
            report = report.under_threat(threat, self.name, why, self.noise_owner)
            report = self.accounting.within_cone(report, threat, problem, network, params,
                                                 release)
        if ideal:
            report = self.accounting.with_declared_form(report, threat, network, params, release,
                                                        delta)
        return report.with_checks_applied(self.name)  # a failed check: ε = inf, the one place

    @property
    def accounting(self) -> Accounting:
        """The report helpers of this algorithm (:class:`~jaxdp.core._accounting.Accounting`:
        lattice sensitivities and draws, report assembly, the causal cone), which
        :meth:`account` uses: ``self.accounting.report(events, ...)``."""
        return Accounting(self)

    def account_under(self, threat, problem, network, params: Params, steps: int, *,
                      delta: float):
        """``(report, "")``: a report under ``threat`` tighter than the eavesdropper's (its
        ``threat`` set, its proof in its notes), or ``(None, why not)`` and :meth:`privacy`
        returns the eavesdropper bound as the fallback, with ``why`` in its note. Default: no
        tighter analysis."""
        del threat, problem, network, params, steps, delta
        return None, ""

    def linear_form(self, network, params: Params):
        """This algorithm's messages as a declared linear form in its clipped contributions and
        Gaussian noise (a :class:`~jaxdp.privacy.pairwise.GossipForm`), or ``None`` (the default).

        A declaration gives reports under the pairwise and secret threat models the extra curve
        :data:`~jaxdp.privacy.pairwise.IDEAL_LINEAR` (the matrix-factorization accountant's ε of the
        ideal continuous Gaussian mechanism; never the guarantee). Whoever declares a form tests it
        against the program: the stacked step, fed the same noise, must emit ``A c + B z``.
        """
        del network, params
        return None

    def account(self, problem, network, params: Params, steps: int, *, delta: float):
        """The report for the messages (called by :meth:`privacy` with checked arguments).

        The one hook a private algorithm overrides (never ``privacy`` itself): build
        :class:`~jaxdp.privacy.PrivacyEvents` whose sensitivities bound every released vector
        under the stated relation, and return ``self.accounting.report(events, problem, network,
        params, steps, delta=delta, relation=..., assumptions=..., released=...)``.
        """
        del problem, network, params, steps, delta
        return None

    # -- noise --------------------------------------------------------------------------------------
    def sampler_of(self) -> str | None:
        """The noise sampler of a private algorithm (its ``sampler`` field: ``"lattice"``, the
        default, or ``"float"``); ``None`` for an algorithm without one."""
        sampler = getattr(self, "sampler", None)
        return None if sampler is None else check_sampler(sampler)

    # -- costs ------------------------------------------------------------------------------------
    def costs_per_step(self, problem, network, params: Params) -> dict[str, float]:
        """Static costs of one step, summed over agents (host; nothing is computed).

        Found by tracing ``init`` and one ``step`` with a loss and a network that mark every
        gradient, prox, Hessian and product call (:mod:`jaxdp.core._costs` gives the units and
        what counts: calls inside a ``lax.scan`` count once per iteration; both branches of a
        ``lax.cond`` or ``jnp.where`` count, an upper bound).

        Returns:
          ``{"grad_calls", "sample_grads", "prox_calls", "hessian_calls", "rounds", "messages",
          "bits": float}``. Override where the code computes more than the method communicates.
        """
        return count_step_costs(self, problem, network, params)

    def counters(self, state: State) -> dict[str, Array]:
        """Random cumulative counts the algorithm keeps in its state (e.g. ``messages_dropped``),
        each a scalar per replicate; the engine records them with the metrics. Default: none."""
        del state
        return {}

    # -- host-side helpers ------------------------------------------------------------------------
    def config(self) -> dict:
        """Static configuration as a JSON-serialisable dict."""
        return {"name": self.name, **dataclasses.asdict(self)}

    def validate(self, params: Params, problem, network) -> None:
        """Check Params on the host before tracing; raise ``ValueError`` naming the bad value.

        Raises:
          TypeError: ``params`` is not this algorithm's ``params_type``.
          ValueError: a leaf has the wrong shape, is not finite, or lies outside the domain its
            field declares (:func:`~jaxdp.algorithms.param`).
        """
        self.sampler_of()
        if not isinstance(params, self.params_type):
            raise TypeError(
                f"{self.name}: params must be {self.params_type.__name__}; "
                f"got {type(params).__name__}"
            )
        check_params(params, network.n_agents)


PROBLEM_NEEDS = {
    "gradients": "local gradients",
    "sample_gradients": "per-sample gradients",
    "smoothness": "a bound on the Lipschitz constant of each local gradient (problem.smoothness)",
    "hessian": "local Hessians of a margin loss (Newton steps)",
    "local_solve": "an exact local minimization using the loss's closed-form structure",
    "x_star": "a reference solution x*",
}
"""What an algorithm may need from a problem (:attr:`Algorithm.requires`) and what a problem may
give (its ``capabilities``), with their meanings."""


def check_problem_supports(algorithm: Algorithm, problem) -> None:
    """Host: raise ValueError when ``problem`` lacks something ``algorithm`` requires.

    A problem without a ``capabilities`` attribute is assumed to give everything.
    """
    offered = getattr(problem, "capabilities", None)
    if offered is None:
        return
    missing = sorted(algorithm.requirements() - frozenset(offered))
    if missing:
        needs = "; ".join(f"{m}: {PROBLEM_NEEDS.get(m, m)}" for m in missing)
        raise ValueError(
            f"{algorithm.name} cannot run on problem {getattr(problem, 'name', '?')!r}: it needs "
            f"{needs}, which this problem cannot give (it gives {sorted(offered)}); pick an "
            "algorithm that needs only gradients")


def standard_draws(key: PRNGKey, names: tuple[str, ...], shape, sampler) -> dict[str, Array]:
    """Named independent standard draws of one shape: ``{name: sampler(fold_in(key, i), shape)}``.

    Each name gets its own stream, so adding a draw never changes the others (common random numbers).
    """
    return {n: sampler(jax.random.fold_in(key, i), shape) for i, n in enumerate(names)}


def zeros_like_models(problem, network, dtype=None) -> AgentArray:
    """``(N, d)`` zeros in the problem's dtype."""
    dtype = dtype or problem.features.dtype
    return jnp.zeros((network.n_agents, problem.dim), dtype)
