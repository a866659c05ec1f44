"""The engine: ``simulate`` (pure core), ``run`` and ``sweep`` (host wrappers), and ``Trace``."""
from jaxdp.core._costs import count_step_costs
from jaxdp.engine._devices import use_cpu_cores
from jaxdp.engine._run import grid, run, sweep
from jaxdp.engine._simulate import (PREFERRED_METRICS, Carry, default_metric, final_metrics,
                                    metric_names, simulate, step_keys)
from jaxdp.engine._trace import BLOWUP_FACTOR, Trace, blown_up, stack_traces

__all__ = ["BLOWUP_FACTOR", "Carry", "PREFERRED_METRICS", "Trace", "blown_up", "count_step_costs",
           "default_metric", "final_metrics", "grid", "metric_names", "run", "simulate",
           "stack_traces", "step_keys", "sweep", "use_cpu_cores"]
