"""Batch queries: one shape at many poses, against a Python loop of raw Coal calls.

Run ``python benchmarks/bench_batch.py`` (a few minutes) or add ``--quick`` (under a minute,
rough figures, fewer poses); ``--json PATH`` also writes every figure to PATH; ``--only
SECTION`` (``fast``, ``coal`` or ``executors``, repeatable) runs only those sections, the
targets of the others reading n/a. It prints, as
Markdown tables, microseconds per pose (medians of the timings of whole batches) of

1. the closed-form paths on 100,000 random poses (random rotations, translations in a 1.2 m
   cube): a sphere (r 0.1) against a sphere (r 0.2), and a box (0.2 x 0.3 x 0.1 m) against a
   capsule (r 0.05, segment 0.3 m), with ``batch.iscollided`` and ``batch.distance`` given
   (N, 4, 4) poses and (N, 3) translations;
2. the Coal path on 100,000 poses of a sphere (r 0.05, translations in a 1 m cube) against the
   shipped 5,120-triangle sphere mesh (``objects/sphere_5k.stl``, r 0.125): ``iscollided``
   (and ``distance`` on 5,000 of the poses, Coal's mesh distance being slow);
3. on executors, by the wall clock: that mesh case (``iscollided`` on the 100,000 poses and
   ``distance`` on the 5,000) and the Panda's ``check(Q)`` on 10,000 random configurations in
   a shelf of 6 boxes, each on a 2-process ``ProcessPoolExecutor`` against the serial call and
   against a 1-process pool, and on a local Dask cluster of 2 worker processes, 1 thread each
   (``iscollided`` on 1,000,000 poses there), against serial (``iscollided`` and ``check(Q)``
   also on a cluster started without Dask's ``MALLOC_TRIM_THRESHOLD_`` setting for its
   workers, ``distributed.nanny.pre-spawn-environ`` emptied); the pools and the cluster are
   started, and the shapes sent to the workers, before timing (the workers keep them between
   calls). First, how much faster 2 processes run pure Python arithmetic than 1: the free
   cores the machine has at the time, which bounds every speed-up of the table; last, the
   CPU seconds that one call on the Dask cluster costs each process (the caller, the
   scheduler, each worker) beside one serial call's,

1 and 2 next to a Python loop over the same poses calling Coal's cached functor (one
``ComputeCollision`` / ``ComputeDistance``, transforms, request and result made once,
``tf.setTransform(R, t)`` from views of the pose array and ``result.clear()`` at every pose, a
yes/no request as spatialcontact asks), then checks the targets: the closed-form paths at
least 50x faster than the loop, the Coal path at least 1.2x, 2 processes at least 1.7x faster
than one (against serial and against a 1-process pool), Dask on 2 workers at least 1.5x
faster than serial. Before timing, every batch answer is compared with the loop's (the yes/no
answers with the loop asking with contacts on: Coal's yes/no request misses some deep
overlaps, the batch does not; the distances where the shapes are apart), and every
executor's with the serial one. The machine is usually shared: the timings are taken in turn
(:func:`interleaved_samples`), and each ratio is the median of side-by-side ratios.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import coal
import numpy as np
from _timing import (
    Figures,
    Settings,
    fmt_ratio,
    fmt_us,
    interleaved_samples,
    paired_ratio,
    parse_settings,
    table,
)

import spatialcontact as sc
from spatialcontact import batch, meshes

TARGET_FAST = 50.0
"""The closed-form paths must be at least this many times faster than the raw loop."""
TARGET_COAL = 1.2
"""The Coal path must be at least this many times faster than the raw loop."""
TARGET_POOL = 1.7
"""2 worker processes must be at least this many times faster than the serial call."""
TARGET_DASK = 1.5
"""A Dask cluster of 2 worker processes must be at least this much faster than serial."""


def random_poses(rng: np.random.Generator, n: int, reach: float) -> np.ndarray:
    """``n`` rigid poses (n, 4, 4): uniform random rotations, translations in ±reach."""
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q.T
    P = np.zeros((n, 4, 4))
    P[:, 0, :3] = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], 1)
    P[:, 1, :3] = np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], 1)
    P[:, 2, :3] = np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], 1)
    P[:, :3, 3] = rng.uniform(-reach, reach, (n, 3))
    P[:, 3, 3] = 1.0
    return P


# ------------------------------------------------------------------------ the raw loop


class RawLoop:
    """A Python loop of raw Coal calls over poses of ``b``: the functor, transforms, request
    and result made once, ``setTransform`` and ``clear()`` at every pose."""

    def __init__(self, a: sc.CollisionShape, b: sc.CollisionShape) -> None:
        ga, gb = a._build_geometry(), b._build_geometry()
        ga.computeLocalAABB()
        gb.computeLocalAABB()
        self.geometries = (ga, gb)  # the functors hold raw pointers to them
        W = a.T
        self.tf_a = coal.Transform3s(np.ascontiguousarray(W[:3, :3]), W[:3, 3].copy())
        self.tf_b = coal.Transform3s()
        self.collide = coal.ComputeCollision(ga, gb)
        self.yes_no = coal.CollisionRequest()
        self.yes_no.enable_contact = False
        self.yes_no.distance_upper_bound = 0.0
        self.collision = coal.CollisionResult()
        self.contacts = coal.CollisionRequest()  # Coal's yes/no misses some deep overlaps
        self.distance = coal.ComputeDistance(ga, gb)
        self.signed = coal.DistanceRequest()
        self.signed.enable_signed_distance = True
        self.separation = coal.DistanceResult()

    def iscollided(self, P: np.ndarray, *, reliable: bool = False) -> np.ndarray:
        """Coal's yes/no per pose; ``reliable`` asks with contacts on, which never misses."""
        functor, tf_a, tf_b = self.collide, self.tf_a, self.tf_b
        request, result = self.contacts if reliable else self.yes_no, self.collision
        out = np.empty(len(P), dtype=bool)
        for i in range(len(P)):
            M = P[i]
            tf_b.setTransform(M[:3, :3], M[:3, 3])
            result.clear()
            out[i] = functor(tf_a, tf_b, request, result) > 0
        return out

    def distances(self, P: np.ndarray) -> np.ndarray:
        functor, tf_a, tf_b = self.distance, self.tf_a, self.tf_b
        request, result = self.signed, self.separation
        out = np.empty(len(P))
        for i in range(len(P)):
            M = P[i]
            tf_b.setTransform(M[:3, :3], M[:3, 3])
            result.clear()
            functor(tf_a, tf_b, request, result)
            out[i] = result.min_distance
        return out


