"""Bounding spheres of a robot's elements, and the culls that skip pairs Coal need not see.

Every element (a link's ``<collision>`` shape, or an attached object) has a bounding sphere in
its body's frame, and every obstacle a bounding box: a pair is asked of Coal only when its two
bounding volumes are within :data:`CULL_SLACK` of touching. One configuration is culled in
plain Python floats (a few dozen pairs cost less that way than numpy's per-call overhead), many
configurations at once in numpy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._validate import describe
from ..errors import InvalidShapeError
from ..group import CollisionShapeGroup
from ..mesh import ConvexHull, Mesh
from ..shapes import Capsule, CollisionShape, Cone, Cuboid, Cylinder, Ellipsoid, Sphere
from .kinematics import Pose12

__all__ = [
    "CULL_SLACK",
    "BoxGrid",
    "Spheres",
    "bounding_sphere",
    "box_frames",
    "sphere_box_gaps",
    "spheres_near_boxes",
    "spheres_near_gathered_boxes",
]

CULL_SLACK = 1e-5
"""Metres a gap between two bounding volumes must exceed before their pair is culled, so that
pairs Coal would call touching (it tolerates about 1e-6 m) are never skipped."""

Point = tuple[float, float, float]


def box_frames(rotations: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What :func:`sphere_box_gaps` needs of boxes with ``rotations`` (B, 3, 3) and
    ``centres`` (B, 3): the rotations side by side (3, 3 B), and each centre in its box's
    frame, ``R^T c`` (B, 3)."""
    side_by_side = np.ascontiguousarray(rotations.transpose(1, 0, 2).reshape(3, -1))
    return side_by_side, np.einsum("bi,bij->bj", centres, rotations)


def sphere_box_gaps(
    centres: np.ndarray,
    radius: np.ndarray,
    frames: tuple[np.ndarray, np.ndarray],
    half: np.ndarray,
) -> np.ndarray:
    """Lower bounds on the distances between spheres and boxes: the gaps between them.

    Parameters
    ----------
    centres : ndarray, shape (..., E, 3)
        Sphere centres.
    radius : ndarray, shape (E,)
        Sphere radii.
    frames : (ndarray (3, 3 B), ndarray (B, 3))
        The boxes' orientations and centres, in the frame of ``centres``, from
        :func:`box_frames`.
    half : ndarray, shape (B, 3)
        Half sides along the boxes' axes (``inf`` for everything).

    Returns
    -------
    ndarray, shape (..., E, B)
        Distance from each sphere's centre to each box, minus the sphere's radius (negative
        when they overlap).
    """
    side_by_side, offsets = frames
    local = (centres @ side_by_side).reshape(*centres.shape[:-1], -1, 3) - offsets
    excess = np.maximum(np.abs(local) - half, 0.0)
    gaps: np.ndarray = np.sqrt(np.einsum("...i,...i->...", excess, excess)) - radius[:, None]
    return gaps


def spheres_near_boxes(
    centres: np.ndarray,
    reach: np.ndarray,
    frames: tuple[np.ndarray, np.ndarray],
    half: np.ndarray,
) -> np.ndarray:
    """Which spheres come within :data:`CULL_SLACK` of which boxes: :func:`sphere_box_gaps`
    ``<= CULL_SLACK``, with fewer array operations.

    Parameters
    ----------
    centres : ndarray, shape (..., E, 3)
    reach : ndarray, shape (E, 1)
        ``(radius + CULL_SLACK) ** 2`` of each sphere.
    frames, half
        As for :func:`sphere_box_gaps`.

    Returns
    -------
    ndarray of bool, shape (..., E, B)
    """
    side_by_side, offsets = frames
    local = (centres @ side_by_side).reshape(*centres.shape[:-1], -1, 3)
    local -= offsets
    np.abs(local, out=local)
    local -= half
    np.maximum(local, 0.0, out=local)
    near: np.ndarray = np.einsum("...i,...i->...", local, local) <= reach
    return near


def spheres_near_gathered_boxes(
    centres: np.ndarray,
    reach: np.ndarray,
    rotations: np.ndarray,
    offsets: np.ndarray,
    half: np.ndarray,
) -> np.ndarray:
    """:func:`spheres_near_boxes` with boxes of their own for each configuration.

    Parameters
    ----------
    centres : ndarray, shape (N, E, 3)
        Sphere centres of each configuration.
    reach : ndarray, shape (E, 1)
        ``(radius + CULL_SLACK) ** 2`` of each sphere.
    rotations : ndarray, shape (N, M, 3, 3)
        Orientation of each configuration's boxes.
    offsets : ndarray, shape (N, M, 3)
        Each box centre in its box's frame, ``R^T c`` (as :func:`box_frames` gives).
    half : ndarray, shape (N, M, 3)
        Half sides of each box.

    Returns
    -------
    ndarray of bool, shape (N, E, M)
    """
    local = np.einsum("nei,nmij->nemj", centres, rotations)
    local -= offsets[:, None]
    np.abs(local, out=local)
    local -= half[:, None]
    np.maximum(local, 0.0, out=local)
    near: np.ndarray = np.einsum("...i,...i->...", local, local) <= reach
    return near


