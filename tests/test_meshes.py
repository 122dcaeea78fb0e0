"""Tests of the shipped mesh data (spatialcontact.meshes) and of its generator."""

from __future__ import annotations

import doctest
import os
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import trimesh

import spatialcontact
import spatialcontact.meshes as meshes
from spatialcontact import Cuboid, Mesh, Sphere
from spatialcontact.errors import MeshFileError, MeshFileNotFoundError, ShapeTypeError
from spatialcontact.meshes import generate

ROOT = Path(spatialcontact.__file__).resolve().parent / "meshes"
ALL_STL = sorted(ROOT.rglob("*.stl"))

PANDA_STL = [f"link{i}.stl" for i in range(8)] + ["hand.stl", "finger.stl"]
IIWA_STL = ["base_link.stl"] + [f"link_{i}.stl" for i in range(1, 8)]

# Written by hand from the documented table (sizes in metres).
OBJECT_TABLE = {
    "box.stl": ((0.5, 0.25, 0.125), 12),
    "sphere.stl": ((0.25, 0.25, 0.25), 1280),  # 20 * 4**3 faces
    "icosphere.stl": ((0.25, 0.25, 0.25), 80),  # 20 * 4
    "sphere_5k.stl": ((0.25, 0.25, 0.25), 5120),  # 20 * 4**4
    "cylinder.stl": ((0.125, 0.125, 0.25), 128),  # 32 sides * (2 side + 2 cap triangles)
    "capsule.stl": ((0.125, 0.125, 0.375), 1024),  # 0.25 + 2 * 0.0625 = 0.375 long
    "cone.stl": ((0.125, 0.125, 0.25), 64),  # 32 side + 32 base triangles
    "torus.stl": ((0.3125, 0.3125, 0.0625), 1024),  # 2 * (0.125 + 0.03125); 32 * 16 * 2
}


def _vertices(name: str) -> np.ndarray:
    return np.asarray(Mesh(meshes.path(f"objects/{name}")).vertices)


def _stl_triangles(path: Path) -> tuple[bytes, np.ndarray, np.ndarray]:
    """Header, normals (m, 3) and triangles (m, 3, 3) of a binary STL, read with numpy."""
    data = path.read_bytes()
    (count,) = struct.unpack_from("<I", data, 80)
    record = np.dtype([("normal", "<f4", (3,)), ("vertices", "<f4", (3, 3)), ("attr", "<u2")])
    packed = np.frombuffer(data, dtype=record, count=count, offset=84)
    return data[:80], packed["normal"].astype(float), packed["vertices"].astype(float)


# ------------------------------------------------------------------------------ path / names


def test_names_are_the_data_folders() -> None:
    assert meshes.names() == ("iiwa14", "objects", "panda")
    on_disk = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert on_disk == set(meshes.names())


@pytest.mark.parametrize("name", ["iiwa14", "objects", "panda"])
def test_path_of_each_name(name: str) -> None:
    found = meshes.path(name)
    assert isinstance(found, Path)
    assert found.is_absolute()
    assert found.is_dir()
    assert found == ROOT / name


def test_panda_folder_contents() -> None:
    folder = meshes.path("panda")
    assert sorted(p.name for p in (folder / "collision").iterdir()) == sorted(PANDA_STL)
    for name in ("LICENSE", "NOTICE", "panda.urdf", "panda.srdf"):
        assert (folder / name).is_file(), name


def test_iiwa14_folder_contents() -> None:
    folder = meshes.path("iiwa14")
    assert sorted(p.name for p in (folder / "collision").iterdir()) == sorted(IIWA_STL)
    for name in ("LICENSE-Apache-2.0", "NOTICE", "lbr_iiwa_14_r820.urdf"):
        assert (folder / name).is_file(), name


def test_objects_folder_contents() -> None:
    names = sorted(p.name for p in meshes.path("objects").iterdir())
    assert names == sorted([*OBJECT_TABLE, "LICENSE", "README.md"])