# --------------------------------------------------------------------------- the cases


@dataclass
class Case:
    """One pair of shapes at many poses of ``b``."""

    name: str
    a: sc.CollisionShape
    b: sc.CollisionShape
    P: np.ndarray
    n_distance: int

    @property
    def t(self) -> np.ndarray:
        """The translations of the poses (n, 3): ``b`` keeps its own rotation (the identity)."""
        return np.ascontiguousarray(self.P[:, :3, 3])


def translated(P: np.ndarray) -> np.ndarray:
    """The poses (n, 4, 4) with the translations of ``P`` and no rotation."""
    out = np.tile(np.eye(4), (len(P), 1, 1))
    out[:, :3, 3] = P[:, :3, 3]
    return out


def same_distances(got: np.ndarray, raw: np.ndarray) -> bool:
    """Whether the batch's distances ``got`` are the raw loop's, to 1e-9, where the shapes are
    apart. Where they overlap both must say so; the depths may differ: spatialcontact measures
    a mesh's overlap by its deepest triangle, Coal's distance by the first one it meets."""
    apart = raw > 0.0
    return bool(
        np.allclose(got[apart], raw[apart], rtol=0.0, atol=1e-9) and (got[~apart] <= 0.0).all()
    )


def check(case: Case, raw: RawLoop, report: list[str]) -> None:
    """The batch answers equal the raw loop's (the distances to 1e-9 where the shapes are
    apart, see :func:`same_distances`), the yes/no answers those of the loop with contacts on:
    Coal's yes/no request misses some deep overlaps of shapes in symmetric poses (a capsule
    along a box's axis), which the batch does not."""
    a, b, P = case.a, case.b, case.P
    hit = raw.iscollided(P, reliable=True)
    assert np.array_equal(batch.iscollided(a, b, P), hit), case.name
    reference = raw.iscollided(translated(P), reliable=True)
    assert np.array_equal(batch.iscollided(a, b, case.t), reference), case.name
    misses = np.count_nonzero(reference & ~raw.iscollided(translated(P)))
    P = P[: case.n_distance]
    d = raw.distances(P)
    assert same_distances(batch.distance(a, b, P), d), case.name
    d_t = raw.distances(translated(P))
    assert same_distances(batch.distance(a, b, P[:, :3, 3].copy()), d_t), case.name
    report.append(
        f"{case.name}: {len(case.P):,} poses, answers equal the loop's; {hit.mean():.1%} "
        f"collide; distances (first {case.n_distance:,} poses) from {d.min():.3f} to "
        f"{d.max():.3f} m"
        + (f"; Coal's yes/no misses {misses} of the translations' overlaps" if misses else "")
    )


