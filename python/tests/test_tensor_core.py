"""lowbit.mma / mma_dot / mma_explain / matmul_model on host arrays.

Every expected value is a literal worked out by hand from the fused-dot rules
of formats/spec/include/lowbit/formats/tensor_core.h (align to the largest
exponent, truncate to F fraction bits below it, add exactly, round once;
docs/tensor-cores.md "One fused step") and the schedule rules of
accumulation_schedule.h: exact small-integer sums, sums where truncation
drops bits that an IEEE sum would keep, FP8's 14 kept significant bits, the
NaN the datapath writes, +0 for a zero sum, INT32 wrap-around, FP16 ties to
even, promotion, split-K orders and the epilogue. Then every bad input,
each with the error that names it."""

import ml_dtypes
import numpy as np
import pytest

import lowbit

BF16 = ml_dtypes.bfloat16
E4M3 = ml_dtypes.float8_e4m3fn
E5M2 = ml_dtypes.float8_e5m2

MMA_BF16 = "mma.m16n8k16.f32.bf16.bf16"
MMA_F16_F16 = "mma.m16n8k16.f16.f16.f16"
MMA_TF32 = "mma.m16n8k8.f32.tf32.tf32"
MMA_S8 = "mma.m16n8k32.s32.s8.s8"
MMA_FP8 = "mma.m16n8k32.f32.e4m3.e4m3"
WGMMA_FP8 = "wgmma.m64nNk32.f32.e4m3.e4m3"
WGMMA_BF16 = "wgmma.m64nNk16.f32.bf16.bf16"


def bits(a) -> np.ndarray:
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def row(values, k, dtype):
    """A row of k values: `values` first, zeros after."""
    out = np.zeros(k, dtype)
    out[:len(values)] = np.array(values, np.float64).astype(dtype)
    return out


def dot(a, b, c=None, instruction=MMA_BF16):
    """One output through mma_dot, as a Python scalar's array."""
    return lowbit.mma_dot(a[None], b[None], None if c is None else np.asarray(c)[None], instruction=instruction)[0]


# ---- the instruction table --------------------------------------------------------

def test_instruction_table_names_and_shapes():
    table = lowbit.tensor_core_instructions()
    assert len(table) == 25
    i = table[WGMMA_FP8]
    assert (i.kind, i.m, i.k, i.a_format, i.b_format, i.accumulator) == ("wgmma", 64, 32, "e4m3", "e4m3", "fp32")
    assert i.columns == tuple(range(8, 257, 8))
    j = table[MMA_BF16]
    assert (j.kind, j.m, j.n, j.k, j.columns) == ("mma.sync", 16, 8, 16, (8,))
    assert table[MMA_S8].accumulator == "int32"
    assert table[MMA_TF32].a_format == "fp32" and table[MMA_TF32].a_ignored_low_bits == 13


# ---- one output, values derived by hand ----------------------------------------------

def test_exact_small_integer_products_with_c():
    # 1*2 + 2*2 + ... + 16*2 = 272, all exact in F = 25; C = 0.5 joins exactly.
    a = row(range(1, 17), 16, BF16)
    b = row([2] * 16, 16, BF16)
    d = dot(a, b, np.float32(0.5))
    assert d.dtype == np.float32 and bits(d) == 0x43884000  # 272.5 = (1 + 33/512) * 2^8


def test_truncation_drops_bits_an_ieee_sum_keeps():
    # 1*1 and fifteen products of 1.5*2^-26: e_max = 0, the grid is 2^-25,
    # each small product (0.75 of a grid unit) truncates to 0, so D = 1.0.
    # The exact sum 1 + 45*2^-27 rounds in FP32 to 1 + 3*2^-23 (0x3F800003).
    a = row([1.0] + [1.5 * 2.0 ** -26] * 15, 16, BF16)
    b = row([1.0] * 16, 16, BF16)
    assert bits(dot(a, b)) == 0x3F800000
    exact = np.float32(sum(float(x) * float(y) for x, y in zip(a, b)))
    assert bits(exact) == 0x3F800003
    e = lowbit.mma_explain(a, b, instruction=MMA_BF16)
    step = e["steps"][0]
    assert (step["max_exponent"], step["unit_exponent"]) == (0, -25)
    assert [t["aligned"] for t in step["terms"]] == [2 ** 25] + [0] * 15 + [0]
    assert [t["truncated"] for t in step["terms"]] == [False] + [True] * 15 + [False]
    assert step["terms"][-1]["k"] is None and step["sum"] == 2 ** 25 and e["value"] == 1.0


