"""The compiled sphere kernel: forward kinematics and every sphere test, per configuration.

numba compiles these functions on first use and caches the machine code on disk
(``cache=True``), so a second process loads it instead of compiling. Each function is compiled
for one signature only (float64 and int64 C arrays, as :mod:`spatialcontact.spheres.packing`
builds them). This module imports numba: import it only when the kernel is used.

The answers are codes per configuration or motion: :data:`FREE` (0), :data:`HIT` (1: some
sphere touches another link's sphere or an obstacle; touching counts) and :data:`UNSURE` (2:
no hit, but a sphere touches the bounding box of an obstacle the kernel has no test for, which
Coal then decides). Self-collision tests take the spheres at their self radii (the radii plus
the links' ``self_collision_buffer``), obstacle tests at their radii. The tests are those of
:mod:`spatialcontact.spheres.reference`, which computes the same answers in numpy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["FREE", "HIT", "UNSURE", "check_many", "motions_bound", "motions_discrete"]

FREE, HIT, UNSURE = 0, 1, 2

SLACK = 1e-9
"""Metres a bounding sphere's gap must exceed before its spheres are skipped."""

CAP = 1e-6
"""Metres: gaps above this are not measured exactly when only touching matters."""

_SPHERE, _BOX, _CAPSULE, _CYLINDER, _HALFSPACE, _CLOUD, _OTHER = range(7)


@njit(cache=True)
def _columns(mimic: np.ndarray) -> np.ndarray:
    """Each moving joint's dof with a nonzero coefficient in ``mimic``: row ``j`` is their
    count, then their indices in order (bodies - 1, dof + 1)."""
    dof = mimic.shape[0] - 1
    out = np.zeros((mimic.shape[1], dof + 1), dtype=np.int64)
    for j in range(mimic.shape[1]):
        for i in range(dof):
            if mimic[i, j] != 0.0:
                out[j, 0] += 1
                out[j, out[j, 0]] = i
    return out


@njit(cache=True)
def _fk(
    q: np.ndarray,
    parent: np.ndarray,
    mimic: np.ndarray,
    columns: np.ndarray,
    joints: np.ndarray,
    T: np.ndarray,
    L: np.ndarray,
) -> None:
    """T_base_body of every body into ``T`` (bodies, 12): R row by row, then t (``L``: a
    buffer of 12; ``columns`` from :func:`_columns`). The zero terms of the joint values and
    of the joints' poses are skipped, which leaves every value as the full sums give it."""
    dof = q.shape[0]
    for k in range(12):
        T[0, k] = 0.0
    T[0, 0] = 1.0
    T[0, 4] = 1.0
    T[0, 8] = 1.0
    for b in range(1, parent.shape[0]):
        j = b - 1
        v = mimic[dof, j]
        for n in range(1, 1 + columns[j, 0]):
            v += q[columns[j, n]] * mimic[columns[j, n], j]
        p = parent[b]
        if joints[j, 30] == 0.0 and joints[j, 31] == 0.0 and joints[j, 32] == 0.0:  # turning
            s = math.sin(v)
            c = 1.0 - math.cos(v)
            for k in range(9):
                L[k] = joints[j, k] + s * joints[j, 9 + k] + c * joints[j, 18 + k]
            for k in range(3):
                L[9 + k] = joints[j, 27 + k]
        else:  # sliding
            for k in range(9):
                L[k] = joints[j, k]
            for k in range(3):
                L[9 + k] = joints[j, 27 + k] + v * joints[j, 30 + k]
        for r in range(3):
            p0, p1, p2 = T[p, 3 * r], T[p, 3 * r + 1], T[p, 3 * r + 2]
            T[b, 3 * r] = p0 * L[0] + p1 * L[3] + p2 * L[6]
            T[b, 3 * r + 1] = p0 * L[1] + p1 * L[4] + p2 * L[7]
            T[b, 3 * r + 2] = p0 * L[2] + p1 * L[5] + p2 * L[8]
            T[b, 9 + r] = p0 * L[9] + p1 * L[10] + p2 * L[11] + T[p, 9 + r]


@njit(cache=True)
def _place(rows: np.ndarray, first: int, last: int, T: np.ndarray, out: np.ndarray) -> None:
    """Centres ``out[first:last]`` (base frame) of ``rows[first:last]`` = ``[x, y, z, r,
    body]``."""
    for i in range(first, last):
        b = int(rows[i, 4])
        x, y, z = rows[i, 0], rows[i, 1], rows[i, 2]
        out[i, 0] = T[b, 0] * x + T[b, 1] * y + T[b, 2] * z + T[b, 9]
        out[i, 1] = T[b, 3] * x + T[b, 4] * y + T[b, 5] * z + T[b, 10]
        out[i, 2] = T[b, 6] * x + T[b, 7] * y + T[b, 8] * z + T[b, 11]


