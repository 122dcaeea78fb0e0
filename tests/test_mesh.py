"""Meshes, convex hulls and octrees: known answers, files, and every kind of bad data."""

from __future__ import annotations

import math
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh
from conftest import near, rot, trans
from hypothesis import given
from hypothesis import strategies as st

import spatialcontact as sc
from spatialcontact._validate import MIN_SIZE, describe

ATOL = 1e-9
TRIANGLE = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def _box_mesh(**kwargs: Any) -> sc.Mesh:
    """A closed triangle mesh of the cube [-1, 1]^3 (12 triangles)."""
    return sc.Mesh.from_trimesh(trimesh.creation.box(extents=[2.0, 2.0, 2.0]), **kwargs)


# --------------------------------------------------------------------- mesh known answers


def test_single_triangle_against_a_sphere() -> None:
    # The triangle lies in z = 0; a sphere of radius 0.5 above (0.2, 0.2) at height 2 is
    # 2 - 0.5 = 1.5 away, straight down.
    tri = sc.Mesh.from_arrays(TRIANGLE, [[0, 1, 2]])
    ball = sc.Sphere(0.5, pose=trans(0.2, 0.2, 2.0))
    d, p1, p2 = near(tri, ball)
    assert d == pytest.approx(1.5, abs=ATOL)
    np.testing.assert_allclose(p1, [0.2, 0.2, 0.0], atol=ATOL)
    np.testing.assert_allclose(p2, [0.2, 0.2, 1.5], atol=ATOL)
    assert not tri.iscollided(ball)
    # Beyond the corner (1, 0, 0): the sphere at (2, -1, 0) is sqrt(2) - 0.5 away.
    ball.T = trans(2.0, -1.0, 0.0)
    d, p1, _ = near(tri, ball)
    assert d == pytest.approx(math.sqrt(2.0) - 0.5, abs=ATOL)
    np.testing.assert_allclose(p1, [1.0, 0.0, 0.0], atol=ATOL)


def test_box_mesh_against_a_sphere() -> None:
    mesh = _box_mesh()
    # outside: sphere r = 0.5 at x = 3, face x = 1: 3 - 1 - 0.5 = 1.5
    ball = sc.Sphere(0.5, pose=trans(3.0))
    d, p1, p2 = near(mesh, ball)
    assert d == pytest.approx(1.5, abs=ATOL)
    np.testing.assert_allclose(p1, [1.0, 0.0, 0.0], atol=ATOL)
    np.testing.assert_allclose(p2, [2.5, 0.0, 0.0], atol=ATOL)
    assert mesh.closest_point(ball) == (None, None, None)  # 1.5 > inf_dist = 1
    # through the face: centre at x = 1.2, 0.2 outside the face: 0.2 - 0.5 = -0.3
    ball.T = trans(1.2)
    d, p1, p2 = near(ball, mesh)
    assert d == pytest.approx(-0.3, abs=ATOL)
    np.testing.assert_allclose(p1, [0.7, 0.0, 0.0], atol=ATOL)
    np.testing.assert_allclose(p2, [1.0, 0.0, 0.0], atol=ATOL)
    assert mesh.iscollided(ball) and ball.iscollided(mesh)


def test_a_mesh_is_hollow_and_its_hull_is_solid() -> None:
    # A sphere r = 0.5 at the centre of the cube mesh [-1, 1]^3 touches no triangle: it is
    # 1 - 0.5 = 0.5 from every face. The convex hull is solid: the sphere is 1 + 0.5 = 1.5 deep.
    mesh = _box_mesh(pose=trans(0.0, 0.0, 2.0), color="red", name="crate")
    ball = sc.Sphere(0.5, pose=trans(0.0, 0.0, 2.0))
    assert not mesh.iscollided(ball)
    assert mesh.distance(ball) == pytest.approx(0.5, abs=ATOL)
    hull = mesh.convex_hull()
    assert isinstance(hull, sc.ConvexHull)
    assert np.array_equal(hull.T, mesh.T) and hull.color == mesh.color and hull.name == "crate"
    assert hull.iscollided(ball) and ball.iscollided(hull)
    d, p1, p2 = near(hull, ball)
    assert d == pytest.approx(-1.5, abs=1e-6)
    assert float(np.linalg.norm(p1 - p2)) == pytest.approx(1.5, abs=1e-6)


def test_mesh_scale_and_vertices() -> None:
    mesh = sc.Mesh.from_arrays(TRIANGLE, [[0, 1, 2]], scale=[2, 3, 1])
    assert mesh.vertices.tolist() == [[0, 0, 0], [2, 0, 0], [0, 3, 0]]
    assert mesh.faces.dtype == np.int64 and mesh.faces.tolist() == [[0, 1, 2]]
    with pytest.raises(ValueError, match=r"read-only"):
        mesh.vertices[0, 0] = 1.0
    with pytest.raises(ValueError, match=r"read-only"):
        mesh.faces[0, 0] = 1
    mesh.scale = 2  # a scalar scales every axis
    assert mesh.scale.tolist() == [2.0, 2.0, 2.0]
    mesh.scale = None
    assert mesh.scale.tolist() == [1.0, 1.0, 1.0]
    # beyond the corner (1, 0, 0) along x: a sphere r = 0.5 at x = 3 is 3 - 1 - 0.5 = 1.5 away
    ball = sc.Sphere(0.5, pose=trans(3.0))
    assert mesh.distance(ball) == pytest.approx(1.5, abs=ATOL)


