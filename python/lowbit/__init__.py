"""lowbit: ML number formats bit for bit, from Python.

Encode and decode every element format (FP8, FP6, FP4, E8M0, INT4, ...),
quantize with every recipe (MX, NVFP4, scaled INT/FP8), and see why a code
came out, on NumPy arrays, ml_dtypes arrays and PyTorch tensors (CPU and
CUDA). Every number comes from the C++ library's registry and model; see
lowbit.build_info() for what this build has.
"""

from ._convert import decode, encode
from ._explain import Explanation, Step, explain
from ._formats import (FLAG_INEXACT, FLAG_INVALID, FLAG_OVERFLOW, FLAG_UNDERFLOW, Format, Profile, Recipe, build_info,
                       formats, profiles, recipes)
from ._matmul import (PackedWeight, TensorCoreWeight, awq_weight, gemv, gptq_weight, matmul, matmul_rows,
                      tensor_core_weight)
from ._quantize import QuantizedTensor, dequantize, quantize
from ._show import show
from .tensor_core import AccumulationSchedule, matmul_model, mma, mma_dot, mma_explain, tensor_core_instructions

__version__ = "0.1.0"

__all__ = ["FLAG_INEXACT", "FLAG_INVALID", "FLAG_OVERFLOW", "FLAG_UNDERFLOW", "Explanation", "Format",
           "Profile", "QuantizedTensor", "Recipe", "Step", "build_info", "decode", "dequantize", "encode",
           "explain", "formats", "profiles", "quantize", "recipes", "show", "PackedWeight", "awq_weight", "gemv",
           "gptq_weight", "matmul", "matmul_rows", "TensorCoreWeight", "tensor_core_weight"]
