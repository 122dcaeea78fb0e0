// spatialcontact._native: the per-call placement path, compiled against Coal.
//
// Setting a pose is what a planner does most: checking a 4x4 array to be rigid and writing it
// into a Coal transform costs less here than the two Python calls of Coal's own setters. The
// functions take Python objects and check every one of them (type, buffer format, shape,
// writability) before touching a Coal object, so a wrong argument raises TypeError instead
// of reaching Coal. They run with the GIL held, on Transform3s objects owned by their callers.
//
// The rigidity rule is the one of spatialcontact.pose, written out in the same order of
// operations (compiled with -ffp-contract=off, so the answer is bit for bit the same as the
// same formula in Python floats).

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <boost/python/converter/from_python.hpp>
#include <boost/python/converter/registered.hpp>
#include <coal/collision.h>
#include <coal/config.hh>
#include <coal/distance.h>
#include <coal/math/transform.h>

#include "_mesh_contacts.hpp"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

namespace {

constexpr double kRotationTolerance = 1e-6;  // |R R^T - I| entries, see spatialcontact.pose
constexpr double kMaxTranslation = 1e6;      // metres, on each axis

using Pose = double[16];  // a 4x4 pose, row by row

// ---------------------------------------------------------------- buffers

// A float64 buffer of a given shape, released when it goes out of scope.
class Buffer {
 public:
  Buffer() { std::memset(&view_, 0, sizeof(view_)); }
  ~Buffer() {
    if (held_) PyBuffer_Release(&view_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Take the buffer of `obj` if it is float64 with shape `shape` (ndim entries), writable
  // and C-contiguous when `out`. False (no Python error set) when it is not such a buffer.
  bool take(PyObject* obj, int ndim, const Py_ssize_t* shape, bool out) {
    int flags = out ? (PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) : PyBUF_RECORDS_RO;
    if (PyObject_GetBuffer(obj, &view_, flags) < 0) {
      PyErr_Clear();
      return false;
    }
    held_ = true;
    if (view_.ndim != ndim || view_.itemsize != 8 || !is_float64(view_.format)) return false;
    for (int k = 0; k < ndim; ++k) {
      if (shape[k] >= 0 && view_.shape[k] != shape[k]) return false;
    }
    return true;
  }

  Py_ssize_t length() const { return view_.shape[0]; }
  Py_ssize_t shape(int k) const { return view_.shape[k]; }

  // Entry (i, j) of a 2-d buffer, or (n, i, j) of a 3-d one.
  double at(Py_ssize_t i, Py_ssize_t j) const {
    return *reinterpret_cast<const double*>(static_cast<const char*>(view_.buf) +
                                            i * view_.strides[0] + j * view_.strides[1]);
  }
  double at(Py_ssize_t n, Py_ssize_t b, Py_ssize_t i, Py_ssize_t j) const {
    return *reinterpret_cast<const double*>(static_cast<const char*>(view_.buf) +
                                            n * view_.strides[0] + b * view_.strides[1] +
                                            i * view_.strides[2] + j * view_.strides[3]);
  }
  double at(Py_ssize_t n, Py_ssize_t i, Py_ssize_t j) const {
    return *reinterpret_cast<const double*>(static_cast<const char*>(view_.buf) +
                                            n * view_.strides[0] + i * view_.strides[1] +
                                            j * view_.strides[2]);
  }

  void read(Pose out) const {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) out[4 * i + j] = at(i, j);
  }
  void read(Py_ssize_t n, Pose out) const {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) out[4 * i + j] = at(n, i, j);
  }
  double* data() const { return static_cast<double*>(view_.buf); }
  // Whether the rows are packed: `width` float64 entries each, one after the other.
  bool packed(Py_ssize_t width) const {
    Py_ssize_t step = 8;
    for (int k = view_.ndim - 1; k >= 1; --k) {
      if (view_.strides[k] != step) return false;
      step *= view_.shape[k];
    }
    return step == 8 * width && (view_.shape[0] <= 1 || view_.strides[0] == step);
  }
  double at1(Py_ssize_t i) const {
    return *reinterpret_cast<const double*>(static_cast<const char*>(view_.buf) +
                                            i * view_.strides[0]);
  }

 private:
  static bool is_float64(const char* format) {
    if (format == nullptr) return true;  // no format asked: bytes, refused by itemsize
    if (*format == '<' || *format == '=' || *format == '@') ++format;
    return std::strcmp(format, "d") == 0;
  }

  Py_buffer view_;
  bool held_ = false;
};

const Py_ssize_t kShape44[2] = {4, 4};
const Pose kIdentity = {1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0};

// ---------------------------------------------------------------- poses

// True when `v` is a rigid transform: rows 0 and 1 of the rotation orthonormal and row 2 their
// cross product (exactly the rotations), the translation within range, last row 0 0 0 1.
bool rigid(const Pose v) {
  const double a = v[0], b = v[1], c = v[2], x = v[3];
  const double d = v[4], e = v[5], f = v[6], y = v[7];
  const double g = v[8], h = v[9], i = v[10], z = v[11];
  const double tol = kRotationTolerance, far = kMaxTranslation;
  // Every test is made (& rather than &&): no branch to mispredict on a batch of poses.
  return (std::fabs(a * a + b * b + c * c - 1.0) <= tol) &
         (std::fabs(d * d + e * e + f * f - 1.0) <= tol) &
         (std::fabs(a * d + b * e + c * f) <= tol) & (std::fabs(b * f - c * e - g) <= tol) &
         (std::fabs(c * d - a * f - h) <= tol) & (std::fabs(a * e - b * d - i) <= tol) &
         (std::fabs(x) <= far) & (std::fabs(y) <= far) & (std::fabs(z) <= far) &
         (v[12] == 0.0) & (v[13] == 0.0) & (v[14] == 0.0) & (v[15] == 1.0);
}

// True when `v` is what Coal may be given, rigid or not: finite entries, the translation
// within range, last row 0 0 0 1 (the check that stays when the caller vouches for rigidity).
bool sound(const Pose v) {
  const double big = std::numeric_limits<double>::max(), far = kMaxTranslation;
  // Every test is made (& rather than &&), as in rigid(); a NaN fails every comparison.
  return (std::fabs(v[0]) <= big) & (std::fabs(v[1]) <= big) & (std::fabs(v[2]) <= big) &
         (std::fabs(v[4]) <= big) & (std::fabs(v[5]) <= big) & (std::fabs(v[6]) <= big) &
         (std::fabs(v[8]) <= big) & (std::fabs(v[9]) <= big) & (std::fabs(v[10]) <= big) &
         (std::fabs(v[3]) <= far) & (std::fabs(v[7]) <= far) & (std::fabs(v[11]) <= far) &
         (v[12] == 0.0) & (v[13] == 0.0) & (v[14] == 0.0) & (v[15] == 1.0);
}

// Ask for row `i + 32` of packed rows of `width` entries (4 KiB ahead for poses: the hardware
// prefetcher does not cross pages, so a long batch read in order would wait at each page).
inline void ahead(const double* rows, Py_ssize_t i, Py_ssize_t n, int width) {
  if (i + 32 >= n) return;
  const double* row = rows + width * (i + 32);
  __builtin_prefetch(row);
  if (width > 8) __builtin_prefetch(row + 8);
}

// rigid() of the two poses at v and v + 16, both at once: the same operations on both lanes
// of SSE2 registers (so the same answers), about twice as fast on long batches.
#ifdef __SSE2__
bool rigid_pair(const double* v) {
  const __m128d magnitude = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
  const __m128d tol = _mm_set1_pd(kRotationTolerance), far = _mm_set1_pd(kMaxTranslation);
  const __m128d one = _mm_set1_pd(1.0);
  __m128d r[12];  // entry k of both poses: lane 0 the first, lane 1 the second
  for (int k = 0; k < 12; k += 2) {
    const __m128d p = _mm_loadu_pd(v + k), q = _mm_loadu_pd(v + 16 + k);
    r[k] = _mm_unpacklo_pd(p, q);
    r[k + 1] = _mm_unpackhi_pd(p, q);
  }
  const __m128d a = r[0], b = r[1], c = r[2], x = r[3], d = r[4], e = r[5], f = r[6], y = r[7];
  const __m128d g = r[8], h = r[9], i = r[10], z = r[11];
  auto within = [&](__m128d value, __m128d bound) {
    return _mm_cmple_pd(_mm_and_pd(value, magnitude), bound);
  };
  auto mul = _mm_mul_pd;
  auto add = _mm_add_pd;
  auto sub = _mm_sub_pd;
  __m128d ok = within(sub(add(add(mul(a, a), mul(b, b)), mul(c, c)), one), tol);
  ok = _mm_and_pd(ok, within(sub(add(add(mul(d, d), mul(e, e)), mul(f, f)), one), tol));
  ok = _mm_and_pd(ok, within(add(add(mul(a, d), mul(b, e)), mul(c, f)), tol));
  ok = _mm_and_pd(ok, within(sub(sub(mul(b, f), mul(c, e)), g), tol));
  ok = _mm_and_pd(ok, within(sub(sub(mul(c, d), mul(a, f)), h), tol));
  ok = _mm_and_pd(ok, within(sub(sub(mul(a, e), mul(b, d)), i), tol));
  ok = _mm_and_pd(ok, _mm_and_pd(within(x, far), _mm_and_pd(within(y, far), within(z, far))));
  const __m128d zeros = _mm_set_pd(0.0, 0.0), zero_one = _mm_set_pd(1.0, 0.0);
  const __m128d last = _mm_and_pd(
      _mm_and_pd(_mm_cmpeq_pd(_mm_loadu_pd(v + 12), zeros),
                 _mm_cmpeq_pd(_mm_loadu_pd(v + 14), zero_one)),
      _mm_and_pd(_mm_cmpeq_pd(_mm_loadu_pd(v + 28), zeros),
                 _mm_cmpeq_pd(_mm_loadu_pd(v + 30), zero_one)));
  return (_mm_movemask_pd(ok) & _mm_movemask_pd(last)) == 3;
}
#else
bool rigid_pair(const double* v) { return rigid(v) & rigid(v + 16); }
#endif

// out = W @ P, both rigid 4x4 (the last row of the product is 0 0 0 1 exactly).
void compose(const Pose W, const Pose P, Pose out) {
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      out[4 * i + j] = W[4 * i] * P[j] + W[4 * i + 1] * P[4 + j] + W[4 * i + 2] * P[8 + j] +
                       W[4 * i + 3] * P[12 + j];
    }
  }
  out[12] = out[13] = out[14] = 0.0;
  out[15] = 1.0;
}

void set_transform(coal::Transform3s& tf, const Pose v) {
  coal::Matrix3s R;
  R << v[0], v[1], v[2], v[4], v[5], v[6], v[8], v[9], v[10];
  tf.setTransform(R, coal::Vec3s(v[3], v[7], v[11]));
}

// ---------------------------------------------------------------- arguments

// The Coal transform held by `obj`, or nullptr with a TypeError naming `name`.
coal::Transform3s* transform_of(PyObject* obj, const char* name) {
  void* p = boost::python::converter::get_lvalue_from_python(
      obj, boost::python::converter::registered<coal::Transform3s>::converters);
  if (p == nullptr) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be a coal.Transform3s, got %.100s", name,
                 Py_TYPE(obj)->tp_name);
  }
  return static_cast<coal::Transform3s*>(p);
}

// The C++ object held by the Boost.Python instance `obj`, or nullptr with a TypeError.
template <class T>
T* held_by(PyObject* obj, const char* name, const char* cls) {
  void* p = boost::python::converter::get_lvalue_from_python(
      obj, boost::python::converter::registered<T>::converters);
  if (p == nullptr) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be a coal.%s, got %.100s", name, cls,
                 Py_TYPE(obj)->tp_name);
  }
  return static_cast<T*>(p);
}

bool arity(const char* function, Py_ssize_t given, Py_ssize_t wanted) {
  if (given == wanted) return true;
  PyErr_Format(PyExc_TypeError, "%s takes %zd arguments, got %zd", function, wanted, given);
  return false;
}

bool refuse(const char* what) {
  PyErr_SetString(PyExc_TypeError, what);
  return false;
}

// ---------------------------------------------------------------- functions

PyObject* is_rigid(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("is_rigid", nargs, 1)) return nullptr;
  Buffer M;
  if (!M.take(args[0], 2, kShape44, false)) Py_RETURN_FALSE;
  Pose v;
  M.read(v);
  return PyBool_FromLong(rigid(v));
}

// Take the buffer of `obj` as poses (n, 4, 4), float64; false with a TypeError if it is not.
bool take_poses(PyObject* obj, Buffer& P) {
  const Py_ssize_t shape[3] = {-1, 4, 4};
  if (P.take(obj, 3, shape, false)) return true;
  PyErr_SetString(PyExc_TypeError, "poses must be a float64 array of shape (n, 4, 4)");
  return false;
}

