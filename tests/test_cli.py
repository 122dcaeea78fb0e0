"""The ``spatialcontact`` command line: known answers, JSON output, and one-line errors."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spatialcontact as sc
from spatialcontact.cli import CommandLineError, load_scene, main, parse_pose, parse_shape
from spatialcontact.errors import ShapeTypeError

BOX_STL = sc.meshes.path("objects/box.stl")  # 0.5 x 0.25 x 0.125 m, centred
PANDA = sc.meshes.path("panda")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run(capsys, *args, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


# ------------------------------------------------------------------------ query


def test_query_prints_collision_distance_witnesses_and_contacts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Sphere r = 0.1 at the origin, box 0.1 x 0.2 x 0.3 at x = 0.1: its face at x = 0.05.
    code, out, err = run(
        capsys, "query", "sphere:0.1", "box:0.1,0.2,0.3", "--pose-b", "0.1", "0", "0", "0", "0", "0"
    )
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[2] == "collided: True"
    assert lines[3] == "distance: -0.050000 m (signed: negative on overlap)"
    assert lines[4] == "witness on A: [+0.100000, +0.000000, +0.000000]"
    assert lines[5] == "witness on B: [+0.050000, +0.000000, +0.000000]"
    assert lines[6] == "contacts: 1"
    assert lines[7].startswith("  0: pos [+0.075000, +0.000000, +0.000000], normal [+1.000000, ")
    assert "depth -0.050000, b1 -1, b2 -1" in lines[7]


def test_query_json_on_a_mesh_file(capsys: pytest.CaptureFixture[str]) -> None:
    # The box mesh's top face is at z = 0.0625; a sphere r = 0.1 centred at z = 0.3 above it.
    data = run_json(
        capsys, "query", str(BOX_STL), "sphere:0.1", "--pose-b", "0", "0", "0.3", "0", "0", "0"
    )
    assert data["collided"] is False
    assert data["distance"] == pytest.approx(0.3 - 0.0625 - 0.1)
    assert data["witness_a"] == pytest.approx([0, 0, 0.0625])
    assert data["witness_b"] == pytest.approx([0, 0, 0.2])
    assert data["contacts"] == []


def test_query_turns_with_degrees_and_reports_several_contacts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A 0.2 x 0.6 x 0.2 box turned 90° about z is 0.6 long along x: from a sphere r = 0.1 at
    # x = 1 its end is 1 - 0.3 - 0.1 = 0.6 away; radians give the same pose.
    deg = run_json(
        capsys,
        "query",
        "box:0.2,0.6,0.2",
        "sphere:0.1",
        "--pose-a",
        "0",
        "0",
        "0",
        "0",
        "0",
        "90",
        "--deg",
        "--pose-b",
        "1",
        "0",
        "0",
        "0",
        "0",
        "0",
    )
    rad = run_json(
        capsys,
        "query",
        "box:0.2,0.6,0.2",
        "sphere:0.1",
        "--pose-a",
        "0",
        "0",
        "0",
        "0",
        "0",
        str(math.pi / 2),
        "--pose-b",
        "1",
        "0",
        "0",
        "0",
        "0",
        "0",
    )
    assert deg["distance"] == pytest.approx(0.6) == rad["distance"]
    data = run_json(
        capsys,
        "query",
        str(BOX_STL),
        "box:0.1,0.1,0.1",
        "--pose-b",
        "0",
        "0",
        "0.1",
        "0",
        "0",
        "0",
        "--contacts",
        "4",
    )
    assert data["collided"] is True
    assert 1 < len(data["contacts"]) <= 4  # per triangle of the hollow mesh
    for c in data["contacts"]:
        np.testing.assert_allclose(
            np.subtract(*c["nearest_points"][::-1]),
            c["penetration_depth"] * np.asarray(c["normal"]),
            atol=1e-9,
        )
    code, out, _ = run(capsys, "query", "sphere:1", "sphere:1", "--contacts", "0")
    assert code == 0 and "contacts" not in out


def spec(text: str) -> Any:
    """The shape of a spec, typed loosely to read its own attributes."""
    return parse_shape(text)


def test_specs_build_the_shapes_they_name() -> None:
    assert spec("sphere:0.25").radius == 0.25
    cyl = spec("cylinder:0.1,0.5")
    assert (type(cyl), cyl.radius, cyl.length) == (sc.Cylinder, 0.1, 0.5)
    assert type(spec("capsule:0.1,0.5")) is sc.Capsule
    assert type(spec("cone:0.1,0.5")) is sc.Cone
    assert spec("CUBOID:1,2,3").scale.tolist() == [1, 2, 3]
    assert spec("ellipsoid:1,2,3").radii.tolist() == [1, 2, 3]
    floor = spec("halfspace")
    assert floor.normal.tolist() == [0, 0, 1] and floor.offset == 0
    wall = spec("halfspace:2,0,0,1")  # x <= 0.5
    assert wall.normal.tolist() == [1, 0, 0] and wall.offset == 0.5
    hull = spec(f"hull:{BOX_STL}")
    assert type(hull) is sc.ConvexHull
    assert (
        np.unique(hull.points, axis=0).tolist()
        == np.unique(sc.Mesh(BOX_STL).vertices, axis=0).tolist()
    )
    mesh = parse_shape(BOX_STL.name, base=BOX_STL.parent)
    assert type(mesh) is sc.Mesh and len(mesh.faces) == 12


def test_parse_pose_is_spatialmath_rpy() -> None:
    from spatialmath import SE3

    np.testing.assert_allclose(
        parse_pose([1, 2, 3, 0.1, 0.2, 0.3]),
        (SE3.Trans(1, 2, 3) * SE3.RPY(0.1, 0.2, 0.3)).A,
        atol=1e-15,
    )
    # A tuple or an array gives the same pose; the name only shows in error messages.
    expected = parse_pose([1, 2, 3, 0.1, 0.2, 0.3])
    np.testing.assert_array_equal(parse_pose((1, 2, 3, 0.1, 0.2, 0.3), name="--pose-a"), expected)
    np.testing.assert_array_equal(parse_pose(np.array([1, 2, 3, 0.1, 0.2, 0.3])), expected)


POSE_WHAT = "pose must be 6 numbers (x y z roll pitch yaw), got "


@pytest.mark.parametrize(
    ("values", "kwargs", "error", "message"),
    [
        ("abcdef", {}, ShapeTypeError, POSE_WHAT + "'abcdef'"),
        (None, {}, ShapeTypeError, POSE_WHAT + "None"),
        ([True] * 6, {}, ShapeTypeError, POSE_WHAT + "[True, True, True, True, True, True]"),
        ([0, 0, 1, 0, 0, False], {}, ShapeTypeError, POSE_WHAT + "[0, 0, 1, 0, 0, False]"),
        ([0, 0, "1", 0, 0, 0], {}, ShapeTypeError, POSE_WHAT + "[0, 0, '1', 0, 0, 0]"),
        (None, {"name": "--pose-a"}, ShapeTypeError, "--pose-a must be 6 numbers"),
        ([0] * 6, {"degrees": 1}, ShapeTypeError, "degrees must be True or False, got 1"),
        ([1, 2, 3], {}, CommandLineError, POSE_WHAT + "[1, 2, 3] (shape (3,))"),
        ([[1, 2, 3], [4, 5]], {}, CommandLineError, POSE_WHAT + "[[1, 2, 3], [4, 5]] (a ragged"),
        (
            [0, 0, 0, math.inf, 0, 0],
            {},
            CommandLineError,
            "pose: roll, pitch and yaw must be finite, got [0, 0, 0, inf, 0, 0]",
        ),
    ],
    ids=[
        "string",
        "none",
        "booleans",
        "one-boolean",
        "string-item",
        "named",
        "degrees",
        "count",
        "ragged",
        "infinite-angle",
    ],
)
def test_parse_pose_refuses_bad_values_naming_them(
    values: Any, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        parse_pose(values, **kwargs)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nofile.stl", "sphere:1"], 1, "A: filename 'nofile.stl': no such mesh file"),
        (["sphere:1", "."], 1, "B: filename '.': is a directory, not a mesh file"),
        (
            ["spere:0.1", "sphere:1"],
            1,
            "A: 'spere:0.1' is neither a file nor a shape spec (kinds: sphere, box",
        ),
        (["noidea", "sphere:1"], 1, "A: 'noidea' is neither a file nor a shape spec"),
        (["sphere:abc", "sphere:1"], 1, "A (sphere:radius): 'abc' is not a number"),
        (["box:1,2", "sphere:1"], 1, "A: box takes 3 numbers (x,y,z), got 2 in 'box:1,2'"),
        (["sphere", "sphere:1"], 1, "A: 'sphere' gives no values; write sphere:radius"),
        (["sphere:-1", "sphere:1"], 1, "A: radius must be positive, got -1.0"),
        (["hull:none.stl", "sphere:1"], 1, "A: filename 'none.stl': no such mesh file"),
        (
            ["sphere:1", "sphere:1", "--pose-b", "0", "0", "nan", "0", "0", "0"],
            1,
            "--pose-b: T must be a rigid transform, but it has non-finite entries",
        ),
        (
            ["sphere:1", "sphere:1", "--pose-b", "0", "0", "1e9", "0", "0", "0"],
            1,
            "--pose-b: T must be a rigid transform, but its translation reaches 1e+09 m",
        ),
        (
            ["sphere:1", "sphere:1", "--pose-b", "0", "0", "x", "0", "0", "0"],
            2,
            "Invalid value for '--pose-b': 'x' is not a valid float.",
        ),
        (
            ["sphere:1", "sphere:1", "--pose-a", "0", "0"],
            2,
            "Option '--pose-a' requires 6 arguments.",
        ),
        (["sphere:1", "sphere:1", "--contacts", "-1"], 2, "Invalid value for '--contacts'"),
        (
            ["halfspace", "halfspace"],
            1,
            "Coal cannot answer this query between a HalfSpace and a HalfSpace",
        ),
        (["sphere:1"], 2, "Missing argument 'B'."),
    ],
    ids=[
        "missing-file",
        "directory",
        "unknown-kind",
        "neither",
        "not-a-number",
        "count",
        "no-values",
        "negative",
        "missing-hull-file",
        "nan-pose",
        "far-pose",
        "pose-word",
        "pose-count",
        "contacts",
        "unsupported-pair",
        "missing-argument",
    ],
)
def test_query_errors_are_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str], args: list[str], code: int, message: str
) -> None:
    got, out, err = run(capsys, "query", *args)
    assert got == code and out == ""
    assert err.count("\n") == 1 and err.startswith("spatialcontact query: error: ")
    assert message in err


# ------------------------------------------------------------------------ robot


def test_robot_at_one_configuration_matches_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    robot = sc.RobotModel.from_urdf(PANDA / "panda.urdf", srdf=PANDA / "panda.srdf")
    q = robot.states["default"]
    data = run_json(capsys, "robot", "panda", "--q", "default")
    assert data["robot"] == "panda" and data["q"] == pytest.approx(q.tolist())
    assert data["self_collision"] is robot.self_collision(q) is False
    assert data["colliding_pairs"] == []
    nearest = robot.distance(q)
    assert data["distance"] == pytest.approx(nearest.distance)
    assert data["nearest"] == [nearest.part, nearest.other]
    code, out, _ = run(capsys, "robot", str(PANDA / "panda.urdf"), "--q", ",".join(map(str, q)))
    assert code == 0
    assert out.splitlines()[0].startswith("robot: panda, 8 joint values (panda_joint1, ")
    assert "self-collision: False" in out and "colliding pairs: none" in out


def write_scene(tmp_path: Path, objects: list[dict]) -> Path:
    path = tmp_path / "scene.json"
    path.write_text(json.dumps({"objects": objects}))
    return path


def test_load_scene_takes_str_and_path_like(tmp_path: Path) -> None:
    path = write_scene(
        tmp_path, [{"name": "table", "shape": "box:1,1,0.1", "pose": [0.5, 0, 0.3, 0, 0, 0.2]}]
    )

    class Fspath:  # any os.PathLike, not only pathlib's
        def __fspath__(self) -> str:
            return str(path)

    for given in (str(path), path, Fspath()):
        scene = load_scene(given)
        assert scene.names == ("table",)
        np.testing.assert_array_equal(scene["table"].T, parse_pose([0.5, 0, 0.3, 0, 0, 0.2]))
    for wrong in (None, 3, str(path).encode()):
        with pytest.raises(
            ShapeTypeError, match=re.escape(f"path must be a str or os.PathLike, got {wrong!r}")
        ):
            load_scene(wrong)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {
                "objects": [
                    {"name": "table", "shape": "box:1.6,1.2,0.05", "pos": [5, 5, 5, 0, 0, 0]}
                ]
            },
            "objects[0]: unknown key 'pos' (allowed keys: name, shape, pose)",
        ),
        (
            {"objects": [{"shape": "sphere:1"}, {"shape": "sphere:1", "colour": 1, "Name": "a"}]},
            "objects[1]: unknown keys 'colour', 'Name' (allowed keys: name, shape, pose)",
        ),
        (
            {"objects": [{"shap": "sphere:1"}]},
            "objects[0]: unknown key 'shap' (allowed keys: name, shape, pose)",
        ),
        (
            {"objects": [], "object": [{"shape": "sphere:1"}]},
            "scene.json': unknown key 'object' (allowed keys: objects)",
        ),
        (
            {"objects": [{"shape": "sphere:1", "pose": "x"}]},
            "objects[0].pose must be 6 numbers (x y z roll pitch yaw) or a 4x4 matrix, got 'x'",
        ),
        (
            {"objects": [{"shape": "sphere:1", "pose": [[1, 0, 0, 0], [0, 1, 0]]}]},
            "objects[0].pose must be 6 numbers (x y z roll pitch yaw) or a 4x4 matrix, got "
            "[[1, 0, 0, 0], [0, 1, 0]] (a ragged nested sequence)",
        ),
        (
            {"objects": [{"shape": "sphere:1", "pose": [1, 2, 3]}]},
            "objects[0].pose must be 6 numbers (x y z roll pitch yaw) or a 4x4 matrix, got "
            "[1, 2, 3]",
        ),
        (
            {"objects": [{"shape": "sphere:1", "pose": [True, 0, 0, 0, 0, 0]}]},
            "objects[0].pose must be 6 numbers (x y z roll pitch yaw) or a 4x4 matrix, got "
            "[True, 0, 0, 0, 0, 0] (booleans",
        ),
        (
            {"objects": [{"shape": "sphere:1", "pose": [0, 0, 0, 0, 0, 1e400]}]},
            "objects[0].pose: roll, pitch and yaw must be finite, got [0, 0, 0, 0, 0, inf]",
        ),
    ],
    ids=[
        "typo",
        "two-typos",
        "no-shape-typo",
        "top-level",
        "pose-word",
        "pose-ragged",
        "pose-count",
        "pose-boolean",
        "pose-infinite",
    ],
)
def test_load_scene_refuses_unknown_keys_and_bad_poses(
    tmp_path: Path, data: dict, message: str
) -> None:
    path = tmp_path / "scene.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CommandLineError, match=re.escape(message)):
        load_scene(path)


def test_robot_refuses_a_scene_file_with_a_typo(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # "pos" for "pose" would put the table at the origin, in collision with the Panda's base.
    path = write_scene(
        tmp_path, [{"name": "table", "shape": "box:1.6,1.2,0.05", "pos": [5, 5, 5, 0, 0, 0]}]
    )
    code, out, err = run(capsys, "robot", "panda", "--q", "default", "--scene", str(path))
    assert (code, out) == (1, "")
    assert err == (
        f"spatialcontact robot: error: scene {str(path)!r}, objects[0]: unknown key 'pos' "
        "(allowed keys: name, shape, pose)\n"
    )
    path.write_text(path.read_text().replace('"pos"', '"pose"'))
    assert (
        run_json(capsys, "robot", "panda", "--q", "default", "--scene", str(path))["in_collision"]
        is False
    )


def test_robot_with_a_scene_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "box.stl").write_bytes(BOX_STL.read_bytes())  # relative to the scene file
    path = write_scene(
        tmp_path,
        [
            {"name": "table", "shape": "box:0.6,0.6,0.1", "pose": [0.5, 0, 0.45, 0, 0, 0]},
            {"name": "crate", "shape": "box.stl", "pose": np.eye(4).tolist()},
        ],
    )
    robot = sc.RobotModel.from_urdf(PANDA / "panda.urdf", srdf=PANDA / "panda.srdf")
    scene = sc.Scene()
    scene.add(sc.Cuboid([0.6, 0.6, 0.1], pose=parse_pose([0.5, 0, 0.45, 0, 0, 0])), "table")
    scene.add(sc.Mesh(BOX_STL), "crate")
    q = robot.states["default"]
    data = run_json(capsys, "robot", "panda", "--q", "default", "--scene", str(path))
    assert data["in_collision"] is True
    assert data["colliding_pairs"] == [list(p) for p in robot.colliding_pairs(q, scene)]
    assert ["panda_leftfinger", "table"] in data["colliding_pairs"]
    _, out, _ = run(capsys, "robot", "panda", "--q", "default", "--scene", str(path))
    assert "in collision (self or scene: table, crate): True" in out
    assert "clearance to the scene: " in out


def test_robot_random_counts_as_check_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_scene(
        tmp_path, [{"name": "table", "shape": "box:1,1,0.1", "pose": [0.5, 0, 0.3, 0, 0, 0]}]
    )
    data = run_json(
        capsys, "robot", "panda", "--random", "300", "--seed", "4", "--scene", str(path)
    )
    robot = sc.RobotModel.from_urdf(PANDA / "panda.urdf", srdf=PANDA / "panda.srdf")
    scene = sc.Scene()
    scene.add(sc.Cuboid([1, 1, 0.1], pose=parse_pose([0.5, 0, 0.3, 0, 0, 0])), "table")
    Q = robot.sample(300, rng=4)
    assert data["in_collision"] == int(robot.check(Q, scene).sum()) > 0
    assert data["self_collision"] == int(robot.check(Q).sum())
    code, out, _ = run(capsys, "robot", "iiwa14", "--random", "50", "--geometry", "convex")
    assert code == 0 and out.startswith("robot: kuka_lbr_iiwa_14_r820, 50 random configurations")


@pytest.mark.parametrize(
    ("args", "scene", "code", "message"),
    [
        (["nope.urdf"], None, 1, "URDF 'nope.urdf': no such file (shipped robots: iiwa14, panda)"),
        (["panda", "--q", "0,1"], None, 1, "--q: panda takes 8 joint values (panda_joint1, "),
        (["panda", "--q", "0,1,x,0,0,0,0,0"], None, 1, "--q: 'x' is not a number"),
        (["panda", "--q", "9,0,0,0,0,0,0,0"], None, 1, "q"),
        (
            ["panda", "--q", "default", "--random", "3"],
            None,
            1,
            "--q and --random: give one or the other, not both",
        ),
        (["panda", "--random", "0"], None, 2, "Invalid value for '--random'"),
        (["panda", "--scene", "none.json"], None, 1, "scene 'none.json': no such file"),
        (["panda"], "{not json", 1, "cannot read it as JSON"),
        (["panda"], "[1, 2]", 1, 'expected {"objects": [...]}, got [1, 2]'),
        (["panda"], '{"objects": [{"name": "a"}]}', 1, 'objects[0]: expected {"shape": ...'),
        (
            ["panda"],
            '{"objects": [{"shape": "sphere:x"}]}',
            1,
            "objects[0].shape (sphere:radius): 'x' is not a number",
        ),
        (
            ["panda"],
            '{"objects": [{"shape": "sphere:1", "pose": [0, 0, "a", 0, 0, 0]}]}',
            1,
            "objects[0].pose must be 6 numbers (x y z roll pitch yaw) or a 4x4 matrix, got "
            "[0, 0, 'a', 0, 0, 0] (strings)",
        ),
        (
            ["panda"],
            '{"objects": [{"shape": "sphere:1", "pose": [0, 0, 1e9, 0, 0, 0]}]}',
            1,
            "objects[0]: T must be a rigid transform",
        ),
        (
            ["panda"],
            '{"objects": [{"shape": "sphere:1", "name": "a"}, {"shape": "sphere:1", "name": "a"}]}',
            1,
            "objects[1]: ",
        ),
        (["/dev/null"], None, 1, "URDF '/dev/null': not a regular file"),
        (
            ["iiwa14", "--q", "default"],
            None,
            1,
            "--q: 'default' is neither joint values nor a named state of kuka_lbr_iiwa_14_r820 "
            "(named states: neutral)",
        ),
        (["panda", "--random", "3", "--seed", "-1"], None, 2, "'--seed': -1 is not in the range"),
        (
            ["panda", "--random", str(10**17)],
            None,
            2,
            f"'--random': {10**17} is not in the range 1<=x<=100000000.",
        ),
        (["panda"], "[" * 100_000 + "]" * 100_000, 1, "scene.json': nested too deeply to read"),
        (
            ["panda"],
            '{"objects": [{"shape": "sphere:1", "pose": [' + "1" * 5000 + ", 0, 0, 0, 0, 0]}]}",
            1,
            "scene.json': cannot read it as JSON (Exceeds the limit (4300 digits)",
        ),
        (
            ["panda"],
            '{"objects": [{"shape": "sphere:1"}], "objects": []}',
            1,
            "scene.json': cannot read it as JSON (the key 'objects' appears twice in one object)",
        ),
    ],
    ids=[
        "missing-urdf",
        "q-count",
        "q-word",
        "q-limits",
        "q-and-random",
        "random-zero",
        "missing-scene",
        "bad-json",
        "not-object",
        "no-shape",
        "bad-spec",
        "pose-word",
        "far-pose",
        "name-twice",
        "device-urdf",
        "q-not-a-state",
        "negative-seed",
        "too-many-random",
        "deep-json",
        "huge-integer",
        "repeated-key",
    ],
)
def test_robot_errors_are_one_line_on_stderr(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    scene: str | None,
    code: int,
    message: str,
) -> None:
    if scene is not None:
        path = tmp_path / "scene.json"
        path.write_text(scene)
        args = [*args, "--scene", str(path)]
    got, out, err = run(capsys, "robot", *args)
    assert got == code and out == ""
    assert err.count("\n") == 1 and err.startswith("spatialcontact robot: error: ")
    assert message in err


# ------------------------------------------------------------------------ demo and bench


def test_demo_refuses_an_out_folder_that_does_not_exist_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "none" / "x.png"
    code, printed, err = run(capsys, "demo", "-n", "10", "--out", str(out))
    assert (code, printed) == (1, "")
    assert err == (
        f"spatialcontact demo: error: --out {str(out)!r}: no such folder {str(out.parent)!r}\n"
    )
    code, _, err = run(capsys, "demo", "--seed", "-1")
    assert code == 2 and "'--seed': -1 is not in the range x>=0." in err


def test_query_names_a_device_as_not_a_mesh_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "query", "sphere:1", os.devnull)
    assert (code, out) == (1, "")
    assert err == f"spatialcontact query: error: B: filename {os.devnull!r}: not a regular file\n"


def test_demo_checks_configurations_and_writes_a_picture(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    picture = tmp_path / "demo.png"
    code, out, err = run(capsys, "demo", "-n", "300", "--out", str(picture))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("Panda: 8 joint values; scene: table, shelf side L, ")
    assert lines[1].startswith("300 random configurations: ") and "% collide" in lines[1]
    assert lines[2].startswith("straight-line motion between two free configurations: ")
    assert lines[-1] == f"picture: {picture}"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def fake_benchmarks(folder: Path) -> Path:
    folder.mkdir()
    (folder / "_timing.py").write_text("")
    (folder / "bench_alpha.py").write_text(
        "import sys\nprint('| case | us |')\nprint('args', sys.argv[1:])\n"
    )
    (folder / "bench_beta.py").write_text(
        "import sys\nprint('beta table')\nsys.exit('beta broke')\n"
    )
    return folder


def test_bench_runs_each_script_and_prints_its_tables(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = fake_benchmarks(tmp_path / "benchmarks")
    code, out, err = run(
        capsys, "bench", "alpha", "--quick", "--json", str(tmp_path / "figs"), "--dir", str(folder)
    )
    assert code == 0
    assert "== bench_alpha.py ==\n| case | us |" in out
    assert f"args ['--quick', '--json', '{tmp_path / 'figs' / 'bench_alpha.json'}']" in out
    assert "beta" not in out and (tmp_path / "figs").is_dir()
    code, out, err = run(capsys, "bench", "--dir", str(folder))
    assert code == 1 and "beta table" in out and "args []" in out
    assert err.splitlines()[-1] == (
        "spatialcontact bench: error: failed: bench_beta.py (exit 1: beta broke)"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gamma"], "no benchmark named gamma (known: alpha, beta)"),
        (
            ["--dir", "elsewhere"],
            "no benchmark scripts in 'elsewhere': they are part of the "
            "source checkout, not of the installed package",
        ),
    ],
    ids=["unknown-name", "no-scripts"],
)
def test_bench_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    folder = fake_benchmarks(tmp_path / "benchmarks")
    if "--dir" not in args:
        args = [*args, "--dir", str(folder)]
    code, _, err = run(capsys, "bench", *args)
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("spatialcontact bench: error: ")
    assert message in err


def test_bench_finds_the_checkout_scripts() -> None:
    from spatialcontact.cli import _bench_folder

    folder = _bench_folder(None)
    assert folder == Path(sc.__file__).resolve().parent.parent / "benchmarks"
    assert (folder / "bench_queries.py").is_file()


# ------------------------------------------------------------------------ entry points


def test_unknown_command_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "nope")
    assert (code, out, err) == (2, "", "spatialcontact: error: No such command 'nope'.\n")
    # No command: the help as click lays it out, on stderr (exit 2), not squashed into a line.
    code, out, err = run(capsys)
    assert (code, out) == (2, "")
    assert err.startswith("Usage: spatialcontact [OPTIONS] COMMAND [ARGS]...\n")
    assert "\nCommands:\n" in err
    code, out, err = run(capsys, "--help")
    assert code == 0 and all(c in out for c in ("bench", "demo", "query", "robot"))
    code, out, err = run(capsys, "--version")
    assert (code, out) == (0, f"spatialcontact, version {sc.__version__}\n")


def test_python_dash_m_and_the_console_script() -> None:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-m", "spatialcontact", "query", "sphere:1", "nofile.stl"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "spatialcontact query: error: B: filename 'nofile.stl': no such mesh file\n"
    )
    script = Path(sys.executable).with_name("spatialcontact")
    assert script.is_file(), "pip install -e . creates the console script"
    done = subprocess.run(
        [str(script), "query", "sphere:1", "sphere:1", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["distance"] == pytest.approx(-2.0)


def test_demo_without_matplotlib_says_so_instead_of_drawing(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from spatialcontact.cli import main\n"
        f"sys.exit(main(['demo', '-n', '100', '--out', {str(tmp_path / 'demo.png')!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "no picture: drawing needs matplotlib (import of matplotlib halted; None in "
        'sys.modules); pip install "spatialcontact[plot]" installs it'
    )
    assert not (tmp_path / "demo.png").exists()