def test_arrays_are_copied() -> None:
    vertices = np.array(TRIANGLE)
    faces = np.array([[0, 1, 2]])
    mesh = sc.Mesh.from_arrays(vertices, faces)
    vertices[1, 0] = 50.0
    faces[0, 0] = 2
    assert mesh.vertices[1, 0] == 1.0 and mesh.faces[0, 0] == 0


def test_integer_valued_float_faces_are_accepted() -> None:
    mesh = sc.Mesh.from_arrays(TRIANGLE, np.array([[0.0, 1.0, 2.0]]))
    assert mesh.faces.tolist() == [[0, 1, 2]]
    unsigned = sc.Mesh.from_arrays(TRIANGLE, np.array([[0, 1, 2]], dtype=np.uint32))
    assert unsigned.faces.dtype == np.int64


@pytest.mark.parametrize("extra", [[0, 0, 1], [0, 1, 3]], ids=["repeated", "collinear"])
def test_zero_area_triangles_beside_real_ones_are_dropped(extra: list[int]) -> None:
    # A zero-area triangle (a repeated vertex, or (0,0,0), (1,0,0), (2,0,0) in a line) next to
    # a real one: the mesh keeps only the real triangle. Coal, given the degenerate one, measured
    # a sphere anywhere as overlapping by its radius (-0.5 here).
    vertices = [*TRIANGLE, [2.0, 0.0, 0.0]]
    mesh = sc.Mesh.from_arrays(vertices, [[0, 1, 2], extra])
    assert mesh.faces.tolist() == [[0, 1, 2]] and not mesh.faces.flags.writeable
    ball = sc.Sphere(0.5, pose=trans(0.2, 0.2, 2.0))  # 2 - 0.5 = 1.5 above the triangle
    assert mesh.distance(ball) == pytest.approx(1.5, abs=ATOL)
    assert ball.distance(mesh) == pytest.approx(1.5, abs=ATOL)
    # nearest: the middle (0.5, 0.5, 0) of the long edge: |(4.5, 4.5, 5)| - 0.5
    ball.T = trans(5.0, 5.0, 5.0)
    assert mesh.distance(ball) == pytest.approx(math.sqrt(65.5) - 0.5, abs=ATOL)
    assert not mesh.iscollided(ball)


def test_slivers_of_tiny_area_are_kept() -> None:
    vertices = [*TRIANGLE, [2.0, 1e-9, 0.0]]
    mesh = sc.Mesh.from_arrays(vertices, [[0, 1, 2], [0, 1, 3]])
    assert len(mesh.faces) == 2
    assert mesh.distance(sc.Sphere(0.5, pose=trans(0.2, 0.2, 2.0))) == pytest.approx(1.5)


def test_mesh_equality_and_pickle_compare_the_data() -> None:
    a = sc.Mesh.from_arrays(TRIANGLE, [[0, 1, 2]])
    b = sc.Mesh.from_arrays(TRIANGLE, [[0, 2, 1]])
    assert not a.equals(b) and a.equals(sc.Mesh.from_arrays(TRIANGLE, [[0, 1, 2]]))
    copy = pickle.loads(pickle.dumps(a))
    assert copy.equals(a)
    probe = sc.Sphere(0.1, pose=trans(0.3, 0.3, 0.5))
    d, p1, _ = near(copy, probe)
    assert d == near(a, probe)[0] == pytest.approx(0.4)  # 0.5 - 0.1 above the triangle
    np.testing.assert_array_equal(p1, near(a, probe)[1])


def test_from_trimesh_needs_a_trimesh() -> None:
    # A type mistake: a TypeError (ShapeTypeError), as the errors table has it.
    with pytest.raises(sc.ShapeTypeError, match=r"^mesh must be a trimesh\.Trimesh .*got 3$"):
        sc.Mesh.from_trimesh(3)
    with pytest.raises(TypeError, match=r"got 'bunny.stl'$"):
        sc.Mesh.from_trimesh("bunny.stl")
    with pytest.raises(sc.ShapeTypeError, match=r"^mesh must be a trimesh\.Trimesh"):
        sc.Mesh.from_trimesh(trimesh.PointCloud(TRIANGLE))


# ----------------------------------------------------------------------------- bad arrays

