"""RobotModel.set_motion_prefilter: motions proved free on covering spheres, in the kernel."""

from __future__ import annotations

import dataclasses
import importlib.util
import pickle
from typing import Any

import numpy as np
import pytest
from conftest import discretised_free, shelf_scene, trans
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialcontact import Cuboid, Scene, Sphere, meshes
from spatialcontact.errors import InvalidArgumentError, RobotModelError
from spatialcontact.robot import RobotModel
from spatialcontact.robot import model as robot_model
from spatialcontact.spheres import SphereModel


def _panda(geometry: str = "mesh") -> RobotModel:
    folder = meshes.path("panda")
    return RobotModel.from_urdf(
        folder / "panda.urdf",
        srdf=folder / "panda.srdf",
        geometry=geometry,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def exact() -> RobotModel:
    """The Panda without a prefilter: the reference."""
    return _panda()


@pytest.fixture(scope="module")
def spheres(exact: RobotModel) -> SphereModel:
    return exact.spheres(8)


@pytest.fixture(scope="module")
def filtered(spheres: SphereModel) -> RobotModel:
    """The Panda with the spheres as its prefilter (left as it is by every test)."""
    robot = _panda()
    robot.set_motion_prefilter(spheres)
    return robot


@pytest.fixture(scope="module")
def shelf() -> Scene:
    return shelf_scene("mid")


def random_motions(robot: RobotModel, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` motions from random configurations, each joint moved by up to 1 rad."""
    rng = np.random.default_rng(seed)
    Q0 = robot.sample(n, rng)
    Q1 = Q0.copy()
    Q1[:, :7] = np.clip(
        Q0[:, :7] + rng.uniform(-1.0, 1.0, (n, 7)), robot.limits[:7, 0], robot.limits[:7, 1]
    )
    return Q0, Q1


def free_motions(robot: RobotModel, scene: Scene, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` motions that a fine discretisation finds free, from free starts."""
    Q0, Q1 = random_motions(robot, 30 * n, 11)
    keep = [m for m in range(len(Q0)) if discretised_free(robot, Q0[m], Q1[m], scene)][:n]
    assert len(keep) == n
    return Q0[keep], Q1[keep]


def test_answers_are_sound_and_at_least_as_free_as_the_exact_bounds(
    exact: RobotModel, filtered: RobotModel, shelf: Scene
) -> None:
    Q0, Q1 = random_motions(exact, 60, 3)
    reference = exact.check_motions(Q0, Q1, shelf)
    answers = filtered.check_motions(Q0, Q1, shelf)
    fine = np.array([discretised_free(exact, a, b, shelf) for a, b in zip(Q0, Q1, strict=True)])
    assert 10 <= int(fine.sum()) <= 50  # both kinds of motion are there
    assert not (answers & ~fine).any()  # never free where the discretisation collides
    assert not (reference & ~answers).any()  # every motion the exact bounds prove stays free
    singles = [filtered.check_motion(a, b, shelf) for a, b in zip(Q0, Q1, strict=True)]
    assert singles == answers.tolist()


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.1, 1.0))
def test_never_free_where_a_fine_discretisation_collides(
    filtered: RobotModel, shelf: Scene, seed: int, size: float
) -> None:
    rng = np.random.default_rng(seed)
    q0 = filtered.sample(1, rng)[0]
    q1 = q0.copy()
    q1[:7] = np.clip(
        q0[:7] + size * rng.uniform(-1.0, 1.0, 7), filtered.limits[:7, 0], filtered.limits[:7, 1]
    )
    if filtered.check_motion(q0, q1, shelf):
        assert discretised_free(filtered, q0, q1, shelf)


def test_the_spheres_prove_most_free_motions(
    filtered: RobotModel, shelf: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    Q0, Q1 = free_motions(filtered, shelf, 20)
    asked: list[int] = []
    exact_bounds = robot_model.check_motions

    def counted(robot: RobotModel, Q0: np.ndarray, *args: Any) -> np.ndarray:
        asked.append(len(Q0))
        return exact_bounds(robot, Q0, *args)

    monkeypatch.setattr(robot_model, "check_motions", counted)
    assert filtered.check_motions(Q0, Q1, shelf).all()
    assert sum(asked) <= 10  # at least half are proved on the spheres alone


def test_attached_objects_are_checked_without_the_prefilter(
    spheres: SphereModel, shelf: Scene
) -> None:
    robot = _panda()
    robot.set_motion_prefilter(spheres)
    Q0, Q1 = free_motions(robot, shelf, 3)
    assert robot.check_motions(Q0, Q1, shelf).all()
    # A ball at the hand far larger than the shelf's distance from it: every motion hits.
    robot.attach(Sphere(2.0), "panda_hand", np.eye(4), name="ball")
    assert not robot.check_motions(Q0, Q1, shelf).any()
    assert not any(robot.check_motion(a, b, shelf) for a, b in zip(Q0, Q1, strict=True))
    robot.detach("ball")
    assert robot.check_motions(Q0, Q1, shelf).all()


def test_the_prefilter_follows_the_robot_when_it_moves(spheres: SphereModel) -> None:
    robot = _panda()
    robot.set_motion_prefilter(spheres)
    scene = Scene()
    scene.add(Cuboid([0.4, 0.4, 0.4], pose=trans(3.0, 0.0, 0.2)), "crate")
    ready = robot.states["default"]
    step = np.zeros(robot.dof)
    step[0] = 0.5
    assert robot.check_motion(ready - step, ready + step, scene)
    robot.group.T = trans(3.0)  # the base inside the crate
    assert not robot.check_motion(ready - step, ready + step, scene)
    robot.group.T = trans(0.0)
    assert robot.check_motion(ready - step, ready + step, scene)


def test_setting_reading_removing_and_pickling(spheres: SphereModel, shelf: Scene) -> None:
    robot = _panda()
    assert robot.motion_prefilter is None
    robot.set_motion_prefilter(spheres)
    assert robot.motion_prefilter is spheres
    Q0, Q1 = random_motions(robot, 10, 5)
    answers = robot.check_motions(Q0, Q1, shelf)
    copy = pickle.loads(pickle.dumps(robot))
    kept = copy.motion_prefilter
    assert kept is not None and kept.spheres.keys() == spheres.spheres.keys()
    assert all(np.array_equal(kept.spheres[k], v) for k, v in spheres.spheres.items())
    assert copy.check_motions(Q0, Q1, shelf).tolist() == answers.tolist()
    robot.set_motion_prefilter(None)
    assert robot.motion_prefilter is None


def _shrunk(model: SphereModel, link: str) -> SphereModel:
    rows = np.array(model.spheres[link])
    rows[:, 3] *= 0.5
    return dataclasses.replace(model, spheres={**model.spheres, link: rows})


def test_bad_prefilters_are_refused_and_change_nothing(
    spheres: SphereModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    robot = _panda()
    robot.set_motion_prefilter(spheres)
    cases: list[tuple[Any, type[Exception], str]] = [
        ("spheres.yml", InvalidArgumentError, r"^spheres must be a SphereModel or None, got "),
        (
            _shrunk(spheres, "panda_link3"),
            RobotModelError,
            r"the spheres leave part of the surface of 'panda_link3' out",
        ),
        (
            dataclasses.replace(spheres, self_collision_ignore={"panda_link1": ["panda_link5"]}),
            RobotModelError,
            r"self_collision_ignore skips link pairs this robot checks: "
            r"\[\('panda_link1', 'panda_link5'\)\]",
        ),
        (
            dataclasses.replace(spheres, self_collision_buffer={"panda_link2": -0.01}),
            RobotModelError,
            r"self_collision_buffer shrinks spheres .*\{'panda_link2': -0.01\}",
        ),
    ]
    for value, error, message in cases:
        with pytest.raises(error, match=message):
            robot.set_motion_prefilter(value)
        assert robot.motion_prefilter is spheres
    # Pairs the SRDF already skips may be ignored, and a buffer may grow the spheres.
    allowed = dataclasses.replace(
        spheres,
        self_collision_ignore={"panda_link0": ["panda_link1"]},
        self_collision_buffer={"panda_link2": 0.01},
    )
    robot.set_motion_prefilter(allowed)
    assert robot.motion_prefilter is allowed
    for geometry in ("convex", "spheres"):
        other = _panda(geometry)
        with pytest.raises(
            RobotModelError, match=rf"is for geometry='mesh' robots, .* geometry='{geometry}'"
        ):
            other.set_motion_prefilter(spheres)
        assert other.motion_prefilter is None
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a)
    )
    with pytest.raises(RobotModelError, match=r"needs numba: pip install 'spatialcontact\["):
        robot.set_motion_prefilter(spheres)
    assert robot.motion_prefilter is allowed
