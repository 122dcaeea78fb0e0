"""Cost of feeding one step's contacts to 50 contact sensors, beside the scene query itself.

Run ``python benchmarks/bench_sensors.py`` (about half a minute) or add ``--quick`` (a few
seconds, rough figures). The scene is a table and 50 bricks, each brick a group of 20 small
spheres resting on the table: one step gives 1,000 contacts. The 50 sensors are

- 17 :class:`ObjectContactSensor` (IR-SIM): one on the table (all 1,000 contacts) and one on
  each of 16 bricks;
- 17 :class:`MatrixContactSensor` (Newton): every object against every other (51 rows x 50
  columns), ten bricks at a time against the table, single bricks against everything, and
  totals only;
- 16 :class:`NamedContactSensor` (Gazebo), updating every step: one on the table, the others
  on three bricks each.

It prints, as Markdown tables, the median microseconds of

1. the scene query (``scene.contacts()``) that found the 1,000 contacts, after every brick
   moved (its own cost; poses are set before the clock starts) and when nothing moved;
2. the penalty force model on those contacts;
3. ``SensorHub.feed`` of the queried contacts and forces to all 50 sensors, and to each kind
   alone;
4. one Newton-style matrix update (every object against every other) done the plain way, a
   Python loop over the contacts, next to the vectorised :class:`MatrixContactSensor`,

then checks the target (feeding the 50 sensors in under 5 ms) and prints PASS or FAIL. The
machine is usually shared: compare the ratios, measured in the same run.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from _timing import (
    Figures,
    fmt_ratio,
    fmt_us,
    interleaved_samples,
    paired_ratio,
    parse_settings,
    table,
)

import spatialcontact as sc
from spatialcontact.sensors import (
    MatrixContactSensor,
    NamedContactSensor,
    ObjectContactSensor,
    PenaltyForce,
    SensorHub,
)

BRICKS = 50
"""Bricks on the table."""
SPHERES = 20
"""Spheres per brick, each touching the table once: BRICKS x SPHERES contacts."""
TARGET_MS = 5.0
"""Feeding one step to the 50 sensors must take less than this."""
DT = 0.01
"""Step length given to the hub, seconds."""


def trans(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def build_scene() -> tuple[sc.Scene, list[sc.CollisionShapeGroup]]:
    """The table (index 0, top at z = 0) and the bricks ``brick_00`` ... (indices 1 to 50)."""
    scene = sc.Scene()
    scene.add(sc.Cuboid([100.0, 100.0, 1.0], pose=trans(0, 0, -0.5)), "table")
    bricks = []
    for b in range(BRICKS):
        # spheres of radius 0.1 with centres at z = 0.09: each dips 0.01 into the table
        spheres = [
            sc.Sphere(0.1, pose=trans(0.25 * (k % 5), 0.25 * (k // 5), 0.09))
            for k in range(SPHERES)
        ]
        brick = sc.CollisionShapeGroup(spheres, pose=trans(2.0 * (b % 10), 2.0 * (b // 10), 0))
        scene.add(brick, f"brick_{b:02d}")
        bricks.append(brick)
    return scene, bricks


def build_sensors(scene: sc.Scene) -> dict[str, list[Any]]:
    """The 50 sensors, by kind."""
    objects: list[Any] = [ObjectContactSensor(scene["table"])]
    objects += [ObjectContactSensor(scene[f"brick_{3 * k:02d}"]) for k in range(16)]
    matrices: list[Any] = [MatrixContactSensor(scene, "*", counterparts="*")]
    matrices += [MatrixContactSensor(scene, f"brick_{d}?", counterparts="table") for d in range(5)]
    matrices += [MatrixContactSensor(scene, [1 + 7 * k], counterparts="*") for k in range(7)]
    matrices += [MatrixContactSensor(scene, re.compile(r"brick_[0-4][05]")) for _ in range(2)]
    matrices += [MatrixContactSensor(scene, ["brick_*", "table"]) for _ in range(2)]
    named: list[Any] = [NamedContactSensor(scene, ["table"])]
    named += [
        NamedContactSensor(scene, [f"brick_{(3 * k + j) % BRICKS:02d}" for j in range(3)])
        for k in range(15)
    ]
    return {
        "ObjectContactSensor": objects,
        "MatrixContactSensor": matrices,
        "NamedContactSensor": named,
    }


def query_us(scene: sc.Scene, bricks: list[sc.CollisionShapeGroup], repeat: int) -> list[float]:
    """Microseconds of ``scene.contacts()`` after every brick moved, one sample per repeat."""
    samples = []
    for r in range(repeat):
        shift = 1e-4 * (r % 2)  # the contacts stay the same; every pair must be queried again
        for b, brick in enumerate(bricks):
            brick.T = trans(2.0 * (b % 10) + shift, 2.0 * (b // 10), 0)
        start = time.perf_counter()
        found = scene.contacts()
        samples.append((time.perf_counter() - start) * 1e6)
        assert len(found) == BRICKS * SPHERES
    return samples


def plain_matrix_update(
    scene: sc.Scene, contacts: sc.Contacts, forces: np.ndarray, owner: dict[Any, int]
) -> np.ndarray:
    """Newton's every-object-against-every-other force matrix, one contact at a time.

    ``owner`` caches each leaf's object index across calls, as the sensor does.
    """
    n = len(scene.names)
    matrix = np.zeros((n, n, 3))
    for k, c in enumerate(contacts):
        for leaf in (c.o1, c.o2):
            if leaf not in owner:
                owner[leaf] = scene.index_of(scene.name_of(leaf))
        a, b = owner[c.o1], owner[c.o2]
        f = forces[k]
        matrix[a, b] += f
        matrix[b, a] -= f
    return matrix


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(__doc__.splitlines()[0], argv, repeat=15, min_time=0.05)
    figures = Figures("bench_sensors", ["coal", "numpy"])
    for line in figures.machine:
        print(line)
    scene, bricks = build_scene()
    contacts = scene.contacts()
    print(f"\nscene: {len(scene.names)} objects, {len(contacts)} contacts in one step")
    model = PenaltyForce(1e4)
    forces = model.forces(contacts)
    sensors = build_sensors(scene)
    everything = [s for group in sensors.values() for s in group]
    print(
        f"sensors: {len(everything)} ("
        + ", ".join(f"{len(v)} {k}" for k, v in sensors.items())
        + ")"
    )
    hubs = {"all 50 sensors": SensorHub(scene, everything)}
    # Each hub feeds sensors of its own: a named sensor's time follows one hub's clock.
    hubs.update(
        {f"{len(v)} {k} only": SensorHub(scene, v) for k, v in build_sensors(scene).items()}
    )
    wide = sensors["MatrixContactSensor"][0]  # every object against every other

    # the vectorised sensor and the plain loop must agree
    wide.update(contacts, forces)
    owner: dict[Any, int] = {}
    plain = plain_matrix_update(scene, contacts, forces, owner)
    for i, row in enumerate(wide.counterpart_indices):
        np.testing.assert_allclose(wide.force_matrix[i, : len(row)], plain[i, row], atol=1e-9)

    cases: dict[str, Any] = {
        label: (lambda h=hub: h.feed(contacts, DT, forces=forces)) for label, hub in hubs.items()
    }
    cases["force model (PenaltyForce)"] = lambda: model.forces(contacts)
    cases["query, nothing moved"] = scene.contacts
    cases["matrix update, vectorised"] = lambda: wide.update(contacts, forces)
    cases["matrix update, plain loop"] = lambda: plain_matrix_update(scene, contacts, forces, owner)
    samples = interleaved_samples(cases, repeat=settings.repeat, min_time=settings.min_time)
    samples["query, all bricks moved"] = query_us(scene, bricks, settings.repeat)
    med = {label: statistics.median(values) for label, values in samples.items()}
    moved = samples["query, all bricks moved"]

    print("\n## 1. One step: the scene query beside feeding the sensors\n")
    order = [
        "query, all bricks moved",
        "query, nothing moved",
        "force model (PenaltyForce)",
        *hubs,
    ]
    rows = []
    query = statistics.median(moved)
    for label in order:
        share = f"{100.0 * med[label] / query:.3g} %"
        rows.append([label, fmt_us(med[label]), f"{med[label] / 1000:.2f}", share])
    print(table(["step part (1,000 contacts)", "µs", "ms", "of the query (moved)"], rows))

    print("\n## 2. One matrix update (51 x 50), vectorised against a plain Python loop\n")
    ratio = paired_ratio(samples["matrix update, plain loop"], samples["matrix update, vectorised"])
    print(
        table(
            ["matrix update", "µs", "plain loop / vectorised"],
            [
                [
                    "vectorised (MatrixContactSensor.update)",
                    fmt_us(med["matrix update, vectorised"]),
                    fmt_ratio(ratio),
                ],
                ["plain loop over the contacts", fmt_us(med["matrix update, plain loop"]), "1.00×"],
            ],
        )
    )

    feed_ms = med["all 50 sensors"] / 1000.0
    verdict = "PASS" if feed_ms < TARGET_MS else "FAIL"
    print(
        f"\ntarget: feeding one step of {len(contacts)} contacts to 50 sensors in under "
        f"{TARGET_MS:g} ms: {feed_ms:.2f} ms, {verdict}"
    )
    if settings.quick:
        print("(--quick: few repeats, rough figures)")
    for label, us in med.items():
        figures.add(label, us)
    figures.write(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