PyObject* first_not_rigid(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("first_not_rigid", nargs, 1)) return nullptr;
  Buffer P;
  if (!take_poses(args[0], P)) return nullptr;
  const double* packed = P.packed(16) ? P.data() : nullptr;
  Py_ssize_t n = 0;
  if (packed != nullptr) {
    while (n + 1 < P.length() && rigid_pair(packed + 16 * n)) {
      ahead(packed, n, P.length(), 16);
      ahead(packed, n + 1, P.length(), 16);
      n += 2;
    }
  }
  Pose v;
  for (; n < P.length(); ++n) {
    const double* pose = packed ? packed + 16 * n : (P.read(n, v), v);
    if (!rigid(pose)) return PyLong_FromSsize_t(n);
  }
  return PyLong_FromLong(-1);
}

PyObject* first_unsound(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("first_unsound", nargs, 1)) return nullptr;
  Buffer P;
  if (!take_poses(args[0], P)) return nullptr;
  const double* packed = P.packed(16) ? P.data() : nullptr;
  Pose v;
  for (Py_ssize_t n = 0; n < P.length(); ++n) {
    if (packed != nullptr) ahead(packed, n, P.length(), 16);
    const double* pose = packed ? packed + 16 * n : (P.read(n, v), v);
    if (!sound(pose)) return PyLong_FromSsize_t(n);
  }
  return PyLong_FromLong(-1);
}

PyObject* place(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("place", nargs, 4)) return nullptr;
  coal::Transform3s* tf = transform_of(args[0], "tf");
  if (tf == nullptr) return nullptr;
  Buffer keep, parent;
  if (!keep.take(args[2], 2, kShape44, true)) {
    refuse("keep must be a writable C-contiguous float64 array of shape (4, 4)");
    return nullptr;
  }
  Pose W;
  const bool has_parent = args[3] != Py_None;
  if (has_parent) {
    if (!parent.take(args[3], 2, kShape44, false)) {
      refuse("parent_world must be None or a float64 array of shape (4, 4)");
      return nullptr;
    }
    parent.read(W);
  }
  Pose v;
  {
    Buffer M;
    if (!M.take(args[1], 2, kShape44, false)) Py_RETURN_FALSE;
    M.read(v);
  }
  if (!rigid(v)) Py_RETURN_FALSE;
  std::memcpy(keep.data(), v, sizeof(Pose));
  if (has_parent) {
    Pose world;
    compose(W, v, world);
    set_transform(*tf, world);
  } else {
    set_transform(*tf, v);
  }
  Py_RETURN_TRUE;
}

PyObject* place_product(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("place_product", nargs, 4)) return nullptr;
  coal::Transform3s* tf = transform_of(args[0], "tf");
  if (tf == nullptr) return nullptr;
  Pose M[3];
  bool given[3];
  static const char* const names[3] = {"A", "B", "C"};
  for (int k = 0; k < 3; ++k) {
    given[k] = args[k + 1] != Py_None;
    if (!given[k]) continue;
    Buffer buffer;
    if (!buffer.take(args[k + 1], 2, kShape44, false)) {
      PyErr_Format(PyExc_TypeError, "%s must be None or a float64 array of shape (4, 4)",
                   names[k]);
      return nullptr;
    }
    buffer.read(M[k]);
  }
  Pose product, next;
  std::memcpy(product, kIdentity, sizeof(Pose));
  for (int k = 0; k < 3; ++k) {
    if (!given[k]) continue;
    compose(product, M[k], next);
    std::memcpy(product, next, sizeof(Pose));
  }
  set_transform(*tf, product);
  Py_RETURN_NONE;
}

PyObject* place_all(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("place_all", nargs, 4)) return nullptr;
  PyObject* tfs = args[0];
  if (!PyTuple_Check(tfs)) {
    refuse("tfs must be a tuple of coal.Transform3s or None");
    return nullptr;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(tfs);
  const Py_ssize_t shape[3] = {n, 4, 4};
  Buffer P, out, world;
  if (!P.take(args[2], 3, shape, false)) {
    refuse("poses must be a float64 array of shape (n, 4, 4), n = len(tfs)");
    return nullptr;
  }
  if (!out.take(args[3], 3, shape, true)) {
    refuse("out must be a writable C-contiguous float64 array of shape (n, 4, 4)");
    return nullptr;
  }
  Pose W;
  const bool moved = args[1] != Py_None;
  if (moved) {
    if (!world.take(args[1], 2, kShape44, false)) {
      refuse("world must be None or a float64 array of shape (4, 4)");
      return nullptr;
    }
    world.read(W);
  }
  // Every transform is looked up before any is written: a wrong entry changes nothing.
  coal::Transform3s* small[32];
  coal::Transform3s** targets = n <= 32 ? small : new coal::Transform3s*[n];
  bool ok = true;
  for (Py_ssize_t k = 0; k < n && ok; ++k) {
    PyObject* item = PyTuple_GET_ITEM(tfs, k);
    targets[k] = item == Py_None ? nullptr : transform_of(item, "tfs entries");
    ok = item == Py_None || targets[k] != nullptr;
  }
  if (ok) {
    double* dst = out.data();
    Pose v;
    for (Py_ssize_t k = 0; k < n; ++k, dst += 16) {
      P.read(k, v);
      if (moved) {
        compose(W, v, dst);
      } else {
        std::memcpy(dst, v, sizeof(Pose));
      }
      if (targets[k] != nullptr) set_transform(*targets[k], dst);
    }
  }
  if (targets != small) delete[] targets;
  if (!ok) return nullptr;
  Py_RETURN_NONE;
}

PyObject* place_objects(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("place_objects", nargs, 2)) return nullptr;
  PyObject* objects = args[0];
  PyObject* tfs = args[1];
  if (!PyTuple_Check(objects) || !PyTuple_Check(tfs) ||
      PyTuple_GET_SIZE(objects) != PyTuple_GET_SIZE(tfs)) {
    refuse("objects and tfs must be tuples of the same length");
    return nullptr;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(objects);
  // Every entry is looked up before any object is changed: a wrong one changes nothing.
  std::vector<std::pair<coal::CollisionObject*, const coal::Transform3s*>> found;
  found.reserve(static_cast<size_t>(n));
  for (Py_ssize_t k = 0; k < n; ++k) {
    coal::CollisionObject* object = held_by<coal::CollisionObject>(
        PyTuple_GET_ITEM(objects, k), "objects entries", "CollisionObject");
    if (object == nullptr) return nullptr;
    const coal::Transform3s* tf = transform_of(PyTuple_GET_ITEM(tfs, k), "tfs entries");
    if (tf == nullptr) return nullptr;
    found.emplace_back(object, tf);
  }
  for (const auto& [object, tf] : found) {
    object->setTransform(*tf);
    object->computeAABB();
  }
  Py_RETURN_NONE;
}

// A tuple of ints, each in [0, bound), as a vector; false with a TypeError naming `name`.
bool int_tuple(PyObject* obj, Py_ssize_t bound, const char* name, std::vector<Py_ssize_t>& out) {
  if (!PyTuple_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s must be a tuple of ints", name);
    return false;
  }
  out.resize(static_cast<size_t>(PyTuple_GET_SIZE(obj)));
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(obj); ++k) {
    const Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(obj, k));
    if (v == -1 && PyErr_Occurred()) return false;
    if (v < 0 || v >= bound) {
      PyErr_Format(PyExc_TypeError, "%s must hold ints from 0 to %zd", name, bound - 1);
      return false;
    }
    out[static_cast<size_t>(k)] = v;
  }
  return true;
}

// The poses of a tree of bodies for many joint values (see spatialcontact.robot.kinematics):
// body k + 1 turns or slides on its joint by values[n, k] and hangs from body parents[k].
PyObject* chain_poses(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("chain_poses", nargs, 8)) return nullptr;
  const Py_ssize_t any_rows[2] = {-1, -1};
  Buffer values;
  if (!values.take(args[0], 2, any_rows, false)) {
    refuse("values must be a float64 array of shape (n, m)");
    return nullptr;
  }
  const Py_ssize_t n = values.length(), m = values.shape(1);
  const Py_ssize_t nine[2] = {m, 9}, three[2] = {m, 3}, poses[4] = {n, m + 1, 4, 4};
  Buffer R, A, B, t, slide, out;
  if (!R.take(args[1], 2, nine, false) || !A.take(args[2], 2, nine, false) ||
      !B.take(args[3], 2, nine, false) || !t.take(args[4], 2, three, false) ||
      !slide.take(args[5], 2, three, false)) {
    refuse("R, A, B must be float64 arrays of shape (m, 9), t and slide of shape (m, 3)");
    return nullptr;
  }
  std::vector<Py_ssize_t> parent;
  if (!int_tuple(args[6], m, "parents", parent)) return nullptr;
  if (static_cast<Py_ssize_t>(parent.size()) != m) {
    refuse("parents must be a tuple of m ints");
    return nullptr;
  }
  for (Py_ssize_t k = 0; k < m; ++k) {
    if (parent[static_cast<size_t>(k)] > k) {  // a parent comes before its child
      refuse("parents[k] must be an int from 0 to k");
      return nullptr;
    }
  }
  if (!out.take(args[7], 4, poses, true)) {
    refuse("out must be a writable C-contiguous float64 array of shape (n, m + 1, 4, 4)");
    return nullptr;
  }
  double* dst = out.data();
  for (Py_ssize_t i = 0; i < n; ++i) {
    double* body = dst + i * (m + 1) * 16;
    for (int e = 0; e < 16; ++e) body[e] = (e % 5 == 0) ? 1.0 : 0.0;
    for (Py_ssize_t k = 0; k < m; ++k) {
      const double v = values.at(i, k), s = std::sin(v), c = 1.0 - std::cos(v);
      Pose local;
      for (int r = 0; r < 3; ++r) {
        for (int col = 0; col < 3; ++col) {
          const int e = 3 * r + col;
          local[4 * r + col] = R.at(k, e) + s * A.at(k, e) + c * B.at(k, e);
        }
        local[4 * r + 3] = t.at(k, r) + v * slide.at(k, r);
      }
      local[12] = local[13] = local[14] = 0.0;
      local[15] = 1.0;
      compose(body + 16 * parent[static_cast<size_t>(k)], local, body + 16 * (k + 1));
    }
  }
  Py_RETURN_NONE;
}

// The first bounds of a robot's motion check (see spatialcontact.robot.motion): at each
// sample, the gap between the bounding spheres of every self pair of parts, then between
// every part's sphere and every box.
PyObject* motion_bounds(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("motion_bounds", nargs, 10)) return nullptr;
  const Py_ssize_t poses[4] = {-1, -1, 4, 4};
  Buffer T;
  if (!T.take(args[0], 4, poses, false)) {
    refuse("T must be a float64 array of shape (s, bodies, 4, 4)");
    return nullptr;
  }
  const Py_ssize_t samples = T.length(), bodies = T.shape(1);
  std::vector<Py_ssize_t> body, pair_a, pair_b;
  if (!int_tuple(args[1], bodies, "body", body)) return nullptr;
  const Py_ssize_t parts = static_cast<Py_ssize_t>(body.size());
  if (!int_tuple(args[3], parts, "pair_a", pair_a) || !int_tuple(args[4], parts, "pair_b", pair_b))
    return nullptr;
  const Py_ssize_t pairs = static_cast<Py_ssize_t>(pair_a.size());
  const Py_ssize_t part3[2] = {parts, 3}, part1[1] = {parts}, pair1[1] = {pairs};
  Buffer centre, pair_radius, radius;
  if (pair_b.size() != pair_a.size() || !centre.take(args[2], 2, part3, false) ||
      !pair_radius.take(args[5], 1, pair1, false) || !radius.take(args[6], 1, part1, false)) {
    refuse("centre (parts, 3), pair_radius (pairs,) and radius (parts,) must be float64 arrays, "
           "pair_a and pair_b of one length");
    return nullptr;
  }
  const Py_ssize_t any9[2] = {-1, 9}, any3[2] = {-1, 3};
  Buffer rotations, box_centres, half;
  Py_ssize_t boxes = 0;
  if (args[7] != Py_None) {
    if (!rotations.take(args[7], 2, any9, false) || !box_centres.take(args[8], 2, any3, false) ||
        !half.take(args[9], 2, any3, false) || box_centres.length() != rotations.length() ||
        half.length() != rotations.length()) {
      refuse("rotations (b, 9), centres (b, 3) and half (b, 3) must be float64 arrays");
      return nullptr;
    }
    boxes = rotations.length();
  }
  const Py_ssize_t width = pairs + parts * boxes;
  npy_intp shape[2] = {samples, width};
  PyObject* out = PyArray_SimpleNew(2, shape, NPY_DOUBLE);
  if (out == nullptr) return nullptr;
  double* value = static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(out)));
  std::vector<double> c(static_cast<size_t>(3 * parts));
  for (Py_ssize_t s = 0; s < samples; ++s, value += width) {
    for (Py_ssize_t p = 0; p < parts; ++p) {  // the part's sphere centre, in the base frame
      const Py_ssize_t b = body[static_cast<size_t>(p)];
      const double x = centre.at(p, 0), y = centre.at(p, 1), z = centre.at(p, 2);
      for (int r = 0; r < 3; ++r) {
        c[static_cast<size_t>(3 * p + r)] =
            T.at(s, b, r, 0) * x + T.at(s, b, r, 1) * y + T.at(s, b, r, 2) * z + T.at(s, b, r, 3);
      }
    }
    for (Py_ssize_t k = 0; k < pairs; ++k) {
      const double* u = &c[static_cast<size_t>(3 * pair_a[static_cast<size_t>(k)])];
      const double* w = &c[static_cast<size_t>(3 * pair_b[static_cast<size_t>(k)])];
      const double dx = u[0] - w[0], dy = u[1] - w[1], dz = u[2] - w[2];
      value[k] = std::sqrt(dx * dx + dy * dy + dz * dz) - pair_radius.at1(k);
    }
    for (Py_ssize_t p = 0; p < parts; ++p) {
      const double* u = &c[static_cast<size_t>(3 * p)];
      for (Py_ssize_t o = 0; o < boxes; ++o) {
        const double d[3] = {u[0] - box_centres.at(o, 0), u[1] - box_centres.at(o, 1),
                             u[2] - box_centres.at(o, 2)};
        double sum = 0.0;
        for (int a = 0; a < 3; ++a) {  // along the box's axis a (column a of its rotation)
          const double local = rotations.at(o, a) * d[0] + rotations.at(o, 3 + a) * d[1] +
                               rotations.at(o, 6 + a) * d[2];
          const double excess = std::max(std::fabs(local) - half.at(o, a), 0.0);
          sum += excess * excess;
        }
        value[pairs + p * boxes + o] = std::sqrt(sum) - radius.at1(p);
      }
    }
  }
  return out;
}

