"""The batch queries: one shape ``b`` at many poses against ``a``, in one call."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from .._base import collision_leaves
from .._coal import quirks
from .._validate import MAX_COORDINATE, bound, coordinate, count, describe, flag, points
from ..errors import InvalidArgumentError, ShapeTypeError, UnsupportedPairError
from ..pose import check_sound
from ..query import _check_shape, _geometries
from ..scene import Scene
from ._fast import POINT_SHAPES, closed_form, direct_collide, direct_pair, point_form
from ._kernels import ContactColumns, Job, run, run_points
from ._poses import check_poses, refuse_row
from .chunks import Items, iter_chunks
from .results import BatchContacts

if TYPE_CHECKING:
    from ..shapes import CollisionShape

__all__ = [
    "closest_point",
    "contacts",
    "distance",
    "iscollided",
    "iter_closest_point",
    "iter_contacts",
    "iter_distance",
    "iter_iscollided",
    "iter_point_distance",
    "point_distance",
]

_UNSUPPORTED = {
    "iscollided": quirks.NO_COLLIDE,
    "distance": quirks.NO_DISTANCE,
    "closest_point": quirks.NO_DISTANCE,
    "contacts": quirks.NO_CONTACT,
}

ClosestPoints = tuple[np.ndarray, np.ndarray, np.ndarray]


def _leaves(shape: Any) -> tuple[CollisionShape, ...]:
    return cast("tuple[CollisionShape, ...]", collision_leaves(shape))


def _separate(a: Any, b: Any) -> None:
    """Refuse ``b`` being ``a``, inside ``a`` or holding ``a``: moving it would move ``a``."""
    for inner, outer in ((b, a), (a, b)):
        node = inner
        while node is not None:
            if node is outer:
                raise InvalidArgumentError(
                    f"b must be separate from a: moving b would move a ({describe(b)} and "
                    f"{describe(a)})"
                )
            node = node._parent


class _Translations:
    """The translations of a batch of poses (N, 4, 4), read chunk by chunk: a slice is a new
    (n, 3) array, and the whole batch is never copied."""

    __slots__ = ("poses",)

    def __init__(self, poses: np.ndarray) -> None:
        self.poses = poses

    def __len__(self) -> int:
        return len(self.poses)

    def __getitem__(self, index: slice) -> np.ndarray:
        return np.ascontiguousarray(self.poses[index, :3, 3])


class _Unchecked(NamedTuple):
    """A batch of :func:`_prepare` for the direct path: its rows are checked as they are
    answered, in one pass (``DirectCollide.checked``; poses for rigidity with ``check``, else
    for what no answer may be read from)."""

    rows: np.ndarray
    check: bool


def _job(
    kind: str, a: Any, b: Any, poses: Any, check: Any = True, **options: Any
) -> tuple[Job, Items]:
    """Check every argument before any work, and describe the work."""
    job, items = _prepare(kind, a, b, poses, check, False, **options)
    assert not isinstance(items, _Unchecked)
    return job, items


def _prepare(
    kind: str, a: Any, b: Any, poses: Any, check: Any, whole: bool, **options: Any
) -> tuple[Job, Items | _Unchecked]:
    """:func:`_job`; with ``whole`` (the caller answers the batch at once, here), a pair of
    :func:`~spatialcontact.batch._fast.direct_pair` gets its rows as an :class:`_Unchecked`."""
    scene = isinstance(a, Scene)
    if scene and kind not in ("iscollided", "distance"):
        raise ShapeTypeError(
            f"batch.{kind} takes a shape or group as a, got a Scene (a Scene answers "
            "batch.iscollided and batch.distance)"
        )
    if not scene:
        _check_shape(a, "a")
    _check_shape(b, "b")
    if not scene:
        _separate(a, b)
    checked = flag(check, "check")
    fused = whole and kind == "iscollided" and not scene and direct_pair(a, b)
    batch, translations = check_poses(poses, "poses", checked, values=not fused)
    if fused:
        return Job(kind, a, b, translations, scene, prepared=[]), _Unchecked(batch, checked)
    items: Items = batch
    closed = not scene and kind != "contacts"
    unsupported = _UNSUPPORTED[kind]
    shapes = [a[name] for name in a.names] if scene else [a]
    for la in (leaf for shape in shapes for leaf in _leaves(shape)):
        for lb in _leaves(b):
            if scene or kind == "contacts" or closed_form(la, lb, kind) is None:
                _geometries(la, lb, unsupported)  # an unsupported pair: before any work
                closed = False
    if not (checked or translations):
        check_sound(batch, "poses")  # what Coal or a closed form must not read, never unchecked
    if closed and not translations and not b._is_group and b.stype == "sphere":
        # A sphere's rotation changes no closed form: only the translations are read (and
        # sent). Coal's GJK and EPA do see it (to their tolerance), so for Coal pairs the
        # poses are kept, and Coal gets the transforms the shape queries would give it.
        items, translations = _Translations(batch), True
    return Job(kind, a, b, translations, scene, **options, prepared=[]), items


def _chunks(
    job: Job, batch: Items, chunk_size: Any, executor: Any, progress: Any
) -> Iterator[tuple[int, Any]]:
    return iter_chunks(
        run,
        job,
        batch,
        chunk_size=chunk_size,
        executor=executor,
        progress=progress,
        unit="pose",
    )


# -------------------------------------------------------------------------------- iscollided


def _direct_answers(job: Job, batch: _Unchecked) -> np.ndarray:
    """``iscollided`` of a direct pair for every row, in one pass that checks the rows too;
    the first bad row raises (no answer is given)."""
    hit, bad = direct_collide(job.a, job.b).checked(batch.rows, MAX_COORDINATE, batch.check)
    if bad >= 0:
        refuse_row(batch.rows, "poses", bad)
    return hit


def iter_iscollided(
    a: CollisionShape | Scene,
    b: CollisionShape,
    poses: Any,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> Iterator[tuple[int, np.ndarray]]:
    """:func:`iscollided` chunk by chunk, for batches too long to answer at once.

    Parameters are those of :func:`iscollided`. The arguments are checked when this is
    called; the work is done as the chunks are asked for.

    Yields
    ------
    start : int
        Row of ``poses`` of the chunk's first pose.
    collided : ndarray of bool, shape (n,) or (n, objects)
        The answers for rows ``start`` to ``start + n - 1``.
    """
    job, batch = _job("iscollided", a, b, poses, check)
    return _chunks(job, batch, chunk_size, executor, progress)


def iscollided(
    a: CollisionShape | Scene,
    b: CollisionShape,
    poses: Any,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> np.ndarray:
    """Whether ``b`` collides with ``a`` at each of many poses.

    Parameters
    ----------
    a : CollisionShape, CollisionShapeGroup or Scene
        What ``b`` is tested against; it does not move.
    b : CollisionShape or CollisionShapeGroup
        The shape placed at each pose, separate from ``a`` (neither inside the other). Its
        pose is put back when the call returns, also after an error.
    poses : array_like, shape (N, 4, 4), or shape (N, 3)
        Values of ``b.T`` (rigid transforms in the frame of ``b``'s group, or of the world),
        or translations of ``b``, which keeps the rotation of its ``T``. SE3 and sequences of
        SE3 are accepted too. A float64 array is read in place, not copied.
    chunk_size : int, optional
        Poses per chunk (see :func:`~spatialcontact.batch.iter_chunks`).
    executor : concurrent.futures.Executor, optional
        Where the chunks run (a ``ProcessPoolExecutor``, a Dask ``client.get_executor()``);
        ``a`` and ``b`` are then pickled once and sent to each worker once. None runs here.
    progress : bool
        Show a tqdm progress bar.
    check : bool
        False skips the check that ``(N, 4, 4)`` poses are rigid, for poses the caller
        computed itself as rigid transforms (forward kinematics, samplers), as
        ``CollisionShapeGroup.set_poses(check=False)`` does: the closed forms then read them as
        they are (a pose that is not rigid gives a meaningless answer). Every pose is still
        checked for non-finite entries, translations out of range and a wrong last row, from
        which no answer can be read (and which Coal must never be given): the first is named,
        with no answer given. Translations are always checked.

    Returns
    -------
    ndarray of bool, shape (N,)
        ``b.iscollided(a)`` with ``b.T = poses[i]``, for each row ``i``.
    ndarray of bool, shape (N, objects), when ``a`` is a Scene
        Column ``j`` tells whether ``b`` touches the object ``a.names[j]`` (names in the order
        added), as ``a.collide(b)``.

    Raises
    ------
    InvalidPoseError
        If ``poses`` is not such an array, naming its first bad row; before any work.
    UnsupportedPairError
        If a pair of leaves has no Coal algorithm (as the shape queries raise it).
    BatchError
        If a pose fails (the message names its row).

    Notes
    -----
    Pairs of primitives with a closed form (spheres, capsules, boxes, cylinders, cones and
    half-spaces, see :mod:`spatialcontact._closed_form`) are answered in numpy for all poses
    at once; every other pair goes to Coal pose by pose, through the cached functors of the
    shape queries, after a vectorised cull of the poses where the pair's bounds are apart.

    Examples
    --------
    >>> import numpy as np
    >>> from spatialcontact import Cuboid, Sphere, batch
    >>> table = Cuboid([1.0, 1.0, 0.1])  # top face at z = 0.05
    >>> ball = Sphere(0.1)
    >>> batch.iscollided(table, ball, [[0, 0, 0.1], [0, 0, 0.2], [0.55, 0, 0.1]]).tolist()
    [True, False, True]
    >>> ball.T[:3, 3].tolist()  # ball is back where it was
    [0.0, 0.0, 0.0]
    """
    job, batch = _prepare("iscollided", a, b, poses, check, executor is None and progress is False)
    if isinstance(batch, _Unchecked):
        if chunk_size is not None:
            count(chunk_size, "chunk_size", 1)  # checked as iter_chunks does; no chunks here
        return _direct_answers(job, batch)
    shape = (len(batch), len(cast(Scene, a).names)) if job.scene else (len(batch),)
    out = np.empty(shape, dtype=bool)
    for start, hit in _chunks(job, batch, chunk_size, executor, progress):
        out[start : start + len(hit)] = hit
    return out


# ------------------------------------------------------------------------------- distance


def iter_distance(
    a: CollisionShape | Scene,
    b: CollisionShape,
    poses: Any,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> Iterator[tuple[int, np.ndarray]]:
    """:func:`distance` chunk by chunk: yields ``(start, d)``, ``d`` of shape (n,).

    See :func:`iter_iscollided`.
    """
    job, batch = _job("distance", a, b, poses, check)
    return _chunks(job, batch, chunk_size, executor, progress)


def distance(
    a: CollisionShape | Scene,
    b: CollisionShape,
    poses: Any,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> np.ndarray:
    """Signed distance from ``a`` to ``b`` at each of many poses of ``b``.

    Parameters are those of :func:`iscollided`.

    Returns
    -------
    ndarray, shape (N,)
        ``a.distance(b)`` with ``b.T = poses[i]`` for each row ``i``, in metres, negative on
        overlap; ``inf`` when either side is a group without collision leaves. For a Scene,
        the distance to the nearest object (``a.distance(b)[0]``, ``inf`` when it holds no
        object but ``b``).

    Examples
    --------
    >>> from spatialcontact import Sphere, batch
    >>> batch.distance(Sphere(1.0), Sphere(0.5), [[3, 0, 0], [0, 1, 0]]).tolist()
    [1.5, -0.5]
    """
    job, batch = _job("distance", a, b, poses, check)
    out = np.empty(len(batch))
    for start, d in _chunks(job, batch, chunk_size, executor, progress):
        out[start : start + len(d)] = d
    return out


# -------------------------------------------------------------------------- closest point


def _closest_job(a: Any, b: Any, poses: Any, inf_dist: Any, check: Any) -> tuple[Job, Items]:
    limit = bound(inf_dist, "inf_dist")
    return _job("closest_point", a, b, poses, check, inf_dist=limit)


def iter_closest_point(
    a: CollisionShape,
    b: CollisionShape,
    poses: Any,
    inf_dist: float = 1.0,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> Iterator[tuple[int, ClosestPoints]]:
    """:func:`closest_point` chunk by chunk: yields ``(start, (d, p1, p2))``.

    See :func:`iter_iscollided`.
    """
    job, batch = _closest_job(a, b, poses, inf_dist, check)
    return _chunks(job, batch, chunk_size, executor, progress)


def closest_point(
    a: CollisionShape,
    b: CollisionShape,
    poses: Any,
    inf_dist: float = 1.0,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> ClosestPoints:
    """Signed distance and closest points of ``a`` and ``b`` at each of many poses of ``b``.

    Parameters
    ----------
    a : CollisionShape or CollisionShapeGroup
        The shape in place.
    b, poses, chunk_size, executor, progress
        As for :func:`iscollided`.
    inf_dist : float
        Cut-off: a row whose distance is greater than ``inf_dist`` is NaN (a distance equal
        to it is returned), as ``closest_point`` gives ``(None, None, None)``.

    Returns
    -------
    d : ndarray, shape (N,)
        Signed distances in metres, NaN beyond ``inf_dist``.
    p1 : ndarray, shape (N, 3), world frame
        Closest points on ``a``, NaN rows beyond ``inf_dist``.
    p2 : ndarray, shape (N, 3), world frame
        Closest points on ``b`` at each pose, NaN rows beyond ``inf_dist``.

    Examples
    --------
    >>> from spatialcontact import Sphere, batch
    >>> t = [[3, 0, 0], [9, 0, 0]]  # d = 1.5, 7.5
    >>> d, p1, p2 = batch.closest_point(Sphere(1.0), Sphere(0.5), t, inf_dist=2.0)
    >>> d.tolist(), p1.tolist(), p2.tolist()
    ([1.5, nan], [[1.0, 0.0, 0.0], [nan, nan, nan]], [[2.5, 0.0, 0.0], [nan, nan, nan]])
    """
    job, batch = _closest_job(a, b, poses, inf_dist, check)
    n = len(batch)
    d, p1, p2 = np.empty(n), np.empty((n, 3)), np.empty((n, 3))
    for start, (dd, q1, q2) in _chunks(job, batch, chunk_size, executor, progress):
        stop = start + len(dd)
        d[start:stop], p1[start:stop], p2[start:stop] = dd, q1, q2
    return d, p1, p2


# -------------------------------------------------------------------------------- contacts


def _contacts_job(
    a: Any, b: Any, poses: Any, max_contacts: Any, security_margin: Any, check: Any
) -> tuple[Job, Items]:
    k = count(max_contacts, "max_contacts", 1)
    margin = coordinate(security_margin, "security_margin", error=InvalidArgumentError)
    return _job("contacts", a, b, poses, check, max_contacts=k, security_margin=margin)


def iter_contacts(
    a: CollisionShape,
    b: CollisionShape,
    poses: Any,
    max_contacts: int = 1,
    security_margin: float = 0.0,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> Iterator[tuple[int, BatchContacts]]:
    """:func:`contacts` chunk by chunk: yields ``(start, found)``, where ``found.pose`` holds
    rows of the whole batch.

    See :func:`iter_iscollided`.
    """
    job, batch = _contacts_job(a, b, poses, max_contacts, security_margin, check)
    leaves_a, leaves_b = _leaves(a), _leaves(b)
    n = len(batch)
    chunks: Iterator[tuple[int, ContactColumns]] = _chunks(
        job, batch, chunk_size, executor, progress
    )
    return (
        (start, BatchContacts._join([(start, columns)], leaves_a, leaves_b, n))
        for start, columns in chunks
    )


def contacts(
    a: CollisionShape,
    b: CollisionShape,
    poses: Any,
    max_contacts: int = 1,
    security_margin: float = 0.0,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    check: bool = True,
) -> BatchContacts:
    """The contacts of ``a`` and ``b`` at each of many poses of ``b``.

    Parameters
    ----------
    a : CollisionShape or CollisionShapeGroup
        The shape in place.
    b, poses, chunk_size, executor, progress
        As for :func:`iscollided`.
    max_contacts, security_margin
        As for ``a.contacts(b)``.

    Returns
    -------
    BatchContacts
        Every contact, pose by pose, with the row of each in ``pose``; ``o1`` is a leaf of
        ``a`` (the caller's own shapes, also after an executor), ``o2`` a leaf of ``b``.
    """
    job, batch = _contacts_job(a, b, poses, max_contacts, security_margin, check)
    parts = list(_chunks(job, batch, chunk_size, executor, progress))
    return BatchContacts._join(parts, _leaves(a), _leaves(b), len(batch))


# -------------------------------------------------------------------------- point distance


def _point_work(a: Any, x: Any) -> np.ndarray:
    _check_shape(a, "a")
    for leaf in _leaves(a):
        if point_form(leaf) is None:
            raise UnsupportedPairError(
                f"point_distance has a closed form for {POINT_SHAPES} only, got a "
                f"{type(leaf).__name__} ({describe(leaf)}); for it, use "
                "batch.distance(a, Sphere(r), points) + r"
            )
    return points(x, "x", 0, error=InvalidArgumentError)


def iter_point_distance(
    a: CollisionShape,
    x: Any,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
) -> Iterator[tuple[int, np.ndarray]]:
    """:func:`point_distance` chunk by chunk: yields ``(start, d)``, ``d`` of shape (n,).

    See :func:`iter_iscollided`.
    """
    return iter_chunks(
        run_points,
        a,
        _point_work(a, x),
        chunk_size=chunk_size,
        executor=executor,
        progress=progress,
        unit="point",
    )


def point_distance(
    a: CollisionShape,
    x: Any,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
) -> np.ndarray:
    """Signed distance from ``a`` to each of many points, in closed form.

    Parameters
    ----------
    a : CollisionShape or CollisionShapeGroup
        A sphere, box, capsule, cylinder, cone or half-space, or a group of them.
    x : array_like, shape (N, 3), world frame
        The points, finite and within ``±MAX_COORDINATE`` m.
    chunk_size, executor, progress
        As for :func:`iscollided`.

    Returns
    -------
    ndarray, shape (N,)
        The signed distance in metres from each point to the nearest leaf of ``a``
        (negative inside it): the distance to a sphere of radius ``r`` at the point, plus
        ``r``. ``inf`` for a group without collision leaves.

    Raises
    ------
    UnsupportedPairError
        If a leaf of ``a`` has no closed form (an ellipsoid, a mesh, a hull, an octree).

    Examples
    --------
    >>> from spatialcontact import Cuboid, batch
    >>> batch.point_distance(Cuboid([2.0, 2.0, 2.0]), [[3, 0, 0], [0, 0, 0.5]]).tolist()
    [2.0, -0.5]
    """
    out = np.empty(0)
    parts = [d for _, d in iter_point_distance(
        a, x, chunk_size=chunk_size, executor=executor, progress=progress
    )]  # fmt: skip
    return np.concatenate(parts) if parts else out
