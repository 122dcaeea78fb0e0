"""Every crash, wrong answer and unclean error the fuzz harness found, as a regression test.

Fixed bugs are plain tests. Open bugs are strict ``xfail`` tests: each says what to change, and
turns into a failure (XPASS) once fixed, which is the cue to drop its entry from
``tests/fuzz/known.py`` (or the filter in the target it names) and its ``xfail`` mark here.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import spatialcontact as sc
from spatialcontact import batch
from spatialcontact.errors import (
    InvalidArgumentError,
    InvalidMeshError,
    InvalidPoseError,
    RobotModelError,
    ShapeTypeError,
    SpatialContactError,
)
from spatialcontact.robot.model import MAX_SAMPLES
from spatialcontact.scene.scene import MAX_REPLICATE
from spatialcontact.sensors import SensorTypeError, SensorValueError

TET = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
TET_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="hand"><collision><geometry><sphere radius="0.06"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="hand"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>
"""


def trans(x: float, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def clean(error: BaseException) -> bool:
    """The documented hierarchy: the library's class and a built-in ValueError or TypeError."""
    return isinstance(error, SpatialContactError) and isinstance(error, (ValueError, TypeError))


@pytest.fixture
def arm(tmp_path: Path) -> sc.RobotModel:
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    return sc.RobotModel.from_urdf(path)


# ------------------------------------------------------------------------------ fixed: meshes


@pytest.mark.parametrize("scale", [[0.87, 1e-300, 2.77], [1.0, 1e-300, 1.0], [1.0, 1.0, 1e-300]])
def test_scaling_a_mesh_flat_keeps_its_distances(scale: list[float]) -> None:
    # a factor of 1e-300 turned two triangles' areas to exactly zero after scaling, and Coal
    # then measured a sphere 50 m away as overlapping by its radius (-1.0)
    mesh = sc.Mesh.from_arrays(TET, TET_FACES, scale=scale)
    ball = sc.Sphere(1.0, pose=trans(50.0))
    assert mesh.distance(ball) == pytest.approx(49.0 - scale[0], abs=1e-9)
    assert ball.distance(mesh) == pytest.approx(49.0 - scale[0], abs=1e-9)
    assert not mesh.iscollided(ball) and not mesh.contacts(ball)


def test_rescaling_a_mesh_flat_and_back() -> None:
    mesh = sc.Mesh.from_arrays(TET, TET_FACES)
    ball = sc.Sphere(1.0, pose=trans(50.0))
    mesh.scale = [1.0, 1e-300, 1.0]
    assert mesh.distance(ball) == pytest.approx(48.0)
    mesh.scale = [1.0, 1.0, 1.0]
    assert mesh.distance(ball) == pytest.approx(48.0) and len(mesh.faces) == 4


def test_a_mesh_scaled_to_no_area_is_refused() -> None:
    flat = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    with pytest.raises(InvalidMeshError, match="all 1 triangles have zero area"):
        sc.Mesh.from_arrays(flat, [[0, 1, 2]], scale=[1.0, 1e-300, 1.0])


def test_a_broken_mesh_file_is_named(tmp_path: Path) -> None:
    flat = tmp_path / "flat.obj"
    flat.write_text("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n")
    with pytest.raises(InvalidMeshError, match=r"^filename '.*flat\.obj': all 1 triangles"):
        sc.Mesh(flat)
    nan = tmp_path / "nan.obj"
    nan.write_text("v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n")
    with pytest.raises(InvalidMeshError, match=r"^filename '.*nan\.obj': vertices must be finite"):
        sc.Mesh(nan)


# ------------------------------------------------------------------ fixed: queries, contacts


def test_security_margin_range_does_not_depend_on_the_float_type() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0, pose=trans(2.5))
    for margin in (1e7, np.float64(1e7), -1e7):
        with pytest.raises(InvalidArgumentError, match="security_margin is too far out"):
            a.contacts(b, security_margin=margin)
    with pytest.raises(InvalidArgumentError, match="security_margin must be finite, got inf"):
        a.contacts(b, security_margin=float("inf"))
    assert len(a.contacts(b, security_margin=1e6)) == 1


