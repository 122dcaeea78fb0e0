"""Pictures of shapes, groups, robots, scenes and contacts.

:func:`plot` draws the geometry itself (every leaf as triangles, in the world frame) on
matplotlib 3D axes, with contact points and normals scaled by depth or force;
:func:`plot_contacts` draws contacts alone. :func:`to_trimesh_scene` exports the same drawing to
a ``trimesh.Scene``, which writes GLB, OBJ, PLY, ... files for any 3D viewer. :func:`triangles`
gives the triangles themselves.

matplotlib is an optional extra (``pip install "spatialcontact[plot]"``), imported only when
drawing; ``import spatialcontact`` never loads this module.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> from spatialcontact import Cuboid, Sphere
>>> from spatialcontact.plot import plot
>>> table = Cuboid([1.0, 1.0, 0.1], pose=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, -0.05],
...                                     [0, 0, 0, 1]])
>>> ball = Sphere(0.1, pose=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.08], [0, 0, 0, 1]])
>>> ax = plot(table, ball, contacts=ball.contacts(table))
>>> ax.figure.savefig("ball_on_table.png")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ._validate import describe, finite_real, flag, numbers, positive_real, size
from .color import DEFAULT_COLOR, parse_color
from .contact import Contacts
from .errors import InvalidArgumentError, ShapeTypeError
from .group import CollisionShapeGroup
from .mesh import ConvexHull, Mesh, OcTree
from .robot import RobotModel
from .scene import Scene
from .sensors._errors import PlottingUnavailableError
from .shapes import (
    Capsule,
    CollisionShape,
    Cone,
    Cuboid,
    Cylinder,
    Ellipsoid,
    HalfSpace,
    Sphere,
)

if TYPE_CHECKING:
    import trimesh

__all__ = ["plot", "plot_contacts", "to_trimesh_scene", "triangles"]

_HIGHLIGHT = (0.95, 0.3, 0.15, 1.0)
"""Colour of highlighted leaves (orange-red)."""
_CONTACT_COLOR = (1.0, 0.8, 0.0, 1.0)
"""Contact dots and normal lines (gold; the dots get a black rim)."""
_PALETTE = (
    (0.12, 0.47, 0.71, 1.0),
    (0.55, 0.55, 0.55, 1.0),
    (0.17, 0.63, 0.17, 1.0),
    (0.58, 0.40, 0.74, 1.0),
    (0.55, 0.34, 0.29, 1.0),
    (0.09, 0.75, 0.81, 1.0),
    (0.74, 0.74, 0.13, 1.0),
)
"""Colours of the objects passed (by position) whose shapes keep the default grey."""
_BOUNDS = "_spatialcontact_bounds"
"""Attribute of the axes keeping what :func:`plot` drew there: (low (3,), high (3,))."""
_SECTIONS = 24
"""Segments around a cylinder, capsule or cone: enough to look round, few enough to draw."""
_SUBDIVISIONS = 2
"""Icosphere subdivisions for spheres and ellipsoids (320 triangles)."""


class _Patch(NamedTuple):
    """Where the square drawn for a half-space goes: near ``centre`` (world), ``side`` wide."""

    centre: np.ndarray
    side: float


_NO_PATCH = _Patch(np.zeros(3), 2.0)


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise PlottingUnavailableError(
            "plotting needs matplotlib, which is not installed; install it with "
            '`pip install "spatialcontact[plot]"` (or `pip install matplotlib`)'
        ) from exc


# ------------------------------------------------------------------------ triangles


def _box(extent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import trimesh

    box = trimesh.creation.box(extents=extent)
    return np.asarray(box.vertices), np.asarray(box.faces)


def _local_mesh(leaf: CollisionShape, patch: _Patch) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (n, 3) in the leaf's frame and faces (m, 3) that draw it.

    ``patch`` places what has no size of its own: the square drawn for a half-space.
    """
    import trimesh

    made: Any
    if isinstance(leaf, Mesh):
        return np.asarray(leaf.vertices), np.asarray(leaf.faces)
    if isinstance(leaf, Sphere):
        made = trimesh.creation.icosphere(subdivisions=_SUBDIVISIONS, radius=leaf.radius)
    elif isinstance(leaf, Ellipsoid):
        made = trimesh.creation.icosphere(subdivisions=_SUBDIVISIONS)
        return np.asarray(made.vertices) * leaf.radii, np.asarray(made.faces)
    elif isinstance(leaf, Cuboid):
        return _box(np.asarray(leaf.scale))
    elif isinstance(leaf, Cylinder):
        made = trimesh.creation.cylinder(leaf.radius, leaf.length, sections=_SECTIONS)
    elif isinstance(leaf, Capsule):
        made = trimesh.creation.capsule(leaf.length, leaf.radius, count=[_SECTIONS, _SECTIONS])
    elif isinstance(leaf, Cone):
        made = trimesh.creation.cone(leaf.radius, leaf.length, sections=_SECTIONS)
        return np.asarray(made.vertices) - [0.0, 0.0, leaf.length / 2], np.asarray(made.faces)
    elif isinstance(leaf, ConvexHull):
        return _hull(leaf)
    elif isinstance(leaf, OcTree):
        return _cells(leaf.cells)
    elif isinstance(leaf, HalfSpace):
        return _plane_patch(leaf, patch)
    else:
        raise ShapeTypeError(f"cannot draw {describe(leaf)}: not a shape spatialcontact draws")
    return np.asarray(made.vertices), np.asarray(made.faces)


