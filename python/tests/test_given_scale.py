"""Given (static, calibrated) scales: lowbit.quantize(..., given_scale=) for
the vLLM FP8 recipes (static_scaled_fp8_quant, the per-token arithmetic, the
KV cache's k_scale / v_scale per tensor or per head), and the bad inputs
refused with a message that names the problem. Expected codes are worked out
by hand: E4M3 1.0 = 0x38, 0.5 = 0x30, 1.5 = 0x3c, 2 = 0x40, 448 = 0x7e."""

import math

import numpy as np
import pytest

import lowbit

X = np.array([1.0, -3.0, 896.0, 1000.0], np.float32)


def test_static_per_tensor_scale_is_stored_and_used():
    # y = x * (1 / 2): 0.5, -1.5, 448, 500 -> clamp 448.
    q = lowbit.quantize(X, "e4m3:vllm", given_scale=2.0)
    assert q.codes.tolist() == [0x30, 0xBC, 0x7E, 0x7E]
    assert q.scales.tolist() == [2.0]
    assert q.dequantize().tolist() == [1.0, -3.0, 896.0, 896.0]
    # Not the scale the data would give (amax / 448).
    assert lowbit.quantize(X, "e4m3:vllm").scales.tolist() == [np.float32(1000.0) / np.float32(448.0)]


def test_kv_cache_scale_per_head_and_per_tensor():
    x = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
    q = lowbit.quantize(x, "e4m3:vllm-kv", layout="g2", given_scale=[1.0, 4.0])
    assert q.codes.tolist() == [0x38, 0x40, 0x38, 0x40]
    assert q.scales.tolist() == [1.0, 4.0]
    one = lowbit.quantize(x, "e4m3:vllm-kv", layout="g2", given_scale=np.float32(4.0))
    assert one.scales.tolist() == [4.0, 4.0]
    assert one.codes.tolist() == [0x28, 0x30, 0x38, 0x40]  # 0.25, 0.5, 1, 2


def test_per_token_given_scales_one_per_row():
    x = np.array([[1.0, -1.0], [4.0, 2.0]], np.float32)
    q = lowbit.quantize(x, "e4m3:vllm-token", layout="row", given_scale=[0.5, 2.0])
    assert q.scales.tolist() == [0.5, 2.0]
    assert q.codes.ravel().tolist() == [0x40, 0xC0, 0x40, 0x38]  # 2, -2 | 2, 1


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 0.0, -0.0, -2.0, 1e39])
def test_non_finite_zero_and_negative_scales_are_refused(bad):
    with pytest.raises(ValueError, match="a given scale must be a finite number > 0"):
        lowbit.quantize(X, "e4m3:vllm", given_scale=bad)


def test_one_bad_scale_among_several_is_named():
    with pytest.raises(ValueError, match=r"given_scale\[1\] is nan"):
        lowbit.quantize(np.ones(4, np.float32), "e4m3:vllm-kv", layout="g2", given_scale=[1.0, math.nan])


def test_wrong_count_for_per_head():
    with pytest.raises(ValueError, match="3 given scales for 2 groups"):
        lowbit.quantize(np.ones(4, np.float32), "e4m3:vllm-kv", layout="g2", given_scale=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="given_scale is empty"):
        lowbit.quantize(np.ones(4, np.float32), "e4m3:vllm-kv", layout="g2", given_scale=[])


def test_recipes_that_derive_their_scale_refuse_one():
    for recipe in ("int8:ao-sym", "e4m3:te", "mxfp4:ocp", "nvfp4:te"):
        with pytest.raises(ValueError, match="takes no given scale"):
            lowbit.quantize(np.ones(32, np.float32), recipe, given_scale=1.0)


def test_not_a_number_is_a_type_error():
    for bad in ("2", b"2", True, object()):
        with pytest.raises(TypeError, match="given_scale"):
            lowbit.quantize(X, "e4m3:vllm", given_scale=bad)
