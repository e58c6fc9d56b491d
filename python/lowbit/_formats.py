"""What exists: the element formats, profiles and recipes of the C++ catalog.

lowbit.formats, lowbit.profiles and lowbit.recipes are read-only mappings by
canonical name that also accept every alias of the one name grammar
(formats/include/lowbit/formats/recipe/names.h); the IEEE-style flag bits and
build_info() come from the extension too. Nothing here is typed by hand: each
table is the extension's (lowbit._lowbit).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterable, Mapping, Optional

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
