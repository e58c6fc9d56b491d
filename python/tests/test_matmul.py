"""lowbit.gemv / lowbit.matmul on host arrays (docs/matmul.md): a lowbit.quantize
result feeds the matmul rows unchanged; the GEMM row on the host is the exact
mode (checked against Python fractions, one rounding to the output type); the
GEMV row is the defined-order FP32 reference (checked within the FP32
accumulation bound of the exact sum, row- and batch-independent); GPTQ and
AWQ tensors built here from codes match their dequantized values; bad
arguments raise errors that name the problem."""

import dataclasses
import fractions

import ml_dtypes
import numpy as np
import pytest

import lowbit


def round_fraction(v: fractions.Fraction, precision: int, emin: int, emax: int) -> float:
    """Round-to-nearest-even of an exact value into a binary format with
    `precision` significant bits (subnormals below 2^emin, Inf at 2^(emax+1)),
    written from the definition."""
    if v == 0:
        return 0.0
    sign = -1.0 if v < 0 else 1.0
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if fractions.Fraction(2) ** e > a:
        e -= 1
    q_exp = max(e, emin) - precision + 1
    t = a / fractions.Fraction(2) ** q_exp
    q = t.numerator // t.denominator
    rem = t - q
    if rem > fractions.Fraction(1, 2) or (rem == fractions.Fraction(1, 2) and q % 2 == 1):
        q += 1
    r = fractions.Fraction(q) * fractions.Fraction(2) ** q_exp
    if r >= fractions.Fraction(2) ** (emax + 1):
        return sign * float("inf")
    return sign * float(r)


FORMATS = {"fp32": (24, -126, 127), "bf16": (8, -126, 127), "fp16": (11, -14, 15)}


def exact_rows(x, w):
    """x [M, K] and w [N, K] of exactly representable floats: sum_k x w as fractions."""
    xf = [[fractions.Fraction(float(v)) for v in row] for row in np.asarray(x, np.float64)]
    wf = [[fractions.Fraction(float(v)) for v in row] for row in np.asarray(w, np.float64)]
    return [[sum((a * b for a, b in zip(xr, wr)), fractions.Fraction(0)) for wr in wf] for xr in xf]


def as_float(y):
    return np.asarray(y).astype(np.float64)


@pytest.mark.parametrize("recipe", ["mxfp4:ocp", "mxfp8_e4m3:ocp"])
@pytest.mark.parametrize("out", ["fp32", "bf16", "fp16"])
def test_gemm_on_the_host_is_the_exact_sum_rounded_once(recipe, out):
    rng = np.random.default_rng(1)
    n, k = 5, 70  # K not a multiple of the block: 1-D blocks run across rows
    w = rng.standard_normal((n, k)).astype(np.float32)
    q = lowbit.quantize(w, recipe)
    wd = q.dequantize()  # MX: element * 2^e, exact in FP32 for these magnitudes
    x = rng.standard_normal((20, k)).astype(ml_dtypes.bfloat16)
    y = lowbit.matmul(q, x, out_dtype=out)  # M = 20: the GEMM row
    assert y.shape == (20, n)
    want = exact_rows(x.astype(np.float64), wd.astype(np.float64))
    p, emin, emax = FORMATS[out]
    got = as_float(y)
    for i in range(20):
        for j in range(n):
            assert got[i, j] == round_fraction(want[i][j], p, emin, emax), (i, j)


@pytest.mark.parametrize("recipe,layout", [("nvfp4:te", None), ("nvfp4:te", "g16"), ("mxfp4:ocp", "g32"),
                                           ("int4:ao-sym", "g32"), ("uint4:gptq-asym", "g32"),
                                           ("e4m3:te", "row")])
