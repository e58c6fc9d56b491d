"""Arrays in and out: NumPy, ml_dtypes, PyTorch and other DLPack arrays.

This module only maps arrays to the flat C-contiguous buffers the extension
takes (python/src/module.cc checks what a kernel relies on) and back: which
library holds an array, its device and current stream, the code types of each
library (torch's float8 types, torch.float4_e2m1fn_x2 packing two E2M1 codes
per byte, ml_dtypes types), and the moves of an axis to the last position
that quantize and dequantize use. No number is computed here.
"""

from __future__ import annotations

import contextlib
import math
import sys
from typing import Optional

import numpy as np

from ._formats import _TORCH_PACKED_FP4, Format, _ml_dtypes, _resolves_to, formats


def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _torch():
    import torch
    return torch


_NUMPY_INPUTS = {np.dtype(np.float64): "fp64", np.dtype(np.float32): "fp32",
                 np.dtype(np.float16): "fp16"}


def _ml_dtypes_format(dtype: np.dtype) -> Optional[Format]:
    """The format of an ml_dtypes array type (through the grammar), or None."""
    if _ml_dtypes is None or dtype.kind != "V" and dtype.type.__module__.split(".")[0] != "ml_dtypes":
        return None
    name = getattr(dtype.type, "__name__", None) or dtype.name
    fmt = _resolves_to(name)
    return formats[fmt] if fmt is not None else None


def _numpy_input(x) -> tuple[np.ndarray, str]:
    """A C-contiguous array of fp64/fp32/fp16/bf16 bits and its format name."""
    if not isinstance(x, np.ndarray):
        if hasattr(x, "__dlpack__") and not isinstance(x, (list, tuple)):
            x = np.from_dlpack(x)  # CPU arrays of other libraries, zero-copy
        else:
            x = np.asarray(x, dtype=np.float64 if not _is_float_array_like(x) else None)
    dt = x.dtype
    name = _NUMPY_INPUTS.get(dt)
    if name is None:
        mf = _ml_dtypes_format(dt)
        if mf is not None and mf.name == "bf16":
            name = "bf16"
            x = x.view(np.uint16)
        else:
            raise TypeError(
                f"encode takes float64, float32, float16 or bfloat16 values, got {dt}"
                + (" (decode these codes first)" if mf is not None else ""))
    if not x.flags.c_contiguous:
        x = np.ascontiguousarray(x)
    return x, name


def _is_float_array_like(x) -> bool:
    try:
        return np.asarray(x).dtype.kind == "f"
    except Exception:  # noqa: BLE001 - let np.asarray report it below
        return False


def _check_out(out, shape, dtype, what="out") -> None:
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{what} must be a numpy.ndarray, got {type(out).__name__}")
    if not out.flags.writeable:
        raise ValueError(f"{what} is read-only")
    if not out.flags.c_contiguous:
        raise ValueError(f"{what} must be C-contiguous (the kernels write it in place)")
    if out.dtype != dtype:
        raise TypeError(f"{what} has dtype {out.dtype}, expected {dtype}")
    if out.shape != tuple(shape):
        raise ValueError(f"{what} has shape {out.shape}, expected {tuple(shape)}")


def _device_of(t):
    """The tensor's GPU made current while a kernel launches (the CUDA kernels
    launch on the current device); nothing for CPU tensors or when it is
    current already."""
    if t.is_cuda and t.device.index is not None and t.device.index != _torch().cuda.current_device():
        return _torch().cuda.device(t.device)
    return contextlib.nullcontext()


def _stream_of(t) -> int:
    torch = _torch()
    return int(torch.cuda.current_stream(t.device).cuda_stream) if t.is_cuda else 0


def _as_ml_dtypes(codes: np.ndarray, f: Format):
    dt = f.ml_dtype()
    if dt is None:
        raise ValueError(f"{f.name} has no ml_dtypes type" + ("" if _ml_dtypes else " (ml_dtypes is not installed)"))
    # ml_dtypes stores one code per byte, in the low bits (int4 -1 is 0x0F).
    return codes.view(dt)


def _torch_format_of(t) -> Optional[Format]:
    name = str(t.dtype).removeprefix("torch.")
    fmt = _resolves_to(name)
    return formats[fmt] if fmt is not None else None


def _torch_code_view(t, f: Format):
    """A torch tensor of codes as an unsigned view (zero-copy)."""
    want = _torch_code_dtype(f)
    return t.view(want) if t.dtype != want else t


def _torch_code_dtype(f: Format):
    """The torch type that holds one code of f (torch has no uint16/uint32
    arithmetic everywhere, so the signed type of that width)."""
    return _torch_int_type(f.code_dtype)


def _torch_dtype_name(dt) -> str:
    return str(dt).removeprefix("torch.")