def _hull(hull: ConvexHull) -> tuple[np.ndarray, np.ndarray]:
    import coal

    vectors = coal.StdVec_Vec3s()
    vectors.extend(list(hull.points))
    convex = coal.Convex.convexHull(vectors, True, "")
    vertices = np.array(convex.points(), dtype=float)  # the hull's own points, (k, 3)
    faces = []
    for k in range(convex.num_polygons):
        triangle = convex.polygons(k)
        faces.append([triangle[0], triangle[1], triangle[2]])
    return vertices, np.array(faces, dtype=np.int64)


def _cells(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    unit_v, unit_f = _box(np.ones(3))
    n = len(cells)
    vertices = unit_v[None, :, :] * cells[:, None, 3:4] + cells[:, None, :3]
    faces = unit_f[None, :, :] + (np.arange(n) * len(unit_v))[:, None, None]
    return vertices.reshape(-1, 3), faces.reshape(-1, 3)


def _plane_patch(half: HalfSpace, patch: _Patch) -> tuple[np.ndarray, np.ndarray]:
    """A square of side ``patch.side`` on the boundary plane, centred on the point of the
    plane nearest to ``patch.centre`` (in the shape's frame)."""
    n = np.asarray(half.normal)
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    v = np.cross(n, u)
    T = np.asarray(half.world_T)
    near = (patch.centre - T[:3, 3]) @ T[:3, :3]  # the centre in the half-space's frame
    centre = near - (near @ n - half.offset) * n
    h = patch.side / 2
    vertices = np.array(
        [centre + h * (su * u + sv * v) for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    )
    return vertices, np.array([[0, 1, 2], [0, 2, 3]])


def _leaves_of(item: Any, name: str) -> list[CollisionShape]:
    if isinstance(item, RobotModel):
        return item.group.leaves()
    if isinstance(item, Scene):
        out: list[CollisionShape] = []
        for key in item.names:
            out += _leaves_of(item[key], name)
        return out
    if isinstance(item, CollisionShapeGroup):
        return item.leaves()
    if isinstance(item, CollisionShape):
        return [item]
    raise ShapeTypeError(
        f"{name} must be a spatialcontact shape, group, Scene or RobotModel, got {describe(item)}"
    )


def _colored_leaves(
    objects: Sequence[Any], fill: tuple[float, float, float, float] | None = None
) -> tuple[list[CollisionShape], list[tuple[float, float, float, float]]]:
    """The leaves of ``objects`` and the colour each is drawn in: its own, or for a leaf left
    in the default grey, the palette's colour of the object it came from (each object of a
    scene counts as one)."""
    leaves: list[CollisionShape] = []
    colors: list[tuple[float, float, float, float]] = []
    flat = [
        (i, part)
        for i, item in enumerate(objects)
        for part in ([item[name] for name in item.names] if isinstance(item, Scene) else [item])
    ]
    for k, (i, item) in enumerate(flat):
        for leaf in _leaves_of(item, f"objects[{i}]"):
            leaves.append(leaf)
            own = leaf.color
            if own == DEFAULT_COLOR:
                own = _PALETTE[k % len(_PALETTE)] if fill is None else fill
            colors.append(own)
    return leaves, colors


def _world(vertices: np.ndarray, T: np.ndarray) -> np.ndarray:
    return vertices @ T[:3, :3].T + T[:3, 3]


def _span(leaves: Sequence[CollisionShape], extra: np.ndarray) -> _Patch | None:
    """Centre and size of what the leaves other than half-spaces (and ``extra`` points)
    cover; None when that is nothing."""
    corners = [extra.reshape(-1, 3)]
    for leaf in leaves:
        if not isinstance(leaf, HalfSpace):
            v, _ = _local_mesh(leaf, _NO_PATCH)
            corners.append(_world(v, leaf.world_T))
    points = np.concatenate(corners)
    if len(points) == 0:
        return None
    low, high = points.min(axis=0), points.max(axis=0)
    return _Patch((low + high) / 2, max(float((high - low).max()), 0.1))


def _size(leaves: Sequence[CollisionShape], extra: np.ndarray) -> float:
    """The size of the drawing (1 m when there is nothing with a size)."""
    found = _span(leaves, extra)
    return 1.0 if found is None else found.side


def _patch(leaves: Sequence[CollisionShape], extra: np.ndarray, given: Any) -> _Patch:
    """Where the squares of half-spaces go: around the rest, 1.5 times its size, or of the
    side ``given`` (2 m when there is nothing else)."""
    # Checked even without a half-space, so that a bad value never waits for one to show up;
    # bounded like a shape's size: a square 1e308 wide has infinite corners.
    side = None if given is None else size(given, "halfspace_size", error=InvalidArgumentError)
    if not any(isinstance(leaf, HalfSpace) for leaf in leaves):
        return _NO_PATCH
    found = _span(leaves, extra)
    if found is None:
        return _Patch(np.zeros(3), 2.0 if side is None else side)
    return _Patch(found.centre, 1.5 * found.side if side is None else side)


def triangles(*objects: Any, halfspace_size: float | None = None) -> np.ndarray:
    """The triangles that draw ``objects``, in the world frame.

    Parameters
    ----------
    *objects : CollisionShape, CollisionShapeGroup, Scene or RobotModel
        What to draw: every leaf at its current world pose (a robot as last placed by
        ``robot.set_q``). Spheres, cylinders, capsules, cones and ellipsoids are tessellated
        (320 triangles, 24 segments around); meshes are their own triangles; an octree is its
        cells' boxes; a half-space is a square on its boundary plane, centred next to the
        other objects.
    halfspace_size : float, optional
        Side of a half-space's square in metres, within [1e-5, 1e6] (the sizes shapes take); by
        default 1.5 times the extent of the other objects (2 m when there are none).

    Returns
    -------
    ndarray, shape (n, 3, 3), world frame
        ``out[i, j]`` is vertex ``j`` of triangle ``i``.

    Examples
    --------
    >>> from spatialcontact import Cuboid
    >>> triangles(Cuboid([1.0, 2.0, 3.0])).shape  # 6 faces, 2 triangles each
    (12, 3, 3)
    """
    leaves = [leaf for i, item in enumerate(objects) for leaf in _leaves_of(item, f"objects[{i}]")]
    parts = _leaf_triangles(leaves, halfspace_size, np.zeros((0, 3)))
    if not parts:
        return np.zeros((0, 3, 3))
    return np.concatenate([tri for _, tri in parts])


def _leaf_triangles(
    leaves: Sequence[CollisionShape], halfspace_size: float | None, extra: np.ndarray
) -> list[tuple[CollisionShape, np.ndarray]]:
    patch = _patch(leaves, extra, halfspace_size)
    out = []
    for leaf in leaves:
        v, f = _local_mesh(leaf, patch)
        out.append((leaf, _world(v, leaf.world_T)[f]))
    return out


# ------------------------------------------------------------------------ contacts


def _positions(contacts: Any) -> np.ndarray:
    """The contact positions (n, 3), world frame, of ``contacts`` checked to be Contacts."""
    if not isinstance(contacts, Contacts):
        raise ShapeTypeError(f"contacts must be a Contacts, got {describe(contacts)}")
    return contacts.pos.reshape(len(contacts), 3)


def _contact_vectors(
    contacts: Contacts, forces: Any, scale: float | None, size: float
) -> tuple[np.ndarray, np.ndarray]:
    """Contact positions (n, 3) and the arrows drawn from them (n, 3), world frame."""
    pos = _positions(contacts)
    n = len(contacts)
    normal = contacts.normal.reshape(n, 3)
    if forces is None:
        vectors = normal * np.abs(contacts.penetration_depth).reshape(n, 1)
    else:
        array = numbers(
            forces,
            "forces",
            f"an array of shape ({n},) or ({n}, 3) of real numbers",
            error=InvalidArgumentError,
        )
        if array.shape not in ((n,), (n, 3)):
            raise InvalidArgumentError(
                f"forces must have shape ({n},) or ({n}, 3) for {n} contacts, got shape "
                f"{array.shape}"
            )
        if not np.isfinite(array).all():  # before multiplying: inf times a 0 component is NaN
            raise InvalidArgumentError(f"forces must be finite, got {describe(forces)}")
        vectors = normal * array[:, None] if array.ndim == 1 else array
    peak = float(np.abs(vectors).max()) if n else 0.0
    if scale is None:
        if peak == 0.0:
            return pos, vectors
        # Divided by the peak first: the norms of forces near 1e308 (or 1e-320) would overflow.
        unit = vectors / peak
        return pos, unit * (0.15 * size / float(np.linalg.norm(unit, axis=1).max()))
    with np.errstate(over="ignore"):
        lines = vectors * _scale(scale)
    if not np.isfinite(lines).all():
        raise InvalidArgumentError(
            f"scale is too large for these {'forces' if forces is not None else 'depths'}: "
            f"the lines would be infinitely long, got {describe(scale)} (largest value {peak:g})"
        )
    return pos, lines


def _scale(scale: Any) -> float:
    # Zero would hide every line and a negative scale draws them backwards.
    return positive_real(scale, "scale", error=InvalidArgumentError)


def _contact_options(contacts: Contacts | None, forces: Any, scale: Any) -> float | None:
    """``scale`` checked (None stays None); forces without contacts are refused."""
    if contacts is None and forces is not None:
        raise InvalidArgumentError(
            f"forces are drawn at contacts, and contacts is None: pass contacts too, or no "
            f"forces (got forces={describe(forces)})"
        )
    return None if scale is None else _scale(scale)


def _contact_color(color: Any) -> Any:
    """``color`` if matplotlib can draw in it; bools, NaN and non-numbers are refused."""
    from matplotlib.colors import is_color_like

    what = "a matplotlib colour (a name, a hex string or 3-4 numbers in [0, 1])"
    if isinstance(color, str):
        if is_color_like(color):
            return color
    else:
        rgba = numbers(color, "color", what, error=InvalidArgumentError)
        if is_color_like(rgba) and np.isfinite(rgba).all():
            return tuple(rgba.tolist())
    raise InvalidArgumentError(f"color must be {what}, got {describe(color)}")


def plot_contacts(
    contacts: Contacts,
    ax: Any = None,
    *,
    forces: Any = None,
    scale: float | None = None,
    color: Any = _CONTACT_COLOR,
) -> Any:
    """Draw contact points and their normals on 3D axes.

    Each contact is a dot at ``pos``; a line leaves it along ``normal`` (from ``o1`` to
    ``o2``), ``|penetration_depth| * scale`` long, or ``force * scale`` when ``forces`` is given.

    Parameters
    ----------
    contacts : Contacts
        World-frame contacts, as a query returns them.
    ax : matplotlib Axes3D, optional
        Where to draw; a new figure's 3D axes by default.
    forces : array_like, shape (n,) or (n, 3), optional
        Force magnitudes along each normal (N), or force vectors (N, world frame).
    scale : float, optional
        Metres of line per metre of depth (or per newton), positive; by default the longest
        line is 15% of the drawing's size.
    color : matplotlib colour
        Of the dots and lines: a name, a hex string or 3-4 numbers in [0, 1].

    Returns
    -------
    matplotlib Axes3D
        The axes drawn on.

    Raises
    ------
    ShapeTypeError
        For contacts that are not a :class:`Contacts`, or forces or a colour that are not
        numbers (strings, booleans, complex numbers, masked arrays, ...).
    InvalidArgumentError
        For forces of the wrong shape or not finite, a scale that is not positive and finite, or
        a colour matplotlib does not know.
    """
    _require_matplotlib()
    color = _contact_color(color)
    pos, vectors = _contact_vectors(contacts, forces, scale, _size([], _positions(contacts)))
    ax = _axes(ax)  # after the checks: a refused call opens no figure
    _draw_contacts(ax, pos, vectors, color)
    _fit(ax, pos)
    return ax


def _draw_contacts(ax: Any, pos: np.ndarray, vectors: np.ndarray, color: Any) -> None:
    from mpl_toolkits.mplot3d.art3d import Line3DCollection

    if len(pos) == 0:
        return
    ax.scatter(*pos.T, s=40, color=color, edgecolors="black", depthshade=False, zorder=10)
    segments = np.stack([pos, pos + vectors], axis=1)
    ax.add_collection3d(Line3DCollection(segments, colors=color, linewidths=2.5, zorder=10))


# ------------------------------------------------------------------------ matplotlib


def _axes(ax: Any) -> Any:
    if ax is None:
        import matplotlib.pyplot as plt

        figure = plt.figure(figsize=(7, 6))
        return figure.add_subplot(projection="3d")
    if getattr(ax, "name", "") != "3d":
        raise ShapeTypeError(f"ax must be matplotlib 3D axes (projection='3d'), got {describe(ax)}")
    return ax


def _fit(ax: Any, points: np.ndarray) -> None:
    """Limits covering ``points`` and what earlier calls drew on ``ax``, equal scales."""
    if len(points) == 0:
        return
    low, high = points.min(axis=0), points.max(axis=0)
    earlier = getattr(ax, _BOUNDS, None)
    if earlier is not None:
        low, high = np.minimum(low, earlier[0]), np.maximum(high, earlier[1])
    setattr(ax, _BOUNDS, (low, high))
    pad = 0.03 * max(float((high - low).max()), 1e-3)
    low, high = low - pad, high + pad
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])
    ax.set_zlim(low[2], high[2])
    ax.set_box_aspect(tuple((high - low).tolist()))
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")


