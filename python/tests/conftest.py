"""Shared helpers for the lowbit Python tests: boundary-biased inputs.

Every format's interesting inputs are its own codes decoded (each
representable value), their neighbours one FP32 ulp away, midpoints between
neighbours (ties), values just past the largest finite, zeros, Inf and NaN:
the places where a rounding or overflow rule decides.
"""

import numpy as np
import pytest

import lowbit


def f32_bits(a):
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


def boundary_inputs(fmt, seed=0, random=2000):
    f = lowbit.formats[fmt]
    rng = np.random.default_rng(seed)
    parts = [np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0], np.float32)]
    if f.bits <= 16 and f.name not in ("fp32", "fp64"):
        codes = np.arange(1 << f.bits, dtype=f.code_dtype)
        values = lowbit.decode(codes, f.name, dtype=np.float32)
        finite = np.sort(values[np.isfinite(values)])
        parts.append(values)
        bits = f32_bits(finite)
        parts.append(np.nextafter(finite, np.float32(np.inf)))
        parts.append(np.nextafter(finite, np.float32(-np.inf)))
        mids = (finite[:-1].astype(np.float64) + finite[1:].astype(np.float64)) / 2
        parts.append(mids.astype(np.float32))
        parts.append((mids.astype(np.float32).view(np.uint32) + 1).view(np.float32))
        del bits
    if f.kind == "float":
        m = min(f.max, 3e38)
        near = np.array([m, -m, m * 1.0625, m * 2], np.float64)
        parts.append(np.where(np.abs(near) > 3.4e38, np.inf, near).astype(np.float32))
        parts.append(np.array([np.nextafter(np.float32(m), np.float32(np.inf))], np.float32))
    parts.append(rng.standard_normal(random).astype(np.float32) * np.float32(min(f.max, 1e30) / 3))
    parts.append(rng.integers(0, 1 << 32, random, dtype=np.uint64).astype(np.uint32).view(np.float32))
    out = np.concatenate([p.astype(np.float32) for p in parts])
    return out


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