def _check_torch_code_dtype(dt, f: Format, what: str) -> bool:
    """Whether torch type `dt` holds f's codes packed (float4_e2m1fn_x2);
    raises TypeError when it holds no codes of f at all."""
    torch = _torch()
    name = _torch_dtype_name(dt)
    if name == _TORCH_PACKED_FP4:
        if f.name != _resolves_to(_TORCH_PACKED_FP4.removesuffix("_x2")):
            raise TypeError(f"{what} torch.{name} holds E2M1 codes, not {f.name}")
        return True
    if dt in (torch.uint8, _torch_code_dtype(f)):
        return False
    held = _resolves_to(name)
    if held != f.name:
        raise TypeError(f"{what} {dt} does not hold {f.name} codes (give {_torch_code_dtype(f)}"
                        + (f" or torch.{f.torch_name})" if f.torch_name else ")"))
    return False


def _pack_torch_fp4_x2(codes):
    """Two E2M1 codes per byte, the first in the low nibble
    (c10/util/Float4_e2m1fn_x2.h), the last dimension halved; the inverse of
    _unpack_torch_fp4_x2 (a change of layout only: the codes are the
    extension's). Runs on the current stream, after the encode."""
    torch = _torch()
    b = codes.view(torch.uint8)
    if b.dim() == 0 or b.shape[-1] % 2:
        raise ValueError("torch.float4_e2m1fn_x2 holds two codes per byte: the last dimension must be even, "
                         f"got shape {tuple(b.shape)}")
    pairs = b.reshape(*b.shape[:-1], b.shape[-1] // 2, 2)
    return (pairs[..., 0] | (pairs[..., 1] << 4)).view(getattr(torch, _TORCH_PACKED_FP4))


def _codes_of_ml_dtypes(a: np.ndarray, f: Format) -> np.ndarray:
    codes = a.view(f.code_dtype)
    if f.kind != "float" and codes.size and codes.max() > (1 << f.bits) - 1:
        codes = codes & np.array((1 << f.bits) - 1, f.code_dtype)  # defensive: only the code's bits
    return codes


def _unpack_torch_fp4_x2(codes):
    """torch.float4_e2m1fn_x2 holds two E2M1 codes per byte, the first in
    the low nibble (c10/util/Float4_e2m1fn_x2.h); one code per byte,
    the last dimension doubled. Only a change of layout: the codes are
    decoded by the extension."""
    torch = _torch()
    b = codes.view(torch.uint8)
    return torch.stack((b & 0xF, b >> 4), dim=-1).reshape(*b.shape[:-1], -1) if b.dim() else b


def _on_device(x) -> bool:
    """A DLPack array that is not in host memory (kDLCPU is 1)."""
    return (not isinstance(x, np.ndarray) and hasattr(x, "__dlpack_device__")
            and x.__dlpack_device__()[0] != 1)


def _foreign_stream(x) -> Optional[int]:
    """The current stream of a device array's own library (CuPy), or None."""
    mod = sys.modules.get(type(x).__module__.split(".")[0])
    try:
        return int(mod.cuda.get_current_stream().ptr)
    except AttributeError:  # no such library API (or no module): torch's current stream
        return None


def _torch_from_device_array(x):
    torch = _torch()
    return torch.from_dlpack(x), _foreign_stream(x)


def _as_device_rows(t, axis: int):
    """x moved so that `axis` is last, as a contiguous [rows, cols] tensor (a
    view when x is already laid out so)."""
    nd = t.dim()
    if nd == 0:
        t = t.reshape(1)
        nd = 1
    ax = axis if axis >= 0 else axis + nd
    if not 0 <= ax < nd:
        raise ValueError(f"axis {axis} is out of range for a {nd}-d array")
    moved = t.movedim(ax, -1) if nd > 1 else t
    cols = int(moved.shape[-1])
    rows = math.prod(moved.shape[:-1]) if nd > 1 else 1
    return moved.contiguous().reshape(rows, cols), rows, cols


class _OnDevice:
    """The current device and stream of a CUDA call: the tensor's device made
    current (the kernels launch on the current device) and its current
    stream, or the caller's library's stream."""

    def __init__(self, t, stream: Optional[int]):
        torch = _torch()
        self._guard = torch.cuda.device(t.device)
        self._t = t
        self._given = stream

    def __enter__(self) -> int:
        self._guard.__enter__()
        if self._given is not None:
            return self._given
        return int(_torch().cuda.current_stream(self._t.device).cuda_stream)

    def __exit__(self, *exc):
        return self._guard.__exit__(*exc)


def _unmove(a, axis: int, ndim: int):
    if ndim <= 1:
        return a
    return a.movedim(-1, axis) if _is_torch(a) else np.moveaxis(a, -1, axis)


def _as_rows(x: np.ndarray, axis: int) -> tuple[np.ndarray, int, int]:
    if x.ndim == 0:
        x = x.reshape(1)
    ax = axis if axis >= 0 else axis + x.ndim
    if not 0 <= ax < x.ndim:
        raise ValueError(f"axis {axis} is out of range for a {x.ndim}-d array")
    moved = np.moveaxis(x, ax, -1) if x.ndim > 1 else x
    cols = moved.shape[-1]
    rows = int(np.prod(moved.shape[:-1])) if moved.ndim > 1 else 1
    return np.ascontiguousarray(moved, np.float32).reshape(rows, cols), rows, cols


def _rows_cols(shape: tuple, axis: int) -> tuple[int, int, tuple]:
    """rows, cols and the moved shape of a tensor of `shape` quantized along `axis`."""
    if not shape:
        shape = (1,)
    nd = len(shape)
    ax = axis if axis >= 0 else axis + nd
    if not 0 <= ax < nd:
        raise ValueError(f"axis {axis} is out of range for a {nd}-d array")
    moved = list(shape)
    last = moved.pop(ax)
    return math.prod(moved), last, tuple(moved) + (last,)


def _as_bits16(a):
    if _is_torch(a):
        return a.contiguous().view(_torch().int16)
    return np.ascontiguousarray(a).view(np.uint16)


# ---- one view of every library's arrays, for encode -------------------------------

_TORCH_INPUT_NAMES = {"float64": "fp64", "float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


class _Held:
    """Values (or codes) as the extension takes them, with what their library
    needs: `array` is a C-contiguous NumPy array, a contiguous torch tensor or
    a device DLPack array (CuPy, ...) used in place; `name` the format of its
    elements ("fp32", "bf16", ...). empty() allocates in the same library and
    on the same device; place() makes the device current and yields the stream
    a kernel runs on (0 for host memory)."""

    __slots__ = ("array", "name", "library", "shape")

    def __init__(self, array, name: str, library: str):
        self.array, self.name, self.library = array, name, library
        self.shape = tuple(array.shape)

    def empty(self, shape, dtype: np.dtype):
        if self.library == "numpy":
            return np.empty(shape, dtype)
        if self.library == "torch":
            torch = _torch()
            return torch.empty(shape, dtype=_torch_int_type(np.dtype(dtype)), device=self.array.device)
        return _library_of(self.array).empty(shape, dtype=dtype)

    def place(self):
        if self.library == "torch":
            return _TorchPlace(self.array)
        if self.library == "dlpack":
            return contextlib.nullcontext(_foreign_stream(self.array) or 0)
        return contextlib.nullcontext(0)


class _TorchPlace:
    """The tensor's device made current (for a CUDA tensor on another GPU)
    and its current stream."""

    def __init__(self, t):
        self._t = t
        self._guard = _device_of(t)

    def __enter__(self) -> int:
        self._guard.__enter__()
        return _stream_of(self._t)

    def __exit__(self, *exc):
        return self._guard.__exit__(*exc)


def _torch_int_type(dt: np.dtype):
    """The torch type of a code / flag buffer of NumPy type dt (torch has no
    uint16 / uint32 arithmetic everywhere: the signed type of that width)."""
    torch = _torch()
    return {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[dt.itemsize]


def _library_of(x):
    return sys.modules.get(type(x).__module__.split(".")[0]) or __import__(type(x).__module__.split(".")[0])


def _encode_input(x) -> _Held:
    """Any array-like of FP64 / FP32 / FP16 / BF16 values as one _Held."""
    if _is_torch(x):
        name = _TORCH_INPUT_NAMES.get(str(x.dtype).removeprefix("torch."))
        if name is None:
            raise TypeError(f"encode takes float64, float32, float16 or bfloat16 values, got {x.dtype}")
        x = x.detach()  # DLPack refuses tensors that require grad; the codes have no gradient
        return _Held(x if x.is_contiguous() else x.contiguous(), name, "torch")
    if _on_device(x):
        # CuPy and other device arrays: used in place, outputs from the same library.
        if not hasattr(_library_of(x), "empty"):
            raise TypeError(f"{type(x).__name__} on a device: pass a torch or CuPy array")
        name = _TORCH_INPUT_NAMES.get(str(x.dtype))
        if name is None:
            raise TypeError(f"encode takes float64, float32, float16 or bfloat16 values, got {x.dtype}")
        return _Held(x, name, "dlpack")
    arr, name = _numpy_input(x)
    return _Held(arr, name, "numpy")


def _random_bits_for(held: _Held, random_bits):
    """random_bits= as the extension takes them: uint32, one per element, in
    the values' library."""
    if random_bits is None:
        return None
    if held.library == "numpy":
        rb = np.ascontiguousarray(random_bits)
        if rb.dtype != np.uint32:
            raise TypeError(f"random_bits must be uint32, got {rb.dtype}")
        if rb.shape != held.shape:
            raise ValueError(f"random_bits has shape {rb.shape}, the input {held.shape}")
        return rb
    if held.library == "torch" and _is_torch(random_bits):
        torch = _torch()
        if hasattr(torch, "uint32") and random_bits.dtype != torch.uint32:
            raise TypeError(f"random_bits must be uint32, got {random_bits.dtype}")
    return random_bits