@njit(cache=True)
def _box_gap(d: np.ndarray, o: int, x: float, y: float, z: float, r: float) -> float:
    """Gap between a sphere and the box ``d[o]`` = [R (9), centre (3), half sides (3)]."""
    dx, dy, dz = x - d[o, 9], y - d[o, 10], z - d[o, 11]
    lx = d[o, 0] * dx + d[o, 3] * dy + d[o, 6] * dz
    ly = d[o, 1] * dx + d[o, 4] * dy + d[o, 7] * dz
    lz = d[o, 2] * dx + d[o, 5] * dy + d[o, 8] * dz
    ex = max(abs(lx) - d[o, 12], 0.0)
    ey = max(abs(ly) - d[o, 13], 0.0)
    ez = max(abs(lz) - d[o, 14], 0.0)
    return math.sqrt(ex * ex + ey * ey + ez * ez) - r


@njit(cache=True)
def _cloud_gap(
    d: np.ndarray,
    o: int,
    info: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
    x: float,
    y: float,
    z: float,
    r: float,
    cap: float,
) -> float:
    """Gap between a sphere and cloud ``o``'s cells: exact when below ``cap``, else
    ``cap``."""
    dx, dy, dz = x - d[o, 9], y - d[o, 10], z - d[o, 11]
    lx = d[o, 0] * dx + d[o, 3] * dy + d[o, 6] * dz
    ly = d[o, 1] * dx + d[o, 4] * dy + d[o, 7] * dz
    lz = d[o, 2] * dx + d[o, 5] * dy + d[o, 8] * dz
    step = d[o, 15]
    reach = r + cap + step
    nx, ny, nz = info[o, 0], info[o, 1], info[o, 2]
    i0 = max(math.floor((lx - reach - d[o, 12]) / step), 0)
    i1 = min(math.floor((lx + reach - d[o, 12]) / step), nx - 1)
    j0 = max(math.floor((ly - reach - d[o, 13]) / step), 0)
    j1 = min(math.floor((ly + reach - d[o, 13]) / step), ny - 1)
    k0 = max(math.floor((lz - reach - d[o, 14]) / step), 0)
    k1 = min(math.floor((lz + reach - d[o, 14]) / step), nz - 1)
    best = cap
    g0, c0 = info[o, 3], info[o, 4]
    for i in range(i0, i1 + 1):
        for j in range(j0, j1 + 1):
            for k in range(k0, k1 + 1):
                g = g0 + (i * ny + j) * nz + k
                for m in range(c0 + grid[g], c0 + grid[g + 1]):
                    h = cells[m, 3]
                    ex = max(abs(lx - cells[m, 0]) - h, 0.0)
                    ey = max(abs(ly - cells[m, 1]) - h, 0.0)
                    ez = max(abs(lz - cells[m, 2]) - h, 0.0)
                    gap = math.sqrt(ex * ex + ey * ey + ez * ez) - r
                    if gap < best:
                        best = gap
    return best


@njit(cache=True)
def _shape_gap(k: int, d: np.ndarray, o: int, x: float, y: float, z: float, r: float) -> float:
    """Gap between the sphere (x, y, z, r) and obstacle ``o`` of kind ``k``, any kind but a
    cloud (see packing for ``d``)."""
    if k == _SPHERE:
        dx, dy, dz = x - d[o, 0], y - d[o, 1], z - d[o, 2]
        return math.sqrt(dx * dx + dy * dy + dz * dz) - r - d[o, 3]
    if k == _BOX or k == _OTHER:
        return _box_gap(d, o, x, y, z, r)
    if k == _CAPSULE:
        ux, uy, uz = d[o, 3] - d[o, 0], d[o, 4] - d[o, 1], d[o, 5] - d[o, 2]
        px, py, pz = x - d[o, 0], y - d[o, 1], z - d[o, 2]
        uu = ux * ux + uy * uy + uz * uz
        t = 0.0
        if uu > 0.0:
            t = min(max((px * ux + py * uy + pz * uz) / uu, 0.0), 1.0)
        px -= t * ux
        py -= t * uy
        pz -= t * uz
        return math.sqrt(px * px + py * py + pz * pz) - r - d[o, 6]
    if k == _CYLINDER:
        dx, dy, dz = x - d[o, 9], y - d[o, 10], z - d[o, 11]
        lx = d[o, 0] * dx + d[o, 3] * dy + d[o, 6] * dz
        ly = d[o, 1] * dx + d[o, 4] * dy + d[o, 7] * dz
        lz = d[o, 2] * dx + d[o, 5] * dy + d[o, 8] * dz
        er = max(math.sqrt(lx * lx + ly * ly) - d[o, 12], 0.0)
        ez = max(abs(lz) - d[o, 13], 0.0)
        return math.sqrt(er * er + ez * ez) - r
    return d[o, 0] * x + d[o, 1] * y + d[o, 2] * z - d[o, 3] - r  # a half-space


