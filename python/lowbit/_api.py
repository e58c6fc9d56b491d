"""The Python API of lowbit: arrays in, arrays out, through the C++ registry.

This layer only maps arrays to buffers (NumPy, ml_dtypes, PyTorch, CuPy and
JAX through DLPack) and names to the one grammar; every number is computed by
the extension (lowbit._lowbit: the registry's kernels and the model). Errors
are ValueError (a bad value, name or shape) or TypeError (a wrong type), with
the command line's messages.

>>> import numpy as np, lowbit
>>> lowbit.encode(np.array([1.0, 448.0, 500.0], np.float32), "e4m3")
array([ 56, 126, 127], dtype=uint8)
>>> lowbit.decode(np.array([56, 126], np.uint8), "e4m3")
array([  1., 448.], dtype=float32)
>>> lowbit.encode(np.array([500.0], np.float32), "e4m3", saturate=True)
array([126], dtype=uint8)
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import sys
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from . import _lowbit

try:  # optional: ml_dtypes arrays in and out
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - exercised where ml_dtypes is absent
    _ml_dtypes = None

FLAG_INEXACT = _lowbit.FLAG_INEXACT
FLAG_UNDERFLOW = _lowbit.FLAG_UNDERFLOW
FLAG_OVERFLOW = _lowbit.FLAG_OVERFLOW
FLAG_INVALID = _lowbit.FLAG_INVALID

# Spellings of other libraries' types. Each is resolved through the one name
# grammar (formats/include/lowbit/formats/recipe/names.h) at import, so a name
# the grammar does not know is dropped, never mapped by hand.
_TORCH_DTYPE_NAMES = ("float64", "float32", "bfloat16", "float16", "float8_e4m3fn", "float8_e5m2",
                      "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "int8")
# torch.float4_e2m1fn_x2 holds two E2M1 codes per byte (low nibble first).
_TORCH_PACKED_FP4 = "float4_e2m1fn_x2"
_CUDA_TYPE_NAMES = ("double", "float", "__nv_bfloat16", "__half", "__nv_fp8_e4m3", "__nv_fp8_e5m2",
                    "__nv_fp8_e8m0", "__nv_fp6_e2m3", "__nv_fp6_e3m2", "__nv_fp4_e2m1")


def _resolves_to(name: str) -> Optional[str]:
    try:
        info = _lowbit.parse_name(name)
    except ValueError:
        return None
    return info["format"] if info["kind"] == "format" and info.get("profile") is None else None


def _cuda_resolves_to(name: str) -> Optional[str]:
    # CUDA's __nv_fp8_e4m3 is the grammar's fp8_e4m3 (cuda_fp8.h type names).
    return _resolves_to(name) or _resolves_to(name.removeprefix("__nv_"))


@dataclasses.dataclass(frozen=True)
class Format:
    """An element format and its properties (from the C++ format list).

    >>> f = lowbit.formats["e4m3"]
    >>> (f.bits, f.bias, f.max, f.smallest_normal, f.smallest_subnormal)
    (8, 7, 448.0, 0.015625, 0.001953125)
    >>> f.nan_codes, f.ml_dtypes_name, f.torch_name, f.cuda_name
    ([127, 255], 'float8_e4m3fn', 'float8_e4m3fn', '__nv_fp8_e4m3')
    """

    name: str
    bits: int
    kind: str
    signed: bool
    exponent_bits: int
    mantissa_bits: int
    bias: int
    max: float
    smallest_normal: Optional[float]
    smallest_subnormal: Optional[float]
    has_inf: bool
    has_nan: bool
    has_negative_zero: bool
    nan_codes: list
    inf_codes: list
    max_code: int
    ml_dtypes_name: Optional[str]
    torch_name: Optional[str]
    cuda_name: Optional[str]

    @functools.cached_property  # read on every encode: built once (the fixed cost of a small call)
    def code_dtype(self) -> np.dtype:
        """The NumPy type that holds one code: uint8, uint16, uint32 or uint64."""
        return np.dtype(np.uint8 if self.bits <= 8 else np.uint16 if self.bits <= 16
                        else np.uint32 if self.bits <= 32 else np.uint64)

    def ml_dtype(self):
        """The ml_dtypes type of this format, or None."""
        if _ml_dtypes is None or self.ml_dtypes_name is None:
            return None
        return np.dtype(getattr(_ml_dtypes, self.ml_dtypes_name))

    def __repr__(self) -> str:
        return f"Format({self.name!r}, bits={self.bits}, bias={self.bias}, max={self.max!r})"


@dataclasses.dataclass(frozen=True)
class Profile:
    """A named implementation whose conversions lowbit reproduces bit for bit."""

    name: str
    source: str

    def __repr__(self) -> str:
        return f"Profile({self.name!r})"


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A quantization recipe of the catalog (format:profile) and its default layout.

    >>> r = lowbit.recipes["mxfp4:ocp"]
    >>> (r.element, r.scale_format, r.block_size, r.packing)
    ('e2m1', 'e8m0', 32, 'nibbles-low-first')
    """

    name: str
    format: str
    profile: str
    source: str
    family: str
    element: str
    scale_format: str
    scale_rule: str
    layout: str
    block_size: int
    packing: str
    zero_point: bool
    tensor_scale: bool

    def __repr__(self) -> str:
        return f"Recipe({self.name!r}, layout={self.layout!r})"


class _Table(Mapping):
    """A read-only mapping by canonical name that also accepts every alias
    the name grammar knows (lowbit.formats["float8_e4m3fn"] is e4m3)."""

    def __init__(self, items: Iterable, kind: str, resolve):
        self._items = {item.name: item for item in items}
        self._kind = kind
        self._resolve = resolve

    def __getitem__(self, name: str):
        if name in self._items:
            return self._items[name]
        if not isinstance(name, str):
            raise TypeError(f"{self._kind} names are strings, got {type(name).__name__}")
        try:
            return self._items[self._resolve(name)]
        except (KeyError, ValueError) as e:  # the grammar's message, as a mapping's KeyError
            raise KeyError(str(e) if isinstance(e, ValueError) else name) from None

    def __iter__(self):
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<lowbit {self._kind}s: {', '.join(self._items)}>"


