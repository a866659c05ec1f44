"""Params fields declared once, as data: :func:`param` puts each field's range, shape (one value
per agent, or one scalar for all), meaning and unit on the dataclass field's ``metadata``.

Validation (:func:`check_params`), ``jaxdp info``, the docs catalogue and the tests read the same
declaration through :func:`param_specs`:

.. code-block:: python

    @chex.dataclass(frozen=True)
    class MyParams:
        alpha: float = jaxdp.param(0.05, domain="positive", per_agent=False, doc="α, step")
        sigma: float = jaxdp.param(1.0, domain="nonnegative", doc="σ, noise std", unit="·C")

A plain field (``x: float = 0.0``) is a finite real, scalar or per agent, with no meaning shown.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

METADATA_KEY = "jaxdp"
"""The key of a field's :class:`ParamSpec` in ``dataclasses.Field.metadata``."""


@dataclasses.dataclass(frozen=True)
class Domain:
    """An interval of admissible values: ``lo``/``hi`` (``None``: unbounded), open or closed."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def contains(self, value) -> np.ndarray:
        """Elementwise membership of ``value`` (an array)."""
        v = np.asarray(value, np.float64)
        ok = np.ones(v.shape, bool)
        if self.lo is not None:
            ok &= v > self.lo if self.lo_open else v >= self.lo
        if self.hi is not None:
            ok &= v < self.hi if self.hi_open else v <= self.hi
        return ok

    @property
    def text(self) -> str:
        """The interval in words: ``"> 0"``, ``">= 0"``, ``"in [0, 1]"``, ``"any real"``."""
        if self.lo is None and self.hi is None:
            return "any real"
        if self.hi is None:
            return f"{'>' if self.lo_open else '>='} {self.lo:g}"
        if self.lo is None:
            return f"{'<' if self.hi_open else '<='} {self.hi:g}"
        return (f"in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}"
                f"{')' if self.hi_open else ']'}")


DOMAINS = {
    "real": Domain(),
    "positive": Domain(0.0, lo_open=True),
    "nonnegative": Domain(0.0),
    "probability": Domain(0.0, 1.0),
    "fraction": Domain(0.0, 1.0, lo_open=True),
}
"""The named domains :func:`param` accepts (or give a :class:`Domain`)."""


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    """What one Params field is: its :class:`Domain`, whether it may hold one value per agent
    (an ``(N,)`` array) or must be one scalar for all agents, its meaning and its unit."""

    domain: Domain = Domain()
    per_agent: bool = True
    doc: str = ""
    unit: str | None = None

    @property
    def shape_text(self) -> str:
        return "scalar or (N,)" if self.per_agent else "scalar"

    @property
    def summary(self) -> str:
        """The meaning, then the declared facts: ``"σ, noise std [> 0; scalar or (N,)]"``."""
        facts = [self.domain.text, self.shape_text] + ([f"unit {self.unit}"] if self.unit else [])
        return f"{self.doc} [{'; '.join(facts)}]".strip()


def param(default: Any, *, domain: str | Domain = "real", per_agent: bool = True, doc: str,
          unit: str | None = None):
    """A Params field with its facts declared once (a ``dataclasses.field``).

    Args:
      default: the default value (the paper's setting).
      domain, per_agent, doc, unit: the field's :class:`ParamSpec` (see :func:`param_spec`).

    Raises:
      ValueError: an unknown domain name or an empty ``doc``.
    """
    spec = param_spec(domain=domain, per_agent=per_agent, doc=doc, unit=unit)
    return dataclasses.field(default=default, metadata={METADATA_KEY: spec})


def param_spec(*, domain: str | Domain = "real", per_agent: bool = True, doc: str,
               unit: str | None = None) -> ParamSpec:
    """The :class:`ParamSpec` of a field (what :func:`param` puts on a Params field and a channel
    transform declares for each of its fields, :func:`jaxdp.channels.declare`).

    Args:
      domain: a name of :data:`DOMAINS` (``"positive"``, ``"nonnegative"``, ``"probability"``
        ``[0, 1]``, ``"fraction"`` ``(0, 1]``, ``"real"``) or a :class:`Domain`.
      per_agent: ``True``: a scalar or one value per agent ``(N,)``; ``False``: one scalar for
        every agent (the update uses it along the model axis).
      doc: the meaning, with the paper's symbol and equation.
      unit: the unit, when the number has one.

    Raises:
      ValueError: an unknown domain name or an empty ``doc``.
    """
    if isinstance(domain, str):
        if domain not in DOMAINS:
            raise ValueError(f"param: unknown domain {domain!r}; known: {', '.join(DOMAINS)} "
                             "(or a jaxdp.algorithms.Domain)")
        domain = DOMAINS[domain]
    if not doc:
        raise ValueError("param: doc= must say what the field means")
    return ParamSpec(domain=domain, per_agent=bool(per_agent), doc=doc, unit=unit)


def param_specs(params_type: type) -> dict[str, ParamSpec]:
    """``{field: ParamSpec}`` of a Params dataclass, in field order (a plain field gets the
    default spec: any real, scalar or per agent, no doc)."""
    return {f.name: f.metadata.get(METADATA_KEY, ParamSpec())
            for f in dataclasses.fields(params_type)}


def undeclared_fields(params_type: type) -> list[str]:
    """The fields declared without :func:`param` (no meaning, no range)."""
    return [f.name for f in dataclasses.fields(params_type) if METADATA_KEY not in f.metadata]


def check_params(params, n_agents: int) -> None:
    """Every leaf of ``params`` against its field's :class:`ParamSpec`: finite, scalar or
    ``(N,)`` (scalar only where ``per_agent=False``) and inside its domain.

    Raises:
      ValueError: naming the field, the rule and the offending value (and agent).
    """
    owner = type(params).__name__
    for field, spec in param_specs(type(params)).items():
        check_value(f"{owner}.{field}", spec, params[field], n_agents)


def check_value(label: str, spec: ParamSpec, value, n_agents: int) -> None:
    """One Params leaf against its :class:`ParamSpec` (the rules of :func:`check_params`).

    Raises:
      ValueError: naming ``label``, the rule and the offending value (and agent).
    """
    check_per_agent_value(label, value, n_agents)
    if not spec.per_agent and np.ndim(value) != 0:
        raise ValueError(f"{label} must be a scalar (one value for every agent); got shape "
                         f"{np.shape(value)}")
    bad = ~spec.domain.contains(value)
    if np.any(bad):
        i = int(np.argmax(bad))
        where = f" at agent {i}" if np.ndim(value) else ""
        got = np.asarray(value, np.float64).flat[i]
        raise ValueError(f"{label} must be {spec.domain.text} for every agent; got "
                         f"{got:g}{where}")


def check_per_agent_value(label: str, value, n_agents: int) -> None:
    """A Params leaf must be a finite scalar or an ``(N,)`` array (host check)."""
    value = np.asarray(value)
    if value.ndim > 1 or (value.ndim == 1 and value.shape[0] != n_agents):
        raise ValueError(
            f"{label} must be a scalar or have shape ({n_agents},) (one value per agent); "
            f"got shape {value.shape}"
        )
    if not np.all(np.isfinite(value.astype(np.float64))):
        raise ValueError(f"{label} must be finite; got {value}")
