"""Poses: setting ``T`` / ``pose`` / ``pose=``, read-only arrays, copies, and rejected input."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from conftest import LEAF_KINDS, make_leaf, near, rigid_poses, rot, trans
from hypothesis import given
from spatialmath import SE3

import spatialcontact as sc
from spatialcontact.pose import ROTATION_TOLERANCE


def _pair() -> tuple[sc.Sphere, sc.Sphere]:
    """Unit spheres at the origin and at x = 3: distance 3 - 1 - 1 = 1."""
    return sc.Sphere(1.0), sc.Sphere(1.0, pose=trans(3.0))


# ------------------------------------------------------------------------- accepted poses


@pytest.mark.parametrize(
    "value",
    [
        SE3.Trans(1.0, 2.0, 3.0) * SE3.Rz(0.5),
        (SE3.Trans(1.0, 2.0, 3.0) * SE3.Rz(0.5)).A.tolist(),
        (SE3.Trans(1.0, 2.0, 3.0) * SE3.Rz(0.5)).A,
        (SE3.Trans(1.0, 2.0, 3.0) * SE3.Rz(0.5)).A.astype(np.float32),
        tuple(map(tuple, (SE3.Trans(1.0, 2.0, 3.0) * SE3.Rz(0.5)).A)),
    ],
    ids=["SE3", "list", "ndarray", "float32", "tuple"],
)
@pytest.mark.parametrize("how", ["T", "pose", "constructor"])
def test_pose_accepts_se3_lists_and_arrays(value: Any, how: str) -> None:
    expected = (SE3.Trans(1.0, 2.0, 3.0) * SE3.Rz(0.5)).A
    if how == "constructor":
        s = sc.Sphere(0.5, pose=value)
    else:
        s = sc.Sphere(0.5)
        setattr(s, how, value)
    tol = 1e-6 if np.asarray(value).dtype == np.float32 else 0.0
    np.testing.assert_allclose(s.T, expected, atol=tol)
    np.testing.assert_allclose(s.pose.A, expected, atol=tol)
    np.testing.assert_allclose(s.world_T, expected, atol=tol)
    assert s.T.dtype == np.float64 and s.T.shape == (4, 4)
    assert isinstance(s.pose, SE3)


def test_integer_identity_is_a_pose() -> None:
    s = sc.Sphere(1.0)
    s.T = np.eye(4, dtype=int)
    assert np.array_equal(s.T, np.eye(4)) and s.T.dtype == np.float64


def test_default_pose_is_identity() -> None:
    for kind in LEAF_KINDS:
        assert np.array_equal(make_leaf(kind).T, np.eye(4))
    assert np.array_equal(sc.Sphere(1.0, pose=None).T, np.eye(4))


def test_small_rounding_in_the_rotation_is_accepted() -> None:
    # A rotation off orthonormal by 1e-9 per entry (below ROTATION_TOLERANCE) is a pose.
    M = rot("z", 0.3)
    M[0, 0] += 1e-9
    assert 1e-9 < ROTATION_TOLERANCE
    s = sc.Sphere(1.0)
    s.T = M
    assert s.T[0, 0] == M[0, 0]


def test_world_T_composes_the_group_pose() -> None:
    s = sc.Sphere(0.5, pose=trans(1.0, 0.0, 0.0))
    g = sc.CollisionShapeGroup([s], pose=trans(0.0, 2.0, 0.0) @ rot("z", math.pi / 2))
    # world = group @ T: the local x offset turns into +y, then the group moves +2 in y.
    np.testing.assert_allclose(s.world_T[:3, 3], [0.0, 3.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(s.T, trans(1.0, 0.0, 0.0))
    assert s.scene_parent is g
    # distance from a unit sphere at the origin: |(0, 3, 0)| - 1 - 0.5 = 1.5
    assert sc.Sphere(1.0).distance(s) == pytest.approx(1.5, abs=1e-12)


# ------------------------------------------------------------------------ read-only and copies


def test_T_is_read_only() -> None:
    s = sc.Sphere(1.0)
    with pytest.raises(ValueError, match=r"read-only"):
        s.T[0, 3] = 5.0
    assert np.array_equal(s.T, np.eye(4))


def test_world_T_of_a_grouped_shape_is_not_a_handle_on_the_pose() -> None:
    s = sc.Sphere(1.0)
    g = sc.CollisionShapeGroup([s], pose=trans(1.0))
    W = s.world_T
    if W.flags.writeable:
        W[0, 3] = 99.0
    assert s.world_T[0, 3] == 1.0 and g.T[0, 3] == 1.0


@pytest.mark.parametrize("how", ["T", "pose", "constructor"])
def test_mutating_the_array_given_does_not_move_the_shape(how: str) -> None:
    a, _ = _pair()
    M = trans(3.0)
    if how == "constructor":
        b = sc.Sphere(1.0, pose=M)
    else:
        b = sc.Sphere(1.0)
        setattr(b, how, M)
    assert a.distance(b) == pytest.approx(1.0, abs=1e-12)
    M[0, 3] = 10.0  # the caller's array, changed after the call
    assert b.T[0, 3] == 3.0
    assert a.distance(b) == pytest.approx(1.0, abs=1e-12)
    assert a.closest_point(b)[0] == pytest.approx(1.0, abs=1e-12)


def test_pose_getter_returns_a_copy() -> None:
    s = sc.Sphere(1.0, pose=trans(1.0))
    P = s.pose
    P.A[0, 3] = 7.0
    assert s.T[0, 3] == 1.0


def test_results_change_after_a_move() -> None:
    a, b = _pair()
    assert a.closest_point(b)[0] == pytest.approx(1.0)  # 3 - 1 - 1
    assert not a.iscollided(b)
    b.T = trans(1.5)  # 1.5 - 2 = -0.5
    d, p1, p2 = near(a, b)
    assert d == pytest.approx(-0.5, abs=1e-12)
    np.testing.assert_allclose(p1, [1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(p2, [0.5, 0.0, 0.0], atol=1e-12)
    assert a.iscollided(b) and b.iscollided(a) and (a & b)
    b.pose = SE3.Trans(0.0, 5.0, 0.0)  # 5 - 2 = 3
    assert a.distance(b) == pytest.approx(3.0, abs=1e-12)
    assert a.closest_point(b, inf_dist=10.0)[2] == pytest.approx([0.0, 4.0, 0.0], abs=1e-12)
    a.T = trans(0.0, 5.0, 3.0)  # now 3 - 2 = 1 along z
    assert b.distance(a) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("kind", LEAF_KINDS)
def test_every_leaf_type_follows_its_pose(kind: str) -> None:
    # A small sphere far out along x (along z for the half-space z <= 0, tilted 0.3 rad) is
    # closer after the shape moves 1 m towards it: by 1 m, or cos(0.3) = 0.955 m for the plane.
    shape = make_leaf(kind, rot("y", 0.3))
    direction = np.array([0.0, 0.0, 1.0] if kind == "HalfSpace" else [1.0, 0.0, 0.0])
    probe = sc.Sphere(0.25, pose=trans(*(8.0 * direction + [0.0, 0.2, 0.0])))
    before = shape.distance(probe)
    shape.T = trans(*direction) @ rot("y", 0.3)
    after = shape.distance(probe)
    assert after < before - 0.9


@given(rigid_poses(), rigid_poses())
def test_sphere_distance_follows_random_poses(Ta: np.ndarray, Tb: np.ndarray) -> None:
    # Spheres: distance = |ta - tb| - ra - rb, whatever the rotations.
    a, b = sc.Sphere(0.3), sc.Sphere(0.2)
    a.T, b.pose = Ta, SE3(Tb, check=False)
    assert np.array_equal(a.T, Ta)
    np.testing.assert_allclose(b.T, Tb, atol=1e-15)
    expected = float(np.linalg.norm(Ta[:3, 3] - Tb[:3, 3])) - 0.5
    assert a.distance(b) == pytest.approx(expected, abs=1e-9)
    assert b.distance(a) == pytest.approx(expected, abs=1e-9)


# ----------------------------------------------------------------------------- bad poses

_REFLECTION = np.diag([-1.0, 1.0, 1.0, 1.0])
_SHEAR = np.eye(4)
_SHEAR[0, 1] = 0.1
_LAST_ROW = np.eye(4)
_LAST_ROW[3] = [0.0, 0.0, 1.0, 1.0]
_NAN = np.eye(4)
_NAN[1, 3] = np.nan
_INF = np.eye(4)
_INF[2, 3] = np.inf
_SCALED = np.diag([2.0, 2.0, 2.0, 1.0])

BAD_POSES = [
    pytest.param(_NAN, r"but it has non-finite entries: got array\(\[\[ *1\.", id="nan"),
    pytest.param(_INF, r"but it has non-finite entries: got array", id="inf"),
    pytest.param(_SHEAR, r"its rotation is not orthonormal .*: got array", id="shear"),
    pytest.param(_SCALED, r"its rotation is not orthonormal .*= 3\): got array", id="scaled"),
    pytest.param(_REFLECTION, r"its rotation has determinant -1 .*got array\(\[\[-1\.", id="det-1"),
    pytest.param(
        _LAST_ROW, r"its last row is \[0\.0, 0\.0, 1\.0, 1\.0\], expected \[0, 0, 0, 1\]", id="row"
    ),
    pytest.param(np.eye(3), r"4x4 homogeneous transform, got an array of shape \(3, 3\)", id="3x3"),
    pytest.param(np.eye(4)[:3], r"got an array of shape \(3, 4\)", id="3x4"),
    pytest.param(np.eye(4).ravel(), r"got an array of shape \(16,\)", id="flat"),
    pytest.param("identity", r"SE3 or a 4x4 array-like, got 'identity'", id="str"),
    pytest.param(b"\x00", r"SE3 or a 4x4 array-like, got b'\\x00'", id="bytes"),
    pytest.param([[1, 2], [3]], r"SE3 or a 4x4 array-like, got \[\[1, 2\], \[3\]\]", id="ragged"),
    pytest.param(SE3([SE3(), SE3.Tx(1)]), r"a single pose, got an SE3 holding 2 poses", id="SE3x2"),
]


@pytest.mark.parametrize(("value", "message"), BAD_POSES)
@pytest.mark.parametrize("how", ["T", "pose"])
def test_bad_pose_set_raises_and_changes_nothing(value: Any, message: str, how: str) -> None:
    a, b = _pair()
    b.closest_point(a)  # cache the pair first
    with pytest.raises(sc.InvalidPoseError, match=f"^{how} must be .*{message}"):
        setattr(b, how, value)
    assert np.array_equal(b.T, trans(3.0))
    assert b.distance(a) == pytest.approx(1.0, abs=1e-12)
    assert b.closest_point(a)[1] == pytest.approx([2.0, 0.0, 0.0], abs=1e-12)
    assert not a.iscollided(b)


@pytest.mark.parametrize(("value", "message"), BAD_POSES)
def test_bad_pose_in_the_constructor_raises(value: Any, message: str) -> None:
    with pytest.raises(sc.InvalidPoseError, match=f"^pose must be .*{message}"):
        sc.Sphere(1.0, pose=value)


def test_none_is_not_a_pose_for_T() -> None:
    # In the constructor None means the identity; as a new value for T it is refused.
    a, b = _pair()
    with pytest.raises(sc.InvalidPoseError, match=r"^T must be a spatialmath SE3 .*got None"):
        b.T = None
    with pytest.raises(sc.InvalidPoseError, match=r"^pose must be a spatialmath SE3 .*got None"):
        b.pose = None
    assert np.array_equal(b.T, trans(3.0)) and a.distance(b) == pytest.approx(1.0)


def test_pose_errors_are_value_errors() -> None:
    s = sc.Sphere(1.0)
    with pytest.raises(ValueError, match=r"T must be a rigid transform"):
        s.T = _REFLECTION
    with pytest.raises(sc.SpatialContactError):
        s.T = "x"


def test_base_is_a_deprecated_alias_of_pose() -> None:
    with pytest.warns(FutureWarning, match=r"^base kwarg is deprecated, use pose instead$"):
        s = sc.Sphere(1.0, base=trans(2.0))
    assert np.array_equal(s.T, trans(2.0))
    with (
        warnings.catch_warnings(),
        pytest.raises(sc.InvalidPoseError, match=r"^base must be a rigid transform"),
    ):
        warnings.simplefilter("ignore", FutureWarning)
        sc.Sphere(1.0, base=_REFLECTION)
    with (
        pytest.warns(FutureWarning),
        pytest.raises(
            sc.InvalidShapeError, match=r"(?s)give only pose, got both pose=array.* and base=array"
        ),
    ):
        sc.Sphere(1.0, pose=trans(1.0), base=trans(2.0))