BAD_ARRAYS = [
    pytest.param(
        TRIANGLE,
        np.zeros((0, 3), dtype=int),
        r"^faces is empty: .*at least one triangle",
        id="no-faces",
    ),
    pytest.param(
        TRIANGLE, [[0, 1, 3]], r"^faces index vertex 3, outside the 3 vertices", id="range"
    ),
    pytest.param(
        TRIANGLE, [[0, 1, -1]], r"^faces index vertex -1, outside the 3 vertices", id="neg"
    ),
    pytest.param(  # named as given, not as wrapped to int64 (-1)
        TRIANGLE,
        np.array([[0, 1, 2**64 - 1]], dtype=np.uint64),
        r"^faces index vertex 18446744073709551615, outside the 3 vertices",
        id="uint64",
    ),
    pytest.param(
        [[0, 0, 0], [math.nan, 0, 0], [0, 1, 0]],
        [[0, 1, 2]],
        r"^vertices must be finite, got nan at row 1$",
        id="nan",
    ),
    pytest.param(
        [[0, 0, 0], [1, 0, 0], [0, 1, -math.inf]],
        [[0, 1, 2]],
        r"^vertices must be finite, got -inf at row 2$",
        id="inf",
    ),
    pytest.param(
        [[0, 0, 0], [1, 0, 0], [2, 0, 0]],
        [[0, 1, 2]],
        r"^all 1 triangles have zero area",
        id="collinear",
    ),
    pytest.param(
        [[1, 1, 1]] * 4, [[0, 1, 2], [1, 2, 3]], r"^all 2 triangles have zero area", id="one-point"
    ),
    pytest.param(
        [[0, 0], [1, 0], [0, 1]],
        [[0, 1, 2]],
        r"^vertices must have shape \(n, 3\), got shape \(3, 2\)",
        id="v2d",
    ),
    pytest.param(
        TRIANGLE[:2], [[0, 1, 1]], r"^vertices must hold at least 3 points, got 2$", id="2-vertices"
    ),
    pytest.param(
        TRIANGLE, [[0, 1, 2, 0]], r"^faces must have shape \(m, 3\), got shape \(1, 4\)", id="quad"
    ),
    pytest.param(
        TRIANGLE,
        [0, 1, 2],
        r"^faces must have shape \(m, 3\), got shape \(3,\): \[0, 1, 2\]$",
        id="f1d",
    ),
    pytest.param(
        TRIANGLE,
        [[0, 1, 1.5]],
        r"^faces must hold integer indices, got \[\[0, 1, 1\.5\]\]$",
        id="ffloat",
    ),
    pytest.param(
        TRIANGLE,
        [[0, 1, math.nan]],
        r"^faces must hold integer indices, got \[\[0, 1, nan\]\]$",
        id="fnan",
    ),
]


@pytest.mark.parametrize(("vertices", "faces", "message"), BAD_ARRAYS)
def test_bad_mesh_arrays(vertices: Any, faces: Any, message: str) -> None:
    with pytest.raises(sc.InvalidMeshError, match=message):
        sc.Mesh.from_arrays(vertices, faces)


@pytest.mark.parametrize(
    ("faces", "why"),
    [
        ([[True, False, True]], "booleans"),
        (np.array([[True, False, True]]), "booleans"),
        ([[False, True, 2]], "booleans or masked arrays among the values"),
        ([(0, 1, np.True_)], "booleans or masked arrays among the values"),
        (
            np.ma.masked_array([[0, 1, 2]], mask=[[False, False, True]]),
            "a masked array: fill or compress it first",
        ),
        ([["0", "1", "2"]], "strings"),
        ([[0, 1, 1j]], "complex numbers"),
        (np.array([[0, 1, 2]], dtype=object), "an object array: give it a numeric dtype"),
    ],
    ids=[
        "bools",
        "bool-array",
        "bool-in-list",
        "numpy-bool-in-tuple",
        "masked",
        "strings",
        "complex",
        "objects",
    ],
)
def test_faces_that_are_not_numbers_are_a_type_error(faces: Any, why: str) -> None:
    # numpy would read False and True as indices 0 and 1, and drop the mask.
    with pytest.raises(sc.ShapeTypeError) as caught:
        sc.Mesh.from_arrays(TRIANGLE, faces)
    assert str(caught.value) == f"faces must be integer indices, got {describe(faces)} ({why})"


@pytest.mark.parametrize(
    ("faces", "message"),
    [
        ([[0, 1, math.inf]], "faces must hold integer indices, got [[0, 1, inf]]"),
        ([[0, 1, 1e300]], "faces index vertex 1e+300, outside the 3 vertices (0..2)"),
        ([[0, 1, 10**30]], "faces index vertex 1e+30, outside the 3 vertices (0..2)"),
        (
            [[0, 1, -(10**400)]],
            "faces must be integer indices within float range (about ±1.8e308), got -1.000e+400",
        ),
    ],
    ids=["infinite", "huge-float", "beyond-int64", "beyond-floats"],
)
def test_faces_that_are_not_indices_name_the_value(faces: Any, message: str) -> None:
    # An infinite index raised OverflowError, and 1e300 was printed with its 301 digits.
    with pytest.raises(sc.InvalidMeshError) as caught:
        sc.Mesh.from_arrays(TRIANGLE, faces)
    assert str(caught.value) == message


def test_mesh_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match=r"^faces is empty"):
        sc.Mesh.from_arrays(TRIANGLE, np.zeros((0, 3), dtype=int))


