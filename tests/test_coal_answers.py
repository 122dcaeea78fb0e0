"""Wrong answers of Coal 3.0.3 near touching and degenerate placements, and their repairs.

Two groups of tests:

- Public-API regressions (``a.distance(b)``, ``closest_point``, ``iscollided``, ``contacts``,
  both argument orders) with answers worked out by hand. They pass once ``query.py`` calls
  :mod:`spatialcontact._coal.quirks` (see its module docstring); before that they fail.
- Direct tests of the functions in :mod:`spatialcontact._coal.quirks`, which pass on their own.

Cases that run Coal's octree code or EPA's failure branch run in a child process, so a crash
fails one test instead of killing the run.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import coal
import numpy as np
import pytest
from conftest import quaternion_matrix
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spatialmath import SE3

import spatialcontact as sc
from spatialcontact import _closed_form as cf
from spatialcontact._coal import quirks

COAL_303 = coal.__version__ == "3.0.3"

# Two exactly aligned boxes: Coal 3.0.3's box support inflates one side by 1e-10 * halfSide,
# so its own good answers are within this of the truth (per metre of box).
BIAS = 2e-10

# Sphere centred exactly on a vertex of a convex hull: Coal 3.0.3 gives -1.797e308 with the
# sphere first (found by a random search; the centre is the hull's vertex to the last bit).
HULL_VERTEX_CASES = [
    (
        [[0.2, -0.9, 0.2], [-0.6, -0.3, 1.4], [-1.1, -1.4, 0.8], [-0.5, -0.2, 0.5],
         [0.3, -0.3, -0.3], [-0.8, -1.2, 0.1], [1.1, 1.8, -1.2], [-0.1, -0.6, 1.3]],
        [[-1.0, -1.2246467991473532e-16, 0.0, 0.0], [1.2246467991473532e-16, -1.0, 0.0, 0.0],
         [0.0, 0.0, 1.0, -1.0], [0.0, 0.0, 0.0, 1.0]],
        [-1.1000000000000003, -1.7999999999999998, -2.2],
    ),
    (
        [[-0.0, 0.8, -0.7], [-0.2, 0.3, 0.7], [-0.6, 0.3, 0.1], [-0.1, 0.7, 1.5],
         [-1.6, 0.2, -1.1], [0.4, 0.3, 2.1], [0.3, 2.4, 1.3], [1.1, -0.1, -2.0]],
        [[-1.8369701987210297e-16, 1.0, 0.0, 0.10000000000000002],
         [-1.0, -1.8369701987210297e-16, 0.0, 0.09999999999999999],
         [0.0, 0.0, 1.0, 0.3], [0.0, 0.0, 0.0, 1.0]],
        [-1.942890293094024e-16, -1.0, -1.7],
    ),
]  # fmt: skip

CUBE_CORNERS = np.array(list(itertools.product([-0.5, 0.5], repeat=3)))


def in_child(code: str) -> Any:
    """Run ``code`` in a fresh interpreter and return the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"child process failed ({done.returncode}):\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def both_orders(a: Any, b: Any) -> list[tuple[Any, Any]]:
    return [(a, b), (b, a)]


def tf(t: Any = (0.0, 0.0, 0.0), R: Any = None) -> Any:
    return coal.Transform3s(np.eye(3) if R is None else np.asarray(R, dtype=np.float64),
                            np.asarray(t, dtype=np.float64))  # fmt: skip


def box(*sides: float) -> Any:
    g = coal.Box(*sides)
    g.computeLocalAABB()
    return g


def coal_distance(g1: Any, tf1: Any, g2: Any, tf2: Any) -> float:
    result = coal.DistanceResult()
    coal.distance(g1, tf1, g2, tf2, coal.DistanceRequest(), result)
    return float(result.min_distance)


def cube_mesh() -> Any:
    faces = []
    for axis in range(3):
        for side in (-0.5, 0.5):
            quad = [i for i, p in enumerate(CUBE_CORNERS) if p[axis] == side]
            a, b, c, d = sorted(quad)
            faces += [[a, b, d], [a, d, c]]
    return CUBE_CORNERS, np.array(faces)


# ===================================================================== public API (bug A)


@pytest.mark.parametrize("size, gap", [(10.0, 5e-7), (1.0, 1e-6)])
def test_aligned_cubes_apart_by_less_than_gjk_tolerance(size: float, gap: float) -> None:
    """Coal 3.0.3: -20.0000005 (10 m cubes, both orders) and -1.797e308 / 0.0 (unit cubes)."""
    a = sc.Cuboid([size] * 3)
    b = sc.Cuboid([size] * 3, pose=SE3.Trans(size + gap, 0.0, 0.0))
    for x, y in both_orders(a, b):
        assert x.distance(y) == pytest.approx(gap, abs=BIAS * size)
        assert not x.iscollided(y)
        assert len(x.contacts(y)) == 0
    d, p1, p2 = a.closest_point(b)
    assert d is not None and p1 is not None and p2 is not None
    assert d == pytest.approx(gap, abs=BIAS * size)
    assert p1[0] == pytest.approx(size / 2, abs=BIAS * size)  # on a's +x face
    assert p2[0] == pytest.approx(size / 2 + gap, abs=BIAS * size)  # on b's -x face
    assert np.all(np.abs(p1[1:]) <= size / 2) and np.allclose(p1[1:], p2[1:], atol=1e-12)
    d2, q1, q2 = b.closest_point(a)
    assert d2 is not None and q1 is not None and q2 is not None
    assert d2 == pytest.approx(d, abs=BIAS * size)
    assert np.allclose(q1, p2, atol=1e-9) and np.allclose(q2, p1, atol=1e-9)


@pytest.mark.parametrize("offset", [0.1, 0.3, 0.5, 0.75])
def test_unit_cubes_one_micron_apart_sideways(offset: float) -> None:
    """Coal 3.0.3: -2.000001 with one argument order, 0.0 with the other."""
    a = sc.Cuboid([1.0, 1.0, 1.0])
    b = sc.Cuboid([1.0, 1.0, 1.0], pose=SE3.Trans(1.0 + 1e-6, offset, 0.0))
    answers = [x.distance(y) for x, y in both_orders(a, b)]
    assert answers == pytest.approx([1e-6, 1e-6], abs=BIAS)
    assert [x.iscollided(y) for x, y in both_orders(a, b)] == [False, False]
    assert [len(x.contacts(y)) for x, y in both_orders(a, b)] == [0, 0]


