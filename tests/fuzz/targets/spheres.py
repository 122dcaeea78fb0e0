"""Sphere models: fitting with hostile counts and radii, cuRobo files broken every way, models
built from hostile arrays, and the sphere robot's checks against its own spheres."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import spatialcontact as sc
from spatialcontact import spheres

from .. import values as V
from ..core import Case, target
from .common import r

GOOD_YAML = """collision_spheres:
  base:
    - center: [0.0, 0.0, 0.0]
      radius: 0.15
  hand:
    - center: [0.0, 0.0, 0.0]
      radius: 0.07
self_collision_ignore:
  base: [upper]
self_collision_buffer:
  hand: 0.01
"""


@target(
    "sphere files",
    covers=["spatialcontact.spheres:load_curobo", "spatialcontact.spheres:save_curobo"],
    weight=2,
)
def files(rng: np.random.Generator, env: Any) -> Case:
    if rng.random() < 0.3:
        model = env.arm_spheres
        paths: list[tuple[Any, str]] = [
            (env.dir / f"out-{int(rng.integers(10**6))}.yml", "answer"),
            (str(env.dir / "ünïcødé 名前.yaml"), "answer"),
            (env.dir, "error"),
            (env.dir / "missing-dir" / "x.yml", "error"),
            (None, "error"),
            (5, "error"),
            (b"x.yml", "error"),
        ]
        path, expect = paths[int(rng.integers(len(paths)))]
        bad_model = rng.random() < 0.3
        given = [None, 5, "model", {"base": []}][int(rng.integers(4))] if bad_model else model

        def save() -> Any:
            spheres.save_curobo(given, path)
            return spheres.load_curobo(path)

        def check_round_trip(loaded: Any) -> None:
            assert set(loaded.spheres) == set(model.spheres)
            for link, rows in model.spheres.items():
                assert np.allclose(loaded.spheres[link], rows), f"{link} changed in the round trip"

        return Case(
            f"save_curobo({r(given)}, {r(path)})",
            save,
            "error" if bad_model else expect,
            ("model", "SphereModel") if bad_model else ("path", "sphere file", "file"),
            given if bad_model else path,
            check_round_trip,
            shows_value=not bad_model,
        )
    text = GOOD_YAML
    edits: list[tuple[str, Any, str]] = [
        ("valid", text, "answer"),
        ("truncated", text[: len(text) // 2], "either"),
        ("not yaml", "collision_spheres: [: :", "error"),
        ("empty", "", "error"),
        ("no spheres", "something: 1\n", "error"),
        ("list root", "- 1\n- 2\n", "error"),
        ("negative radius", text.replace("radius: 0.15", "radius: -0.15"), "error"),
        ("NaN radius", text.replace("radius: 0.15", "radius: .nan"), "error"),
        (
            "inf centre",
            text.replace(
                "[0.0, 0.0, 0.0]\n      radius: 0.15", "[.inf, 0.0, 0.0]\n      radius: 0.15"
            ),
            "error",
        ),
        (
            "short centre",
            text.replace("[0.0, 0.0, 0.0]\n      radius: 0.15", "[0.0, 0.0]\n      radius: 0.15"),
            "error",
        ),
        ("string radius", text.replace("radius: 0.15", "radius: big"), "error"),
        ("bool radius", text.replace("radius: 0.15", "radius: true"), "error"),
        ("huge radius", text.replace("radius: 0.15", "radius: 1e300"), "error"),
        ("no radius", text.replace("      radius: 0.15\n", ""), "error"),
        ("links a list", "collision_spheres: [1, 2]\n", "error"),
        ("ignore not list", text.replace("base: [upper]", "base: 5"), "error"),
        ("buffer string", text.replace("hand: 0.01", "hand: lots"), "error"),
        ("buffer NaN", text.replace("hand: 0.01", "hand: .nan"), "error"),
        ("refers missing", "collision_spheres: other_file.yml\n", "error"),
        ("binary", b"\x00\xff\xfe\x00", "error"),
        ("anchors", "a: &a [*a]\ncollision_spheres: *a\n", "error"),
    ]
    what, content, expect = edits[int(rng.integers(len(edits)))]
    path = env.write(f"spheres-{what.replace(' ', '_')}-{int(rng.integers(10**6))}.yml", content)
    odd = rng.random() < 0.15
    if odd:
        path, expect, what = [
            (env.dir, "error", "directory"),
            (None, "error", "None"),
            (env.dir / "missing.yml", "error", "missing"),
            (5, "error", "int"),
            (env.good_stl, "error", "an STL file"),
        ][int(rng.integers(5))]

    def check(model: Any) -> None:
        assert isinstance(model, spheres.SphereModel)
        for rows in model.spheres.values():
            assert np.all(np.isfinite(rows)) and np.all(rows[:, 3] > 0)

    return Case(
        f"load_curobo({r(path)}) [{what}]",
        lambda: spheres.load_curobo(path),
        expect,
        ("path", "sphere file", "file", "collision_spheres", "radius", "center", "self_collision"),
        path,
        check,
        shows_value=odd and what in ("None", "int"),
    )


@target("SphereModel()", covers=["SphereModel", "SphereModel.ignored_pairs"])
def sphere_model(rng: np.random.Generator, env: Any) -> Case:
    good = np.array([[0.0, 0.0, 0.0, 0.1], [0.1, 0.0, 0.0, 0.05]])
    options: list[tuple[Any, str]] = [
        ({"base": good}, "answer"),
        ({"base": good.tolist()}, "answer"),
        ({}, "either"),
        ({"base": good[:, :3]}, "error"),
        ({"base": good * [1, 1, 1, -1]}, "error"),
        ({"base": good * np.nan}, "error"),
        ({"base": "x"}, "error"),
        ({5: good}, "error"),
        ({"base": good.astype(object)}, "error"),
        ({"base": good.astype(complex)}, "error"),
        ([good], "error"),
        (None, "error"),
        ({"base": good * 1e300}, "error"),
        ({"base": np.zeros((0, 4))}, "either"),
        ({"base": good.astype(bool)}, "error"),
    ]
    value, expect = options[int(rng.integers(len(options)))]
    kwargs: dict[str, Any] = {}
    param: Any = ("spheres", "link", "sphere", "radius")
    if expect == "answer" and rng.random() < 0.5:
        key = ("self_collision_ignore", "self_collision_buffer", "source")[int(rng.integers(3))]
        choices: dict[str, list[tuple[Any, str]]] = {
            "self_collision_ignore": [
                ({"base": ["hand"]}, "answer"),
                ({"base": "hand"}, "either"),
                ({"base": [5]}, "error"),
                (5, "error"),
                ({5: ["a"]}, "either"),  # the key is kept as str(5)
            ],
            "self_collision_buffer": [
                ({"base": 0.01}, "answer"),
                ({"base": math.nan}, "error"),
                ({"base": "x"}, "error"),
                (5, "error"),
                ({"base": True}, "error"),
            ],
            "source": [("curobo", "answer"), (5, "error"), (None, "error")],
        }
        kv, expect = choices[key][int(rng.integers(len(choices[key])))]
        kwargs[key], param, value = kv, key, kv

    def check(model: Any) -> None:
        pairs = model.ignored_pairs()
        assert isinstance(pairs, set)
        assert model.count == sum(len(v) for v in model.spheres.values())

    return Case(
        f"SphereModel({r(value)}, {r(kwargs)})",
        lambda: spheres.SphereModel(value if not kwargs else {"base": good}, **kwargs),
        expect,
        param,
        value,
        check,
        shows_value=False,
    )


@target(
    "robot sphere fits",
    covers=[
        "RobotModel.spheres",
        "RobotModel.spheres_cover",
        "CoverageReport",
        "CoverageReport.table",
        "LinkCoverage",
        "SphereRobotModel",
        "SphereRobotModel.check_motions",
        "SphereRobotModel.spheres_cover",
        "SphereRobotModel.distance",
        "SphereRobotModel.clouds=",
        "SphereRobotModel.in_collision",
    ],
    weight=2,
)
def fits(rng: np.random.Generator, env: Any) -> Case:
    robot = env.arm
    robot.out_of_limits = "raise"
    which = int(rng.integers(4))
    if which == 0:
        key = ("count", "max_radius")[int(rng.integers(2))]
        if key == "count":
            pick = V.integer(rng, 1, 6)
            if isinstance(pick.value, (int, np.integer)) and int(pick.value) > 6:
                pick = V.Pick(200, "either")  # many spheres: slow but valid
        else:
            pick = V.size(rng)
            if pick.expect == "answer":
                pick.expect = "either"  # radii too small for the links are refused
            if pick.expect != "error" and float(np.asarray(pick.number).reshape(-1)[0]) < 0.05:
                pick = V.Pick(0.05, "answer", 0.05)  # valid, but small radii take minutes
        if isinstance(pick.value, int) and pick.value > 50:
            pick = V.Pick(6, "answer", 6)

        def fit() -> Any:
            return robot.spheres(**{key: pick.value})

        def check(model: Any) -> None:
            report = robot.spheres_cover(model, measure=False)
            assert report.covered, f"fitted spheres do not cover:\n{report.table()}"

        return Case(
            f"arm.spheres({key}={r(pick.value)})",
            fit,
            pick.expect,
            (key, "count and max_radius"),
            pick.value,
            check,
        )
    if which == 1:
        model_options: list[tuple[Any, str]] = [
            (env.arm_spheres, "answer"),
            (None, "error"),
            (5, "error"),
            ("model", "error"),
            # a link the robot does not have is left out: the report says what is not covered
            (spheres.SphereModel({"nolink": np.array([[0, 0, 0, 0.1]])}), "answer"),
            (spheres.SphereModel({"base": np.array([[0, 0, 0, 0.01]])}), "answer"),
        ]
        model, expect = model_options[int(rng.integers(len(model_options)))]
        measure = V.flag(rng)
        if expect == "answer" and measure.expect == "error":
            expect = "error"
        if measure.expect == "answer" and bool(measure.value):
            measure = V.Pick(False, "answer", False)  # measuring is slow: the flag's type only

        def cover() -> Any:
            report = robot.spheres_cover(model, measure=measure.value)
            report.table()
            return report

        def check_cover(report: Any) -> None:
            links = report.links
            assert set(links) <= set(robot.link_names)
            assert report.covered == all(c.covered for c in links.values())

        return Case(
            f"arm.spheres_cover({r(model)}, measure={r(measure.value)})",
            cover,
            expect,
            ("model", "measure", "link", "SphereModel"),
            measure.value if model is env.arm_spheres else model,
            check_cover,
            shows_value=model is env.arm_spheres,
        )
    ball = env.sphere_arm
    if which == 2:
        Q = rng.uniform([-3, -2, 0], [3, 2, 0.1], (3, 3))
        key = ("Q1", "tolerance", "method", "resolution")[int(rng.integers(4))]
        kwargs: dict[str, Any] = {}
        Q1: Any = Q
        if key == "Q1":
            from .robots import Q_pick

            pick = Q_pick(rng)
            Q1 = pick.value
            value, expect = Q1, pick.expect
            if expect != "error":
                expect = "either"  # a different number of rows than Q0 is refused
        elif key == "tolerance":
            pick = V.real(rng, lambda x: math.isfinite(x) and x > 0, V.log_uniform(1e-3, 0.1))
            kwargs["tolerance"], value, expect = pick.value, pick.value, pick.expect
            if expect == "answer" and not isinstance(pick.value, float):
                expect = "either"
        elif key == "method":
            value = ["bound", "discrete", "fast", None, 5][int(rng.integers(5))]
            kwargs["method"], expect = (
                value,
                "answer" if value in ("bound", "discrete") else "error",
            )
        else:
            pick = V.real(rng, lambda x: 0 < x <= 1, V.log_uniform(1e-2, 0.5))
            kwargs["resolution"], kwargs["method"] = pick.value, "discrete"
            value, expect = pick.value, pick.expect
            if expect == "answer" and not isinstance(pick.value, float):
                expect = "either"

        def motions() -> Any:
            return ball.check_motions(Q, Q1, **kwargs)

        def check_motions(free: Any) -> None:
            assert free.shape == (len(Q),) and free.dtype == bool

        return Case(
            f"sphere_arm.check_motions(Q, {r(Q1)}, {r(kwargs)})",
            motions,
            expect,
            (key, "Q0", "Q1", "joint"),
            value,
            check_motions,
            shows_value=key != "Q1",
        )
    if rng.random() < 0.5:
        from .robots import _scene, q_pick

        scene, objects = _scene(rng)
        pick = q_pick(rng)
        if rng.random() < 0.5:
            # in_collision in the kernel: Coal's answer on the same spheres (the tree's cells).
            def collided() -> Any:
                ball.clouds = "cells"
                mine = ball.in_collision(pick.value, scene)
                return mine, sc.robot.RobotModel.in_collision(ball, pick.value, scene)

            def check_collided(answers: Any) -> None:
                assert answers[0] == answers[1], f"kernel {answers[0]}, Coal {answers[1]}"

            return Case(
                f"sphere_arm.in_collision({r(pick.value)}, scene)",
                collided,
                pick.expect,
                ("q", "joint"),
                pick.value,
                check_collided,
                shows_value=not isinstance(pick.value, np.ndarray),
            )
        mode = ["cells", "points", "boxes", None, 5][int(rng.integers(5))]
        mode_ok = mode in ("cells", "points")

        def distance() -> Any:
            ball.clouds = mode
            return ball.distance(pick.value, scene)

        def check_distance(result: Any) -> None:
            if objects:
                assert math.isfinite(result.distance), f"distance {result.distance}"
                assert result.other in objects or result.other is None

        return Case(
            f"sphere_arm.clouds = {r(mode)}; distance({r(pick.value)}, scene)",
            distance,
            pick.expect if mode_ok else "error",
            ("q", "joint") if mode_ok else "clouds",
            pick.value if mode_ok else mode,
            check_distance,
            shows_value=not mode_ok or not isinstance(pick.value, np.ndarray),
        )
    options2: list[tuple[Any, str]] = [(None, "answer"), (env.arm_spheres, "answer"), (5, "error")]
    model, expect = options2[int(rng.integers(len(options2)))]
    return Case(
        f"sphere_arm.spheres_cover({r(model)}, measure=False)",
        lambda: ball.spheres_cover(model, measure=False),
        expect,
        ("model", "SphereModel"),
        model,
        lambda report: (
            None
            if report.covered
            else (_ for _ in ()).throw(
                AssertionError("the sphere robot's own spheres do not cover")
            )
        ),
    )


@target("meshes.path()", covers=["spatialcontact.meshes:names", "spatialcontact.meshes:path"])
def mesh_paths(rng: np.random.Generator, env: Any) -> Case:
    names = sc.meshes.names()
    value: Any = [*names, "nothing", "", None, 5, "../panda", "panda/../../etc", "PANDA"][
        int(rng.integers(len(names) + 7))
    ]
    expect = "answer" if value in names else "error"

    def check(path: Any) -> None:
        assert path.exists(), f"{path} does not exist"

    return Case(
        f"meshes.path({r(value)})", lambda: sc.meshes.path(value), expect, "name", value, check
    )


@target(
    "motion prefilters",
    covers=["RobotModel.set_motion_prefilter"],
)
def prefilters(rng: np.random.Generator, env: Any) -> Case:
    robot = env.prefilter_arm
    fitted = env.arm_spheres
    options: list[tuple[Any, str]] = [
        (fitted, "answer"),
        (None, "answer"),
        (5, "error"),
        ("model", "error"),
        (fitted.spheres, "error"),
        (spheres.SphereModel({"base": np.array([[0, 0, 0, 0.01]])}), "error"),  # not covering
        (spheres.SphereModel({**fitted.spheres}, {"base": ["hand"]}), "error"),  # a checked pair
        (spheres.SphereModel({**fitted.spheres}, {"base": ["upper"]}), "answer"),  # SRDF's own
        (spheres.SphereModel({**fitted.spheres}, {}, {"hand": -0.001}), "error"),  # shrinks
        (spheres.SphereModel({**fitted.spheres}, {}, {"hand": 0.01}), "answer"),
    ]
    model, expect = options[int(rng.integers(len(options)))]
    before = robot.motion_prefilter
    Q = robot.sample(2, rng)
    steps = np.linspace(0.0, 1.0, 41)[:, None]

    def set_and_move() -> Any:
        try:
            robot.set_motion_prefilter(model)
        except Exception:
            assert robot.motion_prefilter is before, "a refused prefilter changed the robot"
            raise
        return robot.check_motion(Q[0], Q[1])

    def check(free: Any) -> None:
        assert robot.motion_prefilter is model
        assert isinstance(free, bool)
        if free:  # never free where a fine discretisation collides
            assert not robot.check(Q[0] + steps * (Q[1] - Q[0])).any(), "free, but collides"

    return Case(
        f"arm.set_motion_prefilter({r(model)}); check_motion(q0, q1)",
        set_and_move,
        expect,
        ("spheres", "SphereModel"),
        model,
        check,
        shows_value=isinstance(model, (int, str)),
    )
