#!/usr/bin/env python3
"""Writes what ml_dtypes itself computes, for proptests/profiles/ml_dtypes_profile_test.cc.

The C++ test compares the model's "ml_dtypes" profile with these files, so the
profile is checked against the implementation it claims to reproduce, not
against itself (docs/design.md "Profiles").

Usage: ml_dtypes_dump.py OUT_DIR

The script knows no lowbit format: it dumps every real-valued type that the
installed ml_dtypes defines, under ml_dtypes' own name. The C++ test picks
the files of the formats whose format_list.h row names an ml_dtypes type, so
a format added to lowbit is compared with ml_dtypes with no edit here.

Files (all little-endian), named by numpy/ml_dtypes type names:
  types.txt                   one line per dumped type: "<name> <bits>"
  decode_<type>.bin           every code of <type> -> FP32 bits (astype(float32))
  encode_<src>_to_<dst>.bin   every input of <src> -> code of <dst> (astype(dst))
with <dst> every dumped type and float16, and <src> one of
  float16   all 2^16 codes (numpy float16)
  bfloat16  all 2^16 codes (ml_dtypes bfloat16)
  float32   the class-complete sample of docs/formats-reference.md §10.1: every
            high 16-bit pattern x low 16 bits in {0x0000, 0x0001, 0x7FFF,
            0x8000, 0x8001, 0xFFFF}

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


def ml_dtypes_types():
    """name -> (numpy type, bits of a code) for every real ml_dtypes type.

    Found by asking ml_dtypes (its __all__, finfo/iinfo), not from a list, so
    that a type lowbit does not know yet is dumped too. The complex types
    (complex32, bcomplex32) are pairs of floats, not element formats.
    """
    types = {}
    for name in ml_dtypes.__all__:
        obj = getattr(ml_dtypes, name)
        if not (isinstance(obj, type) and issubclass(obj, np.generic)):
            continue
        try:
            info = ml_dtypes.finfo(obj)
        except (TypeError, ValueError):
            try:
                info = ml_dtypes.iinfo(obj)
            except (TypeError, ValueError):
                continue
        if np.dtype(info.dtype) != np.dtype(obj):  # complex: finfo describes a part
            continue
        bits = info.bits
        types[name] = (obj, bits)
    return types


FORMATS = ml_dtypes_types()

# Destinations of encodes: every type above, plus FP16 (bfloat16 -> float16
# is an ml_dtypes cast; float32 -> float16 is numpy's, which ml_dtypes users
# get too).
ENCODE_DESTINATIONS = dict(FORMATS, float16=(np.float16, 16))

SAMPLE_LOW_HALVES = (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF)


def fp32_sample():
    high = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array(SAMPLE_LOW_HALVES, dtype=np.uint32)
    return (high[:, None] | low[None, :]).reshape(-1)


def sources():
    all16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    return {
        "float16": (all16, all16.view(np.float16)),
        "bfloat16": (all16, all16.view(ml_dtypes.bfloat16)),
        "float32": (fp32_sample(), fp32_sample().view(np.float32)),
    }


def code_bits(values, bits):
    """The codes of an ml_dtypes/numpy array as unsigned integers.

    Sub-byte types sit one per byte (docs/formats-reference.md §8.3); the
    sub-byte integer types keep only the low bits meaningful, so mask to the
    code width there. The float sub-byte types are left unmasked: a stray high
    bit would be a finding.
    """
    itemsize = values.dtype.itemsize
    raw = values.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[itemsize])
    if values.dtype.kind in ("i", "u") and bits < 8 * itemsize:
        raw = raw & raw.dtype.type((1 << bits) - 1)
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
    # NaN/Inf into the integer types raises numpy's "invalid value" warning;
    # the codes are what we want to record.
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
                write(out / f"encode_{src_name}_to_{dst_name}.bin", src_codes,
                      code_bits(src_values.astype(dtype), bits))
                count += 1
    (out / "types.txt").write_text(
        "".join(f"{name} {bits}\n" for name, (_, bits) in FORMATS.items()))
    (out / "versions.txt").write_text(
        f"ml_dtypes {ml_dtypes.__version__}\nnumpy {np.__version__}\n"
        f"python {sys.version.split()[0]}\n")
    print(f"ml_dtypes_dump: {count} files in {out} "
          f"(ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__})")


if __name__ == "__main__":
    main(sys.argv)
