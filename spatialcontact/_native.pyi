"""Types of :mod:`spatialcontact._native` (compiled from ``_native.cpp``)."""

from typing import Any

import numpy as np

ROTATION_TOLERANCE: float
MAX_TRANSLATION: float
COAL_VERSION: str

def is_rigid(M: Any, /) -> bool: ...
def first_not_rigid(P: np.ndarray, /) -> int: ...
def first_unsound(P: np.ndarray, /) -> int: ...
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
def collide_rows(
    kind: int, params: np.ndarray, rows: np.ndarray, check: bool, limit: float, /
) -> tuple[np.ndarray, int]: ...

class CollideCall:
    def __init__(self, functor: Any, tf1: Any, tf2: Any, request: Any, result: Any, /) -> None: ...
    def __call__(self) -> int: ...

class DistanceCall:
    def __init__(self, functor: Any, tf1: Any, tf2: Any, request: Any, result: Any, /) -> None: ...
    def __call__(self) -> float: ...
    def points(self) -> tuple[np.ndarray, np.ndarray]: ...

def axis_map(tf1: Any, tf2: Any, tolerance: float, /) -> tuple[int, int, int] | None: ...
def nearest_pair(
    ca: np.ndarray, ra: np.ndarray, cb: np.ndarray, rb: np.ndarray, cutoff: float, /
) -> tuple[int, int] | None: ...
def place_objects(objects: tuple[Any, ...], tfs: tuple[Any, ...], /) -> None: ...
def chain_poses(
    values: np.ndarray,
    R: np.ndarray,
    A: np.ndarray,
    B: np.ndarray,
    t: np.ndarray,
    slide: np.ndarray,
    parents: tuple[int, ...],
    out: np.ndarray,
    /,
) -> None: ...
def motion_bounds(
    T: np.ndarray,
    body: tuple[int, ...],
    centre: np.ndarray,
    pair_a: tuple[int, ...],
    pair_b: tuple[int, ...],
    pair_radius: np.ndarray,
    radius: np.ndarray,
    rotations: np.ndarray | None,
    centres: np.ndarray | None,
    half: np.ndarray | None,
    /,
) -> np.ndarray: ...
def place_product(
    tf: Any, A: np.ndarray | None, B: np.ndarray | None, C: np.ndarray | None, /
) -> None: ...
def box_separations(
    T: np.ndarray,
    samples: tuple[int, ...],
    parts: tuple[int, ...],
    boxes: tuple[int, ...],
    body: tuple[int, ...],
    corners: np.ndarray,
    rotations: np.ndarray,
    centres: np.ndarray,
    half: np.ndarray,
    /,
) -> np.ndarray: ...
def open_stretches(value: np.ndarray, span: np.ndarray, halves: np.ndarray, /) -> np.ndarray: ...

class SphereTier:
    def __init__(
        self,
        tfs: tuple[Any, ...],
        centres: np.ndarray,
        radii: np.ndarray,
        bodies: tuple[int, ...],
        shapes: tuple[Any, ...],
        items: tuple[Any, ...],
        /,
    ) -> None: ...
    def touching(self, body: int, inside: bool, /) -> list[tuple[Any, Any]]: ...

def contact_normals_positions(contacts: list[Any], out: np.ndarray, /) -> list[int]: ...
def mesh_contacts(
    m1: Any, tf1: Any, m2: Any, tf2: Any, margin: float, keep: int, /
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