def test_fp8_keeps_14_significant_bits():
    # wgmma FP8: 31 products 1*1 and one 2^-6*2^-6 = 2^-12. F = 13: the grid
    # is 2^-13, so all are exact; the sum 31 + 2^-12 needs 17 bits and step 6
    # keeps 14 (truncating): 31.0. FP32 itself would keep 31 + 2^-12.
    a = row([1.0] * 31 + [2.0 ** -6], 32, E4M3)
    b = row([1.0] * 31 + [2.0 ** -6], 32, E4M3)
    assert bits(dot(a, b, instruction=WGMMA_FP8)) == 0x41F80000  # 31.0
    # 31 + 2^-6 (one product 2^-6 * 1) needs 11 bits: kept.
    assert dot(a, row([1.0] * 32, 32, E4M3), instruction=WGMMA_FP8) == np.float32(31.015625)
    assert bits(np.float32(31 + 2.0 ** -12)) == 0x41F80080
    # 1*1 + 2^-7*2^-7: 2^-14 is half a unit of the 2^-13 grid: truncated away.
    a = row([1.0, 2.0 ** -7], 32, E4M3)
    b = row([1.0, 2.0 ** -7], 32, E4M3)
    e = lowbit.mma_explain(a, b, instruction=WGMMA_FP8)
    assert e["value"] == 1.0 and e["steps"][0]["unit_exponent"] == -13
    assert e["steps"][0]["terms"][1]["truncated"] is True and e["steps"][0]["terms"][1]["aligned"] == 0


def test_fp8_fp32_outputs_have_ten_zero_low_bits():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 256, (4000, 32), dtype=np.uint8)
    codes[(codes & 0x7F) == 0x7F] = 0x38  # no NaN operands: their output is the NaN code
    c = rng.standard_normal(4000).astype(np.float32)
    d = lowbit.mma_dot(codes.view(E4M3), codes[::-1].copy().view(E4M3), c, instruction=WGMMA_FP8)
    finite = np.isfinite(d)
    assert finite.sum() > 3000
    assert np.all(bits(d[finite]) & 0x3FF == 0)


def test_nan_is_0x7fffffff_and_fp16_nan_0x7fff():
    a = row([1.0, 2.0], 32, E4M3)
    a_codes = a.view(np.uint8).copy()
    a_codes[5] = 0x7F  # E4M3 NaN
    b = row([1.0] * 32, 32, E4M3)
    assert bits(dot(a_codes.view(E4M3), b, instruction=WGMMA_FP8)) == 0x7FFFFFFF
    # 0 * Inf (BF16 has Inf) and Inf - Inf are NaN too.
    a = row([0.0, 1.0], 16, BF16)
    b = row([np.inf, 1.0], 16, BF16)
    assert bits(dot(a, b)) == 0x7FFFFFFF
    a = row([np.inf, np.inf], 16, BF16)
    b = row([1.0, -1.0], 16, BF16)
    assert bits(dot(a, b)) == 0x7FFFFFFF
    a = row([np.inf], 16, np.float16)
    b = row([0.0], 16, np.float16)
    assert bits(dot(a, b, np.float16(1), instruction=MMA_F16_F16)) == 0x7FFF
    # One infinity of one sign is that infinity.
    assert bits(dot(row([np.inf], 16, BF16), row([-2.0], 16, BF16))) == 0xFF800000


def test_zero_sum_is_positive_zero():
    a = row([1.0, -1.0], 16, BF16)
    b = row([3.0, 3.0], 16, BF16)
    assert bits(dot(a, b, np.float32(-0.0))) == 0
    # -0 products and C = -0: IEEE would give -0, the datapath +0.
    a = row([-0.0] * 16, 16, BF16)
    b = row([1.0] * 16, 16, BF16)
    assert bits(dot(a, b, np.float32(-0.0))) == 0


