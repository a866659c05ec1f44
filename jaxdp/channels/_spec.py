"""A channel from a one-line spec (the command line's ``--channel``).

Grammar::

    SPEC   := [MESSAGE "="] STAGE ("+" STAGE)*
    STAGE  := KIND [":" ARG ("," ARG)*]  |  "broadcast"  |  "aggregate"  |  "self"
    ARG    := VALUE  |  NAME "=" VALUE

``KIND`` is a key of :data:`jaxdp.channels.TRANSFORMS` (``clip``, ``gaussian``, ``laplace``,
``top_k``, ...); positional values fill the constructor's positional parameters in order, named
ones its keyword parameters. Each value is converted by the constructor's signature: ``int``,
``float``, ``bool`` (``true``/``false``/``1``/``0``/``yes``/``no``) or ``str`` by the annotation,
else by the type of the default. The stages ``broadcast`` and ``aggregate`` set the channel's mode
(see :class:`~jaxdp.channels.Channel`), ``self`` its ``self_term="released"``; a channel's own
name (``"clip+gaussian/bcast"``) parses back to the same stack with default arguments.
:func:`parse_channels` reads several specs, each for the message its ``MESSAGE=`` prefix names
(``"y=clip:2.0,name=cy+gaussian:1.0,name=gy"``; no prefix: every other message).

Examples::

    parse_channel("clip:1.0+gaussian:0.5")                 # clip at 1, then N(0, 0.5² I)
    parse_channel("clip:1.0,norm=linf+gaussian:sigma=0.5,decay=0.99+broadcast")
    parse_channel("top_k:k=4,error_feedback=true")
"""
from __future__ import annotations

import inspect
import re
import typing

from jaxdp.channels._chain import TRANSFORMS, Channel, chain

MODES = {"broadcast": ("broadcast", True), "aggregate": ("aggregate", True),
         "self": ("self_term", "released"), "/bcast": ("broadcast", True),
         "/agg": ("aggregate", True), "/self": ("self_term", "released")}
"""Mode stages (and the suffixes :attr:`Channel.name` writes) → :func:`chain` keyword and value."""

EXAMPLE = "clip:1.0+gaussian:sigma=0.5,decay=0.99"

