"""The algorithm registry: the built-in classes, the ones a user registers with :func:`register`,
and those installed packages declare under the ``jaxdp.algorithms`` entry-point group (read on
first use).

Everything that takes an algorithm by name — :func:`~jaxdp.algorithms.get`, ``jaxdp run/info/
compare/list``, the docs catalogue and the privacy audit — reads this one mapping.

A package ships an algorithm with an entry point whose name is the algorithm's ``name`` and whose
value is the class, e.g. in its ``pyproject.toml``:

.. code-block:: toml

    [project.entry-points."jaxdp.algorithms"]
    my_dgd = "my_package.algorithms:MyDGD"
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points

from jaxdp.core import Algorithm

ENTRY_POINT_GROUP = "jaxdp.algorithms"


class Registry(Mapping):
    """``{name: Algorithm subclass}``; entry points are loaded the first time it is read."""

    def __init__(self, classes=()):
        self._classes: dict[str, type] = {}
        self._plugins_loaded = False
        for cls in classes:
            self.register(cls)

    def _loaded(self) -> dict[str, type]:
        if not self._plugins_loaded:
            self._plugins_loaded = True
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                self._load(ep)
        return self._classes

    def _load(self, ep) -> None:
        """Register one entry point's class; a broken plugin warns and is skipped."""
        try:
            cls = ep.load()
            if getattr(cls, "name", None) != ep.name:
                raise ValueError(f"the entry point's name must be the class's name "
                                 f"{getattr(cls, 'name', None)!r}")
            self.register(cls)
        except Exception as e:  # noqa: BLE001 — one bad plugin must not break the registry
            warnings.warn(f"jaxdp: algorithm entry point {ep.name!r} ({ep.value}) skipped: {e}",
                          stacklevel=3)

    def __getitem__(self, name: str) -> type:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def register(self, cls: type, *, replace: bool = False) -> type:
        """Add ``cls`` under ``cls.name``; returns ``cls`` (usable as a class decorator).

        Raises:
          TypeError: ``cls`` is not a dataclass subclass of :class:`Algorithm` with a Params
            dataclass.
          ValueError: no ``name``, or a name another class holds (unless ``replace=True``).
        """
        if not (isinstance(cls, type) and issubclass(cls, Algorithm)
                and dataclasses.is_dataclass(cls)):
            raise TypeError(f"register: {cls!r} must be a @dataclasses.dataclass(frozen=True) "
                            "subclass of jaxdp.Algorithm")
        if not dataclasses.is_dataclass(cls.params_type):
            raise TypeError(f"register: {cls.__name__}.params_type must be a Params dataclass "
                            f"(@chex.dataclass(frozen=True)); got {cls.params_type!r}")
        name = cls.name
        if not isinstance(name, str) or not name or name == Algorithm.name:
            raise ValueError(f"register: {cls.__name__} needs a class attribute name = '...' "
                             "(its registry key, lower case)")
        held = self._classes.get(name)
        if held is not None and held is not cls and not replace:
            raise ValueError(f"register: the name {name!r} is taken by {held.__module__}."
                             f"{held.__qualname__}; pick another name or pass replace=True")
        self._classes[name] = cls
        return cls

    def unregister(self, name: str) -> type:
        """Remove and return the class registered under ``name``.

        Raises:
          KeyError: no algorithm of that name.
        """
        if name not in self._loaded():
            raise KeyError(f"unregister: no algorithm named {name!r}")
        return self._classes.pop(name)
