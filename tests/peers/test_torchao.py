"""Every ao-* recipe against torchao 0.18.0's own functions on the CPU
(docs/profiles.md): to_mx under each ScaleCalculationMode, NVFP4Tensor.to_nvfp4 with
and without a per-tensor scale, and choose_qparams_affine / quantize_affine /
dequantize_affine, on boundary-biased blocks (generators.py, seeds drawn by
Hypothesis, derandomized so that CI is repeatable).

Where lowbit and torchao 0.18 part ways the tests say so explicitly: the
difference is reproduced on inputs built for it and every mismatch of the
generated data must fall in one of the issue's known classes (RCEIL eager,
EVEN near the top, scale-0x00 blocks, NaN/Inf blocks, the NVFP4 reciprocal
order, the integer eps); all the rest is bit for bit."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import require

torch = require("torch")
torchao = require("torchao")
import lowbit  # noqa: E402
from torchao.prototype.mx_formats.config import ScaleCalculationMode  # noqa: E402
from torchao.prototype.mx_formats.mx_tensor import to_mx  # noqa: E402
from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor  # noqa: E402
from torchao.quantization.quant_primitives import (MappingType, choose_qparams_affine,  # noqa: E402
                                                   dequantize_affine, quantize_affine)

import generators  # noqa: E402

SETTINGS = settings(max_examples=6, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))
SEEDS = st.integers(0, 2**32 - 1)

# lowbit MX recipe -> (element format, torchao elem_dtype)
MX = {
    "mxfp8_e4m3": ("e4m3", torch.float8_e4m3fn),
    "mxfp8_e5m2": ("e5m2", torch.float8_e5m2),
    "mxfp6_e2m3": ("e2m3", "fp6_e2m3"),
    "mxfp6_e3m2": ("e3m2", "fp6_e3m2"),
    "mxfp4": ("e2m1", torch.float4_e2m1fn_x2),
}
MODES = ("floor", "ceil", "even", "rceil")


def test_peer_versions_are_the_pinned_ones():
    assert torchao.__version__ == "0.18.0"


def _codes(t) -> np.ndarray:
    return t.contiguous().view(torch.uint8).numpy()


def _unpack_nibbles(packed: np.ndarray, cols: int) -> np.ndarray:
    b = packed.reshape(packed.shape[0], -1)
    return np.stack([b & 0xF, b >> 4], -1).reshape(b.shape[0], cols)


def torchao_mx(x: np.ndarray, recipe: str, mode: str):
    element, dtype = MX[recipe]
    scale, data = to_mx(torch.from_numpy(x), dtype, 32, ScaleCalculationMode(mode))
    codes = _codes(data)
    if element == "e2m1":
        codes = _unpack_nibbles(codes, x.shape[1])
    return _codes(scale).reshape(x.shape[0], -1), codes.reshape(x.shape)


def lowbit_mx(x: np.ndarray, recipe: str, mode: str):
    q = lowbit.quantize(x, f"{recipe}:ao-{mode}")
    return q.scale_codes.reshape(x.shape[0], -1), q.codes.reshape(x.shape)


def _descale_just_above_pow2(amax: np.ndarray, element: str) -> np.ndarray:
    """fp32(amax / max_elem) a few ulps above 2^k: where torchao's eager RCEIL,
    ceil(log2(descale)) in FP32, rounds log2 down to k."""
    d = (amax / np.float32(lowbit.formats[element].max)).astype(np.float32)
    mant = d.view(np.uint32) & 0x7FFFFF
    return (mant > 0) & (mant <= 64)


def compare_mx(x: np.ndarray, recipe: str, mode: str) -> dict:
    """Compares one tensor block by block; returns the count of blocks in each
    known class. Fails on any mismatch outside them."""
    element = MX[recipe][0]
    ts, tc = torchao_mx(x, recipe, mode)
    ls, lc = lowbit_mx(x, recipe, mode)
    blocks = x.reshape(x.shape[0], -1, 32)
    amax = np.abs(blocks).max(-1)
    finite = np.isfinite(blocks).all(-1)
    tcb, lcb = tc.reshape(blocks.shape), lc.reshape(blocks.shape)
    counts = {"same": 0, "rceil_eager": 0, "even_top": 0, "scale_0x00": 0, "non_finite": 0}
    scale_differs = ts != ls
    elements_differ = (tcb != lcb).any(-1)
    for idx in zip(*np.nonzero(np.ones(ts.shape, bool))):
        if not finite[idx]:
            counts["non_finite"] += 1
            continue
        if not scale_differs[idx] and not elements_differ[idx]:
            counts["same"] += 1
            continue
        where = f"{recipe}:ao-{mode} block {idx}: amax {amax[idx]!r} scale lowbit {ls[idx]:#x} torchao {ts[idx]:#x}"
        if mode == "rceil" and scale_differs[idx]:
            assert int(ts[idx]) == int(ls[idx]) - 1 and _descale_just_above_pow2(amax[idx], element), where
            counts["rceil_eager"] += 1
        elif mode == "even" and scale_differs[idx]:
            # lowbit reads the rounded amax 0x7F800000 as Inf (scale 0xFF,
            # NaN elements); torchao takes its exponent field as a number.
            assert ls[idx] == 0xFF and amax[idx] >= np.float32(2.0**127), where
            counts["even_top"] += 1
        elif not scale_differs[idx] and ls[idx] == 0x00:
            # scale 2^-127: lowbit multiplies by 2^127 exactly, torchao
            # clamps the scale to 2^-126 and divides.
            counts["scale_0x00"] += 1
        else:
            bad = np.flatnonzero(tcb[idx] != lcb[idx])
            pytest.fail(f"{where}: elements {bad[:4]} lowbit {lcb[idx][bad[:4]]} torchao {tcb[idx][bad[:4]]} "
                        f"x {blocks[idx][bad[:4]]!r}")
    return counts


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("recipe", list(MX))
@SETTINGS
@given(seed=SEEDS)
def test_to_mx_matches_outside_the_known_classes(recipe, mode, seed):
    x = generators.mixed(seed, 24, 32 * 4, MX[recipe][0], kinds=generators.KINDS)
    counts = compare_mx(x, recipe, mode)
    assert counts["same"] > 0.8 * x.size / 32, counts


@pytest.mark.parametrize("recipe", list(MX))
def test_rceil_eager_picks_the_smaller_scale_just_above_a_power_of_two(recipe):
    # descale = amax / max_elem exactly 1 ulp above 2^k: lowbit (and cuBLAS,
    # TE, torchao's compiled sm_100 path) round up to 2^(k+1); torchao's eager
    # ceil(log2(descale)) in FP32 gives k.
    element = MX[recipe][0]
    emax = np.float32(lowbit.formats[element].max)
    k = np.arange(-20, 20)
    descale = (np.exp2(k).astype(np.float32).view(np.uint32) + 1).view(np.float32)
    x = np.zeros((k.size, 32), np.float32)
    x[:, 0] = descale * emax
    exact = (x[:, 0] / emax).astype(np.float32) == descale  # the product round-trips
    counts = compare_mx(x[exact], recipe, "rceil")
    assert counts["rceil_eager"] > 0, counts


def exact_rceil_eager(x: np.ndarray, recipe: str):
    """RCEIL as torchao 0.18.0 runs it here (eager, CPU) against the
    ao-rceil-eager profile: scales and element codes bit for bit."""
    ts, tc = torchao_mx(x, recipe, "rceil")
    q = lowbit.quantize(x, f"{recipe}:ao-rceil-eager")
    ls, lc = q.scale_codes.reshape(ts.shape), q.codes.reshape(x.shape)
    bad = np.argwhere(ts != ls)
    assert bad.size == 0, f"{recipe} scales at {bad[:4].tolist()}: lowbit {ls[ts != ls][:4]} torchao {ts[ts != ls][:4]}"
    bad = np.argwhere(tc != lc)
    assert bad.size == 0, (f"{recipe} codes at {bad[:4].tolist()}: lowbit {lc[tc != lc][:4]} torchao {tc[tc != lc][:4]}"
                           f" x {x[tc != lc][:4]!r}")


@pytest.mark.parametrize("recipe", list(MX))
@SETTINGS
@given(seed=SEEDS)
def test_rceil_eager_profile_matches_bit_for_bit(recipe, seed):
    # The generated blocks (NaN and Inf ones included), blocks whose descale
    # sits 0..64 ulps above 2^k (where FP32 log2 rounds back to k), and
    # blocks with the scale code 0x00 (whose elements torchao multiplies by 1).
    element = MX[recipe][0]
    rng = np.random.default_rng(seed)
    x = generators.mixed(seed, 24, 32 * 4, element, kinds=generators.KINDS)
    emax = np.float32(lowbit.formats[element].max)
    k = rng.integers(-126, 127, 64)
    descale = (np.exp2(k).astype(np.float32).view(np.uint32) + rng.integers(0, 65, 64).astype(np.uint32)).view(np.float32)
    near = np.zeros((64, 32), np.float32)
    with np.errstate(over="ignore"):  # k near 127: an Inf amax, the 0xFE case
        near[:, 0] = descale * emax
    near[:, 1:] = near[:, :1] * rng.uniform(-1, 1, (64, 31)).astype(np.float32)
    tiny = generators.blocks(rng, "tiny", 16, 32, element)
    exact_rceil_eager(np.concatenate([x.reshape(-1, 32), near, tiny[:, :32]]), recipe)


@pytest.mark.parametrize("mode", ("floor", "ceil", "even"))
@pytest.mark.parametrize("recipe", list(MX))
def test_huge_amax_even_reaches_the_nan_scale_in_lowbit_only(recipe, mode):
    # amax >= 0x1.f8p+127 (FP4): EVEN's rounding carries into exponent 0xFF;
    # torchao keeps a finite scale (0xFD for FP4), lowbit returns 0xFF.
    x = np.zeros((3, 32), np.float32)
    x[:, 0] = [np.float32(3.4e38), np.finfo(np.float32).max, np.float32(2.0**127)]
    counts = compare_mx(x, recipe, mode)
    assert counts["even_top"] > 0 if mode == "even" else counts["same"] == 3, counts


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("recipe", list(MX))
def test_inf_and_nan_blocks(recipe, mode):
    # lowbit: 0xFF for an Inf or NaN amax. torchao: FLOOR/CEIL/EVEN a finite
    # scale for Inf (the exponent field 0xFF as a number), RCEIL 0xFE; NaN 0xFF.
    x = np.ones((2, 32), np.float32)
    x[0, 3] = np.inf
    x[1, 3] = np.nan
    ts, tc = torchao_mx(x, recipe, mode)
    ls, lc = lowbit_mx(x, recipe, mode)
    assert ls[:, 0].tolist() == [0xFF, 0xFF]
    assert ts[1, 0] == 0xFF
    assert ts[0, 0] == (0xFE if mode == "rceil" else ts[0, 0]) and ts[0, 0] != 0xFF
    # NaN blocks: torchao divides by the scale +Inf, so finite elements become
    # +-0; lowbit's elements of a NaN-scale block are NaN where the format has one.
    f = lowbit.formats[MX[recipe][0]]
    if f.has_nan and mode != "rceil":  # RCEIL's eager path keeps NaN elements there
        assert set(lc[1].tolist()) <= set(f.nan_codes)
        assert not set(tc[1, :3].tolist()) & set(f.nan_codes)


@pytest.mark.parametrize("recipe", list(MX))
def test_scale_0x00_blocks_differ_in_their_elements(recipe):
    # amax so small that the scale is 2^-127: torchao clamps it to 2^-126.
    element = MX[recipe][0]
    rng = np.random.default_rng(7)
    x = generators.blocks(rng, "tiny", 64, 32, element)
    counts = compare_mx(x, recipe, "floor")
    assert counts["scale_0x00"] > 0, counts


# ---- NVFP4: NVFP4Tensor.to_nvfp4 -------------------------------------------------

from torchao.prototype.mx_formats.nvfp4_tensor import per_tensor_amax_to_scale  # noqa: E402


def nvfp4_near_ties(seed: int, rows: int, cols: int, tensor_amax: float) -> np.ndarray:
    """Blocks of 16 whose block scale is a chosen UE4M3 value s and whose
    elements sit at E2M1 midpoints times pts * s, +-2 ulp: where the order of
    the element step's operations decides the code."""
    rng = np.random.default_rng(seed)
    pts = np.float32(tensor_amax) / np.float32(448.0 * 6.0)
    s = lowbit.decode(rng.integers(8, 127, (rows, cols // 16, 1)).astype(np.uint8), "ue4m3", dtype=np.float64)
    mids = generators.element_midpoints("e2m1")
    x = rng.choice(mids, (rows, cols // 16, 16)) * rng.choice([-1.0, 1.0], (rows, cols // 16, 16))
    x[..., 0] = 6.0
    x = x * s * float(pts)
    x = generators._nudge(x.astype(np.float32), rng).reshape(rows, cols)
    x[0, 0] = np.float32(tensor_amax)  # the tensor's amax is the calibrated one
    return x


def torchao_nvfp4(x: np.ndarray, per_tensor_scale):
    t = NVFP4Tensor.to_nvfp4(torch.from_numpy(x), per_tensor_scale=per_tensor_scale)
    return _codes(t.scale).reshape(-1), _unpack_nibbles(_codes(t.qdata), x.shape[1]).reshape(-1)


def e2m1(y: np.ndarray) -> np.ndarray:
    return lowbit.encode(np.asarray(y, np.float32), "e2m1", saturate=True).reshape(-1)


def check_nvfp4(x: np.ndarray, tensor_amax: float, with_pts: bool) -> int:
    """Compares to_nvfp4 with nvfp4:ao; returns the number of element codes in
    which torchao 0.18's x * ((1/pts) / s) and nvfp4:ao's x / (pts * s) differ.
    Without a per-tensor scale torchao computes x * (1/s): that is pts = 1,
    i.e. a tensor amax of 448 * 6 for lowbit."""
    pts = per_tensor_amax_to_scale(torch.tensor(np.float32(tensor_amax)))
    amax_for_lowbit = tensor_amax if with_pts else 448.0 * 6.0
    q = lowbit.quantize(x, "nvfp4:ao", tensor_scale=amax_for_lowbit)
    lowbit_pts = np.float32(q.tensor_scale[1])
    if with_pts:
        assert lowbit_pts == np.float32(pts.item())  # per_tensor_amax_to_scale: amax / (448 * 6)
    else:
        assert lowbit_pts == 1.0
    ts, tc = torchao_nvfp4(x, pts if with_pts else None)
    ls, lc = q.scale_codes.reshape(-1), q.codes.reshape(-1)
    bad = np.flatnonzero(ts != ls)
    assert bad.size == 0, f"block scales {bad[:4]}: lowbit {ls[bad[:4]]} torchao {ts[bad[:4]]}"
    s = np.repeat(lowbit.decode(ls, "ue4m3"), 16)
    xf = x.reshape(-1)
    one = np.float32(1.0)
    theirs_formula = e2m1(xf * ((one / lowbit_pts) / s))  # torchao 0.18 nvfp4_quantize
    ours_formula = e2m1(xf / (lowbit_pts * s))            # older torchao: x / (pts * s)
    assert np.array_equal(tc, theirs_formula), np.flatnonzero(tc != theirs_formula)[:4]
    assert np.array_equal(lc, ours_formula), np.flatnonzero(lc != ours_formula)[:4]
    return int((theirs_formula != ours_formula).sum())


@pytest.mark.parametrize("with_pts", [True, False])
@SETTINGS
@given(seed=SEEDS, amax_exp=st.integers(-60, 60))
def test_to_nvfp4_scales_match_and_elements_follow_their_formulas(with_pts, seed, amax_exp):
    amax = float(np.float32(np.exp2(amax_exp) * 1.37))
    rng = np.random.default_rng(seed)
    x = np.concatenate([
        nvfp4_near_ties(seed, 16, 128, amax),
        (rng.standard_normal((16, 128)) * amax / 8).astype(np.float32),
    ])
    x[16, 0] = np.float32(amax)
    check_nvfp4(x, amax, with_pts)


@pytest.mark.parametrize("with_pts", [True, False])
def test_torchao_0_18_reciprocal_order_differs_from_nvfp4_ao(with_pts):
    # The known difference: nvfp4:ao names older torchao (x / (pts * s));
    # 0.18 computes x * ((1/pts) / s), which moves near-tie codes.
    amax = 1000.0 if with_pts else 448.0 * 6.0  # without: blocks built around pts = 1
    differing = sum(check_nvfp4(nvfp4_near_ties(seed, 32, 256, amax), amax, with_pts) for seed in range(4))
    assert differing > 0


def exact_nvfp4_0_18(x: np.ndarray, tensor_amax: float, with_pts: bool):
    """nvfp4:ao-0.18 against to_nvfp4: block scales and codes bit for bit.
    Without a per-tensor scale torchao computes x * (1.0 / s): pts = 1, a
    tensor amax of 448 * 6 for lowbit."""
    pts = per_tensor_amax_to_scale(torch.tensor(np.float32(tensor_amax)))
    q = lowbit.quantize(x, "nvfp4:ao-0.18", tensor_scale=tensor_amax if with_pts else 448.0 * 6.0)
    ts, tc = torchao_nvfp4(x, pts if with_pts else None)
    ls, lc = q.scale_codes.reshape(-1), q.codes.reshape(-1)
    bad = np.flatnonzero(ts != ls)
    assert bad.size == 0, f"block scales {bad[:4]}: lowbit {ls[bad[:4]]} torchao {ts[bad[:4]]}"
    bad = np.flatnonzero(tc != lc)
    assert bad.size == 0, f"codes {bad[:4]}: lowbit {lc[bad[:4]]} torchao {tc[bad[:4]]} x {x.reshape(-1)[bad[:4]]!r}"


@pytest.mark.parametrize("with_pts", [True, False])
@SETTINGS
@given(seed=SEEDS, amax_exp=st.integers(-60, 60))
def test_nvfp4_ao_0_18_matches_bit_for_bit(with_pts, seed, amax_exp):
    amax = float(np.float32(np.exp2(amax_exp) * 1.37)) if with_pts else 448.0 * 6.0
    rng = np.random.default_rng(seed)
    x = np.concatenate([
        nvfp4_near_ties(seed, 16, 128, amax),
        (rng.standard_normal((16, 128)) * amax / 8).astype(np.float32),
    ])
    x[16, 0] = np.float32(amax)
    exact_nvfp4_0_18(x, amax, with_pts)


def test_nvfp4_ao_0_18_tiny_per_tensor_scale_matches_the_infinite_reciprocal():
    # (1 / pts) / s is Inf for the small-scale blocks: non-zero elements
    # become +-Inf, clamp to +-6 (codes 7 / 0xF) in both. A zero element
    # gives 0 * Inf = NaN: one known difference, asserted: torchao's
    # f32_to_f4_unpacked turns x86's default NaN (sign bit set) into 0xB by
    # its bit arithmetic; lowbit's E2M1 policy makes NaN +6 (code 7).
    amax = float(np.float32(2.0**-112))
    rng = np.random.default_rng(3)
    x = np.zeros((2, 32), np.float32)
    x[0, 0] = amax
    x[1] = (rng.standard_normal(32) * amax * 2.0**-16).astype(np.float32)
    pts = per_tensor_amax_to_scale(torch.tensor(np.float32(amax)))
    q = lowbit.quantize(x, "nvfp4:ao-0.18", tensor_scale=amax)
    ts, tc = torchao_nvfp4(x, pts)
    assert np.array_equal(ts, q.scale_codes.reshape(-1))
    lc, xf = q.codes.reshape(-1), x.reshape(-1)
    assert np.array_equal(tc[xf != 0], lc[xf != 0])
    assert set(tc.reshape(2, 32)[1].tolist()) <= {0x7, 0xF}  # the Inf factor saturates every element
    zero_in_inf_block = (xf == 0) & (tc == 0xB)
    assert zero_in_inf_block.any() and (lc[zero_in_inf_block] == 0x7).all()


def test_tiny_per_tensor_scale_overflows_torchao_reciprocal():
    # pts <~ 2^-122: torchao 0.18's (1 / pts) / s overflows to Inf for the
    # blocks with a small scale s, so every non-zero element there saturates
    # to +-6; lowbit divides by pts * s and keeps the values.
    amax = float(np.float32(2.0**-112))
    pts = np.float32(per_tensor_amax_to_scale(torch.tensor(np.float32(amax))).item())
    rng = np.random.default_rng(3)
    x = np.zeros((2, 32), np.float32)
    x[0, 0] = amax
    x[1] = (rng.standard_normal(32) * amax * 2.0**-16).astype(np.float32)  # small-scale blocks
    _, tc = torchao_nvfp4(x, torch.tensor(pts))
    q = lowbit.quantize(x, "nvfp4:ao", tensor_scale=amax)
    s = lowbit.decode(q.scale_codes.reshape(2, 2), "ue4m3")
    with np.errstate(over="ignore"):
        assert np.isinf((np.float32(1.0) / pts) / s[1]).all()
    theirs, ours = tc.reshape(2, 32)[1], q.codes.reshape(2, 32)[1]
    nonzero = x[1] != 0
    assert set(theirs[nonzero].tolist()) <= {0x7, 0xF}  # +-6 everywhere
    assert not set(ours[nonzero].tolist()) <= {0x7, 0xF}


# ---- affine integer quantization: choose_qparams_affine / quantize_affine / dequantize_affine

# lowbit recipe -> (mapping, torchao target dtype, quant_min, quant_max)
AFFINE = {
    "int8:ao-sym": (MappingType.SYMMETRIC, torch.int8, -128, 127),
    "int4:ao-sym": (MappingType.SYMMETRIC, torch.int8, -8, 7),
    "int8:ao-asym": (MappingType.ASYMMETRIC, torch.int8, -128, 127),
    "uint4:ao-asym": (MappingType.ASYMMETRIC, torch.uint8, 0, 15),
}
LAYOUTS = ("tensor", "row", "g32", "g128")
# torchao's Int8Tensor workflow passes eps = torch.finfo(torch.float32).eps
# (2^-23), the value lowbit's ao-* recipes use; choose_qparams_affine's own
# default (eps=None) is torch.finfo(input.dtype).smallest_normal = 2^-126.
EPS = float(torch.finfo(torch.float32).eps)


def _block_size(layout: str, shape) -> tuple:
    if layout == "tensor":
        return tuple(shape)
    if layout == "row":
        return (1, shape[1])
    return (1, int(layout[1:]))


def torchao_affine(x: np.ndarray, recipe: str, layout: str, eps=EPS):
    mapping, dtype, qmin, qmax = AFFINE[recipe]
    t = torch.from_numpy(x)
    bs = _block_size(layout, x.shape)
    scale, zp = choose_qparams_affine(t, mapping, bs, dtype, qmin, qmax, eps=eps)
    q = quantize_affine(t, bs, scale, zp, dtype, qmin, qmax)
    back = dequantize_affine(q, bs, scale, zp, dtype, qmin, qmax, output_dtype=torch.float32)
    return (scale.reshape(-1).numpy(), zp.reshape(-1).numpy().astype(np.int32),
            q.numpy().astype(np.int64), back.numpy())


def int_near_ties(seed: int, rows: int, cols: int, recipe: str) -> np.ndarray:
    """Rows whose elements sit at (k + 1/2) * scale +-2 ulp for the scale the
    row's amax gives (symmetric: amax / ((qmax - qmin) / 2))."""
    rng = np.random.default_rng(seed)
    _, _, qmin, qmax = AFFINE[recipe]
    amax = np.exp2(rng.integers(-30, 30, (rows, 1))).astype(np.float32) * np.float32(1.37)
    scale = (amax / np.float32((qmax - qmin) / 2)).astype(np.float32)
    k = rng.integers(qmin, qmax, (rows, cols)).astype(np.float32) + np.float32(0.5)
    x = generators._nudge((k * scale).astype(np.float32), rng)
    x[:, 0] = amax[:, 0]
    x[:, 1] = -amax[:, 0]
    return x


def check_affine(x: np.ndarray, recipe: str, layout: str):
    f = lowbit.formats[lowbit.recipes[recipe].element]
    s, zp, q, back = torchao_affine(x, recipe, layout)
    ql = lowbit.quantize(x, recipe, layout=layout)
    where = f"{recipe}/{layout}"
    assert np.array_equal(ql.scales.view(np.uint32), s.astype(np.float32).view(np.uint32)), where
    if AFFINE[recipe][0] == MappingType.ASYMMETRIC:
        assert np.array_equal(ql.zero_points, zp), where
    else:
        assert ql.zero_points is None and not zp.any(), where
    mask = (1 << f.bits) - 1
    codes = ql.codes.reshape(x.shape).astype(np.int64)
    theirs = q & mask
    bad = np.argwhere(codes != theirs)
    assert bad.size == 0, f"{where}: at {bad[:4].tolist()} lowbit {codes[tuple(bad[:4].T)]} torchao {theirs[tuple(bad[:4].T)]}"
    ours_back = ql.dequantize().reshape(x.shape)
    assert np.array_equal(ours_back.view(np.uint32), back.view(np.uint32)), where


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("recipe", list(AFFINE))
@SETTINGS
@given(seed=SEEDS)
def test_affine_int_matches_bit_for_bit(recipe, layout, seed):
    rng = np.random.default_rng(seed)
    parts = [int_near_ties(seed, 8, 256, recipe)]
    for kind in ("normal", "pow2", "tiny", "huge", "zeros"):
        parts.append(generators.blocks(rng, kind, 4, 256, "int8"))
    rows = np.concatenate(parts)
    if layout == "tensor":  # one group: each kind on its own, the tie rows together
        for i in range(0, rows.shape[0], 4):
            check_affine(np.ascontiguousarray(rows[i:i + 4]), recipe, layout)
    else:
        check_affine(rows, recipe, layout)


@pytest.mark.parametrize("recipe", list(AFFINE))
def test_default_eps_2_pow_minus_126_differs_from_lowbit_2_pow_minus_23(recipe):
    # A group whose scale falls below 2^-23: lowbit (and the Int8Tensor
    # workflow) clamps the scale to 2^-23; choose_qparams_affine's default
    # eps keeps it.
    x = (np.random.default_rng(5).standard_normal((1, 32)) * 1e-9).astype(np.float32)
    s_default, *_ = torchao_affine(x, recipe, "row", eps=None)
    s_eps, *_ = torchao_affine(x, recipe, "row")
    ours = lowbit.quantize(x, recipe, layout="row").scales
    assert s_eps[0] == np.float32(2.0**-23) == ours[0]
    assert s_default[0] != ours[0] and s_default[0] < 2.0**-23


@pytest.mark.parametrize("recipe", list(AFFINE))
def test_nan_and_minus_inf_groups_differ_in_scale_sign_and_zero_point(recipe):
    # Known differences of non-finite groups (docs/profiles.md). Symmetric: a NaN
    # group's scale is torchao's NaN (the input's, positive here) but x86's
    # default NaN (sign set) in lowbit. Asymmetric: torchao's zero point of a
    # NaN or -Inf group is int32(NaN) = INT_MIN on x86; lowbit stores 0.
    x = np.ones((3, 32), np.float32)
    x[0, 3], x[1, 3], x[2, 3] = np.nan, -np.inf, np.inf
    s, zp, _, _ = torchao_affine(x, recipe, "row")
    ql = lowbit.quantize(x, recipe, layout="row")
    ours = ql.scales.view(np.uint32)
    theirs = s.astype(np.float32).view(np.uint32)
    assert np.array_equal(ours[1:], theirs[1:])  # +-Inf groups: the same Inf scale
    if AFFINE[recipe][0] == MappingType.SYMMETRIC:
        assert (int(theirs[0]), int(ours[0])) == (0x7FC00000, 0xFFC00000)
    else:
        assert int(theirs[0]) == int(ours[0]) == 0x7FC00000
        assert zp[:2].tolist() == [np.iinfo(np.int32).min] * 2 and ql.zero_points[:2].tolist() == [0, 0]
        assert zp[2] == ql.zero_points[2]
