"""The privacy gate: every private algorithm's guarantee survives an adversarial audit.

For each case of :func:`jaxdp.experiments.audit.cases` — one per private algorithm of the
registry, at the worst-case neighbouring pair of its report's relation, plus controls — the
algorithm runs white-box on both inputs (``Case.ci_seeds`` runs each, one jitted ``vmap``), a
likelihood-ratio statistic fitted on half of the runs scores the released messages, and the
Clopper–Pearson 95 % lower bound on ε from the other half must stay at or below the report's
guarantee (``report.epsilon`` of agent 0, whose data differ). Positive controls — accountants that
under-report on purpose (half the sensitivity, a history-fixed sensitivity, a Poisson claim on
fixed-size batches) or a release in the clear — must be caught. ``jaxdp reproduce audit-table``
runs the same cases at 10⁵ runs per input.
"""
import functools
import warnings

import jax
import numpy as np
import pytest

from jaxdp import algorithms, network, problems
from jaxdp.experiments import audit as table


@functools.cache
def _cases() -> dict:
    with jax.enable_x64(True):
        return {case.id: case for case in table.cases()}


def _private_names() -> list[str]:
    """Registry names whose privacy() gives a report on a small problem (built here, not by the
    audit module, so a case list that forgets an algorithm cannot hide it)."""
    rng = np.random.default_rng(0)
    prob = problems.from_arrays(rng.normal(size=(4, 40, 2)), rng.normal(size=(4, 40)),
                                loss="least_squares", reg={"ridge": 0.0}, reference=False)
    net = network.make_network("ring", 4)
    names = []
    for name, cls in algorithms.REGISTRY.items():
        alg = cls()
        with warnings.catch_warnings():  # least-squares data fail some papers' assumptions
            warnings.simplefilter("ignore")
            report = alg.privacy(prob, net, alg.default_params(), 1)
        if report is not None:
            names.append(name)
    return names


def test_every_registered_private_algorithm_has_a_case():
    names = _private_names()
    assert len(names) >= 19, names
    missing = sorted(set(names) - set(_cases()))
    assert not missing, f"private algorithms without a soundness case: {missing}"


def test_the_controls_include_three_under_reporting_accountants():
    under = [c for c in _cases().values()
             if c.control == "positive" and isinstance(c.claimed, float)]
    assert len(under) >= 3, [c.id for c in under]


@pytest.mark.parametrize("case_id", sorted(_cases()))
def test_empirical_lower_bound_stays_below_the_guarantee(case_id):
    case = _cases()[case_id]
    with jax.enable_x64(True):
        row = table.audit_case(case, seeds=case.ci_seeds, batch=case.ci_seeds)
    if case.control == "positive":
        assert row["verdict"] == "caught", row
    else:
        assert row["verdict"] == "sound", row
        assert row["guarantee"] is not None, row


def test_the_documented_privacy_table_lists_every_private_algorithm():
    """docs/privacy_table.md (written by `jaxdp reproduce audit-table`) covers the registry."""
    from pathlib import Path

    table_md = (Path(__file__).parents[1] / "docs" / "privacy_table.md").read_text()
    missing = [n for n in _private_names() if f"| `{n}` |" not in table_md]
    assert not missing, f"re-run `jaxdp reproduce audit-table`: {missing} not in the docs table"
