"""``PrivacyReport``: the privacy guarantee of one run, and the curves it is compared with.

**The contract.** :attr:`PrivacyReport.epsilon` (per agent) and :attr:`PrivacyReport.epsilon_max`
are *the guarantee*: at every reported step, the smallest of the report's **sound** curves
(:attr:`PrivacyReport.sound`) — accountants applied to sensitivities derived from everything the
algorithm releases under the stated :attr:`~PrivacyReport.relation`, including hidden state that
a released vector carries. A report with no sound curve, or one whose release cannot be bounded,
has ``ε = inf`` and says why in :attr:`~PrivacyReport.reason`. Each report names its privacy unit
and neighbouring relation (:data:`RELATIONS`), what it covers (:attr:`~PrivacyReport.released`,
:attr:`~PrivacyReport.release`), and its :class:`Assumption` s, each *enforced* (clipping) or
*assumed* (a gradient bound), checked on the problem's data where that is possible.

A report holds, for each *method*, an ``(N, K')`` array of ε per agent after each reported step:
the generic accountants built by :meth:`PrivacyReport.from_events` from the algorithm's
:class:`PrivacyEvents` (``"pure_dp"`` or ``"zcdp"`` closed forms, ``"rdp"`` and ``"pld"`` through
dp-accounting; all sound), and curves added with :meth:`PrivacyReport.with_curve`: the paper's
theorem as printed (:data:`PAPER_PRINTED`) and corrected (:data:`PAPER_CORRECTED`), which are
compared with the guarantee and never are it. Budgets may exceed float64 (paper 000 reaches
1e500): a curve may then also carry exact ``log10`` values, and every output (``table``,
``to_dict``, ``plot``) reads ε through :meth:`PrivacyReport.log10`.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from jaxdp._text import terminal_scripts
from jaxdp.privacy._closed_form import closed_form_curve
from jaxdp.privacy._contract import (HUGE_LOG10, RELATIONS, Assumption, check_release,
                                     default_steps, format_log10, noise_assumption)
from jaxdp.privacy._dp_accounting import (NO_RDP, check_delta, check_steps, pld_epsilon,
                                          rdp_epsilon, relation_of)
from jaxdp.privacy._events import PrivacyEvents
from jaxdp.privacy._sampler_error import (LATTICE_NOTE, SAMPLER_SHARE, run_sampler_tv,
                                          within_sampler_error)
from jaxdp.privacy._threat import (FALLBACK_NOTE, Eavesdropper, Neighbours, as_threat,
                                   fallback_refusal)

NOTES = {
    "pure_dp": "pure ε-DP (δ = 0): Σ Δ/b over every Laplace release, basic composition "
               "(Dwork & Roth 2014, Thm 3.6 and 3.14); subsampling ignored (a valid upper bound)",
    "zcdp": "zCDP: ρ = Σ Δ²/(2·scale²) over every release (Gaussian: Bun & Steinke 2016 Prop. 1.6; "
            "Laplace via ε-DP ⇒ ε²/2-zCDP, Prop. 1.4), ε = ρ + 2√(ρ ln(1/δ)) (Prop. 1.3); "
            "subsampling ignored (a valid upper bound)",
    "rdp": "Rényi DP (Mironov 2017) by dp-accounting's RdpAccountant at its default orders, "
           "improved RDP→DP conversion (Canonne, Kamath & Steinke 2020); Poisson subsampling "
           "amplification under add/remove-one adjacency, sampling without replacement under "
           "replace-one (Wang, Balle & Kasiviswanathan 2019)",
    "pld": "privacy loss distribution by dp-accounting's PLDAccountant (pessimistic estimate, "
           "value_discretization_interval={interval}); Poisson subsampling amplification under "
           "add/remove-one adjacency, sampling without replacement under replace-one by its "
           "dominating pairs (Zhu, Dong & Wang 2022); agents with a release of Δ/scale > 50 get the closed-form "
           "bound",
}

PAPER_PRINTED = "paper (as printed)"
PAPER_CORRECTED = "paper (corrected)"
GUARANTEE = "guarantee"
IDEAL = "ideal"
IDEAL_NOTE = ("NOT a guarantee: the real-valued mechanism, not the floats this run released (the "
              "float sampler's outputs are a sparse set of floats that the data shifts, so one "
              "released coordinate can reveal the data set; run with sampler='lattice' for a "
              "guarantee).")


@dataclasses.dataclass(frozen=True, eq=False)
class PrivacyReport:
    """ε per agent after each reported step, by several methods.

    Attributes:
      steps: ``(K',)`` ints, the step counts (steps composed, ``1..K``) at which ε is reported.
      curves: method name → ``(N, K')`` ε (``inf`` where ε exceeds float64).
      delta: the δ of every (ε, δ) curve (pure-DP curves hold for δ = 0 too).
      notes: method name → what the curve means, assumes, and any erratum.
      events: the events the curves were computed from, if any.
      log10_curves: method name → ``(N, K')`` exact ``log10 ε`` for curves computed in log space.
      sound: the methods that are valid upper bounds under :attr:`relation` and
        :attr:`assumptions`; the guarantee is their pointwise minimum (``inf`` if none).
      relation: a key of :data:`RELATIONS` (the privacy unit follows from it).
      released: what the guarantee covers, in words (which vectors, to whom, at which steps).
      release: ``"messages"`` or ``"messages+models"`` (:data:`RELEASES`).
      assumptions: the :class:`Assumption` s the sound curves rest on.
      reason: why the guarantee is ``inf``, when it is.
      threat: the threat model the guarantee is promised against (a name of
        :data:`~jaxdp.privacy.contract.THREATS`; ``"eavesdropper"``: every message on every link).
      threat_note: the observer in words, and how the bound was obtained under it.
      threat_fallback: ``True`` when no tighter analysis exists for :attr:`threat` and the
        eavesdropper bound (sound for every observer) is what the report holds.
      pairwise: ``(N, N)`` final ``ε_{u→v}`` (row: protected agent ``u``, column: observer ``v``;
        ``inf`` on the diagonal) under ``threat="neighbours"``, else ``None``.
      unprotected: agents that are part of the observer (a coalition's members): their ε is
        ``inf`` and :attr:`epsilon_max` is the max over the other agents.

    Raises:
      ValueError: a curve whose shape is not ``(N, len(steps))`` with one ``N`` for all, an
        unknown relation or release, a sound method that is not a curve, or a curve name with a
        comma (names are listed joined by ``", "``: ``"pld, Poisson"`` read as two curves).
    """

    steps: np.ndarray
    curves: dict[str, np.ndarray]
    delta: float
    notes: dict[str, str] = dataclasses.field(default_factory=dict)
    events: PrivacyEvents | None = None
    log10_curves: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    sound: tuple[str, ...] = ()
    relation: str = "replace_agent"
    released: str = ""
    release: str = "messages"
    assumptions: tuple[Assumption, ...] = ()
    reason: str = ""
    threat: str = "eavesdropper"
    threat_note: str = ""
    threat_fallback: bool = False
    pairwise: np.ndarray | None = None
    unprotected: tuple[int, ...] = ()

    def __post_init__(self):
        steps = np.asarray(self.steps, dtype=np.int64).reshape(-1)
        curves = {k: np.asarray(v, dtype=np.float64) for k, v in self.curves.items()}
        logs = {k: np.asarray(v, dtype=np.float64) for k, v in self.log10_curves.items()}
        shapes = {v.shape for v in (*curves.values(), *logs.values())}
        if len(shapes) > 1 or any(len(s) != 2 or s[1] != steps.size for s in shapes):
            raise ValueError(
                f"PrivacyReport curves must all be (N, {steps.size}) for {steps.size} steps; got "
                f"{ {k: v.shape for k, v in curves.items()} }"
            )
        if set(logs) - set(curves):
            raise ValueError(f"log10_curves {sorted(set(logs) - set(curves))} have no curve")
        listed = [m for m in curves if "," in m]  # the summary and tables list names with ", "
        if listed:
            raise ValueError(f"curve names must not hold a comma (reports list them joined by "
                             f"', '); got {listed}")
        if set(self.sound) - set(curves):
            raise ValueError(f"sound methods {sorted(set(self.sound) - set(curves))} have no curve")
        if self.relation not in RELATIONS:
            raise ValueError(f"relation must be one of {sorted(RELATIONS)}; got {self.relation!r}")
        check_release(self.release)
        for name, value in (("steps", steps), ("curves", curves), ("log10_curves", logs),
                            ("sound", tuple(self.sound)),
                            ("assumptions", tuple(self.assumptions))):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "notes", dict(self.notes))

    @classmethod
    def from_events(cls, events: PrivacyEvents, delta: float,
                    methods: Sequence[str] = ("closed_form", "rdp", "pld"),
                    at_steps: Sequence[int] | None = None, *,
                    value_discretization_interval: float = 1e-3, lattice_draws: int = 0,
                    **contract) -> PrivacyReport:
        """The standard curves of ``events``.

        Args:
          events: what each agent releases at each step.
          delta: δ in ``(0, 1)``.
          methods: any of ``"closed_form"`` (gives ``"pure_dp"`` when every stream is Laplace,
            else ``"zcdp"``), ``"rdp"`` and ``"pld"``.
          at_steps: step counts ``1..K`` to report; ``None`` gives :func:`default_steps` (≤ 50).
          value_discretization_interval: the PLD grid step.
          lattice_draws: ``D``, the number of lattice draws of the whole run (every agent, every
            step), required when ``events`` has lattice streams: the sampler's law is within
            ``η`` (:func:`~jaxdp.privacy.samplers.sampler_tv`) of the ideal rounded law per draw, so
            the run is within ``τ = Dη`` in total variation, and an ``(ε, δ')`` bound of the ideal
            mechanism gives ``(ε, δ' + (1 + e^ε)τ)`` for the one that runs. Every curve is computed
            at ``δ' = δ(1 − 2^{-6})`` and is ``inf`` where ``(1 + e^ε)τ > 2^{-6}δ``.
          **contract: ``relation``, ``released``, ``assumptions`` (see the class). Every method
            computed here is sound for ``events``; the caller vouches that ``events`` carry the
            sensitivities of everything released under ``relation``.

        Returns:
          A :class:`PrivacyReport` holding ``events``, all of whose curves are :attr:`sound`.

        Raises:
          ValueError: an unknown method, bad ``delta`` or ``at_steps``, or a method that does not
            support the events (``"rdp"`` alone with subsampled Laplace or Poisson replace-one
            releases; beside other methods it is left out).
        """
        delta = check_delta(delta)
        unknown = [m for m in methods if m not in ("closed_form", "rdp", "pld")]
        if unknown:
            raise ValueError(
                f"unknown privacy method(s) {unknown}; known: 'closed_form', 'rdp', 'pld'"
            )
        if len(methods) > 1 and (relation_of(events) in NO_RDP or any(
                s.mechanism == "laplace" and np.any((s.sampling_rate < 1) & (s.sensitivity > 0))
                for s in events.streams)):
            methods = [m for m in methods if m != "rdp"]  # dp-accounting has no RDP for them
        steps = (default_steps(events.steps) if at_steps is None
                 else check_steps(at_steps, events.steps))
        lattice = bool(events.lattice_streams)
        if lattice:
            tv = run_sampler_tv(events, lattice_draws)
            delta_full, delta = delta, delta * (1.0 - SAMPLER_SHARE)
        curves, logs, notes = {}, {}, {}
        for method in methods:
            if method == "closed_form":
                name, eps, log10 = closed_form_curve(events, delta)
                curves[name], logs[name] = eps[:, steps - 1], log10[:, steps - 1]
                notes[name] = NOTES[name]
            elif method == "rdp":
                curves["rdp"] = rdp_epsilon(events, delta, at_steps=steps)
                notes["rdp"] = NOTES["rdp"]
            else:
                curves["pld"] = pld_epsilon(events, delta, value_discretization_interval,
                                            at_steps=steps)
                notes["pld"] = NOTES["pld"].format(interval=value_discretization_interval)
        if lattice:
            curves, logs, capped = within_sampler_error(curves, logs, tv, delta_full)
            if capped:
                contract.setdefault("reason", capped)
            notes = {m: f"{n} {LATTICE_NOTE.format(tv=tv)}" for m, n in notes.items()}
            delta = delta_full
        return cls(steps=steps, curves=curves, delta=delta, notes=notes, events=events,
                   log10_curves=logs, sound=tuple(curves),
                   released=contract.pop("released", events.description), **contract)

    @classmethod
    def infinite(cls, n_agents: int, steps: int, delta: float, reason: str,
                 **contract) -> PrivacyReport:
        """A report whose guarantee is ``inf`` at every step, with the reason."""
        ks = default_steps(steps)
        inf = np.full((n_agents, ks.size), np.inf)
        return cls(steps=ks, curves={GUARANTEE: inf}, delta=check_delta(delta),
                   notes={GUARANTEE: reason}, sound=(GUARANTEE,), reason=reason, **contract)

    def idealized(self, reason: str) -> PrivacyReport:
        """The report of a run whose noise is not covered (the float sampler): the guarantee is
        ``inf`` with ``reason``, and each curve stays, renamed ``"ideal <method>"`` (once: a curve
        already so named keeps its name) and not sound, for comparison (what the real-valued
        mechanism would give). A reason the report already had (an ideal ε that is ``inf`` too) is
        kept after ``reason``."""
        if self.reason and self.reason != reason:
            reason = f"{reason}; also: {self.reason}"
        name = {m: m if m.startswith(f"{IDEAL} ") else f"{IDEAL} {m}"
                for m in self.curves if m != GUARANTEE}
        renamed = {name[m]: c for m, c in self.curves.items() if m in name}
        logs = {name[m]: v for m, v in self.log10_curves.items() if m in name}
        notes = {name[m]: f"{IDEAL_NOTE} {n}" if name[m] != m else n
                 for m, n in self.notes.items() if m in name}
        inf = np.full((self._n_agents(), self.steps.size), np.inf)
        return dataclasses.replace(self, curves={GUARANTEE: inf, **renamed}, log10_curves=logs,
                                   notes={GUARANTEE: reason, **notes}, sound=(GUARANTEE,),
                                   reason=reason)

    @property
    def methods(self) -> tuple[str, ...]:
        """The curve names, in insertion order."""
        return tuple(self.curves)

    # -- the guarantee ------------------------------------------------------------------------------
    @property
    def unit(self) -> str:
        """The privacy unit: ``"record"`` or ``"agent"``."""
        return RELATIONS[self.relation][0]

    @property
    def relation_text(self) -> str:
        """The neighbouring relation in words."""
        return RELATIONS[self.relation][1]

    def epsilon_log10_curve(self) -> np.ndarray:
        """``(N, K')`` ``log10`` of the guarantee: the minimum over the sound curves."""
        if not self.sound:
            return np.full((self._n_agents(), self.steps.size), np.inf)
        return np.min(np.stack([self.log10(m) for m in self.sound]), axis=0)

    def epsilon_curve(self) -> np.ndarray:
        """``(N, K')`` the guarantee after each reported step (``inf`` beyond float64)."""
        with np.errstate(over="ignore"):
            return 10.0 ** self.epsilon_log10_curve()

    @property
    def epsilon(self) -> np.ndarray:
        """``(N,)`` the guarantee per agent after the last reported step."""
        return self.epsilon_curve()[:, -1]

    @property
    def epsilon_max(self) -> float:
        """The guarantee: the largest final ε over the protected agents (every agent unless
        :attr:`unprotected`; ``inf`` when none is protected)."""
        eps = np.delete(self.epsilon, list(self.unprotected))
        return float(np.max(eps)) if eps.size else float("inf")

    @property
    def headline(self) -> str:
        """The sound method that gives the worst agent's final guarantee (``""`` if none)."""
        if not self.sound or not np.isfinite(self.epsilon_max):
            return ""
        i = int(np.argmax(np.where(self._protected(), self.epsilon, -np.inf)))
        return min(self.sound, key=lambda m: self.log10(m)[i, -1])

    def _protected(self) -> np.ndarray:
        """``(N,)`` bool: the agents the guarantee protects."""
        mask = np.ones(self._n_agents(), bool)
        mask[list(self.unprotected)] = False
        return mask

    def summary(self) -> str:
        """One paragraph: the guarantee, its relation, observer, what it covers and rests on, as
        plain text for a terminal (TeX indices ``x_i^{k+1}`` printed ``x_i^(k+1)``)."""
        final = self.epsilon_log10_curve()[:, -1][self._protected()]
        eps = format_log10(float(np.max(final)) if final.size else np.inf)
        lines = [f"ε = {eps} (max over agents, {self.headline or 'no finite bound'}) at "
                 f"δ = {self.delta:g} after step {self.steps[-1]}, per {self.unit}: "
                 f"{self.relation_text}."]
        if self.reason:
            lines.append(f"ε = inf: {self.reason}")
        if self.threat != "eavesdropper":
            lines.append(f"Threat model ({self.threat}): {self.threat_note}")
        if self.unprotected:
            lines.append(f"Not protected (part of the observer): agents {list(self.unprotected)}")
        if self.released:
            lines.append(f"Covers ({self.release}): {self.released}")
        lines += [f"Assumes: {a}" for a in self.assumptions]
        return terminal_scripts("\n".join(lines))  # printed on a terminal: x_i^(k+1), not ^{}

    def failed_assumptions(self) -> tuple[Assumption, ...]:
        """The assumptions a check on the problem's data found false."""
        return tuple(a for a in self.assumptions if a.holds is False)

    def with_checks_applied(self, what: str = "this algorithm") -> PrivacyReport:
        """This report with its failed checks applied: where a check on the problem's data found
        an assumption false (:meth:`failed_assumptions`), no sound curve holds, so every one is
        ``inf`` and :attr:`reason` names each failed assumption, the bound, the largest value
        found and what to change (:meth:`Assumption.failure`). Unchanged when every check
        passed. :meth:`Algorithm.privacy <jaxdp.algorithms.Algorithm.privacy>` applies it to
        every report, the one place a failed check is turned into ``ε = inf``."""
        failed = self.failed_assumptions()
        if not failed:
            return self
        return self.without_guarantee(f"{what}: " + "; and ".join(a.failure() for a in failed))

    def without_guarantee(self, reason: str, agents=None) -> PrivacyReport:
        """A copy whose sound curves are ``inf`` (every agent, or only ``agents``) with
        ``reason`` (kept before any reason the report had); other curves (the papers') stay for
        comparison. Pairwise ε toward every observer of those agents is ``inf`` too."""
        rows = np.ones(self._n_agents(), bool) if agents is None else np.isin(
            np.arange(self._n_agents()), list(agents))

        def dropped(curves: dict) -> dict:
            return {m: np.where(rows[:, None], np.inf, c) if m in self.sound else c
                    for m, c in curves.items()}
        pairwise = None if self.pairwise is None else np.where(rows[:, None], np.inf,
                                                               self.pairwise)
        if self.reason and self.reason != reason:
            reason = f"{reason}; also: {self.reason}"
        return dataclasses.replace(self, curves=dropped(self.curves),
                                   log10_curves=dropped(self.log10_curves), reason=reason,
                                   pairwise=pairwise)

    def with_contract(self, **fields) -> PrivacyReport:
        """A copy with contract fields replaced (``relation``, ``released``, ``assumptions``...)."""
        return dataclasses.replace(self, **fields)

    def under_threat(self, threat, what: str = "this algorithm", why: str = "",
                     noise_owner: str | None = None) -> PrivacyReport:
        """This (eavesdropper) report under ``threat`` with no tighter analysis: the same bound
        where the observer does not know the noise it charges (:func:`~jaxdp.privacy.
        fallback_refusal` on the declared ``noise_owner``; :mod:`jaxdp.privacy._threat`), and a
        report that says so (:attr:`threat_fallback`); else every agent's ε is ``inf`` with the
        reason. A coalition's members get ``inf`` (the observer holds their data); under
        ``"neighbours"`` :attr:`pairwise` is each agent's bound for every observer
        (:meth:`Algorithm.privacy <jaxdp.algorithms.Algorithm.privacy>` then tightens it by the
        causal cone: :func:`~jaxdp.privacy.pairwise.within_cone`).

        Args:
          threat: a :class:`~jaxdp.privacy.Threat` or its name.
          what: the algorithm's name, for the note.
          why: why no tighter analysis applies (appended to the note).
          noise_owner: whose noise protects the releases, a key of
            :data:`~jaxdp.privacy.contract.NOISE_OWNERS` (``None``, the default: not declared, so no
            observer but the eavesdropper gets a finite bound).
        """
        threat = as_threat(threat).check(self._n_agents())
        if self.threat_fallback or self.threat != "eavesdropper":
            raise ValueError(f"this report is already under the {self.threat} threat model")
        if isinstance(threat, Eavesdropper):
            return dataclasses.replace(self, threat=threat.name, threat_note=threat.describe())
        refusal = fallback_refusal(threat, noise_owner, what)
        note = f"{threat.describe()}. " + (refusal or FALLBACK_NOTE.format(
            what=what, threat=threat.name)) + (f" (here: {why})" if why else "")
        unprotected = threat.unprotected(self._n_agents())
        out = np.flatnonzero(unprotected)

        def members_inf(curves: dict) -> dict:
            return {m: np.where(unprotected[:, None], np.inf, c) if m in self.sound else c
                    for m, c in curves.items()}
        curves, logs = members_inf(self.curves), members_inf(self.log10_curves)
        report = dataclasses.replace(
            self, curves=curves, log10_curves=logs, threat=threat.name, threat_note=note,
            threat_fallback=True, unprotected=tuple(int(a) for a in out),
            assumptions=self.assumptions + (noise_assumption(noise_owner, what),))
        if refusal:
            report = report.without_guarantee(refusal)
        if isinstance(threat, Neighbours):
            pairwise = np.repeat(report.epsilon[:, None], self._n_agents(), axis=1)
            np.fill_diagonal(pairwise, np.inf)
            report = dataclasses.replace(report, pairwise=pairwise)
        return report

    def covering_models(self, covered: bool, note: str) -> PrivacyReport:
        """The report for ``release="messages+models"``.

        Args:
          covered: the final models are a post-processing of what this report accounts for.
          note: why (or, when not covered, what the models leak).

        Returns:
          A copy covering the models too: unchanged curves when ``covered``; otherwise every
          sound curve is ``inf`` and :attr:`reason` is ``note``.
        """
        if covered:
            return dataclasses.replace(self, release="messages+models",
                                       released=f"{self.released}; final models: {note}")
        inf = np.full((self._n_agents(), self.steps.size), np.inf)
        curves = {m: (inf if m in self.sound else c) for m, c in self.curves.items()}
        logs = {m: v for m, v in self.log10_curves.items() if m not in self.sound}
        return dataclasses.replace(self, curves=curves, log10_curves=logs,
                                   release="messages+models", reason=note)

    def _n_agents(self) -> int:
        return next(iter(self.curves.values())).shape[0]

    def _check(self, method: str) -> None:
        if method not in self.curves:
            raise ValueError(f"no privacy curve {method!r}; this report has {list(self.curves)}")

    def log10(self, method: str) -> np.ndarray:
        """``(N, K')`` ``log10 ε``: exact where computed in log space, else from the curve."""
        self._check(method)
        if method in self.log10_curves:
            return self.log10_curves[method]
        with np.errstate(divide="ignore"):
            return np.log10(self.curves[method])

    def final(self, method: str) -> np.ndarray:
        """``(N,)`` ε of each agent after the last reported step."""
        self._check(method)
        return self.curves[method][:, -1]

    def worst(self, method: str) -> float:
        """The largest final ε over agents."""
        return float(np.max(self.final(method)))

    def with_curve(self, name: str, epsilon, note: str = "", log10=None, *,
                   sound: bool = False) -> PrivacyReport:
        """A copy with one more (or a replaced) curve, e.g. the paper's theorem.

        Args:
          name: e.g. :data:`PAPER_PRINTED` or :data:`PAPER_CORRECTED`.
          epsilon: ``(N, K')`` ε at :attr:`steps` (may be ``inf`` where ``log10`` is given).
          note: what the curve means, assumes, and its errata.
          log10: optional exact ``(N, K')`` ``log10 ε``.
          sound: the curve is a valid upper bound under this report's relation and assumptions
            (an exact closed form), so it joins the guarantee. Papers' theorems are not.

        Returns:
          A new :class:`PrivacyReport`; its ``reason`` (why the guarantee was ``inf``) is dropped
          when a sound curve makes every agent's guarantee finite.
        """
        logs = {k: v for k, v in self.log10_curves.items() if k != name}
        if log10 is not None:
            logs[name] = log10
        kept = tuple(m for m in self.sound if m != name) + ((name,) if sound else ())
        out = dataclasses.replace(self, curves={**self.curves, name: epsilon},
                                  notes={**self.notes, name: note}, log10_curves=logs,
                                  sound=kept)
        if sound and out.reason and np.all(np.isfinite(out.epsilon)):
            out = dataclasses.replace(out, reason="")
        return out

    def to_dict(self) -> dict:
        """A JSON-serialisable summary: every curve as floats (``inf`` kept) and as ``log10``."""
        events = None if self.events is None else {
            "description": self.events.description,
            "mechanisms": [s.mechanism for s in self.events.streams],
            "n_agents": self.events.n_agents, "steps": self.events.steps,
        }
        return {
            "epsilon": [float(v) for v in self.epsilon],
            "epsilon_max": self.epsilon_max,
            "headline": self.headline,
            "delta": float(self.delta),
            "unit": self.unit,
            "relation": self.relation,
            "relation_text": self.relation_text,
            "release": self.release,
            "released": self.released,
            "assumptions": [{**dataclasses.asdict(a), "status": a.status}
                            for a in self.assumptions],
            "reason": self.reason,
            "threat": self.threat,
            "threat_note": self.threat_note,
            "threat_fallback": self.threat_fallback,
            "unprotected": list(self.unprotected),
            "pairwise": None if self.pairwise is None else self.pairwise.tolist(),
            "sound": list(self.sound),
            "steps": [int(s) for s in self.steps],
            "methods": {
                name: {"epsilon": self.curves[name].tolist(),
                       "log10_epsilon": self.log10(name).tolist(),
                       "note": self.notes.get(name, "")}
                for name in self.curves
            },
            "events": events,
        }

    def table(self) -> str:
        """A plain-text table: the guarantee first, then each method; min / median / max over agents
        of the final ε. Sound methods are marked ``*``; a paper curve below the guarantee is flagged.

        The median is taken on ``log10 ε`` (the geometric mean of the middle two for even ``N``).
        """
        guarantee = self.epsilon_log10_curve()[:, -1]
        rows = [(f"{GUARANTEE} ({self.headline or 'inf'})", guarantee, "")]
        for name in self.curves:
            if name == GUARANTEE:
                continue
            final = self.log10(name)[:, -1]
            below = (name not in self.sound and np.any(final < guarantee - 1e-12))
            flag = "  (below the guarantee: not a proven bound)" if below else ""
            rows.append((name + (" *" if name in self.sound else ""), final, flag))
        width = max(24, *(len(r[0]) for r in rows))
        lines = [f"{'method':<{width}} {'min':>12} {'median':>12} {'max':>12}"]
        for name, final, flag in rows:
            stats = (np.min(final), np.median(final), np.max(final))
            lines.append(f"{name:<{width}} " + " ".join(f"{format_log10(v):>12}" for v in stats) + flag)
        lines.append(f"(δ = {self.delta:g}; final ε after step {self.steps[-1]}; per {self.unit}: "
                     f"{self.relation_text}; * sound accountant)")
        if self.reason:
            lines.append(f"ε = inf: {self.reason}")
        if self.threat != "eavesdropper":
            lines.append(f"threat model {self.threat}: {self.threat_note}")
        if self.unprotected:
            lines.append(f"agents {list(self.unprotected)} are part of the observer: ε = inf")
        return "\n".join(lines)

    def plot(self, ax=None):
        """ε versus step: the guarantee (worst agent, bold), then each curve (worst agent as a line,
        all agents as a band; paper curves dashed).

        The y axis is logarithmic; when some ε exceeds 1e300 it shows ``log10 ε`` on a linear axis.

        Args:
          ax: a matplotlib Axes; ``None`` uses ``plt.gca()``.

        Returns:
          The Axes.
        """
        if ax is None:
            import matplotlib.pyplot as plt

            ax = plt.gca()
        logs = {name: self.log10(name) for name in self.curves if name != GUARANTEE}
        guarantee = self.epsilon_log10_curve()
        huge = any(np.any(np.abs(v[np.isfinite(v)]) >= HUGE_LOG10)
                   for v in (*logs.values(), guarantee))
        scale = (lambda v: v) if huge else (lambda v: 10.0 ** v)  # noqa: E731
        if np.any(np.isfinite(guarantee)):
            ax.plot(self.steps, scale(guarantee.max(axis=0)), color="black", lw=2.2,
                    label=f"guarantee ({self.headline})", zorder=4)
        for name, log10 in logs.items():
            values = scale(log10)
            paper = name not in self.sound
            line, = ax.plot(self.steps, values.max(axis=0), ls="--" if paper else "-",
                            label=name + ("" if paper else " (sound)"))
            ax.fill_between(self.steps, values.min(axis=0), values.max(axis=0),
                            color=line.get_color(), alpha=0.15)
        if not huge:
            ax.set_yscale("log")
        ax.set_xlabel("step k")
        ax.set_ylabel("log10 ε" if huge else "ε")
        title = f"privacy per {self.unit} (δ = {self.delta:g})"
        ax.set_title(title + ("" if np.any(np.isfinite(guarantee)) else ": guarantee ε = ∞"))
        ax.legend(fontsize=8)
        return ax
