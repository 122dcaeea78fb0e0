"""Reading shape dicts: the checks and conversions behind ``CollisionShape.from_dict``.

A dict describes one shape (see :meth:`spatialcontact.CollisionShape.to_dict`): its type under
``"stype"``, its sizes under the names of its constructor's parameters, and its pose and looks
either as spatialgeometry 1.4.2 gives them (world pose ``t``/``q``, colour ``0xRRGGBB`` and
``opacity``) or, in a complete dict (``to_dict(complete=True)``), exactly (``T``, ``rgba``,
``name``, ``collision``). This module reads those keys and says where a dict is wrong; the
shape classes build themselves from what it reads. It imports no shape module.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

import numpy as np

from ._validate import describe, finite_real, numbers
from .color import parse_color
from .errors import (
    InvalidArgumentError,
    InvalidPoseError,
    InvalidShapeError,
    ShapeTypeError,
    SpatialContactError,
)
from .pose import as_pose

__all__ = ["QUATERNION_TOLERANCE", "Fields", "is_located", "located", "quaternion_matrix"]

_F = TypeVar("_F", bound=Callable[..., Any])

_LOCATED = "_spatialcontact_dict_key"
"""Attribute set on an error that already names the place in a dict where it was found."""

QUATERNION_TOLERANCE = 1e-6
"""Largest ``| |q| - 1 |`` accepted for the quaternion ``q`` of a dict (it is then normalised)."""


def is_located(exc: BaseException) -> bool:
    """True when ``exc`` was raised here or by :meth:`Fields.error`: it names its dict."""
    return bool(getattr(exc, _LOCATED, False))


def located(exc: SpatialContactError) -> SpatialContactError:
    """``exc``, marked as naming its place in the dict already (no prefix added)."""
    setattr(exc, _LOCATED, True)
    return exc


def _locating(method: _F) -> _F:
    """Mark the errors ``method`` raises as naming their place in the dict (they do)."""

    @functools.wraps(method)
    def located(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except SpatialContactError as exc:
            setattr(exc, _LOCATED, True)
            raise

    return cast("_F", located)


def quaternion_matrix(q: np.ndarray) -> np.ndarray:
    """The rotation matrix (3, 3) of the unit quaternion ``q = [x, y, z, w]``."""
    x, y, z, w = (float(v) for v in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


class Fields:
    """The keys of one shape dict, read with errors that say where the dict is wrong.

    Parameters
    ----------
    value : Mapping
        The dict (checked here to be a mapping with a string ``"stype"``).
    where : str
        How an error names the dict: ``"d"``, ``"d['elements'][2]"``, ...
    """

    __slots__ = ("level", "stype", "values", "where")

    @_locating
    def __init__(self, value: Any, where: str, level: int = 1) -> None:
        if not isinstance(value, Mapping):
            raise ShapeTypeError(
                f"{where} must be a dict describing a shape, got {type(value).__name__}: "
                f"{describe(value)}"
            )
        self.values = value
        self.where = where
        self.level = level
        stype = value.get("stype")
        if stype is None:
            raise InvalidArgumentError(
                f"{where} has no 'stype' key (the shape type, e.g. 'sphere'): got keys "
                f"{sorted(map(str, value))}"
            )
        if not isinstance(stype, str):
            raise ShapeTypeError(f"{where}['stype'] must be a string, got {describe(stype)}")
        self.stype = stype

    def key(self, name: str) -> str:
        """How an error names the entry ``name``: ``d['radius']``."""
        return f"{self.where}[{name!r}]"

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str, default: Any = None) -> Any:
        """The entry ``name``, or ``default`` when the dict has none."""
        return self.values.get(name, default)

    @_locating
    def require(self, name: str) -> Any:
        """The entry ``name``; raises :class:`InvalidArgumentError` when it is missing."""
        if name not in self.values:
            raise InvalidArgumentError(
                f"{self.key(name)} is missing: a {self.stype!r} dict needs {name!r} (got keys "
                f"{sorted(map(str, self.values))})"
            )
        return self.values[name]

    def error(self, exc: SpatialContactError) -> SpatialContactError:
        """``exc`` (raised by a constructor on this dict's values) again, naming the dict."""
        located = type(exc)(f"{self.where} (a {self.stype!r} dict): {exc}")
        setattr(located, _LOCATED, True)
        return located

    @_locating
    def world_pose(self) -> np.ndarray | None:
        """The world pose (4, 4) of spatialgeometry's ``t`` and ``q``, or None without them."""
        if "t" not in self.values and "q" not in self.values:
            return None
        t = numbers(self.require("t"), self.key("t"), "3 real numbers", type_error=InvalidPoseError)
        q = numbers(self.require("q"), self.key("q"), "4 real numbers", type_error=InvalidPoseError)
        if t.shape != (3,) or not np.isfinite(t).all():
            raise InvalidPoseError(
                f"{self.key('t')} must be 3 finite numbers (a translation), got "
                f"{describe(self.values['t'])}"
            )
        norm = float(np.linalg.norm(q)) if q.shape == (4,) else math.nan
        if not abs(norm - 1.0) <= QUATERNION_TOLERANCE:
            raise InvalidPoseError(
                f"{self.key('q')} must be a unit quaternion [x, y, z, w] (norm within "
                f"{QUATERNION_TOLERANCE:g} of 1), got {describe(self.values['q'])}"
            )
        M = np.eye(4)
        M[:3, :3] = quaternion_matrix(q / norm)
        M[:3, 3] = t
        return as_pose(M, f"the pose of {self.key('t')} and {self.key('q')}")

    @_locating
    def local_pose(self, T_world_parent: np.ndarray | None) -> np.ndarray | None:
        """The pose relative to the parent whose world pose is ``T_world_parent`` (None: no
        parent): ``T`` as given, else from ``t``/``q``; None when the dict has neither."""
        if "T" in self.values:
            return as_pose(self.values["T"], self.key("T"))
        W = self.world_pose()
        if W is None or T_world_parent is None:
            return W
        R, p = T_world_parent[:3, :3], T_world_parent[:3, 3]
        inverse = np.eye(4)
        inverse[:3, :3] = R.T
        inverse[:3, 3] = -(R.T @ p)
        return as_pose(inverse @ W, f"the pose of {self.key('t')} and {self.key('q')}")

    @_locating
    def color(self) -> Any:
        """The colour for the constructor: ``rgba`` as given, else spatialgeometry's
        ``color`` (``0xRRGGBB``) with ``opacity``; None when the dict has neither."""
        if "rgba" in self.values:
            rgba = numbers(self.values["rgba"], self.key("rgba"), "4 real numbers")
            if rgba.shape != (4,) or not (np.all(rgba >= 0.0) and np.all(rgba <= 1.0)):
                raise InvalidShapeError(
                    f"{self.key('rgba')} must be 4 numbers in [0, 1], got "
                    f"{describe(self.values['rgba'])}"
                )
            return parse_color(rgba, self.key("rgba"))
        if "color" not in self.values:
            if "opacity" in self.values:
                raise InvalidArgumentError(
                    f"{self.key('opacity')} is given without {self.key('color')}"
                )
            return None
        code = self.values["color"]
        if isinstance(code, bool) or not isinstance(code, (int, np.integer)):
            raise ShapeTypeError(
                f"{self.key('color')} must be an integer 0xRRGGBB (as to_dict gives it), got "
                f"{describe(code)}"
            )
        if not 0 <= code <= 0xFFFFFF:
            raise InvalidArgumentError(
                f"{self.key('color')} must lie in [0, 0xFFFFFF], got {describe(code)}"
            )
        opacity = finite_real(self.values.get("opacity", 1.0), self.key("opacity"))
        if not 0.0 <= opacity <= 1.0:
            raise InvalidShapeError(f"{self.key('opacity')} must lie in [0, 1], got {opacity!r}")
        channels = [((int(code) >> shift) & 0xFF) / 255.0 for shift in (16, 8, 0)]
        return parse_color([*channels, opacity], self.key("color"))