def _build_formats() -> _Table:
    torch_names = {}
    for n in _TORCH_DTYPE_NAMES:
        fmt = _resolves_to(n)
        if fmt is not None:
            torch_names.setdefault(fmt, n)
    fp4 = _resolves_to(_TORCH_PACKED_FP4.removesuffix("_x2"))
    if fp4 is not None:
        torch_names.setdefault(fp4, _TORCH_PACKED_FP4)
    cuda_names = {}
    for n in _CUDA_TYPE_NAMES:
        fmt = _cuda_resolves_to(n)
        if fmt is not None:
            cuda_names.setdefault(fmt, n)
    items = []
    for d in _lowbit.format_table():
        items.append(Format(
            name=d["name"], bits=d["bits"], kind=d["kind"], signed=d["signed"],
            exponent_bits=d["exponent_bits"], mantissa_bits=d["mantissa_bits"], bias=d["bias"],
            max=d["max"], smallest_normal=d["smallest_normal"],
            smallest_subnormal=d["smallest_subnormal"], has_inf=d["has_inf"], has_nan=d["has_nan"],
            has_negative_zero=d["has_negative_zero"], nan_codes=list(d["nan_codes"]),
            inf_codes=list(d["inf_codes"]), max_code=d["max_code"],
            ml_dtypes_name=d["ml_dtypes_name"], torch_name=torch_names.get(d["name"]),
            cuda_name=cuda_names.get(d["name"])))

    def resolve(name):
        info = _lowbit.parse_name(name.lower())
        if info["kind"] != "format":
            raise KeyError(name)
        return info["format"]

    return _Table(items, "format", resolve)


def _build_profiles() -> _Table:
    def resolve(name):
        # An element profile alone ("cuda", "torch") through the grammar.
        info = _lowbit.parse_name("fp32:" + name)
        return info["profile"]

    return _Table([Profile(d["name"], d["source"]) for d in _lowbit.profile_table()], "profile", resolve)


def _recipe_from(d: Mapping) -> Recipe:
    return Recipe(**{f.name: d[f.name] for f in dataclasses.fields(Recipe)})


def _build_recipes() -> _Table:
    def resolve(name):
        info = _lowbit.parse_name(name.lower())
        if info["kind"] != "recipe":
            raise KeyError(name)
        return info["name"]

    return _Table([_recipe_from(d) for d in _lowbit.recipe_table()], "recipe", resolve)


formats = _build_formats()
profiles = _build_profiles()
recipes = _build_recipes()


def build_info() -> dict:
    """What this build of the extension has.

    ``backends`` lists the backend libraries ("scalar", "simd", "cuda"),
    ``simd_backend`` the registry rows that run here ("simd:AVX2"), ``cuda``
    whether the CUDA kernels were built (False: a CPU-only build, CUDA tensors
    raise ValueError), ``cuda_devices`` how many GPUs the runtime sees.

    >>> sorted(lowbit.build_info())[:3]
    ['backends', 'cuda', 'cuda_devices']
    """
    return dict(_lowbit.build_info())


# ---- arrays: NumPy, ml_dtypes, torch, DLPack ----------------------------------

def _is_torch(x) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _torch():
    import torch
    return torch


@functools.lru_cache(maxsize=None)
def _format(fmt: str) -> Format:
    if isinstance(fmt, Format):
        return fmt
    if not isinstance(fmt, str):
        raise TypeError(f"a format is a name (str) or a lowbit.Format, got {type(fmt).__name__}")
    try:
        info = _lowbit.parse_name(fmt.lower())
    except ValueError as e:
        raise ValueError(str(e)) from None
    if info["kind"] != "format":
        raise ValueError(f"'{fmt}' names a recipe, not an element format (use lowbit.quantize)")
    return formats[info["format"]]


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


