"""Queries between leaf shapes: known answers, symmetry, the sign of d, inf_dist, bad arguments.

Meshes, hulls and octrees have their own known answers in ``test_mesh.py``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
import spatialgeometry as sg
from conftest import (
    LEAF_KINDS,
    UNSUPPORTED_ALL,
    UNSUPPORTED_DISTANCE,
    make_leaf,
    near,
    pose,
    quaternion_matrix,
    rigid_poses,
    rot,
    trans,
)
from hypothesis import assume, given

import spatialcontact as sc

ATOL = 1e-9


def check(
    a: sc.CollisionShape,
    b: sc.CollisionShape,
    d: float,
    p1: Any,
    p2: Any,
    d_tol: float = ATOL,
    p_tol: float = ATOL,
) -> None:
    """Check ``a.closest_point(b)`` against (d, p1, p2), and everything that follows from it:
    the swapped query, ``distance`` and ``iscollided`` (True exactly when d < 0 here)."""
    got_d, got_p1, got_p2 = near(a, b)
    assert got_d == pytest.approx(d, abs=d_tol)
    np.testing.assert_allclose(got_p1, p1, atol=p_tol)
    np.testing.assert_allclose(got_p2, p2, atol=p_tol)
    back_d, back_p1, back_p2 = near(b, a)
    assert back_d == pytest.approx(d, abs=d_tol)
    np.testing.assert_allclose(back_p1, p2, atol=p_tol)
    np.testing.assert_allclose(back_p2, p1, atol=p_tol)
    assert a.distance(b) == pytest.approx(d, abs=d_tol)
    assert a.iscollided(b) is (d < 0) and b.iscollided(a) is (d < 0) and (a & b) is (d < 0)


# --------------------------------------------------------------------------- known answers


def test_sphere_sphere() -> None:
    big = sc.Sphere(1.0)
    # centres 3 apart: 3 - 1 - 0.5 = 1.5, points on the x axis
    check(big, sc.Sphere(0.5, pose=trans(3.0)), 1.5, [1, 0, 0], [2.5, 0, 0])
    # centre at (2, 2, 1), |c| = 3: d = 1.5, points along c / 3 at radii 1 and 3 - 0.5
    c = np.array([2.0, 2.0, 1.0])
    check(big, sc.Sphere(0.5, pose=trans(*c)), 1.5, c / 3, c / 3 * 2.5)
    # centres 1.2 apart: 1.2 - 1.5 = -0.3; each point is on its own sphere, facing the other
    check(big, sc.Sphere(0.5, pose=trans(1.2)), -0.3, [1, 0, 0], [0.7, 0, 0])
    # concentric spheres do not crash: fully inside, d = 0 - 1 - 0.5 = -1.5
    assert big.distance(sc.Sphere(0.5)) == pytest.approx(-1.5)


def test_box_box() -> None:
    cube = sc.Cuboid([2, 2, 2])
    # corner to corner: (1, 1, 1) and (2.5, 2.5, 2.5), sqrt(3) * 1.5 apart
    check(cube, sc.Cuboid([1, 1, 1], pose=trans(3, 3, 3)), 1.5 * math.sqrt(3), [1] * 3, [2.5] * 3)
    # face to face, overlapping 0.2 along x: only x is determined for the points
    small = sc.Cuboid([1, 1, 1], pose=trans(1.3))
    d, p1, p2 = near(cube, small)
    assert d == pytest.approx(-0.2, abs=ATOL) and cube.iscollided(small)
    assert p1[0] == pytest.approx(1.0) and p2[0] == pytest.approx(0.8)
    # a cube turned 45° about z points an edge at x = sqrt(2): 3 - sqrt(2) - 0.5
    cube.T = rot("z", math.pi / 4)
    check(
        cube, sc.Sphere(0.5, pose=trans(3.0)), 3 - math.sqrt(2) - 0.5, [2**0.5, 0, 0], [2.5, 0, 0]
    )


def test_cylinder_along_and_across_its_axis() -> None:
    cyl = sc.Cylinder(0.5, 2.0)  # z in [-1, 1], radius 0.5
    # along the axis: 2 - 1 - 0.25 = 0.75
    check(cyl, sc.Sphere(0.25, pose=trans(0, 0, 2)), 0.75, [0, 0, 1], [0, 0, 1.75])
    # across it: 2 - 0.5 - 0.25 = 1.25
    check(cyl, sc.Sphere(0.25, pose=trans(2, 0, 0.3)), 1.25, [0.5, 0, 0.3], [1.75, 0, 0.3])
    # beyond the rim: from (0.5, 0, 1) to (1.5, 0, 2) is sqrt(2), minus 0.25
    check(
        cyl,
        sc.Sphere(0.25, pose=trans(1.5, 0, 2)),
        math.sqrt(2) - 0.25,
        [0.5, 0, 1],
        None
        or [
            1.5 - 0.25 / math.sqrt(2),
            0,
            2 - 0.25 / math.sqrt(2),
        ],
    )
    # laid along x: the cap is at x = 1, 2 - 1 - 0.25 = 0.75
    cyl.T = rot("y", math.pi / 2)
    check(cyl, sc.Sphere(0.25, pose=trans(2, 0, 0)), 0.75, [1, 0, 0], [1.75, 0, 0])


def test_capsule() -> None:
    cap = sc.Capsule(0.5, 2.0)  # segment z in [-1, 1], radius 0.5: top at 1.5
    check(cap, sc.Sphere(0.25, pose=trans(0, 0, 3)), 1.25, [0, 0, 1.5], [0, 0, 2.75])
    check(cap, sc.Sphere(0.25, pose=trans(2, 0, 0.5)), 1.25, [0.5, 0, 0.5], [1.75, 0, 0.5])
    # two crossed capsules: segments 1 apart (x = 0 and x = 1, z = 0), radii 0.5 + 0.3 = 0.8
    other = sc.Capsule(0.3, 2.0, pose=trans(1.0) @ rot("x", math.pi / 2))
    check(cap, other, 0.2, [0.5, 0, 0], [0.7, 0, 0])


def test_cone() -> None:
    cone = sc.Cone(1.0, 2.0)  # base z = -1 radius 1, apex (0, 0, 1)
    # above the apex: 3 - 1 - 0.5
    check(cone, sc.Sphere(0.5, pose=trans(0, 0, 3)), 1.5, [0, 0, 1], [0, 0, 2.5], 1e-6, 1e-6)
    # below the base: 3 - 1 - 0.5
    check(cone, sc.Sphere(0.5, pose=trans(0, 0, -3)), 1.5, [0, 0, -1], [0, 0, -2.5], 1e-6, 1e-6)
    # off the middle of the slant (0.5, 0, 0) along its outward normal (2, 0, 1) / sqrt(5),
    # 2 away: 2 - 0.5 = 1.5
    n = np.array([2.0, 0.0, 1.0]) / math.sqrt(5)
    centre = np.array([0.5, 0.0, 0.0]) + 2 * n
    ball = sc.Sphere(0.5, pose=trans(*centre))
    check(cone, ball, 1.5, [0.5, 0, 0], centre - 0.5 * n, 1e-6, 1e-6)


def test_ellipsoid() -> None:
    ell = sc.Ellipsoid([1.0, 2.0, 3.0])
    # the tips of the semi-axes; Coal's GJK answers these to about 1e-6 in d
    tol = {"d_tol": 1e-5, "p_tol": 2e-3}
    check(ell, sc.Sphere(0.5, pose=trans(4, 0, 0)), 2.5, [1, 0, 0], [3.5, 0, 0], **tol)
    check(ell, sc.Sphere(0.5, pose=trans(0, 5, 0)), 2.5, [0, 2, 0], [0, 4.5, 0], **tol)
    check(ell, sc.Sphere(0.5, pose=trans(0, 0, -5)), 1.5, [0, 0, -3], [0, 0, -4.5], **tol)
    # rotated 90° about x, the 3 m semi-axis lies along -y: 5 - 3 - 0.5
    ell.T = rot("x", math.pi / 2)
    check(ell, sc.Sphere(0.5, pose=trans(0, -5, 0)), 1.5, [0, -3, 0], [0, -4.5, 0], **tol)


def test_sphere_halfspace() -> None:
    floor = sc.HalfSpace()  # z <= 0
    # 2 - 0.5 = 1.5 above; the half-space's point is straight below the centre
    check(sc.Sphere(0.5, pose=trans(1, 2, 2)), floor, 1.5, [1, 2, 1.5], [1, 2, 0])
    # 0.2 - 0.5 = -0.3: sinking
    check(sc.Sphere(0.5, pose=trans(1, 2, 0.2)), floor, -0.3, [1, 2, -0.3], [1, 2, 0])
    # far below the surface: -3 - 0.5 = -3.5
    assert floor.distance(sc.Sphere(0.5, pose=trans(0, 0, -3))) == pytest.approx(-3.5)
    # tilted: {x + z <= 0}, unit normal (1, 0, 1) / sqrt 2; a sphere at (2, 0, 2) is
    # 2 sqrt(2) - 0.5 away, its nearest point at (2, 0, 2) - 0.5 n
    tilted = sc.HalfSpace([1, 0, 1], 0.0)
    n = np.array([1.0, 0.0, 1.0]) / math.sqrt(2)
    check(
        tilted,
        sc.Sphere(0.5, pose=trans(2, 0, 2)),
        2 * 2**0.5 - 0.5,
        [0, 0, 0],
        [2, 0, 2] - 0.5 * n,
    )
    # the same set, given by its pose instead: z <= 0 turned 45° about y
    posed = sc.HalfSpace(pose=rot("y", math.pi / 4))
    assert posed.distance(sc.Sphere(0.5, pose=trans(2, 0, 2))) == pytest.approx(2 * 2**0.5 - 0.5)


def test_a_cuboid_on_a_halfspace() -> None:
    # A unit cube turned 45° about z still has its bottom face at z = c - 0.5.
    floor = sc.HalfSpace([0, 0, 1], 1.0)  # z <= 1
    box = sc.Cuboid(None, pose=trans(0, 0, 1.4) @ rot("z", math.pi / 4))
    assert box.distance(floor) == pytest.approx(-0.1)
    assert box.iscollided(floor)
    box.T = trans(0, 0, 1.6)
    assert box.distance(floor) == pytest.approx(0.1)
    assert not box.iscollided(floor)


def test_halfspaces_collide_but_have_no_distance() -> None:
    # z <= 0 and z >= 1 are disjoint; z <= 0 and x <= 0 meet.
    a = sc.HalfSpace([0, 0, 1], 0.0)
    assert not a.iscollided(sc.HalfSpace([0, 0, -1], -1.0))
    assert a.iscollided(sc.HalfSpace([1, 0, 0], 0.0))


# ------------------------------------------------------------------------------- symmetry

ALL_PAIRS = list(itertools.product(LEAF_KINDS, LEAF_KINDS))
_TA = rot("y", 0.3) @ rot("x", 0.2)
_TB_APART = trans(0.3, 0.2, 2.0) @ rot("x", math.pi - 0.2) @ rot("z", 0.5)
_TB_OVERLAP = trans(0.15, 0.1, 0.25) @ rot("x", math.pi - 0.2) @ rot("z", 0.5)
# Coal's GJK/EPA converges to about 1e-6 in d; witness points on curved surfaces move more.
D_TOL, P_TOL = 1e-5, 1e-2


def _swap_check(a: sc.CollisionShape, b: sc.CollisionShape) -> float:
    d1, p1, q1 = near(a, b)
    d2, p2, q2 = near(b, a)
    assert d1 == pytest.approx(d2, abs=D_TOL)
    np.testing.assert_allclose(p1, q2, atol=P_TOL)
    np.testing.assert_allclose(q1, p2, atol=P_TOL)
    assert float(np.linalg.norm(q1 - p1)) == pytest.approx(abs(d1), abs=D_TOL)
    assert a.distance(b) == pytest.approx(b.distance(a), abs=D_TOL)
    assert a.iscollided(b) == b.iscollided(a) == (a & b) == (b & a)
    return d1


@pytest.mark.parametrize(
    ("kind_a", "kind_b"), [p for p in ALL_PAIRS if p not in UNSUPPORTED_DISTANCE]
)
def test_swapping_separated_shapes(kind_a: str, kind_b: str) -> None:
    # The second shape 2 m up and turned upside down (so a half-space there faces away).
    a, b = make_leaf(kind_a, _TA), make_leaf(kind_b, _TB_APART)
    d = _swap_check(a, b)
    assert d > 0.1 and not a.iscollided(b)


@pytest.mark.parametrize(
    ("kind_a", "kind_b"),
    [
        p
        for p in ALL_PAIRS
        if p not in UNSUPPORTED_DISTANCE and p not in {("Mesh", "Mesh"), ("OcTree", "OcTree")}
    ],
)
def test_swapping_overlapping_shapes(kind_a: str, kind_b: str) -> None:
    # The second shape 0.25 m up: every pair overlaps (a mesh's triangles cross the other).
    a, b = make_leaf(kind_a, _TA), make_leaf(kind_b, _TB_OVERLAP)
    d = _swap_check(a, b)
    assert d < 0 and a.iscollided(b)


def test_overlapping_meshes_and_octrees() -> None:
    # Two crossing hollow meshes are at minus the depth of their deepest triangle contact (the
    # distance query alone reads 0: meshes have no inside); two octrees report the depth of
    # the first cell pair Coal finds, which depends on the order, so only its sign is the same
    # both ways.
    m1, m2 = make_leaf("Mesh", _TA), make_leaf("Mesh", _TB_OVERLAP)
    assert m1.distance(m2) == m1.contacts(m2)[0].penetration_depth < 0.0
    assert m2.distance(m1) == m2.contacts(m1)[0].penetration_depth < 0.0
    assert m1.iscollided(m2) and m2.iscollided(m1)
    o1, o2 = make_leaf("OcTree", _TA), make_leaf("OcTree", _TB_OVERLAP)
    assert o1.distance(o2) < 0 and o2.distance(o1) < 0
    assert o1.iscollided(o2) and o2.iscollided(o1)


@pytest.mark.parametrize("query", ["iscollided", "closest_point", "distance", "contacts"])
@pytest.mark.parametrize(("kind_a", "kind_b"), sorted(UNSUPPORTED_ALL))
def test_ellipsoid_and_octree_have_no_queries(kind_a: str, kind_b: str, query: str) -> None:
    a, b = make_leaf(kind_a), make_leaf(kind_b, trans(3.0))
    with pytest.raises(sc.UnsupportedPairError, match=r"between an (Ellipsoid|OcTree) and an? "):
        getattr(a, query)(b)
    with pytest.raises(
        TypeError, match=r"Ellipsoid\(radii=.*OcTree\(points=|OcTree\(.*Ellipsoid\("
    ):
        getattr(a, query)(b)
    # both shapes still answer queries with other partners
    probe = sc.Sphere(0.1, pose=trans(0, 0, 5))
    assert a.distance(probe) > 3 and b.distance(probe) > 3


@pytest.mark.parametrize("query", ["closest_point", "distance", "contacts"])
def test_two_halfspaces_have_no_distance(query: str) -> None:
    a, b = sc.HalfSpace(), sc.HalfSpace([1, 0, 0], 2.0)
    with pytest.raises(sc.UnsupportedPairError, match=r"between a HalfSpace and a HalfSpace"):
        getattr(a, query)(b)
    with pytest.raises(sc.UnsupportedPairError, match=r"between a HalfSpace and a HalfSpace"):
        getattr(b, query)(a)
    assert a.iscollided(b) and b.iscollided(a)


# ---------------------------------------------------------------- iscollided vs sign of d

_SUPPORTED_UNORDERED = [
    p
    for p in itertools.combinations_with_replacement(LEAF_KINDS, 2)
    if p not in UNSUPPORTED_DISTANCE
]
_shapes: dict[tuple[str, int], sc.CollisionShape] = {}


def _reused(kind: str, slot: int) -> sc.CollisionShape:
    """One shape per kind and slot, made once and moved by every example."""
    if (kind, slot) not in _shapes:
        _shapes[kind, slot] = make_leaf(kind)
    return _shapes[kind, slot]


@pytest.mark.parametrize(("kind_a", "kind_b"), _SUPPORTED_UNORDERED)
@given(Ta=rigid_poses(reach=0.8), Tb=rigid_poses(reach=0.8))
def test_iscollided_agrees_with_the_sign_of_d(
    kind_a: str, kind_b: str, Ta: np.ndarray, Tb: np.ndarray
) -> None:
    a, b = _reused(kind_a, 0), _reused(kind_b, 1)
    a.T, b.T = Ta, Tb
    d, p1, p2 = near(a, b, math.inf)
    assume(abs(d) > 1e-6)  # on the touching boundary either answer is right
    assert a.iscollided(b) == (d < 0) == b.iscollided(a)
    assert a.distance(b) == d
    if kind_a != "OcTree" or kind_b != "OcTree":  # two octrees have no contacts
        assert (len(a.contacts(b)) > 0) == (d < 0)
    if d > 0:  # separated: the witness points are d apart
        assert float(np.linalg.norm(p2 - p1)) == pytest.approx(d, abs=1e-9)


# Deep overlaps in axis-aligned poses (quaternion w, x, y, z; translation) that Coal 3.0.3's
# collision test without contact computation answered "no collision" for.
ALIGNED_OVERLAPS = [
    ("Cuboid", "Cuboid", (0.5, 0, 0, 0.5), (0.1, 0, 0), (1, 0, 0, 0.5), (0.3, 0, 0)),
    ("Cuboid", "Capsule", (-1, -1, -1, 1), (0.3, -0.25, 0.3), (-1, 1, 1, 0), (0.3, 0, 0)),
    ("Cone", "Sphere", (-1, 0, 0, 1), (-0.25, -0.25, 0.1), (-1, 0, 0, 0), (0, -0.25, 0.1)),
    ("Sphere", "Ellipsoid", (0, 0, 0, 1), (0, 0, 0), (0, 0, 0, 1), (0, 0, 0)),
]


@pytest.mark.parametrize(("kind_a", "kind_b", "qa", "ta", "qb", "tb"), ALIGNED_OVERLAPS)
def test_aligned_deep_overlaps_collide(
    kind_a: str, kind_b: str, qa: Any, ta: Any, qb: Any, tb: Any
) -> None:
    a = make_leaf(kind_a, pose(quaternion_matrix(*qa), ta))
    b = make_leaf(kind_b, pose(quaternion_matrix(*qb), tb))
    assert a.distance(b) < -0.4 and b.distance(a) < -0.4
    assert a.iscollided(b) and b.iscollided(a)
    assert len(a.contacts(b)) == 1 and len(b.contacts(a)) == 1


# Two copies of one octree, the second 1.2e-7 above the first (both turned the same way): they
# overlap almost wholly (d = -0.1, a cell's side). Coal 3.0.3's collision test of two octrees
# said "no collision" here (and reports overlaps that are not there with contacts on), so
# spatialcontact answers octree pairs from their signed distance.
def test_nearly_coincident_octrees_collide() -> None:
    rotation = np.array([[1.0, -2.0, 2.0], [2.0, -1.0, -2.0], [2.0, 2.0, 1.0]]) / 3.0
    a = make_leaf("OcTree", pose(rotation, (0.0, 0.0, 0.0)))
    b = make_leaf("OcTree", pose(rotation, (0.0, 0.0, 1.2e-7)))
    assert a.distance(b) < -0.09
    assert a.iscollided(b) and b.iscollided(a)
    b.T = pose(rotation, (5.0, 0.0, 0.0))
    assert not a.iscollided(b) and not b.iscollided(a)


# -------------------------------------------------------------------------------- inf_dist


def _unit_spheres(gap_x: float) -> tuple[sc.Sphere, sc.Sphere]:
    """Unit spheres with centres ``gap_x`` apart: d = gap_x - 2 (exact for these numbers)."""
    return sc.Sphere(1.0), sc.Sphere(1.0, pose=trans(gap_x))


@pytest.mark.parametrize("cached", [False, True])
def test_inf_dist_cut_off(cached: bool) -> None:
    a, b = _unit_spheres(3.0)  # d = 1 exactly
    if cached:
        a.closest_point(b)
    assert a.closest_point(b) == (1.0, pytest.approx([1, 0, 0]), pytest.approx([2, 0, 0]))
    assert a.closest_point(b, inf_dist=1.0)[0] == 1.0  # d == inf_dist is returned
    assert a.closest_point(b, inf_dist=1)[0] == 1.0
    assert a.closest_point(b, inf_dist=0.999) == (None, None, None)
    assert a.closest_point(b, inf_dist=np.float64(2.0))[0] == 1.0
    assert a.closest_point(b, inf_dist=np.int64(1))[0] == 1.0
    assert a.closest_point(b, inf_dist=math.inf)[0] == 1.0
    assert a.closest_point(b, inf_dist=-math.inf) == (None, None, None)
    assert a.closest_point(b, inf_dist=0) == (None, None, None)


@pytest.mark.parametrize("cached", [False, True])
def test_negative_inf_dist_asks_for_a_depth(cached: bool) -> None:
    a, b = _unit_spheres(1.5)  # d = -0.5
    if cached:
        a.closest_point(b)
    assert a.closest_point(b, inf_dist=-0.4)[0] == -0.5
    assert a.closest_point(b, inf_dist=-0.5)[0] == -0.5
    assert a.closest_point(b, inf_dist=-0.6) == (None, None, None)
    assert b.closest_point(a, inf_dist=-0.6) == (None, None, None)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (math.nan, sc.InvalidArgumentError, r"^inf_dist must not be NaN, got nan$"),
        (
            np.float64("nan"),
            sc.InvalidArgumentError,
            r"^inf_dist must not be NaN, got np\.float64\(nan\)$",
        ),
        ("1.0", sc.ShapeTypeError, r"^inf_dist must be a real number, got '1\.0'$"),
        (None, sc.ShapeTypeError, r"^inf_dist must be a real number, got None$"),
        (True, sc.ShapeTypeError, r"^inf_dist must be a real number, got True$"),
        ([1.0], sc.ShapeTypeError, r"^inf_dist must be a real number, got \[1\.0\]$"),
        (1 + 2j, sc.ShapeTypeError, r"^inf_dist must be a real number, got \(1\+2j\)$"),
    ],
)
@pytest.mark.parametrize("cached", [False, True])
def test_bad_inf_dist(value: Any, error: type, message: str, cached: bool) -> None:
    a, b = _unit_spheres(3.0)
    if cached:
        a.closest_point(b)
    with pytest.raises(error, match=message):
        a.closest_point(b, inf_dist=value)
    assert a.closest_point(b)[0] == 1.0  # nothing was left half-done


# ------------------------------------------------------------------------ bad arguments

NOT_SHAPES = [
    pytest.param(3, r"got int: 3$", id="int"),
    pytest.param(None, r"got NoneType: None$", id="None"),
    pytest.param(np.zeros(3), r"got ndarray: array\(\[0\., 0\., 0\.\]\)$", id="ndarray"),
    pytest.param(sg.Sphere(1.0), r"got Sphere: Sphere\(radius=1\.0, ", id="spatialgeometry"),
    pytest.param(sc.Sphere, r"got type: <class 'spatialcontact\.shapes\.Sphere'>$", id="class"),
]


@pytest.mark.parametrize(("value", "message"), NOT_SHAPES)
@pytest.mark.parametrize("query", ["iscollided", "closest_point", "distance", "contacts"])
def test_queries_refuse_what_is_not_a_shape(value: Any, message: str, query: str) -> None:
    s = sc.Sphere(1.0)
    with pytest.raises(
        sc.ShapeTypeError,
        match=r"^other must be a CollisionShape or CollisionShapeGroup, " + message,
    ):
        getattr(s, query)(value)
    with pytest.raises(TypeError):
        getattr(s, query)(value)
    assert s.distance(sc.Sphere(1.0, pose=trans(3.0))) == 1.0


def test_and_with_a_non_shape_is_a_type_error() -> None:
    s = sc.Sphere(1.0)
    with pytest.raises(TypeError, match=r"unsupported operand"):
        s & 3
    with pytest.raises(TypeError, match=r"unsupported operand"):
        None & s  # type: ignore[operator]


@pytest.mark.parametrize("query", ["iscollided", "closest_point", "distance", "contacts"])
@pytest.mark.parametrize("side", ["self", "other"])
def test_queries_refuse_collision_free_shapes(query: str, side: str) -> None:
    ghost = sc.Sphere(1.0, collision=False, name="ghost")
    real = sc.Sphere(1.0, pose=trans(1.0))
    a, b = (ghost, real) if side == "self" else (real, ghost)
    message = rf"^{side} Sphere\(radius=1\.0, name='ghost', .*has collision=False"
    with pytest.raises(sc.CollisionDisabledError, match=message):
        getattr(a, query)(b)
    with pytest.raises(ValueError, match=r"collision=False"):
        getattr(a, query)(b)
    with pytest.raises(ValueError, match=r"collision=False"):
        a & b
    assert real.iscollided(sc.Sphere(1.0))


def test_a_collision_free_shape_in_a_group_is_left_out() -> None:
    # The group's only collision leaf is the sphere at x = 5: 5 - 1 - 1 = 3 away.
    group = sc.CollisionShapeGroup(
        [sc.Sphere(1.0, collision=False), sc.Sphere(1.0, pose=trans(5.0))]
    )
    probe = sc.Sphere(1.0)
    assert not group.iscollided(probe)
    assert group.distance(probe) == pytest.approx(3.0)
