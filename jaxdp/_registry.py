"""One registry type for every vocabulary the command line takes by name.

A :class:`Registry` maps a name to an object (an algorithm class, a problem builder, a channel
transform constructor, a graph family, a reproduction) with a one-line description each, and
reads the objects that installed packages declare under its entry-point group:

=====================================  =================================  ========================
registry                               entry-point group                  ``jaxdp`` reads it in
=====================================  =================================  ========================
``jaxdp.algorithms.REGISTRY``          ``jaxdp.algorithms``               ``run/info/compare/list``
``jaxdp.problems.PROBLEMS``            ``jaxdp.problems``                 ``--problem``
``jaxdp.channels.TRANSFORMS``          ``jaxdp.transforms``               ``--channel`` specs
``jaxdp.network.GRAPHS``               ``jaxdp.networks``                 ``--network``
``jaxdp.experiments.REPRODUCTIONS``    ``jaxdp.reproductions``            ``reproduce``
=====================================  =================================  ========================

A package ships entries in its ``pyproject.toml`` (the entry's name is the registry key, its
value ``"module:attribute"``)::

    [project.entry-points."jaxdp.problems"]
    my_problem = "my_package.problems:my_problem"

    [project.entry-points."jaxdp.transforms"]
    flip = "my_package.channels:flip"

The group is scanned on the first read, again whenever ``sys.path`` has changed, and again on a
miss (a name not held), so a package installed after the first read is found when it is asked
for. An entry point that fails to load (import error, wrong type, a name already taken) is
skipped with a warning naming its distribution and entry, and asking for its name raises that
error: one broken plugin never breaks the other names.
"""
from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator, MutableMapping
from importlib.metadata import entry_points

_NAME = re.compile(r"[A-Za-z_][\w-]*\Z")
_MISSING = object()


class UnknownNameError(KeyError, ValueError):
    """A name a registry does not hold (a ``KeyError`` for mapping code, a ``ValueError`` for
    callers checking arguments); its message lists the known names and how to add one."""

    def __str__(self) -> str:
        return str(self.args[0])


def first_paragraph(doc) -> str:
    """The first paragraph of a docstring, joined into one line (``""`` when none)."""
    lines = []
    for line in (doc or "").strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


