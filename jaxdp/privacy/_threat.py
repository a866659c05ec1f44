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
and randomness of agents other than the protected one ``u``, which are independent of ``u``'s data:
conditioning on them leaves the eavesdropper's adaptive composition over ``u``'s releases intact
(each release of ``u`` is a mechanism given the whole past transcript). So the eavesdropper bound
is sound for every threat model here, for every agent outside a coalition, and is what a report
returns where no tighter analysis exists, saying so (:attr:`PrivacyReport.threat_fallback`).
"""
from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np


@dataclasses.dataclass(frozen=True)
class Threat:
    """A threat model: the observer a privacy report's ε is promised against.

    Class attributes:
      name: the short name (also the string shorthand of :func:`as_threat`).
      sees: what the observer sees, in words.
    """

    name: ClassVar[str] = "threat"
    sees: ClassVar[str] = ""

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


THREATS = {t.name: t for t in (Eavesdropper, Neighbours, Coalition, SecretPairs)}
"""Threat model name → class."""
THREATS[TrustedServer.name] = TrustedServer


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
