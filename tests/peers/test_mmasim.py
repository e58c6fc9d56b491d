"""lowbit's tensor-core model against MMA-Sim (mmasim 2.1.1, requirements-peers.txt)
on the CPU, bit for bit, one output dot product per case.

Every instruction both model is compared: mma.sync m16n8k16 BF16/FP16 (FP32
and FP16 accumulators), m16n8k8 TF32, and all twelve wgmma instructions
(MMA-Sim's WGMMA at n = 8: the arithmetic of an output does not depend on N).
MMA-Sim 2.1.1 has no Hopper FP8 mma.sync (ptxas lowers it to FP16 MMAs on
sm_90, lowbit models that lowering) and no INT8 MMA; both absences are
asserted here, so a release that adds them shows up as a failure to extend
this file. Each instruction gets CASES cases drawn by tensor_core_cases.py
(boundary-biased families, fixed seeds), through lowbit.mma_dot and
MMA-Sim's ``dpa``.

NaN: MMA-Sim returns torch's NaN (its payload is not the hardware's), lowbit
the datapath's NaN code (0x7FFFFFFF / 0x7FFF, pinned in
python/tests/test_tensor_core.py); a NaN result matches a NaN result.
Everything else is compared bit for bit, and every mismatch is printed with
its operands.

A negative non-zero sum whose magnitude rounds to zero in the output format
(products just below the smallest subnormal) is +0 in both: MMA-Sim 2.1.1
adds +0.0 to every result (arithmetic/fdpa.py t_fdpa), and so does the
model's step 7 (docs/tensor-cores.md says what the hardware did).
test_underflow_to_zero_is_positive builds such sums on purpose.
"""

import time

import numpy as np
import pytest

from conftest import require

torch = require("torch")
mmasim = require("mmasim")
import lowbit  # noqa: E402
from mmasim.nv_ptx import MMA, WGMMA  # noqa: E402

import tensor_core_cases  # noqa: E402

CASES = 100_000
SHOWN = 5  # mismatches printed per instruction

TORCH_TYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "e4m3": torch.float8_e4m3fn,
               "e5m2": torch.float8_e5m2}
TORCH_CODES = {1: torch.uint8, 2: torch.int16, 4: torch.int32}
NUMPY_CODES = {8: np.uint8, 16: np.uint16, 32: np.uint32}


def mmasim_name(inst) -> str:
    """MMA-Sim's shape-and-type string for a lowbit instruction name
    ("mma.m16n8k16.f32.bf16.bf16" -> "m16n8k16.f32.bf16.bf16.f32",
    "wgmma.m64nNk32.f32.e4m3.e4m3" -> "m64n8k32.f32.e4m3.e4m3")."""
    kind, shape, d, a, b = inst.name.split(".")
    if kind == "wgmma":
        return f"{shape.replace('nN', 'n8')}.{d}.{a}.{b}"
    return f"{shape}.{d}.{a}.{b}.{d}"


def shared_instructions():
    table = lowbit.tensor_core_instructions()
    return [i for i in table.values()
            if i.accumulator != "int32" and not (i.a_widened_to_fp16 or i.b_widened_to_fp16)]


def peer(inst):
    return (WGMMA if inst.kind == "wgmma" else MMA)("Hopper", mmasim_name(inst))


def test_the_instructions_left_out_are_the_ones_mmasim_lacks():
    table = lowbit.tensor_core_instructions()
    left_out = [i for i in table.values() if i not in shared_instructions()]
    assert len(shared_instructions()) == 16 and len(left_out) == 9
    for inst in left_out:
        with pytest.raises(AssertionError, match="Unsupported shape_and_type"):
            peer(inst)


