"""Hopper's tensor-core instructions, bit for bit, from Python.

``mma`` runs one instruction (``mma.sync`` or ``wgmma``) on whole tiles,
``mma_dot`` one output of it on rows of K values (MMA-Sim's ``dpa``),
``mma_explain`` shows how one output came out step by step, and
``matmul_model`` computes y = x @ w.T as a kernel does, through an
accumulation schedule (docs/tensor-cores.md). Every bit comes from the C++
model (formats/include/lowbit/formats/matmul/tensor_core.h); this module only
maps arrays to one uint32 code per element and back. Instruction names
resolve in the C++ table (``tensor_core_instructions()`` lists them), dtypes
through the name grammar, as in lowbit.encode.

Operands are arrays of the instruction's types: ml_dtypes.float8_e4m3fn /
float8_e5m2 / bfloat16, numpy.float16, numpy.float32 for TF32 (the
instruction reads the top 19 bits), numpy.int8, and float32 / float16 /
int32 accumulators; or the torch tensors of those types; or raw codes
(unsigned integers, one per element) with their format named
(``a_format="e4m3"``), which must be the instruction's. Results have the
accumulator's (or the schedule's output) type.

>>> import numpy as np, ml_dtypes, lowbit
>>> a = np.ones((64, 32), ml_dtypes.float8_e4m3fn); b = np.ones((32, 8), ml_dtypes.float8_e4m3fn)
>>> lowbit.mma(a, b, instruction="wgmma.m64nNk32.f32.e4m3.e4m3")[0, :3]
array([32., 32., 32.], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, Mapping, Optional

import numpy as np

from . import _arrays, _formats, _lowbit

__all__ = ["AccumulationSchedule", "TensorCoreInstruction", "matmul_model", "mma", "mma_dot", "mma_explain",
           "tensor_core_instructions"]

# The integer accumulator of the INT8 instructions. The name grammar has no
# int32 format (it names element formats); the instruction table calls the
# accumulator "int32", and its arrays are numpy.int32 / torch.int32.
_INT32 = "int32"


@dataclasses.dataclass(frozen=True)
class TensorCoreInstruction:
    """One instruction of the model's table (formats/spec/.../tensor_core.h)."""

    name: str
    ptx: str
    kind: str                # "mma.sync" or "wgmma"
    m: int
    n: int                   # wgmma: the smallest N (see columns)
    k: int
    columns: tuple           # the N values the instruction exists for
    a_format: str
    b_format: str
    accumulator: str         # "fp32", "fp16" or "int32"
    arithmetic: str
    products_per_step: int
    aligned_fraction_bits: int
    rounding: str
    kept_significand_bits: int
    nan_code: int
    steps: int
    c_added_after_steps: bool
    a_ignored_low_bits: int
    b_ignored_low_bits: int
    a_widened_to_fp16: bool
    b_widened_to_fp16: bool

    def __repr__(self) -> str:
        return f"TensorCoreInstruction({self.name!r})"


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    fields = {f.name for f in dataclasses.fields(TensorCoreInstruction)}
    table = {}
    for d in _lowbit.tensor_core_instructions():
        row = {key: d[key] for key in fields if key != "columns"}
        table[d["name"]] = TensorCoreInstruction(columns=tuple(d["columns"]), **row)
    return table


def tensor_core_instructions() -> dict:
    """Every instruction the model has, by lowbit's name.

    >>> lowbit.tensor_core_instructions()["mma.m16n8k16.f32.bf16.bf16"].k
    16
    """
    return dict(_table())


def _instruction(name) -> TensorCoreInstruction:
    if not isinstance(name, str):
        raise ValueError(f"instruction is a name (str), got {type(name).__name__} {name!r}")
    table = _table()
    if name not in table:
        # The C++ lookup words the error (and suggests a name).
        _lowbit.tensor_core_explain(name, np.zeros(0, np.uint32), np.zeros(0, np.uint32), 0)
    return table[name]


# ---- arrays to codes ------------------------------------------------------------

def _dtype_format(dtype: np.dtype) -> Optional[str]:
    """The format a NumPy / ml_dtypes array type holds, through the grammar."""
    if dtype == np.dtype(np.int32):
        return _INT32
    if dtype.kind == "u" or dtype.kind == "b":
        return None
    return _formats._resolves_to(dtype.name)


def _torch_dtype_format(t) -> Optional[str]:
    torch = _arrays._torch()
    if t.dtype == torch.int32:
        return _INT32
    if t.dtype in (torch.uint8, torch.bool) or str(t.dtype).startswith("torch.uint"):
        return None
    f = _arrays._torch_format_of(t)
    return f.name if f is not None else None