@pytest.mark.parametrize("m", [1, 3, 16])
def test_gemv_is_within_the_fp32_accumulation_bound(recipe, layout, m):
    rng = np.random.default_rng(m)
    n, k = 7, 96
    w = rng.standard_normal((n, k)).astype(np.float32)
    q = lowbit.quantize(w, recipe, layout=layout)
    x = rng.standard_normal((m, k)).astype(np.float16)
    y = lowbit.gemv(q, x, out_dtype="float32")
    assert y.dtype == np.float32 and y.shape == (m, n)
    wd = q.dequantize().astype(np.float64)  # FP32-rounded dequantized values: within 2^-24 of exact
    ref = x.astype(np.float64) @ wd.T
    mag = np.abs(x.astype(np.float64)) @ np.abs(wd).T
    # (K + 4) FP32 roundings of the partial sums plus the FP32 dequantize.
    assert np.all(np.abs(y - ref) <= (k + 4) * 2.0 ** -23 * mag + 1e-30)
    # Row-independent: each row alone gives the same bits (the defined order).
    for i in range(m):
        assert lowbit.gemv(q, x[i:i + 1], out_dtype="float32").tobytes() == y[i:i + 1].tobytes()


def test_batched_weights_match_each_batch_alone():
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 8, 64)).astype(np.float32)
    q = lowbit.quantize(w, "nvfp4:te", layout="g16")
    x = rng.standard_normal((3, 2, 64)).astype(ml_dtypes.bfloat16)
    y = lowbit.gemv(q, x, out_dtype="float32")
    assert y.shape == (3, 2, 8)
    for b in range(3):
        qb = lowbit.quantize(w[b], "nvfp4:te", layout="g16")
        # One tensor scale for the whole [3, 8, 64] tensor vs each slice's own:
        # compare through the dequantized values instead of the bits.
        wd = q.dequantize()[b].astype(np.float64)
        ref = x[b].astype(np.float64) @ wd.T
        mag = np.abs(x[b].astype(np.float64)) @ np.abs(wd).T
        assert np.all(np.abs(y[b] - ref) <= 70 * 2.0 ** -23 * mag)
        del qb


