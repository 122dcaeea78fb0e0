"""Poses: spatialmath ``SE3`` or 4x4 array-likes, checked to be finite rigid transforms.

Inside the package a pose is a plain ``(4, 4)`` float64 array. ``spatialmath`` is imported only
when a caller hands us an ``SE3`` (so it is already loaded) or asks for one back.
"""

from __future__ import annotations

import struct
import sys
from typing import Any

import numpy as np

from . import _native
from ._validate import numbers
from .errors import InvalidPoseError

__all__ = [
    "MAX_TRANSLATION",
    "ROTATION_TOLERANCE",
    "as_pose",
    "as_poses",
    "check_sound",
    "pose_values",
    "to_se3",
]

ROTATION_TOLERANCE: float = _native.ROTATION_TOLERANCE
"""Largest error accepted in the checks of a pose's rotation ``R`` (1e-6): each of
``|r0|^2 - 1``, ``|r1|^2 - 1``, ``r0 . r1`` and the entries of ``r2 - r0 x r1`` for its rows
``r0, r1, r2``."""

MAX_TRANSLATION: float = _native.MAX_TRANSLATION
"""Largest coordinate of a pose's translation, in metres (1e6): farther than this, Coal's
answers for shapes of the smallest size (see ``_validate``) lose their precision."""

_UNPACK16 = struct.Struct("16d").unpack


