"""Threads and processes against serial answers, under the contract of docs/threads.md.

The contract: shapes, groups and scenes may be shared between threads, and concurrent queries
never crash and give the answers one thread gives; moving a shape while another thread queries
it is a race whose query sees the old pose or the new one (for a group, each leaf's old or new
one); a robot may be shared too (its queries take turns) or copied per thread. Each threaded
scenario runs in a
child process, so that a crash (a segfault) fails its test instead of killing pytest; the child
prints ``ok`` or the first wrong answers. Processes: the batch functions on a
``ProcessPoolExecutor`` give the serial answers, for every leaf type.

``tests/test_scene_threads.py`` has threads that add, remove, allow and move objects of one
shared scene, each in a region of its own.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import LEAF_KINDS, UNSUPPORTED_DISTANCE, make_leaf
from test_batch import random_poses

import spatialcontact as sc
from spatialcontact import batch

TESTS = Path(__file__).resolve().parent

PRELUDE = """
import copy
import math
import sys
import threading

import numpy as np

sys.path.insert(0, sys.argv[1])  # the tests folder, for conftest's shapes
from conftest import (
    LEAF_KINDS, UNSUPPORTED_ALL, UNSUPPORTED_DISTANCE, make_leaf, quaternion_matrix,
)

import spatialcontact as sc

sys.setswitchinterval(1e-5)  # switch threads every 10 µs (5 ms by default): more races
THREADS = 4
errors = []


def pose(seed, reach):
    rng = np.random.default_rng(seed)
    T = np.eye(4)
    T[:3, :3] = quaternion_matrix(*rng.normal(size=4))
    T[:3, 3] = rng.uniform(-reach, reach, 3)
    return T


def rows(found):
    return [
        (id(c.o1), id(c.o2), c.b1, c.b2, c.penetration_depth, *c.normal, *c.pos) for c in found
    ]