@njit(cache=True)
def _link_gap(
    kind: np.ndarray,
    d: np.ndarray,
    o: int,
    info: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
    C: np.ndarray,
    spheres: np.ndarray,
    first: int,
    last: int,
    cap: float,
    tolerance: float,
) -> float:
    """The smallest gap between spheres ``first:last`` (centres ``C``, radii ``spheres[:,
    3]``) and obstacle ``o``, exact when below ``cap`` (else ``cap``), and stopping once it
    is at most ``tolerance``. The obstacle's kind is read once: a box's loop is plain."""
    g = cap
    k = kind[o]
    if k == _BOX or k == _OTHER:
        for i in range(first, last):
            g = min(g, _box_gap(d, o, C[i, 0], C[i, 1], C[i, 2], spheres[i, 3]))
            if g <= tolerance:
                return g
    elif k == _CLOUD:
        for i in range(first, last):
            g = min(g, _cloud_gap(d, o, info, grid, cells, C[i, 0], C[i, 1], C[i, 2],
                                  spheres[i, 3], g))  # fmt: skip
            if g <= tolerance:
                return g
    else:
        for i in range(first, last):
            g = min(g, _shape_gap(k, d, o, C[i, 0], C[i, 1], C[i, 2], spheres[i, 3]))
            if g <= tolerance:
                return g
    return g


@njit(cache=True)
def _link_bound(
    kind: np.ndarray,
    d: np.ndarray,
    bound: np.ndarray,
    o: int,
    x: float,
    y: float,
    z: float,
    r: float,
) -> float:
    """A lower bound on the gap between a link's bounding sphere and obstacle ``o``."""
    dx, dy, dz = x - bound[o, 0], y - bound[o, 1], z - bound[o, 2]
    far = math.sqrt(dx * dx + dy * dy + dz * dz) - r - bound[o, 3]
    k = kind[o]
    if far > SLACK or k == _CLOUD or k == _SPHERE or k == _CAPSULE or k == _CYLINDER:
        return far
    if k == _HALFSPACE:
        return d[o, 0] * x + d[o, 1] * y + d[o, 2] * z - d[o, 3] - r
    return _box_gap(d, o, x, y, z, r)


@njit(cache=True)
def _spheres_apart(
    C: np.ndarray,
    LC: np.ndarray,
    spheres: np.ndarray,
    links: np.ndarray,
    link_start: np.ndarray,
    a: int,
    b: int,
    cap: float,
    tolerance: float,
) -> float:
    """The smallest gap between the spheres of links ``a`` and ``b``, exact when below
    ``cap`` (else ``cap``), and stopping once it is at most ``tolerance``. A sphere of ``a``
    farther than ``cap`` from ``b``'s bounding sphere is skipped. Self radii (column 5)."""
    g = cap
    bx, by, bz, br = LC[b, 0], LC[b, 1], LC[b, 2], links[b, 5]
    for i in range(link_start[a], link_start[a + 1]):
        x, y, z, r = C[i, 0], C[i, 1], C[i, 2], spheres[i, 5]
        dx, dy, dz = x - bx, y - by, z - bz
        if math.sqrt(dx * dx + dy * dy + dz * dz) - r - br >= g:
            continue
        for j in range(link_start[b], link_start[b + 1]):
            dx, dy, dz = x - C[j, 0], y - C[j, 1], z - C[j, 2]
            gap = math.sqrt(dx * dx + dy * dy + dz * dz) - r - spheres[j, 5]
            if gap < g:
                g = gap
                if g <= tolerance:
                    return g
    return g


@njit(cache=True)
def _check(
    q: np.ndarray,
    parent: np.ndarray,
    mimic: np.ndarray,
    columns: np.ndarray,
    joints: np.ndarray,
    spheres: np.ndarray,
    link_start: np.ndarray,
    links: np.ndarray,
    pairs: np.ndarray,
    kind: np.ndarray,
    bound: np.ndarray,
    data: np.ndarray,
    cloud: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
    T: np.ndarray,
    L: np.ndarray,
    C: np.ndarray,
    LC: np.ndarray,
    placed: np.ndarray,
) -> int:
    """The code of one configuration."""
    _fk(q, parent, mimic, columns, joints, T, L)
    n_links = links.shape[0]
    _place(links, 0, n_links, T, LC)
    for link in range(n_links):
        placed[link] = False
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        dx, dy, dz = LC[a, 0] - LC[b, 0], LC[a, 1] - LC[b, 1], LC[a, 2] - LC[b, 2]
        if math.sqrt(dx * dx + dy * dy + dz * dz) - links[a, 5] - links[b, 5] > SLACK:
            continue
        for link in (a, b):
            if not placed[link]:
                _place(spheres, link_start[link], link_start[link + 1], T, C)
                placed[link] = True
        if _spheres_apart(C, LC, spheres, links, link_start, a, b, CAP, 0.0) <= 0.0:
            return HIT
    unsure = False
    for link in range(n_links):
        x, y, z, r = LC[link, 0], LC[link, 1], LC[link, 2], links[link, 3]
        for o in range(kind.shape[0]):
            if unsure and kind[o] == _OTHER:
                continue
            if _link_bound(kind, data, bound, o, x, y, z, r) > SLACK:
                continue
            if not placed[link]:
                _place(spheres, link_start[link], link_start[link + 1], T, C)
                placed[link] = True
            g = _link_gap(kind, data, o, cloud, grid, cells, C, spheres, link_start[link],
                          link_start[link + 1], CAP, 0.0)  # fmt: skip
            if g <= 0.0:
                if kind[o] != _OTHER:
                    return HIT
                unsure = True
    return UNSURE if unsure else FREE


