"""Lattice noise: Gaussian and Laplace mechanisms whose released floats are private as floats.

A release ``fl(v + s·z)`` of a float sampler is an exact shift of the sampler's finite set of
floats, and the neighbour's set is shifted differently: one released coordinate can be impossible
under the neighbouring data set (Mironov, CCS 2012; Jin et al., IEEE S&P 2022). The lattice
mechanism releases instead

.. math:: r = γ\\,(a(v) + K),\\qquad γ = s / R,\\qquad a(v) = \\mathrm{round}(\\mathrm{clamp}(v, ±Lγ) / γ),

an integer ``n = a(v) + K`` times a public step ``γ``: ``K = round(R·Z)``, coordinatewise, with
``Z`` a standard normal (Gaussian) or standard Laplace (density ``e^{−|x|}/2``) draw independent
of the data — the *rounded* Gaussian or Laplace; ``R`` is a power of two (the resolution);
``L`` bounds ``|a|`` so every sum is exact in the working dtype (:func:`clamp_bound`). The float
``r`` is a deterministic function of ``n`` (and public values), so whatever a party sees is
post-processing of the integer release, whose support does not depend on the data.

**The release is a post-processing of the continuous mechanism** (the snapping argument of
Mironov, CCS 2012, §5, with the rounding moved after the noise). Because ``a(v)`` is an integer
vector, ``n = a(v) + round(RZ) = round(a(v) + RZ)`` (rounding commutes with an integer
translation; ties have probability 0), so ``r = γn`` is a fixed function of
``Y = γa(v) + sZ`` — the continuous Gaussian (or Laplace) mechanism of scale ``s`` applied to
``γa(v)``. Every guarantee of that mechanism holds for ``r`` as it is, with the sensitivity of
``γa(v)``: continuous-Gaussian PLD and RDP accountants, amplification by Poisson subsampling or by
sampling without replacement included (the sampling happens before ``a`` is applied, the
rounding after the noise, so the subsampled release is the same post-processing of the
subsampled continuous mechanism). Nothing is claimed about the rounded law by itself.

Sensitivity. For two inputs ``v, v'`` (each coordinate computed in floats, so ``fl(v/γ)`` is off by
at most ``u·L`` lattice steps, ``u`` the unit round-off), every coordinate of ``a(v) − a(v')`` is at
most ``|v − v'|/γ + 1 + 2uL`` (rounding to nearest moves each side by ½). Hence the integer shift
has ℓ2 norm ``≤ ‖v − v'‖₂/γ + (1 + 2uL)√d`` and ℓ1 norm ``≤ ‖v − v'‖₁/γ + (1 + 2uL)d``:
:func:`lattice_sensitivity` returns that bound in value units (``γ`` times it), which the
reports use.

Resolution. The rounding term is ``c√d/R`` noise standard deviations, ``c = 1 + 2uL`` (1.5 in
float32, 1.25 in float64), i.e. a fraction ``z·c√d/R`` of ``Δ`` at noise multiplier ``z = s/Δ``;
the headline ε grows by about 1.4 times that fraction at ``z = 10`` (up to 4 times at ``z = 1``,
where the fraction is ten times smaller). The ``√d`` is attained, not a slack of the proof (a
difference spread thinly over ``d`` coordinates can move every rounding by one), so only a finer
lattice shrinks it: ``R = 2^{15}`` makes it 0.17 % of σ at ``d = 1370``
(2.5 % of Δ at ``z = 10``; it was 1.4 % of σ, 13.6 % of Δ, with ``R = 2^{12}``), so the sound
headline is within 5 % of the continuous ideal over the tightness grid up to ``d ≈ 4900`` in
float32 (``docs/privacy.md``, "How tight"). The float32 range fixes the rest: ``|a + K| ≤ L + 13R`` must
stay below ``2^{23}`` (exact sums, and :func:`jaxdp.channels._correlated.lattice_integer` recovers
``n`` from the release), so ``L = 2^{22}`` and a float32 value is clamped at ``Lγ = 128σ``
(1024σ before). The price of a finer ``R`` is the table: ``13R`` entries, ``2^{19}`` buckets, 6 MB
of constants in every program that draws, seconds of exact arithmetic to build (the package
ships the built table, checked by its digest at every read: :func:`gaussian_table`).
Not removed: the float error ``2uL`` of ``v/γ`` (¼ step per side in float32). Rounding ``v/γ``
exactly needs the 48-bit product ``a·γ``, which float32 has not without a fused multiply-add.

Sampling. ``K`` is drawn from an alias table (Walker 1977; Vose 1991) built once on the host in
exact integer arithmetic from the pmf evaluated in fixed point (Gaussian, ``2^{−160}``, its
error bounded) or with 50-digit decimals (Laplace): one table bucket from the
bits of a random word and a 64-bit threshold comparison. One 32-bit word carries the bucket, the
sign and the top bits of the 64-bit uniform, which decide the comparison except on a tie with the
threshold's top bits (probability ``2^{−12}`` for ``M = 2^{19}``); a tie takes the rest of its
uniform from fresh words (a few per group of draws, :func:`_lookup`), so a Gaussian draw costs
about one word and one gather, with no data-dependent loop or shape and a program size
independent of the data. The table's law differs from the ideal one by its quantization
(probabilities are multiples of ``2^{−64}/M``) and its cut tail; the total-variation distance
``η`` per draw is computed exactly when the table is built
(:func:`sampler_tv`, which adds the ``2^{−96}`` bound on a group running out of tie words), and a
run with ``D`` draws is within ``Dη`` of the ideal mechanism: a report adds ``(1 + e^ε)·Dη`` to δ.
The rounded Laplace is drawn as ``±(1 + 2^{16}H + L)`` or 0, with
``H`` and ``L`` from two tables: given ``|K| ≥ 1``, ``|K| − 1`` is geometric with ratio ``e^{−1/R}``,
and the binary digits of a geometric variable are independent, so its high and low parts are.

Gradients. ``jax.grad`` sees the reparameterized ``v + s·z`` (``z = K/R``): the tangent of a
release is ``dv + z·ds``, as for the float sampler (straight-through for the rounding).
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
import zipfile
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp._types import Array, PRNGKey
from jaxdp.privacy._bits import random_words

GAUSSIAN_RESOLUTION = 2 ** 15
"""``R`` of the rounded Gaussian: ``K = round(RZ)``, so the lattice step is ``γ = σ/32768`` and the
rounding term of the sensitivity is ``(1 + 2uL)√d/R`` noise standard deviations (module
docstring)."""
LAPLACE_RESOLUTION = 2 ** 16
"""``R`` of the discrete Laplace: ``P(K = k) ∝ e^{−|k|/R}``, so ``γ = b/65536``."""
_GAUSSIAN_TAIL = 13  # |K| ≤ 13 R: the cut tail has mass ≈ 1e-38
GAUSSIAN_DRAW_BOUND = _GAUSSIAN_TAIL * GAUSSIAN_RESOLUTION
"""The largest ``|K|`` the discrete Gaussian sampler draws (its table stops at ``13R``)."""
_LAPLACE_HIGH = 80  # H < 80: the cut tail of e^{-H} has mass e^{-80} ≈ 1e-35
_DIGITS = 50


def clamp_bound(dtype) -> float:
    """``L``: ``|a(v)| ≤ L`` lattice steps, so ``a + K`` stays an exact integer in ``dtype``
    (``|K| ≤ 13R``, ``L + 13R < 2^{23}``): ``2^{22}`` in float32 (a value is clamped at
    ``L/R = 128σ`` or ``64b``), ``2^{50}`` in float64 (``2^{35}σ``, ``2^{34}b``); the float error
    of ``v/γ`` is then at most ``uL`` = ¼ step."""
    return float(2 ** 22) if jnp.dtype(dtype) == jnp.float32 else float(2 ** 50)


def unit_roundoff(dtype) -> float:
    """The unit roundoff u of ``dtype``: 2⁻²⁴ for float32, else 2⁻⁵³ (float64)."""
    return 2.0 ** -24 if jnp.dtype(dtype) == jnp.float32 else 2.0 ** -53


@dataclasses.dataclass(frozen=True, eq=False)
class AliasTable:
    """An alias table of ``M = 2^bits`` buckets with 64-bit thresholds (numpy, host constants).

    A draw takes bucket ``b`` uniformly and keeps it when a 64-bit uniform ``u < threshold[b]``,
    else takes ``alias[b]``; its law is exactly ``weights / (M·2^64)``. Immutable, hashed by
    identity (``eq=False``), so constants derived from a table are cached per table
    (:func:`_split`).
    """
    bits: int
    hi: np.ndarray  # (M,) uint32: threshold >> 32
    lo: np.ndarray  # (M,) uint32: threshold & 0xffffffff
    alias: np.ndarray  # (M,) int32
    tv: float  # total-variation distance of the table's law from the ideal pmf (an upper bound)


def _alias_table(pmf: list[Decimal], tail: Decimal) -> AliasTable:
    """The alias table of ``pmf`` (Decimals summing to ``1 − tail``; ``tail`` is the ideal mass
    past the table): :func:`_fixed_alias_table` of the pmf floored to ``2^{−160}`` units, each
    floor's error (below one unit) added to the distance with the tail."""
    f = _FRACTION_BITS
    with localcontext() as ctx:
        ctx.prec = _DIGITS + 20  # p·2^f exactly: a 49-digit integer part
        cells = [int(p * (1 << f)) for p in pmf]  # floor: the pmf is non-negative
    return _fixed_alias_table(cells, f, float(tail) + len(pmf) * 2.0 ** -f)


