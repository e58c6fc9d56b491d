"""Recipes: lowbit.quantize, lowbit.dequantize and their QuantizedTensor.

A recipe runs through the registry's recipe row that the extension's registry
chooses (python/src/module.cc): on the CPU the best SIMD row that runs here
or the scalar row (the model); on CUDA tensors the CUDA row, in place on the
tensor's device and current stream.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np

from . import _lowbit
from ._arrays import (_as_device_rows, _as_rows, _is_torch, _ml_dtypes_format, _on_device, _OnDevice, _rows_cols,
                      _torch, _torch_from_device_array, _unmove)
from ._convert import decode
from ._formats import Recipe, _format, recipes


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
        _lowbit.quantize(x2, rows, cols, recipe.lower(), lay, packed, scale_codes, scales, zps, ts, amax, stream=s)
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
        _lowbit.dequantize(rows, cols, name, "", packed, scale_codes, scales, zero_points, tensor_scale, out, stream=s)
    return out


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
