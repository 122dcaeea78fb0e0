"""Contact records: Contact, Contacts, ContactReport and ``shape.contacts``.

Known answers are worked out by hand in the comments. Conventions under test (hpp-fcl's):
``normal`` is a world unit vector from ``o1`` to ``o2``; ``penetration_depth`` is signed,
negative on overlap; ``nearest_points[1] - nearest_points[0] == penetration_depth * normal``;
a report's normal points from the other shape into its own and its depth is positive on
overlap. Random poses are in ``test_contact_properties.py``.
"""

from __future__ import annotations

import math
import pickle
from typing import Any

import coal
import numpy as np
import pytest
from conftest import rot, trans

import spatialcontact as sc
from spatialcontact import (
    CollisionDisabledError,
    CollisionShapeGroup,
    Contact,
    ContactReport,
    Contacts,
    Cuboid,
    HalfSpace,
    InvalidArgumentError,
    InvalidShapeError,
    Mesh,
    OcTree,
    ShapeTypeError,
    Sphere,
    UnsupportedPairError,
)

ATOL = 1e-9
"""Tolerance for closed-form pairs (sphere, half-space, triangle)."""
EPA_ATOL = 1e-6
"""Tolerance for pairs Coal solves iteratively (box-box goes through GJK/EPA)."""

# The cube [-1, 1]^3 as a mesh written out here, so triangle indices are known.
# Vertex k is (x, y, z) with x = +1 when k & 4, y = +1 when k & 2, z = +1 when k & 1.
CUBE_VERTICES = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
CUBE_FACES = np.array(
    [
        [0, 1, 3], [0, 3, 2],  # 0, 1: x = -1
        [4, 6, 7], [4, 7, 5],  # 2, 3: x = +1 (3 is the half with z >= y)
        [0, 4, 5], [0, 5, 1],  # 4, 5: y = -1
        [2, 3, 7], [2, 7, 6],  # 6, 7: y = +1
        [0, 2, 6], [0, 6, 4],  # 8, 9: z = -1
        [1, 5, 7], [1, 7, 3],  # 10, 11: z = +1 (10 is the half with y <= x)
    ]
)  # fmt: skip

# A sphere of radius 0.5 centred at (0.9, 0, 1.4), in the cube's frame, is pushed 0.1 into
# the top face z = 1, near its edge x = 1. It touches exactly two triangles:
# - top triangle 10 (vertices (-1,-1,1), (1,-1,1), (1,1,1): the half y <= x of z = 1):
#   the foot of the centre, (0.9, 0, 1), is inside it (0 <= 0.9); the centre is 0.4 above,
#   so the depth is 0.5 - 0.4 = 0.1.
# - side triangle 3 (vertices (1,-1,-1), (1,1,1), (1,-1,1): the half z >= y of x = 1): its
#   nearest point to the centre is (1, 0, 1) on the edge, at sqrt(0.1^2 + 0.4^2) = sqrt(0.17)
#   = 0.41231, so the depth is 0.5 - sqrt(0.17) = 0.08769.
# Every other triangle is farther than 0.5: triangle 2 (x = 1, half z <= y) is nearest at
# (1, 0.5, 0.5): sqrt(0.1^2 + 0.5^2 + 0.9^2) = 1.034 away; triangle 11 (z = 1, half y >= x)
# at (0.45, 0.45, 1): sqrt(0.45^2 + 0.45^2 + 0.4^2) = 0.75 away; faces y = +-1 are 1 away.
# Coal's own single contact for this pair is triangle 3, the shallower one.
PROBE_CENTRE = np.array([0.9, 0.0, 1.4])
SIDE_DEPTH = 0.5 - math.sqrt(0.17)


def cube_mesh(**kwargs: Any) -> Mesh:
    return Mesh.from_arrays(CUBE_VERTICES, CUBE_FACES, **kwargs)


def assert_contact(
    c: Contact,
    *,
    normal: Any,
    points: Any,
    pos: Any,
    depth: float,
    b1: int = Contact.NONE,
    b2: int = Contact.NONE,
    atol: float = ATOL,
) -> None:
    np.testing.assert_allclose(c.normal, normal, atol=atol)
    np.testing.assert_allclose(c.nearest_points, points, atol=atol)
    np.testing.assert_allclose(c.pos, pos, atol=atol)
    assert c.penetration_depth == pytest.approx(depth, abs=atol)
    assert (c.b1, c.b2) == (b1, b2)


def assert_identity(c: Contact, atol: float = ATOL) -> None:
    """Unit normal and nearest_points[1] - nearest_points[0] == depth * normal."""
    assert np.linalg.norm(c.normal) == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(
        c.nearest_points[1] - c.nearest_points[0], c.penetration_depth * c.normal, atol=atol
    )


def sphere_pair() -> tuple[Sphere, Sphere]:
    """Spheres r=1 at (1, 2, 3) and r=0.5 at 1.3 m from it along (0.6, 0, 0.8)."""
    a = Sphere(1.0, pose=trans(1.0, 2.0, 3.0))
    # centre b = (1, 2, 3) + 1.3 * (0.6, 0, 0.8) = (1.78, 2, 4.04)
    b = Sphere(0.5, pose=trans(1.78, 2.0, 4.04))
    return a, b


# ---------------------------------------------------------------------- known answers


def test_sphere_sphere_known_answer() -> None:
    a, b = sphere_pair()
    (c,) = a.contacts(b)
    # Centres 1.3 apart, radii 1 + 0.5 = 1.5: overlap 0.2, along n = (0.6, 0, 0.8).
    # p1 = c_a + 1.0 n = (1.6, 2, 3.8); p2 = c_b - 0.5 n = (1.78 - 0.3, 2, 4.04 - 0.4)
    # = (1.48, 2, 3.64); p2 - p1 = (-0.12, 0, -0.16) = -0.2 n. pos = midpoint (1.54, 2, 3.72).
    assert_contact(
        c,
        normal=[0.6, 0.0, 0.8],
        points=[[1.6, 2.0, 3.8], [1.48, 2.0, 3.64]],
        pos=[1.54, 2.0, 3.72],
        depth=-0.2,
    )
    assert c.o1 is a and c.o2 is b
    assert_identity(c)


