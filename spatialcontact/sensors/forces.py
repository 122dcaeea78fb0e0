"""Contact forces for the sensors: given by the caller, computed by a penalty model, or absent.

A geometry library has no solver, so each step's forces come from one of three places:

- the caller: an ``(n, 3)`` array of world-frame forces aligned with the step's contacts (row
  ``i`` is the force on ``contacts[i].o1`` from ``contacts[i].o2``), or ``(n,)`` normal
  magnitudes (positive pushes the shapes apart, so the force on ``o1`` is ``-m * normal``);
- a force model, :class:`PenaltyForce`, computed from each contact's overlap;
- neither: every force is zero and the sensors say so (``forces_valid`` is False).

:func:`resolve_forces` turns any of these into one ``(n, 3)`` array and a validity flag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validate import describe, numbers
from ..contact import Contacts
from ._errors import SensorTypeError, SensorValueError, real
from ._time import positive_seconds

__all__ = [
    "MAX_DAMPING",
    "MAX_EXPONENT",
    "MAX_STIFFNESS",
    "UNIT_TOLERANCE",
    "PenaltyForce",
    "resolve_forces",
    "tangential_part",
]

MAX_STIFFNESS = 1e12
"""Largest :class:`PenaltyForce` stiffness accepted, N/m^e (steel on steel is about 1e10)."""

MAX_DAMPING = 1e12
"""Largest :class:`PenaltyForce` damping accepted, N·s/m^(e+1)."""

MAX_EXPONENT = 3.0
"""Largest :class:`PenaltyForce` exponent accepted (Hertz contact is 1.5)."""

UNIT_TOLERANCE = 1e-6
"""How far from 1 the length of a normal given to :func:`tangential_part` may be (as
:class:`~spatialcontact.Contact` accepts its normal)."""

ForceInput = Any
"""What a caller may give as forces: None, array_like (n, 3) or (n,), or a callable of Contacts."""


def _check_contacts(contacts: Any) -> Contacts:
    if not isinstance(contacts, Contacts):
        raise SensorTypeError(
            f"contacts must be a spatialcontact.Contacts, got {describe(contacts)}"
        )
    return contacts


def resolve_forces(contacts: Contacts, forces: ForceInput = None) -> tuple[np.ndarray, bool]:
    """The world-frame force of each contact as one array, and whether it is a measurement.

    Parameters
    ----------
    contacts : Contacts
        The step's contacts (``n`` of them).
    forces : None, array_like, shape (n, 3) or (n,), or callable
        ``(n, 3)``: the force on ``o1`` from ``o2`` of each contact, world frame, newtons.
        ``(n,)``: normal magnitudes; positive pushes the shapes apart, so the force on ``o1``
        is ``-m * normal`` (the normal points from ``o1`` to ``o2``). A callable is called with
        ``contacts`` and must return one of these. None means no forces.

    Returns
    -------
    forces : ndarray, shape (n, 3), world frame
        Force on ``o1`` from ``o2`` for each contact (zeros when ``forces`` is None).
    valid : bool
        False when ``forces`` is None.

    Raises
    ------
    SensorValueError
        If the array has the wrong shape or a non-finite value.
    SensorTypeError
        If ``contacts`` is not :class:`~spatialcontact.Contacts` or ``forces`` is not numeric.
    """
    array, magnitudes, valid = check_forces(contacts, forces)
    if magnitudes:
        array = -array[:, None] * contacts.normal
    return array, valid


def check_forces(contacts: Contacts, forces: ForceInput) -> tuple[np.ndarray, bool, bool]:
    """:func:`resolve_forces` without turning normal magnitudes into vectors.

    Returns
    -------
    forces : ndarray, shape (n, 3), or (n,) when ``magnitudes``
        The checked forces (zeros (n, 3) when ``forces`` is None).
    magnitudes : bool
        Whether they are normal magnitudes (the force on ``o1`` is ``-m * normal``).
    valid : bool
        False when ``forces`` is None.
    """
    contacts = _check_contacts(contacts)
    n = len(contacts)
    if forces is None:
        return np.zeros((n, 3)), False, False
    if callable(forces):
        call: Callable[[Contacts], Any] = forces
        forces = call(contacts)
        if forces is None:
            raise SensorValueError(
                "forces callable returned None; expected an (n, 3) or (n,) array"
            )
    array = numbers(forces, "forces", "numbers", type_error=SensorTypeError, error=SensorValueError)
    if array.shape != (n,) and array.shape != (n, 3):
        raise SensorValueError(
            f"forces must have shape ({n}, 3) or ({n},) to match the {n} contacts, "
            f"got shape {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise SensorValueError(f"forces must be finite, got {describe(forces)}")
    if n == 0:
        return np.zeros((0, 3)), False, True
    return array, array.shape == (n,), True


def tangential_part(forces: Any, normals: Any) -> np.ndarray:
    """The part of each force perpendicular to its normal (the friction part).

    Parameters
    ----------
    forces : array_like, shape (n, 3)
    normals : array_like, shape (n, 3), unit vectors

    Returns
    -------
    ndarray, shape (n, 3)
        ``f - (f . n) n`` row by row.

    Raises
    ------
    SensorTypeError
        ``forces`` or ``normals`` is not real numbers (strings, booleans, complex, ...).
    SensorValueError
        Either is not of shape (n, 3), their n differ, a value is not finite, a normal's
        length is not 1 within :data:`UNIT_TOLERANCE`, or a force is so large that its
        tangential part overflows.
    """
    forces = _rows3(forces, "forces")
    normals = _rows3(normals, "normals")
    if len(forces) != len(normals):
        raise SensorValueError(
            f"forces and normals must have the same number of rows, got shapes "
            f"{forces.shape} and {normals.shape}"
        )
    length = np.sqrt(np.einsum("ij,ij->i", normals, normals))
    off = np.flatnonzero(np.abs(length - 1.0) > UNIT_TOLERANCE)
    if len(off):
        k = int(off[0])
        raise SensorValueError(
            f"normals must be unit vectors (length 1 within {UNIT_TOLERANCE:g}), got row {k} "
            f"{normals[k].tolist()} of length {length[k]:g}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        out = tangential(forces, normals)
    bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
    if len(bad):
        k = int(bad[0])
        raise SensorValueError(
            f"forces row {k} is too large: its tangential part overflows, got {forces[k].tolist()}"
        )
    return out


def tangential(forces: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """:func:`tangential_part` of arrays already checked, unchecked itself (the caller sees to
    non-finite results)."""
    along = np.einsum("ij,ij->i", forces, normals)
    return forces - along[:, None] * normals


def _rows3(value: Any, name: str) -> np.ndarray:
    """``value`` as a finite float (n, 3) array, or a sensor error naming ``name``."""
    array = numbers(value, name, "real numbers", type_error=SensorTypeError, error=SensorValueError)
    if array.ndim != 2 or array.shape[1] != 3:
        raise SensorValueError(f"{name} must have shape (n, 3), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise SensorValueError(f"{name} must be finite, got {describe(value)}")
    return array


def _occurrence(keys: np.ndarray) -> np.ndarray:
    """For rows of ``keys`` (n, k) int, how many equal rows come before each one."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    new_group = np.ones(n, dtype=bool)
    new_group[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    starts = np.maximum.accumulate(np.where(new_group, np.arange(n), 0))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - starts
    return rank


class PenaltyForce:
    """Normal contact forces from the overlap: a spring, or Hunt-Crossley with damping.

    The force on each contact has magnitude

    .. math:: f = \\max(0,\\ \\delta^{e} (k + c\\,\\dot\\delta))

    where ``δ = -penetration_depth`` is the overlap in metres (zero force for separated
    contacts, ``δ <= 0``), ``δ̇`` its rate of increase in m/s (positive while the shapes
    approach), ``k`` the stiffness, ``c`` the damping and ``e`` the exponent. ``e = 1`` with
    ``c = 0`` is a linear spring; ``e = 1.5`` is Hunt and Crossley's model of Hertz contact,
    whose damping grows with the overlap, so the force does not jump when a contact starts.
    The force pushes the shapes apart: on ``o1`` it is ``-f * normal``.

    Parameters
    ----------
    stiffness : float
        ``k``, in N/m^e: > 0 and at most :data:`MAX_STIFFNESS` (1e12).
    damping : float
        ``c``, in N·s/m^(e+1): in [0, :data:`MAX_DAMPING`] (1e12). Default 0.
    exponent : float
        ``e``, in [1, :data:`MAX_EXPONENT`] (3). Default 1 (linear spring).

    Raises
    ------
    SensorValueError
        If a parameter is out of its range (or not finite).
    SensorTypeError
        If a parameter is not a real number.

    Notes
    -----
    Damping needs ``δ̇``. The caller may give it (``approach_speed``); otherwise it is taken
    from the previous call: each contact is matched to the previous call's contact with the
    same leaves and primitives (``o1``, ``o2``, ``b1``, ``b2``, and for repeated keys the same
    rank in the list), and ``δ̇ = (δ - δ_previous) / dt``. A contact with no match was
    separated at the previous call, so ``δ_previous = 0``; on the first call after construction
    or :meth:`reset` there is no history and ``δ̇ = 0``.

    Within the parameter ranges and the package's size range, every force is finite; a force
    that is not (from an enormous ``approach_speed``, say) raises
    :class:`~spatialcontact.sensors.SensorValueError` naming the cause.

    Examples
    --------
    >>> import spatialcontact as sc
    >>> a, b = sc.Sphere(1.0), sc.Sphere(1.0, pose=[[1, 0, 0, 1.5], [0, 1, 0, 0],
    ...                                              [0, 0, 1, 0], [0, 0, 0, 1]])
    >>> PenaltyForce(1000.0).magnitudes(a.contacts(b)).tolist()  # 0.5 m overlap
    [500.0]
    """

    def __init__(self, stiffness: float, damping: float = 0.0, exponent: float = 1.0) -> None:
        k = real(stiffness, "stiffness")
        if not 0.0 < k <= MAX_STIFFNESS:
            raise SensorValueError(
                f"stiffness must be positive, at most {MAX_STIFFNESS:g} N/m^e, "
                f"got {describe(stiffness)}"
            )
        c = real(damping, "damping")
        if not 0.0 <= c <= MAX_DAMPING:
            raise SensorValueError(
                f"damping must be zero or positive, at most {MAX_DAMPING:g} N·s/m^(e+1), "
                f"got {describe(damping)}"
            )
        e = real(exponent, "exponent")
        if not 1.0 <= e <= MAX_EXPONENT:
            raise SensorValueError(
                f"exponent must be at least 1, at most {MAX_EXPONENT:g}, got {describe(exponent)}"
            )
        self.stiffness = k
        """float: ``k``, N/m^e."""
        self.damping = c
        """float: ``c``, N·s/m^(e+1)."""
        self.exponent = e
        """float: ``e``."""
        self._previous: dict[tuple[int, ...], float] | None = None

    def __repr__(self) -> str:
        return (
            f"PenaltyForce(stiffness={self.stiffness:g}, damping={self.damping:g}, "
            f"exponent={self.exponent:g})"
        )

    def reset(self) -> None:
        """Forget the previous call's overlaps (start of a new run)."""
        self._previous = None

    def _history(
        self, contacts: Contacts, overlap: np.ndarray
    ) -> tuple[np.ndarray, dict[tuple[int, ...], float]]:
        """The previous overlap of each contact, and this call's overlaps by contact key (kept
        by the caller only once the call succeeds)."""
        n = len(contacts)
        if n == 0:
            return np.zeros(0), {}
        keys = np.empty((n, 4), dtype=np.int64)
        keys[:, 0] = np.fromiter(map(_uid, contacts.o1), np.int64, n)
        keys[:, 1] = np.fromiter(map(_uid, contacts.o2), np.int64, n)
        keys[:, 2] = contacts.b1
        keys[:, 3] = contacts.b2
        rank = _occurrence(keys)
        rows = list(zip(*keys.T.tolist(), rank.tolist(), strict=True))
        previous = self._previous
        if previous is None:
            before = overlap.copy()  # no history: no rate
        else:
            before = np.fromiter(map(previous.get, rows, [0.0] * n), np.float64, n)
        return before, dict(zip(rows, overlap.tolist(), strict=True))

    def magnitudes(
        self,
        contacts: Contacts,
        *,
        approach_speed: Any = None,
        dt: float | None = None,
    ) -> np.ndarray:
        """The normal force magnitude of each contact, and remember the overlaps.

        Parameters
        ----------
        contacts : Contacts
            The step's contacts (``n``).
        approach_speed : array_like, shape (n,), optional
            ``δ̇``, m/s, positive while the shapes approach. Without it, damping uses the
            previous call (see Notes of the class) and needs ``dt``.
        dt : float, optional
            Time since the previous call, seconds, in [1e-9, 1e9] (as :meth:`SensorHub.step
            <spatialcontact.sensors.SensorHub.step>` takes it). Needed when ``damping > 0``
            and no ``approach_speed`` is given.

        Returns
        -------
        ndarray, shape (n,)
            Magnitudes in newtons, >= 0 (zero for separated contacts).

        Raises
        ------
        SensorValueError
            If ``approach_speed`` or ``dt`` is out of range, damping has neither, or a force
            is not finite; the overlaps are then not remembered.
        """
        out, memory = self._magnitudes(contacts, approach_speed, dt)
        self._keep(memory)
        return out

    def _keep(self, memory: dict[tuple[int, ...], float] | None) -> None:
        """Remember the overlaps of a call that succeeded (None: a model without damping
        keeps no history)."""
        if memory is not None:
            self._previous = memory

    def _magnitudes(
        self, contacts: Contacts, approach_speed: Any, dt: float | None
    ) -> tuple[np.ndarray, dict[tuple[int, ...], float] | None]:
        """:meth:`magnitudes`, and the overlaps to remember once the caller succeeds."""
        contacts = _check_contacts(contacts)
        n = len(contacts)
        overlap = np.maximum(-contacts.penetration_depth, 0.0)
        speed: np.ndarray | None = None
        if approach_speed is not None:
            speed = numbers(
                approach_speed,
                "approach_speed",
                "numbers",
                type_error=SensorTypeError,
                error=SensorValueError,
            )
            if speed.shape != (n,) or not np.all(np.isfinite(speed)):
                raise SensorValueError(
                    f"approach_speed must be {n} finite numbers (one per contact), "
                    f"got {describe(approach_speed)}"
                )
        step: float | None = None
        if dt is not None:
            step = positive_seconds(dt, "dt")
        if self.damping > 0.0 and speed is None and step is None:
            raise SensorValueError(
                "damping needs the approach speed: give approach_speed, or dt to take it from "
                "the previous step; got neither"
            )
        bounded = self.stiffness <= MAX_STIFFNESS and self.exponent <= MAX_EXPONENT
        if self.damping == 0.0 and bounded:
            # Parameters in their range on depths in the supported range (below 4e6 m): at
            # most 1e12 * (4e6)^3 N, far from overflowing. No error state, no result to check.
            spring = overlap if self.exponent == 1.0 else overlap**self.exponent
            return self.stiffness * spring, None
        with np.errstate(over="ignore", invalid="ignore"):
            spring = overlap if self.exponent == 1.0 else overlap**self.exponent
            if self.damping == 0.0:
                return _finite(self.stiffness * spring, "stiffness * overlap^exponent"), None
            before, memory = self._history(contacts, overlap)
            if speed is None:
                assert step is not None
                speed = (overlap - before) / step
            out = np.maximum(spring * (self.stiffness + self.damping * speed), 0.0)
        cause = "approach_speed" if approach_speed is not None else "the overlap rate (dt)"
        return _finite(out, f"overlap^exponent * (stiffness + damping * {cause})"), memory

    def forces(
        self,
        contacts: Contacts,
        *,
        approach_speed: Any = None,
        dt: float | None = None,
    ) -> np.ndarray:
        """World-frame force on ``o1`` from ``o2`` of each contact, ``-f * normal``.

        Parameters are those of :meth:`magnitudes`.

        Returns
        -------
        ndarray, shape (n, 3), world frame
        """
        magnitudes = self.magnitudes(contacts, approach_speed=approach_speed, dt=dt)
        return -magnitudes[:, None] * contacts.normal


def _finite(magnitudes: np.ndarray, formula: str) -> np.ndarray:
    """``magnitudes`` if every one is finite, else a SensorValueError naming the formula."""
    if not np.isfinite(magnitudes).all():
        first = int(np.argmin(np.isfinite(magnitudes)))
        raise SensorValueError(
            f"the force of contact {first} is not finite ({magnitudes[first]}): {formula} "
            "overflowed; give smaller parameters or speeds"
        )
    return magnitudes


def _uid(shape: Any) -> int:
    uid: int = shape._uid
    return uid
