"""Covering spheres fitted to each link's collision surface, with the guarantee built in.

The fit works on the pieces of :mod:`spatialcontact.spheres.geometry`. Triangles longer than
the spheres are meant to be are split at their edges' midpoints (the pieces' union is the
triangle), the pieces are grouped around ``count`` centres (farthest-point seeds, then a few
rounds of k-means on the pieces' centroids and of min-max reassignment), and each group's
sphere is centred near the middle of its pieces' vertices with the radius reaching the farthest
of them, plus :data:`MARGIN`. Every piece is therefore inside its group's sphere: the union of
a link's spheres holds its whole collision surface. :func:`spatialcontact.spheres.coverage.prove`
checks this independently of how the spheres were made.

Cylinders are cut into slabs, each held by a sphere on the axis; sphere elements are kept as
they are (plus the margin).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validate import (
    MAX_COORDINATE,
    MAX_SIZE,
    MIN_SIZE,
    describe,
    finite_real,
    integer,
    numbers,
)
from ..errors import InvalidArgumentError, RobotModelError
from ..robot.urdf import RobotSpec
from .geometry import LinkSurface, link_surfaces, split_triangles

__all__ = ["MARGIN", "SphereModel", "fit_link", "fit_spec"]

MARGIN = 1e-9
"""Metres: a piece counts as inside a sphere when each of its vertices is at least this far
inside it. Fitted radii reach :data:`MARGIN` twice beyond the farthest vertex."""

_MAX_COUNT = 256
"""The most spheres fitted to one link."""

_SEARCH_ROUNDS = 6
"""Rounds of k-means, then of min-max reassignment, in a fit."""


def _array(value: Any, link: str, where: str) -> np.ndarray:
    try:  # refuses what numpy would convert silently: strings, booleans, complex numbers
        out = numbers(value, "spheres", type_error=RobotModelError, error=RobotModelError)
    except RobotModelError:
        raise RobotModelError(
            f"{where}: the spheres of link {link!r} must be numbers, got {describe(value)}"
        ) from None
    if out.ndim != 2 or out.shape[1] != 4:
        raise RobotModelError(
            f"{where}: the spheres of link {link!r} must be rows [x, y, z, radius], got an "
            f"array of shape {out.shape}"
        )
    if not np.isfinite(out).all():
        raise RobotModelError(f"{where}: the spheres of link {link!r} must be finite")
    if not (out[:, 3] > 0).all():
        bad = float(out[np.argmin(out[:, 3]), 3])
        raise RobotModelError(
            f"{where}: the spheres of link {link!r} must have radius > 0, got {bad!r}"
        )
    if not (np.abs(out) <= MAX_COORDINATE).all():
        bad = float(out.flat[np.argmax(np.abs(out))])
        raise RobotModelError(
            f"{where}: the spheres of link {link!r} must lie within ±{MAX_COORDINATE:g} m "
            f"(centres and radii), got {bad:g}"
        )
    out.flags.writeable = False
    return out


@dataclass(frozen=True)
class SphereModel:
    """Spheres standing for each link of a robot, in the links' frames.

    Make one with :meth:`RobotModel.spheres <spatialcontact.robot.RobotModel.spheres>` (fitted,
    covering) or :func:`spatialcontact.spheres.load_curobo` (read, no guarantee until
    :meth:`RobotModel.spheres_cover <spatialcontact.robot.RobotModel.spheres_cover>` proves it).

    Attributes
    ----------
    spheres : dict of str to ndarray, shape (k, 4), link frame
        Each link's spheres as rows ``[x, y, z, radius]`` (metres; given as any array-like,
        kept as read-only float arrays); links without spheres are not checked.
    self_collision_ignore : dict of str to tuple of str
        Link pairs left out of self-collision besides the robot's own (cuRobo's
        ``self_collision_ignore``; given as any sequences, kept as tuples).
    self_collision_buffer : dict of str to float
        Metres added to the radius of a link's spheres in self-collision only (cuRobo's
        ``self_collision_buffer``; negative shrinks them).
    source : str
        Where the spheres came from (``"fit"`` or a file).
    """

    spheres: Mapping[str, Any]
    self_collision_ignore: Mapping[str, Sequence[str]] = field(default_factory=dict)
    self_collision_buffer: Mapping[str, float] = field(default_factory=dict)
    source: str = "fit"

    def __post_init__(self) -> None:
        if not isinstance(self.spheres, Mapping):
            raise RobotModelError(
                f"{self.source}: spheres must map link names to spheres, got "
                f"{describe(self.spheres)}"
            )
        for name, given in (
            ("self_collision_ignore", self.self_collision_ignore),
            ("self_collision_buffer", self.self_collision_buffer),
        ):
            if not isinstance(given, Mapping):
                raise RobotModelError(
                    f"{self.source}: {name} must map link names to values, got {describe(given)}"
                )
        if not isinstance(self.source, str):
            raise RobotModelError(f"source must be a str, got {describe(self.source)}")
        checked = {}
        for link, rows in self.spheres.items():
            if not isinstance(link, str):
                raise RobotModelError(
                    f"{self.source}: link names must be str, got {describe(link)}"
                )
            checked[link] = _array(rows, link, self.source)
        ignore = {}
        for link, others in self.self_collision_ignore.items():
            if not isinstance(others, (list, tuple)) or not all(isinstance(o, str) for o in others):
                raise RobotModelError(
                    f"{self.source}: self_collision_ignore of link {link!r} must be a list of "
                    f"link names, got {describe(others)}"
                )
            ignore[str(link)] = tuple(others)
        buffer = {}
        for link, value in self.self_collision_buffer.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise RobotModelError(
                    f"{self.source}: self_collision_buffer of link {link!r} must be a number, "
                    f"got {describe(value)}"
                )
            if not math.isfinite(value):
                raise RobotModelError(
                    f"{self.source}: self_collision_buffer of link {link!r} must be finite, "
                    f"got {value!r}"
                )
            buffer[str(link)] = float(value)
        object.__setattr__(self, "spheres", checked)
        object.__setattr__(self, "self_collision_ignore", ignore)
        object.__setattr__(self, "self_collision_buffer", buffer)

    @property
    def count(self) -> int:
        """int: the number of spheres over all links."""
        return sum(len(rows) for rows in self.spheres.values())

    def ignored_pairs(self) -> set[frozenset[str]]:
        """set of frozenset of str: the link pairs :attr:`self_collision_ignore` names."""
        return {
            frozenset((a, b)) for a, others in self.self_collision_ignore.items() for b in others
        }

    def __repr__(self) -> str:
        return f"SphereModel({len(self.spheres)} links, {self.count} spheres, {self.source!r})"


def _reach(pieces: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Squared distance (n, k) from each centre to the farthest vertex of each piece."""
    vertices = pieces.reshape(-1, 3)
    # |v - c|^2 as |v|^2 - 2 v.c + |c|^2: one product instead of an (n, 3, k, 3) array.
    squared = (
        np.einsum("ij,ij->i", vertices, vertices)[:, None]
        - 2.0 * (vertices @ centres.T)
        + np.einsum("ij,ij->i", centres, centres)[None, :]
    )
    out: np.ndarray = squared.reshape(len(pieces), -1, len(centres)).max(axis=1)
    return out


