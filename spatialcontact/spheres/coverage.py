"""The proof that a link's spheres hold its whole collision surface, and how far they overshoot.

:func:`prove` decides, for each piece of a link's surface (see
:mod:`spatialcontact.spheres.geometry`), whether one of the link's spheres holds it:

- a triangle is held by a sphere that holds its three vertices (a sphere is convex). A
  triangle that no single sphere holds, but each of whose vertices some sphere holds, is split
  at its edges' midpoints and its four pieces are tried in turn, down to
  :data:`MAX_DEPTH` splits. A vertex outside every sphere is a point of the surface that is not
  covered: the proof fails there;
- a cylinder is cut into slabs along its axis; a slab is held by a sphere when both of its rim
  circles are (the rim point farthest from the centre is in closed form), and a slab no sphere
  holds is halved, down to :data:`MAX_DEPTH` halvings;
- a sphere element is held by a sphere when its centre is within the difference of the radii.

Containment is tested with :data:`~spatialcontact.spheres.fit.MARGIN` to spare: each vertex is
at least 1e-9 m inside. The rounding of midpoints and distances in float64 is below 1e-13 m for
links within 100 m of their origin, so the margin makes the decision exact for the real
(unrounded) surface.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .fit import MARGIN, SphereModel
from .geometry import LinkSurface, split_triangles

__all__ = ["MAX_DEPTH", "CoverageReport", "LinkCoverage", "prove"]

MAX_DEPTH = 12
"""The most times a piece is split in two (slabs) or four (triangles) before the proof gives
up on it."""

_SAMPLES_PER_SPHERE = 400
"""Points on each sphere where the overshoot is measured."""

_VOLUME_SAMPLES = 200_000
"""Random points that estimate the volume of a link's union of spheres."""


@dataclass(frozen=True)
class LinkCoverage:
    """The proof for one link, and how loosely its spheres hold it.

    Attributes
    ----------
    link : str
    covered : bool
        True when every point of the link's collision surface is inside the union of its
        spheres (proved, see the module).
    spheres : int
        The link's spheres.
    uncovered : ndarray, shape (n, 3), link frame
        Points of the surface outside every sphere (triangle vertices, rim points or sphere
        elements' centres), at most 100; empty when covered.
    unproved : int
        Pieces left undecided after :data:`MAX_DEPTH` splits (covered is then False).
    overshoot : float
        Metres: the largest distance from a point of the union's boundary to the surface,
        measured at 400 points per sphere (a lower bound on the true largest distance).
    volume_ratio : float
        The union's volume (estimated from 200,000 random points, about 1% off) over the
        volume the surface encloses (``inf`` for a surface that encloses none).
    """

    link: str
    covered: bool
    spheres: int
    uncovered: np.ndarray
    unproved: int
    overshoot: float
    volume_ratio: float


@dataclass(frozen=True)
class CoverageReport:
    """The coverage of every link of a robot: :meth:`RobotModel.spheres_cover
    <spatialcontact.robot.RobotModel.spheres_cover>`.

    Attributes
    ----------
    links : dict of str to LinkCoverage
        By link, for every link with collision geometry.
    """

    links: dict[str, LinkCoverage]

    @property
    def covered(self) -> bool:
        """bool: every link's surface is inside its spheres."""
        return all(c.covered for c in self.links.values())

    @property
    def overshoot(self) -> float:
        """float: metres, the largest overshoot over the links that have spheres (NaN
        when none was measured)."""
        measured = [c.overshoot for c in self.links.values() if not math.isnan(c.overshoot)]
        return max(measured, default=math.nan)

    def table(self) -> str:
        """The report as a Markdown table, one row per link."""
        lines = [
            "| link | spheres | covered | overshoot (mm) | volume ratio |",
            "|---|---:|---|---:|---:|",
        ]
        for c in self.links.values():
            lines.append(
                f"| {c.link} | {c.spheres} | {'yes' if c.covered else 'NO'} | "
                f"{1000 * c.overshoot:.1f} | {c.volume_ratio:.2f} |"
            )
        return "\n".join(lines)


def _inside(points: np.ndarray, spheres: np.ndarray) -> np.ndarray:
    """Whether each point (..., 3) is at least MARGIN inside each sphere: (..., k)."""
    diff = points[..., None, :] - spheres[:, :3]
    d2 = np.einsum("...kj,...kj->...k", diff, diff)
    limit = np.maximum(spheres[:, 3] - MARGIN, 0.0)
    out: np.ndarray = d2 <= limit * limit
    return out