_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def parse_channel(spec: str) -> Channel:
    """The :class:`~jaxdp.channels.Channel` a spec describes (grammar in the module doc).

    Raises:
      ValueError: an empty spec or stage, an unknown kind (listing the known ones), an unknown or
        repeated argument (naming it), too many positional values, a value that is not of the
        parameter's type (naming both), a missing required argument, or what the constructor or
        :func:`~jaxdp.channels.chain` refuses.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a channel spec must be a non-empty string like {EXAMPLE!r}; "
                         f"got {spec!r}")
    text, flags = spec.strip(), {}
    for suffix in ("/self", "/bcast", "/agg"):
        if text.endswith(suffix):
            text = text[: -len(suffix)]
            flags.update([MODES[suffix]])
    transforms = []
    for stage in re.split(r"(?<![0-9.][eE])\+", text):  # not the + of an exponent (1e+3)
        stage = stage.strip()
        if stage in MODES:
            flags.update([MODES[stage]])
        else:
            transforms.append(_stage(stage, spec))
    if not transforms:
        raise ValueError(f"channel spec {spec!r} has no transform; e.g. {EXAMPLE!r}")
    return chain(*transforms, **flags)


def parse_channels(specs) -> Channel | dict[str, Channel]:
    """One spec, or several (a list), each ``[MESSAGE=]SPEC``: a :class:`Channel` for a single
    spec without prefix, else ``{message: Channel}`` (``"*"`` for the spec without prefix) for
    :func:`~jaxdp.channels.with_channel`.

    Raises:
      ValueError: what :func:`parse_channel` refuses, or two specs for the same message.
    """
    specs = [specs] if isinstance(specs, str) else list(specs)
    routes = {}
    for spec in specs:
        match = re.match(r"\s*([A-Za-z_]\w*)\s*=", spec) if isinstance(spec, str) else None
        message, text = (match.group(1), spec[match.end():]) if match else ("*", spec)
        if message in routes:
            raise ValueError(f"two channel specs for message {message!r}: {specs}")
        routes[message] = parse_channel(text)
    if list(routes) == ["*"]:
        return routes["*"]
    return routes


def _stage(stage: str, spec: str):
    """One transform from ``KIND[:ARGS]``."""
    kind, _, args = stage.partition(":")
    kind = kind.strip()
    if not kind:
        raise ValueError(f"channel spec {spec!r} has an empty stage (two '+' in a row, or a "
                         "leading or trailing '+')")
    if kind not in TRANSFORMS:
        raise ValueError(f"unknown channel transform {kind!r} in {spec!r}; known: "
                         f"{', '.join(TRANSFORMS.names())} (and the modes broadcast, aggregate). "
                         f"{TRANSFORMS.hint}")
    fn = TRANSFORMS[kind]
    positional, named = _split_args(kind, args)
    params = inspect.signature(fn).parameters
    slots = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
    if len(positional) > len(slots):
        raise ValueError(f"{kind} takes at most {len(slots)} positional value(s) "
                         f"({', '.join(p.name for p in slots)}); got {len(positional)} in "
                         f"{stage!r}: name the others (NAME=VALUE)")
    values = dict(zip((p.name for p in slots), positional))
    for name, value in named.items():
        if name not in params or params[name].kind == params[name].VAR_KEYWORD:
            raise ValueError(f"{kind} has no argument {name!r}; it takes "
                             f"{', '.join(params)}")
        if name in values:
            raise ValueError(f"{kind}: argument {name!r} given twice in {stage!r}")
        values[name] = value
    hints = _hints(fn)
    kwargs = {name: _convert(kind, name, value, hints.get(name), params[name].default)
              for name, value in values.items()}
    missing = [p.name for p in params.values()
               if p.default is p.empty and p.name not in kwargs
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        raise ValueError(f"{kind} needs {', '.join(missing)}: e.g. "
                         f"{kind}:{','.join(f'{m}=...' for m in missing)}")
    return fn(**kwargs)


def _split_args(kind: str, args: str) -> tuple[list[str], dict[str, str]]:
    """``"1.0,norm=linf"`` → ``(["1.0"], {"norm": "linf"})``; positional values come first."""
    positional, named = [], {}
    if not args.strip():
        return positional, named
    for item in args.split(","):
        name, sep, value = (s.strip() for s in item.partition("="))
        if not sep:
            if named:
                raise ValueError(f"{kind}: positional value {item.strip()!r} after a named one")
            if not name:
                raise ValueError(f"{kind}: empty value in {args!r}")
            positional.append(name)
        elif not name or not value:
            raise ValueError(f"{kind}: {item.strip()!r} must be NAME=VALUE")
        elif name in named:
            raise ValueError(f"{kind}: argument {name!r} given twice")
        else:
            named[name] = value
    return positional, named


def _hints(fn) -> dict:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 — an unresolvable annotation: fall back on the defaults
        return {}


def _convert(kind: str, name: str, value: str, hint, default):
    """``value`` as the parameter's type (annotation first, then the default's type)."""
    target = hint if hint in (bool, int, float, str) else (
        type(default) if isinstance(default, (bool, int, float, str)) else None)
    if target is bool:
        if value.lower() in _TRUE + _FALSE:
            return value.lower() in _TRUE
        raise ValueError(f"{kind}: {name} must be true or false; got {value!r}")
    if target is int:
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{kind}: {name} needs an integer; got {value!r}") from None
    if target is float:
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{kind}: {name} needs a number; got {value!r}") from None
    if target is str:
        return value
    for cast in (int, float):  # no annotation, no default: a number if it reads as one
        try:
            return cast(value)
        except ValueError:
            pass
    return value
