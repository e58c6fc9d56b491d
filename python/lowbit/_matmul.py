"""Matrix products on packed weights: lowbit.gemv, lowbit.matmul (docs/matmul.md).

y = x @ W.T with W in a packed form: a lowbit.quantize result of a weight
[N, K] (or [L, N, K]) quantized along its last axis, unchanged, or GPTQ /
AWQ checkpoint tensors (gptq_weight, awq_weight). Host arrays run the
registry's "scalar" rows (the model: the defined-order GEMV, the exact GEMM;
docs/matmul.md); CUDA tensors run the CUDA rows on the current stream.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from . import _lowbit
from ._arrays import _as_bits16, _is_torch, _torch
from ._formats import _ml_dtypes
from ._quantize import QuantizedTensor


@dataclasses.dataclass
class PackedWeight:
    """A packed weight W [batch, N, K] as the matmul rows take it.

    kind: the weight kind's name in the recipe grammar, as the rows name it
    (a "weight" of lowbit.matmul_rows(): "nvfp4", "int4/g128",
    "uint4/g128+gptq-fp16", ...), or an older name of it ("int4-g128",
    "e4m3-channel", ...): the C++ side names every kind and alias once,
    formats/include/lowbit/formats/matmul/weight_kind.h kWeightKinds and
    kWeightKindAliases;
    geometry: "flat" (1-D blocks of the flattened [N, K], lowbit's MX / NVFP4
    default), "row-blocks" (ceil(K / block) per row) or "per-row"; block:
    elements per scale (the group for integers). codes, scales, zeros,
    tensor_scale: the buffers (NumPy arrays or torch tensors, all on one
    device).
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
    # Which row kind reads this recipe's output, and where its scales sit,
    # is the C++ side's rule (formats/include/lowbit/formats/matmul/weight_kind.h
    # LowbitWeightKindOf); it raises ValueError with the reason when none does.
    kind, geometry, block = _lowbit.matmul_weight_of_recipe(r.name, q.layout)
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


class TensorCoreWeight:
    """NVFP4, MXFP4, MXFP8 or FP8 per-channel weights packed once on a CUDA device for the tensor-core
    GEMV (docs/matmul.md "The tensor-core GEMV"); made by tensor_core_weight.

    lowbit.gemv(w, x) then runs the kernel alone on the current stream, with
    no packing, and lets it start while the previous kernel on the stream
    finishes (it reads x only after that kernel has ended). The outputs are
    the `cuda-tc` rows' bit for bit (the model under the kernel's declared
    schedule). Calls with one weight share a workspace: run them on one
    stream, or order them yourself.
    """

    def __init__(self, packed, kind: str):
        self._packed = packed
        self.kind = kind
        self.n, self.k, self.batch = int(packed.n), int(packed.k), int(packed.batch)

    def __repr__(self) -> str:
        return f"TensorCoreWeight({self.kind}, batch={self.batch}, n={self.n}, k={self.k})"


def tensor_core_weight(weight) -> TensorCoreWeight:
    """A lowbit.quantize result of an NVFP4, MXFP4, MXFP8 (E4M3) or FP8 E4M3
    per-channel weight [N, K] or [L, N, K]
    (quantized along K, on a CUDA device) packed once for the tensor-core GEMV,
    on the current stream. Pass it to lowbit.gemv with CUDA bfloat16 x.

    The quantized tensor may be dropped afterwards: the packing reads it on
    the current stream before anything queued later there."""
    w = _packed_from_quantized(weight) if isinstance(weight, QuantizedTensor) else weight
    if not isinstance(w, PackedWeight):
        raise TypeError(f"tensor_core_weight takes a lowbit.quantize result, got {type(weight).__name__}")
    if not hasattr(_lowbit, "pack_tensor_core_weight"):
        raise RuntimeError("this lowbit build has no CUDA kernels (built without nvcc: see lowbit.build_info())")
    if not (_is_torch(w.codes) and w.codes.is_cuda):
        raise ValueError("tensor_core_weight needs the weight on a CUDA device: quantize a CUDA tensor, "
                         "or move the result's arrays with .cuda()")
    stream = _torch().cuda.current_stream(w.codes.device).cuda_stream
    packed = _lowbit.pack_tensor_core_weight(w.kind, w.geometry, w.n, w.k, w.block, w.batch, w.codes, w.scales,
                                             w.tensor_scale, stream)
    return TensorCoreWeight(packed, w.kind)