def per_pose(
    settings: Settings,
    cases: dict[str, Callable[[], Any]],
    n: dict[str, int],
    repeat: int,
    clock: str | None = None,
) -> dict[str, list[float]]:
    """µs per pose of each batch statement, timed in turn (``clock`` as in interleaved_samples:
    work spread over processes is timed by the wall clock)."""
    us = interleaved_samples(cases, repeat=repeat, min_time=settings.min_time, clock=clock)
    return {label: [t / n[label] for t in times] for label, times in us.items()}


def compare(
    settings: Settings,
    figures: Figures,
    case: Case,
    raw: RawLoop,
    query: str,
    repeat: int,
) -> tuple[list[list[str]], dict[str, float]]:
    """Rows of the table for one query of one case, and the speed-ups (raw / batch)."""
    if query == "iscollided":
        P, t = case.P, case.t
        cases: dict[str, Callable[[], Any]] = {
            "raw": lambda: raw.iscollided(P),
            "poses": lambda: batch.iscollided(case.a, case.b, P),
            "trusted": lambda: batch.iscollided(case.a, case.b, P, check=False),
            "translations": lambda: batch.iscollided(case.a, case.b, t),
        }
    else:
        P = case.P[: case.n_distance]
        t = np.ascontiguousarray(P[:, :3, 3])
        cases = {
            "raw": lambda: raw.distances(P),
            "poses": lambda: batch.distance(case.a, case.b, P),
            "trusted": lambda: batch.distance(case.a, case.b, P, check=False),
            "translations": lambda: batch.distance(case.a, case.b, t),
        }
    n = dict.fromkeys(cases, len(P))
    samples = per_pose(settings, cases, n, repeat)
    loop = f"{case.name}, {query}: raw Coal loop"
    figures.add(loop, statistics.median(samples["raw"]), reference=True)
    rows, speedups = [], {}
    for label, given in (
        ("poses", "(N, 4, 4) poses"),
        ("trusted", "(N, 4, 4) poses, check=False"),
        ("translations", "(N, 3) translations"),
    ):
        name = f"{case.name}, {query}: batch, {given}"
        figures.add(name, statistics.median(samples[label]))
        figures.relate(name, loop, paired_ratio(samples[label], samples["raw"]))
        speedup = paired_ratio(samples["raw"], samples[label])
        assert speedup is not None
        speedups[label] = speedup
        rows.append([
            f"{case.name}, `{query}`, {given}",
            f"{len(P):,}",
            fmt_us(statistics.median(samples["raw"])),
            fmt_us(statistics.median(samples[label])),
            fmt_ratio(speedup),
        ])  # fmt: skip
    return rows, speedups