// The separating-axis bounds of a robot's motion check (see spatialcontact.robot.motion):
// for each (sample, part, box), along each axis of the box, the gap between the box and the
// part's bounding-box corners placed by the part's body at the sample; the largest.
PyObject* box_separations(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("box_separations", nargs, 9)) return nullptr;
  const Py_ssize_t poses[4] = {-1, -1, 4, 4}, corner_shape[3] = {-1, 8, 3};
  const Py_ssize_t any9[2] = {-1, 9}, any3[2] = {-1, 3};
  Buffer T, corners, rotations, centres, half;
  if (!T.take(args[0], 4, poses, false) || !corners.take(args[5], 3, corner_shape, false) ||
      !rotations.take(args[6], 2, any9, false) || !centres.take(args[7], 2, any3, false) ||
      !half.take(args[8], 2, any3, false) || centres.length() != rotations.length() ||
      half.length() != rotations.length()) {
    refuse("T (s, bodies, 4, 4), corners (parts, 8, 3), rotations (b, 9), centres (b, 3) and "
           "half (b, 3) must be float64 arrays");
    return nullptr;
  }
  std::vector<Py_ssize_t> sample, part, box, body;
  if (!int_tuple(args[1], T.length(), "samples", sample) ||
      !int_tuple(args[2], corners.length(), "parts", part) ||
      !int_tuple(args[3], rotations.length(), "boxes", box) ||
      !int_tuple(args[4], T.shape(1), "body", body))
    return nullptr;
  if (part.size() != sample.size() || box.size() != sample.size() ||
      static_cast<Py_ssize_t>(body.size()) != corners.length()) {
    refuse("samples, parts and boxes must have one length, body one entry per part");
    return nullptr;
  }
  npy_intp shape[1] = {static_cast<npy_intp>(sample.size())};
  PyObject* out = PyArray_SimpleNew(1, shape, NPY_DOUBLE);
  if (out == nullptr) return nullptr;
  double* value = static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(out)));
  for (size_t k = 0; k < sample.size(); ++k) {
    const Py_ssize_t s = sample[k], p = part[k], o = box[k], b = body[static_cast<size_t>(p)];
    double low[3] = {INFINITY, INFINITY, INFINITY}, high[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int corner = 0; corner < 8; ++corner) {
      double d[3];
      for (int r = 0; r < 3; ++r) {  // the corner in the base frame, from the box's centre
        d[r] = T.at(s, b, r, 0) * corners.at(p, corner, 0) +
               T.at(s, b, r, 1) * corners.at(p, corner, 1) +
               T.at(s, b, r, 2) * corners.at(p, corner, 2) + T.at(s, b, r, 3) - centres.at(o, r);
      }
      for (int a = 0; a < 3; ++a) {  // along the box's axis a
        const double local = d[0] * rotations.at(o, a) + d[1] * rotations.at(o, 3 + a) +
                             d[2] * rotations.at(o, 6 + a);
        low[a] = std::min(low[a], local);
        high[a] = std::max(high[a], local);
      }
    }
    double best = -INFINITY;
    for (int a = 0; a < 3; ++a) {
      best = std::max(best, std::max(low[a] - half.at(o, a), -half.at(o, a) - high[a]));
    }
    value[k] = best;
  }
  return out;
}

// Which first-round stretches of a robot's motion check are open (see _open in
// spatialcontact.robot.motion): not proved free by the bounds at their ends, nor by those at
// the ends of the half of the motion that holds them.
PyObject* open_stretches(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("open_stretches", nargs, 3)) return nullptr;
  const Py_ssize_t any3[3] = {-1, -1, -1};
  Buffer value, span, halves;
  if (!value.take(args[0], 3, any3, false) || !span.take(args[1], 3, any3, false) ||
      !halves.take(args[2], 3, any3, false)) {
    refuse("value, span and halves must be float64 arrays of 3 dimensions");
    return nullptr;
  }
  const Py_ssize_t motions = value.length(), n = span.shape(1), keys = value.shape(2);
  if (value.shape(1) != n + 1 || n % 2 != 0 || span.length() != motions ||
      span.shape(2) != keys || halves.length() != motions || halves.shape(1) != 2 ||
      halves.shape(2) != keys) {
    refuse("value (m, n + 1, k), span (m, n, k) and halves (m, 2, k) must agree, n even");
    return nullptr;
  }
  npy_intp shape[3] = {motions, n, keys};
  PyObject* out = PyArray_SimpleNew(3, shape, NPY_BOOL);
  if (out == nullptr) return nullptr;
  npy_bool* open = static_cast<npy_bool*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(out)));
  const Py_ssize_t h = n / 2;
  for (Py_ssize_t m = 0; m < motions; ++m) {
    for (Py_ssize_t j = 0; j < n; ++j) {
      const Py_ssize_t half = j / h;
      for (Py_ssize_t k = 0; k < keys; ++k, ++open) {
        const bool half_proved =
            value.at(m, half * h, k) + value.at(m, (half + 1) * h, k) > halves.at(m, half, k);
        const bool proved = value.at(m, j, k) + value.at(m, j + 1, k) > span.at(m, j, k);
        *open = !proved && !half_proved;
      }
    }
  }
  return out;
}

PyObject* compose_all(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("compose_all", nargs, 3)) return nullptr;
  const Py_ssize_t any[3] = {-1, 4, 4};
  Buffer A, B, out;
  if (!A.take(args[0], 3, any, false) || !B.take(args[1], 3, any, false)) {
    refuse("A and B must be float64 arrays of shape (n, 4, 4) and (m, 4, 4)");
    return nullptr;
  }
  const Py_ssize_t shape[4] = {A.length(), B.length(), 4, 4};
  if (!out.take(args[2], 4, shape, true)) {
    refuse("out must be a writable C-contiguous float64 array of shape (n, m, 4, 4)");
    return nullptr;
  }
  double* dst = out.data();
  Pose a, b;
  for (Py_ssize_t i = 0; i < A.length(); ++i) {
    A.read(i, a);
    for (Py_ssize_t j = 0; j < B.length(); ++j, dst += 16) {
      B.read(j, b);
      compose(a, b, dst);
    }
  }
  Py_RETURN_NONE;
}

// ---------------------------------------------------------------- closed forms
//
// Exact signed distances and witness points of one placement of a primitive pair: the same
// definitions, fixed choices and order of operations as the vectorised forms of
// spatialcontact._closed_form (tests/test_penetration.py checks that they agree). Each
// answers (d, p1, p2, normal), world frame, p2 - p1 == d * normal to rounding.

struct Vec {
  double x, y, z;
};

struct Answer {
  double d;
  Vec p1, p2, n;
};

constexpr double kShort = 1e-150;  // shorter vectors have a subnormal squared norm
constexpr double kNoise = 1e-30;   // squared core distances below this (times scale²) are rounding
constexpr double kTie = 1e-12;     // spatialcontact._closed_form.TIE
constexpr Vec kEx = {1.0, 0.0, 0.0};

using Rows = double[3][3];  // a rotation, row by row

inline Vec sub(const Vec& u, const Vec& v) { return {u.x - v.x, u.y - v.y, u.z - v.z}; }
inline double dot(const Vec& u, const Vec& v) { return u.x * v.x + u.y * v.y + u.z * v.z; }
inline Vec cross(const Vec& u, const Vec& v) {
  return {u.y * v.z - u.z * v.y, u.z * v.x - u.x * v.z, u.x * v.y - u.y * v.x};
}
inline double clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }
inline double pymin(double a, double b) { return b < a ? b : a; }  // Python's min(a, b)
inline double pymax(double a, double b) { return b > a ? b : a; }  // Python's max(a, b)

// v / length (length its norm), rescaled first when tiny; false when zero.
bool unit(const Vec& v, double length, Vec& out) {
  if (length >= kShort) {
    out = {v.x / length, v.y / length, v.z / length};
    return true;
  }
  if (length == 0.0) return false;
  const double big = pymax(pymax(std::fabs(v.x), std::fabs(v.y)), std::fabs(v.z));
  const Vec w = {v.x / big, v.y / big, v.z / big};
  const double n = std::sqrt(dot(w, w));
  out = {w.x / n, w.y / n, w.z / n};
  return true;
}

// u x e_k made unit, e_k the world axis of the smallest |u_k| (the lowest on ties); +x for 0.
Vec perpendicular(const Vec& u) {
  const double a0 = std::fabs(u.x), a1 = std::fabs(u.y), a2 = std::fabs(u.z);
  const int k = (a0 <= a1 && a0 <= a2) ? 0 : (a1 <= a2 ? 1 : 2);
  const Vec e = {k == 0 ? 1.0 : 0.0, k == 1 ? 1.0 : 0.0, k == 2 ? 1.0 : 0.0};
  const Vec w = cross(u, e);
  const double length = std::sqrt(dot(w, w));
  if (length > 0.0) return {w.x / length, w.y / length, w.z / length};
  return kEx;
}

Vec local_of(const Rows& R, const Vec& v) {  // R^T v
  return {R[0][0] * v.x + R[1][0] * v.y + R[2][0] * v.z,
          R[0][1] * v.x + R[1][1] * v.y + R[2][1] * v.z,
          R[0][2] * v.x + R[1][2] * v.y + R[2][2] * v.z};
}

Vec world_of(const Rows& R, const Vec& v) {  // R v
  return {R[0][0] * v.x + R[0][1] * v.y + R[0][2] * v.z,
          R[1][0] * v.x + R[1][1] * v.y + R[1][2] * v.z,
          R[2][0] * v.x + R[2][1] * v.y + R[2][2] * v.z};
}

// Two cores k1, k2 swept by radii r1, r2; k2 - k1 == s * n.
Answer finish(const Vec& k1, double r1, const Vec& k2, double r2, const Vec& n, double s) {
  return {s - (r1 + r2),
          {k1.x + r1 * n.x, k1.y + r1 * n.y, k1.z + r1 * n.z},
          {k2.x - r2 * n.x, k2.y - r2 * n.y, k2.z - r2 * n.z},
          n};
}

// The core point k1 swept by r1 against the half-space pn . x <= offset.
Answer on_plane(const Vec& k1, double r1, const Vec& pn, double offset) {
  const double s = dot(k1, pn) - offset;
  const Vec k2 = {k1.x - s * pn.x, k1.y - s * pn.y, k1.z - s * pn.z};
  return finish(k1, r1, k2, 0.0, {0.0 - pn.x, 0.0 - pn.y, 0.0 - pn.z}, s);
}

double sign_tie(double x, double scale = 1.0) {
  const double tie = kTie * scale;
  return x > tie ? 1.0 : (x < -tie ? -1.0 : 0.0);
}

Answer sphere_sphere(const Vec& c1, double r1, const Vec& c2, double r2) {
  const Vec v = sub(c2, c1);
  const double s = std::sqrt(dot(v, v));
  Vec n;
  if (!unit(v, s, n)) n = kEx;
  return finish(c1, r1, c2, r2, n, s);
}

Answer sphere_box(const Vec& c, double r, const Rows& R, const Vec& t, const double half[3]) {
  const Vec qv = local_of(R, sub(c, t));
  const double q[3] = {qv.x, qv.y, qv.z};
  double k[3];
  for (int i = 0; i < 3; ++i) k[i] = pymin(pymax(q[i], -half[i]), half[i]);
  const Vec v = {k[0] - q[0], k[1] - q[1], k[2] - q[2]};
  double s = std::sqrt(dot(v, v));
  Vec local;
  if (!unit(v, s, local)) {
    double gaps[3];
    for (int i = 0; i < 3; ++i) gaps[i] = half[i] - std::fabs(q[i]);
    const int axis =
        (gaps[0] <= gaps[1] && gaps[0] <= gaps[2]) ? 0 : (gaps[1] <= gaps[2] ? 1 : 2);
    const double side = q[axis] >= 0.0 ? 1.0 : -1.0;
    for (int i = 0; i < 3; ++i) k[i] = q[i];
    k[axis] = side * half[axis];
    double towards[3] = {0.0, 0.0, 0.0};
    towards[axis] = -side;
    local = {towards[0], towards[1], towards[2]};
    s = -gaps[axis];
  }
  const Vec w = world_of(R, {k[0], k[1], k[2]});
  return finish(c, r, {t.x + w.x, t.y + w.y, t.z + w.z}, 0.0, world_of(R, local), s);
}

