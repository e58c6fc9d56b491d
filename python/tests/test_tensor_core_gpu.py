"""lowbit.matmul_model on PyTorch CUDA tensors (the model on the GPU,
lowbit::cuda ModelMatmulOnDevice): bit for bit the CPU path's results for
every instruction and a set of schedules, the result on the input's device in
the output's type; the host-only functions refuse CUDA tensors. Skipped as a
whole without torch, a GPU or the CUDA kernels (run on the GPU machine)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lowbit  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if not lowbit.build_info()["cuda"]:
    pytest.skip("this lowbit build has no CUDA kernels", allow_module_level=True)

TORCH_TYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2, "bf16": torch.bfloat16,
               "fp16": torch.float16, "fp32": torch.float32, "int8": torch.int8}
CODE = {1: torch.uint8, 2: torch.int16, 4: torch.int32}


def random_operand(fmt, shape, seed):
    t = TORCH_TYPES[fmt]
    size = torch.empty(0, dtype=t).element_size()
    g = torch.Generator().manual_seed(seed)
    codes = torch.randint(-(1 << (8 * size - 1)), 1 << (8 * size - 1), shape, generator=g, dtype=torch.int64)
    return codes.to({1: torch.int8, 2: torch.int16, 4: torch.int32}[size]).view(t)


def bits(t):
    t = t.cpu().contiguous()
    return t.view(CODE[t.element_size()]).numpy()


SCHEDULES = [{}, {"promotion_interval": 128}, {"split_k": 3}, {"split_k": 5, "split_reduction": "pairwise"},
             {"output": "bf16", "alpha": 0.5}, {"output": "fp16", "column_scales": True}]


# Integer instructions take the plain schedule only (no promotion, split,
# scale or conversion: accumulation_schedule.h ScheduleProblem).
CASES = [(name, extra) for name, inst in sorted(lowbit.tensor_core_instructions().items())
         for extra in range(len(SCHEDULES)) if inst.accumulator != "int32" or extra == 0]


@pytest.mark.parametrize("name, extra", CASES)
def test_matmul_model_on_cuda_equals_cpu(name, extra):
    inst = lowbit.tensor_core_instructions()[name]
    s = dict(SCHEDULES[extra], instruction=name)
    if "promotion_interval" in s:
        s["promotion_interval"] = 4 * inst.k
    x = random_operand(inst.a_format, (37, 300), seed=extra)
    w = random_operand(inst.b_format, (70, 300), seed=100 + extra)
    if s.pop("column_scales", False):
        s["column_scales"] = torch.linspace(0.25, 4, 70, dtype=torch.float32)
    cpu = lowbit.matmul_model(x, w, s, threads=2)
    if "column_scales" in s:
        s["column_scales"] = s["column_scales"].cuda()
    gpu = lowbit.matmul_model(x.cuda(), w.cuda(), s)
    assert gpu.is_cuda and gpu.dtype == cpu.dtype and gpu.shape == cpu.shape
    np.testing.assert_array_equal(bits(gpu), bits(cpu))


def test_host_only_functions_refuse_cuda_tensors():
    a = torch.zeros(64, 32, dtype=torch.float8_e4m3fn, device="cuda")
    b = torch.zeros(32, 8, dtype=torch.float8_e4m3fn, device="cuda")
    with pytest.raises(ValueError, match="A is a CUDA tensor: lowbit.mma, mma_dot and mma_explain run on the CPU"):
        lowbit.mma(a, b, instruction="wgmma.m64nNk32.f32.e4m3.e4m3")
    with pytest.raises(ValueError, match="x is a CUDA tensor, w is not"):
        lowbit.matmul_model(a, b.T.cpu(), "wgmma.m64nNk32.f32.e4m3.e4m3")
    with pytest.raises(ValueError, match="column_scales must be a CUDA tensor on x's device"):
        lowbit.matmul_model(a, a, {"instruction": "wgmma.m64nNk32.f32.e4m3.e4m3",
                                   "column_scales": torch.ones(64)})