def test_int8_sums_are_exact_and_wrap():
    a = row([-128] * 32, 32, np.int8)
    b = row([-128] * 32, 32, np.int8)
    # 32 * 16384 = 524288; 2^31 - 1 + 524288 wraps to -2146959361.
    assert dot(a, b, np.int32(2 ** 31 - 1), instruction=MMA_S8) == -2146959361
    a = row([3, -7, 127], 32, np.int8)
    b = row([5, 11, -1], 32, np.int8)
    d = dot(a, b, np.int32(1000), instruction=MMA_S8)
    assert d.dtype == np.int32 and d == 15 - 77 - 127 + 1000
    e = lowbit.mma_explain(a, b, np.int32(1000), instruction=MMA_S8)
    assert [t["aligned"] for t in e["steps"][0]["terms"][:3]] == [15, -77, -127]
    assert e["steps"][0]["terms"][-1] == {"k": None, "aligned": 1000} and e["value"] == 811


def test_fp16_accumulator_rounds_to_nearest_even():
    # 2048 + 1 = 2049 is a tie between 2048 and 2050: even is 2048;
    # 2048 + 3 = 2051 a tie between 2050 and 2052: even is 2052.
    a = row([2048.0, 1.0], 16, np.float16)
    b = row([1.0, 1.0], 16, np.float16)
    assert dot(a, b, instruction=MMA_F16_F16) == np.float16(2048)
    a = row([2048.0, 3.0], 16, np.float16)
    d = dot(a, b, instruction=MMA_F16_F16)
    assert d.dtype == np.float16 and d == np.float16(2052)


def test_tf32_reads_the_top_19_bits():
    a = row([1.0 + 2.0 ** -20, 1.0 + 2.0 ** -10], 8, np.float32)
    b = row([1.0, 1.0], 8, np.float32)
    # 1 (the 2^-20 bit is not read) + 1 + 2^-10.
    assert bits(dot(a, b, instruction=MMA_TF32)) == bits(np.float32(2.0 + 2.0 ** -10))


def test_fp8_mma_sync_adds_c_after_its_steps_rounding_to_nearest():
    # On sm_90 mma.sync FP8 runs two FP16 steps from +0 and adds C with one
    # FADD: 3 + 2^24 is a tie between 2^24 + 2 and 2^24 + 4: even is + 4.
    # (C inside the fused step would truncate to 2^24 + 2.)
    a = row([1.0, 1.0], 32, E4M3)
    b = row([1.0, 2.0], 32, E4M3)
    assert dot(a, b, np.float32(2.0 ** 24), instruction=MMA_FP8) == np.float32(2.0 ** 24 + 4)
    e = lowbit.mma_explain(a, b, np.float32(2.0 ** 24), instruction=MMA_FP8)
    assert e["c_added_after_steps"] is True and len(e["steps"]) == 2
    # k 0 and 1 (k mod 4 in {0, 1}) are the first step's first two products.
    assert [t["k"] for t in e["steps"][0]["terms"][:3]] == [0, 1, 4]
    assert e["steps_result"] == bits(np.float32(3.0)) and e["value"] == 2.0 ** 24 + 4


# ---- whole tiles -------------------------------------------------------------------

def test_mma_tile_is_a_matrix_product():
    rng = np.random.default_rng(2)
    a = rng.integers(-4, 5, (64, 32)).astype(E4M3)
    b = rng.integers(-4, 5, (32, 16)).astype(E4M3)
    c = rng.integers(-100, 100, (64, 16)).astype(np.float32)
    d = lowbit.mma(a, b, c, instruction=WGMMA_FP8)
    # Small integers: every sum is exact (|sum| < 2^10 in 14 bits).
    want = a.astype(np.float64) @ b.astype(np.float64) + c
    assert d.dtype == np.float32 and d.shape == (64, 16) and np.array_equal(d, want)
    # B as n x k gives the same; a batch of tiles is tile by tile.
    assert np.array_equal(lowbit.mma(a, np.ascontiguousarray(b.T), c, instruction=WGMMA_FP8, b_layout="nk"), d)
    batch = lowbit.mma(np.stack([a, a[::-1]]), np.stack([b, b]), np.stack([c, c]), instruction=WGMMA_FP8)
    assert np.array_equal(batch[0], d)
    assert np.array_equal(batch[1], lowbit.mma(np.ascontiguousarray(a[::-1]), b, c, instruction=WGMMA_FP8))


