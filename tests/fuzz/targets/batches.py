"""The batch functions: pose batches of bad shapes and dtypes, hostile chunking and executors;
answers equal to the shape queries pose by pose."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import spatialcontact as sc
from spatialcontact import batch

from .. import values as V
from ..core import Case, close, target
from .common import r, trans, zoo

KINDS = ("sphere", "box", "capsule", "cylinder", "hull", "mesh", "halfspace", "ellipsoid")


def poses_pick(rng: np.random.Generator) -> V.Pick:
    """A pose batch: (N, 4, 4) rigid or (N, 3) translations are valid."""
    n = int(rng.integers(0, 6))
    P = np.stack([V.rigid(rng, 1.5) for _ in range(n)]) if n else np.zeros((0, 4, 4))
    t = rng.uniform(-1.5, 1.5, (n, 3))
    options: list[tuple[Any, str]] = [
        (P, "answer"),
        (t, "answer"),
        (P.tolist(), "answer" if n else "either"),
        (t.tolist(), "answer" if n else "either"),
        (P.astype(np.float32), "either"),
        (t.astype(int), "answer"),
        (np.zeros((0, 4, 4)), "answer"),
        (P[:, :3] if n else np.zeros((0, 3, 4)), "error"),
        (P.reshape(-1, 16), "error"),
        (t[:, :2], "error"),
        (P.astype(object), "error"),
        (t.astype(complex), "error"),
        (P.astype(bool), "error"),
        (t.astype(str), "error"),
        (np.ma.masked_array(t), "error"),
        ("poses", "error"),
        (None, "error"),
        (5.0, "error"),
        (P[0] if n else np.eye(4), "either"),
    ]
    if n:
        for bad in (math.nan, math.inf):
            broken = P.copy()
            broken[-1, 1, 3] = bad
            options.append((broken, "error"))
            bt = t.copy()
            bt[0, 0] = bad
            options.append((bt, "error"))
        scaled = P.copy()
        scaled[0, :3, :3] *= 3.0
        options.append((scaled, "error"))
        mirrored = P.copy()
        mirrored[0, :3, 0] *= -1.0
        options.append((mirrored, "error"))
        far = t.copy()
        far[0] = 1e7
        options.append((far, "error"))
    value, expect = options[int(rng.integers(len(options)))]
    if expect == "error" and isinstance(value, np.ndarray) and value.size == 0 and value.ndim <= 3:
        expect = "either"  # an empty batch of any shape is read as no poses
    try:
        number = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        number = None
    return V.Pick(value, expect, number)


def _as_poses(number: np.ndarray, b: Any) -> np.ndarray:
    """The poses of ``b`` a batch stands for: translations keep ``b``'s rotation."""
    if number.ndim == 2 and number.shape[1] == 3:
        P = np.repeat(b.T[None], len(number), axis=0)
        P[:, :3, 3] = number
        return P
    return number.reshape(-1, 4, 4)


def _one_by_one(a: Any, b: Any, P: np.ndarray, what: str, **kwargs: Any) -> list[Any]:
    """The shape query at each pose of ``b`` in turn (``b`` put back after)."""
    keep = b.T.copy()
    out = []
    try:
        for T in P:
            b.T = T
            out.append(getattr(a, what)(b, **kwargs))
    finally:
        b.T = keep
    return out


