"""Threat models: who observes what (issue 24).

A privacy report is a promise against a named observer. Five observers are declared:

* :class:`Eavesdropper` (the default, every report before issue 24): an outsider who sees every
  message on every link, knows every agent's data but the protected one, and none of the noise.
* :class:`Neighbours` (pairwise network DP, Cyffers & Bellet AISTATS 2022; Cyffers et al.,
  Muffliato, NeurIPS 2022): each agent ``v`` sees the messages it receives, its own state, its own
  data and its own noise; the report holds ``ε_{u→v}`` for every pair and the headline per agent
  ``u`` is the maximum over observers ``v ≠ u``.
* :class:`Coalition` (a set ``S`` of colluding agents pools its views): the messages any member
  receives and the members' states, data and noise; agents of ``S`` are not protected (``inf``).
* :class:`SecretPairs` (SecLDP, Allouah et al. ICML 2024; Bellet et al. ICLR 2026): an outsider
  who sees every message but not the pairwise shared seeds; curious agents know their own.
* :class:`TrustedServer` (central DP in federated learning, McMahan et al. ICLR 2018): what a
  trusted server publishes (its noisy aggregate, the broadcast models), never an upload.

**The fallback.** Every one of these observers sees at most what the eavesdropper sees, plus data
and randomness of agents other than the protected one ``u``. That extra randomness is independent
of ``u``'s data, so conditioning on it leaves the eavesdropper's adaptive composition over ``u``'s
releases intact — **provided the noise the eavesdropper bound charges is noise the observer does
not know.** Each algorithm declares whose noise protects its releases
(:attr:`Algorithm.noise_owner <jaxdp.algorithms.Algorithm.noise_owner>`, one of
:data:`NOISE_OWNERS`) and each observer which owners' draws it may know (:attr:`Threat.knows`).
The eavesdropper bound is returned under another threat model only when the declaration is
``"sender"`` (each release carrying ``u``'s data is protected by noise ``u`` draws alone) or names
an owner the observer does not know, saying so (:attr:`PrivacyReport.threat_fallback`); where the
observer knows the protecting noise (a token holder subtracts its own draw: DP-RWADMM), or the
algorithm declares nothing, ``ε = inf`` with the reason (:func:`fallback_refusal`).
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np


NOISE_OWNERS = {
    "sender": "each release that carries agent u's data is protected by noise u draws itself, "
              "fresh, and no one else knows (the noise the eavesdropper bound charges)",
    "agents": "a release that carries agent u's data may be protected by noise another agent "
              "draws (a token holder, a relay), who knows its own draw",
    "pairs": "the noise the bound charges includes randomness u shares with a neighbour "
             "(pairwise seeds), which that neighbour knows",
    "server": "the releases are protected by noise the server draws, which the server knows",
}
"""Whose noise protects a release (:attr:`Algorithm.noise_owner
<jaxdp.algorithms.Algorithm.noise_owner>`): name → meaning."""

AGENT_KNOWLEDGE = frozenset({"agents", "pairs"})
"""What an observer made of agents knows: its members' own draws and the seeds they share."""


@dataclasses.dataclass(frozen=True)
class Threat:
    """A threat model: the observer a privacy report's ε is promised against.

    Class attributes:
      name: the short name (also the string shorthand of :func:`as_threat`).
      sees: what the observer sees, in words.
      knows: the noise owners (:data:`NOISE_OWNERS`) whose draws the observer may know besides
        the protected agent's own; a release protected by such noise is not protected from it.
    """

    name: ClassVar[str] = "threat"
    sees: ClassVar[str] = ""
    knows: ClassVar[frozenset[str]] = frozenset()

    def unprotected(self, n_agents: int) -> np.ndarray:
        """``(N,)`` bool: the agents that are part of the observer (they are not protected: their
        ``ε`` is ``inf``)."""
        return np.zeros(n_agents, bool)

    def check(self, n_agents: int) -> Threat:
        """``self`` after checking it fits a network of ``n_agents`` agents."""
        del n_agents
        return self

    def describe(self) -> str:
        """The threat model in one sentence."""
        return f"{self.name}: {self.sees}"


@dataclasses.dataclass(frozen=True)
class Eavesdropper(Threat):
    """Every message on every link (local DP per message): today's, the default."""

    name: ClassVar[str] = "eavesdropper"
    sees: ClassVar[str] = ("an outsider who sees every message on every link, at every step, and "
                           "none of the noise")


@dataclasses.dataclass(frozen=True)
class Neighbours(Threat):
    """Pairwise network DP: agent ``v`` sees what it receives (Cyffers et al., NeurIPS 2022)."""

    name: ClassVar[str] = "neighbours"
    sees: ClassVar[str] = ("each agent v on its own: the messages it receives, its own state, data "
                           "and noise (pairwise ε_{u→v}; the headline is the max over v ≠ u)")
    knows: ClassVar[frozenset[str]] = AGENT_KNOWLEDGE


