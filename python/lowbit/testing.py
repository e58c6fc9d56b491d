"""lowbit.testing: check your own kernel's outputs against lowbit's model.

``assert_matches(inputs, outputs, target)`` raises ``AssertionError`` with the
same report that ``lowbit check`` and the C++ gtest assertions of
``lowbit::testing`` print: the first mismatches decoded (input bits and
value, expected and actual code with their values, the distance in codes; for
recipes the block with its amax and scale) and a diagnosis of which known
convention the kernel follows instead (another profile, rounding mode, scale
rule, operation order, packing).

The Hypothesis strategies mirror the C++ generators
(testing/include/lowbit/testing/value_generators.h, block_generators.h):
``values(fmt)`` for single values biased to the boundaries of ``fmt``,
``blocks(recipe)`` and ``matrices(recipe, shape)`` for tensors whose groups
each have one shape (one outlier, all zeros, NaN or Inf inside, tie-aligned,
amax just below a power of two, tiny or huge scale).

>>> import numpy as np, lowbit, lowbit.testing
>>> x = np.array([1.0625, 464.0], np.float32)
>>> report = lowbit.testing.assert_matches(x, lowbit.encode(x, "e4m3", saturate=True), "e4m3", saturate=True)
>>> report.passed, report.checked
(True, 2)
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Optional, Sequence

import numpy as np

from . import _lowbit
from ._arrays import _is_torch
from ._formats import formats, recipes
from ._matmul_check import MatmulReport, assert_matmul_matches, check_matmul  # noqa: F401 (re-exported)

__all__ = ["Report", "check", "assert_matches", "values", "blocks", "matrices", "GROUP_SHAPES"]

try:
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _ml_dtypes = None


@dataclasses.dataclass(frozen=True)
class Report:
    """What lowbit::check found (check/include/lowbit/check/user_outputs.h)."""

    target: str
    kind: str
    passed: bool
    error: str
    checked: int
    mismatches: int
    scale_mismatches: int
    undefined: int
    text: str
    json: str
    diagnosis: str
    candidates: list

    def matching_conventions(self) -> list:
        """Names of the conventions the kernel matches on every output."""
        return [c["name"] for c in self.candidates if c["full_match"]]


_INPUT_TYPES = {np.dtype(np.float64): "fp64", np.dtype(np.float32): "fp32", np.dtype(np.float16): "fp16"}


def _to_numpy(a):
    if _is_torch(a):
        import torch
        t = a.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16), "bf16"
        if t.dtype.is_floating_point and t.element_size() == 1:  # torch's float8 types: their codes
            return t.view(torch.uint8).numpy(), None
        return t.numpy(), None
    a = np.asarray(a)
    if _ml_dtypes is not None and a.dtype == np.dtype(_ml_dtypes.bfloat16):
        return a.view(np.uint16), "bf16"
    if a.dtype.kind == "V" or (a.dtype.type.__module__.split(".")[0] == "ml_dtypes"):
        return a.view(np.uint8 if a.dtype.itemsize == 1 else np.uint16), None  # ml_dtypes codes
    return a, None


def _inputs(x, input_type: Optional[str]):
    a, kind = _to_numpy(x)
    if input_type is None:
        input_type = kind or _INPUT_TYPES.get(a.dtype)
        if input_type is None:
            raise TypeError(f"inputs must be float64, float32, float16 or bfloat16, got {a.dtype}"
                            " (pass input_type= for raw bits)")
    return np.ascontiguousarray(a), input_type


def _codes(y):
    if y is None:
        return None
    a, _ = _to_numpy(y)
    if a.dtype.kind == "i":
        a = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    if a.dtype.kind != "u":
        raise TypeError(f"outputs must be codes (unsigned integers, ml_dtypes or torch float8 arrays), got {a.dtype}")
    return np.ascontiguousarray(a)


def _given_option(name: str, value):
    """None: not given. An empty string, or an empty array where data is
    compared, is an error: a check must not pass because a buffer it was
    handed held nothing (docs/bad-input.md "Empty values")."""
    if value is None:
        return None
    if isinstance(value, str):
        if value == "":
            raise ValueError(f"{name} is an empty string; leave it out (None) for the default")
        return value
    if np.size(_to_numpy(value)[0]) == 0:
        raise ValueError(f"{name} is empty: the check compares it, so give the kernel's {name} "
                         "(or leave it out to skip them)")
    return value


def check(inputs, outputs, target: str, *, profile: Optional[str] = None, rounding: Optional[str] = None,
          saturate: bool = False, layout: Optional[str] = None, shape: Optional[Sequence[int]] = None,
          scales=None, scale_codes=None, zero_points=None, tensor_scale: Optional[float] = None,
          packing: Optional[str] = None, input_type: Optional[str] = None, max_mismatches: int = 8,
          diagnose: bool = True) -> Report:
    """Compare a kernel's outputs with the model; return the Report.

    target: a format with options or profile (``"e4m3"``, ``"e4m3:nvidia"``)
    or a recipe (``"nvfp4:te"``, ``"e4m3:te/row"``, ``"int4:ao-sym/g128"``).
    inputs: what the kernel read (float64/32/16, bfloat16 from ml_dtypes or
    torch). outputs: the codes it wrote (uint8/uint16, an ml_dtypes or torch
    float8 array); for recipes also ``scales`` (FP32, scaled recipes),
    ``scale_codes`` (E8M0 / UE4M3 bytes), ``zero_points``, ``tensor_scale``.
    Recipes read ``inputs`` as [rows, cols] (``shape``, else the array's
    own, 1-D meaning one row). Packed 4-bit codes: ``packing`` =
    "nibbles-low-first" or "nibbles-high-first". An option left out is
    None; an empty string or an empty array for one is a ValueError, never
    "not given".
    """
    for name, value in (("profile", profile), ("rounding", rounding), ("layout", layout), ("packing", packing),
                        ("input_type", input_type), ("scales", scales), ("scale_codes", scale_codes),
                        ("zero_points", zero_points)):
        _given_option(name, value)
    x, itype = _inputs(inputs, input_type)
    if shape is None:
        shape = x.shape if x.ndim >= 1 else (1,)
        rows, cols = (int(np.prod(shape[:-1])) if len(shape) > 1 else 1), int(shape[-1]) if len(shape) else 1
    else:
        rows, cols = (int(shape[0]), int(shape[1])) if len(shape) == 2 else (1, int(shape[0]))
    codes = _codes(outputs)
    code_bytes = codes.dtype.itemsize if codes is not None else 1
    count = x.size
    pk = packing or "one-per-byte"
    f32 = lambda a: None if a is None else np.ascontiguousarray(_to_numpy(a)[0], dtype=np.float32)
    i32 = lambda a: None if a is None else np.ascontiguousarray(_to_numpy(a)[0], dtype=np.int32)
    u8 = lambda a: None if a is None else np.ascontiguousarray(_codes(a), dtype=np.uint8)
    d = _lowbit.check_outputs(target, profile or "", rounding or "", saturate, layout or "", x.reshape(-1), itype,
                              rows, cols,
                              None if codes is None else codes.reshape(-1), code_bytes, count, pk,
                              u8(scale_codes), f32(scales), i32(zero_points),
                              None if tensor_scale is None else float(tensor_scale), max_mismatches, diagnose)
    return Report(**d)


def assert_matches(inputs, outputs, target: str, **options) -> Report:
    """check(), raising AssertionError with the report's text unless it passed.

    A check that compared nothing (empty arrays) fails too: an assertion whose
    body never ran must not pass.
    """
    report = check(inputs, outputs, target, **options)
    if not report.passed:
        if not report.error and report.mismatches == 0 and report.checked == 0:
            raise AssertionError(f"{report.target}: nothing was compared\n{report.text}")
        raise AssertionError(report.text)
    return report


# ---- Hypothesis strategies ------------------------------------------------------

GROUP_SHAPES = ("random", "one outlier", "all zeros", "NaN inside", "Inf inside", "tie-aligned",
                "amax just below a power of two", "tiny scale", "huge scale")


@functools.lru_cache(maxsize=None)
def _grid(fmt: str) -> tuple:
    """The format's finite non-negative values, increasing (formats up to 16 bits)."""
    f = formats[fmt]
    if f.bits > 16:
        return (0.0, f.smallest_subnormal or 0.0, f.smallest_normal or 1.0, 1.0, f.max)
    codes = np.arange(1 << f.bits, dtype=f.code_dtype)
    v = np.asarray(_lowbit_decode(codes, f.name), np.float64)
    v = v[np.isfinite(v) & ~np.signbit(v)]
    return tuple(float(t) for t in np.unique(v))


