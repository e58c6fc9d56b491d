"""The packing layouts of docs/layouts.md against the live libraries on the
CPU:

- torch's `_convert_weight_to_int4pack_for_cpu` under each instruction set
  torch dispatches to (ATEN_CPU_CAPABILITY=avx512 / avx2 / default, each in
  its own process; one the CPU lacks is skipped by name) against lowbit's
  torch-cpu-int4pack-* layouts, pack and unpack;
- `_weight_int4pack_mm_for_cpu` on lowbit-packed weights with exact scales:
  the dequantized weight is (q - 8) * scale + zero, the convention
  tinygemm_int4pack.h states;
- torchao's `to_blocked` (mx_formats/utils.py) against the swizzled-scales
  layout, pack and unpack;
- the shape torch's CUDA `_convert_weight_to_int4pack` gives on the meta
  device against the size of lowbit's tinygemm-int4pack-k* layouts (the bits
  are compared on the GPU machine: scripts/gpu/int4pack_check.py).

Marlin has no package here: its layout is tested from source
(proptests/model/packing_layout_test.cc, IST-DASLab/marlin at a commit).
lowbit's side is the model's registry rows through tests/peers/layout_dump.cc
(LOWBIT_LAYOUT_DUMP, set by tests/peers/CMakeLists.txt)."""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from conftest import require

torch = require("torch")

DUMP = os.environ.get("LOWBIT_LAYOUT_DUMP", "")