def compose(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The products ``A[i] @ B[j]`` (n, m, 4, 4) of rigid poses ``A`` (n, 4, 4) and ``B``
    (m, 4, 4), float64, computed as the placements of shapes compute them (bit for bit)."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    out = np.empty((len(A), len(B), 4, 4))
    _native.compose_all(A, B, out)
    return out


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _why_not_rigid(M: np.ndarray) -> str:
    """Say in words why a (4, 4) float array is not a rigid transform within range."""
    if not np.all(np.isfinite(M)):
        return "it has non-finite entries"
    if not np.array_equal(M[3], [0.0, 0.0, 0.0, 1.0]):
        return f"its last row is {M[3].tolist()}, expected [0, 0, 0, 1]"
    far = float(np.abs(M[:3, 3]).max())
    if far > MAX_TRANSLATION:
        return (
            f"its translation reaches {far:.3g} m, beyond the supported range of "
            f"+-{MAX_TRANSLATION:g} m"
        )
    R = M[:3, :3]
    with np.errstate(over="ignore", invalid="ignore"):  # entries near 1e200: err is inf
        err = float(np.abs(R @ R.T - np.eye(3)).max())
    if err <= 0.5 and np.linalg.det(R) < 0.0:
        return "its rotation has determinant -1 (a reflection)"
    return f"its rotation is not orthonormal (max |R R^T - I| = {err:.3g})"


_POSE_KINDS = "a spatialmath SE3 or a 4x4 array-like"


def _as_array(value: Any, name: str) -> np.ndarray:
    """``value`` (an SE3 holding one pose, or a 4x4 array-like of real numbers) as a (4, 4)
    float64 array; strings, booleans, complex numbers, ``None``, object and masked arrays are
    refused with :class:`InvalidPoseError`."""
    sm = sys.modules.get("spatialmath")
    if sm is not None and isinstance(value, sm.SE3):
        if len(value) != 1:
            raise InvalidPoseError(
                f"{name} must be a single pose, got an SE3 holding {len(value)} poses"
            )
        return np.asarray(value.A, dtype=np.float64)
    M = numbers(value, name, _POSE_KINDS, type_error=InvalidPoseError, error=InvalidPoseError)
    if M.shape != (4, 4):
        raise InvalidPoseError(
            f"{name} must be a 4x4 homogeneous transform, got an array of shape {M.shape}: "
            f"{_describe(value)}"
        )
    return M


def pose_values(value: Any, name: str = "pose") -> tuple[np.ndarray, tuple[float, ...]]:
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
    values : tuple of 16 floats
        The pose's entries, row by row.

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
    if not _native.is_rigid(M):
        raise InvalidPoseError(
            f"{name} must be a rigid transform, but {_why_not_rigid(M)}: got {_describe(value)}"
        )
    return M, _UNPACK16(M.tobytes())


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


def _pose_rows(value: Any, name: str) -> np.ndarray:
    """A batch of poses as a new float64 array of shape (N, 4, 4), unchecked."""
    sm = sys.modules.get("spatialmath")
    if sm is not None and isinstance(value, sm.SE3):
        return np.array(value.A, dtype=np.float64).reshape(-1, 4, 4)
    if sm is not None and isinstance(value, (list, tuple)):
        items = []
        for i, item in enumerate(value):
            if isinstance(item, sm.SE3):
                if len(item) != 1:
                    raise InvalidPoseError(
                        f"{name}[{i}] must be a single pose, got an SE3 holding {len(item)} poses"
                    )
                item = item.A
            items.append(item)
        value = items
    batch = numbers(value, name, "poses", type_error=InvalidPoseError, error=InvalidPoseError)
    if batch.size == 0 and batch.ndim <= 3:
        return np.zeros((0, 4, 4))
    if batch.ndim != 3 or batch.shape[1:] != (4, 4):
        hint = " (give a single pose as a list of one)" if batch.shape == (4, 4) else ""
        raise InvalidPoseError(
            f"{name} must be an (N, 4, 4) array of poses, got an array of shape {batch.shape}"
            f"{hint}: {_describe(value)}"
        )
    return batch


def as_poses(value: Any, name: str = "poses") -> np.ndarray:
    """Return a batch of poses as a new read-only ``(N, 4, 4)`` float64 array, each checked.

    The checks are those of :func:`pose_values`: finite entries, last row ``[0, 0, 0, 1]``,
    an orthonormal rotation with determinant +1 (to within :data:`ROTATION_TOLERANCE`) and a
    translation within ``±MAX_TRANSLATION`` on each axis.

    Parameters
    ----------
    value : array_like, shape (N, 4, 4), sequence of SE3 or 4x4 array-likes, or SE3
        The poses; an SE3 may hold several. An empty sequence gives shape (0, 4, 4).
    name : str
        The parameter's name, used in the error messages.

    Returns
    -------
    ndarray, shape (N, 4, 4), float64, read-only

    Raises
    ------
    InvalidPoseError
        If ``value`` is not a batch of numbers of that shape, or naming the first pose (its
        row in the batch) that is not a rigid transform, and why.

    Examples
    --------
    >>> import numpy as np
    >>> as_poses([np.eye(4), np.eye(4)]).shape
    (2, 4, 4)
    >>> flipped = np.tile(np.eye(4), (3, 1, 1))
    >>> flipped[1, 0, 0] = -1.0
    >>> as_poses(flipped)
    Traceback (most recent call last):
    ...
    spatialcontact.errors.InvalidPoseError: poses[1] is not a rigid transform: its rotation \
has determinant -1 (a reflection)
    """
    batch = _pose_rows(value, name)
    first = _native.first_not_rigid(batch)
    if first >= 0:
        raise InvalidPoseError(
            f"{name}[{first}] is not a rigid transform: {_why_not_rigid(batch[first])}"
        )
    batch.flags.writeable = False
    return batch


def check_sound(batch: np.ndarray, name: str) -> None:
    """Check the float64 poses ``batch`` (N, 4, 4) for what no answer can be read from and Coal
    must never be given (non-finite entries, translations beyond ``±MAX_TRANSLATION``, a last
    row other than ``[0, 0, 0, 1]``), not for orthonormal rotations: the check that stays when
    a caller vouches for rigidity (``check=False``).

    Raises
    ------
    InvalidPoseError
        Naming the first bad pose (``name[i]``) and what is wrong with it, as
        :func:`pose_values` does.
    """
    bad = _native.first_unsound(batch)
    if bad >= 0:
        pose_values(np.ascontiguousarray(batch[bad]), f"{name}[{bad}]")  # raises


def to_se3(M: np.ndarray) -> Any:
    """A spatialmath ``SE3`` holding the (4, 4) array ``M`` (copied; no re-check)."""
    from spatialmath import SE3

    return SE3(np.array(M), check=False)
