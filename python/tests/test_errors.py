"""Bad input raises the documented exception, with a message naming the
problem, and writes nothing (outputs given with out= keep their contents)."""

import numpy as np
import pytest

import lowbit

SENTINEL = 0xA5


def fresh_out(shape, dtype=np.uint8):
    return np.full(shape, SENTINEL, dtype)


def test_unknown_format_names_it_and_suggests():
    with pytest.raises(ValueError, match="e4m4") as e:
        lowbit.encode(np.ones(3, np.float32), "e4m4")
    assert "e4m3" in str(e.value)  # did you mean


def test_unknown_recipe_and_profile():
    with pytest.raises(ValueError, match="mxfp5"):
        lowbit.quantize(np.ones(32, np.float32), "mxfp5:ocp")
    with pytest.raises(ValueError, match="nvidiaa"):
        lowbit.encode(np.ones(3, np.float32), "e4m3", profile="nvidiaa")
    with pytest.raises(ValueError, match="rounding mode 'nearest'"):
        lowbit.encode(np.ones(3, np.float32), "e4m3", rounding="nearest")
    with pytest.raises(ValueError, match="names a format, not a recipe"):
        lowbit.quantize(np.ones(32, np.float32), "e4m3")
    with pytest.raises(KeyError):
        lowbit.formats["nope"]


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.complex64, np.bool_])
def test_wrong_input_dtype(dtype):
    out = fresh_out(4)
    with pytest.raises(TypeError, match="float64, float32, float16 or bfloat16"):
        lowbit.encode(np.ones(4, dtype), "e4m3", out=out)
    assert (out == SENTINEL).all()


def test_wrong_code_dtype_and_codes_out_of_range():
    with pytest.raises(TypeError, match="uint8"):
        lowbit.decode(np.ones(4, np.float32), "e4m3")
    out = np.full(3, 7.0, np.float32)
    with pytest.raises(ValueError, match="out of range for e2m1"):
        lowbit.decode(np.array([1, 2, 0x10], np.uint8), "e2m1", out=out)
    assert (out == 7.0).all()


def test_read_only_output():
    out = fresh_out(4)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        lowbit.encode(np.ones(4, np.float32), "e4m3", out=out)
    assert (out == SENTINEL).all()


def test_non_contiguous_output():
    backing = fresh_out(8)
    with pytest.raises(ValueError, match="C-contiguous"):
        lowbit.encode(np.ones(4, np.float32), "e4m3", out=backing[::2])
    assert (backing == SENTINEL).all()


def test_output_of_wrong_shape_or_dtype():
    out = fresh_out(5)
    with pytest.raises(ValueError, match="shape"):
        lowbit.encode(np.ones(4, np.float32), "e4m3", out=out)
    with pytest.raises(TypeError, match="dtype"):
        lowbit.encode(np.ones(4, np.float32), "bf16", out=fresh_out(4))
    assert (out == SENTINEL).all()


def test_stochastic_rounding_needs_random_bits():
    out = fresh_out(4)
    with pytest.raises(ValueError, match="random_bits"):
        lowbit.encode(np.ones(4, np.float32), "e4m3", rounding="stochastic", out=out)
    with pytest.raises(TypeError, match="uint32"):
        lowbit.encode(np.ones(4, np.float32), "e4m3", rounding="stochastic", random_bits=np.ones(4, np.int64),
                      out=out)
    with pytest.raises(ValueError, match="shape"):
        lowbit.encode(np.ones(4, np.float32), "e4m3", rounding="stochastic", random_bits=np.ones(3, np.uint32),
                      out=out)
    with pytest.raises(ValueError, match="needs rounding='stochastic'"):
        lowbit.encode(np.ones(4, np.float32), "e4m3", random_bits=np.ones(4, np.uint32), out=out)
    assert (out == SENTINEL).all()


def test_profile_with_saturate_is_refused():
    out = fresh_out(2)
    with pytest.raises(ValueError, match="profile fixes the overflow policy"):
        lowbit.encode(np.ones(2, np.float32), "e4m3", profile="nvidia", saturate=True, out=out)
    assert (out == SENTINEL).all()


@pytest.mark.parametrize("recipe,shape,message", [
    ("int4:ao-sym/g128", (4, 100), "multiple"),       # cols not a multiple of the group
    ("int8:ao-sym/tile:4x32", (6, 64), "rows"),       # rows not a multiple of the tile
])
def test_shape_that_does_not_fit_the_layout(recipe, shape, message):
    with pytest.raises(ValueError, match=message):
        lowbit.quantize(np.ones(shape, np.float32), recipe)


def test_layout_twice_and_layout_on_mx():
    with pytest.raises(ValueError, match="two layouts"):
        lowbit.quantize(np.ones((2, 128), np.float32), "int4:ao-sym/g128", layout="row")
    with pytest.raises(ValueError, match="does not apply"):
        lowbit.quantize(np.ones((2, 128), np.float32), "mxfp4:ocp", layout="row")


def test_quantize_wrong_dtype():
    with pytest.raises(TypeError, match="float32"):
        lowbit.quantize(np.ones(32, np.float64), "mxfp4:ocp")
    with pytest.raises(TypeError, match="float32"):
        lowbit.quantize(np.ones(32, np.int32), "mxfp4:ocp")


def test_nan_scales_and_nan_tensor_scale():
    q = lowbit.quantize(np.ones((2, 128), np.float32), "int8:ao-sym/row")
    scales = q.scales.copy()
    scales[1] = np.nan
    with pytest.raises(ValueError, match="scale 1 is NaN"):
        lowbit.dequantize(q.packed, "int8:ao-sym/row", shape=(2, 128), scales=scales)
    with pytest.raises(ValueError, match="NaN"):
        lowbit.quantize(np.ones(32, np.float32), "nvfp4:te", tensor_scale=float("nan"))


def test_dequantize_buffers_that_do_not_fit():
    q = lowbit.quantize(np.ones((2, 128), np.float32), "int8:ao-sym/row")
    with pytest.raises(ValueError, match="scales: expected 2"):
        lowbit.dequantize(q.packed, "int8:ao-sym/row", shape=(2, 128), scales=q.scales[:1].copy())
    with pytest.raises(ValueError, match="codes: expected 256"):
        lowbit.dequantize(q.packed[:100].copy(), "int8:ao-sym/row", shape=(2, 128), scales=q.scales)
