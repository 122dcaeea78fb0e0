"""The exceptions the sensor adapters raise, all under :class:`~spatialcontact.SpatialContactError`.

Like the core errors, each is also a built-in ``ValueError``, ``TypeError`` or ``ImportError``, so
callers may catch the precise class, the common base or the built-in one.
"""

from __future__ import annotations

from ..errors import ShapeTypeError, SpatialContactError

__all__ = [
    "PlottingUnavailableError",
    "SelectionError",
    "SelectionIndexError",
    "SensorTypeError",
    "SensorValueError",
]


class SensorValueError(SpatialContactError, ValueError):
    """A sensor argument has a bad value: a negative time step, forces of the wrong length, ..."""


class SensorTypeError(ShapeTypeError):
    """A sensor argument has the wrong type (also a :class:`~spatialcontact.ShapeTypeError`)."""


class SelectionError(SensorValueError):
    """A selection of scene objects matched nothing, repeated an index or mixed kinds of item."""


class SelectionIndexError(SelectionError, IndexError):
    """A selection by index named an object the scene does not have (also an ``IndexError``)."""


class PlottingUnavailableError(SpatialContactError, ImportError):
    """A plotting method was called but matplotlib is not installed."""