class Registry(MutableMapping):
    """``{name: object}`` for one vocabulary, with its entry-point group read lazily.

    Reads (``[name]``, :meth:`get`, ``in``, iteration, :meth:`names`) see the built-in entries,
    those added with :meth:`register` (or ``registry[name] = obj``, which replaces) and those of
    installed packages (:attr:`group`).

    Args:
      kind: what an entry is, in messages (``"problem"``, ``"graph"``, ...).
      group: the entry-point group (``"jaxdp.problems"``).
      entries: the built-in ``{name: object}``.
      how: how a user adds one, appended to the unknown-name error.
    """

    def __init__(self, kind: str, group: str, entries=None, *, how: str = ""):
        self.kind, self.group = kind, group
        self.how = how or "register one with .register(name, obj)"
        self._entries: dict[str, object] = {}
        self._descriptions: dict[str, str] = {}
        self._broken: dict[str, Exception] = {}
        self._seen: set[tuple[str, str]] = set()
        self._scanned_path: tuple | None = None
        for name, obj in (entries or {}).items():
            self.register(name, obj)

    # -- writing ----------------------------------------------------------------------------------
    def check(self, name: str, obj) -> None:
        """Refuse an entry that is not of this vocabulary (here: not callable).

        Raises:
          TypeError: ``obj`` is not callable.
        """
        if not callable(obj):
            raise TypeError(f"register: the {self.kind} {name!r} must be callable; got {obj!r}")

    def register(self, name: str, obj=None, *, description: str | None = None,
                 replace: bool = False):
        """Add ``obj`` under ``name`` and return it; without ``obj``, a decorator
        (``@PROBLEMS.register("mine")``). Registering the same object again is a no-op.

        Args:
          description: the line ``jaxdp list`` prints (default: the first paragraph of
            ``obj``'s docstring).
          replace: take a name another object holds.

        Raises:
          ValueError: a name that is not an identifier (letters, digits, ``_``, ``-``), or one
            another object holds (unless ``replace=True``).
          TypeError: ``obj`` is not of this vocabulary (:meth:`check`).
        """
        if obj is None:
            return lambda o: self.register(name, o, description=description, replace=replace)
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"register: a {self.kind} name is an identifier (letters, digits, "
                             f"'_', '-'); got {name!r}")
        self.check(name, obj)
        held = self._entries.get(name, _MISSING)
        if held is not _MISSING and held is not obj and not replace:
            raise ValueError(f"register: the {self.kind} name {name!r} is taken by "
                             f"{_qualname(held)}; pick another name or pass replace=True")
        self._entries[name] = obj
        self._descriptions[name] = (first_paragraph(getattr(obj, "__doc__", ""))
                                    if description is None else description)
        self._broken.pop(name, None)
        return obj

    def unregister(self, name: str):
        """Remove and return the object registered under ``name``.

        Raises:
          UnknownNameError: no entry of that name (a ``KeyError``).
        """
        if name not in self:
            raise UnknownNameError(f"unregister: no {self.kind} named {name!r}")
        self._descriptions.pop(name, None)
        return self._entries.pop(name)

    def __setitem__(self, name: str, obj) -> None:
        self.register(name, obj, replace=True)

    def __delitem__(self, name: str) -> None:
        self.unregister(name)

    # -- reading ----------------------------------------------------------------------------------
    def get(self, name: str, default=_MISSING):
        """The object registered under ``name`` (``default`` if given and none is).

        Raises:
          UnknownNameError: an unknown name (a ``ValueError`` listing the known names and how
            to add one), or the entry point of that name failed to load (its error).
        """
        if name in self:
            return self._entries[name]
        if default is not _MISSING:
            return default
        if name in self._broken:
            raise UnknownNameError(str(self._broken[name])) from self._broken[name]
        raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}. "
                               f"{self.hint}")

    @property
    def hint(self) -> str:
        """How to add an entry (the tail of the unknown-name error)."""
        return f"To add one: {self.how}, or declare an entry point of the group {self.group!r}."

    def describe(self, name: str) -> str:
        """The one-line description of ``name`` (what ``jaxdp list`` prints)."""
        self.get(name)
        return self._descriptions[name]

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._loaded())

    def __getitem__(self, name: str):
        return self.get(name)

    def __contains__(self, name) -> bool:
        if name in self._loaded():
            return True
        self._scan()  # a miss: a package may have been installed since the last scan
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._loaded()))

    def __len__(self) -> int:
        return len(self._loaded())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.group!r}, names={self.names()})"

    # -- entry points -----------------------------------------------------------------------------
    def _loaded(self) -> dict[str, object]:
        """The entries, after scanning the group if ``sys.path`` changed since the last scan."""
        if self._scanned_path != tuple(sys.path):
            self._scan()
        return self._entries

    def _scan(self) -> None:
        """Load the group's entry points not seen before."""
        self._scanned_path = tuple(sys.path)
        for ep in entry_points(group=self.group):
            if (ep.name, ep.value) not in self._seen:
                self._seen.add((ep.name, ep.value))
                self._load(ep)

    def _load(self, ep) -> None:
        """Register one entry point; a broken one is recorded (its name then raises its error)
        and skipped with a warning."""
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an unknown distribution"
        try:
            self.register(ep.name, ep.load())
        except Exception as e:  # noqa: BLE001 — one bad plugin must not break the registry
            error = ValueError(f"the {self.group} entry point {ep.name!r} = {ep.value!r} of "
                               f"{dist} failed to load: {type(e).__name__}: {e}")
            error.__cause__ = e
            if ep.name not in self._entries:
                self._broken[ep.name] = error
            warnings.warn(f"jaxdp: {error}; skipped", stacklevel=4)


def _qualname(obj) -> str:
    """``module.Qualname`` of a function or class, else its repr."""
    name = getattr(obj, "__qualname__", None)
    return f"{getattr(obj, '__module__', '?')}.{name}" if name else repr(obj)

