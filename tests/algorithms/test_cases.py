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


def _relation_fields(name) -> bool:
    import dataclasses

    return "relation" in {f.name for f in dataclasses.fields(algorithms.REGISTRY[name])}


def _offered(name) -> set:
    """(name, sampling, relation) of every configuration ``name`` reports under: each sampling's
    relations (``_sampling.RELATIONS_OF_SAMPLING``), or DP-FedAvg's two user-level relations."""
    from jaxdp.algorithms._sampling import RELATIONS_OF_SAMPLING
    from jaxdp.algorithms.federated.private import _PAIRS

    if hasattr(algorithms.REGISTRY[name](), "sampling"):
        return {(name, s, r) for s, rs in RELATIONS_OF_SAMPLING.items() for r in rs}
    return {(name, None, r) for r in _PAIRS}


def _audited(case) -> tuple:
    from jaxdp.algorithms._sampling import record_relation

    alg = case.algorithm
    sampling = getattr(alg, "sampling", None)
    relation = alg.relation if sampling is None else record_relation(alg.name, sampling,
                                                                     alg.relation)
    return alg.name, sampling, relation


def test_every_sampling_and_relation_an_algorithm_offers_is_audited():
    """Issue 37: an algorithm with a ``relation`` option has an ordinary audit case (at that
    relation's worst pair) for each relation of each sampling it offers — DP-DSGD, DP-DSGT,
    LT-ADMM-DP, PORTER and PriSMA under replace-one on fixed and Poisson batches and add/remove-one
    on Poisson batches; DP-FedAvg under replace- and add/remove-agent."""
    names = [n for n in audit.private_algorithms() if _relation_fields(n)]
    assert set(names) >= {"dp_dsgd", "dp_dsgt", "lt_admm_dp", "porter", "prisma", "dp_fedavg"}
    families = {algorithms.REGISTRY[n].__module__.split(".")[2] for n in names}
    modules = [m for m in audit.family_case_modules() if m.__name__.split(".")[2] in families]
    with jax.enable_x64(True):
        rows = [c for m in modules for c in m.audit_cases()]
    audited = {_audited(c) for c in rows
               if not c.control and c.observer is None and c.algorithm.name in names}
    missing = set().union(*map(_offered, names)) - audited
    assert not missing, sorted(missing)


def test_a_replace_pair_claimed_under_add_remove_is_a_positive_control_of_the_gate():
    """Record- and user-level: the replace-one run claimed under the add/remove curve, read at a
    δ where the gate's runs can show the difference (its verdict: tests/test_privacy_soundness.py);
    the run itself reports under replace-one."""
    from jaxdp.algorithms.dpsgd import cases as dpsgd
    from jaxdp.algorithms.federated import cases as federated

    with jax.enable_x64(True):
        controls = dpsgd.audit_controls() + federated.audit_controls()
    swapped = {c.id: c for c in controls if c.id.endswith("replace_as_add_remove")}
    assert set(swapped) == {"control:dp_dsgd_replace_as_add_remove",
                            "control:dp_fedavg_replace_as_add_remove"}
    for c in swapped.values():
        assert c.control == "positive" and c.delta is not None and 0 < c.claimed
        assert _audited(c)[2] in ("replace_record", "replace_agent")  # the run's own relation
