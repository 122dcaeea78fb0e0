"""Random rigid poses for the benchmarks: uniform rotations from normal quaternions."""

from __future__ import annotations

import numpy as np


def random_rigid(rng: np.random.Generator, reach: float | None = None) -> np.ndarray:
    """A random rigid pose (4, 4): a uniform rotation, and with ``reach`` a translation
    uniform in ``[-reach, reach]`` per axis (none without; ``rng`` then draws 4 numbers)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    T = np.eye(4)
    T[:3, :3] = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    if reach is not None:
        T[:3, 3] = rng.uniform(-reach, reach, 3)
    return T
