"""Multi-world scenes: one step of 1 and of 256 worlds (an arm and 20 boxes each, one ground).

Run ``python benchmarks/bench_worlds.py`` (about a minute) or add ``--quick`` (a few seconds,
32 worlds instead of 256, rough figures). Each world is a 7-capsule arm (one
``CollisionShapeGroup``, its base on the ground) and 20 boxes of 0.1-0.3 m resting 1 mm into
the ground within 1.2 m of the base; the ground is one global slab shared by every world. World
0 is built and ``scene.replicate(n - 1, spacing=3.0)`` copies it. Before any timing, random
joint configurations are drawn for every arm of every step and their link poses computed.

A step sets the link poses of every arm (timed apart, as "set poses") and then calls
``scene.contacts()`` over all worlds: the figure is the mean time of that call per step, the
median over the repeats, 1 and n worlds timed in turn within a repeat. Then
``MatrixContactSensor(scene, "arm*", counterparts=["ground", "box*"])`` (one row per world's
arm; the ground then the world's 20 boxes as its columns) reads the step's contacts with a
normal force of 10 N on each: its ``update`` is timed after the query, on the same contacts.

Targets: the n-world step at most 1.3 times n times the 1-world step (no cross-world work),
and the sensor's update at most 2 ms at 256 worlds.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from _timing import CLOCKS, Figures, fmt_ratio, fmt_us, parse_settings, table

import spatialcontact as sc
from spatialcontact.sensors import MatrixContactSensor

LINKS = 7
LINK_LENGTH = 0.3
LINK_RADIUS = 0.04
BOXES = 20
WORLDS = 256
QUICK_WORLDS = 32
STEPS = 20
SPACING = 3.0
"""Metres between two worlds along x."""


def _rot(axis: int, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    if axis == 2:
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def link_poses(q: np.ndarray) -> list[np.ndarray]:
    """The (4, 4) pose of each capsule in its arm's frame: joints alternate about z and y,
    each link LINK_LENGTH along its joint's z, the first joint LINK_RADIUS above the ground."""
    T = np.eye(4)
    T[2, 3] = LINK_RADIUS + 0.001
    poses = []
    for i, angle in enumerate(q):
        J = np.eye(4)
        J[:3, :3] = _rot(2 if i % 2 == 0 else 1, float(angle))
        T = T @ J
        M = T.copy()
        M[:3, 3] = T[:3, 3] + T[:3, 2] * (LINK_LENGTH / 2)
        poses.append(M)
        step = np.eye(4)
        step[2, 3] = LINK_LENGTH
        T = T @ step
    return poses