@pytest.mark.parametrize(
    ("folder", "licence"), [("panda", "LICENSE"), ("iiwa14", "LICENSE-Apache-2.0")]
)
def test_robot_licences_are_apache_with_notice(folder: str, licence: str) -> None:
    text = meshes.path(f"{folder}/{licence}").read_text(encoding="utf-8")
    assert "Apache License" in text
    assert "Version 2.0, January 2004" in text
    notice = meshes.path(f"{folder}/NOTICE").read_text(encoding="utf-8")
    assert "Apache License 2.0" in notice
    assert licence in notice


def test_objects_licence_is_the_project_licence() -> None:
    text = meshes.path("objects/LICENSE").read_text(encoding="utf-8")
    assert "BSD-3-Clause" in text
    assert "generate.py" in text


@pytest.mark.parametrize(
    ("folder", "urdf", "count"),
    [("panda", "panda.urdf", 9), ("iiwa14", "lbr_iiwa_14_r820.urdf", 8)],
)
def test_urdf_collision_meshes_exist(folder: str, urdf: str, count: int) -> None:
    base = meshes.path(folder)
    tree = ET.parse(base / urdf)
    files = [m.get("filename") for m in tree.iter("mesh")]
    # panda: link0..link7 and hand (the fingers use primitives); iiwa: base_link, link_1..7
    assert len(files) == count
    for name in files:
        assert name is not None
        assert (base / name).is_file(), name


def test_path_of_a_file_inside_a_folder() -> None:
    assert meshes.path("objects/box.stl") == ROOT / "objects" / "box.stl"
    assert meshes.path("objects/box.stl").is_file()
    assert meshes.path("panda/collision/link1.stl") == ROOT / "panda" / "collision" / "link1.stl"
    assert meshes.path("panda/collision").is_dir()
    assert meshes.path("panda/") == ROOT / "panda"


def test_unknown_name_names_the_valid_ones() -> None:
    with pytest.raises(
        MeshFileError, match=r"name must be one of 'iiwa14', 'objects', 'panda'.*got 'pandas'"
    ) as info:
        meshes.path("pandas")
    assert isinstance(info.value, ValueError)
    with pytest.raises(MeshFileError, match=r"got 'Panda/link1.stl'"):
        meshes.path("Panda/link1.stl")


@pytest.mark.parametrize("bad", ["", "/panda", "panda/../objects", "./panda", "objects/./box.stl"])
def test_malformed_name(bad: str) -> None:
    with pytest.raises(
        MeshFileError, match=r"relative path inside one, got " + re.escape(repr(bad))
    ):
        meshes.path(bad)


def test_missing_file_lists_the_folder() -> None:
    with pytest.raises(
        MeshFileNotFoundError, match=r"name 'objects/boxx.stl'.*objects/ holds .*box.stl"
    ) as info:
        meshes.path("objects/boxx.stl")
    assert isinstance(info.value, FileNotFoundError)
    assert isinstance(info.value, MeshFileError)
    with pytest.raises(MeshFileNotFoundError, match=r"panda/ holds .*collision/.*panda.urdf"):
        meshes.path("panda/visual/link1.dae")
    with pytest.raises(MeshFileNotFoundError, match=r"panda/collision/ holds .*link1.stl"):
        meshes.path("panda/collision/link9.stl")


@pytest.mark.parametrize("bad", [3, None, b"panda", Path("panda"), ["panda"]])
def test_name_must_be_a_str(bad: object) -> None:
    with pytest.raises(ShapeTypeError, match=r"name must be a str, got " + re.escape(repr(bad))):
        meshes.path(bad)  # type: ignore[arg-type]


def test_module_doctests() -> None:
    for module in (meshes,):
        failures, tried = doctest.testmod(module, raise_on_error=False)
        assert tried >= 4
        assert failures == 0


# ------------------------------------------------------------------------------ every STL


def test_there_are_26_stl_files() -> None:
    # 10 Panda + 8 iiwa + 8 generated objects
    assert len(ALL_STL) == 26


