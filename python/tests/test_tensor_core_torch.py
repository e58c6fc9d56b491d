"""lowbit.mma / mma_dot / mma_explain / matmul_model on PyTorch CPU tensors:
torch's float8, bfloat16, float16, float32 and int8 tensors in, torch
tensors of the accumulator's (or the schedule's output) type out, bit for
bit the results of the NumPy path (python/tests/test_tensor_core.py pins
those against hand-derived values). Skipped as a whole where torch is not
installed (ctest shows the file as skipped: python/CMakeLists.txt)."""

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lowbit  # noqa: E402

WGMMA_FP8 = "wgmma.m64nNk32.f32.e4m3.e4m3"
TYPES = {"e4m3": (torch.float8_e4m3fn, ml_dtypes.float8_e4m3fn), "e5m2": (torch.float8_e5m2, ml_dtypes.float8_e5m2),
         "bf16": (torch.bfloat16, ml_dtypes.bfloat16), "fp16": (torch.float16, np.float16),
         "fp32": (torch.float32, np.float32), "int8": (torch.int8, np.int8)}
CODE = {1: torch.uint8, 2: torch.int16, 4: torch.int32}


def random_operand(rng, fmt, shape):
    """A torch tensor of fmt's type and the same values as a NumPy array, from random codes."""
    torch_type, numpy_type = TYPES[fmt]
    size = np.dtype(numpy_type).itemsize
    codes = rng.integers(0, 1 << (8 * size), shape, dtype=np.uint64).astype(np.dtype(f"u{size}"))
    t = torch.from_numpy(codes.view(np.dtype(f"i{size}")).copy()).view(CODE[size]).view(torch_type)
    return t, codes.view(numpy_type)


def torch_bits(t):
    return t.contiguous().view(CODE[t.element_size()]).numpy().view(np.dtype(f"u{t.element_size()}"))


def numpy_bits(a):
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


@pytest.mark.parametrize("name", sorted(lowbit.tensor_core_instructions()))
def test_mma_on_torch_tensors_equals_numpy(name):
    inst = lowbit.tensor_core_instructions()[name]
    rng = np.random.default_rng(len(name))
    n = inst.columns[0] * 2 if inst.kind == "wgmma" else inst.n
    a_t, a_n = random_operand(rng, inst.a_format, (inst.m, inst.k))
    b_t, b_n = random_operand(rng, inst.b_format, (inst.k, n))
    if inst.accumulator == "int32":
        c_n = rng.integers(-2 ** 31, 2 ** 31, (inst.m, n), dtype=np.int64).astype(np.int32)
        c_t = torch.from_numpy(c_n)
    else:
        c_t, c_n = random_operand(rng, inst.accumulator, (inst.m, n))
    d_t = lowbit.mma(a_t, b_t, c_t, instruction=name)
    d_n = lowbit.mma(a_n, b_n, c_n, instruction=name)
    assert isinstance(d_t, torch.Tensor) and d_t.shape == (inst.m, n)
    assert d_t.dtype == {"fp32": torch.float32, "fp16": torch.float16, "int32": torch.int32}[inst.accumulator]
    np.testing.assert_array_equal(torch_bits(d_t), numpy_bits(d_n))
    diagonal = torch.arange(4)
    dot_t = lowbit.mma_dot(a_t[:4], b_t.T[:4].contiguous(), c_t[diagonal, diagonal], instruction=name)
    np.testing.assert_array_equal(torch_bits(dot_t), numpy_bits(d_n)[[0, 1, 2, 3], [0, 1, 2, 3]])


def test_matmul_model_on_torch_tensors_equals_numpy():
    rng = np.random.default_rng(5)
    x_t, x_n = random_operand(rng, "e4m3", (3, 5, 200))
    w_t, w_n = random_operand(rng, "e4m3", (24, 200))
    scales = np.linspace(0.5, 2, 24).astype(np.float32)
    for output, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)):
        s = {"instruction": WGMMA_FP8, "promotion_interval": 64, "split_k": 3, "output": output,
             "column_scales": torch.from_numpy(scales), "alpha": 0.5}
        y_t = lowbit.matmul_model(x_t, w_t, s, threads=2)
        y_n = lowbit.matmul_model(x_n, w_n, dict(s, column_scales=scales), threads=1)
        assert y_t.dtype == dtype and y_t.shape == (3, 5, 24)
        np.testing.assert_array_equal(torch_bits(y_t), numpy_bits(y_n))


def test_raw_torch_codes_with_their_format_and_explain():
    rng = np.random.default_rng(6)
    a_t, a_n = random_operand(rng, "e4m3", (64, 32))
    b_t, b_n = random_operand(rng, "e4m3", (32, 8))
    raw = lowbit.mma(a_t.view(torch.uint8), b_t.view(torch.uint8), instruction=WGMMA_FP8, a_format="e4m3",
                     b_format="e4m3")
    np.testing.assert_array_equal(torch_bits(raw), numpy_bits(lowbit.mma(a_n, b_n, instruction=WGMMA_FP8)))
    e_t = lowbit.mma_explain(a_t, b_t, instruction=WGMMA_FP8, index=(3, 5))
    e_n = lowbit.mma_explain(a_n, b_n, instruction=WGMMA_FP8, index=(3, 5))
    assert e_t == e_n or (np.isnan(e_t["value"]) and e_t["result"] == e_n["result"])


def test_torch_errors_name_the_problem():
    a = torch.zeros(64, 32, dtype=torch.float8_e5m2)
    b = torch.zeros(32, 8, dtype=torch.float8_e4m3fn)
    with pytest.raises(ValueError, match=r"takes A in e4m3, got torch.float8_e5m2"):
        lowbit.mma(a, b, instruction=WGMMA_FP8)
    with pytest.raises(ValueError, match=r"takes A in e4m3, got torch.uint8 \(raw codes: name their format"):
        lowbit.mma(a.view(torch.uint8), b, instruction=WGMMA_FP8)
    with pytest.raises(ValueError, match=r"A with a_format holds raw codes \(unsigned integers\), got torch.float32"):
        lowbit.mma(a.float(), b, instruction=WGMMA_FP8, a_format="e4m3")
    with pytest.raises(ValueError, match=r"column_scales must be 8 float32 values, got float64"):
        lowbit.matmul_model(b.T.contiguous(), b.T.contiguous(),
                            {"instruction": WGMMA_FP8, "column_scales": torch.ones(8, dtype=torch.float64)})
