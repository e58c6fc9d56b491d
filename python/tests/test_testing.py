"""lowbit.testing: assert_matches over lowbit::check's report (the text is
the C++ ReportText, the same `lowbit check` prints), and the Hypothesis
strategies that mirror the C++ generators reach what they promise."""

import doctest
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

import lowbit
import lowbit.testing as lt

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# find() stops at the first hit; the budget is how long a rare class may take.
FIND = settings(max_examples=5000, deadline=None, database=None, suppress_health_check=list(HealthCheck),
                phases=[Phase.generate])  # the first hit is enough: no shrinking


def test_doctests():
    result = doctest.testmod(lt, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_matching_codes_pass():
    x = np.array([1.0625, 464.0, -0.0, np.nan, 1e-4, 3.0], np.float32)
    report = lt.assert_matches(x, lowbit.encode(x, "e4m3", saturate=True), "e4m3", saturate=True)
    assert report.passed and report.checked == x.size and report.mismatches == 0


def test_profile_target():
    x = np.array([np.nan, -np.nan, 1.0, 500.0], np.float32)
    codes = lowbit.encode(x, "e4m3", profile="nvidia")
    lt.assert_matches(x, codes, "e4m3:nvidia")


def test_rtz_kernel_fails_with_the_report_and_its_diagnosis():
    x = np.linspace(-3, 3, 257, dtype=np.float32)
    rtz = lowbit.encode(x, "e4m3", rounding="rtz")
    with pytest.raises(AssertionError) as failure:
        lt.assert_matches(x, rtz, "e4m3")
    report = lt.check(x, rtz, "e4m3")
    assert str(failure.value) == report.text  # the C++ report, unchanged
    assert not report.passed and report.mismatches > 0
    assert "first mismatches" in report.text
    assert any("rtz" in name for name in report.matching_conventions()), report.text


def test_nothing_compared_fails():
    with pytest.raises(AssertionError):
        lt.assert_matches(np.zeros(0, np.float32), np.zeros(0, np.uint8), "e4m3")


def test_ml_dtypes_and_bf16_inputs():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([1.0, 1.0625, 2.5, -7.0], ml_dtypes.bfloat16)
    codes = lowbit.encode(x, "e4m3").view(np.uint8)
    lt.assert_matches(x, codes, "e4m3")
    lt.assert_matches(x, codes.view(ml_dtypes.float8_e4m3fn), "e4m3")


def test_recipe_outputs_of_the_model_pass_and_a_wrong_scale_fails():
    x = np.random.default_rng(1).standard_normal((3, 64)).astype(np.float32)
    q = lowbit.quantize(x, "mxfp4:ocp")
    lt.assert_matches(x, q.packed, "mxfp4:ocp", scale_codes=q.scale_codes, packing="nibbles-low-first")
    bad = q.scale_codes.copy()
    bad[0] += 1
    report = lt.check(x, q.packed, "mxfp4:ocp", scale_codes=bad, packing="nibbles-low-first")
    assert not report.passed and report.scale_mismatches >= 1
    assert "block 0" in report.text


def test_a_mistyped_target_is_an_error():
    with pytest.raises(ValueError, match="e4m3"):
        lt.check(np.ones(2, np.float32), np.ones(2, np.uint8), "e4m4")


# ---- the strategies -------------------------------------------------------------


def _is_tie(x, grid):
    a = abs(float(x))
    return any(a == (lo + hi) / 2 for lo, hi in zip(grid, grid[1:]))


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2", "e2m1", "int8", "e8m0"])
def test_values_reach_every_boundary_class(fmt):
    f = lowbit.formats[fmt]
    grid = lt._grid(f.name)
    s = lt.values(fmt)
    find(s, lambda x: _is_tie(x, grid), settings=FIND)
    find(s, lambda x: np.isfinite(x) and abs(float(x)) > f.max, settings=FIND)  # past max
    find(s, lambda x: float(x) == -f.max or float(x) == f.max, settings=FIND)
    smallest = grid[1] if grid[0] == 0 else grid[0]
    find(s, lambda x: abs(float(x)) == np.float32(smallest / 2), settings=FIND)
    find(s, lambda x: np.isnan(x) and (x.view(np.uint32) & 0x3FFFFF) not in (0, 0x3FFFFF), settings=FIND)
    find(s, lambda x: x == 0 and np.signbit(x), settings=FIND)
    find(s, lambda x: np.isinf(x), settings=FIND)
    # 2^k (1 - 2^-24): an amax just below a power of two
    find(s, lambda x: np.isfinite(x) and x != 0 and (x.view(np.uint32) & 0x7FFFFF) == 0x7FFFFF, settings=FIND)


@pytest.mark.parametrize("recipe", ["mxfp4:ocp", "nvfp4:te", "int4:ao-sym", "e4m3:te"])
def test_blocks_have_the_recipe_size_and_every_shape(recipe):
    r = lowbit.recipes[recipe]
    s = lt.blocks(recipe)
    find(s, lambda b: np.isnan(b).any(), settings=FIND)
    find(s, lambda b: np.isinf(b).any() and not np.isnan(b).any(), settings=FIND)
    find(s, lambda b: (b == 0).all() and np.signbit(b).any(), settings=FIND)
    find(s, lambda b: np.isfinite(b).all() and 0 < np.abs(b).max() < 2.0 ** -119, settings=FIND)
    find(s, lambda b: np.isfinite(b).all() and np.abs(b).max() > 2.0 ** 107, settings=FIND)
    if r.block_size:
        block = find(s, lambda b: True, settings=FIND)
        assert block.size == r.block_size


def test_tie_aligned_mx_blocks_land_on_element_ties():
    grid = lt._grid("e2m1")
    ties = {(a + b) / 2 for a, b in zip(grid, grid[1:])}
    r = lowbit.recipes["mxfp4:ocp"]
    block = find(lt.blocks("mxfp4:ocp", shapes=["tie-aligned"]), lambda b: True, settings=FIND)
    amax = float(np.abs(block).max())
    k = math.frexp(amax)[1] - math.frexp(grid[-1])[1]
    assert math.ldexp(grid[-1], k) == amax
    assert all(abs(float(v)) == amax or math.ldexp(abs(float(v)), -k) in ties for v in block)
    assert r.block_size == block.size


def test_matrices_have_partial_last_blocks_and_fixed_shapes():
    m = find(lt.matrices("mxfp4:ocp"), lambda a: a.size % 32 != 0, settings=FIND)
    assert m.shape[0] == 1
    fixed = find(lt.matrices("int4:ao-sym", (3, 40), layout="g8"), lambda a: True, settings=FIND)
    assert fixed.shape == (3, 40) and fixed.dtype == np.float32


@SETTINGS
@given(lt.matrices("nvfp4:te"))
def test_the_model_matches_itself_on_generated_matrices(x):
    """assert_matches over lowbit.quantize's own outputs (the check's own
    consistency on every group shape, partial blocks included)."""
    q = lowbit.quantize(x, "nvfp4:te")
    lt.assert_matches(x, q.packed, "nvfp4:te", scale_codes=q.scale_codes, tensor_scale=q.tensor_scale[1],
                      packing="nibbles-low-first")