def test_aligned_cubes_within_a_security_margin() -> None:
    a = sc.Cuboid([10.0] * 3)
    b = sc.Cuboid([10.0] * 3, pose=SE3.Trans(10.0 + 5e-7, 0.0, 0.0))
    (c,) = a.contacts(b, security_margin=1e-6)
    assert c.penetration_depth == pytest.approx(5e-7, abs=BIAS * 10)
    assert c.normal.tolist() == pytest.approx([1.0, 0.0, 0.0], abs=1e-9)
    (r,) = b.contacts(a, security_margin=1e-6)
    assert r.normal.tolist() == pytest.approx([-1.0, 0.0, 0.0], abs=1e-9)


@pytest.mark.parametrize("gap", [0.0, -5e-7, -1e-3])
def test_aligned_cubes_touching_or_overlapping(gap: float) -> None:
    a = sc.Cuboid([10.0] * 3)
    b = sc.Cuboid([10.0] * 3, pose=SE3.Trans(10.0 + gap, 2.0, -1.0))
    for x, y in both_orders(a, b):
        assert x.distance(y) == pytest.approx(gap, abs=BIAS * 10)
        assert x.iscollided(y)
        (c,) = x.contacts(y)
        assert c.penetration_depth == pytest.approx(gap, abs=BIAS * 10)
        assert abs(c.normal[0]) == pytest.approx(1.0)


def test_thin_aligned_boxes_get_no_plausible_garbage() -> None:
    """Coal 3.0.3: -1.0000000001 for boxes 0.8 µm apart (floor -1.52, so only box_ceiling's
    aligned_boxes check catches it)."""
    a = sc.Cuboid([1.8, 3.0, 1.8])
    b = sc.Cuboid([0.4, 1.0, 0.6], pose=SE3.Trans(-0.1, 2.0000008, 0.0))
    for x, y in both_orders(a, b):
        assert x.distance(y) == pytest.approx(8e-7, abs=BIAS * 3)
        assert not x.iscollided(y)
        assert len(x.contacts(y)) == 0


@pytest.mark.parametrize("case", range(len(HULL_VERTEX_CASES)))
def test_sphere_centred_on_a_hull_vertex(case: int) -> None:
    """Coal 3.0.3: -1.797e308 with the sphere first, and then no contact either."""
    points, pose, centre = HULL_VERTEX_CASES[case]
    out = in_child(
        f"""
        import json, numpy as np, spatialcontact as sc
        from spatialmath import SE3
        hull = sc.ConvexHull({points!r}, pose=np.array({pose!r}))
        ball = sc.Sphere(0.5, pose=SE3.Trans(*{centre!r}))
        out = []
        for x, y in ((hull, ball), (ball, hull)):
            cs = x.contacts(y)
            out.append([x.distance(y), bool(x.iscollided(y)), [c.penetration_depth for c in cs]])
        print(json.dumps(out))
        """
    )
    for d, hit, depths in out:
        assert d == pytest.approx(-0.5, abs=1e-9)  # centre on the surface: -radius
        assert hit
        assert depths == pytest.approx([-0.5], abs=1e-9)


def test_a_cone_below_the_supported_size_is_refused() -> None:
    """Cone(1e-6, 1), whose tip Coal 3.0.3 answers 0.0 for near a face, is out of range."""
    with pytest.raises(sc.InvalidShapeError, match=r"radius is too small, got 1e-06"):
        sc.Cone(1e-6, 1.0)


@pytest.mark.parametrize("gap", [5e-7, 1e-7, 1e-9, -5e-7])
def test_thin_cone_tip_near_a_face(gap: float) -> None:
    """Coal 3.0.3: exactly 0.0 for the tip of Cone(1e-4, 1) 1 nm-0.5 µm from a face, both
    orders."""
    cone = sc.Cone(1e-4, 1.0)  # apex at z = 0.5, the thinnest cone of the supported aspect
    for other in (
        sc.Cuboid([1.0, 1.0, 1.0], pose=SE3.Trans(0.2, -0.1, 1.0 + gap)),
        sc.ConvexHull(CUBE_CORNERS, pose=SE3.Trans(0.2, -0.1, 1.0 + gap)),
    ):
        for x, y in both_orders(cone, other):
            assert x.distance(y) == pytest.approx(gap, abs=1e-9)
            assert x.iscollided(y) == (gap <= 0.0)
            assert (len(x.contacts(y)) > 0) == (gap <= 0.0)


# ===================================================================== public API (bug B)


@pytest.mark.parametrize("centre", [(0.5, 0.5, 0.5), (0.5, 0.5, 0.0), (0.5, -0.5, 0.5)])
def test_sphere_centred_on_a_cube_mesh_vertex_or_edge(centre: tuple[float, ...]) -> None:
    """Coal 3.0.3: every normal zero; the 0.1 µm axis moves left some undefined, so contacts
    was empty with the sphere first and held one contact with the mesh first."""
    vertices, faces = cube_mesh()
    mesh = sc.Mesh.from_arrays(vertices, faces)
    ball = sc.Sphere(0.1, pose=SE3.Trans(*centre))
    found = {}
    for x, y in both_orders(mesh, ball):
        assert x.iscollided(y)
        cs = x.contacts(y, max_contacts=100)
        assert len(cs) > 0
        for c in cs:
            assert np.linalg.norm(c.normal) == pytest.approx(1.0)
            assert c.penetration_depth == pytest.approx(-0.1, abs=1e-6)
        found[x is mesh] = cs
    assert len(found[True]) == len(found[False])
    assert found[True][0].normal.tolist() == pytest.approx(
        (-found[False][0].normal).tolist(), abs=1e-6
    )


