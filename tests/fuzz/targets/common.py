"""Helpers shared by the target modules."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import spatialcontact as sc

from ..core import Case, Check
from ..values import Pick, rigid


def case(
    label: str,
    call: Callable[[], Any],
    pick: Pick,
    param: str | tuple[str, ...],
    check: Callable[[Any, Any], None] | None = None,
    shows_value: bool = True,
) -> Case:
    """A case from a pick: its verdict, and ``check(result, pick.number)`` for an answer."""
    bound: Check | None = None
    if check is not None:
        chosen = check
        number = pick.number

        def bound_check(result: Any) -> None:
            chosen(result, number)

        bound = bound_check
    return Case(label, call, pick.expect, param, pick.value, bound, shows_value)


def r(value: Any) -> str:
    """A short repr for labels."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 120 else text[:117] + "..."


def trans(x: float, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def zoo(rng: np.random.Generator, kinds: tuple[str, ...] | None = None) -> sc.CollisionShape:
    """A random valid shape (any type but half-spaces and octrees unless asked) at a random
    pose near the origin."""
    chosen = kinds or ("sphere", "box", "cylinder", "capsule", "cone", "ellipsoid", "hull", "mesh")
    kind = chosen[int(rng.integers(len(chosen)))]
    T = rigid(rng, 1.5)
    s = lambda lo=0.1, hi=1.0: float(rng.uniform(lo, hi))  # noqa: E731
    if kind == "sphere":
        return sc.Sphere(s(), pose=T)
    if kind == "box":
        return sc.Cuboid([s(), s(), s()], pose=T)
    if kind == "cylinder":
        return sc.Cylinder(s(), s(), pose=T)
    if kind == "capsule":
        return sc.Capsule(s(), s(), pose=T)
    if kind == "cone":
        return sc.Cone(s(), s(), pose=T)
    if kind == "ellipsoid":
        return sc.Ellipsoid([s(), s(), s()], pose=T)
    if kind == "hull":
        return sc.ConvexHull(rng.normal(size=(12, 3)) * 0.4, pose=T)
    if kind == "mesh":
        import trimesh

        return sc.Mesh.from_trimesh(trimesh.creation.icosphere(1, s()), pose=T)
    if kind == "halfspace":
        normal = rng.normal(size=3)
        return sc.HalfSpace(normal / np.linalg.norm(normal), s(-1.0, 1.0), pose=T)
    if kind == "octree":
        return sc.OcTree(rng.uniform(-1.0, 1.0, (20, 3)), 0.1, pose=T)
    raise AssertionError(kind)


def point_box_distance(p: np.ndarray, half: np.ndarray) -> float:
    """Signed distance of point ``p`` (box frame) to a box of half sides ``half``."""
    q = np.abs(p) - half
    outside = float(np.linalg.norm(np.maximum(q, 0.0)))
    inside = min(float(q.max()), 0.0)
    return outside + inside


def agrees(a: float, b: float, tol: float) -> bool:
    return math.isfinite(a) and abs(a - b) <= tol * max(1.0, abs(b))
