"""Batch queries: one shape at many poses in one call, on numpy, Coal and executors.

Planners, dataset generators and grasp samplers ask the same question for thousands to
millions of poses of one shape ``b`` against another ``a``:

>>> import numpy as np
>>> from spatialcontact import Cuboid, Sphere, batch
>>> table, ball = Cuboid([1.0, 1.0, 0.1]), Sphere(0.1)
>>> t = np.array([[0.0, 0.0, 0.1], [0.0, 0.0, 0.3]])  # translations of the ball
>>> batch.iscollided(table, ball, t).tolist(), batch.distance(table, ball, t).round(3).tolist()
([True, False], [-0.05, 0.15])

Functions
---------
:func:`iscollided`, :func:`distance`, :func:`closest_point`, :func:`contacts`
    ``b`` at each of ``N`` poses ``(N, 4, 4)`` (values of ``b.T``) or translations
    ``(N, 3)``: ``(N,)`` answers, NaN rows beyond ``inf_dist``, contacts with a pose column
    (:class:`BatchContacts`). ``a`` may be a :class:`~spatialcontact.Scene` for
    ``iscollided`` (an ``(N, objects)`` matrix) and ``distance``.
:func:`point_distance`
    Signed distances of ``N`` points to spheres, boxes, capsules, cylinders, cones and
    half-spaces (or groups of them), in closed form.
:func:`iter_iscollided`, :func:`iter_distance`, :func:`iter_closest_point`,
:func:`iter_contacts`, :func:`iter_point_distance`
    The same, chunk by chunk, for batches too long to hold all at once.
:func:`map_chunks`, :func:`iter_chunks`
    The chunking under all of them, for any other many-items computation (a robot's
    configurations, say): serially or on any ``concurrent.futures.Executor``.

How the work is done
--------------------
Leaf pairs with a closed form (sphere, capsule, box, cylinder, cone and half-space pairs) are
answered for all poses at once in numpy, and agree with Coal to rounding; every other pair goes
to Coal pose by pose, through the functors the shape queries cache, with ``b``'s Coal
transforms set straight from the pose array, after a vectorised cull of the poses where the
pair's bounds are apart. The answers are those of the shape queries with ``b.T`` set to each
pose in turn; ``b`` is left where it was.

With ``executor=``, the poses are cut into chunks; ``a`` and ``b`` are pickled once and sent
to every worker once, and the results come back in input order. Coal holds the GIL, so only
processes (``ProcessPoolExecutor``, a Dask cluster of worker processes) add speed. ``import
spatialcontact`` loads neither Dask nor tqdm; tqdm is imported for ``progress=True``.
"""

from .chunks import DEFAULT_CHUNK_SIZE, BatchError, iter_chunks, map_chunks
from .queries import (
    closest_point,
    contacts,
    distance,
    iscollided,
    iter_closest_point,
    iter_contacts,
    iter_distance,
    iter_iscollided,
    iter_point_distance,
    point_distance,
)
from .results import BatchContacts

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "BatchContacts",
    "BatchError",
    "closest_point",
    "contacts",
    "distance",
    "iscollided",
    "iter_chunks",
    "iter_closest_point",
    "iter_contacts",
    "iter_distance",
    "iter_iscollided",
    "iter_point_distance",
    "map_chunks",
    "point_distance",
]
