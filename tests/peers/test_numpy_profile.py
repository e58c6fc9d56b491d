"""Profile `numpy` (formats/include/lowbit/formats/profiles/numpy.h) against
NumPy itself, live: x.astype(np.float16) on every FP32 input whose result is
not a constant +-0 or +-Inf and a sample of the rest (all 2^32 inputs at
LOWBIT_TEST_LEVEL=full), every FP16 code widened to float32 and float64, and
a sample of float64 -> float16 (2^64 inputs cannot be swept) that holds every
NaN payload bit and the inputs where rounding through FP32 first would
differ. Then what a user
sees: `lowbit check fp16 --profile numpy` passes on x.astype(np.float16), and
the diagnosis of the plain `fp16` target names profile numpy.

NumPy is a requirement of the project (requirements.txt), not an optional
peer: a missing NumPy fails this file at import, never skips it.

The FP32 sweep pipes NumPy's codes, one exponent group at a time, into
lowbit_numpy_fp16_sweep (numpy_fp16_sweep.cc), which compares
them with the model as they come (LOWBIT_NUMPY_SWEEP and LOWBIT_CLI are set
by tests/peers/CMakeLists.txt).
"""

import os
import subprocess
import tempfile

import numpy as np

import lowbit
import lowbit.testing

SWEEP = os.environ.get("LOWBIT_NUMPY_SWEEP", "")
CLI = os.environ.get("LOWBIT_CLI", "")
GROUP = 1 << 23


# The FP32 exponents whose FP16 results are not one constant: from 2^-25
# (half the smallest subnormal: 0 or 0x0001) to [2^15, 2^16) (where 65520
# and up overflow), and 255 (Inf and every NaN). Every rounding decision,
# subnormal result, the overflow threshold and the NaN rule lie in them.
VARIED_EXPONENTS = list(range(102, 143)) + [255]


def _sweep_groups(level):
    """(top, mantissas or None for all 2^23) for every (sign, exponent)."""
    rng = np.random.default_rng(16)
    edges = np.array([0, 1, 2, (1 << 22) - 1, 1 << 22, (1 << 22) + 1, GROUP - 2, GROUP - 1], dtype=np.uint32)
    for sign in (0, 1):
        for e in range(256):
            top = (sign << 31) | (e << 23)
            if level == "full" or e in VARIED_EXPONENTS:
                yield top, None
            else:
                # NumPy's result is one constant here (+-0 below, +-Inf above):
                # a stride, random mantissas and the edges.
                sample = np.concatenate([np.arange(0, GROUP, 257, dtype=np.uint32),
                                         rng.integers(0, GROUP, size=4096, dtype=np.uint32), edges])
                yield top, sample


