"""lowbit.tensor_core_weight and lowbit.gemv on PyTorch CUDA tensors (run by
scripts/gpu/python_check.sh on the GPU machine): weights packed once give
the `cuda-tc` rows' outputs bit for bit (those rows pack on every call;
lowbit_cuda_tests checks both against the matrix model), for M = 1..16,
a batch of weights, every output type and many calls back to back; bad input
gets one line. Skipped as a whole without torch, a GPU or the CUDA kernels."""

import pytest

torch = pytest.importorskip("torch")

import lowbit  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if not lowbit.build_info()["cuda"]:
    pytest.skip("this lowbit build has no CUDA kernels", allow_module_level=True)


def weights(shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, device="cuda", generator=g)


def bits(t):
    return t.view(torch.int32 if t.dtype == torch.float32 else torch.int16)


@pytest.mark.parametrize("recipe,layout", [("nvfp4:te", None), ("nvfp4:te", "g16"), ("mxfp4:ocp", None),
                                           ("mxfp8_e4m3:ocp", None), ("e4m3:te", "row")])
# K a multiple of 32: CUDA quantize takes whole groups, and the kernel takes
# flat blocks only when none runs across rows.
@pytest.mark.parametrize("shape", [(300, 2592), (1000, 8192), (2, 129, 4992)])
def test_packed_once_equals_the_cuda_tc_rows(recipe, layout, shape):
    if len(shape) == 3 and layout is None:
        layout = "g16" if recipe.startswith("nvfp4") else "g32"  # a batch takes per-row blocks
    q = lowbit.quantize(weights(shape, 1), recipe, layout=layout)
    packed = lowbit.tensor_core_weight(q)
    assert (packed.n, packed.k) == (shape[-2], shape[-1])
    assert packed.batch == (shape[0] if len(shape) == 3 else 1)
    g = torch.Generator(device="cuda").manual_seed(2)
    compared = 0
    for m in (16, 1, 3, 16):
        x = torch.randn(shape[:-2] + (m, shape[-1]), device="cuda", generator=g).to(torch.bfloat16)
        for out in ("float32", "bfloat16", "float16"):
            want = lowbit.gemv(q, x, out_dtype=out, backend="cuda-tc")
            got = lowbit.gemv(packed, x, out_dtype=out)
            assert got.dtype == want.dtype and got.shape == want.shape and got.is_cuda
            assert torch.equal(bits(got), bits(want)), (recipe, shape, m, out)
            compared += got.numel()
    assert compared > 0


def test_back_to_back_calls_on_the_current_stream():
    q = lowbit.quantize(weights((1024, 4096), 3), "nvfp4:te")
    packed = lowbit.tensor_core_weight(q)
    x = torch.randn((1, 4096), device="cuda").to(torch.bfloat16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        ys = [lowbit.gemv(packed, x, out_dtype="float32") for _ in range(50)]
    stream.synchronize()
    want = lowbit.gemv(q, x, out_dtype="float32", backend="cuda-tc")
    assert len(ys) == 50 and all(torch.equal(bits(y), bits(want)) for y in ys)


def test_a_layer_feeds_the_next():
    first = lowbit.quantize(weights((2048, 1024), 4), "nvfp4:te")
    second = lowbit.quantize(weights((512, 2048), 5), "mxfp4:ocp")
    p1, p2 = lowbit.tensor_core_weight(first), lowbit.tensor_core_weight(second)
    x = torch.randn((4, 1024), device="cuda").to(torch.bfloat16)
    hidden = lowbit.gemv(p1, x)  # bfloat16, written by the kernel just before the next call reads it
    y = lowbit.gemv(p2, hidden, out_dtype="float32")
    want = lowbit.gemv(second, lowbit.gemv(first, x, backend="cuda-tc"), out_dtype="float32", backend="cuda-tc")
    assert torch.equal(bits(y), bits(want))


def test_bad_input_gets_one_line():
    q = lowbit.quantize(weights((64, 256), 6), "nvfp4:te")
    packed = lowbit.tensor_core_weight(q)
    cases = [
        (lambda: lowbit.gemv(packed, torch.zeros((17, 256), device="cuda", dtype=torch.bfloat16)), "M = 1..16"),
        (lambda: lowbit.gemv(packed, torch.zeros((1, 255), device="cuda", dtype=torch.bfloat16)), "K = 256"),
        (lambda: lowbit.gemv(packed, torch.zeros((1, 256), device="cuda", dtype=torch.float16)), "bfloat16"),
        (lambda: lowbit.gemv(packed, torch.zeros((1, 256), dtype=torch.bfloat16)), "CUDA tensor"),
        (lambda: lowbit.gemv(packed, torch.zeros((1, 256), device="cuda", dtype=torch.bfloat16), backend="cuda"),
         "cuda-tc"),
        (lambda: lowbit.tensor_core_weight(lowbit.quantize(weights((64, 256), 7).cpu(), "nvfp4:te")), "CUDA device"),
        (lambda: lowbit.tensor_core_weight(lowbit.quantize(weights((64, 256), 8), "int4:ao-sym/g128")),
         "the tensor-core GEMV takes"),
    ]
    for call, words in cases:
        with pytest.raises((ValueError, TypeError)) as e:
            call()
        message = str(e.value)
        assert words in message and "\n" not in message, message
