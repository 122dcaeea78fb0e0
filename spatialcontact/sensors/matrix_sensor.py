"""MatrixContactSensor: contact forces between scene objects, after Newton's ``SensorContact``.

Rows are *sensing* objects and columns their *counterparts*, selected with Newton's rules (glob
strings, lists of globs, compiled regular expressions with full matching, or lists of indices).
Outputs are numpy arrays with Newton's names, shapes and ``None`` cases.

Differences from Newton, converted here and nowhere else:

- sensing objects and counterparts are objects of a :class:`~spatialcontact.Scene` (Newton:
  bodies or shapes of a model); indices are positions in ``scene.names``;
- forces come with :meth:`update` (``forces=``: the caller's array, a force model's output, or
  nothing, which gives zeros and ``forces_valid = False``) instead of solver observables;
  ``forces[k]`` is the force on ``contacts[k].o1``'s object from ``o2``'s, and a sensing object
  on the ``o2`` side reads its negation (Newton's convention for its contact pairs);
- the friction part is the force minus its component along the contact normal (Coal's normal,
  from ``o1`` to ``o2``), as Newton does with its own normal;
- :attr:`position_matrix` averages :attr:`spatialcontact.Contact.pos` (Coal's midpoint of the
  witness points), weighted by force magnitude: Newton's definition, computed from the contacts,
  so it needs no body transforms;
- a sensing object is not its own counterpart: its contacts with itself (self-collision inside
  one object) put equal and opposite forces on it, which cancel in :attr:`total_force`; rows
  that lose that column are zero-padded;
- arrays are float64 numpy arrays, new ones on every update; :attr:`sensing_transforms` are
  ``(4, 4)`` world poses (Newton: position and quaternion);
- worlds are those of the scene (``scene.world_of``, Newton's ``world``): counterparts are
  resolved per world, the global ones first, then the row's world's own, each in ascending
  index order, and the matrices are padded to the largest count. In a scene with worlds a
  sensing object must belong to one (a global one raises, since its row would mix worlds); a
  scene with none is one implicit world where every object may sense;
- selections are resolved once, at construction (as Newton's): objects added to the scene
  later count in the totals but get no row or column, and removing an object (which shifts
  the indices) makes :meth:`MatrixContactSensor.update` raise.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._validate import describe, flag
from ..contact import Contacts
from ._common import ObjectMap, StepData, check_scene
from ._errors import SelectionError, SensorTypeError, SensorValueError
from ._selection import Selection, select
from .forces import ForceInput

__all__ = ["MatrixContactSensor"]


class MatrixContactSensor:
    """Total and per-counterpart contact forces on sensing objects of a scene (Newton's rules).

    Parameters
    ----------
    scene : Scene
        The scene whose objects are sensed; rows and columns are its object indices.
    sensing : str, list of str, re.Pattern or list of int
        The sensing objects: a glob pattern (case-sensitive ``fnmatch``), a list of globs (any
        may match), a compiled regular expression matching whole names, or object indices.
        Patterns give rows in ascending index order; a list of indices keeps its order.
    counterparts : same kinds as ``sensing``, optional
        The counterpart objects. Each row's are the global ones then those of the row's world
        (``scene.world_of``), each in ascending index order, minus the row's own object; in a
        scene without worlds, all of them in ascending index order. None: only the totals are
        measured.
    measure_total : bool
        Whether to measure :attr:`total_force` and :attr:`total_force_friction` (else None).

    Attributes
    ----------
    sensing_indices : list of int
        Object index of each row.
    counterpart_indices : list of list of int
        ``counterpart_indices[i][j]`` is the object of column ``j`` in row ``i``; empty lists
        when no counterparts are given.
    sensing_type : str
        ``"object"``.
    counterpart_type : str or None
        ``"object"``, or None when no counterparts are given.
    total_force : ndarray, shape (n_sensing, 3), world frame, or None
        Net contact force on each sensing object, newtons (from every contact, counterpart or
        not). None when ``measure_total`` is False.
    total_force_friction : ndarray, shape (n_sensing, 3), world frame, or None
        The tangential (friction) part of :attr:`total_force`.
    force_matrix : ndarray, shape (n_sensing, max_counterparts, 3), world frame, or None
        ``[i, j]``: force on ``sensing_indices[i]`` from ``counterpart_indices[i][j]``.
        Columns beyond a row's counterparts are zero (``max_counterparts`` is the largest
        count of any row, so of any world). None without counterparts.
    force_matrix_friction : ndarray, shape (n_sensing, max_counterparts, 3), or None
        The tangential part of each :attr:`force_matrix` entry.
    position_matrix : ndarray, shape (n_sensing, max_counterparts, 3), world frame, or None
        Mean contact position of each pair, weighted by force magnitude; zero where the
        pair's force is zero (always, when no forces are given). None without counterparts.
    sensing_transforms : ndarray, shape (n_sensing, 4, 4), world frame
        World pose of each sensing object at the last update (identity before).
    forces_valid : bool
        False when the last update had no forces (all outputs zero for that reason).

    Raises
    ------
    SelectionError
        If a selection matches nothing or repeats an index, if ``measure_total`` is False
        and no counterparts are given (nothing would be measured), or if the scene has worlds
        and a sensing object is global.
    SelectionIndexError
        If an index is out of range.

    Examples
    --------
    >>> import spatialcontact as sc
    >>> scene = sc.Scene()
    >>> _ = scene.add(sc.Cuboid([4, 4, 1], pose=[[1, 0, 0, 0], [0, 1, 0, 0],
    ...                                          [0, 0, 1, -0.5], [0, 0, 0, 1]]), "table")
    >>> _ = scene.add(sc.Sphere(0.5, pose=[[1, 0, 0, 0], [0, 1, 0, 0],
    ...                                    [0, 0, 1, 0.4], [0, 0, 0, 1]]), "ball")
    >>> sensor = MatrixContactSensor(scene, "ball", counterparts="*")
    >>> contacts = scene.contacts()
    >>> sensor.update(contacts, forces=[1000.0 * 0.1])  # 100 N pushing the pair apart
    >>> sensor.total_force.round(6).tolist()  # up on the ball
    [[0.0, 0.0, 100.0]]
    >>> sensor.counterpart_indices, sensor.force_matrix.shape
    ([[0]], (1, 1, 3))
    """

    sensing_type = "object"
    total_force: np.ndarray | None
    total_force_friction: np.ndarray | None
    force_matrix: np.ndarray | None
    force_matrix_friction: np.ndarray | None
    position_matrix: np.ndarray | None

    def __init__(
        self,
        scene: Any,
        sensing: Selection,
        *,
        counterparts: Selection = None,
        measure_total: bool = True,
    ) -> None:
        self.scene = check_scene(scene)
        total = flag(measure_total, "measure_total", type_error=SensorTypeError)
        names = tuple(scene.names)
        rows = select(names, sensing, "sensing")
        if counterparts is None and not total:
            raise SensorValueError(
                "measure_total=False with counterparts=None measures nothing; give counterparts "
                "or keep measure_total=True"
            )
        n_objects = len(names)
        worlds = _worlds_of(scene, names)
        if worlds is not None:
            shared = [i for i in rows if worlds[i] < 0]
            if shared:
                raise SelectionError(
                    f"sensing selects the global object {names[shared[0]]!r} (world -1), but "
                    "the scene has worlds: a sensing object must belong to one (Newton's rule); "
                    "select objects of the worlds only"
                )
        self.sensing_indices: list[int] = rows
        self._row_of = np.full(n_objects, -1, dtype=np.intp)
        self._row_of[rows] = np.arange(len(rows))
        self.measure_total = total
        self.counterpart_type: str | None
        if counterparts is None:
            self.counterpart_type = None
            self.counterpart_indices: list[list[int]] = [[] for _ in rows]
            self._columns = 0
            self._col_of = np.zeros((len(rows), 0), dtype=np.intp)
        else:
            self.counterpart_type = "object"
            chosen = sorted(select(names, counterparts, "counterparts"))
            if worlds is None:
                self.counterpart_indices = [[j for j in chosen if j != i] for i in rows]
            else:
                by_world: dict[int, list[int]] = {}
                for j in chosen:
                    by_world.setdefault(worlds[j], []).append(j)
                shared = by_world.get(-1, [])
                self.counterpart_indices = [
                    [j for j in (*shared, *by_world.get(worlds[i], ())) if j != i] for i in rows
                ]
            self._columns = max(len(c) for c in self.counterpart_indices)
            self._col_of = np.full((len(rows), n_objects), -1, dtype=np.intp)
            for r, cols in enumerate(self.counterpart_indices):
                self._col_of[r, cols] = np.arange(len(cols))
        self._names = names
        self._objects = ObjectMap(scene)
        self.forces_valid = False
        self.sensing_transforms = np.tile(np.eye(4), (len(rows), 1, 1))
        self._poses_read: list[np.ndarray] = []
        """The world poses read at the last update (shapes replace theirs when they move)."""
        self._apply(self._zeros())

    @property
    def sensing_names(self) -> tuple[str, ...]:
        """tuple of str: the name of each row's object."""
        return tuple(self._names[i] for i in self.sensing_indices)

    @property
    def counterpart_names(self) -> list[list[str]]:
        """list of list of str: the name of each column's object, row by row."""
        return [[self._names[j] for j in row] for row in self.counterpart_indices]

    def __repr__(self) -> str:
        return (
            f"MatrixContactSensor({len(self.sensing_indices)} sensing, "
            f"{self._columns if self.counterpart_type else 'no'} counterpart columns, "
            f"measure_total={self.measure_total})"
        )

    def _zeros(self) -> dict[str, np.ndarray | None]:
        """The outputs of a step without forces or contacts: zeros, or None where not measured."""
        n_rows = len(self.sensing_indices)
        out: dict[str, np.ndarray | None] = dict.fromkeys(_OUTPUTS)
        if self.measure_total:
            out["total_force"] = np.zeros((n_rows, 3))
            out["total_force_friction"] = np.zeros((n_rows, 3))
        if self.counterpart_type is not None:
            shape = (n_rows, self._columns, 3)
            out["force_matrix"] = np.zeros(shape)
            out["force_matrix_friction"] = np.zeros(shape)
            out["position_matrix"] = np.zeros(shape)
        return out

    def update(self, contacts: Contacts, forces: ForceInput = None) -> None:
        """Read one step's contacts and forces into the outputs.

        Parameters
        ----------
        contacts : Contacts
            The step's contacts, all between objects of :attr:`scene`.
        forces : None, array_like, shape (n, 3) or (n,), or callable
            See :func:`~spatialcontact.sensors.resolve_forces`: world-frame force on each
            contact's ``o1`` from its ``o2``, or normal magnitudes; None gives zero outputs and
            ``forces_valid = False``.

        Raises
        ------
        SensorValueError
            If ``forces`` does not match ``contacts``, a contact shape is not in the scene
            (with forces or without), objects were removed from the scene since the sensor was
            made, or the forces on a sensing object sum to more than a float holds. Nothing
            changes then.
        """
        self._update(StepData.build(contacts, forces), self._objects)

    def _transforms(self, objects: ObjectMap) -> tuple[np.ndarray, list[np.ndarray]]:
        """The sensing objects' world poses now, (n_sensing, 4, 4), a new array (the last
        update's values copied when no sensing object was moved since), and the poses read."""
        shapes = objects.shapes
        poses = [shapes[i].world_T for i in self.sensing_indices]
        last = self._poses_read
        if len(last) == len(poses) and all(map(operator.is_, poses, last)):
            return self.sensing_transforms.copy(), poses
        if not poses:
            return np.zeros((0, 4, 4)), poses
        return np.concatenate(poses).reshape(-1, 4, 4), poses

    def _grow(self, n_objects: int) -> None:
        """Make room in the index tables for objects added to the scene since construction."""
        extra = n_objects - len(self._row_of)
        if extra > 0:
            self._row_of = np.concatenate([self._row_of, np.full(extra, -1, dtype=np.intp)])
            self._col_of = np.concatenate(
                [self._col_of, np.full((len(self._col_of), extra), -1, dtype=np.intp)], axis=1
            )

    def _update(self, step: StepData, objects: ObjectMap) -> None:
        """Read one step; ``objects`` may be shared by a hub's sensors."""
        self._apply(self._read(step, objects))

    def _apply(self, reading: dict[str, Any]) -> None:
        """Take the outputs :meth:`_read` worked out."""
        for name, value in reading.items():
            setattr(self, name, value)

    def _read(self, step: StepData, objects: ObjectMap) -> dict[str, Any]:
        """The outputs (and poses read) one step gives, by attribute name, changing nothing
        the sensor reports: every check that can refuse the step runs here."""
        names = objects.names
        if names is not self._names and names[: len(self._names)] != self._names:
            raise SensorValueError(
                "objects were removed from the scene since the sensor was made, so its object "
                f"indices are stale (names then: {describe(list(self._names))}); make a new "
                "sensor"
            )
        # refuses contacts of shapes not in the scene, with forces or without
        indices = step.objects(objects) if len(step) else None
        self._grow(len(names))  # room for objects added since: no reading changes
        transforms, poses = self._transforms(objects)
        reading: dict[str, Any] = {
            "forces_valid": step.valid,
            "sensing_transforms": transforms,
            "_poses_read": poses,
        }
        if indices is None or not step.valid:
            reading.update(self._zeros())
            return reading
        reading.update(dict.fromkeys(_OUTPUTS))  # None unless measured below
        i1, i2 = indices
        n_rows = len(self.sensing_indices)
        row_of = self._row_of
        # Only the contacts of a sensing object count; the others are never read.
        picked = np.flatnonzero((row_of[i1] >= 0) | (row_of[i2] >= 0))
        obj, other, packed = step.sides(objects, picked)
        rows = row_of[obj]
        hit = np.flatnonzero(rows >= 0)  # the sides that are sensing objects
        rows = rows[hit]
        if self.measure_total:
            totals = _accumulate(rows, packed[hit, :6], n_rows)
            self._finite(totals, 1)
            reading["total_force"] = totals[:, 0:3]
            reading["total_force_friction"] = totals[:, 3:6]
        if self.counterpart_type is None:
            return reading
        columns = self._columns
        cols = self._col_of[rows, other[hit]]
        keep = cols >= 0
        cells = rows[keep] * columns + cols[keep]
        sums = _accumulate(cells, packed[hit[keep]], n_rows * columns)
        self._finite(sums, columns)
        shape = (n_rows, columns, 3)
        reading["force_matrix"] = sums[:, 0:3].reshape(shape)
        reading["force_matrix_friction"] = sums[:, 3:6].reshape(shape)
        weight = sums[:, 9]
        position = np.zeros((n_rows * columns, 3))
        nonzero = weight > 0.0
        position[nonzero] = sums[nonzero, 6:9] / weight[nonzero, None]
        reading["position_matrix"] = position.reshape(shape)
        return reading

    def _finite(self, sums: np.ndarray, per_row: int) -> None:
        """Refuse sums of a step's forces that overflowed (``per_row`` sums in each row)."""
        finite = np.isfinite(sums)
        if not finite.all():
            first = int(np.argmin(finite.all(axis=1)))
            name = self._names[self.sensing_indices[first // per_row]]
            raise SensorValueError(
                "forces must sum to finite values on each sensing object, got forces whose "
                f"total, friction or force-weighted position on {name!r} overflows; give "
                "smaller forces"
            )


_OUTPUTS = (
    "total_force",
    "total_force_friction",
    "force_matrix",
    "force_matrix_friction",
    "position_matrix",
)
"""The outputs an update replaces."""


def _worlds_of(scene: Any, names: tuple[str, ...]) -> list[int] | None:
    """The world of each object (by index), or None for a scene without worlds (one implicit
    world, as a scene without ``worlds`` is taken to be)."""
    if not getattr(scene, "worlds", 0):
        return None
    world_of = scene.world_of
    return [int(world_of(name)) for name in names]


def _accumulate(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``out[index[k]] += values[k]``: rows ``values`` (m, c) summed into ``out`` (size, c)."""
    width = values.shape[1]
    flat = (index[:, None] * width + np.arange(width)).ravel()
    summed = np.bincount(flat, weights=values.ravel(), minlength=size * width)
    return summed.reshape(size, width)