def _enclosing(points: np.ndarray) -> tuple[np.ndarray, float]:
    """A sphere holding ``points`` (n, 3): the middle of their bounding box, and the radius."""
    middle = 0.5 * (points.min(axis=0) + points.max(axis=0))
    return middle, float(np.linalg.norm(points - middle, axis=1).max())


def bounding_sphere(shape: CollisionShape) -> tuple[np.ndarray, float]:
    """A sphere holding a shape, in the shape's own frame.

    Returns
    -------
    centre : ndarray, shape (3,)
    radius : float

    Raises
    ------
    InvalidShapeError
        The shape is unbounded (a half-space), or a group without collision leaves.
    """
    if isinstance(shape, Mesh):
        return _enclosing(shape.vertices)
    if isinstance(shape, ConvexHull):
        return _enclosing(shape.points)
    if isinstance(shape, CollisionShapeGroup):
        return _group_sphere(shape)
    return np.zeros(3), _primitive_radius(shape)


def _primitive_radius(shape: CollisionShape) -> float:
    if isinstance(shape, Sphere):
        return shape.radius
    if isinstance(shape, Cuboid):
        return 0.5 * float(np.linalg.norm(shape.scale))
    if isinstance(shape, (Cylinder, Cone)):
        return math.hypot(shape.radius, 0.5 * shape.length)
    if isinstance(shape, Capsule):
        return shape.radius + 0.5 * shape.length
    if isinstance(shape, Ellipsoid):
        return float(shape.radii.max())
    geometry = shape.geometry  # an octree: its bounding box's sphere, seen from the origin
    radius = float(geometry.aabb_radius)
    if not radius < 1e100:
        raise InvalidShapeError(f"{describe(shape)} is unbounded and cannot move with a robot")
    return radius + float(np.linalg.norm(np.asarray(geometry.aabb_center)))


def _group_sphere(group: CollisionShapeGroup) -> tuple[np.ndarray, float]:
    T_group_world = np.linalg.inv(group.world_T)
    spheres = []
    for leaf in group.leaves():
        if leaf.collision:
            centre, radius = bounding_sphere(leaf)
            T_group_leaf = T_group_world @ leaf.world_T
            spheres.append((T_group_leaf[:3, :3] @ centre + T_group_leaf[:3, 3], radius))
    if not spheres:
        raise InvalidShapeError(f"{describe(group)} has no collision leaves to check")
    middle, _ = _enclosing(np.array([c for c, _ in spheres]))
    return middle, max(float(np.linalg.norm(c - middle)) + r for c, r in spheres)


class Spheres:
    """The bounding spheres of a robot's elements in their bodies' frames, and the self pairs'
    culls.

    Parameters
    ----------
    shapes : sequence of CollisionShape
        The elements.
    body : sequence of int
        Each element's body.
    T_body_element : ndarray, shape (E, 4, 4)
        Each element's pose in its body's frame.
    pair_a, pair_b : ndarray of int, shape (P,)
        The self pairs checked.

    Attributes
    ----------
    centre : ndarray, shape (E, 3)
        Each element's sphere centre in its body's frame.
    radius : ndarray, shape (E,)
    """

    def __init__(
        self,
        shapes: Sequence[CollisionShape],
        body: Sequence[int],
        T_body_element: np.ndarray,
        pair_a: np.ndarray,
        pair_b: np.ndarray,
    ) -> None:
        centres, radii = [], []
        for shape, T in zip(shapes, T_body_element, strict=True):
            centre, radius = bounding_sphere(shape)
            centres.append(T[:3, :3] @ centre + T[:3, 3])
            radii.append(radius)
        self.centre = np.array(centres).reshape(-1, 3)
        self.radius = np.array(radii)
        self._body_centre = [(b, *c) for b, c in zip(body, self.centre.tolist(), strict=True)]
        self._pairs = [
            (a, b, (radii[a] + radii[b] + CULL_SLACK) ** 2)
            for a, b in zip(pair_a.tolist(), pair_b.tolist(), strict=True)
        ]
        self._pair_a, self._pair_b = pair_a, pair_b
        self._pair_limit = np.array([limit for _, _, limit in self._pairs])
        self._element_body = np.array(body, dtype=np.intp)
        self._centre_h = np.hstack([self.centre, np.ones((len(radii), 1))])[:, :, None]

    def centres(self, T_base_body: list[Pose12]) -> list[Point]:
        """Every element's sphere centre in the base frame, for one configuration."""
        out = []
        for b, x, y, z in self._body_centre:
            r0, r1, r2, tx, r3, r4, r5, ty, r6, r7, r8, tz = T_base_body[b]
            out.append(
                (
                    r0 * x + r1 * y + r2 * z + tx,
                    r3 * x + r4 * y + r5 * z + ty,
                    r6 * x + r7 * y + r8 * z + tz,
                )
            )
        return out

    def self_candidates(self, centres: list[Point]) -> list[int]:
        """The self pairs (indices into the pair arrays) whose spheres touch at one
        configuration, given :meth:`centres`."""
        out = []
        for k, (a, b, limit) in enumerate(self._pairs):
            ax, ay, az = centres[a]
            bx, by, bz = centres[b]
            dx, dy, dz = ax - bx, ay - by, az - bz
            if dx * dx + dy * dy + dz * dz <= limit:
                out.append(k)
        return out

    def centres_many(self, T_base_body: np.ndarray) -> np.ndarray:
        """Element sphere centres (N, E, 3) in the base frame from ``T_base_body``
        (N, bodies, 4, 4)."""
        centres: np.ndarray = (T_base_body[:, self._element_body] @ self._centre_h)[..., :3, 0]
        return centres

    def self_candidates_many(self, centres: np.ndarray) -> np.ndarray:
        """Which self pairs' spheres touch, for many configurations' :meth:`centres_many`
        (N, E, 3): a bool array (N, P)."""
        d = centres[:, self._pair_a] - centres[:, self._pair_b]
        near: np.ndarray = np.einsum("nij,nij->ni", d, d) <= self._pair_limit
        return near


