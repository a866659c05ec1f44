"""The report helpers of one algorithm, off the contract a user implements (issue 39, item 4).

An :class:`~jaxdp.algorithms.Algorithm` declares its releases (``account``, ``account_under``,
``linear_form``, ``noise_owner``, ``rounds_declared``); :class:`Accounting` turns them into a
report: the lattice sensitivities of a release (the lattice sampler's rounding slack), the lattice
draws of a run, the report assembly, and the causal-cone and ideal-linear stages of
:meth:`Algorithm.privacy`. Reach it as ``alg.accounting`` (a wrapper such as
:class:`~jaxdp.channels.WithChannel` returns its own subclass, which counts its draws from its
traced program), e.g. inside ``account``::

    events = self.accounting.declare_releases(PrivacyEvents.from_schedule(...), problem)
    return self.accounting.report(events, problem, network, params, steps, delta=delta,
                                  relation="replace_agent", assumptions=(...))
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.privacy.samplers import lattice_sensitivity


@dataclasses.dataclass(frozen=True)
class Accounting:
    """The lattice and report helpers of ``alg`` (stateless: built per use, nothing cached).

    Attributes:
      alg: the :class:`~jaxdp.algorithms.Algorithm` whose releases are accounted.
    """

    alg: Any

    # -- lattice -----------------------------------------------------------------------------------
    def release_sensitivity(self, sensitivity, dim: int, scale, problem, *, law: str,
                            clipped: bool = True):
        """The sensitivity to declare for a release of ``dim`` coordinates with noise ``scale``:
        the lattice bound (:func:`~jaxdp.privacy.samplers.lattice_sensitivity`, rounding included)
        under the lattice sampler, else ``sensitivity``."""
        if self.alg.sampler_of() != "lattice":
            return sensitivity
        return lattice_sensitivity(sensitivity, dim, scale, problem.features.dtype, law=law,
                                   clipped=clipped)

    def declare_releases(self, events, problem, *, clipped: bool = True,
                         description: str | None = None):
        """``events`` as the algorithm's sampler releases them: under the lattice sampler every
        stream's sensitivity becomes its lattice bound at that step's scale (one release of
        ``problem.dim`` coordinates) and the stream is marked ``lattice``; else unchanged."""
        if self.alg.sampler_of() != "lattice":
            return events
        from jaxdp.privacy.samplers import LatticeClampWarning, clamp_warning
        from jaxdp.privacy.contract import concat

        def scale_of(s):
            return np.exp(np.minimum(s.log_scale, 700.0))

        clamped = [clamp_warning(scale_of(s), problem.features.dtype, s.mechanism)
                   for s in events.streams]
        if any(clamped):  # once per report, the first stream that clamps
            warnings.warn(f"{self.alg.name}: {next(c for c in clamped if c)}",
                          LatticeClampWarning, stacklevel=3)

        def on_lattice(s):
            scale = scale_of(s)
            sens = np.where(s.sensitivity > 0, lattice_sensitivity(
                s.sensitivity, problem.dim, scale, problem.features.dtype, law=s.mechanism,
                clipped=clipped), 0.0)
            return dataclasses.replace(s, sensitivity=sens, extra_streams=(), lattice=True)
        return concat([on_lattice(s) for s in events.streams],
                      events.description if description is None else description)

    def lattice_draw_count(self, problem, network, params, steps: int) -> int:
        """``D``: the draws of a whole run, every float leaf of one step's ``noise`` (traced
        with ``jax.eval_shape``, nothing computed) times ``steps`` — an upper bound on the lattice
        draws, which the report needs for the sampler's distance to the ideal law."""
        alg = self.alg

        def one_step(key):
            state = alg.init(key, problem, network, params)
            return alg.noise(key, state, params, jnp.asarray(0))
        shapes = jax.eval_shape(one_step, jax.random.key(0))
        return steps * sum(int(np.prod(leaf.shape)) for leaf in jax.tree.leaves(shapes)
                           if jnp.issubdtype(leaf.dtype, jnp.floating))

    # -- reports -----------------------------------------------------------------------------------
    def report(self, events, problem, network, params, steps: int, *, delta: float,
               relation: str, assumptions, released: str | None = None, **options):
        """The report ``account`` returns: the standard curves of ``events`` (every one sound)
        under the neighbouring ``relation`` and the ``assumptions`` they rest on, both required
        (``assumptions=()`` states that there are none).

        Args:
          events: the :class:`~jaxdp.privacy.PrivacyEvents` of every release, whose sensitivities
            bound what one neighbouring change under ``relation`` moves.
          relation: a key of :data:`jaxdp.privacy.RELATIONS` (``"replace_agent"``, ...).
          assumptions: the :class:`~jaxdp.privacy.Assumption` s the sensitivities rest on.
          released: what the guarantee covers, in words (default: ``events.description``).
          **options: ``methods``, ``at_steps``, ... of
            :meth:`PrivacyReport.from_events <jaxdp.privacy.PrivacyReport.from_events>`.
        """
        contract = {"relation": relation, "assumptions": tuple(assumptions),
                    **({} if released is None else {"released": released})}
        return self.report_from_events(events, problem, network, params, steps, delta=delta,
                                       **contract, **options)

    def report_from_events(self, events, problem, network, params, steps: int, *,
                           delta: float, **contract):
        """:meth:`PrivacyReport.from_events <jaxdp.privacy.PrivacyReport.from_events>` with the
        lattice draws of this run (:meth:`lattice_draw_count`) when ``events`` has lattice
        streams."""
        from jaxdp.privacy import PrivacyReport
        draws = (self.lattice_draw_count(problem, network, params, steps)
                 if events.lattice_streams else 0)
        return PrivacyReport.from_events(events, delta, lattice_draws=draws, **contract)

    # -- threat stages of Algorithm.privacy --------------------------------------------------------
    def cone_rounds(self, problem, network, params) -> int:
        """``R``: a bound on the sequential communication rounds of one step, for the causal
        cone (:mod:`jaxdp.privacy._cone`): ``rounds_declared``, else the product calls of one
        traced step (``costs_per_step()["rounds"]``); ``0`` when none is counted (the algorithm
        communicates another way: no cone)."""
        if self.alg.rounds_declared is not None:
            return int(self.alg.rounds_declared)
        return int(np.ceil(self.alg.costs_per_step(problem, network, params)["rounds"]))

    def within_cone(self, report, threat, problem, network, params, release):
        """``report`` under the neighbours or a coalition threat tightened by the causal cone
        (:func:`~jaxdp.privacy.pairwise.within_cone`: only the releases of ``u`` that can reach the
        observer by the horizon are composed), where the fallback applies (the declared noise
        owner permits it), only the messages are released and ``R ≥ 1`` rounds are counted."""
        from jaxdp.privacy import Coalition, Neighbours
        from jaxdp.privacy.contract import fallback_refusal
        from jaxdp.privacy.pairwise import within_cone

        alg = self.alg
        if (not isinstance(threat, (Neighbours, Coalition)) or release != "messages"
                or network is None or fallback_refusal(threat, alg.noise_owner, alg.name)):
            return report
        rounds = self.cone_rounds(problem, network, params)
        if rounds < 1:
            return report
        senders, receivers = network.base._host_edges()  # the union of the edge sets
        return within_cone(report, threat, senders, receivers, rounds)

    def with_declared_form(self, report, threat, network, params, release, delta):
        """``report`` with :data:`~jaxdp.privacy.pairwise.IDEAL_LINEAR` where a form is declared
        (``alg.linear_form``), the threat model is not the eavesdropper's (whose report is the
        reference) and only the messages are released."""
        from jaxdp.privacy import Eavesdropper
        from jaxdp.privacy.pairwise import with_ideal_linear

        if isinstance(threat, Eavesdropper) or release != "messages" or network is None:
            return report
        form = self.alg.linear_form(network, params)
        return report if form is None else with_ideal_linear(report, form, threat, delta)
