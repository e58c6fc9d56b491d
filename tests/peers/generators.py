"""Boundary-biased FP32 blocks for the live-peer tests (docs/profiles.md). Each
generator returns a (rows, cols) float32 array whose rows are blocks of one
kind; a seed (drawn by Hypothesis) picks the values. The kinds aim at the
places where two implementations of a recipe part ways: the midpoints between
neighbouring element values after scaling (+-2 ulp), amax just above and below
a power of two and the element maximum times one (RCEIL, CEIL, EVEN), the
smallest and largest scales, and zeros."""

import numpy as np

import lowbit

KINDS = ("normal", "ties", "pow2", "tiny", "huge", "zeros")


def _nudge(v: np.ndarray, rng, span: int = 2) -> np.ndarray:
    """v moved by a random number of FP32 ulps in [-span, span] (finite only)."""
    v = np.asarray(v, np.float32)
    steps = rng.integers(-span, span + 1, v.shape).astype(np.int64)
    bits = v.view(np.int32).astype(np.int64)
    mag = (bits & 0x7FFFFFFF) + steps
    mag = np.clip(mag, 0, 0x7F7FFFFF)
    out = (mag | (bits & ~0x7FFFFFFF & 0xFFFFFFFF)).astype(np.uint32).view(np.float32)
    return out


def element_midpoints(element: str) -> np.ndarray:
    """Every positive value of the element format and the midpoints between neighbours."""
    f = lowbit.formats[element]
    codes = np.arange(1 << f.bits, dtype=np.uint32).astype(f.code_dtype)
    v = lowbit.decode(codes, f.name, dtype=np.float64)
    v = np.unique(v[np.isfinite(v) & (v >= 0)])
    return np.concatenate([v, (v[1:] + v[:-1]) / 2])


def blocks(rng, kind: str, rows: int, block: int, element: str, scale_exp_range=(-100, 100)) -> np.ndarray:
    f = lowbit.formats[element]
    emax_value = float(f.max)
    if kind == "normal":
        e = rng.integers(-40, 40, (rows, 1))
        return (rng.standard_normal((rows, block)) * np.exp2(e)).astype(np.float32)
    if kind == "ties":
        mids = element_midpoints(element)
        s = np.exp2(rng.integers(*scale_exp_range, (rows, 1)).astype(np.float64))
        x = rng.choice(mids, (rows, block)) * rng.choice([-1.0, 1.0], (rows, block))
        x[:, 0] = emax_value  # the block's amax: the scale is 2^s exactly for FLOOR
        return _nudge((x * s).astype(np.float32), rng)
    if kind == "pow2":
        top_k = 126 - int(np.ceil(np.log2(emax_value)))  # max_elem * 2^k stays finite
        k = rng.integers(-120, top_k, (rows, 1)).astype(np.float64)
        top = np.where(rng.random((rows, 1)) < 0.5, np.exp2(k), emax_value * np.exp2(k))
        x = (rng.standard_normal((rows, block)) * top / 4).astype(np.float32)
        x[:, :1] = _nudge(top.astype(np.float32), rng, span=4)
        return x
    if kind == "tiny":
        e = rng.integers(-149, -110, (rows, 1))
        return (rng.standard_normal((rows, block)) * np.exp2(e)).astype(np.float32)
    if kind == "huge":
        e = rng.integers(110, 127, (rows, 1))
        with np.errstate(over="ignore"):
            x = (rng.standard_normal((rows, block)) * np.exp2(e)).astype(np.float32)
        return np.where(np.isfinite(x), x, np.float32(3.4e38) * np.sign(x)).astype(np.float32)
    if kind == "zeros":
        x = np.zeros((rows, block), np.float32)
        x[rng.random((rows, block)) < 0.5] = -0.0
        return x
    raise ValueError(kind)


def mixed(seed: int, rows_per_kind: int, block: int, element: str, kinds=KINDS, **kw) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([blocks(rng, k, rows_per_kind, block, element, **kw) for k in kinds])