# ---------------------------------------------------------------------------- executors


@dataclass
class Job:
    """One computation timed serially and on executors: ``run(executor)`` (None: serially)."""

    name: str
    query: str
    n: int
    run: Callable[[concurrent.futures.Executor | None], np.ndarray]


def versus_serial(
    settings: Settings,
    figures: Figures,
    job: Job,
    executor: concurrent.futures.Executor,
    label: str,
) -> tuple[list[str], float]:
    """``job`` on ``executor`` against the serial call, by the wall clock (the work is in other
    processes): a table row and the speed-up."""
    want = job.run(None)
    assert np.array_equal(job.run(executor), want), (job.name, label)  # also a warm-up
    samples = per_pose(
        settings,
        {"serial": lambda: job.run(None), "executor": lambda: job.run(executor)},
        dict.fromkeys(("serial", "executor"), job.n),
        2 if settings.quick else 3,
        clock="wall",
    )
    speedup = paired_ratio(samples["serial"], samples["executor"])
    assert speedup is not None
    name = f"{job.name}, {job.query}, {job.n:,} items"
    figures.add(f"{name}: serial (beside {label})", statistics.median(samples["serial"]))
    figures.add(f"{name}: {label}", statistics.median(samples["executor"]))
    figures.ratio(f"{name}: {label} speed-up over serial", speedup)
    row = [
        label,
        job.name,
        f"`{job.query}`",
        f"{job.n:,}",
        fmt_us(statistics.median(samples["serial"])),
        fmt_us(statistics.median(samples["executor"])),
        fmt_ratio(speedup),
    ]
    return row, speedup


def one_against_two(settings: Settings, figures: Figures, job: Job) -> tuple[list[str], float]:
    """``job`` on a process pool of 2 workers against a pool of 1 (by the wall clock)."""
    with (
        concurrent.futures.ProcessPoolExecutor(1) as one,
        concurrent.futures.ProcessPoolExecutor(2) as two,
    ):
        want = job.run(None)
        for pool in (one, two):
            assert np.array_equal(job.run(pool), want), job.name  # also a warm-up
        samples = per_pose(
            settings,
            {"one": lambda: job.run(one), "two": lambda: job.run(two)},
            dict.fromkeys(("one", "two"), job.n),
            2 if settings.quick else 3,
            clock="wall",
        )
    speedup = paired_ratio(samples["one"], samples["two"])
    assert speedup is not None
    name = f"{job.name}, {job.query}, {job.n:,} items"
    figures.add(f"{name}: ProcessPoolExecutor(1)", statistics.median(samples["one"]))
    figures.add(f"{name}: ProcessPoolExecutor(2) (beside 1)", statistics.median(samples["two"]))
    figures.ratio(f"{name}: 2 processes / 1 process", speedup)
    row = [
        "ProcessPoolExecutor(2) against (1)",
        job.name,
        f"`{job.query}`",
        f"{job.n:,}",
        fmt_us(statistics.median(samples["one"])),
        fmt_us(statistics.median(samples["two"])),
        fmt_ratio(speedup),
    ]
    return row, speedup


def _spin(n: int) -> int:
    """Pure Python arithmetic: what 2 processes do twice as fast as 1 on 2 free cores."""
    total = 0
    for i in range(n):
        total += i * i
    return total


def capacity(settings: Settings, figures: Figures) -> float:
    """How much faster 2 worker processes run pure Python arithmetic than 1 (by the wall
    clock): about 2 on an idle 2-core machine, less when other work holds the cores."""
    tasks = [200_000 if settings.quick else 1_000_000] * 4
    with (
        concurrent.futures.ProcessPoolExecutor(1) as one,
        concurrent.futures.ProcessPoolExecutor(2) as two,
    ):
        for pool in (one, two):
            list(pool.map(_spin, tasks))  # start the workers
        samples = interleaved_samples(
            {
                "one": lambda: list(one.map(_spin, tasks)),
                "two": lambda: list(two.map(_spin, tasks)),
            },
            repeat=3 if settings.quick else 5,
            min_time=settings.min_time,
            clock="wall",
        )
    speedup = paired_ratio(samples["one"], samples["two"])
    assert speedup is not None
    figures.ratio("machine: pure Python on 2 processes / 1 process", speedup)
    return speedup