Answer sphere_capsule(const Vec& c, double r, const Vec& a, const Vec& b, double rc) {
  const Vec axis = sub(b, a);
  double length2 = dot(axis, axis);
  if (length2 == 0.0) length2 = 1.0;
  const Vec ac = sub(c, a);
  const double along = dot(ac, axis) / length2;
  const double t = clamp01(along);
  const Vec k = {a.x + t * axis.x, a.y + t * axis.y, a.z + t * axis.z};
  Vec v = sub(k, c);
  if (t == along) {
    const double f = dot(v, axis) / length2;
    v = {v.x - f * axis.x, v.y - f * axis.y, v.z - f * axis.z};
  }
  double s2 = dot(v, v);
  if (s2 <= kNoise * (dot(ac, ac) + length2)) {
    v = {0.0, 0.0, 0.0};
    s2 = 0.0;
  }
  const double s = std::sqrt(s2);
  Vec n;
  if (!unit(v, s, n)) n = perpendicular(axis);
  return finish(c, r, k, rc, n, s);
}

Answer capsule_capsule(const Vec& a1, const Vec& b1, double r1, const Vec& a2, const Vec& b2,
                       double r2) {
  const Vec d1 = sub(b1, a1), d2 = sub(b2, a2), r0 = sub(a2, a1);
  const double aa = dot(d1, d1), ee = dot(d2, d2), bb = dot(d1, d2);
  const double cc = dot(r0, d1), ff = dot(r0, d2);
  const double aa1 = aa != 0.0 ? aa : 1.0;
  const double ee1 = ee != 0.0 ? ee : 1.0;
  const Vec w = cross(d1, d2);
  const double ww = dot(w, w);
  double foot;
  if (ww == 0.0) {
    foot = 0.5 * (clamp01(cc / aa1) + clamp01((cc + bb) / aa1));
  } else {
    foot = clamp01(dot(cross(r0, d2), w) / ww);
  }
  const double t_foot = (foot * bb - ff) / ee1;
  const double t0 = clamp01(t_foot);
  const double s0 = t0 == t_foot ? foot : (cc + t0 * bb) / aa1;
  // The foot first; another candidate wins only when shorter by more than rounding, so that
  // exactly parallel segments keep the middle of their overlap (all candidates tie there).
  double s = clamp01(s0), t = t0;
  double gx = r0.x + t * d2.x - s * d1.x;
  double gy = r0.y + t * d2.y - s * d1.y;
  double gz = r0.z + t * d2.z - s * d1.z;
  double best = gx * gx + gy * gy + gz * gz - 1e-15 * (aa + ee + dot(r0, r0));
  const double candidates[4][2] = {
      {0.0, -ff / ee1}, {1.0, (bb - ff) / ee1}, {cc / aa1, 0.0}, {(cc + bb) / aa1, 1.0}};
  for (const auto& candidate : candidates) {
    const double si = clamp01(candidate[0]), ti = clamp01(candidate[1]);
    gx = r0.x + ti * d2.x - si * d1.x;
    gy = r0.y + ti * d2.y - si * d1.y;
    gz = r0.z + ti * d2.z - si * d1.z;
    const double g = gx * gx + gy * gy + gz * gz;
    if (g < best) {
      best = g;
      s = si;
      t = ti;
    }
  }
  const Vec k1 = {a1.x + s * d1.x, a1.y + s * d1.y, a1.z + s * d1.z};
  const Vec k2 = {a2.x + t * d2.x, a2.y + t * d2.y, a2.z + t * d2.z};
  Vec v = sub(k2, k1);
  const bool s_in = s * (1.0 - s) > 0.0;
  const bool t_in = t * (1.0 - t) > 0.0;
  if (s_in) {
    const double f = dot(v, d1) / aa1;
    v = {v.x - f * d1.x, v.y - f * d1.y, v.z - f * d1.z};
  } else if (t_in) {
    const double f = dot(v, d2) / ee1;
    v = {v.x - f * d2.x, v.y - f * d2.y, v.z - f * d2.z};
  }
  double dist2 = dot(v, v);
  const double scale2 = aa + ee + dot(r0, r0);
  if (dist2 <= kNoise * scale2) {
    v = {0.0, 0.0, 0.0};
    dist2 = 0.0;
  }
  double dist = std::sqrt(dist2);
  Vec normal;
  bool has_normal = unit(v, dist, normal);
  if (ww > 1e-16 * aa * ee && dist2 * aa * ee < scale2 * ww && ((s_in && t_in) || dist2 == 0)) {
    const double root = std::sqrt(ww);
    Vec wu = {w.x / root, w.y / root, w.z / root};
    const double along = dot(v, wu);
    if (along < 0.0) wu = {-wu.x, -wu.y, -wu.z};
    normal = wu;
    has_normal = true;
    dist = std::fabs(along);
  }
  if (!has_normal) normal = perpendicular(aa > 0.0 ? d1 : d2);
  return finish(k1, r1, k2, r2, normal, dist);
}

Answer sphere_cylinder(const Vec& c, double r, const Rows& R, const Vec& t, double rc,
                       double half) {
  const Vec qv = local_of(R, sub(c, t));
  const double q[3] = {qv.x, qv.y, qv.z};
  const double rho = std::hypot(q[0], q[1]);
  const double f = rc / pymax(rho, rc);
  double k[3] = {q[0] * f, q[1] * f, pymin(pymax(q[2], -half), half)};
  const Vec v = {k[0] - q[0], k[1] - q[1], k[2] - q[2]};
  double s = std::sqrt(dot(v, v));
  Vec local;
  if (!unit(v, s, local)) {
    const double side_gap = rc - rho;
    const double cap_gap = half - std::fabs(q[2]);
    const double up = q[2] >= 0.0 ? 1.0 : -1.0;
    for (int i = 0; i < 3; ++i) k[i] = q[i];
    if (side_gap <= cap_gap) {
      Vec radial;
      if (!unit({q[0], q[1], 0.0}, rho, radial)) radial = kEx;
      k[0] = rc * radial.x;
      k[1] = rc * radial.y;
      local = {-radial.x, -radial.y, -radial.z};
    } else {
      k[2] = up * half;
      local = {0.0, 0.0, -up};
    }
    s = -pymin(side_gap, cap_gap);
  }
  const Vec w = world_of(R, {k[0], k[1], k[2]});
  return finish(c, r, {t.x + w.x, t.y + w.y, t.z + w.z}, 0.0, world_of(R, local), s);
}

// The cone of base radius rc and half height half (base disc at z = -half, apex at +half),
// worked out in the plane through the axis and the centre: spatialcontact._closed_form's
// sphere_cone, the same cases in the same order.
Answer sphere_cone(const Vec& c, double r, const Rows& R, const Vec& t, double rc,
                   double half) {
  const double length = 2.0 * half;
  const double slant = std::hypot(rc, length);
  const double nr = length / slant, nz = rc / slant;
  const Vec q = local_of(R, sub(c, t));
  const double rho = std::hypot(q.x, q.y);
  Vec radial;
  if (!unit({q.x, q.y, 0.0}, rho, radial)) radial = kEx;
  const double a = rho - rc, b = q.z + half, e = q.z - half;
  double s = nr * a + nz * b;  // from the rim: exactly 0 there (the rim takes the side)
  const bool below = b < 0.0;
  const bool rim = below ? a > 0.0 : a * rc - length * b > 0.0;
  const bool apex = !rim && rho * rc - length * e < 0.0;
  const bool base = !rim && !apex && (below || (s <= 0.0 && b < -s));
  double k_r = rho - s * nr, k_z = q.z - s * nz, n_r = -nr, n_z = -nz;
  if (base) {
    k_r = rho;
    k_z = -half;
    n_r = 0.0;
    n_z = 1.0;
    s = -b;
  } else if (rim || apex) {
    const double v_r = rim ? a : rho, v_z = rim ? b : e;
    const double gap = std::hypot(v_r, v_z);
    k_r = rim ? rc : 0.0;
    k_z = rim ? -half : half;
    n_r = -v_r / gap;
    n_z = -v_z / gap;
    s = gap;
  }
  const Vec k = base ? Vec{q.x, q.y, k_z} : Vec{radial.x * k_r, radial.y * k_r, k_z};
  const Vec local = {radial.x * n_r, radial.y * n_r, n_z};
  const Vec w = world_of(R, k);
  return finish(c, r, {t.x + w.x, t.y + w.y, t.z + w.z}, 0.0, world_of(R, local), s);
}

Answer capsule_halfspace(const Vec& a, const Vec& b, double r, const Vec& n, double offset) {
  const Vec axis = sub(b, a);
  const double f = 0.5 - 0.5 * sign_tie(dot(axis, n), std::sqrt(dot(axis, axis)));
  return on_plane({a.x + f * axis.x, a.y + f * axis.y, a.z + f * axis.z}, r, n, offset);
}

Answer box_halfspace(const Rows& R, const Vec& t, const double half[3], const Vec& n,
                     double offset) {
  const Vec m = local_of(R, n);
  const Vec w = world_of(R, {half[0] * sign_tie(m.x), half[1] * sign_tie(m.y),
                             half[2] * sign_tie(m.z)});
  return on_plane({t.x - w.x, t.y - w.y, t.z - w.z}, 0.0, n, offset);
}

Answer cylinder_halfspace(const Rows& R, const Vec& t, double rc, double half, const Vec& n,
                          double offset) {
  const Vec axis = {R[0][2], R[1][2], R[2][2]};
  const double h = half * sign_tie(dot(n, axis));
  const Vec w = cross(axis, cross(n, axis));
  const double wn = std::sqrt(dot(w, w));
  const double f = wn > kTie ? rc / wn : 0.0;
  const Vec rim = {t.x - h * axis.x - f * w.x, t.y - h * axis.y - f * w.y,
                   t.z - h * axis.z - f * w.z};
  return on_plane(rim, 0.0, n, offset);
}

// A leaf as the closed forms read it at a placement: its kind (the codes of
// spatialcontact._closed_form_scalar) and its sizes, with its pose from the Coal transform.
enum Kind { kSphere = 0, kCuboid = 1, kCapsule = 2, kCylinder = 3, kHalfspace = 4, kCone = 5 };

struct Placed {
  int kind;
  double size[4];
  Rows R;
  Vec t;
  Vec a, b;      // a capsule's segment
  Vec n;         // a half-space's world normal
  double offset;  // and offset
};

// A new float64 array of shape (3,) holding v.
PyObject* new_vector(const Vec& v) {
  npy_intp shape[1] = {3};
  PyObject* out = PyArray_SimpleNew(1, shape, NPY_DOUBLE);
  if (out == nullptr) return nullptr;
  double* data = static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(out)));
  data[0] = v.x;
  data[1] = v.y;
  data[2] = v.z;
  return out;
}

bool read_sizes(PyObject* sizes, int kind, double out[4]) {
  static const Py_ssize_t counts[6] = {1, 3, 2, 2, 4, 2};
  if (kind < 0 || kind > 5) return refuse("kind must be 0 to 5");
  if (!PyTuple_Check(sizes) || PyTuple_GET_SIZE(sizes) != counts[kind]) {
    return refuse("sizes must be a tuple of floats of the kind's length");
  }
  for (Py_ssize_t i = 0; i < counts[kind]; ++i) {
    PyObject* item = PyTuple_GET_ITEM(sizes, i);
    if (!PyFloat_Check(item)) return refuse("sizes must be a tuple of floats of the kind's length");
    out[i] = PyFloat_AS_DOUBLE(item);
  }
  return true;
}

void place_leaf(Placed& p, const coal::Transform3s& tf) {
  const coal::Matrix3s& R = tf.getRotation();
  const coal::Vec3s& t = tf.getTranslation();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) p.R[i][j] = R(i, j);
  p.t = {t[0], t[1], t[2]};
  if (p.kind == kCapsule) {
    const double half = p.size[1];
    const double zx = p.R[0][2], zy = p.R[1][2], zz = p.R[2][2];
    p.a = {p.t.x - half * zx, p.t.y - half * zy, p.t.z - half * zz};
    p.b = {p.t.x + half * zx, p.t.y + half * zy, p.t.z + half * zz};
  } else if (p.kind == kHalfspace) {
    p.n = world_of(p.R, {p.size[0], p.size[1], p.size[2]});
    p.offset = p.size[3] + dot(p.n, p.t);
  }
}

