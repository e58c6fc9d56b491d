#!/usr/bin/env python3
"""Compares the pytorch-cpu, pytorch-cuda and ml_dtypes profiles (written by
pytorch_profile_dump.cc) with the real libraries: torch Tensor.to(dtype) on the
CPU and on CUDA, and ml_dtypes/numpy astype. Prints one row per
(profile, source, destination) and exits non-zero on any mismatch or error.

Usage: pytorch_profile_check.py DATA_DIR
"""
import glob
import os
import sys
import warnings

import numpy as np

REFUSED = 0xFFFFFFFF


def load(path):
    return np.fromfile(path, dtype="<u4")


def torch_dtypes(torch):
    names = {
        "fp32": "float32", "fp16": "float16", "bf16": "bfloat16",
        "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2",
        "e4m3fnuz": "float8_e4m3fnuz", "e5m2fnuz": "float8_e5m2fnuz",
        "e8m0": "float8_e8m0fnu",
    }
    return {k: getattr(torch, v) for k, v in names.items() if hasattr(torch, v)}


def read_formats(data):
    """lowbit's formats as pytorch_profile_dump wrote them (format_list.h):
    name -> (bits, is_float, is_signed, ml_dtypes type name or None)."""
    formats = {}
    with open(os.path.join(data, "formats.txt")) as f:
        for line in f:
            name, bits, kind, signed, ml_name = line.split()
            formats[name] = (int(bits), kind == "float", signed == "1",
                             None if ml_name == "-" else ml_name)
    return formats


FORMATS = {}  # filled by main() from formats.txt


def ml_dtypes_types(ml_dtypes):
    out = {k: getattr(ml_dtypes, v[3]) for k, v in FORMATS.items()
           if v[3] is not None and hasattr(ml_dtypes, v[3])}
    out["fp32"] = np.float32
    out["fp16"] = np.float16
    return out


def bits_of(fmt):
    return FORMATS[fmt][0]


def is_int(fmt):
    return not FORMATS[fmt][1]


class Torch:
    def __init__(self, torch, device):
        self.torch, self.device = torch, device
        self.dt = torch_dtypes(torch)

    def _tensor(self, fmt, codes):
        t = self.torch
        if fmt == "fp32":
            x = t.from_numpy(codes.astype(np.uint32).view(np.int32).copy())
            return x.to(self.device).view(t.float32)
        if bits_of(fmt) == 16:
            x = t.from_numpy(codes.astype(np.uint16).view(np.int16).copy())
            return x.to(self.device).view(self.dt[fmt])
        x = t.from_numpy(codes.astype(np.uint8).copy())
        return x.to(self.device).view(self.dt[fmt])

    def _bits(self, y):
        t = self.torch
        size = y.element_size()
        view = {4: t.int32, 2: t.int16, 1: t.uint8}[size]
        out = y.view(view).cpu().numpy()
        return out.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[size]).astype(np.uint32)

    def encode(self, src, dst, inputs):
        return self._bits(self._tensor(src, inputs).to(self.dt[dst]))

    def decode(self, src, codes):
        return self._bits(self._tensor(src, codes).to(self.torch.float32))


class MlDtypes:
    def __init__(self, ml_dtypes):
        self.dt = ml_dtypes_types(ml_dtypes)

    def _array(self, fmt, codes):
        if fmt == "fp32":
            return codes.astype(np.uint32).view(np.float32)
        if bits_of(fmt) == 16:
            return codes.astype(np.uint16).view(self.dt[fmt])
        if is_int(fmt):
            bits, _, signed, _ = FORMATS[fmt]
            vals = codes.astype(np.int64)
            if signed:
                vals = np.where(vals >= 1 << (bits - 1), vals - (1 << bits), vals)
            return vals.astype(np.int8).astype(self.dt[fmt])
        return codes.astype(np.uint8).view(self.dt[fmt])

    def _bits(self, y, fmt):
        if is_int(fmt):
            mask = (1 << bits_of(fmt)) - 1
            return (y.astype(np.int16).astype(np.int64) & mask).astype(np.uint32)
        size = y.dtype.itemsize
        return y.view({4: np.uint32, 2: np.uint16, 1: np.uint8}[size]).astype(np.uint32)

    def encode(self, src, dst, inputs):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return self._bits(self._array(src, inputs).astype(self.dt[dst]), dst)

    def decode(self, src, codes):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return self._array(src, codes).astype(np.float32).view(np.uint32).astype(np.uint32)


