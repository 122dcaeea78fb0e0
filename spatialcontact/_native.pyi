"""Types of :mod:`spatialcontact._native` (compiled from ``_native.cpp``)."""

from typing import Any

import numpy as np

ROTATION_TOLERANCE: float
MAX_TRANSLATION: float
COAL_VERSION: str

def is_rigid(M: Any, /) -> bool: ...
def first_not_rigid(P: np.ndarray, /) -> int: ...
def place(tf: Any, M: Any, keep: np.ndarray, parent_world: np.ndarray | None, /) -> bool: ...
def place_all(
    tfs: tuple[Any, ...], world: np.ndarray | None, P: np.ndarray, out: np.ndarray, /
) -> None: ...
def world_point(tf: Any, local: np.ndarray | None, /) -> tuple[float, float, float]: ...
def compose_all(A: np.ndarray, B: np.ndarray, out: np.ndarray, /) -> None: ...
def closed_form(
    kind1: int,
    kind2: int,
    swap: bool,
    sizes1: tuple[float, ...],
    sizes2: tuple[float, ...],
    tf1: Any,
    tf2: Any,
    /,
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]: ...
def near_spheres(
    ca: np.ndarray, ra: np.ndarray, cb: np.ndarray, rb: np.ndarray, cutoff: float, /
) -> list[tuple[int, int]]: ...
def nearest_order(
    ca: np.ndarray, ra: np.ndarray, cb: np.ndarray, rb: np.ndarray, cutoff: float, /
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...