@pytest.mark.parametrize(
    ("scale", "error", "message"),
    [
        (0, sc.InvalidShapeError, r"^scale must be positive, got \(0, 0, 0\)$"),
        (-2.0, sc.InvalidShapeError, r"^scale must be positive, got \(-2\.0, -2\.0, -2\.0\)$"),
        ([1, 0, 1], sc.InvalidShapeError, r"^scale must be positive, got \[1, 0, 1\]$"),
        (math.nan, sc.InvalidShapeError, r"^scale must be finite, got \(nan, nan, nan\)$"),
        ([1, 1, math.inf], sc.InvalidShapeError, r"^scale must be finite, got \[1, 1, inf\]$"),
        ([1, 1], sc.InvalidShapeError, r"^scale must hold exactly 3 values, got shape \(2,\)"),
        (
            "big",
            sc.ShapeTypeError,
            r"^scale must be 3 real numbers, got \('big', 'big', 'big'\) \(strings\)$",
        ),
        (
            True,
            sc.ShapeTypeError,
            r"^scale must be 3 real numbers, got \(True, True, True\) \(booleans\)$",
        ),
        (1e-90, sc.InvalidMeshError, r"^scale 1e-90 makes the mesh [12]e-90 m across; a scaled"),
        (4e-6, sc.InvalidMeshError, r"^scale 4e-06 makes the mesh [48]e-06 m .*\[1e-05, 1e\+06\]"),
        (
            1e100,
            sc.InvalidMeshError,
            r"^scale 1e\+100 puts vertices 1e\+100 m from the origin; scaled",
        ),
        ([1, 1.1e6, 1], sc.InvalidMeshError, r"puts vertices 1\.1e\+06 m from .* within ±1e\+06 m"),
    ],
)
def test_bad_mesh_scale(scale: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        sc.Mesh.from_arrays(TRIANGLE, [[0, 1, 2]], scale=scale)
    mesh = _box_mesh()
    ball = sc.Sphere(0.5, pose=trans(3.0))  # 3 - 1 - 0.5 = 1.5
    assert mesh.distance(ball) == pytest.approx(1.5)
    with pytest.raises(error, match=message):
        mesh.scale = scale
    assert mesh.scale.tolist() == [1.0, 1.0, 1.0]
    assert mesh.distance(ball) == pytest.approx(1.5) and ball.distance(mesh) == pytest.approx(1.5)


# ---------------------------------------------------------------------------------- files


@pytest.mark.parametrize("suffix", [".stl", ".obj", ".ply", ".glb", ".dae"])
def test_mesh_files_load(tmp_path: Path, suffix: str) -> None:
    # A box of sides (1, 2, 3): a sphere r = 0.5 at z = 5 is 5 - 1.5 - 0.5 = 3 above it.
    path = tmp_path / f"box{suffix}"
    trimesh.creation.box(extents=[1.0, 2.0, 3.0]).export(path)
    mesh = sc.Mesh(path)
    assert mesh.filename == os.fspath(path) and mesh.y_up is False
    ball = sc.Sphere(0.5, pose=trans(0.0, 0.0, 5.0))
    assert mesh.distance(ball) == pytest.approx(3.0, abs=1e-6)
    # scale 2: half height 3: 5 - 3 - 0.5 = 1.5
    assert sc.Mesh(str(path), scale=2).distance(ball) == pytest.approx(1.5, abs=1e-6)
    # +Y up turned to +Z up: (x, y, z) -> (x, -z, y), the 2 m side now vertical: 5 - 1 - 0.5
    upright = sc.Mesh(path, y_up=True)
    assert upright.y_up is True
    assert upright.distance(ball) == pytest.approx(3.5, abs=1e-6)
    np.testing.assert_allclose(np.ptp(upright.vertices, axis=0), [1.0, 3.0, 2.0], atol=1e-6)


def test_mesh_file_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trimesh.creation.box(extents=[2.0, 2.0, 2.0]).export(tmp_path / "cube.stl")
    monkeypatch.chdir(tmp_path)
    mesh = sc.Mesh("cube.stl")
    assert mesh.filename == "cube.stl"
    assert mesh.distance(sc.Sphere(0.5, pose=trans(3.0))) == pytest.approx(1.5, abs=1e-6)


def test_missing_mesh_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.stl"
    with pytest.raises(
        sc.MeshFileNotFoundError, match=r"^filename '.*nope\.stl': no such mesh file$"
    ):
        sc.Mesh(missing)
    with pytest.raises(FileNotFoundError, match=r"nope\.stl"):
        sc.Mesh(str(missing))
    with pytest.raises(sc.MeshFileError):
        sc.Mesh(missing)


def test_empty_mesh_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.stl"
    empty.touch()
    with pytest.raises(sc.MeshFileError, match=r"^filename '.*empty\.stl': the file is empty$"):
        sc.Mesh(empty)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        # trimesh reads it as no triangles, or fails when charset_normalizer is missing
        (
            "noise.stl",
            bytes(range(256)) * 3,
            r"(cannot read it as a mesh|the file holds no triangles)",
        ),
        ("words.obj", b"hello\nthis is not a mesh\n", r"the file holds no triangles"),
        ("points.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\n", r"the file holds no triangles"),
        ("unknown.xyz123", b"solid nothing\n", r"cannot read it as a mesh"),
    ],
)
def test_unreadable_mesh_files(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(sc.MeshFileError, match=rf"^filename '.*{name}': {message}"):
        sc.Mesh(path)


def test_a_directory_is_not_a_mesh_file(tmp_path: Path) -> None:
    folder = tmp_path / "robot.stl"
    folder.mkdir()
    with pytest.raises(
        sc.MeshFileNotFoundError, match=r"^filename '.*robot\.stl': is a directory, not a mesh"
    ):
        sc.Mesh(folder)
    with pytest.raises(sc.MeshFileError, match=r"^filename '\.': is a directory, not a mesh"):
        sc.Mesh(".")


def test_mesh_filename_must_be_a_path() -> None:
    with pytest.raises(sc.MeshFileError, match=r"^filename is required, got None"):
        sc.Mesh()
    with pytest.raises(sc.MeshFileError, match=r"^filename must be a path, got 3$"):
        sc.Mesh(3)


# --------------------------------------------------------------------------- convex hulls


def test_convex_hull_of_a_cube_against_a_sphere() -> None:
    # Hull of the cube [-0.5, 0.5]^3 (its corners plus an inner point): a sphere r = 0.5 at
    # x = 2 is 2 - 0.5 - 0.5 = 1 away, nearest at (0.5, 0, 0) and (1.5, 0, 0).
    corners = [[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]
    hull = sc.ConvexHull([*corners, [0.1, 0.0, 0.0]])
    ball = sc.Sphere(0.5, pose=trans(2.0))
    d, p1, p2 = near(hull, ball)
    assert d == pytest.approx(1.0, abs=ATOL)
    np.testing.assert_allclose(p1, [0.5, 0.0, 0.0], atol=ATOL)
    np.testing.assert_allclose(p2, [1.5, 0.0, 0.0], atol=ATOL)
    # rotated 45° about z, the edge at x = 0.5 sqrt(2) points at the sphere
    hull.T = rot("z", math.pi / 4)
    assert hull.distance(ball) == pytest.approx(2.0 - 0.5 * math.sqrt(2.0) - 0.5, abs=1e-9)
    # overlapping by 0.2: sphere at x = 1.2 after moving back
    hull.T = np.eye(4)
    ball.T = trans(0.8)
    assert hull.iscollided(ball) and hull.distance(ball) == pytest.approx(-0.2, abs=1e-9)
    assert hull.points.shape == (9, 3) and not hull.points.flags.writeable


def test_a_tetrahedron_is_the_smallest_hull() -> None:
    # Tetrahedron (0,0,0), (1,0,0), (0,1,0), (0,0,1): a sphere r = 0.5 at z = -2 is 1.5 below.
    tet = sc.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert tet.distance(sc.Sphere(0.5, pose=trans(0.2, 0.2, -2.0))) == pytest.approx(1.5)


FLAT_POINTS = [
    pytest.param(TRIANGLE, r"^points must hold at least 4 points, got 3$", id="3-points"),
    pytest.param(
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.5, 0]],
        r"^points must include 4 points that are not coplanar, got 5 points spanning only 2",
        id="coplanar",
    ),
    pytest.param(
        [[0, 0, 1], [1, 1, 1], [2, 2, 1], [3, 3, 1]],
        r"not coplanar, got 4 points spanning only 1 dimension",
        id="collinear",
    ),
    pytest.param(
        [[1, 2, 3]] * 6, r"not coplanar, got 6 points spanning only 0 dimension", id="same"
    ),
    pytest.param(
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1e-10]], r"not coplanar, got 4 points", id="thin"
    ),
    pytest.param(
        [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, math.nan]],
        r"^points must be finite, got nan at row 3$",
        id="nan",
    ),
    pytest.param(
        np.zeros((4, 2)), r"^points must have shape \(n, 3\), got shape \(4, 2\)", id="2d"
    ),
]


