"""lowbit.testing.check_matmul / assert_matmul_matches against products computed here.

Each kernel is plain NumPy, written without lowbit's candidates: a K-order sum
(BF16 x BF16 products are exact in FP32, so multiply-then-add is fmaf), a
pairwise tree, split-K, an exact float64 sum (exact for the narrow inputs
below) rounded once, and three deliberate bugs (a dropped K tail, a wrong
block-scale index, B read transposed). Each must be named by the diagnosis.
For the tensor-core schedules the model is the semantics: a product from
lowbit.matmul_model under a schedule must be named as that schedule. Then
bad input, each a ValueError naming the problem."""

import ml_dtypes
import numpy as np
import pytest

import lowbit
import lowbit.testing as lt

BF16 = ml_dtypes.bfloat16


def narrow_bf16(shape, seed):
    """BF16 values 2^-4 .. 2^5 with both signs: every product and every sum of
    a few thousand of them is exact in float64."""
    rng = np.random.default_rng(seed)
    sign = rng.integers(0, 2, shape) * 2 - 1
    exponent = rng.integers(-4, 5, shape)
    mantissa = rng.integers(0, 128, shape) / 128.0
    return (sign * (1 + mantissa) * 2.0 ** exponent).astype(BF16)


def k_order(a, b, k_used=None):
    af, bf = a.astype(np.float32), b.astype(np.float32)
    d = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(a.shape[1] if k_used is None else k_used):
        d = d + np.outer(af[:, k], bf[k, :]).astype(np.float32)
    return d


def test_k_order_sum_is_a_match():
    a, b = narrow_bf16((5, 90), 1), narrow_bf16((90, 4), 2)
    report = lt.assert_matmul_matches(a, b, k_order(a, b), schedule="fp32 fma, K order")
    assert report.passed and report.match == "fp32 fma, K order"
    assert not report.candidate("fp32 pairwise tree of products")["full_match"]


def test_exact_sum_rounded_once_and_the_mismatch_report():
    a, b = narrow_bf16((6, 300), 3), narrow_bf16((300, 5), 4)
    exact = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    assert lt.check_matmul(a, b, exact).match == "exact product rounded once"
    d = k_order(a, b)
    differ = int(np.sum(d.view(np.uint32) != exact.view(np.uint32)))
    assert differ > 0
    r = lt.check_matmul(a, b, d)
    assert r.mismatches == differ and r.checked == 30
    first = r.first_mismatches[0]
    assert first["expected"] == int(exact.view(np.uint32)[first["row"], first["column"]])
    assert first["actual"] == int(d.view(np.uint32)[first["row"], first["column"]])
    assert sum(r.ulp_distribution.values()) == 30 and r.ulp_distribution["0"] == 30 - differ


def test_pairwise_tree_is_named():
    a, b = narrow_bf16((4, 77), 5), narrow_bf16((77, 3), 6)
    p = [np.outer(a[:, k].astype(np.float32), b[k, :].astype(np.float32)).astype(np.float32) for k in range(77)]
    while len(p) > 1:  # neighbours paired level by level, an odd last passes up
        p = [(p[i] + p[i + 1]).astype(np.float32) for i in range(0, len(p) - 1, 2)] + ([p[-1]] if len(p) % 2 else [])
    lt.assert_matmul_matches(a, b, p[0], schedule="fp32 pairwise tree of products")


