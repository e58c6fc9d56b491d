"""The package's own behaviour: shapes and dtypes, out=, flags, stochastic
rounding, ml_dtypes in and out, thread safety, the tables, the doctests and
the README example."""

import doctest
import pathlib
import re
import threading

import ml_dtypes
import numpy as np
import pytest

import lowbit
from lowbit import _arrays, _convert, _explain, _formats, _matmul, _quantize

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_tables():
    assert len(lowbit.recipes) == 85  # 69 + newer profiles: 5 ao-rceil-eager, 2 NVFP4, 6 scaled, 3 GPTQ/AWQ fp16
    assert lowbit.formats["float8_e4m3fn"] is lowbit.formats["e4m3"]
    assert lowbit.formats["fp8_e4m3"] is lowbit.formats["e4m3"]  # the CUDA spelling
    assert lowbit.recipes["mxfp8"].name == "mxfp8_e4m3:ocp"
    assert lowbit.recipes["mxfp4:torchao"].name == "mxfp4:ao-floor"
    assert lowbit.profiles["cuda"].name == "nvidia"
    e5m2 = lowbit.formats["e5m2"]
    assert (e5m2.max, e5m2.inf_codes, e5m2.has_inf) == (57344.0, [0x7C, 0xFC], True)
    assert lowbit.formats["e8m0"].smallest_subnormal is None  # no subnormals, no zero
    assert "e2m1" in lowbit.formats and "nope" not in lowbit.formats


def test_shapes_and_dtypes():
    x = np.linspace(-500, 500, 24, dtype=np.float32).reshape(2, 3, 4)
    codes = lowbit.encode(x, "e4m3")
    assert codes.shape == x.shape and codes.dtype == np.uint8
    assert lowbit.encode(x, "bf16").dtype == np.uint16
    for dtype in (np.float32, np.float64, np.float16, "bfloat16"):
        back = lowbit.decode(codes, "e4m3", dtype=dtype)
        assert back.shape == x.shape
    assert lowbit.decode(codes, "e4m3", dtype="bfloat16").dtype == ml_dtypes.bfloat16
    # Fortran order, negative strides, a 0-d array, an empty array
    np.testing.assert_array_equal(lowbit.encode(np.asfortranarray(x), "e4m3"), codes)
    np.testing.assert_array_equal(lowbit.encode(x[:, ::-1], "e4m3"), codes[:, ::-1])
    assert lowbit.encode(np.float32(3.0).reshape(()), "e4m3").shape == ()
    assert lowbit.encode(np.empty((0, 3), np.float32), "e4m3").shape == (0, 3)


def test_out_is_filled_in_place():
    x = np.array([1.0, 2.0], np.float32)
    out = np.zeros(2, np.uint8)
    assert lowbit.encode(x, "e4m3", out=out) is out
    np.testing.assert_array_equal(out, [0x38, 0x40])


def test_flags_and_stochastic_rounding():
    x = np.array([1.0, 1.0625, 1e9, np.nan], np.float32)
    codes, flags = lowbit.encode(x, "e4m3", flags=True)
    assert flags[0] == 0
    assert flags[1] & lowbit.FLAG_INEXACT
    assert flags[2] & lowbit.FLAG_OVERFLOW
    # Stochastic: with all-zero random bits a value between two codes goes
    # down, with all ones it goes up (docs/formats-reference.md §4.6).
    mid = np.array([1.0625], np.float32)  # between 1.0 (0x38) and 1.125 (0x39)
    down = lowbit.encode(mid, "e4m3", rounding="stochastic", random_bits=np.zeros(1, np.uint32))
    up = lowbit.encode(mid, "e4m3", rounding="stochastic", random_bits=np.full(1, 0xFFFFFFFF, np.uint32))
    assert (down[0], up[0]) == (0x38, 0x39)


def test_ml_dtypes_in_and_out():
    x = np.array([0.5, -3.0, 6.0], np.float32)
    as_ml = lowbit.encode(x, "e2m1", ml_dtypes=True)
    assert as_ml.dtype == ml_dtypes.float4_e2m1fn
    np.testing.assert_array_equal(as_ml.astype(np.float32), x)
    np.testing.assert_array_equal(lowbit.decode(as_ml), x)  # the format from the dtype
    with pytest.raises(TypeError, match="not e4m3"):
        lowbit.decode(as_ml, "e4m3")


def test_quantize_object():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    q = lowbit.quantize(x, "nvfp4:te")
    assert q.codes.shape == x.shape and q.packed.size == x.size // 2
    assert q.scale_codes.shape == (x.size // 16,) and q.tensor_scale is not None
    err = q.error()
    assert err["count"] == x.size and 0 < err["mse"] < 0.1
    assert err["mse"] == pytest.approx(float(np.mean((x - q.dequantize()) ** 2)), rel=1e-6)
    g = lowbit.quantize(x, "uint4:gptq-asym", layout="g32")
    assert g.zero_points.shape == (6,) and g.layout == "g32"
    calibrated = lowbit.quantize(x, "nvfp4:te", tensor_scale=10.0)
    assert calibrated.tensor_scale != q.tensor_scale


def test_threads_share_the_module_safely():
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(100_000).astype(np.float32) * 100 for _ in range(8)]
    want = [lowbit.encode(x, "e4m3") for x in inputs]
    got = [None] * len(inputs)
    errors = []

    def work(i):
        try:
            for _ in range(5):
                got[i] = lowbit.encode(inputs[i], "e4m3")
                lowbit.quantize(inputs[i].reshape(-1, 32), "mxfp4:ocp")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


# The modules of the package, one per concern; each one's examples run.
PACKAGE_MODULES = (_formats, _arrays, _convert, _quantize, _explain, _matmul)


def test_doctests():
    attempted = 0
    for module in PACKAGE_MODULES:
        result = doctest.testmod(module, extraglobs={"lowbit": lowbit, "np": np},
                                 optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__
        attempted += result.attempted
    assert attempted >= 20


def test_readme_python_example():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(block.strip().splitlines()) <= 12
    exec(compile(block, "README.md", "exec"), {})


def test_type_stubs_are_shipped():
    stub = pathlib.Path(lowbit.__file__).with_name("_lowbit.pyi")
    assert stub.exists() and "def encode(" in stub.read_text()


def test_encode_numpy_dtype_ml_dtypes():
    x = np.linspace(-300, 300, 101, dtype=np.float32)
    typed = lowbit.encode(x, "e4m3", dtype=ml_dtypes.float8_e4m3fn)
    assert typed.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(typed.view(np.uint8), lowbit.encode(x, "e4m3"))
    with pytest.raises(TypeError, match="does not hold e4m3"):
        lowbit.encode(x, "e4m3", dtype=ml_dtypes.float8_e5m2)


def test_every_recipe_names_its_scale_rule():
    # module.cc ScaleRuleName returns "?" for a rule it has no name for; a new
    # rule in the catalog must get one (uint4:awq-fp16's rule once had none).
    unnamed = [d["name"] for d in lowbit._lowbit.recipe_table() if d["scale_rule"] == "?"]
    assert unnamed == []
