"""PyTorch CPU tensors: zero-copy in, torch tensors out, torch's float8 and
float4 dtypes accepted and returned. Skipped as a whole where torch is not
installed (ctest shows the file as skipped: python/CMakeLists.txt)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lowbit  # noqa: E402


def test_encode_decode_cpu_tensors():
    x = torch.linspace(-500, 500, 1000, dtype=torch.float32)
    codes = lowbit.encode(x, "e4m3")
    assert isinstance(codes, torch.Tensor) and codes.dtype == torch.uint8
    np.testing.assert_array_equal(codes.numpy(), lowbit.encode(x.numpy(), "e4m3"))
    back = lowbit.decode(codes, "e4m3")
    assert back.dtype == torch.float32
    np.testing.assert_array_equal(back.numpy(), lowbit.decode(codes.numpy(), "e4m3"))


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                                   "float8_e8m0fnu"])
def test_torch_float8_dtypes_match_torch(dtype):
    if not hasattr(torch, dtype):
        pytest.skip(f"this torch has no {dtype}")
    tdt = getattr(torch, dtype)
    f = lowbit.formats[dtype]
    codes = torch.arange(256, dtype=torch.uint8).view(tdt)
    # The format from the tensor's dtype; torch's CPU cast is the pytorch-cpu
    # profile (e.g. the FNUZ NaN code 0x80 decodes to torch's own NaN bits).
    ours = lowbit.decode(codes, profile="pytorch-cpu")
    theirs = codes.to(torch.float32)
    np.testing.assert_array_equal(ours.numpy().view(np.uint32), theirs.numpy().view(np.uint32))
    x = torch.randn(4096) * 100
    ours_codes = lowbit.encode(x, f.name, profile="pytorch-cpu")
    np.testing.assert_array_equal(ours_codes.numpy(), x.to(tdt).view(torch.uint8).numpy())


def test_zero_copy_input_and_out():
    x = torch.randn(1 << 16)
    out = torch.empty(1 << 16, dtype=torch.uint8)
    ptr = out.data_ptr()
    res = lowbit.encode(x, "e5m2", out=out)
    assert res.data_ptr() == ptr


def test_torch_float4_x2_decodes_two_codes_per_byte():
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    packed = torch.tensor([[0x21, 0xF7]], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    # low nibble first: 0x1 (0.5), 0x2 (1.0), 0x7 (6.0), 0xF (-6.0)
    np.testing.assert_array_equal(lowbit.decode(packed).numpy(), [[0.5, 1.0, 6.0, -6.0]])