class BoxGrid:
    """Boxes binned in a uniform grid, for culling one configuration's spheres in plain floats.

    Each cell of side ``cell`` lists the boxes whose bounding box, grown by ``reach`` (the
    largest sphere radius plus :data:`CULL_SLACK`), meets the cell: a sphere of radius at
    most ``reach - CULL_SLACK`` can come within :data:`CULL_SLACK` of only the boxes listed in
    the cell of its centre. Those are then tested exactly (:func:`sphere_box_gaps`, one at a
    time). Unbounded boxes (half-spaces) are tested for every sphere.

    Parameters
    ----------
    rotations : ndarray, shape (B, 3, 3)
    centres : ndarray, shape (B, 3)
    half : ndarray, shape (B, 3)
        The boxes, as for :func:`sphere_box_gaps` (all in the frame of the spheres).
    index : ndarray of int, shape (B,)
        What :meth:`near` reports for each box.
    largest : float
        The largest radius of the spheres culled.
    """

    def __init__(
        self,
        rotations: np.ndarray,
        centres: np.ndarray,
        half: np.ndarray,
        index: np.ndarray,
        largest: float,
    ) -> None:
        reach = largest + CULL_SLACK
        self.cell = cell = max(reach, 0.02)
        boxes = []
        for R, c, h, j in zip(rotations, centres, half, index.tolist(), strict=True):
            boxes.append((j, *R.T.reshape(-1).tolist(), *c.tolist(), *h.tolist()))
        self._everywhere = tuple(
            b for b, h in zip(boxes, half, strict=True) if not np.isfinite(h).all()
        )
        cells: dict[tuple[int, int, int], list[Any]] = {}
        for box, R, c, h in zip(boxes, rotations, centres, half, strict=True):
            if not np.isfinite(h).all():
                continue
            extent = np.abs(R) @ h + reach  # the box's bounding box, grown
            low = np.floor((c - extent) / cell).astype(int).tolist()
            high = np.floor((c + extent) / cell).astype(int).tolist()
            for i in range(low[0], high[0] + 1):
                for j in range(low[1], high[1] + 1):
                    for k in range(low[2], high[2] + 1):
                        cells.setdefault((i, j, k), []).append(box)
        self._cells = {key: tuple(found) for key, found in cells.items()}

    def near(self, centres: list[Point], radius: list[float]) -> list[tuple[int, int]]:
        """The (sphere, box index) pairs within :data:`CULL_SLACK` of touching, sphere by
        sphere, for spheres of at most the grid's ``largest`` radius."""
        out = []
        cells, cell, everywhere = self._cells, self.cell, self._everywhere
        empty: tuple[Any, ...] = ()
        for e, (x, y, z) in enumerate(centres):
            key = (math.floor(x / cell), math.floor(y / cell), math.floor(z / cell))
            found = cells.get(key, empty) + everywhere
            if not found:
                continue
            limit = (radius[e] + CULL_SLACK) ** 2
            for box in found:
                j, r0, r1, r2, r3, r4, r5, r6, r7, r8, cx, cy, cz, hx, hy, hz = box
                dx, dy, dz = x - cx, y - cy, z - cz
                u = abs(r0 * dx + r1 * dy + r2 * dz) - hx
                v = abs(r3 * dx + r4 * dy + r5 * dz) - hy
                w = abs(r6 * dx + r7 * dy + r8 * dz) - hz
                d = 0.0
                if u > 0.0:
                    d += u * u
                if v > 0.0:
                    d += v * v
                if w > 0.0:
                    d += w * w
                if d <= limit:
                    out.append((e, j))
        return out
