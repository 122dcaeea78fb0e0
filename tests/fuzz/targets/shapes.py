"""Shape constructors and setters: every size, pose, name, colour and flag, hostile or valid."""

from __future__ import annotations

from typing import Any

import numpy as np

import spatialcontact as sc

from .. import values as V
from ..core import Case, close, finite, target
from ..env import CUBE, TET_FACES, TETRAHEDRON
from .common import case, r, trans

PROBE_X = 50.0


def _far_distance_check(shape: sc.CollisionShape, expected_gap: float | None = None) -> None:
    """A sphere far away on +x: a finite, symmetric distance (and a closed form if given)."""
    probe = sc.Sphere(1.0, pose=trans(PROBE_X))
    d1, d2 = shape.distance(probe), probe.distance(shape)
    finite([d1, d2], "distance")
    close(d1, d2, 1e-6, "distance in the swapped order")
    if expected_gap is not None:
        close(d1, expected_gap, 1e-5, "distance to a sphere 50 m away")


def _color_pick(rng: np.random.Generator) -> V.Pick:
    good: list[Any] = [None, "red", "tab:blue", (1.0, 0.0, 0.0), [0, 255, 0], (0.1, 0.2, 0.3, 0.5)]
    bad: list[Any] = ["notacolour", (2000.0, 0.0, 0.0), (1.0, 0.0), (np.nan, 0.0, 0.0)]
    bad += [(-1.0, 0.0, 0.0), (True, False, True), 1j, 5, b"red", [1.0, "0", 0.0], {"r": 1}]
    bad += [np.array([1.0, 0.0, 0.0], dtype=object), (1.0, 0.0, 0.0, 0.5, 0.2)]
    if rng.random() < 0.4:
        return V.Pick(good[int(rng.integers(len(good)))], "answer")
    return V.Pick(bad[int(rng.integers(len(bad)))], "error")


def _common_kwarg(rng: np.random.Generator) -> tuple[str, V.Pick]:
    """One of the keyword arguments every shape constructor takes."""
    which = ("pose", "name", "color", "collision", "base")[int(rng.integers(5))]
    if which == "pose" or which == "base":
        return which, V.pose(rng)
    if which == "name":
        return which, V.name(rng)
    if which == "color":
        return which, _color_pick(rng)
    return which, V.flag(rng)


def _kwarg_check(which: str, pick: V.Pick) -> Any:
    def check(shape: Any, number: Any) -> None:
        if which == "pose" and pick.expect == "answer":
            assert np.allclose(shape.T, number, atol=1e-9), f"T {shape.T} != {number}"
        if which == "name":
            assert shape.name == pick.number, f"name {shape.name!r} != {pick.number!r}"
        if which == "collision":
            assert shape.collision is bool(pick.number)
        if shape.collision:
            _far_distance_check(shape)

    return check


def _constructor(
    rng: np.random.Generator,
    cls_name: str,
    make: Any,
    key: str,
    pick: V.Pick,
    defaults: dict[str, Any],
    check_valid: Any,
    param: Any = None,
) -> Case:
    """Fuzz the argument ``key`` with ``pick`` (others at ``defaults``), or one of the common
    keywords with ``key`` at its default."""
    if rng.random() < 0.3:
        which, other = _common_kwarg(rng)
        label = f"{cls_name}({r(defaults)}, {which}={r(other.value)})"
        return case(
            label,
            lambda: make(**defaults, **{which: other.value}),
            other,
            which,
            _kwarg_check(which, other),
        )
    args = {**defaults, key: pick.value}
    label = f"{cls_name}({', '.join(f'{k}={r(v)}' for k, v in args.items())})"
    return case(
        label,
        lambda: make(**args),
        pick,
        param or key,
        lambda shape, number: check_valid(shape, {**defaults, key: number}),
    )


def _first_or_nan(value: Any) -> float:
    try:
        return _first(value)
    except Exception:  # not a number: the check is not reached
        return float("nan")


def _finite3(value: Any) -> bool:
    """Whether ``value`` is 3 finite positive floats (a valid scale if the extent is)."""
    plain = isinstance(value, np.ndarray) and not isinstance(value, np.ma.MaskedArray)
    return bool(
        plain
        and value.dtype.kind == "f"
        and value.shape == (3,)
        and np.all(np.isfinite(value))
        and np.all(value > 0)
    )


def _ndim0(value: Any) -> bool:
    try:
        return bool(np.ndim(value) == 0)
    except Exception:  # ragged
        return False


def _first(value: Any) -> float:
    return float(np.asarray(value, dtype=float).reshape(-1)[0])


