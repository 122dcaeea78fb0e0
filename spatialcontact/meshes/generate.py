"""Write the generic object meshes shipped in ``spatialcontact/meshes/objects/``.

Run ``python -m spatialcontact.meshes.generate`` to rewrite the shipped folder, or
``python -m spatialcontact.meshes.generate OUTDIR`` to write elsewhere. The output is
deterministic: the same numpy and trimesh give the same bytes.

Every object is a closed, consistently wound (watertight) triangle mesh in metres, centred at
the origin of its own frame with its axis along +z, so that it sits exactly where the matching
primitive (:class:`~spatialcontact.Cuboid`, :class:`~spatialcontact.Sphere`,
:class:`~spatialcontact.Cylinder`, :class:`~spatialcontact.Capsule`,
:class:`~spatialcontact.Cone`) sits at the same pose. Sizes are powers of two, so they are
exact in the float32 of binary STL: every bounding box below is exact, and every vertex of a
round object lies on the true surface (sphere, cylinder side, cone side, torus tube) up to
float32 rounding (< 1e-8 m). Curved faces are flat triangles inside the true surface.

================  =============================================  ========================  =====
file              shape and exact size (m)                       bounding box (m)          faces
================  =============================================  ========================  =====
box.stl           box, sides 0.5 x 0.25 x 0.125                  0.5 x 0.25 x 0.125           12
sphere.stl        icosphere (3 subdivisions), radius 0.125       0.25 x 0.25 x 0.25         1280
icosphere.stl     icosphere (1 subdivision), radius 0.125        0.25 x 0.25 x 0.25           80
sphere_5k.stl     icosphere (4 subdivisions), radius 0.125       0.25 x 0.25 x 0.25         5120
cylinder.stl      cylinder, radius 0.0625, length 0.25           0.125 x 0.125 x 0.25        128
capsule.stl       capsule, radius 0.0625, length 0.25 (+caps)    0.125 x 0.125 x 0.375      1024
cone.stl          cone, radius 0.0625, length 0.25, apex +z      0.125 x 0.125 x 0.25         64
torus.stl         torus, major radius 0.125, minor 0.03125       0.3125 x 0.3125 x 0.0625   1024
================  =============================================  ========================  =====

Notes on the table: the cylinder, capsule and cone have 32 sides; the capsule's ``length`` is
its cylinder part (centre to centre of its end caps, as in :class:`~spatialcontact.Capsule`), so
it is 0.375 long overall; the cone's base circle is at z = -0.125 and its apex at z = +0.125;
the torus lies in the xy plane with 32 x 16 sections. ``sphere_5k`` is the larger mesh for
benchmarks.

The meshes are made with trimesh; the STL files are written here (binary STL, an 80-byte
header naming the object, float32 normals and vertices), so the bytes do not depend on
trimesh's writer. They are part of spatialcontact and under its BSD-3-Clause licence.
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import describe
from ..errors import MeshFileError

__all__ = ["OBJECTS", "ObjectSpec", "generate", "main", "object_mesh"]


@dataclass(frozen=True)
class ObjectSpec:
    """One generated object: its file, its documented size and how to build it."""

    filename: str
    """File name inside ``objects/``, e.g. ``'box.stl'``."""
    shape: str
    """Shape and exact size in metres, as written in the table."""
    extents: tuple[float, float, float]
    """Exact bounding-box side lengths along x, y, z in metres."""
    faces: int
    """Number of triangles."""
    build: Callable[[], Any]
    """Returns the ``trimesh.Trimesh`` (centred, axis along +z)."""


def _box() -> Any:
    import trimesh

    return trimesh.creation.box(extents=(0.5, 0.25, 0.125))


def _icosphere(subdivisions: int) -> Callable[[], Any]:
    def build() -> Any:
        import trimesh

        return trimesh.creation.icosphere(subdivisions=subdivisions, radius=0.125)

    return build


def _cylinder() -> Any:
    import trimesh

    return trimesh.creation.cylinder(radius=0.0625, height=0.25, sections=32)


def _capsule() -> Any:
    import trimesh

    return trimesh.creation.capsule(height=0.25, radius=0.0625, count=[32, 16])


def _cone() -> Any:
    import trimesh

    mesh = trimesh.creation.cone(radius=0.0625, height=0.25, sections=32)
    mesh.apply_translation((0.0, 0.0, -0.125))  # trimesh puts the base at z = 0
    return mesh


def _torus() -> Any:
    import trimesh

    return trimesh.creation.torus(
        major_radius=0.125, minor_radius=0.03125, major_sections=32, minor_sections=16
    )


OBJECTS: tuple[ObjectSpec, ...] = (
    ObjectSpec("box.stl", "box, sides 0.5 x 0.25 x 0.125", (0.5, 0.25, 0.125), 12, _box),
    ObjectSpec(
        "sphere.stl",
        "icosphere (3 subdivisions), radius 0.125",
        (0.25, 0.25, 0.25),
        1280,
        _icosphere(3),
    ),
    ObjectSpec(
        "icosphere.stl",
        "icosphere (1 subdivision), radius 0.125",
        (0.25, 0.25, 0.25),
        80,
        _icosphere(1),
    ),
    ObjectSpec(
        "sphere_5k.stl",
        "icosphere (4 subdivisions), radius 0.125",
        (0.25, 0.25, 0.25),
        5120,
        _icosphere(4),
    ),
    ObjectSpec(
        "cylinder.stl",
        "cylinder, radius 0.0625, length 0.25",
        (0.125, 0.125, 0.25),
        128,
        _cylinder,
    ),
    ObjectSpec(
        "capsule.stl",
        "capsule, radius 0.0625, length 0.25 (+caps)",
        (0.125, 0.125, 0.375),
        1024,
        _capsule,
    ),
    ObjectSpec(
        "cone.stl",
        "cone, radius 0.0625, length 0.25, apex +z",
        (0.125, 0.125, 0.25),
        64,
        _cone,
    ),
    ObjectSpec(
        "torus.stl",
        "torus, major radius 0.125, minor 0.03125",
        (0.3125, 0.3125, 0.0625),
        1024,
        _torus,
    ),
)
"""The generated objects, in the order of the table."""

_LICENSE = """\
The meshes in this folder are generated by spatialcontact/meshes/generate.py
(python -m spatialcontact.meshes.generate) and are part of spatialcontact.
They are distributed under spatialcontact's licence, BSD-3-Clause (see the
project's LICENSE / package metadata). Their sizes are listed in README.md.
"""


def _number(value: float) -> str:
    return f"{value:g}"


def table() -> str:
    """The table of objects as reStructuredText, as in this module's docstring.

    Returns
    -------
    str
        One line per object between ``=`` rules, ending with a newline.
    """
    rule = "  ".join("=" * width for width in (16, 45, 24, 5))
    rows = [
        rule,
        f"{'file':<16}  {'shape and exact size (m)':<45}  {'bounding box (m)':<24}  faces",
    ]
    rows.append(rule)
    for spec in OBJECTS:
        box = " x ".join(_number(e) for e in spec.extents)
        rows.append(f"{spec.filename:<16}  {spec.shape:<45}  {box:<24}  {spec.faces:>5}")
    rows.append(rule)
    return "\n".join(rows) + "\n"


def _readme() -> str:
    return (
        "# Generated objects\n\n"
        "Closed (watertight) triangle meshes in metres, centred at the origin with their axis "
        "along +z,\nwritten by `python -m spatialcontact.meshes.generate` (do not edit by "
        "hand). Sizes are powers of\ntwo, exact in the float32 of binary STL: each bounding "
        "box below is exact, and the vertices of\nround objects lie on the true surface up to "
        "float32 rounding. The cylinder, capsule and cone\nhave 32 sides; the capsule's length "
        "is its cylinder part (0.375 m overall); the cone's base is\nat z = -0.125 and its "
        "apex at z = +0.125; the torus lies in the xy plane.\n\n"
        "```\n" + table() + "```\n\n"
        "Licence: BSD-3-Clause, as spatialcontact (see LICENSE in this folder).\n"
    )


def object_mesh(filename: str) -> Any:
    """The ``trimesh.Trimesh`` of one generated object, before it is written.

    Parameters
    ----------
    filename : str
        One of the ``filename`` of :data:`OBJECTS`, e.g. ``'box.stl'``.

    Returns
    -------
    trimesh.Trimesh
        Vertices (n, 3) float64 in the object's frame, in metres.
    """
    for spec in OBJECTS:
        if spec.filename == filename:
            return spec.build()
    valid = ", ".join(repr(s.filename) for s in OBJECTS)
    raise MeshFileError(f"filename must be one of {valid}, got {describe(filename)}")


def _stl_bytes(mesh: Any, title: str) -> bytes:
    """Binary STL: 80-byte header, uint32 count, then per triangle normal, 3 vertices, 0."""
    triangles = np.asarray(mesh.vertices, dtype=np.float64)[np.asarray(mesh.faces)]
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    record = np.dtype([("normal", "<f4", (3,)), ("vertices", "<f4", (3, 3)), ("attr", "<u2")])
    packed = np.zeros(len(triangles), dtype=record)
    packed["normal"] = normals
    packed["vertices"] = triangles
    header = title.encode("ascii")[:80].ljust(80, b" ")
    return header + struct.pack("<I", len(triangles)) + packed.tobytes()


def generate(outdir: str | Path) -> list[Path]:
    """Write every object of :data:`OBJECTS`, ``README.md`` and ``LICENSE`` into ``outdir``.

    Parameters
    ----------
    outdir : str or pathlib.Path
        Folder to write into; it is created if missing. Files of the same names are replaced,
        other files are left alone.

    Returns
    -------
    list of pathlib.Path
        The files written, STL files first in the order of :data:`OBJECTS`.

    Raises
    ------
    MeshFileError
        ``outdir`` is not a path, or exists and is not a folder.
    """
    if not isinstance(outdir, (str, Path)):
        raise MeshFileError(f"outdir must be a path, got {describe(outdir)}")
    folder = Path(outdir)
    if folder.exists() and not folder.is_dir():
        raise MeshFileError(f"outdir {str(folder)!r} exists and is not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in OBJECTS:
        mesh = spec.build()
        if len(mesh.faces) != spec.faces or not mesh.is_watertight:
            raise RuntimeError(f"{spec.filename}: trimesh did not make the documented closed mesh")
        title = f"spatialcontact: {spec.shape} (m)"
        target = folder / spec.filename
        target.write_bytes(_stl_bytes(mesh, title))
        written.append(target)
    for name, text in (("README.md", _readme()), ("LICENSE", _LICENSE)):
        target = folder / name
        target.write_text(text, encoding="utf-8", newline="\n")
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write the objects into OUTDIR (default: the shipped ``objects/``)."""
    parser = argparse.ArgumentParser(
        prog="python -m spatialcontact.meshes.generate",
        description="Write spatialcontact's generated object meshes (STL) and their README.",
    )
    parser.add_argument(
        "outdir",
        nargs="?",
        default=str(Path(__file__).resolve().parent / "objects"),
        help="output folder (default: the package's meshes/objects)",
    )
    args = parser.parse_args(argv)
    for target in generate(args.outdir):
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
