"""Boundary-biased operand codes for one tensor-core output: rows of K
multiplicand codes for A and B and one accumulator code C per case, drawn
field by field (sign, exponent field, mantissa) from the formats' widths in
lowbit's format table, so that every family reaches the places where two
models of the fused dot product part ways (docs/tensor-cores.md "One fused
step"): the alignment to the largest exponent, the truncation below it,
cancellation, carries out of the top bit, subnormals, NaN / Inf, overflow,
C far above or below the products, and signed zeros."""

import numpy as np

import lowbit

FAMILIES = ("random-codes", "exponent-window", "cancellation", "carries", "subnormals", "specials",
            "signed-zeros", "overflow", "c-far")


class FloatFields:
    """The field widths of a binary float format (TF32 operands: FP32 codes)."""

    def __init__(self, name: str):
        f = lowbit.formats[name]
        self.bits, self.e_bits, self.m_bits = f.bits, f.exponent_bits, f.mantissa_bits
        self.max_field = (1 << self.e_bits) - 1
        self.nan_codes = np.array(f.nan_codes, np.uint64)
        self.inf_codes = np.array(f.inf_codes, np.uint64)
        if f.has_nan and self.nan_codes.size == 0:  # FP32: the table does not list its 2^24 NaNs
            inf = (1 << self.e_bits) - 1 << self.m_bits
            sign = 1 << (self.bits - 1)
            self.inf_codes = np.array([inf, inf | sign], np.uint64)
            self.nan_codes = np.array([inf | 1 << (self.m_bits - 1), inf | 1, inf | sign | (1 << self.m_bits) - 1],
                                      np.uint64)
        self.max_code = f.max_code  # the largest finite positive code

    def pack(self, sign, field, mantissa) -> np.ndarray:
        return ((sign.astype(np.uint64) << np.uint64(self.bits - 1))
                | (field.astype(np.uint64) << np.uint64(self.m_bits))
                | mantissa.astype(np.uint64))

    def finite(self, rng, shape, low, high) -> np.ndarray:
        """Finite codes with exponent fields in [low, high) (clipped to the finite ones)."""
        sign = rng.integers(0, 2, shape)
        field = np.clip(rng.integers(low, np.maximum(high, np.asarray(low) + 1), shape), 0, self.max_field)
        mantissa = rng.integers(0, 1 << self.m_bits, shape, dtype=np.uint64)
        codes = self.pack(sign, field, mantissa)
        magnitude = codes & np.uint64((1 << (self.bits - 1)) - 1)
        too_big = magnitude > np.uint64(self.max_code)  # E4M3's top field is finite but for its NaN
        codes[too_big] = (codes[too_big] & np.uint64(1 << (self.bits - 1))) | np.uint64(self.max_code)
        return codes


def draw(rng, family: str, count: int, k: int, a_name: str, b_name: str, c_name: str):
    """(a, b, c) codes: a and b [count, k], c [count], as uint64."""
    fa, fb, fc = FloatFields(a_name), FloatFields(b_name), FloatFields(c_name)

    def window(f, shape, width=None):
        width = width if width is not None else int(rng.choice([1, 2, 3, 5, 8, f.max_field + 1]))
        low = rng.integers(0, max(f.max_field - width, 0) + 1, shape[:-1] + (1,))
        return f.finite(rng, shape, low, low + width)

    shape = (count, k)
    if family == "random-codes":
        a = rng.integers(0, 1 << fa.bits, shape, dtype=np.uint64)
        b = rng.integers(0, 1 << fb.bits, shape, dtype=np.uint64)
        c = rng.integers(0, 1 << fc.bits, count, dtype=np.uint64)
    elif family == "exponent-window":
        a, b = window(fa, shape), window(fb, shape)
        c = window(fc, (count, 1))[:, 0]
    elif family == "cancellation":
        a, b = window(fa, shape, 3), window(fb, shape, 3)
        half = k // 2
        a[:, half:2 * half] = a[:, :half] ^ np.uint64(1 << (fa.bits - 1))  # the negated products
        b[:, half:2 * half] = b[:, :half]
        # and one last bit of difference in a few of them
        flip = rng.random((count, half)) < 0.2
        a[:, half:2 * half] ^= flip.astype(np.uint64)
        c = window(fc, (count, 1), 3)[:, 0]
    elif family == "carries":
        field_a = rng.integers(1, fa.max_field, (count, 1)) * np.ones(shape, np.int64)
        field_b = rng.integers(1, fb.max_field, (count, 1)) * np.ones(shape, np.int64)
        sign = rng.integers(0, 2, (count, 1)) * np.ones(shape, np.int64)
        a = fa.pack(sign, field_a, np.full(shape, (1 << fa.m_bits) - 1, np.uint64))
        b = fb.pack(np.zeros(shape, np.int64), field_b, np.full(shape, (1 << fb.m_bits) - 1, np.uint64))
        a = np.minimum(a & np.uint64((1 << (fa.bits - 1)) - 1), np.uint64(fa.max_code)) | (a & np.uint64(1 << (fa.bits - 1)))
        b = np.minimum(b, np.uint64(fb.max_code))
        c = window(fc, (count, 1), 2)[:, 0]
    elif family == "subnormals":
        a, b = fa.finite(rng, shape, 0, 2), fb.finite(rng, shape, 0, 2)
        c = fc.finite(rng, count, 0, 2)
    elif family == "specials":
        a, b = window(fa, shape), window(fb, shape)
        c = window(fc, (count, 1))[:, 0]
        for codes, f in ((a, fa), (b, fb)):
            pool = np.concatenate([f.nan_codes, f.inf_codes, np.array([0, 1 << (f.bits - 1), f.max_code,
                                                                        f.max_code | (1 << (f.bits - 1)), 1],
                                                                       np.uint64)])
            mask = rng.random(shape) < 0.05
            codes[mask] = rng.choice(pool, int(mask.sum()))
        pool_c = np.concatenate([fc.nan_codes[:1], fc.inf_codes, np.array([0, 1 << (fc.bits - 1)], np.uint64)])
        mask = rng.random(count) < 0.2
        c[mask] = rng.choice(pool_c, int(mask.sum()))
    elif family == "signed-zeros":
        a, b = window(fa, shape, 2), window(fb, shape, 2)
        for codes, f in ((a, fa), (b, fb)):
            mask = rng.random(shape) < 0.7
            codes[mask] = rng.integers(0, 2, int(mask.sum())).astype(np.uint64) << np.uint64(f.bits - 1)
        c = rng.integers(0, 2, count).astype(np.uint64) << np.uint64(fc.bits - 1)
        # exact cancellation to zero in a quarter of the cases
        z = rng.random(count) < 0.25
        half = k // 2
        a[z, half:2 * half] = a[z, :half] ^ np.uint64(1 << (fa.bits - 1))
        b[z, half:2 * half] = b[z, :half]
    elif family == "overflow":
        a = fa.finite(rng, shape, fa.max_field - 2, fa.max_field + 1)
        b = fb.finite(rng, shape, fb.max_field - 2, fb.max_field + 1)
        c = fc.finite(rng, count, fc.max_field - 3, fc.max_field + 1)
    elif family == "c-far":
        a, b = window(fa, shape), window(fb, shape)
        c = fc.finite(rng, count, 0, fc.max_field + 1)  # every exponent of C: far above, far below, between
    else:
        raise ValueError(f"unknown family {family!r}")
    return a, b, c