@target("Sphere()", covers=["Sphere"])
def sphere(rng: np.random.Generator, env: Any) -> Case:
    def check(shape: sc.Sphere, args: dict[str, Any]) -> None:
        close(shape.radius, _first(args["radius"]), 1e-12, "radius")
        _far_distance_check(shape, PROBE_X - 1.0 - shape.radius)

    return _constructor(rng, "Sphere", sc.Sphere, "radius", V.size(rng), {"radius": 0.5}, check)


@target("Cuboid()", covers=["Cuboid", "Box"])
def cuboid(rng: np.random.Generator, env: Any) -> Case:
    cls = (sc.Cuboid, sc.Box)[int(rng.integers(2))]

    def check(shape: sc.Cuboid, args: dict[str, Any]) -> None:
        scale = np.asarray(args["scale"], dtype=float).reshape(-1)
        assert np.allclose(shape.scale, scale, rtol=1e-7), f"scale {shape.scale} != {scale}"
        if np.all(scale < 10):
            _far_distance_check(shape, PROBE_X - 1.0 - scale[0] / 2)

    defaults = {"scale": [1.0, 1.0, 1.0]}
    pick = V.sizes3(rng)
    if pick.value is None:  # spatialgeometry's default: a unit cube
        pick = V.Pick(None, "answer", np.ones(3))
    return _constructor(rng, cls.__name__, cls, "scale", pick, defaults, check)


@target("Cylinder/Capsule/Cone()", covers=["Cylinder", "Capsule", "Cone"], weight=2)
def radius_length(rng: np.random.Generator, env: Any) -> Case:
    cls = (sc.Cylinder, sc.Capsule, sc.Cone)[int(rng.integers(3))]
    key = ("radius", "length")[int(rng.integers(2))]
    pick = V.size(rng)
    if cls is sc.Cone and pick.expect == "answer":
        ratio = _first(pick.number) / 0.5
        if not 1e-4 <= ratio <= 1e4:
            pick.expect = "error"

    def check(shape: Any, args: dict[str, Any]) -> None:
        close(shape.radius, _first(args["radius"]), 1e-6, "radius")
        close(shape.length, _first(args["length"]), 1e-6, "length")
        if shape.radius < 10 and shape.length < 10:
            gap = None if cls is sc.Cone else PROBE_X - 1.0 - shape.radius
            _far_distance_check(shape, gap)

    param: Any = (key, "radius and length") if cls is sc.Cone else key
    defaults = {"radius": 0.5, "length": 0.5}
    return _constructor(rng, cls.__name__, cls, key, pick, defaults, check, param)


@target("Ellipsoid()", covers=["Ellipsoid"])
def ellipsoid(rng: np.random.Generator, env: Any) -> Case:
    def check(shape: sc.Ellipsoid, args: dict[str, Any]) -> None:
        radii = np.asarray(args["radii"], dtype=float).reshape(-1)
        assert np.allclose(shape.radii, radii, rtol=1e-7)
        if radii.max() < 10:
            _far_distance_check(shape, PROBE_X - 1.0 - radii[0])

    pick = V.sizes3(rng, max_aspect=1e4)
    defaults = {"radii": [0.5, 0.5, 0.5]}
    return _constructor(rng, "Ellipsoid", sc.Ellipsoid, "radii", pick, defaults, check)


def _normal_pick(rng: np.random.Generator) -> V.Pick:
    return V.vector3(
        rng,
        lambda v: bool(np.all(np.isfinite(v)) and np.linalg.norm(v) > 1e-12),
        lambda g: g.normal(size=3),
    )


def _offset_pick(rng: np.random.Generator) -> V.Pick:
    return V.real(rng, V.in_range(-1e6, 1e6), V.uniform(-5.0, 5.0))


@target("HalfSpace()", covers=["HalfSpace"])
def halfspace(rng: np.random.Generator, env: Any) -> Case:
    key = ("normal", "offset")[int(rng.integers(2))]
    pick = _normal_pick(rng) if key == "normal" else _offset_pick(rng)

    def check(shape: sc.HalfSpace, args: dict[str, Any]) -> None:
        n = np.asarray(args["normal"], dtype=float).reshape(-1)
        n = n / np.abs(n).max()  # first: the length of a normal of 1e300 overflows
        n = n / np.linalg.norm(n)
        d = _first(args["offset"])
        assert np.allclose(shape.normal, n, atol=1e-9), f"normal {shape.normal} != {n}"
        close(shape.offset, d, 1e-9, "offset")
        p = np.array([0.0, 0.0, 40.0])
        ball = sc.Sphere(1.0, pose=trans(*p))
        expected = float(n @ p) - d - 1.0
        close(shape.distance(ball), expected, 1e-6, "distance to a sphere at z = 40")

    defaults = {"normal": [0.0, 0.0, 1.0], "offset": 0.0}
    return _constructor(rng, "HalfSpace", sc.HalfSpace, key, pick, defaults, check)