@target(
    "batch queries",
    covers=[
        "spatialcontact.batch:iscollided",
        "spatialcontact.batch:distance",
        "spatialcontact.batch:closest_point",
        "spatialcontact.batch:contacts",
        "spatialcontact.batch:iter_iscollided",
        "spatialcontact.batch:iter_distance",
        "spatialcontact.batch:iter_closest_point",
        "spatialcontact.batch:iter_contacts",
        "BatchContacts",
        "BatchContacts.of_pose",
        "BatchContacts.to_contacts",
    ],
    weight=6,
)
def queries(rng: np.random.Generator, env: Any) -> Case:
    a, b = zoo(rng, KINDS), zoo(rng, KINDS[:6])
    what = ("iscollided", "distance", "closest_point", "contacts")[int(rng.integers(4))]
    iterate = rng.random() < 0.25
    pick = poses_pick(rng)
    kwargs: dict[str, Any] = {}
    param: Any = "poses"
    value: Any = pick.value
    expect = pick.expect
    if isinstance(a, sc.HalfSpace) and what in ("distance", "closest_point") and False:
        pass
    if rng.random() < 0.3:
        key = (
            "chunk_size",
            "check",
            "progress",
            "inf_dist",
            "max_contacts",
            "security_margin",
            "executor",
        )[int(rng.integers(7))]
        if (key == "inf_dist" and what != "closest_point") or (
            key in ("max_contacts", "security_margin") and what != "contacts"
        ):
            key = "chunk_size"
        if key == "chunk_size":
            kp = V.integer(rng, 1)
            if kp.value is None:
                kp = V.Pick(None, "answer")
        elif key in ("check", "progress"):
            kp = V.flag(rng)
            if key == "progress" and kp.expect == "answer" and bool(kp.value):
                kp = V.Pick(False, "answer", False)  # no progress bars in the fuzz log
        elif key == "inf_dist":
            kp = V.real(rng, lambda x: not math.isnan(x), V.uniform(-1.0, 3.0))
        elif key == "max_contacts":
            kp = V.integer(rng, 1)
        elif key == "security_margin":
            kp = V.real(rng, V.in_range(-1e6, 1e6), V.uniform(-0.5, 0.5))
        else:
            kp = V.Pick([5, "pool", object()][int(rng.integers(3))], "error")
        kwargs[key] = kp.value
        P = np.stack([V.rigid(rng, 1.5) for _ in range(3)])
        pick = V.Pick(P, "answer", P)
        value, param, expect = kp.value, key, kp.expect
    function = getattr(batch, ("iter_" if iterate else "") + what)

    def call() -> Any:
        out = function(a, b, pick.value, **kwargs)
        if not iterate:
            return out
        chunks = list(out)
        return chunks

    def check(result: Any) -> None:
        P = _as_poses(np.asarray(pick.number, dtype=float), b)
        qkw: dict[str, Any] = {}
        if "inf_dist" in kwargs:
            qkw["inf_dist"] = kwargs["inf_dist"]
        if what == "contacts":
            qkw = {k: kwargs[k] for k in ("max_contacts", "security_margin") if k in kwargs}
        want = _one_by_one(a, b, P, what, **qkw)
        if iterate:
            if not result:
                assert len(P) == 0, "no chunks for a non-empty batch"
                return
            starts = [s for s, _ in result]
            assert starts[0] == 0 and starts == sorted(starts), f"chunk starts {starts}"
            if what == "closest_point":
                parts = [c for _, c in result]
                result = tuple(np.concatenate([p[i] for p in parts]) for i in range(3))
            elif what == "contacts":
                # each chunk's records hold rows of the whole batch (zero outside the chunk)
                counts = np.sum([c.counts for _, c in result], axis=0)
                assert len(counts) == len(P)
                for i, w in enumerate(want):
                    assert counts[i] == len(w), f"pose {i}: {counts[i]} contacts, query {len(w)}"
                return
            else:
                result = np.concatenate([c for _, c in result])
        if what == "iscollided":
            assert result.shape == (len(P),) and result.dtype == bool
            d = _one_by_one(a, b, P, "distance")
            for i, (got, w) in enumerate(zip(result, want, strict=True)):
                if abs(d[i]) > 1e-6:
                    assert got == w, f"pose {i}: batch {got}, query {w} (d = {d[i]})"
        elif what == "distance":
            for i, (got, w) in enumerate(zip(result, want, strict=True)):
                close(float(got), w, 1e-6, f"pose {i} distance")
        elif what == "closest_point":
            d = result[0]
            for i, w in enumerate(want):
                if w[0] is None:
                    assert math.isnan(d[i]), f"pose {i}: {d[i]} beyond inf_dist"
                else:
                    close(float(d[i]), w[0], 1e-6, f"pose {i} closest_point")
        else:
            assert len(result.counts) == len(P)
            for i, w in enumerate(want):
                assert result.counts[i] == len(w), f"pose {i}: {result.counts[i]}, query {len(w)}"
                mine = result.of_pose(i)
                assert len(mine) == len(w)
                for c, cw in zip(
                    sorted(mine, key=lambda c: c.penetration_depth),
                    sorted(w, key=lambda c: c.penetration_depth),
                    strict=True,
                ):
                    close(c.penetration_depth, cw.penetration_depth, 1e-6, "contact depth")
            assert len(result.to_contacts()) == int(np.sum(result.counts))
            bad = [len(P), -1, 1.5, "0", None, True][int(rng.integers(6))]
            try:
                result.of_pose(bad)
            except Exception as error:
                assert isinstance(error, sc.SpatialContactError), f"of_pose({bad!r}): {error!r}"
            else:
                raise AssertionError(f"of_pose({bad!r}) accepted")

    label = (
        f"batch.{'iter_' if iterate else ''}{what}({r(a)}, {r(b)}, {r(pick.value)}, {r(kwargs)})"
    )
    return Case(label, call, expect, param, value, check)