def _format_bits(name: str) -> int:
    return 32 if name == _INT32 else _formats.formats[name].bits


def _explicit_format(given, want: str, what: str, inst: TensorCoreInstruction) -> None:
    if given == _INT32 and want == _INT32:
        return
    try:
        name = _formats._format(given).name
    except (TypeError, ValueError) as e:
        raise ValueError(f"{what}_format: {e}") from None
    if name != want:
        raise ValueError(f"{inst.name} takes {what.upper()} in {want}, {what}_format names {name}")


def _wrong_type(what: str, inst: TensorCoreInstruction, want: str, got: str, raw: bool) -> ValueError:
    hint = (f" (raw codes: name their format, {what}_format={want!r})" if raw else
            f" (convert first, e.g. with lowbit.encode(..., {want!r}); raw codes: {what}_format={want!r})")
    return ValueError(f"{inst.name} takes {what.upper()} in {want}, got {got}" + hint)


def _host_codes(x, what: str, want: str, given_format, inst: TensorCoreInstruction) -> np.ndarray:
    """A host array as one uint32 code per element (its shape kept)."""
    if _arrays._is_torch(x):
        if x.is_cuda:
            raise ValueError(f"{what.upper()} is a CUDA tensor: lowbit.mma, mma_dot and mma_explain run on the "
                             "CPU (lowbit.matmul_model runs CUDA tensors)")
        torch = _arrays._torch()
        fmt = _torch_dtype_format(x)
        if given_format is None and fmt != want:
            raise _wrong_type(what, inst, want, str(x.dtype), fmt is None)
        if given_format is not None and x.dtype.is_floating_point:
            raise ValueError(f"{what.upper()} with {what}_format holds raw codes (unsigned integers), got {x.dtype}")
        x = x.detach().contiguous()
        if x.dtype.is_floating_point:  # the codes, zero-copy (NumPy has no torch.bfloat16 / float8)
            x = x.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[x.element_size()])
        x = x.numpy()
        if given_format is None:
            return x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint32)
    elif not isinstance(x, np.ndarray):
        x = np.asarray(x)
    dt = x.dtype
    if given_format is not None:
        _explicit_format(given_format, want, what, inst)
        if dt.kind not in "ui":
            raise ValueError(f"{what.upper()} with {what}_format holds raw codes (unsigned integers), got {dt}")
        bits = _format_bits(want)
        if dt.kind == "u" and dt.itemsize * 8 < bits:
            raise ValueError(f"{what.upper()}: {want} codes are {bits} bits, a {dt} array cannot hold them")
        # Signed arrays are read as their two's-complement bits; the extension
        # checks that every code fits the format's width (wider arrays here,
        # before they narrow to uint32).
        codes = _c_order(x).view(np.dtype(f"u{dt.itemsize}"))
        if dt.itemsize > 4:
            wide = np.flatnonzero(codes >> np.uint64(32))
            if wide.size:
                raise ValueError(f"{what.upper()} element {wide[0]} is code {int(codes.flat[wide[0]]):#x}, wider "
                                 f"than {want}'s {bits} bits")
        return codes.astype(np.uint32)
    fmt = _dtype_format(dt)
    if fmt is None or fmt != want:
        raise _wrong_type(what, inst, want, str(dt), fmt is None and dt.kind == "u")
    return _c_order(x).view(np.dtype(f"u{dt.itemsize}")).astype(np.uint32)


def _c_order(x: np.ndarray) -> np.ndarray:
    """x C-contiguous, its shape kept (np.ascontiguousarray makes a 0-d array 1-d)."""
    return x if x.flags.c_contiguous else x.copy(order="C")


def _output_dtype(fmt: str, torch_out: bool):
    """The array type of an output format: the torch / ml_dtypes / NumPy type
    lowbit.formats names for it (int32: the integer accumulator)."""
    if torch_out:
        torch = _arrays._torch()
        return torch.int32 if fmt == _INT32 else getattr(torch, _formats.formats[fmt].torch_name)
    if fmt == _INT32:
        return np.dtype(np.int32)
    numpy_types = {name: dtype for dtype, name in _arrays._NUMPY_INPUTS.items()}  # fp32, fp16
    return numpy_types.get(fmt) or _formats.formats[fmt].ml_dtype()