# ------------------------------------------------------------------------------ setters


@target(
    "shape size setters",
    covers=[
        "Sphere.radius=",
        "_RadiusLength.radius=",
        "_RadiusLength.length=",
        "Cuboid.scale=",
        "Ellipsoid.radii=",
        "HalfSpace.normal=",
        "HalfSpace.offset=",
    ],
    weight=2,
)
def size_setters(rng: np.random.Generator, env: Any) -> Case:
    choices: list[tuple[Any, str, Any]] = [
        (lambda: sc.Sphere(0.5), "radius", V.size),
        (lambda: sc.Cylinder(0.5, 0.5), "radius", V.size),
        (lambda: sc.Capsule(0.5, 0.5), "length", V.size),
        (lambda: sc.Cone(0.5, 0.5), "radius", V.size),
        (lambda: sc.Cone(0.5, 0.5), "length", V.size),
        (lambda: sc.Cuboid([1.0, 1.0, 1.0]), "scale", V.sizes3),
        (lambda: sc.Ellipsoid([0.5, 0.5, 0.5]), "radii", lambda g: V.sizes3(g, 1e4)),
        (lambda: sc.HalfSpace([0.0, 0.0, 1.0], 0.0), "normal", _normal_pick),
        (lambda: sc.HalfSpace([0.0, 0.0, 1.0], 0.0), "offset", _offset_pick),
    ]
    make, attr, picker = choices[int(rng.integers(len(choices)))]
    pick = picker(rng)
    shape = make()
    if attr == "scale" and pick.value is None:
        pick = V.Pick(None, "answer", np.ones(3))
    if isinstance(shape, sc.Cone) and pick.expect == "answer":
        ratio = _first(pick.number) / 0.5
        if not 1e-4 <= ratio <= 1e4:
            pick.expect = "error"
    before = np.array(getattr(shape, attr), dtype=float)
    probe = sc.Sphere(1.0, pose=trans(0.0, 0.0, 20.0))
    before_d = shape.distance(probe)

    def call() -> Any:
        try:
            setattr(shape, attr, pick.value)
        except Exception:
            # a refused value keeps the old one, and the shape still answers as before
            after = np.array(getattr(shape, attr), dtype=float)
            assert np.array_equal(after, before), f"{attr} changed to {after} on a refusal"
            close(shape.distance(probe), before_d, 1e-9, "distance after a refused set")
            raise
        return shape

    def check(result: Any, number: Any) -> None:
        got = np.array(getattr(shape, attr), dtype=float).reshape(-1)
        want = np.asarray(number, dtype=float).reshape(-1)
        if attr == "normal":
            want = want / np.abs(want).max()  # first: no overflow of the length
            want = want / np.linalg.norm(want)
        assert np.allclose(got, want, rtol=1e-6), f"{attr} {got} != {want}"
        d = shape.distance(probe)
        finite(d, "distance after the set")

    label = f"{type(shape).__name__}.{attr} = {r(pick.value)}"
    param: Any = (attr, "radius and length") if isinstance(shape, sc.Cone) else attr
    return case(label, call, pick, param, check)


@target(
    "shape common setters",
    covers=[
        "ShapeBase.T=",
        "CollisionShape.pose=",
        "CollisionShape.name=",
        "CollisionShape.color=",
        "CollisionShape.opacity=",
        "CollisionShape.v=",
    ],
    weight=2,
)
def common_setters(rng: np.random.Generator, env: Any) -> Case:
    from .common import zoo

    shape = zoo(rng, ("sphere", "box", "capsule", "hull"))
    attr = ("T", "pose", "name", "color", "opacity", "v")[int(rng.integers(6))]
    if attr in ("T", "pose"):
        pick = V.pose(rng, none_ok=False)
    elif attr == "name":
        pick = V.name(rng)
    elif attr == "color":
        pick = _color_pick(rng)
    elif attr == "opacity":
        pick = V.real(rng, lambda x: 0.0 <= x <= 255.0, V.uniform(0.0, 1.0))
    else:
        pick = V.vector3(rng, lambda v: True, lambda g: g.normal(size=3))
        if pick.expect == "answer":
            pick = V.Pick(np.asarray(pick.number), "error")  # 3 numbers where 6 are wanted
        if rng.random() < 0.4:
            v6 = rng.normal(size=6)
            pick = V.Pick(v6, "answer", v6)
    before_T = shape.T.copy()
    probe = sc.Sphere(0.5, pose=trans(0.0, 0.0, 30.0))
    before_d = shape.distance(probe)

    def call() -> Any:
        try:
            setattr(shape, attr, pick.value)
        except Exception:
            assert np.array_equal(shape.T, before_T), "T changed on a refused set"
            close(shape.distance(probe), before_d, 1e-9, "distance after a refused set")
            raise
        return shape

    def check(result: Any, number: Any) -> None:
        if attr in ("T", "pose"):
            assert np.allclose(shape.T, number, atol=1e-9), f"T {shape.T} != {number}"
            moved = probe.distance(shape)
            finite(moved)
            close(shape.distance(probe), moved, 1e-6, "distance in the swapped order")
        elif attr == "name":
            assert shape.name == number
        elif attr == "opacity":
            want = number / 255.0 if number > 1.0 else number
            close(shape.opacity, want, 1e-12, "opacity")

    return case(f"{type(shape).__name__}.{attr} = {r(pick.value)}", call, pick, attr, check)