# ---- encode / decode ------------------------------------------------------------

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
    # The common case first, with the fewest Python steps (the fixed cost of
    # a small call is mostly here): a contiguous NumPy FP64/FP32/FP16 array.
    if (type(x) is np.ndarray and profile is None and random_bits is None and not flags and not ml_dtypes
            and dtype is None):
        from_name = _NUMPY_INPUTS.get(x.dtype)
        if from_name is not None and x.flags.c_contiguous:
            f = _format(fmt)
            if out is None:
                out = np.empty(x.shape, f.code_dtype)
            elif not (type(out) is np.ndarray and out.dtype == f.code_dtype and out.shape == x.shape
                      and (fl := out.flags).c_contiguous and fl.writeable):
                _check_out(out, x.shape, f.code_dtype)  # raises, naming the problem
            _lowbit.encode(x, from_name, out, f.name, rounding, saturate, None, None, random_bit_count, None, 0)
            return out
    f = _format(fmt)
    if _is_torch(x):
        return _encode_torch(x, f, rounding, saturate, profile, random_bits, random_bit_count, flags, out, dtype)
    if hasattr(x, "__dlpack_device__") and not isinstance(x, np.ndarray) and x.__dlpack_device__()[0] != 1:
        return _encode_dlpack_device(x, f, rounding, saturate, profile, random_bits, random_bit_count, flags, out)
    if dtype is not None:
        dt = np.dtype(dtype)
        if dt != f.code_dtype:
            if _ml_dtypes_format(dt) is not f:
                raise TypeError(f"dtype {dt} does not hold {f.name} codes (give {f.code_dtype} or "
                                f"{f.ml_dtypes_name or 'no ml_dtypes type: it has none'})")
            ml_dtypes = True
    arr, from_name = _numpy_input(x)
    if out is None:
        out = np.empty(arr.shape, f.code_dtype)
    else:
        _check_out(out, arr.shape, f.code_dtype)
    rb = None
    if random_bits is not None:
        rb = np.ascontiguousarray(random_bits)
        if rb.dtype != np.uint32:
            raise TypeError(f"random_bits must be uint32, got {rb.dtype}")
        if rb.shape != arr.shape:
            raise ValueError(f"random_bits has shape {rb.shape}, the input {arr.shape}")
    fl = np.empty(arr.shape, np.uint8) if flags else None
    _lowbit.encode(arr, from_name, out, f.name, rounding, saturate, profile, rb, random_bit_count, fl, 0)
    result = _as_ml_dtypes(out, f) if ml_dtypes else out
    return (result, fl) if flags else result


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
    torch = _torch()
    return {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[f.code_dtype.itemsize]


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


def _encode_torch(x, f, rounding, saturate, profile, random_bits, random_bit_count, flags, out, dtype=None):
    torch = _torch()
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
    result = _encode_torch_codes(x, f, rounding, saturate, profile, random_bits, random_bit_count, flags, out)
    if dtype is None:
        return result
    codes = result[0] if flags else result
    if pack:
        codes = _pack_torch_fp4_x2(codes)
        if packed_out is not None:
            packed_out.view(torch.uint8).copy_(codes.view(torch.uint8))
            codes = packed_out
    elif codes.dtype != dtype:
        codes = codes.view(dtype)
    return (codes, result[1]) if flags else codes


def _encode_torch_codes(x, f, rounding, saturate, profile, random_bits, random_bit_count, flags, out):
    torch = _torch()
    names = {torch.float64: "fp64", torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
    from_name = names.get(x.dtype)
    if from_name is None:
        raise TypeError(f"encode takes float64, float32, float16 or bfloat16 values, got {x.dtype}")
    x = x.detach()  # DLPack refuses tensors that require grad; the codes have no gradient
    if not x.is_contiguous():
        x = x.contiguous()
    code_dtype = _torch_code_dtype(f)
    if out is None:
        out = torch.empty(x.shape, dtype=code_dtype, device=x.device)
        out_view = out
    else:
        if out.device != x.device:
            raise ValueError("out is on another device than the input")
        if not out.is_contiguous():
            raise ValueError("out must be contiguous (the kernels write it in place)")
        if tuple(out.shape) != tuple(x.shape):
            raise ValueError(f"out has shape {tuple(out.shape)}, expected {tuple(x.shape)}")
        out_view = _torch_code_view(out, f)
    rb = random_bits
    if rb is not None and rb.dtype != torch.uint32 if hasattr(torch, "uint32") else False:
        raise TypeError(f"random_bits must be uint32, got {rb.dtype}")
    fl = torch.empty(x.shape, dtype=torch.uint8, device=x.device) if flags else None
    with _device_of(x):
        _lowbit.encode(x, from_name, out_view, f.name, rounding, saturate, profile, rb, random_bit_count, fl,
                       _stream_of(x))
    return (out, fl) if flags else out


def _encode_dlpack_device(x, f, rounding, saturate, profile, random_bits, random_bit_count, flags, out):
    # CuPy and other device arrays: the output is allocated by the same library.
    mod = __import__(type(x).__module__.split(".")[0])
    if not hasattr(mod, "empty"):
        raise TypeError(f"{type(x).__name__} on a device: pass a torch or CuPy array")
    if out is None:
        out = mod.empty(x.shape, dtype=f.code_dtype)
    dt = str(x.dtype)
    from_name = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}.get(dt)
    if from_name is None:
        raise TypeError(f"encode takes float64, float32, float16 or bfloat16 values, got {dt}")
    stream = 0
    try:
        stream = int(mod.cuda.get_current_stream().ptr)
    except AttributeError:
        pass
    _lowbit.encode(x, from_name, out, f.name, rounding, saturate, profile, random_bits, random_bit_count,
                   None, stream)
    return out


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


# ---- recipes ---------------------------------------------------------------------

@dataclasses.dataclass
class QuantizedTensor:
    """A tensor quantized with a recipe: codes, scales and how to undo it.

    codes: one element code per element (uint8), in the quantized view's
    shape (x moved so that `axis` is last). packed: the codes in the recipe's
    packing (two E2M1 / INT4 codes per byte where it packs). scale_codes: the
    E8M0 / UE4M3 bytes of MX and NVFP4 (None for scaled recipes); scales: the
    FP32 value each block or group multiplies by; zero_points: int32 per
    group or None; tensor_scale: NVFP4's (encode, decode) pair or None.
    Quantizing a CUDA tensor gives CUDA tensors on its device (tensor_scale
    then a float32 tensor of two elements, so that nothing waits for the GPU).
    """

    recipe: Recipe
    layout: str
    shape: tuple
    axis: int
    rows: int
    cols: int
    packed: np.ndarray
    scale_codes: Optional[np.ndarray]
    scales: np.ndarray
    zero_points: Optional[np.ndarray]
    tensor_scale: Optional[tuple]
    _x: Optional[np.ndarray] = dataclasses.field(default=None, repr=False)
    _name: str = dataclasses.field(default="", repr=False)
    _stream: Optional[int] = dataclasses.field(default=None, repr=False)

    @property
    def is_cuda(self) -> bool:
        """Whether the buffers are CUDA tensors (quantize of a CUDA tensor)."""
        return _is_torch(self.packed) and self.packed.is_cuda

    @property
    def codes(self):
        """One code per element (uint8). For CUDA tensors a tensor on the same
        device, unpacked on the host (two copies: a convenience, not a kernel)."""
        out = np.empty(self.rows * self.cols, np.uint8)
        if self.is_cuda:
            _lowbit.unpack_codes(self._name, "", self.packed.cpu().numpy(), out)
            return _torch().from_numpy(out).to(self.packed.device).reshape(self._moved_shape())
        _lowbit.unpack_codes(self._name, "", self.packed, out)
        return out.reshape(self._moved_shape())

    def _moved_shape(self) -> tuple:
        shape = list(self.shape)
        if not shape:
            return ()
        last = shape.pop(self.axis)
        return tuple(shape) + (last,)

    def dequantize(self):
        """The FP32 values the codes and scales stand for, in x's shape (a
        tensor on the same device for CUDA tensors, on the current stream)."""
        if self.is_cuda:
            out = _dequantize_cuda(self.rows, self.cols, self._name, self.packed, self.scale_codes,
                                   None if self.scale_codes is not None else self.scales, self.zero_points,
                                   self.tensor_scale, self._stream)
            return _unmove(out.reshape(self._moved_shape()), self.axis, len(self.shape))
        out = np.empty(self.rows * self.cols, np.float32)
        ts = None if self.tensor_scale is None else np.array(self.tensor_scale, np.float32)
        _lowbit.dequantize(self.rows, self.cols, self._name, "", self.packed, self.scale_codes,
                           None if self.scale_codes is not None else self.scales, self.zero_points, ts, out)
        return _unmove(out.reshape(self._moved_shape()), self.axis, len(self.shape))

    def error(self) -> dict:
        """Exact error metrics of the round trip (the oracle's rationals):
        count, non_finite, mse, sqnr_db, max_abs_error, max_rel_error (as
        floats) and their exact values as fraction strings."""
        if self._x is None:
            raise ValueError("error() needs the input: this QuantizedTensor was built from codes")
        back, x = self.dequantize(), self._x
        if self.is_cuda:  # the oracle runs on the host
            back, x = back.cpu().numpy(), x.cpu().numpy()
        back = np.ascontiguousarray(back, np.float32).reshape(-1)
        x = np.ascontiguousarray(x, np.float32).reshape(-1)
        return dict(_lowbit.error_metrics(x, back))


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


def _given_scales(given_scale) -> np.ndarray:
    """given_scale= as float32 scales: one number, or a sequence / array (one
    per group). Each must be a finite number > 0; the count is checked by the
    recipe row (1, or one per group of the layout)."""
    if isinstance(given_scale, (bool, np.bool_, str, bytes)):
        raise TypeError(f"given_scale is a number or a sequence of numbers, got {type(given_scale).__name__}")
    if _is_torch(given_scale):
        given_scale = given_scale.detach().cpu().numpy()
    try:
        a = np.asarray(given_scale, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as e:
        raise TypeError(f"given_scale is a number or a sequence of numbers ({e})") from None
    if a.size == 0:
        raise ValueError("given_scale is empty (give 1 scale, or one per group)")
    with np.errstate(over="ignore"):
        scales = np.ascontiguousarray(a.astype(np.float32))
    bad = np.flatnonzero(~(np.isfinite(scales) & (scales > 0)))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"given_scale[{i}] is {float(a[i])!r}: a given scale must be a finite number > 0 (as float32)")
    return scales


def _given_word(value, what: str):
    """A name or layout the caller gave: None means not given; an empty string
    is an error, never the default (docs/bad-input.md "Empty values")."""
    if value is not None and isinstance(value, str) and value == "":
        raise ValueError(f"{what} is an empty string; leave it out (None) for the default")
    return value


def quantize(x, recipe: str, *, layout: Optional[str] = None, axis: int = -1, tensor_scale=None,
             given_scale=None) -> QuantizedTensor:
    """Quantize x with a recipe through the registry's recipe row.

    recipe: a recipe name ("mxfp4:ocp", "mxfp8" (TE's E4M3), "nvfp4:te",
    "int4:ao-sym/g128", "e4m3:te/row"). layout: a layout for scaled recipes
    ("tensor", "row", "g128", "tile:128x128"), instead of one in the name.
    axis: the axis the blocks / groups run along (moved last; the other axes
    are rows). tensor_scale: a calibrated tensor amax for NVFP4 recipes (its
    tensor scale instead of the data's; CPU only).
    given_scale: given (static, calibrated) stored scales for the vLLM FP8
    recipes ("e4m3:vllm" as static_scaled_fp8_quant, "e4m3:vllm-token",
    "e4m3:vllm-kv" with k_scale / v_scale): one number for every group, or
    one per group of the layout (per KV head: layout "gHEAD_SIZE"). Each must
    be a finite number > 0; other recipes raise ValueError (they derive their
    scale from the data). Runs on the scalar row (the SIMD and CUDA rows
    derive every scale from x); CPU only.

    A CUDA tensor (torch, or any DLPack device array, seen as a torch tensor
    without a copy) runs the CUDA recipe kernels in place on its device and
    current stream, asynchronously; the buffers of the result are torch
    tensors on that device. The recipes with a GPU kernel: MX of the "te" and
    "ocp" profiles, "nvfp4:te", "e4m3:te" / "e5m2:te" per tensor and per row
    (quantize only), and the integer recipes per row and per group; others
    raise ValueError naming the recipe (the CPU takes every recipe).

    >>> q = lowbit.quantize(np.array([1.0, -0.5, 6.0, 0.1], np.float32), "mxfp4:ocp")
    >>> q.codes, q.scale_codes, q.scales
    (array([2, 9, 7, 0], dtype=uint8), array([127], dtype=uint8), array([1.], dtype=float32))
    >>> q.dequantize()
    array([ 1. , -0.5,  6. ,  0. ], dtype=float32)
    """
    given = None if given_scale is None else _given_scales(given_scale)
    _given_word(layout, "layout")
    if _is_torch(x):
        if x.is_cuda:
            if given is not None:
                raise ValueError("given_scale= runs on the CPU only: the CUDA recipe rows derive every scale "
                                 "from x (quantize a CPU tensor)")
            return _quantize_cuda(x, recipe, layout, axis, tensor_scale, None)
        x = x.detach().numpy()
    elif _on_device(x):
        if given is not None:
            raise ValueError("given_scale= runs on the CPU only: the CUDA recipe rows derive every scale from x")
        t, stream = _torch_from_device_array(x)
        return _quantize_cuda(t, recipe, layout, axis, tensor_scale, stream)
    if not isinstance(x, np.ndarray):
        x = np.from_dlpack(x) if hasattr(x, "__dlpack__") else np.asarray(x, np.float32)
    if x.dtype != np.float32:
        if x.dtype.kind != "f" and _ml_dtypes_format(x.dtype) is None:
            raise TypeError(f"quantize takes float32 values (recipes read FP32), got {x.dtype}")
        if x.dtype != np.float32:
            raise TypeError(f"quantize takes float32 values (recipes read FP32), got {x.dtype}; "
                            "convert first (lowbit.decode or astype)")
    if not isinstance(recipe, str):
        raise TypeError(f"a recipe is a name (str), got {type(recipe).__name__}")
    lay = layout or ""
    x2, rows, cols = _as_rows(x, axis)
    sizes = _lowbit.buffer_sizes(recipe.lower(), lay, rows, cols)
    packed = np.zeros(sizes["code_bytes"], np.uint8)
    scale_codes = np.empty(sizes["scale_codes"], np.uint8) if sizes["scale_codes"] else None
    scales = np.empty(sizes["scales"], np.float32) if sizes["scales"] else None
    zps = np.empty(sizes["zero_points"], np.int32) if sizes["zero_points"] else None
    ts = np.empty(2, np.float32) if sizes["tensor_scales"] else None
    amax = None
    if tensor_scale is not None:
        amax = float(tensor_scale)
        if math.isnan(amax):
            raise ValueError("tensor_scale is NaN")
    if given is not None and amax is not None:
        raise ValueError("give tensor_scale= (NVFP4) or given_scale= (vLLM FP8), not both")
    _lowbit.quantize(x2, rows, cols, recipe.lower(), lay, packed, scale_codes, scales, zps, ts, amax,
                     given_scale=given)
    name = sizes["canonical"]
    r = recipes[name.split("/")[0]]
    if scale_codes is not None:
        scale_values = decode(scale_codes, r.scale_format)
    else:
        scale_values = scales
    return QuantizedTensor(
        recipe=r, layout=sizes["layout"], shape=tuple(x.shape) if x.ndim else (1,), axis=axis if x.ndim > 1 else -1,
        rows=rows, cols=cols, packed=packed, scale_codes=scale_codes, scales=scale_values,
        zero_points=zps, tensor_scale=None if ts is None else (float(ts[0]), float(ts[1])),
        _x=x, _name=name)


# ---- recipes on CUDA tensors ---------------------------------------------------
#
# A CUDA tensor runs the registry's CUDA recipe kernels (cuda/include/lowbit/
# cuda/register.h RunRecipeOnDevice) on its own memory and the current
# stream: the buffers are allocated by torch on the tensor's device (and so
# on that stream), nothing is copied and nothing waits. Other DLPack device
# arrays (CuPy, JAX) are viewed as torch tensors (torch.from_dlpack,
# zero-copy) and run on their library's current stream where it has one.


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


def _quantize_cuda(x, recipe, layout, axis, tensor_scale, stream) -> "QuantizedTensor":
    torch = _torch()
    if not isinstance(recipe, str):
        raise TypeError(f"a recipe is a name (str), got {type(recipe).__name__}")
    if x.dtype != torch.float32:
        raise TypeError(f"quantize takes float32 values (recipes read FP32), got {x.dtype}; "
                        "convert first (lowbit.decode or .float())")
    amax = None
    if tensor_scale is not None:
        amax = float(tensor_scale)
        if math.isnan(amax):
            raise ValueError("tensor_scale is NaN")
    x = x.detach()
    lay = layout or ""
    x2, rows, cols = _as_device_rows(x, axis)
    sizes = _lowbit.buffer_sizes(recipe.lower(), lay, rows, cols)
    dev = x.device
    with _OnDevice(x, stream) as s:
        packed = torch.zeros(sizes["code_bytes"], dtype=torch.uint8, device=dev)
        scale_codes = (torch.empty(sizes["scale_codes"], dtype=torch.uint8, device=dev)
                       if sizes["scale_codes"] else None)
        scales = torch.empty(sizes["scales"], dtype=torch.float32, device=dev) if sizes["scales"] else None
        zps = torch.empty(sizes["zero_points"], dtype=torch.int32, device=dev) if sizes["zero_points"] else None
        ts = torch.empty(2, dtype=torch.float32, device=dev) if sizes["tensor_scales"] else None
        ws = torch.empty(max(1, _lowbit.cuda_recipe_workspace_floats()), dtype=torch.float32, device=dev)
        _lowbit.quantize(x2, rows, cols, recipe.lower(), lay, packed, scale_codes, scales, zps, ts, amax, ws, s)
        name = sizes["canonical"]
        r = recipes[name.split("/")[0]]
        scale_values = _decode_cuda_on(scale_codes, r.scale_format, s) if scale_codes is not None else scales
    return QuantizedTensor(
        recipe=r, layout=sizes["layout"], shape=tuple(x.shape) if x.dim() else (1,),
        axis=axis if x.dim() > 1 else -1, rows=rows, cols=cols, packed=packed, scale_codes=scale_codes,
        scales=scale_values, zero_points=zps, tensor_scale=ts, _x=x, _name=name, _stream=stream)


def _decode_cuda_on(codes, fmt: str, stream: int):
    torch = _torch()
    out = torch.empty(codes.shape, dtype=torch.float32, device=codes.device)
    _lowbit.decode(codes, _format(fmt).name, out, "fp32", None, stream)
    return out


def _dequantize_cuda(rows, cols, name, packed, scale_codes, scales, zero_points, tensor_scale, stream):
    """The FP32 values, [rows * cols] on the codes' device."""
    torch = _torch()
    with _OnDevice(packed, stream) as s:
        out = torch.empty(rows * cols, dtype=torch.float32, device=packed.device)
        ws = torch.empty(max(1, _lowbit.cuda_recipe_workspace_floats()), dtype=torch.float32, device=packed.device)
        _lowbit.dequantize(rows, cols, name, "", packed, scale_codes, scales, zero_points, tensor_scale, out, ws, s)
    return out


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


def _dequantize_device(q, recipe, shape, scale_codes, scales, zero_points, tensor_scale, axis, stream):
    """lowbit.dequantize of CUDA tensors: every buffer on the codes' device."""
    torch = _torch()
    if not isinstance(recipe, str):
        raise TypeError(f"a recipe is a name (str), got {type(recipe).__name__}")

    def device_buffer(a, dtype, what):
        if a is None:
            return None
        if not _is_torch(a):
            a = torch.from_dlpack(a) if _on_device(a) else torch.as_tensor(np.asarray(a), device=q.device)
        if a.dtype != dtype:
            raise TypeError(f"{what} are {str(dtype).removeprefix('torch.')}, got {a.dtype}")
        if a.device != q.device:
            raise ValueError(f"{what} are on {a.device}, the codes on {q.device}")
        return a.detach().contiguous().reshape(-1)

    packed = device_buffer(q, torch.uint8, "packed codes")
    sc = device_buffer(scale_codes, torch.uint8, "scale_codes")
    s = device_buffer(scales, torch.float32, "scales")
    if s is not None and bool(torch.isnan(s).any()):  # a synchronize: user-given scales only
        raise ValueError(f"scales: scale {int(torch.nonzero(torch.isnan(s))[0, 0])} is NaN")
    z = device_buffer(zero_points, torch.int32, "zero_points")
    ts = None
    if tensor_scale is not None:
        ts = tensor_scale if _is_torch(tensor_scale) else np.asarray(tensor_scale, np.float32)
        ts = device_buffer(ts, torch.float32, "tensor_scale")
    rows, cols, moved = _rows_cols(tuple(shape), axis)
    out = _dequantize_cuda(rows, cols, recipe.lower(), packed, sc, s, z, ts, stream)
    out = out.reshape(moved)
    return out.movedim(-1, axis) if len(shape) > 1 else out.reshape(tuple(shape))


def dequantize(q, recipe: Optional[str] = None, *, shape=None, scale_codes=None, scales=None, zero_points=None,
               tensor_scale=None, axis: int = -1) -> np.ndarray:
    """The FP32 values of a quantized tensor.

    Either a QuantizedTensor (from quantize) or packed codes with the recipe,
    the shape and the scales: scale_codes for MX / NVFP4 (uint8), scales for
    scaled recipes (float32, no NaN), zero_points (int32) where the recipe has
    them, tensor_scale the (encode, decode) pair of NVFP4.

    >>> q = lowbit.quantize(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), "int8:ao-sym/row")
    >>> q.scales  # torchao's symmetric scale: amax / 127.5 per row
    array([0.01568628, 0.03137255], dtype=float32)
    >>> lowbit.dequantize(q.packed, "int8:ao-sym/row", shape=(2, 2), scales=q.scales)
    array([[1.0039216, 1.992157 ],
           [3.011765 , 3.984314 ]], dtype=float32)
    """
    if isinstance(q, QuantizedTensor):
        return q.dequantize()
    if recipe is None or shape is None:
        raise TypeError("dequantize(codes, recipe, shape=...) needs the recipe and the shape")
    if _is_torch(q) and q.is_cuda:
        return _dequantize_device(q, recipe, shape, scale_codes, scales, zero_points, tensor_scale, axis, None)
    if _on_device(q):
        t, stream = _torch_from_device_array(q)
        return _dequantize_device(t, recipe, shape, scale_codes, scales, zero_points, tensor_scale, axis, stream)
    packed = np.ascontiguousarray(q)
    if packed.dtype != np.uint8:
        raise TypeError(f"packed codes are uint8, got {packed.dtype}")
    shape = tuple(shape)
    tmp = np.empty(shape, np.float32)
    _, rows, cols = _as_rows(tmp, axis)
    sc = None if scale_codes is None else np.ascontiguousarray(scale_codes)
    if sc is not None and sc.dtype != np.uint8:
        raise TypeError(f"scale_codes are uint8, got {sc.dtype}")
    s = None if scales is None else np.ascontiguousarray(scales)
    if s is not None and s.dtype != np.float32:
        raise TypeError(f"scales are float32, got {s.dtype}")
    if s is not None and np.isnan(s).any():
        raise ValueError(f"scales: scale {int(np.flatnonzero(np.isnan(s))[0])} is NaN")
    z = None if zero_points is None else np.ascontiguousarray(zero_points)
    if z is not None and z.dtype != np.int32:
        raise TypeError(f"zero_points are int32, got {z.dtype}")
    ts = None if tensor_scale is None else np.asarray(tensor_scale, np.float32).reshape(2)
    out = np.empty(rows * cols, np.float32)
    _lowbit.dequantize(rows, cols, recipe.lower(), "", packed.reshape(-1), sc, s, z, ts, out)
    moved = list(shape)
    last = moved.pop(axis) if len(shape) > 1 else None
    if last is None:
        return out.reshape(shape)
    return _unmove(out.reshape(tuple(moved) + (last,)), axis, len(shape))


# ---- explain ---------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Step:
    """One block or group of a recipe, step by step: its statistics, the
    scale rule's input and result, the scaled elements, codes and the
    dequantized values."""

    index: int
    elements: list
    amax: float
    min: float
    max: float
    rule_value: float
    scale_code: Optional[int]
    scale_exponent: Optional[int]
    scale: float
    factor: float
    zero_point: int
    inputs: list
    scaled: list
    codes: list
    dequantized: list


@dataclasses.dataclass(frozen=True)
class Explanation:
    """lowbit.explain's result: the recipe, the tensor scale and one Step per group.

    >>> e = lowbit.explain([6.06, 1.0], "mxfp4:ocp")
    >>> e.groups[0].scale_code, e.groups[0].codes
    (127, [7, 2])
    >>> print(e)  # doctest: +NORMALIZE_WHITESPACE
    mxfp4:ocp (b32, e2m1 elements, e8m0 scales, rule mx-floor)
    group 0: amax 6.0599999 -> scale 1 (code 0x7f, 2^0), factor 1
      x        6.0599999  1
      scaled   6.0599999  1
      code     0x7        0x2
      back     6          1
    """

    recipe: Recipe
    layout: str
    tensor_scale: Optional[tuple]
    groups: list

    def __str__(self) -> str:
        r = self.recipe
        lines = [f"{r.name} ({self.layout}, {r.element} elements, {r.scale_format} scales, rule {r.scale_rule})"]
        if self.tensor_scale is not None:
            lines.append(f"tensor scale: encode {self.tensor_scale[0]:.8g}, decode {self.tensor_scale[1]:.8g}")
        for g in self.groups:
            scale = f"scale {g.scale:.8g}"
            if g.scale_code is not None:
                scale += f" (code {g.scale_code:#x}"
                scale += f", 2^{g.scale_exponent})" if g.scale_exponent is not None else ")"
            if r.zero_point:
                scale += f", zero point {g.zero_point}"
            lines.append(f"group {g.index}: amax {g.amax:.8g} -> {scale}, factor {g.factor:.8g}")
            cells = [[f"{v:.8g}" for v in g.inputs], [f"{v:.8g}" for v in g.scaled],
                     [f"{c:#x}" for c in g.codes], [f"{v:.8g}" for v in g.dequantized]]
            width = max(len(c) for row in cells for c in row) if g.inputs else 0
            for label, row in zip(("x", "scaled", "code", "back"), cells):
                lines.append(f"  {label:<8} " + "  ".join(c.ljust(width) for c in row).rstrip())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<lowbit.Explanation {self.recipe.name} {len(self.groups)} group(s)>\n{self}"


def explain(values, recipe: str) -> Explanation:
    """Walk values through a recipe step by step (as `lowbit explain` does):
    amax, the scale rule's value, the scale code, the scaled elements, the
    codes and the dequantized values, per block or group. The values are one
    row (FP32)."""
    x = np.ascontiguousarray(np.asarray(values, dtype=np.float32).reshape(-1))
    if not isinstance(recipe, str):
        raise TypeError(f"a recipe is a name (str), got {type(recipe).__name__}")
    d = _lowbit.explain(x, recipe.lower())
    r = recipes[d["name"]]
    fields = [f.name for f in dataclasses.fields(Step)]
    steps = [Step(**{k: g[k] for k in fields}) for g in d["groups"]]
    ts = (d["tensor_scale_encode"], d["tensor_scale_decode"]) if r.tensor_scale else None
    return Explanation(recipe=r, layout=d["layout"], tensor_scale=ts, groups=steps)


# ---- matrix products on packed weights (docs/matmul.md) ----------------------
#
# y = x @ W.T with W in a packed form: a lowbit.quantize result of a weight
# [N, K] (or [L, N, K]) quantized along its last axis, unchanged, or GPTQ /
# AWQ checkpoint tensors (gptq_weight, awq_weight). Host arrays run the
# registry's "scalar" rows (the model: the defined-order GEMV, the exact GEMM;
# docs/matmul.md); CUDA tensors run the CUDA rows on the current stream.

_MATMUL_KIND_OF_FORMAT = {"nvfp4": "nvfp4", "mxfp4": "mxfp4", "mxfp8_e4m3": "mxfp8-e4m3", "int4": "int4-g128",
                          "uint4": "uint4-g128"}


@dataclasses.dataclass
class PackedWeight:
    """A packed weight W [batch, N, K] as the matmul rows take it.

    kind: a row weight kind ("nvfp4", "mxfp4", "mxfp8-e4m3", "int4-g128",
    "uint4-g128", "uint4-gptq-fp16", "uint4-gptq-bf16", "uint4-awq-fp16",
    "uint4-awq-bf16", "e4m3-channel"); geometry: "flat" (1-D blocks of the
    flattened [N, K], lowbit's MX / NVFP4 default), "row-blocks"
    (ceil(K / block) per row) or "per-row"; block: elements per scale (the
    group for integers). codes, scales, zeros, tensor_scale: the buffers
    (NumPy arrays or torch tensors, all on one device).
    """

    kind: str
    n: int
    k: int
    codes: object
    scales: object
    zeros: object = None
    tensor_scale: object = None
    block: int = 0
    geometry: str = "row-blocks"
    batch: int = 1


def _packed_from_quantized(q: "QuantizedTensor") -> PackedWeight:
    r = q.recipe
    shape = tuple(q.shape)
    if len(shape) > 1 and q.axis not in (-1, len(shape) - 1):
        raise ValueError(f"the weight must be quantized along its last axis (K), got axis {q.axis}")
    if len(shape) > 3:
        raise ValueError(f"a weight is [N, K] or [L, N, K], got shape {shape}")
    k = shape[-1]
    n = shape[-2] if len(shape) >= 2 else 1
    batch = shape[0] if len(shape) == 3 else 1
    layout = q.layout
    if r.format == "e4m3" and layout == "row":
        kind, geometry, block = "e4m3-channel", "per-row", 0
    elif r.format in _MATMUL_KIND_OF_FORMAT:
        kind = _MATMUL_KIND_OF_FORMAT[r.format]
        if layout.startswith("b"):
            geometry, block = "flat", int(layout[1:])
        elif layout.startswith("g"):
            geometry, block = "row-blocks", int(layout[1:])
        else:
            raise ValueError(f"{r.name}: layout {layout!r} has no matmul row (blocks 'bN' or groups 'gN')")
        if r.format in ("int4", "uint4") and geometry != "row-blocks":
            raise ValueError(f"{r.name}: integer weights take groups along K ('g128'), got layout {layout!r}")
    else:
        raise ValueError(f"recipe {r.name} ({layout}) has no matmul row; the rows take nvfp4, mxfp4, mxfp8_e4m3, "
                         "int4 / uint4 groups and e4m3 per row")
    if batch > 1 and geometry == "flat" and ((n * k) % block != 0 or (n * k) % 2 != 0):
        raise ValueError(f"a batched weight with 1-D blocks needs N * K a multiple of the block ({block}) "
                         "so that no block spans two batch entries; quantize with a 'g' layout instead")
    scales = q.scale_codes if q.scale_codes is not None else q.scales
    ts = None
    if q.tensor_scale is not None:
        if _is_torch(q.tensor_scale):  # CUDA quantize: a float32 tensor (encode, decode)
            ts = q.tensor_scale.reshape(-1).repeat(batch)
        else:
            ts = np.tile(np.array(q.tensor_scale, np.float32), batch)
    return PackedWeight(kind=kind, n=n, k=k, codes=q.packed, scales=scales, zeros=q.zero_points, tensor_scale=ts,
                        block=block, geometry=geometry, batch=batch)


def _scale_kind_suffix(scales) -> str:
    name = str(scales.dtype)
    if "bfloat16" in name:
        return "bf16"
    if "float16" in name:
        return "fp16"
    raise TypeError(f"GPTQ / AWQ scales are float16 or bfloat16, got {scales.dtype}")


def gptq_weight(qweight, scales, qzeros=None, *, group: int = 128) -> PackedWeight:
    """GPTQ checkpoint tensors as a PackedWeight: qweight int32 [K / 8, N]
    (lowbit pack gptq-qweight), scales float16 / bfloat16 [ceil(K / group), N],
    qzeros int32 [ceil(K / group), N / 8] of zero - 1 (None: zero points 0)."""
    k, n = int(qweight.shape[0]) * 8, int(qweight.shape[1])
    return PackedWeight(kind="uint4-gptq-" + _scale_kind_suffix(scales), n=n, k=k, codes=qweight,
                        scales=_as_bits16(scales), zeros=qzeros, block=group)


def awq_weight(qweight, scales, qzeros=None, *, group: int = 128) -> PackedWeight:
    """AWQ (WQLinear_GEMM) tensors as a PackedWeight: qweight int32 [K, N / 8]
    (order_map interleave), scales [ceil(K / group), N], qzeros int32
    [ceil(K / group), N / 8]."""
    k, n = int(qweight.shape[0]), int(qweight.shape[1]) * 8
    return PackedWeight(kind="uint4-awq-" + _scale_kind_suffix(scales), n=n, k=k, codes=qweight,
                        scales=_as_bits16(scales), zeros=qzeros, block=group)


def _as_bits16(a):
    if _is_torch(a):
        return a.contiguous().view(_torch().int16)
    return np.ascontiguousarray(a).view(np.uint16)


def _activation_of(x) -> tuple[object, str]:
    """x as 16-bit words and its type name."""
    if _is_torch(x):
        torch = _torch()
        names = {torch.bfloat16: "bf16", torch.float16: "fp16"}
        if x.dtype not in names:
            raise TypeError(f"activations are bfloat16 or float16 tensors, got {x.dtype} (convert with .to())")
        return x.contiguous().view(torch.int16), names[x.dtype]
    a = np.asarray(x)
    if a.dtype == np.float16:
        return np.ascontiguousarray(a).view(np.uint16), "fp16"
    if _ml_dtypes is not None and a.dtype == _ml_dtypes.bfloat16:
        return np.ascontiguousarray(a).view(np.uint16), "bf16"
    raise TypeError(f"activations are float16 or ml_dtypes.bfloat16 arrays, got {a.dtype} "
                    "(convert with astype)")


def _output_name(out_dtype, activation: str) -> str:
    if out_dtype is None:
        return activation
    name = str(out_dtype).replace("torch.", "")
    aliases = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32",
               "bf16": "bf16", "fp16": "fp16", "fp32": "fp32"}
    if name not in aliases:
        raise ValueError(f"out_dtype is bfloat16, float16 or float32, got {out_dtype!r}")
    return aliases[name]


