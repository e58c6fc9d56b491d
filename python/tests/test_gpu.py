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