def _lowbit_decode(codes, name):
    from ._convert import decode
    return decode(codes, name, dtype=np.float64)


def _st():
    try:
        import hypothesis.strategies as st
    except ImportError as e:  # pragma: no cover
        raise ImportError("lowbit.testing's strategies need Hypothesis (pip install hypothesis)") from e
    return st


def _f32(x: float) -> np.float32:
    with np.errstate(over="ignore"):
        return np.float32(x)


def _from_bits(b: int) -> np.float32:
    return np.array([b & 0xFFFFFFFF], np.uint32).view(np.float32)[0]


def values(fmt: str):
    """FP32 values (numpy.float32) for encoding into ``fmt``, biased like the C++
    BoundaryF32Bits: ties between adjacent values of ``fmt`` (exact and one
    FP32 ulp off), its values, binade edges (so 2^k one ulp down: an amax
    just below a power of two), max, the overflow tie and past it, half the
    smallest subnormal, half-integers, 1.5 * 2^k, and ±0, ±Inf, NaN
    payloads, FP32 subnormals and any bits."""
    st = _st()
    f = formats[fmt]
    grid = _grid(f.name)
    mx = f.max
    quantum = 1.0 if f.kind != "float" else math.ldexp(1.0, math.frexp(mx)[1] - 1 - f.mantissa_bits)
    beyond = mx + quantum
    uppers = grid[1:] + (beyond,)
    smallest = grid[0] if grid[0] != 0 or len(grid) < 2 else grid[1]
    normal = f.smallest_normal or 1.0
    top = math.frexp(beyond)[1] + 1
    bottom = (math.frexp(f.smallest_subnormal or normal)[1] - 3) if f.kind == "float" else -3
    anchors = st.one_of(
        st.integers(0, len(grid) - 1).map(lambda i: (grid[i] + uppers[i]) / 2),  # ties
        st.sampled_from(grid),                                                    # values
        st.integers(bottom, top).map(lambda e: math.ldexp(1.0, e)),               # binade edges
        st.sampled_from([mx, mx + quantum / 2, beyond, 2 * beyond, mx * 1.5, 1e30]),
        st.sampled_from([smallest / 2, smallest, normal, normal / 2, smallest / 4, (smallest + normal) / 2]),
        st.integers(-20, 300).map(lambda k: k / 2.0),
        st.integers(-140, 130).map(lambda e: math.ldexp(1.5, e)),
    )

    def nudge(a, step, negative):
        x = _f32(a)
        if step:
            x = np.nextafter(x, np.float32(np.inf if step > 0 else 0.0))
        return np.float32(-x) if negative else x

    special = st.one_of(
        st.sampled_from([0.0, -0.0, math.inf, -math.inf]).map(np.float32),
        st.tuples(st.booleans(), st.integers(1, (1 << 23) - 1)).map(
            lambda p: _from_bits((0xFF800000 if p[0] else 0x7F800000) | p[1])),   # NaN payloads
        st.tuples(st.booleans(), st.integers(1, (1 << 23) - 1)).map(
            lambda p: _from_bits((0x80000000 if p[0] else 0) | p[1])),            # FP32 subnormals
        st.integers(0, 0xFFFFFFFF).map(_from_bits),
    )
    return st.one_of(st.builds(nudge, anchors, st.sampled_from([0, -1, 1]), st.booleans()), special)