@pytest.mark.parametrize(("points", "message"), FLAT_POINTS)
def test_flat_or_bad_hull_points_are_refused(points: Any, message: str) -> None:
    # Coal's hull code crashes the process on flat input: it must be refused before Coal.
    with pytest.raises(sc.InvalidMeshError, match=message):
        sc.ConvexHull(points)


@pytest.mark.parametrize(("points", "message"), FLAT_POINTS)
def test_bad_hull_points_set_keeps_the_old_hull(points: Any, message: str) -> None:
    tet = sc.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    ball = sc.Sphere(0.5, pose=trans(0.2, 0.2, -2.0))
    with pytest.raises(sc.InvalidMeshError, match=message):
        tet.points = points
    assert tet.points.tolist() == [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert tet.distance(ball) == pytest.approx(1.5) and ball.distance(tet) == pytest.approx(1.5)


def test_a_thin_but_solid_hull_is_accepted() -> None:
    slab = sc.ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1e-3]])
    assert slab.distance(sc.Sphere(0.5, pose=trans(0.2, 0.2, -2.0))) == pytest.approx(1.5)


# -------------------------------------------------------------------------------- octrees


def test_octree_against_a_sphere_and_boxes() -> None:
    # Cells are cubes of side `resolution` on the grid of its multiples: the points give the
    # cells [0, 0.1]^3 and [0.3, 0.4] x [0, 0.1] x [0, 0.1].
    tree = sc.OcTree([[0.05, 0.05, 0.05], [0.35, 0.05, 0.05]], 0.1)
    # sphere r = 0.25 above the second cell at height 0.6: 0.6 - 0.1 - 0.25 = 0.25
    ball = sc.Sphere(0.25, pose=trans(0.35, 0.05, 0.6))
    d, p1, p2 = near(tree, ball)
    assert d == pytest.approx(0.25, abs=ATOL)
    np.testing.assert_allclose(p1, [0.35, 0.05, 0.1], atol=ATOL)
    np.testing.assert_allclose(p2, [0.35, 0.05, 0.35], atol=ATOL)
    d, p1, p2 = near(ball, tree)
    assert d == pytest.approx(0.25, abs=ATOL)
    np.testing.assert_allclose(p1, [0.35, 0.05, 0.35], atol=ATOL)
    np.testing.assert_allclose(p2, [0.35, 0.05, 0.1], atol=ATOL)
    assert not tree.iscollided(ball) and not ball.iscollided(tree)
    # a 0.2 cube centred 0.5 below the first cell: top face at -0.4, the cells' bottom at 0
    below = sc.Cuboid([0.2, 0.2, 0.2], pose=trans(0.05, 0.05, -0.5))
    assert tree.distance(below) == pytest.approx(0.4, abs=ATOL)
    assert below.distance(tree) == pytest.approx(0.4, abs=ATOL)
    # a slab z in [0.05, 0.25] cuts both cells 0.05 deep
    slab = sc.Cuboid([1.0, 1.0, 0.2], pose=trans(0.0, 0.0, 0.15))
    assert tree.distance(slab) == pytest.approx(-0.05, abs=ATOL)
    assert tree.iscollided(slab) and slab.iscollided(tree)
    # turned 90° about z, the second cell is at x in [-0.1, 0], y in [0.3, 0.4]
    tree.T = rot("z", math.pi / 2)
    ball.T = trans(-0.05, 0.35, 0.6)
    d, p1, p2 = near(ball, tree)
    assert d == pytest.approx(0.25, abs=ATOL)
    np.testing.assert_allclose(p2, [-0.05, 0.35, 0.1], atol=ATOL)