// The answer of the pair (first, second), in the order of the pair functions above.
bool answer_of(const Placed& f, const Placed& s, Answer& out) {
  const int key = 10 * f.kind + s.kind;
  switch (key) {
    case 10 * kSphere + kSphere:
      out = sphere_sphere(f.t, f.size[0], s.t, s.size[0]);
      return true;
    case 10 * kSphere + kCuboid:
      out = sphere_box(f.t, f.size[0], s.R, s.t, s.size);
      return true;
    case 10 * kSphere + kCapsule:
      out = sphere_capsule(f.t, f.size[0], s.a, s.b, s.size[0]);
      return true;
    case 10 * kCapsule + kCapsule:
      out = capsule_capsule(f.a, f.b, f.size[0], s.a, s.b, s.size[0]);
      return true;
    case 10 * kSphere + kCylinder:
      out = sphere_cylinder(f.t, f.size[0], s.R, s.t, s.size[0], s.size[1]);
      return true;
    case 10 * kSphere + kCone:
      out = sphere_cone(f.t, f.size[0], s.R, s.t, s.size[0], s.size[1]);
      return true;
    case 10 * kSphere + kHalfspace:
      out = on_plane(f.t, f.size[0], s.n, s.offset);
      return true;
    case 10 * kCapsule + kHalfspace:
      out = capsule_halfspace(f.a, f.b, f.size[0], s.n, s.offset);
      return true;
    case 10 * kCuboid + kHalfspace:
      out = box_halfspace(f.R, f.t, f.size, s.n, s.offset);
      return true;
    case 10 * kCylinder + kHalfspace:
      out = cylinder_halfspace(f.R, f.t, f.size[0], f.size[1], s.n, s.offset);
      return true;
    default:
      return refuse("no closed form for this pair of kinds");
  }
}

PyObject* closed_form(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("closed_form", nargs, 7)) return nullptr;
  Placed first, second;
  first.kind = static_cast<int>(PyLong_AsLong(args[0]));
  second.kind = static_cast<int>(PyLong_AsLong(args[1]));
  if (PyErr_Occurred()) return nullptr;
  const int swap = PyObject_IsTrue(args[2]);
  if (swap < 0) return nullptr;
  if (!read_sizes(args[3], first.kind, first.size) ||
      !read_sizes(args[4], second.kind, second.size)) {
    return nullptr;
  }
  coal::Transform3s* tf1 = transform_of(args[5], "tf1");
  if (tf1 == nullptr) return nullptr;
  coal::Transform3s* tf2 = transform_of(args[6], "tf2");
  if (tf2 == nullptr) return nullptr;
  place_leaf(first, swap ? *tf2 : *tf1);
  place_leaf(second, swap ? *tf1 : *tf2);
  Answer a;
  if (!answer_of(first, second, a)) return nullptr;
  if (swap) {
    std::swap(a.p1, a.p2);
    a.n = {0.0 - a.n.x, 0.0 - a.n.y, 0.0 - a.n.z};
  }
  PyObject* p1 = new_vector(a.p1);
  PyObject* p2 = new_vector(a.p2);
  PyObject* n = new_vector(a.n);
  if (p1 == nullptr || p2 == nullptr || n == nullptr) {
    Py_XDECREF(p1);
    Py_XDECREF(p2);
    Py_XDECREF(n);
    return nullptr;
  }
  return Py_BuildValue("(dNNN)", a.d, p1, p2, n);
}

// The gaps between spheres a[i] and b[j] (centres (n, 3) and (m, 3), radii (n,) and (m,))
// that are at most cutoff, as (gap, i, j), row by row. A gap is lowered by more than its
// rounding, so that a pair exactly at the cut-off is never left out; an unbounded sphere
// (radius inf) gives -inf.
struct Gap {
  double gap;
  Py_ssize_t i, j;
};

bool sphere_gaps(PyObject* const* args, std::vector<Gap>& out, double& cutoff) {
  const Py_ssize_t centres[2] = {-1, 3}, radii[1] = {-1};
  Buffer ca, ra, cb, rb;
  if (!ca.take(args[0], 2, centres, false) || !ra.take(args[1], 1, radii, false) ||
      !cb.take(args[2], 2, centres, false) || !rb.take(args[3], 1, radii, false) ||
      ra.length() != ca.length() || rb.length() != cb.length()) {
    return refuse(
        "centres and radii must be float64 arrays of shapes (n, 3), (n,), (m, 3) and (m,)");
  }
  cutoff = PyFloat_AsDouble(args[4]);
  if (cutoff == -1.0 && PyErr_Occurred()) return false;
  for (Py_ssize_t i = 0; i < ca.length(); ++i) {
    for (Py_ssize_t j = 0; j < cb.length(); ++j) {
      const double dx = ca.at(i, 0) - cb.at(j, 0), dy = ca.at(i, 1) - cb.at(j, 1),
                   dz = ca.at(i, 2) - cb.at(j, 2);
      const double centre = std::sqrt(dx * dx + dy * dy + dz * dz);
      const double reach = ra.at1(i) + rb.at1(j);
      const double gap = centre - reach - 1e-12 * (centre + reach);
      if (gap <= cutoff) out.push_back({gap, i, j});
    }
  }
  return true;
}

PyObject* near_spheres(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("near_spheres", nargs, 5)) return nullptr;
  std::vector<Gap> gaps;
  double cutoff;
  if (!sphere_gaps(args, gaps, cutoff)) return nullptr;
  PyObject* found = PyList_New(static_cast<Py_ssize_t>(gaps.size()));
  if (found == nullptr) return nullptr;
  for (size_t k = 0; k < gaps.size(); ++k) {
    PyObject* pair = Py_BuildValue("(nn)", gaps[k].i, gaps[k].j);
    if (pair == nullptr) {
      Py_DECREF(found);
      return nullptr;
    }
    PyList_SET_ITEM(found, static_cast<Py_ssize_t>(k), pair);
  }
  return found;
}

PyObject* nearest_order(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("nearest_order", nargs, 5)) return nullptr;
  std::vector<Gap> gaps;
  double cutoff;
  if (!sphere_gaps(args, gaps, cutoff)) return nullptr;
  std::stable_sort(gaps.begin(), gaps.end(),
                   [](const Gap& x, const Gap& y) { return x.gap < y.gap; });
  npy_intp shape[1] = {static_cast<npy_intp>(gaps.size())};
  PyObject* values = PyArray_SimpleNew(1, shape, NPY_DOUBLE);
  PyObject* rows = PyArray_SimpleNew(1, shape, NPY_INTP);
  PyObject* columns = PyArray_SimpleNew(1, shape, NPY_INTP);
  if (values == nullptr || rows == nullptr || columns == nullptr) {
    Py_XDECREF(values);
    Py_XDECREF(rows);
    Py_XDECREF(columns);
    return nullptr;
  }
  double* g = static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(values)));
  npy_intp* i = static_cast<npy_intp*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(rows)));
  npy_intp* j = static_cast<npy_intp*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(columns)));
  for (size_t k = 0; k < gaps.size(); ++k) {
    g[k] = gaps[k].gap;
    i[k] = gaps[k].i;
    j[k] = gaps[k].j;
  }
  return Py_BuildValue("(NNN)", values, rows, columns);
}

PyObject* nearest_pair(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("nearest_pair", nargs, 5)) return nullptr;
  std::vector<Gap> gaps;
  double cutoff;
  if (!sphere_gaps(args, gaps, cutoff)) return nullptr;
  if (gaps.empty()) Py_RETURN_NONE;
  const Gap& first = *std::min_element(
      gaps.begin(), gaps.end(), [](const Gap& x, const Gap& y) { return x.gap < y.gap; });
  return Py_BuildValue("(nn)", first.i, first.j);
}

PyObject* world_point(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("world_point", nargs, 2)) return nullptr;
  coal::Transform3s* tf = transform_of(args[0], "tf");
  if (tf == nullptr) return nullptr;
  coal::Vec3s p = tf->getTranslation();
  if (args[1] != Py_None) {
    const Py_ssize_t shape[1] = {3};
    Buffer local;
    if (!local.take(args[1], 1, shape, false)) {
      refuse("local must be None or a float64 array of shape (3,)");
      return nullptr;
    }
    p = tf->transform(coal::Vec3s(local.at1(0), local.at1(1), local.at1(2)));
  }
  return Py_BuildValue("(ddd)", p[0], p[1], p[2]);
}


// ---------------------------------------------------------------- many poses of one leaf

// The yes/no of two leaves for every row of a batch, checked and answered in one pass over
// the rows (spatialcontact.batch._fast.DirectCollide sets up the parameters). Rows are poses
// (4, 4) or translations (3,) of the moving leaf; the answers are those of the numpy closed
// forms of spatialcontact.batch._fast, in the same order of operations.

enum DirectKind { kSpheres = 0, kCapsuleBox = 1 };

// Parameters of kCapsuleBox, at these offsets of the parameter array.
enum CapsuleBoxParam {
  kMovingCapsule = 0,  // 1.0 when the capsule moves, 0.0 when the box does
  kFixedT = 1,         // the fixed leaf's translation (3)
  kFixedR = 4,         // its rotation, row by row (9)
  kHalf = 13,          // the box's half sides (3)
  kHalfLength = 16,
  kRadius = 17,
  kReach2 = 18,        // squared bound of the centres' distance (slack included)
  kFar2 = 19,          // squared bound of the capsule centre's distance to the box
  kGrown = 20,         // the half sides grown by the radius (slack included) (3)
  kFixedHalf = 23,     // the capsule's half segment in the box's frame, for translations (3)
  kMovingR = 26,       // the moving leaf's kept rotation, for translations (9)
  kCapsuleBoxParams = 35
};

// numpy's minimum and maximum: NaN when either is NaN.
inline double nan_min(double a, double b) { return (a != a || b != b) ? NAN : (a < b ? a : b); }
inline double nan_max(double a, double b) { return (a != a || b != b) ? NAN : (a > b ? a : b); }

// Squared distance from p to the box |x_k| <= h_k (0 inside).
inline double outside2(const double p[3], const double h[3]) {
  double s = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double e = std::max(std::fabs(p[k]) - h[k], 0.0);
    s += e * e;
  }
  return s;
}

// Whether the segment from P to P + D crosses the box of half sides `faces` (slab by slab;
// NaN, a segment on a face's plane, is a miss). `inverse` is 1 / D (a division by D would
// round differently, by an ulp of the crossing: a difference on touching only).
bool crosses(const double P[3], const double inverse[3], const double faces[3]) {
  double enter = 0.0, leave = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double s1 = (-faces[k] - P[k]) * inverse[k];
    const double s2 = (faces[k] - P[k]) * inverse[k];
    const double lo = nan_min(s1, s2), hi = nan_max(s1, s2);
    enter = k == 0 ? lo : nan_max(enter, lo);
    leave = k == 0 ? hi : nan_min(leave, hi);
  }
  enter = nan_max(enter, 0.0);
  leave = nan_min(leave, 1.0);
  return enter <= leave;
}

// Distance from the segment P to P + D to the box of half sides h (see _distance_in_frame:
// the squared distance is quadratic between the crossings of the faces' planes).
double segment_box(const double P[3], const double D[3], const double inverse[3],
                   const double h[3]) {
  double knots[8];
  knots[0] = 0.0;
  knots[7] = 1.0;
  for (int k = 0; k < 3; ++k) {
    knots[1 + k] = std::fmin(std::fmax((h[k] - P[k]) * inverse[k], 0.0), 1.0);
    knots[4 + k] = std::fmin(std::fmax((-h[k] - P[k]) * inverse[k], 0.0), 1.0);
  }
  std::sort(knots + 1, knots + 7);
  double best2 = INFINITY;
  for (int j = 0; j < 7; ++j) {
    const double low = knots[j], high = knots[j + 1];
    const double middle = (low + high) * 0.5;
    double slope = 0.0, curvature = 0.0;
    for (int k = 0; k < 3; ++k) {
      const double q = middle * D[k] + P[k];
      const double excess = std::max(std::fabs(q) - h[k], 0.0);
      slope += std::copysign(excess, q) * D[k];
      curvature += (excess > 0.0 ? 1.0 : 0.0) * (D[k] * D[k]);
    }
    if (!(curvature > 0.0)) curvature = 1.0;
    const double best = nan_min(nan_max(middle - slope / curvature, low), high);
    double f = 0.0;
    for (int k = 0; k < 3; ++k) {
      const double e = std::max(std::fabs(best * D[k] + P[k]) - h[k], 0.0);
      f += e * e;
    }
    best2 = nan_min(best2, f);
  }
  return std::sqrt(best2);
}

// Whether the segment from P to P + D (box frame) lies within `radius` of the box: five slab
// tests (the box; grown by the radius on every side; along one axis only), then a measure.
bool capsule_box_in_frame(const double P[3], const double D[3], const double h[3],
                          double radius) {
  const double inverse[3] = {1.0 / D[0], 1.0 / D[1], 1.0 / D[2]};
  double faces[3] = {h[0], h[1], h[2]};
  if (crosses(P, inverse, faces)) return true;
  for (int k = 0; k < 3; ++k) faces[k] = h[k] + radius;
  if (!crosses(P, inverse, faces)) return false;
  for (int axis = 0; axis < 3; ++axis) {
    for (int k = 0; k < 3; ++k) faces[k] = h[k] + (k == axis ? radius : 0.0);
    if (crosses(P, inverse, faces)) return true;
  }
  return segment_box(P, D, inverse, h) <= radius;
}

// R^T v for a rotation R given row by row with a stride between rows.
inline void turned_back(const double* R, int stride, const double v[3], double out[3]) {
  for (int k = 0; k < 3; ++k) out[k] = R[k] * v[0] + R[stride + k] * v[1] + R[2 * stride + k] * v[2];
}