def test_mma_c_none_is_positive_zero_and_codes_with_their_format():
    a = np.zeros((16, 16), BF16)
    b = np.zeros((16, 8), BF16)
    d = lowbit.mma(a, b, instruction=MMA_BF16)
    assert d.shape == (16, 8) and np.all(bits(d) == 0)
    # Raw codes with their format named: 0x3F80 is BF16 1.0, 0x4000 is 2.0.
    a_codes = np.zeros((16, 16), np.uint16)
    a_codes[0, 0] = 0x3F80
    b_codes = np.zeros((16, 8), np.uint16)
    b_codes[0, 0] = 0x4000
    d = lowbit.mma(a_codes, b_codes, instruction=MMA_BF16, a_format="bf16", b_format="bfloat16")
    assert d[0, 0] == 2.0 and np.count_nonzero(d) == 1


# ---- schedules ------------------------------------------------------------------------

def fp8_promotion_case():
    # Chunk 0: 32 products 16 * 32 = 2^14. Chunk 1: 1 * 1. Without promotion
    # the FP8 chain keeps 14 bits: 2^14 + 1 -> 2^14 (the 1 is below the
    # 2^(14-13) grid); promoted into FP32 every 32: 16385.
    x = row([16.0] * 32 + [1.0], 64, E4M3)[None]
    w = row([32.0] * 32 + [1.0], 64, E4M3)[None]
    return x, w


def test_promotion_recovers_what_the_fp8_accumulator_drops():
    x, w = fp8_promotion_case()
    assert lowbit.matmul_model(x, w, WGMMA_FP8)[0, 0] == 16384.0
    assert lowbit.matmul_model(x, w, {"instruction": WGMMA_FP8, "promotion_interval": 32})[0, 0] == 16385.0
    s = lowbit.AccumulationSchedule(instruction=WGMMA_FP8, split_k=2)
    assert lowbit.matmul_model(x, w, s)[0, 0] == 16385.0
    # A K that is not a multiple of 32 is padded with zeros.
    assert lowbit.matmul_model(x[:, :33], w[:, :33], WGMMA_FP8)[0, 0] == 16384.0


def test_split_reduction_orders():
    # Four parts (one BF16 chunk of 16 each): 2^24, 1, 1, 1. In order:
    # 2^24 + 1 -> 2^24 (tie to even), three times: 2^24. Pairwise:
    # (2^24 + 1) + (1 + 1) = 2^24 + 2.
    x = np.zeros((1, 64), BF16)
    w = np.zeros((1, 64), BF16)
    x[0, [0, 16, 32, 48]] = [2.0 ** 12, 1, 1, 1]
    w[0, [0, 16, 32, 48]] = [2.0 ** 12, 1, 1, 1]
    s = {"instruction": WGMMA_BF16, "split_k": 4}
    assert lowbit.matmul_model(x, w, s)[0, 0] == 2.0 ** 24
    assert lowbit.matmul_model(x, w, dict(s, split_reduction="pairwise"))[0, 0] == 2.0 ** 24 + 2


def test_epilogue_scales_and_output_conversion():
    x = row([1.0, 1.0, 1.0], 16, BF16)[None]
    w = np.stack([row([1.0] * 3, 16, BF16), row([1.0] * 3, 16, BF16)])
    s = {"instruction": MMA_BF16, "column_scales": np.array([0.5, 2.0], np.float32), "alpha": 0.25}
    y = lowbit.matmul_model(x, w, s)
    assert y.dtype == np.float32 and y.tolist() == [[0.375, 1.5]]
    # 16385 in BF16 (8 significant bits): 16384; in FP16 (11 bits): 16384.
    x, w = fp8_promotion_case()
    y = lowbit.matmul_model(x, w, {"instruction": WGMMA_FP8, "promotion_interval": 32, "output": "bf16"})
    assert y.dtype == BF16 and bits(y)[0, 0] == 0x4680
    y = lowbit.matmul_model(x, w, {"instruction": WGMMA_FP8, "promotion_interval": 32, "output": "fp16"})
    assert y.dtype == np.float16 and y[0, 0] == 16384


