"""What every figure of the notebooks must have: a title, on every plotted
axes a labelled x and y axis whose label names its unit in brackets
("value [unitless]", "error [dB]"), and no visible text smaller than
MIN_FONT_PT (a figure is read on a screen at its inline size). The notebooks
finish each figure with checked(fig), so a figure without them fails the
notebook, and with it CI. Importing this module sets the default text size to
DEFAULT_FONT_PT.

The inline backend (matplotlib-inline, rendering with Agg) draws the figures
into the notebook; nothing needs a display.
"""

import re

import matplotlib
import matplotlib.pyplot as plt

UNIT = re.compile(r"\[[^\]]+\]")
MIN_FONT_PT = 9
DEFAULT_FONT_PT = 10
plt.rcParams.update({"font.size": DEFAULT_FONT_PT, "legend.fontsize": DEFAULT_FONT_PT,
                     "xtick.labelsize": DEFAULT_FONT_PT, "ytick.labelsize": DEFAULT_FONT_PT})


def small_texts(fig):
    """The visible, non-empty texts of fig smaller than MIN_FONT_PT."""
    fig.canvas.draw()  # tick labels exist only once the figure is laid out
    return [t for t in fig.findobj(matplotlib.text.Text)
            if t.get_visible() and t.get_text().strip() and t.get_fontsize() < MIN_FONT_PT]


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
    small = small_texts(fig)
    assert not small, (f"{len(small)} text(s) under {MIN_FONT_PT} pt, e.g. {small[0].get_text()!r} at "
                       f"{small[0].get_fontsize()} pt")
    return fig