def executor_jobs(case: Case, n_dask: int, n_robot: int) -> tuple[list[Job], list[Job]]:
    """The jobs timed on the process pools and on Dask: the mesh case's ``iscollided`` and
    ``distance``, and the Panda's ``check(Q)`` among a shelf of 6 boxes."""
    a, b = case.a, case.b
    few = case.P[: case.n_distance]
    big = random_poses(np.random.default_rng(3), n_dask, 0.5)

    def collided(P: np.ndarray) -> Callable[[concurrent.futures.Executor | None], np.ndarray]:
        return lambda executor: batch.iscollided(a, b, P, executor=executor)

    def distances(executor: concurrent.futures.Executor | None) -> np.ndarray:
        return batch.distance(a, b, few, executor=executor)

    mesh = [
        Job(case.name, "iscollided", len(case.P), collided(case.P)),
        Job(case.name, "distance", len(few), distances),
    ]
    robot, scene = panda(), shelf()
    Q = robot.sample(n_robot, np.random.default_rng(4))

    def checked(executor: concurrent.futures.Executor | None) -> np.ndarray:
        out: np.ndarray = robot.check(Q, scene, executor=executor)
        return out

    panda_job = Job("Panda in a shelf", "check(Q)", len(Q), checked)
    dask = [Job(case.name, "iscollided", n_dask, collided(big)), mesh[1], panda_job]
    return [*mesh, panda_job], dask


def panda() -> Any:
    """The shipped Panda, with its SRDF, mesh geometry."""
    from spatialcontact.robot import RobotModel

    folder = meshes.path("panda")
    return RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")


def shelf() -> sc.Scene:
    """A shelf of 6 boxes in front of the Panda: two sides, a back and three boards."""
    scene = sc.Scene()
    x, depth, width, height = 0.6, 0.3, 0.8, 0.9

    def at(px: float, py: float, pz: float) -> np.ndarray:
        T = np.eye(4)
        T[:3, 3] = (px, py, pz)
        return T

    scene.add(sc.Cuboid([depth, 0.02, height], pose=at(x, -width / 2, height / 2)), "left")
    scene.add(sc.Cuboid([depth, 0.02, height], pose=at(x, width / 2, height / 2)), "right")
    scene.add(sc.Cuboid([0.02, width, height], pose=at(x + depth / 2, 0, height / 2)), "back")
    for name, z in (("low", 0.2), ("middle", 0.5), ("top", 0.85)):
        scene.add(sc.Cuboid([depth, width, 0.02], pose=at(x, 0.0, z)), name)
    return scene


def cpu_split(job: Job, client: Any) -> list[str]:
    """Where the CPU time of one call of ``job`` on the Dask cluster goes: seconds of CPU of
    the caller (with the scheduler, when it runs there, as a LocalCluster's does), the
    scheduler and each worker process, beside one serial call's (a table row)."""
    import os

    import psutil  # type: ignore[import-untyped]  # a dependency of distributed

    pids = {"caller": os.getpid()}
    scheduler = client.run_on_scheduler(os.getpid)
    if scheduler != os.getpid():  # a LocalCluster runs its scheduler in the caller's process
        pids["scheduler"] = scheduler
    pids.update({f"worker {k}": pid for k, pid in enumerate(client.run(os.getpid).values())})
    processes = {name: psutil.Process(pid) for name, pid in pids.items()}

    def cpu() -> dict[str, float]:
        return {name: sum(p.cpu_times()[:2]) for name, p in processes.items()}

    start = cpu()
    begin = time.perf_counter()
    job.run(client.get_executor())
    wall = time.perf_counter() - begin
    spent = {name: value - start[name] for name, value in cpu().items()}
    begin = time.process_time()
    job.run(None)
    serial = time.process_time() - begin
    workers = [value for process, value in spent.items() if process.startswith("worker")]
    return [
        job.name,
        f"`{job.query}`",
        f"{serial:.2f}",
        f"{wall:.2f}",
        f"{spent['caller']:.2f}",
        f"{spent['scheduler']:.2f}" if "scheduler" in spent else "in the caller",
        " + ".join(f"{value:.2f}" for value in workers),
        f"{sum(spent.values()):.2f}",
    ]


