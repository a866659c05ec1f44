"""The observers of a :class:`~jaxdp.privacy.pairwise.LinearGossip` under a threat model: which
edges each one sees and whose noise it knows. Below both the dense accountant
(:mod:`jaxdp.privacy._pairwise`) and the structured scan (:mod:`jaxdp.privacy._pairwise_scan`), so
neither imports the other back."""
from __future__ import annotations

import dataclasses

import numpy as np

from jaxdp.privacy._threat import Coalition, Eavesdropper, Neighbours, as_threat


@dataclasses.dataclass(frozen=True)
class ObserverView:
    """What one observer sees and knows: observed edge indices and the agents whose noise and
    contributions it knows (its members)."""

    edges: np.ndarray
    members: np.ndarray


def views(form, threat) -> list[ObserverView]:
    """The observers of ``threat``: one per agent under ``"neighbours"``, else one."""
    threat = as_threat(threat).check(form.n_agents)
    if isinstance(threat, Neighbours):
        return [members_view(form, np.array([v])) for v in range(form.n_agents)]
    if isinstance(threat, Coalition):
        return [members_view(form, np.array(threat.agents))]
    if isinstance(threat, Eavesdropper):
        return [ObserverView(np.arange(form.senders.size), np.array([], np.int64))]
    raise ValueError(f"the linear-gossip accountant has no analysis for threat {threat.name!r} "
                     "(no pairwise secrets in this mechanism: use 'eavesdropper')")


def members_view(form, members: np.ndarray) -> ObserverView:
    inside = np.isin(form.receivers, members) & ~np.isin(form.senders, members)
    return ObserverView(np.flatnonzero(inside), members)