def test_sphere_centred_on_octree_cell_corners() -> None:
    """Coal 3.0.3: NaN normals for the cells whose corner holds the centre, then no contact
    while iscollided is True (25 of 300 corners of a translated octree)."""
    out = in_child(
        """
        import itertools, json, numpy as np, spatialcontact as sc
        from spatialmath import SE3
        cells = np.array(list(itertools.product([0.05, 0.15], repeat=3)))
        rng = np.random.default_rng(0)
        out = []
        for trial in range(60):
            pose = SE3.Trans(*rng.normal(size=3))
            tree = sc.OcTree(cells, 0.1, pose=pose)
            corner = np.array(list(itertools.product([0.0, 0.1, 0.2], repeat=3)))[trial % 27]
            centre = (pose.A @ [*corner, 1.0])[:3]
            ball = sc.Sphere([0.03, 0.1, 0.3][trial % 3], pose=SE3.Trans(*centre))
            out.append([[bool(x.iscollided(y)), len(x.contacts(y, max_contacts=64))]
                        for x, y in ((tree, ball), (ball, tree))])
        print(json.dumps(out))
        """
    )
    for (hit1, n1), (hit2, n2) in out:
        assert hit1 and hit2
        assert n1 > 0 and n2 > 0
        assert n1 == n2


# ================================================================ public API (property)

_ROTATIONS = [
    np.array(p, dtype=np.float64)
    for p in (
        np.diag(signs)[list(perm)]
        for perm in itertools.permutations(range(3))
        for signs in itertools.product([-1.0, 1.0], repeat=3)
    )
    if np.linalg.det(p) > 0
]