def executor_rows(
    settings: Settings, figures: Figures, pool_jobs: list[Job], dask_jobs: list[Job]
) -> tuple[list[list[str]], dict[str, float | None], list[list[str]]]:
    """Each job on a 2-process pool (against serial and against a 1-process pool) and on a
    2-worker Dask cluster (against serial): the table rows, the speed-ups by
    ``"<executor> <job query>"`` and the rows of :func:`cpu_split` of the Dask jobs."""
    rows = []
    speedups: dict[str, float | None] = {}
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        for job in pool_jobs:
            row, speedups[f"pool {job.query}"] = versus_serial(
                settings, figures, job, pool, "ProcessPoolExecutor(2)"
            )
            rows.append(row)
    for job in pool_jobs:
        row, speedups[f"two/one {job.query}"] = one_against_two(settings, figures, job)
        rows.append(row)
    try:
        import distributed
    except ImportError:  # the optional extra is not installed: the rows read n/a
        for job in dask_jobs:
            speedups[f"dask {job.query}"] = None
            rows.append(["Dask, 2 workers", job.name, f"`{job.query}`", "n/a", "n/a", "n/a",
                         "n/a"])  # fmt: skip
        return rows, speedups, []
    with local_cluster(distributed) as client:
        dask = client.get_executor()
        for job in dask_jobs:
            row, speedups[f"dask {job.query}"] = versus_serial(
                settings, figures, job, dask, "Dask, 2 worker processes"
            )
            rows.append(row)
        split = [cpu_split(job, client) for job in dask_jobs]
    # Dask sets MALLOC_TRIM_THRESHOLD_ for its worker processes, which makes glibc map every
    # array over 128 KiB afresh: the cheap cases again, on a cluster started without it (the
    # first cluster left it in this process's environment, where new workers would find it).
    import os

    import dask as dask_config

    trim = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        with (
            dask_config.config.set({"distributed.nanny.pre-spawn-environ": {}}),
            local_cluster(distributed) as client,
        ):
            untrimmed = client.get_executor()
            for job in dask_jobs:
                if job.query != "distance":
                    row, _ = versus_serial(
                        settings, figures, job, untrimmed, "Dask, 2 workers, no malloc trim"
                    )
                    rows.append(row)
    finally:
        if trim is not None:
            os.environ["MALLOC_TRIM_THRESHOLD_"] = trim
    return rows, speedups, split


@contextlib.contextmanager
def local_cluster(distributed: Any) -> Iterator[Any]:
    """A local Dask cluster of 2 worker processes, 1 thread each: its client."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


# ------------------------------------------------------------------------------- main


SECTIONS = ("fast", "coal", "executors")
"""The sections of the run, in order: closed-form paths, Coal path, executors."""


def sections(argv: Sequence[str] | None) -> tuple[set[str], list[str]]:
    """The sections ``--only`` asks for (all without it) and the other arguments."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--only", action="append", choices=SECTIONS, default=None)
    args, rest = parser.parse_known_args(sys.argv[1:] if argv is None else list(argv))
    return set(args.only or SECTIONS), rest


