"""jaxdp: GPU-accelerated simulation of differentially private decentralized optimization.

Quick start::

    import jaxdp
    problem = jaxdp.problems.nonconvex_logistic(seed=0)
    network = jaxdp.network.build_network(jaxdp.network.random_geometric(50, 0.3, seed=1))
    trace = jaxdp.run(jaxdp.algorithms.get("dgd"), problem, network, steps=500, seeds=100)
    trace.plot("grad_norm_sq")

``import jaxdp`` is lazy (PEP 562): it imports neither JAX nor any sub-package; the first access
to a name below (``jaxdp.run``, ``from jaxdp import privacy``, ``jaxdp.algorithms``) imports the
module that defines it, and a sub-package is always imported whole, so a registry
(``jaxdp.algorithms.REGISTRY``) is complete when first read. :func:`use_compile_cache` turns on
JAX's persistent compilation cache for a script or notebook (the site's command-line guide,
"The compilation cache").
"""
from __future__ import annotations

import importlib

from jaxdp._version import __version__

#: Public name -> the module that defines it; declared once, read by ``__getattr__``,
#: ``__dir__`` and ``__all__``.
_EXPORTS = {
    **{name: "jaxdp.algorithms" for name in ("Algorithm", "param", "per_agent", "register",
                                               "unregister")},
    **{name: "jaxdp.engine" for name in ("Trace", "final_metrics", "grid", "run", "simulate",
                                           "sweep", "use_cpu_cores")},
    "use_compile_cache": "jaxdp._cache",
    "compiler_options": "jaxdp._compiler",
}
#: Sub-packages reachable as attributes of ``jaxdp`` without an explicit import.
_SUBMODULES = ("algorithms", "attacks", "channels", "cli", "compare", "core", "engine",
               "experiments", "network", "privacy", "problems", "tune")
_PUBLIC_SUBMODULES = ("algorithms", "channels", "network", "privacy", "problems")

__all__ = [*_EXPORTS, *_PUBLIC_SUBMODULES, "__version__"]  # noqa: PLE0604 — derived, all str


def __getattr__(name: str):
    """Import what ``name`` refers to on first access (PEP 562) and cache it in the module."""
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"jaxdp.{name}")
    else:
        raise AttributeError(f"module 'jaxdp' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_SUBMODULES})
