"""Batch queries and the chunking under them on executors: a process pool, a local Dask
cluster of two worker processes, a thread pool; failures surface with the index of the item.
"""

from __future__ import annotations

import concurrent.futures
import operator
import pickle
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import make_leaf, trans
from test_batch import (
    assert_close_rows,
    assert_near,
    contact_rows,
    obstacles,
    random_poses,
    robot_like,
    scene_with_objects,
    tolerance,
)

import spatialcontact as sc
from spatialcontact import batch


@pytest.fixture(scope="module")
def process_pool() -> Iterator[concurrent.futures.Executor]:
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        yield pool


@pytest.fixture(scope="module")
def dask_executor() -> Iterator[concurrent.futures.Executor]:
    import distributed  # the test extra installs it: dask[distributed]

    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        yield client.get_executor()
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def thread_pool() -> Iterator[concurrent.futures.Executor]:
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        yield pool


EXECUTORS = ["process_pool", "dask_executor", "thread_pool"]


@pytest.mark.parametrize("name", EXECUTORS)
def test_executor_answers_equal_the_serial_ones(name: str, request: pytest.FixtureRequest) -> None:
    # The oracle: the serial answers for the shapes the workers get, a pickled copy, exactly
    # on a process or thread pool; and the original's to tolerance(d) (a loaded group places
    # its leaves by one product of poses, which can differ from the original's in the last
    # bit, and EPA's overlap depths move by up to its tolerance with that). On Dask's worker
    # processes (started by spawning, not forking) GJK/EPA distances came out up to 6e-11 away
    # from the same copy's here; the cause is not pinned down: there, to tolerance(d).
    executor = request.getfixturevalue(name)
    a, b = obstacles(), robot_like()
    P = random_poses(60, 1.2, 31)
    before = b.T
    twin_a, twin_b = pickle.loads(pickle.dumps((a, b), protocol=pickle.HIGHEST_PROTOCOL))
    kwargs: dict[str, Any] = {"chunk_size": 7, "executor": executor}
    d = batch.distance(twin_a, twin_b, P)
    assert (d > 0).any() and (d < 0).any()
    exact = name != "dask_executor"
    same = np.testing.assert_array_equal if exact else partial(assert_near, atol=tolerance(d))
    got = batch.distance(a, b, P, **kwargs)
    same(got, d)
    assert_near(got, batch.distance(a, b, P), tolerance(d))
    away = np.abs(d) > 1e-9
    hit = batch.iscollided(a, b, P, **kwargs)
    np.testing.assert_array_equal(hit[away], batch.iscollided(a, b, P)[away])
    np.testing.assert_array_equal(hit[away], batch.iscollided(twin_a, twin_b, P)[away])
    for got_part, want in zip(
        batch.closest_point(a, b, P, 0.3, **kwargs),
        batch.closest_point(twin_a, twin_b, P, 0.3),
        strict=True,
    ):
        if exact:
            np.testing.assert_array_equal(got_part, want)  # NaN rows alike
        else:
            assert_near(
                got_part, want, tolerance(d) if got_part.ndim == 1 else tolerance(d)[:, None]
            )
    found = batch.contacts(a, b, P, **kwargs)
    assert_close_rows(
        contact_rows(found.to_contacts()), contact_rows(batch.contacts(a, b, P).to_contacts())
    )
    assert found.pose.tolist() == batch.contacts(a, b, P).pose.tolist()
    assert set(found.o1) <= set(a.leaves()) and set(found.o2) <= set(b.leaves())  # the caller's
    np.testing.assert_array_equal(b.T, before)


@pytest.mark.parametrize("name", EXECUTORS)
def test_mesh_and_translations_on_executors(name: str, request: pytest.FixtureRequest) -> None:
    executor = request.getfixturevalue(name)
    mesh, ball = make_leaf("Mesh"), sc.Sphere(0.1)
    t = np.random.default_rng(32).uniform(-0.8, 0.8, (500, 3))
    want = batch.iscollided(mesh, ball, t)
    assert want.any() and not want.all()
    got = batch.iscollided(mesh, ball, t, executor=executor, chunk_size=64)
    np.testing.assert_array_equal(got, want)
    parts = list(batch.iter_distance(mesh, ball, t, executor=executor, chunk_size=100))
    assert [start for start, _ in parts] == [0, 100, 200, 300, 400]
    d = batch.distance(mesh, ball, t)
    assert_near(np.concatenate([x for _, x in parts]), d, tolerance(d))


@pytest.mark.parametrize("name", EXECUTORS)
def test_default_chunks_on_executors(name: str, request: pytest.FixtureRequest) -> None:
    executor = request.getfixturevalue(name)
    items = np.arange(1000)
    starts = [
        start for start, _ in batch.iter_chunks(operator.getitem, items, items, executor=executor)
    ]
    assert starts == [0, 256, 512, 768]  # the smallest default chunk with an executor