def test_contacts_records_refuse_what_is_not_contacts() -> None:
    with pytest.raises(
        ShapeTypeError, match="contacts must be an iterable of Contact records, got None"
    ):
        sc.Contacts(None)  # type: ignore[arg-type]
    with pytest.raises(
        ShapeTypeError, match="contacts must be an iterable of Contact records, got 5"
    ):
        sc.Contacts(5)  # type: ignore[arg-type]
    found = sc.Sphere(1.0).contacts(sc.Sphere(1.0, pose=trans(1.5)))
    for bad in (5, "sphere", None, [found[0].o1]):
        with pytest.raises(ShapeTypeError, match="shape must be a CollisionShape"):
            found.reports(bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- fixed: groups


@pytest.mark.parametrize(
    ("poses", "error", "message"),
    [
        (
            [[["1", "0", "0", "0"]] * 4],
            ShapeTypeError,
            r"poses must be real numbers, got .*strings",
        ),
        ("poses", ShapeTypeError, r"poses must be real numbers, got 'poses'"),
        ([[[10**400] * 4] * 4], InvalidPoseError, r"poses must be real numbers within float range"),
        (np.eye(4)[None].astype(complex), ShapeTypeError, r"complex numbers"),
        (np.eye(4)[None].astype(bool), ShapeTypeError, r"booleans"),
    ],
)
def test_set_poses_refuses_what_numpy_converts(poses: Any, error: type, message: str) -> None:
    group = sc.CollisionShapeGroup([sc.Sphere(0.5)])
    with pytest.raises(error, match=message):
        group.set_poses(poses)
    assert np.array_equal(group[0].T, np.eye(4))


@pytest.mark.parametrize("items", [5, None, 1.5])
def test_group_refuses_what_cannot_be_iterated(items: Any) -> None:
    if items is not None:  # None is no elements
        with pytest.raises(
            ShapeTypeError, match=r"^initlist must be an iterable of CollisionShape"
        ):
            sc.CollisionShapeGroup(items)
    group = sc.CollisionShapeGroup([sc.Sphere(0.5)])
    with pytest.raises(ShapeTypeError, match=r"^items must be an iterable of CollisionShape"):
        group.extend(items)
    assert len(group) == 1
    with pytest.raises(ShapeTypeError, match=r"^initlist must be .* got Sphere"):
        sc.CollisionShapeGroup(sc.Sphere(0.1))  # type: ignore[arg-type]


def test_group_positions_are_integers_as_for_a_list() -> None:
    a, b = sc.Sphere(0.1), sc.Sphere(0.2)
    group = sc.CollisionShapeGroup([a])
    for bad in ("0", 1.5, None, True, [0]):
        with pytest.raises(ShapeTypeError, match="index must be an integer"):
            group.insert(bad, sc.Sphere(0.3))  # type: ignore[arg-type]
        with pytest.raises(ShapeTypeError, match="start must be an integer"):
            group.index(a, bad)  # type: ignore[arg-type]
    assert len(group) == 1
    group.insert(10**400, b)  # beyond the end appends, as list.insert does
    group.insert(-(10**400), sc.Sphere(0.4))  # before the start goes first
    assert group.index(b) == 2 and group.index(a, np.int64(-2)) == 1
    with pytest.raises(InvalidArgumentError, match="is not in this group") as caught:
        group.index(sc.Sphere(0.5))
    assert isinstance(caught.value, ValueError)  # as list.index raises


# ---------------------------------------------------------------------------- fixed: batches


def test_batch_refuses_masked_pose_arrays() -> None:
    t = np.ma.masked_array([[0.5, 0.0, 0.0]], mask=[[True, False, False]])
    with pytest.raises(InvalidPoseError, match="a masked array"):
        batch.distance(sc.Sphere(1.0), sc.Sphere(1.0), t)
    P = np.ma.masked_array(np.eye(4)[None])
    with pytest.raises(InvalidPoseError, match="a masked array"):
        batch.iscollided(sc.Sphere(1.0), sc.Sphere(1.0), P)


def test_batch_chunks_check_function_and_items_first() -> None:
    def twice(_: Any, chunk: Any) -> Any:
        return [2 * x for x in chunk]

    with pytest.raises(ShapeTypeError, match="function must be callable, got 'f'"):
        batch.map_chunks("f", None, [1, 2])  # type: ignore[arg-type]
    for items in (None, 5, {1, 2}, {"a": 1}, iter([1])):
        with pytest.raises(ShapeTypeError, match="items must be a sequence or an array"):
            batch.map_chunks(twice, None, items)  # type: ignore[arg-type]
    assert batch.map_chunks(twice, None, range(3)) == [[0, 2, 4]]


def test_point_distance_names_x() -> None:
    with pytest.raises(InvalidArgumentError, match=r"^x must be finite, got nan at row 0"):
        batch.point_distance(sc.Sphere(1.0), [[math.nan, 0.0, 0.0]])


# ---------------------------------------------------------------------------- fixed: spheres


@pytest.mark.parametrize(
    "rows",
    [
        np.array([[0.0, 0.0, 0.0, 0.1]], dtype=complex),
        np.array([[0.0, 0.0, 0.0, 0.1]], dtype=object),
        np.array([[False, False, False, True]]),
        np.array([[0.0, 0.0, 0.0, 1e300]]),
        np.array([[1e7, 0.0, 0.0, 0.1]]),
    ],
)
def test_sphere_model_refuses_converted_or_out_of_range_rows(rows: np.ndarray) -> None:
    from spatialcontact.spheres import SphereModel

    with pytest.raises(RobotModelError, match="the spheres of link 'base' must"):
        SphereModel({"base": rows})


def test_sphere_model_checks_its_maps() -> None:
    from spatialcontact.spheres import SphereModel

    good = {"base": np.array([[0.0, 0.0, 0.0, 0.1]])}
    with pytest.raises(RobotModelError, match="self_collision_ignore must map link names"):
        SphereModel(good, self_collision_ignore=5)  # type: ignore[arg-type]
    with pytest.raises(RobotModelError, match="self_collision_buffer must map link names"):
        SphereModel(good, self_collision_buffer=[0.1])  # type: ignore[arg-type]
    with pytest.raises(
        RobotModelError, match="self_collision_ignore of link 'base' must be a list"
    ):
        SphereModel(good, self_collision_ignore={"base": 5})  # type: ignore[dict-item]
    with pytest.raises(RobotModelError, match="source must be a str, got None"):
        SphereModel(good, source=None)  # type: ignore[arg-type]


def test_fit_refuses_radii_out_of_the_size_range(arm: sc.RobotModel) -> None:
    # 1e300 overflowed inside the fit; 5e-324 ran for minutes
    for radius in (1e300, 5e-324, 1e7):
        with pytest.raises(
            InvalidArgumentError, match=r"max_radius must lie in \[1e-05, 1e\+06\] m"
        ):
            arm.spheres(max_radius=radius)


def test_curobo_files_that_cannot_be_read_or_written(tmp_path: Path, arm: sc.RobotModel) -> None:
    from spatialcontact.spheres import load_curobo, save_curobo

    binary = tmp_path / "binary.yml"
    binary.write_bytes(b"\x00\xff\xfe\x00")
    with pytest.raises(RobotModelError, match="is not UTF-8 text"):
        load_curobo(binary)
    model = arm.spheres(count=1)
    for path in (tmp_path, tmp_path / "missing" / "x.yml"):
        with pytest.raises(RobotModelError, match="cannot write it"):
            save_curobo(model, path)
    ignore = tmp_path / "ignore.yml"
    ignore.write_text(
        "collision_spheres:\n  base:\n    - center: [0, 0, 0]\n      radius: 0.1\n"
        "self_collision_ignore:\n  base: 5\n"
    )
    with pytest.raises(
        RobotModelError, match="self_collision_ignore of link 'base' must be a list"
    ):
        load_curobo(ignore)


def test_spheres_cover_takes_numpy_bools(arm: sc.RobotModel) -> None:
    report = arm.spheres_cover(arm.spheres(count=1), measure=np.False_)  # type: ignore[arg-type]
    assert report.covered and math.isnan(next(iter(report.links.values())).overshoot)


# ------------------------------------------------------------------ fixed: robots (robot/*)


def test_robot_refuses_masked_joint_vectors(arm: sc.RobotModel) -> None:
    # a masked float64 array skipped the checks and was used unmasked
    q = np.ma.masked_array([0.5], mask=[True])
    with pytest.raises(ShapeTypeError, match="a masked array"):
        arm.set_q(q)
    with pytest.raises(ShapeTypeError, match=r"(?s)q0 must be 1 joint values, .*a masked array"):
        arm.check_motion(q, np.zeros(1))


def test_robot_sample_checks_n_and_rng(arm: sc.RobotModel) -> None:
    for n in (True, 1.0, math.nan, 1j):
        with pytest.raises(ShapeTypeError, match="n must be an integer"):
            arm.sample(n)  # type: ignore[arg-type]
    for rng in (1.5, "seed", -1):
        with pytest.raises(SpatialContactError, match="rng"):
            arm.sample(2, rng=rng)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"rng .* must be an integer >= 0, got -1"):
        arm.sample(2, rng=-1)
    with pytest.raises(InvalidArgumentError, match=r"^n must be an integer >= 0, got -1$"):
        arm.sample(-1)
    # int(10**400) was taken and numpy raised "Maximum allowed dimension exceeded"
    for n in (MAX_SAMPLES + 1, 10**400):
        with pytest.raises(InvalidArgumentError, match="n must be at most 100000000"):
            arm.sample(n)
    assert arm.sample(0).shape == (0, 1)
    drawn = arm.sample(np.int64(3), rng=np.int64(7))
    assert np.array_equal(drawn, arm.sample(3, rng=np.random.default_rng(7)))
    assert drawn.shape == (3, 1) and np.all(np.abs(drawn) <= 3.0)


