"""Communication channels: clip, noise (and their privacy) on the messages of any algorithm.

Example::

    from jaxdp import channels
    alg = channels.with_channel(jaxdp.algorithms.DGD(),
                                channels.chain(channels.clip(1.0), channels.gaussian(0.5)))
    trace = jaxdp.run(alg, problem, network, alg.default_params(), steps=500, seeds=64)
    report = alg.privacy(problem, network, alg.default_params(), steps=500)

Compression (``top_k``, ``random_k``, ``quantize``, each with optional error feedback), losses
(``drop``, ``gilbert_elliott``) and link processes (``link_failures``, ``activation``) are
transforms of the same stack; see :mod:`jaxdp.channels._transforms`.
"""
from jaxdp.channels._privacy import channel_report, private_stage
from jaxdp.channels._spec import parse_channel, parse_channels
from jaxdp.channels._transforms import (
    NORMS,
    STEP_CALL,
    TRANSFORMS,
    Channel,
    Transform,
    activation,
    chain,
    clip,
    drop,
    gaussian,
    gilbert_elliott,
    laplace,
    link_failures,
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
    "CHANNEL_STREAM", "NORMS", "STEP_CALL", "TRANSFORMS", "Channel", "ChannelNetwork",
    "ChannelState", "PrivateVariant", "Transform", "WithChannel", "activation", "chain", "channel_report", "clip",
    "drop", "gaussian", "gilbert_elliott", "laplace", "link_failures", "merged_params_type",
    "private_stage", "quantize", "random_k", "top_k", "with_channel",
]
__all__ += ["parse_channel", "parse_channels"]
