"""Two meshes' contacts, triangle pair by triangle pair (``_native.mesh_contacts``).

The depth of two crossing triangles is checked as what it is, the shortest translation that
separates them: moving the second triangle by it (and a hair more) along the normal leaves
the two apart, and no direction separates them with less (checked over many directions).
The pairs found are Coal's own (its collision query lists the same triangle pairs); only
Coal's depths differ, and they are wrong (EPA overshoots, by 30x on one pair of icospheres).
"""

from __future__ import annotations

import math
from typing import Any

import coal
import numpy as np
import pytest
import trimesh
from hypothesis import given, settings
from hypothesis import strategies as st

import spatialcontact as sc
from spatialcontact import _native
from spatialcontact.mesh import _bvh

FLAT = np.array([[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, 0.0]])
STANDING = np.array([[0.0, -0.2, -0.1], [0.0, 0.2, -0.1], [0.0, 0.0, 0.5]])
EVERY = 1 << 30


def model(vertices: np.ndarray, faces: np.ndarray | None = None) -> coal.BVHModelOBBRSS:
    """A Coal mesh of ``vertices`` (n, 3) and ``faces`` (m, 3), one triangle by default."""
    return _bvh(np.asarray(vertices, dtype=np.float64), np.asarray(
        [[0, 1, 2]] if faces is None else faces, dtype=np.int64
    ))  # fmt: skip


def moved(t: Any) -> coal.Transform3s:
    return coal.Transform3s(np.eye(3), np.asarray(t, dtype=np.float64))


def contacts(m1: coal.BVHModelOBBRSS, m2: coal.BVHModelOBBRSS, tf2: coal.Transform3s,
             margin: float = 0.0, keep: int = EVERY) -> tuple[np.ndarray, ...]:  # fmt: skip
    return _native.mesh_contacts(m1, coal.Transform3s(), m2, tf2, margin, keep)


def overlaps(A: np.ndarray, B: np.ndarray, U: np.ndarray) -> np.ndarray:
    """Overlap (k,) of the projections of triangles A and B (3, 3) on unit directions U (k, 3):
    the translation of B along U or -U that separates them, the smaller of the two."""
    a, b = A @ U.T, B @ U.T
    return np.minimum(a.max(0) - b.min(0), b.max(0) - a.min(0))


def directions(rng: np.random.Generator, k: int) -> np.ndarray:
    U = rng.normal(size=(k, 3))
    return U / np.linalg.norm(U, axis=1)[:, None]


