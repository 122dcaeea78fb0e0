"""A sphere-model robot and a scene as the flat float64 and int64 arrays the kernel reads.

Everything is in the robot's base frame (the root link's), in metres. The obstacle kinds
(:data:`SPHERE` ... :data:`OTHER`) index the rows of :class:`Obstacles`; every obstacle also
has a bounding sphere for the per-link cull (``inf`` radius for a half-space).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..mesh import OcTree
from ..shapes import Capsule, CollisionShape, Cuboid, Cylinder, HalfSpace, Sphere

if TYPE_CHECKING:
    from ..robot.environment import SceneView
    from ..robot.kinematics import Kinematics
    from .model import SphereRobotModel

__all__ = [
    "BOX",
    "CAPSULE",
    "CLOUD",
    "CYLINDER",
    "HALFSPACE",
    "OTHER",
    "SPHERE",
    "Obstacles",
    "Robot",
    "joint_map",
    "pack_obstacles",
    "pack_robot",
]

SPHERE, BOX, CAPSULE, CYLINDER, HALFSPACE, CLOUD, OTHER = range(7)
"""Obstacle kinds. ``OTHER`` is any shape the kernel has no test for: its bounding box stands
for it, and a sphere touching the box leaves the configuration to Coal."""

_GRID_CELLS = 48
"""Grid cells along a point cloud's longest side."""


@dataclass(frozen=True)
class Robot:
    """The robot's arrays.

    Attributes
    ----------
    parent : ndarray of int64, shape (bodies,)
        Each body's parent (-1 for body 0).
    mimic : ndarray, shape (dof + 1, bodies - 1)
        Joint values as ``v = q @ mimic[:-1] + mimic[-1]`` (mimic joints included).
    joints : ndarray, shape (bodies - 1, 33)
        Per moving body: ``R_pj`` (9, row by row), ``R_pj K`` (9), ``R_pj K^2`` (9), ``t_pj``
        (3), the prismatic slide ``R_pj a`` (3). The body's pose in its parent's is
        ``R = R_pj + sin(v) R_pj K + (1 - cos(v)) R_pj K^2``, ``t = t_pj + v slide``.
    spheres : ndarray, shape (S, 6)
        ``[x, y, z, radius, body, self radius]`` in the body's frame, grouped by link: the
        self radius (the radius plus the link's ``self_collision_buffer``) is the one
        self-collision tests.
    link_start : ndarray of int64, shape (L + 1,)
        Link ``l``'s spheres are rows ``link_start[l]:link_start[l + 1]``.
    links : ndarray, shape (L, 6)
        Each link's bounding sphere ``[x, y, z, radius, body, self radius]``, body frame
        (the self radius bounds the spheres at their self radii).
    pairs : ndarray of int64, shape (P, 2)
        The link pairs self-collision checks.
    reach : ndarray, shape (L, bodies)
        How far a point of each link can be from each body's joint axis (see
        :mod:`spatialcontact.robot.motion`; 0 off the link's chain).
    chain : ndarray of int64, shape (L, bodies)
        1 where body ``b``'s joint moves link ``l``.
    span : ndarray, shape (L, bodies)
        How far a point of each link's bounding sphere can be from the origin of each
        body's joint, in any configuration (0 off the link's chain).
    axes : ndarray, shape (bodies, 4)
        Each body's joint axis in its frame and 1 for a prismatic joint: ``[x, y, z, p]``.
    """

    parent: np.ndarray
    mimic: np.ndarray
    joints: np.ndarray
    spheres: np.ndarray
    link_start: np.ndarray
    links: np.ndarray
    pairs: np.ndarray
    reach: np.ndarray
    chain: np.ndarray
    span: np.ndarray
    axes: np.ndarray