def _codes_to_host(codes: np.ndarray, fmt: str, torch_out: bool):
    """uint32 codes as an array of the format's type (a change of view)."""
    if _format_bits(fmt) == 16:
        codes = codes.astype(np.uint16)
    if not torch_out:
        return codes.view(_output_dtype(fmt, False))
    torch = _arrays._torch()
    signed = codes.view(np.dtype(f"i{codes.dtype.itemsize}"))
    return torch.from_numpy(signed.copy()).view(_output_dtype(fmt, True))


def _c_codes(c, shape: tuple, inst: TensorCoreInstruction, c_format) -> np.ndarray:
    if c is None:
        return np.zeros(shape, np.uint32)  # C = +0
    codes = _host_codes(c, "c", inst.accumulator, c_format, inst)
    if codes.shape != shape:
        raise ValueError(f"C has shape {codes.shape}, {inst.name} on these operands needs {shape}")
    return codes


def _columns_check(inst: TensorCoreInstruction, n: int) -> None:
    if n not in inst.columns:
        allowed = (f"n = {inst.n}" if len(inst.columns) == 1 else
                   f"n a multiple of 8 from {inst.columns[0]} to {inst.columns[-1]}")
        raise ValueError(f"{inst.name} takes {allowed}, got n = {n}")


# ---- one instruction --------------------------------------------------------------

def mma(a, b, c=None, *, instruction: str, b_layout: str = "kn", a_format=None, b_format=None, c_format=None):
    """D = A @ B + C through one tensor-core instruction, on whole tiles.

    a: m x k, b: k x n (``b_layout="nk"``: n x k, each output column's k
    values contiguous, as mma.sync's .col B and wgmma's K-major B hold it),
    c: m x n or None (+0), with m, k the instruction's and n its n
    (mma.sync) or a multiple of 8 up to 256 (wgmma). Leading dimensions, the
    same on all three, are a batch of tiles. Returns D in the accumulator's
    type (float32, float16 or int32), a torch tensor where a is one.

    >>> a = np.zeros((16, 16), ml_dtypes.bfloat16); a[0, 0] = 3
    >>> b = np.zeros((16, 8), ml_dtypes.bfloat16); b[0, 0] = 5
    >>> lowbit.mma(a, b, instruction="mma.m16n8k16.f32.bf16.bf16")[0, 0]
    np.float32(15.0)
    """
    inst = _instruction(instruction)
    if b_layout not in ("kn", "nk"):
        raise ValueError(f"b_layout is 'kn' (k x n, as in A @ B) or 'nk' (n x k), got {b_layout!r}")
    torch_out = _arrays._is_torch(a)
    ac = _host_codes(a, "a", inst.a_format, a_format, inst)
    bc = _host_codes(b, "b", inst.b_format, b_format, inst)
    if ac.ndim < 2 or ac.shape[-2:] != (inst.m, inst.k):
        raise ValueError(f"A has shape {ac.shape}, {inst.name} takes A of shape (..., {inst.m}, {inst.k})")
    batch = ac.shape[:-2]
    if bc.ndim != ac.ndim:
        raise ValueError(f"B has shape {bc.shape}, A {ac.shape}: give both the same batch dimensions")
    if b_layout == "kn":
        if bc.shape[-2] != inst.k:
            raise ValueError(f"B has shape {bc.shape}, {inst.name} takes B of shape (..., {inst.k}, n) "
                             "(b_layout='nk': (..., n, k))")
        bc = np.ascontiguousarray(np.swapaxes(bc, -1, -2))
    elif bc.shape[-1] != inst.k:
        raise ValueError(f"B has shape {bc.shape}, {inst.name} with b_layout='nk' takes B of shape "
                         f"(..., n, {inst.k})")
    if bc.shape[:-2] != batch:
        raise ValueError(f"B has batch dimensions {bc.shape[:-2]}, A {batch}: give both the same")
    n = bc.shape[-2]
    _columns_check(inst, n)
    tiles = int(np.prod(batch, dtype=np.int64)) if batch else 1
    if tiles == 0:
        raise ValueError(f"the batch {batch} is empty")
    cc = _c_codes(c, batch + (inst.m, n), inst, c_format)
    d = np.empty(batch + (inst.m, n), np.uint32)
    _lowbit.tensor_core_mma(inst.name, n, tiles, ac, bc, cc, d)
    return _codes_to_host(d, inst.accumulator, torch_out)


