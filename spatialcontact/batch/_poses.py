"""The pose arrays of the batch queries: checked once, before any work, then read by chunks."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .._validate import MAX_COORDINATE, numbers
from ..errors import InvalidPoseError
from ..pose import MAX_TRANSLATION, ROTATION_TOLERANCE, as_poses, pose_values

__all__ = ["check_poses", "check_sound"]

_BLOCK = 4096
"""Poses checked at a time: the work arrays of one block (0.8 MB) stay in the processor's
cache, and are reused from block to block."""

_TRANSLATION_BLOCK = 32768
"""Translations checked at a time (two passes over each block: a larger block costs less)."""

_KINDS = "an (N, 4, 4) array of poses or an (N, 3) array of translations"

_QUICK_TOLERANCE = ROTATION_TOLERANCE - 1e-12
"""The quick check's bound on each error: a little inside :data:`ROTATION_TOLERANCE`, so
that the rounding of its arithmetic (about 1e-15 on entries near 1) never waves through a
pose that :func:`as_poses`, computing the same errors in its own order, refuses."""


def _is_se3(value: Any) -> bool:
    sm = sys.modules.get("spatialmath")
    if sm is None:
        return False
    if isinstance(value, sm.SE3):
        return True
    return isinstance(value, (list, tuple)) and any(isinstance(v, sm.SE3) for v in value)


def work_arrays(n: int) -> np.ndarray:
    """Scratch for :func:`_rigid_rows` on blocks of up to ``n`` poses: (24, n) float64."""
    return np.empty((24, n))


def _rigid_rows(block: np.ndarray, work: np.ndarray | None = None) -> bool:
    """A quick test that every pose of ``block`` (n, 4, 4) is rigid, as :func:`as_poses` checks
    it: True means so; False means some row may not be (then :func:`as_poses` decides).

    Each error :func:`as_poses` bounds (``|r0|^2 - 1``, ``|r1|^2 - 1``, ``r0 . r1`` and
    ``r2 - r0 x r1``, for the rows ``r_i`` of the rotation) is computed for the whole block,
    and its largest and smallest values are compared with the tolerance; the translations and
    the last rows likewise (NaN fails every comparison). The block is first laid out entry by
    entry in ``work`` (:func:`work_arrays`, made here when None), as (16, n) rows, so that
    every operation runs over long contiguous rows, a few rows at a time.
    """
    n = len(block)
    if work is None or work.shape[1] < n:
        work = work_arrays(n)
    F = work[0:16, :n]  # entry k of every pose in row k: r0 in 0-2, r1 in 4-6, r2 in 8-10
    np.copyto(F, block.reshape(n, 16).T)
    e = work[16:22, :n]  # the errors: three dot products, then r2 - r0 x r1 (z, x, y)
    p = work[22:24, :n]
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf: errors fail
        # r0 x r1: z = r0x r1y - r0y r1x, x = r0y r1z - r0z r1y (rows 5-6 after 0-1, 4-5 after
        # 1-2), y = r0z r1x - r0x r1z.
        np.multiply(F[0:2], F[5:7], out=e[3:5])
        np.multiply(F[1:3], F[4:6], out=p)
        e[3:5] -= p
        np.subtract(F[10:7:-2], e[3:5], out=e[3:5])
        np.multiply(F[2], F[4], out=e[5])
        np.multiply(F[0], F[6], out=p[0])
        e[5] -= p[0]
        np.subtract(F[9], e[5], out=e[5])
        # |r0|^2 - 1 and |r1|^2 - 1 (entry k of both rows at once), r0 . r1
        rows = F[0:8].reshape(2, 4, n)
        np.multiply(rows[:, 0], rows[:, 0], out=e[0:2])
        np.multiply(F[0], F[4], out=e[2])
        for k in (1, 2):
            np.multiply(rows[:, k], rows[:, k], out=p)
            e[0:2] += p
            np.multiply(F[k], F[4 + k], out=p[0])
            e[2] += p[0]
        e[0:2] -= 1.0
        if not (e.max() <= _QUICK_TOLERANCE and e.min() >= -_QUICK_TOLERANCE):
            return False
        t = F[3:12:4]
        if not (t.max() <= MAX_TRANSLATION and t.min() >= -MAX_TRANSLATION):
            return False
    return bool(not F[12:15].any() and F[15].min() == 1.0 == F[15].max())


def _check_rigid(batch: np.ndarray, name: str, first: int = 0) -> None:
    """Check every row of the float64 array ``batch`` (N, 4, 4), naming the first bad one
    (row ``first + i`` for ``batch[i]``)."""
    work = work_arrays(min(len(batch), _BLOCK))
    for start in range(0, len(batch), _BLOCK):
        block = batch[start : start + _BLOCK]
        if _rigid_rows(block, work):
            continue
        try:
            as_poses(block, name)
        except InvalidPoseError:
            for j, M in enumerate(block):
                pose_values(np.ascontiguousarray(M), f"{name}[{first + start + j}]")
            raise


def _sound_rows(block: np.ndarray) -> bool:
    """Whether every pose of ``block`` (n, 4, 4) has finite entries, a translation within
    :data:`~spatialcontact.pose.MAX_TRANSLATION` and the last row ``[0, 0, 0, 1]``."""
    F = block.reshape(-1, 16)
    with np.errstate(invalid="ignore"):
        return bool(
            np.isfinite(F).all()
            and (np.abs(F[:, 3:12:4]) <= MAX_TRANSLATION).all()
            and not F[:, 12:15].any()
            and (F[:, 15] == 1.0).all()
        )


def check_sound(batch: np.ndarray, name: str) -> None:
    """Check the float64 poses ``batch`` (N, 4, 4) for what Coal must never be given (non-finite
    entries, translations out of range, a wrong last row), not for orthonormal rotations;
    the first bad row is named as by a full check."""
    for start in range(0, len(batch), _TRANSLATION_BLOCK):
        if not _sound_rows(batch[start : start + _TRANSLATION_BLOCK]):
            _check_rigid(batch[start : start + _TRANSLATION_BLOCK], name, start)


def _check_translations(batch: np.ndarray, name: str) -> None:
    """Check the float64 translations ``batch`` (N, 3) block by block, naming the first bad
    row as :func:`~spatialcontact._validate.points` does."""
    for start in range(0, len(batch), _TRANSLATION_BLOCK):
        block = batch[start : start + _TRANSLATION_BLOCK]
        with np.errstate(invalid="ignore"):
            inside = np.abs(block) <= MAX_COORDINATE  # False for NaN too
        if inside.all():
            continue
        row, column = np.argwhere(~inside)[0].tolist()
        bad = float(block[row, column])
        if not math.isfinite(bad):
            raise InvalidPoseError(f"{name} must be finite, got {bad} at row {start + row}")
        raise InvalidPoseError(
            f"{name} must lie within ±{MAX_COORDINATE:g} m on each axis, got {bad:g} at row "
            f"{start + row}"
        )


def check_poses(value: Any, name: str, check: bool = True) -> tuple[np.ndarray, bool]:
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
        poses the caller computed as rigid transforms. Poses that go to Coal must then still
        pass :func:`check_sound` (the caller's job, as it knows which do).

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
        _check_translations(batch, name)
        return batch, True
    if batch.ndim == 3 and batch.shape[1:] == (4, 4):
        if check:
            _check_rigid(batch, name)
        return batch, False
    hint = " (give a single pose as a list of one)" if batch.shape == (4, 4) else ""
    raise InvalidPoseError(f"{name} must be {_KINDS}, got an array of shape {batch.shape}{hint}")
