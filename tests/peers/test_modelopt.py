"""The modelopt recipes against nvidia-modelopt 0.47.0's quantizer classes
on the CPU (docs/profiles.md): NVFP4QTensor.quantize (its pure-PyTorch path; the
TensorRT-LLM kernel it tries first needs CUDA) and FP8QTensor.quantize.

Known difference, asserted: ModelOpt 0.47 clamps NVFP4 block scales to
[2^-9, 448] (_cast_per_block_scale_to_fp8); nvfp4:modelopt applies only the
lower bound, so a block whose scale rule exceeds 448 (a calibrated tensor
amax below the data's) gets 0x7F (NaN) in lowbit and 0x7E in ModelOpt.

lowbit has no registry recipe for ModelOpt's FP8 per-tensor scaling
(scale = amax / 448, x / scale, torch's cast): its test checks ModelOpt
against lowbit's E4M3 conversion with that formula spelled out."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import require

torch = require("torch")
modelopt = require("modelopt")
import lowbit  # noqa: E402
from modelopt.torch.quantization.qtensor.fp8_tensor import FP8QTensor  # noqa: E402
from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor  # noqa: E402

import generators  # noqa: E402

SETTINGS = settings(max_examples=8, derandomize=True, database=None, deadline=None,
                    suppress_health_check=list(HealthCheck))
SEEDS = st.integers(0, 2**32 - 1)


def test_peer_versions_are_the_pinned_ones():
    assert modelopt.__version__ == "0.47.0"


def modelopt_nvfp4(x: np.ndarray, tensor_amax=None):
    t = torch.from_numpy(x.copy())  # _cast_fp4 takes abs_() in place of its own scaled copy only
    wsf2 = None if tensor_amax is None else torch.tensor(np.float32(tensor_amax)) / (6.0 * 448.0)
    q, scale, wsf2 = NVFP4QTensor.quantize(t, 16, weights_scaling_factor_2=wsf2)
    packed = q._quantized_data.numpy()
    codes = np.stack([packed & 0xF, packed >> 4], -1).reshape(x.shape)
    return scale.view(torch.uint8).numpy().reshape(x.shape[0], -1), codes, np.float32(wsf2.item())


def exact_nvfp4(x: np.ndarray, tensor_amax=None):
    """nvfp4:modelopt-0.47 (ModelOpt 0.47.0's own rule, the upper clamp
    included) against NVFP4QTensor.quantize: scales and codes bit for bit."""
    ms, mc, wsf2 = modelopt_nvfp4(x, tensor_amax)
    amax = float(np.abs(x).max()) if tensor_amax is None else tensor_amax
    q = lowbit.quantize(x, "nvfp4:modelopt-0.47", tensor_scale=amax)
    assert np.float32(q.tensor_scale[1]) == wsf2
    ls = q.scale_codes.reshape(ms.shape)
    bad = np.argwhere(ls != ms)
    assert bad.size == 0, f"block scales at {bad[:4].tolist()}: lowbit {ls[ls != ms][:4]} modelopt {ms[ls != ms][:4]}"
    lc = q.codes.reshape(x.shape)
    bad = np.argwhere(lc != mc)
    assert bad.size == 0, f"codes at {bad[:4].tolist()}: lowbit {lc[lc != mc][:4]} modelopt {mc[lc != mc][:4]}"


def compare_nvfp4(x: np.ndarray, tensor_amax=None) -> int:
    """Compares one tensor; returns the number of blocks in the known class
    (block scale above 448). Fails on any other mismatch."""
    ms, mc, wsf2 = modelopt_nvfp4(x, tensor_amax)
    amax = float(np.abs(x).max()) if tensor_amax is None else tensor_amax
    q = lowbit.quantize(x, "nvfp4:modelopt", tensor_scale=amax)
    assert np.float32(q.tensor_scale[1]) == wsf2  # amax / (6 * 448)
    ls = q.scale_codes.reshape(ms.shape)
    lc = q.codes.reshape(x.shape)
    above = 0
    blocks = x.reshape(x.shape[0], -1, 16)
    for idx in zip(*np.nonzero(np.ones(ms.shape, bool))):
        b = (slice(idx[0], idx[0] + 1), slice(idx[1] * 16, idx[1] * 16 + 16))
        if ms[idx] == ls[idx] and np.array_equal(mc[b], lc[b]):
            continue
        rule = np.float32(np.abs(blocks[idx]).max()) / (np.float32(6.0) * wsf2)
        where = f"block {idx}: rule {rule!r} scale lowbit {ls[idx]:#x} modelopt {ms[idx]:#x}"
        assert ls[idx] == 0x7F and ms[idx] == 0x7E and rule > 448, where
        above += 1
    return above


@SETTINGS
@given(seed=SEEDS)
def test_nvfp4_matches_with_the_data_amax(seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([generators.blocks(rng, k, 8, 128, "e2m1", scale_exp_range=(-60, 60))
                        for k in ("normal", "ties", "pow2", "tiny", "zeros")])
    x = x[:, :128]
    assert compare_nvfp4(x) == 0


@SETTINGS
@given(seed=SEEDS, calibration=st.sampled_from([0.01, 0.1, 0.5, 0.9, 1.0, 2.0, 100.0]))
def test_nvfp4_with_a_calibrated_amax(seed, calibration):
    rng = np.random.default_rng(seed)
    x = generators.blocks(rng, "normal", 16, 128, "e2m1")
    amax = float(np.float32(np.abs(x).max() * calibration))
    above = compare_nvfp4(x, amax)
    if calibration < 0.05:
        assert above > 0  # the clamp difference shows up
    if calibration >= 1.0:
        assert above == 0


@SETTINGS
@given(seed=SEEDS, calibration=st.sampled_from([0.01, 0.1, 0.5, 1.0, 2.0, None]))
def test_nvfp4_modelopt_0_47_matches_bit_for_bit(seed, calibration):
    # The profile of the installed version: the known difference above is
    # gone, including blocks whose scale rule exceeds 448.
    rng = np.random.default_rng(seed)
    x = np.concatenate([generators.blocks(rng, k, 8, 128, "e2m1", scale_exp_range=(-60, 60))
                        for k in ("normal", "ties", "pow2", "tiny", "zeros")])[:, :128]
    amax = None if calibration is None else float(np.float32(np.abs(x).max() * calibration))
    exact_nvfp4(x, amax)


def test_nvfp4_modelopt_0_47_block_scale_above_448_is_0x7e():
    x = np.zeros((1, 32), np.float32)
    x[0, 0], x[0, 16] = 1.0, 100.0
    ms, _, _ = modelopt_nvfp4(x, 1.0)
    q = lowbit.quantize(x, "nvfp4:modelopt-0.47", tensor_scale=1.0)
    assert ms.reshape(-1).tolist() == q.scale_codes.tolist() == [0x7E, 0x7E]
    exact_nvfp4(x, 1.0)


def test_nvfp4_block_scale_above_448_is_0x7e_in_modelopt_and_nan_in_lowbit():
    x = np.zeros((1, 32), np.float32)
    x[0, 0], x[0, 16] = 1.0, 100.0  # tensor amax calibrated at 1: block 1 needs scale 100 * 448
    ms, _, _ = modelopt_nvfp4(x, 1.0)
    q = lowbit.quantize(x, "nvfp4:modelopt", tensor_scale=1.0)
    assert ms.reshape(-1).tolist() == [0x7E, 0x7E]  # 448 (its clamp), then 448
    assert q.scale_codes.tolist() == [0x7E, 0x7F]


@SETTINGS
@given(seed=SEEDS)
def test_fp8_per_tensor_and_per_row(seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([generators.blocks(rng, k, 8, 64, "e4m3") for k in ("normal", "ties", "pow2", "huge")])
    for axis in (None, 0):
        q, scales = FP8QTensor.quantize(torch.from_numpy(x), axis=axis)
        theirs = q._quantized_data.view(torch.uint8).numpy()
        amax = np.abs(x).max() if axis is None else np.abs(x).max(axis=1, keepdims=True)
        s = (np.asarray(amax, np.float32) / np.float32(448.0)).astype(np.float32)
        assert np.array_equal(scales.numpy().reshape(-1).view(np.uint32), s.reshape(-1).view(np.uint32))
        # torch 2.15's cast saturates (test_torch_casts.py): lowbit's saturating E4M3 conversion.
        ours = lowbit.encode((x / s).astype(np.float32), "e4m3", saturate=True)
        assert np.array_equal(theirs, ours)


@pytest.mark.parametrize("case", ["all-zero", "tiny", "inf"])
def test_degenerate_tensor_scales_differ(case):
    # Known differences where the tensor scale wsf2 = amax / 2688 is 0 or Inf
    # (an all-zero tensor, an amax so small that amax / 2688 underflows, an
    # Inf): the block scale rule gives 0/0 -> NaN, x / 0 -> Inf, Inf/Inf -> NaN.
    # ModelOpt's clamp turns Inf into 448 (0x7E) and its cast turns x86's
    # negative NaN into 0xFF; lowbit gives the positive NaN code 0x7F.
    x = np.ones((1, 32), np.float32)
    if case == "all-zero":
        x[:] = 0.0
    elif case == "tiny":
        x = (np.random.default_rng(1).standard_normal((1, 32)) * 2.0**-145).astype(np.float32)
    else:
        x[0, 5] = np.inf
    ms, _, wsf2 = modelopt_nvfp4(x)
    q = lowbit.quantize(x, "nvfp4:modelopt")
    assert wsf2 == 0.0 or np.isinf(wsf2)
    ours, theirs = q.scale_codes.tolist(), ms.reshape(-1).tolist()
    expected_theirs = {"all-zero": [0xFF, 0xFF], "tiny": [0x7E, 0x7E], "inf": [0xFF, 0x38]}[case]
    expected_ours = {"all-zero": [0x7F, 0x7F], "tiny": [0x7F, 0x7F], "inf": [0x7F, 0x38]}[case]
    assert (theirs, ours) == (expected_theirs, expected_ours)
