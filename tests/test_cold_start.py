"""Cold start (issue 38): ``import jaxdp`` and ``jaxdp --help`` import no JAX; the names they
defer still resolve; the persistent compilation cache is on only where jaxdp owns the process."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with this checkout first on the path."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, cwd=ROOT, timeout=240, check=False)


def _ok(code: str, env: dict | None = None) -> str:
    done = _python(code, env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_import_jaxdp_imports_no_jax_and_resolves_every_name_later():
    out = _ok("""
import sys
import jaxdp
assert "jax" not in sys.modules, sorted(m for m in sys.modules if m.startswith(("jax", "jaxdp")))
assert set(jaxdp.__all__) <= set(dir(jaxdp))
from jaxdp import run, privacy, Algorithm
assert run is jaxdp.engine.run and privacy is sys.modules["jaxdp.privacy"]
assert Algorithm is jaxdp.algorithms.Algorithm
for name in jaxdp.__all__:
    getattr(jaxdp, name)
assert not hasattr(jaxdp, "no_such_name")
print(len(jaxdp.algorithms.REGISTRY), "dgd" in jaxdp.algorithms.REGISTRY)
""")
    count, has_dgd = out.split()
    assert int(count) > 50 and has_dgd == "True"  # the registry is complete when first read


def test_cli_help_imports_no_jax():
    _ok("""
import sys
from jaxdp.cli import main
try:
    main(["--help"])
except SystemExit as e:
    assert e.code in (0, None)
assert "jax" not in sys.modules
""")


def test_use_compile_cache_writes_entries_and_an_empty_dir_turns_it_off(tmp_path):
    cache = tmp_path / "xla"
    out = _ok(f"""
import jax, jax.numpy as jnp
import jaxdp
assert jaxdp.use_compile_cache("") is None            # off: nothing changed
assert jax.config.jax_compilation_cache_dir is None
path = jaxdp.use_compile_cache({str(cache)!r}, min_compile_seconds=0)
jax.jit(lambda x: jnp.sin(x) @ x.T)(jnp.ones((3, 3))).block_until_ready()
print(path)
""", env={"JAXDP_CACHE_DIR": ""})
    assert Path(out.strip()) == cache
    assert oct(cache.stat().st_mode & 0o777) == oct(0o700)
    assert any(cache.iterdir())


def test_use_compile_cache_refuses_a_negative_threshold():
    import jaxdp

    with pytest.raises(ValueError, match="min_compile_seconds must be >= 0; got -1"):
        jaxdp.use_compile_cache("unused", min_compile_seconds=-1)


def _command(tmp_path, out: str, *flag: str) -> Path:
    """``jaxdp run dgd`` (tiny) as its own process, caching in ``tmp_path/xla``; the trace."""
    argv = ["run", "dgd", "--agents", "4", "--seeds", "2", "--steps", "5", "--no-progress",
            "--out", str(tmp_path / out), *flag]
    _ok(f"import sys; from jaxdp.cli import main; sys.argv[1:] = {argv!r}; sys.exit(main())",
        env={"JAXDP_CACHE_DIR": str(tmp_path / "xla")})
    return tmp_path / out / "trace_dgd.npz"


def test_the_command_caches_and_a_cached_program_gives_the_same_floats(tmp_path):
    from jaxdp.engine import Trace

    first = Trace.load(_command(tmp_path, "first"))
    entries = sorted(p.name for p in (tmp_path / "xla").iterdir())
    assert entries
    again = Trace.load(_command(tmp_path, "again"))  # reads the programs the first run wrote
    assert sorted(p.name for p in (tmp_path / "xla").iterdir()) == entries  # nothing new
    assert np.array_equal(first.final_models, again.final_models)
    for name, values in first.metrics.items():
        assert np.array_equal(values, again.metrics[name]), name


def test_no_compile_cache_writes_nothing(tmp_path):
    _command(tmp_path, "out", "--no-compile-cache")
    assert not (tmp_path / "xla").exists()


def test_main_called_from_python_leaves_the_cache_off(tmp_path):
    cache = tmp_path / "xla"
    argv = ["run", "dgd", "--agents", "4", "--seeds", "2", "--steps", "5", "--no-progress",
            "--out", str(tmp_path / "out")]
    _ok(f"import sys, jax; from jaxdp.cli import main; assert main({argv!r}) == 0; "
        "assert jax.config.jax_compilation_cache_dir is None",
        env={"JAXDP_CACHE_DIR": str(cache)})
    assert not cache.exists()
