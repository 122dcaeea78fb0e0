"""Poses: spatialmath ``SE3`` or 4x4 array-likes, checked to be finite rigid transforms.

Inside the package a pose is a plain ``(4, 4)`` float64 array. ``spatialmath`` is imported only
when a caller hands us an ``SE3`` (so it is already loaded) or asks for one back.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .errors import InvalidPoseError

__all__ = ["ROTATION_TOLERANCE", "as_pose", "pose_values", "to_se3"]

ROTATION_TOLERANCE = 1e-6
"""Largest error accepted in the checks of a pose's rotation ``R``: each of ``|r0|^2 - 1``,
``|r1|^2 - 1``, ``r0 . r1`` and the entries of ``r2 - r0 x r1`` for its rows ``r0, r1, r2``."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _rigid_values(
    value: np.ndarray,
    _lo: float = -ROTATION_TOLERANCE,
    _hi: float = ROTATION_TOLERANCE,
    _inf: float = math.inf,
) -> list[float] | None:
    """The 16 entries (row by row) of a (4, 4) float array if it is a finite rigid transform,
    else None.

    Written out in plain floats: this runs on every pose update, and a few numpy calls would
    cost more than the Coal query that follows.
    """
    values = value.ravel().tolist()
    a, b, c, x, d, e, f, y, g, h, i, z, p, q, r, s = values
    # Rows 0 and 1 orthonormal and row 2 their cross product: exactly the rotations.
    if (
        _lo <= a * a + b * b + c * c - 1.0 <= _hi
        and _lo <= d * d + e * e + f * f - 1.0 <= _hi
        and _lo <= a * d + b * e + c * f <= _hi
        and _lo <= b * f - c * e - g <= _hi
        and _lo <= c * d - a * f - h <= _hi
        and _lo <= a * e - b * d - i <= _hi
        and -_inf < x + y + z < _inf
        and p == q == r == 0.0
        and s == 1.0
    ):
        return values
    return None


def _why_not_rigid(M: np.ndarray) -> str:
    """Say in words why a (4, 4) float array failed :func:`_rigid_values`."""
    if not np.all(np.isfinite(M)):
        return "it has non-finite entries"
    if not np.array_equal(M[3], [0.0, 0.0, 0.0, 1.0]):
        return f"its last row is {M[3].tolist()}, expected [0, 0, 0, 1]"
    R = M[:3, :3]
    err = float(np.abs(R @ R.T - np.eye(3)).max())
    if err <= 0.5 and np.linalg.det(R) < 0.0:
        return "its rotation has determinant -1 (a reflection)"
    return f"its rotation is not orthonormal (max |R R^T - I| = {err:.3g})"


def _as_array(value: Any, name: str) -> np.ndarray:
    sm = sys.modules.get("spatialmath")
    if sm is not None and isinstance(value, sm.SE3):
        if len(value) != 1:
            raise InvalidPoseError(
                f"{name} must be a single pose, got an SE3 holding {len(value)} poses"
            )
        return np.asarray(value.A, dtype=np.float64)
    if isinstance(value, (str, bytes)) or value is None:
        raise InvalidPoseError(
            f"{name} must be a spatialmath SE3 or a 4x4 array-like, got {_describe(value)}"
        )
    try:
        M = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidPoseError(
            f"{name} must be a spatialmath SE3 or a 4x4 array-like, got {_describe(value)}"
        ) from None
    if M.shape != (4, 4):
        raise InvalidPoseError(
            f"{name} must be a 4x4 homogeneous transform, got an array of shape {M.shape}: "
            f"{_describe(value)}"
        )
    return M


def pose_values(value: Any, name: str = "pose") -> tuple[np.ndarray, list[float]]:
    """Check that ``value`` is a rigid transform.

    Parameters
    ----------
    value : SE3 or array_like, shape (4, 4)
        The pose.
    name : str
        The parameter's name, used in the error message.

    Returns
    -------
    M : ndarray, shape (4, 4), float64
        The pose as an array; it may be ``value`` itself, so copy it before keeping it.
    values : list of 16 floats
        A fresh copy of the pose's entries, row by row.

    Raises
    ------
    InvalidPoseError
        If ``value`` is not a finite 4x4 rigid transform (orthonormal rotation with determinant
        +1 to within :data:`ROTATION_TOLERANCE`, last row ``[0, 0, 0, 1]``).
    """
    if type(value) is np.ndarray and value.shape == (4, 4) and value.dtype == np.float64:
        M = value
    else:
        M = _as_array(value, name)
    values = _rigid_values(M)
    if values is None:
        raise InvalidPoseError(
            f"{name} must be a rigid transform, but {_why_not_rigid(M)}: got {_describe(value)}"
        )
    return M, values


def as_pose(value: Any, name: str = "pose") -> np.ndarray:
    """Return ``value`` as a new read-only ``(4, 4)`` float64 array, checked to be rigid.

    ``None`` means the identity. See :func:`pose_values` for what is accepted.
    """
    if value is None:
        M = np.eye(4)
    else:
        M = np.array(pose_values(value, name)[1]).reshape(4, 4)
    M.flags.writeable = False
    return M


def to_se3(M: np.ndarray) -> Any:
    """A spatialmath ``SE3`` holding the (4, 4) array ``M`` (copied; no re-check)."""
    from spatialmath import SE3

    return SE3(np.array(M), check=False)