@njit(cache=True)
def check_many(
    Q: np.ndarray,
    parent: np.ndarray,
    mimic: np.ndarray,
    joints: np.ndarray,
    spheres: np.ndarray,
    link_start: np.ndarray,
    links: np.ndarray,
    pairs: np.ndarray,
    kind: np.ndarray,
    bound: np.ndarray,
    data: np.ndarray,
    cloud: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
) -> np.ndarray:
    """The code (int8) of each configuration of ``Q`` (N, dof)."""
    out = np.zeros(Q.shape[0], dtype=np.int8)
    T = np.empty((parent.shape[0], 12))
    L = np.empty(12)
    C = np.empty((spheres.shape[0], 3))
    LC = np.empty((links.shape[0], 3))
    placed = np.zeros(links.shape[0], dtype=np.bool_)
    columns = _columns(mimic)
    for n in range(Q.shape[0]):
        out[n] = _check(
            Q[n], parent, mimic, columns, joints, spheres, link_start, links, pairs,
            kind, bound, data, cloud, grid, cells, T, L, C, LC, placed,
        )  # fmt: skip
    return out


MAX_DEPTH = 60
"""Halvings of a motion (``method="bound"``) after which a pair still not proved apart
counts as a hit: only a motion that grazes something, with a tolerance far below the
rounding of its gaps, gets there."""

MAX_PIECES = 32
"""The most pieces a motion is first cut into."""

STACK = MAX_PIECES + 66
"""Intervals a motion check keeps at once: the first pieces, and a path down from one of
them (enough for any count of discrete steps an int64 holds, and for :data:`MAX_DEPTH`
halvings)."""

PIECE = 0.35
"""Radians (or metres): a motion is first cut into pieces of at most this change in every
joint value, each checked as a whole first (the middle of a longer piece proves too
little to be worth checking)."""

GROW = 1.0 + 1e-9
"""The factor enlarging a bound on how much a gap can shrink, against rounding."""


@njit(cache=True)
def _axes(T: np.ndarray, axes: np.ndarray, dv: np.ndarray, AX: np.ndarray) -> None:
    """Each moving joint's axis in the base frame, at the sample whose poses are ``T``, into
    ``AX`` (bodies, 3)."""
    for j in range(axes.shape[0]):
        if dv[j] != 0.0:
            AX[j, 0] = T[j, 0] * axes[j, 0] + T[j, 1] * axes[j, 1] + T[j, 2] * axes[j, 2]
            AX[j, 1] = T[j, 3] * axes[j, 0] + T[j, 4] * axes[j, 1] + T[j, 5] * axes[j, 2]
            AX[j, 2] = T[j, 6] * axes[j, 0] + T[j, 7] * axes[j, 1] + T[j, 8] * axes[j, 2]


@njit(cache=True)
def _speeds(
    link: int,
    T: np.ndarray,
    LC: np.ndarray,
    links: np.ndarray,
    axes: np.ndarray,
    AX: np.ndarray,
    chain: np.ndarray,
    dv: np.ndarray,
    sdv: np.ndarray,
    D: np.ndarray,
    V: np.ndarray,
) -> float:
    """How fast link ``link``'s bounding sphere can move now, at the sample whose poses are
    ``T`` (and axes ``AX``, from :func:`_axes`), per unit of the motion's parameter.

    ``D[link, j]`` is joint ``j``'s change ``dv[j]`` times the sphere's farthest distance
    from the joint's axis (1 for a prismatic joint); returns their sum. ``V[link]`` is the
    speed itself, bounded at once: the centre's speed plus the link's turning rate times
    the radius, from the joints' signed changes ``sdv``.
    """
    x, y, z = LC[link, 0], LC[link, 1], LC[link, 2]
    r = max(links[link, 3], links[link, 5])  # the farther of its scene and self spheres
    total = 0.0
    vx = vy = vz = wx = wy = wz = 0.0
    for j in range(axes.shape[0]):
        D[link, j] = 0.0
        if chain[link, j] == 0 or dv[j] == 0.0:
            continue
        ax, ay, az = AX[j, 0], AX[j, 1], AX[j, 2]
        if axes[j, 3] != 0.0:  # prismatic: every point moves by the joint's change
            D[link, j] = dv[j]
            vx += sdv[j] * ax
            vy += sdv[j] * ay
            vz += sdv[j] * az
        else:
            px, py, pz = x - T[j, 9], y - T[j, 10], z - T[j, 11]
            cx, cy, cz = ay * pz - az * py, az * px - ax * pz, ax * py - ay * px
            D[link, j] = dv[j] * (math.sqrt(cx * cx + cy * cy + cz * cz) + r)
            vx += sdv[j] * cx
            vy += sdv[j] * cy
            vz += sdv[j] * cz
            wx += sdv[j] * ax
            wy += sdv[j] * ay
            wz += sdv[j] * az
        total += D[link, j]
    V[link] = math.sqrt(vx * vx + vy * vy + vz * vz) + r * math.sqrt(wx * wx + wy * wy + wz * wz)
    return total


