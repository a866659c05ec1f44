"""Plain-text super- and subscripts for prose that is shown as text, not math.

Docstrings and reports write indices TeX-style (``x_i^{k+1}``, ``β_{k+1}``); on the documentation
site such prose is Markdown or reST, where ``^{``/``_{`` would show as typed. :func:`plain_scripts`
writes them in Unicode instead (``x_iᵏ⁺¹``, ``βₖ₊₁``), leaving inline literals and math roles alone.
A terminal is not a page: :func:`terminal_scripts` writes them as ``x_i^(k+1)`` (ASCII brackets,
the way a one-character index already reads, ``x_i^k``), for what the command line prints.
"""
from __future__ import annotations

import re

SUPERSCRIPT = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzK",
                       "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴷ"))
"""Characters with a Unicode superscript form."""
SUBSCRIPT = dict(zip("0123456789+-−=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
"""Characters with a Unicode subscript form."""
_SCRIPT = re.compile(r"([\^_])\{([^{}]*)\}")
_KEPT = re.compile(r"(``.+?``|:math:`[^`]*`|\$[^$\n]+\$)")  # literals and math: left as written


def _one(match: re.Match) -> str:
    table = SUPERSCRIPT if match[1] == "^" else SUBSCRIPT
    body = match[2]
    if body and all(c in table for c in body):
        return "".join(table[c] for c in body)
    return f"{match[1]}({body})"


def plain_scripts(text: str) -> str:
    """``text`` with every ``^{…}``/``_{…}`` outside inline literals (````…````), ``:math:`` roles
    and ``$…$`` written as Unicode super/subscripts (``x^{k+1}`` → ``xᵏ⁺¹``), or as ``^(…)``/
    ``_(…)`` where a character has no such form (``Σ_{h∈B}`` → ``Σ_(h∈B)``)."""
    parts = _KEPT.split(text)
    return "".join(p if i % 2 else _SCRIPT.sub(_one, p) for i, p in enumerate(parts))


def terminal_scripts(text: str) -> str:
    """``text`` with every TeX group ``^{…}``/``_{…}`` written ``^(…)``/``_(…)``
    (``x_i^{k+1}`` → ``x_i^(k+1)``, ``r^{K−1}`` → ``r^(K−1)``): plain text for a terminal, as
    reports print it (:meth:`jaxdp.privacy.PrivacyReport.summary`); single-character indices
    (``x_i^k``) read as they are and are kept."""
    return _SCRIPT.sub(lambda m: f"{m[1]}({m[2]})", text)
