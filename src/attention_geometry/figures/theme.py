"""The book's shared figure theme: one seaborn theme, opaque white figures.

Figures live in :mod:`attention_geometry.figures`, one module per chapter;
the mathematical modules import no matplotlib. Every figure function takes the
data it draws (computed by the library in the chapter) and returns a
``matplotlib.figure.Figure`` without showing it, so a chapter can ``glue`` it.
Figures keep an opaque white background so that they stay legible when the
HTML book is read in dark mode.
"""

import matplotlib
import matplotlib.pyplot as plt
import seaborn as sns
from matplotlib.figure import Figure

__all__ = ["set_theme", "new_figure"]

_WHITE = {"figure.facecolor": "white", "axes.facecolor": "white", "savefig.facecolor": "white"}


def set_theme() -> None:
    """Apply the book's theme: seaborn ``whitegrid``, opaque white figures.

    Also loads the configured matplotlib backend. In a notebook that is the
    inline backend, which registers the PNG formatter through which ``glue``
    displays the ``Figure`` objects returned here; loading it first keeps it
    from overriding the theme later.
    """
    plt.switch_backend(matplotlib.get_backend())
    sns.set_theme(style="whitegrid", context="notebook", palette="colorblind", rc=_WHITE)
    plt.rcParams["figure.dpi"] = 110
    plt.rcParams["savefig.bbox"] = "tight"


def new_figure(**kwargs) -> Figure:
    """A figure not registered with pyplot: a notebook shows it only where the
    chapter glues it, and it is freed with its last reference (no ``plt.close``)."""
    return Figure(**kwargs)
