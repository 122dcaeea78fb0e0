"""Poses: setting ``T`` / ``pose`` / ``pose=``, read-only arrays, copies, and rejected input."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
from conftest import LEAF_KINDS, make_leaf, near, rigid_poses, rot, trans
from hypothesis import given
from hypothesis import strategies as st
from spatialmath import SE3

import spatialcontact as sc
from spatialcontact.pose import MAX_TRANSLATION, ROTATION_TOLERANCE, as_poses


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
    pytest.param(
        [[1, 2], [3]],
        r"array-like, got \[\[1, 2\], \[3\]\] \(a ragged nested sequence\)",
        id="ragged",
    ),
    pytest.param(
        [["1", "0", "0", "0"], ["0", "1", "0", "0"], ["0", "0", "1", "0"], ["0", "0", "0", "1"]],
        r"SE3 or a 4x4 array-like, got \[\['1', '0', .* \(strings\)$",
        id="str-in-list",
    ),
    pytest.param(
        [[True, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
        r"array-like, got \[\[True, 0, .* \(booleans or masked arrays among the values\)$",
        id="bool-in-list",
    ),
    pytest.param(
        np.eye(4, dtype=bool), r"array-like, got array\(\[\[ True, [\s\S]* \(booleans\)$", id="bool"
    ),
    pytest.param(
        np.eye(4) + 0j, r"array-like, got array\([\s\S]* \(complex numbers\)$", id="complex"
    ),
    pytest.param(
        np.eye(4).astype(object),
        r"array-like, got array\([\s\S]* \(an object array: give it a numeric dtype\)$",
        id="object",
    ),
    pytest.param(
        [[1, 0, 0, None], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
        r"array-like, got \[\[1, 0, 0, None\], .* \(None among the values\)$",
        id="none-in-list",
    ),
    pytest.param(
        [[1, 0, 0, 10**400], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
        r"array-like within float range \(about ±1\.8e308\), got 1\.000e\+400",
        id="huge-int",
    ),
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


def test_huge_rotation_entries_are_refused_without_a_numpy_warning() -> None:
    # Regression: the message's |R R^T - I| overflowed to inf with a RuntimeWarning, which
    # an application running with warnings as errors got instead of InvalidPoseError.
    M = np.eye(4)
    M[0, 0] = 1e200
    s = sc.Sphere(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(
            sc.InvalidPoseError, match=r"not orthonormal \(max \|R R\^T - I\| = inf\)"
        ):
            s.T = M
    assert np.array_equal(s.T, np.eye(4))


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


# ----------------------------------------------------------------------- batches of poses


def _batch(n: int) -> np.ndarray:
    """``n`` rigid poses: turned about z by 0.1 i and moved i along x."""
    return np.array([trans(float(i)) @ rot("z", 0.1 * i) for i in range(n)])


@pytest.mark.parametrize(
    "make",
    [
        lambda poses: poses,
        lambda poses: poses.tolist(),
        lambda poses: list(poses),
        lambda poses: [SE3(p, check=False) for p in poses],
        lambda poses: SE3([SE3(p, check=False) for p in poses]),
        lambda poses: [SE3(poses[0], check=False), *poses[1:]],
        lambda poses: poses.astype(np.float32).astype(np.float64),
    ],
    ids=["array", "nested-list", "list-of-arrays", "list-of-SE3", "SE3", "mixed", "copy"],
)
def test_as_poses_accepts_batches(make: Any) -> None:
    poses = _batch(5)
    given_value = make(poses)
    out = as_poses(given_value)
    assert out.shape == (5, 4, 4) and out.dtype == np.float64
    np.testing.assert_allclose(out, poses, atol=1e-12)
    assert not out.flags.writeable
    assert out is not given_value and not np.shares_memory(out, poses)


def test_as_poses_of_one_and_of_none() -> None:
    assert as_poses(SE3.Tx(1.0)).shape == (1, 4, 4)
    assert as_poses([np.eye(4)]).shape == (1, 4, 4)
    empties: list[Any] = [[], (), np.zeros((0, 4, 4))]
    for empty in empties:
        out = as_poses(empty)
        assert out.shape == (0, 4, 4) and not out.flags.writeable


def _corrupt(kind: str) -> np.ndarray:
    poses = _batch(20)
    if kind == "reflection":
        poses[17, 0, :3] *= -1.0
    elif kind == "nan":
        poses[17, 1, 3] = np.nan
    elif kind == "far":
        poses[17, 2, 3] = 2e6
    elif kind == "shear":
        poses[17, 0, 1] += 0.1
    elif kind == "row":
        poses[17, 3, 2] = 1.0
    poses[19, 0, 0] = 5.0  # a later bad pose: the first one is named
    return poses


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("reflection", r"^poses\[17\] is not a rigid transform: its rotation has determinant -1"),
        ("nan", r"^poses\[17\] is not a rigid transform: it has non-finite entries$"),
        ("far", r"^poses\[17\] is not a rigid transform: its translation reaches 2e\+06 m"),
        ("shear", r"^poses\[17\] is not a rigid transform: its rotation is not orthonormal"),
        ("row", r"^poses\[17\] is not a rigid transform: its last row is \[0\.0, 0\.0, 1\.0"),
    ],
)
def test_as_poses_names_the_first_bad_pose(kind: str, message: str) -> None:
    with pytest.raises(sc.InvalidPoseError, match=message):
        as_poses(_corrupt(kind))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            np.eye(4),
            r"^targets must be an \(N, 4, 4\) array of poses, got an array of shape "
            r"\(4, 4\) \(give a single pose as a list of one\)",
        ),
        (np.zeros((2, 3, 4)), r"^targets must be an \(N, 4, 4\) .* shape \(2, 3, 4\)"),
        ("poses", r"^targets must be poses, got 'poses'$"),
        (None, r"^targets must be poses, got None$"),
        ([np.eye(4), "eye"], r"^targets must be poses, got|^targets must be an \(N, 4, 4\)"),
        (
            np.ones((2, 4, 4), dtype=bool),
            r"(?s)^targets must be poses, got array\(.* \(booleans\)$",
        ),
        (
            np.ma.masked_array(_batch(2)),
            r"(?s)^targets must be poses, got masked_array\(.* \(a masked array",
        ),
        ([SE3([SE3(), SE3()])], r"^targets\[0\] must be a single pose, got an SE3 holding 2"),
    ],
)
def test_as_poses_refuses_what_is_not_a_batch(value: Any, message: str) -> None:
    with pytest.raises(sc.InvalidPoseError, match=message):
        as_poses(value, "targets")


def test_as_poses_takes_translations_up_to_the_limit() -> None:
    poses = _batch(2)
    poses[:, :3, 3] = [[MAX_TRANSLATION, -MAX_TRANSLATION, 0.0], [0.0, 0.0, -MAX_TRANSLATION]]
    np.testing.assert_array_equal(as_poses(poses), poses)
    poses[1, 0, 3] = np.nextafter(MAX_TRANSLATION, np.inf)
    with pytest.raises(sc.InvalidPoseError, match=r"^poses\[1\] is not a rigid transform"):
        as_poses(poses)


@given(st.lists(rigid_poses(), max_size=8), st.data())
def test_as_poses_agrees_with_the_single_pose_check(
    poses: list[np.ndarray], data: st.DataObject
) -> None:
    batch = np.array(poses).reshape(-1, 4, 4)
    np.testing.assert_array_equal(as_poses(batch), batch)
    for pose in poses:
        assert np.array_equal(sc.pose.as_pose(pose), pose)
    if poses:
        i = data.draw(st.integers(0, len(poses) - 1))
        j, k = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
        batch[i, j, k] += data.draw(st.sampled_from([1e-3, -0.5, 2.0]))
        with pytest.raises(sc.InvalidPoseError, match=rf"^poses\[{i}\] is not a rigid"):
            as_poses(batch)
        with pytest.raises(sc.InvalidPoseError):
            sc.pose.as_pose(batch[i])


def test_a_masked_array_is_not_a_pose() -> None:
    masked = np.ma.masked_array(np.eye(4), mask=np.eye(4, dtype=bool))
    for check in (sc.pose.as_pose, sc.pose.pose_values):
        with pytest.raises(
            sc.InvalidPoseError,
            match=r"(?s)^pose must be .* \(a masked array: fill or compress it first\)$",
        ):
            check(masked)
    with pytest.raises(
        sc.InvalidPoseError,
        match=r"(?s)^pose must be .* \(a masked array: fill or compress it first\)$",
    ):
        sc.Sphere(1.0, pose=masked)
    ball = sc.Sphere(1.0)
    with pytest.raises(
        sc.InvalidPoseError,
        match=r"(?s)^pose must be .* \(a masked array: fill or compress it first\)$",
    ):
        ball.pose = masked


def test_pending_base_switch_T_refuses_a_masked_array() -> None:
    # PENDING a change in _base.py (not owned here): the fast path of the ``T`` setter takes
    # any float64 (4, 4) object whose filled data is rigid, a masked array included. It should
    # take only ``type(value) is np.ndarray`` and leave the rest to pose_values.
    ball = sc.Sphere(1.0)
    with pytest.raises(
        sc.InvalidPoseError,
        match=r"(?s)^T must be .* \(a masked array: fill or compress it first\)$",
    ):
        ball.T = np.ma.masked_array(trans(1.0))
