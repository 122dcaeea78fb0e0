"""The sensors' clock: times and time steps in seconds, counted in whole nanoseconds."""

from __future__ import annotations

from typing import Any

from .._validate import describe
from ._errors import SensorValueError, real

__all__ = [
    "MAX_SECONDS",
    "NS_PER_S",
    "check_time_step",
    "ns_to_seconds",
    "positive_seconds",
    "seconds_to_ns",
]

NS_PER_S = 1_000_000_000
"""Nanoseconds per second: sensor clocks count whole nanoseconds, as Gazebo's ``common::Time``."""

MAX_SECONDS = 1e9
"""Largest time or time step accepted, in seconds (about 31.7 years; Gazebo's ``common::Time``
holds 32-bit seconds)."""


def positive_seconds(value: Any, name: str) -> float:
    """A time step in seconds: finite, in [1e-9, :data:`MAX_SECONDS`] (a shorter step would
    leave a nanosecond clock where it was)."""
    seconds = real(value, name)
    if not 1.0 / NS_PER_S <= seconds <= MAX_SECONDS:
        raise SensorValueError(
            f"{name} must be positive seconds in [1e-09, {MAX_SECONDS:g}] (the sensors' clock "
            f"counts whole nanoseconds), got {describe(value)}"
        )
    return seconds


def seconds_to_ns(value: Any, name: str, *, positive: bool = False) -> int:
    """A time in seconds as whole nanoseconds (rounded to the nearest).

    The time must be finite, in [0, :data:`MAX_SECONDS`]; with ``positive`` (a time step) it
    must be at least 1 ns (:func:`positive_seconds`).
    """
    seconds = positive_seconds(value, name) if positive else check_time_step(value, name)
    return round(seconds * NS_PER_S)


def ns_to_seconds(ns: int) -> float:
    """Whole nanoseconds as float seconds."""
    return ns / NS_PER_S


def check_time_step(value: Any, name: str = "step_time") -> float:
    """A time step in seconds: finite, in [0, :data:`MAX_SECONDS`]."""
    out = real(value, name)
    if not 0.0 <= out <= MAX_SECONDS:
        raise SensorValueError(
            f"{name} must be zero or positive seconds, at most {MAX_SECONDS:g}, got "
            f"{describe(value)}"
        )
    return out
