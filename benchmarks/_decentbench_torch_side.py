"""The decent-bench half of ``bench_decentbench_models.py``: an MLP as decent-bench's
``PyTorchCost``, run in ``.decentbench-torch-venv`` (Python 3.13, decent-bench and torch).

One cell per process (so that its peak RSS is its own)::

    .decentbench-torch-venv/bin/python benchmarks/_decentbench_torch_side.py SPEC.npz ALG \
        TRIALS ITERATIONS

builds one agent per shard of the digits split that jaxdp exported to ``SPEC.npz`` (``features``
``(N, M, 64)`` padded, ``labels``, ``mask``, the MLP's initial parameters ``theta0`` in torch's
order, the ring's edges and jaxdp's W, the hyperparameters), each a
``PyTorchCost(shard, Linear(64, h)–Tanh–Linear(h, 10), CrossEntropyLoss(), batch_size=b)``, times
decent-bench's ``benchmark`` and prints one JSON line with the averaged model's test loss and
accuracy of every trial (measured after the timing).

ALG ``dgd`` is decent-bench's own DGD, which on a ``PyTorchCost`` takes the minibatch gradient of
``b`` samples (drawn without replacement across successive calls): decentralized SGD. ALG
``dp_dsgd`` is that DGD with DP-SGD's gradient (Abadi et al. 2016): decent-bench's per-sample
gradients of the same minibatch (``cost.gradient(x, reduction=None)``), each clipped to ℓ2 norm C,
their mean plus N(0, σ²I) from decent-bench's random generator (seeded per trial).

torch runs on one thread by default (``--torch-threads``): the model is tiny, and with its
default two intra-op threads on this shared 2-core machine under load a DGD step took ~45× longer
(12 steps of one trial: 20 s against 0.45 s at a 1-min load average of 16).

Imports numpy, networkx, torch and decent-bench only (no jaxdp, no JAX).
"""
from __future__ import annotations

import argparse
import json
import logging
import sys

import numpy as np
from _decentbench_side import p2p_network, timed_benchmark  # this directory


def mlp(hidden: int):
    import torch

    return torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.Tanh(),
                               torch.nn.Linear(hidden, 10))


def build_problem(spec, snapshot_period: int):
    """decent-bench's ``BenchmarkProblem``: one ``PyTorchCost`` agent per shard, on the ring."""
    import torch
    from decent_bench.agents import Agent
    from decent_bench.benchmark import BenchmarkProblem
    from decent_bench.costs import PyTorchCost

    agents = []
    for feats, labels, mask in zip(spec["features"], spec["labels"], spec["mask"], strict=True):
        rows = mask > 0
        shard = [(torch.from_numpy(f.copy()), torch.tensor(int(y)))
                 for f, y in zip(feats[rows], labels[rows], strict=True)]
        cost = PyTorchCost(shard, mlp(int(spec["hidden"])), torch.nn.CrossEntropyLoss(),
                           batch_size=int(spec["batch"]))
        agents.append(Agent(cost, state_snapshot_period=snapshot_period))
    return BenchmarkProblem(network=p2p_network(agents, spec))


def dp_dsgd_type():
    """decent-bench's ``DGD`` with DP-SGD's clipped, noised minibatch gradient (module doc)."""
    from dataclasses import dataclass

    from decent_array import interoperability as iop
    from decent_bench.algorithms.p2p import DGD

    @dataclass(eq=False)
    class DPDSGD(DGD):
        clip: float = 1.0
        sigma: float = 0.0
        name: str = "DP-DSGD"

        def release(self, cost, x):
            """(1/b) Σ_s clip_C(∇ℓ_s(x)) + σξ over the cost's next minibatch."""
            g = cost.gradient(x, reduction=None)  # (b, d) per-sample gradients
            norms = iop.sqrt(iop.sum(g * g, axis=1, keepdims=True))
            mean = iop.mean(g * (self.clip / iop.maximum(norms, self.clip)), axis=0)
            return mean + iop.normal_like(mean, 0.0, self.sigma)

        def step(self, network, _):  # DGD.step with the release as the gradient
            for i in network.active_agents():
                network.broadcast(i, i.x)
            for i in network.active_agents():
                neighborhood_avg = self.W[i, i] * i.x
                for j, x_j in i.messages().items():
                    neighborhood_avg += self.W[i, j] * x_j
                i.x = neighborhood_avg - self.step_size * self.release(i.cost, i.x)

    return DPDSGD


def algorithm(name: str, spec):
    from decent_array import interoperability as iop
    from decent_bench.algorithms.p2p import DGD

    x0 = iop.from_numpy(spec["theta0"].copy())  # every agent starts at θ₀ (jaxdp's x = θ − θ₀)
    if name == "dgd":
        return DGD(step_size=float(spec["alpha"]), x0=x0)
    return dp_dsgd_type()(step_size=float(spec["alpha"]), clip=float(spec["clip"]),
                          sigma=float(spec["sigma"]), x0=x0)


def test_metrics(nets, spec) -> tuple[list[float], list[float]]:
    """Each trial's test loss and accuracy of its agents' average model."""
    import torch
    from decent_array import interoperability as iop

    model = mlp(int(spec["hidden"]))
    x, y = torch.from_numpy(spec["test_x"]), torch.from_numpy(spec["test_y"]).long()
    losses, accs = [], []
    for net in nets:
        avg = np.mean([np.asarray(iop.to_numpy(a.x), np.float32) for a in net.agents()], axis=0)
        torch.nn.utils.vector_to_parameters(torch.from_numpy(avg), model.parameters())
        with torch.no_grad():
            out = model(x)
            losses.append(float(torch.nn.functional.cross_entropy(out, y)))
            accs.append(float((out.argmax(dim=1) == y).float().mean()))
    return losses, accs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("alg", choices=["dgd", "dp_dsgd"])
    ap.add_argument("trials", type=int)
    ap.add_argument("iterations", type=int)
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch.set_num_threads (1: its fastest here, see the module doc)")
    args = ap.parse_args(argv)

    import torch
    from decent_array.types import Devices, Frameworks
    from decent_bench.benchmark import configure

    torch.set_num_threads(args.torch_threads)

    configure(Frameworks.PYTORCH, Devices.CPU, seed=0, log_level=logging.WARNING)
    spec = dict(np.load(args.spec))
    problem = build_problem(spec, snapshot_period=args.iterations)
    nets, row = timed_benchmark(algorithm(args.alg, spec), problem, args.iterations, args.trials)
    losses, accs = test_metrics(nets, spec)
    print(json.dumps({"impl": "decent-bench", "alg": args.alg, **row,
                      "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
                      "test_loss": losses, "test_accuracy": accs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