def _element_grid(r) -> tuple:
    g = _grid(r.element)
    if formats[r.element].kind != "float":
        implied = -6 if r.format == "mxint8" else 0
        hi = 127 if r.format == "mxint8" else formats[r.element].max
        g = tuple(math.ldexp(v, implied) for v in g if 0 <= v <= hi)
    return g


def _group(r, shape: str, n: int):
    """A strategy for n float32 values of one group shape."""
    st = _st()
    grid = _element_grid(r)
    k_base, k_tiny, k_huge = st.integers(-12, 12), st.integers(-149, -121), st.integers(110, 127)
    words = st.lists(st.integers(0, (1 << 64) - 1), min_size=n, max_size=n)

    def near(k, w):
        e = min(max(k - ((w >> 32) % 4) + 127, 1), 254)
        return _from_bits((w & 0x807FFFFF) | (e << 23))

    def build(k, special, negative, payload, ws):
        special %= n
        x = np.zeros(n, np.float32)
        if shape == "all zeros":
            return np.array([-0.0 if w & 1 else 0.0 for w in ws], np.float32)
        if shape == "tie-aligned":
            for i, w in enumerate(ws):
                j = w % (len(grid) - 1)
                x[i] = _f32(math.ldexp((grid[j] + grid[j + 1]) / 2, k)) * (-1 if (w >> 40) & 1 else 1)
            x[special] = _f32(math.ldexp(grid[-1], k)) * (-1 if negative else 1)
            return x
        if shape == "tiny scale":
            return np.array([_from_bits(((w % 0x03800000) >> (-120 - k)) | (0x80000000 if (w >> 40) & 1 else 0))
                             for w in ws], np.float32)
        x = np.array([near(k, w) for w in ws], np.float32)
        sign = -1.0 if negative else 1.0
        if shape == "one outlier":
            x[special] = _f32(sign * min(math.ldexp(payload % 56 + 8, k + 6 + payload % 18 - 3), 3.4028234663852886e38))
        elif shape == "NaN inside":
            x[special] = _from_bits((0xFF800000 if negative else 0x7F800000) | payload)
        elif shape == "Inf inside":
            x[special] = np.float32(sign * math.inf)
        elif shape == "amax just below a power of two":
            x[special] = np.nextafter(np.float32(math.ldexp(1.0, k + 1)), np.float32(0)) * np.float32(sign)
        elif shape == "huge scale":
            x[special] = np.float32(sign) * np.float32([3.4028234663852886e38, 1.7014117331926443e38,
                                                        3.4028234663852886e38][payload % 3])
        return x

    k = k_tiny if shape == "tiny scale" else k_huge if shape == "huge scale" else k_base
    return st.builds(build, k, st.integers(0, max(n - 1, 0)), st.booleans(), st.integers(1, (1 << 23) - 1), words)


