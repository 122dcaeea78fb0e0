"""Argument checks shared by the shapes: each returns a clean value or raises with the name."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

import numpy as np

from .errors import InvalidShapeError, ShapeTypeError

__all__ = ["describe", "finite_real", "positive_real", "positive_vector3", "vector3"]


def describe(value: Any) -> str:
    """A short ``repr`` of ``value`` for error messages."""
    try:
        text = repr(value)
    except Exception:  # a repr that fails must not hide the real error
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 200 else text[:197] + "..."


def finite_real(value: Any, name: str) -> float:
    """``value`` as a finite float; ``bool`` and non-numbers are refused."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ShapeTypeError(f"{name} must be a real number, got {describe(value)}")
    out = float(value)
    if not math.isfinite(out):
        raise InvalidShapeError(f"{name} must be finite, got {describe(value)}")
    return out


def positive_real(value: Any, name: str) -> float:
    """``value`` as a finite float greater than zero."""
    out = finite_real(value, name)
    if out <= 0.0:
        raise InvalidShapeError(f"{name} must be positive, got {describe(value)}")
    return out


def vector3(value: Any, name: str) -> np.ndarray:
    """``value`` as a new finite float64 array of shape (3,)."""
    if isinstance(value, (str, bytes)):
        raise ShapeTypeError(f"{name} must be 3 real numbers, got {describe(value)}")
    try:
        out = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ShapeTypeError(f"{name} must be 3 real numbers, got {describe(value)}") from None
    if out.shape != (3,):
        raise InvalidShapeError(
            f"{name} must hold exactly 3 values, got shape {out.shape}: {describe(value)}"
        )
    if not np.all(np.isfinite(out)):
        raise InvalidShapeError(f"{name} must be finite, got {describe(value)}")
    return out


def positive_vector3(value: Any, name: str) -> np.ndarray:
    """``value`` as a new read-only float64 array of shape (3,) with positive entries."""
    out = vector3(value, name)
    if not np.all(out > 0.0):
        raise InvalidShapeError(f"{name} must be positive, got {describe(value)}")
    out.flags.writeable = False
    return out
