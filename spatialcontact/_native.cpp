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

#include <boost/python/converter/from_python.hpp>
#include <boost/python/converter/registered.hpp>
#include <coal/config.hh>
#include <coal/math/transform.h>

#include <cmath>
#include <cstring>

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

  // Entry (i, j) of a 2-d buffer, or (n, i, j) of a 3-d one.
  double at(Py_ssize_t i, Py_ssize_t j) const {
    return *reinterpret_cast<const double*>(static_cast<const char*>(view_.buf) +
                                            i * view_.strides[0] + j * view_.strides[1]);
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
  const void* data_bytes() const { return view_.buf; }
  Py_ssize_t stride0() const { return view_.strides[0]; }

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

// ---------------------------------------------------------------- poses

// True when `v` is a rigid transform: rows 0 and 1 of the rotation orthonormal and row 2 their
// cross product (exactly the rotations), the translation within range, last row 0 0 0 1.
bool rigid(const Pose v) {
  const double a = v[0], b = v[1], c = v[2], x = v[3];
  const double d = v[4], e = v[5], f = v[6], y = v[7];
  const double g = v[8], h = v[9], i = v[10], z = v[11];
  const double tol = kRotationTolerance, far = kMaxTranslation;
  return std::fabs(a * a + b * b + c * c - 1.0) <= tol &&
         std::fabs(d * d + e * e + f * f - 1.0) <= tol && std::fabs(a * d + b * e + c * f) <= tol &&
         std::fabs(b * f - c * e - g) <= tol && std::fabs(c * d - a * f - h) <= tol &&
         std::fabs(a * e - b * d - i) <= tol && std::fabs(x) <= far && std::fabs(y) <= far &&
         std::fabs(z) <= far && v[12] == 0.0 && v[13] == 0.0 && v[14] == 0.0 && v[15] == 1.0;
}

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

PyObject* first_not_rigid(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!arity("first_not_rigid", nargs, 1)) return nullptr;
  const Py_ssize_t shape[3] = {-1, 4, 4};
  Buffer P;
  if (!P.take(args[0], 3, shape, false)) {
    PyErr_SetString(PyExc_TypeError, "poses must be a float64 array of shape (n, 4, 4)");
    return nullptr;
  }
  Pose v;
  for (Py_ssize_t n = 0; n < P.length(); ++n) {
    P.read(n, v);
    if (!rigid(v)) return PyLong_FromSsize_t(n);
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
    const char* base = static_cast<const char*>(local.data_bytes());
    coal::Vec3s q;
    for (int k = 0; k < 3; ++k) q[k] = *reinterpret_cast<const double*>(base + k * local.stride0());
    p = tf->transform(q);
  }
  return Py_BuildValue("(ddd)", p[0], p[1], p[2]);
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
    {"place", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(place)),
     METH_FASTCALL,
     "place(tf, M, keep, parent_world) -> bool: when M is a rigid float64 (4, 4) array, copy "
     "it into keep and set tf to M (or parent_world @ M); else change nothing, return False."},
    {"place_all", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(place_all)),
     METH_FASTCALL,
     "place_all(tfs, world, P, out): out[k] = world @ P[k] (P[k] when world is None), and "
     "tfs[k] (a Transform3s, or None to skip) set to it; poses are not checked."},
    {"compose_all", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(compose_all)),
     METH_FASTCALL,
     "compose_all(A, B, out): out[i, j] = A[i] @ B[j] for rigid poses A (n, 4, 4) and "
     "B (m, 4, 4), out (n, m, 4, 4); the product that place and place_all use."},
    {"world_point", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(world_point)),
     METH_FASTCALL,
     "world_point(tf, local) -> (x, y, z): the point local (float64 (3,), None for the origin) "
     "of the frame tf, in the world frame."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "spatialcontact._native",
                       "Placement of poses into Coal transforms, compiled against Coal.", -1,
                       kMethods};

}  // namespace

PyMODINIT_FUNC PyInit__native(void) {
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
      PyModule_AddStringConstant(module, "COAL_VERSION", COAL_VERSION) < 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
