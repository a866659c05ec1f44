"""A standalone reproduction of the CPU runtime anomaly seen in ``drops_cancellation.py``.

``jax.jit(jax.vmap(f))`` over 2000 keys, where ``f`` is one ``mix`` of a constant
``jnp.zeros((32, 4))`` through ``gaussian(15, sampler="float") + drop(0.1)`` on a 32-agent
``gnm`` graph, returns garbage (every row, up to ~1e270 or NaN) in some fresh processes and the
right values (|value| ≤ 13σ) in others. The program is exported once (``jax.export``, StableHLO)
and then deserialized and run in fresh subprocesses that do not import jaxdp, so the fault lies
in the runtime's execution of a fixed program, not in the Python that built it.

Usage (``jax.export``'s serializer needs ``pip install flatbuffers``, not a jaxdp dependency):
    python benchmarks/xla_drop_anomaly.py [--runs 12]   # prints how many runs returned garbage
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = """
import sys, jax, numpy as np
jax.config.update("jax_enable_x64", True)
exp = jax.export.deserialize(bytearray(open(sys.argv[1], "rb").read()))
avg = np.asarray(exp.call(jax.random.split(jax.random.key(1), 2000)))
print("ok" if np.all(np.isfinite(avg)) and np.abs(avg).max() < 1e4 else "garbage")
"""


def export(path: Path) -> None:
    """Serialize the jitted, vmapped ``mix`` of constant zeros (the module docstring)."""
    import jax
    import jax.numpy as jnp

    from jaxdp import algorithms, channels, network

    jax.config.update("jax_enable_x64", True)
    n = 32
    net = network.make_network("gnm", n, m=100, seed=0)
    alg = channels.with_channel(algorithms.DGD(), channels.chain(
        channels.gaussian(15.0, sampler="float"), channels.drop(0.1)))
    values = alg.split(alg.params(algorithms.DGDParams(alpha=0.05)))[1]

    def one(key):
        proxy = channels.ChannelNetwork(net, alg.channels, values, 0, key)
        return proxy.mix(jnp.zeros((n, 4))).mean(axis=0)

    keys = jax.random.split(jax.random.key(1), 2000)
    path.write_bytes(jax.export.export(jax.jit(jax.vmap(one)))(keys).serialize())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mix.bin"
        export(path)
        out = [subprocess.run([sys.executable, "-c", RUN, str(path)], capture_output=True,
                              text=True, check=True).stdout.strip() for _ in range(args.runs)]
    print(f"{out.count('garbage')} of {args.runs} fresh processes returned garbage: {out}")


if __name__ == "__main__":
    main()
