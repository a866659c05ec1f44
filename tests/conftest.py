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


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: pass --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
