"""Shapes made from data: triangle meshes, convex hulls and occupancy octrees.

All data is checked here before Coal sees it: Coal accepts nonsense silently and crashes the
process on a half-built mesh or on a flat point set given to its convex hull.
"""

from __future__ import annotations

import os
from typing import Any

import coal
import numpy as np

from ._validate import describe, positive_real, positive_vector3
from .color import parse_color
from .errors import InvalidMeshError, MeshFileError, MeshFileNotFoundError
from .shapes import CollisionShape, _finish

__all__ = ["ConvexHull", "Mesh", "OcTree"]

_Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
"""Right-multiplying row vertices by this maps a +Y-up model to +Z-up (x, y, z) -> (x, -z, y)."""


def _points(value: Any, name: str, minimum: int) -> np.ndarray:
    """``value`` as a new read-only finite float64 array of shape (n, 3), n >= minimum."""
    try:
        points = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidMeshError(
            f"{name} must be an (n, 3) array of numbers, got {describe(value)}"
        ) from None
    if points.ndim != 2 or points.shape[1] != 3:
        raise InvalidMeshError(
            f"{name} must have shape (n, 3), got shape {points.shape}: {describe(value)}"
        )
    if len(points) < minimum:
        raise InvalidMeshError(f"{name} needs at least {minimum} points, got {len(points)}")
    if not np.all(np.isfinite(points)):
        bad = np.argwhere(~np.isfinite(points))[0]
        raise InvalidMeshError(
            f"{name} must be finite, got {points[bad[0], bad[1]]} at row {bad[0]}"
        )
    points.flags.writeable = False
    return points


def _faces(value: Any, n_vertices: int) -> np.ndarray:
    """``value`` as a new read-only int64 array of triangles (m, 3) indexing n_vertices."""
    faces = np.asarray(value)
    if faces.ndim != 2 or faces.shape[1] != 3:
        raise InvalidMeshError(
            f"faces must have shape (m, 3), got shape {faces.shape}: {describe(value)}"
        )
    if len(faces) == 0:
        raise InvalidMeshError("faces is empty: a mesh needs at least one triangle")
    if faces.dtype.kind not in "iu":
        if faces.dtype.kind != "f" or not np.all(faces == np.round(faces)):
            raise InvalidMeshError(f"faces must hold integer indices, got {describe(value)}")
    faces = faces.astype(np.int64)
    low, high = int(faces.min()), int(faces.max())
    if low < 0 or high >= n_vertices:
        wrong = low if low < 0 else high
        raise InvalidMeshError(
            f"faces index vertex {wrong}, outside the {n_vertices} vertices (0..{n_vertices - 1})"
        )
    faces.flags.writeable = False
    return faces


def _check_area(vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """``faces`` without its triangles of exactly zero area (read-only).

    Coal measures a sphere against a mesh holding even one such triangle as overlapping by its
    whole radius, wherever the sphere is; they carry no surface, so they are dropped.
    """
    v = vertices[faces]
    doubled = np.linalg.norm(np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]), axis=1)
    size = float(np.ptp(vertices, axis=0).max())
    if not np.any(doubled > (1e-12 * size * size)):
        raise InvalidMeshError(
            f"all {len(faces)} triangles have zero area: the mesh has no surface"
        )
    if np.all(doubled > 0.0):
        return faces
    kept = faces[doubled > 0.0]
    kept.flags.writeable = False
    return kept


def _scale(value: Any) -> np.ndarray:
    if value is None:
        value = (1.0, 1.0, 1.0)
    elif np.isscalar(value):
        value = (value, value, value)
    return positive_vector3(value, "scale")