def _balls(pieces: np.ndarray, assign: np.ndarray, k: int, rounds: int = 48) -> np.ndarray:
    """The sphere (rows ``[x, y, z, r]``) of each non-empty group of pieces: a centre near
    that of the smallest sphere holding the group's vertices (Bădoiu-Clarkson steps from the
    middle of their bounding box, all groups at once), and the radius reaching the farthest
    vertex from it."""
    order = np.argsort(assign, kind="stable")
    points = pieces[order].reshape(-1, 3)  # the vertices, group by group
    group = np.repeat(assign[order], pieces.shape[1])
    starts = np.unique(group, return_index=True)[1]
    c = 0.5 * (np.minimum.reduceat(points, starts) + np.maximum.reduceat(points, starts))
    size = np.diff(np.append(starts, len(points)))
    slot = np.repeat(np.arange(len(starts)), size)  # each vertex's group, 0..groups-1
    for i in range(rounds):
        diff = points - c[slot]
        d = np.einsum("ij,ij->i", diff, diff)
        top = np.maximum.reduceat(d, starts)
        # The first vertex of each group at its largest distance (as np.argmax picks it).
        hits = np.flatnonzero(d == top[slot])
        first = hits[np.unique(slot[hits], return_index=True)[1]]
        c = c + (points[first] - c) / (i + 2)
    diff = points - c[slot]
    radius = np.sqrt(np.maximum.reduceat(np.einsum("ij,ij->i", diff, diff), starts))
    out: np.ndarray = np.hstack([c, (radius + 2.0 * MARGIN)[:, None]])
    return out


