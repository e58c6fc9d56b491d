"""Bad input raises the documented exception, with a message naming the
problem, and writes nothing (outputs given with out= keep their contents)."""

import numpy as np
import pytest

import lowbit
import lowbit.testing

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


# ---- empty values, quoted words, contradictory options (docs/bad-input.md) ----------


def test_an_empty_layout_is_an_error_not_the_default():
    # It quantized per tensor, as if no layout had been given.
    with pytest.raises(ValueError, match="layout is an empty string"):
        lowbit.quantize(np.ones(4, np.float32), "int8:ao-sym", layout="")


@pytest.mark.parametrize("option", ["profile", "rounding", "layout", "packing", "input_type"])
def test_check_refuses_empty_names(option):
    x = np.array([1.0, 2.5], np.float32)
    codes = lowbit.encode(x, "e4m3")
    with pytest.raises(ValueError, match=f"{option} is an empty string"):
        lowbit.testing.check(x, codes, "e4m3", **{option: ""})


def _int8_asym_outputs():
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    q = lowbit.quantize(x, "int8:ao-asym")
    return x, q


@pytest.mark.parametrize("buffer", ["scales", "zero_points"])
def test_check_refuses_empty_scales_and_zero_points(buffer):
    # An empty array was "not given": the check passed on the codes alone.
    x, q = _int8_asym_outputs()
    given = {"scales": q.scales, "zero_points": q.zero_points}
    assert lowbit.testing.check(x, q.codes, "int8:ao-asym", **given).passed
    given[buffer] = np.zeros(0, np.float32 if buffer == "scales" else np.int32)
    with pytest.raises(ValueError, match=f"{buffer} is empty"):
        lowbit.testing.check(x, q.codes, "int8:ao-asym", **given)


def test_check_refuses_empty_scale_codes():
    x = np.ones(32, np.float32)
    q = lowbit.quantize(x, "mxfp8")
    assert lowbit.testing.check(x, q.codes, "mxfp8", scale_codes=q.scale_codes).passed
    with pytest.raises(ValueError, match="scale_codes is empty"):
        lowbit.testing.check(x, q.codes, "mxfp8", scale_codes=np.zeros(0, np.uint8))


@pytest.mark.parametrize("call", [
    lambda w: lowbit.encode(np.ones(2, np.float32), "e4m3", rounding=w),
    lambda w: lowbit.encode(np.ones(2, np.float32), w),
    lambda w: lowbit.encode(np.ones(2, np.float32), "e4m3", profile=w),
    lambda w: lowbit.quantize(np.ones(4, np.float32), "int8:ao-sym", layout=w),
    lambda w: lowbit.quantize(np.ones(4, np.float32), w),
    lambda w: lowbit.testing.check(np.ones(2, np.float32), np.zeros(2, np.uint8), "e4m3", profile=w),
    lambda w: lowbit.testing.check(np.ones(2, np.float32), np.zeros(2, np.uint8), "e4m3", rounding=w),
])
def test_user_words_in_messages_are_quoted_escaped_and_cut(call):
    with pytest.raises(ValueError) as e:
        call("x\x1b[31m\nok")
    message = str(e.value)
    assert "'x\\x1b[31m\\x0aok'" in message, message
    assert all(0x20 <= ord(c) < 0x7F for c in message), repr(message)
    with pytest.raises(ValueError) as e:
        call("a" * 100000)
    assert "(100000 bytes)" in str(e.value) and len(str(e.value)) < 1000, str(e.value)[:300]


def test_random_bit_count_needs_stochastic_rounding():
    # It was ignored.
    with pytest.raises(ValueError, match="random_bit_count 3 needs rounding='stochastic'"):
        lowbit.encode(np.ones(2, np.float32), "e2m1", random_bit_count=3)
    with pytest.raises(ValueError, match="random_bit_count 3 needs rounding='stochastic'"):
        lowbit.encode(np.ones(2, np.float32), "e4m3", profile="nvidia", random_bit_count=3)
    bits = np.zeros(2, np.uint32)
    lowbit.encode(np.ones(2, np.float32), "e2m1", rounding="stochastic", random_bits=bits, random_bit_count=3)


def test_check_refuses_a_profile_without_the_rounding_asked_for():
    # It compared nothing and reported the run as not passed, not as an error.
    x = np.array([1.0, 2.5], np.float32)
    with pytest.raises(ValueError, match="profile nvidia has no conversion to e4m3 with rounding rtz"):
        lowbit.testing.check(x, lowbit.encode(x, "e4m3"), "e4m3", profile="nvidia", rounding="rtz")