@target("batch with a scene", covers=[], weight=2)
def scene_batches(rng: np.random.Generator, env: Any) -> Case:
    """``batch.iscollided`` / ``distance`` with a scene as ``a``: an (N, objects) matrix and the
    nearest distance, each equal to the scene queries pose by pose."""
    scene = sc.Scene()
    objects = [zoo(rng, ("sphere", "box", "capsule")) for _ in range(int(rng.integers(1, 4)))]
    for i, o in enumerate(objects):
        scene.add(o, f"o{i}")
    b = zoo(rng, ("sphere", "box"))
    pick = poses_pick(rng)
    what = ("iscollided", "distance")[int(rng.integers(2))]

    def check(result: Any) -> None:
        P = _as_poses(np.asarray(pick.number, dtype=float), b)
        for i, T in enumerate(P):
            b_copy = b
            keep = b_copy.T.copy()
            b_copy.T = T
            try:
                if what == "iscollided":
                    hit = scene.collide(b_copy)
                    for j, name in enumerate(scene.names):
                        d = objects[j].distance(b_copy)
                        if abs(d) > 1e-6:
                            assert result[i, j] == (name in hit), f"pose {i} object {name}"
                else:
                    close(float(result[i]), scene.distance(b_copy)[0], 1e-6, f"pose {i}")
            finally:
                b_copy.T = keep

    return Case(
        f"batch.{what}(scene of {len(objects)}, {r(b)}, {r(pick.value)})",
        lambda: getattr(batch, what)(scene, b, pick.value),
        pick.expect,
        "poses",
        pick.value,
        check,
    )