def mma_dot(a, b, c=None, *, instruction: str, a_format=None, b_format=None, c_format=None):
    """One output of the instruction for each case: a and b [..., k], c [...] or None (+0).

    The arithmetic of MMA-Sim's ``dpa`` on the same arrays (mmasim 2.1.1,
    nv_ptx/sim.py), where k is the instruction's. Returns [...] in the
    accumulator's type.

    >>> x = np.array([[1, 2] + [0] * 14], ml_dtypes.bfloat16)
    >>> lowbit.mma_dot(x, x, instruction="mma.m16n8k16.f32.bf16.bf16")
    array([5.], dtype=float32)
    """
    inst = _instruction(instruction)
    torch_out = _arrays._is_torch(a)
    ac = _host_codes(a, "a", inst.a_format, a_format, inst)
    bc = _host_codes(b, "b", inst.b_format, b_format, inst)
    for what, codes in (("A", ac), ("B", bc)):
        if codes.ndim < 1 or codes.shape[-1] != inst.k:
            raise ValueError(f"{what} has shape {codes.shape}, {inst.name} takes (..., {inst.k})")
    if ac.shape != bc.shape:
        raise ValueError(f"A has shape {ac.shape}, B {bc.shape}: give both the same")
    shape = ac.shape[:-1]
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count == 0:
        raise ValueError(f"no cases: A has shape {ac.shape}")
    cc = _c_codes(c, shape, inst, c_format)
    d = np.empty(shape, np.uint32)
    _lowbit.tensor_core_dot(inst.name, ac, bc, cc, d, count)
    return _codes_to_host(d, inst.accumulator, torch_out)


def _value(code: int, fmt: str):
    return _codes_to_host(np.array([code], np.uint32), fmt, False)[0].item()


def mma_explain(a, b, c=None, *, instruction: str, index=None, b_layout: str = "kn", a_format=None,
                b_format=None, c_format=None) -> dict:
    """How one output of the instruction came out, step by step.

    a, b: the k values of one row of A and one column of B (1-D), c: a
    0-d array / NumPy scalar or None (+0); or whole tiles as for ``mma``
    with ``index=(row, column)`` naming the output. Returns a dict: the
    instruction, c, and per fused step (docs/tensor-cores.md "One fused
    step") the accumulator it started from, e_max (``max_exponent``), the
    grid 2^``unit_exponent`` the terms were truncated to, each term (its k,
    None for the accumulator; its exponent; its value on the grid; whether
    truncation dropped bits of it), the exact sum and the step's result;
    then ``result`` (D's code) and ``value``.

    >>> e = lowbit.mma_explain(np.ones(32, ml_dtypes.float8_e4m3fn), np.ones(32, ml_dtypes.float8_e4m3fn),
    ...                        instruction="wgmma.m64nNk32.f32.e4m3.e4m3")
    >>> e["value"], e["steps"][0]["sum"], e["steps"][0]["unit_exponent"]
    (32.0, 262144, -13)
    """
    inst = _instruction(instruction)
    if b_layout not in ("kn", "nk"):
        raise ValueError(f"b_layout is 'kn' (k x n, as in A @ B) or 'nk' (n x k), got {b_layout!r}")
    ac = _host_codes(a, "a", inst.a_format, a_format, inst)
    bc = _host_codes(b, "b", inst.b_format, b_format, inst)
    if index is None:
        if ac.shape != (inst.k,) or bc.shape != (inst.k,):
            raise ValueError(f"A has shape {ac.shape}, B {bc.shape}: {inst.name} explains one output of a row and "
                             f"a column of {inst.k} values each (or whole tiles with index=(row, column))")
        cc = _c_codes(c, (), inst, c_format)
    else:
        try:
            row, column = (int(i) for i in index)
        except (TypeError, ValueError):
            raise ValueError(f"index is (row, column), got {index!r}") from None
        if ac.shape != (inst.m, inst.k):
            raise ValueError(f"A has shape {ac.shape}, {inst.name} takes A of shape ({inst.m}, {inst.k})")
        if bc.ndim != 2 or (bc.shape[0] if b_layout == "kn" else bc.shape[1]) != inst.k:
            raise ValueError(f"B has shape {bc.shape}, {inst.name} takes B of shape "
                             + (f"({inst.k}, n)" if b_layout == "kn" else f"(n, {inst.k})"))
        if b_layout == "kn":
            bc = bc.T
        n = bc.shape[0]
        _columns_check(inst, n)
        if not (0 <= row < inst.m and 0 <= column < n):
            raise ValueError(f"index {index!r} is outside the {inst.m} x {n} output")
        cc = _c_codes(c, (inst.m, n), inst, c_format)[row, column]
        ac, bc = ac[row], np.ascontiguousarray(bc[column])
    result = dict(_lowbit.tensor_core_explain(inst.name, np.ascontiguousarray(ac), bc, int(cc)))
    result["c_value"] = _value(result["c"], inst.accumulator)
    for step in result["steps"]:
        step["result_value"] = _value(step["result"], inst.accumulator)
    result["value"] = _value(result["result"], inst.accumulator)
    return result