def _load_file(filename: Any) -> tuple[np.ndarray, np.ndarray]:
    """Vertices and faces of a mesh file (STL, OBJ, PLY, GLB, DAE, ...) via trimesh."""
    if not isinstance(filename, (str, os.PathLike)):
        raise MeshFileError(f"filename must be a path, got {describe(filename)}")
    path = os.fspath(filename)
    if not os.path.isfile(path):
        raise MeshFileNotFoundError(f"filename {path!r}: no such mesh file")
    if os.path.getsize(path) == 0:
        raise MeshFileError(f"filename {path!r}: the file is empty")
    import trimesh

    try:
        loaded = trimesh.load(path, force="mesh", process=False)
    except Exception as error:  # trimesh raises many types for unreadable files
        raise MeshFileError(f"filename {path!r}: cannot read it as a mesh ({error})") from None
    faces = getattr(loaded, "faces", None)
    if faces is None or len(faces) == 0:
        raise MeshFileError(f"filename {path!r}: the file holds no triangles")
    return np.asarray(getattr(loaded, "vertices", ())), np.asarray(faces)


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
        Scale along the mesh's x, y, z (> 0). ``None`` means 1.
    y_up : bool
        True when the file was authored with +Y up: it is turned to +Z up on loading.
    **kwargs
        ``pose``, ``color``, ``name``, ``collision``, ``base``: see :class:`CollisionShape`.

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
        self, filename: Any = None, scale: Any = (1.0, 1.0, 1.0), y_up: bool = False, **kwargs: Any
    ) -> None:
        if filename is None:
            raise MeshFileError(
                "filename is required, got None (Mesh.from_arrays and Mesh.from_trimesh make "
                "meshes without a file)"
            )
        vertices, faces = _load_file(filename)
        self._filename: str | None = os.fspath(filename)
        self._setup(vertices, faces, scale, y_up, kwargs)

    def _setup(
        self, vertices: Any, faces: Any, scale: Any, y_up: bool, kwargs: dict[str, Any]
    ) -> None:
        points = _points(vertices, "vertices", 3)
        triangles = _check_area(points, _faces(faces, len(points)))
        self._scale = _scale(scale)
        self._y_up = bool(y_up)
        if self._y_up:
            points = points @ _Y_UP_TO_Z_UP
            points.flags.writeable = False
        self._unscaled = points
        self._faces = triangles
        self._color_given = kwargs.get("color") is not None
        CollisionShape.__init__(self, **kwargs)
        _finish(self)

    @classmethod
    def from_arrays(
        cls, vertices: Any, faces: Any, scale: Any = (1.0, 1.0, 1.0), **kwargs: Any
    ) -> Mesh:
        """A mesh from vertices (n, 3) and triangle indices (m, 3), in the shape frame."""
        mesh = cls.__new__(cls)
        mesh._filename = None
        mesh._setup(vertices, faces, scale, False, kwargs)
        return mesh

    @classmethod
    def from_trimesh(cls, mesh: Any, scale: Any = (1.0, 1.0, 1.0), **kwargs: Any) -> Mesh:
        """A mesh from a ``trimesh.Trimesh`` (its vertices and faces are copied)."""
        vertices = getattr(mesh, "vertices", None)
        faces = getattr(mesh, "faces", None)
        if vertices is None or faces is None:
            raise InvalidMeshError(
                f"mesh must be a trimesh.Trimesh (with vertices and faces), got {describe(mesh)}"
            )
        return cls.from_arrays(vertices, faces, scale, **kwargs)

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
        self._scale = _scale(value)
        self._rebuild()

    @property
    def vertices(self) -> np.ndarray:
        """ndarray, shape (n, 3), read-only: scaled vertices in the shape frame."""
        vertices = self._unscaled * self._scale
        vertices.flags.writeable = False
        return vertices

    @property
    def faces(self) -> np.ndarray:
        """ndarray, shape (m, 3), int64, read-only: triangle vertex indices."""
        return self._faces

    def _build_geometry(self) -> Any:
        return _bvh(self.vertices, self._faces)

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

    def to_dict(self) -> dict[str, Any]:
        """As :meth:`CollisionShape.to_dict`, plus ``filename`` (with '/'), ``scale``,
        ``use_vertex_colors`` and ``y_up`` as spatialgeometry gives them."""
        out = super().to_dict()
        out["filename"] = None if self._filename is None else self._filename.replace("\\", "/")
        out["use_vertex_colors"] = not self._color_given
        out["y_up"] = self._y_up
        return out

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
    centred = points - points.mean(axis=0)
    singular = np.linalg.svd(centred, compute_uv=False)
    if singular[0] == 0.0 or singular[2] <= 1e-7 * singular[0]:
        raise InvalidMeshError(
            f"{name} must include 4 points that are not coplanar, got {len(points)} points "
            f"spanning only {int(np.sum(singular > 1e-7 * singular[0]))} dimension(s)"
        )


