"""The pytorch-cpu-2.15 and pytorch-cpu profiles against torch's own CPU casts
(docs/profiles.md): every code of each torch low-precision dtype decoded, every FP16
and BF16 value converted, and a class-complete FP32 sample (signed zeros,
subnormals, each format's boundaries and rounding ties +-1 ulp, overflow, Inf,
NaN with payloads) converted. Bits are compared, NaN payloads included.
pytorch-cpu-2.15 must match torch 2.15 exactly; pytorch-cpu (PyTorch 2.11)
must match it except for the one asserted difference, the saturating
float8_e4m3fn cast (pytorch/pytorch PR #178817)."""

import numpy as np
import pytest

from conftest import require

torch = require("torch")
import lowbit  # noqa: E402

PROFILE = "pytorch-cpu"  # PyTorch 2.11: differs from the installed torch in one place
PROFILE_NOW = "pytorch-cpu-2.15"  # the installed torch, exactly
PROFILES = [PROFILE_NOW, PROFILE]

# torch dtype name -> lowbit format; each must resolve through lowbit's grammar.
TORCH_FORMATS = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
                 "bfloat16", "float16"]


def _fmt(name):
    return lowbit.formats[name]


def _tdt(name):
    return getattr(torch, name)


def test_peer_versions_are_the_pinned_ones():
    # The profiles name the versions they reproduce; a different torch here
    # would test something else (requirements-peers.txt pins it).
    assert torch.__version__.split("+")[0] == "2.15.0"


def _expected(x: np.ndarray, f, ours: np.ndarray, profile: str) -> tuple[np.ndarray, int]:
    """What torch 2.15 returns, from the pytorch-cpu profile (PyTorch 2.11).
    One known difference: since PyTorch 2.13 (pytorch/pytorch PR 178817, merged
    after the 2.12 branch cut; torchao 0.18 mx_tensor.py clamps only before
    2.13) the eager CPU cast to float8_e4m3fn
    saturates, so finite overflow and +-Inf become +-448 where 2.11 gave NaN;
    that is lowbit's saturating conversion (saturate=True). Returns the
    expected codes and how many inputs take the 2.13+ path. pytorch-cpu-2.15
    is the installed torch: its codes are expected as they are."""
    if f.name != "e4m3" or profile == PROFILE_NOW:
        return ours, 0
    nan_in = np.isnan(np.asarray(x, np.float32))
    overflow = np.isin(ours, f.nan_codes) & ~nan_in
    expected = np.where(overflow, lowbit.encode(np.asarray(x, np.float32), f.name, saturate=True), ours)
    return expected, int(overflow.sum())


def _all_codes(f):
    n = 1 << f.bits
    return np.arange(n, dtype=np.uint32).astype(f.code_dtype)


def _torch_codes_as(codes: np.ndarray, name: str):
    t = torch.from_numpy(codes.view(np.int16) if codes.dtype == np.uint16 else codes)
    return t.view(_tdt(name))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", TORCH_FORMATS)
def test_every_code_decodes_as_torch(name, profile):
    f = _fmt(name)
    codes = _all_codes(f)
    theirs = _torch_codes_as(codes, name).to(torch.float32).numpy().view(np.uint32)
    ours = lowbit.decode(codes, f.name, profile=profile).view(np.uint32)
    bad = np.flatnonzero(ours != theirs)
    assert bad.size == 0, [(hex(int(codes[i])), hex(int(ours[i])), hex(int(theirs[i]))) for i in bad[:8]]


def _every_16_bit_value(src):
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    t = torch.from_numpy(bits.view(np.int16)).view(_tdt(src))
    return bits, t


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("src,name", [(s, n) for s in ("float16", "bfloat16") for n in TORCH_FORMATS if s != n])
def test_every_16_bit_input_converts_as_torch(src, name, profile):
    bits, t = _every_16_bit_value(src)
    f = _fmt(name)
    theirs = t.to(_tdt(name)).view(torch.int16 if f.bits == 16 else torch.uint8).numpy().view(f.code_dtype)
    # lowbit reads FP16 as NumPy float16 and BF16 as ml_dtypes.bfloat16.
    x = bits.view(np.float16) if src == "float16" else bits.view(_fmt("bf16").ml_dtype())
    ours, saturated = _expected(x, f, lowbit.encode(x, f.name, profile=profile), profile)
    bad = np.flatnonzero(ours != theirs)
    assert bad.size == 0, [(hex(int(bits[i])), hex(int(ours[i])), hex(int(theirs[i]))) for i in bad[:8]]
    # The known difference is there for pytorch-cpu (FP16 and BF16 both reach past 448).
    assert (saturated > 0) == (f.name == "e4m3" and profile == PROFILE)


