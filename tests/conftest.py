"""Test configuration: float64, strict rank promotion, 8 virtual CPU devices, LLVM at -O0.

XLA_FLAGS must be set before jax is imported anywhere, so it happens at the top of this file.
"""
import os
import zlib
from pathlib import Path

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
if os.environ["JAX_PLATFORMS"] == "cpu" and "xla_backend_optimization_level" not in os.environ[
        "XLA_FLAGS"]:
    # Compiling dominates the suite (hundreds of small programs, each run for a few steps): LLVM's
    # -O0 cuts the suite's CPU time by about a tenth. It changes how fast the code runs, never what
    # it computes (XLA's CPU backend keeps IEEE semantics at every level, fast math stays off;
    # the whole suite passes at both levels).
    os.environ["XLA_FLAGS"] += " --xla_backend_optimization_level=0"

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
    parser.addoption("--shard", default="", metavar="I/K",
                     help="run only the I-th of K stable slices of the collected tests")


def _slow_entries() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``tests/slow_tests.txt`` as (exact node ids, prefixes): hand-picked cases and those measured
    above 4 s (``tests/list_slow_tests.py`` rewrites that part from a ``--durations=0`` run)."""
    lines = [line.split("  #")[0].strip()
             for line in (Path(__file__).with_name("slow_tests.txt")).read_text().splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    return (tuple(line for line in lines if not line.endswith("*")),
            tuple(line[:-1] for line in lines if line.endswith("*")))


def _is_listed(nodeid: str, exact: frozenset, prefixes: tuple[str, ...]) -> bool:
    node = nodeid.removeprefix("tests/")
    return node in exact or node.split("[")[0] in exact or node.startswith(prefixes)


def _shard(value: str) -> tuple[int, int]:
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
        raise pytest.UsageError(f"--shard expects I/K with 0 <= I < K; got {value!r}")
    return int(index), int(count)


def pytest_collection_modifyitems(config, items):
    exact, prefixes = _slow_entries()
    exact = frozenset(exact)
    for item in items:
        if _is_listed(item.nodeid, exact, prefixes):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--shard"):  # a stable slice of the collection (CI's rotating slow step)
        index, count = _shard(config.getoption("--shard"))
        keep = [item for item in items if zlib.crc32(item.nodeid.encode()) % count == index]
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: pass --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
