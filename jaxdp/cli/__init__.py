"""The ``jaxdp`` command: ``list``, ``info``, ``demo``, ``run``, ``compare``, ``tradeoff`` and
``reproduce``.

Bad arguments print one line (``jaxdp: error: ...``) and exit with status 2, never a traceback;
they are checked before any run starts (the output folder first, and that it holds no earlier
run's files, for ``reproduce`` nothing at all, unless ``--force``). ``run``, ``compare`` and ``tradeoff`` read their arguments from a
TOML file with ``--config`` (command-line flags win) and copy it verbatim into the output folder.
``run`` and ``compare`` exit with status 1 when a seed diverged (NaN/inf) or blew up
(:data:`jaxdp.engine.BLOWUP_FACTOR`), and with status 3 (:data:`ENDED_WORSE`) when none did but
some ended with a larger objective than they started (``Trace.ended_worse``: the table and
stderr say how many); Ctrl-C prints one line, with the ``--resume`` command for
``run`` and ``compare``, and exits with status 130.

Layers, each importing only those below it: this module (:func:`main`) -> ``_parsing`` (the
parser, ``--config``, :func:`reference_markdown`) -> the commands, ``_runs`` (``run``,
``compare``, ``tradeoff``) and ``_catalogue`` (``list``, ``info``, ``demo``, ``reproduce``) ->
``_common`` (setting, privacy, outputs, checks).
"""
from __future__ import annotations

import os
import sys

from jaxdp.cli._catalogue import plain
from jaxdp.cli._common import ENDED_WORSE, MEANINGFUL_EPSILON, RESUME_DIR, X_AXES
from jaxdp.cli._common import _meaningless  # noqa: F401 — kept importable from jaxdp.cli
from jaxdp.cli._parsing import _algorithm_help, _parse, _parser, reference_markdown

__all__ = ["ENDED_WORSE", "MEANINGFUL_EPSILON", "RESUME_DIR", "X_AXES", "main", "plain",
           "reference_markdown"]

_ERRORS = (ValueError, KeyError, TypeError, FileNotFoundError, ImportError, OSError)


def main(argv=None) -> int:
    """The ``jaxdp`` command; ``argv=None`` (the console script, ``python -m jaxdp.cli``) means it
    owns the process, and only then does it turn on the persistent compilation cache
    (:func:`jaxdp.use_compile_cache`) unless ``--no-compile-cache``: ``main([...])`` called from
    Python leaves the caller's JAX configuration alone."""
    owns_process = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        _algorithm_help(parser, argv)
        args = _parse(parser, argv)
    except _ERRORS as e:
        return _fail(e)
    if args.command is None:
        parser.print_help()
        return 0
    import jax

    from jaxdp.engine import use_cpu_cores

    try:
        use_cpu_cores()  # the command owns the process: shard seeds over every CPU core
    except RuntimeError:
        pass  # JAX already started (jaxdp.cli.main called from Python): keep its devices
    if owns_process and not getattr(args, "no_compile_cache", True):
        from jaxdp._cache import use_compile_cache

        try:
            use_compile_cache()
        except OSError as e:  # e.g. a cache directory that cannot be created
            return _fail(e)
    if getattr(args, "x64", False):
        jax.config.update("jax_enable_x64", True)  # the user asked for it on the command line
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return _interrupted(args, argv)
    except BrokenPipeError:  # `jaxdp list | head`: the reader left; not an error of the input
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except _ERRORS as e:
        return _fail(e)


def _interrupted(args, argv) -> int:
    """Ctrl-C: one line (no traceback) saying how to continue; exit status 130."""
    import shlex

    if args.command in ("run", "compare"):
        again = argv if "--resume" in argv else [*argv, "--resume"]
        print(f"jaxdp: interrupted; resume with: jaxdp {shlex.join(again)} (finished seed "
              f"blocks are kept in {os.path.join(args.out, RESUME_DIR)})", file=sys.stderr)
    else:
        print("jaxdp: interrupted", file=sys.stderr)
    return 130


def _fail(e: Exception) -> int:
    msg = e.args[0] if e.args and isinstance(e.args[0], str) else str(e)
    print(f"jaxdp: error: {msg}".splitlines()[0], file=sys.stderr)
    return 2
