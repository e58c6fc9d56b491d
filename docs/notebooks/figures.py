"""What every figure of the notebooks must have (issue 13): a title, and on
every plotted axes a labelled x and y axis whose label names its unit in
brackets ("value [unitless]", "error [dB]") or says "(log scale)". The
notebooks finish each figure with checked(fig), so a figure without them
fails the notebook, and with it CI.

The inline backend (matplotlib-inline, rendering with Agg) draws the figures
into the notebook; nothing needs a display.
"""

import re

UNIT = re.compile(r"\[[^\]]+\]")


def checked(fig):
    """Raises AssertionError naming what a figure lacks; returns fig."""
    title = fig._suptitle.get_text() if fig._suptitle is not None else ""
    plotted = [ax for ax in fig.axes if ax.get_label() != "<colorbar>" and ax.has_data()]
    assert plotted, "a figure with nothing plotted"
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            label = ax.get_ylabel() or ax.get_xlabel()
            assert UNIT.search(label), f"a colorbar without a unit: {label!r}"
    for ax in plotted:
        assert title or ax.get_title(), "a figure without a title"
        for which, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
            assert label, f"axes {ax.get_title()!r}: no {which} label"
            assert UNIT.search(label), f"axes {ax.get_title()!r}: the {which} label {label!r} names no [unit]"
    return fig