def test_octree_against_a_halfspace() -> None:
    # The half-space z <= 0 turned 0.5 rad about x, and the cell [0, 0.1]^3 moved 0.5 down:
    # Coal gets the collision wrong unless the half-space is handed over in the world frame.
    plane = sc.HalfSpace([0, 0, 1], 0.0, pose=rot("x", 0.5))
    tree = sc.OcTree([[0.05, 0.05, 0.05]], 0.1, pose=trans(0.0, 0.0, -0.5))
    assert plane.distance(tree) < -0.4
    assert plane.iscollided(tree) and tree.iscollided(plane)
    assert len(plane.contacts(tree)) == 1 and len(tree.contacts(plane)) == 1
    tree.T = trans(0.0, 0.0, 2.0)  # well above: its lowest corner (0, 0.1, 2) is out
    assert not plane.iscollided(tree) and not tree.iscollided(plane)
    assert plane.distance(tree) > 1.5


def test_octree_points_and_resolution() -> None:
    tree = sc.OcTree(np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]), 0.05)
    assert tree.points.shape == (2, 3) and tree.resolution == 0.05
    assert not tree.points.flags.writeable


@pytest.mark.parametrize(
    ("points", "resolution", "error", "message"),
    [
        (np.zeros((0, 3)), 0.1, sc.InvalidMeshError, r"^points must hold at least 1 point, got 0$"),
        ([], 0.1, sc.InvalidMeshError, r"^points must have shape \(n, 3\), got shape \(0,\)"),
        (
            [0, 0, 0],
            0.1,
            sc.InvalidMeshError,
            r"^points must have shape \(n, 3\), got shape \(3,\)",
        ),
        (
            [[0, math.inf, 0]],
            0.1,
            sc.InvalidMeshError,
            r"^points must be finite, got inf at row 0$",
        ),
        ([[0, 0, 0]], 0, sc.InvalidShapeError, r"^resolution must be positive, got 0 \(sizes"),
        ([[0, 0, 0]], -0.1, sc.InvalidShapeError, r"^resolution must be positive, got -0\.1 "),
        ([[0, 0, 0]], math.nan, sc.InvalidShapeError, r"^resolution must be finite, got nan "),
        ([[0, 0, 0]], 1e-300, sc.InvalidShapeError, r"^resolution is too small, got 1e-300 "),
        ([[0, 0, 0]], 2e6, sc.InvalidShapeError, r"^resolution is too large, got 2000000\.0 "),
        ([[0, 0, 0]], True, sc.ShapeTypeError, r"^resolution must be a real number, got True$"),
        ([[0, 0, 0]], "fine", sc.ShapeTypeError, r"^resolution must be a real number, got 'fine'$"),
    ],
)
def test_bad_octree(points: Any, resolution: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        sc.OcTree(points, resolution)
    tree = sc.OcTree([[0.05, 0.05, 0.05]], 0.1)
    ball = sc.Sphere(0.25, pose=trans(0.05, 0.05, 1.0))  # 1 - 0.1 - 0.25 = 0.65
    assert tree.distance(ball) == pytest.approx(0.65)
    with pytest.raises(error, match=message):
        if resolution == 0.1:
            tree.points = points
        else:
            tree.resolution = resolution
    assert tree.points.tolist() == [[0.05, 0.05, 0.05]] and tree.resolution == 0.1
    assert tree.distance(ball) == pytest.approx(0.65) and ball.distance(tree) == pytest.approx(0.65)


# ------------------------------------------------------------------ types, ranges and edges


@pytest.mark.parametrize(
    ("vertices", "message"),
    [
        pytest.param(
            "abc", r"^vertices must be an \(n, 3\) array of numbers, got 'abc'$", id="str"
        ),
        pytest.param(
            [["0", "0", "0"], ["1", "0", "0"], ["0", "1", "0"]],
            r"^vertices must be an \(n, 3\) array of numbers, got \[\['0', .* \(strings\)$",
            id="str-in-list",
        ),
        pytest.param(
            [[0, 0, 0], [True, 0, 0], [0, 1, 0]],
            r"^vertices must be .* got \[\[0, 0, 0\], \[True, .* \(booleans or masked arrays among",
            id="bool-in-list",
        ),
        pytest.param(
            [[0, 0, 0], [1, None, 0], [0, 1, 0]],
            r"^vertices must be .* got \[\[0, 0, 0\], \[1, None, 0\], .* \(None among the values",
            id="none-in-list",
        ),
        pytest.param(
            np.array(TRIANGLE, dtype=complex),
            r"(?s)^vertices must be .* got array\(.* \(complex numbers\)$",
            id="complex",
        ),
        pytest.param(
            np.array(TRIANGLE, dtype=object),
            r"(?s)^vertices must be .* \(an object array: give it a numeric dtype\)$",
            id="obj",
        ),
        pytest.param(
            np.ma.masked_array(TRIANGLE),
            r"(?s)^vertices must be .* \(a masked array: fill or compress it first\)$",
            id="masked",
        ),
    ],
)
def test_mesh_vertices_of_the_wrong_type(vertices: Any, message: str) -> None:
    with pytest.raises(sc.ShapeTypeError, match=message):
        sc.Mesh.from_arrays(vertices, [[0, 1, 2]])
    with pytest.raises(TypeError):
        sc.ConvexHull(vertices)


def test_mesh_vertices_out_of_range() -> None:
    far = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2e6, 0.0]]
    with pytest.raises(
        sc.InvalidMeshError, match=r"^vertices must lie within ±1e\+06 m on each axis, got 2e\+06"
    ):
        sc.Mesh.from_arrays(far, [[0, 1, 2]])
    with pytest.raises(sc.InvalidMeshError, match=r"got 1e\+400|within float range"):
        sc.Mesh.from_arrays([[0, 0, 0], [1, 0, 0], [0, 10**400, 0]], [[0, 1, 2]])
    tiny = np.array(TRIANGLE) * 4e-6  # 4 µm across: below the smallest size
    with pytest.raises(sc.InvalidMeshError, match=r"^scale .* makes the mesh 4e-06 m across"):
        sc.Mesh.from_arrays(tiny, [[0, 1, 2]])