@target(
    "shape records",
    covers=[
        "CollisionShape",
        "CollisionShape.to_dict",
        "CollisionShape.fk_dict",
        "CollisionShape.copy",
        "CollisionShape.equals",
        "CollisionShape.collided",
    ],
)
def shape_records(rng: np.random.Generator, env: Any) -> Case:
    from .common import zoo

    shape = zoo(rng, ("sphere", "box", "cylinder", "capsule", "cone", "ellipsoid", "halfspace"))
    which = int(rng.integers(6))
    if which == 4:

        def check_fk(result: Any) -> None:
            assert result == {key: shape.to_dict()[key] for key in ("t", "q")}, result

        return Case(f"{r(shape)}.fk_dict()", shape.fk_dict, "answer", check=check_fk)
    if which == 5:

        def check_copy(result: Any) -> None:
            assert result is not shape and result.equals(shape), f"copy gave {result!r}"
            assert result._parent is None

        return Case(f"{r(shape)}.copy()", shape.copy, "answer", check=check_copy)
    if which == 0:
        kwarg, pick = _common_kwarg(rng)
        label = f"CollisionShape({kwarg}={r(pick.value)})"
        # the base class has no geometry: either refused for its arguments or made, never used
        return Case(
            label, lambda: sc.CollisionShape(**{kwarg: pick.value}), "either", kwarg, pick.value
        )
    if which == 1:

        def check_dict(result: Any) -> None:
            assert isinstance(result, dict) and result, f"to_dict gave {result!r}"
            import json

            json.dumps(result)

        return Case(f"{r(shape)}.to_dict()", shape.to_dict, "answer", check=check_dict)
    if which == 2:
        others: list[Any] = [shape, None, 5, "sphere", shape.to_dict(), sc.Sphere(0.3), np.eye(4)]
        other = others[int(rng.integers(len(others)))]

        def check_equals(result: Any) -> None:
            assert result is (other is shape) or (other is not shape and isinstance(result, bool))

        return Case(
            f"{r(shape)}.equals({r(other)})",
            lambda: shape.equals(other),
            "answer",
            check=check_equals,
        )
    other_pick = _other_pick(rng)
    return case(
        f"{r(shape)}.collided({r(other_pick.value)})",
        lambda: shape.collided(other_pick.value),
        other_pick,
        "other",
        lambda result, number: (
            None
            if isinstance(result, bool)
            else (_ for _ in ()).throw(AssertionError(f"collided gave {result!r}"))
        ),
        shows_value=False,
    )


def _other_pick(rng: np.random.Generator) -> V.Pick:
    """The partner of a query: a shape, or something that is not one."""
    good: list[Any] = [
        sc.Sphere(0.5),
        sc.Cuboid([1, 1, 1], pose=trans(5.0)),
        sc.CollisionShapeGroup([sc.Sphere(0.2)]),
    ]
    bad: list[Any] = [
        None,
        5,
        "sphere",
        [sc.Sphere(0.5)],
        np.eye(4),
        sc.Scene(),
        object(),
        sc.Sphere,
    ]
    bad += [sc.Sphere(0.5, collision=False)]
    if rng.random() < 0.4:
        return V.Pick(good[int(rng.integers(len(good)))], "answer")
    return V.Pick(bad[int(rng.integers(len(bad)))], "error")


# -------------------------------------------------------------------------------- meshes


def _faces_pick(rng: np.random.Generator, n_vertices: int) -> tuple[Any, str]:
    faces = TET_FACES.copy()
    options: list[tuple[Any, str]] = [
        (faces, "answer"),
        (faces.astype(np.uint32), "answer"),
        (faces.tolist(), "answer"),
        (faces + n_vertices, "error"),
        (faces - 5, "error"),
        (np.array([[0, 1, -1]]), "error"),
        (np.array([[0, 1, 2**40]]), "error"),
        (faces.astype(float), "either"),
        (faces + 0.5, "error"),
        (faces[:, :2], "error"),
        (np.zeros((0, 3), dtype=int), "error"),
        (np.array([[0, 0, 0]]), "error"),
        (np.array([[0, 1, 1], [1, 2, 3]]), "either"),
        (faces.astype(bool), "error"),
        (faces.astype(object), "error"),
        (faces.astype(str), "error"),
        ("faces", "error"),
        (None, "error"),
        (np.array([[0, 1, 2]]), "either"),
        (faces.reshape(-1), "error"),
        (np.array([[0, 1, np.nan]]), "error"),
    ]
    return options[int(rng.integers(len(options)))]