def test_box_box_known_answer_axis_aligned() -> None:
    a = Cuboid([2.0, 2.0, 2.0])
    b = Cuboid([1.0, 1.0, 1.0], pose=trans(1.3, 0.2, 0.1))
    (c,) = a.contacts(b)
    # b spans x [0.8, 1.8], y [-0.3, 0.7], z [-0.4, 0.6]; a spans [-1, 1]^3. Pushing b out
    # along +x takes 1 - 0.8 = 0.2; along -x 1.8 + 1 = 2.8; along y 1.3 or 1.7; along z 1.4
    # or 1.6: the smallest is 0.2 along +x. Witness x: 1.0 on a's face, 0.8 on b's face; pos
    # x = 0.9. Their y and z lie in the overlap y in [-0.3, 0.7], z in [-0.4, 0.6].
    assert c.penetration_depth == pytest.approx(-0.2, abs=EPA_ATOL)
    np.testing.assert_allclose(c.normal, [1.0, 0.0, 0.0], atol=EPA_ATOL)
    np.testing.assert_allclose(c.nearest_points[:, 0], [1.0, 0.8], atol=EPA_ATOL)
    assert c.pos[0] == pytest.approx(0.9, abs=EPA_ATOL)
    for p in (*c.nearest_points, c.pos):
        assert -0.3 - EPA_ATOL <= p[1] <= 0.7 + EPA_ATOL
        assert -0.4 - EPA_ATOL <= p[2] <= 0.6 + EPA_ATOL
    np.testing.assert_allclose(c.nearest_points[0, 1:], c.nearest_points[1, 1:], atol=EPA_ATOL)
    assert (c.b1, c.b2) == (-1, -1)
    assert_identity(c, EPA_ATOL)


def test_box_box_known_answer_rotated() -> None:
    # a: sides (2, 1, 1) turned 90 degrees about z, so it spans x [-0.5, 0.5], y [-1, 1],
    # z [-0.5, 0.5] in the world. b: unit cube at (0, 1.4, 0), spanning y [0.9, 1.9].
    # Overlap along y is 1 - 0.9 = 0.1, the smallest way out (x and z need 1.0 or more):
    # normal +y, witness y = 1.0 on a and 0.9 on b, pos y = 0.95.
    a = Cuboid([2.0, 1.0, 1.0], pose=rot("z", math.pi / 2))
    b = Cuboid([1.0, 1.0, 1.0], pose=trans(0.0, 1.4, 0.0))
    (c,) = a.contacts(b)
    assert c.penetration_depth == pytest.approx(-0.1, abs=EPA_ATOL)
    np.testing.assert_allclose(c.normal, [0.0, 1.0, 0.0], atol=EPA_ATOL)
    np.testing.assert_allclose(c.nearest_points[:, 1], [1.0, 0.9], atol=EPA_ATOL)
    assert c.pos[1] == pytest.approx(0.95, abs=EPA_ATOL)
    assert_identity(c, EPA_ATOL)


def test_sphere_halfspace_known_answer() -> None:
    s = Sphere(0.5, pose=trans(0.2, 0.3, 0.3))
    h = HalfSpace([0.0, 0.0, 1.0], 0.0)  # the solid z <= 0
    (c,) = s.contacts(h)
    # The centre is 0.3 above the plane: the sphere dips 0.5 - 0.3 = 0.2 into it. The normal
    # from the sphere to the half-space is -z. p1 = centre - 0.5 z = (0.2, 0.3, -0.2) on the
    # sphere, p2 = (0.2, 0.3, 0) on the plane; p2 - p1 = (0, 0, 0.2) = -0.2 * (0, 0, -1).
    assert_contact(
        c,
        normal=[0.0, 0.0, -1.0],
        points=[[0.2, 0.3, -0.2], [0.2, 0.3, 0.0]],
        pos=[0.2, 0.3, -0.1],
        depth=-0.2,
    )
    assert_identity(c)


def test_sphere_tilted_halfspace_known_answer() -> None:
    r = math.sqrt(0.5)
    h = HalfSpace([r, r, 0.0], 1.0)  # the solid (x + y) / sqrt(2) <= 1
    s = Sphere(0.5, pose=trans(1.0, 1.0, 0.0))
    (c,) = h.contacts(s)
    # Centre (1, 1, 0): n.c = 2 / sqrt(2) = 1.41421, so it is 0.41421 outside the plane and
    # the sphere dips 0.5 - 0.41421 = 0.08579 in. Normal from the half-space to the sphere:
    # +n = (0.70711, 0.70711, 0). p1 (half-space) = foot of the centre = c - 0.41421 n
    # = (0.70711, 0.70711, 0); p2 (sphere) = c - 0.5 n = (0.64645, 0.64645, 0);
    # pos = midpoint (0.67678, 0.67678, 0).
    gap = math.sqrt(2.0) - 1.0
    depth = -(0.5 - gap)
    foot = 1.0 - gap * r
    deep = 1.0 - 0.5 * r
    assert_contact(
        c,
        normal=[r, r, 0.0],
        points=[[foot, foot, 0.0], [deep, deep, 0.0]],
        pos=[(foot + deep) / 2, (foot + deep) / 2, 0.0],
        depth=depth,
    )
    assert_identity(c)


def test_mesh_sphere_deepest_triangle_with_max_contacts_1() -> None:
    mesh = cube_mesh()
    probe = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    (c,) = mesh.contacts(probe)
    # Deepest: top triangle 10, 0.1 deep (see PROBE_CENTRE). Normal from mesh to sphere +z;
    # p1 = (0.9, 0, 1) on the triangle, p2 = centre - 0.5 z = (0.9, 0, 0.9), pos between.
    assert_contact(
        c,
        normal=[0.0, 0.0, 1.0],
        points=[[0.9, 0.0, 1.0], [0.9, 0.0, 0.9]],
        pos=[0.9, 0.0, 0.95],
        depth=-0.1,
        b1=10,
    )
    # Coal alone, asked for one contact, stops at the shallower side triangle 3: the case
    # tells the two apart.
    request, result = coal.CollisionRequest(), coal.CollisionResult()
    coal.collide(mesh.geometry, mesh._tf, probe.geometry, probe._tf, request, result)
    assert result.getContact(0).b1 == 3
    assert result.getContact(0).penetration_depth == pytest.approx(-SIDE_DEPTH, abs=ATOL)