def pack_gptq(codes_kn):
    """[K, N] uint4 codes -> int32 [K / 8, N]: row j of each eight in bits 4j (GPTQ qweight)."""
    k, n = codes_kn.shape
    words = np.zeros((k // 8, n), np.uint32)
    for j in range(8):
        words |= codes_kn[j::8].astype(np.uint32) << np.uint32(4 * j)
    return words.view(np.int32)


def pack_gptq_zeros(zeros_gn):
    g, n = zeros_gn.shape
    stored = (zeros_gn.astype(np.int64) - 1) & 0xF
    words = np.zeros((g, n // 8), np.uint32)
    for j in range(8):
        words |= stored[:, j::8].astype(np.uint32) << np.uint32(4 * j)
    return words.view(np.int32)


AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


def pack_awq(codes_rn):
    r, n = codes_rn.shape
    words = np.zeros((r, n // 8), np.uint32)
    for i, col in enumerate(AWQ_ORDER):
        words |= codes_rn[:, col::8].astype(np.uint32) << np.uint32(4 * i)
    return words.view(np.int32)


@pytest.mark.parametrize("layout", ["gptq", "awq"])
@pytest.mark.parametrize("scale_dtype", [np.float16, ml_dtypes.bfloat16])
def test_gptq_and_awq_tensors(layout, scale_dtype):
    rng = np.random.default_rng(5)
    k, n, group = 96, 16, 32
    codes = rng.integers(0, 16, (k, n), dtype=np.uint8)
    zeros = rng.integers(0, 16, (k // group, n), dtype=np.uint8)
    scales = (rng.random((k // group, n)) * 0.1 + 0.01).astype(scale_dtype)
    if layout == "gptq":
        pw = lowbit.gptq_weight(pack_gptq(codes), scales, pack_gptq_zeros(zeros), group=group)
    else:
        pw = lowbit.awq_weight(pack_awq(codes), scales, pack_awq(zeros), group=group)
    assert (pw.n, pw.k) == (n, k)
    # Exact W[n, k] = (q - z) * s (the products are exact in float64).
    wd = ((codes.astype(np.float64) - np.repeat(zeros, group, axis=0)) *
          np.repeat(scales.astype(np.float64), group, axis=0)).T
    x = rng.standard_normal((20, k)).astype(ml_dtypes.bfloat16)
    y = lowbit.matmul(pw, x, out_dtype="float32")  # the exact mode
    want = exact_rows(x.astype(np.float64), wd)
    assert all(as_float(y)[i, j] == round_fraction(want[i][j], *FORMATS["fp32"])
               for i in range(20) for j in range(n))
    yv = lowbit.gemv(pw, x[:4], out_dtype="float32")
    mag = np.abs(x[:4].astype(np.float64)) @ np.abs(wd).T
    assert np.all(np.abs(yv - x[:4].astype(np.float64) @ wd.T) <= (k + 4) * 2.0 ** -23 * mag + 1e-30)


def test_rows_are_listed():
    rows = lowbit.matmul_rows()
    names = {k["name"] for k in lowbit._lowbit.matmul_weight_kinds()}
    # The rows name their weights by the kinds' canonical names
    # (formats/matmul/weight_kind.h kWeightKinds), never an older alias.
    assert {r["weight"] for r in rows if r["backend"] == "scalar"} == names
    assert {r["weight"] for r in rows} <= names
    assert {"nvfp4", "mxfp4", "mxfp8_e4m3", "int4/g128", "uint4/g128", "uint4/g128+gptq-fp16",
            "uint4/g128+awq-bf16", "e4m3/row"} <= names
    assert {r["operation"] for r in rows} == {"gemv", "gemm"}


def test_an_unknown_weight_kind_lists_the_canonical_names():
    q = lowbit.quantize(np.ones((4, 64), np.float32), "nvfp4:te")
    pw = dataclasses.replace(lowbit._matmul._packed_from_quantized(q), kind="int4-g64")
    with pytest.raises(ValueError, match=r"^unknown weight kind 'int4-g64' \(nvfp4, mxfp4, mxfp8_e4m3, int4/g128, "
                                         r"uint4/g128, uint4/g128\+gptq-fp16, .*, e4m3/row\)$"):
        lowbit.gemv(pw, np.zeros((1, 64), ml_dtypes.bfloat16))


def test_bad_arguments_name_the_problem():
    rng = np.random.default_rng(7)
    q = lowbit.quantize(rng.standard_normal((4, 64)).astype(np.float32), "nvfp4:te")
    x = np.zeros((1, 64), ml_dtypes.bfloat16)
    with pytest.raises(ValueError, match="last axis must be K = 64"):
        lowbit.gemv(q, np.zeros((1, 63), ml_dtypes.bfloat16))
    with pytest.raises(TypeError, match="float16 or ml_dtypes.bfloat16"):
        lowbit.gemv(q, np.zeros((1, 64), np.float32))
    with pytest.raises(ValueError, match="no matmul row"):
        lowbit.gemv(lowbit.quantize(np.ones((2, 128), np.float32), "int8:ao-sym/g128"), x)
    with pytest.raises(ValueError, match="M = 17 is more than a GEMV takes"):
        lowbit.gemv(q, np.zeros((17, 64), ml_dtypes.bfloat16))
    pw = lowbit._matmul._packed_from_quantized(q)
    pw.scales = pw.scales[:-1]
    with pytest.raises(ValueError, match="scales holds 15 ue4m3, the shape needs 16"):
        lowbit.gemv(pw, x)
    pw = lowbit._matmul._packed_from_quantized(q)
    pw.tensor_scale = None
    with pytest.raises(ValueError, match="tensor_scale is null"):
        lowbit.gemv(pw, x)
    with pytest.raises(ValueError, match="out_dtype"):
        lowbit.gemv(q, x, out_dtype="int8")
    with pytest.raises(ValueError, match="no gemv row"):
        lowbit.gemv(q, x, backend="no-such-backend")


def test_a_recipe_without_a_matmul_kind_is_refused_with_the_reason():
    # The reason is the C++ side's (formats/matmul/weight_kind.h LowbitWeightKindOf).
    x = np.zeros((1, 128), ml_dtypes.bfloat16)
    q = lowbit.quantize(np.ones((2, 128), np.float32), "int8:ao-sym/g128")
    with pytest.raises(ValueError, match=r"^recipe int8:ao-sym \(g128\) has no matmul row: no matmul weight kind "
                                         r"reads its output \(the kinds of lowbit.quantize results: nvfp4, "):
        lowbit.gemv(q, x)
    q = lowbit.quantize(np.ones((2, 128), np.float32), "e4m3:te")
    with pytest.raises(ValueError, match=r"^recipe e4m3:te \(tensor\) has no matmul row: its matmul weights take one "
                                         r"scale per output channel \(layout 'row'\)$"):
        lowbit.gemv(q, x)
    q = lowbit.quantize(np.ones((2, 128), np.float32), "int4:ao-sym")
    with pytest.raises(ValueError, match=r"^recipe int4:ao-sym \(tensor\) has no matmul row: integer weights take "
                                         r"groups along K"):
        lowbit.matmul(q, x)


def test_every_weight_kind_round_trips():
    """Each kind of formats/matmul/weight_kind.h kWeightKinds: a lowbit.quantize
    result of every recipe of its format in its layout (or GPTQ / AWQ tensors
    with its scale type) is that kind, under its canonical name, the rows'
    weight; each older name of it (kWeightKindAliases) reaches the same row,
    with the same bits."""
    rng = np.random.default_rng(11)
    n, k = 16, 256
    w = rng.standard_normal((n, k)).astype(np.float32)
    x = rng.standard_normal((2, k)).astype(ml_dtypes.bfloat16)
    rows = {r["weight"] for r in lowbit.matmul_rows()}
    kinds = lowbit._lowbit.matmul_weight_kinds()
    assert len(kinds) == 10
    # The names the rows had before the weights took the recipe grammar keep
    # working (users' scripts pass them as PackedWeight.kind).
    assert {"mxfp8-e4m3", "int4-g128", "uint4-g128", "uint4-gptq-fp16", "uint4-gptq-bf16", "uint4-awq-fp16",
            "uint4-awq-bf16", "e4m3-channel"} <= {a for kind in kinds for a in kind["aliases"]}
    for kind in kinds:
        assert kind["name"] in rows, kind
        if kind["packing"] == "lowbit":
            recipes = [r for r in lowbit.recipes.values() if r.format == kind["format"]]
            assert recipes, kind
            for r in recipes:
                layout = None if kind["layout"] == r.layout else kind["layout"]
                q = lowbit.quantize(w, r.name, layout=layout)
                pw = lowbit._matmul._packed_from_quantized(q)
                block = 0 if kind["layout"] == "row" else int(kind["layout"][1:])
                geometry = {"b": "flat", "g": "row-blocks", "r": "per-row"}[kind["layout"][0]]
                assert (pw.kind, pw.geometry, pw.block) == (kind["name"], geometry, block), (kind, r.name)
                y = lowbit.gemv(q, x, out_dtype="float32")
                for alias in kind["aliases"]:
                    y_alias = lowbit.gemv(dataclasses.replace(pw, kind=alias), x, out_dtype="float32")
                    assert y.tobytes() == y_alias.tobytes(), (kind, alias, r.name)
        else:
            scales = np.full((k // 128, n), 0.5, np.float16 if kind["scale_storage"] == "fp16" else ml_dtypes.bfloat16)
            make = lowbit.gptq_weight if kind["packing"] == "gptq" else lowbit.awq_weight
            words = np.zeros((k // 8, n) if kind["packing"] == "gptq" else (k, n // 8), np.int32)
            pw = make(words, scales)
            assert pw.kind == kind["name"], kind
            assert kind["aliases"], kind  # the GPTQ / AWQ kinds' older names
            for alias in kind["aliases"]:
                assert lowbit.gemv(pw, x).tobytes() == lowbit.gemv(dataclasses.replace(pw, kind=alias), x).tobytes()