@pytest.mark.parametrize("name", [*EXECUTORS, None])
def test_a_failing_item_is_named(name: str | None, request: pytest.FixtureRequest) -> None:
    executor = None if name is None else request.getfixturevalue(name)
    table = np.arange(5000) * 10
    index = np.arange(3000)
    index[1234] = 10**6  # out of range: getitem fails on this item only
    with pytest.raises(batch.BatchError, match=r"^item 1234 failed: IndexError: index 10+") as e:
        batch.map_chunks(operator.getitem, table, index, chunk_size=500, executor=executor)
    assert e.value.index == 1234
    got = batch.map_chunks(operator.getitem, table, index[:1000], chunk_size=300, executor=executor)
    assert np.concatenate(got).tolist() == (index[:1000] * 10).tolist()


def test_a_chunk_that_fails_as_a_whole() -> None:
    def only_singles(_: Any, chunk: np.ndarray) -> np.ndarray:
        if len(chunk) > 1:
            raise MemoryError("too big")
        return chunk

    with pytest.raises(batch.BatchError, match=r"items 0 to 3 failed together .*MemoryError") as e:
        batch.map_chunks(only_singles, None, np.arange(8), chunk_size=4, unit="item")
    assert e.value.index is None


def test_batch_errors_pickle() -> None:
    error = pickle.loads(pickle.dumps(batch.BatchError("pose 3 failed: X", 3)))
    assert isinstance(error, batch.BatchError) and error.index == 3
    assert str(error) == "pose 3 failed: X"


def test_a_payload_that_does_not_pickle_is_refused(process_pool: Any) -> None:
    with pytest.raises(sc.ShapeTypeError, match="cannot be sent to the executor's workers, it"):
        batch.map_chunks(operator.getitem, lambda: None, np.arange(3), executor=process_pool)


@pytest.mark.parametrize("name", ["process_pool", "dask_executor"])
def test_scene_on_executors(name: str, request: pytest.FixtureRequest) -> None:
    executor = request.getfixturevalue(name)
    scene, objects = scene_with_objects()
    probe = sc.Capsule(0.1, 0.3, pose=trans(0.1, 0, 0))
    P = random_poses(40, 1.0, 33)
    hit = batch.iscollided(scene, probe, P)
    assert hit.any(axis=0).all() and not hit.all()  # every object touched at some pose only
    np.testing.assert_array_equal(
        batch.iscollided(scene, probe, P, executor=executor, chunk_size=9), hit
    )
    # To tolerance(d): the workers' scene is loaded from a pickle (see the test above).
    d = batch.distance(scene, probe, P)
    assert_near(batch.distance(scene, probe, P, executor=executor, chunk_size=9), d, tolerance(d))
    # b an object of the scene: it is left out of its own answers on the workers too.
    ball = objects[1]
    t = np.array([[0.0, 0, 0.3], [0.0, 0, 3.0], [0.3, 0.0, 0.0]])
    np.testing.assert_array_equal(
        batch.iscollided(scene, ball, t, executor=executor, chunk_size=1),
        batch.iscollided(scene, ball, t),
    )


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "batch_dataset.py"


def test_the_dataset_example_runs_small(tmp_path: Path) -> None:
    out = tmp_path / "labels.npz"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--n", "3000", "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "poses per second" in done.stdout
    assert "on a local Dask cluster of 2 worker processes" in done.stdout
    data = np.load(out)
    assert data["centres"].shape == (3000, 3) and data["collided"].dtype == np.bool_
    link = sc.Mesh(sc.meshes.path("panda") / "collision" / "link3.stl")
    probe = sc.Sphere(float(data["radius"]))
    sample = data["centres"][:50]
    np.testing.assert_array_equal(batch.iscollided(link, probe, sample), data["collided"][:50])
    np.testing.assert_array_equal(batch.distance(link, probe, sample), data["distance"][:50])


def test_workers_keep_the_shapes_between_calls(thread_pool: Any) -> None:
    # Threads of this process: the copies the workers hold can be counted. A batch leaves its
    # shapes as they were, so the next call pickles the same and reuses them; moving a shape
    # sends it anew.
    from spatialcontact.batch import chunks

    mesh, ball = make_leaf("Mesh"), sc.Sphere(0.1)
    t = np.random.default_rng(34).uniform(-0.8, 0.8, (400, 3))
    with chunks._PAYLOADS_LOCK:
        chunks._PAYLOADS.clear()
    first = batch.iscollided(mesh, ball, t, executor=thread_pool, chunk_size=50)
    tokens = {token for token, _ in chunks._PAYLOADS}
    assert len(tokens) == 1
    batch.iscollided(mesh, ball, t, executor=thread_pool, chunk_size=50)
    assert {token for token, _ in chunks._PAYLOADS} == tokens
    mesh.T = trans(0.05, 0, 0)
    moved = batch.iscollided(mesh, ball, t, executor=thread_pool, chunk_size=50)
    assert len({token for token, _ in chunks._PAYLOADS}) == 2
    np.testing.assert_array_equal(moved, batch.iscollided(mesh, ball, t))
    assert (moved != first).any()  # the workers answered for the moved mesh
