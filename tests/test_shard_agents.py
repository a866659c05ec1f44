"""``run(shard="agents")``: the agent axis split over devices gives the numbers of the default
(seed-sharded) run, and the data and the state are really split."""
import jax
import numpy as np
import pytest
from jax.sharding import PartitionSpec

import jaxdp
from jaxdp import algorithms, channels
from tests.harness import small_network, small_problem

N = 16  # divisible by the 8 test devices


@pytest.fixture(scope="module")
def setup():
    return small_problem("logistic", n_agents=N), small_network(n_agents=N, backend="edges")


def _both(alg, params, setup, **kw):
    prob, net = setup
    kw = {"steps": 12, "seeds": 3, "progress": False, "record_every": 4, **kw}
    return jaxdp.run(alg, prob, net, params, **kw), jaxdp.run(alg, prob, net, params,
                                                              shard="agents", **kw)


def _assert_same(by_seeds, by_agents):
    for k in by_seeds.metrics:  # sums over agents may be split: rounding only
        np.testing.assert_allclose(by_agents.metrics[k], by_seeds.metrics[k], rtol=1e-12,
                                   atol=1e-12)
    np.testing.assert_allclose(by_agents.final_models, by_seeds.final_models, rtol=0,
                               atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: (algorithms.DGD(), algorithms.DGDParams(alpha=0.05)),
    lambda: (algorithms.DPDGD(), algorithms.DPDGDParams(alpha=0.05, clip=1.0, sigma=0.5)),
])
def test_split_agents_equal_split_seeds(setup, make):
    by_seeds, by_agents = _both(*make(), setup)
    _assert_same(by_seeds, by_agents)
    assert by_agents.meta["shard"] == "agents" and len(by_agents.meta["devices"]) == 8
    assert by_seeds.meta["shard"] == "seeds"


def test_per_message_lattice_noise_is_the_same_draw_when_split(setup):
    """The channel's per-message draws do not depend on the split (JAX's threefry is
    partitionable: each device computes its slice of the same bits)."""
    alg = channels.with_channel(algorithms.DGD(), channels.gaussian(0.3))
    by_seeds, by_agents = _both(alg, alg.params(algorithms.DGDParams(alpha=0.05)), setup)
    _assert_same(by_seeds, by_agents)


def test_a_sweep_splits_agents_too(setup):
    prob, net = setup
    alg = algorithms.DGD()
    g = jaxdp.grid(algorithms.DGDParams(), alpha=[0.02, 0.05])
    kw = {"steps": 6, "seeds": 2, "progress": False}
    _assert_same(jaxdp.sweep(alg, prob, net, g, **kw),
                 jaxdp.sweep(alg, prob, net, g, shard="agents", **kw))


def test_the_data_and_the_state_are_split(setup):
    """Each device holds N/8 agents' rows and N/8 agents' models, not a copy of all."""
    from jax.sharding import Mesh

    from jaxdp.engine._run import AGENT_AXIS, _Program

    prob, net = setup
    alg, params = algorithms.DGD(), algorithms.DGDParams(alpha=0.05)
    program = _Program(alg, prob, net, params, None, 2, None, False,
                       Mesh(np.array(jax.devices()), (AGENT_AXIS,)))
    features = program.problem.features
    assert {s.data.shape[0] for s in features.addressable_shards} == {N // 8}
    compiled = program.compile(3, [1])
    state = compiled[1].output_shardings[0].state
    specs = {leaf.spec for leaf in jax.tree.leaves(state) if hasattr(leaf, "spec")}
    assert PartitionSpec(None, AGENT_AXIS) in specs, specs


def test_auto_devices_divide_the_agents():
    prob, net = small_problem(n_agents=12), small_network(n_agents=12)
    trace = jaxdp.run(algorithms.DGD(), prob, net, steps=2, progress=False, shard="agents")
    assert len(trace.meta["devices"]) == 6  # the most of the 8 that divide 12


def test_bad_shard_and_devices_are_clear_errors(setup):
    prob, net = setup
    with pytest.raises(ValueError, match="shard must be one of"):
        jaxdp.run(algorithms.DGD(), prob, net, steps=2, progress=False, shard="agent")
    with pytest.raises(ValueError, match="device count must divide N"):
        jaxdp.run(algorithms.DGD(), prob, net, steps=2, progress=False, shard="agents",
                  devices=jax.devices()[:3])


def test_link_failures_and_resumable_blocks_split_agents_too(setup, tmp_path):
    """A time-varying network (its links drawn each step) and a resumable run in blocks of seeds
    give the same numbers split over agents."""
    from jaxdp import network

    prob, net = setup
    failing = network.RandomLinkFailures(net, p_fail=0.3)
    alg, params = algorithms.DPDGD(), algorithms.DPDGDParams(alpha=0.05, clip=1.0, sigma=0.5)
    kw = {"steps": 6, "seeds": 4, "progress": False}
    _assert_same(jaxdp.run(alg, prob, failing, params, **kw),
                 jaxdp.run(alg, prob, failing, params, shard="agents", resume_dir=tmp_path,
                           seeds_per_block=2, **kw))


def test_the_concepts_page_example_runs_split_over_the_devices(capsys):
    """docs/concepts.md's ``shard="agents"`` block, as printed there (8 test devices)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "concepts.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.DOTALL)
                if 'shard="agents"' in b]
    exec(compile(block, "concepts.md", "exec"), {})  # noqa: S102
    assert capsys.readouterr().out.strip() == "512 agents on each of 8 device(s)"