def _triangles(triangles: np.ndarray, spheres: np.ndarray) -> tuple[list[np.ndarray], int]:
    """The uncovered vertices and the number of unproved pieces of ``triangles``."""
    uncovered: list[np.ndarray] = []
    pieces = triangles
    for depth in range(MAX_DEPTH + 1):
        if not len(pieces):
            return uncovered, 0
        inside = _inside(pieces, spheres)  # (n, 3, k)
        held = np.any(np.all(inside, axis=1), axis=1)
        lost = ~np.any(inside, axis=2)  # (n, 3): vertices outside every sphere
        bad = lost.any(axis=1)
        if bad.any():
            uncovered.append(pieces[lost])
        rest = pieces[~held & ~bad]
        if depth == MAX_DEPTH:
            return uncovered, len(rest)
        pieces = split_triangles(rest)
    return uncovered, 0  # pragma: no cover - the loop returns


def _slab_reach(centres: np.ndarray, radius: float, z0: np.ndarray, z1: np.ndarray) -> np.ndarray:
    """Squared distance (n, k) from each sphere centre (k, 3, cylinder frame) to the farthest
    point of each slab [z0, z1] (n,) of a cylinder of ``radius``."""
    rho = np.hypot(centres[:, 0], centres[:, 1]) + radius
    dz = np.maximum(np.abs(z0[:, None] - centres[:, 2]), np.abs(z1[:, None] - centres[:, 2]))
    out: np.ndarray = rho * rho + dz * dz
    return out


def _cylinder(
    T: np.ndarray, radius: float, length: float, spheres: np.ndarray
) -> tuple[list[np.ndarray], int]:
    local = (spheres[:, :3] - T[:3, 3]) @ T[:3, :3]
    limit = np.maximum(spheres[:, 3] - MARGIN, 0.0) ** 2
    z0, z1 = np.array([-0.5 * length]), np.array([0.5 * length])
    for depth in range(MAX_DEPTH + 1):
        if not len(z0):
            return [], 0
        held = (_slab_reach(local, radius, z0, z1) <= limit).any(axis=1)
        z0, z1 = z0[~held], z1[~held]
        if depth == MAX_DEPTH or not len(z0):
            break
        mid = 0.5 * (z0 + z1)
        z0, z1 = np.concatenate([z0, mid]), np.concatenate([mid, z1])
    if not len(z0):
        return [], 0
    # A rim point of an unproved slab outside every sphere, if one is found, is uncovered.
    angles = np.linspace(0.0, 2.0 * math.pi, 64, endpoint=False)
    rim = np.stack([radius * np.cos(angles), radius * np.sin(angles)], axis=1)
    found = []
    for z in np.concatenate([z0, z1]):
        points = np.hstack([rim, np.full((len(rim), 1), z)]) @ T[:3, :3].T + T[:3, 3]
        found.append(points[~_inside(points, spheres).any(axis=1)])
    return found, len(z0)


