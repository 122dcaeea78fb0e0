"""The sphere tests of :mod:`spatialcontact.spheres.kernel` in plain numpy, over all
configurations at once: the oracle the compiled kernel is tested against.

Nothing here culls or stops early: every sphere pair and every sphere-obstacle pair is
tested, so a difference from the kernel would show a cull or an early exit that changes an
answer. The formulas are the kernel's, written again with arrays.
"""

from __future__ import annotations

import math

import numpy as np

from .packing import BOX, CAPSULE, CLOUD, CYLINDER, HALFSPACE, OTHER, SPHERE, Obstacles, Robot

__all__ = ["body_poses", "check_many", "motion_steps", "motions_discrete", "sphere_centres"]


def body_poses(robot: Robot, Q: np.ndarray) -> np.ndarray:
    """``T_base_body`` (N, bodies, 3, 4) of configurations ``Q`` (N, dof)."""
    v = Q @ robot.mimic[:-1] + robot.mimic[-1]  # (N, bodies - 1)
    j = robot.joints
    s, c = np.sin(v)[..., None, None], (1.0 - np.cos(v))[..., None, None]
    R = j[:, 0:9].reshape(-1, 3, 3) + s * j[:, 9:18].reshape(-1, 3, 3)
    R = R + c * j[:, 18:27].reshape(-1, 3, 3)
    t = j[:, 27:30] + v[..., None] * j[:, 30:33]
    n, bodies = len(Q), len(robot.parent)
    out = np.zeros((n, bodies, 3, 4))
    out[:, 0, :, :3] = np.eye(3)
    for b in range(1, bodies):
        P = out[:, robot.parent[b]]
        out[:, b, :, :3] = P[:, :, :3] @ R[:, b - 1]
        out[:, b, :, 3] = (P[:, :, :3] @ t[:, b - 1, :, None])[..., 0] + P[:, :, 3]
    return out


def sphere_centres(robot: Robot, Q: np.ndarray) -> np.ndarray:
    """Every sphere's centre (N, S, 3) in the base frame."""
    T = body_poses(robot, Q)[:, robot.spheres[:, 4].astype(np.intp)]
    out: np.ndarray = (T[..., :3] @ robot.spheres[:, :3, None])[..., 0] + T[..., 3]
    return out


def _local(data: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Points C (..., 3) in the frame ``[R (9), centre (3)]`` of ``data``: R^T (C - centre)."""
    out: np.ndarray = (C - data[9:12]) @ data[:9].reshape(3, 3)
    return out


def _gaps(obstacles: Obstacles, o: int, C: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Gap (N, S) between every sphere (centres C (N, S, 3), radii r (S,)) and obstacle o."""
    kind, d = int(obstacles.kind[o]), obstacles.data[o]
    if kind == SPHERE:
        out: np.ndarray = np.sqrt(((C - d[:3]) ** 2).sum(-1)) - r - d[3]
        return out
    if kind in (BOX, OTHER):
        excess = np.maximum(np.abs(_local(d, C)) - d[12:15], 0.0)
        out = np.sqrt((excess**2).sum(-1)) - r
        return out
    if kind == CAPSULE:
        u = d[3:6] - d[0:3]
        uu = float(u @ u)
        t = np.clip(((C - d[0:3]) @ u) / uu, 0.0, 1.0) if uu > 0 else np.zeros(C.shape[:-1])
        closest = d[0:3] + t[..., None] * u
        out = np.sqrt(((C - closest) ** 2).sum(-1)) - r - d[6]
        return out
    if kind == CYLINDER:
        local = _local(d, C)
        er = np.maximum(np.hypot(local[..., 0], local[..., 1]) - d[12], 0.0)
        ez = np.maximum(np.abs(local[..., 2]) - d[13], 0.0)
        out = np.sqrt(er**2 + ez**2) - r
        return out
    if kind == HALFSPACE:
        out = C @ d[:3] - d[3] - r
        return out
    assert kind == CLOUD
    nx, ny, nz, g0, c0 = obstacles.cloud[o].tolist()
    count = int(obstacles.grid[g0 + nx * ny * nz])
    cells = obstacles.cells[c0 : c0 + count]
    local = _local(d, C)
    best = np.full(C.shape[:-1], np.inf)
    for start in range(0, len(cells), 512):
        chunk = cells[start : start + 512]
        excess = np.maximum(np.abs(local[..., None, :] - chunk[:, :3]) - chunk[:, 3:4], 0.0)
        best = np.minimum(best, (np.sqrt((excess**2).sum(-1)) - r[:, None]).min(-1))
    return best


def check_many(robot: Robot, obstacles: Obstacles, Q: np.ndarray) -> np.ndarray:
    """The kernel's code (int8, N) of every configuration of ``Q`` (N, dof): 1 when a sphere
    touches a sphere of a link it is checked against (both at their self radii) or an
    obstacle, else 2 when one touches the box of an obstacle the kernel cannot test, else
    0."""
    C = sphere_centres(robot, Q)
    r = robot.spheres[:, 3]
    start = robot.link_start
    hit = np.zeros(len(Q), dtype=bool)
    inflated = robot.spheres[:, 5]  # self-collision's radii
    for a, b in robot.pairs.tolist():
        A = C[:, start[a] : start[a + 1], None]
        B = C[:, None, start[b] : start[b + 1]]
        gaps = np.sqrt(((A - B) ** 2).sum(-1))
        gaps -= inflated[start[a] : start[a + 1], None] + inflated[None, start[b] : start[b + 1]]
        hit |= (gaps <= 0.0).any(axis=(1, 2))
    unsure = np.zeros(len(Q), dtype=bool)
    for o in range(len(obstacles.kind)):
        touching = (_gaps(obstacles, o, C, r) <= 0.0).any(axis=1)
        if obstacles.kind[o] == OTHER:
            unsure |= touching
        else:
            hit |= touching
    return np.where(hit, 1, np.where(unsure, 2, 0)).astype(np.int8)


def motion_steps(robot: Robot, q0: np.ndarray, q1: np.ndarray, resolution: float) -> np.ndarray:
    """The configurations (steps + 1, dof) the kernel's ``motions_discrete`` checks on
    ``q0 -> q1`` (dof,): the fewest equal steps of at most ``resolution`` in every joint
    value (mimic joints included), both ends included."""
    largest = float(np.abs((q1 - q0) @ robot.mimic[:-1]).max(initial=0.0))
    steps = max(math.ceil(largest / resolution), 1)
    t = np.arange(steps + 1) / steps
    out: np.ndarray = q0 + t[:, None] * (q1 - q0)
    return out


def motions_discrete(
    robot: Robot, obstacles: Obstacles, Q0: np.ndarray, Q1: np.ndarray, resolution: float
) -> np.ndarray:
    """The kernel's code (int8, M) of every motion ``Q0[m] -> Q1[m]`` (M, dof) checked at
    the steps of :func:`motion_steps`: 1 when :func:`check_many` finds a step colliding,
    else 2 when it finds one unsure, else 0. Every step is checked."""
    out = np.zeros(len(Q0), dtype=np.int8)
    for m, (q0, q1) in enumerate(zip(Q0, Q1, strict=True)):
        codes = check_many(robot, obstacles, motion_steps(robot, q0, q1, resolution))
        out[m] = 1 if (codes == 1).any() else int(codes.max())
    return out