def test_mesh_sphere_every_touching_triangle_deepest_first() -> None:
    mesh = cube_mesh()
    probe = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    found = mesh.contacts(probe, max_contacts=10)
    assert found.b1.tolist() == [10, 3]
    assert found.b2.tolist() == [-1, -1]
    np.testing.assert_allclose(found.penetration_depth, [-0.1, -SIDE_DEPTH], atol=ATOL)
    # Triangle 3's contact: nearest mesh point (1, 0, 1); normal = (centre - (1, 0, 1)) /
    # sqrt(0.17) = (-0.1, 0, 0.4) / 0.41231; the sphere point is centre - 0.5 normal.
    n3 = np.array([-0.1, 0.0, 0.4]) / math.sqrt(0.17)
    assert_contact(
        found[1],
        normal=n3,
        points=[[1.0, 0.0, 1.0], PROBE_CENTRE - 0.5 * n3],
        pos=(np.array([1.0, 0.0, 1.0]) + PROBE_CENTRE - 0.5 * n3) / 2,
        depth=-SIDE_DEPTH,
        b1=3,
    )
    for c in found:
        # the triangle named is really touched: the sphere reaches its plane, and the
        # contact point on the mesh lies in the triangle (barycentric weights >= 0)
        tri = CUBE_VERTICES[CUBE_FACES[c.b1]]
        normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        normal /= np.linalg.norm(normal)
        assert abs(np.dot(PROBE_CENTRE - tri[0], normal)) <= 0.5
        weights = np.linalg.solve(np.column_stack([tri[0], tri[1], tri[2]]), c.nearest_points[0])
        assert np.all(weights >= -ATOL) and sum(weights) == pytest.approx(1.0)
        assert np.linalg.norm(PROBE_CENTRE - c.nearest_points[0]) <= 0.5 + ATOL
        assert_identity(c)
    # max_contacts=k keeps the k deepest
    assert mesh.contacts(probe, max_contacts=2) == found
    assert mesh.contacts(probe, max_contacts=1) == found[:1]


def test_mesh_sphere_world_frame_with_posed_mesh() -> None:
    # The same configuration with the mesh turned 90 degrees about x and lifted 2 along z:
    # Rx(90) maps (x, y, z) to (x, -z, y). Sphere centre (0.9, 0, 1.4) -> (0.9, -1.4, 2);
    # normal +z -> -y; p1 (0.9, 0, 1) -> (0.9, -1, 2); p2 (0.9, 0, 0.9) -> (0.9, -0.9, 2).
    T_world_mesh = trans(0.0, 0.0, 2.0) @ rot("x", math.pi / 2)
    mesh = cube_mesh(pose=T_world_mesh)
    probe = Sphere(0.5, pose=trans(0.9, -1.4, 2.0))
    (c,) = mesh.contacts(probe)
    assert_contact(
        c,
        normal=[0.0, -1.0, 0.0],
        points=[[0.9, -1.0, 2.0], [0.9, -0.9, 2.0]],
        pos=[0.9, -0.95, 2.0],
        depth=-0.1,
        b1=10,
    )
    (r,) = probe.contacts(mesh)
    assert_contact(
        r,
        normal=[0.0, 1.0, 0.0],
        points=[[0.9, -0.9, 2.0], [0.9, -1.0, 2.0]],
        pos=[0.9, -0.95, 2.0],
        depth=-0.1,
        b2=10,
    )


# Two one-triangle meshes crossing: A lies flat in z = 0, B stands in x = 0 with its bottom
# edge (y in [-0.2, 0.2]) at z = -0.1. The smallest way apart is B up (or A down) by 0.1;
# sideways A extends at least 0.8 beyond B. So the depth is -0.1 and the normal, from A to B,
# +z; the witness points should be (0, y, 0) on A and (0, y, -0.1) on B's bottom edge.
FLAT = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
STANDING = np.array([[0.0, -0.2, -0.1], [0.0, 0.2, -0.1], [0.0, 0.0, 0.5]])


def test_crossing_mesh_triangles_depth_and_normal() -> None:
    a = Mesh.from_arrays(FLAT, [[0, 1, 2]])
    b = Mesh.from_arrays(STANDING, [[0, 1, 2]])
    (c,) = a.contacts(b)
    assert (c.b1, c.b2) == (0, 0)
    assert c.penetration_depth == pytest.approx(-0.1, abs=EPA_ATOL)
    np.testing.assert_allclose(c.normal, [0.0, 0.0, 1.0], atol=EPA_ATOL)


# FLAT lies in z = 0 and STANDING pokes through it down to its bottom edge, x = 0, z = -0.1,
# |y| <= 0.2: depth -0.1, normal +z (from FLAT to STANDING), the witness points a point of
# that edge and the point of FLAT above it, pos halfway between. Coal 3.0.3 gave one point of
# the intersection as both witness points, and asked the other way round its EPA found
# another separation (0.5 along x); the package's triangle contacts give the same contact in
# both orders.
def test_crossing_mesh_triangles_witness_points() -> None:
    a = Mesh.from_arrays(FLAT, [[0, 1, 2]])
    b = Mesh.from_arrays(STANDING, [[0, 1, 2]])
    (c,) = a.contacts(b)
    p1, p2 = c.nearest_points
    assert p1[2] == pytest.approx(0.0, abs=1e-12)
    assert p2[2] == pytest.approx(-0.1, abs=1e-12)
    assert p2[0] == pytest.approx(0.0, abs=1e-12)
    assert abs(p2[1]) <= 0.2 + 1e-12
    np.testing.assert_allclose(p1[:2], p2[:2], atol=1e-12)
    np.testing.assert_allclose(c.pos, 0.5 * (p1 + p2), atol=1e-15)
    assert_identity(c, 1e-12)
    (d,) = b.contacts(a)
    assert d.penetration_depth == pytest.approx(-0.1, abs=1e-12)
    np.testing.assert_allclose(d.normal, [0.0, 0.0, -1.0], atol=1e-12)
    assert_identity(d, 1e-12)


# A sphere r=0.5 at the centre of a cylinder r=0.4, length 1 (along z): it leaves sideways
# after 0.4 + 0.5 = 0.9 (along z it would take 0.5 + 0.5 = 1.0), so the depth is -0.9 and
# the normal is any horizontal unit vector.
def test_concentric_sphere_cylinder_depth() -> None:
    (c,) = Sphere(0.5).contacts(sc.Cylinder(0.4, 1.0))
    assert c.penetration_depth == pytest.approx(-0.9, abs=ATOL)


