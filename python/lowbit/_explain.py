"""lowbit.explain: a recipe walked step by step, as data (Explanation, Step)."""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from . import _lowbit
from ._formats import Recipe, recipes


@dataclasses.dataclass(frozen=True)
class Step:
    """One block or group of a recipe, step by step: its statistics, the
    scale rule's input and result, the scaled elements, codes and the
    dequantized values."""

    index: int
    elements: list
    amax: float
    min: float
    max: float
    rule_value: float
    scale_code: Optional[int]
    scale_exponent: Optional[int]
    scale: float
    factor: float
    zero_point: int
    inputs: list
    scaled: list
    codes: list
    dequantized: list


@dataclasses.dataclass(frozen=True)
class Explanation:
    """lowbit.explain's result: the recipe, the tensor scale and one Step per group.

    >>> e = lowbit.explain([6.06, 1.0], "mxfp4:ocp")
    >>> e.groups[0].scale_code, e.groups[0].codes
    (127, [7, 2])
    >>> print(e)  # doctest: +NORMALIZE_WHITESPACE
    mxfp4:ocp (b32, e2m1 elements, e8m0 scales, rule mx-floor)
    group 0: amax 6.0599999 -> scale 1 (code 0x7f, 2^0), factor 1
      x        6.0599999  1
      scaled   6.0599999  1
      code     0x7        0x2
      back     6          1
    """

    recipe: Recipe
    layout: str
    tensor_scale: Optional[tuple]
    groups: list

    def __str__(self) -> str:
        r = self.recipe
        lines = [f"{r.name} ({self.layout}, {r.element} elements, {r.scale_format} scales, rule {r.scale_rule})"]
        if self.tensor_scale is not None:
            lines.append(f"tensor scale: encode {self.tensor_scale[0]:.8g}, decode {self.tensor_scale[1]:.8g}")
        for g in self.groups:
            scale = f"scale {g.scale:.8g}"
            if g.scale_code is not None:
                scale += f" (code {g.scale_code:#x}"
                scale += f", 2^{g.scale_exponent})" if g.scale_exponent is not None else ")"
            if r.zero_point:
                scale += f", zero point {g.zero_point}"
            lines.append(f"group {g.index}: amax {g.amax:.8g} -> {scale}, factor {g.factor:.8g}")
            cells = [[f"{v:.8g}" for v in g.inputs], [f"{v:.8g}" for v in g.scaled],
                     [f"{c:#x}" for c in g.codes], [f"{v:.8g}" for v in g.dequantized]]
            width = max(len(c) for row in cells for c in row) if g.inputs else 0
            for label, row in zip(("x", "scaled", "code", "back"), cells):
                lines.append(f"  {label:<8} " + "  ".join(c.ljust(width) for c in row).rstrip())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<lowbit.Explanation {self.recipe.name} {len(self.groups)} group(s)>\n{self}"


def explain(values, recipe: str) -> Explanation:
    """Walk values through a recipe step by step (as `lowbit explain` does):
    amax, the scale rule's value, the scale code, the scaled elements, the
    codes and the dequantized values, per block or group. The values are one
    row (FP32). Every number is the model's trace
    (formats/include/lowbit/formats/recipe/trace.h) as the binding hands it
    over; this only renders it."""
    x = np.ascontiguousarray(np.asarray(values, dtype=np.float32).reshape(-1))
    if not isinstance(recipe, str):
        raise TypeError(f"a recipe is a name (str), got {type(recipe).__name__}")
    d = _lowbit.trace(x, recipe.lower())
    r = recipes[d["name"]]
    fields = [f.name for f in dataclasses.fields(Step)]
    steps = [Step(**{k: g[k] for k in fields}) for g in d["groups"]]
    ts = (d["tensor_scale_encode"], d["tensor_scale_decode"]) if r.tensor_scale else None
    return Explanation(recipe=r, layout=d["layout"], tensor_scale=ts, groups=steps)