def plot(
    *objects: Any,
    ax: Any = None,
    contacts: Contacts | None = None,
    forces: Any = None,
    scale: float | None = None,
    highlight: Any = (),
    color: Any = None,
    alpha: float = 0.5,
    edges: bool = False,
    halfspace_size: float | None = None,
) -> Any:
    """Draw shapes, groups, scenes and robots, and optionally contacts, on 3D axes.

    Each leaf is drawn in its own colour (``shape.color``) at its world pose; a robot is drawn
    as last placed (``robot.set_q(q)``). The axes get equal scales and limits covering
    everything drawn, including what earlier calls drew on the same axes (draw a scene
    faintly, then a robot over it, with two calls).

    Parameters
    ----------
    *objects : CollisionShape, CollisionShapeGroup, Scene or RobotModel
        What to draw (see :func:`triangles`).
    ax : matplotlib Axes3D, optional
        Where to draw; a new figure's 3D axes by default.
    contacts : Contacts, optional
        Drawn with :func:`plot_contacts` (``forces`` and ``scale`` as there).
    forces : array_like, shape (n,) or (n, 3), optional
        Only with ``contacts``.
    scale : float, optional
    highlight : CollisionShape, CollisionShapeGroup, Scene, RobotModel, or an iterable of them
        What to draw in orange-red (the leaves of a group, scene or robot), e.g. the links in
        collision; one object counts as a one-element iterable, ``None`` as an empty one.
    color : colour, optional
        For the leaves left in the default grey (a name, hex string or RGB(A) tuple, as
        shapes take it); by default each object passed gets a colour of its own.
    alpha : float
        Opacity of the surfaces, in [0, 1].
    edges : bool
        Draw the triangles' edges too.
    halfspace_size : float, optional
        Side of the square drawn for a half-space (see :func:`triangles`).

    Returns
    -------
    matplotlib Axes3D
        The axes drawn on (``ax.figure.savefig(path)`` writes the picture).

    Raises
    ------
    ShapeTypeError
        For what is not a shape, group, scene or robot (among ``objects`` or in ``highlight``),
        ``edges`` that is not a bool, or values of the wrong type (see :func:`plot_contacts`).
    InvalidArgumentError
        For ``alpha`` outside [0, 1], ``halfspace_size`` outside [1e-5, 1e6], ``forces`` without
        ``contacts``, and the bad contact arguments :func:`plot_contacts` refuses.
    """
    _require_matplotlib()
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    opacity = finite_real(alpha, "alpha", error=InvalidArgumentError)
    if not 0.0 <= opacity <= 1.0:
        raise InvalidArgumentError(f"alpha must be in [0, 1], got {describe(alpha)}")
    outlined = flag(edges, "edges")
    scale = _contact_options(contacts, forces, scale)
    leaves, colors = _colored_leaves(objects, None if color is None else parse_color(color))
    marked = _highlighted(highlight)
    pos = np.zeros((0, 3)) if contacts is None else _positions(contacts)
    parts = _leaf_triangles(leaves, halfspace_size, pos)
    points = np.concatenate(
        [pos] + [tri.reshape(-1, 3) for leaf, tri in parts if not isinstance(leaf, HalfSpace)]
    )
    if contacts is not None:
        pos, vectors = _contact_vectors(contacts, forces, scale, _size([], points))
        points = np.concatenate([points, pos + vectors])
    if len(points) == 0:  # only half-spaces: fit their squares
        points = np.concatenate([tri.reshape(-1, 3) for _, tri in parts] or [np.zeros((1, 3))])
    ax = _axes(ax)  # after the checks: a refused call opens no figure and draws nothing
    for (leaf, tri), own in zip(parts, colors, strict=True):
        rgba = _HIGHLIGHT if id(leaf) in marked else own
        face = (*rgba[:3], opacity * rgba[3])
        edge = (0.2, 0.2, 0.2, 0.4) if outlined else face
        surface = Poly3DCollection(
            tri, facecolors=face, edgecolors=edge, linewidths=0.3 if outlined else 0.0, shade=True
        )  # shaded by a light from the upper left, so that round shapes look round
        ax.add_collection3d(surface)
    if contacts is not None:
        _draw_contacts(ax, pos, vectors, _CONTACT_COLOR)
    _fit(ax, points)
    return ax


