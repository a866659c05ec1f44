"""The privacy contract: what a PrivacyReport promises and how Algorithm.privacy checks its input."""
import dataclasses
import warnings

import numpy as np
import pytest

from jaxdp import algorithms, network, problems
from jaxdp.privacy import (
    PAPER_PRINTED,
    Assumption,
    PrivacyEvents,
    PrivacyReport,
)


def _report(**contract) -> PrivacyReport:
    events = PrivacyEvents.from_schedule("gaussian", 2.0, np.array([2.0, 8.0])[:, None], 2, 5)
    return PrivacyReport.from_events(events, 1e-5, **contract)


def _setting():
    prob = problems.nonconvex_logistic(n_agents=4, m=10, d=3, seed=0)
    return prob, network.make_network("ring", 4)


def test_the_guarantee_is_the_smallest_sound_curve_and_ignores_paper_curves():
    report = _report()
    stacked = np.stack([report.final(m) for m in report.sound])
    np.testing.assert_allclose(report.epsilon, stacked.min(axis=0), rtol=1e-12)
    assert report.epsilon_max == pytest.approx(report.epsilon[0])  # agent 0 has less noise
    assert report.headline in report.sound
    below = report.with_curve(PAPER_PRINTED, np.zeros((2, report.steps.size)), "printed")
    np.testing.assert_array_equal(below.epsilon, report.epsilon)
    assert PAPER_PRINTED not in below.sound
    printed = next(ln for ln in below.table().splitlines() if ln.startswith(PAPER_PRINTED))
    assert printed.endswith("(below the guarantee: not a proven bound)")
    assert below.table().splitlines()[1].startswith("guarantee")
    exact = report.with_curve("exact", np.full((2, report.steps.size), 1e-3), "", sound=True)
    assert exact.epsilon_max == pytest.approx(1e-3) and exact.headline == "exact"


def test_a_report_names_its_relation_and_unit_and_rejects_unknown_ones():
    report = _report(relation="add_remove_record", released="x")
    assert report.unit == "record" and "added" in report.relation_text
    assert report.to_dict()["relation"] == "add_remove_record"
    assert "per record" in report.summary()
    with pytest.raises(ValueError, match="relation"):
        _report(relation="one person")
    with pytest.raises(ValueError, match="sound methods"):
        dataclasses.replace(report, sound=("nope",))


def test_infinite_reports_and_leaking_models_say_why():
    inf = PrivacyReport.infinite(3, 10, 1e-5, "x is sent in the clear")
    assert np.all(np.isinf(inf.epsilon)) and inf.reason in inf.summary()
    covered = _report().covering_models(True, "post-processing")
    assert covered.release == "messages+models"
    np.testing.assert_array_equal(covered.epsilon, _report().epsilon)
    leaked = _report().covering_models(False, "the model reveals the gradient")
    assert np.all(np.isinf(leaked.epsilon)) and leaked.reason.startswith("the model")


def test_privacy_checks_delta_steps_and_release_before_accounting():
    prob, net = _setting()
    alg = algorithms.DPDGD()
    params = alg.default_params()
    for bad in (0.0, 1.0, -1e-5, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            alg.privacy(prob, net, params, 5, delta=bad)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="steps"):
            alg.privacy(prob, net, params, bad)
    with pytest.raises(ValueError, match="release"):
        alg.privacy(prob, net, params, 5, release="models")
    assert algorithms.DGD().privacy(prob, net, algorithms.DGD().default_params(), 5) is None


def test_the_callers_delta_is_used_and_a_larger_delta_gives_a_smaller_epsilon():
    prob, net = _setting()
    alg = algorithms.DPDGD()
    small = alg.privacy(prob, net, alg.default_params(), 5, delta=1e-8)
    large = alg.privacy(prob, net, alg.default_params(), 5, delta=1e-2)
    assert small.delta == 1e-8 and large.delta == 1e-2
    assert np.all(large.epsilon < small.epsilon)


def test_a_failed_assumption_makes_epsilon_inf_and_is_listed():
    prob, net = _setting()

    class Leaky(algorithms.DPDGD):
        def account(self, problem, network, params, steps, *, delta):
            report = super().account(problem, network, params, steps, delta=delta)
            return report.with_contract(assumptions=(
                Assumption("‖x_ij‖ ≤ 1", enforced=False, how="max row norm 3.2", holds=False),))

    alg = Leaky()
    report = alg.privacy(prob, net, alg.default_params(), 3)
    assert "FAILS" in report.summary() and report.epsilon_max == np.inf
    assert "‖x_ij‖ ≤ 1" in report.reason and "max row norm 3.2" in report.reason
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        algorithms.DPDGD().privacy(prob, net, algorithms.DPDGD().default_params(), 3)


def test_calibration_solves_a_log_scale_noise_field_to_the_target_epsilon():
    """DP-NIDS declares log σ₁ as its noise field: the calibrated run's guarantee is the target."""
    import jax

    from jaxdp.privacy import calibrate_params

    with jax.enable_x64(True):
        # a problem whose gradients satisfy c = 1 (a failed check would make every ε inf)
        prob, net = problems.logistic(n_agents=4, m=10, d=3, seed=0), _setting()[1]
        alg = algorithms.DPNIDS()
        assert alg.noise_field == "log_sigma1"
        params = calibrate_params(alg, prob, net, alg.default_params(), 20, epsilon=2.0,
                                  delta=1e-5)
        report = alg.privacy(prob, net, params, 20)
        assert report.failed_assumptions() == ()
        eps = report.epsilon_max
    assert 2.0 * (1 - 1e-5) <= eps <= 2.0