@dataclasses.dataclass(frozen=True)
class Coalition(Threat):
    """A set of colluding agents pooling their views.

    Attributes:
      agents: the colluding agents' indices (sorted, distinct).
    """

    agents: tuple[int, ...] = ()
    name: ClassVar[str] = "coalition"
    sees: ClassVar[str] = ("the colluding agents together: every message any of them receives, "
                           "their states, data and noise")
    knows: ClassVar[frozenset[str]] = AGENT_KNOWLEDGE

    def __post_init__(self):
        agents = tuple(sorted({int(a) for a in np.atleast_1d(np.asarray(self.agents)).tolist()}))
        if not agents:
            raise ValueError("Coalition needs at least one agent")
        object.__setattr__(self, "agents", agents)

    def check(self, n_agents: int) -> Coalition:
        bad = [a for a in self.agents if not 0 <= a < n_agents]
        if bad:
            raise ValueError(f"Coalition agents {bad} are not agents of a network of {n_agents}")
        return self

    def unprotected(self, n_agents: int) -> np.ndarray:
        out = np.zeros(n_agents, bool)
        out[list(self.agents)] = True
        return out

    def describe(self) -> str:
        return f"{self.name} {list(self.agents)}: {self.sees}"


@dataclasses.dataclass(frozen=True)
class SecretPairs(Threat):
    """SecLDP: every message, but not the pairwise shared seeds (Allouah et al., ICML 2024)."""

    name: ClassVar[str] = "secret_pairs"
    sees: ClassVar[str] = ("an outsider who sees every message but not the seeds the agents of "
                           "each edge share; a curious agent knows its own")
    knows: ClassVar[frozenset[str]] = AGENT_KNOWLEDGE


@dataclasses.dataclass(frozen=True)
class TrustedServer(Threat):
    """A federated round's central-DP observer: the server is trusted and its uplinks are secure.

    The observer sees what the server publishes, its noisy aggregate and the models broadcast
    from it, never a client's upload: the uploads travel on secure links to the server, which is
    not the observer (the central-DP model of DP-FedAvg, McMahan, Ramage, Talwar & Zhang, ICLR
    2018, whose moments accountant covers the server's noisy sums only). Only an algorithm whose
    noise is added by that server has a finite bound for this observer and no other (DP-FedAvg,
    :class:`~jaxdp.algorithms.DPFedAvg`, whose default threat model it is); every other
    algorithm falls back on its eavesdropper bound (the broadcasts are messages, so this
    observer sees at most what the eavesdropper sees).
    """

    name: ClassVar[str] = "trusted_server"
    sees: ClassVar[str] = ("the trusted server's published outputs only (its noisy aggregate and "
                           "the broadcast models); the uploads reach the server on secure links "
                           "and are seen by no one else")


THREATS = {t.name: t for t in (Eavesdropper, Neighbours, Coalition, SecretPairs, TrustedServer)}
"""Threat model name → class."""


def as_threat(threat) -> Threat:
    """A :class:`Threat` from an object or its name (``"coalition"`` needs the object: its agents).

    Raises:
      ValueError: an unknown name, ``"coalition"`` as a string, or another type.
    """
    if isinstance(threat, Threat):
        return threat
    if threat == "coalition":
        raise ValueError("threat='coalition' needs its agents: pass "
                         "jaxdp.privacy.Coalition([i, j, ...])")
    if isinstance(threat, str) and threat in THREATS:
        return THREATS[threat]()
    raise ValueError(f"unknown threat model {threat!r}; known: {sorted(THREATS)} (strings) or "
                     "a jaxdp.privacy.Threat")


def parse_threat(spec: str) -> Threat:
    """A threat model from a command-line spec: a name of :data:`THREATS`, or
    ``coalition:I,J,...`` (the colluding agents).

    Raises:
      ValueError: an unknown name or agents that are not integers.
    """
    name, _, agents = str(spec).partition(":")
    if name != "coalition":
        if agents:
            raise ValueError(f"threat {name!r} takes no agents; got {spec!r}")
        return as_threat(name)
    try:
        return Coalition(tuple(int(a) for a in agents.split(",") if a.strip()))
    except ValueError as err:
        raise ValueError(f"--threat coalition:I,J,... needs agent indices; got {spec!r} "
                         f"({err})") from None


FALLBACK_NOTE = ("no tighter analysis of {what} under the {threat} threat model: the eavesdropper "
                 "bound (every message on every link) is returned; it is sound for this observer, "
                 "whose view is at most every message plus data and noise of agents other than "
                 "the protected one, independent of its data")
"""The text of a report whose threat model falls back on the eavesdropper bound."""


def fallback_refusal(threat: Threat, noise_owner: str | None, what: str) -> str:
    """Why the eavesdropper bound of ``what`` may not be moved to ``threat`` (``""``: it may).

    It may when the algorithm declares ``noise_owner`` and the observer does not know that
    owner's draws (:attr:`Threat.knows`); ``"sender"`` is known to no observer other than the
    sender, which is then unprotected anyway.

    Raises:
      ValueError: ``noise_owner`` is neither ``None`` nor a key of :data:`NOISE_OWNERS`.
    """
    if noise_owner is None:
        return (f"{what} does not declare whose noise protects its releases "
                "(Algorithm.noise_owner), so the eavesdropper bound cannot be moved to the "
                f"{threat.name} observer, who knows some agents' noise")
    if noise_owner not in NOISE_OWNERS:
        raise ValueError(f"noise_owner must be one of {sorted(NOISE_OWNERS)} or None; got "
                         f"{noise_owner!r}")
    if noise_owner in threat.knows:
        return (f"the {threat.name} observer knows the noise that protects {what}'s releases "
                f"({noise_owner}: {NOISE_OWNERS[noise_owner]}): it subtracts its own draw and "
                "sees the data-dependent value unprotected")
    return ""
