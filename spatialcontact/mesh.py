"""Shapes made from data: triangle meshes, convex hulls and occupancy octrees.

All data is checked here before Coal sees it: Coal accepts nonsense silently and crashes the
process on a half-built mesh, on a flat or far-off point set given to its convex hull, and on a
distance query to an octree left empty because its points fell outside octomap's key range.

Sizes follow the package's range (see :mod:`spatialcontact._validate`): a scaled mesh, a hull
and an octree cell span [``MIN_SIZE``, ``MAX_SIZE``] metres, and every vertex or point lies
within ``±MAX_COORDINATE`` metres of the shape frame's origin on each axis.
"""

from __future__ import annotations

import os
import struct
from typing import Any

import coal
import numpy as np

from ._coal import quirks
from ._validate import (
    MAX_COORDINATE,
    MAX_SIZE,
    MIN_SIZE,
    describe,
    flag,
    numbers,
    positive_vector3,
    size,
)
from ._validate import points as checked_points
from .color import parse_color
from .errors import (
    InvalidArgumentError,
    InvalidMeshError,
    MeshFileError,
    MeshFileNotFoundError,
    ShapeTypeError,
)
from .serialize import Fields
from .shapes import CollisionShape, _finish

__all__ = ["OCTREE_KEYS", "ConvexHull", "Mesh", "OcTree"]

OCTREE_KEYS = 65536
"""Cells per axis an octree can address (octomap's 16-bit keys): with resolution ``r`` it holds
points with coordinates in ``[-32768 r, 32768 r)``; octomap drops others without a word."""

_HULL_MIN_FLATNESS = 1e-6
"""Smallest ratio of a hull's thickness to its extent: Coal's hull code segfaults on point sets
flatter than about 3e-8 (whatever their size)."""

_HULL_MIN_THICKNESS = 1e-12
"""Smallest ratio of a hull's thickness to its largest coordinate: far from the origin, Coal's
hull code segfaults once the thickness is below about 4e-14 of the coordinates (rounding)."""

_Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
"""Right-multiplying row vertices by this maps a +Y-up model to +Z-up (x, y, z) -> (x, -z, y)."""


def _faces(value: Any, n_vertices: int) -> np.ndarray:
    """``value`` as a new read-only int64 array of triangles (m, 3) indexing n_vertices."""
    # The package's rules for numbers refuse what numpy would turn into indices silently
    # (booleans, masked arrays, strings, complex numbers, objects).
    given = numbers(
        value, "faces", "integer indices", type_error=ShapeTypeError, error=InvalidMeshError
    )
    if given.ndim != 2 or given.shape[1] != 3:
        raise InvalidMeshError(
            f"faces must have shape (m, 3), got shape {given.shape}: {describe(value)}"
        )
    if len(given) == 0:
        raise InvalidMeshError("faces is empty: a mesh needs at least one triangle")
    if not np.all(np.isfinite(given) & (given == np.round(given))):
        raise InvalidMeshError(f"faces must hold integer indices, got {describe(value)}")
    # An integer array as given, to name a wrong index exactly (uint64 beyond int64, say).
    faces = value if isinstance(value, np.ndarray) and value.dtype.kind in "iu" else given
    low, high = faces.min(), faces.max()
    if low < 0 or high >= n_vertices:
        wrong = low if low < 0 else high
        exact = faces.dtype.kind in "iu" or abs(wrong) < 1e15
        shown = str(int(wrong)) if exact else f"{wrong:g}"
        raise InvalidMeshError(
            f"faces index vertex {shown}, outside the {n_vertices} vertices (0..{n_vertices - 1})"
        )
    faces = faces.astype(np.int64)
    faces.flags.writeable = False
    return faces


def _check_area(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """``faces`` without its triangles of exactly zero area (read-only; quirks.has_area)."""
    v = vertices[faces]
    doubled = np.linalg.norm(np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]), axis=1)
    size = float(np.ptp(vertices, axis=0).max())
    if not np.any(doubled > (1e-12 * size * size)):
        raise InvalidMeshError(
            f"all {len(faces)} triangles have zero area: the mesh has no surface"
        )
    kept_rows = quirks.has_area(vertices, faces)
    if np.all(kept_rows):
        return faces
    kept = faces[kept_rows]
    kept.flags.writeable = False
    return kept


