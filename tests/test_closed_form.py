"""Closed-form signed distances and witness points (``spatialcontact._closed_form``).

Known answers worked out by hand for every pair (apart, touching, shallow, deep, concentric and
the tie placements); then, on hypothesis placements: ``p2 - p1 == d * normal``, unit normals,
witness points on both surfaces and farthest along the normal (each shape's own signed
distance and support function), both orders, rigid motions, batches, agreement with Coal on
separated placements and, on overlapping ones, a search over translation directions that finds
none shorter than the penetration depth.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import coal
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import spatialcontact as sc
from spatialcontact import _closed_form as cf
from spatialcontact._closed_form import SignedDistance

FloatArray = npt.NDArray[np.float64]

ATOL = 1e-12
"""Exact up to rounding: every input here is of order 1."""

S2 = math.sqrt(2.0)
S3 = math.sqrt(3.0)
S5 = math.sqrt(5.0)
I3 = np.eye(3)
RX90 = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
RY90 = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
RZ90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
R45X = np.array([[1.0, 0.0, 0.0], [0.0, S2 / 2, -S2 / 2], [0.0, S2 / 2, S2 / 2]])
RRAT = np.array([[2.0, -1.0, 2.0], [2.0, 2.0, -1.0], [-1.0, 2.0, 2.0]]) / 3.0
"""A rotation with rational entries (columns (2, 2, -1)/3, (-1, 2, 2)/3, (2, -1, 2)/3)."""


def pose(R: FloatArray = I3, t: Any = (0.0, 0.0, 0.0)) -> FloatArray:
    """The 4x4 rigid transform of rotation ``R`` and translation ``t``."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


def quaternion_matrix(q: Any) -> FloatArray:
    """Rotation matrix of the quaternion ``(w, x, y, z)`` (normalised here)."""
    w, x, y, z = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


# ----------------------------------------------------------------------------- known answers

A = [0.0, 0.0, -1.0]
B = [0.0, 0.0, 1.0]
BOX = [2.0, 4.0, 6.0]
UP = [0.0, 0.0, 1.0]
I4 = np.eye(4)