# Coal 3.0.3 returns a zero normal for exactly concentric shapes; spatialcontact nudges the
# second shape by 0.1 µm along each axis and keeps the direction of least penetration.
def test_concentric_shapes_have_a_unit_normal() -> None:
    (c,) = Sphere(0.5).contacts(sc.Cylinder(0.4, 1.0))
    assert np.linalg.norm(c.normal) == pytest.approx(1.0)
    assert c.normal[2] == pytest.approx(0.0, abs=ATOL)
    assert_identity(c)
    # a sphere r=0.5 centred on the top face of the cube mesh: depth 0.5, normal +-z
    (d,) = cube_mesh().contacts(Sphere(0.5, pose=trans(0.3, -0.2, 1.0)))
    assert d.penetration_depth == pytest.approx(-0.5, abs=ATOL)
    assert abs(d.normal[2]) == pytest.approx(1.0)


def test_mesh_is_hollow() -> None:
    # A sphere r=0.5 at the centre of the cube mesh is 0.5 from every face: no contact,
    # though it is wholly inside the closed surface. Its convex hull is solid: the sphere
    # must move 1 + 0.5 = 1.5 along an axis to get out, so the depth is -1.5.
    mesh = cube_mesh()
    inside = Sphere(0.5)
    assert len(mesh.contacts(inside, max_contacts=20)) == 0
    (c,) = mesh.convex_hull().contacts(inside)
    assert c.penetration_depth == pytest.approx(-1.5, abs=EPA_ATOL)


# Two occupied cells of side 0.1: [0, 0.1] x [0, 0.1] x [0, 0.1] (from the point at x=0.05)
# and the cell next to it along x (from x=0.15). A sphere r=0.1 at (0.12, 0.05, 0.18):
# - over the second cell its lowest point (0.12, 0.05, 0.08) is 0.02 below the top z=0.1:
#   depth 0.02, normal +z (octree to sphere), p1 = (0.12, 0.05, 0.1), p2 = (0.12, 0.05, 0.08);
# - the first cell's nearest point is its edge (0.1, 0.05, 0.1), at sqrt(0.02^2 + 0.08^2)
#   = sqrt(0.0068) = 0.08246 from the centre: depth 0.1 - 0.08246 = 0.01754, normal
#   (0.02, 0, 0.08) / 0.08246.
OCTREE_POINTS = np.array([[0.05, 0.05, 0.05], [0.15, 0.05, 0.05]])
OCTREE_PROBE = np.array([0.12, 0.05, 0.18])


def test_octree_sphere_known_answer_both_orders() -> None:
    tree = OcTree(OCTREE_POINTS, 0.1)
    probe = Sphere(0.1, pose=trans(*OCTREE_PROBE))
    found = tree.contacts(probe, max_contacts=10)
    assert len(found) == 2
    edge_gap = math.sqrt(0.0068)
    n_edge = np.array([0.02, 0.0, 0.08]) / edge_gap
    np.testing.assert_allclose(found.penetration_depth, [-0.02, -(0.1 - edge_gap)], atol=ATOL)
    np.testing.assert_allclose(found.normal, np.array([[0.0, 0.0, 1.0], n_edge]), atol=ATOL)
    np.testing.assert_allclose(
        found.nearest_points[0], [[0.12, 0.05, 0.1], [0.12, 0.05, 0.08]], atol=ATOL
    )
    np.testing.assert_allclose(
        found.nearest_points[1],
        np.array([[0.1, 0.05, 0.1], OCTREE_PROBE - 0.1 * n_edge]),
        atol=ATOL,
    )
    assert found.b2.tolist() == [-1, -1]
    assert found.o1 == (tree, tree) and found.o2 == (probe, probe)
    # The other order: sides, rows, primitive ids and normal swap.
    swapped = probe.contacts(tree, max_contacts=10)
    assert swapped.o1 == (probe, probe) and swapped.o2 == (tree, tree)
    np.testing.assert_allclose(swapped.penetration_depth, found.penetration_depth, atol=ATOL)
    np.testing.assert_allclose(swapped.normal, -found.normal, atol=ATOL)
    np.testing.assert_allclose(swapped.nearest_points, found.nearest_points[:, ::-1], atol=ATOL)
    np.testing.assert_array_equal(swapped.b1, found.b2)
    np.testing.assert_array_equal(swapped.b2, found.b1)
    for c in (*found, *swapped):
        assert_identity(c)


def test_octree_cell_ids_name_the_touched_cells() -> None:
    # Both occupied cells are touched (see OCTREE_POINTS), each by one contact: the two
    # contacts' cell ids are the two cells, 0 and 1, in the octree's cell order.
    tree = OcTree(OCTREE_POINTS, 0.1)
    probe = Sphere(0.1, pose=trans(*OCTREE_PROBE))
    found = tree.contacts(probe, max_contacts=10)
    assert sorted(found.b1.tolist()) == [0, 1]
    np.testing.assert_array_equal(tree.cells[:, 3], [0.1, 0.1])
    for c in found:  # the witness point on the tree lies in the cell named
        centre, side = tree.cells[c.b1, :3], tree.cells[c.b1, 3]
        assert np.all(np.abs(c.nearest_points[0] - centre) <= side / 2 + 1e-9)
    swapped = probe.contacts(tree, max_contacts=10)
    assert sorted(swapped.b2.tolist()) == [0, 1]


def test_octree_octree_contacts_unsupported() -> None:
    a = OcTree(OCTREE_POINTS, 0.1)
    b = OcTree(OCTREE_POINTS, 0.1, pose=trans(0.0, 0.0, 0.05))
    assert a.iscollided(b)
    with pytest.raises(UnsupportedPairError, match="between an OcTree and an OcTree"):
        a.contacts(b)


# --------------------------------------------------------------------- security margin


def test_security_margin_reports_separated_shapes_with_positive_depth() -> None:
    a = Sphere(1.0)
    b = Sphere(1.0, pose=trans(2.1, 0.0, 0.0))
    # Surfaces 2.1 - 2 = 0.1 apart: no contact without a margin or with 0.05; with 0.2 one
    # contact of depth +0.1, p1 = (1, 0, 0), p2 = (1.1, 0, 0), pos (1.05, 0, 0).
    assert len(a.contacts(b)) == 0
    assert len(a.contacts(b, security_margin=0.05)) == 0
    (c,) = a.contacts(b, security_margin=0.2)
    assert_contact(
        c,
        normal=[1.0, 0.0, 0.0],
        points=[[1.0, 0.0, 0.0], [1.1, 0.0, 0.0]],
        pos=[1.05, 0.0, 0.0],
        depth=0.1,
    )
    assert_identity(c)
    # hpp-fcl's getDistanceToCollision: depth - margin = 0.1 - 0.2 = -0.1 (within margin)
    assert c.distance_to_collision(0.2) == pytest.approx(-0.1, abs=ATOL)
    assert c.distance_to_collision() == pytest.approx(0.1, abs=ATOL)
    report = c.report(a)
    assert report.depth == pytest.approx(-0.1, abs=ATOL)  # negative: not overlapping