def _scale(value: Any) -> np.ndarray:
    """A mesh's scale as (3,) read-only: ``None`` is 1, one number scales every axis."""
    if value is None:
        value = (1.0, 1.0, 1.0)
    elif np.isscalar(value) or (isinstance(value, np.ndarray) and value.ndim == 0):
        value = (value, value, value)
    return positive_vector3(value, "scale")


def _scaled(unscaled: np.ndarray, scale: np.ndarray, given: Any) -> np.ndarray:
    """The vertices ``unscaled * scale`` (read-only), checked to lie in the size range."""
    with np.errstate(over="ignore", under="ignore"):
        vertices = unscaled * scale
    far = float(np.abs(vertices).max())
    extent = float(np.ptp(vertices, axis=0).max())
    if not far <= MAX_COORDINATE:
        raise InvalidMeshError(
            f"scale {describe(given)} puts vertices {far:.3g} m from the origin; scaled "
            f"vertices must lie within ±{MAX_COORDINATE:g} m on each axis"
        )
    if not MIN_SIZE <= extent <= MAX_SIZE:
        raise InvalidMeshError(
            f"scale {describe(given)} makes the mesh {extent:.3g} m across; a scaled mesh must "
            f"span [{MIN_SIZE:g}, {MAX_SIZE:g}] m"
        )
    vertices.flags.writeable = False
    return vertices


def _replace(shape: CollisionShape, values: dict[str, Any]) -> None:
    """Set the attributes ``values`` of ``shape`` and rebuild its geometry; if the rebuild
    fails, put the old values back (the shape keeps its old size and geometry)."""
    old = {key: getattr(shape, key) for key in values}
    for key, value in values.items():
        setattr(shape, key, value)
    try:
        shape._rebuild()
    except BaseException:
        for key, value in old.items():
            setattr(shape, key, value)
        raise


