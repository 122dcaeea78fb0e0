"""The exceptions the sensor adapters raise, all under :class:`~spatialcontact.SpatialContactError`.

Like the core errors, each is also a built-in ``ValueError``, ``TypeError`` or ``ImportError``, so
callers may catch the precise class, the common base or the built-in one; a value out of range is
also an :class:`~spatialcontact.errors.InvalidArgumentError` and a wrong type a
:class:`~spatialcontact.errors.ShapeTypeError`, as in the core.
"""

from __future__ import annotations

from typing import Any

from .._validate import finite_real
from ..errors import InvalidArgumentError, ShapeTypeError, SpatialContactError

__all__ = [
    "PlottingUnavailableError",
    "SelectionError",
    "SelectionIndexError",
    "SensorTypeError",
    "SensorValueError",
    "real",
]


class SensorValueError(InvalidArgumentError):
    """A sensor argument has a bad value: a negative time step, forces of the wrong length, ...

    Also an :class:`~spatialcontact.errors.InvalidArgumentError` (and so a ``ValueError``).
    """


class SensorTypeError(ShapeTypeError):
    """A sensor argument has the wrong type (also a :class:`~spatialcontact.ShapeTypeError`)."""


class SelectionError(SensorValueError):
    """A selection of scene objects matched nothing, repeated an index or mixed kinds of item."""


class SelectionIndexError(SelectionError, IndexError):
    """A selection by index named an object the scene does not have (also an ``IndexError``)."""


class PlottingUnavailableError(SpatialContactError, ImportError):
    """A plotting method was called but matplotlib is not installed."""


def real(value: Any, name: str) -> float:
    """``value`` as a finite float, raising the sensors' own errors (see ``_validate``)."""
    return finite_real(value, name, error=SensorValueError, type_error=SensorTypeError)
