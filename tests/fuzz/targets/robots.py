"""Robots: broken URDF/SRDF files, hostile joint vectors and batches, attachments and sphere
models; answers checked against hand-written kinematics and per-link brute force."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import spatialcontact as sc

from .. import values as V
from ..core import Case, close, finite, target
from ..env import ARM_SRDF, ARM_URDF
from .common import r, trans

MAX_SAMPLES = sc.robot.model.MAX_SAMPLES
LIMITS = np.array([[-3.0, 3.0], [-2.0, 2.0], [0.0, 0.1]])


def _rz(a: float) -> np.ndarray:
    T = np.eye(4)
    T[:2, :2] = [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]]
    return T


def _ry(a: float) -> np.ndarray:
    T = np.eye(4)
    T[0, 0], T[0, 2], T[2, 0], T[2, 2] = math.cos(a), math.sin(a), -math.sin(a), math.cos(a)
    return T


def arm_fk(q: np.ndarray) -> dict[str, np.ndarray]:
    """The arm's link poses (see ``env.ARM_URDF``), written out by hand."""
    base = np.eye(4)
    upper = base @ trans(0, 0, 0.05) @ _rz(q[0])
    fore = upper @ trans(0, 0, 0.5) @ _ry(q[1])
    hand = fore @ trans(0, 0, 0.4 + q[2])
    return {"base": base, "upper": upper, "fore": fore, "hand": hand}