def _vose(weights: list[int], bits: int, tv: float) -> AliasTable:
    """The alias table drawing ``weights / (M·2^64)`` (integers summing to ``M·2^64``, at most
    ``M = 2^bits`` of them): Vose's method in exact integers."""
    m, cap = 2 ** bits, 2 ** 64
    weights = list(weights) + [0] * (m - len(weights))
    threshold, alias = [cap] * m, list(range(m))
    small = [k for k in range(m) if weights[k] < cap]
    large = [k for k in range(m) if weights[k] >= cap]
    while small and large:
        s, g = small.pop(), large.pop()
        threshold[s], alias[s] = weights[s], g
        weights[g] -= cap - weights[s]
        (small if weights[g] < cap else large).append(g)
    for k in range(m):  # a full bucket keeps itself: threshold 0, alias itself
        if threshold[k] == cap:
            threshold[k], alias[k] = 0, k
    return AliasTable(bits=bits, hi=np.array([t >> 32 for t in threshold], np.uint32),
                      lo=np.array([t & 0xFFFFFFFF for t in threshold], np.uint32),
                      alias=np.array(alias, np.int32), tv=tv)


def _geometric_powers(ratio: Decimal, count: int) -> list[Decimal]:
    """``ratio^k`` for ``k = 0 .. count-1``."""
    out = [Decimal(1)]
    for _ in range(count - 1):
        out.append(out[-1] * ratio)
    return out