def lowbit(layout: str, direction: str, rows: int, cols: int, data: np.ndarray) -> np.ndarray:
    """lowbit's pack (codes -> packed bytes) or unpack (packed bytes -> codes)."""
    if not DUMP or not pathlib.Path(DUMP).is_file():
        pytest.fail(f"LOWBIT_LAYOUT_DUMP does not name the built lowbit_layout_dump ({DUMP!r}); "
                    "run this file through ctest", pytrace=False)
    with tempfile.TemporaryDirectory() as d:
        src, dst = pathlib.Path(d, "in.bin"), pathlib.Path(d, "out.bin")
        src.write_bytes(np.ascontiguousarray(data).tobytes())
        r = subprocess.run([DUMP, layout, direction, str(rows), str(cols), str(src), str(dst)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return np.frombuffer(dst.read_bytes(), dtype=np.uint8)


def codes(rows: int, cols: int, seed: int, high: int = 16) -> np.ndarray:
    """Random codes with the boundary codes 0 and high - 1 in whole rows."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, high, size=(rows, cols), dtype=np.uint8)
    q[0, :] = high - 1
    if rows > 1:
        q[-1, :] = 0
    return q


# ---- torch CPU int4pack, per instruction set --------------------------------

CPU_SHAPES = [(n, k) for n in (16, 32, 48, 64, 80, 96, 128, 160, 192) for k in (2, 4, 34, 64)]

# Runs in a process started with ATEN_CPU_CAPABILITY: torch picks its kernel
# at the first dispatch, so each instruction set needs its own interpreter.
CPU_PACK_SCRIPT = r"""
import json, sys, numpy as np, torch
out = sys.argv[1]
shapes = json.loads(sys.argv[2])
res = {"capability": torch.backends.cpu.get_cpu_capability()}
for i, (n, k) in enumerate(shapes):
    q = np.load(f"{out}/q{i}.npy")
    res[str(i)] = torch.ops.aten._convert_weight_to_int4pack_for_cpu(
        torch.from_numpy(q.astype(np.int32)), 2).numpy().tobytes().hex()
json.dump(res, open(f"{out}/packed.json", "w"))
"""


ISAS = ["avx512", "avx2", "default"]


@pytest.fixture(scope="module")
def cpu_packings():
    """torch's packing of every CPU_SHAPES matrix under each instruction set,
    the three interpreters run at once (each import of torch takes seconds)."""
    qs = [codes(n, k, seed=n * 1000 + k) for n, k in CPU_SHAPES]
    with tempfile.TemporaryDirectory() as d:
        procs = {}
        for isa in ISAS:
            os.makedirs(f"{d}/{isa}")
            for i, q in enumerate(qs):
                np.save(f"{d}/{isa}/q{i}.npy", q)
            procs[isa] = subprocess.Popen(
                [sys.executable, "-c", CPU_PACK_SCRIPT, f"{d}/{isa}", json.dumps(CPU_SHAPES)],
                env=dict(os.environ, ATEN_CPU_CAPABILITY=isa), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)
        results = {}
        for isa, p in procs.items():
            _, err = p.communicate()
            assert p.returncode == 0, err
            results[isa] = json.load(open(f"{d}/{isa}/packed.json"))
    return qs, results


@pytest.mark.parametrize("isa", ISAS)
def test_torch_cpu_int4pack_matches_each_instruction_set(isa, cpu_packings):
    qs, results = cpu_packings
    got = results[isa]
    if got["capability"].lower() != isa:
        pytest.skip(f"this CPU runs torch's {got['capability']} kernels, not {isa}: "
                    f"torch-cpu-int4pack-{isa} is not compared here")
    layout = f"torch-cpu-int4pack-{isa}"
    for i, q in enumerate(qs):
        n, k = q.shape
        theirs = np.frombuffer(bytes.fromhex(got[str(i)]), dtype=np.uint8)
        ours = lowbit(layout, "pack", n, k, q)
        assert ours.size == theirs.size, (n, k)
        diff = np.flatnonzero(ours != theirs)
        assert diff.size == 0, f"{layout} {n}x{k}: {diff.size} bytes differ, first at {diff[0]}"
        back = lowbit(layout, "unpack", n, k, theirs).reshape(n, k)
        np.testing.assert_array_equal(back, q, err_msg=f"{layout} unpack {n}x{k}")


def test_int4pack_mm_dequantizes_q_minus_8_times_scale_plus_zero():
    """_weight_int4pack_mm_for_cpu(I, W, g, sz) returns W's dequantized values
    transposed; with power-of-two scales and small integer zeros every value is
    exact in BF16, so the convention is read off bit for bit."""
    cap = torch.backends.cpu.get_cpu_capability().lower()
    layout = f"torch-cpu-int4pack-{cap if cap in ('avx512', 'avx2') else 'default'}"
    n, k, group = 64, 64, 32
    q = codes(n, k, seed=7)
    packed = lowbit(layout, "pack", n, k, q).reshape(n, k // 2).copy()
    rng = np.random.default_rng(3)
    scales = (2.0 ** rng.integers(-3, 3, size=(k // group, n))).astype(np.float32)
    zeros = rng.integers(-4, 5, size=(k // group, n)).astype(np.float32)
    sz = torch.from_numpy(np.stack([scales, zeros], axis=-1)).to(torch.bfloat16)  # [K / g][N][2]
    eye = torch.eye(k, dtype=torch.bfloat16)
    out = torch.ops.aten._weight_int4pack_mm_for_cpu(eye, torch.from_numpy(packed), group, sz)
    g = np.arange(k) // group
    want = (q.astype(np.float32) - 8) * scales[g, :].T + zeros[g, :].T  # [N][K]
    np.testing.assert_array_equal(out.float().numpy().T, want)
    # Not (q - zero) * scale: that reading differs wherever zero != 8 - zero / scale.
    other = (q.astype(np.float32) - zeros[g, :].T) * scales[g, :].T
    assert not np.array_equal(out.float().numpy().T, other)


# ---- swizzled scales vs torchao's to_blocked -----------------------------------

@pytest.mark.parametrize("rows", [1, 31, 127, 128, 129, 300])
@pytest.mark.parametrize("cols", [1, 3, 4, 5, 9])
def test_swizzled_scales_match_torchao_to_blocked(rows, cols):
    require("torchao")
    from torchao.prototype.mx_formats.utils import to_blocked

    s = codes(rows, cols, seed=rows * 10 + cols, high=256)
    theirs = to_blocked(torch.from_numpy(s)).numpy()
    ours = lowbit("swizzled-scales", "pack", rows, cols, s)
    np.testing.assert_array_equal(ours, theirs)
    back = lowbit("swizzled-scales", "unpack", rows, cols, theirs).reshape(rows, cols)
    np.testing.assert_array_equal(back, s)


# ---- tinygemm CUDA layout: its size, from torch's meta kernel -------------------

@pytest.mark.parametrize("tiles", [2, 4, 8])
@pytest.mark.parametrize("n", [8, 16, 64])
def test_tinygemm_layout_size_matches_torch_meta_shape(tiles, n):
    k = tiles * 16 * 2
    w = torch.empty(n, k // 2, dtype=torch.uint8, device="meta")
    shape = tuple(torch.ops.aten._convert_weight_to_int4pack(w, tiles).shape)
    assert shape == (n // 8, k // (tiles * 16), 32, tiles // 2)
    packed = lowbit(f"tinygemm-int4pack-k{tiles}", "pack", n, k, codes(n, k, seed=n))
    assert packed.size == 4 * int(np.prod(shape))


def test_tinygemm_meta_shape_floors_where_the_cuda_op_rounds_up():
    """For N not a multiple of 8, torch's meta kernel (_meta_registrations.py,
    `n // 8`) and its CUDA op (int4mm.cu, `divUp(in.size(0), kNTileSizeTensor)`)
    disagree; lowbit follows the CUDA op, which pads the last tile with 0."""
    w = torch.empty(13, 16, dtype=torch.uint8, device="meta")
    assert tuple(torch.ops.aten._convert_weight_to_int4pack(w, 2).shape) == (1, 1, 32, 1)
    assert lowbit("tinygemm-int4pack-k2", "pack", 13, 32, codes(13, 32, seed=1)).size == 4 * 2 * 32