def test_security_margin_mesh_sphere() -> None:
    mesh = cube_mesh()
    # Centre (0, 0, 1.55): 0.05 above the top face z = 1 for a sphere r=0.5. Margin 0.1:
    # contacts with top triangles 10 and 11 (the foot (0, 0, 1) is on their shared
    # diagonal), both of depth +0.05; no other triangle is within 0.5 + 0.1.
    probe = Sphere(0.5, pose=trans(0.0, 0.0, 1.55))
    assert len(mesh.contacts(probe, max_contacts=10)) == 0
    found = mesh.contacts(probe, max_contacts=10, security_margin=0.1)
    assert sorted(found.b1.tolist()) == [10, 11]
    np.testing.assert_allclose(found.penetration_depth, [0.05, 0.05], atol=ATOL)
    for c in found:
        assert_identity(c)


def test_distance_to_collision_of_overlapping_contact() -> None:
    a, b = sphere_pair()
    (c,) = a.contacts(b)
    assert c.distance_to_collision() == pytest.approx(-0.2, abs=ATOL)
    assert c.distance_to_collision(0.1) == pytest.approx(-0.3, abs=ATOL)
    assert c.distance_to_collision(np.float32(0.5)) == pytest.approx(-0.7, abs=1e-7)


# ------------------------------------------------------------------------- symmetry


def test_swapping_arguments_swaps_sides() -> None:
    a, b = sphere_pair()
    (c,) = a.contacts(b)
    (d,) = b.contacts(a)
    assert (d.o1, d.o2) == (b, a)
    assert (d.b1, d.b2) == (c.b2, c.b1)
    np.testing.assert_allclose(d.normal, -c.normal, atol=ATOL)
    np.testing.assert_allclose(d.nearest_points, c.nearest_points[::-1], atol=ATOL)
    np.testing.assert_allclose(d.pos, c.pos, atol=ATOL)
    assert d.penetration_depth == pytest.approx(c.penetration_depth, abs=ATOL)


def test_swapping_arguments_with_mesh_swaps_triangle_ids() -> None:
    mesh = cube_mesh()
    probe = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    forward = mesh.contacts(probe, max_contacts=10)
    backward = probe.contacts(mesh, max_contacts=10)
    assert backward.b1.tolist() == [-1, -1] and backward.b2.tolist() == [10, 3]
    np.testing.assert_allclose(backward.normal, -forward.normal, atol=ATOL)
    np.testing.assert_allclose(backward.nearest_points, forward.nearest_points[:, ::-1], atol=ATOL)
    np.testing.assert_allclose(backward.penetration_depth, forward.penetration_depth, atol=ATOL)


# ------------------------------------------------------------------------- reports


def test_reports_from_each_side() -> None:
    a, b = sphere_pair()
    (c,) = a.contacts(b)
    ra, rb = c.report(a), c.report(b)
    assert isinstance(ra, ContactReport)
    # From a's side the push comes from b: -n = (-0.6, 0, -0.8); from b's side +n.
    assert (ra.shape, ra.other, rb.shape, rb.other) == (a, b, b, a)
    np.testing.assert_allclose(ra.normal, [-0.6, 0.0, -0.8], atol=ATOL)
    np.testing.assert_allclose(rb.normal, [0.6, 0.0, 0.8], atol=ATOL)
    assert ra.depth == rb.depth == pytest.approx(0.2, abs=ATOL)
    np.testing.assert_allclose(ra.point, [1.54, 2.0, 3.72], atol=ATOL)
    np.testing.assert_array_equal(ra.point, rb.point)
    assert (ra.b_self, ra.b_other) == (-1, -1)
    assert not ra.normal.flags.writeable
    with pytest.raises(AttributeError, match="immutable"):
        ra.depth = 1.0
    assert "ContactReport(shape=Sphere, other=Sphere" in repr(ra)


def test_report_primitive_ids_and_groups() -> None:
    mesh = cube_mesh()
    probe = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    group = CollisionShapeGroup([probe])
    (c,) = mesh.contacts(group)
    on_mesh, on_probe = c.report(mesh), c.report(group)
    assert (on_mesh.b_self, on_mesh.b_other) == (10, -1)
    assert (on_probe.b_self, on_probe.b_other) == (-1, 10)
    assert on_probe.shape is group and on_probe.other is mesh
    # the sphere is pushed up out of the top face, the mesh down
    np.testing.assert_allclose(on_probe.normal, [0.0, 0.0, 1.0], atol=ATOL)
    np.testing.assert_allclose(on_mesh.normal, [0.0, 0.0, -1.0], atol=ATOL)


def test_report_of_a_shape_not_in_the_contact() -> None:
    a, b = sphere_pair()
    (c,) = a.contacts(b)
    stranger = Sphere(0.5, name="stranger")
    with pytest.raises(InvalidShapeError, match=r"shape Sphere\(radius=0.5, name='stranger'"):
        c.report(stranger)
    with pytest.raises(ValueError, match="is not in this contact"):
        c.report(CollisionShapeGroup([stranger]))


def test_contacts_reports() -> None:
    mesh = cube_mesh()
    probe = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    found = mesh.contacts(probe, max_contacts=10)
    reports = found.reports(probe)
    assert [r.b_other for r in reports] == [10, 3]
    np.testing.assert_allclose([r.depth for r in reports], [0.1, SIDE_DEPTH], atol=ATOL)
    np.testing.assert_allclose([r.normal for r in reports], found.normal, atol=ATOL)
    np.testing.assert_allclose([r.normal for r in found.reports(mesh)], -found.normal)
    assert found.reports(Sphere(1.0)) == []


# --------------------------------------------------------------------------- groups