def _load_file(filename: Any) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of a mesh file (STL, OBJ, PLY, GLB, DAE, ...) via trimesh."""
    if not isinstance(filename, (str, os.PathLike)):
        raise MeshFileError(f"filename must be a path, got {describe(filename)}")
    path = os.fspath(filename)
    if isinstance(path, bytes):
        raise MeshFileError(f"filename must be a str path, got bytes {path!r}")
    if os.path.isdir(path):
        raise MeshFileNotFoundError(f"filename {path!r}: is a directory, not a mesh file")
    if not os.path.exists(path):
        raise MeshFileNotFoundError(f"filename {path!r}: no such mesh file")
    if not os.path.isfile(path):  # a device, a pipe, a socket
        raise MeshFileError(f"filename {path!r}: not a regular file")
    if os.path.getsize(path) == 0:
        raise MeshFileError(f"filename {path!r}: the file is empty")
    import trimesh

    try:
        loaded = trimesh.load(path, force="mesh", process=False)
    except ImportError:
        # trimesh reads an unrecognised or cut-short file as text and fails importing the
        # module that would guess its encoding: the import is not the user's problem.
        raise MeshFileError(f"filename {path!r}: {_unreadable(path)}") from None
    except Exception as error:  # trimesh raises many types for unreadable files
        raise MeshFileError(
            f"filename {path!r}: cannot read it as a mesh ({type(error).__name__}: {error})"
        ) from None
    faces = getattr(loaded, "faces", None)
    if faces is None or len(faces) == 0:
        truncated = _stl_truncation(path)
        raise MeshFileError(f"filename {path!r}: {truncated or 'the file holds no triangles'}")
    return np.asarray(getattr(loaded, "vertices", ())), np.asarray(faces)


def _unreadable(path: str) -> str:
    """Why a file trimesh could not parse is unreadable, as precisely as can be told."""
    return _stl_truncation(path) or (
        "cannot read it as a mesh: the file is truncated, corrupt or in a format trimesh "
        "does not read (STL, OBJ, PLY, GLB, DAE, ... are read)"
    )


def _stl_truncation(path: str) -> str | None:
    """A message if ``path`` is a binary STL shorter than its header announces, else None."""
    if not path.lower().endswith(".stl"):
        return None
    length = os.path.getsize(path)
    with open(path, "rb") as stream:
        header = stream.read(84)
    if len(header) < 84:
        return f"the file is truncated: {length} bytes, shorter than a binary STL header (84)"
    count_bytes = header[80:84]
    if all(32 <= byte < 127 or byte in b"\t\r\n" for byte in count_bytes):
        return None  # text where the triangle count would be: an ASCII STL
    (triangles,) = struct.unpack("<I", count_bytes)
    expected = 84 + 50 * triangles
    if length < expected:
        return (
            f"the file is truncated: its binary STL header announces {triangles} triangles "
            f"({expected} bytes), but it holds {length} bytes"
        )
    return None


def _bvh(vertices: np.ndarray, faces: np.ndarray) -> Any:
    """A finished Coal BVH model from checked arrays (begin, add, end in one place)."""
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(faces), len(vertices))
    model.addVertices(np.ascontiguousarray(vertices, dtype=np.float64))
    model.addTriangles(np.ascontiguousarray(faces, dtype=np.int64))
    model.endModel()
    return model


class Mesh(CollisionShape):
    """A triangle mesh, loaded from a file or given as arrays.

    A mesh is a hollow surface in Coal: shapes collide with its triangles, not with the
    volume they enclose (a sphere wholly inside a closed mesh does not collide with it, and
    overlap is measured per triangle). Use :meth:`convex_hull` for a solid.

    Parameters
    ----------
    filename : str or os.PathLike
        Mesh file (STL, OBJ, PLY, GLB, DAE, ... as trimesh reads them), relative or absolute.
    scale : float or sequence of 3 floats
        Scale along the mesh's x, y, z (> 0). ``None`` means 1. The scaled mesh must span
        [1e-5, 1e6] m and its vertices lie within ±1e6 m on each axis.
    y_up : bool
        True when the file was authored with +Y up: it is turned to +Z up on loading.
    pose, color, name, collision, base
        See :class:`CollisionShape`.

    Attributes
    ----------
    vertices : ndarray, shape (n, 3), read-only
        Vertices in the shape frame, scaled.
    faces : ndarray, shape (m, 3), int, read-only
        Triangles as vertex indices; a contact's ``b1``/``b2`` indexes these rows. Triangles
        of zero area (repeated or collinear vertices) are left out.
    """

    stype = "mesh"
    _size_params = ("scale",)

    def __init__(
        self,
        filename: Any = None,
        scale: Any = (1.0, 1.0, 1.0),
        y_up: bool = False,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        if filename is None:
            raise MeshFileError(
                "filename is required, got None (Mesh.from_arrays and Mesh.from_trimesh make "
                "meshes without a file)"
            )
        vertices, faces = _load_file(filename)
        self._filename: str | None = os.fspath(filename)
        kwargs = {"pose": pose, "color": color, "name": name, "collision": collision, "base": base}
        try:
            self._setup(vertices, faces, scale, y_up, kwargs)
        except InvalidMeshError as error:  # say which file holds the broken mesh
            raise type(error)(f"filename {self._filename!r}: {error}") from None

    def _setup(
        self, vertices: Any, faces: Any, scale: Any, y_up: Any, kwargs: dict[str, Any]
    ) -> None:
        unscaled = checked_points(vertices, "vertices", 3)
        triangles = _check_area(unscaled, _faces(faces, len(unscaled)))
        turned = flag(y_up, "y_up")
        if turned:
            unscaled = unscaled @ _Y_UP_TO_Z_UP
            unscaled.flags.writeable = False
        self._scale = _scale(scale)
        self._vertices = _scaled(unscaled, self._scale, scale)
        self._y_up = turned
        self._unscaled = unscaled
        self._faces = triangles
        self._color_given = kwargs.get("color") is not None
        CollisionShape.__init__(self, **kwargs)
        _finish(self)

    @classmethod
    def from_arrays(
        cls,
        vertices: Any,
        faces: Any,
        scale: Any = (1.0, 1.0, 1.0),
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> Mesh:
        """A mesh from vertices (n, 3) and triangle indices (m, 3), in the shape frame."""
        mesh = cls.__new__(cls)
        mesh._filename = None
        mesh._setup(
            vertices,
            faces,
            scale,
            False,
            {"pose": pose, "color": color, "name": name, "collision": collision, "base": base},
        )
        return mesh

    @classmethod
    def from_trimesh(
        cls,
        mesh: Any,
        scale: Any = (1.0, 1.0, 1.0),
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> Mesh:
        """A mesh from a ``trimesh.Trimesh`` (its vertices and faces are copied)."""
        vertices = getattr(mesh, "vertices", None)
        faces = getattr(mesh, "faces", None)
        if vertices is None or faces is None:
            raise ShapeTypeError(
                f"mesh must be a trimesh.Trimesh (with vertices and faces), got {describe(mesh)}"
            )
        return cls.from_arrays(
            vertices,
            faces,
            scale,
            pose=pose,
            color=color,
            name=name,
            collision=collision,
            base=base,
        )

    @property
    def filename(self) -> str | None:
        """str or None: the file the mesh was loaded from, as given."""
        return self._filename

    @property
    def y_up(self) -> bool:
        """bool: whether the file was turned from +Y up to +Z up on loading."""
        return self._y_up

    @property
    def scale(self) -> np.ndarray:
        """ndarray, shape (3,), read-only: scale along x, y, z. Setting it rebuilds the geometry."""
        return self._scale

    @scale.setter
    def scale(self, value: Any) -> None:
        scale = _scale(value)
        _replace(self, {"_scale": scale, "_vertices": _scaled(self._unscaled, scale, value)})

    @property
    def vertices(self) -> np.ndarray:
        """ndarray, shape (n, 3), read-only: scaled vertices in the shape frame."""
        return self._vertices

    @property
    def faces(self) -> np.ndarray:
        """ndarray, shape (m, 3), int64, read-only: triangle vertex indices."""
        return self._faces

    def _build_geometry(self) -> Any:
        # a scale factor can flatten triangles to zero area (1e-300 underflows): leave them out
        return _bvh(self._vertices, _check_area(self._vertices, self._faces))

    def convex_hull(self) -> ConvexHull:
        """A solid :class:`ConvexHull` of this mesh's vertices, with the same pose and colour."""
        return ConvexHull(
            self.vertices,
            pose=self.T,
            color=self.color,
            name=self.name,
            collision=self.collision,
        )

    def _params_repr(self) -> list[str]:
        source = repr(self._filename) if self._filename is not None else "None"
        return [
            f"filename={source}",
            f"scale={self._scale.tolist()!r}",
            f"y_up={self._y_up!r}",
            f"triangles={len(self._faces)}",
        ]

    def to_dict(self, complete: bool = False) -> dict[str, Any]:
        """As :meth:`CollisionShape.to_dict`, plus ``filename`` (with '/'), ``scale``,
        ``use_vertex_colors`` and ``y_up`` as spatialgeometry gives them.

        With ``complete=True``, a mesh made from arrays also gives its ``vertices`` (n, 3),
        before scaling, and ``faces`` (m, 3); a mesh from a file is described by its file, so
        :meth:`from_dict` reads the file again (a relative ``filename`` is relative to the
        working directory).
        """
        out = super().to_dict(complete)
        out["filename"] = None if self._filename is None else self._filename.replace("\\", "/")
        out["use_vertex_colors"] = not self._color_given
        out["y_up"] = self._y_up
        return out

    def _complete_fields(self) -> dict[str, Any]:
        out = super()._complete_fields()
        if self._filename is None:
            out["vertices"] = self._unscaled.tolist()
            out["faces"] = self._faces.tolist()
        return out

    @classmethod
    def _from_fields(
        cls, fields: Fields, common: dict[str, Any], T_world_parent: np.ndarray | None
    ) -> CollisionShape:
        """From ``vertices`` and ``faces`` when the dict has them, else from ``filename``."""
        scale = fields.require("scale")
        if ("vertices" in fields or "faces" in fields) and fields.get("filename") is not None:
            raise InvalidArgumentError(
                "a filename and vertices or faces are both given: give only what the mesh is "
                f"made from (got filename {describe(fields.get('filename'))})"
            )
        if "vertices" in fields or "faces" in fields:
            mesh = cls.from_arrays(
                fields.require("vertices"), fields.require("faces"), scale, **common
            )
        else:
            filename = fields.require("filename")
            if filename is None:
                raise InvalidArgumentError(
                    "filename is None and there are no vertices and faces: a mesh made from "
                    "arrays is described by to_dict(complete=True)"
                )
            mesh = cls(filename, scale, fields.get("y_up", False), **common)
        coloured = "rgba" in fields or "color" in fields
        own_colors = flag(fields.get("use_vertex_colors", not coloured), "use_vertex_colors")
        mesh._color_given = not own_colors
        return mesh

    @property
    def color(self) -> tuple[float, float, float, float]:
        """(r, g, b, a) floats in [0, 1]. Until one is given, renderers use the file's own."""
        return self._color

    @color.setter
    def color(self, value: Any) -> None:
        self._color = parse_color(value)
        self._color_given = True

    def equals(self, other: object) -> bool:
        """As :meth:`CollisionShape.equals`, also comparing vertices and faces."""
        return (
            super().equals(other)
            and isinstance(other, Mesh)
            and np.array_equal(self._unscaled, other._unscaled)
            and np.array_equal(self._faces, other._faces)
        )