@dataclass(frozen=True)
class Obstacles:
    """The scene's obstacles.

    Attributes
    ----------
    kind : ndarray of int64, shape (B,)
        Each obstacle's kind.
    bound : ndarray, shape (B, 4)
        Bounding sphere ``[x, y, z, radius]``.
    data : ndarray, shape (B, 16)
        By kind: sphere ``[x, y, z, r]``; box and other ``[R (9), centre (3), half sides
        (3)]``; capsule ``[p0 (3), p1 (3), r]``; cylinder ``[R (9), centre (3), radius,
        half length]``; half-space ``[n (3), offset]``; cloud ``[R (9), t (3), grid origin
        (3), step]``, all in the base frame (a cloud's grid in its own frame).
    cloud : ndarray of int64, shape (B, 5)
        For a cloud: grid sizes along x, y, z, the first entry of its grid in ``grid`` and
        of its cells in ``cells``.
    grid : ndarray of int64
        Each cloud's grid: cell ``(i, j, k)``'s items are ``cells[start + grid[g]:start +
        grid[g + 1]]`` with ``g = (i * ny + j) * nz + k`` offset by the cloud's first entry.
    cells : ndarray, shape (C, 4)
        ``[x, y, z, half side]`` in the cloud's frame (an octree's occupied cells, or its
        points with half side 0).
    """

    kind: np.ndarray
    bound: np.ndarray
    data: np.ndarray
    cloud: np.ndarray
    grid: np.ndarray
    cells: np.ndarray


def _rows(R: np.ndarray) -> list[float]:
    out: list[float] = R.reshape(9).tolist()
    return out


def joint_map(kin: Kinematics) -> np.ndarray:
    """Every moving joint's value as ``v = q @ out[:-1] + out[-1]``: (dof + 1, bodies - 1)."""
    dof = len(kin.dof_names)
    zero = kin.values(np.zeros((1, dof)))[0]
    return np.ascontiguousarray(np.vstack([kin.values(np.eye(dof)) - zero, zero]))


def pack_robot(robot: SphereRobotModel) -> Robot:
    """The arrays of a sphere-model robot (without attached objects)."""
    from ..robot.motion import _reach

    kin = robot._kin
    n = kin.n_bodies
    mimic = joint_map(kin)
    joints = np.zeros((n - 1, 33))
    for b in range(1, n):
        R_pj = kin.T_parent_joint[b, :3, :3]
        x, y, z = kin.axis[b]
        K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        row = joints[b - 1]
        row[0:9] = _rows(R_pj)
        if kin.prismatic[b]:
            row[30:33] = R_pj @ kin.axis[b]
        else:
            row[9:18] = _rows(R_pj @ K)
            row[18:27] = _rows(R_pj @ K @ K)
        row[27:30] = kin.T_parent_joint[b, :3, 3]
    balls = [s for s in robot._shapes if isinstance(s, Sphere)]
    assert len(balls) == len(robot._shapes), "only a robot of spheres has kernel arrays"
    radius = np.array([s.radius for s in balls], dtype=float)
    centre = robot._T_body_element[:, :3, 3]
    body = robot._element_body.astype(float)
    parts = robot._parts
    buffer = robot.sphere_model.self_collision_buffer
    inflated = radius + np.array([buffer.get(p, 0.0) for p in parts], dtype=float)
    spheres = np.column_stack([centre, radius, body, inflated])
    link_names = list(dict.fromkeys(parts))
    index = {name: i for i, name in enumerate(link_names)}
    start = np.zeros(len(link_names) + 1, dtype=np.int64)
    for p in parts:
        start[index[p] + 1] += 1
    start = np.cumsum(start)
    links = np.zeros((len(link_names), 6))
    for l in range(len(link_names)):  # noqa: E741 - l is the link index throughout
        rows = spheres[start[l] : start[l + 1]]
        middle = 0.5 * (rows[:, :3].min(axis=0) + rows[:, :3].max(axis=0))
        far = np.linalg.norm(rows[:, :3] - middle, axis=1)
        links[l] = [*middle, (far + rows[:, 3]).max(), rows[0, 4], (far + rows[:, 5]).max()]
    pairs = np.array(
        list(
            dict.fromkeys(
                (index[parts[a]], index[parts[b]])
                for a, b in zip(robot._pair_a.tolist(), robot._pair_b.tolist(), strict=True)
            )
        ),
        dtype=np.int64,
    ).reshape(-1, 2)
    outer = np.maximum(links[:, 3], links[:, 5])  # the farthest either test reaches
    reach, chain = _reach(kin, links[:, 4].astype(np.intp), links[:, :3], outer)
    span = _span(kin, links[:, 4].astype(np.intp), links[:, :3], outer)
    return Robot(
        parent=kin.parent.astype(np.int64),
        mimic=mimic,
        joints=joints,
        spheres=np.ascontiguousarray(spheres),
        link_start=start,
        links=links,
        pairs=pairs,
        reach=np.ascontiguousarray(reach, dtype=float),
        chain=np.ascontiguousarray(chain, dtype=np.int64),
        span=span,
        axes=np.column_stack([kin.axis, kin.prismatic.astype(float)]),
    )