# ---- whole matrices through a schedule ----------------------------------------------

@dataclasses.dataclass(frozen=True)
class AccumulationSchedule:
    """How a kernel accumulates y = x @ w.T (accumulation_schedule.h).

    instruction: the tensor-core instruction along K. promotion_interval:
    every that many elements of K (a multiple of the instruction's k) the
    accumulator is added into an FP32 one (0: never). split_k: K cut into
    that many parts, added in FP32 "in-order" or as a "pairwise" tree
    (split_reduction). output: "fp32", "bf16" or "fp16" (integer
    instructions: "int32"); None: the accumulator's own type (fp32 for
    float instructions). alpha: the FP32 factor of the epilogue;
    column_scales: n float32 factors, one per output column, applied before
    alpha.
    """

    instruction: str
    promotion_interval: int = 0
    split_k: int = 1
    split_reduction: str = "in-order"
    output: Optional[str] = None
    alpha: float = 1.0
    column_scales: Any = None


def _schedule(schedule) -> AccumulationSchedule:
    if isinstance(schedule, AccumulationSchedule):
        return schedule
    if isinstance(schedule, str):
        return AccumulationSchedule(instruction=schedule)
    if isinstance(schedule, Mapping):
        fields = [f.name for f in dataclasses.fields(AccumulationSchedule)]
        for key in schedule:
            if key not in fields:
                raise ValueError(f"schedule: unknown field {key!r} (fields: {', '.join(fields)})")
        if "instruction" not in schedule:
            raise ValueError("schedule: the instruction is missing")
        return AccumulationSchedule(**schedule)
    raise ValueError(f"schedule is a lowbit.AccumulationSchedule, a dict of its fields or an instruction name, got "
                     f"{type(schedule).__name__}")


def _int_field(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"schedule: {name} is an integer, got {value!r}")
    return int(value)


def _device_codes(t, what: str, want: str, given_format, inst: TensorCoreInstruction):
    """A CUDA tensor as one int32 code per element, on its device."""
    torch = _arrays._torch()
    bits = _format_bits(want)
    if given_format is not None:
        _explicit_format(given_format, want, what, inst)
        if t.dtype.is_floating_point or t.element_size() * 8 != bits:
            raise ValueError(f"{what.upper()}: raw {want} codes on a CUDA device are integers of exactly {bits} "
                             f"bits, got {t.dtype}")
    else:
        fmt = _torch_dtype_format(t)
        if fmt != want:
            raise _wrong_type(what, inst, want, str(t.dtype), fmt is None)
    t = t.contiguous()
    if bits == 32:
        return t.view(torch.int32)
    if bits == 16:
        return t.view(torch.int16).to(torch.int32) & 0xFFFF
    return t.view(torch.uint8).to(torch.int32)