def _check_solid(points: np.ndarray, name: str) -> None:
    """Refuse a point set whose hull would be flat (Coal's hull code segfaults on those) or
    outside the size range.

    The hull's thickness, its width along the point set's least principal axis, must be at
    least :data:`_HULL_MIN_FLATNESS` of its extent and :data:`_HULL_MIN_THICKNESS` of its
    farthest coordinate.
    """
    centred = points - points.mean(axis=0)
    axes = np.linalg.svd(centred, full_matrices=False)[2]
    widths = np.ptp(centred @ axes.T, axis=0)  # along the principal axes, widest first
    far = float(np.abs(points).max())
    least = max(_HULL_MIN_FLATNESS * float(widths[0]), _HULL_MIN_THICKNESS * far)
    spanned = int(np.sum(widths > least))
    if spanned < 3:
        raise InvalidMeshError(
            f"{name} must include 4 points that are not coplanar, got {len(points)} points "
            f"spanning only {spanned} dimension(s) (widths {_widths(widths)} m; a hull must be "
            f"thicker than {_HULL_MIN_FLATNESS:g} of its extent and {_HULL_MIN_THICKNESS:g} of "
            "its farthest coordinate)"
        )
    extent = float(widths[0])
    if not MIN_SIZE <= extent <= MAX_SIZE:
        raise InvalidMeshError(
            f"{name} span {extent:.3g} m; a convex hull must span [{MIN_SIZE:g}, {MAX_SIZE:g}] m"
        )