@functools.cache
def gaussian_table() -> AliasTable:
    """The alias table of :func:`build_gaussian_table`, read from the copy shipped with the
    package (:data:`PACKAGED_TABLE`, 2 MB, read in tens of milliseconds), which is drawn from only
    when its SHA-256 is :data:`GAUSSIAN_TABLE_SHA256`, the digest of the table this code builds (a
    test rebuilds it and compares array by array): a missing, truncated or altered file is never
    drawn from, the table is then built (seconds of CPU: ``2^{19}`` buckets in exact arithmetic).
    The exactness argument is the builder's; the file only saves its time."""
    table = _read_table(PACKAGED_TABLE)
    return table if table is not None else build_gaussian_table()


GAUSSIAN_TABLE_SHA256 = "3e3c367e0c027be3ff7a54445daa27a637b24048f1c1a8c6992fea2661664bb5"
"""The SHA-256 of :func:`build_gaussian_table`'s table (:func:`table_digest`)."""

PACKAGED_TABLE = Path(__file__).with_name("data") / "gaussian_table.npz"
"""The shipped copy of :func:`build_gaussian_table`'s table, written by
:func:`write_packaged_table` after a change of the builder (and of
:data:`GAUSSIAN_TABLE_SHA256`)."""


def table_digest(table: AliasTable) -> str:
    """The SHA-256 of a table's buckets, thresholds, aliases and distance (little-endian bytes)."""
    digest = hashlib.sha256(f"{table.bits}:{table.tv!r}:".encode())
    for part, dtype in ((table.hi, "<u4"), (table.lo, "<u4"), (table.alias, "<i4")):
        digest.update(np.ascontiguousarray(part, dtype).tobytes())
    return digest.hexdigest()


def _read_table(path: Path) -> AliasTable | None:
    """The table stored at ``path`` if it is there, readable and has the expected digest."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            table = AliasTable(bits=int(stored["bits"]), hi=stored["hi"].astype(np.uint32),
                               lo=stored["lo"].astype(np.uint32),
                               alias=stored["alias"].astype(np.int32), tv=float(stored["tv"]))
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    return table if table_digest(table) == GAUSSIAN_TABLE_SHA256 else None


def _write_table(path: Path, table: AliasTable) -> None:
    """Store ``table`` at ``path`` (compressed npz)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, bits=table.bits, hi=table.hi, lo=table.lo, alias=table.alias,
                        tv=table.tv)


def write_packaged_table() -> None:
    """Build the table and store it at :data:`PACKAGED_TABLE` (``python -c "from
    jaxdp.privacy import _lattice; _lattice.write_packaged_table()"``); refused unless its digest
    is :data:`GAUSSIAN_TABLE_SHA256` (update that first after changing the builder)."""
    table = build_gaussian_table()
    if table_digest(table) != GAUSSIAN_TABLE_SHA256:
        raise ValueError(f"the built table's digest is {table_digest(table)}, not "
                         f"GAUSSIAN_TABLE_SHA256 = {GAUSSIAN_TABLE_SHA256}")
    _write_table(PACKAGED_TABLE, table)