def test_group_contacts_have_leaves_and_are_deepest_first() -> None:
    # Left group (moved 5 along y): s1 r=0.5 at x=0, s2 r=0.5 at x=3. Right group (same
    # pose): c1 unit cube at x=0.8 (x [0.3, 1.3]), c2 unit cube at x=3.6 (x [3.1, 4.1]).
    # s1-c1 overlap 0.5 - 0.3 = 0.2; s2-c2 overlap 3.5 - 3.1 = 0.4; the other pairs are > 1
    # apart. Deepest first: s2-c2 then s1-c1; positions at y = 5 in the world.
    s1, s2 = Sphere(0.5), Sphere(0.5, pose=trans(3.0))
    c1, c2 = Cuboid([1.0, 1.0, 1.0], pose=trans(0.8)), Cuboid([1.0, 1.0, 1.0], pose=trans(3.6))
    left = CollisionShapeGroup([s1, CollisionShapeGroup([s2])], pose=trans(0.0, 5.0))
    right = CollisionShapeGroup([c1, c2], pose=trans(0.0, 5.0))
    found = left.contacts(right)
    assert found.o1 == (s2, s1) and found.o2 == (c2, c1)
    np.testing.assert_allclose(found.penetration_depth, [-0.4, -0.2], atol=EPA_ATOL)
    np.testing.assert_allclose(found.normal, [[1.0, 0.0, 0.0]] * 2, atol=EPA_ATOL)
    # s2-c2: sphere point x = 3.5, cube face x = 3.1; s1-c1: 0.5 and 0.3
    np.testing.assert_allclose(found.nearest_points[:, :, 0], [[3.5, 3.1], [0.5, 0.3]], atol=1e-6)
    np.testing.assert_allclose(found.pos[:, 1:], [[5.0, 0.0]] * 2, atol=EPA_ATOL)
    # a report for the whole group
    assert [r.other for r in found.reports(left)] == [c2, c1]
    # sorting orders by o1, o2, b1, b2 (shapes in creation order)
    assert sorted(found) == [found[1], found[0]]


def test_group_against_mesh_keeps_k_per_leaf_pair() -> None:
    mesh = cube_mesh()
    near = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    # mirrored probe under the bottom face, also 0.1 deep into triangle 8 or 9 and 0.0877
    # into a side triangle
    far = Sphere(0.5, pose=trans(-0.9, 0.0, -1.4))
    group = CollisionShapeGroup([near, far])
    found = mesh.contacts(group, max_contacts=2)
    assert len(found) == 4
    np.testing.assert_allclose(
        found.penetration_depth, [-0.1, -0.1, -SIDE_DEPTH, -SIDE_DEPTH], atol=ATOL
    )
    assert set(found.o2) == {near, far}
    one_each = mesh.contacts(group)
    np.testing.assert_allclose(one_each.penetration_depth, [-0.1, -0.1], atol=ATOL)


# -------------------------------------------------------------------- the records


def test_contact_equality_hash_and_order() -> None:
    a, b = sphere_pair()
    c, again = a.contacts(b)[0], a.contacts(b)[0]
    assert c is not again and c == again and hash(c) == hash(again)
    assert not (c != again)
    other_b1 = Contact(
        a, b, 0, -1, c.normal, c.nearest_points, c.pos, c.penetration_depth
    )  # a record that differs only in b1
    assert other_b1 != c
    assert c < other_b1  # same shapes, b1 -1 < 0
    for name in ("normal", "pos"):
        fields: dict[str, Any] = {
            "o1": a, "o2": b, "b1": -1, "b2": -1, "normal": c.normal,
            "nearest_points": c.nearest_points, "pos": c.pos,
            "penetration_depth": c.penetration_depth,
        }  # fmt: skip
        fields[name] = -fields[name] if name == "normal" else fields[name] + 1.0
        assert Contact(**fields) != c
    assert Contact(b, a, -1, -1, c.normal, c.nearest_points, c.pos, -0.2) != c
    assert c != "contact" and c.__eq__("contact") is NotImplemented
    # order by o1, o2 (creation order), then b1, b2
    x, y = Sphere(1.0), Sphere(1.0)
    n, pts, pos = [1.0, 0.0, 0.0], np.zeros((2, 3)), np.zeros(3)
    records = [
        Contact(y, x, -1, -1, n, pts, pos, -0.1),
        Contact(x, y, 2, 0, n, pts, pos, -0.1),
        Contact(x, y, 1, 5, n, pts, pos, -0.9),
        Contact(x, y, 1, 3, n, pts, pos, -0.1),
    ]
    ordered = sorted(records)
    assert [(r.o1 is x, r.b1, r.b2) for r in ordered] == [
        (True, 1, 3), (True, 1, 5), (True, 2, 0), (False, -1, -1),
    ]  # fmt: skip
    assert sorted(reversed(records)) == ordered


def test_contact_is_immutable_and_read_only() -> None:
    a, b = sphere_pair()
    (c,) = a.contacts(b)
    with pytest.raises(AttributeError, match="immutable; cannot set 'b1'"):
        c.b1 = 3
    with pytest.raises(AttributeError, match="immutable; cannot delete 'normal'"):
        del c.normal
    for array in (c.normal, c.nearest_points, c.pos):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0
    # constructor copies its inputs
    normal = np.array([0.0, 1.0, 0.0])
    made = Contact(a, b, -1, -1, normal, np.zeros((2, 3)), np.zeros(3), -0.1)
    normal[1] = 5.0
    assert made.normal.tolist() == [0.0, 1.0, 0.0]
    assert not made.normal.flags.writeable and not made.nearest_points.flags.writeable
    assert Contact.NONE == -1
    assert "Contact(o1=Sphere, o2=Sphere, b1=-1, b2=-1, normal=[0.6, 0.0, 0.8]" in repr(c)


def test_contacts_sequence_and_columns() -> None:
    mesh = cube_mesh()
    probe = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    found = mesh.contacts(probe, max_contacts=10)
    assert isinstance(found, Contacts) and len(found) == 2
    assert list(found) == [found[0], found[1]] and found[-1] is found[1]
    assert isinstance(found[:1], Contacts) and len(found[:1]) == 1
    assert found.normal.shape == (2, 3) and found.pos.shape == (2, 3)
    assert found.nearest_points.shape == (2, 2, 3)
    assert found.penetration_depth.shape == (2,)
    assert found.b1.dtype == np.int64 and found.b2.shape == (2,)
    assert found.o1 == (mesh, mesh) and found.o2 == (probe, probe)
    for i, c in enumerate(found):
        np.testing.assert_array_equal(found.normal[i], c.normal)
        np.testing.assert_array_equal(found.nearest_points[i], c.nearest_points)
        np.testing.assert_array_equal(found.pos[i], c.pos)
        assert found.penetration_depth[i] == c.penetration_depth
        assert (found.b1[i], found.b2[i]) == (c.b1, c.b2)
    for column in (found.normal, found.pos, found.nearest_points, found.penetration_depth):
        assert not column.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        found.penetration_depth[0] = 0.0
    with pytest.raises(AttributeError):
        found.normal = np.zeros((2, 3))  # type: ignore[misc]
    assert found + found[:1] == Contacts([*found, found[0]])
    assert found == mesh.contacts(probe, max_contacts=10) and hash(found) == hash(found[:])
    assert repr(found) == "Contacts(2 contacts)"
    with pytest.raises(ShapeTypeError, match="contacts must hold Contact records only, got 3"):
        Contacts([found[0], 3])  # type: ignore[list-item]