def _vertices_pick(rng: np.random.Generator) -> tuple[Any, str]:
    tet = TETRAHEDRON.copy()
    options: list[tuple[Any, str]] = [
        (tet, "answer"),
        (tet.tolist(), "answer"),
        (tet.astype(np.float32), "answer"),
        (tet.astype(int), "answer"),
        (tet * 1e-4, "either"),
        (tet * 1e5, "either"),
        (tet * 1e-90, "error"),
        (tet * 1e100, "error"),
        (tet + 2e14, "error"),
        (tet * [1.0, 1.0, 0.0], "either"),  # flat: a degenerate triangle among them
        (np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]), "either"),  # collinear
        (np.zeros((4, 3)), "error"),
        (np.vstack([tet[:3], [[np.nan, 0, 0]]]), "error"),
        (np.vstack([tet[:3], [[np.inf, 0, 0]]]), "error"),
        (tet[:, :2], "error"),
        (tet.astype(complex), "error"),
        (tet.astype(object), "error"),
        (tet.astype(bool), "error"),
        (np.ma.masked_array(tet), "error"),
        ("vertices", "error"),
        (None, "error"),
        (np.zeros((0, 3)), "error"),
    ]
    return options[int(rng.integers(len(options)))]


def _tet_check(scale: np.ndarray, T: np.ndarray | None = None) -> Any:
    """The distance of a scaled tetrahedron mesh to a sphere far on +x (its vertex (s, 0, 0))."""

    def check(mesh: Any) -> None:
        if isinstance(mesh, sc.Mesh) and np.all(np.abs(scale) < 100):
            gap = PROBE_X - abs(scale[0]) * (scale[0] > 0) - 1.0
            d = mesh.distance(sc.Sphere(1.0, pose=trans(PROBE_X)))
            close(d, gap, 1e-5, "distance of the tetrahedron to a sphere on +x")

    return check


@target("Mesh.from_arrays()", covers=["Mesh.from_arrays"], weight=3)
def mesh_arrays(rng: np.random.Generator, env: Any) -> Case:
    which = int(rng.integers(3))
    vertices, v_expect = (TETRAHEDRON, "answer") if which != 0 else _vertices_pick(rng)
    faces, f_expect = (TET_FACES, "answer") if which != 1 else _faces_pick(rng, 4)
    scale: Any = (1.0, 1.0, 1.0)
    s_pick = V.Pick(scale, "answer", np.ones(3))
    if which == 2:
        s_pick = V.vector3(
            rng,
            lambda v: bool(np.all(np.isfinite(v)) and np.all(v > 1e-3) and np.all(v < 100)),
            lambda g: 10 ** g.uniform(-1, 1, 3),
        )
        scale = s_pick.value
        if scale is None or _ndim0(scale):
            s_pick.expect = "either"  # the default, or a uniform scale
            s_pick.number = np.ones(3) * (1.0 if scale is None else _first_or_nan(scale))
        elif _finite3(scale):
            s_pick.expect = "either"  # tiny or huge factors: valid while the extent is
    verdicts = [v_expect, f_expect, s_pick.expect]
    expect = "error" if "error" in verdicts else ("either" if "either" in verdicts else "answer")
    param: Any = ("vertices", "faces", "scale", "triangle", "mesh")
    value = vertices if v_expect != "answer" else faces if f_expect != "answer" else scale
    label = f"Mesh.from_arrays({r(vertices)}, {r(faces)}, scale={r(scale)})"
    check = (
        _tet_check(np.asarray(s_pick.number, dtype=float).reshape(-1))
        if expect != "error" and v_expect == "answer" and f_expect == "answer"
        else None
    )
    return Case(
        label, lambda: sc.Mesh.from_arrays(vertices, faces, scale), expect, param, value, check
    )