@st.composite
def aligned_pairs(draw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Two boxes with parallel axes, ``gap`` apart along one axis, faces overlapping."""
    half = st.floats(0.01, 5.0)
    h1 = np.array([draw(half) for _ in range(3)])
    h2 = np.array([draw(half) for _ in range(3)])
    rot1 = _ROTATIONS[draw(st.integers(0, 23))]
    rel = _ROTATIONS[draw(st.integers(0, 23))]
    sign = draw(st.sampled_from([-1.0, 1.0]))
    gap = draw(
        st.one_of(
            st.just(0.0),
            st.floats(1e-12, 1e-5).map(lambda g: sign * g),
            st.floats(1e-5, 1e-2).map(lambda g: sign * g),
        )
    )
    h2_in_1 = np.abs(rel) @ h2
    k = draw(st.integers(0, 2))
    side = draw(st.sampled_from([-1.0, 1.0]))
    local = np.array([draw(st.floats(-0.9, 0.9)) for _ in range(3)]) * np.minimum(h1, h2_in_1)
    local[k] = side * (h1[k] + h2_in_1[k] + gap)
    origin = np.array([draw(st.floats(-3.0, 3.0)) for _ in range(3)])
    pose1 = np.eye(4)
    pose1[:3, :3], pose1[:3, 3] = rot1, origin
    pose2 = np.eye(4)
    pose2[:3, :3], pose2[:3, 3] = rot1 @ rel, origin + rot1 @ local
    return 2 * h1, 2 * h2, pose1, pose2, gap


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aligned_pairs())
def test_property_near_touching_aligned_boxes(
    pair: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float],
) -> None:
    sides1, sides2, pose1, pose2, gap = pair
    a = sc.Cuboid(sides1, pose=pose1)
    b = sc.Cuboid(sides2, pose=pose2)
    size = float(max(sides1.max(), sides2.max()))
    tolerance = 1e-9 * (1.0 + size)
    answers = [x.distance(y) for x, y in both_orders(a, b)]
    assert answers[0] == pytest.approx(gap, abs=tolerance)
    assert answers[1] == pytest.approx(answers[0], abs=tolerance)
    if abs(gap) > tolerance:  # clear of Coal's 1e-10 inflated box faces
        for x, y in both_orders(a, b):
            hit = x.iscollided(y)
            assert hit == (gap < 0.0)
            assert (len(x.contacts(y)) > 0) == hit


# ============================================================ quirks: detection values


def test_floor_is_the_depth_bound_not_the_smaller_radius() -> None:
    big, small = box(10.0, 10.0, 10.0), coal.Sphere(0.1)
    small.computeLocalAABB()
    floor = quirks.distance_floor(big, small)
    assert -5.1 * (1 + 2e-6) < floor < -5.1  # min(m1 + r2, m2 + r1), a little wider
    assert quirks.distance_floor(small, big) == floor
    d = coal_distance(big, tf(), small, tf())  # sphere at the box's centre: legitimately -5.1
    assert d == pytest.approx(-5.1)
    assert d < -0.1  # "minus the smaller bounding radius" would call it impossible
    assert not quirks.is_suspect(d, *quirks.answer_guard(big, small))
    cubes = quirks.distance_floor(box(10, 10, 10), box(10, 10, 10))
    assert cubes == pytest.approx(-(5.0 + math.sqrt(75.0)), rel=2e-6)
    assert cubes > -20.0000005


def test_guard_by_pair_kind() -> None:
    vertices, faces = cube_mesh()
    mesh = coal.BVHModelOBBRSS()
    mesh.beginModel(len(faces), len(vertices))
    mesh.addVertices(vertices.astype(np.float64))
    mesh.addTriangles(faces.astype(np.int64))
    mesh.endModel()
    mesh.computeLocalAABB()
    sphere, capsule = coal.Sphere(0.2), coal.Capsule(0.1, 0.3)
    for g in (sphere, capsule):
        g.computeLocalAABB()
    half = coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)
    gjk = [(box(1, 1, 1), box(1, 2, 3)), (box(1, 1, 1), capsule), (mesh, box(1, 1, 1))]
    exact = [(sphere, box(1, 1, 1)), (sphere, capsule), (mesh, sphere), (mesh, mesh)]
    for g1, g2 in gjk:
        floor, shallow, zero, _ = quirks.answer_guard(g1, g2)
        assert floor < 0.0 and -1e-6 < shallow < 0.0 and zero == 0.0
        assert quirks.answer_guard(g2, g1) == quirks.answer_guard(g1, g2)
    for g1, g2 in exact:
        floor, shallow, zero, _ = quirks.answer_guard(g1, g2)
        assert floor < 0.0 and shallow == math.inf and math.isnan(zero)
    assert quirks.answer_guard(mesh, mesh)[0] == quirks.FLOOR_UNBOUNDED
    assert quirks.answer_guard(half, box(1, 1, 1))[0] == quirks.FLOOR_UNBOUNDED
    assert quirks.answer_guard(box(1, 1, 1), box(2, 2, 2))[3] == 0.0  # the box ceiling
    assert quirks.answer_guard(box(1, 1, 1), box(2, 2, 2), boxes=False)[3] == -math.inf
    assert quirks.answer_guard(box(1, 1, 1), capsule)[3] == -math.inf


@pytest.mark.parametrize(
    "d, suspect",
    [
        (-20.0000005005, True),
        (-1.7976931348623157e308, True),
        (math.nan, True),
        (0.0, True),
        (-5e-11, True),
        (5e-7, False),
        (-5e-7, False),
        (-0.5, False),
        (math.inf, False),
    ],
)
def test_is_suspect_on_box_pair(d: float, suspect: bool) -> None:
    guard = quirks.answer_guard(box(10, 10, 10), box(10, 10, 10), boxes=False)
    assert quirks.is_suspect(d, *guard) is suspect
    floor, shallow, zero, ceiling = guard
    assert (not floor < d or shallow <= d <= zero or d <= ceiling) is suspect  # inlined
    with_ceiling = quirks.answer_guard(box(10, 10, 10), box(10, 10, 10))
    assert quirks.is_suspect(d, *with_ceiling) is (suspect or d <= 0.0)


def test_recheck_keeps_coal_for_boxes_that_are_not_aligned() -> None:
    g1, g2 = box(1, 1, 1), box(1, 1, 1)
    guard = quirks.answer_guard(g1, g2)
    turned = tf((0.9, 0.0, 0.0), SE3.Rz(0.5).R)
    d = coal_distance(g1, tf(), g2, turned)
    assert d < 0.0 and quirks.is_suspect(d, *guard)  # caught by the ceiling only
    assert quirks.recheck(g1, tf(), g2, turned, d, guard) is None
    thin1, thin2 = box(1.8, 3.0, 1.8), box(0.4, 1.0, 0.6)
    t2 = tf((-0.1, 2.0000008, 0.0))
    answer = quirks.recheck(
        thin1, tf(), thin2, t2, -1.0000000001, quirks.answer_guard(thin1, thin2)
    )
    assert answer is not None and answer[0] == pytest.approx(8e-7, abs=1e-15)
    bad = quirks.recheck(g1, tf(), g2, tf((1 + 1e-6, 0.3, 0)), -2.000001, guard)
    assert bad is not None and bad[0] == pytest.approx(1e-6, abs=1e-15)


def test_is_suspect_keeps_exact_answers() -> None:
    sphere = coal.Sphere(1.0)
    sphere.computeLocalAABB()
    guard = quirks.answer_guard(sphere, box(1, 1, 1))
    assert not quirks.is_suspect(0.0, *guard)  # closed form: a real touch
    assert quirks.is_suspect(math.nan, *guard)
    assert quirks.is_suspect(-1.7976931348623157e308, *guard)


@pytest.mark.skipif(not COAL_303, reason="documents Coal 3.0.3's own answers")
def test_coal_303_answers_are_flagged() -> None:
    g = box(10, 10, 10)
    guard = quirks.answer_guard(g, g)
    raw = coal_distance(g, tf(), g, tf((10 + 5e-7, 0, 0)))
    assert raw == pytest.approx(-20.0000005, abs=1e-6)
    assert quirks.is_suspect(raw, *guard)
    u = box(1, 1, 1)
    guard = quirks.answer_guard(u, u)
    raws = [
        coal_distance(u, tf(), u, tf((1 + 1e-6, 0, 0))),
        coal_distance(u, tf((1 + 1e-6, 0, 0)), u, tf()),
    ]
    assert all(quirks.is_suspect(d, *guard) for d in raws)


# ===================================================================== quirks: repairs


def test_aligned_boxes_closed_form() -> None:
    g1, g2 = box(2, 4, 6), box(1, 1, 1)
    d, p1, p2, n = quirks.aligned_boxes(g1, tf(), g2, tf((1.5 + 1e-7, 0.25, -0.5)))  # type: ignore[misc]
    assert d == pytest.approx(1e-7, abs=1e-15)
    assert n.tolist() == [1.0, 0.0, 0.0]
    assert p1.tolist() == pytest.approx([1.0, 0.25, -0.5]) and p2[0] == pytest.approx(1.0 + 1e-7)
    # apart along two axes: the corner-to-edge distance
    d, p1, p2, n = quirks.aligned_boxes(g1, tf(), g2, tf((2.0, 2.8, 0.0)))  # type: ignore[misc]
    assert d == pytest.approx(math.hypot(0.5, 0.3))
    assert p1.tolist() == pytest.approx([1.0, 2.0, 0.0]) and p2.tolist() == pytest.approx(
        [1.5, 2.3, 0.0]
    )
    assert np.allclose(p2 - p1, d * n)
    # overlap: least overlap along y (0.1), normal from g1 to g2
    d, p1, p2, n = quirks.aligned_boxes(g1, tf(), g2, tf((0.0, -2.4, 0.0)))  # type: ignore[misc]
    assert d == pytest.approx(-0.1)
    assert n.tolist() == [0.0, -1.0, 0.0]
    assert np.allclose(p2 - p1, d * n)


def test_aligned_boxes_with_permuted_axes_and_swapped_order() -> None:
    g1, g2 = box(2, 4, 6), box(1, 3, 1)  # g2 turned 90° about z: its 3 m side along x
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    t2 = (1.0 + 1.5 + 3e-7, 0.0, 0.0)
    d, p1, p2, n = quirks.aligned_boxes(g1, tf(), g2, tf(t2, R))  # type: ignore[misc]
    assert d == pytest.approx(3e-7, abs=1e-15)
    e, q2, q1, m = quirks.aligned_boxes(g2, tf(t2, R), g1, tf())  # type: ignore[misc]
    assert e == pytest.approx(d, abs=1e-15)
    assert np.allclose(q1, p1) and np.allclose(q2, p2) and np.allclose(m, -n)
    turned = tf((3.0, 0.0, 0.0), SE3.Rz(0.3).R)
    assert quirks.aligned_boxes(g1, tf(), g2, turned) is None
    sphere = coal.Sphere(1.0)
    assert quirks.aligned_boxes(g1, tf(), sphere, tf()) is None


@pytest.mark.parametrize(
    "size, gap, offset", [(10.0, 5e-7, 0.0), (1.0, 1e-6, 0.0), (1.0, 1e-6, 0.3)]
)
def test_robust_distance_on_aligned_cubes(size: float, gap: float, offset: float) -> None:
    g1, g2 = box(size, size, size), box(size, size, size)
    t1, t2 = tf(), tf((size + gap, offset, 0.0))
    d, p1, p2, n = quirks.robust_distance(g1, t1, g2, t2)
    assert d == pytest.approx(gap, abs=1e-15 * size)
    assert n.tolist() == pytest.approx([1.0, 0.0, 0.0])
    e, q1, q2, m = quirks.robust_distance(g2, t2, g1, t1)
    assert e == d and np.array_equal(q1, p2) and np.array_equal(q2, p1) and np.array_equal(m, -n)
    assert not quirks.robust_collided(g1, t1, g2, t2)
    assert quirks.robust_contact(g1, t1, g2, t2) is None
    contact = quirks.robust_contact(g1, t1, g2, t2, security_margin=2 * gap)
    assert contact is not None and contact[3] == pytest.approx(gap)


def test_robust_distance_on_rotated_boxes_with_coplanar_faces() -> None:
    """Not aligned (turned 0.4 rad about the contact normal), so the move-and-correct path."""
    g1, g2 = box(2, 2, 2), box(1, 1, 1)
    R = SE3.Rz(0.4).R
    for gap in (3e-7, 0.0, -3e-7):
        t2 = tf((0.2, -0.1, 1.0 + 0.5 + gap), R)
        answers = [
            quirks.robust_distance(g1, tf(), g2, t2),
            quirks.robust_distance(g2, t2, g1, tf()),
        ]
        for d, p1, p2, n in answers:
            assert d == pytest.approx(gap, abs=2e-9)
            assert np.allclose(p2 - p1, d * n, atol=1e-12)
        assert answers[0][0] == answers[1][0]
        assert answers[0][3].tolist() == pytest.approx([0.0, 0.0, 1.0], abs=1e-6)


def test_robust_distance_on_a_sphere_at_a_hull_vertex() -> None:
    out = in_child(
        f"""
        import json, numpy as np, coal
        from spatialcontact._coal import quirks
        cases = {HULL_VERTEX_CASES!r}
        out = []
        for points, pose, centre in cases:
            v = coal.StdVec_Vec3s()
            v.extend([np.array(p, dtype=float) for p in points])
            hull = coal.Convex.convexHull(v, False, "")
            hull.computeLocalAABB()
            ball = coal.Sphere(0.5)
            ball.computeLocalAABB()
            M = np.array(pose)
            th = coal.Transform3s(M[:3, :3], M[:3, 3])
            tb = coal.Transform3s(np.eye(3), np.array(centre))
            raw = coal.DistanceResult()
            coal.distance(ball, tb, hull, th, coal.DistanceRequest(), raw)
            flagged = quirks.is_suspect(raw.min_distance, *quirks.answer_guard(ball, hull))
            out.append([flagged, quirks.robust_distance(ball, tb, hull, th)[0],
                        quirks.robust_distance(hull, th, ball, tb)[0]])
        print(json.dumps(out))
        """
    )
    for flagged, d1, d2 in out:
        if COAL_303:
            assert flagged
        assert d1 == pytest.approx(-0.5, abs=1e-9) and d2 == d1


def test_distance_answer_reads_like_a_coal_result() -> None:
    g = box(1, 1, 1)
    answer = quirks.robust_result(g, tf(), g, tf((1 + 1e-6, 0, 0)))
    assert answer.min_distance == pytest.approx(1e-6)
    p1 = answer.getNearestPoint1()
    p1[0] = 99.0  # a copy, as Coal's
    assert answer.getNearestPoint1()[0] == pytest.approx(0.5)
    assert answer.getNearestPoint2()[0] == pytest.approx(0.5 + 1e-6)
    assert answer.normal.tolist() == pytest.approx([1.0, 0.0, 0.0])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aligned_pairs())
def test_property_aligned_boxes_match_coal_when_coal_is_sure(
    pair: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float],
) -> None:
    sides1, sides2, pose1, pose2, gap = pair
    g1, g2 = box(*sides1), box(*sides2)
    t1, t2 = tf(pose1[:3, 3], pose1[:3, :3]), tf(pose2[:3, 3], pose2[:3, :3])
    d, p1, p2, n = quirks.aligned_boxes(g1, t1, g2, t2)  # type: ignore[misc]
    size = float(max(sides1.max(), sides2.max()))
    assert d == pytest.approx(gap, abs=1e-12 * (1 + size))
    assert np.allclose(p2 - p1, d * n, atol=1e-12 * (1 + size))
    assert quirks.robust_distance(g1, t1, g2, t2)[0] == pytest.approx(d, abs=1e-12 * (1 + size))
    raw = coal_distance(g1, t1, g2, t2)
    if abs(gap) > 1e-5 and not quirks.is_suspect(raw, *quirks.answer_guard(g1, g2)):
        assert raw == pytest.approx(d, abs=BIAS * size)


# ============================================================ quirks: repair_normals


def _mesh_geometry() -> Any:
    vertices, faces = cube_mesh()
    mesh = coal.BVHModelOBBRSS()
    mesh.beginModel(len(faces), len(vertices))
    mesh.addVertices(vertices.astype(np.float64))
    mesh.addTriangles(faces.astype(np.int64))
    mesh.endModel()
    mesh.computeLocalAABB()
    return mesh


def _repaired(g1: Any, t1: Any, g2: Any, t2: Any, many: bool) -> list[Any]:
    functor = coal.ComputeCollision(g1, g2)
    request = coal.CollisionRequest()
    request.num_max_contacts = 1 << 16 if many else 1
    result = coal.CollisionResult()
    n = functor(t1, t2, request, result)
    return quirks.repair_normals(functor, g1, t1, g2, t2, request, result, n)


@pytest.mark.parametrize("centre", [(0.5, 0.5, 0.5), (0.5, 0.5, 0.0)])
def test_repair_normals_sphere_on_mesh_corner_and_edge(centre: tuple[float, ...]) -> None:
    mesh, ball = _mesh_geometry(), coal.Sphere(0.1)
    ball.computeLocalAABB()
    tm, tb = tf(), tf(centre)
    first = _repaired(mesh, tm, ball, tb, True)
    second = _repaired(ball, tb, mesh, tm, True)
    assert len(first) == len(second) > 0
    for normal, p1, p2, depth, _, _ in first + second:
        assert np.linalg.norm(normal) == pytest.approx(1.0)
        assert depth == pytest.approx(-0.1, abs=1e-6)
        assert np.allclose(p2 - p1, depth * normal, atol=1e-12)
    for a, b in zip(first, second, strict=True):
        assert a[0].tolist() == pytest.approx((-b[0]).tolist(), abs=1e-6)


def test_repair_normals_concentric_capsules_and_untouched_contacts() -> None:
    g = coal.Capsule(0.1, 0.5)
    g.computeLocalAABB()
    (normal, _, _, depth, _, _), = _repaired(g, tf(), g, tf(), False)  # fmt: skip
    assert np.linalg.norm(normal) == pytest.approx(1.0)
    assert abs(normal[2]) < 1e-6  # the least overlap is sideways: 2 radii
    assert depth == pytest.approx(-0.2, abs=1e-6)
    b = box(1, 1, 1)
    (normal, _, _, depth, _, _), = _repaired(b, tf(), b, tf((0.9, 0.0, 0.0)), False)  # fmt: skip
    assert normal.tolist() == pytest.approx([1.0, 0.0, 0.0]) and depth == pytest.approx(-0.1)


def test_repair_normals_sphere_on_octree_corners() -> None:
    out = in_child(
        """
        import itertools, json, numpy as np, coal
        from spatialcontact._coal import quirks
        cells = np.array(list(itertools.product([0.05, 0.15], repeat=3)))
        rng = np.random.default_rng(0)
        out = []
        for trial in range(80):
            tree = coal.makeOctree(cells, 0.1)
            tree.computeLocalAABB()
            t = rng.normal(size=3)
            corner = np.array(list(itertools.product([0.0, 0.1, 0.2], repeat=3)))[trial % 27]
            ball = coal.Sphere([0.03, 0.1, 0.3][trial % 3])
            ball.computeLocalAABB()
            t1, t2 = coal.Transform3s(np.eye(3), t), coal.Transform3s(np.eye(3), corner + t)
            functor = coal.ComputeCollision(tree, ball)
            request = coal.CollisionRequest()
            request.num_max_contacts = 1 << 16
            result = coal.CollisionResult()
            n = functor(t1, t2, request, result)
            undefined = sum(
                not np.isclose(np.linalg.norm(result.getContact(i).normal), 1.0) for i in range(n)
            )
            fixed = quirks.repair_normals(functor, tree, t1, ball, t2, request, result, n)
            out.append([n, undefined, len(fixed), [float(np.linalg.norm(c[0])) for c in fixed]])
        print(json.dumps(out))
        """
    )
    assert any(undefined for _, undefined, _, _ in out)  # the case is exercised
    for n, _, kept, norms in out:
        assert n > 0 and kept > 0
        assert norms == pytest.approx([1.0] * len(norms))


# ============================================================== quirks: the module itself


def test_quirks_imports_only_coal_numpy_the_compiled_module_and_the_standard_library() -> None:
    # The compiled module (spatialcontact._native) imports nothing of the package: no cycle.
    source = Path(quirks.__file__).read_text(encoding="utf-8")
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                relative = (node.level, node.module, [alias.name for alias in node.names])
                assert relative == (2, None, ["_native"]), "no relative imports but _native"
            else:
                names.add((node.module or "").split(".")[0])
    assert names <= {"__future__", "coal", "numpy", "math", "collections", "typing"}


# ------------------------------------------------------------ M: capsule/capsule distance

# Two capsules 3 µm into each other: a 10 µm capsule along z under a 1 mm capsule along x.
# Coal 3.0.3 takes the segments as parallel (L1^2 L2^2 = 1e-16 is below its 2.2e-14) and, with
# the small capsule first, measures from the bottom of its segment: 7 µm apart.
_Z0 = 1.01e-3 + 2e-6
_ACROSS = [[0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, _Z0], [0.0, 0.0, 0.0, 1.0]]

# The fuzzer's case (seed 21, case 39556): separated capsules of 3.2e-5 m and 2.9e-3 m, 2.557 mm
# apart; Coal said 2.570 mm with the small one first.
_FUZZ_A = [[0.9102221281440909, -0.36791907376565636, 0.19008217327320245, 0.0],
           [-0.41044385601365263, -0.7404675159895442, 0.532206443802514, 0.0],
           [-0.05505922717843251, -0.5624441420476314, -0.8250000415629191, 0.0],
           [0.0, 0.0, 0.0, 1.0]]  # fmt: skip
_FUZZ_B = [[0.5021457546611139, -0.7649994608108694, -0.4032684788511236, -0.0030151760477956716],
           [0.24096010652965666, 0.571627167953547, -0.7843345000180878, 0.0002899852179086512],
           [0.8305346880998028, 0.29667862379431076, 0.47137450720894625, -0.004714538813193287],
           [0.0, 0.0, 0.0, 1.0]]  # fmt: skip


def _coal_distance(a: sc.CollisionShape, b: sc.CollisionShape) -> float:
    result = coal.DistanceResult()
    return float(
        coal.distance(a.geometry, a._tf, b.geometry, b._tf, coal.DistanceRequest(), result)
    )


def test_small_crossing_capsules_overlap_in_both_orders() -> None:
    a, b = sc.Capsule(1e-5, 1e-5), sc.Capsule(1e-3, 1e-3, pose=np.array(_ACROSS))
    if COAL_303:  # what is repaired
        assert _coal_distance(a, b) == pytest.approx(7e-6, abs=1e-12)
    for x, y in ((a, b), (b, a)):
        assert x.iscollided(y)
        assert x.distance(y) == pytest.approx(-3e-6, abs=1e-12)
        d, p1, p2 = x.closest_point(y)
        assert d == pytest.approx(-3e-6, abs=1e-12) and p1 is not None and p2 is not None
        assert np.linalg.norm(p2 - p1) == pytest.approx(3e-6, abs=1e-12)
        (c,) = x.contacts(y)
        assert c.penetration_depth == pytest.approx(-3e-6, abs=1e-12)
    # Within a security margin: found at 5 µm apart (Coal would say 15 µm).
    b.T = np.array(_ACROSS) @ np.array(
        [[1.0, 0, 0, -8e-6], [0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 1.0]]
    )
    assert a.distance(b) == pytest.approx(5e-6, abs=1e-12) and not a.iscollided(b)
    assert a.contacts(b, security_margin=6e-6)[0].penetration_depth == pytest.approx(5e-6)
    assert len(a.contacts(b, security_margin=4e-6)) == 0


def test_the_fuzzers_small_capsules_agree_in_both_orders() -> None:
    a = sc.Capsule(3.1622776601683795e-05, 3.1622776601683795e-05, pose=np.array(_FUZZ_A))
    b = sc.Capsule(0.0028713054975255834, 0.0028713054975255834, pose=np.array(_FUZZ_B))
    if COAL_303:
        assert _coal_distance(a, b) == pytest.approx(0.0025702122053418296, rel=1e-12)
    assert a.distance(b) == pytest.approx(0.002556436381111324, rel=1e-12)
    assert b.distance(a) == pytest.approx(0.002556436381111324, rel=1e-12)


@given(
    small=st.floats(1e-5, 3e-3),
    large=st.floats(1e-5, 0.3),
    gap=st.floats(-0.5, 2.0),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_small_capsules_match_the_closed_form(
    small: float, large: float, gap: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    poses = []
    for _ in range(2):
        q = rng.normal(size=4)
        poses.append(np.eye(4))
        poses[-1][:3, :3] = quaternion_matrix(*q)
    direction = rng.normal(size=3)
    poses[1][:3, 3] = direction / np.linalg.norm(direction) * (small + large) * (1.0 + gap)
    a, b = sc.Capsule(small, small, pose=poses[0]), sc.Capsule(large, large, pose=poses[1])
    exact = cf.capsule_capsule(
        *cf.capsule_endpoints(poses[0], small), small, *cf.capsule_endpoints(poses[1], large), large
    ).d[0]
    for x, y in ((a, b), (b, a)):
        assert x.distance(y) == pytest.approx(exact, abs=1e-12)
        if abs(exact) > 1e-9:
            assert x.iscollided(y) == (exact < 0.0)
            assert bool(x.contacts(y)) == (exact < 0.0)


def test_capsule_overshoot_bound_and_parallel_test() -> None:
    small, large = sc.Capsule(1e-5, 1e-5), sc.Capsule(1e-3, 1e-3)
    # sqrt(4 * 2.2e-14 + rounding) / (L1 L2) * max(L1, L2): about 3e-2 m here.
    assert quirks.capsule_overshoot(small.geometry, large.geometry) == pytest.approx(
        1e-3 * math.sqrt(4 * 100 * np.finfo(float).eps) / 1e-8, rel=1e-6
    )
    assert quirks.capsule_overshoot(small.geometry, sc.Sphere(1.0).geometry) == 0.0
    # Long capsules: Coal's parallel slip costs at most the tolerance, so no test.
    assert (
        quirks.parallel_test(sc.Capsule(0.1, 0.3).geometry, sc.Capsule(0.1, 0.3).geometry) is None
    )
    test = quirks.parallel_test(sc.Capsule(0.1, 0.1).geometry, sc.Capsule(0.1, 0.1).geometry)
    assert test is not None
    turned = sc.Capsule(0.1, 0.1, pose=SE3.Rx(1e-9).A)
    across = sc.Capsule(0.1, 0.1, pose=SE3.Rx(0.5).A)
    assert test(small._tf, turned._tf) and not test(small._tf, across._tf)
    # Tiny capsules are taken as parallel at every angle.
    every = quirks.parallel_test(small.geometry, large.geometry)
    assert every is not None and every(small._tf, across._tf)


def _crowded(*shapes: tuple[str, sc.CollisionShape]) -> sc.Scene:
    """A scene of 40 far spheres (so that Coal's trees answer, not pair queries) and ``shapes``."""
    scene = sc.Scene()
    for i in range(40):
        scene.add(sc.Sphere(0.01, pose=SE3.Trans(1.0 + i, 0.0, 0.0).A), f"ball{i}")
    for name, shape in shapes:
        scene.add(shape, name)
    return scene


# The small capsule across the middle of the large one, 3 µm into it: Coal says 114 µm apart
# with the large one first (measuring from its end), about right the other way.
_MIDDLE_LARGE = [[0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0, 0, 0, 1.0]]
_MIDDLE_SMALL = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, -1.0, 0.0],
    [0.0, 1.0, 0.0, 1.007e-3],
    [0, 0, 0, 1.0],
]


