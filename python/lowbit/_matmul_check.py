"""lowbit.testing.check_matmul: which accumulation did a matrix product do?

``check_matmul(a, b, d)`` runs lowbit's accumulation candidates (the exact
product rounded once, FP32 fma orders, the tensor-core schedules of the
model, split-K, scale epilogues, a few kernel bugs) on the operands a GEMM
read and reports which one gives every output bit of ``d``; the report is the
one ``lowbit check gemm`` and the C++ gtest assertions of
``lowbit/testing/matmul.h`` print (docs/check-your-kernel.md "Checking a
matrix product").

>>> import numpy as np, ml_dtypes, lowbit.testing
>>> a = np.array([[1.0, 2.0]], ml_dtypes.bfloat16); b = np.array([[3.0], [4.0]], ml_dtypes.bfloat16)
>>> lowbit.testing.check_matmul(a, b, np.array([[11.0]], np.float32)).passed
True
"""

from __future__ import annotations

import dataclasses
import json
from typing import Optional

import numpy as np

from . import _lowbit

__all__ = ["MatmulReport", "check_matmul", "assert_matmul_matches"]

_BLOCK_FORMATS = ("nvfp4", "mxfp4", "mxfp8")
_NAMED = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "int8": "int8",
          "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
_RESULT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


@dataclasses.dataclass(frozen=True)
class MatmulReport:
    """What lowbit::check found (check/include/lowbit/check/matmul_diagnosis.h)."""

    passed: bool
    match: Optional[str]      # the candidate that gives every output bit, or None
    summary: str
    problem: str
    checked: int              # outputs compared with the exact product rounded once
    mismatches: int           # of those, differing
    first_mismatches: list    # dicts: row, column, expected, actual, expected_value, actual_value, ulps
    ulp_distribution: dict    # "0", "1", "2", "3-4", ... -> count
    candidates: list          # dicts: name, kind, detail, checked, matched, max_ulps, whole_product, full_match, ...
    candidates_tried: int
    sample_outputs: int
    text: str

    def candidate(self, name: str) -> dict:
        for c in self.candidates:
            if c["name"] == name:
                return c
        raise KeyError(f"no candidate is named {name!r}")


def _dtype_name(x) -> str:
    return str(x.dtype).replace("torch.", "")


