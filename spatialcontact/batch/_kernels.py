"""The work on one chunk of poses: place ``b``'s leaves, answer every leaf pair, restore ``b``.

A chunk is answered in blocks of poses. For each block, the world poses of ``b``'s collision
leaves come from one matrix product; pairs with a closed form (:mod:`._fast`) are answered for
the whole block in numpy; every other leaf pair goes to Coal through the cached functors of
:mod:`spatialcontact.query`, one pose at a time, after a vectorised cull: the distance from
the bounding sphere of ``b``'s leaf to the bounding box of ``a``'s leaf (in that leaf's frame)
is a lower bound on their signed distance, and poses where the bound exceeds the query's cut-off
never reach Coal (the bound also uses a sphere about the box's centre holding a mesh or hull,
and the empty ball inside a hollow mesh). Coal's transforms of ``b``'s leaves are set
directly from views of the block's arrays (only the translation for a batch of
translations), never through ``T``; they are put back when
the chunk is done, and ``b`` has never moved.

``iscollided`` of one leaf against one leaf in no group, for the pairs
:func:`~spatialcontact.batch._fast.direct_collide` knows (two spheres, a capsule and a box),
skips all of this: the chunk's columns are read as they are.

A :class:`~spatialcontact.Scene` as ``a`` is asked through its own methods, with ``b.T`` set
for each pose, so that the scene sees every move.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import coal
import numpy as np

from .._base import collision_leaves
from .._coal import state as _state
from .._coal.state import thread_entry
from ..contact import Contact
from ..pose import compose
from ..query import (
    _collide_entry,
    _confirm,
    _contacts_leaves,
    _distance_leaves,
    _witnesses,
)
from ._fast import (
    DirectCollide,
    Fixed,
    Form,
    closed_form,
    direct_collide,
    direct_pair,
    point_form,
    turned,
)

__all__ = ["ContactColumns", "Job", "run", "run_points"]

_ENTRIES = 1 << 18
"""Leaf pairs times poses answered at a time (the size of a block's temporaries)."""


class Job(NamedTuple):
    """What one batch query asks, the payload of its chunks.

    Attributes
    ----------
    kind : str
        ``"iscollided"``, ``"distance"``, ``"closest_point"`` or ``"contacts"``.
    a : CollisionShape, CollisionShapeGroup or Scene
        The shape that stays in place.
    b : CollisionShape or CollisionShapeGroup
        The shape placed at each pose.
    translations : bool
        True when the chunks hold translations (n, 3) of ``b``, False for poses (n, 4, 4).
    scene : bool
        True when ``a`` is a Scene.
    inf_dist : float
        The cut-off of ``closest_point``.
    max_contacts : int
        ``contacts``: the deepest contacts kept per leaf pair.
    security_margin : float
        ``contacts``: the margin.
    prepared : list or None
        Filled by the first chunk with what every chunk of this job reads (``b``'s leaves
        and ``a``'s pairs and bounds: neither changes while the job runs); a new empty list
        for each job, so a worker's copy of the job keeps its own. None: prepare each chunk.
    """

    kind: str
    a: Any
    b: Any
    translations: bool
    scene: bool
    inf_dist: float = math.inf
    max_contacts: int = 1
    security_margin: float = 0.0
    prepared: list[Any] | None = None


class ContactColumns(NamedTuple):
    """The contacts of a chunk as columns, ``m`` contacts in pose order.

    Attributes
    ----------
    pose : ndarray of int64, shape (m,)
        Row of the chunk each contact belongs to.
    leaf1, leaf2 : ndarray of int64, shape (m,)
        Index of ``o1`` among the collision leaves of ``a``, of ``o2`` among those of ``b``.
    b1, b2 : ndarray of int64, shape (m,)
        Primitive ids.
    data : ndarray, shape (m, 12), world frame
        Per contact ``[normal, p1, p2, pos]``.
    depth : ndarray, shape (m,)
        Penetration depths (signed distances).
    """

    pose: np.ndarray
    leaf1: np.ndarray
    leaf2: np.ndarray
    b1: np.ndarray
    b2: np.ndarray
    data: np.ndarray
    depth: np.ndarray


# ------------------------------------------------------------------------------- placing b


def _relative(leaf: Any, top: Any) -> np.ndarray:
    """The pose of ``leaf`` in the frame of the group ``top`` that holds it."""
    M = leaf.T
    node = leaf._parent
    while node is not top:
        M = node.T @ M
        node = node._parent
    return np.asarray(M)


class _Moving:
    """``b``'s collision leaves and how a pose of ``b`` places them in the world."""

    def __init__(self, b: Any) -> None:
        self.leaves: tuple[Any, ...] = tuple(collision_leaves(b))
        parent = b._parent
        self.parent = None if parent is None else np.array(parent._world)
        self.T = np.array(b.T)
        self.relative = (
            np.stack([_relative(leaf, b) for leaf in self.leaves])
            if b._is_group and self.leaves
            else None
        )

    def poses(self, chunk: np.ndarray, translations: bool) -> np.ndarray:
        """The values of ``b.T`` (n, 4, 4) for a chunk of poses or translations."""
        if not translations:
            return np.asarray(chunk, dtype=np.float64)
        P = np.empty((len(chunk), 4, 4))
        P[:] = self.T
        P[:, :3, 3] = chunk
        return P


class _Block:
    """The world placements of ``b``'s leaves for a block of poses (n, 4, 4) or translations
    (n, 3) of ``b``, each worked out when first asked for.

    With translations, each leaf keeps one rotation and only its translations are computed;
    a leaf that is ``b`` itself, in no group, is at the translations given (not copied).
    """

    def __init__(self, moving: _Moving, values: np.ndarray, translations: bool) -> None:
        self.moving = moving
        self.n = len(values)
        self.translated = translations
        self._W: np.ndarray | None = None
        self._poses: dict[int, np.ndarray] = {}
        self._translations: dict[int, np.ndarray] = {}
        parent = moving.parent
        if translations:
            R_b = moving.T[:3, :3]
            if parent is None:
                self._R, self._t = R_b, np.asarray(values, dtype=np.float64)
            else:
                self._R = parent[:3, :3] @ R_b
                self._t = _turned_rows(parent[:3, :3], values) + parent[:3, 3]
        else:
            P = np.asarray(values, dtype=np.float64)
            self._Wb = P if parent is None else np.matmul(parent, P)

    def rotation(self, k: int) -> np.ndarray:
        """Leaf ``k``'s world rotation: (3, 3) for translations, (n, 3, 3) for poses."""
        if not self.translated:
            return self.pose(k)[:, :3, :3]
        relative = self.moving.relative
        return self._R if relative is None else self._R @ relative[k, :3, :3]

    def translation(self, k: int) -> np.ndarray:
        """Leaf ``k``'s world translations (n, 3)."""
        if not self.translated:
            return self.pose(k)[:, :3, 3]
        relative = self.moving.relative
        if relative is None:
            return self._t
        found = self._translations.get(k)
        if found is None:
            found = self._translations[k] = self._t + self._R @ relative[k, :3, 3]
        return found

    def pose(self, k: int) -> np.ndarray:
        """Leaf ``k``'s world poses (n, 4, 4)."""
        found = self._poses.get(k)
        if found is not None:
            return found
        if self.translated:
            found = np.empty((self.n, 4, 4))
            found[:] = np.eye(4)
            found[:, :3, :3] = self.rotation(k)
            found[:, :3, 3] = self.translation(k)
        elif self.moving.relative is None:
            found = self._Wb
        else:
            if self._W is None:  # as the shapes place their leaves, bit for bit
                self._W = compose(self._Wb, self.moving.relative)
            found = self._W[:, k]
        self._poses[k] = found
        return found

    def centres(self, local: np.ndarray) -> np.ndarray:
        """World positions (n, leaves, 3) of the points ``local`` (leaves, 3), one in each
        leaf's frame."""
        out = np.empty((self.n, len(local), 3))
        for k, point in enumerate(local):
            out[:, k] = self.translation(k)
            if point.any():
                out[:, k] += turned(self.rotation(k), point)
        return out

    def placement(self, k: int) -> _LeafPlacement:
        """Leaf ``k`` as a :class:`~spatialcontact.batch._fast.Placement`."""
        return _LeafPlacement(self, k)


class _LeafPlacement:
    """One leaf of a :class:`_Block`, as the closed forms read it."""

    __slots__ = ("block", "k")

    def __init__(self, block: _Block, k: int) -> None:
        self.block = block
        self.k = k

    @property
    def T(self) -> np.ndarray:
        return self.block.pose(self.k)

    @property
    def centre(self) -> np.ndarray:
        return self.block.translation(self.k)

    @property
    def rotation(self) -> np.ndarray:
        return self.block.rotation(self.k)


class _Rows:
    """Some rows of a placement of many poses (a :class:`~spatialcontact.batch._fast.
    Placement`), each array taken when first asked for."""

    __slots__ = ("_T", "_centre", "_placement", "_rotation", "_rows")

    def __init__(self, placement: _LeafPlacement, rows: np.ndarray) -> None:
        self._placement = placement
        self._rows = rows
        self._T: np.ndarray | None = None
        self._centre: np.ndarray | None = None
        self._rotation: np.ndarray | None = None

    @property
    def T(self) -> np.ndarray:
        if self._T is None:
            self._T = self._placement.T[self._rows]
        return self._T

    @property
    def centre(self) -> np.ndarray:
        if self._centre is None:
            self._centre = self._placement.centre[self._rows]
        return self._centre

    @property
    def rotation(self) -> np.ndarray:
        if self._rotation is None:
            R = self._placement.rotation
            self._rotation = R if R.ndim == 2 else R[self._rows]
        return self._rotation


def _turned_rows(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R @ v[i]`` for a rotation (3, 3) and vectors (n, 3)."""
    out: np.ndarray = v @ R.T
    return out


class _Placer:
    """Sets the Coal transforms of ``b``'s leaves for one pose of a block, from views of the
    block's arrays; only the translation when the rotation stays (translations of ``b``: set
    once here). A sphere's rotation is set too: Coal's GJK and EPA answers depend on it, to
    their tolerance, and the shape queries set it."""

    def __init__(self, moving: _Moving, block: _Block) -> None:
        self.tfs = [leaf._tf for leaf in moving.leaves]
        self.block = block
        self.fixed = np.full(len(self.tfs), block.translated)
        self._movers: dict[int, Callable[[int], None]] = {}
        if block.translated and block.n:
            for k, tf in enumerate(self.tfs):
                tf.setTransform(
                    np.ascontiguousarray(block.rotation(k)), block.translation(k)[0].copy()
                )

    def mover(self, k: int) -> Callable[[int], None]:
        """``move(i)`` places leaf ``k`` at its pose for row ``i`` of the block."""
        found = self._movers.get(k)
        if found is None:
            found = self._movers[k] = self._make(k)
        return found

    def _make(self, k: int) -> Callable[[int], None]:
        tf = self.tfs[k]
        t = np.ascontiguousarray(self.block.translation(k))
        if self.fixed[k]:
            set_translation = tf.setTranslation
            return lambda i: set_translation(t[i])
        R = np.ascontiguousarray(self.block.rotation(k))
        set_transform = tf.setTransform
        return lambda i: set_transform(R[i], t[i])


@contextmanager
def _kept(b: Any, moves: bool) -> Iterator[None]:
    """Put ``b`` back where it was afterwards, also after an error.

    When the work ``moves`` ``b`` (a scene is asked with ``b.T`` set), its pose is set back.
    Otherwise only the Coal transforms of its leaves were changed, and they alone are set
    back: ``b`` never moved for anyone watching it (its revision stays, so ``a`` and ``b``
    pickle the same from one batch to the next, and workers keep the copies they hold).
    """
    if moves:
        saved = b.T
        try:
            yield
        finally:
            b.T = saved
        return
    tfs = [leaf._tf for leaf in collision_leaves(b)]
    placed = [(np.array(tf.getRotation()), np.array(tf.getTranslation())) for tf in tfs]
    try:
        yield
    finally:
        for tf, (R, t) in zip(tfs, placed, strict=True):
            tf.setTransform(R, t)


# ------------------------------------------------------------------------------ leaf pairs


def _both_spheres(a: Any, b: Any) -> bool:
    return bool(a.stype == b.stype == "sphere")


class _Pairs:
    """The leaf pairs of ``a`` and ``b``: closed forms and Coal pairs, with the bounds that
    cull the Coal pairs.

    Parameters
    ----------
    a : CollisionShape
        The shape in place (a leaf or a group).
    moving : _Moving
        ``b``'s leaves.
    kind : str
        The query: pairs with a closed form for it are answered by that form (``contacts``
        has none: every pair goes to Coal).
    """

    def __init__(self, a: Any, moving: _Moving, kind: str) -> None:
        self.leaves_a: tuple[Any, ...] = collision_leaves(a)
        self.leaves_b = moving.leaves
        self.Wa = np.empty((len(self.leaves_a), 4, 4))
        self.Wa[:] = np.eye(4)
        for k, leaf in enumerate(self.leaves_a):
            self.Wa[k, :3, :3] = leaf._tf.getRotation()
            self.Wa[k, :3, 3] = leaf._tf.getTranslation()
        self.placed_a = [Fixed(W) for W in self.Wa]
        self.fast: list[tuple[int, int, Form]] = []
        coal_pairs: list[tuple[int, int]] = []
        for ka, la in enumerate(self.leaves_a):
            for kb, lb in enumerate(self.leaves_b):
                form = None if kind == "contacts" else closed_form(la, lb, kind)
                if form is None:
                    coal_pairs.append((ka, kb))
                else:
                    self.fast.append((ka, kb, form))
        self.ka = np.array([p[0] for p in coal_pairs], dtype=np.intp)
        self.kb = np.array([p[1] for p in coal_pairs], dtype=np.intp)
        self._bounds()
        # The yes/no closed forms that cost more than a bounding-sphere test are asked only
        # where the leaves' bounding spheres meet (two spheres, or a half-space: never).
        self.culled = [
            kind == "iscollided"
            and bool(self.bounded[ka] and self.b_bounded[kb])
            and not _both_spheres(self.leaves_a[ka], self.leaves_b[kb])
            for ka, kb, _ in self.fast
        ]

    def _bounds(self) -> None:
        """Bounds of ``a``'s leaves in their frames and bounding spheres of ``b``'s leaves.

        Each leaf of ``a`` has its bounding box, a sphere about the box's centre holding it
        and, for a mesh (a hollow surface), the largest ball about that centre holding no
        point of the surface (radius 0 for other leaves).
        """
        n = len(self.leaves_a)
        self.box_centre = np.zeros((n, 3))
        self.box_half = np.ones((n, 3))
        self.ball = np.zeros(n)
        self.hollow = np.zeros(n)
        self.bounded = np.ones(n, dtype=np.bool_)
        for k, leaf in enumerate(self.leaves_a):
            g = leaf._geometry
            if not g.aabb_radius < 1e100:
                self.bounded[k] = False
                continue
            low, high = g.aabb_local.min_, g.aabb_local.max_
            centre = self.box_centre[k] = 0.5 * (low + high)
            self.box_half[k] = 0.5 * (high - low)
            self.ball[k] = g.aabb_radius
            if leaf.stype in ("mesh", "convex_hull"):
                points = leaf.vertices if leaf.stype == "mesh" else leaf.points
                self.ball[k] = min(
                    g.aabb_radius, float(np.linalg.norm(points - centre, axis=1).max())
                )
            if leaf.stype == "mesh":
                self.hollow[k] = _empty_ball(g, centre)
        self.ball_centre = np.einsum("kij,kj->ki", self.Wa[:, :3, :3], self.box_centre)
        self.ball_centre += self.Wa[:, :3, 3]
        radius = np.array([leaf._geometry.aabb_radius for leaf in self.leaves_b], dtype=float)
        self.b_bounded = radius < 1e100
        self.sphere_radius = np.where(self.b_bounded, radius, 0.0)
        self.sphere_centre = np.zeros((len(self.leaves_b), 3))
        for k, leaf in enumerate(self.leaves_b):
            if self.b_bounded[k]:
                self.sphere_centre[k] = leaf._geometry.aabb_center

    def gaps(self, block: _Block) -> np.ndarray:
        """Lower bounds (n, pairs) on the signed distance of each Coal pair at each pose.

        The bounding sphere of ``b``'s leaf (placed by ``block``) is measured in the frame of
        ``a``'s leaf: its signed distance to the leaf's bounding box and to its bounding
        sphere, and its distance from the surface of a mesh when it lies in the mesh's empty
        ball; ``-inf`` for unbounded leaves (half-spaces).
        """
        ka, kb = self.ka, self.kb
        offset = block.centres(self.sphere_centre)[:, kb] - self.Wa[ka, :3, 3]
        local = np.einsum("npj,pji->npi", offset, self.Wa[ka, :3, :3]) - self.box_centre[ka]
        excess = np.abs(local) - self.box_half[ka]
        outside = np.sqrt(np.sum(np.maximum(excess, 0.0) ** 2, axis=-1))
        box = outside + np.minimum(excess.max(axis=-1), 0.0)
        centre = np.sqrt(np.sum(local * local, axis=-1))
        gap: np.ndarray = np.maximum(
            np.maximum(box, centre - self.ball[ka]), self.hollow[ka] - centre
        )
        gap -= self.sphere_radius[kb]
        gap[:, ~(self.bounded[ka] & self.b_bounded[kb])] = -math.inf
        return gap

    def meeting(self, block: _Block, ka: int, kb: int) -> np.ndarray:
        """Rows (m,) of the block where the bounding spheres of leaves ``ka`` of ``a`` and
        ``kb`` of ``b`` meet (elsewhere the leaves are apart)."""
        centre = self.sphere_centre[kb]
        x = block.translation(kb)
        if centre.any():
            x = x + turned(block.rotation(kb), centre)
        reach = self.ball[ka] + self.sphere_radius[kb]
        c = self.ball_centre[ka].tolist()
        gap = (x[:, 0] - c[0]) ** 2
        gap += (x[:, 1] - c[1]) ** 2
        gap += (x[:, 2] - c[2]) ** 2
        return np.flatnonzero(gap <= reach * reach)

    def block(self, n: int) -> int:
        """How many poses to answer at a time."""
        per_pose = max(1, len(self.ka), 16 * len(self.leaves_b))
        return max(1, min(n, _ENTRIES // per_pose))


_POINT = coal.Sphere(0.0)
_REQUEST = coal.DistanceRequest()


def _empty_ball(geometry: Any, centre: np.ndarray) -> float:
    """The distance from ``centre`` (in the frame of the mesh ``geometry``) to its triangles:
    no point of the surface lies closer to it."""
    result = coal.DistanceResult()
    coal.distance(geometry, coal.Transform3s(), _POINT, coal.Transform3s(np.eye(3), centre),
                  _REQUEST, result)  # fmt: skip
    return max(0.0, float(result.min_distance))


def _blocks(n: int, size: int) -> Iterator[slice]:
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


# ------------------------------------------------------------------------------- iscollided


def _collide_block(pairs: _Pairs, block: _Block) -> np.ndarray:
    hit = np.zeros(block.n, dtype=bool)
    for (ka, kb, form), culled in zip(pairs.fast, pairs.culled, strict=True):
        if not culled:
            hit |= form.answer(pairs.placed_a[ka], block.placement(kb))
            continue
        rows = pairs.meeting(block, ka, kb)
        rows = rows[~hit[rows]]
        if len(rows):
            hit[rows] = form.answer(pairs.placed_a[ka], _Rows(block.placement(kb), rows))
    if not len(pairs.ka):
        return hit
    todo = pairs.gaps(block) <= 0.0
    todo[hit] = False
    placer = _Placer(block.moving, block)
    leaves_a, leaves_b = pairs.leaves_a, pairs.leaves_b
    entries = [
        thread_entry(leaves_a[ka], leaves_b[kb], "_collide_pairs", _collide_entry)
        for ka, kb in zip(pairs.ka.tolist(), pairs.kb.tolist(), strict=True)
    ]
    if len(entries) == 1:
        move = placer.mover(int(pairs.kb[0]))
        tf1 = leaves_a[int(pairs.ka[0])]._tf
        entry = entries[0]
        call, confirm = entry[0], entry[4]
        for i in np.flatnonzero(todo[:, 0]).tolist():
            move(i)
            if call() or (confirm is not None and _confirm(entry, tf1)):
                hit[i] = True
        return hit
    tfs_a = [leaves_a[k]._tf for k in pairs.ka.tolist()]
    kbs = pairs.kb.tolist()
    for i in np.flatnonzero(todo.any(axis=1)).tolist():
        placed: set[int] = set()
        for p in np.flatnonzero(todo[i]).tolist():
            kb = kbs[p]
            if kb not in placed:
                placer.mover(kb)(i)
                placed.add(kb)
            entry = entries[p]
            if entry[0]() or (entry[4] is not None and _confirm(entry, tfs_a[p])):
                hit[i] = True
                break
    return hit


# ---------------------------------------------------------------- distance, closest point


def _nearest_block(
    pairs: _Pairs, block: _Block, limit: float, points: bool
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Signed distances (n,) of the closest leaf pair at each pose, ``inf`` where no pair is
    within ``limit``, with its witness points (n, 3) when ``points`` (NaN rows then)."""
    n = block.n
    best = np.full(n, math.inf)
    p1 = np.full((n, 3), math.nan) if points else None
    p2 = np.full((n, 3), math.nan) if points else None
    extra: list[tuple[int, int, np.ndarray]] = []
    for ka, kb, form in pairs.fast:
        r = form.answer(pairs.placed_a[ka], block.placement(kb))
        d = r.d if points else r
        if form.coal_overlap:
            deep = d <= 0.0
            if deep.any():
                extra.append((ka, kb, np.where(deep, -math.inf, math.inf)))
                d = np.where(deep, math.inf, d)
        better = (d < best) & (d <= limit)
        best[better] = d[better]
        if p1 is not None and p2 is not None:
            p1[better] = r.p1[better]
            p2[better] = r.p2[better]
    if not len(pairs.ka) and not extra:
        return best, p1, p2
    ka_list = pairs.ka.tolist() + [e[0] for e in extra]
    kb_list = pairs.kb.tolist() + [e[1] for e in extra]
    columns = [pairs.gaps(block)] if len(pairs.ka) else []
    gap = np.column_stack(columns + [e[2] for e in extra])
    placer = _Placer(block.moving, block)
    leaves_a, leaves_b = pairs.leaves_a, pairs.leaves_b
    if len(ka_list) == 1:
        rows = np.flatnonzero(gap[:, 0] <= np.minimum(limit, best))
        found, w1, w2 = _measure(
            leaves_a[ka_list[0]], leaves_b[kb_list[0]], placer.mover(kb_list[0]), rows, points
        )
        better = (found < best[rows]) & (found <= limit)
        best[rows[better]] = found[better]
        if p1 is not None and p2 is not None:
            p1[rows[better]] = w1[better]
            p2[rows[better]] = w2[better]
        return best, p1, p2
    for i in np.flatnonzero((gap <= np.minimum(limit, best)[:, None]).any(axis=1)).tolist():
        row = gap[i]
        candidates = np.flatnonzero(row <= min(limit, best[i]))
        placed: set[int] = set()
        for p in candidates[np.argsort(row[candidates], kind="stable")].tolist():
            if row[p] > best[i]:
                break
            kb = kb_list[p]
            if kb not in placed:
                placer.mover(kb)(i)
                placed.add(kb)
            result, swapped = _distance_leaves(leaves_a[ka_list[p]], leaves_b[kb])
            d = result.min_distance
            if d < best[i] and d <= limit:
                best[i] = d
                if p1 is not None and p2 is not None:
                    p1[i], p2[i] = _witnesses(result, swapped)
    return best, p1, p2


def _measure(
    la: Any, lb: Any, move: Callable[[int], None], rows: np.ndarray, points: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coal's signed distance of one leaf pair at the ``rows`` of a block: distances (m,)
    and, when ``points``, witness points (m, 3) on ``la`` and ``lb`` (else empty arrays).

    Each is the answer of :func:`spatialcontact.query._distance_leaves`, the shape queries'
    own (with their handling of Coal's quirks), for ``b``'s leaf placed at the row.
    """
    found: list[float] = []
    near1: list[np.ndarray] = []
    near2: list[np.ndarray] = []
    for i in rows.tolist():
        move(i)
        result, swapped = _distance_leaves(la, lb)
        found.append(result.min_distance)
        if points:
            q1, q2 = _witnesses(result, swapped)
            near1.append(q1)
            near2.append(q2)
    shape = (len(near1), 3)
    return (
        np.array(found, dtype=np.float64),
        np.array(near1, dtype=np.float64).reshape(shape),
        np.array(near2, dtype=np.float64).reshape(shape),
    )


# -------------------------------------------------------------------------------- contacts


def _contacts_block(
    pairs: _Pairs, block: _Block, max_contacts: int, margin: float, grouped: bool
) -> list[tuple[int, int, int, Contact]]:
    """``(row, leaf of a, leaf of b, contact)`` for every contact of the block, pose by pose
    (deepest first within a pose when a group is involved)."""
    todo = pairs.gaps(block) <= max(margin, 0.0)
    placer = _Placer(block.moving, block)
    leaves_a, leaves_b = pairs.leaves_a, pairs.leaves_b
    kas, kbs = pairs.ka.tolist(), pairs.kb.tolist()
    out: list[tuple[int, int, int, Contact]] = []
    for i in np.flatnonzero(todo.any(axis=1)).tolist():
        placed: set[int] = set()
        found: list[tuple[int, int, Contact]] = []
        for p in np.flatnonzero(todo[i]).tolist():
            ka, kb = kas[p], kbs[p]
            if kb not in placed:
                placer.mover(kb)(i)
                placed.add(kb)
            records: list[Contact] = []
            _contacts_leaves(leaves_a[ka], leaves_b[kb], max_contacts, margin, records)
            found.extend((ka, kb, c) for c in records)
        if grouped:
            found.sort(key=lambda item: item[2].penetration_depth)
        out.extend((i, ka, kb, c) for ka, kb, c in found)
    return out


def _columns(found: list[tuple[int, int, int, Contact]], cut: float | None) -> ContactColumns:
    """The contacts found, as columns; only those with a depth <= ``cut`` when it is given."""
    if cut is not None:
        found = [item for item in found if item[3].penetration_depth <= cut]
    m = len(found)
    data = np.empty((m, 12))
    for row, (_, _, _, c) in enumerate(found):
        data[row, 0:3] = c.normal
        data[row, 3:9] = c.nearest_points.reshape(6)
        data[row, 9:12] = c.pos
    return ContactColumns(
        pose=np.array([item[0] for item in found], dtype=np.int64),
        leaf1=np.array([item[1] for item in found], dtype=np.int64),
        leaf2=np.array([item[2] for item in found], dtype=np.int64),
        b1=np.array([item[3].b1 for item in found], dtype=np.int64),
        b2=np.array([item[3].b2 for item in found], dtype=np.int64),
        data=data,
        depth=np.array([item[3].penetration_depth for item in found], dtype=np.float64),
    )


# ---------------------------------------------------------------------------------- scenes


def _scene_chunk(job: Job, P: np.ndarray) -> np.ndarray:
    scene, b = job.a, job.b
    if job.kind == "iscollided":
        names = scene.names
        column = {name: j for j, name in enumerate(names)}
        hit = np.zeros((len(P), len(names)), dtype=bool)
        for i, M in enumerate(P):
            b.T = M
            for name in scene.collide(b):
                hit[i, column[name]] = True
        return hit
    d = np.empty(len(P))
    for i, M in enumerate(P):
        b.T = M
        d[i] = scene.distance(b)[0]
    return d


# ------------------------------------------------------------------------------- the chunk


def _prepared(job: Job) -> tuple[_Moving, _Pairs | None]:
    """``b``'s leaves and, unless ``a`` is a scene, the leaf pairs: made for the first chunk
    of ``job`` and kept in it for the others."""
    kept = job.prepared
    if kept and kept[0] is not None:
        return kept[0], kept[1]
    moving = _Moving(job.b)
    pairs = None if job.scene else _Pairs(job.a, moving, job.kind)
    if kept is not None:
        kept[0:2] = [moving, pairs]
    return moving, pairs


def _direct(job: Job) -> DirectCollide | None:
    """The direct path of :func:`~spatialcontact.batch._fast.direct_collide` for ``job``, or
    None: ``iscollided`` of one leaf against one leaf in no group (``b`` never moves, not even
    its Coal transform). Made for the first chunk and kept in the job."""
    kept = job.prepared
    if kept is not None and len(kept) == 3:
        found: DirectCollide | None = kept[2]
        return found
    found = None
    if job.kind == "iscollided" and not job.scene and direct_pair(job.a, job.b):
        found = direct_collide(job.a, job.b)
    if kept is not None:
        kept[:] = [None, None, found]
    return found


def run(job: Job, chunk: np.ndarray) -> Any:
    """Answer ``job`` for one chunk of poses (n, 4, 4) or translations (n, 3) of ``b``.

    Returns
    -------
    ndarray (n,) bool, or (n, objects) bool for a scene
        ``iscollided``.
    ndarray (n,)
        ``distance`` (``inf`` where either side has no collision leaf).
    tuple of ndarray (n,), (n, 3), (n, 3)
        ``closest_point``: ``d``, ``p1``, ``p2``, NaN rows beyond ``inf_dist``.
    ContactColumns
        ``contacts``.
    """
    direct = _direct(job)
    if direct is not None:
        return direct(chunk)
    b = job.b
    # Under the library's lock, which every Scene call takes: no scene sees b's leaves at a
    # pose of the chunk (it would keep the pairs it found there).
    with _state.LOCK, _kept(b, job.scene):
        moving, pairs = _prepared(job)
        if pairs is None:
            return _scene_chunk(job, moving.poses(chunk, job.translations))
        kind = job.kind
        n = len(chunk)
        size = pairs.block(n)
        blocks = [(s, _Block(moving, chunk[s], job.translations)) for s in _blocks(n, size)]
        if kind == "iscollided":
            hit = np.empty(n, dtype=bool)
            for s, block in blocks:
                hit[s] = _collide_block(pairs, block)
            return hit
        if kind == "contacts":
            grouped = job.a._is_group or b._is_group
            margin = job.security_margin
            found: list[tuple[int, int, int, Contact]] = []
            for s, block in blocks:
                rows = _contacts_block(pairs, block, job.max_contacts, max(margin, 0.0), grouped)
                found.extend((i + s.start, ka, kb, c) for i, ka, kb, c in rows)
            return _columns(found, margin if margin < 0.0 else None)
        points = kind == "closest_point"
        limit = job.inf_dist if points else math.inf
        d = np.empty(n)
        p1 = np.empty((n, 3)) if points else None
        p2 = np.empty((n, 3)) if points else None
        for s, block in blocks:
            d[s], q1, q2 = _nearest_block(pairs, block, limit, points)
            if p1 is not None and p2 is not None:
                p1[s], p2[s] = q1, q2
        if not points:
            return d
        assert p1 is not None and p2 is not None
        miss = ~(d <= limit) | np.isinf(d)
        d[miss] = math.nan
        return d, p1, p2


def run_points(a: Any, chunk: np.ndarray) -> np.ndarray:
    """Signed distances (n,) of the world points ``chunk`` (n, 3) to the nearest leaf of
    ``a``, every leaf having a signed distance field (``inf`` for no leaf)."""
    d = np.full(len(chunk), math.inf)
    for leaf in collision_leaves(a):
        sdf = point_form(leaf)
        assert sdf is not None
        W = np.eye(4)
        W[:3, :3] = leaf._tf.getRotation()
        W[:3, 3] = leaf._tf.getTranslation()
        np.minimum(d, sdf(Fixed(W), chunk), out=d)
    return d
