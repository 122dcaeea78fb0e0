"""The contacts of a batch of poses: :class:`BatchContacts`, columns with a pose index."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .._validate import count, describe
from ..contact import Contact, Contacts
from ..errors import InvalidArgumentError
from ._kernels import ContactColumns

if TYPE_CHECKING:
    from ..shapes import CollisionShape

__all__ = ["BatchContacts"]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class BatchContacts(Sequence[Contact]):
    """The contacts of ``b`` at every pose of a batch, as read-only columns.

    The columns are those of :class:`~spatialcontact.Contacts` (same names, shapes and
    conventions, world frame) with one more, :attr:`pose`: the row of the batch each contact
    belongs to. Contacts are in pose order, and within a pose in the order ``a.contacts(b)``
    gives them (deepest first when a group is involved). ``o1`` is a leaf of ``a`` and ``o2``
    a leaf of ``b``; each record describes ``b`` at pose ``pose[k]``, although ``b`` itself
    is back at its own pose when the batch returns.

    Indexing gives a :class:`~spatialcontact.Contact` (made when asked for); a slice gives a
    ``BatchContacts``; :meth:`of_pose` gives the contacts of one pose as ``Contacts``.

    Examples
    --------
    >>> import numpy as np
    >>> from spatialcontact import Sphere, batch
    >>> found = batch.contacts(Sphere(1.0), Sphere(1.0), [[1.5, 0, 0], [5, 0, 0], [0, 1.9, 0]])
    >>> found.pose.tolist(), found.penetration_depth.round(3).tolist()
    ([0, 2], [-0.5, -0.1])
    >>> found.counts.tolist()
    [1, 0, 1]
    >>> found.of_pose(2)[0].normal.round(3).tolist()
    [0.0, 1.0, 0.0]
    """

    __slots__ = ("_columns", "_leaves_a", "_leaves_b", "_n_poses", "_records")

    def __init__(
        self,
        columns: ContactColumns,
        leaves_a: Sequence[CollisionShape],
        leaves_b: Sequence[CollisionShape],
        n_poses: int,
    ) -> None:
        for array in columns:
            array.flags.writeable = False
        self._columns = columns
        self._leaves_a = tuple(leaves_a)
        self._leaves_b = tuple(leaves_b)
        self._n_poses = n_poses
        self._records: dict[int, Contact] = {}

    @classmethod
    def _join(
        cls,
        parts: Sequence[tuple[int, ContactColumns]],
        leaves_a: Sequence[CollisionShape],
        leaves_b: Sequence[CollisionShape],
        n_poses: int,
    ) -> BatchContacts:
        """The contacts of consecutive chunks ``(start, columns)`` (chunk rows made global)."""
        if not parts:
            empty = np.zeros(0, dtype=np.int64)
            columns = ContactColumns(
                empty, empty.copy(), empty.copy(), empty.copy(), empty.copy(),
                np.zeros((0, 12)), np.zeros(0),
            )  # fmt: skip
        else:
            joined = [np.concatenate(arrays) for arrays in zip(*(c for _, c in parts), strict=True)]
            joined[0] = np.concatenate([c.pose + start for start, c in parts])
            columns = ContactColumns(*joined)
        return cls(columns, leaves_a, leaves_b, n_poses)

    # ------------------------------------------------------------------ sequence

    def __len__(self) -> int:
        return len(self._columns.depth)

    @overload
    def __getitem__(self, index: int) -> Contact: ...
    @overload
    def __getitem__(self, index: slice) -> BatchContacts: ...
    def __getitem__(self, index: int | slice) -> Contact | BatchContacts:
        if isinstance(index, slice):
            columns = ContactColumns(*(np.array(c[index]) for c in self._columns))
            return BatchContacts(columns, self._leaves_a, self._leaves_b, self._n_poses)
        k = range(len(self))[index]
        record = self._records.get(k)
        if record is None:
            c = self._columns
            data = c.data[k]
            record = self._records[k] = Contact(
                self._leaves_a[int(c.leaf1[k])],
                self._leaves_b[int(c.leaf2[k])],
                int(c.b1[k]),
                int(c.b2[k]),
                data[0:3],
                data[3:9].reshape(2, 3),
                data[9:12],
                float(c.depth[k]),
            )
        return record

    def __iter__(self) -> Iterator[Contact]:
        return (self[k] for k in range(len(self)))

    def __repr__(self) -> str:
        return f"BatchContacts({len(self)} contacts over {self._n_poses} poses)"

    # ------------------------------------------------------------------- columns

    @property
    def pose(self) -> np.ndarray:
        """ndarray of int64, shape (n,): the row of the batch of poses of each contact."""
        return self._columns.pose

    @property
    def counts(self) -> np.ndarray:
        """ndarray of int64, shape (N,): how many contacts each pose of the batch has."""
        return _frozen(np.bincount(self._columns.pose, minlength=self._n_poses))

    @property
    def normal(self) -> np.ndarray:
        """ndarray, shape (n, 3), world frame: unit normals from ``o1`` to ``o2``."""
        return self._columns.data[:, 0:3]

    @property
    def nearest_points(self) -> np.ndarray:
        """ndarray, shape (n, 2, 3), world frame: witness points on ``o1`` then ``o2``."""
        return self._columns.data[:, 3:9].reshape(-1, 2, 3)

    @property
    def pos(self) -> np.ndarray:
        """ndarray, shape (n, 3), world frame: contact positions."""
        return self._columns.data[:, 9:12]

    @property
    def penetration_depth(self) -> np.ndarray:
        """ndarray, shape (n,): signed depths in metres, negative on overlap."""
        return self._columns.depth

    @property
    def b1(self) -> np.ndarray:
        """ndarray of int64, shape (n,): primitive indices on ``o1`` (-1 for none)."""
        return self._columns.b1

    @property
    def b2(self) -> np.ndarray:
        """ndarray of int64, shape (n,): primitive indices on ``o2`` (-1 for none)."""
        return self._columns.b2

    @property
    def o1(self) -> tuple[CollisionShape, ...]:
        """tuple of the leaf of ``a`` of each contact."""
        leaves = self._leaves_a
        return tuple(leaves[k] for k in self._columns.leaf1.tolist())

    @property
    def o2(self) -> tuple[CollisionShape, ...]:
        """tuple of the leaf of ``b`` of each contact."""
        leaves = self._leaves_b
        return tuple(leaves[k] for k in self._columns.leaf2.tolist())

    # -------------------------------------------------------------------- per pose

    def of_pose(self, index: Any) -> Contacts:
        """The contacts of pose ``index`` (a row of the batch), as ``a.contacts(b)`` gives them.

        Raises
        ------
        InvalidArgumentError
            If ``index`` is not a row of the batch.
        """
        i = count(index, "index", 0)
        if i >= self._n_poses:
            raise InvalidArgumentError(
                f"index must be a row of the {self._n_poses} poses, got {describe(index)}"
            )
        pose = self._columns.pose
        low, high = np.searchsorted(pose, [i, i + 1]).tolist()
        return Contacts(self[k] for k in range(low, high))

    def to_contacts(self) -> Contacts:
        """Every contact, in order, as one :class:`~spatialcontact.Contacts`."""
        return Contacts(self)
