"""A Scene pickles: the loaded scene has the same names, poses, groups and allowed pairs (object
and leaf level), and answers every query as the original does, also in a fresh process.

Known answers are worked out by hand on a small scene (a table, a ball in it, a three-link arm
whose adjacent links touch); random scenes of spheres and boxes check the round trip against
the original scene as an oracle (hypothesis).
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import make_leaf, rigid_poses, trans
from hypothesis import given, settings
from hypothesis import strategies as st

import spatialcontact as sc


def arm() -> sc.CollisionShapeGroup:
    """Three capsules along z, 0.3 m apart, each 0.3 m long with r 0.05: neighbours overlap
    (their end caps meet 0.1 m deep), links 0 and 2 are 0.6 - 0.4 = 0.2 m apart."""
    return sc.CollisionShapeGroup(
        [sc.Capsule(0.05, 0.3, pose=trans(0, 0, 0.3 * i)) for i in range(3)],
        pose=trans(2.0, 0, 0.15),
    )


def known_scene() -> sc.Scene:
    """table (top face at z = 0), ball sunk 0.02 m into it, the arm (self-collision, adjacent
    links allowed) with its base link 0.05 m into the table (allowed: arm and table), a far
    mesh; an octree added and removed."""
    scene = sc.Scene()
    scene.add(sc.Cuboid([6.0, 6.0, 0.1], pose=trans(0, 0, -0.05)), "table")
    scene.add(sc.Sphere(0.1, pose=trans(0, 0, 0.08)), "ball")
    links = arm()
    scene.add(links, "arm", self_collision=True)
    scene.allow(links[0], links[1])
    scene.allow(links[1], links[2])
    scene.allow("arm", "table")
    scene.add(make_leaf("Mesh", trans(0, 0, 5.0)))  # object_0
    scene.add(make_leaf("OcTree", trans(0, 3.0, 5.0)))  # object_1
    scene.remove("object_1")  # the next generated name is object_2
    return scene


def links_of(scene: sc.Scene) -> sc.CollisionShapeGroup:
    links = scene["arm"]
    assert isinstance(links, sc.CollisionShapeGroup)
    return links


def same(got: Any, want: Any) -> bool:
    """``got == want``, floats to 1e-9: a group loaded from a pickle places its leaves by one
    product of poses, which can differ from the original's in the last bit (and GJK
    distances by about 1e-11)."""
    if isinstance(want, float):
        return isinstance(got, float) and (got == want or abs(got - want) <= 1e-9)
    if isinstance(want, (list, tuple)):
        return (
            type(got) is type(want)
            and len(got) == len(want)
            and all(same(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k]) for k in want)
    return bool(got == want)


def test_same_compares_floats_to_1e_9() -> None:
    assert same({"a": [1.0, ("x", 2.0)]}, {"a": [1.0 + 1e-10, ("x", 2.0)]})
    assert not same({"a": [1.0]}, {"a": [1.0 + 1e-8]})
    assert not same([1.0, 2.0], [1.0]) and not same(("x",), ["x"]) and not same("x", "y")


def answers(scene: sc.Scene, probe: sc.CollisionShape) -> dict[str, Any]:
    """Everything the scene answers, in plain values (JSON types, tuples aside)."""
    d, name, p1, p2 = scene.distance(probe)
    return {
        "names": scene.names,
        "in_collision": scene.in_collision(),
        "collisions": scene.collisions(),
        "contacts": [
            (
                scene.name_of(c.o1),
                scene.name_of(c.o2),
                c.b1,
                c.b2,
                c.penetration_depth,
                c.normal.tolist(),
                c.nearest_points.tolist(),
            )
            for c in scene.contacts(max_contacts_per_pair=2)
        ],
        "collide": scene.collide(probe),
        "distance": [
            d,
            name,
            None if p1 is None else p1.tolist(),
            None if p2 is None else p2.tolist(),
        ],
        "allowed": [
            tuple(x if isinstance(x, str) else scene.name_of(x) for x in pair)
            for pair in scene.allowed_pairs
        ],
        "poses": [scene[n].T.tolist() for n in scene.names],
    }


PROBE_AT = (0.0, 0.05, 0.09)
"""The probe (a 0.1 m sphere) overlaps the ball (centres 0.05 apart) and the table (0.01 m)."""


def test_known_answers_survive_the_round_trip() -> None:
    scene = known_scene()
    probe = sc.Sphere(0.1, pose=trans(*PROBE_AT))
    want = answers(scene, probe)
    # By hand: the ball is 0.02 into the table; the arm's base link reaches down to
    # 0.15 - 0.15 - 0.05 = -0.05, allowed; links 0 and 2 are 0.2 apart, 0-1 and 1-2 allowed.
    assert want["collisions"] == [("table", "ball")]
    assert want["collide"] == ["table", "ball"]
    assert want["contacts"][0][:2] == ("table", "ball")
    assert want["contacts"][0][4] == pytest.approx(-0.02, abs=1e-12)
    # Nearest: the ball, centres hypot(0.05, 0.01) apart, radii 0.1 + 0.1 (the table: -0.01).
    assert want["distance"][:2] == [pytest.approx(math.hypot(0.05, 0.01) - 0.2, abs=1e-12), "ball"]
    loaded = pickle.loads(pickle.dumps(scene))
    assert isinstance(loaded, sc.Scene) and loaded is not scene
    assert same(answers(loaded, probe), want)
    assert loaded.add(sc.Sphere(0.1, pose=trans(0, 0, 9.0))) == "object_2"
    assert scene.add(sc.Sphere(0.1, pose=trans(0, 0, 9.0))) == "object_2"


def test_object_and_leaf_level_allowed_pairs_are_kept() -> None:
    scene = known_scene()
    loaded = pickle.loads(pickle.dumps(scene))
    new_links = loaded["arm"]
    assert isinstance(new_links, sc.CollisionShapeGroup)
    assert loaded.is_allowed(new_links[0], new_links[1])
    assert loaded.is_allowed(new_links[2], new_links[1])
    assert not loaded.is_allowed(new_links[0], new_links[2])
    assert loaded.is_allowed("arm", "table") and not loaded.is_allowed("ball", "table")
    loaded.disallow("arm", "table")  # the base link is 0.05 m into the table
    assert loaded.collisions() == [("table", "ball"), ("table", "arm")]
    loaded.allow("table", "arm")
    assert loaded.allowed_pairs == [
        ("table", "arm"),
        (new_links[0], new_links[1]),
        (new_links[1], new_links[2]),
    ]
    # Disallowing a leaf pair in the loaded scene brings back that pair's self-collision
    # (capsules 0 and 1 overlap by 0.1 m), and only there.
    loaded.disallow(new_links[0], new_links[1])
    assert loaded.collisions() == [("table", "ball"), ("arm", "arm")]
    assert scene.collisions() == [("table", "ball")]


def test_the_loaded_scene_follows_its_own_shapes_only() -> None:
    scene = known_scene()
    loaded = pickle.loads(pickle.dumps(scene))
    loaded["ball"].T = trans(0, 0, 1.0)  # out of the table
    assert loaded.collisions() == []
    assert scene.collisions() == [("table", "ball")]
    scene["ball"].T = trans(0, 0, 2.0)
    loaded["ball"].T = trans(0, 0, 0.0)
    assert scene.collisions() == [] and loaded.collisions() == [("table", "ball")]
    links = loaded["arm"]
    assert isinstance(links, sc.CollisionShapeGroup)
    links[2].T = trans(0, 0, 0.05)  # onto link 0, which it is not allowed to touch
    assert loaded.collisions() == [("table", "ball"), ("arm", "arm")]


def test_shapes_pickled_with_the_scene_stay_its_own() -> None:
    scene = known_scene()
    ball, link = scene["ball"], links_of(scene)[0]
    loaded, new_ball, new_link = pickle.loads(pickle.dumps((scene, ball, link)))
    assert new_ball is loaded["ball"] and loaded.name_of(new_link) == "arm"
    # An object of the scene leaves itself out: the ball touches the table only.
    assert loaded.collide(new_ball) == scene.collide(ball) == ["table"]
    assert new_link is links_of(loaded)[0]


def test_an_empty_scene_round_trips() -> None:
    loaded = pickle.loads(pickle.dumps(sc.Scene()))
    assert loaded.names == () and not loaded.in_collision()
    assert loaded.distance(sc.Sphere(1.0)) == (math.inf, None, None, None)
    assert loaded.add(sc.Sphere(1.0)) == "object_0"


def test_copies() -> None:
    scene = known_scene()
    shallow, deep = copy.copy(scene), copy.deepcopy(scene)
    assert shallow["ball"] is scene["ball"]  # a new scene of the same shapes
    assert deep["ball"] is not scene["ball"] and deep["ball"].equals(scene["ball"])
    probe = sc.Sphere(0.1, pose=trans(*PROBE_AT))
    want = answers(scene, probe)
    assert same(answers(shallow, probe), want) and same(answers(deep, probe), want)
    deep["ball"].T = trans(0, 0, 3.0)
    assert scene.collisions() == shallow.collisions() == [("table", "ball")]
    assert deep.collisions() == []


def test_a_scene_loaded_in_a_fresh_process_answers_the_same(tmp_path: Path) -> None:
    scene = known_scene()
    probe = sc.Sphere(0.1, pose=trans(*PROBE_AT))
    path = tmp_path / "scene.pickle"
    path.write_bytes(pickle.dumps((scene, probe)))
    code = (
        "import json, pickle, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_scene_pickle import answers\n"
        f"scene, probe = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "print(json.dumps(answers(scene, probe)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    # Through JSON, which has lists only: the tuples of the answers become lists.
    want = json.loads(json.dumps(answers(scene, probe)))
    assert same(json.loads(done.stdout), want)


def test_a_shape_that_does_not_pickle_is_named() -> None:
    scene = known_scene()
    scene["ball"].unpicklable = lambda: None  # type: ignore[attr-defined]
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError), match="lambda"):
        pickle.dumps(scene)


# ----------------------------------------------------------------- random scenes (oracle)


@st.composite
def random_scenes(draw: Any) -> tuple[sc.Scene, sc.CollisionShape]:
    scene = sc.Scene()
    n = draw(st.integers(1, 6))
    for k in range(n):
        T = draw(rigid_poses(reach=1.0))
        size = draw(st.floats(0.1, 0.6))
        if draw(st.booleans()):
            shape: sc.CollisionShape = sc.Sphere(size, pose=T)
        elif draw(st.booleans()):
            shape = sc.Cuboid([size, 0.5 * size, 0.3], pose=T)
        else:
            shape = sc.CollisionShapeGroup(
                [sc.Sphere(0.5 * size, pose=trans(0.3 * j, 0, 0)) for j in range(3)], pose=T
            )
        scene.add(shape, f"o{k}", self_collision=shape._is_group and draw(st.booleans()))
    names = scene.names
    for _ in range(draw(st.integers(0, 3))):
        a, b = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        if a != b:
            scene.allow(a, b)
    probe = sc.Capsule(0.1, 0.4, pose=draw(rigid_poses(reach=1.0)))
    return scene, probe


@settings(max_examples=40, deadline=None)
@given(random_scenes())
def test_random_scenes_round_trip_with_equal_answers(case: tuple[sc.Scene, Any]) -> None:
    scene, probe = case
    want = answers(scene, probe)
    loaded = pickle.loads(pickle.dumps(scene))
    assert same(answers(loaded, probe), want)
    assert [loaded[n].equals(scene[n]) for n in scene.names] == [True] * len(scene)