def test_mesh_y_up_must_be_a_bool() -> None:
    with pytest.raises(sc.ShapeTypeError, match=r"^y_up must be True or False, got 'no'$"):
        sc.Mesh(
            os.path.join(os.path.dirname(sc.__file__), "meshes", "objects", "box.stl"),
            y_up="no",  # type: ignore[arg-type]
        )


@pytest.mark.parametrize("extent", [1e-5, 1e-3, 1.0, 1e3, 1e6])
def test_box_mesh_at_the_edges_of_the_size_range(extent: float) -> None:
    # the cube mesh of side `extent`; a sphere of radius r (at least the smallest size) a
    # quarter extent off its face x = extent/2, and a sphere inside the hollow cube, touching
    # nothing
    mesh = _box_mesh(scale=extent / 2.0)
    assert float(np.ptp(mesh.vertices, axis=0).max()) == pytest.approx(extent)
    r = max(extent / 8.0, MIN_SIZE)
    ball = sc.Sphere(r, pose=trans(0.75 * extent + r))
    assert mesh.distance(ball) == pytest.approx(0.25 * extent, rel=1e-9)
    if extent / 4.0 >= MIN_SIZE:  # no sphere fits inside the smallest cube
        assert not mesh.iscollided(sc.Sphere(extent / 4.0))


@pytest.mark.parametrize("offset", [-1e6 + 1.0, 1e6 - 1.0])
def test_mesh_far_from_the_origin(offset: float) -> None:
    # a 1 m cube mesh whose centre is 1 m inside the coordinate range, and a sphere of radius
    # 0.25 5 m from that centre towards the origin: 5 - 0.5 - 0.25 = 4.25 away
    cube = trimesh.creation.box(extents=[1.0, 1.0, 1.0])
    mesh = sc.Mesh.from_arrays(cube.vertices + offset, cube.faces)
    inwards = -math.copysign(5.0, offset)
    ball = sc.Sphere(0.25, pose=trans(offset + inwards, offset, offset))
    assert mesh.distance(ball) == pytest.approx(4.25, abs=1e-6)


def test_truncated_stl_file(tmp_path: Path) -> None:
    whole = Path(sc.__file__).parent / "meshes" / "objects" / "box.stl"
    data = whole.read_bytes()
    for kept in (200, len(data) - 10):
        cut = tmp_path / f"cut{kept}.stl"
        cut.write_bytes(data[:kept])
        with pytest.raises(
            sc.MeshFileError,
            match=rf"^filename '.*cut{kept}\.stl': the file is truncated: its binary STL header "
            rf"announces 12 triangles \(684 bytes\), but it holds {kept} bytes$",
        ) as caught:
            sc.Mesh(cut)
        assert "charset_normalizer" not in str(caught.value)
    stub = tmp_path / "stub.stl"
    stub.write_bytes(data[:40])
    with pytest.raises(sc.MeshFileError, match=r"the file is truncated: 40 bytes, shorter than"):
        sc.Mesh(stub)


def test_hull_points_out_of_range_are_refused() -> None:
    tet = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(sc.InvalidMeshError, match=r"^points must lie within ±1e\+06 m .*2e\+14"):
        sc.ConvexHull(tet + 2e14)
    with pytest.raises(sc.InvalidMeshError, match=r"^points must lie within ±1e\+06 m .*1e\+77"):
        sc.ConvexHull(tet * 1e77)
    with pytest.raises(
        sc.InvalidMeshError,
        match=r"^points span 7\.07e-06 m; a convex hull must span \[1e-05, 1e\+06\] m$",
    ):
        sc.ConvexHull(tet * 5e-6)
    with pytest.raises(sc.ShapeTypeError, match=r"^points must be an \(n, 3\) array of numbers"):
        sc.ConvexHull("cube")