def test_matmul_model_int8_and_batches_and_threads():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (2, 3, 70), dtype=np.int8)
    w = rng.integers(-128, 128, (5, 70), dtype=np.int8)
    y = lowbit.matmul_model(x, w, MMA_S8, threads=3)
    assert y.dtype == np.int32 and y.shape == (2, 3, 5)
    assert np.array_equal(y, x.astype(np.int64) @ w.astype(np.int64).T)
    assert np.array_equal(lowbit.matmul_model(x, w, {"instruction": MMA_S8, "output": "int32"}, threads=1), y)


def test_matmul_model_chunk_equals_one_instruction():
    # K = the instruction's k, no promotion: each output is one mma_dot from +0.
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 256, (40, 32), dtype=np.uint8)
    w_codes = rng.integers(0, 256, (8, 32), dtype=np.uint8)
    y = lowbit.matmul_model(codes, w_codes, WGMMA_FP8, x_format="e4m3", w_format="e4m3")
    for i in range(40):
        d = lowbit.mma_dot(np.repeat(codes[i:i + 1], 8, 0), w_codes, instruction=WGMMA_FP8, a_format="e4m3",
                           b_format="e4m3")
        assert np.array_equal(bits(y[i]), bits(d))


# ---- bad input: one ValueError naming the problem ------------------------------------

def fp8_tile():
    return np.zeros((64, 32), E4M3), np.zeros((32, 8), E4M3)