bool capsule_box(const double* c, const double* row, bool pose) {
  const double t[3] = {pose ? row[3] : row[0], pose ? row[7] : row[1], pose ? row[11] : row[2]};
  const double v[3] = {t[0] - c[kFixedT], t[1] - c[kFixedT + 1], t[2] - c[kFixedT + 2]};
  const double s = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
  if (!(s <= c[kReach2])) return false;
  double p[3], u[3];
  if (c[kMovingCapsule] != 0.0) {  // the capsule's centre and half segment in the box's frame
    turned_back(c + kFixedR, 3, v, p);
    if (pose) {
      const double z[3] = {c[kHalfLength] * row[2], c[kHalfLength] * row[6],
                           c[kHalfLength] * row[10]};
      turned_back(c + kFixedR, 3, z, u);
    } else {
      std::memcpy(u, c + kFixedHalf, sizeof(u));
    }
  } else {
    const double w[3] = {-v[0], -v[1], -v[2]};
    if (pose) {
      turned_back(row, 4, w, p);
      const double* R = c + kFixedR;
      const double z[3] = {c[kHalfLength] * R[2], c[kHalfLength] * R[5], c[kHalfLength] * R[8]};
      turned_back(row, 4, z, u);
    } else {
      turned_back(c + kMovingR, 3, w, p);
      std::memcpy(u, c + kFixedHalf, sizeof(u));
    }
  }
  const double* h = c + kHalf;
  for (int k = 0; k < 3; ++k) {
    if (std::fabs(p[k]) - std::fabs(u[k]) - c[kGrown + k] > 0.0) return false;
  }
  const double radius2 = c[kRadius] * c[kRadius];
  const double o2 = outside2(p, h);
  if (o2 <= radius2) return true;
  if (!(o2 <= c[kFar2])) return false;
  const double e1[3] = {p[0] + u[0], p[1] + u[1], p[2] + u[2]};
  const double e2[3] = {p[0] - u[0], p[1] - u[1], p[2] - u[2]};
  if (std::min(outside2(e1, h), outside2(e2, h)) <= radius2) return true;
  const double D[3] = {2.0 * u[0], 2.0 * u[1], 2.0 * u[2]};
  return capsule_box_in_frame(e2, D, h, c[kRadius]);
}

// A row that may not be answered: a pose that is not rigid (`rigid_check`) or not sound, a
// translation not finite or out of range.
inline bool bad_row(const double* row, bool pose, bool rigid_check, double limit) {
  if (pose) return rigid_check ? !rigid(row) : !sound(row);
  return !(std::fabs(row[0]) <= limit && std::fabs(row[1]) <= limit && std::fabs(row[2]) <= limit);
}


PyObject* collide_rows_of(long kind, const double* c, const Buffer& rows, bool pose,
                          PyObject* check_arg, PyObject* limit_arg) {
  const int check = PyObject_IsTrue(check_arg);
  if (check < 0) return nullptr;
  const double limit = PyFloat_AsDouble(limit_arg);
  if (limit == -1.0 && PyErr_Occurred()) return nullptr;
  const Py_ssize_t n = rows.length();
  npy_intp shape[1] = {n};
  PyObject* out = PyArray_SimpleNew(1, shape, NPY_BOOL);
  if (out == nullptr) return nullptr;
  npy_bool* hit = static_cast<npy_bool*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(out)));
  const int width = pose ? 16 : 3;
  const double* packed = rows.packed(width) ? rows.data() : nullptr;
  // Two spheres: sure answers by the squared distance, away from touching by a margin far
  // above rounding; the formula of the closed form between.
  const double touch = c[3] + c[4], margin = 1e-9 * (touch + 1.0);
  const double apart2 = (touch + margin) * (touch + margin);
  const double inside = std::max(touch - margin, 0.0), inside2 = inside * inside;
  auto answer = [&](const double* row) -> npy_bool {
    if (kind != kSpheres) return capsule_box(c, row, pose);
    const double t[3] = {pose ? row[3] : row[0], pose ? row[7] : row[1], pose ? row[11] : row[2]};
    double s = (t[0] - c[0]) * (t[0] - c[0]);
    s += (t[1] - c[1]) * (t[1] - c[1]);
    s += (t[2] - c[2]) * (t[2] - c[2]);
    return s < inside2 || (s <= apart2 && std::sqrt(s) - c[4] - c[3] <= 0.0);
  };
  Py_ssize_t i = 0;
  if (check && pose && packed != nullptr) {  // checked two at a time, up to a bad pair
    for (; i + 1 < n && rigid_pair(packed + 16 * i); i += 2) {
      ahead(packed, i, n, 16);
      ahead(packed, i + 1, n, 16);
      hit[i] = answer(packed + 16 * i);
      hit[i + 1] = answer(packed + 16 * i + 16);
    }
  }
  double copy[16];
  Py_ssize_t bad = -1;
  for (; i < n; ++i) {
    const double* row = copy;
    if (packed != nullptr) {
      row = packed + width * i;
      ahead(packed, i, n, width);
    } else {
      for (int k = 0; k < width; ++k) copy[k] = pose ? rows.at(i, k / 4, k % 4) : rows.at(i, k);
    }
    if (bad_row(row, pose, check != 0, limit)) {
      bad = i;
      break;
    }
    hit[i] = answer(row);
  }
  if (bad >= 0) std::memset(hit + bad, 0, static_cast<size_t>(n - bad));
  return Py_BuildValue("(Nn)", out, bad);
}

PyObject* collide_rows(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("collide_rows", nargs, 5)) return nullptr;
  const long kind = PyLong_AsLong(args[0]);
  if (kind == -1 && PyErr_Occurred()) return nullptr;
  if (kind != kSpheres && kind != kCapsuleBox) {
    PyErr_SetString(PyExc_TypeError, "kind must be 0 (spheres) or 1 (a capsule and a box)");
    return nullptr;
  }
  const Py_ssize_t wanted = kind == kSpheres ? 5 : kCapsuleBoxParams;
  const Py_ssize_t param_shape[1] = {wanted};
  Buffer params;
  if (!params.take(args[1], 1, param_shape, true)) {
    PyErr_Format(PyExc_TypeError, "params must be a C-contiguous float64 array of shape (%zd,)",
                 wanted);
    return nullptr;
  }
  const Py_ssize_t pose_shape[3] = {-1, 4, 4}, translation_shape[2] = {-1, 3};
  Buffer rows;
  bool pose = rows.take(args[2], 3, pose_shape, false);
  if (!pose) {
    Buffer again;  // a failed take keeps its view: try the other layout on a fresh one
    if (!again.take(args[2], 2, translation_shape, false)) {
      PyErr_SetString(PyExc_TypeError,
                      "rows must be a float64 array of shape (n, 4, 4) or (n, 3)");
      return nullptr;
    }
    return collide_rows_of(kind, params.data(), again, false, args[3], args[4]);
  }
  return collide_rows_of(kind, params.data(), rows, true, args[3], args[4]);
}

// ---------------------------------------------------------------- cached pair queries

// The exception being handled, raised as Boost.Python's translator raises it.
void raise_coal_error() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::out_of_range& error) {
    PyErr_SetString(PyExc_IndexError, error.what());
  } catch (const std::invalid_argument& error) {
    PyErr_SetString(PyExc_ValueError, error.what());
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unidentifiable C++ exception");
  }
}

// One cached query of a leaf pair: a Coal functor with its two transforms, request and
// result, resolved once to their C++ objects. Calling it clears the result and runs the
// functor, as `result.clear(); functor(tf1, tf2, request, result)` does from Python, without
// Boost.Python's dispatch. The Python objects are held, so the C++ ones live as long.
template <class Functor, class Request, class Result>
struct PairCall {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* held[5];  // functor, tf1, tf2, request, result
  const Functor* functor;
  const coal::Transform3s* tf1;
  const coal::Transform3s* tf2;
  const Request* request;
  Result* result;
};

using CollideCall = PairCall<coal::ComputeCollision, coal::CollisionRequest, coal::CollisionResult>;
using DistanceCall = PairCall<coal::ComputeDistance, coal::DistanceRequest, coal::DistanceResult>;

template <class Call>
void pair_call_dealloc(PyObject* self) {
  Call* call = reinterpret_cast<Call*>(self);
  for (PyObject*& obj : call->held) Py_CLEAR(obj);
  Py_TYPE(self)->tp_free(self);
}

PyObject* to_python(std::size_t contacts) { return PyLong_FromSize_t(contacts); }
PyObject* to_python(double distance) { return PyFloat_FromDouble(distance); }

// Calling a cached pair query: the result cleared, the functor run, its answer returned (the
// number of contacts, or the distance).
template <class Call>
PyObject* run_pair_call(PyObject* self, PyObject* const*, size_t nargsf, PyObject* kwnames) {
  if (PyVectorcall_NARGS(nargsf) != 0 || kwnames != nullptr) {
    const char* name = std::strrchr(Py_TYPE(self)->tp_name, '.');  // after the module's
    PyErr_Format(PyExc_TypeError, "a %s takes no arguments", name + 1);
    return nullptr;
  }
  Call* call = reinterpret_cast<Call*>(self);
  try {
    call->result->clear();
    return to_python((*call->functor)(*call->tf1, *call->tf2, *call->request, *call->result));
  } catch (...) {
    raise_coal_error();
    return nullptr;
  }
}

template <class Call, class Functor, class Request, class Result>
PyObject* pair_call_new(PyTypeObject* type, PyObject* args, PyObject* kwargs, const char* names[3]) {
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_Format(PyExc_TypeError, "%s takes no keyword arguments", type->tp_name);
    return nullptr;
  }
  if (!arity(type->tp_name, PyTuple_GET_SIZE(args), 5)) return nullptr;
  PyObject* const* a = &PyTuple_GET_ITEM(args, 0);
  const Functor* functor = held_by<Functor>(a[0], "functor", names[0]);
  if (functor == nullptr) return nullptr;
  const coal::Transform3s* tf1 = held_by<coal::Transform3s>(a[1], "tf1", "Transform3s");
  if (tf1 == nullptr) return nullptr;
  const coal::Transform3s* tf2 = held_by<coal::Transform3s>(a[2], "tf2", "Transform3s");
  if (tf2 == nullptr) return nullptr;
  const Request* request = held_by<Request>(a[3], "request", names[1]);
  if (request == nullptr) return nullptr;
  Result* result = held_by<Result>(a[4], "result", names[2]);
  if (result == nullptr) return nullptr;
  Call* call = reinterpret_cast<Call*>(type->tp_alloc(type, 0));
  if (call == nullptr) return nullptr;
  for (int k = 0; k < 5; ++k) {
    Py_INCREF(a[k]);
    call->held[k] = a[k];
  }
  call->functor = functor;
  call->tf1 = tf1;
  call->tf2 = tf2;
  call->request = request;
  call->result = result;
  call->vectorcall = run_pair_call<Call>;
  return reinterpret_cast<PyObject*>(call);
}

const char* kCollideNames[3] = {"ComputeCollision", "CollisionRequest", "CollisionResult"};
const char* kDistanceNames[3] = {"ComputeDistance", "DistanceRequest", "DistanceResult"};

PyObject* collide_call_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  return pair_call_new<CollideCall, coal::ComputeCollision, coal::CollisionRequest,
                       coal::CollisionResult>(type, args, kwargs, kCollideNames);
}

PyObject* distance_call_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  return pair_call_new<DistanceCall, coal::ComputeDistance, coal::DistanceRequest,
                       coal::DistanceResult>(type, args, kwargs, kDistanceNames);
}

// The witness points of the last distance, as two new float64 arrays of shape (3,).
PyObject* distance_points(PyObject* self, PyObject*) {
  const coal::DistanceResult* result = reinterpret_cast<DistanceCall*>(self)->result;
  PyObject* p1 = new_vector(Vec{result->nearest_points[0][0], result->nearest_points[0][1],
                                result->nearest_points[0][2]});
  if (p1 == nullptr) return nullptr;
  PyObject* p2 = new_vector(Vec{result->nearest_points[1][0], result->nearest_points[1][1],
                                result->nearest_points[1][2]});
  if (p2 == nullptr) {
    Py_DECREF(p1);
    return nullptr;
  }
  return Py_BuildValue("(NN)", p1, p2);
}

PyMethodDef kDistanceMethods[] = {
    {"points", distance_points, METH_NOARGS,
     "points() -> (p1, p2): the witness points of the last call (new (3,) float64 arrays)."},
    {nullptr, nullptr, 0, nullptr}};

// The type of a cached pair call: `Call` objects, made by `make`.
template <class Call>
PyTypeObject pair_call_type(const char* name, const char* doc, newfunc make,
                            PyMethodDef* methods) {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = name;
  t.tp_basicsize = sizeof(Call);
  t.tp_dealloc = pair_call_dealloc<Call>;
  t.tp_vectorcall_offset = offsetof(Call, vectorcall);
  t.tp_call = PyVectorcall_Call;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  t.tp_doc = doc;
  t.tp_methods = methods;
  t.tp_new = make;
  return t;
}

PyTypeObject kCollideCallType = pair_call_type<CollideCall>(
    "spatialcontact._native.CollideCall",
    "CollideCall(functor, tf1, tf2, request, result): call() clears result and returns "
    "functor(tf1, tf2, request, result), the number of contacts (a coal.ComputeCollision and "
    "its coal objects, held).",
    collide_call_new, nullptr);

