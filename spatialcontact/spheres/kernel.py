"""The compiled sphere kernel: forward kinematics and every sphere test, per configuration.

numba compiles these functions on first use and caches the machine code on disk
(``cache=True``), so a second process loads it instead of compiling. Each function is compiled
for one signature only (float64 and int64 C arrays, as :mod:`spatialcontact.spheres.packing`
builds them). This module imports numba: import it only when the kernel is used.

The answers are codes per configuration or motion: :data:`FREE` (0), :data:`HIT` (1: some
sphere touches another link's sphere or an obstacle; touching counts) and :data:`UNSURE` (2:
no hit, but a sphere touches the bounding box of an obstacle the kernel has no test for, which
Coal then decides). The tests are those of :mod:`spatialcontact.spheres.reference`, which
computes the same answers in numpy.
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
def _fk(
    q: np.ndarray,
    parent: np.ndarray,
    mimic: np.ndarray,
    joints: np.ndarray,
    T: np.ndarray,
    L: np.ndarray,
) -> None:
    """T_base_body of every body into ``T`` (bodies, 12): R row by row, then t (``L``: a
    buffer of 12)."""
    dof = q.shape[0]
    for k in range(12):
        T[0, k] = 0.0
    T[0, 0] = 1.0
    T[0, 4] = 1.0
    T[0, 8] = 1.0
    for b in range(1, parent.shape[0]):
        j = b - 1
        v = mimic[dof, j]
        for i in range(dof):
            v += q[i] * mimic[i, j]
        s = math.sin(v)
        c = 1.0 - math.cos(v)
        for k in range(9):
            L[k] = joints[j, k] + s * joints[j, 9 + k] + c * joints[j, 18 + k]
        for k in range(3):
            L[9 + k] = joints[j, 27 + k] + v * joints[j, 30 + k]
        p = parent[b]
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
def _gap(
    kind: np.ndarray,
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
    """Gap between the sphere (x, y, z, r) and obstacle ``o`` (see packing for ``d``); for a
    cloud, exact below ``cap`` and else ``cap``."""
    k = kind[o]
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
    if k == _HALFSPACE:
        return d[o, 0] * x + d[o, 1] * y + d[o, 2] * z - d[o, 3] - r
    return _cloud_gap(d, o, info, grid, cells, x, y, z, r, cap)


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
    farther than ``cap`` from ``b``'s bounding sphere is skipped."""
    g = cap
    bx, by, bz, br = LC[b, 0], LC[b, 1], LC[b, 2], links[b, 3]
    for i in range(link_start[a], link_start[a + 1]):
        x, y, z, r = C[i, 0], C[i, 1], C[i, 2], spheres[i, 3]
        dx, dy, dz = x - bx, y - by, z - bz
        if math.sqrt(dx * dx + dy * dy + dz * dz) - r - br >= g:
            continue
        for j in range(link_start[b], link_start[b + 1]):
            dx, dy, dz = x - C[j, 0], y - C[j, 1], z - C[j, 2]
            gap = math.sqrt(dx * dx + dy * dy + dz * dz) - r - spheres[j, 3]
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
    _fk(q, parent, mimic, joints, T, L)
    n_links = links.shape[0]
    _place(links, 0, n_links, T, LC)
    for link in range(n_links):
        placed[link] = False
    for p in range(pairs.shape[0]):
        a, b = pairs[p, 0], pairs[p, 1]
        dx, dy, dz = LC[a, 0] - LC[b, 0], LC[a, 1] - LC[b, 1], LC[a, 2] - LC[b, 2]
        if math.sqrt(dx * dx + dy * dy + dz * dz) - links[a, 3] - links[b, 3] > SLACK:
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
            for i in range(link_start[link], link_start[link + 1]):
                g = _gap(kind, data, o, cloud, grid, cells, C[i, 0], C[i, 1], C[i, 2],
                         spheres[i, 3], CAP)  # fmt: skip
                if g <= 0.0:
                    if kind[o] != _OTHER:
                        return HIT
                    unsure = True
                    break
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
    for n in range(Q.shape[0]):
        out[n] = _check(
            Q[n], parent, mimic, joints, spheres, link_start, links, pairs,
            kind, bound, data, cloud, grid, cells, T, L, C, LC, placed,
        )  # fmt: skip
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
    kind: np.ndarray,
    bound: np.ndarray,
    data: np.ndarray,
    cloud: np.ndarray,
    grid: np.ndarray,
    cells: np.ndarray,
) -> np.ndarray:
    """The code of each motion ``Q0[m] -> Q1[m]`` checked at steps of at most
    ``resolution`` in every joint value (both ends included): HIT at the first colliding
    step, else UNSURE if a step was, else FREE."""
    out = np.zeros(Q0.shape[0], dtype=np.int8)
    T = np.empty((parent.shape[0], 12))
    L = np.empty(12)
    C = np.empty((spheres.shape[0], 3))
    LC = np.empty((links.shape[0], 3))
    placed = np.zeros(links.shape[0], dtype=np.bool_)
    dof = Q0.shape[1]
    q = np.empty(dof)
    for m in range(Q0.shape[0]):
        largest = 0.0
        for j in range(mimic.shape[1]):
            dv = 0.0
            for i in range(dof):
                dv += (Q1[m, i] - Q0[m, i]) * mimic[i, j]
            largest = max(largest, abs(dv))
        steps = max(math.ceil(largest / resolution), 1)
        code = FREE
        for s in range(steps + 1):
            t = s / steps
            for i in range(dof):
                q[i] = Q0[m, i] + t * (Q1[m, i] - Q0[m, i])
            c = _check(
                q, parent, mimic, joints, spheres, link_start, links, pairs,
                kind, bound, data, cloud, grid, cells, T, L, C, LC, placed,
            )  # fmt: skip
            if c == HIT:
                code = HIT
                break
            if c == UNSURE:
                code = UNSURE
        out[m] = code
    return out