@njit(cache=True)
def _limit(A: float, B: float, A2: float, B2: float, h: float) -> float:
    """A gap above this proves a pair apart within ``h`` either way, when its gap shrinks at
    most at ``A + B s`` after a move of ``s``, and also at most at ``A2 + B2 s``."""
    return GROW * min(A * h + 0.5 * B * h * h, A2 * h + 0.5 * B2 * h * h) + SLACK


@njit(cache=True)
def _skip(g: float, A: float, B: float) -> float:
    """How far the motion's parameter can move (either way) before a gap ``g`` closes,
    when the gap shrinks at most at ``A + B s`` after a move of ``s``: the root of
    ``GROW (A s + B s^2 / 2) + SLACK = g``, less a part in 10^9."""
    g = (g - SLACK) / GROW
    if g <= 0.0:
        return 0.0
    if A <= 0.0 and B <= 0.0:
        return math.inf
    return (1.0 - 1e-9) * 2.0 * g / (A + math.sqrt(A * A + 2.0 * B * g))


@njit(cache=True)
def _skips(g: float, A: float, B: float, A2: float, B2: float, S: float) -> float:
    """The farthest of :func:`_skip` by the three bounds on how fast a gap ``g`` shrinks:
    ``A + B s``, ``A2 + B2 s`` and ``S``."""
    return max(_skip(g, A, B), _skip(g, A2, B2), _skip(g, S, 0.0))


@njit(cache=True)
def _box_gap3(lo: np.ndarray, hi: np.ndarray, x: float, y: float, z: float, r: float) -> float:
    """Gap between the sphere (x, y, z, r) and the axis-aligned box ``lo`` to ``hi`` (3)."""
    ex = max(lo[0] - x, x - hi[0], 0.0)
    ey = max(lo[1] - y, y - hi[1], 0.0)
    ez = max(lo[2] - z, z - hi[2], 0.0)
    return math.sqrt(ex * ex + ey * ey + ez * ez) - r