@pytest.mark.parametrize("stl", ALL_STL, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_stl_loads_as_a_mesh(stl: Path) -> None:
    mesh = Mesh(stl)
    (count,) = struct.unpack_from("<I", stl.read_bytes(), 80)
    assert stl.stat().st_size == 84 + 50 * count  # binary STL: header, count, 50-byte records
    assert mesh.faces.shape == (count, 3)
    assert mesh.vertices.shape[1] == 3
    assert np.all(np.isfinite(mesh.vertices))
    assert trimesh.load_mesh(stl).is_watertight


# ------------------------------------------------------------------------------ generated


def test_generator_table_is_the_documented_one() -> None:
    by_file = {spec.filename: (spec.extents, spec.faces) for spec in generate.OBJECTS}
    assert by_file == OBJECT_TABLE
    table = generate.table()
    assert generate.__doc__ is not None
    assert table in generate.__doc__
    readme = meshes.path("objects/README.md").read_text(encoding="utf-8")
    assert table in readme
    for name, (extents, faces) in OBJECT_TABLE.items():
        line = next(row for row in table.splitlines() if row.startswith(name))
        assert " x ".join(f"{e:g}" for e in extents) in line
        assert line.endswith(f" {faces}")


@pytest.mark.parametrize("name", sorted(OBJECT_TABLE))
def test_object_bounding_box_is_exact(name: str) -> None:
    extents, faces = OBJECT_TABLE[name]
    vertices = _vertices(name)
    assert len(Mesh(meshes.path(f"objects/{name}")).faces) == faces
    # sizes are powers of two, so exact in float32: compare with ==
    assert vertices.max(axis=0).tolist() == [e / 2 for e in extents]
    assert vertices.min(axis=0).tolist() == [-e / 2 for e in extents]


@pytest.mark.parametrize("name", sorted(OBJECT_TABLE))
def test_object_is_a_closed_solid(name: str) -> None:
    mesh = trimesh.load_mesh(meshes.path(f"objects/{name}"))
    assert mesh.is_watertight
    assert mesh.is_winding_consistent
    assert mesh.volume > 0.0  # outward normals


def test_box_corners_and_volume() -> None:
    vertices = np.unique(_vertices("box.stl"), axis=0)
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    assert np.array_equal(vertices, signs * [0.25, 0.125, 0.0625])
    # 0.5 * 0.25 * 0.125 = 0.015625 m³
    assert trimesh.load_mesh(meshes.path("objects/box.stl")).volume == pytest.approx(0.015625)


@pytest.mark.parametrize(
    ("name", "vertex_count"), [("sphere.stl", 642), ("icosphere.stl", 42), ("sphere_5k.stl", 2562)]
)
def test_sphere_radius_from_vertex_norms(name: str, vertex_count: int) -> None:
    vertices = np.unique(_vertices(name), axis=0)
    # an icosphere with s subdivisions has 10 * 4**s + 2 vertices
    assert len(vertices) == vertex_count
    np.testing.assert_allclose(np.linalg.norm(vertices, axis=1), 0.125, rtol=0, atol=1e-8)
    volume = trimesh.load_mesh(meshes.path(f"objects/{name}")).volume
    ball = 4.0 / 3.0 * np.pi * 0.125**3  # 0.0081812 m³
    assert 0.85 * ball < volume < ball  # inscribed polyhedron


def test_cylinder_radius_and_caps() -> None:
    v = _vertices("cylinder.stl")
    radial = np.linalg.norm(v[:, :2], axis=1)
    rim = radial > 1e-9  # the two cap centres are on the axis
    np.testing.assert_allclose(radial[rim], 0.0625, rtol=0, atol=1e-8)
    assert set(np.abs(v[:, 2]).tolist()) == {0.125}


def test_capsule_is_a_swept_sphere() -> None:
    v = _vertices("capsule.stl")
    axis_point = np.zeros_like(v)
    axis_point[:, 2] = np.clip(v[:, 2], -0.125, 0.125)  # segment from z = -0.125 to 0.125
    np.testing.assert_allclose(np.linalg.norm(v - axis_point, axis=1), 0.0625, rtol=0, atol=1e-8)


def test_cone_base_and_apex() -> None:
    v = _vertices("cone.stl")
    radial = np.linalg.norm(v[:, :2], axis=1)
    assert set(v[:, 2].tolist()) == {-0.125, 0.125}
    assert np.all(radial[v[:, 2] == 0.125] == 0.0)  # apex on the axis
    base = v[(v[:, 2] == -0.125) & (radial > 1e-9)]
    np.testing.assert_allclose(np.linalg.norm(base[:, :2], axis=1), 0.0625, rtol=0, atol=1e-8)


def test_torus_tube() -> None:
    v = _vertices("torus.stl")
    from_ring = np.hypot(np.linalg.norm(v[:, :2], axis=1) - 0.125, v[:, 2])
    np.testing.assert_allclose(from_ring, 0.03125, rtol=0, atol=1e-8)


def test_box_mesh_sits_where_the_cuboid_sits() -> None:
    box_mesh = Mesh(meshes.path("objects/box.stl"))
    cuboid = Cuboid([0.5, 0.25, 0.125])
    ball = Sphere(0.1, pose=np.array([[1, 0, 0, 0.45], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]))
    # gap along x: 0.45 - 0.25 (half side) - 0.1 (radius) = 0.1
    assert box_mesh.distance(ball) == pytest.approx(0.1, abs=1e-6)
    assert cuboid.distance(ball) == pytest.approx(0.1, abs=1e-9)


# ------------------------------------------------------------------------------ generator


def test_generator_is_deterministic(tmp_path: Path) -> None:
    first = generate.generate(tmp_path / "a")
    second = generate.generate(tmp_path / "b")
    assert [p.name for p in first] == [*OBJECT_TABLE, "README.md", "LICENSE"]
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name


def test_generator_reproduces_the_shipped_files(tmp_path: Path) -> None:
    written = generate.generate(tmp_path)
    shipped = meshes.path("objects")
    for target in written:
        original = shipped / target.name
        if target.suffix != ".stl":
            assert target.read_bytes() == original.read_bytes(), target.name
            continue
        head_new, normals_new, tris_new = _stl_triangles(target)
        head_old, normals_old, tris_old = _stl_triangles(original)
        assert head_new == head_old
        assert tris_new.shape == tris_old.shape
        # vertex for vertex: sin/cos may differ in the last bit between platforms
        np.testing.assert_allclose(tris_new, tris_old, rtol=0, atol=1e-7)
        np.testing.assert_allclose(normals_new, normals_old, rtol=0, atol=1e-6)


def test_generator_normals_are_outward_unit_vectors(tmp_path: Path) -> None:
    (box_file,) = [p for p in generate.generate(tmp_path) if p.name == "box.stl"]
    header, normals, triangles = _stl_triangles(box_file)
    assert header.startswith(b"spatialcontact: box, sides 0.5 x 0.25 x 0.125 (m)")
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-7)
    # on a centred box, the outward normal points the same way as the face centre
    assert np.all(np.sum(normals * triangles.mean(axis=1), axis=1) > 0)


