"""attention_geometry: the library behind the book *Attention Geometry*.

One module per mathematical object; everything public is re-exported here.
"""

from .chapters import CHAPTERS, Chapter, get_chapter
from .parameters import ParameterError, validate_parameters

__all__ = [
    "CHAPTERS",
    "Chapter",
    "get_chapter",
    "ParameterError",
    "validate_parameters",
]