def _volume(balls: np.ndarray) -> float:
    return float((balls[:, 3] ** 3).sum())


def _fit_triangles(triangles: np.ndarray, k: int, edge: float) -> np.ndarray:
    """At most ``k`` spheres holding every triangle, pieces no longer than ``edge``."""
    pieces = triangles
    while True:
        lengths = np.linalg.norm(pieces - np.roll(pieces, 1, axis=1), axis=2).max(axis=1)
        long = lengths > edge
        if not long.any():
            break
        pieces = np.concatenate([pieces[~long], split_triangles(pieces[long])])
    centroids = pieces.mean(axis=1)
    k = min(k, len(pieces))
    # Farthest-point seeds.
    first = int(np.argmax(np.linalg.norm(centroids - centroids.mean(axis=0), axis=1)))
    seeds = [first]
    d = np.linalg.norm(centroids - centroids[first], axis=1)
    for _ in range(k - 1):
        j = int(np.argmax(d))
        seeds.append(j)
        d = np.minimum(d, np.linalg.norm(centroids - centroids[j], axis=1))
    centres = centroids[seeds]
    best: np.ndarray | None = None
    for _ in range(_SEARCH_ROUNDS):  # k-means on the centroids
        diff = centroids[:, None] - centres[None]
        assign = np.argmin(np.einsum("nkj,nkj->nk", diff, diff), axis=1)
        centres = np.array(
            [centroids[assign == s].mean(axis=0) if (assign == s).any() else centres[s]
             for s in range(len(centres))]
        )  # fmt: skip
    for _ in range(_SEARCH_ROUNDS):  # min-max: each piece to the sphere it stretches least
        assign = np.argmin(_reach(pieces, centres), axis=1)
        balls = _balls(pieces, assign, len(centres))
        if best is None or _volume(balls) < _volume(best):
            best = balls
        centres = balls[:, :3]
    assert best is not None
    return best


def _fit_cylinder(T: np.ndarray, radius: float, length: float, slabs: int) -> np.ndarray:
    """One sphere per slab, each reaching 1% of a slab beyond its slab's ends (so that the
    proof's halved slabs across a boundary fit in one of the two spheres)."""
    h = length / slabs
    z = -0.5 * length + h * (np.arange(slabs) + 0.5)
    centres = z[:, None] * T[:3, 2] + T[:3, 3]
    r = math.hypot(radius, 0.51 * h) + 2.0 * MARGIN
    return np.hstack([centres, np.full((slabs, 1), r)])


