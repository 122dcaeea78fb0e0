"""The pose arrays of the batch queries: checked once, before any work, then read by chunks."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .. import _native
from .._validate import MAX_COORDINATE, numbers
from ..errors import InvalidPoseError
from ..pose import as_poses, pose_values

__all__ = ["check_poses", "refuse_row"]

_TRANSLATION_BLOCK = 32768
"""Translations checked at a time (two passes over each block: a larger block costs less)."""

_KINDS = "an (N, 4, 4) array of poses or an (N, 3) array of translations"


def _is_se3(value: Any) -> bool:
    sm = sys.modules.get("spatialmath")
    if sm is None:
        return False
    if isinstance(value, sm.SE3):
        return True
    return isinstance(value, (list, tuple)) and any(isinstance(v, sm.SE3) for v in value)


def _check_rigid(batch: np.ndarray, name: str) -> None:
    """Check every row of the float64 array ``batch`` (N, 4, 4) by the rule of
    :func:`~spatialcontact.pose.pose_values`, naming the first bad one."""
    bad = _native.first_not_rigid(batch)
    if bad >= 0:
        pose_values(np.ascontiguousarray(batch[bad]), f"{name}[{bad}]")  # raises


def _check_translations(batch: np.ndarray, name: str) -> None:
    """Check the float64 translations ``batch`` (N, 3) block by block, naming the first bad
    row as :func:`~spatialcontact._validate.points` does."""
    for start in range(0, len(batch), _TRANSLATION_BLOCK):
        block = batch[start : start + _TRANSLATION_BLOCK]
        with np.errstate(invalid="ignore"):
            inside = np.abs(block) <= MAX_COORDINATE  # False for NaN too
        if not inside.all():
            refuse_row(batch, name, start + int(np.argwhere(~inside)[0, 0]))


def refuse_row(batch: np.ndarray, name: str, row: int) -> None:
    """Raise the error of :func:`check_poses` for row ``row`` of ``batch`` (N, 4, 4) or
    (N, 3), known to be bad.

    Raises
    ------
    InvalidPoseError
        Naming the row and what is wrong with it.
    """
    if batch.ndim == 3:
        pose_values(np.ascontiguousarray(batch[row]), f"{name}[{row}]")  # raises
    values = batch[row].tolist()
    bad = next(x for x in values if not (abs(x) <= MAX_COORDINATE))
    if not math.isfinite(bad):
        raise InvalidPoseError(f"{name} must be finite, got {bad} at row {row}")
    raise InvalidPoseError(
        f"{name} must lie within ±{MAX_COORDINATE:g} m on each axis, got {bad:g} at row {row}"
    )


def check_poses(
    value: Any, name: str, check: bool = True, values: bool = True
) -> tuple[np.ndarray, bool]:
    """Check a batch of poses or translations before any work is done.

    Parameters
    ----------
    value : array_like, shape (N, 4, 4) or (N, 3), SE3 or sequence of SE3
        Rigid transforms (as :func:`~spatialcontact.pose.as_poses` checks them), or
        translations (finite, within ``±MAX_COORDINATE`` m).
    name : str
        The parameter's name, for the messages.
    check : bool
        False checks only the shape and type of an ``(N, 4, 4)`` batch, not its values: for
        poses the caller computed as rigid transforms. The poses must then still pass
        :func:`~spatialcontact.pose.check_sound`, or be checked for it as they are read (the
        caller's job).
    values : bool
        False checks only the shape and type of the batch, whatever its layout: for a caller
        that checks every row itself as it reads it, and raises :func:`refuse_row` for the
        first bad one before giving any answer.

    Returns
    -------
    batch : ndarray, float64, shape (N, 4, 4) or (N, 3)
        The poses or translations. A float64 array is returned as it is (not copied), so it
        must not change while it is used. An empty batch has shape (0, 4, 4).
    translations : bool
        True for an (N, 3) batch of translations.

    Raises
    ------
    InvalidPoseError
        For a wrong shape or type, or naming the first row that is not a finite rigid
        transform (or not a finite translation in range).
    """
    if _is_se3(value):
        return as_poses(value, name), False
    if type(value) is np.ndarray and value.dtype == np.float64:  # not a masked array
        batch = value
    else:
        batch = numbers(value, name, _KINDS, type_error=InvalidPoseError, error=InvalidPoseError)
    if batch.size == 0 and batch.ndim <= 3:
        return np.zeros((0, 4, 4)), False
    if batch.ndim == 2 and batch.shape[1] == 3:
        if values:
            _check_translations(batch, name)
        return batch, True
    if batch.ndim == 3 and batch.shape[1:] == (4, 4):
        if check and values:
            _check_rigid(batch, name)
        return batch, False
    hint = " (give a single pose as a list of one)" if batch.shape == (4, 4) else ""
    raise InvalidPoseError(f"{name} must be {_KINDS}, got an array of shape {batch.shape}{hint}")