@target("Mesh(filename)", covers=["Mesh"], weight=2)
def mesh_file(rng: np.random.Generator, env: Any) -> Case:
    bad = env.bad_files
    keys = sorted(bad)
    roll = rng.random()
    if roll < 0.25:
        path: Any = [env.good_stl, str(env.good_stl), env.unicode_stl, str(env.unicode_stl)][
            int(rng.integers(4))
        ]
        kwarg = ("scale", "y_up", "pose")[int(rng.integers(3))]
        pick = (
            V.vector3(
                rng,
                lambda v: bool(np.all(np.isfinite(v)) and np.all(v > 1e-3) and np.all(v < 100)),
                lambda g: 10 ** g.uniform(-1, 1, 3),
            )
            if kwarg == "scale"
            else V.flag(rng)
            if kwarg == "y_up"
            else V.pose(rng)
        )
        if kwarg == "scale" and (
            pick.expect == "answer" or _ndim0(pick.value) or _finite3(pick.value)
        ):
            pick.expect = "either"  # a scalar is a uniform scale; tiny or huge ones are refused

        def check(mesh: Any, number: Any) -> None:
            assert len(mesh.faces) == 4, f"{len(mesh.faces)} faces"
            _far_distance_check(mesh)

        return case(
            f"Mesh({r(path)}, {kwarg}={r(pick.value)})",
            lambda: sc.Mesh(path, **{kwarg: pick.value}),
            pick,
            kwarg,
            check,
        )
    if roll < 0.85:
        key = keys[int(rng.integers(len(keys)))]
        path = bad[key] if rng.random() < 0.5 else str(bad[key])
        expect = "error" if key not in ("wrong-extension", "no-extension") else "either"
        return Case(
            f"Mesh({r(path)}) [{key}]",
            lambda: sc.Mesh(path),
            expect,
            ("filename", "mesh file", "file"),
            str(path),
            lambda m: _far_distance_check(m),
        )
    odd: list[Any] = [None, 5, b"tet.stl", ["a.stl"], "", ".", "/", "\x00", Path_like(), 1.5]
    value = odd[int(rng.integers(len(odd)))]
    return Case(f"Mesh({r(value)})", lambda: sc.Mesh(value), "error", "filename", value)


class Path_like:
    """An object with ``__fspath__`` naming nothing."""

    def __fspath__(self) -> str:
        return "/nonexistent/fuzz/mesh.stl"

    def __repr__(self) -> str:
        return "Path_like('/nonexistent/fuzz/mesh.stl')"


@target("Mesh.from_trimesh()", covers=["Mesh.from_trimesh"])
def mesh_trimesh(rng: np.random.Generator, env: Any) -> Case:
    import trimesh

    options: list[tuple[Any, str]] = [
        (trimesh.creation.box(extents=[1.0, 1.0, 1.0]), "answer"),
        (trimesh.Trimesh(), "error"),
        (trimesh.Trimesh(vertices=TETRAHEDRON * np.nan, faces=TET_FACES, process=False), "error"),
        (trimesh.Trimesh(vertices=TETRAHEDRON, faces=TET_FACES + 3, process=False), "error"),
        (trimesh.PointCloud(TETRAHEDRON), "error"),
        (trimesh.Scene(), "either"),
        (TETRAHEDRON, "error"),
        (None, "error"),
        ("box", "error"),
    ]
    mesh, expect = options[int(rng.integers(len(options)))]
    pick = V.vector3(
        rng,
        lambda v: bool(np.all(np.isfinite(v)) and np.all(v > 1e-3) and np.all(v < 100)),
        lambda g: 10 ** g.uniform(-1, 1, 3),
    )
    scale: Any = (1.0, 1.0, 1.0)
    param: Any = ("mesh", "vertices", "faces")
    value: Any = mesh
    if expect == "answer" and rng.random() < 0.5:
        scale, expect, param, value = pick.value, pick.expect, "scale", pick.value
        if pick.value is None or _ndim0(pick.value) or _finite3(pick.value):
            expect = "either"  # the default, a uniform scale, or tiny factors (extent decides)
    return Case(
        f"Mesh.from_trimesh({r(mesh)}, scale={r(scale)})",
        lambda: sc.Mesh.from_trimesh(mesh, scale),
        expect,
        param,
        value,
        lambda m: _far_distance_check(m),
        shows_value=param == "scale",
    )