def is_nan_input(fmt, codes):
    c = codes.astype(np.uint64)
    if fmt == "fp32":
        return (c & 0x7FFFFFFF) > 0x7F800000
    if fmt == "fp16":
        return (c & 0x7FFF) > 0x7C00
    if fmt == "bf16":
        return (c & 0x7FFF) > 0x7F80
    return np.zeros(len(codes), dtype=bool)


def negative_input(fmt, codes):
    bits = {"fp32": 31, "fp16": 15, "bf16": 15}.get(fmt, 7)
    return ((codes.astype(np.uint64) >> bits) & 1) == 1


def main():
    data = sys.argv[1]
    FORMATS.update(read_formats(data))
    sample = load(os.path.join(data, "sample_fp32.bin"))
    all16 = np.arange(0x10000, dtype=np.uint32)
    inputs = {"fp32": sample, "fp16": all16, "bf16": all16}

    libs, errors = {}, []
    try:
        import torch
        print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}")
        libs["pytorch-cpu"] = Torch(torch, "cpu")
        if torch.cuda.is_available():
            print(f"device: {torch.cuda.get_device_name(0)}")
            libs["pytorch-cuda"] = Torch(torch, "cuda")
        else:
            errors.append("pytorch-cuda: no CUDA device")
    except ImportError as e:
        errors.append(f"torch: {e}")
    try:
        import ml_dtypes
        print(f"ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}")
        libs["ml_dtypes"] = MlDtypes(ml_dtypes)
    except ImportError as e:
        errors.append(f"ml_dtypes: {e}")

    rows = []
    total_bad = 0
    for path in sorted(glob.glob(os.path.join(data, "enc__*.bin")) +
                       glob.glob(os.path.join(data, "dec__*.bin"))):
        parts = os.path.basename(path)[:-4].split("__")
        kind, profile, src = parts[0], parts[1], parts[2]
        dst = parts[3] if kind == "enc" else "fp32"
        model = load(path)
        lib = libs.get(profile)
        label = f"{profile:13s} {src:9s} -> {dst:9s}"
        if lib is None:
            errors.append(f"{label}: library not available")
            continue
        if kind == "enc":
            x = inputs[src]
        else:
            x = np.arange(len(model), dtype=np.uint32)
        try:
            got = lib.encode(src, dst, x) if kind == "enc" else lib.decode(src, x)
        except Exception as e:  # an unsupported cast in the library is a finding
            errors.append(f"{label}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            continue
        checked = model != REFUSED
        bad = checked & (got != model)
        nan_in = is_nan_input(src, x)
        n_bad = int(bad.sum())
        total_bad += n_bad
        examples = [f"{int(x[i]):#x}: lib {int(got[i]):#x} model {int(model[i]):#x}"
                    for i in np.flatnonzero(bad)[:3]]
        if n_bad:
            # What the library gave on the mismatched inputs, by input sign.
            for sign_name, sign_mask in (("+", ~negative_input(src, x)), ("-", negative_input(src, x))):
                vals, counts = np.unique(got[bad & sign_mask], return_counts=True)
                if len(vals):
                    shown = ", ".join(f"{int(v):#x} x{int(c)}" for v, c in list(zip(vals, counts))[:6])
                    examples.append(f"lib on {sign_name}inputs: {shown}")
        rows.append((label, int(checked.sum()), n_bad, int((bad & nan_in).sum()), examples))

    print(f"\n{'profile       source       dest':40s} {'checked':>9s} {'mismatch':>9s} {'nan-in':>7s}")
    for label, checked, n_bad, n_nan, examples in rows:
        print(f"{label:40s} {checked:9d} {n_bad:9d} {n_nan:7d}  {'; '.join(examples)}")
    for e in errors:
        print(f"ERROR {e}")
    print(f"\n{len(rows)} comparisons, {total_bad} mismatches, {len(errors)} errors")
    return 1 if total_bad or errors else 0


if __name__ == "__main__":
    sys.exit(main())
