"""Test configuration: float64, strict rank promotion and 8 virtual CPU devices.

XLA_FLAGS must be set before jax is imported anywhere, so it happens at the top of this file.
"""
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")
# Start the backend now, so its 8 devices are fixed for the whole session: a test that calls
# ``jaxdp.cli.main`` in-process would otherwise set JAX to the machine's core count
# (``use_cpu_cores``) when it happens to be the first to touch JAX in a worker.
# On a GPU machine (``JAX_PLATFORMS=cuda,cpu``, tests/gpu) the default devices are the GPUs: count
# the CPU devices.
assert len(jax.devices("cpu")) == 8, jax.devices("cpu")


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


SLOW = (
    # DP-FedAvg's remedy line calibrates three targets through its amplified PLD curve (~30 s)
    "test_cli_federated.py::test_info_lists_the_static_settings",
    # three calibrations at rtol 1e-6, each probe a PLD report (~40 s); test_calibration_meets_
    # the_target_by_each_method covers the lattice calibration in the default run
    "test_ltadmm_privacy.py::test_reports_state_the_contract_and_cover_the_models",
    "test_tuning_results.py::test_reproduction_writes_its_files_and_every_claim",
    "test_channels.py::test_named_messages_are_what_the_step_says_it_sends",
    "test_cli.py::test_notebooks_run_top_to_bottom",  # the docs build executes them too
    "test_cli.py::test_readme_python_examples_run",  # test_docs runs the README's blocks too
    "test_pairwise_scan.py::test_dense_and_neighbour_list_products_agree_with_their_gradients",
    "test_models.py::test_models_page_examples_run",
    "test_models.py::test_convolution_runs_inside_run_with_a_private_algorithm",
    "test_audit_table.py::test_a_tiny_table_writes_its_files_and_one_claim_per_row",
    "algorithms/test_ltadmm.py::test_reproduction_writes_its_files_and_every_claim",
    "test_mfdl_training.py::test_reproduction_runs_at_tiny_settings_with_a_standard_figure",
    "test_mfdl.py::test_reproduction_runs_at_tiny_settings_with_a_standard_figure",
    "test_gpu_driver.py::test_gpu_driver_rehearsal_writes_every_stage",
    "test_ltadmm_privacy.py::test_zcdp_formula_is_the_reports_curve_and_inverts",
    "test_pairwise_certificate.py::test_the_certificate_is_never_below_an_attained_sensitivity",
    "test_figures.py::test_reproduction_figures_meet_the_standard",
    "test_tuning_results.py::",  # a 30 s tuning fixture per reproduction
    "test_gpu_driver.py::test_pairwise_gpu_cells_rehearsal_writes_a_row_per_cell",
    "algorithms/test_dpsgd.py::test_report_is_the_shared_event_builders_finite_epsilon[fixed-"
    "replace_record-dp_dsgt]",  # DP-DSGD's cases stay
    "algorithms/test_dpsgd.py::test_report_is_the_shared_event_builders_finite_epsilon[poisson-"
    "add_remove_record-dp_dsgt]",
    "test_pairwise_scan.py::test_equals_the_dense_accountant_with_a_full_band",
    "test_factorization.py::test_pairwise_decoder_beats_mfdls_ldp_optimum_at_a_fixed_pairwise_bud",
    "algorithms/test_recal.py::test_reproduction_writes_its_files_and_every_claim",
    "algorithms/test_dpp2.py::test_reproduction_writes_figure_data_and_every_claim",
    "algorithms/test_dpadmm.py::test_reproduction_writes_its_files_and_every_claim",
    "test_cli.py::test_baselines_reproduction_reports_each_claim",
)
"""Tests of the default run that took 11–45 s each (``--durations``) and are moved behind
``--runslow`` to keep the README's test command under 30 minutes on two cores: reproductions,
notebooks and page examples (the docs build executes those too); they run with --runslow."""


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.nodeid.startswith(("tests/" + prefix, prefix)) for prefix in SLOW):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: pass --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
