"""Scene memory: what Coal's binding keeps is bounded, and what leaves a scene is freed.

Coal 3.0.3's Python binding keeps a reference to the object given to ``registerObject`` (and to
``update(object)`` and ``setCollisionGeometry``) that only the end of the manager gives back:
a scene that registered objects again as they moved grew without end, and kept every mesh
ever added until it was dropped. Freeing geometries Coal may still point to could crash, so
those checks run in a child process.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
import tracemalloc
import weakref

import numpy as np
from conftest import trans

from spatialcontact import Capsule, CollisionShapeGroup, Cuboid, Scene, Sphere


def crowd(count: int, seed: int) -> tuple[Scene, list[Sphere | Cuboid | Capsule]]:
    """A scene of ``count`` small shapes in a 4 m cube, many of them touching."""
    rng = np.random.default_rng(seed)
    scene = Scene()
    shapes: list[Sphere | Cuboid | Capsule] = []
    for i in range(count):
        shape = (Sphere(0.2), Cuboid([0.3, 0.2, 0.4]), Capsule(0.1, 0.3))[i % 3]
        shape.T = trans(*rng.uniform(-2.0, 2.0, 3))
        scene.add(shape)
        shapes.append(shape)
    return scene, shapes


def poses(count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [trans(*rng.uniform(-2.0, 2.0, 3)) for _ in range(count)]


def test_moves_and_queries_keep_no_memory() -> None:
    # 40 shapes and an arm; before each query one shape (a different one each time, so shapes
    # keep starting and stopping) and the arm move.
    scene, shapes = crowd(40, seed=1)
    arm = CollisionShapeGroup([Capsule(0.04, 0.14, pose=trans(0, 0, 0.15 * i)) for i in range(7)])
    scene.add(arm, "arm")
    targets = poses(64, seed=2)
    order = np.random.default_rng(3).integers(0, len(shapes), 4096).tolist()

    def run(n: int) -> None:
        for i in range(n):
            shapes[order[i % 4096]].T = targets[i % 64]
            arm.T = targets[(7 * i) % 64]
            scene.in_collision()

    run(2000)  # caches of pair queries, trees and spheres reach their size
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run(5000)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # Registering again as shapes start and stop kept about 200 bytes per query (1 MB here);
    # the pair caches of the shape queries (at most 4,096 partners a shape) and the pairs found
    # level off near 50 kB.
    assert grown < 200_000, f"{grown} bytes kept over 5,000 queries"


def test_the_coal_objects_of_a_leaf_are_not_referenced_more_and_more() -> None:
    scene, shapes = crowd(40, seed=4)
    leaf = shapes[0]
    arm = CollisionShapeGroup([Capsule(0.04, 0.14, pose=trans(0, 0, 0.15 * i)) for i in range(7)])
    scene.add(arm, "arm")
    targets = poses(64, seed=5)
    scene.in_collision()
    broadphase = scene._broadphase

    def counts() -> list[int]:
        entries = [broadphase.leaf_of(leaf), broadphase.leaf_of(arm[3])]
        objects = [e.co for e in entries if e] + [e.probe for e in entries if e and e.probe]
        return [sys.getrefcount(x) for x in (leaf._geometry, arm[3]._geometry, *objects)]

    for i in range(200):  # every way of moving: alone, with the arm, with many others
        leaf.T = targets[i % 64]
        arm.T = targets[(i + 1) % 64]
        if i % 50 == 0:
            for other in shapes[1:30]:
                other.T = targets[(i + 3) % 64]
        scene.in_collision()
    first = counts()
    for i in range(3000):
        leaf.T = targets[i % 64]
        if i % 3 == 0:
            arm.T = targets[(i + 1) % 64]
        if i % 500 == 0:
            for other in shapes[1:30]:
                other.T = targets[(i + 3) % 64]
        scene.in_collision()
        if i % 7 == 0:
            scene.collide(leaf)
    assert counts() == first


def test_a_dropped_scene_is_freed_and_its_shapes_keep_working() -> None:
    a, b = Sphere(0.5), Sphere(0.5, pose=trans(0.8))
    group = CollisionShapeGroup([Sphere(0.5, pose=trans(5.0))])
    scene = Scene()
    for shape in (a, b, group):
        scene.add(shape)
    assert scene.in_collision()
    ref = weakref.ref(scene)
    del scene
    gc.collect()
    assert ref() is None
    assert all(observer() is None for observer in a._observers)  # held weakly, now gone
    b.T = trans(3.0)  # no scene to tell: nothing breaks
    group.T = trans(-4.5)  # its sphere now at x = 0.5, overlapping a
    assert group.iscollided(a)
    again = Scene()
    again.add(a)
    again.add(group)
    assert again.collisions() == [("object_0", "object_1")]


def test_a_scene_its_own_shape_refers_to_is_freed() -> None:
    # The compiled tier of a small scene holds its shapes: a cycle through it (a shape of a
    # user's subclass that keeps its scene) is still found by the garbage collector.
    class Tracked(Sphere):
        scene: Scene | None = None

    a, b = Tracked(0.5), Tracked(0.5, pose=trans(0.8))
    scene = Scene()
    scene.add(a)
    scene.add(b)
    assert scene.in_collision()
    b.T = trans(0.9)
    assert scene.in_collision()  # the one-moved-object path: the tier is made
    assert scene._broadphase._compiled is not None
    a.scene = scene
    ref = weakref.ref(scene)
    del scene, a, b
    gc.collect()
    assert ref() is None


def _run_child(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"child exited with {result.returncode}:\n{result.stderr}"
    return result.stdout


def test_a_removed_mesh_is_freed() -> None:
    out = _run_child(
        """
        import gc, weakref
        import numpy as np
        import trimesh
        from spatialcontact import Mesh, Scene, Sphere

        scene = Scene()
        for i in range(30):  # enough leaves for Coal's tree
            T = np.eye(4); T[0, 3] = 3.0 * i
            scene.add(Sphere(0.5, pose=T))
        mesh = Mesh.from_trimesh(trimesh.creation.icosphere(subdivisions=3, radius=1.0))
        T = np.eye(4); T[0, 3] = 1.0
        mesh.T = T  # its surface through the first sphere (a mesh is hollow)
        name = scene.add(mesh)
        assert scene.in_collision()
        T = np.eye(4); T[0, 3] = 1.0; T[1, 3] = 0.5
        mesh.T = T  # moving, then at rest again
        scene.collide(mesh); scene.in_collision()
        scene["object_0"].T = np.eye(4)
        scene.in_collision()
        shape_ref, geometry_ref = weakref.ref(mesh), weakref.ref(mesh._geometry)
        scene.remove(name)
        del mesh
        gc.collect()
        assert shape_ref() is None, "the mesh shape is still held"
        assert geometry_ref() is None, "its Coal geometry is still held"
        for k in range(30):  # the scene works on
            scene["object_1"].T = np.eye(4) if k % 2 else T
            scene.in_collision()
        print("freed")
        """
    )
    assert out.strip() == "freed"


def test_adding_and_removing_large_meshes_keeps_no_memory() -> None:
    # Each mesh holds about 80 MiB (164k triangles); every one of them was kept until the
    # scene went.
    out = _run_child(
        """
        import gc
        import numpy as np
        import trimesh
        from spatialcontact import Mesh, Scene, Sphere

        def rss():
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024

        scene = Scene()
        for i in range(20):
            T = np.eye(4); T[0, 3] = 3.0 * i
            scene.add(Sphere(0.5, pose=T))
        ball = trimesh.creation.icosphere(subdivisions=6, radius=1.0)
        sizes = []
        for i in range(6):
            mesh = Mesh.from_trimesh(
                trimesh.util.concatenate([ball, ball.copy().apply_translation([0, 0, 3])])
            )
            name = scene.add(mesh)
            scene.in_collision()
            mesh.T = np.eye(4)
            scene.in_collision()
            scene.remove(name)
            del mesh
            gc.collect()
            sizes.append(rss())
        print(sizes[1], sizes[-1])
        """
    )
    second, last = map(float, out.split())
    assert last - second < 40.0, f"RSS grew from {second:.0f} to {last:.0f} MiB"