_FRACTION_BITS = 160
"""Fixed-point precision of :func:`build_gaussian_table`: probabilities are integers times
``2^{−160}``, well below the table's unit ``2^{−64}/M = 2^{−83}`` even after the ``~2(13R)²``
units of error the mass recurrence accumulates (``2^{39}``)."""


def build_gaussian_table() -> AliasTable:
    """The law of ``|K|``, ``K = round(RZ)``, ``Z ~ N(0, 1)`` (the rounded Gaussian):
    ``P(K = k) = ∫_{k−½}^{k+½} φ(x/R)/R dx``, ``P(|K| = k) = 2P(K = k)`` for ``k ≥ 1``.

    Each cell's mass is ``e^{−k²/2R²}·I(k)/(√(2π)R)`` with
    ``I(k) = ∫_{−½}^{½} e^{−kt/R² − t²/2R²} dt = Σ_n c_n (k/R²)^{2n}`` (expand both exponentials
    and integrate term by term: ``c_n = Σ_j (−1/2R²)^j / (j!(2n)!(2j + 2n + 1)4^{j+n})``), a
    series whose terms fall by ``(13/R)²`` per ``n`` on the table's support; the masses
    ``e^{−k²/2R²}`` come from the recurrence ``q^{(k+1)²} = q^{k²}q^{2k+1}``. Everything is
    fixed-point integer arithmetic with :data:`_FRACTION_BITS` bits (Python integers, vectorized
    as numpy object arrays; the constants ``q``, ``c_n``, ``1/(√(2π)R)`` from mpmath at 70
    digits), every operation a floor: the computed ``p̂_k`` is within ``2(2k² + 2N + 10)`` units
    ``2^{−160}`` of ``p_k`` (``N`` series terms: each product of numbers ≤ 1 adds the operands'
    errors plus one unit), and that sum is added to the total-variation bound, with the tail past
    ``13R``, ``erfc((13R + ½)/(√2R))``."""
    import mpmath

    r, top, f = GAUSSIAN_RESOLUTION, _GAUSSIAN_TAIL * GAUSSIAN_RESOLUTION, _FRACTION_BITS
    log_r = r.bit_length() - 1
    if r != 1 << log_r or f < 4 * log_r:
        raise ValueError(f"GAUSSIAN_RESOLUTION must be a power of two ≤ 2^{f // 4}; got {r}")
    x_max = (_GAUSSIAN_TAIL / r) ** 2
    terms = next(n for n in range(1, 64)
                 if x_max ** n / (math.factorial(2 * n) * 4 ** n) < 2.0 ** -f)
    with mpmath.workdps(70):
        fixed = lambda x: int(mpmath.floor(x * mpmath.mpf(2) ** f))
        q = fixed(mpmath.exp(mpmath.mpf(-1) / (2 * r * r)))
        inverse_norm = fixed(1 / (mpmath.sqrt(2 * mpmath.pi) * r))
        coefficients = [fixed(_cell_coefficient(n, r, terms)) for n in range(terms)]
        tail = mpmath.erfc((top + mpmath.mpf(0.5)) / (mpmath.sqrt(2) * r))
    mass, m, step, q2 = [], 1 << f, q, (q * q) >> f
    for _ in range(top + 1):  # e^{-k²/2R²} = q^{k²}, by q^{(k+1)²} = q^{k²} q^{2k+1}
        mass.append(m)
        m, step = (m * step) >> f, (step * q2) >> f
    x = (np.arange(top + 1, dtype=object) ** 2) << (f - 4 * log_r)  # k²/R⁴, exact
    series = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        series = ((series * x) >> f) + c
    cells = (((np.array(mass, dtype=object) * series) >> f) * inverse_norm) >> f
    cells[1:] *= 2
    k = np.arange(top + 1, dtype=np.float64)
    error = float(np.sum(2 * (2 * k ** 2 + 2 * terms + 10))) * 2.0 ** -f
    return _fixed_alias_table(list(cells), f, float(tail) + error)


def _cell_coefficient(n: int, r: int, terms: int):
    """``c_n`` of :func:`build_gaussian_table`'s cell integral (mpmath, its working precision)."""
    import mpmath
    b = mpmath.mpf(-1) / (2 * r * r)
    return mpmath.fsum(b ** j / (mpmath.factorial(j) * mpmath.factorial(2 * n)
                                 * (2 * j + 2 * n + 1) * mpmath.mpf(4) ** (j + n))
                       for j in range(terms))