def _codes(x, what: str):
    """(C-contiguous unsigned code words, the format the dtype names or None)."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor
        import torch

        t = x.detach().cpu().contiguous()
        name = _dtype_name(t)
        if t.element_size() == 1:
            words = t.view(torch.uint8).numpy()
        elif t.element_size() == 2:
            words = t.view(torch.int16).numpy().view(np.uint16)
        else:
            words = t.view(torch.int32).numpy().view(np.uint32)
        return np.ascontiguousarray(words), name
    a = np.asarray(x)
    if a.dtype.kind == "O" or a.dtype.fields is not None:
        raise ValueError(f"{what}: dtype {a.dtype} is not an array of codes")
    words = np.ascontiguousarray(a).view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.itemsize in (1, 2, 4, 8) else None
    if words is None:
        raise ValueError(f"{what}: {a.dtype.itemsize}-byte items are not codes")
    return words, a.dtype.name


def _operand(x, given: Optional[str], what: str):
    words, name = _codes(x, what)
    if words.ndim != 2:
        raise ValueError(f"{what}: a {words.ndim}-dimensional array {tuple(words.shape)}; {what} must be a matrix")
    fmt = given or _NAMED.get(name)
    if fmt is None:
        raise ValueError(f"{what}: dtype {name} does not say the format; give {what.lower()}_format "
                         "(e4m3, e5m2, int8, nvfp4, mxfp4, mxfp8, bf16, fp16, fp32)")
    return words, fmt


def _result(x, what: str, given: Optional[str] = None):
    words, name = _codes(x, what)
    kind = given or _RESULT.get(name)
    if kind is None:
        raise ValueError(f"{what}: dtype {name} is not float32, float16 or bfloat16")
    return words, kind


def _scales(s, fmt: str, rows: int, what: str, per: str):
    """(block scale bytes, tensor scale, per-row scales)."""
    if s is None:
        return None, None, None
    if fmt in _BLOCK_FORMATS:
        words, _ = _codes(s, what)
        if words.dtype.itemsize != 1:
            raise ValueError(f"{what}: {fmt}'s block scales are one byte each (uint8)")
        return words.reshape(-1), None, None
    v = np.ascontiguousarray(np.asarray(s, dtype=np.float32).reshape(-1))
    if v.size == 1:
        return None, float(v[0]), None
    if v.size == rows:
        return None, None, v
    raise ValueError(f"{what}: {v.size} scales; {fmt} takes one (per tensor) or {rows} (one per {per})")


def check_matmul(a, b, d, *, a_format: Optional[str] = None, b_format: Optional[str] = None, a_scales=None,
                 b_scales=None, c=None, transpose_b: bool = False, d_format: Optional[str] = None,
                 max_mismatches: int = 8, diagnose: bool = True) -> MatmulReport:
    """Compare a kernel's product ``d`` with every accumulation candidate; return the report.

    a: M x K, b: K x N (N x K with ``transpose_b``), d and c: M x N. Operands
    are codes: bfloat16 / float16 / float32 / int8 / float8 arrays (NumPy with
    ml_dtypes, or torch) say their format; uint8 codes need ``a_format`` /
    ``b_format`` (e4m3, e5m2, int8, nvfp4, mxfp4, mxfp8; FP4 one code per
    byte). ``a_scales`` / ``b_scales``: the block scales (uint8 E8M0 / UE4M3,
    [row or column][block of K]) of nvfp4 / mxfp4 / mxfp8, otherwise FP32
    scales, one per tensor or one per row of A / column of B. Bad input
    raises ValueError.
    """
    aw, af = _operand(a, a_format, "A")
    bw, bf = _operand(b, b_format, "B")
    m, k = aw.shape
    kb, n = (bw.shape[1], bw.shape[0]) if transpose_b else bw.shape
    if kb != k:
        layout = "N x K" if transpose_b else "K x N"
        hint = "" if transpose_b else " (is B N x K? transpose_b=True)"
        raise ValueError(f"A is {tuple(aw.shape)} and B is {tuple(bw.shape)} ({layout}): A's K = {k} is not B's K = {kb}{hint}")
    dw, dk = _result(d, "the output D", d_format)
    if tuple(dw.shape) != (m, n):
        raise ValueError(f"the output D: shape {tuple(dw.shape)}, but A x B is M x N = {m} x {n}")
    a_block, a_tensor, rows = _scales(a_scales, af, m, "a_scales", "row of A")
    b_block, b_tensor, cols = _scales(b_scales, bf, n, "b_scales", "column of B")
    cw, ck = (None, "fp32")
    if c is not None:
        cw, ck = _result(c, "C")
        if tuple(cw.shape) != (m, n):
            raise ValueError(f"C: shape {tuple(cw.shape)}, but C must be M x N = {m} x {n}")
    text_json, text, _passed = _lowbit.check_matmul(
        aw.reshape(-1), af, bw.reshape(-1), bf, int(m), int(n), int(k), bool(transpose_b), a_block, b_block,
        a_tensor, b_tensor, rows, cols, None if cw is None else cw.reshape(-1), ck, dw.reshape(-1), dk,
        int(max_mismatches), bool(diagnose))
    j = json.loads(text_json)
    return MatmulReport(passed=j["passed"], match=j["match"], summary=j["summary"], problem=j["problem"],
                        checked=j["checked"], mismatches=j["mismatches"], first_mismatches=j["first_mismatches"],
                        ulp_distribution=j["ulp_distribution"], candidates=j["candidates"],
                        candidates_tried=j["candidates_tried"], sample_outputs=j["sample_outputs"], text=text)


def assert_matmul_matches(a, b, d, *, schedule: Optional[str] = None, **options) -> MatmulReport:
    """check_matmul(), raising AssertionError with the report's text unless a
    candidate gives every output bit of the whole product, or, with
    ``schedule``, unless the candidate of that exact name does."""
    report = check_matmul(a, b, d, **options)
    if schedule is None:
        if not report.passed:
            raise AssertionError(report.text)
        return report
    for cand in report.candidates:
        if cand["name"] == schedule:
            if cand["full_match"] and cand["whole_product"]:
                return report
            raise AssertionError(f"{schedule!r} does not give every output bit\n{report.text}")
    raise AssertionError(f"no candidate is named {schedule!r}\n{report.text}")