def _widths(widths: np.ndarray) -> str:
    return " x ".join(f"{float(w):.3g}" for w in widths)


class ConvexHull(CollisionShape):
    """The solid convex hull of a set of points (Coal ``Convex``).

    Parameters
    ----------
    points : array_like, shape (n, 3)
        Points in the shape frame, within ±1e6 m on each axis; at least 4 of them not
        coplanar. The hull must span [1e-5, 1e6] m and be thicker than 1e-6 of its extent.
    pose, color, name, collision, base
        See :class:`CollisionShape`.
    """

    stype = "convex_hull"
    _size_params = ("points",)

    def __init__(
        self,
        points: Any,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        self._points = self._checked(points)
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    @staticmethod
    def _checked(value: Any) -> np.ndarray:
        out = checked_points(value, "points", 4)
        _check_solid(out, "points")
        return out

    @property
    def points(self) -> np.ndarray:
        """ndarray, shape (n, 3), read-only: the points given. Setting them rebuilds the hull."""
        return self._points

    @points.setter
    def points(self, value: Any) -> None:
        _replace(self, {"_points": self._checked(value)})

    def _build_geometry(self) -> Any:
        vectors = coal.StdVec_Vec3s()
        vectors.extend(list(self._points))
        return coal.Convex.convexHull(vectors, False, "")

    def _params_repr(self) -> list[str]:
        return [f"points=<{len(self._points)} points>"]


class OcTree(CollisionShape):
    """An occupancy octree built from a point cloud, e.g. a depth camera's.

    Each point marks the cell of side ``resolution`` holding it as occupied; cells are solid
    boxes. A contact's ``b1``/``b2`` on an octree is the id of the cell touched.

    Parameters
    ----------
    points : array_like, shape (n, 3)
        Occupied points in the shape frame (n >= 1), within ±1e6 m on each axis and within
        the octree's reach, ``[-32768 * resolution, 32768 * resolution)`` on each axis
        (octomap's 16-bit keys; it would drop other points without a word).
    resolution : float
        Side of the smallest cell, in metres, in [1e-5, 1e6].
    pose, color, name, collision, base
        See :class:`CollisionShape`.

    Notes
    -----
    Coal has no algorithm for an octree against an :class:`Ellipsoid`; such a query raises
    :class:`~spatialcontact.errors.UnsupportedPairError`, and so does ``contacts`` between two
    octrees (Coal gives those contacts no normal or depth).
    """

    stype = "octree"
    _size_params = ("points", "resolution")

    def __init__(
        self,
        points: Any,
        resolution: float,
        *,
        pose: Any = None,
        color: Any = None,
        name: str | None = None,
        collision: bool = True,
        base: Any = None,
    ) -> None:
        cloud = checked_points(points, "points", 1)
        step = size(resolution, "resolution")
        _check_reach(cloud, step, "points")
        self._points = cloud
        self._resolution = step
        self._cells: tuple[Any, np.ndarray] | None = None
        super().__init__(pose=pose, color=color, name=name, collision=collision, base=base)
        _finish(self)

    @property
    def points(self) -> np.ndarray:
        """ndarray, shape (n, 3), read-only: the cloud. Setting it rebuilds the tree."""
        return self._points

    @points.setter
    def points(self, value: Any) -> None:
        cloud = checked_points(value, "points", 1)
        _check_reach(cloud, self._resolution, "points")
        _replace(self, {"_points": cloud})

    @property
    def resolution(self) -> float:
        """float: the smallest cell's side in metres. Setting it rebuilds the tree."""
        return self._resolution

    @resolution.setter
    def resolution(self, value: float) -> None:
        step = size(value, "resolution")
        _check_reach(self._points, step, "resolution")
        _replace(self, {"_resolution": step})

    def _build_geometry(self) -> Any:
        tree = coal.makeOctree(np.ascontiguousarray(self._points), self._resolution)
        cells = _cells_of(tree)
        if len(cells) == 0:  # a query on an empty octree is a segfault
            raise InvalidMeshError(
                f"the octree of {len(self._points)} points at resolution {self._resolution:g} "
                "is empty: octomap dropped every point"
            )
        self._cells = (tree, cells)
        return tree

    @property
    def cells(self) -> np.ndarray:
        """ndarray, shape (n, 4), read-only: the occupied cells as rows ``[x, y, z, side]``
        (centre in the shape frame, side in metres). A contact's ``b1``/``b2`` on this octree
        is a row index."""
        cached = self._cells
        if cached is None or cached[0] is not self.geometry:
            cached = self._cells = (self.geometry, _cells_of(self.geometry))
        return cached[1]

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_cells"] = None
        return state

    def _params_repr(self) -> list[str]:
        return [f"points=<{len(self._points)} points>", f"resolution={self._resolution!r}"]


def _cells_of(tree: Any) -> np.ndarray:
    """The occupied cells of a Coal octree as read-only rows ``[x, y, z, side]``."""
    boxes = np.asarray(tree.toBoxes(), dtype=np.float64).reshape(-1, 6)
    cells = np.ascontiguousarray(boxes[:, :4])
    cells.flags.writeable = False
    return cells


def _check_reach(points: np.ndarray, resolution: float, name: str) -> None:
    """Refuse points an octree of ``resolution`` cannot hold (octomap drops them silently).

    octomap's key of a coordinate ``x`` is ``floor(x * (1 / resolution)) + 32768``, kept when it
    lies in ``[0, 65536)``: computed the same way here, so the bound is exact.
    """
    half = OCTREE_KEYS // 2
    keys = np.floor(points * (1.0 / resolution))
    outside = (keys < -half) | (keys >= half)
    if outside.any():
        row, column = np.argwhere(outside)[0]
        bad = float(points[row, column])
        reach = f"[{-half * resolution:g}, {half * resolution:g}) m on each axis"
        if name == "resolution":
            raise InvalidMeshError(
                f"resolution {resolution:g} is too fine for these points: an octree of that "
                f"resolution holds {reach} ({OCTREE_KEYS} cells per axis), but row {row} of "
                f"points has {bad:g}"
            )
        raise InvalidMeshError(
            f"{name} must lie in {reach} for resolution {resolution:g} (an octree holds "
            f"{OCTREE_KEYS} cells per axis), got {bad:g} at row {row}"
        )