def test_robot_motion_tolerance_takes_numpy_numbers(arm: sc.RobotModel) -> None:
    q0, q1 = np.zeros(1), np.full(1, 0.5)
    numbers: list[Any] = [np.float32(0.01), Fraction(1, 100), np.array(0.01), np.int64(1)]
    for tolerance in numbers:
        assert arm.check_motion(q0, q1, tolerance=tolerance)
        assert arm.check_motions([q0], [q1], tolerance=tolerance).tolist() == [True]
    with pytest.raises(InvalidArgumentError, match=r"tolerance must be .* within float range"):
        arm.check_motion(q0, q1, tolerance=10**400)
    with pytest.raises(InvalidArgumentError, match=r"^tolerance must be finite, got nan$"):
        arm.check_motions([q0], [q1], tolerance=math.nan)
    with pytest.raises(InvalidArgumentError, match=r"^tolerance must be a finite .* got -1$"):
        arm.check_motion(q0, q1, tolerance=-1)


def test_robot_batches_check_progress(arm: sc.RobotModel) -> None:
    Q = np.zeros((2, 1))
    with pytest.raises(ShapeTypeError, match="progress must be True or False, got ''"):
        arm.check_motions(Q, Q, progress="")  # type: ignore[arg-type]
    for method in (arm.check, arm.in_collision_many):
        with pytest.raises(ShapeTypeError, match="progress must be True or False, got 1"):
            method(Q, progress=1)  # type: ignore[arg-type]
    assert arm.check(Q, progress=np.False_).tolist() == [False, False]  # type: ignore[arg-type]