@pytest.mark.parametrize("call, message", [
    (lambda a, b: lowbit.mma(a, b, instruction="wgmma.m64nNk32.f32.e4m3.e4m2"),
     "unknown tensor-core instruction 'wgmma.m64nNk32.f32.e4m3.e4m2'; did you mean 'wgmma.m64nNk32.f32.e4m3.e4m3'?"),
    (lambda a, b: lowbit.mma(a, b, instruction="x\n'y"), r"unknown tensor-core instruction 'x\x0a\'y'"),
    (lambda a, b: lowbit.mma(a, b, instruction=7), "instruction is a name (str), got int 7"),
    (lambda a, b: lowbit.mma(a[:16], b, instruction=WGMMA_FP8),
     "A has shape (16, 32), wgmma.m64nNk32.f32.e4m3.e4m3 takes A of shape (..., 64, 32)"),
    (lambda a, b: lowbit.mma(a, b[:16], instruction=WGMMA_FP8),
     "B has shape (16, 8), wgmma.m64nNk32.f32.e4m3.e4m3 takes B of shape (..., 32, n)"),
    (lambda a, b: lowbit.mma(a, np.zeros((32, 12), E4M3), instruction=WGMMA_FP8),
     "wgmma.m64nNk32.f32.e4m3.e4m3 takes n a multiple of 8 from 8 to 256, got n = 12"),
    (lambda a, b: lowbit.mma(a, np.zeros((32, 264), E4M3), instruction=WGMMA_FP8),
     "takes n a multiple of 8 from 8 to 256, got n = 264"),
    (lambda a, b: lowbit.mma(np.zeros((16, 16), BF16), np.zeros((16, 16), BF16), instruction=MMA_BF16),
     "mma.m16n8k16.f32.bf16.bf16 takes n = 8, got n = 16"),
    (lambda a, b: lowbit.mma(a, b, np.zeros((64, 16), np.float32), instruction=WGMMA_FP8),
     "C has shape (64, 16), wgmma.m64nNk32.f32.e4m3.e4m3 on these operands needs (64, 8)"),
    (lambda a, b: lowbit.mma(a.astype(E5M2), b, instruction=WGMMA_FP8),
     "wgmma.m64nNk32.f32.e4m3.e4m3 takes A in e4m3, got float8_e5m2"),
    (lambda a, b: lowbit.mma(a, b, np.zeros((64, 8), np.float16), instruction=WGMMA_FP8),
     "takes C in fp32, got float16"),
    (lambda a, b: lowbit.mma(a.astype(np.float64), b, instruction=WGMMA_FP8),
     "takes A in e4m3, got float64 (convert first"),
    (lambda a, b: lowbit.mma(a.view(np.uint8), b, instruction=WGMMA_FP8),
     "takes A in e4m3, got uint8 (raw codes: name their format, a_format='e4m3')"),
    (lambda a, b: lowbit.mma(a.view(np.uint8), b, instruction=WGMMA_FP8, a_format="e5m2"),
     "wgmma.m64nNk32.f32.e4m3.e4m3 takes A in e4m3, a_format names e5m2"),
    (lambda a, b: lowbit.mma(a.view(np.uint8), b, instruction=WGMMA_FP8, a_format="e9m9"),
     "a_format: unknown format 'e9m9'"),
    (lambda a, b: lowbit.mma(np.full((64, 32), 0x1FF, np.uint16), b, instruction=WGMMA_FP8, a_format="e4m3"),
     "A element 0 is code 0x1ff, wider than e4m3's 8 bits"),
    (lambda a, b: lowbit.mma(np.zeros((16, 16), np.uint8), np.zeros((16, 8), BF16), instruction=MMA_BF16,
                             a_format="bf16"),
     "A: bf16 codes are 16 bits, a uint8 array cannot hold them"),
    (lambda a, b: lowbit.mma(a.astype(np.float32), b, instruction=WGMMA_FP8, a_format="e4m3"),
     "A with a_format holds raw codes (unsigned integers), got float32"),
    (lambda a, b: lowbit.mma(a, b, instruction=WGMMA_FP8, b_layout="kt"),
     "b_layout is 'kn' (k x n, as in A @ B) or 'nk' (n x k), got 'kt'"),
    (lambda a, b: lowbit.mma(a, b, np.full((64, 8), 0x1_0000_0000, np.uint64), instruction=WGMMA_FP8,
                             c_format="fp32"),
     "C element 0 is code 0x100000000"),
    (lambda a, b: lowbit.mma(np.zeros((0, 64, 32), E4M3), np.zeros((0, 32, 8), E4M3), instruction=WGMMA_FP8),
     "the batch (0,) is empty"),
    (lambda a, b: lowbit.mma(np.zeros((2, 64, 32), E4M3), np.zeros((3, 32, 8), E4M3), instruction=WGMMA_FP8),
     "B has batch dimensions (3,), A (2,): give both the same"),
    (lambda a, b: lowbit.mma_dot(np.zeros((3, 32), E4M3), np.zeros((4, 32), E4M3), instruction=WGMMA_FP8),
     "A has shape (3, 32), B (4, 32): give both the same"),
    (lambda a, b: lowbit.mma_dot(np.zeros((3, 16), E4M3), np.zeros((3, 16), E4M3), instruction=WGMMA_FP8),
     "A has shape (3, 16), wgmma.m64nNk32.f32.e4m3.e4m3 takes (..., 32)"),
    (lambda a, b: lowbit.mma_explain(a, b, instruction=WGMMA_FP8),
     "explains one output of a row and a column of 32 values each (or whole tiles with index=(row, column))"),
    (lambda a, b: lowbit.mma_explain(a, b, instruction=WGMMA_FP8, index=(64, 0)),
     "index (64, 0) is outside the 64 x 8 output"),
    (lambda a, b: lowbit.mma_explain(a, b, instruction=WGMMA_FP8, index="ab"),
     "index is (row, column), got 'ab'"),
])
def test_bad_input_one_error(call, message):
    a, b = fp8_tile()
    with pytest.raises(ValueError) as e:
        call(a, b)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def fp8_rows():
    return np.zeros((2, 64), E4M3), np.zeros((3, 64), E4M3)


