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


def _torch_version():
    return tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])


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
    # torch 2.13 made the CPU cast to float8_e4m3fn saturate (pytorch/pytorch
    # PR #178817): that torch is the pytorch-cpu-2.15 profile (docs/profiles.md).
    profile = "pytorch-cpu-2.15" if _torch_version() >= (2, 13) else "pytorch-cpu"
    ours = lowbit.decode(codes, profile=profile)
    theirs = codes.to(torch.float32)
    np.testing.assert_array_equal(ours.numpy().view(np.uint32), theirs.numpy().view(np.uint32))
    # Seeded, with the values where the casts of torch versions differ
    # (finite overflow, +-Inf) in every run instead of by chance.
    gen = torch.Generator().manual_seed(20261125)
    specials = torch.tensor([500.0, -500.0, 464.0, -465.0, 1e6, float("inf"), float("-inf")])
    x = torch.cat([torch.randn(4096, generator=gen) * 100, specials])
    ours_codes = lowbit.encode(x, f.name, profile=profile)
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


# ---- codes returned as torch's own types (encode dtype= / out=) ----------------

@pytest.mark.parametrize("fmt,dtype", [("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2"),
                                       ("e4m3fnuz", "float8_e4m3fnuz"), ("e5m2fnuz", "float8_e5m2fnuz"),
                                       ("e8m0", "float8_e8m0fnu")])
def test_encode_returns_torch_float8_types(fmt, dtype):
    tdt = getattr(torch, dtype)
    x = torch.randn(3, 700) * 50
    x[0, :4] = torch.tensor([0.0, 1.0, float("nan"), 1e30])
    plain = lowbit.encode(x, fmt)
    typed = lowbit.encode(x, fmt, dtype=tdt)
    assert typed.dtype == tdt and typed.shape == x.shape
    np.testing.assert_array_equal(typed.view(torch.uint8).numpy(), plain.numpy())
    # decode takes the typed tensor back without a format name
    np.testing.assert_array_equal(lowbit.decode(typed).numpy().view(np.uint32),
                                  lowbit.decode(plain, fmt).numpy().view(np.uint32))
    out = torch.empty(x.shape, dtype=tdt)
    ptr = out.data_ptr()
    res = lowbit.encode(x, fmt, out=out)
    assert res.data_ptr() == ptr and res.dtype == tdt
    np.testing.assert_array_equal(out.view(torch.uint8).numpy(), plain.numpy())


def test_encode_to_torch_e8m0fnu_agrees_with_torch_on_powers_of_two():
    # Powers of two are exact in E8M0: torch's own cast and lowbit agree.
    x = torch.tensor([2.0 ** e for e in range(-127, 128)], dtype=torch.float32)
    ours = lowbit.encode(x, "e8m0", dtype=torch.float8_e8m0fnu)
    np.testing.assert_array_equal(ours.view(torch.uint8).numpy(), x.to(torch.float8_e8m0fnu).view(torch.uint8).numpy())


def test_encode_packs_torch_float4_x2():
    # c10/util/Float4_e2m1fn_x2.h: the first code in the low nibble. E2M1
    # codes: 0.5 -> 0x1, 1.0 -> 0x2, 6.0 -> 0x7, -6.0 -> 0xF.
    x = torch.tensor([[0.5, 1.0, 6.0, -6.0]])
    packed = lowbit.encode(x, "e2m1", dtype=torch.float4_e2m1fn_x2)
    assert packed.dtype == torch.float4_e2m1fn_x2 and tuple(packed.shape) == (1, 2)
    assert packed.view(torch.uint8).tolist() == [[0x21, 0xF7]]


def test_encode_float4_x2_round_trips_and_fills_out():
    x = torch.randn(5, 6, 64) * 4
    plain = lowbit.encode(x, "e2m1")
    packed = lowbit.encode(x, "fp4_e2m1", dtype=torch.float4_e2m1fn_x2)
    assert tuple(packed.shape) == (5, 6, 32)
    np.testing.assert_array_equal(lowbit.decode(packed).numpy(), lowbit.decode(plain, "e2m1").numpy())
    out = torch.empty(5, 6, 32, dtype=torch.float4_e2m1fn_x2)
    ptr = out.data_ptr()
    res = lowbit.encode(x, "e2m1", out=out)
    assert res.data_ptr() == ptr
    np.testing.assert_array_equal(out.view(torch.uint8).numpy(), packed.view(torch.uint8).numpy())


def test_encode_torch_dtype_errors():
    x = torch.randn(4, 3)
    with pytest.raises(TypeError, match="does not hold e4m3"):
        lowbit.encode(x, "e4m3", dtype=torch.float8_e5m2)
    with pytest.raises(TypeError, match="E2M1 codes, not e4m3"):
        lowbit.encode(x, "e4m3", dtype=torch.float4_e2m1fn_x2)
    with pytest.raises(ValueError, match="last dimension must be even"):
        lowbit.encode(x, "e2m1", dtype=torch.float4_e2m1fn_x2)
    with pytest.raises(ValueError, match="need"):
        lowbit.encode(torch.randn(4, 4), "e2m1", out=torch.empty(4, 4, dtype=torch.float4_e2m1fn_x2))
    with pytest.raises(TypeError, match="does not hold e5m2"):
        lowbit.encode(x, "e5m2", out=torch.empty(4, 3, dtype=torch.float8_e4m3fn))
    with pytest.raises(TypeError, match="torch.dtype"):
        lowbit.encode(x, "e4m3", dtype=np.uint8)


def test_quantize_cpu_tensor_equals_numpy():
    x = torch.randn(4, 64)
    q = lowbit.quantize(x, "mxfp4:ocp")
    r = lowbit.quantize(x.numpy(), "mxfp4:ocp")
    np.testing.assert_array_equal(q.packed, r.packed)
    np.testing.assert_array_equal(q.scale_codes, r.scale_codes)


def test_vllm_kv_calibration_scale_is_the_cuda_arithmetic_not_the_cpu_one():
    # e4m3:vllm-kv-calc-k reproduces vLLM's calc_kv_scales as it runs on a
    # GPU: torch.abs(key).max() / k_range with k_range a CPU float32 tensor,
    # which ATen's CUDA division turns into amax * fp32(1 / 200)
    # (docs/profiles.md). On a CPU tensor torch divides instead: for amax 5
    # that is one ulp higher. test_gpu.py checks the CUDA side on the GPU machine.
    x = torch.tensor([5.0, -5.0, 2.5, 1.0])
    k_range = torch.tensor(200, dtype=torch.float32)  # vLLM: torch.tensor(envs.K_SCALE_CONSTANT, dtype=torch.float32)
    cpu_division = torch.abs(x).max() / k_range
    reciprocal_product = torch.abs(x).max() * (torch.tensor(1.0) / k_range)
    q = lowbit.quantize(x.numpy(), "e4m3:vllm-kv-calc-k")
    lowbit_scale = int(np.asarray(q.scales, np.float32).view(np.uint32)[0])
    assert cpu_division.view(torch.int32).item() == 0x3CCCCCCD
    assert reciprocal_product.view(torch.int32).item() == 0x3CCCCCCC
    assert lowbit_scale == 0x3CCCCCCC
    # 5 / scale = 200.0000153 lies above E4M3's tie at 200: 208 (0x75).
    assert q.codes.tolist() == [0x75, 0xF5, 0x6D, 0x62]