def _run_matmul(operation: Optional[str], weight, x, out_dtype, backend: Optional[str]):
    w = _packed_from_quantized(weight) if isinstance(weight, QuantizedTensor) else weight
    if not isinstance(w, PackedWeight):
        raise TypeError("the weight is a lowbit.quantize result or a PackedWeight (gptq_weight, awq_weight), "
                        f"got {type(weight).__name__}")
    xs, act = _activation_of(x)
    shape = tuple(xs.shape)
    if not shape or shape[-1] != w.k:
        raise ValueError(f"x has shape {shape}: its last axis must be K = {w.k}")
    if w.batch > 1:
        if len(shape) != 3 or shape[0] != w.batch:
            raise ValueError(f"a weight of batch {w.batch} takes x of shape [{w.batch}, M, {w.k}], got {shape}")
        m = shape[1]
    else:
        m = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    if m < 1:
        raise ValueError(f"x has no rows (shape {shape})")
    op = operation or ("gemv" if m <= 16 else "gemm")
    out_name = _output_name(out_dtype, act)
    out_shape = shape[:-1] + (w.n,)
    cuda = _is_torch(xs) and xs.is_cuda
    if _is_torch(xs):
        torch = _torch()
        out = torch.empty(out_shape, dtype=torch.float32 if out_name == "fp32" else torch.int16, device=xs.device)
        stream = torch.cuda.current_stream(xs.device).cuda_stream if cuda else 0
    else:
        out = np.empty(out_shape, np.float32 if out_name == "fp32" else np.uint16)
        stream = 0

    def host(a):
        if a is None or _is_torch(a) or isinstance(a, np.ndarray):
            return a
        return np.ascontiguousarray(a)

    _lowbit.matmul(op, w.kind, w.geometry, w.n, w.k, w.block, w.batch, m, host(w.codes), host(w.scales),
                   host(w.zeros), host(w.tensor_scale), xs, act, out, out_name, backend or "", stream)
    if out_name == "fp32":
        return out
    if _is_torch(out):
        torch = _torch()
        return out.view(torch.bfloat16 if out_name == "bf16" else torch.float16)
    if out_name == "bf16":
        return out.view(_ml_dtypes.bfloat16) if _ml_dtypes is not None else out  # bits without ml_dtypes
    return out.view(np.float16)