def _rows_of(shape: tuple, w) -> int:
    """M, the rows of x [M, K] (or [L, M, K] for a weight of batch L) that w
    (a PackedWeight or a TensorCoreWeight) multiplies; one line if x's shape
    does not fit w."""
    if not shape or shape[-1] != w.k:
        raise ValueError(f"x has shape {shape}: its last axis must be K = {w.k}")
    if w.batch > 1:
        if len(shape) != 3 or shape[0] != w.batch:
            raise ValueError(f"a weight of batch {w.batch} takes x of shape [{w.batch}, M, {w.k}], got {shape}")
        return shape[1]
    return int(np.prod(shape[:-1])) if len(shape) > 1 else 1


def _run_tensor_core(w: TensorCoreWeight, x, out_dtype):
    if not (_is_torch(x) and x.is_cuda):
        raise ValueError("a TensorCoreWeight takes x as a CUDA tensor")
    torch = _torch()
    if x.dtype != torch.bfloat16:
        raise TypeError(f"the tensor-core GEMV takes bfloat16 x, got {x.dtype} (convert with .to())")
    shape = tuple(x.shape)
    m = _rows_of(shape, w)
    if not 1 <= m <= 16:
        raise ValueError(f"the tensor-core GEMV takes M = 1..16 rows of x, got {m} (shape {shape})")
    out_name = _output_name(out_dtype, "bf16")
    out = torch.empty(shape[:-1] + (w.n,), dtype=torch.float32 if out_name == "fp32" else torch.int16,
                      device=x.device)
    stream = torch.cuda.current_stream(x.device).cuda_stream
    w._packed.gemv(x.contiguous().view(torch.int16), m, out, out_name, stream)
    if out_name == "fp32":
        return out
    return out.view(torch.bfloat16 if out_name == "bf16" else torch.float16)


def _scale_storage(scales) -> str:
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
    kind = _lowbit.matmul_weight_of_checkpoint("gptq", _scale_storage(scales))
    return PackedWeight(kind=kind, n=n, k=k, codes=qweight, scales=_as_bits16(scales), zeros=qzeros, block=group)


def awq_weight(qweight, scales, qzeros=None, *, group: int = 128) -> PackedWeight:
    """AWQ (WQLinear_GEMM) tensors as a PackedWeight: qweight int32 [K, N / 8]
    (order_map interleave), scales [ceil(K / group), N], qzeros int32
    [ceil(K / group), N / 8]."""
    k, n = int(qweight.shape[0]), int(qweight.shape[1]) * 8
    kind = _lowbit.matmul_weight_of_checkpoint("awq", _scale_storage(scales))
    return PackedWeight(kind=kind, n=n, k=k, codes=qweight, scales=_as_bits16(scales), zeros=qzeros, block=group)


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
    if isinstance(weight, TensorCoreWeight):
        if backend not in (None, "", "cuda-tc"):
            raise ValueError(f"a TensorCoreWeight runs on the cuda-tc kernel, not backend {backend!r}")
        if operation == "gemm":
            raise ValueError("a TensorCoreWeight runs the GEMV (M = 1..16)")
        return _run_tensor_core(weight, x, out_dtype)
    w = _packed_from_quantized(weight) if isinstance(weight, QuantizedTensor) else weight
    if not isinstance(w, PackedWeight):
        raise TypeError("the weight is a lowbit.quantize result or a PackedWeight (gptq_weight, awq_weight), "
                        f"got {type(weight).__name__}")
    xs, act = _activation_of(x)
    shape = tuple(xs.shape)
    m = _rows_of(shape, w)
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
    along K, unchanged, a PackedWeight (gptq_weight, awq_weight), or a
    TensorCoreWeight (tensor_core_weight: packed once, CUDA only). x: [M, K]
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
    sum rounded once to out_dtype (docs/matmul.md). On CUDA tensors the GEMM
    is the tensor-core one (registry backend cuda-tc, when the build has
    CUTLASS): bit for bit the tensor-core model under the schedule it
    declares, the same bits for a row whatever M is (docs/matmul.md "The
    tensor-core GEMM")."""
    return _run_matmul(None, weight, x, out_dtype, backend)


def matmul_rows() -> list:
    """Every matmul row of this build: operation, weight kind, activation,
    output, backend, available, device (takes CUDA tensors)."""
    return [dict(r) for r in _lowbit.matmul_rows()]