@target(
    "batch point_distance",
    covers=["spatialcontact.batch:point_distance", "spatialcontact.batch:iter_point_distance"],
    weight=2,
)
def point_distance(rng: np.random.Generator, env: Any) -> Case:
    kind = ("sphere", "box", "capsule", "cylinder", "halfspace", "group", "mesh")[
        int(rng.integers(7))
    ]
    if kind == "group":
        a: Any = sc.CollisionShapeGroup([zoo(rng, ("sphere",)), zoo(rng, ("box",))])
    else:
        a = zoo(rng, (kind,))
    n = int(rng.integers(0, 8))
    x = rng.uniform(-2, 2, (n, 3))
    options: list[tuple[Any, str]] = [
        (x, "answer"),
        (x.tolist(), "answer" if n else "either"),
        (x.astype(int), "answer"),
        (x[:, :2], "error" if n else "either"),
        (x.reshape(-1), "error" if n else "either"),
        (x.astype(object), "error"),
        (x.astype(str), "error"),
        (None, "error"),
        (np.vstack([x, [[math.nan, 0, 0]]]), "error"),
        (np.vstack([x, [[1e7, 0, 0]]]), "error"),
        (x.astype(complex), "error"),
        (np.ma.masked_array(x), "error"),
        (x[None], "error"),
    ]
    value, expect = options[int(rng.integers(len(options)))]
    if kind == "mesh" and expect == "answer":
        expect = "either"  # no closed form for meshes: refused, or answered
    iterate = rng.random() < 0.3

    def call() -> Any:
        if iterate:
            return np.concatenate(
                [c for _, c in batch.iter_point_distance(a, value)] or [np.zeros(0)]
            )
        return batch.point_distance(a, value)

    def check(result: Any) -> None:
        X = np.asarray(value, dtype=float).reshape(-1, 3)
        assert result.shape == (len(X),), f"shape {result.shape}"
        for i, p in enumerate(X):
            dot = sc.Sphere(1e-5, pose=trans(*p))
            close(float(result[i]), a.distance(dot) + 1e-5, 2e-5, f"point {i} distance")

    param: Any = ("x", "point", "shape", "closed form") if kind == "mesh" else ("x", "points")
    return Case(
        f"batch.{'iter_' if iterate else ''}point_distance({r(a)}, {r(value)})",
        call,
        expect,
        param,
        value,
        check,
        shows_value=kind != "mesh",
    )


def _square(payload: Any, items: Any) -> Any:
    return [payload * x for x in items]


@target(
    "batch chunks",
    covers=["spatialcontact.batch:map_chunks", "spatialcontact.batch:iter_chunks"],
)
def chunks(rng: np.random.Generator, env: Any) -> Case:
    items_options: list[tuple[Any, str]] = [
        (list(range(int(rng.integers(0, 30)))), "answer"),
        (np.arange(12), "answer"),
        (range(7), "answer"),
        (5, "error"),
        (None, "error"),
        ("abc", "either"),
        (iter([1, 2]), "either"),
        ({1, 2}, "either"),
    ]
    items, expect = items_options[int(rng.integers(len(items_options)))]
    kwargs: dict[str, Any] = {}
    param: Any = "items"
    value: Any = items
    function: Any = _square
    roll = rng.random()
    if roll < 0.3:
        kp = V.integer(rng, 1)
        kwargs["chunk_size"], param, value = kp.value, "chunk_size", kp.value
        items, expect = list(range(10)), kp.expect
        if kp.value is None:
            expect = "answer"
    elif roll < 0.45:
        function, param, value = [None, 5, "f"][int(rng.integers(3))], "function", None
        items, expect = list(range(4)), "error"
        value = function
    elif roll < 0.55:
        kwargs["unit"], param = [5, None, "pose", ""][int(rng.integers(4))], "unit"
        value, items = kwargs["unit"], list(range(4))
        expect = "answer" if isinstance(kwargs["unit"], str) else "error"
    use_iter = rng.random() < 0.5

    def call() -> Any:
        if use_iter:
            return [
                part
                for _, chunk in batch.iter_chunks(function, 2, items, **kwargs)
                for part in chunk
            ]
        return [part for chunk in batch.map_chunks(function, 2, items, **kwargs) for part in chunk]

    def check(result: Any) -> None:
        want = [2 * x for x in (list(items) if not isinstance(items, str) else items)]
        assert list(result) == want, f"chunks gave {result}, expected {want}"

    return Case(
        f"batch.{'iter' if use_iter else 'map'}_chunks({r(function)}, 2, {r(items)}, {r(kwargs)})",
        call,
        expect,
        param,
        value,
        check,
        shows_value=param != "function",
    )
