"""lowbit.explain renders the model's trace (the binding's _lowbit.trace,
formats/include/lowbit/formats/recipe/trace_tensor.h): for every recipe of
the catalog, on inputs biased to where quantizers break (a block amax on the
element's largest value times a power of two, ties of the element grid,
values just below a power of two, +-0, NaN, +-Inf, FP32 subnormals), the
codes, dequantized values, block scales, zero points and tensor scale it shows
equal lowbit.quantize / lowbit.dequantize bit for bit, and every element
appears exactly once with its own input."""

import numpy as np
import pytest

import lowbit


def _bits(a):
    return np.asarray(a, dtype=np.float32).view(np.uint32)


def _inputs(recipe):
    """Rows of values for the recipe's own layout: whole blocks (or groups)
    and, for 1-D blocks, a short last block."""
    size = recipe.block_size if recipe.block_size > 0 else 16
    rng = np.random.default_rng(20261205)
    rows = []
    grid = rng.standard_normal(2 * size).astype(np.float32)
    grid[0] = 6.0 * 2.0 ** 3  # an E2M1-style maximum times a power of two
    grid[1] = 2.5  # a tie of the E2M1 grid, and of integer rounding
    grid[2] = np.nextafter(np.float32(4.0), np.float32(0))  # just below a power of two
    grid[3] = -0.0
    grid[size] = 448.0 * 2.0 ** -9  # E4M3's maximum times a power of two
    grid[size + 1] = -0.5
    rows.append(grid)
    special = rng.standard_normal(2 * size).astype(np.float32)
    special[5] = np.nan
    special[size + 2] = -np.inf
    rows.append(special)
    tiny = (rng.standard_normal(2 * size) * 2.0 ** -140).astype(np.float32)  # FP32 subnormals
    rows.append(tiny)
    rows.append(np.zeros(2 * size, dtype=np.float32))
    if recipe.layout.startswith("b"):  # 1-D blocks: a partial last block
        rows.append(rng.standard_normal(size + 3).astype(np.float32))
    return rows


@pytest.mark.parametrize("name", sorted(lowbit.recipes))
def test_explain_equals_quantize_and_dequantize(name):
    recipe = lowbit.recipes[name]
    for x in _inputs(recipe):
        e = lowbit.explain(x, name)
        q = lowbit.quantize(x.reshape(1, -1), name)
        back = lowbit.dequantize(q)
        codes = np.asarray(q.codes).reshape(-1)
        seen = np.zeros(x.size, dtype=int)
        assert len(e.groups) > 0
        for i, g in enumerate(e.groups):
            assert g.index == i
            idx = np.asarray(g.elements, dtype=np.int64)
            seen[idx] += 1
            np.testing.assert_array_equal(_bits(g.inputs), _bits(x[idx]))
            np.testing.assert_array_equal(np.asarray(g.codes, dtype=np.uint8), codes[idx], err_msg=f"group {i}")
            np.testing.assert_array_equal(_bits(g.dequantized), _bits(np.asarray(back).reshape(-1)[idx]),
                                          err_msg=f"group {i}")
            if q.scale_codes is not None:
                assert g.scale_code == int(np.asarray(q.scale_codes).reshape(-1)[i])
            else:
                assert _bits(g.scale) == _bits(np.asarray(q.scales).reshape(-1)[i])
            if q.zero_points is not None:
                assert g.zero_point == int(np.asarray(q.zero_points).reshape(-1)[i])
        assert (seen == 1).all()
        if q.tensor_scale is not None:
            assert _bits(e.tensor_scale[0]) == _bits(q.tensor_scale[0])
            assert _bits(e.tensor_scale[1]) == _bits(q.tensor_scale[1])
