"""Label random sphere poses against a Panda link: a dataset for a learned collision model.

Run it with ``python examples/batch_dataset.py`` (1,000,000 poses; ``--n 20000`` for a short
run). It places a 3 cm sphere at random points of a box 10 cm larger than the Franka Panda's
``link3`` collision mesh (shipped with spatialcontact), labels every pose with
``batch.iscollided`` and ``batch.distance`` (the signed distance, negative on overlap), and
writes the centres and labels to a compressed ``.npz`` file: the path given with ``--out``,
by default ``batch_dataset.npz`` in a new temporary folder. It runs on a local Dask cluster
of two worker processes when Dask is installed (``pip install "spatialcontact[dask]"``) and
serially otherwise (or with ``--serial``), and prints the throughput.

The link mesh is a hollow surface, as every :class:`~spatialcontact.Mesh`: a sphere wholly
inside it does not collide, and its distance is to the nearest triangle. Label against
``link.convex_hull()`` for a solid instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import spatialcontact as sc
from spatialcontact import batch, meshes

RADIUS = 0.03
"""The sphere's radius, metres."""
MARGIN = 0.1
"""How far beyond the link's bounding box the centres are drawn, metres."""


def label(
    link: sc.Mesh, probe: sc.Sphere, centres: np.ndarray, executor: Any
) -> tuple[np.ndarray, np.ndarray, float]:
    """``(collided (n,), distance (n,), seconds)`` of the sphere at every centre."""
    start = time.perf_counter()
    collided = batch.iscollided(link, probe, centres, executor=executor)
    distance = batch.distance(link, probe, centres, executor=executor)
    return collided, distance, time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="poses to label (1,000,000)")
    parser.add_argument("--out", type=Path, default=None, help="the .npz file to write")
    parser.add_argument("--serial", action="store_true", help="do not use Dask")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error(f"--n must be at least 1, got {args.n}")
    out = args.out or Path(tempfile.mkdtemp(prefix="batch_dataset-")) / "batch_dataset.npz"

    link = sc.Mesh(meshes.path("panda") / "collision" / "link3.stl")
    probe = sc.Sphere(RADIUS)
    low, high = link.vertices.min(axis=0) - MARGIN, link.vertices.max(axis=0) + MARGIN
    centres = np.random.default_rng(args.seed).uniform(low, high, (args.n, 3))
    print(f"Panda link3: {len(link.faces)} triangles; {args.n:,} centres of a {RADIUS} m sphere")

    if args.serial or importlib.util.find_spec("distributed") is None:
        where = "serially"
        collided, distance, seconds = label(link, probe, centres, None)
    else:
        import distributed

        where = "on a local Dask cluster of 2 worker processes"
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            collided, distance, seconds = label(link, probe, centres, client.get_executor())

    np.savez_compressed(out, centres=centres, radius=RADIUS, collided=collided, distance=distance)
    print(f"labelled {where} in {seconds:.2f} s: {args.n / seconds:,.0f} poses per second")
    print(
        f"{collided.mean():.1%} collide; signed distances from {distance.min():+.3f} to "
        f"{distance.max():+.3f} m"
    )
    assert not collided[distance > 1e-9].any()  # the labels agree: apart means no collision
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