@pytest.mark.parametrize(
    ("offset", "side"), [(0.0, 1e-5), (0.0, 5e5), (1e6 - 1e-5, 1e-5), (-1e6 + 1.0, 1.0)]
)
def test_hull_at_the_edges_of_the_range(offset: float, side: float) -> None:
    # a cube hull of `side`; a sphere of radius r a quarter side off its face, on the side of
    # the origin
    cube = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * side / 2
    hull = sc.ConvexHull(cube + offset)
    r = max(side / 8.0, MIN_SIZE)
    inwards = -math.copysign(1.0, offset) if offset else 1.0
    ball = sc.Sphere(r, pose=trans(offset + inwards * (0.75 * side + r), offset, offset))
    assert hull.distance(ball) == pytest.approx(0.25 * side, rel=1e-4)


def test_octree_points_beyond_its_reach_are_refused() -> None:
    # resolution 0.1: octomap keys reach [-3276.8, 3276.8) on each axis
    assert len(sc.OcTree([[-3276.8, 0.0, 3276.79]], 0.1).cells) == 1
    with pytest.raises(
        sc.InvalidMeshError,
        match=r"^points must lie in \[-3276\.8, 3276\.8\) m on each axis for resolution 0\.1 "
        r"\(an octree holds 65536 cells per axis\), got 3276\.8 at row 1$",
    ):
        sc.OcTree([[0.0, 0.0, 0.0], [3276.8, 0.0, 0.0]], 0.1)
    tree = sc.OcTree([[0.05, 0.05, 0.05], [5.0, 0.0, 0.0]], 0.1)
    with pytest.raises(
        sc.InvalidMeshError,
        match=r"^resolution 1e-05 is too fine for these points: an octree of that resolution "
        r"holds \[-0\.32768, 0\.32768\) m on each axis \(65536 cells per axis\), but row 1",
    ):
        tree.resolution = 1e-5
    with pytest.raises(sc.InvalidMeshError, match=r"^points must lie in \[-3276\.8, 3276\.8\)"):
        tree.points = [[4000.0, 0.0, 0.0]]
    assert tree.resolution == 0.1 and len(tree.points) == 2 and len(tree.cells) == 2
    assert tree.distance(sc.Sphere(0.25, pose=trans(0.05, 0.05, 1.0))) == pytest.approx(0.65)


@pytest.mark.parametrize(
    ("resolution", "point"),
    [(1e-5, 0.3), (1e-5, -0.32768), (1.0, 32767.5), (30.6, 1e6), (2e5, -1e6)],
)
def test_octree_at_the_edges_of_the_range(resolution: float, point: float) -> None:
    tree = sc.OcTree([[point, 0.0, 0.0]], resolution)
    (cell,) = tree.cells
    assert cell[3] == pytest.approx(resolution)
    # a sphere of radius r (at least the smallest size) two cells off the cell, along x
    # towards the origin
    r = max(resolution / 2, MIN_SIZE)
    inwards = -math.copysign(2.5 * resolution + r, point)
    ball = sc.Sphere(r, pose=trans(cell[0] + inwards, cell[1], cell[2]))
    assert tree.distance(ball) == pytest.approx(2 * resolution, rel=1e-6)


def test_octree_of_the_largest_resolution() -> None:
    assert sc.OcTree([[0.0, 0.0, 0.0]], 1e6).cells.tolist() == [[5e5, 5e5, 5e5, 1e6]]


def test_an_import_error_while_reading_is_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # trimesh falls back to reading a file as text, which imports charset_normalizer when it
    # is there; without it, the user must not see that import error
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise ModuleNotFoundError("No module named 'charset_normalizer'")

    monkeypatch.setattr(trimesh, "load", fail)
    text = tmp_path / "odd.obj"
    text.write_bytes(b"\xff\xfe not a mesh")
    with pytest.raises(
        sc.MeshFileError,
        match=r"^filename '.*odd\.obj': cannot read it as a mesh: the file is truncated, corrupt "
        r"or in a format trimesh does not read",
    ) as caught:
        sc.Mesh(text)
    assert "charset_normalizer" not in str(caught.value)
    cut = tmp_path / "cut.stl"
    cut.write_bytes(
        (Path(sc.__file__).parent / "meshes" / "objects" / "box.stl").read_bytes()[:300]
    )
    with pytest.raises(sc.MeshFileError, match=r"the file is truncated: its binary STL header"):
        sc.Mesh(cut)


finite_coordinates = st.floats(-1e6, 1e6, allow_nan=False)


@given(st.lists(st.tuples(finite_coordinates, finite_coordinates, finite_coordinates), min_size=1))
def test_points_in_range_are_kept_exactly(rows: list[tuple[float, float, float]]) -> None:
    tree_points = np.array(rows)
    checked = sc.OcTree(tree_points, 1e3).points
    assert np.array_equal(checked, tree_points) and not checked.flags.writeable


@given(
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not abs(x) <= 1e6),
    st.integers(0, 2),
)
def test_points_out_of_range_are_refused(bad: float, column: int) -> None:
    cloud = np.zeros((2, 3))
    cloud[1, column] = bad
    with pytest.raises(sc.InvalidMeshError, match=r"^points must (be finite|lie within).* row 1"):
        sc.OcTree(cloud, 1.0)
