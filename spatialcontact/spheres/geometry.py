"""The collision surface of each link of a robot, as the sphere fitting and the coverage proof
read it.

A link's surface is made of *pieces* whose containment in a sphere is decided exactly:

- triangles: every ``<mesh>`` triangle (scaled and placed by its ``<origin>``) and the twelve
  triangles of every ``<box>``. A sphere is convex, so it holds a triangle exactly when it
  holds its three vertices;
- slabs of cylinders: a ``<cylinder>`` is cut into slabs along its axis; a slab is convex, and
  the point of it farthest from a sphere's centre lies on one of its two rims;
- spheres: a ``<sphere>`` is held by a sphere when its centre is within the difference of the
  radii.

Everything is in the link's frame, in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..mesh import Mesh
from ..robot.urdf import RobotSpec

__all__ = ["LinkSurface", "link_surfaces", "split_triangles"]

_BOX_FACES = np.array(
    [
        [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
        [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
    ],
    dtype=np.intp,
)  # fmt: skip
"""Triangles over the corners of :data:`_CORNERS`, two per face."""

_CORNERS = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)


@dataclass(frozen=True)
class LinkSurface:
    """One link's collision surface, in the link's frame.

    Attributes
    ----------
    link : str
    triangles : ndarray, shape (T, 3, 3)
        Mesh and box triangles: ``triangles[t, i]`` is vertex ``i`` of triangle ``t``.
    cylinders : ndarray, shape (C, 4, 4) and ndarray, shape (C, 2)
        ``cylinder_poses`` and ``cylinder_sizes`` (radius, full length along the local z).
    spheres : ndarray, shape (K, 4)
        Rows ``[x, y, z, radius]``.
    volume : float
        The volume the surface encloses (m³): each closed mesh's signed volume, each box's,
        cylinder's and sphere's, added (overlaps between elements counted twice).
    """

    link: str
    triangles: np.ndarray
    cylinder_poses: np.ndarray
    cylinder_sizes: np.ndarray
    spheres: np.ndarray
    volume: float

    @property
    def empty(self) -> bool:
        """bool: the link has no collision geometry."""
        return not (len(self.triangles) or len(self.cylinder_sizes) or len(self.spheres))

    def points(self) -> np.ndarray:
        """Points (n, 3) whose convex hull holds the surface: the triangles' vertices and the
        corners of the cylinders' and spheres' bounding boxes."""
        parts = [self.triangles.reshape(-1, 3)]
        for T, (r, length) in zip(self.cylinder_poses, self.cylinder_sizes, strict=True):
            local = _CORNERS * np.array([r, r, 0.5 * length])
            parts.append(local @ T[:3, :3].T + T[:3, 3])
        for x, y, z, r in self.spheres:
            parts.append(np.array([x, y, z]) + r * _CORNERS)
        return np.vstack(parts) if parts else np.zeros((0, 3))


def _signed_volume(triangles: np.ndarray) -> float:
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    return abs(float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum()) / 6.0)


def link_surfaces(spec: RobotSpec) -> dict[str, LinkSurface]:
    """Every link's collision surface (links without geometry are left out).

    Parameters
    ----------
    spec : RobotSpec
        A robot description read by :func:`spatialcontact.robot.urdf.read_urdf`.

    Returns
    -------
    dict of str to LinkSurface
        By link name, in the order of the URDF's links.
    """
    grouped: dict[str, list[np.ndarray]] = {}
    cylinders: dict[str, list[tuple[np.ndarray, tuple[float, float]]]] = {}
    spheres: dict[str, list[np.ndarray]] = {}
    volume: dict[str, float] = {}
    order: list[str] = []
    for g in spec.geometries:
        if g.link not in volume:
            order.append(g.link)
            volume[g.link] = 0.0
        T = g.T_link_geometry
        if g.kind in ("mesh", "box"):
            if g.kind == "mesh":
                mesh = Mesh(g.filename, scale=g.size)
                local = mesh.vertices[mesh.faces]
            else:
                local = (0.5 * np.asarray(g.size) * _CORNERS)[_BOX_FACES]
            triangles = local @ T[:3, :3].T + T[:3, 3]
            grouped.setdefault(g.link, []).append(triangles)
            if g.kind == "box":
                volume[g.link] += float(np.prod(g.size))
            else:
                volume[g.link] += _signed_volume(local)
        elif g.kind == "cylinder":
            r, length = g.size
            cylinders.setdefault(g.link, []).append((T, (r, length)))
            volume[g.link] += np.pi * r * r * length
        else:
            r = g.size[0]
            spheres.setdefault(g.link, []).append(np.append(T[:3, 3], r))
            volume[g.link] += 4.0 / 3.0 * np.pi * r**3
    out = {}
    for link in order:
        tris = grouped.get(link, [])
        cyl = cylinders.get(link, [])
        out[link] = LinkSurface(
            link=link,
            triangles=np.concatenate(tris) if tris else np.zeros((0, 3, 3)),
            cylinder_poses=np.array([T for T, _ in cyl]).reshape(-1, 4, 4),
            cylinder_sizes=np.array([s for _, s in cyl], dtype=float).reshape(-1, 2),
            spheres=np.array(spheres.get(link, []), dtype=float).reshape(-1, 4),
            volume=volume[link],
        )
    return out


def split_triangles(triangles: np.ndarray) -> np.ndarray:
    """Split each triangle (T, 3, 3) into four at its edges' midpoints: (4 T, 3, 3).

    The four pieces of triangle ``t`` are rows ``4 t`` to ``4 t + 3``; their union is the
    triangle (up to the rounding of the midpoints, below 1e-15 relative).
    """
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    ab, bc, ca = 0.5 * (a + b), 0.5 * (b + c), 0.5 * (c + a)
    pieces = np.stack(
        [
            np.stack([a, ab, ca], axis=1),
            np.stack([ab, b, bc], axis=1),
            np.stack([ca, bc, c], axis=1),
            np.stack([ab, bc, ca], axis=1),
        ],
        axis=1,
    )
    return pieces.reshape(-1, 3, 3)