def candidates(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The unit normals (k, 3) of the facets two triangles' Minkowski difference can have:
    each triangle's normal, the cross products of an edge of each, the in-plane normals of
    the edges (degenerate directions left out)."""
    ea, eb = np.roll(A, -1, axis=0) - A, np.roll(B, -1, axis=0) - B
    na, nb = np.cross(ea[0], ea[1]), np.cross(eb[0], eb[1])
    U = np.vstack([na, nb, np.cross(ea[:, None], eb[None]).reshape(9, 3),
                   np.cross(na, ea), np.cross(nb, eb)])  # fmt: skip
    length = np.linalg.norm(U, axis=1)
    keep = length > 1e-9
    return U[keep] / length[keep, None]


def on_triangle(p: np.ndarray, T: np.ndarray, tolerance: float) -> bool:
    """Whether the point p lies on the triangle T (3, 3) within ``tolerance``."""
    q = trimesh.triangles.closest_point(T[None], p[None])[0]
    return bool(np.linalg.norm(q - p) <= tolerance)


# ------------------------------------------------------------------------- known answers


def test_crossing_triangles_known_answer_in_both_orders() -> None:
    # STANDING pokes 0.1 through FLAT (z = 0): the shortest way out is 0.1 along +z.
    flat, standing = model(FLAT), model(STANDING)
    triangles, depth, normal, p1, p2 = contacts(flat, standing, coal.Transform3s())
    assert triangles.tolist() == [[0, 0]]
    assert depth.tolist() == pytest.approx([-0.1], abs=1e-15)
    np.testing.assert_allclose(normal, [[0.0, 0.0, 1.0]], atol=1e-15)
    assert p1[0, 2] == pytest.approx(0.0, abs=1e-12)
    assert p2[0, 2] == pytest.approx(-0.1, abs=1e-12)
    triangles, depth, normal, p1, p2 = contacts(standing, flat, coal.Transform3s())
    assert depth.tolist() == pytest.approx([-0.1], abs=1e-15)
    np.testing.assert_allclose(normal, [[0.0, 0.0, -1.0]], atol=1e-15)


def test_triangles_apart_within_the_margin_get_their_distance() -> None:
    # FLAT at z = 0 and STANDING raised 0.15 (its bottom edge at z = 0.05): 0.05 apart.
    flat, standing = model(FLAT), model(STANDING)
    up = moved([0.0, 0.0, 0.15])
    _, depth, normal, p1, p2 = contacts(flat, standing, up, margin=0.1)
    assert depth.tolist() == pytest.approx([0.05], abs=1e-12)
    np.testing.assert_allclose(normal, [[0.0, 0.0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(p2 - p1, 0.05 * normal, atol=1e-12)
    assert len(contacts(flat, standing, up, margin=0.04)[1]) == 0
    assert len(contacts(flat, standing, up)[1]) == 0


def test_a_negative_margin_keeps_the_deeper_pairs() -> None:
    flat, standing = model(FLAT), model(STANDING)
    assert len(contacts(flat, standing, coal.Transform3s(), margin=-0.05)[1]) == 1
    assert len(contacts(flat, standing, coal.Transform3s(), margin=-0.2)[1]) == 0


def test_keep_gives_the_deepest_first() -> None:
    mesh = trimesh.creation.icosphere(subdivisions=2)
    m = model(mesh.vertices, mesh.faces)
    tf = moved([1.6, 0.1, 0.05])
    every = contacts(m, m, tf)
    assert len(every[1]) > 10
    assert np.all(np.diff(every[1]) >= 0.0)
    three = contacts(m, m, tf, keep=3)
    for got, want in zip(three, every, strict=True):
        np.testing.assert_array_equal(got, want[:3])


# ------------------------------------------------------------------------- properties


@st.composite
def triangle_pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    coordinate = st.floats(-1.0, 1.0, allow_nan=False)
    A = np.array(draw(st.lists(coordinate, min_size=9, max_size=9))).reshape(3, 3)
    B = np.array(draw(st.lists(coordinate, min_size=9, max_size=9))).reshape(3, 3)
    return A, B


def area(T: np.ndarray) -> float:
    return float(np.linalg.norm(np.cross(T[1] - T[0], T[2] - T[0])))


@settings(max_examples=300, deadline=None)
@given(triangle_pairs(), st.integers(0, 2**32 - 1))
def test_the_depth_is_the_shortest_separating_translation(
    pair: tuple[np.ndarray, np.ndarray], seed: int
) -> None:
    A, B = pair
    if area(A) < 1e-3 or area(B) < 1e-3:
        return  # slivers: Coal leaves zero-area triangles out of a mesh (quirks H)
    found = contacts(model(A), model(B), coal.Transform3s())
    if not len(found[1]):
        # Apart: a direction of the candidates separates them (its overlap is negative),
        # which proves it; Coal's collision query reads some such pairs as deep (-1.0 for two
        # triangles 1e-298 apart).
        assert overlaps(A, B, candidates(A, B)).min() < 0.0
        return
    (depth,), (normal,), (p1,), (p2,) = found[1:]
    assert depth <= 0.0
    assert abs(np.linalg.norm(normal) - 1.0) <= 1e-12
    np.testing.assert_allclose(p2 - p1, depth * normal, atol=1e-9)
    assert on_triangle(p1, A, 1e-9) and on_triangle(p2, B, 1e-9)
    # Moved out by the depth and a hair more along the normal, B is apart from A (the normal
    # separates them) ...
    out = B + (1e-9 - depth) * normal
    assert overlaps(A, out, normal[None])[0] < 0.0
    assert len(contacts(model(A), model(out), coal.Transform3s())[1]) == 0
    # ... and no direction separates them with less.
    U = np.vstack([directions(np.random.default_rng(seed), 4000), candidates(A, B)])
    assert overlaps(A, B, U).min() >= -depth - 1e-12
    # The other argument order gives the same depth and the opposite normal.
    back = contacts(model(B), model(A), coal.Transform3s())
    assert back[1][0] == pytest.approx(depth, abs=1e-12)


def test_apart_triangles_have_a_separating_direction() -> None:
    # B 3 m along +x from A: no contact, and +x separates them.
    A = FLAT
    B = STANDING + np.array([3.0, 0.0, 0.0])
    assert len(contacts(model(A), model(B), coal.Transform3s())[1]) == 0
    assert overlaps(A, B, np.array([[1.0, 0.0, 0.0]]))[0] < 0.0


@settings(max_examples=40, deadline=None)
@given(
    st.floats(1.2, 2.1),
    st.floats(-0.5, 0.5),
    st.floats(-math.pi, math.pi),
)
def test_the_pairs_are_coals_and_the_depths_no_deeper(
    offset: float, lateral: float, angle: float
) -> None:
    # Two crossing icospheres (r = 1): Coal's collision query lists the same triangle pairs;
    # its EPA depths are never shallower than the exact ones (it overshoots, never the other
    # way), up to EPA's tolerance.
    mesh = trimesh.creation.icosphere(subdivisions=2)
    m = model(mesh.vertices, mesh.faces)
    c, s = math.cos(angle), math.sin(angle)
    R = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    tf = coal.Transform3s(R, np.array([offset, lateral, 0.0]))
    triangles, depth = contacts(m, m, tf)[:2]
    request = coal.CollisionRequest()
    request.num_max_contacts = 1 << 16
    request.enable_contact = True
    result = coal.CollisionResult()
    coal.collide(m, coal.Transform3s(), m, tf, request, result)
    theirs = {(c.b1, c.b2): c.penetration_depth for c in result.getContacts()}
    ours = {(int(i), int(j)): float(d) for (i, j), d in zip(triangles, depth, strict=True)}
    for key in set(theirs) ^ set(ours):  # only pairs touching to within rounding differ
        assert abs(ours.get(key, theirs.get(key, 0.0))) <= 1e-9
    for key in set(theirs) & set(ours):
        assert theirs[key] <= ours[key] + 1e-6


# --------------------------------------------------------------------- through the API


def test_the_icosphere_pair_coal_read_twice_too_deep() -> None:
    # The benchmark's two 5,120-triangle icospheres (r = 1), 0.25 into each other, the second
    # rolled 30 degrees about x: Coal's contacts read the deepest pair -0.0555 (and one pair
    # 0.0017 deep as 0.055 and 0.039 in the two orders). The exact deepest is -0.02426.
    mesh = trimesh.creation.icosphere(subdivisions=4)
    c, s = math.cos(math.radians(30.0)), math.sin(math.radians(30.0))
    T = np.array([[1.0, 0, 0, 1.75], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])
    a = sc.Mesh.from_trimesh(mesh)
    b = sc.Mesh.from_trimesh(mesh, pose=T)
    d, p1, p2 = a.closest_point(b)
    assert d is not None and p1 is not None and p2 is not None
    (first,) = a.contacts(b)
    assert d == pytest.approx(-0.024265, abs=1e-6)
    assert first.penetration_depth == d == a.distance(b) == b.distance(a)
    np.testing.assert_allclose(p2 - p1, d * first.normal, atol=1e-12)
    A = mesh.vertices[mesh.faces[first.b1]]
    B = mesh.vertices[mesh.faces[first.b2]] @ T[:3, :3].T + T[:3, 3]
    assert overlaps(A, B, directions(np.random.default_rng(0), 20000)).min() >= -d - 1e-12
    assert overlaps(A, B, first.normal[None])[0] == pytest.approx(-d, abs=1e-12)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("position", "value", "error", "message"),
    [
        (0, coal.Box(1, 1, 1), TypeError, "m1 must be a coal.BVHModelOBBRSS, got Box"),
        (2, None, TypeError, "m2 must be a coal.BVHModelOBBRSS, got NoneType"),
        (1, np.eye(4), TypeError, "tf1 must be a coal.Transform3s, got numpy.ndarray"),
        (3, 1.0, TypeError, "tf2 must be a coal.Transform3s, got float"),
        (4, math.nan, ValueError, "margin must be finite"),
        (4, "x", TypeError, "must be real number"),
        (5, 0, ValueError, "keep must be at least 1, got 0"),
        (5, 1.5, TypeError, "integer"),
        (0, coal.BVHModelOBBRSS(), ValueError, "m1 must be a built triangle mesh"),
    ],
)
def test_refusals(position: int, value: object, error: type, message: str) -> None:
    args: list[object] = [model(FLAT), coal.Transform3s(), model(STANDING), coal.Transform3s(),
                          0.0, 1]  # fmt: skip
    args[position] = value
    with pytest.raises(error, match=message):
        _native.mesh_contacts(*args)  # type: ignore[arg-type]


def test_a_point_cloud_is_refused() -> None:
    cloud = coal.BVHModelOBBRSS()
    cloud.beginModel(0, 3)
    cloud.addVertices(np.eye(3))
    cloud.endModel()
    with pytest.raises(ValueError, match="m2 must be a built triangle mesh"):
        _native.mesh_contacts(model(FLAT), coal.Transform3s(), cloud, coal.Transform3s(), 0.0, 1)


def test_mesh_contacts_takes_six_arguments() -> None:
    with pytest.raises(TypeError, match="mesh_contacts takes 6 arguments, got 2"):
        _native.mesh_contacts(model(FLAT), coal.Transform3s())  # type: ignore[call-arg]
