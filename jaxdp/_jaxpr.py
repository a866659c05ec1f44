"""Reading traced programs: the jaxprs an equation holds.

Three readers walk a step's jaxpr into every sub-program (a scan's body, a while loop's, a cond's
branches, a nested jit's callee, a ``custom_jvp``/``custom_vjp`` or ``checkpoint`` body): the cost
counter (:mod:`jaxdp.core._costs`), the channel release counter (:mod:`jaxdp.channels._program`)
and the information-flow check (:mod:`jaxdp.privacy._flow`). They share this one way of finding
the sub-programs.
"""
from __future__ import annotations

from jax.extend.core import ClosedJaxpr, Jaxpr


def sub_jaxprs(values):
    """The jaxprs among ``values`` (an equation's ``params.values()``), in order, looking into
    tuples and lists (a cond's branches): each a :class:`Jaxpr` (a closed one's ``.jaxpr``)."""
    for value in values:
        if isinstance(value, ClosedJaxpr):
            yield value.jaxpr
        elif isinstance(value, Jaxpr):
            yield value
        elif isinstance(value, (tuple, list)):
            yield from sub_jaxprs(value)