def test_robot_attach_checks_allowed(arm: sc.RobotModel) -> None:
    for allowed in (None, 5, "base"):
        with pytest.raises(
            ShapeTypeError, match=f"^allowed must be an iterable of link names, got {allowed!r}$"
        ):
            arm.attach(sc.Sphere(0.02), "hand", allowed=allowed)  # type: ignore[arg-type]
    unknown: list[Any] = [[5], [["base"]]]
    for allowed in unknown:
        with pytest.raises(RobotModelError, match=r"^link .* is not a link of robot 'arm'"):
            arm.attach(sc.Sphere(0.02), "hand", allowed=allowed)
    with pytest.raises(RobotModelError, match=r"^link \['hand'\] is not a link"):
        arm.attach(sc.Sphere(0.02), ["hand"])  # type: ignore[arg-type]
    assert not arm.attachments
    assert arm.attach(sc.Sphere(0.02), "hand", allowed=iter(["base"])) == "attached_0"


def test_urdf_origin_out_of_range_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "far.urdf"
    path.write_text(ARM.replace('<origin xyz="0 0 0.5"/>', '<origin xyz="1e300 0 0.5"/>'))
    with pytest.raises(
        RobotModelError,
        match=r"far\.urdf', joint 'j1': origin is too far out: .* ±1e\+06 m, got \[1e\+300, 0",
    ):
        sc.RobotModel.from_urdf(path)
    path.write_text(ARM.replace('<origin xyz="0 0 0.5"/>', '<origin xyz="1e6 0 0.5"/>'))
    assert sc.RobotModel.from_urdf(path).fk([0.0])["hand"][:3, 3].tolist() == [1e6, 0.0, 0.5]