def fit_link(
    surface: LinkSurface, count: int | None = None, max_radius: float | None = None
) -> np.ndarray:
    """Spheres (rows ``[x, y, z, r]``, link frame) whose union holds a link's surface.

    Parameters
    ----------
    surface : LinkSurface
    count : int, optional
        Spheres for the link's triangles (mesh and box surfaces); cylinders and sphere
        elements add their own.
    max_radius : float, optional
        Metres: the fewest spheres (up to 256) whose radii stay at or below this. Exactly one
        of ``count`` and ``max_radius`` is given.

    Returns
    -------
    ndarray, shape (k, 4)
    """
    parts = []
    if len(surface.triangles):
        points = surface.triangles.reshape(-1, 3)
        extent = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
        if count is not None:
            parts.append(_fit_triangles(surface.triangles, count, extent / (2 * math.sqrt(count))))
        else:
            assert max_radius is not None
            k = 1
            while True:
                balls = _fit_triangles(surface.triangles, k, max_radius)
                if balls[:, 3].max() <= max_radius or k >= _MAX_COUNT:
                    break
                k = min(_MAX_COUNT, max(k + 1, int(k * 1.25)))
            parts.append(balls)
    for T, (r, length) in zip(surface.cylinder_poses, surface.cylinder_sizes, strict=True):
        if count is not None:
            slabs = max(1, math.ceil(length / (2.0 * r)))
        else:
            assert max_radius is not None
            half_slab = math.sqrt(max(max_radius**2 - r * r, 0.0)) / 1.02
            slabs = _MAX_COUNT if half_slab == 0.0 else math.ceil(length / (2.0 * half_slab))
        parts.append(_fit_cylinder(T, r, length, min(slabs, _MAX_COUNT)))
    if len(surface.spheres):
        kept = surface.spheres.copy()
        kept[:, 3] += 2.0 * MARGIN
        parts.append(kept)
    return np.vstack(parts) if parts else np.zeros((0, 4))


def _sizes(
    links: list[str], count: Any, max_radius: Any
) -> tuple[dict[str, int] | None, float | None]:
    if (count is None) == (max_radius is None):
        raise InvalidArgumentError(
            f"give exactly one of count and max_radius, got count={describe(count)}, "
            f"max_radius={describe(max_radius)}"
        )
    if max_radius is not None:
        radius = finite_real(max_radius, "max_radius", error=InvalidArgumentError)
        if radius <= 0:
            raise InvalidArgumentError(
                f"max_radius must be a number of metres > 0, got {describe(max_radius)}"
            )
        if not MIN_SIZE <= radius <= MAX_SIZE:
            raise InvalidArgumentError(
                f"max_radius must lie in [{MIN_SIZE:g}, {MAX_SIZE:g}] m, got {describe(max_radius)}"
            )
        return None, radius
    by_link = isinstance(count, Mapping)
    given = count if by_link else dict.fromkeys(links, count)
    out = {}
    for link, k in given.items():
        if link not in links:
            raise InvalidArgumentError(
                f"count names {describe(link)}, which is not a link with collision geometry; "
                f"valid: {', '.join(map(repr, links))}"
            )
        what = f"an int in [1, {_MAX_COUNT}] (or a dict of them by link)"
        number = integer(k, f"count[{link!r}]" if by_link else "count", what)
        if not 1 <= number <= _MAX_COUNT:
            raise InvalidArgumentError(f"count must be {what}, got {describe(k)} for link {link!r}")
        out[link] = number
    for link in links:
        out.setdefault(link, 1)
    return out, None


def fit_spec(spec: RobotSpec, count: Any = None, max_radius: Any = None) -> SphereModel:
    """Fit covering spheres to every link of a robot description (see the module).

    Parameters
    ----------
    spec : RobotSpec
    count : int or dict of str to int, optional
        Spheres per link (links missing from a dict get 1).
    max_radius : float, optional
        Metres; the fewest spheres per link with radii at most this.

    Returns
    -------
    SphereModel

    Raises
    ------
    InvalidArgumentError
        Neither or both of ``count`` and ``max_radius``, a count outside [1, 256] or for an
        unknown link, or a ``max_radius`` outside [1e-5, 1e6] m.
    ShapeTypeError
        A count that is not an integer (a float or a bool, even a whole one), or a
        ``max_radius`` that is not a real number (a bool or a string, say).
    """
    surfaces = link_surfaces(spec)
    links = [link for link, s in surfaces.items() if not s.empty]
    counts, radius = _sizes(links, count, max_radius)
    spheres = {
        link: fit_link(surfaces[link], None if counts is None else counts[link], radius)
        for link in links
    }
    return SphereModel(spheres)