KNOWN: list[tuple[str, Callable[[], SignedDistance], float, Any, Any, Any]] = [
    # sphere / sphere
    ("sphere-sphere apart", lambda: cf.sphere_sphere([0, 0, 0], 1.0, [3, 0, 0], 1.0),
     1.0, [1, 0, 0], [2, 0, 0], [1, 0, 0]),
    ("sphere-sphere touching", lambda: cf.sphere_sphere([0, 0, 0], 1.0, [2, 0, 0], 1.0),
     0.0, [1, 0, 0], [1, 0, 0], [1, 0, 0]),
    ("sphere-sphere shallow", lambda: cf.sphere_sphere([0, 0, 0], 1.0, [0, 1.5, 0], 1.0),
     -0.5, [0, 1, 0], [0, 0.5, 0], [0, 1, 0]),
    ("sphere-sphere deep", lambda: cf.sphere_sphere([0, 0, 0], 1.0, [0, 0, -0.25], 0.5),
     -1.25, [0, 0, -1], [0, 0, 0.25], [0, 0, -1]),
    ("sphere-sphere concentric", lambda: cf.sphere_sphere([1, 2, 3], 1.0, [1, 2, 3], 0.5),
     -1.5, [2, 2, 3], [0.5, 2, 3], [1, 0, 0]),
    # sphere / box, half sides (1, 2, 3)
    ("sphere-box face", lambda: cf.sphere_box([3, 0, 0], 0.5, I4, BOX),
     1.5, [2.5, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-box edge", lambda: cf.sphere_box([2, 3, 0], 0.5, I4, BOX),
     S2 - 0.5, [2 - 0.5 / S2, 3 - 0.5 / S2, 0], [1, 2, 0], [-1 / S2, -1 / S2, 0]),
    ("sphere-box corner", lambda: cf.sphere_box([2, 3, 4], 0.5, I4, BOX),
     S3 - 0.5, np.array([2, 3, 4]) - 0.5 / S3, [1, 2, 3], [-1 / S3] * 3),
    ("sphere-box touching", lambda: cf.sphere_box([1.5, 0, 0], 0.5, I4, BOX),
     0.0, [1, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-box shallow", lambda: cf.sphere_box([1.25, 0, 0], 0.5, I4, BOX),
     -0.25, [0.75, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-box centre on a face", lambda: cf.sphere_box([1, 0.5, 0], 0.5, I4, BOX),
     -0.5, [0.5, 0.5, 0], [1, 0.5, 0], [-1, 0, 0]),
    ("sphere-box centre on an edge", lambda: cf.sphere_box([1, 2, 0], 0.5, I4, BOX),
     -0.5, [0.5, 2, 0], [1, 2, 0], [-1, 0, 0]),
    ("sphere-box centre on a corner", lambda: cf.sphere_box([-1, -2, -3], 0.5, I4, BOX),
     -0.5, [-0.5, -2, -3], [-1, -2, -3], [1, 0, 0]),
    ("sphere-box centre at the centre", lambda: cf.sphere_box([0, 0, 0], 0.5, I4, BOX),
     -1.5, [-0.5, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-box cube centre tie", lambda: cf.sphere_box([0, 0, 0], 0.5, I4, [2, 2, 2]),
     -1.5, [-0.5, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-box deep", lambda: cf.sphere_box([0.25, 1.5, 0], 0.5, I4, BOX),
     -1.0, [0.25, 1.0, 0], [0.25, 2, 0], [0, -1, 0]),
    ("sphere-box moved", lambda: cf.sphere_box([1, 5, 3], 0.5, pose(RZ90, [1, 2, 3]), BOX),
     1.5, [1, 4.5, 3], [1, 3, 3], [0, -1, 0]),
    ("sphere-box moved deep",
     lambda: cf.sphere_box([-0.5, 2.25, 3], 0.5, pose(RZ90, [1, 2, 3]), BOX),
     -1.0, [0, 2.25, 3], [-1, 2.25, 3], [1, 0, 0]),
    # sphere / capsule, segment z in [-1, 1], radius 0.5
    ("sphere-capsule apart side", lambda: cf.sphere_capsule([2, 0, 0], 0.5, A, B, 0.5),
     1.0, [1.5, 0, 0], [0.5, 0, 0], [-1, 0, 0]),
    ("sphere-capsule apart end", lambda: cf.sphere_capsule([0, 0, 3], 0.5, A, B, 0.5),
     1.0, [0, 0, 2.5], [0, 0, 1.5], [0, 0, -1]),
    ("sphere-capsule touching", lambda: cf.sphere_capsule([1, 0, 0], 0.5, A, B, 0.5),
     0.0, [0.5, 0, 0], [0.5, 0, 0], [-1, 0, 0]),
    ("sphere-capsule shallow", lambda: cf.sphere_capsule([0.75, 0, 0.5], 0.5, A, B, 0.5),
     -0.25, [0.25, 0, 0.5], [0.5, 0, 0.5], [-1, 0, 0]),
    ("sphere-capsule on the axis", lambda: cf.sphere_capsule([0, 0, 0.25], 0.5, A, B, 0.5),
     -1.0, [0, 0.5, 0.25], [0, -0.5, 0.25], [0, 1, 0]),
    ("sphere-capsule at an end point", lambda: cf.sphere_capsule(B, 0.5, A, B, 0.5),
     -1.0, [0, 0.5, 1], [0, -0.5, 1], [0, 1, 0]),
    ("sphere-capsule deep by an end",
     lambda: cf.sphere_capsule([0, 0.25, 1.25], 0.5, A, B, 0.5),
     0.25 * S2 - 1.0, [0, 0.25 - 0.5 / S2, 1.25 - 0.5 / S2], [0, 0.5 / S2, 1 + 0.5 / S2],
     [0, -1 / S2, -1 / S2]),
    # capsule / capsule
    ("capsules parallel apart",
     lambda: cf.capsule_capsule(A, B, 0.5, [2, 0, 0], [2, 0, 3], 0.5),
     1.0, [0.5, 0, 0.5], [1.5, 0, 0.5], [1, 0, 0]),
    ("capsules crossing",
     lambda: cf.capsule_capsule([-1, 0, 0], [1, 0, 0], 0.5, [0, -1, 0], [0, 1, 0], 0.5),
     -1.0, [0, 0, 0.5], [0, 0, -0.5], [0, 0, 1]),
    ("capsules crossing shallow",
     lambda: cf.capsule_capsule([-1, 0, 0], [1, 0, 0], 0.5, [0, -1, 0.25], [0, 1, 0.25], 0.5),
     -0.75, [0, 0, 0.5], [0, 0, -0.25], [0, 0, 1]),
    ("capsules coincident", lambda: cf.capsule_capsule(A, B, 0.5, A, B, 0.25),
     -0.75, [0, 0.5, 0], [0, -0.25, 0], [0, 1, 0]),
    ("capsules nearly coincident",
     lambda: cf.capsule_capsule(A, B, 0.5, [0, 1e-9, -1], [0, 1e-9, 1], 0.25),
     1e-9 - 0.75, [0, 0.5, 0], [0, 1e-9 - 0.25, 0], [0, 1, 0]),
    ("capsules collinear apart",
     lambda: cf.capsule_capsule(A, B, 0.25, [0, 0, 2], [0, 0, 4], 0.25),
     0.5, [0, 0, 1.25], [0, 0, 1.75], [0, 0, 1]),
    ("capsules end on side",
     lambda: cf.capsule_capsule([-1, 0, 0], [1, 0, 0], 0.5, [0, 0, 0], [0, 0, 2], 0.5),
     -1.0, [0, -0.5, 0], [0, 0.5, 0], [0, -1, 0]),
    ("capsules skew apart",
     lambda: cf.capsule_capsule([-1, 0, 0], [1, 0, 0], 0.5, [0.5, -1, 3], [0.5, 1, 3], 0.5),
     2.0, [0.5, 0, 0.5], [0.5, 0, 2.5], [0, 0, 1]),
    ("capsules end against side",
     lambda: cf.capsule_capsule(A, B, 0.5, [2, 0, 0], [4, 0, 0], 0.5),
     1.0, [0.5, 0, 0], [1.5, 0, 0], [1, 0, 0]),
    # sphere / cylinder, radius 1, z in [-1, 1]
    ("sphere-cylinder apart side", lambda: cf.sphere_cylinder([3, 0, 0], 0.5, I4, 1.0, 2.0),
     1.5, [2.5, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-cylinder apart cap", lambda: cf.sphere_cylinder([0.5, 0, 3], 0.5, I4, 1.0, 2.0),
     1.5, [0.5, 0, 2.5], [0.5, 0, 1], [0, 0, -1]),
    ("sphere-cylinder apart rim", lambda: cf.sphere_cylinder([4, 0, 5], 0.5, I4, 1.0, 2.0),
     4.5, [3.7, 0, 4.6], [1, 0, 1], [-0.6, 0, -0.8]),
    ("sphere-cylinder touching", lambda: cf.sphere_cylinder([1.5, 0, 0], 0.5, I4, 1.0, 2.0),
     0.0, [1, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-cylinder inside by a cap",
     lambda: cf.sphere_cylinder([0.1, 0, 0.8], 0.25, I4, 1.0, 2.0),
     -0.45, [0.1, 0, 0.55], [0.1, 0, 1], [0, 0, -1]),
    ("sphere-cylinder inside by the side",
     lambda: cf.sphere_cylinder([0, 0.75, 0.1], 0.25, I4, 1.0, 2.0),
     -0.5, [0, 0.5, 0.1], [0, 1, 0.1], [0, -1, 0]),
    ("sphere-cylinder centre tie", lambda: cf.sphere_cylinder([0, 0, 0], 0.25, I4, 1.0, 2.0),
     -1.25, [-0.25, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("sphere-cylinder on the axis",
     lambda: cf.sphere_cylinder([0, 0, 1.5], 0.25, I4, 1.0, 4.0),
     -0.75, [0, 0, 1.25], [0, 0, 2], [0, 0, -1]),
    ("sphere-cylinder on the rim", lambda: cf.sphere_cylinder([1, 0, 1], 0.25, I4, 1.0, 2.0),
     -0.25, [0.75, 0, 1], [1, 0, 1], [-1, 0, 0]),
    ("sphere-cylinder by the -z cap",
     lambda: cf.sphere_cylinder([0, 0.2, -0.9], 0.25, I4, 1.0, 2.0),
     -0.35, [0, 0.2, -0.65], [0, 0.2, -1], [0, 0, 1]),
    ("sphere-cylinder moved, by a cap",
     lambda: cf.sphere_cylinder([1.1, 1.2, 3], 0.25, pose(RX90, [1, 2, 3]), 1.0, 2.0),
     -0.45, [1.1, 1.45, 3], [1.1, 1, 3], [0, 1, 0]),
    ("sphere-cylinder moved, centre tie",
     lambda: cf.sphere_cylinder([1, 2, 3], 0.25, pose(RZ90, [1, 2, 3]), 1.0, 2.0),
     -1.25, [1, 1.75, 3], [1, 3, 3], [0, -1, 0]),
    # sphere / cone, base radius 1 at z = -1, apex at z = 1 (slant normal (2, 0, 1) / sqrt 5)
    ("sphere-cone centre inside on the axis",
     lambda: cf.sphere_cone([0, 0, 0], 0.5, I4, 1.0, 2.0),
     -(0.5 + 1 / S5), [-1 / S5, 0, -0.5 / S5], [0.4, 0, 0.2], [-2 / S5, 0, -1 / S5]),
    ("sphere-cone centre inside low on the axis",
     lambda: cf.sphere_cone([0, 0, -0.3], 0.5, I4, 1.0, 2.0),
     -(0.5 + 1.3 / S5), [-1 / S5, 0, -0.3 - 0.5 / S5], [0.52, 0, -0.04],
     [-2 / S5, 0, -1 / S5]),
    ("sphere-cone inside by the base",
     lambda: cf.sphere_cone([0.1, 0, -0.9], 0.25, I4, 1.0, 2.0),
     -0.35, [0.1, 0, -0.65], [0.1, 0, -1], [0, 0, 1]),
    ("sphere-cone centre at the apex", lambda: cf.sphere_cone([0, 0, 1], 0.25, I4, 1.0, 2.0),
     -0.25, [-0.5 / S5, 0, 1 - 0.25 / S5], [0, 0, 1], [-2 / S5, 0, -1 / S5]),
    ("sphere-cone apart over the apex", lambda: cf.sphere_cone([0, 0, 1.5], 0.25, I4, 1.0, 2.0),
     0.25, [0, 0, 1.25], [0, 0, 1], [0, 0, -1]),
    ("sphere-cone apart near the apex",
     lambda: cf.sphere_cone([0.5, 0, 2], 0.25, I4, 1.0, 2.0),
     S5 / 2 - 0.25, [0.5 - 0.25 / S5, 0, 2 - 0.5 / S5], [0, 0, 1], [-1 / S5, 0, -2 / S5]),
    ("sphere-cone apart near the rim, below",
     lambda: cf.sphere_cone([2, 0, -2], 0.5, I4, 1.0, 2.0),
     S2 - 0.5, [2 - 0.5 / S2, 0, -2 + 0.5 / S2], [1, 0, -1], [-1 / S2, 0, 1 / S2]),
    ("sphere-cone apart near the rim, beside",
     lambda: cf.sphere_cone([0, 3, -0.5], 0.5, I4, 1.0, 2.0),
     math.sqrt(4.25) - 0.5, [0, 3 - 1 / math.sqrt(4.25), -0.5 - 0.25 / math.sqrt(4.25)],
     [0, 1, -1], [0, -2 / math.sqrt(4.25), -0.5 / math.sqrt(4.25)]),
    ("sphere-cone apart below the base",
     lambda: cf.sphere_cone([0.3, 0.4, -1.5], 0.25, I4, 1.0, 2.0),
     0.25, [0.3, 0.4, -1.25], [0.3, 0.4, -1], [0, 0, 1]),
    ("sphere-cone apart beside the slant",
     lambda: cf.sphere_cone([2.5, 0, 1], 0.5, I4, 1.0, 2.0),
     S5 - 0.5, [2.5 - 1 / S5, 0, 1 - 0.5 / S5], [0.5, 0, 0], [-2 / S5, 0, -1 / S5]),
    ("sphere-cone touching the slant",
     lambda: cf.sphere_cone([0.5 + 1 / S5, 0, 0.5 / S5], 0.5, I4, 1.0, 2.0),
     0.0, [0.5, 0, 0], [0.5, 0, 0], [-2 / S5, 0, -1 / S5]),
    ("sphere-cone centre on the rim", lambda: cf.sphere_cone([1, 0, -1], 0.25, I4, 1.0, 2.0),
     -0.25, [1 - 0.5 / S5, 0, -1 - 0.25 / S5], [1, 0, -1], [-2 / S5, 0, -1 / S5]),
    ("sphere-cone moved, on the axis",
     lambda: cf.sphere_cone([1, 2, 3], 0.5, pose(RX90, [1, 2, 3]), 1.0, 2.0),
     -(0.5 + 1 / S5), [1 - 1 / S5, 2 + 0.5 / S5, 3], [1.4, 1.8, 3], [-2 / S5, 1 / S5, 0]),
    ("sphere-cone moved, on the axis, turned about it",
     lambda: cf.sphere_cone([1, 2, 3], 0.5, pose(RZ90, [1, 2, 3]), 1.0, 2.0),
     -(0.5 + 1 / S5), [1, 2 - 1 / S5, 3 - 0.5 / S5], [1, 2.4, 3.2], [0, -2 / S5, -1 / S5]),
    # sphere / half-space z <= 0 (and a tilted one)
    ("sphere-halfspace apart", lambda: cf.sphere_halfspace([1, 2, 3], 1.0, UP, 0.0),
     2.0, [1, 2, 2], [1, 2, 0], [0, 0, -1]),
    ("sphere-halfspace touching", lambda: cf.sphere_halfspace([1, 2, 1], 1.0, UP, 0.0),
     0.0, [1, 2, 0], [1, 2, 0], [0, 0, -1]),
    ("sphere-halfspace shallow", lambda: cf.sphere_halfspace([1, 2, 0.5], 1.0, UP, 0.0),
     -0.5, [1, 2, -0.5], [1, 2, 0], [0, 0, -1]),
    ("sphere-halfspace inside", lambda: cf.sphere_halfspace([1, 2, -2], 1.0, UP, 0.0),
     -3.0, [1, 2, -3], [1, 2, 0], [0, 0, -1]),
    ("sphere-halfspace tilted",
     lambda: cf.sphere_halfspace([3, 4, 0], 1.0, [0.6, 0.8, 0], 1.0),
     3.0, [2.4, 3.2, 0], [0.6, 0.8, 0], [-0.6, -0.8, 0]),
    # capsule / half-space
    ("capsule-halfspace upright",
     lambda: cf.capsule_halfspace([0, 0, 1], [0, 0, 3], 0.5, UP, 0.0),
     0.5, [0, 0, 0.5], [0, 0, 0], [0, 0, -1]),
    ("capsule-halfspace lying",
     lambda: cf.capsule_halfspace([-1, 0, 0.25], [1, 0, 0.25], 0.5, UP, 0.0),
     -0.25, [0, 0, -0.25], [0, 0, 0], [0, 0, -1]),
    ("capsule-halfspace tilted",
     lambda: cf.capsule_halfspace([0, 0, 2], [1, 0, -1], 0.5, UP, 0.0),
     -1.5, [1, 0, -1.5], [1, 0, 0], [0, 0, -1]),
    # box / half-space, half sides (1, 2, 3)
    ("box-halfspace face down", lambda: cf.box_halfspace(pose(t=[0, 0, 5]), BOX, UP, 0.0),
     2.0, [0, 0, 2], [0, 0, 0], [0, 0, -1]),
    ("box-halfspace edge down", lambda: cf.box_halfspace(pose(R45X, [0, 0, 5]), BOX, UP, 0.0),
     5 - 2.5 * S2, [0, S2 / 2, 5 - 2.5 * S2], [0, S2 / 2, 0], [0, 0, -1]),
    ("box-halfspace vertex down",
     lambda: cf.box_halfspace(pose(RRAT, [0, 0, 4]), BOX, UP, 0.0),
     1 / 3, [-2 / 3, 1 / 3, 1 / 3], [-2 / 3, 1 / 3, 0], [0, 0, -1]),
    ("box-halfspace deep", lambda: cf.box_halfspace(pose(t=[0, 0, -10]), BOX, UP, 0.0),
     -13.0, [0, 0, -13], [0, 0, 0], [0, 0, -1]),
    # cylinder / half-space, radius 1, length 2
    ("cylinder-halfspace upright",
     lambda: cf.cylinder_halfspace(pose(t=[0, 0, 3]), 1.0, 2.0, UP, 0.0),
     2.0, [0, 0, 2], [0, 0, 0], [0, 0, -1]),
    ("cylinder-halfspace lying",
     lambda: cf.cylinder_halfspace(pose(RY90, [0, 0, 0.5]), 1.0, 2.0, UP, 0.0),
     -0.5, [0, 0, -0.5], [0, 0, 0], [0, 0, -1]),
    ("cylinder-halfspace tilted",
     lambda: cf.cylinder_halfspace(pose(RRAT, [0, 0, 2]), 1.0, 2.0, UP, 0.0),
     2 - (2 + S5) / 3,
     [-2 / 3 + 4 / (3 * S5), 1 / 3 - 2 / (3 * S5), 2 - (2 + S5) / 3],
     [-2 / 3 + 4 / (3 * S5), 1 / 3 - 2 / (3 * S5), 0], [0, 0, -1]),
    # points
    ("point-sphere at the centre", lambda: cf.point_sphere([0, 0, 0], [0, 0, 0], 1.0),
     -1.0, [0, 0, 0], [-1, 0, 0], [1, 0, 0]),
    ("point-sphere apart", lambda: cf.point_sphere([0, 3, 0], [0, 0, 0], 1.0),
     2.0, [0, 3, 0], [0, 1, 0], [0, -1, 0]),
    ("point-box inside", lambda: cf.point_box([0, 0, 0], I4, BOX),
     -1.0, [0, 0, 0], [1, 0, 0], [-1, 0, 0]),
    ("point-box on a corner", lambda: cf.point_box([1, 2, 3], I4, BOX),
     0.0, [1, 2, 3], [1, 2, 3], [-1, 0, 0]),
    ("point-box apart", lambda: cf.point_box([0, 0, 5], I4, BOX),
     2.0, [0, 0, 5], [0, 0, 3], [0, 0, -1]),
    ("point-capsule on the axis", lambda: cf.point_capsule([0, 0, 0], A, B, 0.5),
     -0.5, [0, 0, 0], [0, -0.5, 0], [0, 1, 0]),
    ("point-capsule apart", lambda: cf.point_capsule([0, 0, -2], A, B, 0.5),
     0.5, [0, 0, -2], [0, 0, -1.5], [0, 0, 1]),
    ("point-cylinder near a cap", lambda: cf.point_cylinder([0, 0, 0.75], I4, 1.0, 2.0),
     -0.25, [0, 0, 0.75], [0, 0, 1], [0, 0, -1]),
    ("point-cylinder by the rim", lambda: cf.point_cylinder([1.3, 0, 1.4], I4, 1.0, 2.0),
     0.5, [1.3, 0, 1.4], [1, 0, 1], [-0.6, 0, -0.8]),
    ("point-cone inside", lambda: cf.point_cone([0, 0, 0], I4, 1.0, 2.0),
     -1 / S5, [0, 0, 0], [0.4, 0, 0.2], [-2 / S5, 0, -1 / S5]),
    ("point-cone below the base", lambda: cf.point_cone([0, 0, -1.5], I4, 1.0, 2.0),
     0.5, [0, 0, -1.5], [0, 0, -1], [0, 0, 1]),
    ("point-halfspace inside", lambda: cf.point_halfspace([1, 2, -3], UP, 0.0),
     -3.0, [1, 2, -3], [1, 2, 0], [0, 0, -1]),
    ("point-halfspace apart", lambda: cf.point_halfspace([1, 2, 3], UP, 1.0),
     2.0, [1, 2, 3], [1, 2, 1], [0, 0, -1]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "d", "p1", "p2", "normal"), [k[1:] for k in KNOWN], ids=[k[0] for k in KNOWN]
)
def test_known_answers(
    case: Callable[[], SignedDistance], d: float, p1: Any, p2: Any, normal: Any
) -> None:
    r = case()
    assert r.d.shape == (1,)
    assert r.p1.shape == r.p2.shape == r.normal.shape == (1, 3)
    np.testing.assert_allclose(r.d, [d], rtol=0, atol=ATOL)
    np.testing.assert_allclose(r.p1, [p1], rtol=0, atol=ATOL)
    np.testing.assert_allclose(r.p2, [p2], rtol=0, atol=ATOL)
    np.testing.assert_allclose(r.normal, [normal], rtol=0, atol=ATOL)


def test_capsule_endpoints_follow_the_pose() -> None:
    a, b = cf.capsule_endpoints(pose(RY90, [1, 2, 3]), 4.0)
    np.testing.assert_allclose(a, [[-1, 2, 3]], atol=ATOL)
    np.testing.assert_allclose(b, [[3, 2, 3]], atol=ATOL)


def test_swap_exchanges_the_sides() -> None:
    r = cf.sphere_box([3.0, 0.0, 0.0], 0.5, I4, BOX)
    s = cf.swap(r)
    assert s.d is r.d
    assert s.p1 is r.p2 and s.p2 is r.p1
    np.testing.assert_array_equal(s.normal, [[1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(cf.swap(s).normal, r.normal)


# ------------------------------------------------------------------------ placed test shapes

SPHERE_RADIUS = {1: 0.3, 2: 0.4}
CAPSULE = {1: (0.2, 0.7), 2: (0.25, 0.5)}
BOX_SIZE = np.array([0.6, 0.4, 0.8])
CYLINDER = (0.3, 0.8)
CONE = (0.35, 0.9)


class Placed:
    """A test shape of ``kind`` on ``side`` 1 or 2, placed by ``T`` ``(4, 4)`` or ``(N, 4, 4)``.

    Spheres and points sit at the pose's origin, a capsule's segment is along its local z,
    and a half-space is ``{x : z_axis . (x - origin) <= 0}``.
    """

    def __init__(self, kind: str, side: int, T: FloatArray) -> None:
        self.kind = kind
        self.side = side
        self.T = T
        self.t = T[..., :3, 3]
        self.radius = {
            "point": 0.0,
            "sphere": SPHERE_RADIUS[side],
            "capsule": CAPSULE[side][0],
            "cylinder": CYLINDER[0],
            "cone": CONE[0],
        }.get(kind, 0.0)
        self.a, self.b = cf.capsule_endpoints(T, CAPSULE[side][1])
        self.n = T[..., :3, 2]
        self.offset = np.einsum("...i,...i->...", self.n, self.t)

    def moved(self, M: FloatArray) -> Placed:
        """The same shape after the rigid motion ``M`` ``(4, 4)``."""
        return Placed(self.kind, self.side, M @ self.T)

    def sdf(self, x: FloatArray) -> FloatArray:
        """The shape's signed distance at ``x`` ``(N, 3)``."""
        if self.kind in ("point", "sphere"):
            return cf.sdf_sphere(x, self.t, self.radius)
        if self.kind == "box":
            return cf.sdf_box(x, self.T, BOX_SIZE)
        if self.kind == "capsule":
            return cf.sdf_capsule(x, self.a, self.b, self.radius)
        if self.kind == "cylinder":
            return cf.sdf_cylinder(x, self.T, *CYLINDER)
        if self.kind == "cone":
            return cf.sdf_cone(x, self.T, *CONE)
        return cf.sdf_halfspace(x, self.n, self.offset)

    def support(self, u: FloatArray) -> FloatArray:
        """``max over the shape of u . x`` for unit rows ``u`` ``(M, 3)`` (one placement)."""
        R = self.T[:3, :3]
        if self.kind in ("point", "sphere"):
            return u @ self.t + self.radius
        if self.kind == "box":
            return u @ self.t + np.abs(u @ R) @ (0.5 * BOX_SIZE)
        if self.kind == "capsule":
            ends: FloatArray = np.maximum(u @ self.a[0], u @ self.b[0])
            return ends + self.radius
        if self.kind == "cylinder":
            along = u @ R[:, 2]
            across: FloatArray = np.linalg.norm(u - along[:, None] * R[:, 2], axis=1)
            return u @ self.t + 0.5 * CYLINDER[1] * np.abs(along) + CYLINDER[0] * across
        if self.kind == "cone":  # the farthest of the apex and the rim circle
            along = u @ R[:, 2]
            across = np.linalg.norm(u - along[:, None] * R[:, 2], axis=1)
            rim: FloatArray = CONE[0] * across - 0.5 * CONE[1] * along
            return u @ self.t + np.maximum(0.5 * CONE[1] * along, rim)
        raise AssertionError("a half-space has no finite support but along its normal")

    def coal(self) -> Any:
        """The Coal geometry of this shape (in its own frame)."""
        if self.kind in ("point", "sphere"):
            return coal.Sphere(self.radius)
        if self.kind == "box":
            return coal.Box(*BOX_SIZE)
        if self.kind == "capsule":
            return coal.Capsule(*CAPSULE[self.side])
        if self.kind == "cylinder":
            return coal.Cylinder(*CYLINDER)
        if self.kind == "cone":
            return coal.Cone(*CONE)
        return coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)


FUNCTIONS: dict[tuple[str, str], Callable[[Placed, Placed], SignedDistance]] = {
    ("sphere", "sphere"): lambda s, o: cf.sphere_sphere(s.t, s.radius, o.t, o.radius),
    ("sphere", "box"): lambda s, o: cf.sphere_box(s.t, s.radius, o.T, BOX_SIZE),
    ("sphere", "capsule"): lambda s, o: cf.sphere_capsule(s.t, s.radius, o.a, o.b, o.radius),
    ("capsule", "capsule"): lambda s, o: cf.capsule_capsule(s.a, s.b, s.radius, o.a, o.b, o.radius),
    ("sphere", "cylinder"): lambda s, o: cf.sphere_cylinder(s.t, s.radius, o.T, *CYLINDER),
    ("sphere", "cone"): lambda s, o: cf.sphere_cone(s.t, s.radius, o.T, *CONE),
    ("sphere", "halfspace"): lambda s, o: cf.sphere_halfspace(s.t, s.radius, o.n, o.offset),
    ("capsule", "halfspace"): lambda s, o: cf.capsule_halfspace(s.a, s.b, s.radius, o.n, o.offset),
    ("box", "halfspace"): lambda s, o: cf.box_halfspace(s.T, BOX_SIZE, o.n, o.offset),
    ("cylinder", "halfspace"): lambda s, o: cf.cylinder_halfspace(s.T, *CYLINDER, o.n, o.offset),
    ("point", "sphere"): lambda s, o: cf.point_sphere(s.t, o.t, o.radius),
    ("point", "box"): lambda s, o: cf.point_box(s.t, o.T, BOX_SIZE),
    ("point", "capsule"): lambda s, o: cf.point_capsule(s.t, o.a, o.b, o.radius),
    ("point", "cylinder"): lambda s, o: cf.point_cylinder(s.t, o.T, *CYLINDER),
    ("point", "cone"): lambda s, o: cf.point_cone(s.t, o.T, *CONE),
    ("point", "halfspace"): lambda s, o: cf.point_halfspace(s.t, o.n, o.offset),
}
PAIRS = list(FUNCTIONS)
PAIR_IDS = [f"{k1}-{k2}" for k1, k2 in PAIRS]
SOLID_PAIRS = [p for p in PAIRS if p[1] != "halfspace"]


def answer(kind1: str, kind2: str, T1: FloatArray, T2: FloatArray) -> SignedDistance:
    """The closed form of the pair placed by ``T1`` and ``T2``."""
    return FUNCTIONS[kind1, kind2](Placed(kind1, 1, T1), Placed(kind2, 2, T2))


SPECIAL_ROTATIONS = [I3, RX90, RY90, RZ90, R45X, RRAT, RZ90 @ RX90, RY90 @ RY90]


@st.composite
def poses(draw: st.DrawFn, spread: float = 0.6) -> FloatArray:
    """Rigid poses: axis-aligned and rational rotations (ties) or any, near the origin."""
    if draw(st.booleans()):
        R = draw(st.sampled_from(SPECIAL_ROTATIONS))
    else:
        q = draw(st.tuples(*[st.floats(-1.0, 1.0)] * 4))
        assume(np.linalg.norm(q) > 0.1)
        R = quaternion_matrix(q)
    t = draw(st.tuples(*[st.floats(-spread, spread)] * 3))
    return pose(R, t)


def random_poses(rng: np.random.Generator, n: int, spread: float) -> FloatArray:
    """``n`` random rigid poses ``(n, 4, 4)`` with translations in ``[-spread, spread]``."""
    T = np.tile(np.eye(4), (n, 1, 1))
    for i in range(n):
        T[i, :3, :3] = quaternion_matrix(rng.normal(size=4))
    T[:, :3, 3] = rng.uniform(-spread, spread, size=(n, 3))
    return T


# ------------------------------------------------------------------------------- properties


PER_PAIR = settings(max_examples=max(10, settings().max_examples // 3))
"""Tests run for each of the 16 pairs take a third of the profile's examples each."""


@pytest.mark.parametrize(("kind1", "kind2"), PAIRS, ids=PAIR_IDS)
@PER_PAIR
@given(T1=poses(), T2=poses(), M=poses(spread=2.0))
def test_conventions(kind1: str, kind2: str, T1: FloatArray, T2: FloatArray, M: FloatArray) -> None:
    """Identity, unit normal, witness points on the surfaces and farthest along the normal.

    And ``d`` is the same after a rigid motion ``M`` of both shapes, tie and concentric
    placements included.
    """
    s1, s2 = Placed(kind1, 1, T1), Placed(kind2, 2, T2)
    r = FUNCTIONS[kind1, kind2](s1, s2)
    assert r.d.shape == (1,) and r.p1.shape == r.p2.shape == r.normal.shape == (1, 3)
    moved = FUNCTIONS[kind1, kind2](s1.moved(M), s2.moved(M))
    np.testing.assert_allclose(moved.d, r.d, rtol=0, atol=10 * ATOL)
    np.testing.assert_allclose(r.p2 - r.p1, r.d[:, None] * r.normal, rtol=0, atol=ATOL)
    np.testing.assert_allclose(np.linalg.norm(r.normal, axis=1), 1.0, rtol=0, atol=ATOL)
    np.testing.assert_allclose(s1.sdf(r.p1), 0.0, rtol=0, atol=ATOL)
    np.testing.assert_allclose(s2.sdf(r.p2), 0.0, rtol=0, atol=ATOL)
    if kind1 == "point":
        np.testing.assert_allclose(r.p1, s1.t[None], rtol=0, atol=ATOL)
    # p1 is the point of shape 1 farthest along the normal, p2 that of shape 2 against it:
    # with p2 - p1 == d * normal, translating shape 2 by -d * normal makes them touch.
    np.testing.assert_allclose(r.normal @ r.p1[0], s1.support(r.normal), rtol=0, atol=ATOL)
    if kind2 == "halfspace":
        # The only direction a half-space can be left along is its normal.
        np.testing.assert_allclose(r.normal, -s2.n[None], rtol=0, atol=ATOL)
    else:
        np.testing.assert_allclose(-r.normal @ r.p2[0], s2.support(-r.normal), atol=ATOL)


@pytest.mark.parametrize(("kind1", "kind2"), PAIRS, ids=PAIR_IDS)
def test_witnesses_turn_with_a_rigid_motion(kind1: str, kind2: str) -> None:
    """On random (generic) placements, witness points and normals move with both shapes."""
    rng = np.random.default_rng(7)
    T1, T2 = random_poses(rng, 400, 0.6), random_poses(rng, 400, 0.6)
    M = random_poses(rng, 1, 2.0)[0]
    r = answer(kind1, kind2, T1, T2)
    moved = answer(kind1, kind2, M @ T1, M @ T2)
    R, t = M[:3, :3], M[:3, 3]
    np.testing.assert_allclose(moved.d, r.d, rtol=0, atol=1e-11)
    np.testing.assert_allclose(moved.p1, r.p1 @ R.T + t, rtol=0, atol=1e-11)
    np.testing.assert_allclose(moved.p2, r.p2 @ R.T + t, rtol=0, atol=1e-11)
    np.testing.assert_allclose(moved.normal, r.normal @ R.T, rtol=0, atol=1e-10)


@pytest.mark.parametrize(("kind1", "kind2"), PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("n", [20, 200])
def test_a_batch_answers_each_placement(kind1: str, kind2: str, n: int) -> None:
    """A batch gives each row's single answer; one pose is broadcast against a batch.

    Batches of more than 64 placements take paths with fewer strided passes over memory.
    """
    rng = np.random.default_rng(11)
    T1, T2 = random_poses(rng, n, 0.6), random_poses(rng, n, 0.6)
    T1[::5, :3, 3] = T2[::5, :3, 3] + 0.01  # deep and nearly concentric rows too
    r = answer(kind1, kind2, T1, T2)
    assert r.d.shape == (n,) and r.p1.shape == r.p2.shape == r.normal.shape == (n, 3)
    for i in range(0, n, 3):
        one = answer(kind1, kind2, T1[i], T2[i])
        for got, want in zip(one, r, strict=True):
            np.testing.assert_allclose(got[0], want[i], rtol=0, atol=1e-14)
    for single in (1, 2):
        Ta, Tb = (T1[0], T2) if single == 1 else (T1, T2[0])
        broadcast = answer(kind1, kind2, Ta, Tb)
        tiled = answer(kind1, kind2, np.broadcast_to(Ta, T1.shape), np.broadcast_to(Tb, T2.shape))
        for got, want in zip(broadcast, tiled, strict=True):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
            assert got.flags.writeable


def test_results_do_not_share_memory_with_the_inputs() -> None:
    x = np.array([[0.0, 0.0, 2.0]])
    n = np.array([0.0, 0.0, 1.0])
    for r in (cf.point_halfspace(x, n, 0.0), cf.point_sphere(x, x, 1.0)):
        for out in r:
            assert not np.shares_memory(out, x) and not np.shares_memory(out, n)


@given(c1=poses(), c2=poses())
def test_sphere_sphere_orders(c1: FloatArray, c2: FloatArray) -> None:
    """The two orders of a symmetric pair are each other's swap (and match a point)."""
    x1, x2 = c1[:3, 3], c2[:3, 3]
    r = cf.sphere_sphere(x1, 0.3, x2, 0.4)
    back = cf.swap(cf.sphere_sphere(x2, 0.4, x1, 0.3))
    np.testing.assert_allclose(back.d, r.d, rtol=0, atol=ATOL)
    point = cf.swap(cf.sphere_sphere(x2, 0.4, x1, 0.0))
    np.testing.assert_allclose(point.d, cf.point_sphere(x1, x2, 0.4).d, rtol=0, atol=ATOL)
    if np.linalg.norm(x2 - x1) > 1e-9:  # not concentric: the answer is unique
        for got, want in zip(back, r, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


@given(T1=poses(), T2=poses())
def test_capsule_capsule_orders(T1: FloatArray, T2: FloatArray) -> None:
    """Swapping the capsules swaps the answer; a capsule of length 0 is a sphere."""
    s1, s2 = Placed("capsule", 1, T1), Placed("capsule", 2, T2)
    r = cf.capsule_capsule(s1.a, s1.b, s1.radius, s2.a, s2.b, s2.radius)
    back = cf.swap(cf.capsule_capsule(s2.a, s2.b, s2.radius, s1.a, s1.b, s1.radius))
    np.testing.assert_allclose(back.d, r.d, rtol=0, atol=ATOL)
    d1, d2 = s1.b - s1.a, s2.b - s2.a
    sine = np.linalg.norm(np.cross(d1, d2)) / np.linalg.norm(d1) / np.linalg.norm(d2)
    # The closest pair is unique and well-conditioned away from parallel segments (near them,
    # it slides along the segments by about 1e-16 / sine**2 for a change of 1e-16).
    if sine > 1e-2 and r.d[0] + s1.radius + s2.radius > 1e-9:
        for got, want in zip(back, r, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    ball = cf.sphere_capsule(s1.t, 0.3, s2.a, s2.b, s2.radius)
    as_capsule = cf.capsule_capsule(s1.t, s1.t, 0.3, s2.a, s2.b, s2.radius)
    np.testing.assert_allclose(as_capsule.d, ball.d, rtol=0, atol=ATOL)
    if ball.d[0] + 0.3 + s2.radius > 1e-9:  # the centre is off the segment
        for got, want in zip(as_capsule, ball, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=ATOL)


@given(T1=poses(), T2=poses())
def test_sphere_pairs_match_capsules_of_length_zero(T1: FloatArray, T2: FloatArray) -> None:
    """A capsule of length 0 is a sphere, against a sphere and against a half-space."""
    c1, c2 = T1[:3, 3], T2[:3, 3]
    a, b = cf.capsule_endpoints(T2, 0.0)
    np.testing.assert_allclose(
        cf.sphere_capsule(c1, 0.3, a, b, 0.4).d, cf.sphere_sphere(c1, 0.3, c2, 0.4).d, atol=ATOL
    )
    np.testing.assert_allclose(
        cf.capsule_halfspace(a, b, 0.4, T1[:3, 2], 0.1).d,
        cf.sphere_halfspace(c2, 0.4, T1[:3, 2], 0.1).d,
        atol=ATOL,
    )


# ------------------------------------------------------------------------------------- Coal

_REQUEST = coal.DistanceRequest()
_REQUEST.enable_signed_distance = True
_TIGHT = coal.DistanceRequest()
_TIGHT.enable_signed_distance = True
_TIGHT.gjk_tolerance = 1e-10
_TIGHT.gjk_max_iterations = 10_000
"""Coal solves a sphere and a cone by GJK, which stops within its relative tolerance (1e-6 by
default: separated distances measured up to 3.5e-7 m long at 0.05 m, 3e-6 m at 2 m): asked
with this tolerance instead, it agrees with the closed form to 2.6e-10 (over 4,700 separated
placements). At 1e-12 it fails instead: 0.012 for a point 0.197 from a cone, in 63 of 4,002
placements near one a hypothesis run found."""


def coal_distance(
    s1: Placed, s2: Placed, request: Any = _REQUEST
) -> tuple[float, FloatArray, FloatArray, FloatArray]:
    """Coal's signed distance, witness points and normal for one placement of each shape."""
    result = coal.DistanceResult()
    tf1 = coal.Transform3s(s1.T[:3, :3], s1.t)
    tf2 = coal.Transform3s(s2.T[:3, :3], s2.t)
    coal.distance(s1.coal(), tf1, s2.coal(), tf2, request, result)
    return (
        result.min_distance,
        np.array(result.getNearestPoint1()),
        np.array(result.getNearestPoint2()),
        np.array(result.normal),
    )


@pytest.mark.parametrize(("kind1", "kind2"), PAIRS, ids=PAIR_IDS)
@PER_PAIR
@given(T1=poses(), T2=poses())
def test_agrees_with_coal_when_apart(
    kind1: str, kind2: str, T1: FloatArray, T2: FloatArray
) -> None:
    """Coal is reliable on separated placements: same distance, normal and witness points.

    An overlapping placement is first pulled apart along its normal. A cone is asked of Coal
    with a tight GJK tolerance (see ``_TIGHT``). Where the closest pair is
    not unique (parallel faces or segments), Coal's pair must be another closest pair. Capsule
    segments within 1e-5 rad of parallel (but not parallel) are left out: there Coal 3.0.3
    answers as if they were parallel, with distances too large by up to about the angle times
    the segments' length (2e-7 m at 1e-6 rad).
    """
    r = answer(kind1, kind2, T1, T2)
    if r.d[0] < 1e-3:
        T2 = T2.copy()
        T2[:3, 3] += (0.05 - r.d[0]) * r.normal[0]
        r = answer(kind1, kind2, T1, T2)
    assume(r.d[0] > 1e-3)
    s1, s2 = Placed(kind1, 1, T1), Placed(kind2, 2, T2)
    if kind1 == kind2 == "capsule":
        sine = np.linalg.norm(np.cross(T1[:3, 2], T2[:3, 2]))
        assume(not 0.0 < sine < 1e-5)
    cone = kind2 == "cone"
    d, p1, p2, normal = coal_distance(s1, s2, _TIGHT if cone else _REQUEST)
    assert d == pytest.approx(r.d[0], abs=1e-9)
    # GJK's direction converges more slowly than its distance on a curved support (about as
    # the square root of the distance's error): up to 8.1e-6 off on a cone at a tolerance of
    # 1e-10 (the closed form's witness points are checked on the surfaces and against the
    # support functions by test_conventions, and by brute force below).
    tol = 1e-4 if cone else 1e-9
    np.testing.assert_allclose(normal, r.normal[0], rtol=0, atol=tol)
    if not (np.allclose(p1, r.p1[0], rtol=0, atol=tol) and np.allclose(p2, r.p2[0], atol=tol)):
        np.testing.assert_allclose(s1.sdf(p1), 0.0, rtol=0, atol=tol)
        np.testing.assert_allclose(s2.sdf(p2), 0.0, rtol=0, atol=tol)
        np.testing.assert_allclose(p2 - p1, r.d[0] * r.normal[0], rtol=0, atol=tol)


# ------------------------------------------------------------------------ penetration depth


def fibonacci_directions(n: int) -> FloatArray:
    """``n`` unit vectors ``(n, 3)`` spread evenly over the sphere."""
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    r = np.sqrt(1.0 - z * z)
    phi = math.pi * (1.0 + math.sqrt(5.0)) * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def best_separation(s1: Placed, s2: Placed, rng: np.random.Generator) -> float:
    """The largest separation ``-(h1(u) + h2(-u))`` found over unit directions ``u``.

    Shape 2 moved by ``t u`` clears shape 1 exactly when ``t >= h1(u) + h2(-u)``, so minus
    the best separation is the penetration depth: sampled on the sphere, then refined around
    the best samples by shrinking random steps.
    """

    def separation(u: FloatArray) -> FloatArray:
        return -(s1.support(u) + s2.support(-u))

    u = fibonacci_directions(3000)
    found = separation(u)
    best = float(found.max())
    top = u[np.argsort(found)[-6:]]
    step = 0.05
    for _ in range(40):
        trial = top[:, None, :] + step * rng.normal(size=(len(top), 30, 3))
        trial = np.concatenate([top[:, None, :], trial], axis=1).reshape(-1, 3)
        trial /= np.linalg.norm(trial, axis=1, keepdims=True)
        found = separation(trial)
        best = max(best, float(found.max()))
        top = trial[np.argsort(found)[-6:]]
        step *= 0.8
    return best


def _hard_overlaps() -> list[tuple[str, str, FloatArray, FloatArray]]:
    """Deep and concentric placements, where Coal's answers go wrong."""
    tilt = pose(quaternion_matrix([1.0, 1e-6, 0.0, 0.0]), [0.0, 1e-9, 0.0])
    return [
        ("sphere", "sphere", I4, I4),
        ("sphere", "box", I4, I4),
        ("sphere", "box", pose(t=0.5 * BOX_SIZE), I4),
        ("sphere", "capsule", pose(t=[0.0, 0.0, 0.1]), I4),
        ("capsule", "capsule", I4, I4),
        ("capsule", "capsule", I4, tilt),
        ("capsule", "capsule", pose(RX90, [0.01, 0.0, 0.0]), pose(RY90)),
        ("sphere", "cylinder", pose(t=[0.05, 0.0, 0.3]), I4),
        ("sphere", "cylinder", I4, I4),
        ("point", "box", pose(t=[0.01, 0.02, 0.03]), I4),
        ("point", "capsule", I4, I4),
        ("point", "cylinder", pose(t=[0.0, 0.0, 0.35]), I4),
        ("sphere", "cone", I4, I4),
        ("sphere", "cone", pose(t=[0.0, 0.0, -0.3]), I4),
        ("sphere", "cone", pose(t=[1e-9, 0.0, 0.1]), pose(RRAT)),
        ("point", "cone", pose(t=[0.0, 0.0, 0.4]), I4),
        ("point", "cone", pose(t=[0.01, 0.0, -0.44]), I4),
    ]


def _random_overlaps() -> list[tuple[str, str, FloatArray, FloatArray]]:
    rng = np.random.default_rng(3)
    cases = []
    for kind1, kind2 in SOLID_PAIRS:
        T1, T2 = random_poses(rng, 3, 0.1), random_poses(rng, 3, 0.1)
        cases += [(kind1, kind2, T1[i], T2[i]) for i in range(3)]
    return cases


@pytest.mark.parametrize(("kind1", "kind2", "T1", "T2"), _hard_overlaps() + _random_overlaps())
def test_no_shorter_translation_separates(
    kind1: str, kind2: str, T1: FloatArray, T2: FloatArray
) -> None:
    """Moving shape 2 by ``-d * normal`` makes the shapes touch, and no direction does better.

    (Against a half-space the normal is the only way out, which ``test_conventions`` checks.)
    """
    s1, s2 = Placed(kind1, 1, T1), Placed(kind2, 2, T2)
    r = FUNCTIONS[kind1, kind2](s1, s2)
    assert r.d[0] < 0.0
    along = -(s1.support(r.normal) + s2.support(-r.normal))
    np.testing.assert_allclose(along, r.d, rtol=0, atol=ATOL)
    assert best_separation(s1, s2, np.random.default_rng(0)) <= r.d[0] + 1e-12


# --------------------------------------------------------------------- sphere / cone, brute force


def _cone_point(R: float, L: float, piece: int, theta: FloatArray, t: FloatArray) -> FloatArray:
    """Points (..., 3) of the cone's surface, local frame: the slant side (piece 0, ``t`` from
    the apex to the rim) or the base disc (piece 1, ``t`` from the centre to the rim)."""
    theta, t = np.broadcast_arrays(theta, np.clip(t, 0.0, 1.0))
    rho = t * R
    z = 0.5 * L - L * t if piece == 0 else np.full_like(rho, -0.5 * L)
    return np.stack([rho * np.cos(theta), rho * np.sin(theta), z], axis=-1)


def cone_surface_distance(q: FloatArray, R: float, L: float) -> float:
    """Distance from the local point ``q`` (3,) to the surface of the cone, by brute force.

    A dense grid over each piece of the surface (360 angles by 181 steps), then finer grids
    in turn, each ten times finer, around the best sample and around the best sample of the
    point's own angle (by the apex every angle is as good, and the first found need not be the
    right one): every value is the distance to a point of the surface, so it is never below
    the true distance, and the refinement brings it to within rounding of it.
    """
    best = math.inf
    own = math.atan2(q[1], q[0])
    for piece in (0, 1):
        theta = np.append(np.linspace(-math.pi, math.pi, 361), own)[:, None]
        t = np.linspace(0.0, 1.0, 181)[None, :]
        g = np.linalg.norm(_cone_point(R, L, piece, theta, t) - q, axis=-1)
        i, j = np.unravel_index(int(g.argmin()), g.shape)
        for th0, t0 in ((theta[i, 0], t[0, j]), (own, t[0, int(g[-1].argmin())])):
            span_theta, span_t = 2 * math.pi / 360, 1.0 / 180
            for _ in range(15):
                th = th0 + np.linspace(-span_theta, span_theta, 41)[:, None]
                tt = np.clip(t0 + np.linspace(-span_t, span_t, 41), 0.0, 1.0)[None, :]
                g = np.linalg.norm(_cone_point(R, L, piece, th, tt) - q, axis=-1)
                a, b = np.unravel_index(int(g.argmin()), g.shape)
                best = min(best, float(g[a, b]))
                th0, t0 = th[a, 0], tt[0, b]
                span_theta /= 10.0
                span_t /= 10.0
    return best


@st.composite
def cone_placements(draw: st.DrawFn) -> tuple[FloatArray, float, FloatArray, float, float]:
    """A sphere (centre, radius) and a cone (pose, radius, length): the centre anywhere within
    1.5 times the cone's size of it, on its axis, at its apex or on its rim circle."""
    R = draw(st.floats(0.01, 1.0))
    L = draw(st.floats(0.01, 1.0))
    T = draw(poses(spread=0.5))
    where = draw(st.sampled_from(["anywhere", "anywhere", "axis", "apex", "rim"]))
    phi = draw(st.floats(-math.pi, math.pi))
    rho = {"axis": 0.0, "apex": 0.0, "rim": R}.get(where, draw(st.floats(0.0, 1.5 * R)))
    z = {"apex": 0.5 * L, "rim": -0.5 * L}.get(where, draw(st.floats(-0.75 * L, 0.75 * L)))
    local = np.array([rho * math.cos(phi), rho * math.sin(phi), z])
    if draw(st.booleans()):  # a small step off the placement
        local += np.array(draw(st.tuples(*[st.floats(-1e-3, 1e-3)] * 3)))
    c = T[:3, :3] @ local + T[:3, 3]
    return c, draw(st.floats(0.0, 0.6)), T, R, L


_CONE_REQUEST = coal.DistanceRequest()
_CONE_REQUEST.enable_signed_distance = True
_FINE = coal.DistanceRequest()
_FINE.enable_signed_distance = True
_FINE.gjk_tolerance = 1e-9
"""Coal's GJK with a tolerance of 1e-9: it tells shapes 1e-9 m apart from shapes 1e-7 m into
each other (with its default 1e-6 it calls both a collision and EPA reads 0.0 or a garbage
depth, quirks A; at 1e-12 it failed once in 2,468 near-touching placements). Measured on 2,468
overlapping placements moved by ``|d| + 1e-9``: all >= 0; by ``|d| - 1e-7``: all < 0."""


@settings(deadline=None)
@given(cone_placements())
def test_sphere_cone_is_the_brute_force_distance(
    case: tuple[FloatArray, float, FloatArray, float, float],
) -> None:
    """The signed distance is the sampled surface distance (minus the radius), with the sign
    of the cone's side; moving the sphere by ``|d|`` along the normal separates it (Coal's own
    distance, an independent oracle); apart, Coal's GJK (tight) agrees."""
    c, r, T, R, L = case
    res = cf.sphere_cone(c, r, T, R, L)
    d, p1, p2, normal = res.d[0], res.p1[0], res.p2[0], res.normal[0]
    q = (c - T[:3, 3]) @ T[:3, :3]
    sampled = cone_surface_distance(q, R, L)
    core = d + r  # the centre's signed distance to the cone
    assert abs(core) <= sampled + 1e-12  # no sample of the surface is nearer than the answer
    assert abs(core) == pytest.approx(sampled, abs=1e-8)
    rho, z = math.hypot(q[0], q[1]), q[2]
    inside = z >= -0.5 * L and rho <= R * (0.5 - z / L)
    if abs(core) > 1e-9:
        assert (core < 0.0) == inside
    assert float(cf.sdf_cone(c, T, R, L)[0]) == pytest.approx(core, abs=1e-12)
    np.testing.assert_allclose(p2 - p1, d * normal, rtol=0, atol=1e-12)
    assert np.linalg.norm(normal) == pytest.approx(1.0, abs=1e-12)
    assert float(cf.sdf_cone(p2, T, R, L)[0]) == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.norm(p1 - c) == pytest.approx(r, abs=1e-12)
    cone = coal.Cone(R, L)
    tf_cone = coal.Transform3s(T[:3, :3], T[:3, 3])

    def coal_distance(centre: FloatArray, radius: float, request: Any) -> float:
        result = coal.DistanceResult()
        ball = coal.Sphere(radius)
        coal.distance(ball, coal.Transform3s(np.eye(3), centre), cone, tf_cone, request, result)
        return float(result.min_distance)

    if d < 0.0:
        # Shape 2 moved by -d * normal touches shape 1: the sphere moved by -(|d| + 1e-9) *
        # normal is apart from the cone, by -(|d| - 1e-7) * normal still in it. A ball of at
        # least 5 cm tangent at the same point stands in for the sphere (the cone lies on the
        # far side of the plane through p1 square to the normal: any ball on the near side
        # tangent to it at p1 is apart): EPA is ill-conditioned on a tiny sphere.
        big = max(r, 0.05)
        for step, apart in ((abs(d) + 1e-9, True), (abs(d) - 1e-7, False)):
            found = coal_distance(c - (step + big - r) * normal, big, _FINE)
            assert (found >= 0.0) == apart, (step, found)
    elif d > 1e-3:
        assert coal_distance(c, max(r, 1e-12), _TIGHT) == pytest.approx(d, abs=1e-9)
        # Coal's default GJK stops within its relative tolerance (1e-6; measured 3.1e-6 m
        # long at 2.2 m).
        found = coal_distance(c, max(r, 1e-12), _CONE_REQUEST)
        assert found == pytest.approx(d, abs=2e-6 * max(1.0, d))


@pytest.mark.parametrize(
    ("R", "L"),
    [(1e-5, 1e-5), (1e-5, 0.1), (0.1, 1e-5), (1e3, 1e3), (1e6, 1e2), (1e2, 1e6)],
    ids=["smallest", "needle", "disc", "large", "largest flat", "largest long"],
)
def test_sphere_cone_at_the_extreme_sizes(R: float, L: float) -> None:
    """Cones of the smallest and largest sizes and aspect ratios the package accepts (sizes in
    [1e-5, 1e6] m, radius to length within 1e4): the same brute force, relative to the size."""
    rng = np.random.default_rng(5)
    size = max(R, L)
    T = random_poses(rng, 40, size)
    local = rng.uniform(-0.75, 0.75, (40, 3)) * [R, R, L]
    local[::4, :2] = 0.0  # on the axis
    c = np.einsum("nij,nj->ni", T[:, :3, :3], local) + T[:, :3, 3]
    res = cf.sphere_cone(c, 0.0, T, R, L)
    np.testing.assert_allclose(res.p2 - res.p1, res.d[:, None] * res.normal, atol=1e-12 * size)
    np.testing.assert_allclose(cf.sdf_cone(res.p2, T, R, L), 0.0, rtol=0, atol=1e-12 * size)
    np.testing.assert_allclose(cf.sdf_cone(c, T, R, L), res.d, rtol=0, atol=1e-12 * size)
    for i in range(0, 40, 5):
        sampled = cone_surface_distance(local[i], R, L)
        assert abs(res.d[i]) <= sampled + 1e-12 * size
        assert abs(res.d[i]) == pytest.approx(sampled, abs=1e-7 * size)


def test_sphere_cone_ties_on_the_axis_are_fixed() -> None:
    """On the axis the slant side is left along its normal over local +x (in any turn of the
    cone about its axis, that direction turns with it); a centre as far from the base as from
    the slant side leaves through the slant side."""
    for angle in (0.0, 0.7, math.pi):
        Rz = np.array(
            [[math.cos(angle), -math.sin(angle), 0], [math.sin(angle), math.cos(angle), 0], I3[2]]
        )
        r = cf.point_cone([0.0, 0.0, -0.2], pose(Rz), 1.0, 2.0)
        np.testing.assert_allclose(r.normal[0], Rz @ [-2 / S5, 0.0, -1 / S5], atol=ATOL)
    # Base radius 2, length 2 (slant normal (1, 0, 1) / sqrt 2): on the axis at z = 1 - sqrt 2
    # (rounded), the base and the slant side are both sqrt 2 - ... : the nearer by rounding wins,
    # and an exact tie (the rim) goes to the slant side.
    rim = cf.point_cone([2.0, 0.0, -1.0], I4, 2.0, 2.0)
    np.testing.assert_allclose(rim.normal[0], [-1 / S2, 0.0, -1 / S2], atol=ATOL)
    assert rim.d[0] == 0.0


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_sphere_cone_centres_on_the_rim_take_the_slant_side(compiled: bool) -> None:
    # The side's signed distance is measured from the rim, where it is exactly 0: measured
    # from the apex, rounding left it at +-1e-17 and 48 of 303 rim centres took the base.
    rng = np.random.default_rng(11)
    for _ in range(300):
        R, L, r = rng.uniform(0.05, 2.0), rng.uniform(0.05, 2.0), rng.uniform(0.01, 0.5)
        slant = math.hypot(R, L)
        if compiled:
            at = np.eye(4)
            at[:3, 3] = [R, 0.0, -0.5 * L]
            sphere = sc.Sphere(r, pose=at)
            d, p1, p2 = sphere.closest_point(sc.Cone(R, L), inf_dist=math.inf)
            assert d is not None and p1 is not None and p2 is not None
            normal = (p2 - p1) / d
        else:
            found = cf.sphere_cone([R, 0.0, -0.5 * L], r, I4, R, L)
            d, normal = found.d[0], found.normal[0]
        assert d == pytest.approx(-r, abs=1e-12)
        np.testing.assert_allclose(normal, [-L / slant, 0.0, -R / slant], atol=1e-12)