def as_torch(codes: np.ndarray, fmt: str):
    bits = lowbit.formats[fmt].bits
    t = torch.from_numpy(codes.astype(NUMPY_CODES[bits]).view(np.dtype(f"i{bits // 8}")))
    return t.view(TORCH_CODES[bits // 8]).view(TORCH_TYPES[fmt])


def output_codes(t) -> np.ndarray:
    t = t.contiguous()
    return t.view(TORCH_CODES[t.element_size()]).numpy().view(np.dtype(f"u{t.element_size()}"))


@pytest.mark.parametrize("inst", shared_instructions(), ids=lambda i: i.name)
def test_bit_for_bit_with_mmasim(inst):
    rng = np.random.default_rng(sum(inst.name.encode()))
    families = tensor_core_cases.FAMILIES
    per = -(-CASES // len(families))
    parts = [tensor_core_cases.draw(rng, f, per, inst.k, inst.a_format, inst.b_format, inst.accumulator)
             for f in families]
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    c = np.concatenate([p[2] for p in parts])
    family = np.repeat(np.arange(len(families)), per)
    assert len(c) >= CASES

    start = time.perf_counter()
    ours = lowbit.mma_dot(a, b, c, instruction=inst.name, a_format=inst.a_format, b_format=inst.b_format,
                          c_format=inst.accumulator)
    lowbit_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = peer(inst).dpa(as_torch(a, inst.a_format), as_torch(b, inst.b_format), as_torch(c, inst.accumulator))
    mmasim_s = time.perf_counter() - start

    ours_bits = ours.view(np.dtype(f"u{ours.dtype.itemsize}"))
    theirs_bits = output_codes(theirs)
    ours_nan, theirs_nan = np.isnan(ours.astype(np.float32)), np.isnan(theirs.float().numpy())
    same = np.where(ours_nan | theirs_nan, ours_nan & theirs_nan, ours_bits == theirs_bits)
    bad = np.flatnonzero(~same)
    print(f"{inst.name}: {len(c)} cases, {int(ours_nan.sum())} NaN, {len(bad)} mismatches; "
          f"lowbit {lowbit_s:.2f} s, mmasim {mmasim_s:.2f} s")
    for i in bad[:SHOWN]:
        print(f"  case {i} ({families[family[i]]}): lowbit {int(ours_bits[i]):#x} mmasim {int(theirs_bits[i]):#x}\n"
              f"    a = {[hex(int(x)) for x in a[i]]}\n    b = {[hex(int(x)) for x in b[i]]}\n    c = {int(c[i]):#x}")
    counts = {families[f]: int(np.sum(family[bad] == f)) for f in np.unique(family[bad])}
    assert bad.size == 0, f"{inst.name}: {bad.size} of {len(c)} cases differ from mmasim 2.1.1 (by family: {counts})"


@pytest.mark.parametrize("name, a, b", [
    # -2^-75 * 2^-75 = -2^-150: on the 2^(-133-25) grid (zero terms sit at
    # 2^-133), below FP32's smallest subnormal 2^-149, truncated to zero.
    ("mma.m16n8k16.f32.bf16.bf16", -(2.0 ** -75), 2.0 ** -75),
    # -2^-14 * 2^-14 = -2^-28: below half of FP16's smallest subnormal 2^-24.
    ("wgmma.m64nNk16.f16.f16.f16", -(2.0 ** -14), 2.0 ** -14),
])
def test_underflow_to_zero_is_positive(name, a, b):
    inst = lowbit.tensor_core_instructions()[name]
    a_codes = np.zeros((1, inst.k), np.uint64)
    b_codes = np.zeros((1, inst.k), np.uint64)
    a_codes[0, 0] = lowbit.encode(np.array([a]), inst.a_format)[0]
    b_codes[0, 0] = lowbit.encode(np.array([b]), inst.b_format)[0]
    c_codes = np.zeros(1, np.uint64)
    ours = lowbit.mma_dot(a_codes, b_codes, c_codes, instruction=name, a_format=inst.a_format,
                          b_format=inst.b_format, c_format=inst.accumulator)
    theirs = peer(inst).dpa(as_torch(a_codes, inst.a_format), as_torch(b_codes, inst.b_format),
                            as_torch(c_codes, inst.accumulator))
    assert int(ours.view(np.dtype(f"u{ours.dtype.itemsize}"))[0]) == 0
    assert int(output_codes(theirs)[0]) == 0