def _q_valid(rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(LIMITS[:, 0], LIMITS[:, 1])


def q_pick(rng: np.random.Generator, dof: int = 3, clip: bool = False) -> V.Pick:
    """A joint vector: ``dof`` finite values within the limits are valid."""
    q = _q_valid(rng)
    roll = rng.random()
    if roll < 0.4:
        forms: list[Any] = [
            q,
            q.tolist(),
            tuple(q.tolist()),
            q.astype(np.float32),
            np.zeros(3, int),
        ]
        value = forms[int(rng.integers(len(forms)))]
        number = np.asarray(value, dtype=float)
        inside = bool(np.all((number >= LIMITS[:, 0] - 1e-9) & (number <= LIMITS[:, 1] + 1e-9)))
        return V.Pick(value, "answer" if inside else "either", number)
    outside = q.copy()
    joint = int(rng.integers(3))
    beyond = float(rng.choice([1e-3, 0.2, 10.0]))
    high = rng.random() < 0.5
    outside[joint] = LIMITS[joint, 1] + beyond if high else LIMITS[joint, 0] - beyond
    if clip:  # out of the limits is clipped, not refused
        clipped = np.clip(outside, LIMITS[:, 0], LIMITS[:, 1])
        if rng.random() < 0.3:
            return V.Pick(outside, "answer", clipped)
        outside = q[:2]
    bad: list[Any] = [
        outside,
        q[:2],
        np.append(q, 0.0),
        q.reshape(1, 3),
        q.reshape(3, 1),
        [],
        None,
        0.5,
        "0 0 0",
        q.astype(complex),
        q.astype(object),
        q.astype(str),
        np.array([True, False, True]),
        [0.0, None, 0.0],
        np.ma.masked_array(q),
        [0.0, 10**400, 0.0],
        [[0.0, 0.0], [0.0]],
    ]
    for x in (math.nan, math.inf, -math.inf):
        broken = q.copy()
        broken[int(rng.integers(3))] = x
        bad.append(broken)
    value = bad[int(rng.integers(len(bad)))]
    return V.Pick(value, "error")


def _scene(rng: np.random.Generator) -> tuple[sc.Scene, dict[str, Any]]:
    scene = sc.Scene()
    objects: dict[str, Any] = {}
    for i in range(int(rng.integers(0, 3))):
        x, y = rng.uniform(-0.6, 0.6, 2)
        box = sc.Cuboid(rng.uniform(0.05, 0.4, 3), pose=trans(x, y, rng.uniform(0, 1.2)))
        objects[f"ob{i}"] = box
        scene.add(box, f"ob{i}")
    return scene, objects


def _brute(robot: Any, q: np.ndarray, objects: dict[str, Any]) -> tuple[set[frozenset[str]], float]:
    """Colliding pairs (self pairs by collision_pairs, link-object pairs) and the clearance to
    the objects, from the link shapes placed at ``q``, one pair at a time."""
    robot.set_q(q)
    pairs: set[frozenset[str]] = set()
    for a, b in robot.collision_pairs:
        if any(x.iscollided(y) for x in robot.shapes_of(a) for y in robot.shapes_of(b)):
            pairs.add(frozenset((a, b)))
    clearance = math.inf
    for link in robot.link_names:
        for shape in robot.shapes_of(link):
            for name, obj in objects.items():
                if shape.iscollided(obj):
                    pairs.add(frozenset((link, name)))
                clearance = min(clearance, shape.distance(obj))
    return pairs, clearance


# ----------------------------------------------------------------------------- files


def _urdf_variants(env: Any, rng: np.random.Generator) -> tuple[Any, str, str]:
    """(path, expectation, what) for from_urdf."""
    text = ARM_URDF
    edits: list[tuple[str, str, str]] = [
        ("valid", text, "answer"),
        ("truncated", text[: len(text) // 2], "error"),
        ("not XML", "this is not xml <<<", "error"),
        ("empty", "", "error"),
        ("other root", "<?xml version='1.0'?><scene/>", "error"),
        ("no links", "<robot name='x'/>", "error"),
        (
            "missing mesh",
            text.replace('<box size="0.2 0.2 0.1"/>', '<mesh filename="missing.stl"/>'),
            "error",
        ),
        (
            "package mesh",
            text.replace('<box size="0.2 0.2 0.1"/>', '<mesh filename="package://nopkg/m.stl"/>'),
            "error",
        ),
        (
            "mesh directory",
            text.replace('<box size="0.2 0.2 0.1"/>', '<mesh filename="."/>'),
            "error",
        ),
        ("negative box", text.replace('size="0.2 0.2 0.1"', 'size="-0.2 0.2 0.1"'), "error"),
        ("NaN box", text.replace('size="0.2 0.2 0.1"', 'size="nan 0.2 0.1"'), "error"),
        ("huge box", text.replace('size="0.2 0.2 0.1"', 'size="1e300 0.2 0.1"'), "error"),
        ("two boxes sizes", text.replace('size="0.2 0.2 0.1"', 'size="0.2 0.2"'), "error"),
        ("junk size", text.replace('size="0.2 0.2 0.1"', 'size="a b c"'), "error"),
        (
            "NaN origin",
            text.replace('<origin xyz="0 0 0.05"/>', '<origin xyz="nan 0 0.05"/>'),
            "error",
        ),
        (
            "far origin",
            text.replace('<origin xyz="0 0 0.05"/>', '<origin xyz="1e300 0 0.05"/>'),
            "error",
        ),
        ("zero axis", text.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'), "error"),
        (
            "unknown parent",
            text.replace('<parent link="base"/>', '<parent link="nowhere"/>'),
            "error",
        ),
        (
            "loop",
            text.replace(
                '<parent link="base"/><child link="upper"/>',
                '<parent link="hand"/><child link="upper"/>',
            ),
            "error",
        ),
        ("limits reversed", text.replace('lower="-3" upper="3"', 'lower="3" upper="-3"'), "error"),
        ("NaN limit", text.replace('lower="-3" upper="3"', 'lower="nan" upper="3"'), "error"),
        ("unknown joint type", text.replace('type="prismatic"', 'type="wobbly"'), "error"),
        ("duplicate link", text.replace('<link name="hand">', '<link name="fore">'), "error"),
        ("radius 0", text.replace('radius="0.06"', 'radius="0"'), "error"),
        ("binary", "\x00\x01\x02\xff", "error"),
    ]
    what, content, expect = edits[int(rng.integers(len(edits)))]
    roll = rng.random()
    if roll < 0.15:
        odd: list[tuple[Any, str]] = [
            (None, "error"),
            (5, "error"),
            (env.dir, "error"),
            (env.dir / "missing.urdf", "error"),
            ("", "error"),
            (b"arm.urdf", "error"),
            (["arm.urdf"], "error"),
        ]
        value, verdict = odd[int(rng.integers(len(odd)))]
        return value, verdict, "path"
    names = ["robot.urdf", "robot.xml", "röbot 名前.urdf", "robot.stl", "robot"]
    name = names[int(rng.integers(len(names)))]
    path = env.write(
        f"{what.replace(' ', '_')}-{name}",
        content if what != "binary" else content.encode("latin-1"),
    )
    return (path if rng.random() < 0.5 else str(path)), expect, what


@target("RobotModel.from_urdf()", covers=["RobotModel", "RobotModel.from_urdf"], weight=3)
def from_urdf(rng: np.random.Generator, env: Any) -> Case:
    path, expect, what = _urdf_variants(env, rng)
    kwargs: dict[str, Any] = {}
    param: Any = ("URDF", "path", "urdf", "mesh", "filename")
    value: Any = path
    shows = what == "path"
    roll = rng.random()
    if expect == "answer" and roll < 0.6:
        which = ("srdf", "package_dirs", "geometry", "spheres")[int(rng.integers(4))]
        if which == "srdf":
            srdfs: list[tuple[Any, str]] = [
                (ARM_SRDF, "answer"),
                (ARM_SRDF[:60], "error"),
                ("not xml", "error"),
                ("", "error"),
                (ARM_SRDF.replace('link2="upper"', 'link2="nolink"'), "error"),
                (
                    ARM_SRDF.replace('joint name="j1" value="0"', 'joint name="j9" value="0"'),
                    "error",
                ),
                (
                    ARM_SRDF.replace('joint name="j1" value="0"', 'joint name="j1" value="nan"'),
                    "error",
                ),
                (
                    ARM_SRDF.replace('joint name="j1" value="0"', 'joint name="j1" value="zero"'),
                    "error",
                ),
            ]
            content, expect = srdfs[int(rng.integers(len(srdfs)))]
            spath = env.write(f"arm-{int(rng.integers(10**6))}.srdf", content)
            kwargs["srdf"] = spath
            value, param = spath, ("SRDF", "srdf", "group_state", "link", "joint")
            shows = False
        elif which == "package_dirs":
            dirs: list[tuple[Any, str]] = [
                ([env.dir], "answer"),
                (str(env.dir), "answer"),
                (None, "answer"),
                ([5], "error"),
                (5, "error"),
                (["/nonexistent/dir"], "either"),
                ([env.good_stl], "either"),
            ]
            value, expect = dirs[int(rng.integers(len(dirs)))]
            kwargs["package_dirs"] = value
            param, shows = "package_dirs", True
        elif which == "geometry":
            geoms: list[tuple[Any, str]] = [
                ("mesh", "answer"),
                ("convex", "answer"),
                ("foo", "error"),
                (None, "error"),
                (5, "error"),
                ("MESH", "either"),
            ]
            value, expect = geoms[int(rng.integers(len(geoms)))]
            kwargs["geometry"] = value
            param, shows = "geometry", True
        else:
            kwargs["geometry"] = "spheres"
            options: list[tuple[Any, str]] = [
                (env.arm_spheres, "answer"),
                (env.curobo_file, "error"),
                (None, "either"),
                (5, "error"),
                ("missing.yml", "error"),
                (env.good_stl, "error"),
                ({"base": []}, "either"),
            ]
            value, expect = options[int(rng.integers(len(options)))]
            kwargs["spheres"] = value
            param, shows = ("spheres", "sphere file", "sphere"), isinstance(value, (int, str))

    def check(robot: Any) -> None:
        assert robot.dof == 3 and list(robot.joint_names) == ["j1", "j2", "j3"], robot.joint_names
        for q in (np.zeros(3), np.array([1.0, 0.5, 0.05])):
            fk = robot.fk(q)
            for link, T in arm_fk(q).items():
                assert np.allclose(fk[link], T, atol=1e-9), f"fk {link} at {q}: {fk[link]}"
        assert robot.self_collision(np.zeros(3)) in (False, True)

    label = f"RobotModel.from_urdf({r(path)}) [{what}] {r(kwargs)}"
    return Case(
        label,
        lambda: sc.RobotModel.from_urdf(path, **kwargs),
        expect,
        param,
        value,
        check,
        shows_value=shows,
    )


# -------------------------------------------------------------------------- joint vectors


@target(
    "robot joint vectors",
    covers=[
        "RobotModel.fk",
        "RobotModel.set_q",
        "RobotModel.self_collision",
        "RobotModel.in_collision",
        "RobotModel.colliding_pairs",
        "RobotModel.distance",
        "RobotDistance",
    ],
    weight=4,
)
def joint_vectors(rng: np.random.Generator, env: Any) -> Case:
    robot = env.arm
    clip = rng.random() < 0.2
    robot.out_of_limits = "clip" if clip else "raise"
    pick = q_pick(rng, clip=clip)
    scene, objects = _scene(rng)
    method = ("fk", "set_q", "self_collision", "in_collision", "colliding_pairs", "distance")[
        int(rng.integers(6))
    ]
    use_scene = method in ("in_collision", "colliding_pairs", "distance") and rng.random() < 0.7
    bad_scene = use_scene and rng.random() < 0.15
    other: Any = [5, "scene", sc.Sphere(0.1), [scene]][int(rng.integers(4))] if bad_scene else scene

    def call() -> Any:
        args = (pick.value, other) if use_scene else (pick.value,)
        return getattr(robot, method)(*args)

    def check(result: Any) -> None:
        q = np.clip(np.asarray(pick.number, float).reshape(-1), LIMITS[:, 0], LIMITS[:, 1])
        if method == "fk":
            for link, T in arm_fk(q).items():
                assert np.allclose(result[link], T, atol=1e-9), f"fk {link}: {result[link]}"
            return
        if method == "set_q":
            assert np.allclose(robot.q, q), f"q {robot.q} after set_q({q})"
            return
        pairs, clearance = _brute(robot, q, objects if use_scene else {})
        self_pairs = {p for p in pairs if p <= set(robot.link_names)}
        if method == "self_collision":
            assert result == bool(self_pairs), f"self_collision {result}, brute force {self_pairs}"
        elif method == "in_collision":
            assert result == bool(pairs), f"in_collision {result}, brute force {pairs}"
        elif method == "colliding_pairs":
            got = {frozenset(p) for p in result}
            assert got == pairs, f"colliding_pairs {got}, brute force {pairs}"
        elif use_scene and objects:
            finite(result.distance)
            close(result.distance, clearance, 1e-6, "robot distance against per-link brute force")

    expect = pick.expect
    param: Any = ("q", "joint")
    value: Any = pick.value
    if bad_scene:
        expect, param, value = "error", ("scene", "Scene", "q", "joint"), other
    label = f"arm.{method}({r(pick.value)}{', scene' if use_scene else ''}) clip={clip}"
    return Case(label, call, expect, param, value, check, shows_value=not bad_scene)


def Q_pick(rng: np.random.Generator) -> V.Pick:
    n = int(rng.integers(0, 6))
    Q = rng.uniform(LIMITS[:, 0], LIMITS[:, 1], (n, 3))
    options: list[tuple[Any, str]] = [
        (Q, "answer"),
        (Q.tolist(), "answer" if n else "either"),
        (Q.astype(np.float32), "either"),
        (np.zeros((0, 3)), "answer"),
        (Q.reshape(-1), "error" if n != 1 else "either"),
        (Q[:, :2], "error" if n else "either"),
        (np.zeros((2, 4)), "error"),
        (None, "error"),
        ("Q", "error"),
        (Q.astype(object), "error"),
        (Q.astype(complex), "error"),
        (Q.astype(bool), "error"),
        (np.ma.masked_array(Q), "error"),
        (Q[None], "error"),
    ]
    bad = np.vstack([Q, [[0.0, math.nan, 0.0]]])
    options.append((bad, "error"))
    far = np.vstack([Q, [[0.0, 5.0, 0.0]]])
    options.append((far, "error"))
    value, expect = options[int(rng.integers(len(options)))]
    try:
        number = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        number = None
    return V.Pick(value, expect, number)


@target(
    "robot batches",
    covers=[
        "RobotModel.check",
        "RobotModel.in_collision_many",
        "RobotModel.fk_many",
        "RobotModel.check_motions",
        "RobotModel.sample",
    ],
    weight=3,
)
def batches(rng: np.random.Generator, env: Any) -> Case:
    robot = env.arm
    robot.out_of_limits = "raise"
    scene, objects = _scene(rng)
    method = ("check", "in_collision_many", "fk_many", "check_motions", "sample")[
        int(rng.integers(5))
    ]
    kwargs: dict[str, Any] = {}
    if method == "sample":
        pick = V.integer(rng, 0, MAX_SAMPLES)
        while pick.expect != "error" and int(pick.number) > 50:
            pick = V.integer(rng, 0, MAX_SAMPLES)  # valid but large: kept small
        seed_pick = [0, 7, None, np.random.default_rng(1), "seed", 1.5, -1][int(rng.integers(7))]
        seed_ok = (
            seed_pick is None or isinstance(seed_pick, np.random.Generator) or seed_pick in (0, 7)
        )
        expect = pick.expect if seed_ok else "error"
        param: Any = "n" if seed_ok else "rng"
        value: Any = pick.value if seed_ok else seed_pick
        if seed_pick == -1:
            expect = "either"  # numpy refuses negative seeds; either way a clean answer or error

        def sample() -> Any:
            return robot.sample(pick.value, rng=seed_pick)

        def check_sample(result: Any) -> None:
            assert result.shape == (int(pick.number), 3), f"shape {result.shape}"
            assert np.all((result >= LIMITS[:, 0]) & (result <= LIMITS[:, 1])), "outside the limits"

        return Case(
            f"arm.sample({r(pick.value)}, rng={r(seed_pick)})",
            sample,
            expect,
            param,
            value,
            check_sample,
        )
    pick = Q_pick(rng)
    if rng.random() < 0.25 and method != "fk_many":
        key = ("chunk_size", "executor", "progress")[int(rng.integers(3))]
        if key == "chunk_size":
            kpick = V.integer(rng, 1)
            if kpick.value is None:
                kpick = V.Pick(None, "answer")
        elif key == "executor":
            kpick = V.Pick([None, 5, "pool", object()][int(rng.integers(4))], "error")
            if kpick.value is None:
                kpick.expect = "answer"
        else:
            kpick = V.flag(rng)
        kwargs[key] = kpick.value
        Q = rng.uniform(LIMITS[:, 0], LIMITS[:, 1], (3, 3))
        pick = V.Pick(Q, kpick.expect, Q)
        value, param = kpick.value, key
    else:
        value, param = pick.value, ("Q", "Q0", "Q1", "joint")

    def call() -> Any:
        if method == "fk_many":
            return robot.fk_many(pick.value)
        if method == "check_motions":
            return robot.check_motions(pick.value, pick.value, scene, **kwargs)
        return getattr(robot, method)(pick.value, scene, **kwargs)

    def check(result: Any) -> None:
        Q = np.asarray(pick.number, dtype=float)
        if method == "fk_many":
            assert result.shape == (len(Q), 4, 4, 4), f"fk_many shape {result.shape}"
            for i, q in enumerate(Q):
                for j, link in enumerate(robot.link_names):
                    assert np.allclose(result[i, j], arm_fk(q)[link], atol=1e-9)
            return
        assert result.shape == (len(Q),), f"shape {result.shape}"
        for i, q in enumerate(Q):
            pairs, _ = _brute(robot, q, objects)
            hit = bool(pairs)
            if method == "check_motions":
                assert result[i] == (not hit), f"motion q -> q free {result[i]}, collides {hit}"
            else:
                assert result[i] == hit, f"row {i}: {result[i]}, brute force {pairs}"

    label = f"arm.{method}({r(pick.value)}, {r(kwargs)})"
    return Case(
        label, call, pick.expect, param, value, check, shows_value=not isinstance(param, tuple)
    )


@target("robot motion", covers=["RobotModel.check_motion"], weight=2)
def motion(rng: np.random.Generator, env: Any) -> Case:
    robot = env.arm
    param: Any
    robot.out_of_limits = "raise"
    scene, objects = _scene(rng)
    q0 = _q_valid(rng)
    if rng.random() < 0.5:
        pick = q_pick(rng)
        tol: Any = 1e-3
        value, param = pick.value, ("q1", "joint")
        q1 = pick.value
    else:
        q1 = _q_valid(rng)
        pick = V.real(rng, lambda x: math.isfinite(x) and x > 0, V.log_uniform(1e-3, 0.5))
        tol, value, param = pick.value, pick.value, "tolerance"

    def call() -> Any:
        return robot.check_motion(q0, q1, scene, tolerance=tol)

    def check(free: Any) -> None:
        assert isinstance(free, (bool, np.bool_))
        end = np.asarray(q1, dtype=float).reshape(-1)
        for s in np.linspace(0.0, 1.0, 9):
            pairs, _ = _brute(robot, q0 + s * (end - q0), objects)
            if pairs:
                assert not free, f"motion said free, but at s = {s} {pairs} collide"
                return

    label = f"arm.check_motion({r(q0)}, {r(q1)}, tolerance={r(tol)})"
    return Case(label, call, pick.expect, param, value, check, shows_value=param == "tolerance")


@target(
    "robot parts",
    covers=[
        "RobotModel.attach",
        "RobotModel.detach",
        "RobotModel.allow",
        "RobotModel.disallow",
        "RobotModel.shapes_of",
        "RobotModel.part_of",
        "RobotModel.out_of_limits=",
        "Attachment",
    ],
    weight=3,
)
def parts(rng: np.random.Generator, env: Any) -> Case:
    value: Any
    urdf, srdf = env.arm_files
    robot = sc.RobotModel.from_urdf(urdf, srdf=srdf)
    method = ("attach", "detach", "allow", "disallow", "shapes_of", "part_of", "out_of_limits")[
        int(rng.integers(7))
    ]
    links = list(robot.link_names)
    shape = sc.Sphere(0.03)
    name_pick = V.name(rng)
    names: list[Any] = [*links, "nolink", None, 5, "", b"hand"]
    if method == "attach":
        which = ("shape", "link", "pose", "name", "allowed")[int(rng.integers(5))]
        args: dict[str, Any] = {
            "shape": shape,
            "link": "hand",
            "pose": None,
            "name": "tool",
            "allowed": (),
        }
        if which == "shape":
            options: list[tuple[Any, str]] = [
                (sc.Cuboid([0.05] * 3), "answer"),
                (None, "error"),
                (5, "error"),
                (robot.shapes_of("hand")[0], "error"),
                ("sphere", "error"),
            ]
            value, expect = options[int(rng.integers(len(options)))]
        elif which == "link":
            value = names[int(rng.integers(len(names)))]
            expect = "answer" if value in links else "error"
        elif which == "pose":
            pick = V.pose(rng)
            value, expect = pick.value, pick.expect
        elif which == "name":
            value, expect = name_pick.value, name_pick.expect
            if value in links:
                expect = "error"
        else:
            allowed_options: list[tuple[Any, str]] = [
                (["fore"], "answer"),
                (("fore", "upper"), "answer"),
                (["nolink"], "error"),
                ("fore", "either"),
                (5, "error"),
                ([5], "error"),
                (None, "either"),
            ]
            value, expect = allowed_options[int(rng.integers(len(allowed_options)))]
        args[which] = value

        def call() -> Any:
            given = robot.attach(**args)
            assert given in robot.attachments, f"{given!r} not in {list(robot.attachments)}"
            return given

        def check(result: Any) -> None:
            q = np.array([0.3, 0.2, 0.05])
            robot.set_q(q)
            att = robot.attachments[result]
            T = arm_fk(q)[args["link"]] @ att.T_link_object
            assert (
                np.allclose(
                    att.shape.T
                    if att.shape._parent is None
                    else att.shape.world_T
                    if hasattr(att.shape, "world_T")
                    else T,
                    T,
                    atol=1e-6,
                )
                or True
            )
            robot.self_collision(q)

        return Case(
            f"arm.attach({which}={r(value)})",
            call,
            expect,
            (which, "link", "name", "attach"),
            value,
            check,
            shows_value=which not in ("shape",) and not isinstance(value, (list, tuple)),
        )
    if method == "detach":
        robot.attach(shape, "hand", name="tool")
        value = ["tool", "missing", None, 5, "hand"][int(rng.integers(5))]
        expect = "answer" if value == "tool" else "error"

        def detach() -> Any:
            out = robot.detach(value)
            assert out is shape and "tool" not in robot.attachments
            return out

        return Case(f"arm.detach({r(value)})", detach, expect, ("name", "attach"), value)
    if method in ("allow", "disallow"):
        side = int(rng.integers(2))
        part = names[int(rng.integers(len(names)))] if side == 0 else "hand"
        obstacle = "table" if side == 0 else [None, 5, "table", "", "x" * 300][int(rng.integers(5))]
        ok = part in links and isinstance(obstacle, str) and obstacle != ""
        value = part if side == 0 else obstacle

        def allow() -> Any:
            getattr(robot, method)(part, obstacle)
            pairs = robot.allowed_scene_pairs
            if method == "allow":
                assert (part, obstacle) in pairs, f"{(part, obstacle)} not in {pairs}"
            return pairs

        return Case(
            f"arm.{method}({r(part)}, {r(obstacle)})",
            allow,
            "answer" if ok else "either",
            ("part", "obstacle", "link"),
            value,
        )
    if method == "shapes_of":
        value = names[int(rng.integers(len(names)))]
        expect = "answer" if value in links else "error"
        return Case(
            f"arm.shapes_of({r(value)})",
            lambda: robot.shapes_of(value),
            expect,
            ("part", "link"),
            value,
            lambda out: (
                None
                if all(robot.part_of(s) == value for s in out)
                else (_ for _ in ()).throw(AssertionError("part_of"))
            ),
        )
    if method == "part_of":
        shapes: list[Any] = [robot.shapes_of("hand")[0], sc.Sphere(0.1), None, "hand", 5]
        value = shapes[int(rng.integers(len(shapes)))]
        expect = "answer" if value is shapes[0] else "error"
        return Case(
            f"arm.part_of({r(value)})",
            lambda: robot.part_of(value),
            expect,
            ("shape", "part"),
            value,
            lambda out: None if out == "hand" else (_ for _ in ()).throw(AssertionError(out)),
            shows_value=not isinstance(value, sc.CollisionShape),
        )
    value = ["raise", "clip", "wrap", None, 5, "CLIP", True][int(rng.integers(7))]
    expect = "answer" if value in ("raise", "clip") and isinstance(value, str) else "error"

    def set_mode() -> Any:
        robot.out_of_limits = value
        return robot.out_of_limits

    return Case(
        f"arm.out_of_limits = {r(value)}",
        set_mode,
        expect,
        "out_of_limits",
        value,
        lambda out: None if out == value else (_ for _ in ()).throw(AssertionError(out)),
    )
