"""Host-side checks of an algorithm's static configuration (its dataclass fields), shared by the
families and the catalogue; each raises at construction, naming the algorithm, field and value."""
from __future__ import annotations

import numpy as np


def check_count(who: str, field: str, value) -> None:
    """A static count (local steps, batch size, period) is an integer >= 1 (NumPy ints too).

    Raises:
      ValueError: a bool, a non-integer or a value below 1, with the value and why it is refused.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{who}: {field} must be an integer >= 1 (a count fixed when the "
                         f"algorithm is built: it sets the step's loops and shapes); got {value!r}")


def check_choice(who: str, field: str, value, choices) -> None:
    """``value`` is one of ``choices``.

    Raises:
      ValueError: otherwise, listing the choices.
    """
    if value not in choices:
        raise ValueError(f"{who}: {field} must be one of {choices}; got {value!r}")


__all__ = ["check_choice", "check_count"]
