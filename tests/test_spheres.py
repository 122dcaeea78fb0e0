"""Sphere models: fitting, the coverage proof, cuRobo files, the kernel against its numpy
reference and Coal, no false negatives against the meshes, and motion checks."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import textwrap
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import CONTINUOUS_ARM
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialcontact import (
    Capsule,
    Cone,
    Cuboid,
    Cylinder,
    Ellipsoid,
    HalfSpace,
    OcTree,
    Scene,
    Sphere,
    meshes,
)
from spatialcontact.errors import InvalidArgumentError, RobotModelError, ShapeTypeError
from spatialcontact.robot import RobotModel
from spatialcontact.robot.urdf import read_urdf
from spatialcontact.spheres import (
    MARGIN,
    SphereModel,
    SphereRobotModel,
    kernel,
    load_curobo,
    reference,
    save_curobo,
)
from spatialcontact.spheres.coverage import prove, prove_link
from spatialcontact.spheres.fit import _balls, fit_link
from spatialcontact.spheres.geometry import LinkSurface, link_surfaces
from spatialcontact.spheres.packing import BOX, CAPSULE, CLOUD, CYLINDER, HALFSPACE, OTHER, SPHERE

PANDA = meshes.path("panda")
IIWA = meshes.path("iiwa14")


def pose(x: float, y: float, z: float, R: np.ndarray | None = None) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    if R is not None:
        T[:3, :3] = R
    return T


def turn(axis: str, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def surface(triangles: Any = None, cylinders: Any = (), spheres: Any = ()) -> LinkSurface:
    tris = np.zeros((0, 3, 3)) if triangles is None else np.asarray(triangles, dtype=float)
    return LinkSurface(
        link="hand_made",
        triangles=tris.reshape(-1, 3, 3),
        cylinder_poses=np.array([T for T, _ in cylinders]).reshape(-1, 4, 4),
        cylinder_sizes=np.array([s for _, s in cylinders], dtype=float).reshape(-1, 2),
        spheres=np.asarray(spheres, dtype=float).reshape(-1, 4),
        volume=1.0,
    )


def shelf() -> Scene:
    """The 6-box shelf of benchmarks/bench_robot.py."""
    scene = Scene()
    x, depth, width, height = 0.6, 0.3, 0.8, 0.9
    scene.add(Cuboid([depth, 0.02, height], pose=pose(x, -width / 2, height / 2)), "side_left")
    scene.add(Cuboid([depth, 0.02, height], pose=pose(x, width / 2, height / 2)), "side_right")
    scene.add(Cuboid([0.02, width, height], pose=pose(x + depth / 2, 0, height / 2)), "back")
    for name, z in (("board_low", 0.2), ("board_mid", 0.5), ("board_top", 0.85)):
        scene.add(Cuboid([depth, width, 0.02], pose=pose(x, 0.0, z)), name)
    return scene


def every_kind() -> Scene:
    """One obstacle of each kind the kernel tests, posed off the axes, and two it does not."""
    scene = Scene()
    scene.add(Sphere(0.12, pose=pose(0.45, 0.3, 0.6)), "sphere")
    scene.add(Cuboid([0.3, 0.1, 0.2], pose=pose(0.5, -0.35, 0.4, turn("z", 0.7))), "box")
    scene.add(Capsule(0.05, 0.4, pose=pose(-0.4, 0.35, 0.5, turn("x", 1.1))), "capsule")
    scene.add(Cylinder(0.08, 0.3, pose=pose(-0.45, -0.3, 0.7, turn("y", 0.5))), "cylinder")
    scene.add(HalfSpace([0.2, 0.1, 1.0], -0.15), "floor")
    rng = np.random.default_rng(1)
    cloud = rng.uniform([-0.15, -0.15, -0.1], [0.15, 0.15, 0.1], size=(300, 3))
    scene.add(OcTree(cloud, 0.04, pose=pose(0.0, 0.55, 0.45, turn("z", 0.3))), "cloud")
    scene.add(Ellipsoid([0.1, 0.15, 0.08], pose=pose(0.0, -0.55, 0.9)), "ellipsoid")
    scene.add(Cone(0.1, 0.25, pose=pose(0.55, 0.0, 1.0)), "cone")
    return scene


@pytest.fixture(scope="module")
def panda() -> RobotModel:
    return RobotModel.from_urdf(PANDA / "panda.urdf", srdf=PANDA / "panda.srdf")


@pytest.fixture(scope="module")
def model(panda: RobotModel) -> SphereModel:
    return panda.spheres(count=8)


@pytest.fixture(scope="module")
def spheres(model: SphereModel) -> SphereRobotModel:
    robot = RobotModel.from_urdf(
        PANDA / "panda.urdf", srdf=PANDA / "panda.srdf", geometry="spheres", spheres=model
    )
    assert isinstance(robot, SphereRobotModel)
    return robot


# ----------------------------------------------------------------------------- coverage


def test_a_triangle_in_its_circumsphere_is_covered_and_not_in_a_smaller_one() -> None:
    triangle = [[[0, 0, 0], [1, 0, 0], [0, 1, 0]]]
    r = math.sqrt(0.5)  # the circumcircle's radius, centred at (0.5, 0.5, 0)
    held = prove_link(surface(triangle), np.array([[0.5, 0.5, 0.0, r + 2 * MARGIN]]), False)
    assert held.covered and held.unproved == 0 and len(held.uncovered) == 0
    short = prove_link(surface(triangle), np.array([[0.5, 0.5, 0.0, r - 1e-6]]), False)
    assert not short.covered
    assert sorted(map(tuple, short.uncovered.tolist())) == [(0, 0, 0), (0, 1, 0), (1, 0, 0)]


def test_a_sliver_two_spheres_share_is_proved_by_splitting() -> None:
    sliver = [[[0, 0, 0], [2, 0, 0], [0, 0.1, 0]]]
    two = np.array([[0.5, 0.05, 0.0, 0.6], [1.5, 0.05, 0.0, 0.6]])
    assert prove_link(surface(sliver), two, False).covered
    # Neither sphere alone holds it, and without the second the far tip is out.
    one = prove_link(surface(sliver), two[:1], False)
    assert not one.covered
    assert [2.0, 0.0, 0.0] in one.uncovered.tolist()


def test_a_gap_between_two_spheres_is_found() -> None:
    sliver = [[[0, 0, 0], [2, 0, 0], [0, 0.1, 0]]]
    apart = np.array([[0.4, 0.05, 0.0, 0.45], [1.6, 0.05, 0.0, 0.45]])  # x in (0.85, 1.15) open
    report = prove_link(surface(sliver), apart, False)
    assert not report.covered
    assert all(0.85 < x < 1.15 for x, _, _ in report.uncovered.tolist())


def test_cylinders_and_sphere_elements_are_covered_and_checked() -> None:
    T = pose(0.1, 0.0, 0.2, turn("x", 0.4))
    link = surface(cylinders=[(T, (0.05, 0.3))], spheres=[[0.0, 0.3, 0.0, 0.04]])
    fitted = fit_link(link, count=2)
    assert prove_link(link, fitted, False).covered
    assert len(fitted) == 3 + 1 and fitted[0, 3] == pytest.approx(math.hypot(0.05, 0.051))
    # The cylinder alone in one axis sphere of the half-diagonal radius: exactly held.
    half = math.hypot(0.05, 0.15)
    exact = np.array([[0.1, 0.0, 0.2, half + 2 * MARGIN], [0.0, 0.3, 0.0, 0.04 + 2 * MARGIN]])
    assert prove_link(link, exact, False).covered
    exact[0, 3] = half - 1e-6
    assert not prove_link(link, exact, False).covered
    exact[0, 3], exact[1, 3] = half + 1e-6, 0.04 - 1e-6
    lost = prove_link(link, exact, False)
    assert not lost.covered and lost.uncovered.tolist() == [[0.0, 0.3, 0.0]]


def test_the_overshoot_and_volume_ratio_of_one_sphere_around_a_cube() -> None:
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * 0.5
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
             [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]]  # fmt: skip
    cube = replace(surface(corners[faces]), volume=1.0)
    fitted = fit_link(cube, count=1)
    assert fitted.shape == (1, 4)
    np.testing.assert_allclose(fitted[0, :3], 0.0, atol=1e-3)
    report = prove_link(cube, fitted)
    assert report.covered
    r = fitted[0, 3]
    # The sphere's farthest point from the cube is over a face's centre: r - 0.5 away.
    assert r - 0.5 - 0.01 <= report.overshoot <= r - 0.5 + 1e-9
    assert report.volume_ratio == pytest.approx(4 / 3 * math.pi * r**3, rel=0.02)


@pytest.mark.parametrize(
    ("urdf", "count"),
    [(PANDA / "panda.urdf", 3), (PANDA / "panda.urdf", 8), (IIWA / "lbr_iiwa_14_r820.urdf", 4)],
)
def test_every_shipped_link_is_covered(urdf: Path, count: int) -> None:
    spec = read_urdf(urdf, None)
    robot_model = RobotModel.from_urdf(urdf)
    fitted = robot_model.spheres(count=count)
    report = prove(link_surfaces(spec), fitted, measure=False)
    assert report.covered
    assert set(report.links) == {g.link for g in spec.geometries}
    assert all(c.spheres == count for c in report.links.values())


def test_max_radius_bounds_every_sphere(panda: RobotModel) -> None:
    small = panda.spheres(max_radius=0.09)
    assert max(rows[:, 3].max() for rows in small.spheres.values()) <= 0.09
    assert panda.spheres_cover(small, measure=False).covered


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(*[st.floats(-1, 1)] * 3), min_size=3, max_size=3),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 6),
)
def test_fitted_spheres_cover_any_triangles(triangles: list[Any], count: int) -> None:
    link = surface(triangles)
    fitted = fit_link(link, count=count)
    assert len(fitted) <= count
    assert prove_link(link, fitted, False).covered


def test_a_link_without_spheres_is_not_covered(panda: RobotModel, model: SphereModel) -> None:
    missing = SphereModel({k: v for k, v in model.spheres.items() if k != "panda_hand"})
    report = panda.spheres_cover(missing, measure=False)
    assert not report.covered
    assert not report.links["panda_hand"].covered and report.links["panda_link0"].covered
    shrunk = SphereModel({k: v * [1, 1, 1, 0.9] for k, v in model.spheres.items()})
    assert not any(c.covered for c in panda.spheres_cover(shrunk, measure=False).links.values())


def test_the_report_measures_and_prints(panda: RobotModel, model: SphereModel) -> None:
    report = panda.spheres_cover(SphereModel({"panda_link7": model.spheres["panda_link7"]}))
    c = report.links["panda_link7"]
    assert c.covered and 0.0 < c.overshoot < 0.1 and 1.0 < c.volume_ratio < 5.0
    assert not report.covered  # the other links have no spheres
    assert "| panda_link7 | 8 | yes |" in report.table()
    assert report.overshoot == c.overshoot  # the only link measured
    assert math.isnan(report.links["panda_hand"].overshoot)


def test_fitting_errors(panda: RobotModel) -> None:
    with pytest.raises(InvalidArgumentError, match="exactly one of count and max_radius"):
        panda.spheres()
    with pytest.raises(InvalidArgumentError, match="exactly one of count and max_radius"):
        panda.spheres(count=3, max_radius=0.1)
    with pytest.raises(InvalidArgumentError, match=r"count must be an int in \[1, 256\].*0"):
        panda.spheres(count=0)
    with pytest.raises(ShapeTypeError, match=r"count must be an int.*True"):
        panda.spheres(count=True)
    with pytest.raises(InvalidArgumentError, match="'panda_link8', which is not a link with"):
        panda.spheres(count={"panda_link8": 2})
    with pytest.raises(InvalidArgumentError, match="max_radius must be a number of metres > 0"):
        panda.spheres(max_radius=-0.1)
    with pytest.raises(InvalidArgumentError, match="model must be a SphereModel, got 3"):
        panda.spheres_cover(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"count": 1.5}, "count must be an int in [1, 256] (or a dict of them by link), got 1.5"),
        ({"count": True}, "count must be an int in [1, 256] (or a dict of them by link), got True"),
        ({"count": "4"}, "count must be an int in [1, 256] (or a dict of them by link), got '4'"),
        ({"count": {"panda_link1": 2.0}}, "count['panda_link1'] must be an int in [1, 256]"),
        ({"max_radius": "a"}, "max_radius must be a real number, got 'a'"),
        ({"max_radius": True}, "max_radius must be a real number, got True"),
    ],
)
def test_fitting_arguments_of_the_wrong_type_are_type_errors(
    panda: RobotModel, arguments: dict[str, Any], message: str
) -> None:
    # docs/limits.md: a float or a boolean where an integer is expected, or a string where a
    # number is, is a ShapeTypeError (a TypeError); these raised InvalidArgumentError.
    with pytest.raises(ShapeTypeError) as raised:
        panda.spheres(**arguments)
    assert str(raised.value).startswith(message)
    assert not isinstance(raised.value, ValueError)


def test_fitting_arguments_out_of_range_are_still_value_errors(panda: RobotModel) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"count": 257}, r"count must be an int in \[1, 256\].*257 for link"),
        ({"count": {"panda_link1": 0}}, r"count must be an int.*0 for link 'panda_link1'"),
        ({"max_radius": 0.0}, "max_radius must be a number of metres > 0"),
        ({"max_radius": np.inf}, "max_radius must be finite"),
        ({"max_radius": 1e-6}, r"max_radius must lie in \[1e-05, 1e\+06\] m"),
    ]
    for arguments, message in cases:
        with pytest.raises(InvalidArgumentError, match=message):
            panda.spheres(**arguments)
    assert panda.spheres(count={"panda_link1": np.int64(2)}).spheres["panda_link1"].shape == (2, 4)


def test_sphere_model_checks_its_values() -> None:
    with pytest.raises(RobotModelError, match=r"rows \[x, y, z, radius\].*shape \(3,\)"):
        SphereModel({"a": [1, 2, 3]})
    with pytest.raises(RobotModelError, match=r"radius > 0, got -1.0"):
        SphereModel({"a": [[0, 0, 0, -1]]})
    with pytest.raises(RobotModelError, match="must be finite"):
        SphereModel({"a": [[0, math.nan, 0, 1]]})
    with pytest.raises(RobotModelError, match="must be numbers"):
        SphereModel({"a": [["x", 0, 0, 1]]})
    with pytest.raises(RobotModelError, match="link names must be str, got 3"):
        SphereModel({3: [[0, 0, 0, 1]]})  # type: ignore[dict-item]
    with pytest.raises(RobotModelError, match="self_collision_ignore of link 'a' must be a list"):
        SphereModel({}, {"a": "b"})
    with pytest.raises(RobotModelError, match="self_collision_buffer of link 'a' must be a num"):
        SphereModel({}, {}, {"a": "0.1"})  # type: ignore[dict-item]
    with pytest.raises(RobotModelError, match="must be finite, got inf"):
        SphereModel({}, {}, {"a": math.inf})
    with pytest.raises(RobotModelError, match="spheres must map link names"):
        SphereModel([1])  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- cuRobo files


def test_a_sphere_set_round_trips_through_the_curobo_format(
    model: SphereModel, tmp_path: Path
) -> None:
    given_model = SphereModel(
        dict(model.spheres), {"panda_link0": ("panda_link1", "panda_link2")}, {"panda_hand": 0.01}
    )
    path = tmp_path / "panda_spheres.yml"
    save_curobo(given_model, path)
    loaded = load_curobo(path)
    assert list(loaded.spheres) == list(model.spheres)
    for link, rows in model.spheres.items():
        np.testing.assert_array_equal(loaded.spheres[link], rows)  # exact: YAML keeps reprs
    assert loaded.self_collision_ignore == {"panda_link0": ("panda_link1", "panda_link2")}
    assert loaded.self_collision_buffer == {"panda_hand": 0.01}
    assert loaded.source == f"sphere file {str(path)!r}"


def test_a_curobo_robot_config_is_read(tmp_path: Path) -> None:
    spheres_file = tmp_path / "spheres" / "arm.yml"
    spheres_file.parent.mkdir()
    spheres_file.write_text(
        textwrap.dedent(
            """
            collision_spheres:
              link_a:
                - center: [0.0, 0.0, 0.1]
                  radius: 0.05
                - {center: [0, 0, 0.2], radius: 1}
              link_b: []
            """
        )
    )
    config = tmp_path / "arm.yml"
    config.write_text(
        textwrap.dedent(
            """
            robot_cfg:
              kinematics:
                urdf_path: arm.urdf
                collision_spheres: spheres/arm.yml
                self_collision_ignore: {link_a: [link_b]}
                self_collision_buffer: {link_a: 0.0}
            """
        )
    )
    loaded = load_curobo(config)
    assert list(loaded.spheres) == ["link_a"]
    np.testing.assert_array_equal(loaded.spheres["link_a"], [[0, 0, 0.1, 0.05], [0, 0, 0.2, 1]])
    assert loaded.ignored_pairs() == {frozenset(("link_a", "link_b"))}
    assert loaded.count == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("collision_spheres: [1, 2", "is not valid YAML"),
        ("kinematics: {urdf_path: a.urdf}", "no 'collision_spheres' at the top level"),
        ("collision_spheres: [1]", "collision_spheres must map link names to lists"),
        ("collision_spheres: {a: 3}", r"collision_spheres\['a'\] must be a list of spheres"),
        ("collision_spheres: {a: [{center: [0, 0, 0]}]}", r"\['a'\]\[0\] must be a mapping"),
        (
            "collision_spheres: {a: [{center: [0, 0], radius: 1}]}",
            r"\['a'\]\[0\].center must be a list of 3 numbers",
        ),
        ("collision_spheres: {a: [{center: [0, 0, x], radius: 1}]}", "center must be a number"),
        ("collision_spheres: {a: [{center: [0, 0, 0], radius: -0.01}]}", "radius must be > 0"),
        ("collision_spheres: {a: [{center: [0, 0, .nan], radius: 1}]}", "must be finite"),
        ("collision_spheres: {a: []}\nself_collision_ignore: [a]", "self_collision_ignore must"),
        ("collision_spheres: {a: []}\nself_collision_buffer: 1", "self_collision_buffer must"),
        ("collision_spheres: {a: []}\nself_collision_buffer: {a: x}", "must be a number"),
    ],
)
def test_bad_sphere_files_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yml"
    path.write_text(text)
    with pytest.raises(RobotModelError, match=message):
        load_curobo(path)


def test_numbers_pyyaml_reads_as_strings_are_numbers(tmp_path: Path) -> None:
    # YAML 1.1 wants a dot in a float: PyYAML reads 6e-2 as the string '6e-2', which was
    # refused as "radius must be a number, got '6e-2'".
    path = tmp_path / "exponents.yml"
    path.write_text(
        "collision_spheres:\n  a:\n    - center: [0, 1e-1, 5E-2]\n      radius: 6e-2\n"
        "self_collision_buffer: {a: 1e-2}\n"
    )
    loaded = load_curobo(path)
    np.testing.assert_array_equal(loaded.spheres["a"], [[0.0, 0.1, 0.05, 0.06]])
    assert loaded.self_collision_buffer == {"a": 0.01}
    path.write_text("collision_spheres:\n  a:\n    - center: [0, 0, 0]\n      radius: 6e-2m\n")
    with pytest.raises(RobotModelError, match=r"\['a'\]\[0\].radius must be a number, got '6e-2m'"):
        load_curobo(path)


@pytest.mark.parametrize("radius", ["0.000000001", "9.0e-6", "2.0e+6"])
def test_a_radius_outside_the_size_range_is_refused_at_load(
    tmp_path: Path, panda: RobotModel, radius: str
) -> None:
    # A radius of 1e-9 was loaded, and from_urdf then raised an InvalidShapeError naming no
    # file, link or entry.
    path = tmp_path / "tiny.yml"
    path.write_text(
        "collision_spheres:\n  panda_link0:\n    - center: [0, 0, 0.05]\n      radius: 0.06\n"
        f"    - center: [0, 0, 0.1]\n      radius: {radius}\n"
    )
    with pytest.raises(RobotModelError) as raised:
        load_curobo(path)
    assert str(raised.value) == (
        f"sphere file {str(path)!r}: collision_spheres['panda_link0'][1].radius must lie in "
        f"[1e-05, 1e+06] m, got {float(radius)!r}"
    )
    path.write_text(
        "collision_spheres:\n  panda_link0:\n    - center: [0, 0, 0.05]\n      radius: 1.0e-5\n"
    )
    folder = meshes.path("panda")
    robot = RobotModel.from_urdf(
        folder / "panda.urdf", geometry="spheres", spheres=load_curobo(path)
    )  # the smallest radius is a sphere the robot takes
    assert robot.dof == panda.dof


def test_sphere_file_paths_are_checked(tmp_path: Path, model: SphereModel) -> None:
    with pytest.raises(RobotModelError, match=r"sphere file .*missing.yml': no such file"):
        load_curobo(tmp_path / "missing.yml")
    with pytest.raises(RobotModelError, match="path must be a path to a file, got 3"):
        load_curobo(3)
    with pytest.raises(RobotModelError, match="model must be a SphereModel, got 'x'"):
        save_curobo("x", tmp_path / "a.yml")  # type: ignore[arg-type]
    with pytest.raises(RobotModelError, match="path must be a path to a file, got None"):
        save_curobo(model, None)


# ----------------------------------------------------------------------------- the robot


def test_from_urdf_checks_the_sphere_model(model: SphereModel) -> None:
    urdf, srdf = PANDA / "panda.urdf", PANDA / "panda.srdf"
    with pytest.raises(InvalidArgumentError, match="geometry must be 'mesh', 'convex' or 'sph"):
        RobotModel.from_urdf(urdf, geometry="balls")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="spheres is for geometry='spheres', got ge"):
        RobotModel.from_urdf(urdf, spheres=model)
    with pytest.raises(InvalidArgumentError, match="spheres must be a SphereModel or None, got 1"):
        RobotModel.from_urdf(urdf, geometry="spheres", spheres=1)
    stray = SphereModel({**model.spheres, "gripper": np.array([[0, 0, 0, 0.1]])})
    with pytest.raises(RobotModelError, match="spheres for 'gripper', which robot 'panda' does"):
        RobotModel.from_urdf(urdf, geometry="spheres", spheres=stray)
    ignoring = replace(model, self_collision_ignore={"panda_link1": ("tool",)})
    with pytest.raises(RobotModelError, match="self_collision_ignore names 'tool'"):
        RobotModel.from_urdf(urdf, geometry="spheres", spheres=ignoring)
    stray_buffer = replace(model, self_collision_buffer={"tool": 0.02})
    with pytest.raises(RobotModelError, match="self_collision_buffer names 'tool', which robot"):
        RobotModel.from_urdf(urdf, srdf=srdf, geometry="spheres", spheres=stray_buffer)
    smallest = float(model.spheres["panda_hand"][:, 3].min())
    shrunk = replace(model, self_collision_buffer={"panda_hand": -smallest})
    with pytest.raises(
        RobotModelError,
        match=rf"self_collision_buffer\['panda_hand'\] = {-smallest!r} leaves a sphere of radius "
        rf"{smallest!r} without volume",
    ):
        RobotModel.from_urdf(urdf, srdf=srdf, geometry="spheres", spheres=shrunk)


def test_the_sphere_robot_is_a_robot_of_spheres(
    spheres: SphereRobotModel, model: SphereModel
) -> None:
    assert spheres.geometry == "spheres"
    assert spheres.sphere_model is model
    assert len(spheres.group) == model.count
    hand = spheres.shapes_of("panda_hand")
    assert len(hand) == 8 and all(isinstance(s, Sphere) for s in hand)
    assert spheres.spheres_cover(measure=False).covered
    assert spheres.spheres(count=2).count == 22  # fitted to the links, not to the spheres
    ready = spheres.states["ready"] if "ready" in spheres.states else spheres.neutral
    assert spheres.check([ready]).tolist() == [spheres.in_collision(ready)]


def test_self_collision_ignore_drops_pairs(model: SphereModel) -> None:
    urdf, srdf = PANDA / "panda.urdf", PANDA / "panda.srdf"
    robot = RobotModel.from_urdf(urdf, srdf=srdf, geometry="spheres", spheres=model)
    assert ("panda_link2", "panda_link5") in robot.collision_pairs
    ignoring = replace(model, self_collision_ignore={"panda_link2": ("panda_link5",)})
    fewer = RobotModel.from_urdf(urdf, srdf=srdf, geometry="spheres", spheres=ignoring)
    assert set(fewer.collision_pairs) == set(robot.collision_pairs) - {
        ("panda_link2", "panda_link5")
    }


def packed(robot: SphereRobotModel, scene: Scene | None) -> tuple[Any, Any]:
    return robot._kernel_robot(), robot._kernel_scene(scene)


def test_the_kernel_equals_the_numpy_reference(spheres: SphereRobotModel) -> None:
    scene = every_kind()
    Q = spheres.sample(1500, 11)
    r, o = packed(spheres, scene)
    assert sorted(set(o.kind.tolist())) == [SPHERE, BOX, CAPSULE, CYLINDER, HALFSPACE, CLOUD, OTHER]
    codes = kernel.check_many(
        Q, r.parent, r.mimic, r.joints, r.spheres, r.link_start, r.links, r.pairs, o.kind,
        o.bound, o.data, o.cloud, o.grid, o.cells,
    )  # fmt: skip
    expected = reference.check_many(r, o, Q)
    assert np.array_equal(codes, expected)
    assert set(codes.tolist()) == {0, 1, 2}
    # Every kind of obstacle decides some configurations: each alone has hits.
    Q = Q[:500]
    for kind in (SPHERE, BOX, CAPSULE, CYLINDER, HALFSPACE, CLOUD):
        only = replace(o, kind=o.kind[o.kind == kind], bound=o.bound[o.kind == kind],
                       data=o.data[o.kind == kind], cloud=o.cloud[o.kind == kind])  # fmt: skip
        no_pairs = np.zeros((0, 2), dtype=np.int64)
        alone = kernel.check_many(
            Q, r.parent, r.mimic, r.joints, r.spheres, r.link_start, r.links, no_pairs,
            only.kind, only.bound, only.data, only.cloud, only.grid, only.cells,
        )  # fmt: skip
        assert 0 < (alone == 1).sum() < len(Q), kind
        assert np.array_equal(alone, reference.check_many(replace(r, pairs=no_pairs), only, Q))


def test_the_reference_forward_kinematics_is_the_robots(spheres: SphereRobotModel) -> None:
    Q = spheres.sample(20, 3)
    r = spheres._kernel_robot()
    T = reference.body_poses(r, Q)
    mine = spheres._kin.body_poses_many(Q)[:, :, :3]
    np.testing.assert_allclose(T, mine, atol=1e-12)


def test_kernel_answers_equal_coal_on_the_spheres(spheres: SphereRobotModel) -> None:
    scene = every_kind()
    Q = spheres.sample(300, 5)
    fast = spheres.check(Q, scene)
    slow = [RobotModel.in_collision(spheres, q, scene) for q in Q]
    assert fast.tolist() == slow
    assert 0.1 < fast.mean() < 0.9
    assert spheres.check(Q[:50]).tolist() == [spheres.self_collision(q) for q in Q[:50]]


def test_single_configurations_are_answered_in_the_kernel(
    spheres: SphereRobotModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    # in_collision and self_collision of a sphere robot are a row of check: Coal's answers
    # on the spheres, obstacles the kernel cannot test (the ellipsoid, the cone) included.
    scene = every_kind()
    Q = spheres.sample(300, 11)
    coal_answers = [RobotModel.in_collision(spheres, q, scene) for q in Q]
    assert [spheres.in_collision(q, scene) for q in Q] == coal_answers
    assert 0.1 < np.mean(coal_answers) < 0.9
    own = [RobotModel.in_collision(spheres, q) for q in Q[:100]]
    assert [spheres.self_collision(q) for q in Q[:100]] == own and any(own)
    # Without asking Coal, where every obstacle has a kernel test.
    boxes = shelf()
    expected = spheres.check(Q, boxes).tolist()

    def refuse(*args: Any, **kwargs: Any) -> bool:
        raise AssertionError("asked Coal")

    monkeypatch.setattr(RobotModel, "in_collision", refuse)
    assert [spheres.in_collision(q, boxes) for q in Q] == expected and any(expected)
    monkeypatch.undo()
    with pytest.raises(InvalidArgumentError, match=r"q must have 8 joint values .* shape \(3,\)"):
        spheres.in_collision([0.0, 0.0, 0.0], boxes)
    with pytest.raises(ShapeTypeError, match="scene must be a spatialcontact Scene or None"):
        spheres.in_collision(Q[0], "shelf")  # type: ignore[arg-type]


def test_no_false_negatives_against_the_meshes(
    panda: RobotModel, spheres: SphereRobotModel
) -> None:
    scene = shelf()
    Q = panda.sample(500, 2026)
    exact = panda.check(Q, scene)
    ours = spheres.check(Q, scene)
    assert exact.any() and not (exact & ~ours).any()
    exact_self = panda.check(Q)
    assert exact_self.any() and not (exact_self & ~spheres.check(Q)).any()


def test_a_scene_the_robot_is_in_and_a_moved_robot(spheres: SphereRobotModel) -> None:
    robot = pickle.loads(pickle.dumps(spheres))
    scene = every_kind()
    Q = robot.sample(200, 8)
    before = robot.check(Q, scene)
    scene.add(robot.group, "robot")  # the robot's own spheres are not obstacles
    assert robot.check(Q, scene).tolist() == before.tolist()
    scene.remove("robot")
    robot.group.T = pose(0.3, -0.2, 0.1, turn("z", 0.4))
    moved = robot.check(Q, scene)
    assert moved.tolist() == [RobotModel.in_collision(robot, q, scene) for q in Q]
    assert moved.tolist() != before.tolist()
    scene["box"].T = pose(0.5, 0.0, 0.3)  # a moved obstacle is seen
    assert robot.check(Q, scene).tolist() == [RobotModel.in_collision(robot, q, scene) for q in Q]


def test_attached_objects_are_checked_by_coal(spheres: SphereRobotModel) -> None:
    robot = pickle.loads(pickle.dumps(spheres))
    assert robot.check(robot.sample(5, 1)).shape == (5,)
    robot.attach(Cuboid([0.05, 0.05, 0.3]), "panda_hand", pose(0, 0, 0.2))
    scene = shelf()
    Q = robot.sample(100, 4)
    assert robot.check(Q, scene).tolist() == [robot.in_collision(q, scene) for q in Q]
    free = Q[~robot.check(Q, scene)][:4]
    assert robot.check_motions(free[:2], free[2:4], scene).shape == (2,)


def test_pickled_robots_give_the_same_answers(spheres: SphereRobotModel) -> None:
    scene = every_kind()
    Q = spheres.sample(200, 9)
    copy = pickle.loads(pickle.dumps(spheres))
    assert isinstance(copy, SphereRobotModel)
    assert copy.check(Q, scene).tolist() == spheres.check(Q, scene).tolist()


# ----------------------------------------------------------------------------- motions


def short_motions(robot: RobotModel, n: int, seed: int, length: float) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    Q0 = robot.sample(n, rng)
    change = rng.normal(size=Q0.shape)
    change[:, -1] = 0.0
    Q1 = np.clip(
        Q0 + length * change / np.abs(change).max(axis=1, keepdims=True),
        robot.limits[:, 0],
        robot.limits[:, 1],
    )
    return Q0, Q1


@pytest.mark.parametrize("scene", [None, "shelf", "every kind"])
def test_the_bound_never_passes_a_motion_fine_steps_find_colliding(
    spheres: SphereRobotModel, scene: str | None
) -> None:
    world = {None: None, "shelf": shelf(), "every kind": every_kind()}[scene]
    Q0, Q1 = short_motions(spheres, 100, 17, 0.6)
    proved = spheres.check_motions(Q0, Q1, world)
    fine = spheres.check_motions(Q0, Q1, world, method="discrete", resolution=0.003)
    assert not (proved & ~fine).any()
    assert proved.sum() >= 0.8 * fine.sum() > 0  # the bound proves most free motions
    assert (~fine).any()


def test_discrete_motions_are_the_checks_of_their_steps(spheres: SphereRobotModel) -> None:
    scene = every_kind()
    Q0, Q1 = short_motions(spheres, 40, 3, 0.3)
    stepped = spheres.check_motions(Q0, Q1, scene, method="discrete", resolution=0.05)
    for q0, q1, free in zip(Q0, Q1, stepped, strict=True):
        steps = max(math.ceil(np.abs(q1 - q0).max() / 0.05), 1)
        path = q0 + np.linspace(0, 1, steps + 1)[:, None] * (q1 - q0)
        assert free == (not any(spheres.in_collision(q, scene) for q in path))
    assert 0 < stepped.sum() < len(stepped)


def test_single_motions(spheres: SphereRobotModel) -> None:
    Q = spheres.sample(50, 6)
    q = Q[~spheres.check(Q)][0]
    assert spheres.check_motion(q, q)
    far = q.copy()
    far[3] = spheres.limits[3, 0]  # folds the elbow through the links
    assert spheres.check_motion(q, far) == (
        not spheres.check(q + np.linspace(0, 1, 400)[:, None] * (far - q)).any()
    )


def test_motion_argument_errors(spheres: SphereRobotModel) -> None:
    q = spheres.neutral[None]
    with pytest.raises(InvalidArgumentError, match="method must be 'bound' or 'discrete', got"):
        spheres.check_motions(q, q, method="sweep")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"resolution must be a number in \(0, 1\]"):
        spheres.check_motions(q, q, method="discrete", resolution=0)
    with pytest.raises(ShapeTypeError, match=r"resolution must be a real number, got True"):
        spheres.check_motions(q, q, method="discrete", resolution=True)
    with pytest.raises(InvalidArgumentError, match="apply to method='bound' only"):
        spheres.check_motions(q, q, method="discrete", chunk_size=5)
    with pytest.raises(InvalidArgumentError, match="Q0 and Q1 must have the same shape"):
        spheres.check_motions(q, np.vstack([q, q]), method="discrete")
    with pytest.raises(InvalidArgumentError, match="tolerance must be a finite number > 0"):
        spheres.check_motions(q, q, tolerance=0.0)
    with pytest.raises(InvalidArgumentError, match=r"Q\[0\] must hold finite joint values"):
        spheres.check([np.full(spheres.dof, np.nan)])


def test_continuous_joints_check_motions_without_warnings(tmp_path: Path) -> None:
    # The kernel's reach of a continuous joint (of infinite range) computed inf * 0.0 and
    # warned "invalid value encountered in scalar multiply" on every motion check.
    path = tmp_path / "spinner.urdf"
    path.write_text(CONTINUOUS_ARM)
    scene = Scene()
    scene.add(Sphere(0.05, pose=pose(0.0, 0.6, 0.1)), "ball")  # on +y, 0.6 m from the axis
    Q0 = np.array([[0.0, 0.0], [0.0, 0.0], [-3.0, 0.0], [np.pi / 2, -np.pi]])
    Q1 = np.array([[np.pi, 0.0], [-1.0, 0.0], [-9.0, 0.0], [np.pi / 2, np.pi]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robot = RobotModel.from_urdf(path, geometry="spheres")
        assert isinstance(robot, SphereRobotModel)
        bound = robot.check_motions(Q0, Q1, scene)
        discrete = robot.check_motions(Q0, Q1, scene, method="discrete", resolution=0.01)
        single = [robot.check_motion(a, b, scene) for a, b in zip(Q0, Q1, strict=True)]
    assert bound.tolist() == discrete.tolist() == single == [False, True, False, False]


# ----------------------------------------------------------------------------- processes


def test_spatialcontact_imports_neither_numba_nor_yaml() -> None:
    code = (
        "import sys, spatialcontact, spatialcontact.robot, spatialcontact.spheres\n"
        "print(sorted(m for m in ('numba', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_kernel_runs_in_a_new_process() -> None:
    code = textwrap.dedent(
        """
        import numpy as np
        from spatialcontact import meshes
        from spatialcontact.robot import RobotModel
        panda = meshes.path("panda")
        robot = RobotModel.from_urdf(panda / "panda.urdf", srdf=panda / "panda.srdf",
                                     geometry="spheres", spheres=None)
        Q = robot.sample(300, 1)
        print(int(robot.check(Q).sum()), int(robot.check_motions(Q[:20], Q[20:40]).sum()))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    hits, free = map(int, out.stdout.split())
    assert 0 < hits < 300 and 0 <= free <= 20