class ConvexHull(CollisionShape):
    """The solid convex hull of a set of points (Coal ``Convex``).

    Parameters
    ----------
    points : array_like, shape (n, 3)
        Points in the shape frame; at least 4 of them not coplanar.
    **kwargs
        See :class:`CollisionShape`.
    """

    stype = "convex_hull"
    _size_params = ("points",)

    def __init__(self, points: Any, **kwargs: Any) -> None:
        self._points = self._checked(points)
        super().__init__(**kwargs)
        _finish(self)

    @staticmethod
    def _checked(points: Any) -> np.ndarray:
        out = _points(points, "points", 4)
        _check_solid(out, "points")
        return out

    @property
    def points(self) -> np.ndarray:
        """ndarray, shape (n, 3), read-only: the points given. Setting them rebuilds the hull."""
        return self._points

    @points.setter
    def points(self, value: Any) -> None:
        self._points = self._checked(value)
        self._rebuild()

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
        Occupied points in the shape frame (n >= 1).
    resolution : float
        Side of the smallest cell, in metres (> 0).
    **kwargs
        See :class:`CollisionShape`.

    Notes
    -----
    Coal has no algorithm for an octree against an :class:`Ellipsoid`; such a query raises
    :class:`~spatialcontact.errors.UnsupportedPairError`, and so does ``contacts`` between two
    octrees (Coal gives those contacts no normal or depth).
    """

    stype = "octree"
    _size_params = ("points", "resolution")

    def __init__(self, points: Any, resolution: float, **kwargs: Any) -> None:
        self._points = _points(points, "points", 1)
        self._resolution = positive_real(resolution, "resolution")
        self._cells: tuple[Any, np.ndarray] | None = None
        super().__init__(**kwargs)
        _finish(self)

    @property
    def points(self) -> np.ndarray:
        """ndarray, shape (n, 3), read-only: the cloud. Setting it rebuilds the tree."""
        return self._points

    @points.setter
    def points(self, value: Any) -> None:
        self._points = _points(value, "points", 1)
        self._rebuild()

    @property
    def resolution(self) -> float:
        """float: the smallest cell's side in metres. Setting it rebuilds the tree."""
        return self._resolution

    @resolution.setter
    def resolution(self, value: float) -> None:
        self._resolution = positive_real(value, "resolution")
        self._rebuild()

    def _build_geometry(self) -> Any:
        return coal.makeOctree(np.ascontiguousarray(self._points), self._resolution)

    @property
    def cells(self) -> np.ndarray:
        """ndarray, shape (n, 4), read-only: the occupied cells as rows ``[x, y, z, side]``
        (centre in the shape frame, side in metres). A contact's ``b1``/``b2`` on this octree
        is a row index."""
        cached = self._cells
        if cached is None or cached[0] is not self.geometry:
            boxes = np.asarray(self.geometry.toBoxes(), dtype=np.float64).reshape(-1, 6)
            cells = np.ascontiguousarray(boxes[:, :4])
            cells.flags.writeable = False
            cached = self._cells = (self.geometry, cells)
        return cached[1]

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_cells"] = None
        return state

    def _cell_at(self, point: np.ndarray) -> int:
        """Row of :attr:`cells` holding the world point ``point`` (the nearest cell when a
        point on a shared face or rounding leaves it in none)."""
        cells = self.cells
        local = self._tf.inverse().transform(point)
        excess = np.abs(cells[:, :3] - local).max(axis=1) - 0.5 * cells[:, 3]
        return int(np.argmin(excess))

    def _params_repr(self) -> list[str]:
        return [f"points=<{len(self._points)} points>", f"resolution={self._resolution!r}"]