def _span(kin: Kinematics, body: np.ndarray, centre: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """How far a point of each sphere (``centre`` in body ``body``'s frame, ``radius``) can be
    from each joint's origin up its chain, in any configuration: the lengths of the bodies'
    offsets between them (the longest within the joint limits) and the sphere's reach."""
    n = kin.n_bodies
    length = np.zeros(n)
    for b in range(1, n):
        t = kin.T_parent_joint[b, :3, 3]
        length[b] = np.linalg.norm(t)  # a revolute joint (maybe continuous) turns in place
        if kin.prismatic[b]:
            slide = kin.T_parent_joint[b, :3, :3] @ kin.axis[b]
            length[b] = max(np.linalg.norm(t + v * slide) for v in kin.value_range[b])
    out = np.zeros((len(body), n))
    for p, (k, c, r) in enumerate(zip(body.tolist(), centre, radius.tolist(), strict=True)):
        between = float(np.linalg.norm(c)) + r
        b = k
        while b > 0:  # joint b's origin is body b's; the offsets below it lead to the sphere
            out[p, b] = between
            between += length[b]
            b = int(kin.parent[b])
    return out


def _box_row(T: np.ndarray, centre: np.ndarray, half: np.ndarray) -> list[float]:
    return [*_rows(T[:3, :3]), *(T[:3, :3] @ centre + T[:3, 3]), *half]


def _cloud_grid(cells: np.ndarray) -> tuple[np.ndarray, list[float], list[int], np.ndarray]:
    """Sort a cloud's cells (n, 4) into a grid: sorted cells, ``[origin, step]``, sizes,
    and the grid's start offsets."""
    low = cells[:, :3].min(axis=0)
    high = cells[:, :3].max(axis=0)
    extent = float((high - low).max())
    step = max(extent / _GRID_CELLS, 2.0 * float(cells[:, 3].max()), 1e-3)
    sizes = np.floor((high - low) / step).astype(np.int64) + 1
    ijk = np.minimum(np.floor((cells[:, :3] - low) / step).astype(np.int64), sizes - 1)
    key = (ijk[:, 0] * sizes[1] + ijk[:, 1]) * sizes[2] + ijk[:, 2]
    order = np.argsort(key, kind="stable")
    counts = np.bincount(key, minlength=int(np.prod(sizes)))
    grid = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return cells[order], [*low, step], sizes.tolist(), grid


def pack_obstacles(view: SceneView, T_world_base: np.ndarray, points: bool = False) -> Obstacles:
    """The kernel's arrays for a scene view's leaves, in the base frame of a robot at
    ``T_world_base``; an :class:`~spatialcontact.OcTree` is its occupied cells, or with
    ``points`` the points it was built from (cells of side 0)."""
    T_base_world = np.linalg.inv(T_world_base)
    kinds: list[int] = []
    bounds: list[list[float]] = []
    data: list[list[float]] = []
    clouds: list[list[int]] = []
    grids: list[np.ndarray] = []
    cells: list[np.ndarray] = []
    offsets = [0, 0]

    def cloud(T: np.ndarray, items: np.ndarray) -> None:
        sorted_cells, origin_step, sizes, grid = _cloud_grid(items)
        local_centre = 0.5 * (items[:, :3].min(axis=0) + items[:, :3].max(axis=0))
        r = float((np.linalg.norm(items[:, :3] - local_centre, axis=1) + items[:, 3]).max())
        kinds.append(CLOUD)
        bounds.append([*(T[:3, :3] @ local_centre + T[:3, 3]), r])
        data.append([*_rows(T[:3, :3]), *T[:3, 3], *origin_step])
        clouds.append([*sizes, offsets[0], offsets[1]])
        grids.append(grid)
        cells.append(sorted_cells)
        offsets[0] += len(grid)
        offsets[1] += len(sorted_cells)

    for leaf in view.shapes:
        T = T_base_world @ leaf.world_T
        p = T[:3, 3]
        row: list[float]
        if isinstance(leaf, Sphere):
            kind, row, bound = SPHERE, [*p, leaf.radius], [*p, leaf.radius]
        elif isinstance(leaf, Cuboid):
            half = 0.5 * np.asarray(leaf.scale)
            kind, row = BOX, _box_row(T, np.zeros(3), half)
            bound = [*p, float(np.linalg.norm(half))]
        elif isinstance(leaf, Capsule):
            axis = 0.5 * leaf.length * T[:3, 2]
            kind, row = CAPSULE, [*(p - axis), *(p + axis), leaf.radius]
            bound = [*p, leaf.radius + 0.5 * leaf.length]
        elif isinstance(leaf, Cylinder):
            kind = CYLINDER
            row = [*_rows(T[:3, :3]), *p, leaf.radius, 0.5 * leaf.length]
            bound = [*p, math.hypot(leaf.radius, 0.5 * leaf.length)]
        elif isinstance(leaf, HalfSpace):
            n = T[:3, :3] @ leaf.normal
            kind, row, bound = HALFSPACE, [*n, leaf.offset + float(n @ p)], [*p, math.inf]
        elif isinstance(leaf, OcTree):
            if points:
                cloud(T, np.column_stack([leaf.points, np.zeros(len(leaf.points))]))
            else:
                c = leaf.cells
                cloud(T, np.column_stack([c[:, :3], 0.5 * c[:, 3]]))
            continue
        else:
            kind = OTHER
            local = _leaf_box(leaf)
            row = _box_row(T, *local)
            bound = [*(T[:3, :3] @ local[0] + p), float(np.linalg.norm(local[1]))]
        kinds.append(kind)
        bounds.append(bound)
        data.append(row + [0.0] * (16 - len(row)))
        clouds.append([0] * 5)
    for row in data:
        row.extend([0.0] * (16 - len(row)))
    return Obstacles(
        kind=np.array(kinds, dtype=np.int64),
        bound=np.array(bounds, dtype=float).reshape(-1, 4),
        data=np.array(data, dtype=float).reshape(-1, 16),
        cloud=np.array(clouds, dtype=np.int64).reshape(-1, 5),
        grid=np.concatenate(grids) if grids else np.zeros(1, dtype=np.int64),
        cells=np.concatenate(cells) if cells else np.zeros((0, 4)),
    )


def _leaf_box(leaf: CollisionShape) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half sides of a leaf's local bounding box (its Coal geometry's)."""
    geometry = leaf.geometry
    geometry.computeLocalAABB()
    box = geometry.aabb_local
    low, high = np.asarray(box.min_), np.asarray(box.max_)
    return 0.5 * (low + high), 0.5 * (high - low)