@pytest.mark.parametrize(
    ("at_small", "at_large"),
    [(np.eye(4), np.array(_ACROSS)), (np.array(_MIDDLE_SMALL), np.array(_MIDDLE_LARGE))],
    ids=["small first wrong", "large first wrong"],
)
def test_scenes_find_small_crossing_capsules(at_small: np.ndarray, at_large: np.ndarray) -> None:
    # Coal's trees run its own capsule narrow phase, wrong in one argument order or the other:
    # the scene asks such pairs again by their pair query.
    small, large = sc.Capsule(1e-5, 1e-5, pose=at_small), sc.Capsule(1e-3, 1e-3, pose=at_large)
    assert small.distance(large) == pytest.approx(-3e-6, abs=1e-12)
    scene = _crowded(("small", small), ("large", large))
    for _ in range(4):  # new, then at rest
        assert scene.collisions() == [("small", "large")]
    # Outside capsules against the scene at rest.
    assert scene.collide(sc.Capsule(1e-3, 1e-3, pose=at_large)) == ["small", "large"]
    assert scene.collide(sc.Capsule(1e-5, 1e-5, pose=at_small)) == ["small", "large"]
    for moving in (small, large):  # moving away, then back, against the other at rest
        at = moving.T
        moving.T = SE3.Trans(0.0, 0.0, -1.0).A
        assert scene.collisions() == []
        moving.T = at
        assert scene.collisions() == [("small", "large")]
        for _ in range(3):
            assert scene.in_collision()
    # Every body moved at once: the whole tree asked again.
    for i in range(40):
        scene[f"ball{i}"].T = SE3.Trans(1.0 + i, 1.0, 0.0).A
    small.T = at_small
    assert scene.collisions() == [("small", "large")]