def _fixed_alias_table(cells: list[int], f: int, slack: float) -> AliasTable:
    """The alias table of the pmf ``cells·2^{−f}`` (non-negative integers), whose distance from
    the ideal law is at most ``slack`` besides the rounding to the table's units (the ideal mass
    past the table and the error of ``cells``): weights floored to units ``2^{−64}/M``, the units
    left over to the largest remainders; the total-variation bound is exact in integers (rounded
    up to a float)."""
    bits = max(1, math.ceil(math.log2(len(cells))))
    shift = f - bits - 64
    if shift < 0:
        raise ValueError(f"{f} fraction bits cannot resolve 2^-64/2^{bits}")
    cells = np.array(cells, dtype=object)
    weights = cells >> shift
    short = (1 << (bits + 64)) - int(weights.sum())
    if not 0 <= short <= len(cells):
        raise ValueError(f"the pmf does not sum to 1 within the table's units (short {short})")
    remainders = np.array([float(x) for x in (cells - (weights << shift))])
    weights = [int(w) for w in weights]
    for k in np.argsort(-remainders, kind="stable")[:short]:
        weights[k] += 1
    gaps = np.abs((np.array(weights, dtype=object) << shift) - cells).sum()
    tv = (Fraction(int(gaps), 1 << f) + Fraction(slack)) / 2
    return _vose(weights, bits, math.nextafter(float(tv), math.inf))


@functools.cache
def laplace_tables() -> tuple[AliasTable, AliasTable, AliasTable]:
    """``(zero, high, low)`` for the rounded Laplace ``K = round(RL)``, ``L`` a standard Laplace
    draw (density ``e^{−|x|}/2``): ``|K| = 0`` with probability ``1 − e^{−1/(2R)}`` (``zero``: a
    two-bucket table), else ``P(|K| = k) = 2 sinh(1/(2R)) e^{−k/R}``, i.e.
    ``|K| = 1 + G`` with ``G = R·H + L`` geometric, ``P(G = g) = (1 − q)q^g``: its low part
    ``L ∈ [0, R)`` (``low``, ``P(L = l) ∝ q^l``) and high part ``H`` (``high``, geometric with ratio
    ``q^R = e^{−1}``) are independent."""
    r = LAPLACE_RESOLUTION
    with localcontext() as ctx:
        ctx.prec = _DIGITS
        q = (Decimal(-1) / r).exp()
        p0 = 1 - (Decimal(-1) / (2 * r)).exp()
        zero = _alias_table([p0, 1 - p0], Decimal(0))
        low = _geometric_powers(q, r)
        low_sum = (1 - q ** r) / (1 - q)
        low_table = _alias_table([p / low_sum for p in low], Decimal(0))
        e = Decimal(-1).exp()
        high = [(1 - e) * p for p in _geometric_powers(e, _LAPLACE_HIGH)]
        high_table = _alias_table(high, e ** _LAPLACE_HIGH)
        return zero, high_table, low_table


def sampler_tv(law: str) -> float:
    """``η``: the total-variation distance of one lattice draw of ``law`` from its ideal law (the
    rounded Gaussian or Laplace), an exact upper bound computed from the tables, plus
    :data:`TIE_OVERFLOW` per table lookup (a group of draws with more ties than its tie slots:
    per group, hence at most that per draw)."""
    if law == "gaussian":  # one lookup per draw
        return gaussian_table().tv + TIE_OVERFLOW
    return sum(t.tv + TIE_OVERFLOW for t in laplace_tables())


TIE_GROUP = 1024
"""The draws share tie slots in groups of (at most) this many (:func:`_lookup`)."""
_TIE_OVERFLOW_BITS = 96
TIE_OVERFLOW = 2.0 ** -_TIE_OVERFLOW_BITS
"""A bound on the probability that one group of draws has more ties than its slots, per table
lookup: the only way a draw's law leaves its table's, so :func:`sampler_tv` adds it per lookup."""


def tie_slots(group: int, k: int) -> int:
    """``S``: tie slots for a group of ``group`` lookups that each tie with probability ``2^{−k}``
    (independently), the smallest with ``P(more than S ties) ≤ C(group, S+1)·2^{−k(S+1)} ≤``
    :data:`TIE_OVERFLOW` (a union bound over the ``S+1``-subsets; exact integers)."""
    s = 0
    while math.comb(group, s + 1) * 2 ** _TIE_OVERFLOW_BITS > 2 ** (k * (s + 1)):
        s += 1
    return s


