"""jaxdp: GPU-accelerated simulation of differentially private decentralized optimization.

Quick start::

    import jaxdp
    problem = jaxdp.problems.nonconvex_logistic(seed=0)
    network = jaxdp.network.build_network(jaxdp.network.random_geometric(50, 0.3, seed=1))
    trace = jaxdp.run(jaxdp.algorithms.get("dgd"), problem, network, steps=500, seeds=100)
    trace.plot("grad_norm_sq")
"""
__version__ = "0.1.0"

from jaxdp import algorithms, channels, network, privacy, problems  # noqa: E402
from jaxdp.algorithms import (  # noqa: E402
    Algorithm, param, per_agent, register, unregister)
from jaxdp.engine import (  # noqa: E402
    Trace, final_metrics, grid, run, simulate, sweep, use_cpu_cores)

__all__ = [
    "Algorithm", "Trace", "algorithms", "final_metrics", "grid", "network", "param", "per_agent",
    "privacy", "problems", "register", "run", "simulate", "sweep", "unregister", "use_cpu_cores",
    "__version__",
]