def test_urdf_size_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "huge.urdf"
    path.write_text(ARM.replace('size="0.2 0.2 0.1"', 'size="1e300 0.2 0.1"'))
    with pytest.raises(SpatialContactError, match=r"huge\.urdf.*base|base.*huge\.urdf"):
        sc.RobotModel.from_urdf(path)
    with pytest.raises(
        RobotModelError,
        match=r"huge\.urdf', link 'base', collision 0: box size must lie in \[1e-05, 1e\+06\] m",
    ):
        sc.RobotModel.from_urdf(path)
    path.write_text(ARM.replace('radius="0.06"', 'radius="1e-6"'))
    with pytest.raises(RobotModelError, match=r"link 'hand', collision 0: radius must lie in"):
        sc.RobotModel.from_urdf(path)


def test_urdf_empty_path_is_shown() -> None:
    with pytest.raises(RobotModelError, match=r"^URDF must be a path to a file, got ''$"):
        sc.RobotModel.from_urdf("")


# ------------------------------------------------------------------- fixed: scenes (scene/*)


def test_replicate_refuses_a_ragged_spacing() -> None:
    scene = sc.Scene()
    scene.add_world()
    scene.add(sc.Sphere(0.5), "a", world=0)
    with pytest.raises(InvalidArgumentError, match=r"^spacing must be .* \(a ragged nested"):
        scene.replicate(2, [[1.0, 2.0], [3.0]])
    with pytest.raises(ShapeTypeError, match=r"^spacing must be .*, got '1'"):
        scene.replicate(2, "1")
    assert scene.worlds == 1 and scene.names == ("a",)


def test_replicate_out_of_range_changes_nothing() -> None:
    scene = sc.Scene()
    scene.add_world()
    scene.add(sc.Sphere(0.5), "a", world=0)
    with pytest.raises(
        InvalidArgumentError,
        match=r"^spacing 600000.0 puts world 2's copy of 'a' at \[1200000.0, 0.0, 0.0\], beyond",
    ):
        scene.replicate(2, 6e5)
    with pytest.raises(InvalidArgumentError, match=r"^spacing \[0, 0, -400000.0\] puts world 3"):
        scene.replicate(3, [0, 0, -4e5])
    assert scene.worlds == 1 and scene.names == ("a",)
    assert scene.replicate(2, 5e5) == [1, 2]  # the last copy at exactly 1e6 m
    assert scene["a/2"].T[:3, 3].tolist() == [1e6, 0.0, 0.0]


def test_replicate_huge_n_is_refused_at_once() -> None:
    scene = sc.Scene()
    scene.add_world()
    scene.add(sc.Sphere(0.5), "a", world=0)
    for n in (MAX_REPLICATE + 1, 2**63):
        with pytest.raises(InvalidArgumentError, match=r"^n must be at most 1000000 .* got"):
            scene.replicate(n)
    assert scene.worlds == 1 and scene.names == ("a",)
    code = textwrap.dedent(
        """
        import spatialcontact as sc
        scene = sc.Scene()
        scene.add_world()
        scene.add(sc.Sphere(0.5), "a", world=0)
        try:
            scene.replicate(2**63)
        except sc.InvalidArgumentError as error:
            print("REFUSED", error)
        """
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=8
        )
    except subprocess.TimeoutExpired:
        pytest.fail("replicate(2**63) still running after 8 s")
    assert done.returncode == 0 and "REFUSED" in done.stdout, done.stderr


# ----------------------------------------------------------------- fixed: sensors (sensors/*)


