"""What a user of `lowbit` sees: the names, `__all__`, the signatures of the
functions and the fields of the result types. The package is split into one
module per concern (python/lowbit/_formats.py, _arrays.py, _convert.py,
_quantize.py, _explain.py, _matmul.py); this pins that the split, and any
later move between those modules, changes none of it. The expected values are
typed here, not read from the package."""

import dataclasses
import importlib
import inspect

import lowbit

ALL = ["FLAG_INEXACT", "FLAG_INVALID", "FLAG_OVERFLOW", "FLAG_UNDERFLOW", "Explanation", "Format", "Profile",
       "QuantizedTensor", "Recipe", "Step", "build_info", "decode", "dequantize", "encode", "explain", "formats",
       "profiles", "quantize", "recipes", "show", "PackedWeight", "awq_weight", "gemv", "gptq_weight", "matmul",
       "matmul_rows", "TensorCoreWeight", "tensor_core_weight"]

# __all__ plus the tensor-core names (submodules such as lowbit.tensor_core and
# lowbit.testing are attributes once imported, so they are checked apart).
PUBLIC = sorted(ALL + ["AccumulationSchedule", "matmul_model", "mma", "mma_dot", "mma_explain",
                       "tensor_core_instructions"])

SIGNATURES = {
    "awq_weight": "(qweight, scales, qzeros=None, *, group: 'int' = 128) -> 'PackedWeight'",
    "build_info": "() -> 'dict'",
    "decode": "(codes, fmt=None, *, profile: 'Optional[str]' = None, dtype=<class 'numpy.float32'>, out=None)",
    "dequantize": "(q, recipe: 'Optional[str]' = None, *, shape=None, scale_codes=None, scales=None, "
                  "zero_points=None, tensor_scale=None, axis: 'int' = -1) -> 'np.ndarray'",
    "encode": "(x, fmt, *, rounding: 'str' = 'rne', saturate: 'bool' = False, profile: 'Optional[str]' = None, "
              "random_bits=None, random_bit_count: 'int' = 0, flags: 'bool' = False, out=None, "
              "ml_dtypes: 'bool' = False, dtype=None)",
    "gemv": "(weight, x, *, out_dtype=None, backend: 'Optional[str]' = None)",
    "gptq_weight": "(qweight, scales, qzeros=None, *, group: 'int' = 128) -> 'PackedWeight'",
    "matmul": "(weight, x, *, out_dtype=None, backend: 'Optional[str]' = None)",
    "matmul_rows": "() -> 'list'",
    "quantize": "(x, recipe: 'str', *, layout: 'Optional[str]' = None, axis: 'int' = -1, tensor_scale=None, "
                "given_scale=None) -> 'QuantizedTensor'",
    "tensor_core_weight": "(weight) -> 'TensorCoreWeight'",
    "show": "(value_or_code, fmt, *, rounding: 'str' = 'rne', saturate: 'bool' = False, "
            "profile: 'Optional[str]' = None) -> 'Fields'",
}

# Fields of the result types, in order (positional construction depends on it).
FIELDS = {
    "Format": ["name", "bits", "kind", "signed", "exponent_bits", "mantissa_bits", "bias", "max", "smallest_normal",
               "smallest_subnormal", "has_inf", "has_nan", "has_negative_zero", "nan_codes", "inf_codes", "max_code",
               "ml_dtypes_name", "torch_name", "cuda_name"],
    "PackedWeight": ["kind", "n", "k", "codes", "scales", "zeros", "tensor_scale", "block", "geometry", "batch"],
    "Profile": ["name", "source"],
    "QuantizedTensor": ["recipe", "layout", "shape", "axis", "rows", "cols", "packed", "scale_codes", "scales",
                        "zero_points", "tensor_scale", "_x", "_name", "_stream"],
    "Recipe": ["name", "format", "profile", "source", "family", "element", "scale_format", "scale_rule", "layout",
               "block_size", "packing", "zero_point", "tensor_scale"],
}

METHODS = {"Format": ["code_dtype", "ml_dtype"], "QuantizedTensor": ["codes", "dequantize", "error", "is_cuda"]}

TABLES = ("formats", "profiles", "recipes")


def test_all_is_unchanged():
    assert lowbit.__all__ == ALL


def test_public_names_are_unchanged():
    names = [n for n in dir(lowbit) if not n.startswith("_") and not inspect.ismodule(getattr(lowbit, n))]
    assert sorted(names) == PUBLIC
    assert inspect.ismodule(lowbit.tensor_core) and inspect.ismodule(importlib.import_module("lowbit.testing"))
    for name in ALL:
        assert getattr(lowbit, name) is not None, name


def test_signatures_are_unchanged():
    for name, want in SIGNATURES.items():
        assert str(inspect.signature(getattr(lowbit, name))) == want, name


def test_result_types_are_unchanged():
    for name, want in FIELDS.items():
        cls = getattr(lowbit, name)
        assert [f.name for f in dataclasses.fields(cls)] == want, name
    for name, want in METHODS.items():
        cls = getattr(lowbit, name)
        assert sorted(k for k in vars(cls) if not k.startswith("_")) == want, name


def test_tables_are_mappings_of_their_types():
    for table, cls in zip(TABLES, (lowbit.Format, lowbit.Profile, lowbit.Recipe)):
        items = list(getattr(lowbit, table).values())
        assert items and all(isinstance(i, cls) for i in items), table


def test_flags_are_distinct_bits():
    flags = [lowbit.FLAG_INEXACT, lowbit.FLAG_UNDERFLOW, lowbit.FLAG_OVERFLOW, lowbit.FLAG_INVALID]
    assert all(f > 0 and f & (f - 1) == 0 for f in flags) and len(set(flags)) == 4
