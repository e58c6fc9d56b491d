"""PyTorch CUDA tensors (run by scripts/gpu/python_check.sh on the GPU
machine): results equal to the CPU path, no copies (the output is the
tensor given with out=, the input is read in place), the current stream
respected. Skipped as a whole without torch, a GPU or the CUDA kernels."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lowbit  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if not lowbit.build_info()["cuda"]:
    pytest.skip("this lowbit build has no CUDA kernels", allow_module_level=True)

FORMATS = [f for f in lowbit.formats if f not in ("fp64",)]


def rand(n, dtype=torch.float32, scale=100.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g) * scale
    x[:8] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 448.0, 57344.0, 1e-40])
    return x.to(dtype)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_encode_equals_cpu(fmt, dtype):
    x = rand(100_003, dtype)
    gpu = lowbit.encode(x.cuda(), fmt)
    assert gpu.is_cuda
    cpu = lowbit.encode(x, fmt)
    np.testing.assert_array_equal(gpu.cpu().numpy(), cpu.numpy())


# Every code of each format of at most 16 bits (FP32 codes are covered by
# test_encode_equals_cpu, whose decode side is the identity).
@pytest.mark.parametrize("fmt", [name for name in FORMATS if lowbit.formats[name].bits <= 16])
def test_decode_equals_cpu(fmt):
    f = lowbit.formats[fmt]
    n = 1 << f.bits
    codes = torch.arange(n, dtype=torch.int32).to(torch.uint8 if f.bits <= 8 else torch.int16)
    gpu = lowbit.decode(codes.cuda(), fmt)
    cpu = lowbit.decode(codes, fmt)
    np.testing.assert_array_equal(gpu.cpu().numpy().view(np.uint32), cpu.numpy().view(np.uint32))


def test_no_copies():
    x = rand(1 << 20).cuda()
    out = torch.empty(x.shape, dtype=torch.uint8, device="cuda")
    in_ptr, out_ptr = x.data_ptr(), out.data_ptr()
    res = lowbit.encode(x, "e4m3", out=out)
    assert res.data_ptr() == out_ptr and x.data_ptr() == in_ptr
    # The result is written through the output pointer itself: a view of it
    # (another tensor object on the same memory) sees the codes.
    alias = torch.as_strided(out, out.shape, out.stride())
    np.testing.assert_array_equal(alias.cpu().numpy(), lowbit.encode(x.cpu(), "e4m3").numpy())
    back = torch.empty(x.shape, dtype=torch.float32, device="cuda")
    ptr = back.data_ptr()
    assert lowbit.decode(res, "e4m3", out=back).data_ptr() == ptr


def test_torch_float8_dtypes_on_gpu():
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("torch without float8")
    x = rand(4096).cuda()
    codes = lowbit.encode(x, "e4m3", profile=None)
    f8 = codes.view(torch.float8_e4m3fn)
    back = lowbit.decode(f8)
    assert back.is_cuda and back.dtype == torch.float32
    # Values (NaN equal to NaN): the GPU decode's NaN bits are the nvidia rule's, not torch's.
    np.testing.assert_array_equal(back.cpu().numpy(), f8.to(torch.float32).cpu().numpy())


def test_current_stream_is_respected():
    """Work queued on a side stream: the encode runs on that stream after the
    producer kernel, so it sees the produced values without a synchronize."""
    s = torch.cuda.Stream()
    n = 1 << 22
    with torch.cuda.stream(s):
        x = torch.full((n,), 3.0, device="cuda")
        for _ in range(20):  # a long producer on s
            x = x * 1.0
        x.fill_(448.0)
        codes = lowbit.encode(x, "e4m3")
    s.synchronize()
    assert int(codes.min()) == int(codes.max()) == 0x7E


def test_gpu_and_threads():
    import threading

    xs = [rand(1 << 18, seed=i).cuda() for i in range(4)]
    want = [lowbit.encode(x.cpu(), "e5m2").numpy() for x in xs]
    got = [None] * 4

    def work(i):
        with torch.cuda.stream(torch.cuda.Stream()):
            got[i] = lowbit.encode(xs[i], "e5m2")
            torch.cuda.current_stream().synchronize()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.cpu().numpy(), w)


# ---- codes as torch's own types on the GPU ---------------------------------------

@pytest.mark.parametrize("fmt,dtype", [("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2"),
                                       ("e8m0", "float8_e8m0fnu"), ("e2m1", "float4_e2m1fn_x2")])
def test_encode_to_torch_types_on_gpu(fmt, dtype):
    tdt = getattr(torch, dtype)
    x = rand(3 * 4096).reshape(3, 4096)
    gpu = lowbit.encode(x.cuda(), fmt, dtype=tdt)
    assert gpu.is_cuda and gpu.dtype == tdt
    cpu = lowbit.encode(x, fmt, dtype=tdt)
    np.testing.assert_array_equal(gpu.view(torch.uint8).cpu().numpy(), cpu.view(torch.uint8).numpy())
    back = lowbit.decode(gpu)
    assert back.is_cuda
    np.testing.assert_array_equal(back.cpu().numpy(), lowbit.decode(cpu).numpy())


# ---- recipes: quantize / dequantize of CUDA tensors ------------------------------
#
# The recipes a CUDA tensor runs on the GPU are the registry's "cuda" recipe
# rows (cuda/src/register_backends.cc); every one is compared with the CPU
# path (the SIMD or scalar row: the model) buffer for buffer, bit for bit.

CUDA_ROWS = lowbit._lowbit.recipe_rows_of("cuda")
QUANTIZE_ON_GPU = sorted({r for op, r in CUDA_ROWS if op == "quantize-recipe"})
DEQUANTIZE_ON_GPU = {r for op, r in CUDA_ROWS if op == "dequantize-recipe"}
SHAPES = [(4, 256), (3, 384), (2, 1024)]


def recipe_input(rows, cols, seed):
    x = rand(rows * cols, seed=seed, scale=10.0).reshape(rows, cols)
    x[0, :8] = torch.tensor([0.0, -0.0, 1e-30, -2.5, 448.0, 6.0, 0.75, -1e4])
    return x


def bits(t):
    a = (t.cpu() if hasattr(t, "cpu") else t)
    a = a.numpy() if hasattr(a, "numpy") else np.asarray(a)
    return np.ascontiguousarray(a).view(np.uint8)


def assert_same_buffers(gpu, cpu, what):
    assert gpu.is_cuda and not cpu.is_cuda
    for field in ("packed", "scale_codes", "scales", "zero_points"):
        g, c = getattr(gpu, field), getattr(cpu, field)
        assert (g is None) == (c is None), f"{what} {field}"
        if g is not None:
            assert g.is_cuda, f"{what} {field} left the device"
            np.testing.assert_array_equal(bits(g), bits(c), err_msg=f"{what} {field}")
    if cpu.tensor_scale is None:
        assert gpu.tensor_scale is None
    else:
        np.testing.assert_array_equal(bits(gpu.tensor_scale), bits(np.array(cpu.tensor_scale, np.float32)),
                                      err_msg=f"{what} tensor_scale")


def test_every_gpu_recipe_row_is_listed():
    # The CUDA build registers rows of every kernel family (register.h).
    assert any(r.startswith("mx") for r in QUANTIZE_ON_GPU) and "nvfp4:te" in QUANTIZE_ON_GPU
    assert any(r.startswith("int4") for r in DEQUANTIZE_ON_GPU) and any(r.startswith("e4m3:te") for r in QUANTIZE_ON_GPU)


@pytest.mark.parametrize("name", QUANTIZE_ON_GPU)
def test_quantize_equals_cpu(name):
    for k, (rows, cols) in enumerate(SHAPES):
        x = recipe_input(rows, cols, seed=k)
        what = f"{name} {rows}x{cols}"
        q_gpu = lowbit.quantize(x.cuda(), name)
        q_cpu = lowbit.quantize(x, name)
        assert_same_buffers(q_gpu, q_cpu, what)
        assert q_gpu.layout == q_cpu.layout and q_gpu.shape == q_cpu.shape
        np.testing.assert_array_equal(q_gpu.codes.cpu().numpy(), q_cpu.codes, err_msg=what)
        if name in DEQUANTIZE_ON_GPU:
            back = q_gpu.dequantize()
            assert back.is_cuda and back.shape == x.shape
            np.testing.assert_array_equal(bits(back), bits(q_cpu.dequantize()), err_msg=what)
            # lowbit.dequantize from the buffers (torch CUDA tensors) as well
            again = lowbit.dequantize(q_gpu.packed, name, shape=x.shape, scale_codes=q_gpu.scale_codes,
                                      scales=None if q_gpu.scale_codes is not None else q_gpu.scales,
                                      zero_points=q_gpu.zero_points, tensor_scale=q_gpu.tensor_scale)
            assert again.is_cuda
            np.testing.assert_array_equal(bits(again), bits(back), err_msg=what)


@pytest.mark.parametrize("profile,value_range", [("vllm-kv-calc-k", 200), ("vllm-kv-calc-v", 100)])
def test_vllm_kv_calibration_equals_torch_on_cuda(profile, value_range):
    # vLLM's calc_kv_scales on a CUDA key / value (vllm/attention/layer.py
    # @004a5da0): torch.abs(x).max() / a CPU float32 range tensor, then the KV
    # cache's x / scale converted with __NV_SATFINITE (clamp to +-448, then
    # torch's cast, for these finite inputs). Scale bits and codes must equal
    # e4m3:vllm-kv-calc-k / -v on the host.
    g = torch.Generator().manual_seed(11)
    for trial in range(64):
        magnitude = float(2.0 ** torch.randint(-30, 30, (1,), generator=g).item())
        x = (torch.randn(4096, generator=g) * magnitude).to(torch.bfloat16).float()
        x[trial % 4096] = 5.0 * magnitude  # amaxes like 5 * 2^k, where amax / range and amax * fp32(1 / range) differ
        on_gpu = x.cuda()
        scale = torch.abs(on_gpu).max() / torch.tensor(value_range, dtype=torch.float32)
        codes = (on_gpu / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).view(torch.uint8)
        q = lowbit.quantize(x.numpy(), "e4m3:" + profile)
        assert scale.is_cuda
        np.testing.assert_array_equal(bits(scale.reshape(1)), bits(q.scales), err_msg=f"{profile} trial {trial}")
        np.testing.assert_array_equal(codes.cpu().numpy(), q.codes, err_msg=f"{profile} trial {trial}")


def test_quantize_along_an_axis_equals_cpu():
    x = rand(2 * 64 * 3, scale=5.0).reshape(2, 64, 3)
    q_gpu = lowbit.quantize(x.cuda(), "mxfp8_e4m3:ocp", axis=1)
    q_cpu = lowbit.quantize(x, "mxfp8_e4m3:ocp", axis=1)
    assert_same_buffers(q_gpu, q_cpu, "axis=1")
    back = q_gpu.dequantize()
    assert tuple(back.shape) == (2, 64, 3)
    np.testing.assert_array_equal(bits(back), bits(q_cpu.dequantize()))
    e_gpu, e_cpu = q_gpu.error(), q_cpu.error()
    assert e_gpu["mse_exact"] == e_cpu["mse_exact"]


def kernel_arguments(monkeypatch, name):
    """Records the data pointers that lowbit hands to the extension."""
    seen = []
    real = getattr(lowbit._lowbit, name)

    def spy(*args, **kwargs):
        seen.append([a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args])
        return real(*args, **kwargs)

    monkeypatch.setattr(lowbit._lowbit, name, spy)
    return seen


def test_quantize_is_zero_copy(monkeypatch):
    """The kernel reads x's own memory and writes the very tensors returned;
    no memory copy (host or device) runs, while the profiler does see one
    where there is one (so the check cannot pass by seeing nothing)."""
    from torch.profiler import ProfilerActivity, profile

    x = recipe_input(8, 1024, seed=3).cuda()
    seen = kernel_arguments(monkeypatch, "quantize")
    lowbit.quantize(x, "uint4:ao-asym/g128")  # warm-up: allocator, kernels loaded
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        q = lowbit.quantize(x, "uint4:ao-asym/g128")
        torch.cuda.synchronize()
    copies = [e.name for e in prof.events() if "memcpy" in e.name.lower()]
    assert copies == [], copies
    with profile(activities=[ProfilerActivity.CUDA]) as control:
        x.cpu()
        torch.cuda.synchronize()
    assert any("memcpy" in e.name.lower() for e in control.events()), "the profiler records no copies here"
    args = seen[-1]
    assert args[0] == x.data_ptr()  # x2: a view of x, contiguous already
    assert args[5] == q.packed.data_ptr() and args[7] == q.scales.data_ptr() and args[8] == q.zero_points.data_ptr()


def test_dequantize_is_zero_copy(monkeypatch):
    x = recipe_input(4, 256, seed=4).cuda()
    q = lowbit.quantize(x, "mxfp4:te")
    seen = kernel_arguments(monkeypatch, "dequantize")
    back = q.dequantize()
    args = seen[-1]
    assert args[4] == q.packed.data_ptr() and args[5] == q.scale_codes.data_ptr()
    assert args[9] == back.data_ptr()


def test_quantize_runs_on_the_current_stream_without_waiting():
    """On a side stream: a long kernel, then the producer of x, then
    quantize. quantize returns while the stream is still busy (nothing waits
    for the GPU) and, once the stream is done, the result is that of the
    produced values (its kernels ran behind the producer on that stream)."""
    name = "nvfp4:te"
    want = lowbit.quantize(torch.full((4, 256), 3.5), name)
    # Warm-up: the first launch of a kernel may load its module, which can wait.
    lowbit.quantize(torch.ones((4, 256), device="cuda"), name).dequantize()
    torch.cuda._sleep(1000)
    s = torch.cuda.Stream()
    x = torch.zeros((4, 256), device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(int(2e9))  # ~1 s of spinning on s
        x.fill_(3.5)
        q = lowbit.quantize(x, name)
        back = q.dequantize()
        busy = not s.query()
    s.synchronize()
    assert busy, "quantize waited for the stream"
    assert_same_buffers(q, want, "side stream")
    np.testing.assert_array_equal(bits(back), bits(want.dequantize()))


class _Foreign:
    """A device array of another library, seen only through DLPack."""

    def __init__(self, t):
        self._t = t
        self.shape = tuple(t.shape)

    def __dlpack__(self, **kwargs):
        return self._t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._t.__dlpack_device__()


def test_quantize_of_a_dlpack_device_array(monkeypatch):
    x = recipe_input(4, 256, seed=5).cuda()
    seen = kernel_arguments(monkeypatch, "quantize")
    q = lowbit.quantize(_Foreign(x), "mxfp6_e3m2:te")
    assert seen[-1][0] == x.data_ptr()  # read in place
    assert_same_buffers(q, lowbit.quantize(x.cpu(), "mxfp6_e3m2:te"), "dlpack")
    back = lowbit.dequantize(_Foreign(q.packed), "mxfp6_e3m2:te", shape=x.shape, scale_codes=_Foreign(q.scale_codes))
    np.testing.assert_array_equal(bits(back), bits(q.dequantize()))


def test_quantize_errors_on_gpu():
    x = recipe_input(4, 256, seed=6).cuda()
    with pytest.raises(ValueError, match="no GPU kernel"):
        lowbit.quantize(x, "e4m3:te/g128")  # TE FP8 has kernels per tensor and per row only
    with pytest.raises(ValueError, match="CPU only"):
        lowbit.quantize(x, "nvfp4:te", tensor_scale=100.0)
    with pytest.raises(TypeError, match="float32"):
        lowbit.quantize(x.half(), "mxfp4:ocp")
    q = lowbit.quantize(x, "e4m3:te/row")
    with pytest.raises(ValueError, match="no GPU kernel"):  # TE FP8: quantize kernels only
        q.dequantize()
    with pytest.raises(ValueError, match="NaN"):
        lowbit.dequantize(q.packed, "int8:ao-sym/row", shape=x.shape,
                          scales=torch.full((4,), float("nan"), device="cuda"))
