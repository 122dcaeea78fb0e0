"""Shared test settings, shape factories and hypothesis strategies.

The hypothesis profile ``default`` keeps the suite fast and reproducible (derandomised, no
deadline); ``HYPOTHESIS_PROFILE=thorough pytest`` runs many more random examples.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import trimesh
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import spatialcontact as sc
from spatialcontact.robot import RobotModel

settings.register_profile(
    "default",
    deadline=None,
    max_examples=60,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=2000,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# ------------------------------------------------------------------------------------ poses


def quaternion_matrix(w: float, x: float, y: float, z: float) -> np.ndarray:
    """Rotation matrix (3, 3) of the quaternion ``w + xi + yj + zk`` (normalised here)."""
    q = np.array([w, x, y, z], dtype=np.float64)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def pose(R: Any = None, t: Any = (0.0, 0.0, 0.0)) -> np.ndarray:
    """A (4, 4) homogeneous transform from a rotation (3, 3) (identity if None) and t (3,)."""
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = t
    return T


def trans(x: float, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    """A pure translation as a (4, 4) array."""
    return pose(None, (x, y, z))


def rot(axis: str, angle: float) -> np.ndarray:
    """A pure rotation of ``angle`` radians about the x, y or z axis, as a (4, 4) array."""
    c, s = np.cos(angle), np.sin(angle)
    R = {
        "x": [[1, 0, 0], [0, c, -s], [0, s, c]],
        "y": [[c, 0, s], [0, 1, 0], [-s, 0, c]],
        "z": [[c, -s, 0], [s, c, 0], [0, 0, 1]],
    }[axis]
    return pose(np.array(R, dtype=np.float64))


_unit = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


@st.composite
def rotations(draw: Any) -> np.ndarray:
    """Uniform-ish random rotation matrices (3, 3), from quaternions away from zero norm."""
    q = draw(st.tuples(_unit, _unit, _unit, _unit).filter(lambda q: sum(c * c for c in q) > 0.01))
    return quaternion_matrix(*q)


@st.composite
def rigid_poses(draw: Any, reach: float = 2.0) -> np.ndarray:
    """Random rigid transforms (4, 4): a random rotation and a translation in [-reach, reach]^3."""
    coord = st.floats(-reach, reach, allow_nan=False, allow_infinity=False)
    t = draw(st.tuples(coord, coord, coord))
    return pose(draw(rotations()), t)


# ----------------------------------------------------------------------------------- shapes

LEAF_KINDS = (
    "Sphere",
    "Cuboid",
    "Cylinder",
    "Capsule",
    "Cone",
    "Ellipsoid",
    "HalfSpace",
    "Mesh",
    "ConvexHull",
    "OcTree",
)
"""The ten leaf shape types."""

# A fixed cloud for octrees: 40 points in a 0.6 m cube.
OCTREE_POINTS = np.random.default_rng(7).uniform(-0.3, 0.3, (40, 3))

# The corners of a cube of side 0.8 centred on the origin, plus its centre (9 points).
HULL_POINTS = np.array(
    [[x, y, z] for x in (-0.4, 0.4) for y in (-0.4, 0.4) for z in (-0.4, 0.4)] + [[0, 0, 0]]
)


def make_leaf(kind: str, T: Any = None, **kwargs: Any) -> sc.CollisionShape:
    """One shape of each leaf type, all about 1 m across, at pose ``T``."""
    kwargs["pose"] = T
    if kind == "Sphere":
        return sc.Sphere(0.5, **kwargs)
    if kind == "Cuboid":
        return sc.Cuboid([0.6, 0.8, 1.0], **kwargs)
    if kind == "Cylinder":
        return sc.Cylinder(0.4, 1.0, **kwargs)
    if kind == "Capsule":
        return sc.Capsule(0.3, 0.8, **kwargs)
    if kind == "Cone":
        return sc.Cone(0.5, 1.0, **kwargs)
    if kind == "Ellipsoid":
        return sc.Ellipsoid([0.5, 0.3, 0.4], **kwargs)
    if kind == "HalfSpace":
        return sc.HalfSpace([0.0, 0.0, 1.0], 0.0, **kwargs)
    if kind == "Mesh":
        return sc.Mesh.from_trimesh(
            trimesh.creation.icosphere(subdivisions=2, radius=0.5), **kwargs
        )
    if kind == "ConvexHull":
        return sc.ConvexHull(HULL_POINTS, **kwargs)
    if kind == "OcTree":
        return sc.OcTree(OCTREE_POINTS, 0.1, **kwargs)
    raise AssertionError(f"unknown kind {kind}")


UNSUPPORTED_ALL = {("Ellipsoid", "OcTree"), ("OcTree", "Ellipsoid")}
"""Pairs Coal answers no query for."""
UNSUPPORTED_DISTANCE = UNSUPPORTED_ALL | {("HalfSpace", "HalfSpace")}
"""Pairs with no closest_point, distance or contacts."""


def near(
    a: sc.CollisionShape, b: sc.CollisionShape, inf_dist: float = 100.0
) -> tuple[float, np.ndarray, np.ndarray]:
    """``a.closest_point(b, inf_dist)`` for a pair known to be within ``inf_dist``."""
    d, p1, p2 = a.closest_point(b, inf_dist)
    assert d is not None and p1 is not None and p2 is not None, "pair beyond inf_dist"
    return d, p1, p2


_BOARDS = {"low": 0.2, "mid": 0.5, "top": 0.85}
"""Heights (m) of the shelf boards :func:`shelf_scene` can add."""

FINE = 0.005
"""Radians: the largest joint step of the discretisation motion checks are held to."""


def shelf_scene(*boards: str) -> sc.Scene:
    """A shelf 0.6 m in front of a robot at the origin: two sides, a back and the boards
    named (``"low"``, ``"mid"``, ``"top"``), each a thin box."""
    scene = sc.Scene()
    for name, size, xyz in [
        ("left", [0.3, 0.02, 0.9], [0.6, -0.4, 0.45]),
        ("right", [0.3, 0.02, 0.9], [0.6, 0.4, 0.45]),
        ("back", [0.02, 0.8, 0.9], [0.75, 0.0, 0.45]),
        *[(board, [0.3, 0.8, 0.02], [0.6, 0.0, _BOARDS[board]]) for board in boards],
    ]:
        scene.add(sc.Cuboid(size, pose=trans(*xyz)), name)
    return scene


def discretised_free(
    robot: RobotModel, q0: np.ndarray, q1: np.ndarray, scene: sc.Scene | None
) -> bool:
    """Whether ``robot.check`` finds every configuration at most :data:`FINE` apart on the
    motion ``q0 -> q1`` free."""
    steps = max(1, int(np.ceil(np.abs(q1 - q0).max() / FINE)))
    Q = q0 + np.linspace(0.0, 1.0, steps + 1)[:, None] * (q1 - q0)
    return not robot.check(Q, scene).any()


@pytest.fixture(scope="module")
def panda() -> RobotModel:
    """The shipped Panda with its SRDF, made once per test module."""
    folder = sc.meshes.path("panda")
    return RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")


@pytest.fixture
def leaf_factory() -> Callable[..., sc.CollisionShape]:
    """:func:`make_leaf` as a fixture."""
    return make_leaf


@pytest.fixture
def box_mesh() -> sc.Mesh:
    """A closed triangle mesh of the cube [-1, 1]^3 (12 triangles), at the origin."""
    return sc.Mesh.from_trimesh(trimesh.creation.box(extents=[2.0, 2.0, 2.0]))


def make_contact(
    a: sc.CollisionShape,
    b: sc.CollisionShape,
    normal: tuple[float, float, float],
    pos: tuple[float, float, float],
    depth: float,
) -> sc.Contact:
    """A hand-made primitive contact of ``a`` and ``b`` at ``pos``: witness points half the depth
    either side of ``pos`` along ``normal``, so ``p2 - p1 == depth * normal``."""
    p = np.array(pos, dtype=float)
    n = np.array(normal, dtype=float)
    return sc.Contact(a, b, -1, -1, n, [p - 0.5 * depth * n, p + 0.5 * depth * n], p, depth)


CONTINUOUS_ARM = """<robot name="spinner">
  <link name="base"><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0.2 0 0"/>
    <geometry><box size="0.4 0.05 0.05"/></geometry></collision></link>
  <link name="fore"><collision><origin xyz="0.15 0 0"/>
    <geometry><box size="0.3 0.05 0.05"/></geometry></collision></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>
  <joint name="elbow" type="continuous"><parent link="arm"/><child link="fore"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/></joint>
</robot>"""
"""Two continuous joints about z: the arm (0.4 m) and the forearm (0.3 m) sweep the plane
z = 0.1 around the base."""