def test_fp32_into_float16_matches_numpy():
    """At LOWBIT_TEST_LEVEL=full every one of the 2^32 FP32 inputs (NumPy
    alone takes about 330 s on this machine's cores: its cast raises the
    floating-point overflow or underflow flag per element, about 100 ns each,
    wherever the result is +-Inf or a rounded-away tiny value). At ci (the
    default) and smoke: every input of the exponent groups whose results
    vary, 16% of all, and about 37 000 inputs of each of the 428 groups whose
    result is one constant; 30 to 45 s on 2 cores."""
    assert SWEEP and os.path.exists(SWEEP), "LOWBIT_NUMPY_SWEEP must name lowbit_numpy_fp16_sweep"
    level = os.environ.get("LOWBIT_TEST_LEVEL", "ci")
    assert level in ("smoke", "ci", "full"), f"LOWBIT_TEST_LEVEL={level}: unknown test level"
    proc = subprocess.Popen([SWEEP], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    words = np.arange(GROUP, dtype=np.uint32)
    inputs = groups = whole = 0
    try:
        with np.errstate(all="ignore"):  # NumPy warns on NaN and overflow; the codes are what count
            for top, mantissas in _sweep_groups(level):
                m = words if mantissas is None else mantissas
                x = (m | np.uint32(top)).view(np.float32)
                header = np.array([top, m.size], dtype="<u4").tobytes()
                body = b"" if mantissas is None else m.astype("<u4").tobytes()
                proc.stdin.write(header + body + x.astype(np.float16).view("<u2").tobytes())
                inputs, groups, whole = inputs + m.size, groups + 1, whole + (mantissas is None)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the sweep stopped early: its output says why
    out = proc.stdout.read().decode()
    assert proc.wait() == 0, out
    assert f"checked {inputs} inputs in {groups} groups ({whole} whole), 0 mismatches" in out, out
    assert groups == 512 and whole == (512 if level == "full" else 2 * len(VARIED_EXPONENTS))
    if level == "full":
        assert inputs == 1 << 32


def test_every_float16_code_widened_matches_numpy():
    codes = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    h = codes.view(np.float16)
    for dtype, word in ((np.float32, np.uint32), (np.float64, np.uint64)):
        ours = lowbit.decode(codes, "fp16", profile="numpy", dtype=dtype).view(word)
        theirs = h.astype(dtype).view(word)
        bad = np.flatnonzero(ours != theirs)
        assert bad.size == 0, f"{dtype.__name__}: code 0x{codes[bad[0]]:04x}: numpy 0x{theirs[bad[0]]:x}, lowbit 0x{ours[bad[0]]:x}"
    # The NaN payload stays as it is: the rule that sets NumPy apart.
    assert h[0x7C01:0x7C02].astype(np.float32).view(np.uint32)[0] == 0x7F802000


def _fp64_sample():
    rng = np.random.default_rng(32)
    words = [rng.integers(0, 1 << 64, size=1 << 18, dtype=np.uint64)]
    # Every single payload bit of a NaN, both signs, and a few payloads.
    payload = np.uint64(1) << np.arange(52, dtype=np.uint64)
    for sign in (0, 1 << 63):
        words.append(np.uint64(sign) | np.uint64(0x7FF0000000000000) | payload)
        words.append(np.uint64(sign) | np.uint64(0x7FF0000000000000) | (payload - np.uint64(1))[1:])
    # FP16's whole range by exponent, and just off every FP16 midpoint: one
    # FP64 ulp above a midpoint rounds up in one step but to the midpoint
    # (then to even) through FP32.
    h = np.arange(0x7C00, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    mid = (h[:-1] + h[1:]) / 2
    words.append(mid.view(np.uint64))
    words.append(np.nextafter(mid, np.inf).view(np.uint64))
    words.append(np.nextafter(mid, -np.inf).view(np.uint64))
    words.append((-mid).view(np.uint64))
    words.append(np.nextafter(-mid, -np.inf).view(np.uint64))
    return np.concatenate(words).view(np.float64)


def test_float64_into_float16_matches_numpy_on_a_sample():
    x = _fp64_sample()
    with np.errstate(all="ignore"):
        theirs = x.astype(np.float16).view(np.uint16)
        through_fp32 = x.astype(np.float32).astype(np.float16).view(np.uint16)
    ours = lowbit.encode(x, "fp16", profile="numpy")
    bad = np.flatnonzero(ours != theirs)
    assert bad.size == 0, f"fp64 0x{x.view(np.uint64)[bad[0]]:016x}: numpy 0x{theirs[bad[0]]:04x}, lowbit 0x{ours[bad[0]]:04x}"
    # The sample shows the single rounding: NumPy does not go through FP32.
    assert np.count_nonzero(theirs != through_fp32) > 1000


def _fp32_sample():
    words = np.arange(0, 1 << 32, 65537, dtype=np.uint64).astype(np.uint32)
    nans = np.array([0x7F800001, 0xFF800001, 0x7F801FFF, 0x7F802000, 0x7FA00000, 0x7FC00001, 0xFFFFFFFF,
                     0x7F800000, 0xFF800000, 0x477FF000, 0x33000000, 0x33000001], dtype=np.uint32)
    return np.concatenate([words, nans]).view(np.float32)


def test_check_with_profile_numpy_passes_on_astype():
    x = _fp32_sample()
    with np.errstate(all="ignore"):
        y = x.astype(np.float16)
    report = lowbit.testing.check(x, y.view(np.uint16), "fp16", profile="numpy")
    assert report.passed and report.checked == x.size, report.text
    if CLI:  # the command line, on the same files (ctest sets LOWBIT_CLI)
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "x.npy"), x)
            np.save(os.path.join(d, "y.npy"), y)
            run = subprocess.run([CLI, "check", "fp16", "--profile", "numpy", "--input", os.path.join(d, "x.npy"),
                                  "--output", os.path.join(d, "y.npy")], capture_output=True, text=True)
            assert run.returncode == 0, run.stdout + run.stderr
            assert ": MATCH" in run.stdout, run.stdout


def test_diagnosis_of_plain_fp16_names_numpy():
    x = _fp32_sample()
    with np.errstate(all="ignore"):
        y = x.astype(np.float16).view(np.uint16)
    report = lowbit.testing.check(x, y, "fp16")
    assert not report.passed, report.text  # the NaN inputs differ: 0x7C01, not 0x7E00
    assert "profile numpy" in report.matching_conventions(), report.text
    assert "NaN inputs" in report.diagnosis, report.diagnosis