def test_generator_leaves_other_files_alone(tmp_path: Path) -> None:
    keep = tmp_path / "notes.txt"
    keep.write_text("mine")
    generate.generate(str(tmp_path))
    assert keep.read_text() == "mine"


def test_generator_errors(tmp_path: Path) -> None:
    with pytest.raises(MeshFileError, match=r"outdir must be a path, got 3"):
        generate.generate(3)  # type: ignore[arg-type]
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(MeshFileError, match=r"outdir '.*file.txt' exists and is not a folder"):
        generate.generate(a_file)
    with pytest.raises(MeshFileError, match=r"filename must be one of 'box.stl'.*got 'cube.stl'"):
        generate.object_mesh("cube.stl")


def test_object_mesh_matches_the_table() -> None:
    torus = generate.object_mesh("torus.stl")
    assert len(torus.faces) == 1024
    np.testing.assert_allclose(torus.extents, [0.3125, 0.3125, 0.0625])


def test_main_writes_into_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main([str(tmp_path)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(OBJECT_TABLE) + 2
    assert (tmp_path / "sphere_5k.stl").stat().st_size == 84 + 50 * 5120


def test_runs_as_a_module(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "spatialcontact.meshes.generate", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "box.stl").read_bytes() == meshes.path(
        "objects/box.stl"
    ).read_bytes()