PyTypeObject kDistanceCallType = pair_call_type<DistanceCall>(
    "spatialcontact._native.DistanceCall",
    "DistanceCall(functor, tf1, tf2, request, result): call() clears result and returns "
    "functor(tf1, tf2, request, result), the distance (a coal.ComputeDistance and its coal "
    "objects, held); points() gives the witness points.",
    distance_call_new, kDistanceMethods);

// ---------------------------------------------------------------- mesh pairs

// A built triangle mesh held by `obj` (a coal.BVHModelOBBRSS), or nullptr with a TypeError or
// ValueError naming `name`.
const coal::BVHModel<coal::OBBRSS>* triangle_mesh(PyObject* obj, const char* name) {
  const auto* model = held_by<coal::BVHModel<coal::OBBRSS>>(obj, name, "BVHModelOBBRSS");
  if (model == nullptr) return nullptr;
  if (model->build_state != coal::BVH_BUILD_STATE_PROCESSED || !model->vertices ||
      !model->tri_indices || model->num_tris == 0 || model->getNumBVs() == 0) {
    PyErr_Format(PyExc_ValueError, "%s must be a built triangle mesh (endModel called)", name);
    return nullptr;
  }
  return model;
}

// New float64 array (n, 3) of the rows `get(contact)` of `found`.
template <class Get>
PyObject* rows_of(const std::vector<mesh_contacts::TriangleContact>& found, Get get) {
  const npy_intp shape[2] = {static_cast<npy_intp>(found.size()), 3};
  PyObject* out = PyArray_SimpleNew(2, shape, NPY_DOUBLE);
  if (out == nullptr) return nullptr;
  double* data = static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(out)));
  for (const auto& c : found) {
    const coal::Vec3s& v = get(c);
    *data++ = v[0];
    *data++ = v[1];
    *data++ = v[2];
  }
  return out;
}

// mesh_contacts(m1, tf1, m2, tf2, margin, keep) -> (triangles (m, 2) int64, depth (m,),
// normal (m, 3), p1 (m, 3), p2 (m, 3)): the `keep` deepest pairs of triangles of the two
// meshes that overlap, touch or lie within `margin`, deepest first, with their exact depths
// (see _mesh_contacts.hpp).
PyObject* mesh_pair_contacts(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("mesh_contacts", nargs, 6)) return nullptr;
  const auto* m1 = triangle_mesh(args[0], "m1");
  if (m1 == nullptr) return nullptr;
  const coal::Transform3s* tf1 = transform_of(args[1], "tf1");
  if (tf1 == nullptr) return nullptr;
  const auto* m2 = triangle_mesh(args[2], "m2");
  if (m2 == nullptr) return nullptr;
  const coal::Transform3s* tf2 = transform_of(args[3], "tf2");
  if (tf2 == nullptr) return nullptr;
  const double margin = PyFloat_AsDouble(args[4]);
  if (margin == -1.0 && PyErr_Occurred()) return nullptr;
  if (!std::isfinite(margin)) {
    PyErr_SetString(PyExc_ValueError, "margin must be finite");
    return nullptr;
  }
  const long long keep = PyLong_AsLongLong(args[5]);
  if (keep == -1 && PyErr_Occurred()) return nullptr;
  if (keep < 1) {
    PyErr_Format(PyExc_ValueError, "keep must be at least 1, got %lld", keep);
    return nullptr;
  }
  std::vector<mesh_contacts::TriangleContact> found;
  try {
    mesh_contacts::collect(*m1, *tf1, *m2, *tf2, margin, static_cast<std::size_t>(keep), found);
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
  const npy_intp count = static_cast<npy_intp>(found.size());
  const npy_intp pair_shape[2] = {count, 2};
  PyObject* triangles = PyArray_SimpleNew(2, pair_shape, NPY_INT64);
  PyObject* depth = PyArray_SimpleNew(1, &count, NPY_DOUBLE);
  PyObject* normal = rows_of(found, [](const auto& c) -> const coal::Vec3s& { return c.normal; });
  PyObject* p1 = rows_of(found, [](const auto& c) -> const coal::Vec3s& { return c.p1; });
  PyObject* p2 = rows_of(found, [](const auto& c) -> const coal::Vec3s& { return c.p2; });
  if (triangles == nullptr || depth == nullptr || normal == nullptr || p1 == nullptr ||
      p2 == nullptr) {
    Py_XDECREF(triangles);
    Py_XDECREF(depth);
    Py_XDECREF(normal);
    Py_XDECREF(p1);
    Py_XDECREF(p2);
    return nullptr;
  }
  auto* pairs = static_cast<npy_int64*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(triangles)));
  auto* depths = static_cast<double*>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(depth)));
  for (const auto& c : found) {
    *pairs++ = c.b1;
    *pairs++ = c.b2;
    *depths++ = c.depth;
  }
  return Py_BuildValue("(NNNNN)", triangles, depth, normal, p1, p2);
}

// ---------------------------------------------------------------- contact records

// The normal and position of each entry of `contacts` (a list) that is a coal.Contact, into
// out[k, 0] and out[k, 1] (out a writable C-contiguous float64 array (len(contacts), 2, 3)).
// Returns the k whose entry is not a coal.Contact (left as they were, for the caller to fill).
PyObject* contact_normals_positions(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("contact_normals_positions", nargs, 2)) return nullptr;
  if (!PyList_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "contacts must be a list");
    return nullptr;
  }
  PyObject* contacts = args[0];
  const Py_ssize_t k = PyList_GET_SIZE(contacts);
  const Py_ssize_t shape[3] = {k, 2, 3};
  Buffer out;
  if (!out.take(args[1], 3, shape, true)) {
    refuse("out must be a writable C-contiguous float64 array of shape (len(contacts), 2, 3)");
    return nullptr;
  }
  PyObject* others = PyList_New(0);
  if (others == nullptr) return nullptr;
  double* data = out.data();
  const auto& converters = boost::python::converter::registered<coal::Contact>::converters;
  for (Py_ssize_t i = 0; i < k; ++i) {
    PyObject* entry = PyList_GET_ITEM(contacts, i);
    const coal::Contact* c = static_cast<const coal::Contact*>(
        boost::python::converter::get_lvalue_from_python(entry, converters));
    if (c == nullptr) {
      PyErr_Clear();
      PyObject* at = PyLong_FromSsize_t(i);
      const int failed = at == nullptr || PyList_Append(others, at) < 0;
      Py_XDECREF(at);
      if (failed) {
        Py_DECREF(others);
        return nullptr;
      }
      continue;
    }
    double* row = data + 6 * i;
    for (int j = 0; j < 3; ++j) {
      row[j] = c->normal[j];
      row[3 + j] = c->pos[j];
    }
  }
  return others;
}

// ---------------------------------------------------------------- a small broadphase tier

// The leaves of a few bodies with their bounding spheres, for the one-moved-body query of a
// small scene (spatialcontact.scene.broadphase): the leaves of a body that moved against
// those of the others (and against each other, on request) by bounding spheres in plain
// floats, then, for each pair that may touch, the leaves' own pair query
// `shapes[i].iscollided(shapes[j])`, i < j. Leaves are in body order, so that i < j is the
// earlier body's leaf first. Every Python object given is held.
struct SphereTier {
  PyObject_HEAD
  PyObject* held[3];  // tfs, shapes, items (tuples)
  std::vector<const coal::Transform3s*> tf;
  std::vector<Vec> local;
  std::vector<double> radius;
  std::vector<Py_ssize_t> start;  // start[b] .. start[b + 1]: the leaves of body b
};

// The tier takes part in garbage collection: a shape may refer to the scene that holds it.
int sphere_tier_traverse(PyObject* self, visitproc visit, void* arg) {
  for (PyObject* obj : reinterpret_cast<SphereTier*>(self)->held) Py_VISIT(obj);
  return 0;
}

int sphere_tier_clear(PyObject* self) {
  for (PyObject*& obj : reinterpret_cast<SphereTier*>(self)->held) Py_CLEAR(obj);
  return 0;
}

void sphere_tier_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  SphereTier* tier = reinterpret_cast<SphereTier*>(self);
  for (PyObject*& obj : tier->held) Py_CLEAR(obj);
  tier->tf.~vector();
  tier->local.~vector();
  tier->radius.~vector();
  tier->start.~vector();
  Py_TYPE(self)->tp_free(self);
}

PyObject* sphere_tier_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) {
    PyErr_SetString(PyExc_TypeError, "SphereTier takes no keyword arguments");
    return nullptr;
  }
  if (!arity("SphereTier", PyTuple_GET_SIZE(args), 6)) return nullptr;
  PyObject* const* a = &PyTuple_GET_ITEM(args, 0);
  const char* names[3] = {"tfs", "shapes", "items"};
  const int tuples[3] = {0, 4, 5};
  for (int k = 0; k < 3; ++k) {
    if (!PyTuple_Check(a[tuples[k]])) {
      PyErr_Format(PyExc_TypeError, "%s must be a tuple", names[k]);
      return nullptr;
    }
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(a[0]);
  if (PyTuple_GET_SIZE(a[4]) != n || PyTuple_GET_SIZE(a[5]) != n) {
    refuse("tfs, shapes and items must have one entry per leaf");
    return nullptr;
  }
  const Py_ssize_t centre_shape[2] = {n, 3}, radius_shape[1] = {n};
  Buffer centres, radii;
  if (!centres.take(a[1], 2, centre_shape, false)) {
    refuse("centres must be a float64 array of shape (n, 3), n leaves");
    return nullptr;
  }
  if (!radii.take(a[2], 1, radius_shape, false)) {
    refuse("radii must be a float64 array of shape (n,), n leaves");
    return nullptr;
  }
  std::vector<Py_ssize_t> body;
  if (!int_tuple(a[3], n > 0 ? n : 1, "bodies", body)) return nullptr;
  if (static_cast<Py_ssize_t>(body.size()) != n) {
    refuse("bodies must have one entry per leaf");
    return nullptr;
  }
  std::vector<const coal::Transform3s*> tf(static_cast<size_t>(n));
  std::vector<Vec> local(static_cast<size_t>(n));
  std::vector<double> radius(static_cast<size_t>(n));
  std::vector<Py_ssize_t> start(1, 0);
  for (Py_ssize_t i = 0; i < n; ++i) {
    tf[i] = transform_of(PyTuple_GET_ITEM(a[0], i), "tfs[i]");
    if (tf[i] == nullptr) return nullptr;
    local[i] = Vec{centres.at(i, 0), centres.at(i, 1), centres.at(i, 2)};
    radius[i] = radii.at1(i);
    if (!std::isfinite(local[i].x) || !std::isfinite(local[i].y) || !std::isfinite(local[i].z) ||
        !(radius[i] >= 0.0)) {
      refuse("centres must be finite and radii at least 0 (or inf)");
      return nullptr;
    }
    if (i == 0 ? body[i] != 0 : body[i] != body[i - 1] && body[i] != body[i - 1] + 1) {
      refuse("bodies must number the leaves' bodies 0, 1, ... in order");
      return nullptr;
    }
    if (i > 0 && body[i] != body[i - 1]) start.push_back(i);
  }
  start.push_back(n);
  if (n == 0) start.assign(1, 0);
  SphereTier* tier = reinterpret_cast<SphereTier*>(type->tp_alloc(type, 0));
  if (tier == nullptr) return nullptr;
  new (&tier->tf) std::vector<const coal::Transform3s*>(std::move(tf));
  new (&tier->local) std::vector<Vec>(std::move(local));
  new (&tier->radius) std::vector<double>(std::move(radius));
  new (&tier->start) std::vector<Py_ssize_t>(std::move(start));
  for (int k = 0; k < 3; ++k) {
    Py_INCREF(a[tuples[k]]);
    tier->held[k] = a[tuples[k]];
  }
  return reinterpret_cast<PyObject*>(tier);
}