def test_empty_contacts_columns() -> None:
    found = Sphere(1.0).contacts(Sphere(1.0, pose=trans(5.0)))
    assert len(found) == 0 and list(found) == [] and found == Contacts()
    assert found.normal.shape == (0, 3) and found.pos.shape == (0, 3)
    assert found.nearest_points.shape == (0, 2, 3)
    assert found.penetration_depth.shape == (0,)
    assert found.b1.shape == (0,) and found.b2.shape == (0,)
    assert found.o1 == () and found.o2 == ()
    assert found.reports(Sphere(1.0)) == []


def test_contacts_pickle_with_their_shapes() -> None:
    mesh = cube_mesh()
    probe = Sphere(0.5, pose=trans(*PROBE_CENTRE))
    found = mesh.contacts(probe, max_contacts=10)
    mesh2, probe2, found2 = pickle.loads(pickle.dumps((mesh, probe, found)))
    assert found2.o1 == (mesh2, mesh2) and found2.o2 == (probe2, probe2)
    for c, d in zip(found, found2, strict=True):
        np.testing.assert_array_equal(d.normal, c.normal)
        np.testing.assert_array_equal(d.nearest_points, c.nearest_points)
        np.testing.assert_array_equal(d.pos, c.pos)
        assert (d.b1, d.b2, d.penetration_depth) == (c.b1, c.b2, c.penetration_depth)
        assert not d.normal.flags.writeable and not d.nearest_points.flags.writeable
    # the restored shapes answer the same query with equal records
    assert mesh2.contacts(probe2, max_contacts=10) == found2


def test_contact_pickles_alone_field_by_field() -> None:
    a, b = sphere_pair()
    (c,) = a.contacts(b)
    d = pickle.loads(pickle.dumps(c))
    assert d.o1.equals(a) and d.o2.equals(b) and d.o1 is not a
    np.testing.assert_array_equal(d.nearest_points, c.nearest_points)
    assert (d.normal.tolist(), d.pos.tolist()) == (c.normal.tolist(), c.pos.tolist())
    assert (d.b1, d.b2, d.penetration_depth) == (c.b1, c.b2, c.penetration_depth)
    assert not d.pos.flags.writeable
    report = pickle.loads(pickle.dumps(c.report(a)))
    assert report.depth == pytest.approx(0.2) and report.shape.equals(a)


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("value", "error", "shown"),
    [
        (0, InvalidArgumentError, "0"),
        (-1, InvalidArgumentError, "-1"),
        (1.5, ShapeTypeError, "1.5"),
        (True, ShapeTypeError, "True"),
        ("3", ShapeTypeError, "'3'"),
        (None, ShapeTypeError, "None"),
    ],
)
def test_max_contacts_errors(value: Any, error: type[Exception], shown: str) -> None:
    a, b = sphere_pair()
    with pytest.raises(error, match=rf"max_contacts must be an integer >= 1, got {shown}$"):
        a.contacts(b, max_contacts=value)


def test_max_contacts_accepts_numpy_integers() -> None:
    a, b = sphere_pair()
    assert len(a.contacts(b, max_contacts=np.int64(3))) == 1


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (math.nan, InvalidArgumentError, "security_margin must be finite, got nan"),
        (math.inf, InvalidArgumentError, "security_margin must be finite, got inf"),
        (-math.inf, InvalidArgumentError, "security_margin must be finite, got -inf"),
        ("0.1", ShapeTypeError, "security_margin must be a real number, got '0.1'"),
        (None, ShapeTypeError, "security_margin must be a real number, got None"),
        (False, ShapeTypeError, "security_margin must be a real number, got False"),
    ],
)
def test_security_margin_errors(value: Any, error: type[Exception], message: str) -> None:
    a, b = sphere_pair()
    with pytest.raises(error, match=f"^{message}$"):
        a.contacts(b, security_margin=value)
    (c,) = a.contacts(b)
    with pytest.raises(error, match=f"^{message}$"):
        c.distance_to_collision(value)


@pytest.mark.parametrize("other", [3, "sphere", None, np.zeros(3)])
def test_other_not_a_shape(other: Any) -> None:
    with pytest.raises(
        ShapeTypeError, match=r"^other must be a CollisionShape or CollisionShapeGroup, got "
    ):
        Sphere(1.0).contacts(other)


def test_other_not_a_shape_names_its_type_and_value() -> None:
    with pytest.raises(TypeError, match=r"got int: 3$"):
        Sphere(1.0).contacts(3)  # type: ignore[arg-type]


def test_collision_false_shapes() -> None:
    on = Sphere(1.0)
    off = Sphere(1.0, name="ghost", collision=False)
    with pytest.raises(CollisionDisabledError, match=r"^other Sphere\(radius=1.0, name='ghost'"):
        on.contacts(off)
    with pytest.raises(CollisionDisabledError, match=r"^self Sphere\(.*has collision=False"):
        off.contacts(on)
    with pytest.raises(ValueError, match="has collision=False"):
        on.contacts(CollisionShapeGroup([on.__class__(1.0)], collision=False))


def test_contact_constructor_accepts_valid_fields() -> None:
    a, b = Sphere(1.0), Cuboid([1.0, 1.0, 1.0])
    c = Contact(a, b, -1, np.int32(7), (0, 0, 1), [[0, 0, 0], [0, 0, -0.1]], [0, 0, -0.05], -0.1)
    assert (c.o1, c.o2, c.b1, c.b2) == (a, b, -1, 7) and type(c.b2) is int
    assert c.normal.dtype == np.float64 and c.penetration_depth == -0.1
    assert_identity(c)