@njit(cache=True)
def _motions(
    Q0: np.ndarray,
    Q1: np.ndarray,
    resolution: float,
    tolerance: float,
    parent: np.ndarray,
    mimic: np.ndarray,
    joints: np.ndarray,
    spheres: np.ndarray,
    link_start: np.ndarray,
    links: np.ndarray,
    pairs: np.ndarray,
    reach: np.ndarray,
    chain: np.ndarray,
    span: np.ndarray,
    axes: np.ndarray,
    kind: np.ndarray,
    bound: np.ndarray,
    data: np.ndarray,
    cloud: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
) -> np.ndarray:
    """The code of each motion ``Q0[m] -> Q1[m]``: by halving (``resolution`` 0, see
    :func:`motions_bound`) or over the steps of at most ``resolution`` (see
    :func:`motions_discrete`, with ``tolerance`` 0).

    A motion is a stack of intervals of its parameter, each with the pairs (two links, or a
    link and an obstacle) not yet proved apart on it; the first are the pieces of ``[0, 1]``
    (or of the steps ``0 ... n``) of at most :data:`PIECE` in every joint value, with every
    pair. An interval is checked at its middle ``t`` (the middle
    step), ``h`` from its ends. A pair's gap shrinks at most at ``A + B s`` after a move of
    ``s`` either way (see :func:`motions_bound`), so a gap above ``A h + B h^2 / 2`` proves
    the pair apart on the whole interval: a link's bounding sphere, grown by its own limit
    (the first bound on its speed, ``S h``, then the better of all three), is tried first
    against the box around every obstacle's bounding sphere, then the bounding spheres' gap
    (a box's own, for a box), then the pair's spheres are measured. A step proved apart is
    a step whose test would find it apart, so the steps' answers are those of testing every
    step. A measured gap at most ``tolerance`` ends the motion
    (HIT; UNSURE for an obstacle the kernel cannot test, whose pairs are then dropped).
    Every pair left is proved apart within some ``r`` of ``t`` (its gap's root of the
    bound); the pairs left are passed to the rest of the interval on either side, past the
    smallest ``r`` (the steps farther than it from the middle one).

    Every buffer is allocated once per call, and every per-model constant (the joints'
    nonzero coefficients, each key's links and the joints between a pair) once per call
    too: a batch of motions is one call.
    """
    out = np.zeros(Q0.shape[0], dtype=np.int8)
    n_links = links.shape[0]
    n_bodies = parent.shape[0]
    n_pairs = pairs.shape[0]
    n_obstacles = kind.shape[0]
    n_keys = n_pairs + n_links * n_obstacles
    T = np.empty((n_bodies, 12))
    L12 = np.empty(12)
    C = np.empty((spheres.shape[0], 3))
    LC = np.empty((n_links, 3))
    placed = np.zeros(n_links, dtype=np.bool_)
    timed = np.zeros(n_links, dtype=np.bool_)
    limited = np.zeros(n_links, dtype=np.bool_)
    D = np.zeros((n_links, n_bodies))
    W = np.zeros((n_links, n_bodies))
    AX = np.zeros((n_bodies, 3))
    A_link = np.zeros(n_links)
    B_link = np.zeros(n_links)
    B_pair = np.zeros(n_pairs)
    S_link = np.zeros(n_links)  # how fast anything can move each link's sphere, at most
    S_pair = np.zeros(n_pairs)  # and one of a pair's spheres relative to the other
    V_link = np.zeros(n_links)
    P_link = np.zeros(n_links)
    dof = Q0.shape[1]
    q = np.empty(dof)
    dv = np.zeros(n_bodies)
    sdv = np.zeros(n_bodies)
    after = np.zeros(n_bodies)  # the speed the joints from j on give a link, at most
    limit_link = np.zeros(n_links)  # a link's limit against obstacles, this interval
    clear = np.zeros(n_links, dtype=np.bool_)  # beyond the limit from every obstacle
    # The box around every obstacle's bounding sphere (none with a half-space).
    box_lo = np.full(3, math.inf)
    box_hi = np.full(3, -math.inf)
    for o in range(n_obstacles):
        for i in range(3):
            box_lo[i] = min(box_lo[i], bound[o, i] - bound[o, 3])
            box_hi[i] = max(box_hi[i], bound[o, i] + bound[o, 3])
    boxed = n_obstacles > 0 and math.isfinite(box_lo.sum() + box_hi.sum())
    key_link = np.empty(n_keys, dtype=np.int64)  # each key's links, or link and obstacle
    key_other = np.empty(n_keys, dtype=np.int64)
    between = np.zeros((n_pairs, n_bodies + 1), dtype=np.int64)  # joints moving b from a
    for k in range(n_keys):
        if k < n_pairs:
            key_link[k], key_other[k] = pairs[k, 0], pairs[k, 1]
            for j in range(n_bodies):
                if chain[pairs[k, 0], j] != chain[pairs[k, 1], j]:
                    between[k, 1 + between[k, 0]] = j
                    between[k, 0] += 1
        else:
            key_link[k], key_other[k] = divmod(k - n_pairs, n_obstacles)
    keys = np.empty((STACK + 1) * n_keys, dtype=np.int64)
    lo = np.empty(STACK)
    hi = np.empty(STACK)
    level = np.empty(STACK, dtype=np.int64)
    first = np.empty(STACK, dtype=np.int64)
    count = np.empty(STACK, dtype=np.int64)
    discrete = resolution > 0.0
    columns = _columns(mimic)
    for m in range(Q0.shape[0]):
        largest = 0.0
        for j in range(n_bodies - 1):
            v = 0.0
            for i in range(dof):
                v += (Q1[m, i] - Q0[m, i]) * mimic[i, j]
            dv[j + 1] = abs(v)
            sdv[j + 1] = v
            largest = max(largest, abs(v))
        for link in range(n_links):  # how fast each distance to a joint's axis can grow
            deeper = 0.0  # the speed the joints after j give the link, at most
            total = 0.0
            for j in range(n_bodies - 1, -1, -1):
                W[link, j] = dv[j] * deeper * chain[link, j]
                total += W[link, j]
                deeper += reach[link, j] * dv[j] * chain[link, j]
                after[j] = deeper
            B_link[link] = total
            S_link[link] = deeper
            # How fast a point's speed can change: each joint's change times how fast its
            # axis turns (the joints before it) times the point's distance from the joint's
            # origin, twice, plus the point's speed from the joint on.
            total = 0.0
            before = 0.0
            for j in range(n_bodies):
                if chain[link, j] == 0:
                    continue
                if axes[j, 3] != 0.0:
                    total += dv[j] * before
                else:
                    total += dv[j] * (2.0 * before * span[link, j] + after[j])
                before += dv[j]
            P_link[link] = total
        for p in range(n_pairs):
            a, b = pairs[p, 0], pairs[p, 1]
            total = 0.0
            for i in range(1, 1 + between[p, 0]):
                total += W[a, between[p, i]] + W[b, between[p, i]]
            B_pair[p] = total
            total = 0.0
            for i in range(1, 1 + between[p, 0]):
                j = between[p, i]
                total += dv[j] * (reach[a, j] + reach[b, j])
            S_pair[p] = total
        steps = max(math.ceil(largest / resolution), 1) if discrete else 1
        for k in range(n_keys):
            keys[k] = k
        # The first intervals: pieces of at most PIECE in every joint value, last on top.
        pieces = min(max(math.ceil(largest / PIECE), 1), MAX_PIECES)
        if discrete:
            pieces = min(pieces, steps + 1)
        top = 0
        for piece in range(pieces - 1, -1, -1):
            if discrete:
                lo[top] = float(((steps + 1) * piece) // pieces)
                hi[top] = float(((steps + 1) * (piece + 1)) // pieces - 1)
            else:
                lo[top], hi[top] = piece / pieces, (piece + 1) / pieces
            level[top], first[top], count[top] = 0, 0, n_keys
            top += 1
        code = FREE
        unsure = False
        while top > 0:
            top -= 1
            t0, t1, depth, start, n = lo[top], hi[top], level[top], first[top], count[top]
            s = (int(t0) + int(t1)) // 2
            if discrete:
                t = s / steps
                h = max(s - t0, t1 - s) / steps
            else:
                t = 0.5 * (t0 + t1)
                h = 0.5 * (t1 - t0)
            for i in range(dof):
                q[i] = Q0[m, i] + t * (Q1[m, i] - Q0[m, i])
            _fk(q, parent, mimic, columns, joints, T, L12)
            _axes(T, axes, dv, AX)
            _place(links, 0, n_links, T, LC)
            for link in range(n_links):
                placed[link] = False
                timed[link] = False
                limited[link] = False
            kept = start + n  # the pairs left go after this interval's
            end = kept
            proved = math.inf  # every pair left is apart within this of t
            for e in range(start, end):
                k = keys[e]
                a, o = key_link[k], key_other[k]
                if k < n_pairs:
                    b = o
                    S = S_pair[k]
                    limit = GROW * S * h + SLACK
                    dx, dy, dz = LC[a, 0] - LC[b, 0], LC[a, 1] - LC[b, 1], LC[a, 2] - LC[b, 2]
                    g = math.sqrt(dx * dx + dy * dy + dz * dz) - links[a, 5] - links[b, 5]
                    if g > limit:
                        continue
                    for link in (a, b):
                        if not timed[link]:
                            A_link[link] = _speeds(
                                link, T, LC, links, axes, AX, chain, dv, sdv, D, V_link
                            )
                            timed[link] = True
                    A = 0.0
                    for i in range(1, 1 + between[k, 0]):
                        A += D[a, between[k, i]] + D[b, between[k, i]]
                    B = B_pair[k]
                    A2, B2 = V_link[a] + V_link[b], P_link[a] + P_link[b]
                    limit = min(limit, _limit(A, B, A2, B2, h))
                    if g > limit:
                        continue
                    if not discrete and g + 2.0 * (links[a, 5] + links[b, 5]) < limit:
                        keys[kept] = k  # no sphere's gap could prove the pair apart here
                        kept += 1
                        proved = min(proved, _skips(g, A, B, A2, B2, S))
                        continue
                    for link in (a, b):
                        if not placed[link]:
                            _place(spheres, link_start[link], link_start[link + 1], T, C)
                            placed[link] = True
                    g = _spheres_apart(C, LC, spheres, links, link_start, a, b,
                                       max(limit, 2.0 * tolerance), tolerance)  # fmt: skip
                else:
                    if unsure and kind[o] == _OTHER:
                        continue
                    x, y, z, r = LC[a, 0], LC[a, 1], LC[a, 2], links[a, 3]
                    S = S_link[a]
                    if not limited[a]:  # the link's limit, and whether it clears every obstacle
                        limited[a] = True
                        limit = GROW * S * h + SLACK
                        clear[a] = boxed and _box_gap3(box_lo, box_hi, x, y, z, r) > limit
                        if not clear[a]:
                            if not timed[a]:
                                A_link[a] = _speeds(
                                    a, T, LC, links, axes, AX, chain, dv, sdv, D, V_link
                                )
                                timed[a] = True
                            limit = min(limit, _limit(A_link[a], B_link[a], V_link[a],
                                                      P_link[a], h))  # fmt: skip
                            clear[a] = boxed and _box_gap3(box_lo, box_hi, x, y, z, r) > limit
                        limit_link[a] = limit
                    if clear[a]:
                        continue
                    A, B, A2, B2 = A_link[a], B_link[a], V_link[a], P_link[a]
                    limit = limit_link[a]
                    ko = kind[o]
                    if ko == _BOX or ko == _OTHER:
                        g = _box_gap(data, o, x, y, z, r)
                        if g > limit:
                            continue
                    else:
                        dx, dy, dz = x - bound[o, 0], y - bound[o, 1], z - bound[o, 2]
                        g = math.sqrt(dx * dx + dy * dy + dz * dz) - r - bound[o, 3]
                        if g > limit:
                            continue
                        if ko != _CLOUD:  # the bounding sphere's own gap, a closer bound
                            g = max(g, _shape_gap(ko, data, o, x, y, z, r))
                            if g > limit:
                                continue
                    if not discrete and g + 2.0 * links[a, 3] < limit:
                        keys[kept] = k  # no sphere's gap could prove the pair apart here
                        kept += 1
                        proved = min(proved, _skips(g, A, B, A2, B2, S))
                        continue
                    if not placed[a]:
                        _place(spheres, link_start[a], link_start[a + 1], T, C)
                        placed[a] = True
                    g = _link_gap(kind, data, o, cloud, grid, cells, C, spheres, link_start[a],
                                  link_start[a + 1], max(limit, 2.0 * tolerance),
                                  tolerance)  # fmt: skip
                if g <= tolerance:
                    if k >= n_pairs and kind[o] == _OTHER:
                        unsure = True
                        continue
                    code = HIT
                    break
                if g < limit:  # (a gap of limit or more is measured as limit)
                    keys[kept] = k
                    kept += 1
                    proved = min(proved, _skips(g, A, B, A2, B2, S))
            if code == HIT:
                break
            if kept == end:
                continue
            if not discrete and depth == MAX_DEPTH:
                code = HIT
                break
            if discrete:
                near = math.floor(proved * steps)
                halves = ((s + near + 1.0, t1), (t0, s - near - 1.0))
            else:
                halves = ((t + proved, t1), (t0, t - proved))
            for a_lo, a_hi in halves:
                if a_lo <= a_hi:
                    lo[top], hi[top], level[top] = a_lo, a_hi, depth + 1
                    first[top], count[top] = end, kept - end
                    top += 1
        out[m] = UNSURE if code == FREE and unsure else code
    return out


@njit(cache=True)
def motions_discrete(
    Q0: np.ndarray,
    Q1: np.ndarray,
    resolution: float,
    parent: np.ndarray,
    mimic: np.ndarray,
    joints: np.ndarray,
    spheres: np.ndarray,
    link_start: np.ndarray,
    links: np.ndarray,
    pairs: np.ndarray,
    reach: np.ndarray,
    chain: np.ndarray,
    span: np.ndarray,
    axes: np.ndarray,
    kind: np.ndarray,
    bound: np.ndarray,
    data: np.ndarray,
    cloud: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
) -> np.ndarray:
    """The code of each motion ``Q0[m] -> Q1[m]`` checked at steps of at most
    ``resolution`` in every joint value (both ends included): HIT if a step is, else UNSURE
    if a step is, else FREE; the answers of :func:`check_many` on the steps.

    The steps are taken in halving order, and a pair whose gap at a step proves it apart
    over a run of steps around it (see :func:`_motions`) is not tested on them."""
    return _motions(
        Q0, Q1, resolution, 0.0, parent, mimic, joints, spheres, link_start, links, pairs,
        reach, chain, span, axes, kind, bound, data, cloud, grid, cells,
    )  # fmt: skip


@njit(cache=True)
def motions_bound(
    Q0: np.ndarray,
    Q1: np.ndarray,
    tolerance: float,
    parent: np.ndarray,
    mimic: np.ndarray,
    joints: np.ndarray,
    spheres: np.ndarray,
    link_start: np.ndarray,
    links: np.ndarray,
    pairs: np.ndarray,
    reach: np.ndarray,
    chain: np.ndarray,
    span: np.ndarray,
    axes: np.ndarray,
    kind: np.ndarray,
    bound: np.ndarray,
    data: np.ndarray,
    cloud: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
) -> np.ndarray:
    """The code of each motion ``Q0[m] -> Q1[m]`` by safe skips (see the model's
    ``check_motions``).

    At a configuration on the motion, a pair (two links, or a link and an obstacle) with gap
    ``g`` whose gap shrinks at most at ``A + B s`` after the motion's parameter moves by
    ``s`` (either way) is apart while ``A s + B s^2 / 2 < g``: ``A`` sums, over the joints
    that move one side relative to the other, each joint's change times the side's farthest
    distance from the joint's axis there, and ``B`` bounds how fast that distance grows (the
    deeper joints' changes times their reach). Two more bounds hold, and the best of the
    three is taken: ``A`` the speed of the link's bounding sphere there (its centre's
    speed plus its turning rate times its radius; for two links, the sum of theirs) and
    ``B`` a bound on how fast a point's speed can change anywhere on the motion (each
    joint's change times twice the turning rate of its axis times the point's distance from
    the joint, :attr:`~spatialcontact.spheres.packing.Robot.span`, plus the speed the joints
    from it on give the point). A third holds everywhere on the motion, with ``B`` 0: ``A``
    the robot issue's safe-skip bound ``S``, the sum over the same joints of each joint's
    change times the side's reach from its axis in any configuration
    (:attr:`~spatialcontact.spheres.packing.Robot.reach`); it costs nothing at a
    configuration, so it is tried first. The motion is split until every pair is proved
    apart on every piece (see :func:`_motions`): FREE. HIT when a gap is at most
    ``tolerance`` (touching, or too close to prove) or a pair is still unproved after
    :data:`MAX_DEPTH` halvings; else UNSURE when a gap to the box of an obstacle the kernel
    cannot test was.
    """
    return _motions(
        Q0, Q1, 0.0, tolerance, parent, mimic, joints, spheres, link_start, links, pairs,
        reach, chain, span, axes, kind, bound, data, cloud, grid, cells,
    )  # fmt: skip