@functools.lru_cache(maxsize=16)
def _split(table: AliasTable, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Host constants of a one-word lookup whose uniform's top ``k`` bits come with the bucket:
    ``(top << bits) | alias`` (``top`` the threshold's top ``k`` bits; one gather decides all
    but the ties) and the ``(M, 2)`` words of ``rest``, the threshold's other ``64 − k`` bits
    moved to the top of a 64-bit word (a tie draws a fresh 64-bit uniform ``V`` and keeps its
    bucket when ``V < rest``, i.e. ``⌊V/2^k⌋ < threshold mod 2^{64−k}``). Computed once per
    ``(table, k)`` (numpy over ``M`` buckets, not once per trace); read-only arrays."""
    if not 1 <= k <= 32 - table.bits:
        raise ValueError(f"a one-word lookup needs 1 <= k <= 32 - bits = {32 - table.bits}; "
                         f"got k = {k}")
    threshold = (table.hi.astype(np.uint64) << np.uint64(32)) | table.lo.astype(np.uint64)
    top = (threshold >> np.uint64(64 - k)).astype(np.uint32)
    rest = threshold << np.uint64(k)  # wraps: the low 64 − k bits, at the top
    packed = (top << np.uint32(table.bits)) | table.alias.astype(np.uint32)
    halves = np.stack([(rest >> np.uint64(32)).astype(np.uint32), rest.astype(np.uint32)], 1)
    packed.flags.writeable = halves.flags.writeable = False  # shared by every later trace
    return packed, halves


def _tie_masks(tie: Array) -> Array:
    """``(groups, C)`` 32-bit masks of ``tie`` ``(groups, G)``, ``C = G/32``: bit ``j`` of mask
    ``w`` is element ``jC + w``, so building them reduces along a major axis (vectorized across
    ``w``)."""
    lanes = jnp.arange(32, dtype=jnp.uint32)
    tie = tie.reshape(tie.shape[0], 32, -1).astype(jnp.uint32)
    return jnp.sum(tie << lanes[None, :, None], axis=1, dtype=jnp.uint32)  # distinct bits: or


def _tie_positions(masks: Array, count: int) -> tuple[Array, Array]:
    """``(word, lane)`` ``(groups, count)`` of the first ``count`` ties of each group in index
    order (element ``lane·C + word``: the lowest lane with a tie in any word, then the first such
    word) from its masks ``(groups, C)``; ``lane = 32`` where the group has no tie left. A scan
    over the slots that touches the masks only (``C`` words a group)."""
    words = jnp.arange(masks.shape[1])[None]

    def next_tie(left, _):
        any_word = jax.lax.reduce(left, jnp.uint32(0), jax.lax.bitwise_or, (1,))
        low = any_word & (~any_word + jnp.uint32(1))  # the lowest lane left (0: no tie left)
        lane = jax.lax.population_count(low - jnp.uint32(1)).astype(jnp.int32)
        word = jnp.argmax((left & low[:, None]) != 0, axis=-1)  # the first word with it
        at = words == word[:, None]
        return jnp.where(at, left & ~low[:, None], left), (word.astype(jnp.int32), lane)

    _, (word, lane) = jax.lax.scan(next_tie, masks, None, length=count)
    return word.T, lane.T


def _kept_ties(masks: Array, bucket: Array, halves: Array, slots: Array) -> tuple[Array, Array]:
    """``(position, kept)`` ``(groups, S)``: the element index of each group's ``s``-th tie (in
    index order) and whether it keeps its bucket, i.e. slot ``s``'s 64-bit uniform is below the
    bucket's ``rest``. Ties past the ``S`` slots are not kept (they take the alias); a slot with
    no tie left is not kept."""
    word, lane = _tie_positions(masks, slots.shape[1])
    position = jnp.minimum(lane, 31) * masks.shape[1] + word
    rest = halves[jnp.take_along_axis(bucket, position, axis=1)]
    below = ((slots[..., 0] < rest[..., 0])
             | ((slots[..., 0] == rest[..., 0]) & (slots[..., 1] < rest[..., 1])))
    return position, (lane < 32) & below


def _lookup(table: AliasTable, word: Array, flags: int, slots: Array) -> Array:
    """One alias-table draw per element of ``word`` ``(groups, G)`` from that word alone, save
    on a tie: bucket ``b`` = the low ``bits`` bits, then ``flags`` bits left to the caller, then
    ``u``, the top ``k = 32 − bits − flags`` bits of the 64-bit alias uniform ``U``.

    ``U < threshold[b]`` is decided by ``u`` against the threshold's top ``k`` bits unless they
    are equal (a tie, probability ``2^{−k}``); the ``r``-th tie of a group takes the rest of
    ``U`` from slot ``r`` of ``slots`` ``(groups, S, 2)`` (fresh words: every tie its own), so
    ``U`` is uniform on ``[0, 2^64)`` and the law is exactly the table's. A group with more than
    ``S`` ties (probability ≤ :data:`TIE_OVERFLOW`, :func:`tie_slots`) sends its extra ties to
    the alias: the one departure from the table's law, counted in :func:`sampler_tv`.

    Every draw is first decided as if a tie were a miss (one pass over the words); the ``S``
    slots of each group then write the kept ties' buckets back (a scatter of ``S`` per group,
    not a second pass over every draw).
    """
    k = 32 - table.bits - flags
    packed, halves = (jnp.asarray(x) for x in _split(table, k))
    bucket = word & jnp.uint32((1 << table.bits) - 1)
    u, entry = word >> (32 - k), packed[bucket]
    top, alias = entry >> table.bits, (entry & ((1 << table.bits) - 1)).astype(jnp.int32)
    drawn = jnp.where(u < top, bucket.astype(jnp.int32), alias)
    position, kept = _kept_ties(_tie_masks(u == top), bucket, halves, slots)
    rows = jnp.broadcast_to(jnp.arange(word.shape[0])[:, None], position.shape)
    kept_bucket = jnp.take_along_axis(bucket, position, axis=1).astype(jnp.int32)
    at = jnp.where(kept, position, word.shape[1])  # out of range: not written
    return drawn.at[rows, at].set(kept_bucket, mode="drop")


def _layout(size: int) -> tuple[int, int]:
    """``(groups, G)``: ``size`` draws padded to groups of ``G ≤`` :data:`TIE_GROUP` (a
    multiple of 32)."""
    group = min(TIE_GROUP, 32 * max(1, -(-size // 32)))
    return -(-size // group), group


def _draw_words(key: PRNGKey, size: int, lookups: list[tuple[AliasTable, int]]):
    """One threefry call for a batch: per lookup ``(table, flags)``, one word per draw
    ``(groups, G)`` and its tie slots ``(groups, S, 2)``."""
    groups, group = _layout(size)
    shapes = [(group, tie_slots(group, 32 - t.bits - f)) for t, f in lookups]
    total = sum(groups * (group + 2 * s) for group, s in shapes)
    words, out, at = random_words(key, total), [], 0
    for group, s in shapes:
        main = words[at:at + groups * group].reshape(groups, group)
        at += groups * group
        out.append((main, words[at:at + groups * s * 2].reshape(groups, s, 2)))
        at += groups * s * 2
    return out


def lattice_draws(key: PRNGKey, shape: tuple[int, ...], dtype=None, *,
                  law: str = "gaussian") -> Array:
    """Standard lattice draws ``z = K/R`` (exact in float32): ``K ~ N_ℤ(0, R²)`` or the discrete
    Laplace of scale ``R``, so ``z`` has (nearly) the law of a standard normal or Laplace draw on
    the grid ``ℤ/R``. :func:`lattice_release` turns them into a release.

    One 32-bit word per table lookup (a Gaussian draw: one lookup, its sign a bit of the same
    word; a Laplace draw: three), plus a few words per group for the rare ties (:func:`_lookup`).

    Args:
      key: a PRNG key.
      shape: output shape.
      dtype: float dtype; ``None`` gives JAX's default float.
      law: ``"gaussian"`` or ``"laplace"``.
    """
    dtype = jnp.dtype(dtype or jnp.zeros(0).dtype)
    size = math.prod(shape)
    if law == "gaussian":
        table = gaussian_table()
        ((w, slots),) = _draw_words(key, size, [(table, 1)])
        magnitude = _lookup(table, w, 1, slots)
        sign = (w >> table.bits) & 1
        resolution = GAUSSIAN_RESOLUTION
    elif law == "laplace":
        zero, high, low = laplace_tables()
        (wh, sh), (wl, sl), (wz, sz) = _draw_words(key, size, [(high, 1), (low, 0), (zero, 0)])
        h, lo = _lookup(high, wh, 1, sh), _lookup(low, wl, 0, sl)
        nonzero = _lookup(zero, wz, 0, sz) == 1
        magnitude = jnp.where(nonzero, 1 + LAPLACE_RESOLUTION * h + lo, 0)
        sign = (wh >> high.bits) & 1
        resolution = LAPLACE_RESOLUTION
    else:
        raise ValueError(f"law must be 'gaussian' or 'laplace'; got {law!r}")
    k = jnp.where(sign == 1, magnitude, -magnitude).astype(dtype)
    return (k * (1.0 / resolution)).reshape(-1)[:size].reshape(shape)


def resolution(law: str) -> int:
    """``R`` of ``law``."""
    return GAUSSIAN_RESOLUTION if law == "gaussian" else LAPLACE_RESOLUTION


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def lattice_release(v: Array, scale: Array, z: Array, law: str = "gaussian") -> Array:
    """The released value ``γ(a(v) + zR)``, ``γ = scale/R``, ``a(v) = round(clamp(v, ±Lγ)/γ)``.

    Args:
      v: the value to release (any float array).
      scale: σ (Gaussian) or b (Laplace), broadcastable against ``v``, ``≥ 0`` (``0``: ``v``
        is released as it is, which is not private).
      z: lattice draws from :func:`lattice_draws` of the same ``law``, shaped like ``v``.
      law: ``"gaussian"`` or ``"laplace"``.

    Returns:
      An array like ``v`` on the lattice ``γℤ``: a deterministic function of the integer release,
      finite for every ``v`` (with ``scale > 0``): a NaN coordinate is released as if it were 0,
      ``±inf`` as the clamp ``±Lγ`` — fixed public points, so a non-finite value (which no clip
      lets through) cannot produce a release outside the accountant's support.
    """
    r = resolution(law)
    dtype = jnp.result_type(v)
    gamma = jnp.asarray(scale, dtype) * (1.0 / r)
    noisy = gamma > 0  # a zero scale (a noise-free baseline) releases v itself: no privacy
    step = jnp.where(noisy, gamma, 1.0)
    bound = clamp_bound(dtype) * step
    finite = jnp.where(jnp.isnan(v), 0.0, v)  # NaN: the public point 0; ±inf: the clamp ±Lγ
    a = jnp.round(jnp.clip(finite, -bound, bound) / step)
    return jnp.where(noisy, (a + z * r) * step, v)


@lattice_release.defjvp
def _lattice_release_jvp(law, primals, tangents):
    v, scale, z = primals
    dv, dscale, _ = tangents
    out = lattice_release(v, scale, z, law)
    return out, dv + dscale * z


def lattice_sensitivity(sensitivity, dim: int, scale, dtype, *, law: str,
                        clipped: bool = True):
    """The sensitivity a report declares for a lattice release of ``dim`` coordinates whose
    real-valued sensitivity is ``sensitivity`` (ℓ2 for Gaussian, ℓ1 for Laplace).

    ``Δ(1 + (dim + 4)u) + γ(1 + 2uL)·√dim`` (Gaussian) or ``… ·dim`` (Laplace), ``γ = scale/R``:
    the first factor covers the float error of a norm clip (the computed clipped row has norm at
    most ``C(1 + (d + 4)u)``; ``clipped=False`` drops it), the second the rounding to the lattice
    and the float error of ``v/γ`` (module docstring).
    """
    u = unit_roundoff(dtype)
    gamma = np.asarray(scale, np.float64) / resolution(law)
    per_coordinate = 1.0 + 2.0 * u * clamp_bound(dtype)
    spread = math.sqrt(dim) if law == "gaussian" else float(dim)
    grow = 1.0 + (dim + 4) * u if clipped else 1.0
    return np.asarray(sensitivity, np.float64) * grow + gamma * per_coordinate * spread


CLAMP_WARNING_BELOW = 1.0
"""The magnitude (value units) below which a clamp is worth a warning: iterates of order 1."""


class LatticeClampWarning(UserWarning):
    """Some lattice release clamps values of order 1 (a small or decaying noise scale)."""


def clamp_values(scale, dtype, law: str) -> np.ndarray:
    """``Lγ = L·scale/R``: the magnitude beyond which :func:`lattice_release` releases a value
    clamped (``128σ`` / ``64b`` in float32, ``2³⁵σ`` / ``2³⁴b`` in float64), per scale."""
    return clamp_bound(dtype) * np.asarray(scale, np.float64) / resolution(law)


def clamp_warning(scale, dtype, law: str) -> str:
    """A warning text when some release of the ``(N, K)`` ``scale`` schedule clamps values below
    :data:`CLAMP_WARNING_BELOW`: the first such step and its clamp; ``""`` otherwise. The ε still
    covers what is released, but a run whose values pass the clamp is not the real-valued
    algorithm: a noise scale that decays geometrically reaches it after enough steps."""
    bound = clamp_values(scale, dtype, law)
    low = np.nonzero(np.min(np.atleast_2d(bound), axis=0) < CLAMP_WARNING_BELOW)[0]
    if low.size == 0:
        return ""
    k = int(low[0])
    worst = float(np.min(np.atleast_2d(bound)[:, k]))
    advice = ("use float64 (a clamp 2²⁸ times larger) or sampler='float' (ε idealized)"
              if np.dtype(dtype) == np.float32 else "use sampler='float' (ε idealized)")
    return (f"the lattice sampler releases values beyond ±{worst:.3g} clamped from step {k} on "
            f"({np.dtype(dtype).name}, {law} scale {worst * resolution(law) / clamp_bound(dtype):.3g}"
            f"): iterates larger than that are sent as the clamp, not their value. The ε covers "
            f"what is released, but such a run is not the real-valued algorithm; for utility "
            f"studies {advice}")

