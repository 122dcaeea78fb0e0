"""Colours as spatialgeometry reads them: RGB(A) in [0, 1] or [0, 255], or a matplotlib name."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._validate import describe, numbers
from .errors import InvalidShapeError

__all__ = ["DEFAULT_COLOR", "parse_color", "to_hex"]

DEFAULT_COLOR = (0.3, 0.3, 0.3, 1.0)
"""The colour of a shape made without one: a mid-grey, opaque."""


def parse_color(value: Any, name: str = "color") -> tuple[float, float, float, float]:
    """Return ``value`` as an ``(r, g, b, a)`` tuple of floats in [0, 1].

    Accepts 3 or 4 numbers in [0, 1], or in [0, 255] (scaled down when any exceeds 1, as
    spatialgeometry does), or any colour name matplotlib knows. ``None`` gives
    :data:`DEFAULT_COLOR`.

    Raises
    ------
    InvalidShapeError
        For an unknown colour name, a wrong count or numbers out of range.
    ShapeTypeError
        For what is neither a name nor numbers: strings among the numbers, booleans, complex
        numbers, ``None`` among them, a dict, ...
    """
    if value is None:
        return DEFAULT_COLOR
    if isinstance(value, str):
        try:
            from matplotlib import colors
        except ImportError:
            raise InvalidShapeError(
                f"{name} {value!r} is a colour name, which needs matplotlib (pip install "
                "'spatialcontact[plot]'); give 3-4 numbers instead"
            ) from None
        try:
            r, g, b, a = colors.to_rgba(value)
        except ValueError:
            raise InvalidShapeError(
                f"{name} must be a matplotlib colour name or 3-4 numbers, got {value!r}"
            ) from None
        return (float(r), float(g), float(b), float(a))
    rgba = numbers(value, name, "a matplotlib colour name or 3-4 numbers", error=InvalidShapeError)
    if rgba.shape not in ((3,), (4,)) or not np.all(np.isfinite(rgba)) or np.any(rgba < 0):
        raise InvalidShapeError(
            f"{name} must be 3 or 4 finite non-negative numbers, got {describe(value)}"
        )
    if np.any(rgba > 1.0):
        rgba = rgba / 255.0
    if np.any(rgba > 1.0):
        raise InvalidShapeError(f"{name} values must lie in [0, 255], got {describe(value)}")
    if rgba.shape == (3,):
        rgba = np.append(rgba, 1.0)
    return (float(rgba[0]), float(rgba[1]), float(rgba[2]), float(rgba[3]))


def to_hex(color: tuple[float, ...]) -> int:
    """The RGB part of ``color`` as the integer ``0xRRGGBB`` (as spatialgeometry's to_dict)."""
    r, g, b = (int(c * 255) for c in color[:3])
    return (r << 16) | (g << 8) | b
