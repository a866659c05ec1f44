"""Communication channels: clip, noise (and their privacy) on the messages of any algorithm.

Example::

    import jaxdp
    from jaxdp import algorithms, channels, network, problems

    problem = problems.nonconvex_logistic(n_agents=50, m=200, d=10, seed=0)
    net = network.make_network("random_geometric", 50, radius=0.3, seed=1)
    alg = channels.with_channel(algorithms.DGD(),
                                channels.chain(channels.clip(0.1), channels.gaussian(15.0)))
    trace = jaxdp.run(alg, problem, net, alg.default_params(), steps=500, seeds=64)
    report = alg.privacy(problem, net, alg.default_params(), steps=500)
    print(report.summary().splitlines()[0])  # ε = 6.027 (max over agents, pld) at δ = 1e-05

One Gaussian draw per directed message, σ/C = 150 here; σ/C = 5 (``gaussian(0.5)``) gives
ε = inf, and ``jaxdp run dgd --channel "clip:0.1+gaussian:0.5"`` prints the σ that reaches
ε = 1, 4 and 8.

Compression (``top_k``, ``random_k``, ``quantize``, each with optional error feedback), losses
(``drop``, ``gilbert_elliott``) and link processes (``link_failures``, ``activation``) are
transforms of the same stack. Each transform is one small object (a :class:`Transform`
subclass) that owns how it acts on rows, what it draws, its state, its bits per message and its
privacy role; a new one is one class (see :mod:`jaxdp.channels._base`). What a step releases is
read from its traced program (:func:`program_releases`, :meth:`ChannelAccounting.program`). A value
that reaches other agents outside the channel's releases (a federated server's row, a shared
self term) makes the report ``inf`` (:meth:`ChannelAccounting.bypass`, :func:`self_term_flow`).
"""
from jaxdp.channels._accounting import ChannelAccounting, self_term_flow
from jaxdp.channels._base import ROLES, Declared, Transform, declare, per_row
from jaxdp.channels._chain import STEP_CALL, TRANSFORMS, Channel, chain
from jaxdp.channels._correlated import (
    CoupledGaussian,
    PairwiseCancelling,
    ZeroSum,
    pairwise_cancelling,
    printed_outsider_factor,
    zero_sum,
)
from jaxdp.channels._losses import (
    Activation,
    Drop,
    GilbertElliott,
    LinkFailures,
    Loss,
    activation,
    drop,
    gilbert_elliott,
    link_failures,
)
from jaxdp.channels._noise import Gaussian, Laplace, Noise, gaussian, laplace
from jaxdp.channels._privacy import channel_report, private_stage
from jaxdp.channels._program import ProductCall, program_releases
from jaxdp.channels._spec import parse_channel, parse_channels
from jaxdp.channels._transforms import (
    NORMS,
    Clip,
    Quantize,
    RandomK,
    TopK,
    clip,
    quantize,
    random_k,
    top_k,
)
from jaxdp.channels._wrap import (
    CHANNEL_STREAM,
    ChannelNetwork,
    ChannelState,
    PrivateVariant,
    WithChannel,
    merged_params_type,
    with_channel,
)

__all__ = [
    "CHANNEL_STREAM", "NORMS", "ROLES", "STEP_CALL", "TRANSFORMS", "Activation", "Channel",
    "ChannelAccounting",
    "ChannelNetwork", "ChannelState", "Clip", "CoupledGaussian", "Declared", "Drop", "Gaussian",
    "GilbertElliott", "Laplace", "LinkFailures", "Loss", "Noise", "PairwiseCancelling", "per_row",
    "PrivateVariant", "ProductCall", "Quantize", "RandomK", "TopK", "Transform", "WithChannel",
    "ZeroSum", "activation", "chain", "channel_report", "clip", "declare", "drop", "gaussian",
    "gilbert_elliott", "laplace", "link_failures", "merged_params_type", "pairwise_cancelling",
    "parse_channel", "parse_channels", "printed_outsider_factor", "private_stage", "program_releases", "quantize",
    "random_k", "self_term_flow", "top_k", "with_channel", "zero_sum",
]