_GOOD: dict[str, Any] = {
    "b1": -1,
    "b2": -1,
    "normal": [0.0, 0.0, 1.0],
    "nearest_points": [[0.0, 0.0, 0.0], [0.0, 0.0, -0.1]],
    "pos": [0.0, 0.0, -0.05],
    "penetration_depth": -0.1,
}


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("normal", [0.0, 0.0, 2.0], InvalidShapeError, r"normal must be a unit vector, got \[0"),
        ("normal", [0.0, 0.0, 0.0], InvalidShapeError, "normal must be a unit vector"),
        ("normal", [0.0, 1.0], InvalidShapeError, r"normal must be finite numbers of shape \(3,\)"),
        ("normal", [0.0, math.nan, 1.0], InvalidShapeError, r"normal must be finite numbers"),
        ("normal", "up", ShapeTypeError, r"normal must be numbers of shape \(3,\), got 'up'"),
        (
            "nearest_points",
            [0.0, 0.0, 0.0],
            InvalidShapeError,
            r"nearest_points must be finite numbers of shape \(2, 3\), got \[0",
        ),
        ("nearest_points", np.zeros((3, 2)), InvalidShapeError, r"of shape \(2, 3\)"),
        ("pos", np.zeros((1, 3)), InvalidShapeError, r"pos must be finite numbers of shape \(3,"),
        ("pos", [0.0, math.inf, 0.0], InvalidShapeError, r"pos must be finite numbers"),
        ("b1", -2, InvalidShapeError, "b1 must be an integer >= -1, got -2$"),
        ("b2", 1.5, ShapeTypeError, "b2 must be an integer >= -1, got 1.5$"),
        ("b1", True, ShapeTypeError, "b1 must be an integer >= -1, got True$"),
        ("b2", "0", ShapeTypeError, "b2 must be an integer >= -1, got '0'$"),
        ("penetration_depth", math.nan, InvalidShapeError, "penetration_depth must be finite"),
        (
            "penetration_depth",
            "-0.1",
            ShapeTypeError,
            "penetration_depth must be a real number, got '-0.1'$",
        ),
    ],
)
def test_contact_constructor_errors(field: str, value: Any, error: type, message: str) -> None:
    fields = dict(_GOOD, **{field: value})
    with pytest.raises(error, match=message):
        Contact(Sphere(1.0), Sphere(1.0), **fields)


@pytest.mark.parametrize("side", ["o1", "o2"])
def test_contact_constructor_wants_shapes(side: str) -> None:
    shapes: dict[str, Any] = {"o1": Sphere(1.0), "o2": Sphere(1.0), side: "sphere"}
    with pytest.raises(ShapeTypeError, match=f"^{side} must be a CollisionShape, got 'sphere'$"):
        Contact(**shapes, **_GOOD)


def test_public_names() -> None:
    assert sc.Contact is Contact and sc.Contacts is Contacts and sc.ContactReport is ContactReport
    assert issubclass(InvalidShapeError, ValueError) and issubclass(ShapeTypeError, TypeError)


def test_closed_form_records_are_read_like_coal_records() -> None:
    # A sphere deep in a capsule: the record comes from the closed form, its arrays made when
    # first read, the same whichever way they are read.
    ball = sc.Sphere(0.5)
    capsule = sc.Capsule(0.3, 1.0, pose=trans(0.5, 0.1, 0.05))
    found = ball.contacts(capsule)
    record = found[0]
    assert record._arrays is None
    normals, positions = found._normals_and_positions(np.array([0]))
    np.testing.assert_array_equal(normals[0], record.normal)
    np.testing.assert_array_equal(positions[0], record.pos)
    p1, p2 = record.nearest_points
    np.testing.assert_array_equal(record.pos, 0.5 * (p1 + p2))
    np.testing.assert_allclose(p2 - p1, record.penetration_depth * record.normal, atol=1e-12)
    assert record.penetration_depth == pytest.approx(ball.distance(capsule), abs=1e-15)
    for array in (record.normal, record.nearest_points, record.pos):
        assert not array.flags.writeable
    again = pickle.loads(pickle.dumps(ball.contacts(capsule)[0]))
    np.testing.assert_array_equal(again.nearest_points, record.nearest_points)
    np.testing.assert_array_equal(again.pos, record.pos)


def test_coal_records_are_read_in_compiled_code_as_in_python() -> None:
    # A scene's contacts mix Coal's records (mesh against sphere, several per pair) and
    # closed-form ones (sphere in a capsule): a sensor's rows of normals and positions, read in
    # compiled code, are what each record gives, in any order and with repeats.
    mesh = sc.Mesh(sc.meshes.path("objects/sphere.stl"))
    scene = sc.Scene()
    scene.add(mesh, "mesh")
    scene.add(sc.Sphere(0.05, pose=trans(0.12, 0.0, 0.0)), "probe")
    scene.add(sc.Sphere(0.5, pose=trans(3.0, 0.0, 0.0)), "ball")
    scene.add(sc.Capsule(0.3, 1.0, pose=trans(3.5, 0.1, 0.05)), "capsule")
    found = scene.contacts(max_contacts_per_pair=8)
    kinds = {type(record._coal).__name__ for record in found}
    assert kinds == {"Contact", "tuple"} and len(found) > 3
    mixed = found + Contacts([Contact(Sphere(1.0), Sphere(1.0), **_GOOD)])  # one made by hand
    rows = np.array([len(mixed) - 1, 0, 2, 0, 1])
    normals, positions = mixed._normals_and_positions(rows)
    for k, r in enumerate(rows.tolist()):
        np.testing.assert_array_equal(normals[k], mixed[r].normal)
        np.testing.assert_array_equal(positions[k], mixed[r].pos)
    np.testing.assert_array_equal(mixed._normals_and_positions(rows[:0])[0], np.zeros((0, 3)))
    again = pickle.loads(pickle.dumps(mixed))  # a pickled copy reads the same
    np.testing.assert_array_equal(again.normal[rows], normals)
    np.testing.assert_array_equal(again.pos[rows], positions)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (((None,), np.zeros((1, 2, 3))), "contacts must be a list"),
        (([None], np.zeros((2, 2, 3))), "out must be a writable C-contiguous float64"),
        (([None], np.zeros((1, 2, 3))[:, :, ::-1]), "out must be a writable C-contiguous"),
        (([None], np.zeros((1, 2, 3), dtype=np.float32)), "out must be a writable C-contiguous"),
        (([None],), "contact_normals_positions takes 2 arguments, got 1"),
    ],
)
def test_compiled_record_reading_refuses_bad_arguments(args: tuple[Any, ...], message: str) -> None:
    from spatialcontact import _native

    with pytest.raises(TypeError, match=message):
        _native.contact_normals_positions(*args)
    assert _native.contact_normals_positions([None, 1.0], np.zeros((2, 2, 3))) == [0, 1]