@target(
    "Mesh setters",
    covers=["Mesh.scale=", "Mesh.color=", "Mesh.convex_hull", "Mesh.equals", "Mesh.to_dict"],
)
def mesh_setters(rng: np.random.Generator, env: Any) -> Case:
    mesh = sc.Mesh.from_arrays(TETRAHEDRON, TET_FACES)
    which = int(rng.integers(4))
    if which == 0:
        pick = V.vector3(
            rng,
            lambda v: bool(np.all(np.isfinite(v)) and np.all(v > 1e-3) and np.all(v < 1e3)),
            lambda g: 10 ** g.uniform(-1, 1, 3),
        )
        if pick.value is None or _ndim0(pick.value):
            pick.expect = "either"  # None is the default scale, a number a uniform one
            pick.number = np.ones(3) * (1.0 if pick.value is None else _first_or_nan(pick.value))
        elif pick.expect == "error" and _finite3(pick.value):
            pick.expect = "either"  # one tiny factor flattens the mesh: valid if its extent is

        def call() -> Any:
            try:
                mesh.scale = pick.value
            except Exception:
                assert np.array_equal(mesh.scale, np.ones(3)), "scale changed on a refusal"
                raise
            return mesh

        def check(result: Any, number: Any) -> None:
            assert np.allclose(mesh.scale, np.asarray(number, float).reshape(-1))
            _tet_check(np.asarray(number, float).reshape(-1))(mesh)

        return case(f"mesh.scale = {r(pick.value)}", call, pick, "scale", check)
    if which == 1:
        pick = _color_pick(rng)

        def set_color() -> Any:
            mesh.color = pick.value
            return mesh

        return case(f"mesh.color = {r(pick.value)}", set_color, pick, "color")
    if which == 2:

        def check_hull(hull: Any) -> None:
            assert isinstance(hull, sc.ConvexHull)
            ball = sc.Sphere(0.1, pose=trans(0.2, 0.2, 0.2))  # inside the solid tetrahedron
            assert hull.iscollided(ball) and not mesh.iscollided(ball)

        return Case("mesh.convex_hull()", mesh.convex_hull, "answer", check=check_hull)
    other = [mesh, sc.Mesh.from_arrays(TETRAHEDRON, TET_FACES), None, "mesh", mesh.to_dict()][
        int(rng.integers(5))
    ]

    def check_eq(result: Any) -> None:
        assert isinstance(result, bool), f"equals gave {result!r}"
        if other is mesh:
            assert result

    return Case(
        f"mesh.equals({r(other)}) / to_dict",
        lambda: (mesh.to_dict(), mesh.equals(other))[1],
        "answer",
        check=check_eq,
    )


@target("ConvexHull()", covers=["ConvexHull", "ConvexHull.points="], weight=2)
def hull(rng: np.random.Generator, env: Any) -> Case:
    if rng.random() < 0.35:
        side = float(10 ** rng.uniform(-3, 2))
        pts = CUBE * side + rng.normal(size=(8, 3)) * side * 1e-9
        offset = rng.uniform(-1e5, 1e5, 3) * (rng.random() < 0.3)
        value: Any = pts + offset
        expect = "answer"
    else:
        value, expect = V.hostile_points(rng)
    setter = rng.random() < 0.4

    def check(made: Any) -> None:
        pts = np.asarray(made.points)
        low, high = pts.min(axis=0), pts.max(axis=0)
        centre = (high + low) / 2
        width = float(np.ptp(pts, axis=0).max())
        # A probe beyond the face of the hull's box with the most room before the edge of
        # the supported range (+-1e6 m, less a margin), the face's middle in front of it.
        rooms = np.concatenate([9e5 - high, low + 9e5])  # beyond +x, +y, +z, -x, -y, -z
        k = int(np.argmax(rooms))
        axis, up, room = k % 3, 1.0 if k < 3 else -1.0, float(rooms[k])
        assert room > 0, f"no room for a probe beside a hull spanning {low} to {high}"
        clear = min(width / 2, room / 2)  # how far the probe stays off the face
        radius = max(min(width / 4, room / 4), 1e-5)
        face = high[axis] if up > 0 else low[axis]
        at = centre.copy()
        at[axis] = face + up * (clear + radius)
        ball = sc.Sphere(radius, pose=trans(*at))
        d = made.distance(ball)
        finite(d)
        assert 0 < d <= width, f"distance {d} of a sphere {clear} off a hull {width} wide"
        if expect == "answer":
            gap = abs(at[axis] - face) - ball.radius
            close(d, gap, 1e-5 * max(1.0, width), "distance to the cube's face")

    if setter:
        made = sc.ConvexHull(TETRAHEDRON)
        probe = sc.Sphere(0.5, pose=trans(0.2, 0.2, -2.0))

        def call() -> Any:
            try:
                made.points = value
            except Exception:
                close(made.distance(probe), 1.5, 1e-6, "distance after a refused points set")
                raise
            return made

        return Case(f"hull.points = {r(value)}", call, expect, "points", value, check)
    return Case(
        f"ConvexHull({r(value)})", lambda: sc.ConvexHull(value), expect, "points", value, check
    )