def _class_complete_fp32(f) -> np.ndarray:
    """FP32 inputs covering every class a conversion to f distinguishes:
    +-0, FP32 subnormals, every value of f and the midpoints between
    neighbours (the ties) each +-1 and +-2 ulp, the overflow boundary, huge
    values, +-Inf, NaNs with several payloads, plus random bit patterns."""
    codes = _all_codes(f)
    if f.bits > 8:  # 16-bit targets: a sample of their codes (every exponent, edge mantissas)
        codes = codes[(np.arange(codes.size) % 61 == 0) | ((codes & 0x3) == 0x3) | ((codes & 0x7F) < 2)]
    v = lowbit.decode(codes, f.name, dtype=np.float64)
    v = np.unique(v[np.isfinite(v)])
    mids = (v[1:] + v[:-1]) / 2
    beyond = np.array([f.max * 1.0625, f.max * 1.125, f.max * 1.5, f.max * 2, 1e38, 3.4028234663852886e38])
    with np.errstate(over="ignore"):  # values past FP32's range become +-Inf, also wanted
        base = np.concatenate([v, mids, beyond, -v, -mids, -beyond]).astype(np.float32)
    ulps = np.arange(-2, 3, dtype=np.int64)
    near = (base.view(np.int32)[:, None].astype(np.int64) + ulps[None, :]).reshape(-1)
    near = near[(near >= np.iinfo(np.int32).min) & (near <= np.iinfo(np.int32).max)].astype(np.int32).view(np.float32)
    specials = np.array([0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
                         0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FBFFFFF,
                         0x7FFFFFFF, 0xFFFFFFFF, 0x7FC12345], np.uint32).view(np.float32)
    rng = np.random.default_rng(20261124)
    random_bits = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([near, specials, random_bits])


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", TORCH_FORMATS)
def test_class_complete_fp32_sample_converts_as_torch(name, profile):
    f = _fmt(name)
    x = _class_complete_fp32(f)
    assert x.size > 1000
    theirs = torch.from_numpy(x).to(_tdt(name)).view(torch.int16 if f.bits == 16 else torch.uint8).numpy()
    theirs = theirs.view(f.code_dtype)
    ours, saturated = _expected(x, f, lowbit.encode(x, f.name, profile=profile), profile)
    bad = np.flatnonzero(ours != theirs)
    assert bad.size == 0, [(hex(int(x.view(np.uint32)[i])), hex(int(ours[i])), hex(int(theirs[i]))) for i in bad[:8]]
    assert (saturated > 0) == (f.name == "e4m3" and profile == PROFILE)


def test_e4m3fn_saturation_since_torch_2_13_is_the_one_difference():
    # The difference above, spelled out: pytorch-cpu names PyTorch 2.11.
    x = np.array([480.0, 1e6, np.inf, -np.inf, -500.0, np.nan], np.float32)
    torch_codes = torch.from_numpy(x).to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    assert torch_codes.tolist()[:5] == [0x7E, 0x7E, 0x7E, 0xFE, 0xFE]
    assert lowbit.encode(x, "e4m3", profile=PROFILE).tolist()[:5] == [0x7F, 0x7F, 0x7F, 0xFF, 0xFF]
    # pytorch-cpu-2.15 is the installed torch: saturating, NaN keeps its sign.
    assert lowbit.encode(x, "e4m3", profile=PROFILE_NOW).tolist() == torch_codes.tolist()
    assert torch_codes.tolist()[5] == 0x7F


def test_e4m3fn_saturation_is_the_only_change_from_2_11():
    # Every FP32 -> float8_e4m3fn code the two profiles give differently is an
    # overflow NaN of 2.11 that became +-448; every other conversion agrees (the
    # tests above compare both profiles with torch on the same inputs).
    x = _class_complete_fp32(_fmt("e4m3"))
    old = lowbit.encode(x, "e4m3", profile=PROFILE)
    new = lowbit.encode(x, "e4m3", profile=PROFILE_NOW)
    differ = old != new
    assert differ.any()
    assert np.all((old[differ] & 0x7F) == 0x7F)
    assert np.all(new[differ] == ((old[differ] & 0x80) | 0x7E))
    assert not np.isnan(x[differ]).any()