def test_split_k_in_order_is_named():
    a, b = narrow_bf16((4, 400), 7), narrow_bf16((400, 4), 8)
    per = -(-400 // 6)
    parts = [k_order(a[:, i * per:(i + 1) * per], b[i * per:(i + 1) * per, :]) for i in range(6)]
    d = parts[0]
    for part in parts[1:]:
        d = (d + part).astype(np.float32)
    r = lt.assert_matmul_matches(a, b, d, schedule="fp32 fma, K order, split-K 6 in order")
    assert not r.candidate("fp32 fma, K order, split-K 5 in order")["full_match"]


def test_dropped_k_tail_is_named():
    a, b = narrow_bf16((4, 100), 9), narrow_bf16((100, 4), 10)
    r = lt.check_matmul(a, b, k_order(a, b, k_used=64))
    assert r.passed and r.match == "K tail dropped after 64 (tile 64), fp32 fma, K order", r.text


def test_b_read_transposed_is_named():
    a, b = narrow_bf16((3, 20), 11), narrow_bf16((20, 20), 12)
    lt.assert_matmul_matches(a, b, k_order(a, b.T.copy()), schedule="B read transposed, fp32 fma, K order")


def test_wrong_block_scale_index_is_named():
    rng = np.random.default_rng(13)
    m, n, k = 3, 4, 64
    a = narrow_bf16((m, k), 14)
    b = rng.uniform(-8, 8, (k, n)).astype(ml_dtypes.float8_e4m3fn)
    scales = rng.integers(124, 131, (n, k // 32)).astype(np.uint8)  # E8M0, [n][block]
    wrong = scales.reshape(-1)[np.arange(2)[None, :] * n + np.arange(n)[:, None]]  # the scale of (n, kb) read at kb * N + n
    w = b.astype(np.float32) * np.exp2(wrong.astype(np.float32) - 127)[:, np.arange(k) // 32].T
    d = k_order(a, w.astype(np.float32))
    r = lt.assert_matmul_matches(a, b.view(np.uint8), d, b_format="mxfp8", b_scales=scales,
                                 schedule="B's block scales read transposed, fp32 fma, K order")
    assert not r.candidate("fp32 fma, K order")["full_match"]


def test_model_schedules_are_named_as_themselves():
    rng = np.random.default_rng(15)
    x = rng.uniform(-8, 8, (4, 4096)).astype(ml_dtypes.float8_e4m3fn)
    w = rng.uniform(-8, 8, (4, 4096)).astype(ml_dtypes.float8_e4m3fn)
    name = "wgmma.m64nNk32.f32.e4m3.e4m3"
    for promotion, expected, neighbour in ((128, ", promotion every 128", ", no promotion"),
                                           (0, ", no promotion", ", promotion every 128")):
        y = lowbit.matmul_model(x, w, {"instruction": name, "promotion_interval": promotion})
        r = lt.assert_matmul_matches(x, w, y, transpose_b=True, schedule=name + expected)
        assert not r.candidate(name + neighbour)["full_match"]


def test_assert_raises_with_the_report_when_nothing_matches():
    a, b = narrow_bf16((3, 40), 16), narrow_bf16((40, 3), 17)
    d = k_order(a, b)
    d[1, 2] = np.nextafter(np.nextafter(d[1, 2], np.float32(np.inf)), np.float32(np.inf))
    with pytest.raises(AssertionError, match=r"NO MATCH: matches no candidate \(closest: fp32 fma, K order"):
        lt.assert_matmul_matches(a, b, d)
    with pytest.raises(AssertionError, match="does not give every output bit"):
        lt.assert_matmul_matches(a, b, k_order(a, b), schedule="fp32 pairwise tree of products")


def test_bad_input_is_a_value_error_naming_it():
    a, b, d = narrow_bf16((4, 8), 18), narrow_bf16((9, 3), 19), np.zeros((4, 3), np.float32)
    with pytest.raises(ValueError, match=r"A's K = 8 is not B's K = 9 \(is B N x K\? transpose_b=True\)"):
        lt.check_matmul(a, b, d)
    b = narrow_bf16((8, 3), 20)
    with pytest.raises(ValueError, match=r"shape \(3, 4\), but A x B is M x N = 4 x 3"):
        lt.check_matmul(a, b, np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match="the output D: dtype uint8 is not float32, float16 or bfloat16"):
        lt.check_matmul(a, b, np.zeros((4, 3), np.uint8))
    with pytest.raises(ValueError, match=r"b_scales: 2 scales; bf16 takes one \(per tensor\) or 3 \(one per column of B\)"):
        lt.check_matmul(a, b, d, b_scales=np.ones(2, np.float32))
    with pytest.raises(ValueError, match="A: a 1-dimensional array"):
        lt.check_matmul(a.reshape(-1), b, d)
    with pytest.raises(ValueError, match=r"B's block scales: 0 given, mxfp8 needs N x ceil\(K / 32\) = 3 x 1 = 3"):
        lt.check_matmul(a, np.zeros((8, 3), np.uint8), d, b_format="mxfp8")
    with pytest.raises(ValueError, match=r"A: unknown format 'bf\\x0a16'"):
        lt.check_matmul(a.view(np.uint16), b, d, a_format="bf\n16")
