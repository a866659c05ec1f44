"""Each paper family owns its audit cases (``jaxdp/algorithms/<family>/cases.py``): the engine
collects them in registry order, and a family's cases cover the private algorithms it defines."""
import jax
import pytest

from jaxdp import algorithms
from jaxdp.experiments import audit

FAMILIES = ("dpp2", "ldp", "recal", "dpadmm", "ltadmm", "dpsgd", "federated")


def test_the_engine_collects_the_family_case_modules_in_registry_order():
    """The catalogue comes first in the registry; its module holds only MAFALDA-SGD's case
    (DP-DGD and Muffliato are the engine's core baseline, checked by the gate's coverage test)."""
    names = [m.__name__ for m in audit.family_case_modules()]
    assert names == [f"jaxdp.algorithms.{f}.cases" for f in ("catalogue",) + FAMILIES]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_familys_cases_cover_its_own_private_algorithms(family):
    """The family's ordinary cases are exactly its package's private algorithms (the core
    baseline and the channel routes stay with the engine)."""
    (module,) = [m for m in audit.family_case_modules() if m.__name__.split(".")[2] == family]
    with jax.enable_x64(True):
        rows = module.audit_cases()
    ours = {name for name in audit.private_algorithms()
            if algorithms.REGISTRY[name].__module__.split(".")[2] == family}
    assert {c.id.split(":")[0] for c in rows if not c.control} == ours  # NAME or NAME:variant
    assert all(c.id.startswith("control:") for c in rows if c.control)