def at(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def make_scene(worlds: int, seed: int) -> sc.Scene:
    """The ground and ``worlds`` copies of (arm, 20 boxes), 3 m apart."""
    rng = np.random.default_rng(seed)
    scene = sc.Scene()
    scene.add(sc.Cuboid([2000.0, 2000.0, 0.1], pose=at(0, 0, -0.05)), "ground")
    scene.add_world()
    q = np.zeros(LINKS)
    arm = sc.CollisionShapeGroup(
        [sc.Capsule(LINK_RADIUS, LINK_LENGTH, pose=M) for M in link_poses(q)]
    )
    scene.add(arm, "arm", world=0)
    for i in range(BOXES):
        size = rng.uniform(0.1, 0.3, 3)
        r, a = rng.uniform(0.4, 1.2), rng.uniform(0, 2 * math.pi)
        pose = at(r * math.cos(a), r * math.sin(a), size[2] / 2 - 0.001)
        scene.add(sc.Cuboid(size.tolist(), pose=pose), f"box{i}", world=0)
    if worlds > 1:
        scene.replicate(worlds - 1, spacing=SPACING)
    return scene


@dataclass
class World:
    scene: sc.Scene
    links: list[list[sc.CollisionShape]]
    poses: list[list[list[np.ndarray]]]
    """poses[step][arm][link]."""
    step: int = 0

    def move(self) -> None:
        """Set every arm's links to the next step's poses."""
        poses = self.poses[self.step % len(self.poses)]
        for links, arm_poses in zip(self.links, poses, strict=True):
            for link, M in zip(links, arm_poses, strict=True):
                link.T = M
        self.step += 1


def make_world(worlds: int, steps: int, seed: int) -> World:
    scene = make_scene(worlds, seed)
    arms = ["arm"] + [f"arm/{w}" for w in range(1, worlds)]
    links = [list(cast(sc.CollisionShapeGroup, scene[name])) for name in arms]
    rng = np.random.default_rng(seed + 1)
    q = rng.uniform(-math.pi / 2, math.pi / 2, (steps, worlds, LINKS))
    poses = [[link_poses(q[s, w]) for w in range(worlds)] for s in range(steps)]
    return World(scene, links, poses)


def time_steps(
    world: World, steps: int, sensor: MatrixContactSensor, clock: str
) -> dict[str, float]:
    """Mean µs per step of setting the poses, of ``contacts()`` and of the sensor update."""
    now = CLOCKS[clock]
    move = query = update = 0.0
    scene = world.scene
    for _ in range(steps):
        t0 = now()
        world.move()
        t1 = now()
        contacts = scene.contacts()
        t2 = now()
        sensor.update(contacts, forces=np.full(len(contacts), 10.0))
        t3 = now()
        move, query, update = move + t1 - t0, query + t2 - t1, update + t3 - t2
    scale = 1e6 / steps
    return {"set poses": move * scale, "contacts": query * scale, "sensor": update * scale}


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(__doc__.splitlines()[0] if __doc__ else "", argv, repeat=5)
    n = QUICK_WORLDS if settings.quick else WORLDS
    steps = 4 if settings.quick else STEPS
    repeat = min(settings.repeat, 2) if settings.quick else settings.repeat
    figures = Figures("bench_worlds", ["spatialcontact", "coal", "numpy"])
    print("# spatialcontact multi-world benchmark: arms and boxes on one ground\n")
    for text in figures.machine:
        print(f"- {text}")
    t0 = time.perf_counter()
    one, many = make_world(1, steps, 7), make_world(n, steps, 7)
    built = time.perf_counter() - t0  # wall time, whatever the clock
    sensors = {
        w.scene.worlds: MatrixContactSensor(w.scene, "arm*", counterparts=["ground", "box*"])
        for w in (one, many)
    }
    print(
        f"- 1 and {n} worlds of (a {LINKS}-capsule arm, {BOXES} boxes) on one global ground; "
        f"{steps} steps per repeat, median of {repeat} repeats; both scenes built in "
        f"{built:.1f} s" + (" (--quick: rough figures)" if settings.quick else "")
    )
    for w in (one, many):  # warm up: first contacts, the sensors' look-ups
        time_steps(w, 1, sensors[w.scene.worlds], settings.clock)
    samples: dict[int, list[dict[str, float]]] = {1: [], n: []}
    for _ in range(repeat):
        for w in (one, many):
            samples[w.scene.worlds].append(
                time_steps(w, steps, sensors[w.scene.worlds], settings.clock)
            )
    med = {
        k: {key: statistics.median(s[key] for s in runs) for key in runs[0]}
        for k, runs in samples.items()
    }
    n_contacts = {w.scene.worlds: len(w.scene.contacts()) for w in (one, many)}
    rows = [
        [
            f"{k:,}",
            f"{n_contacts[k]:,}",
            fmt_us(m["set poses"]),
            fmt_us(m["contacts"]),
            fmt_us(m["contacts"] / k),
            fmt_us(m["sensor"]),
        ]
        for k, m in med.items()
    ]
    print("\n## µs per step\n")
    print(
        table(
            [
                "worlds",
                "contacts (last step)",
                "set poses",
                "scene.contacts()",
                "contacts() per world",
                "sensor.update",
            ],
            rows,
        )
    )
    scaling = med[n]["contacts"] / (n * med[1]["contacts"])
    sensor_ms = med[n]["sensor"] / 1000.0
    targets = [
        [
            f"{n}-world contacts() / ({n} × 1-world)",
            fmt_ratio(scaling),
            "<= 1.3×",
            figures.target("scaling", f"{n}-world step / {n} x 1-world", scaling, 1.3),
        ],
        [
            f"sensor.update beside a {n}-world query, ms",
            f"{sensor_ms:.2f}",
            "<= 2",
            figures.target("sensor", f"sensor update at {n} worlds, ms", sensor_ms, 2.0),
        ],
    ]
    print("\n## Targets\n")
    print(table(["target", "measured", "wanted", "verdict"], targets))
    for k, m in med.items():
        for label, us in m.items():
            figures.add(f"{k} worlds: {label}", us)
    figures.ratio("scaling", scaling)
    figures.write(settings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