def matmul_model(x, w, schedule, *, x_format=None, w_format=None, threads: Optional[int] = None):
    """y = x @ w.T, as a kernel that declares `schedule` computes it, bit for bit.

    x: [..., K] of the instruction's A type, w: [N, K] of its B type (numpy,
    ml_dtypes, torch CPU or CUDA tensors; raw codes with x_format / w_format).
    K is padded with zeros to whole instructions (a kernel's zero-filled
    tail). schedule: a lowbit.AccumulationSchedule, a dict of its fields, or an
    instruction name. threads: host threads (None: every core). CUDA tensors
    run the model on the GPU (lowbit::cuda ModelMatmulOnDevice) on the
    current stream. Returns [..., N] of the output type.

    >>> x = np.ones((2, 64), ml_dtypes.float8_e4m3fn); w = np.ones((3, 64), ml_dtypes.float8_e4m3fn)
    >>> lowbit.matmul_model(x, w, {"instruction": "wgmma.m64nNk32.f32.e4m3.e4m3", "output": "bf16"})
    array([[64, 64, 64],
           [64, 64, 64]], dtype=bfloat16)
    """
    s = _schedule(schedule)
    inst = _instruction(s.instruction)
    integer = inst.accumulator == _INT32
    output = s.output if s.output is not None else (_INT32 if integer else "fp32")
    if not isinstance(output, str):
        raise ValueError(f"schedule: output is a format name, got {output!r}")
    if not isinstance(s.split_reduction, str):
        raise ValueError(f"schedule: split_reduction is 'in-order' or 'pairwise', got {s.split_reduction!r}")
    if isinstance(s.alpha, bool) or not isinstance(s.alpha, (int, float, np.floating, np.integer)):
        raise ValueError(f"schedule: alpha is a number, got {s.alpha!r}")
    promotion = _int_field(s.promotion_interval, "promotion_interval")
    split_k = _int_field(s.split_k, "split_k")
    if threads is None:
        threads = os.cpu_count() or 1
    threads = _int_field(threads, "threads")
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")

    on_cuda = _arrays._is_torch(x) and x.is_cuda
    torch_out = _arrays._is_torch(x)
    if on_cuda:
        torch = _arrays._torch()
        if not (_arrays._is_torch(w) and w.is_cuda):
            raise ValueError("x is a CUDA tensor, w is not: give both on one device")
        xc = _device_codes(x, "x", inst.a_format, x_format, inst)
        wc = _device_codes(w, "w", inst.b_format, w_format, inst)
    else:
        if _arrays._is_torch(w) and w.is_cuda:
            raise ValueError("w is a CUDA tensor, x is not: give both on one device")
        xc = _host_codes(x, "x", inst.a_format, x_format, inst)
        wc = _host_codes(w, "w", inst.b_format, w_format, inst)
    if xc.ndim < 1:
        raise ValueError(f"x has shape {tuple(xc.shape)}: x is [..., K]")
    if wc.ndim != 2:
        raise ValueError(f"w has shape {tuple(wc.shape)}: w is [N, K]")
    k = xc.shape[-1]
    if wc.shape[1] != k:
        raise ValueError(f"x has K = {k}, w has shape {tuple(wc.shape)} (K = {wc.shape[1]}): they must agree")
    lead = tuple(xc.shape[:-1])
    m = int(np.prod(lead, dtype=np.int64)) if lead else 1
    n = wc.shape[0]
    if m == 0 or n == 0 or k == 0:
        raise ValueError(f"empty operands: x has shape {tuple(xc.shape)}, w {tuple(wc.shape)}")

    scales = s.column_scales
    if scales is not None:
        if on_cuda:
            if not (_arrays._is_torch(scales) and scales.is_cuda):
                raise ValueError("column_scales must be a CUDA tensor on x's device when x is one")
            if scales.dtype != _arrays._torch().float32 or tuple(scales.shape) != (n,):
                raise ValueError(f"column_scales must be {n} float32 values, got {scales.dtype} of shape "
                                 f"{tuple(scales.shape)}")
            scales = scales.contiguous()
        else:
            if _arrays._is_torch(scales):
                scales = scales.detach().cpu().numpy()
            scales = np.asarray(scales)
            if scales.dtype != np.float32 or scales.shape != (n,):
                raise ValueError(f"column_scales must be {n} float32 values, got {scales.dtype} of shape "
                                 f"{scales.shape}")
            scales = np.ascontiguousarray(scales)

    if on_cuda:
        torch = _arrays._torch()
        xc = xc.reshape(m, k)
        y = torch.empty((m, n), dtype=torch.int32, device=x.device)
        with _arrays._device_of(x):
            _lowbit.tensor_core_matmul(inst.name, promotion, split_k, s.split_reduction, output, float(s.alpha),
                                       xc, wc, m, n, k, scales, y, threads, _arrays._stream_of(x))
        out_fmt = _canonical_output(output, inst)
        if _format_bits(out_fmt) == 16:
            y = y.view(torch.int16).reshape(m, n, 2)[..., 0].contiguous()  # the low half (little-endian)
        return y.view(_output_dtype(out_fmt, True)).reshape(*lead, n)
    xc = np.ascontiguousarray(xc.reshape(m, k))
    y = np.empty((m, n), np.uint32)
    _lowbit.tensor_core_matmul(inst.name, promotion, split_k, s.split_reduction, output, float(s.alpha),
                               xc, wc, m, n, k, scales, y, threads, 0)
    return _codes_to_host(y, _canonical_output(output, inst), torch_out).reshape(*lead, n)


def _canonical_output(output: str, inst: TensorCoreInstruction) -> str:
    """The output's format name once the extension accepted it."""
    return _INT32 if inst.accumulator == _INT32 else _formats._format(output).name