def _point_triangle_distance(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Distance (n,) from each point (n, 3) to the nearest of ``triangles`` (T, 3, 3)
    (the closest point of each triangle, after Ericson's *Real-Time Collision Detection*)."""
    a, b, c = (triangles[None, :, i] for i in range(3))
    p = points[:, None]
    ab, ac, ap = b - a, c - a, p - a

    def dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.einsum("...j,...j->...", x, y)

    d1, d2 = dot(ab, ap), dot(ac, ap)
    bp = p - b
    d3, d4 = dot(ab, bp), dot(ac, bp)
    cp = p - c
    d5, d6 = dot(ab, cp), dot(ac, cp)
    va = d3 * d6 - d5 * d4
    vb = d5 * d2 - d1 * d6
    vc = d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = va + vb + vc
        v = np.where(denom != 0, vb / denom, 0.0)
        w = np.where(denom != 0, vc / denom, 0.0)
        closest = a + ab * v[..., None] + ac * w[..., None]  # inside the face
        t_ab = np.clip(d1 / np.where(d1 - d3 != 0, d1 - d3, 1.0), 0, 1)
        t_ac = np.clip(d2 / np.where(d2 - d6 != 0, d2 - d6, 1.0), 0, 1)
        t_bc = np.clip(
            (d4 - d3) / np.where((d4 - d3) + (d5 - d6) != 0, (d4 - d3) + (d5 - d6), 1.0), 0, 1
        )
    edges = [
        a + ab * t_ab[..., None],
        a + ac * t_ac[..., None],
        b + (c - b) * t_bc[..., None],
    ]
    outside = (va <= 0) | (vb <= 0) | (vc <= 0)
    best = np.where(outside, np.inf, np.linalg.norm(p - closest, axis=-1))
    for e in edges:
        best = np.minimum(best, np.linalg.norm(p - e, axis=-1))
    out: np.ndarray = best.min(axis=1)
    return out


def _sphere_points(n: int) -> np.ndarray:
    """``n`` points spread evenly over the unit sphere (a Fibonacci lattice)."""
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    phi = math.pi * (3.0 - math.sqrt(5.0)) * i
    r = np.sqrt(1.0 - z * z)
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _surface_distance(points: np.ndarray, surface: LinkSurface) -> np.ndarray:
    """Distance from each point to the link's surface."""
    best = np.full(len(points), np.inf)
    if len(surface.triangles):
        for start in range(0, len(points), 256):
            chunk = slice(start, start + 256)
            best[chunk] = _point_triangle_distance(points[chunk], surface.triangles)
    for T, (r, length) in zip(surface.cylinder_poses, surface.cylinder_sizes, strict=True):
        local = (points - T[:3, 3]) @ T[:3, :3]
        rho = np.hypot(local[:, 0], local[:, 1])
        dz = np.abs(local[:, 2]) - 0.5 * length
        side = np.hypot(rho - r, np.maximum(dz, 0.0))
        cap = np.hypot(np.maximum(rho - r, 0.0), dz)
        best = np.minimum(best, np.where(dz > 0, cap, np.minimum(side, np.abs(dz))))
    for x, y, z, r in surface.spheres:
        best = np.minimum(best, np.abs(np.linalg.norm(points - [x, y, z], axis=1) - r))
    return best


def _overshoot(surface: LinkSurface, spheres: np.ndarray) -> float:
    unit = _sphere_points(_SAMPLES_PER_SPHERE)
    found = 0.0
    for s, (x, y, z, r) in enumerate(spheres):
        points = np.array([x, y, z]) + r * unit
        others = np.delete(spheres, s, axis=0)
        if len(others):
            diff = points[:, None] - others[:, :3]
            inside = (np.einsum("nkj,nkj->nk", diff, diff) < others[:, 3] ** 2).any(axis=1)
            points = points[~inside]
        if len(points):
            found = max(found, float(_surface_distance(points, surface).max()))
    return found


def _union_volume(spheres: np.ndarray, rng: np.random.Generator) -> float:
    low = (spheres[:, :3] - spheres[:, 3:]).min(axis=0)
    high = (spheres[:, :3] + spheres[:, 3:]).max(axis=0)
    hits = 0
    for _ in range(_VOLUME_SAMPLES // 20_000):
        points = rng.uniform(low, high, size=(20_000, 3))
        diff = points[:, None] - spheres[:, :3]
        hits += int((np.einsum("nkj,nkj->nk", diff, diff) <= spheres[:, 3] ** 2).any(axis=1).sum())
    return float(np.prod(high - low)) * hits / _VOLUME_SAMPLES


def prove_link(surface: LinkSurface, spheres: np.ndarray, measure: bool = True) -> LinkCoverage:
    """The coverage of one link's surface by its spheres (see the module).

    Parameters
    ----------
    surface : LinkSurface
    spheres : ndarray, shape (k, 4), link frame
        Rows ``[x, y, z, radius]``.
    measure : bool
        Also measure the overshoot and the volume ratio (else they are NaN).

    Returns
    -------
    LinkCoverage
    """
    spheres = np.asarray(spheres, dtype=float).reshape(-1, 4)
    uncovered, unproved = [], 0
    if len(spheres):
        lost, left = _triangles(surface.triangles, spheres)
        uncovered += lost
        unproved += left
        for T, (r, length) in zip(surface.cylinder_poses, surface.cylinder_sizes, strict=True):
            lost, left = _cylinder(T, r, length, spheres)
            uncovered += lost
            unproved += left
        for x, y, z, r in surface.spheres:
            gap = np.linalg.norm(spheres[:, :3] - [x, y, z], axis=1) + r + MARGIN
            if not (gap <= spheres[:, 3]).any():
                uncovered.append(np.array([[x, y, z]]))
    else:
        uncovered.append(surface.points()[:1])
    points = np.unique(np.vstack(uncovered), axis=0)[:100] if uncovered else np.zeros((0, 3))
    points.flags.writeable = False
    overshoot = ratio = math.nan
    if measure and len(spheres):
        overshoot = _overshoot(surface, spheres)
        volume = _union_volume(spheres, np.random.default_rng(0))
        ratio = volume / surface.volume if surface.volume > 0 else math.inf
    return LinkCoverage(
        link=surface.link,
        covered=not len(points) and unproved == 0,
        spheres=len(spheres),
        uncovered=points,
        unproved=unproved,
        overshoot=overshoot,
        volume_ratio=ratio,
    )


def prove(
    surfaces: dict[str, LinkSurface], model: SphereModel, measure: bool = True
) -> CoverageReport:
    """The coverage of every link with collision geometry by the model's spheres.

    A link the model has no spheres for is not covered.
    """
    links = {
        link: prove_link(surface, model.spheres.get(link, np.zeros((0, 4))), measure)
        for link, surface in surfaces.items()
        if not surface.empty
    }
    return CoverageReport(links)