def _recipe(recipe: str):
    return recipes[recipe]


def blocks(recipe: str, shapes: Sequence[str] = GROUP_SHAPES):
    """One block (group) of float32 values for ``recipe`` of one of ``shapes``:
    the recipe's block size (MX 32, NVFP4 16), else 1..64 values. Hypothesis
    shrinks toward an earlier shape only when that shape still fails."""
    st = _st()
    r = _recipe(recipe)
    sizes = st.just(r.block_size) if r.block_size > 0 else st.integers(1, 64)
    return sizes.flatmap(lambda n: st.one_of([_group(r, s, n) for s in shapes]))


def _groups_of(layout: str, rows: int, cols: int):
    """Flat index arrays of each group of a layout (recipe/tensor.h's order)."""
    idx = np.arange(rows * cols).reshape(rows, cols)
    if layout.startswith("b"):
        b = int(layout[1:])
        flat = idx.reshape(-1)
        return [flat[i:i + b] for i in range(0, flat.size, b)]
    if layout in ("row", "token", "channel"):
        return [idx[i] for i in range(rows)]
    if layout.startswith("g") or layout.startswith("group:"):
        g = int(layout[1:] if layout.startswith("g") else layout.split(":")[1])
        return [idx[i, j:j + g] for i in range(rows) for j in range(0, cols, g)]
    if layout.startswith("tile:") or layout.startswith("block:"):
        tr, tg = (int(t) for t in layout.split(":")[1].split("x"))
        return [idx[i:i + tr, j:j + tg].reshape(-1) for i in range(0, rows, tr) for j in range(0, cols, tg)]
    return [idx.reshape(-1)]


def matrices(recipe: str, shape: Optional[Sequence[int]] = None, *, layout: Optional[str] = None,
             shapes: Sequence[str] = GROUP_SHAPES):
    """[rows, cols] float32 arrays for ``recipe`` (its default layout unless
    ``layout``), each group built with one of ``shapes``. Without ``shape``,
    shapes the layout accepts: 1-D blocks with a partial last block half the
    time, whole groups and tiles, 1..64 columns per row or tensor."""
    st = _st()
    r = _recipe(recipe)
    lay = layout or r.layout
    if shape is not None:
        shape_st = st.just((int(shape[0]), int(shape[1])))
    elif lay.startswith("b"):
        b = int(lay[1:])
        shape_st = st.one_of(st.tuples(st.integers(1, 4), st.integers(1, 3).map(lambda n: n * b)),
                             st.tuples(st.just(1), st.tuples(st.integers(1, 3), st.integers(1, b - 1)).map(
                                 lambda p: p[0] * b + p[1])))
    elif lay.startswith("g") or lay.startswith("group:"):
        g = int(lay[1:] if lay.startswith("g") else lay.split(":")[1])
        shape_st = st.tuples(st.integers(1, 4), st.integers(1, 3).map(lambda n: n * g))
    elif lay.startswith("tile:") or lay.startswith("block:"):
        tr, tg = (int(t) for t in lay.split(":")[1].split("x"))
        shape_st = st.tuples(st.integers(1, 2).map(lambda n: n * tr), st.integers(1, 2).map(lambda n: n * tg))
    else:
        shape_st = st.tuples(st.integers(1, 4), st.integers(1, 64))

    def fill(rc):
        rows, cols = rc
        groups = _groups_of(lay, rows, cols)
        parts = [st.one_of([_group(r, s, len(g)) for s in shapes]) for g in groups]

        def assemble(vals):
            x = np.zeros(rows * cols, np.float32)
            for g, v in zip(groups, vals):
                x[g] = v
            return x.reshape(rows, cols)
        return st.tuples(*parts).map(assemble)
    return shape_st.flatmap(fill)