def test_tangential_part_checks_its_input() -> None:
    from spatialcontact.sensors import tangential_part

    normals = np.tile([0.0, 0.0, 1.0], (3, 1))
    for forces in (np.ones((2, 3)), "f", np.ones((3, 3), dtype=complex)):
        with pytest.raises(SpatialContactError, match="forces"):
            tangential_part(forces, normals)
    with pytest.raises(SensorValueError, match=r"^forces and normals .* \(2, 3\) and \(3, 3\)"):
        tangential_part(np.ones((2, 3)), normals)
    with pytest.raises(SensorTypeError, match=r"(?s)^forces must be real numbers, got .*complex"):
        tangential_part(np.ones((3, 3), dtype=complex), normals)
    with pytest.raises(
        SensorValueError, match=r"^normals must have shape \(n, 3\), got shape \(3,\)"
    ):
        tangential_part(np.ones((3, 3)), [0.0, 0.0, 1.0])
    with pytest.raises(SensorValueError, match=r"^normals must be finite"):
        tangential_part(np.ones((3, 3)), np.full((3, 3), math.nan))
    got = tangential_part([[1.0, 2.0, 3.0]], [[0.0, 0.0, 1.0]])
    assert got.tolist() == [[1.0, 2.0, 0.0]]
    assert tangential_part(np.zeros((0, 3)), np.zeros((0, 3))).shape == (0, 3)


def test_object_sensor_plot_refuses_what_is_not_axes() -> None:
    from spatialcontact.sensors import ObjectContactSensor

    sensor = ObjectContactSensor(sc.Sphere(0.5))
    for ax in (None, 5, "ax"):
        with pytest.raises(SensorTypeError, match=f"^ax must be a matplotlib Axes, got {ax!r}$"):
            sensor.plot(ax)
    assert sensor.artists == ()


def test_object_sensor_checks_its_colour() -> None:
    from spatialcontact.sensors import ObjectContactSensor

    for color in ("notacolour", (True, False, True), np.array([1.0, 0.0, 0.0], dtype=object)):
        with pytest.raises(SpatialContactError, match=r"colou?r"):
            ObjectContactSensor(sc.Sphere(0.5), color=color)
    with pytest.raises(
        SensorValueError, match=r"^color must be a matplotlib colour name, got 'no'$"
    ):
        ObjectContactSensor(sc.Sphere(0.5), color="no")
    with pytest.raises(SensorTypeError, match=r"^color .*\(True, False, True\)"):
        ObjectContactSensor(sc.Sphere(0.5), color=(True, False, True))
    with pytest.raises(SensorValueError, match=r"^color .*\(2000.0, 0.0, 0.0\)"):
        ObjectContactSensor(sc.Sphere(0.5), color=(2000.0, 0.0, 0.0))
    assert ObjectContactSensor(sc.Sphere(0.5), color=[0, 255, 0]).color == (0.0, 1.0, 0.0, 1.0)
    assert ObjectContactSensor(sc.Sphere(0.5), color="tab:blue").color == "tab:blue"


def test_open_bugs_are_pinned_here() -> None:
    # every entry of known.py names a test of this module
    from .known import KNOWN

    names = {name for name in globals() if name.startswith("test_")}
    assert {entry.test for entry in KNOWN} <= names
    assert all(clean(error) for error in (InvalidArgumentError("x"), ShapeTypeError("x")))


# ------------------------------------------------------------- fixed: found by the long run


def test_a_sphere_deep_inside_a_cylinder_has_a_negative_distance() -> None:
    # Coal answered exactly 0 here (the closed form repaired only d < 0): distance() said 0
    # while contacts() said -0.355
    cylinder = sc.Cylinder(0.8787059703054182, 0.9971903059734731)
    for x, y, z in [(-0.30132157, -0.02370964, 0.14482594), (-0.3, 0.0, 0.0), (0.1, 0.0, 0.1)]:
        ball = sc.Sphere(1e-3, pose=trans(x, y, z))
        expected = max(math.hypot(x, y) - cylinder.radius, abs(z) - cylinder.length / 2) - 1e-3
        assert cylinder.distance(ball) == pytest.approx(expected, abs=1e-9)
        assert ball.distance(cylinder) == pytest.approx(expected, abs=1e-9)
        assert cylinder.closest_point(ball)[0] == pytest.approx(expected, abs=1e-9)


def test_batch_contacts_margin_has_the_range_of_the_shape_query() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    for margin in (1e7, -1e7):
        with pytest.raises(InvalidArgumentError, match="security_margin is too far out"):
            batch.contacts(a, b, [[5.0, 0.0, 0.0]], security_margin=margin)
    assert batch.contacts(a, b, [[5.0, 0.0, 0.0]], security_margin=4.0).counts.tolist() == [1]