# ------------------------------------------------------------------ N: EPA's iterations

# The fuzzer's case (seed 44, case 18249): two ellipsoids with the same centre. With Coal's 64
# EPA iterations: -1.2252 in one order, -1.2154 in the other.
_ELLIPSOID_A = (
    [0.6793662080833471, 0.6385518860965546, 0.9620507421248935],
    [[-0.6692531351013642, 0.7321997850154157, 0.1264267217813334, 1.1988363601558336],
     [-0.07655648247549895, 0.10129451562027647, -0.9919065107641105, -1.3357828001822374],
     [-0.7390800674811724, -0.673515327166823, -0.011737032137347558, -0.6644873766295974],
     [0.0, 0.0, 0.0, 1.0]],
)  # fmt: skip
_ELLIPSOID_B = (
    [0.5484896321608432, 0.5859217445846315, 0.6761899249377773],
    [[-0.8062919245562712, -0.11166215631548251, -0.5808828584511001, 1.1988363601558336],
     [0.5758026749052583, -0.3730192162533048, -0.727535527570798, -1.3357828001822374],
     [-0.13544228278973133, -0.9210799244108769, 0.3650577500614932, -0.6644873766295974],
     [0.0, 0.0, 0.0, 1.0]],
)  # fmt: skip


def _support_depth(a: sc.Ellipsoid, b: sc.Ellipsoid) -> float:
    """The depth of two overlapping ellipsoids: the least, over unit directions n, of
    h_a(n) + h_b(-n) (the support function of a - b, which holds the origin), found from the
    best of 4,000 directions by projected gradient steps."""
    mats, centres = [], []
    for e in (a, b):
        T = np.asarray(e.T)
        mats.append(T[:3, :3] @ np.diag(np.asarray(e.radii) ** 2) @ T[:3, :3].T)
        centres.append(T[:3, 3])
    c = centres[0] - centres[1]

    def f(n: np.ndarray) -> np.ndarray:
        return (
            np.sqrt(np.einsum("...i,ij,...j", n, mats[0], n))
            + np.sqrt(np.einsum("...i,ij,...j", n, mats[1], n))
            + n @ c
        )

    k = np.arange(4000) + 0.5  # a Fibonacci sphere
    z = 1.0 - 2.0 * k / 4000
    phi = math.pi * (1.0 + math.sqrt(5.0)) * k
    directions = np.stack(
        [np.sqrt(1 - z * z) * np.cos(phi), np.sqrt(1 - z * z) * np.sin(phi), z], 1
    )
    n = directions[np.argmin(f(directions))]
    step = 0.1
    for _ in range(2000):
        g = mats[0] @ n / math.sqrt(n @ mats[0] @ n) + mats[1] @ n / math.sqrt(n @ mats[1] @ n) + c
        g -= (g @ n) * n
        trial = n - step * g
        trial /= np.linalg.norm(trial)
        if f(trial) < f(n):
            n, step = trial, step * 1.2
        else:
            step *= 0.5
    return float(f(n))