def run(work, count=THREADS):
    threads = [threading.Thread(target=guarded, args=(work, k)) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def guarded(work, k):
    try:
        work(k)
    except Exception as error:  # a wrong answer of another kind: reported, not hidden
        errors.append((k, repr(error)))


def report():
    print("ok" if not errors else f"{len(errors)} wrong answers, first: {errors[:3]}")
"""

SHARED_SHAPES = """
# Every pair of leaf types, shapes shared by all threads, each query asked of every pair.
shapes = [make_leaf(kind, pose(i, 0.5)) for i, kind in enumerate(LEAF_KINDS)]
pairs = [
    (a, b)
    for a in shapes
    for b in shapes
    if a is not b and (type(a).__name__, type(b).__name__) not in UNSUPPORTED_ALL
]


def answers(a, b):
    out = [a.iscollided(b)]
    if (type(a).__name__, type(b).__name__) not in UNSUPPORTED_DISTANCE:
        d, p1, p2 = a.closest_point(b, inf_dist=math.inf)
        out += [a.distance(b), d, tuple(p1), tuple(p2)]
        if not type(a).__name__ == type(b).__name__ == "OcTree":
            out.append(rows(a.contacts(b, max_contacts=3)))
    return out


expected = [answers(a, b) for a, b in pairs]


def work(k):
    for i in range(rounds):
        j = (i * 7 + k * 13) % len(pairs)
        got = answers(*pairs[j])
        if got != expected[j]:
            errors.append((k, i, j, got, expected[j]))


rounds = 20 * len(pairs)  # enough that sharing one Coal result between threads shows
run(work)
report()
"""

SHARED_GROUPS_AND_SCENE = """
# Nested groups of every leaf type and a scene with worlds, shared; queries only.
def group(offset, kinds):
    inner = sc.CollisionShapeGroup(
        [make_leaf(k, pose(offset + i, 0.8)) for i, k in enumerate(kinds[:3])],
        pose=pose(offset + 50, 0.3),
    )
    return sc.CollisionShapeGroup(
        [inner, *[make_leaf(k, pose(offset + 10 + i, 0.8)) for i, k in enumerate(kinds[3:])]],
        pose=pose(offset + 60, 0.2),
    )


left = group(0, ("Sphere", "Mesh", "Capsule", "Cone", "OcTree"))
right = group(100, ("Cuboid", "Cylinder", "ConvexHull", "Mesh"))
scene = sc.Scene()
scene.add(sc.HalfSpace([0.0, 0.0, 1.0], -0.6), "floor")
scene.add_world()
scene.add(left, "left", world=0)
scene.add(right, "right", world=0)
scene.add(make_leaf("Cone", pose(7, 0.7)), "cone", world=0)
scene.replicate(2)
probes = [make_leaf(k, pose(200 + i, 1.0)) for i, k in enumerate(("Sphere", "Mesh", "Capsule"))]


def answers(k):
    probe = probes[k % len(probes)]
    d, p1, p2 = left.closest_point(right, inf_dist=math.inf)
    return [
        left.iscollided(right),
        (d, tuple(p1), tuple(p2)),
        rows(left.contacts(right, max_contacts=4)),
        scene.collisions(),
        scene.collisions_per_world(),
        rows(scene.contacts(2)),
        scene.contacts(2).world.tolist(),
        scene.collide(probe),
        scene.collide(probe, world=1),
        scene.distance(probe)[:2],
        scene.collide(scene["right/1"]),
    ]


expected = [answers(k) for k in range(THREADS)]


def work(k):
    for i in range(rounds):
        got = answers(k)
        if got != expected[k]:
            errors.append((k, i, got, expected[k]))


rounds = 40
run(work)
report()
"""

MOVING = """
# One thread moves a leaf, a group and a scene's object between two poses while the others
# query them: each answer must be one that the old or the new pose gives (for the group, each
# leaf's old or new pose), and nothing may crash.
a = make_leaf("Cuboid")
ball = make_leaf("Sphere")
poses_ball = [pose(1, 0.9), pose(2, 0.9)]
holder = sc.CollisionShapeGroup(
    [make_leaf("Capsule", pose(3, 0.4)), make_leaf("Mesh", pose(4, 0.4))]
)
poses_holder = [pose(5, 0.6), pose(6, 0.6)]
scene = sc.Scene()
scene.add(make_leaf("Cylinder", pose(7, 0.5)), "post")
scene.add(make_leaf("ConvexHull", pose(8, 0.5)), "crate")
mover = scene.add(make_leaf("Cone"), "cone")
poses_cone = [pose(9, 0.8), pose(10, 0.8)]
probe = make_leaf("Sphere", pose(11, 0.5))


def leaf_answers(T):
    ball.T = T
    d, p1, p2 = a.closest_point(ball, inf_dist=math.inf)
    return (a.iscollided(ball), a.distance(ball), (d, tuple(p1), tuple(p2)))


ball_ok = {leaf_answers(T) for T in poses_ball}
# The group: each leaf under the old or the new group pose.
per_leaf = [[] for _ in holder]
for G in poses_holder:
    holder.T = G
    for seen, leaf in zip(per_leaf, holder):
        seen.append((a.iscollided(leaf), a.distance(leaf)))
group_ok = set()
for choice in [(0, 0), (0, 1), (1, 0), (1, 1)]:
    hit = any(per_leaf[i][c][0] for i, c in enumerate(choice))
    d = min(per_leaf[i][c][1] for i, c in enumerate(choice))
    group_ok.add((hit, d))


def scene_answers():
    return (tuple(scene.collisions()), tuple(scene.collide(probe)), scene.distance(probe)[:2])


scene_ok = set()
for T in poses_cone:
    scene[mover].T = T
    scene_ok.add(scene_answers())
if len(ball_ok) < 2 or len(group_ok) < 2 or len(scene_ok) < 2:  # the poses must tell apart
    errors.append(("poses", ball_ok, group_ok, scene_ok))
stop = threading.Event()


def move(_):
    i = 0
    while not stop.is_set():
        ball.T = poses_ball[i % 2]
        holder.T = poses_holder[i % 2]
        scene[mover].T = poses_cone[i % 2]
        i += 1


def work(k):
    for i in range(rounds):
        if k % 3 == 0:
            # each call may see either pose: each answer is checked on its own
            d, p1, p2 = a.closest_point(ball, inf_dist=math.inf)
            if (d, tuple(p1), tuple(p2)) not in {ok[2] for ok in ball_ok}:
                errors.append((k, i, "closest_point", d))
            if a.distance(ball) not in {ok[1] for ok in ball_ok}:
                errors.append((k, i, "distance"))
            if a.iscollided(ball) not in {ok[0] for ok in ball_ok}:
                errors.append((k, i, "iscollided"))
        elif k % 3 == 1:
            hit, d = a.iscollided(holder), a.distance(holder)
            if hit not in {ok[0] for ok in group_ok} or d not in {ok[1] for ok in group_ok}:
                errors.append((k, i, "group", hit, d))
        else:
            got = scene_answers()
            if got not in scene_ok:
                errors.append((k, i, "scene", got, scene_ok))


rounds = 300
mover_thread = threading.Thread(target=guarded, args=(move, -1))
mover_thread.start()
run(work, 3)
stop.set()
mover_thread.join()
report()
"""

ROBOTS = """
# A robot per thread (copy.deepcopy of one), one scene shared: the serial answers.
from spatialcontact import meshes
from spatialcontact.robot import RobotModel

folder = meshes.path("panda")
panda = RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")
scene = sc.Scene()
table = np.array([[1, 0, 0, 0.5], [0, 1, 0, 0], [0, 0, 1, 0.4], [0, 0, 0, 1.0]])
scene.add(sc.Cuboid([0.6, 0.6, 0.1], pose=table), "table")
scene.add(make_leaf("Mesh", pose(1, 0.6)), "blob")
Q = panda.sample(16, rng=3)


def answers(robot, q):
    d = robot.distance(q, scene)
    return (
        robot.self_collision(q),
        robot.in_collision(q, scene),
        tuple(robot.colliding_pairs(q, scene)),
        (d.distance, d.part, d.other),
    )


expected = [answers(panda, q) for q in Q]
expected_check = panda.check(Q, scene).tolist()
robots = [copy.deepcopy(panda) for _ in range(THREADS)]


def work(k):
    robot = robots[k]
    for i in range(rounds):
        j = (i + 5 * k) % len(Q)
        got = answers(robot, Q[j])
        if got != expected[j]:
            errors.append((k, i, j, got, expected[j]))
        if i % 8 == 0 and robot.check(Q, scene).tolist() != expected_check:
            errors.append((k, i, "check"))


rounds = 24
run(work)
report()
"""

SHARED_ROBOT = ROBOTS.replace(
    "robots = [copy.deepcopy(panda) for _ in range(THREADS)]", "robots = [panda] * THREADS"
).replace("# A robot per thread (copy.deepcopy of one)", "# One robot shared by every thread")

SCENARIOS = {
    "shared-shapes": SHARED_SHAPES,
    "shared-groups-and-scene": SHARED_GROUPS_AND_SCENE,
    "moving-while-querying": MOVING,
    "a-robot-per-thread": ROBOTS,
    "a-shared-robot": SHARED_ROBOT,
}


def run_child(code: str, prelude: str = PRELUDE) -> str:
    """Run ``code`` after ``prelude`` in a fresh interpreter; fail on a crash."""
    completed = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code), str(TESTS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, (
        f"the child died with code {completed.returncode}:\n{completed.stderr[-3000:]}"
    )
    return completed.stdout.strip()


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_threads_answer_as_one_thread_does(scenario: str) -> None:
    assert run_child(SCENARIOS[scenario]) == "ok"


def test_a_wrong_answer_and_a_crash_in_the_child_fail() -> None:
    # The harness itself: a wrong answer is reported, a segfault is a failure.
    wrong = "def work(k):\n    errors.append((k, 'wrong'))\n\nrun(work, 1)\nreport()\n"
    assert run_child(wrong) == "1 wrong answers, first: [(0, 'wrong')]"
    crash = "import ctypes\nctypes.string_at(0)\n"
    with pytest.raises(AssertionError, match="the child died with code -11"):
        run_child(crash, prelude="")


# ------------------------------------------------------------------------------ processes


@pytest.fixture(scope="module")
def process_pool() -> Iterator[concurrent.futures.Executor]:
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        yield pool


def test_batches_on_a_process_pool_equal_the_serial_answers(
    process_pool: concurrent.futures.Executor,
) -> None:
    # Every leaf type as ``b`` against a group of every other type: the pickled copies in the
    # workers answer exactly as the shapes here do.
    for kind in LEAF_KINDS:
        others = [
            make_leaf(k, random_poses(1, 1.0, 40 + i)[0])
            for i, k in enumerate(LEAF_KINDS)
            if (k, kind) not in UNSUPPORTED_DISTANCE | {("OcTree", "OcTree")}
        ]
        a = sc.CollisionShapeGroup(others)
        b = make_leaf(kind)
        P = random_poses(24, 1.2, 7)
        kwargs: dict[str, Any] = {"executor": process_pool, "chunk_size": 5}
        np.testing.assert_array_equal(batch.distance(a, b, P, **kwargs), batch.distance(a, b, P))
        np.testing.assert_array_equal(
            batch.iscollided(a, b, P, **kwargs), batch.iscollided(a, b, P)
        )
        for got, want in zip(
            batch.closest_point(a, b, P, 0.4, **kwargs),
            batch.closest_point(a, b, P, 0.4),
            strict=True,
        ):
            np.testing.assert_array_equal(got, want)
        found, serial = batch.contacts(a, b, P, **kwargs), batch.contacts(a, b, P)
        assert found.pose.tolist() == serial.pose.tolist()
        np.testing.assert_array_equal(found.penetration_depth, serial.penetration_depth)
        np.testing.assert_array_equal(found.normal, serial.normal)
        assert list(found.o1) == list(serial.o1) and list(found.o2) == list(serial.o2)
