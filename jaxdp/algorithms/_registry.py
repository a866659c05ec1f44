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

from jaxdp._registry import Registry
from jaxdp.core import Algorithm

ENTRY_POINT_GROUP = "jaxdp.algorithms"


class AlgorithmRegistry(Registry):
    """``{name: Algorithm subclass}`` (a :class:`jaxdp._registry.Registry` keyed by each class's
    ``name``); entry points are loaded the first time it is read."""

    def __init__(self, classes=()):
        super().__init__("algorithm", ENTRY_POINT_GROUP,
                         how="jaxdp.register(MyAlgorithm) (a class with a name attribute)")
        for cls in classes:
            self.register(cls)

    def check(self, name: str, cls) -> None:
        """Refuse what is not a registrable algorithm class named ``name``.

        Raises:
          TypeError: ``cls`` is not a dataclass subclass of :class:`Algorithm` with a Params
            dataclass.
          ValueError: no ``name``, or a ``name`` other than the key (an entry point's name must
            be its class's).
        """
        if not (isinstance(cls, type) and issubclass(cls, Algorithm)
                and dataclasses.is_dataclass(cls)):
            raise TypeError(f"register: {cls!r} must be a @dataclasses.dataclass(frozen=True) "
                            "subclass of jaxdp.Algorithm")
        if not dataclasses.is_dataclass(cls.params_type):
            raise TypeError(f"register: {cls.__name__}.params_type must be a Params dataclass "
                            f"(@chex.dataclass(frozen=True)); got {cls.params_type!r}")
        if not isinstance(cls.name, str) or not cls.name or cls.name == Algorithm.name:
            raise ValueError(f"register: {cls.__name__} needs a class attribute name = '...' "
                             "(its registry key, lower case)")
        if cls.name != name:
            raise ValueError(f"register: the entry's name {name!r} must be the class's name "
                             f"{cls.name!r}")

    def register(self, cls, obj=None, *, description=None, replace: bool = False):
        """Add ``cls`` under ``cls.name``; returns ``cls`` (usable as a class decorator). The
        generic form ``register(name, cls)`` (an entry point's) needs ``name == cls.name``.

        Raises:
          TypeError: ``cls`` is not a dataclass subclass of :class:`Algorithm` with a Params
            dataclass.
          ValueError: no ``name``, or a name another class holds (unless ``replace=True``).
        """
        if obj is None and not isinstance(cls, str):
            cls, obj = getattr(cls, "name", None), cls
            if not isinstance(cls, str) or not cls:
                self.check(cls, obj)  # raises the missing-name error
        return super().register(cls, obj, description=description, replace=replace)
