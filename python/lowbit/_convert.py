"""Element conversions: lowbit.encode and lowbit.decode.

Every input, whatever library holds it (NumPy, ml_dtypes, torch on the CPU or
a GPU, CuPy and other DLPack arrays), takes the same one path: the values and
the output buffer come from _arrays, the extension's registry chooses the
kernel (python/src/module.cc), and only the type of the returned codes
depends on the library.

>>> import numpy as np, lowbit
>>> lowbit.encode(np.array([1.0, 448.0, 500.0], np.float32), "e4m3")
array([ 56, 126, 127], dtype=uint8)
>>> lowbit.decode(np.array([56, 126], np.uint8), "e4m3")
array([  1., 448.], dtype=float32)
>>> lowbit.encode(np.array([500.0], np.float32), "e4m3", saturate=True)
array([126], dtype=uint8)
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import _lowbit
from ._arrays import (_as_ml_dtypes, _check_out, _check_torch_code_dtype, _codes_of_ml_dtypes, _device_of,
                      _encode_input, _Held, _is_torch, _ml_dtypes_format, _pack_torch_fp4_x2, _random_bits_for,
                      _stream_of, _torch, _torch_code_view, _torch_format_of, _unpack_torch_fp4_x2)
from ._formats import _TORCH_PACKED_FP4, Format, _format, _ml_dtypes


def encode(x, fmt, *, rounding: str = "rne", saturate: bool = False, profile: Optional[str] = None,
           random_bits=None, random_bit_count: int = 0, flags: bool = False, out=None,
           ml_dtypes: bool = False, dtype=None):
    """Encode values into the codes of an element format.

    x: float64, float32, float16 or bfloat16 (ml_dtypes) values of any shape,
    strided or not, each converted directly (an FP64 input is never rounded to
    FP32 first); a torch tensor (CPU or CUDA, zero-copy) or any DLPack array.
    fmt: a format name of the grammar ("e4m3", "float8_e4m3fn", "fp4_e2m1").
    rounding: rne, rna, rtz, up, down, odd or stochastic (then random_bits:
    one uint32 per element). saturate: clamp overflow to the largest finite
    value. profile: encode as an implementation does ("ml_dtypes", "nvidia",
    "pytorch-cpu", ...). flags=True also returns the IEEE-style flags per
    element (FLAG_INEXACT | FLAG_UNDERFLOW | FLAG_OVERFLOW | FLAG_INVALID).
    out: a writable C-contiguous array of codes to fill. ml_dtypes=True
    returns the codes as the format's ml_dtypes array. dtype: the type of the
    returned codes: for torch tensors the format's torch type where torch has
    one (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e8m0fnu, ...;
    torch.float4_e2m1fn_x2 packs two E2M1 codes per byte, the first in the
    low nibble, so the last dimension must be even and is halved), for NumPy
    arrays the format's ml_dtypes type; an out= of such a type works the same.

    Returns uint8 codes (uint16 for 16-bit formats) of x's shape.

    >>> lowbit.encode(np.array([0.3, -2.5], np.float64), "e2m1")
    array([ 1, 12], dtype=uint8)
    >>> codes, fl = lowbit.encode(np.array([0.3, 1e6], np.float32), "e4m3", flags=True)
    >>> codes, fl  # 0.3 -> 0.296875 (inexact); 1e6 overflows E4M3 to NaN (it has no Inf)
    (array([ 42, 127], dtype=uint8), array([1, 5], dtype=uint8))
    """
    f = _format(fmt)
    held = _encode_input(x)  # NumPy, ml_dtypes, torch (CPU or CUDA), CuPy: one view
    out, finish = _code_output(held, f, out, dtype, ml_dtypes, flags)
    rb = _random_bits_for(held, random_bits)
    fl = held.empty(held.shape, np.dtype(np.uint8)) if flags else None
    with held.place() as stream:
        _lowbit.encode(held.array, held.name, out, f.name, rounding, saturate, profile, rb, random_bit_count, fl,
                       stream)
    codes = finish(out)
    return (codes, fl) if flags else codes


def _code_output(held: _Held, f: Format, out, dtype, ml_dtypes: bool, flags: bool):
    """The buffer the extension writes one code per element into (out=, or
    allocated in the values' library), and how the codes are returned: the
    type asked for (dtype=, ml_dtypes=, a typed out=), or torch's
    float4_e2m1fn_x2 (two codes per byte, low nibble first)."""
    if held.library == "numpy":
        if dtype is not None:
            dt = np.dtype(dtype)
            if dt != f.code_dtype:
                if _ml_dtypes_format(dt) is not f:
                    raise TypeError(f"dtype {dt} does not hold {f.name} codes (give {f.code_dtype} or "
                                    f"{f.ml_dtypes_name or 'no ml_dtypes type: it has none'})")
                ml_dtypes = True
        if out is None:
            out = np.empty(held.shape, f.code_dtype)
        elif not (type(out) is np.ndarray and out.dtype == f.code_dtype and out.shape == held.shape
                  and (fl := out.flags).c_contiguous and fl.writeable):
            _check_out(out, held.shape, f.code_dtype)  # raises, naming the problem
        return out, ((lambda codes: _as_ml_dtypes(codes, f)) if ml_dtypes else _same)
    if held.library == "dlpack":
        return (held.empty(held.shape, f.code_dtype) if out is None else out), _same
    return _torch_code_output(held, f, out, dtype, flags)


def _same(codes):
    return codes


def _torch_code_output(held: _Held, f: Format, out, dtype, flags: bool):
    torch = _torch()
    x = held.array
    packed_out = None
    if out is not None and _check_torch_code_dtype(out.dtype, f, "out"):
        want = tuple(x.shape[:-1]) + (x.shape[-1] // 2,) if x.dim() else None
        if want is None or x.shape[-1] % 2 or tuple(out.shape) != want:
            raise ValueError(f"out of torch.{_TORCH_PACKED_FP4} has shape {tuple(out.shape)}; codes of an input of "
                             f"shape {tuple(x.shape)} need {want} (an even last dimension, halved)")
        if out.device != x.device:
            raise ValueError("out is on another device than the input")
        if not out.is_contiguous():
            raise ValueError("out must be contiguous (the kernels write it in place)")
        packed_out, out = out, None
        dtype = packed_out.dtype
    pack = False
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype of torch codes is a torch.dtype, got {dtype!r}")
    if dtype is not None:
        pack = _check_torch_code_dtype(dtype, f, "dtype")
        if pack and x.dim() and x.shape[-1] % 2:
            raise ValueError(f"torch.{_TORCH_PACKED_FP4} holds two codes per byte: the last dimension must be "
                             f"even, got shape {tuple(x.shape)}")
    if flags and pack:
        raise ValueError(f"flags=True with torch.{_TORCH_PACKED_FP4}: ask for one code per byte")
    if out is None:
        out = held.empty(held.shape, f.code_dtype)
        result = out
    else:
        if out.device != x.device:
            raise ValueError("out is on another device than the input")
        if not out.is_contiguous():
            raise ValueError("out must be contiguous (the kernels write it in place)")
        if tuple(out.shape) != tuple(x.shape):
            raise ValueError(f"out has shape {tuple(out.shape)}, expected {tuple(x.shape)}")
        result, out = out, _torch_code_view(out, f)

    def finish(_):
        codes = result
        if dtype is None:
            return codes
        if pack:
            codes = _pack_torch_fp4_x2(codes)  # on the current stream, after the encode
            if packed_out is not None:
                packed_out.view(torch.uint8).copy_(codes.view(torch.uint8))
                codes = packed_out
        elif codes.dtype != dtype:
            codes = codes.view(dtype)
        return codes

    return out, finish


_DECODE_OUTPUTS = {np.dtype(np.float64): "fp64", np.dtype(np.float32): "fp32", np.dtype(np.float16): "fp16"}


def _decode_dtype(dtype) -> tuple[np.dtype, str]:
    if isinstance(dtype, str):
        if dtype == "bfloat16":
            if _ml_dtypes is None:
                raise TypeError("dtype bfloat16 needs ml_dtypes")
            return np.dtype(_ml_dtypes.bfloat16), "bf16"
        dtype = np.dtype(dtype)
    dt = np.dtype(dtype)
    name = _DECODE_OUTPUTS.get(dt)
    if name is None:
        mf = _ml_dtypes_format(dt)
        if mf is not None and mf.name == "bf16":
            return dt, "bf16"
        raise TypeError(f"decode returns float64, float32, float16 or bfloat16, not {dt}")
    return dt, name


def decode(codes, fmt=None, *, profile: Optional[str] = None, dtype=np.float32, out=None):
    """Decode codes of an element format into values.

    codes: unsigned integers (uint8, or uint16 for 16-bit formats) of any
    shape, or an ml_dtypes array (then fmt may be omitted), or a torch tensor
    (torch's float8 types included; CPU or CUDA, zero-copy). Each code must
    fit the format's bits. dtype: float32 (default; exact for every format up
    to 32 bits), float64 (exact), float16 or bfloat16 (rounded to nearest
    even where they cannot hold the value). profile: decode as an
    implementation does (its NaN sign and payload).

    >>> lowbit.decode(np.array([0x7E, 0xFF, 0x01], np.uint8), "e4m3")
    array([4.480000e+02,          nan, 1.953125e-03], dtype=float32)
    >>> lowbit.decode(np.array([127, 128], np.uint8), "e8m0", dtype=np.float64)
    array([1., 2.])
    """
    if _is_torch(codes):
        return _decode_torch(codes, fmt, profile, dtype, out)
    if not isinstance(codes, np.ndarray):
        codes = np.from_dlpack(codes) if hasattr(codes, "__dlpack__") else np.asarray(codes)
    mf = _ml_dtypes_format(codes.dtype)
    if mf is not None:
        if fmt is not None and _format(fmt) is not mf:
            raise TypeError(f"codes are {codes.dtype}, not {_format(fmt).name}")
        f = mf
        codes = _codes_of_ml_dtypes(codes, f)
    else:
        if fmt is None:
            raise TypeError("decode needs fmt unless the codes are an ml_dtypes array")
        f = _format(fmt)
        if codes.dtype != f.code_dtype:
            if codes.dtype.kind in "iu" and codes.dtype.itemsize <= f.code_dtype.itemsize and codes.size and (
                    codes.min() >= 0):
                codes = codes.astype(f.code_dtype)
            elif codes.dtype.kind in "iu" and codes.size == 0:
                codes = codes.astype(f.code_dtype)
            else:
                raise TypeError(f"{f.name} codes are {f.code_dtype}, got {codes.dtype}")
    if not codes.flags.c_contiguous:
        codes = np.ascontiguousarray(codes)
    dt, to_name = _decode_dtype(dtype)
    if out is None:
        out = np.empty(codes.shape, dt)
    else:
        _check_out(out, codes.shape, dt)
    out_view = out.view(np.uint16) if to_name == "bf16" else out
    _lowbit.decode(codes, f.name, out_view, to_name, profile, 0)
    return out


def _decode_torch(codes, fmt, profile, dtype, out):
    torch = _torch()
    if str(codes.dtype) == "torch." + _TORCH_PACKED_FP4:
        if fmt is not None and _format(fmt).name != "e2m1":
            raise TypeError(f"codes are {codes.dtype}, not {_format(fmt).name}")
        codes, fmt = _unpack_torch_fp4_x2(codes.detach().contiguous()), "e2m1"
    tf = _torch_format_of(codes)
    if tf is not None and codes.dtype not in (torch.int8, torch.float32, torch.float64, torch.float16,
                                              torch.bfloat16):
        if fmt is not None and _format(fmt) is not tf:
            raise TypeError(f"codes are {codes.dtype}, not {_format(fmt).name}")
        f = tf
    else:
        if fmt is None:
            raise TypeError("decode needs fmt unless the codes are a torch float8 tensor")
        f = _format(fmt)
    codes = codes.detach()
    if not codes.is_contiguous():
        codes = codes.contiguous()
    view = _torch_code_view(codes, f)
    tdt = {np.float32: torch.float32, np.float64: torch.float64, np.float16: torch.float16}.get(
        dtype if isinstance(dtype, type) else None, dtype)
    if tdt == "bfloat16":
        tdt = torch.bfloat16
    names = {torch.float32: "fp32", torch.float64: "fp64", torch.float16: "fp16", torch.bfloat16: "bf16"}
    if tdt not in names:
        raise TypeError(f"decode returns float64, float32, float16 or bfloat16, not {dtype}")
    if out is None:
        out = torch.empty(codes.shape, dtype=tdt, device=codes.device)
    with _device_of(codes):
        _lowbit.decode(view, f.name, out, names[tdt], profile, _stream_of(codes))
    return out