PyObject* sphere_tier_touching(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("touching", nargs, 2)) return nullptr;
  SphereTier* tier = reinterpret_cast<SphereTier*>(self);
  const Py_ssize_t bodies = static_cast<Py_ssize_t>(tier->start.size()) - 1;
  const Py_ssize_t moved = PyLong_AsSsize_t(args[0]);
  if (moved == -1 && PyErr_Occurred()) return nullptr;
  if (moved < 0 || moved >= bodies) {
    PyErr_Format(PyExc_TypeError, "body must be an int from 0 to %zd", bodies - 1);
    return nullptr;
  }
  const int inside = PyObject_IsTrue(args[1]);
  if (inside < 0) return nullptr;
  if (tier->held[1] == nullptr) {
    PyErr_SetString(PyExc_TypeError, "the tier was cleared");
    return nullptr;
  }
  const Py_ssize_t n = tier->start.back(), first = tier->start[moved],
                   last = tier->start[moved + 1];
  std::vector<Vec> centre(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    const coal::Vec3s p = tier->tf[i]->transform(
        coal::Vec3s(tier->local[i].x, tier->local[i].y, tier->local[i].z));
    centre[i] = Vec{p[0], p[1], p[2]};
  }
  PyObject* found = PyList_New(0);
  if (found == nullptr) return nullptr;
  Py_INCREF(self);  // a pair query may drop the caller's reference to this tier
  static PyObject* method = PyUnicode_InternFromString("iscollided");
  bool failed = method == nullptr;
  PyObject* shapes = tier->held[1];
  PyObject* items = tier->held[2];
  auto visit = [&](Py_ssize_t i, Py_ssize_t j) {  // i < j
    const double r = tier->radius[i] + tier->radius[j];
    if (r != INFINITY) {
      const double dx = centre[i].x - centre[j].x, dy = centre[i].y - centre[j].y,
                   dz = centre[i].z - centre[j].z;
      const double reach = r * (1.0 + 1e-9);
      if (!(dx * dx + dy * dy + dz * dz <= reach * reach)) return;
    }
    // call[0] is free for the callee to use (PY_VECTORCALL_ARGUMENTS_OFFSET).
    PyObject* call[3] = {nullptr, PyTuple_GET_ITEM(shapes, i), PyTuple_GET_ITEM(shapes, j)};
    PyObject* answer =
        PyObject_VectorcallMethod(method, call + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    const int touch = answer == nullptr ? -1 : PyObject_IsTrue(answer);
    Py_XDECREF(answer);
    if (touch < 0) {
      failed = true;
    } else if (touch) {
      PyObject* pair = PyTuple_Pack(2, PyTuple_GET_ITEM(items, i), PyTuple_GET_ITEM(items, j));
      if (pair == nullptr || PyList_Append(found, pair) < 0) failed = true;
      Py_XDECREF(pair);
    }
  };
  for (Py_ssize_t a = first; a < last && !failed; ++a) {
    for (Py_ssize_t b = 0; b < first && !failed; ++b) visit(b, a);
    for (Py_ssize_t b = last; b < n && !failed; ++b) visit(a, b);
    for (Py_ssize_t b = a + 1; inside && b < last && !failed; ++b) visit(a, b);
  }
  Py_DECREF(self);
  if (failed) {
    Py_DECREF(found);
    return nullptr;
  }
  return found;
}

PyMethodDef kSphereTierMethods[] = {
    {"touching",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(sphere_tier_touching)),
     METH_FASTCALL,
     "touching(body, inside) -> [(items[i], items[j])]: the pairs of leaves i < j, one of them "
     "of body number `body` (both, with `inside`, else one of another body), whose bounding "
     "spheres meet and whose shapes answer shapes[i].iscollided(shapes[j])."},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject make_sphere_tier_type() {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "spatialcontact._native.SphereTier";
  t.tp_basicsize = sizeof(SphereTier);
  t.tp_dealloc = sphere_tier_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC;
  t.tp_traverse = sphere_tier_traverse;
  t.tp_clear = sphere_tier_clear;
  t.tp_doc =
      "SphereTier(tfs, centres, radii, bodies, shapes, items): leaves k (Transform3s tfs[k], "
      "bounding-sphere centre centres[k] in its frame and radius radii[k], inf for unbounded) "
      "of the bodies numbered bodies[k] = 0, 1, ... in order; see touching().";
  t.tp_methods = kSphereTierMethods;
  t.tp_new = sphere_tier_new;
  return t;
}

PyTypeObject kSphereTierType = make_sphere_tier_type();

// For each axis of tf1's frame, the axis of tf2's frame parallel to it (both rotations'
// columns, to `tolerance`), or None when the frames are not aligned: the rule of
// spatialcontact._coal.quirks for boxes, in the same order of operations.
PyObject* axis_map(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("axis_map", nargs, 3)) return nullptr;
  const coal::Transform3s* tf1 = transform_of(args[0], "tf1");
  if (tf1 == nullptr) return nullptr;
  const coal::Transform3s* tf2 = transform_of(args[1], "tf2");
  if (tf2 == nullptr) return nullptr;
  const double tolerance = PyFloat_AsDouble(args[2]);
  if (tolerance == -1.0 && PyErr_Occurred()) return nullptr;
  const coal::Matrix3s& r1 = tf1->getRotation();
  const coal::Matrix3s& r2 = tf2->getRotation();
  long axis[3];
  for (int i = 0; i < 3; ++i) {
    const double a0 = r1(0, i), a1 = r1(1, i), a2 = r1(2, i);
    double along[3];
    for (int j = 0; j < 3; ++j) along[j] = std::fabs(a0 * r2(0, j) + a1 * r2(1, j) + a2 * r2(2, j));
    axis[i] = -1;
    for (int j = 0; j < 3 && axis[i] < 0; ++j) {
      const double other1 = along[(j + 1) % 3], other2 = along[(j + 2) % 3];
      if (std::fabs(along[j] - 1.0) <= tolerance && other1 <= tolerance && other2 <= tolerance) {
        axis[i] = j;
      }
    }
    if (axis[i] < 0) Py_RETURN_NONE;  // most pairs leave here, after one column
  }
  if (axis[0] == axis[1] || axis[1] == axis[2] || axis[0] == axis[2]) Py_RETURN_NONE;
  return Py_BuildValue("(lll)", axis[0], axis[1], axis[2]);
}

PyMethodDef kMethods[] = {
    {"is_rigid", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(is_rigid)),
     METH_FASTCALL,
     "is_rigid(M) -> bool: M is a float64 (4, 4) array holding a rigid transform within range."},
    {"first_not_rigid",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(first_not_rigid)),
     METH_FASTCALL,
     "first_not_rigid(P) -> int: index of the first pose of the float64 (n, 4, 4) array P "
     "that is not rigid, or -1."},
    {"first_unsound",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(first_unsound)),
     METH_FASTCALL,
     "first_unsound(P) -> int: index of the first pose of P (n, 4, 4) with a non-finite entry, "
     "a translation out of range or a wrong last row, or -1."},
    {"place", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(place)),
     METH_FASTCALL,
     "place(tf, M, keep, parent_world) -> bool: when M is a rigid float64 (4, 4) array, copy "
     "it into keep and set tf to M (or parent_world @ M); else change nothing, return False."},
    {"place_product",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(place_product)),
     METH_FASTCALL,
     "place_product(tf, A, B, C): set tf to A @ B @ C, float64 (4, 4) rigid poses the caller "
     "computed (None for the identity); they are not checked."},
    {"place_all", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(place_all)),
     METH_FASTCALL,
     "place_all(tfs, world, P, out): out[k] = world @ P[k] (P[k] when world is None), and "
     "tfs[k] (a Transform3s, or None to skip) set to it; poses are not checked."},
    {"place_objects",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(place_objects)),
     METH_FASTCALL,
     "place_objects(objects, tfs): give each coal.CollisionObject of the tuple objects the "
     "transform of the same place in the tuple tfs, and compute its world box."},
    {"chain_poses", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(chain_poses)),
     METH_FASTCALL,
     "chain_poses(values, R, A, B, t, slide, parents, out): out[n, 0] = I and out[n, k + 1] = "
     "out[n, parents[k]] @ L, L the joint transform [R + sin(v) A + (1 - cos(v)) B, t + v "
     "slide] of v = values[n, k] (see spatialcontact.robot.kinematics)."},
    {"motion_bounds",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(motion_bounds)),
     METH_FASTCALL,
     "motion_bounds(T, body, centre, pair_a, pair_b, pair_radius, radius, rotations, centres, "
     "half) -> (s, pairs + parts * boxes): at each sample T[s] (bodies, 4, 4), the sphere gaps "
     "of the part pairs, then of each part and each box (rotations None: no boxes)."},
    {"box_separations",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(box_separations)),
     METH_FASTCALL,
     "box_separations(T, samples, parts, boxes, body, corners, rotations, centres, half) -> "
     "(n,): for each (samples[k], parts[k], boxes[k]), the largest gap along an axis of the "
     "box between it and the part's corners placed by T[sample, body[part]]."},
    {"open_stretches",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(open_stretches)),
     METH_FASTCALL,
     "open_stretches(value, span, halves) -> bool (m, n, k): stretch j of key k of motion m is "
     "open unless value[m, j] + value[m, j + 1] > span[m, j] or the same holds at the ends of "
     "its half of the motion against halves[m, half]."},
    {"compose_all", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(compose_all)),
     METH_FASTCALL,
     "compose_all(A, B, out): out[i, j] = A[i] @ B[j] for rigid poses A (n, 4, 4) and "
     "B (m, 4, 4), out (n, m, 4, 4); the product that place and place_all use."},
    {"closed_form", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(closed_form)),
     METH_FASTCALL,
     "closed_form(kind1, kind2, swap, sizes1, sizes2, tf1, tf2) -> (d, p1, p2, normal): the "
     "closed form of a primitive pair (see spatialcontact._closed_form_scalar); p1, p2 and "
     "normal new float64 arrays of shape (3,)."},
    {"near_spheres", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(near_spheres)),
     METH_FASTCALL,
     "near_spheres(ca, ra, cb, rb, cutoff) -> [(i, j)]: the pairs of spheres (centres (n, 3) "
     "and (m, 3), radii (n,) and (m,)) whose gap is at most cutoff, row by row."},
    {"nearest_order",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(nearest_order)),
     METH_FASTCALL,
     "nearest_order(ca, ra, cb, rb, cutoff) -> (gaps, i, j): the pairs of near_spheres and "
     "their gaps as three arrays, smallest gap first (ties in row order)."},
    {"collide_rows", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(collide_rows)),
     METH_FASTCALL,
     "collide_rows(kind, params, rows, check, limit) -> (hit, bad): the yes/no of two leaves "
     "for each row (a (4, 4) pose or a (3,) translation of the moving leaf) of rows; stop at "
     "the first row that is not a rigid pose (with check; without, a pose with non-finite "
     "entries, out of range or a wrong last row), or not a finite translation within limit, "
     "and give its index as bad (else -1). hit is a new bool array, False from bad on. "
     "See spatialcontact.batch._fast.DirectCollide."},
    {"axis_map", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(axis_map)),
     METH_FASTCALL,
     "axis_map(tf1, tf2, tolerance) -> (i, j, k) or None: for each axis of tf1's frame, the "
     "axis of tf2's frame parallel to it, or None when the frames are not aligned."},
    {"nearest_pair",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(nearest_pair)),
     METH_FASTCALL,
     "nearest_pair(ca, ra, cb, rb, cutoff) -> (i, j) or None: the first pair of nearest_order "
     "(the smallest gap, the first in row order on a tie), without sorting the others."},
    {"mesh_contacts",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(mesh_pair_contacts)),
     METH_FASTCALL,
     "mesh_contacts(m1, tf1, m2, tf2, margin, keep) -> (triangles, depth, normal, p1, p2): "
     "the keep deepest triangle pairs of two meshes that overlap or lie within margin."},
    {"contact_normals_positions",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(contact_normals_positions)),
     METH_FASTCALL,
     "contact_normals_positions(contacts, out) -> [k]: out[k] = (normal, pos) of "
     "contacts[k] where it is a coal.Contact; the k of the other entries."},
    {"world_point", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(world_point)),
     METH_FASTCALL,
     "world_point(tf, local) -> (x, y, z): the point local (float64 (3,), None for the origin) "
     "of the frame tf, in the world frame."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "spatialcontact._native",
                       "Placement of poses into Coal transforms, compiled against Coal.", -1,
                       kMethods};

bool add_type(PyObject* module, const char* name, PyTypeObject* type) {
  if (PyType_Ready(type) < 0) return false;
  Py_INCREF(type);
  if (PyModule_AddObject(module, name, reinterpret_cast<PyObject*>(type)) < 0) {
    Py_DECREF(type);
    return false;
  }
  return true;
}

}  // namespace

PyMODINIT_FUNC PyInit__native(void) {
  import_array();
  // Coal's binding registers its classes' converters; an installed Coal other than the one
  // these headers describe could lay its objects out differently, so it is refused.
  PyObject* coal_module = PyImport_ImportModule("coal");
  if (coal_module == nullptr) return nullptr;
  PyObject* version = PyObject_GetAttrString(coal_module, "__version__");
  Py_DECREF(coal_module);
  if (version == nullptr) return nullptr;
  const int same = PyUnicode_Check(version) && PyUnicode_CompareWithASCIIString(version, COAL_VERSION) == 0;
  if (!same) {
    PyErr_Format(PyExc_ImportError,
                 "spatialcontact was compiled against Coal " COAL_VERSION
                 " but Coal %R is installed: reinstall spatialcontact (pip install --force-reinstall "
                 "--no-binary spatialcontact spatialcontact) or install coal==" COAL_VERSION,
                 version);
    Py_DECREF(version);
    return nullptr;
  }
  Py_DECREF(version);
  PyObject* module = PyModule_Create(&kModule);
  if (module == nullptr) return nullptr;
  if (PyModule_AddObject(module, "ROTATION_TOLERANCE", PyFloat_FromDouble(kRotationTolerance)) <
          0 ||
      PyModule_AddObject(module, "MAX_TRANSLATION", PyFloat_FromDouble(kMaxTranslation)) < 0 ||
      PyModule_AddStringConstant(module, "COAL_VERSION", COAL_VERSION) < 0 ||
      !add_type(module, "CollideCall", &kCollideCallType) ||
      !add_type(module, "DistanceCall", &kDistanceCallType) ||
      !add_type(module, "SphereTier", &kSphereTierType)) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