def gemv(weight, x, *, out_dtype=None, backend: Optional[str] = None):
    """y = x @ W.T for M = 1..16 rows of x through a GEMV row.

    weight: a lowbit.quantize result of W [N, K] (or [L, N, K]) quantized
    along K, unchanged, or a PackedWeight (gptq_weight, awq_weight). x: [M, K]
    (or [L, M, K]) bfloat16 / float16 (NumPy with ml_dtypes, or torch; CUDA
    tensors run the CUDA row on the current stream). out_dtype: bfloat16,
    float16 or float32 (default: x's type). On the host this is the
    defined-order reference, bit for bit what the CUDA GEMV computes
    (docs/matmul.md).

    >>> w = lowbit.quantize(np.ones((3, 32), np.float32), "mxfp4:ocp")
    >>> import ml_dtypes
    >>> x = np.full((1, 32), 0.5, ml_dtypes.bfloat16)
    >>> lowbit.gemv(w, x, out_dtype="float32")
    array([[16., 16., 16.]], dtype=float32)
    """
    return _run_matmul("gemv", weight, x, out_dtype, backend)


def matmul(weight, x, *, out_dtype=None, backend: Optional[str] = None):
    """y = x @ W.T through the GEMV row for M <= 16 and the GEMM row above.

    Arguments as gemv. On the host the GEMM row is the exact mode: the exact
    sum rounded once to out_dtype (docs/matmul.md); a CUDA GEMM is within its
    documented bound of that."""
    return _run_matmul(None, weight, x, out_dtype, backend)


def matmul_rows() -> list:
    """Every matmul row of this build: operation, weight kind, activation,
    output, backend, available, device (takes CUDA tensors)."""
    return [dict(r) for r in _lowbit.matmul_rows()]