@target("OcTree()", covers=["OcTree", "OcTree.points=", "OcTree.resolution="], weight=2)
def octree(rng: np.random.Generator, env: Any) -> Case:
    which = int(rng.integers(4))
    points: Any = rng.uniform(-1.0, 1.0, (int(rng.integers(1, 40)), 3))
    resolution: Any = 0.1
    p_expect = r_expect = "answer"
    if which in (0, 1):
        points, p_expect = V.hostile_points(rng)
        if (
            p_expect == "error"
            and isinstance(points, np.ndarray)
            and points.dtype.kind == "f"
            and points.ndim == 2
            and points.shape[1] == 3
            and len(points)
            and np.all(np.isfinite(points))
            and np.abs(points).max() <= 1e6
        ):
            p_expect = "either"
        if p_expect != "error":
            p_expect = "either"  # octomap's key range depends on the resolution
    else:
        pick = V.size(rng, 1e-5, 1e6)
        resolution, r_expect = pick.value, pick.expect
        if r_expect != "error":
            r_expect = "either"  # too fine for the points, or coarser than octomap's keys
    setter = which in (1, 3)

    def check(tree: Any) -> None:
        pts = np.asarray(tree.points)
        res = float(tree.resolution)
        up = 1.0 if pts[:, 2].mean() <= 0 else -1.0
        face = pts[:, 2].max() if up > 0 else pts[:, 2].min()
        z = face + up * (2 * res + 6.0)
        if abs(z) > 9e5:  # cells this coarse reach the edge of the range: only ask a finite answer
            finite(tree.distance(sc.Sphere(0.5, pose=trans(0.0, 0.0, -up * 10.0))))
            return
        ball = sc.Sphere(0.5, pose=trans(pts[0, 0], pts[0, 1], z))
        d = tree.distance(ball)
        finite(d)
        assert d > 0.0, f"distance {d} to a sphere above every cell"
        assert len(tree.cells) > 0

    expect = (
        "error"
        if "error" in (p_expect, r_expect)
        else "either"
        if "either" in (p_expect, r_expect)
        else "answer"
    )
    param = "points" if which in (0, 1) else "resolution"
    value = points if which in (0, 1) else resolution
    if setter:
        tree = sc.OcTree([[0.05, 0.05, 0.05], [1.0, 0.0, 0.0]], 0.1)
        probe = sc.Sphere(0.25, pose=trans(0.05, 0.05, 1.0))

        def call() -> Any:
            try:
                setattr(tree, param, value)
            except Exception:
                close(tree.distance(probe), 0.65, 1e-6, "octree distance after a refused set")
                raise
            return tree

        return Case(f"tree.{param} = {r(value)}", call, expect, param, value, check)
    return Case(
        f"OcTree({r(points)}, {r(resolution)})",
        lambda: sc.OcTree(points, resolution),
        expect,
        param,
        value,
        check,
    )


@target("from_dict()", covers=["CollisionShape.from_dict"], weight=2)
def from_dict(rng: np.random.Generator, env: Any) -> Case:
    """Dicts of ``to_dict`` round-trip to equal shapes; broken dicts are refused."""
    from .common import zoo

    kinds = (
        "sphere",
        "box",
        "cylinder",
        "capsule",
        "cone",
        "ellipsoid",
        "hull",
        "mesh",
        "halfspace",
        "octree",
    )
    shape = zoo(rng, kinds)
    if rng.random() < 0.2:
        shape = sc.CollisionShapeGroup([zoo(rng, kinds[:4]), zoo(rng, kinds[:4])])
    d = shape.to_dict(complete=True)  # arrays too: a mesh made from arrays has no file
    which = int(rng.integers(3))
    if which == 0:

        def check(made: Any) -> None:
            assert type(made) is type(shape), f"{type(made).__name__} from {type(shape).__name__}"
            probe = sc.Sphere(0.3, pose=trans(3.0, 0.5, -0.2))
            close(made.distance(probe), shape.distance(probe), 1e-6, "distance after a round trip")

        return Case(
            f"from_dict({r(shape)}.to_dict())",
            lambda: sc.CollisionShape.from_dict(d),
            "answer",
            check=check,
        )
    if which == 1:
        keys = [k for k in d if k != "stype"] or ["stype"]
        key = keys[int(rng.integers(len(keys)))]
        bad: list[Any] = [
            None,
            "x",
            -1.0,
            np.nan,
            [1, 2],
            {"a": 1},
            10**400,
            True,
            [[np.nan] * 4] * 4,
        ]
        value = bad[int(rng.integers(len(bad)))]
        broken = {**d, key: value}
        return Case(
            f"from_dict({r(shape)} with {key}={r(value)})",
            lambda: sc.CollisionShape.from_dict(broken),
            "either",
            (key, "stype", "d"),
            value,
            shows_value=False,
        )
    odd: list[Any] = [
        None,
        5,
        "sphere",
        [d],
        {},
        {"stype": "nothing"},
        {"stype": 5},
        {"stype": "sphere"},
        {**d, "stype": "mesh"} if d.get("stype") != "mesh" else {},
    ]
    value = odd[int(rng.integers(len(odd)))]
    return Case(
        f"from_dict({r(value)})",
        lambda: sc.CollisionShape.from_dict(value),
        "error",
        ("d", "stype", "dict", "radius", "required"),
        value,
        shows_value=False,
    )