@pytest.mark.parametrize("schedule, kwargs, message", [
    ({"instruction": WGMMA_FP8, "promotion": 128}, {},
     "schedule: unknown field 'promotion' (fields: instruction, promotion_interval, split_k"),
    ({"promotion_interval": 128}, {}, "schedule: the instruction is missing"),
    (42, {}, "schedule is a lowbit.AccumulationSchedule, a dict of its fields or an instruction name, got int"),
    ({"instruction": WGMMA_FP8, "promotion_interval": 48}, {},
     "schedule: the promotion interval must be a multiple of the instruction's k (wgmma.m64nNk32.f32.e4m3.e4m3, "
     "k = 32, K = 64)"),
    ({"instruction": WGMMA_FP8, "promotion_interval": -32}, {}, "promotion_interval must be between 0 and 2^30"),
    ({"instruction": WGMMA_FP8, "promotion_interval": 32.0}, {}, "schedule: promotion_interval is an integer, got 32.0"),
    ({"instruction": WGMMA_FP8, "split_k": 0}, {}, "schedule: split_k must be between 1 and 64, got 0"),
    ({"instruction": WGMMA_FP8, "split_k": 65}, {}, "schedule: split_k must be between 1 and 64, got 65"),
    ({"instruction": WGMMA_FP8, "split_reduction": "tree"}, {},
     "schedule: split_reduction is 'in-order' or 'pairwise', got 'tree'"),
    ({"instruction": WGMMA_FP8, "output": "e4m3"}, {}, "schedule: output is 'fp32', 'bf16' or 'fp16', got 'e4m3'"),
    ({"instruction": WGMMA_FP8, "output": "int32"}, {}, "schedule: output is 'fp32', 'bf16' or 'fp16', got 'int32'"),
    ({"instruction": WGMMA_FP8, "output": "fp\x00"}, {}, r"got 'fp\x00'"),
    ({"instruction": WGMMA_FP8, "alpha": 0.1}, {},
     "schedule: alpha must be an FP32 value (the epilogue multiplies in FP32; give float(numpy.float32(alpha))), "
     "got 0.10000000000000001"),
    ({"instruction": WGMMA_FP8, "alpha": "2"}, {}, "schedule: alpha is a number, got '2'"),
    ({"instruction": WGMMA_FP8, "column_scales": np.ones(2, np.float32)}, {},
     "column_scales must be 3 float32 values, got float32 of shape (2,)"),
    ({"instruction": WGMMA_FP8, "column_scales": np.ones(3, np.float64)}, {},
     "column_scales must be 3 float32 values, got float64 of shape (3,)"),
    ({"instruction": "wgmma.m64nNk32.f32.e4m3"}, {}, "unknown tensor-core instruction 'wgmma.m64nNk32.f32.e4m3'"),
    (WGMMA_FP8, {"threads": 0}, "threads must be at least 1, got 0"),
])
def test_bad_schedule_one_error(schedule, kwargs, message):
    x, w = fp8_rows()
    with pytest.raises(ValueError) as e:
        lowbit.matmul_model(x, w, schedule, **kwargs)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_bad_matmul_operands():
    x, w = fp8_rows()
    cases = [
        (lambda: lowbit.matmul_model(x, w[:, :32], WGMMA_FP8),
         "x has K = 64, w has shape (3, 32) (K = 32): they must agree"),
        (lambda: lowbit.matmul_model(x, w[None], WGMMA_FP8), "w has shape (1, 3, 64): w is [N, K]"),
        (lambda: lowbit.matmul_model(x[:, :0], w[:, :0], WGMMA_FP8), "empty operands: x has shape (2, 0)"),
        (lambda: lowbit.matmul_model(x[:0], w, WGMMA_FP8), "empty operands: x has shape (0, 64)"),
        (lambda: lowbit.matmul_model(x, w.astype(BF16), WGMMA_FP8),
         "wgmma.m64nNk32.f32.e4m3.e4m3 takes W in e4m3, got bfloat16"),
        (lambda: lowbit.matmul_model(x, w, {"instruction": MMA_S8}),
         "mma.m16n8k32.s32.s8.s8 takes X in int8, got float8_e4m3fn"),
        (lambda: lowbit.matmul_model(x.astype(np.float32).astype(np.int8), w.astype(np.float32).astype(np.int8),
                                     {"instruction": MMA_S8, "output": "fp32"}),
         "schedule: mma.m16n8k32.s32.s8.s8 gives int32 outputs, got output 'fp32'"),
        (lambda: lowbit.matmul_model(x.astype(np.float32).astype(np.int8), w.astype(np.float32).astype(np.int8),
                                     {"instruction": MMA_S8, "split_k": 2}),
         "schedule: an integer instruction's schedule has no promotion, split, scale or conversion"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as e:
            call()
        assert message in str(e.value)


def test_doctests():
    import doctest

    import lowbit.tensor_core
    result = doctest.testmod(lowbit.tensor_core, extraglobs={"lowbit": lowbit, "np": np, "ml_dtypes": ml_dtypes})
    assert result.attempted >= 8 and result.failed == 0