@njit(cache=True)
def _speeds(
    link: int,
    T: np.ndarray,
    LC: np.ndarray,
    links: np.ndarray,
    axes: np.ndarray,
    chain: np.ndarray,
    dv: np.ndarray,
    D: np.ndarray,
) -> None:
    """How fast link ``link``'s bounding sphere can move now, joint by joint, at the sample
    whose poses are ``T``: ``D[link, j]`` is joint ``j``'s change ``dv[j]`` times the
    sphere's farthest distance from the joint's axis (1 for a prismatic joint)."""
    x, y, z, r = LC[link, 0], LC[link, 1], LC[link, 2], links[link, 3]
    for j in range(axes.shape[0]):
        D[link, j] = 0.0
        if chain[link, j] == 0 or dv[j] == 0.0:
            continue
        if axes[j, 3] != 0.0:  # prismatic: every point moves by the joint's change
            D[link, j] = dv[j]
            continue
        ax = T[j, 0] * axes[j, 0] + T[j, 1] * axes[j, 1] + T[j, 2] * axes[j, 2]
        ay = T[j, 3] * axes[j, 0] + T[j, 4] * axes[j, 1] + T[j, 5] * axes[j, 2]
        az = T[j, 6] * axes[j, 0] + T[j, 7] * axes[j, 1] + T[j, 8] * axes[j, 2]
        px, py, pz = x - T[j, 9], y - T[j, 10], z - T[j, 11]
        cx, cy, cz = py * az - pz * ay, pz * ax - px * az, px * ay - py * ax
        D[link, j] = dv[j] * (math.sqrt(cx * cx + cy * cy + cz * cz) + r)


@njit(cache=True)
def _needed(A: float, B: float, t: float, tolerance: float) -> float:
    """A gap that proves a pair apart from ``t`` past the end of the motion, at speeds
    ``A + B s`` (see :func:`_skip`): larger gaps need not be measured exactly."""
    rest = 1.0 - t
    return 1.001 * (A * rest + 0.5 * B * rest * rest) + 2.0 * tolerance