def test_chunked_checks_give_the_same_answers(spheres: SphereRobotModel) -> None:
    scene = shelf()
    Q = spheres.sample(120, 21)
    assert spheres.check(Q, scene, chunk_size=50).tolist() == spheres.check(Q, scene).tolist()
    Q0, Q1 = short_motions(spheres, 30, 5, 0.5)
    chunked = spheres.check_motions(Q0, Q1, scene, chunk_size=10)
    assert chunked.tolist() == spheres.check_motions(Q0, Q1, scene).tolist()


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12), n=st.integers(1, 60))
@settings(max_examples=40, deadline=None)
def test_the_groups_spheres_are_each_groups_own(seed: int, k: int, n: int) -> None:
    # _balls works on every group at once; each sphere must be the one-group computation:
    # Bădoiu-Clarkson steps from the middle of the box (the first farthest vertex each time),
    # and the radius to the farthest vertex, plus the margin. Ties (a vertex repeated in
    # several pieces) are common in meshes: the pieces here share vertices.
    rng = np.random.default_rng(seed)
    vertices = rng.normal(size=(n + 2, 3))
    pieces = vertices[rng.integers(0, n + 2, size=(n, 3))]
    assign = rng.integers(0, k, size=n)
    rows = []
    for g in range(k):
        points = pieces[assign == g].reshape(-1, 3)
        if not len(points):
            continue
        c = 0.5 * (points.min(axis=0) + points.max(axis=0))
        for i in range(48):
            d = np.einsum("ij,ij->i", points - c, points - c)
            c = c + (points[int(np.argmax(d))] - c) / (i + 2)
        r = math.sqrt(float(np.einsum("ij,ij->i", points - c, points - c).max()))
        rows.append([*c, r + 2.0 * MARGIN])
    np.testing.assert_array_equal(_balls(pieces, assign, k), np.array(rows))
