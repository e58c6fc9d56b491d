#!/usr/bin/env python3
"""Writes what ml_dtypes itself computes, for proptests/ml_dtypes_profile_test.cc.

The C++ test compares the model's "ml_dtypes" profile with these files, so the
profile is checked against the implementation it claims to reproduce, not
against itself (DESIGN.md "Profiles").

Usage: ml_dtypes_dump.py OUT_DIR

Files (all little-endian), one per case:
  decode_<fmt>.bin          every code of <fmt>  -> FP32 bits (astype(float32))
  encode_<src>_<dst>.bin    every input of <src> -> code of <dst> (astype(dst))
with <src> one of
  fp16  all 2^16 codes (numpy float16)
  bf16  all 2^16 codes (ml_dtypes bfloat16)
  fp32  the class-complete sample of FORMAT-FACTS §10.1: every high 16-bit
        pattern x low 16 bits in {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF}
Format names are lowbit's canonical names (format_list.h).

File layout: b"LBMD", then uint32 version (1), count, input bytes, output
bytes, then count inputs, then count outputs. The inputs are stored so that
the reader checks it got exactly the inputs it expects.
"""

import pathlib
import struct
import sys

import ml_dtypes
import numpy as np

EXPECTED_ML_DTYPES = "0.6."  # the profile reproduces ml_dtypes 0.6.x

# lowbit name -> (numpy dtype, bits of a code). Every ml_dtypes type that
# lowbit models; ml_dtypes has no int8 of its own (numpy's int8 is not
# ml_dtypes code), and float8_e4m3 / float8_e3m4 / float8_e4m3b11fnuz /
# int1 / int2 / uint1 / uint2 are not lowbit formats.
FORMATS = {
    "bf16": (ml_dtypes.bfloat16, 16),
    "e4m3": (ml_dtypes.float8_e4m3fn, 8),
    "e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 8),
    "e5m2": (ml_dtypes.float8_e5m2, 8),
    "e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 8),
    "e2m3": (ml_dtypes.float6_e2m3fn, 6),
    "e3m2": (ml_dtypes.float6_e3m2fn, 6),
    "e2m1": (ml_dtypes.float4_e2m1fn, 4),
    "e8m0": (ml_dtypes.float8_e8m0fnu, 8),
    "int4": (ml_dtypes.int4, 4),
    "uint4": (ml_dtypes.uint4, 4),
}

# Destinations of encodes: every format above, plus FP16 (bf16 -> fp16 is an
# ml_dtypes cast; fp32 -> fp16 is numpy's, which ml_dtypes users get too).
ENCODE_DESTINATIONS = dict(FORMATS, fp16=(np.float16, 16))

SAMPLE_LOW_HALVES = (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF)


def fp32_sample():
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array(SAMPLE_LOW_HALVES, dtype=np.uint32)
    return (high[:, None] | low[None, :]).reshape(-1)


def sources():
    all16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    return {
        "fp16": (all16, all16.view(np.float16)),
        "bf16": (all16, all16.view(ml_dtypes.bfloat16)),
        "fp32": (fp32_sample(), fp32_sample().view(np.float32)),
    }


def code_bits(values, bits):
    """The codes of an ml_dtypes/numpy array as unsigned integers.

    Sub-byte types sit one per byte (FORMAT-FACTS §8.3); int4/uint4 keep only
    the low nibble meaningful, so mask to the code width there. The float
    sub-byte types are left unmasked: a stray high bit would be a finding.
    """
    itemsize = values.dtype.itemsize
    raw = values.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[itemsize])
    if values.dtype in (ml_dtypes.int4, ml_dtypes.uint4):
        raw = raw & np.uint8((1 << bits) - 1)
    return raw


def write(path, inputs, outputs):
    inputs = np.ascontiguousarray(inputs)
    outputs = np.ascontiguousarray(outputs)
    assert inputs.shape == outputs.shape
    with open(path, "wb") as f:
        f.write(b"LBMD")
        f.write(struct.pack("<IIII", 1, inputs.size, inputs.dtype.itemsize, outputs.dtype.itemsize))
        f.write(inputs.astype(inputs.dtype.newbyteorder("<")).tobytes())
        f.write(outputs.astype(outputs.dtype.newbyteorder("<")).tobytes())


def main(argv):
    if len(argv) != 2:
        sys.exit(f"usage: {argv[0]} OUT_DIR")
    if not ml_dtypes.__version__.startswith(EXPECTED_ML_DTYPES):
        sys.exit(f"ml_dtypes {ml_dtypes.__version__} found; the ml_dtypes profile models "
                 f"{EXPECTED_ML_DTYPES}x (requirements.txt pins it; rerun scripts/setup.sh)")
    out = pathlib.Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    # NaN/Inf into int4 raises numpy's "invalid value" warning; the codes are
    # what we want to record.
    with np.errstate(invalid="ignore", over="ignore"):
        for name, (dtype, bits) in FORMATS.items():
            codes = np.arange(1 << bits, dtype=np.uint32)
            storage = codes.astype(np.uint16 if bits > 8 else np.uint8)
            decoded = storage.view(dtype).astype(np.float32).view(np.uint32)
            write(out / f"decode_{name}.bin", storage, decoded)
            count += 1
        for src_name, (src_codes, src_values) in sources().items():
            for dst_name, (dtype, bits) in ENCODE_DESTINATIONS.items():
                if dst_name == src_name:
                    continue
                write(out / f"encode_{src_name}_{dst_name}.bin", src_codes,
                      code_bits(src_values.astype(dtype), bits))
                count += 1
    (out / "versions.txt").write_text(
        f"ml_dtypes {ml_dtypes.__version__}\nnumpy {np.__version__}\n"
        f"python {sys.version.split()[0]}\n")
    print(f"ml_dtypes_dump: {count} files in {out} "
          f"(ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__})")


if __name__ == "__main__":
    main(sys.argv)