@njit(cache=True)
def _skip(g: float, A: float, B: float) -> float:
    """How far the motion's parameter can move before a gap ``g`` closes, when the gap
    shrinks at most at ``A + B s`` per unit after a move of ``s``: the root of
    ``A s + B s^2 / 2 = g``."""
    if A <= 0.0 and B <= 0.0:
        return math.inf
    return 2.0 * g / (A + math.sqrt(A * A + 2.0 * B * g))


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

    Every pair (two links, or a link and an obstacle) is proved apart until some time. At a
    sample ``t``, a pair with gap ``g`` whose gap shrinks at most at ``A + B s`` after a move
    of ``s`` is apart until ``t + s`` with ``A s + B s^2 / 2 = g``: ``A`` sums, over the
    joints that move one side relative to the other, each joint's change times the side's
    farthest distance from the joint's axis now, and ``B`` bounds how fast that distance
    grows (the deeper joints' changes times their reach). Each pair keeps the latest time it
    is proved apart until (proofs from successive samples overlap, so their union holds).
    At each sample every pair not yet proved to the end gets the bound of the links'
    bounding spheres; then the pairs that would end the step soonest are measured sphere by
    sphere, until the earliest time is one measured so. The check moves there. HIT when a
    gap is at most ``tolerance`` (touching, or too close to prove), UNSURE when that gap is
    to the box of an obstacle the kernel cannot test, FREE when every pair is proved apart
    past ``t = 1``.
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
    D = np.zeros((n_links, n_bodies))
    W = np.zeros((n_links, n_bodies))
    dof = Q0.shape[1]
    q = np.empty(dof)
    dv = np.zeros(n_bodies)
    until = np.empty(n_keys)
    new = np.empty(n_keys)
    speed = np.empty((n_keys, 2))
    state = np.zeros(n_keys, dtype=np.int8)  # 0: proved to the end, 1: bounded, 2: measured
    for m in range(Q0.shape[0]):
        for j in range(n_bodies - 1):
            v = 0.0
            for i in range(dof):
                v += (Q1[m, i] - Q0[m, i]) * mimic[i, j]
            dv[j + 1] = abs(v)
        for link in range(n_links):  # how fast each distance to a joint's axis can grow
            deeper = 0.0  # the speed the joints after j give the link, at most
            for j in range(n_bodies - 1, -1, -1):
                W[link, j] = dv[j] * deeper * chain[link, j]
                deeper += reach[link, j] * dv[j] * chain[link, j]
        until[:] = 0.0
        t = 0.0
        code = FREE
        while True:
            for i in range(dof):
                q[i] = Q0[m, i] + t * (Q1[m, i] - Q0[m, i])
            _fk(q, parent, mimic, joints, T, L12)
            _place(links, 0, n_links, T, LC)
            for link in range(n_links):
                placed[link] = False
                timed[link] = False
            # The bounds of the links' bounding spheres.
            for k in range(n_keys):
                if until[k] > 1.0:
                    state[k] = 0
                    continue
                state[k] = 1
                if k < n_pairs:
                    a, b = pairs[k, 0], pairs[k, 1]
                else:
                    a, b = divmod(k - n_pairs, n_obstacles)
                if not timed[a]:
                    _speeds(a, T, LC, links, axes, chain, dv, D)
                    timed[a] = True
                A = 0.0
                B = 0.0
                if k < n_pairs:
                    if not timed[b]:
                        _speeds(b, T, LC, links, axes, chain, dv, D)
                        timed[b] = True
                    for j in range(n_bodies):
                        if chain[a, j] != chain[b, j]:
                            A += D[a, j] + D[b, j]
                            B += W[a, j] + W[b, j]
                    dx, dy, dz = LC[a, 0] - LC[b, 0], LC[a, 1] - LC[b, 1], LC[a, 2] - LC[b, 2]
                    g = math.sqrt(dx * dx + dy * dy + dz * dz) - links[a, 3] - links[b, 3]
                else:
                    for j in range(n_bodies):
                        A += D[a, j]
                        B += W[a, j]
                    g = _link_bound(kind, data, bound, b, LC[a, 0], LC[a, 1], LC[a, 2],
                                    links[a, 3])  # fmt: skip
                speed[k, 0] = A
                speed[k, 1] = B
                new[k] = until[k] if g <= tolerance else max(until[k], t + _skip(g, A, B))
            # Measure, sphere by sphere, the pairs that would end the step soonest.
            while True:
                k = -1
                soonest = math.inf
                for i in range(n_keys):
                    if state[i] != 0 and new[i] < soonest:
                        soonest = new[i]
                        k = i
                if k < 0 or state[k] == 2 or soonest > 1.0:
                    break
                state[k] = 2
                A, B = speed[k, 0], speed[k, 1]
                needed = _needed(A, B, t, tolerance)
                if k < n_pairs:
                    a, b = pairs[k, 0], pairs[k, 1]
                    for link in (a, b):
                        if not placed[link]:
                            _place(spheres, link_start[link], link_start[link + 1], T, C)
                            placed[link] = True
                    g = _spheres_apart(C, LC, spheres, links, link_start, a, b, needed,
                                       tolerance)  # fmt: skip
                else:
                    a, b = divmod(k - n_pairs, n_obstacles)
                    if not placed[a]:
                        _place(spheres, link_start[a], link_start[a + 1], T, C)
                        placed[a] = True
                    g = needed
                    for i in range(link_start[a], link_start[a + 1]):
                        gap = _gap(kind, data, b, cloud, grid, cells, C[i, 0], C[i, 1],
                                   C[i, 2], spheres[i, 3], g)  # fmt: skip
                        g = min(g, gap)
                if g <= tolerance:
                    code = UNSURE if k >= n_pairs and kind[b] == _OTHER else HIT
                    break
                new[k] = max(until[k], t + _skip(g, A, B))
            if code != FREE:
                break
            earliest = math.inf
            for k in range(n_keys):
                if state[k] != 0:
                    until[k] = new[k]
                earliest = min(earliest, until[k])
            if earliest > 1.0:
                break  # every pair apart past the end
            t = earliest
        out[m] = code
    return out
