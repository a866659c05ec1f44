"""JAX's persistent compilation cache, turned on where jaxdp owns the process (docs/cli.md,
"The compilation cache").

A library never flips JAX's global configuration on import; the ``jaxdp`` command does it (it owns
its process) and a script or notebook calls :func:`use_compile_cache` itself. The cache is safe to
reuse because JAX keys each entry by a SHA-256 of the program's canonical StableHLO (its shapes,
dtypes, constants and operations), the jaxlib version, the backend and its version, the XLA flags,
the compile options and the device configuration: a changed program, jax upgrade or other device
never reads a stale entry. Programs with host callbacks are never written to it (JAX refuses).
"""
from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the cache directory; set to the empty string to turn the cache off.
ENV_VAR = "JAXDP_CACHE_DIR"
#: The directory used when :data:`ENV_VAR` is unset.
DEFAULT_DIR = Path("~/.cache/jaxdp/xla")
#: Programs that compile faster than this are not written. JAX's own default is 1 s, which skips
#: every program of a small CLI run on CPU (0.1–1 s each); 0 also keeps the host code's small
#: eager ops (about 20 entries, 100 KiB, per run), keyed by their shapes and so shared by runs.
MIN_COMPILE_SECONDS = 0.0


def cache_dir(path: str | os.PathLike | None = None) -> Path | None:
    """The directory :func:`use_compile_cache` would use: ``path`` if given, else
    ``$JAXDP_CACHE_DIR``, else ``~/.cache/jaxdp/xla``; ``None`` when the one chosen is ``""``
    (the cache is off)."""
    chosen = os.environ.get(ENV_VAR, str(DEFAULT_DIR)) if path is None else os.fspath(path)
    return Path(chosen).expanduser() if chosen else None


def use_compile_cache(path: str | os.PathLike | None = None, *,
                      min_compile_seconds: float = MIN_COMPILE_SECONDS) -> Path | None:
    """Turn on JAX's persistent compilation cache in ``path`` (default: ``$JAXDP_CACHE_DIR``, else
    ``~/.cache/jaxdp/xla``) and return the directory, or ``None`` (and change nothing) when the
    one chosen is ``""``. Programs compiling in under ``min_compile_seconds`` are not written.

    Call it before the first compilation, e.g. at the top of a notebook; a repeated run of the
    same configuration in a new process then loads its compiled programs instead of compiling.
    The directory is created readable by its owner only (0700): whoever can write to a JAX cache
    can make the processes that read it run arbitrary code, and an entry holds the constants its
    program closed over. The cache is not size-limited (JAX's ``jax_compilation_cache_max_size``
    bounds it where the ``filelock`` package is installed); deleting the directory is always safe.

    Raises:
      ValueError: ``min_compile_seconds`` is negative.
    """
    if min_compile_seconds < 0:
        raise ValueError(f"min_compile_seconds must be >= 0; got {min_compile_seconds!r}")
    directory = cache_dir(path)
    if directory is None:
        return None
    import jax

    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_compile_seconds))
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return directory