def test_deep_ellipsoids_get_enough_epa_iterations() -> None:
    a = sc.Ellipsoid(_ELLIPSOID_A[0], pose=np.array(_ELLIPSOID_A[1]))
    b = sc.Ellipsoid(_ELLIPSOID_B[0], pose=np.array(_ELLIPSOID_B[1]))
    depth = _support_depth(a, b)
    assert depth == pytest.approx(1.2534666897, abs=1e-8)
    if COAL_303:  # what is repaired: Coal's own 64 iterations
        request = coal.DistanceRequest()
        result = coal.DistanceResult()
        assert coal.distance(a.geometry, a._tf, b.geometry, b._tf, request, result) == (
            pytest.approx(-1.2252179640160268, abs=1e-9)
        )
    for x, y in ((a, b), (b, a)):
        assert x.distance(y) == pytest.approx(-depth, abs=1e-5)
        assert x.contacts(y)[0].penetration_depth == pytest.approx(-depth, abs=1e-5)


@given(seed=st.integers(0, 2**32 - 1), offset=st.sampled_from([0.0, 1e-3, 0.1]))
@settings(max_examples=25, deadline=None)
def test_ellipsoid_depths_match_the_support_functions(seed: int, offset: float) -> None:
    rng = np.random.default_rng(seed)
    poses = []
    for _ in range(2):
        poses.append(np.eye(4))
        poses[-1][:3, :3] = quaternion_matrix(*rng.normal(size=4))
    poses[1][:3, 3] = rng.normal(size=3) * offset
    a = sc.Ellipsoid(rng.uniform(0.3, 1.0, 3), pose=poses[0])
    b = sc.Ellipsoid(rng.uniform(0.3, 1.0, 3), pose=poses[1])
    depth = _support_depth(a, b)
    assert depth > 0.1  # they overlap deeply
    for x, y in ((a, b), (b, a)):
        assert x.distance(y) == pytest.approx(-depth, abs=2e-5)