def main(argv: Sequence[str] | None = None) -> int:
    chosen, argv = sections(argv)
    settings = parse_settings(__doc__.splitlines()[0], argv, repeat=7, min_time=0.001)
    n_fast = 20_000 if settings.quick else 100_000
    n_mesh = 20_000 if settings.quick else 100_000
    n_dask = 50_000 if settings.quick else 1_000_000
    n_robot = 300 if settings.quick else 10_000
    repeat = settings.repeat
    figures = Figures("bench_batch", ["spatialcontact", "coal", "numpy", "dask", "distributed"])
    print("# Batch queries\n")
    for line in figures.machine:
        print(f"- {line}")
    print(
        f"- {repeat} timings per case (whole batches), µs per pose (median); speed-ups are "
        "medians of side-by-side ratios"
    )
    rng = np.random.default_rng(2024)
    fast = [
        Case("sphere/sphere", sc.Sphere(0.2), sc.Sphere(0.1), random_poses(rng, n_fast, 0.6),
             n_fast),
        Case("box/capsule", sc.Cuboid([0.2, 0.3, 0.1]), sc.Capsule(0.05, 0.3),
             random_poses(rng, n_fast, 0.6), n_fast // 10),
    ]  # fmt: skip
    mesh = Case(
        "sphere_5k mesh/sphere",
        sc.Mesh(meshes.path("objects/sphere_5k.stl")),
        sc.Sphere(0.05),
        random_poses(rng, n_mesh, 0.5),
        300 if settings.quick else 5_000,
    )
    checked = (fast if "fast" in chosen else []) + ([mesh] if chosen - {"fast"} else [])
    raws = {case.name: RawLoop(case.a, case.b) for case in checked}
    report: list[str] = []
    for case in checked:
        check(case, raws[case.name], report)
    print()
    for line in report:
        print(f"- {line}")

    headers = ["case", "poses", "raw Coal loop µs/pose", "batch µs/pose", "speed-up"]
    fast_speedups: dict[str, float] = {}
    if "fast" in chosen:
        print("\n## Closed-form paths\n")
        rows: list[list[str]] = []
        for case in fast:
            for query in ("iscollided", "distance"):
                found, speedups = compare(settings, figures, case, raws[case.name], query, repeat)
                rows.extend(found)
                fast_speedups[f"{case.name} {query}"] = speedups["poses"]
                fast_speedups[f"{case.name} {query}, translations"] = speedups["translations"]
                fast_speedups[f"{case.name} {query}, trusted"] = speedups["trusted"]
        print(table(headers, rows))
        print(
            "\nbox/capsule: a closed yes/no (the segment's distance to the box); its distance "
            "is Coal's (GJK), so `distance` runs the Coal path."
        )

    coal_speedups: dict[str, float] = {}
    if "coal" in chosen:
        print("\n## Coal path\n")
        rows = []
        for query in ("iscollided", "distance"):
            found, speedups = compare(settings, figures, mesh, raws[mesh.name], query, repeat)
            rows.extend(found)
            coal_speedups[query] = speedups["poses"]
        print(table(headers, rows))

    on: dict[str, float | None] = {}
    if "executors" in chosen:
        print("\n## Executors\n")
        free = capacity(settings, figures)
        print(
            f"Free cores now: pure Python arithmetic runs {fmt_ratio(free)} faster on 2 worker "
            "processes than on 1 (2× on an idle 2-core machine): the speed-ups below cannot be "
            "expected to exceed it.\n"
        )
        pool_jobs, dask_jobs = executor_jobs(mesh, n_dask, n_robot)
        rows, on, split = executor_rows(settings, figures, pool_jobs, dask_jobs)
        headers = ["executor", "case", "query", "items", "reference µs/item", "executor µs/item",
                   "speed-up"]  # fmt: skip
        print(table(headers, rows))
        print(
            "\nBy the wall clock. The reference is the serial call (a 1-process pool for the "
            '"against (1)" rows). The mesh `iscollided` costs about a microsecond per pose (the '
            "cull leaves Coal a few per cent of the poses), not much more than sending a pose to "
            "a worker; `distance` and the Panda's `check(Q)` are Coal's work throughout. On a "
            "shared machine the workers get what the other processes leave of the 2 cores: see "
            "the load average above."
        )
        if split:
            print(
                "\nCPU seconds of one call on the Dask cluster, by process (psutil, to 0.01 s), "
                "beside one serial call's. The caller, the scheduler and the 2 workers share the "
                "machine's cores: a speed-up over serial needs the workers' CPU plus the "
                "caller's and the scheduler's to fit on them.\n"
            )
            print(table(["case", "query", "serial CPU s", "Dask wall s", "caller", "scheduler",
                         "workers", "Dask CPU in all"], split))  # fmt: skip

    targets: list[tuple[str, str, float | None, float]] = [
        ("T1", "sphere/sphere iscollided, (N, 4, 4) poses: raw loop / batch",
         fast_speedups.get("sphere/sphere iscollided"), TARGET_FAST),
        ("T2", "box/capsule iscollided, (N, 4, 4) poses: raw loop / batch",
         fast_speedups.get("box/capsule iscollided"), TARGET_FAST),
        ("T1a", "sphere/sphere iscollided, (N, 4, 4) poses, check=False: raw loop / batch",
         fast_speedups.get("sphere/sphere iscollided, trusted"), TARGET_FAST),
        ("T2a", "box/capsule iscollided, (N, 4, 4) poses, check=False: raw loop / batch",
         fast_speedups.get("box/capsule iscollided, trusted"), TARGET_FAST),
        ("T1b", "sphere/sphere iscollided, (N, 3) translations: raw loop / batch",
         fast_speedups.get("sphere/sphere iscollided, translations"), TARGET_FAST),
        ("T2b", "box/capsule iscollided, (N, 3) translations: raw loop / batch",
         fast_speedups.get("box/capsule iscollided, translations"), TARGET_FAST),
        ("T3", "mesh/sphere iscollided (Coal path), (N, 4, 4) poses: raw loop / batch",
         coal_speedups.get("iscollided"), TARGET_COAL),
        ("T4", f"mesh/sphere distance, {mesh.n_distance:,} poses: serial / "
         "ProcessPoolExecutor(2)", on.get("pool distance"), TARGET_POOL),
        ("T4b", f"mesh/sphere distance, {mesh.n_distance:,} poses: ProcessPoolExecutor(1) / "
         "ProcessPoolExecutor(2)", on.get("two/one distance"), TARGET_POOL),
        ("T5", f"Panda check(Q), {n_robot:,} configurations: serial / ProcessPoolExecutor(2)",
         on.get("pool check(Q)"), TARGET_POOL),
        ("T5b", f"Panda check(Q), {n_robot:,} configurations: ProcessPoolExecutor(1) / "
         "ProcessPoolExecutor(2)", on.get("two/one check(Q)"), TARGET_POOL),
        ("T6", f"mesh/sphere iscollided, {n_dask:,} poses: serial / Dask, 2 workers",
         on.get("dask iscollided"), TARGET_DASK),
        ("T7", f"mesh/sphere distance, {mesh.n_distance:,} poses: serial / Dask, 2 workers",
         on.get("dask distance"), TARGET_DASK),
        ("T8", f"Panda check(Q), {n_robot:,} configurations: serial / Dask, 2 workers",
         on.get("dask check(Q)"), TARGET_DASK),
        ("T9", f"mesh/sphere iscollided, {n_mesh:,} poses: serial / ProcessPoolExecutor(2)",
         on.get("pool iscollided"), TARGET_POOL),
        ("T9b", f"mesh/sphere iscollided, {n_mesh:,} poses: ProcessPoolExecutor(1) / "
         "ProcessPoolExecutor(2)", on.get("two/one iscollided"), TARGET_POOL),
    ]  # fmt: skip
    print("\n## Targets\n")
    rows = []
    for name, text, speedup, wanted in targets:
        measured = None if speedup is None else 1.0 / speedup
        verdict = figures.target(name, f"batch / reference time ({text})", measured, 1 / wanted)
        rows.append([name, text, fmt_ratio(speedup), f">= {wanted:g}×", verdict])
    print(table(["target", "speed-up of", "measured", "wanted", "verdict"], rows))
    figures.write(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