def _highlighted(highlight: Any) -> set[int]:
    """The ids of the leaves ``highlight`` means: of one object, or of each in an iterable."""
    if highlight is None:
        return set()
    if isinstance(highlight, (CollisionShape, CollisionShapeGroup, Scene, RobotModel)):
        items = [highlight]  # a group or scene is iterable, but is meant whole
    elif isinstance(highlight, Iterable) and not isinstance(highlight, (str, bytes)):
        items = list(highlight)
    else:
        raise ShapeTypeError(
            "highlight must be a spatialcontact shape, group, Scene or RobotModel, an iterable "
            f"of them, or None, got {describe(highlight)}"
        )
    return {
        id(leaf) for i, item in enumerate(items) for leaf in _leaves_of(item, f"highlight[{i}]")
    }


# ------------------------------------------------------------------------ trimesh


def to_trimesh_scene(
    *objects: Any,
    contacts: Contacts | None = None,
    forces: Any = None,
    scale: float | None = None,
    halfspace_size: float | None = None,
) -> trimesh.Scene:
    """The drawing of :func:`plot` as a ``trimesh.Scene``, for GLB, OBJ, PLY, ... files.

    Every leaf becomes a mesh node placed at its world pose, coloured with ``shape.color``;
    each contact becomes a small gold sphere at ``pos`` (node ``contact_i``) and a thin gold
    cylinder along its normal (``normal_i``), sized as :func:`plot_contacts` sizes the lines.
    A leaf's node is named ``shape.name``, or ``<stype>_<k>`` for the k-th leaf when it has no
    name (``sphere_0``); a name already taken gets the first free suffix ``_2``, ``_3``, ...
    (two shapes named ``ball`` give ``ball`` and ``ball_2``), so no node replaces another.

    Parameters
    ----------
    *objects : CollisionShape, CollisionShapeGroup, Scene or RobotModel
        What to export (see :func:`triangles`).
    contacts : Contacts, optional
    forces : array_like, shape (n,) or (n, 3), optional
        Only with ``contacts``.
    scale : float, optional
        As in :func:`plot_contacts`.
    halfspace_size : float, optional
        As in :func:`triangles`.

    Returns
    -------
    trimesh.Scene
        ``scene.export("picture.glb")`` writes a file any glTF viewer opens.

    Raises
    ------
    ShapeTypeError, InvalidArgumentError
        As :func:`plot` raises them.

    Examples
    --------
    >>> from spatialcontact import Cuboid, Sphere
    >>> scene = to_trimesh_scene(Cuboid([1.0, 1.0, 0.1]), Sphere(0.1, name="ball"))
    >>> len(scene.geometry), "ball" in scene.geometry
    (2, True)
    """
    import trimesh

    scale = _contact_options(contacts, forces, scale)
    leaves, colors = _colored_leaves(objects)
    pos = np.zeros((0, 3)) if contacts is None else _positions(contacts)
    patch = _patch(leaves, pos, halfspace_size)
    if contacts is not None:  # checks forces even when there are no contacts to draw
        size = _size(leaves, pos) if len(contacts) else 1.0
        points, vectors = _contact_vectors(contacts, forces, scale, size)
    out = trimesh.Scene()
    taken: set[str] = set()
    for k, (leaf, own) in enumerate(zip(leaves, colors, strict=True)):
        v, f = _local_mesh(leaf, patch)
        rgba = np.round(np.asarray(own) * 255).astype(np.uint8)
        mesh = trimesh.Trimesh(v, f, face_colors=np.tile(rgba, (len(f), 1)), process=False)
        label = _free(leaf.name if leaf.name is not None else f"{leaf.stype}_{k}", taken)
        out.add_geometry(mesh, node_name=label, geom_name=label, transform=np.array(leaf.world_T))
    if contacts is not None:
        radius = 0.01 * size
        for i, (p, v) in enumerate(zip(points, vectors, strict=True)):
            dot = trimesh.creation.icosphere(subdivisions=1, radius=radius)
            dot.apply_translation(p)
            label = _free(f"contact_{i}", taken)
            out.add_geometry(_gold(dot), node_name=label, geom_name=label)
            if float(np.linalg.norm(v)) > 0.0:
                line = trimesh.creation.cylinder(radius / 3, segment=[p, p + v], sections=8)
                label = _free(f"normal_{i}", taken)
                out.add_geometry(_gold(line), node_name=label, geom_name=label)
    return out


def _free(label: str, taken: set[str]) -> str:
    """``label``, or when taken the first of ``label_2``, ``label_3``, ... that is free; the
    name returned is added to ``taken``.

    trimesh replaces a node given a name already used, so a clash would lose a shape.
    """
    name, k = label, 1
    while name in taken:
        k += 1
        name = f"{label}_{k}"
    taken.add(name)
    return name


def _gold(mesh: Any) -> Any:
    import trimesh

    colors = np.tile([255, 204, 0, 255], (len(mesh.faces), 1)).astype(np.uint8)
    return trimesh.Trimesh(mesh.vertices, mesh.faces, face_colors=colors, process=False)
