// The contacts of two triangle meshes, triangle pair by triangle pair, with exact depths.
//
// Coal answers a mesh pair's overlap with GJK/EPA on every pair of crossing triangles, in
// about 2 µs a pair, and its depths depend on the argument order (EPA overshoots: -1.0 in one
// order where -0.1 is right for two crossing triangles). Two triangles are convex polytopes:
// the shortest translation that separates them is the smallest overlap of their projections
// on the normals of the facets of their Minkowski difference. Those facets have the
// triangles' normals, the cross products of an edge of one with an edge of the other, and,
// for coplanar triangles, the in-plane normals of the edges. Every other direction overlaps
// at least as much, so the smallest overlap over these directions is the exact depth, in
// either argument order.
//
// The witness points are where the triangles touch once the second is moved by the depth
// (and 1e-9 m more) along the normal: Coal's closest points of two disjoint triangles. They
// are found for the contacts kept only (the deepest few).
//
// The pairs are found by walking the two meshes' bounding-volume trees as Coal's own
// collision does (the same OBB tests, with the security margin when there is one, the larger
// volume opened first).

#ifndef SPATIALCONTACT_MESH_CONTACTS_HPP
#define SPATIALCONTACT_MESH_CONTACTS_HPP

#include <coal/BV/OBBRSS.h>
#include <coal/BVH/BVH_model.h>
#include <coal/collision_data.h>
#include <coal/internal/intersect.h>
#include <coal/math/transform.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace mesh_contacts {

using coal::Vec3s;

// One contact of a triangle pair: signed depth (negative on overlap, the distance within a
// security margin), unit normal from the first triangle to the second, witness points on
// each (once `placed`), world frame; p2 - p1 == depth * normal.
struct TriangleContact {
  int b1;
  int b2;
  double depth;
  Vec3s normal;
  Vec3s p1;
  Vec3s p2;
  bool placed;
};

// Directions whose sine of the angle between the crossed edges is below this are skipped:
// nearly parallel edges give a direction too noisy to project on, and their facet is one of
// the others'.
constexpr double kParallel = 1e-7;

// How far past touching the second triangle is moved to find the witness points (metres).
constexpr double kPast = 1e-9;

// The smallest overlap of the projections of `A` and `B` over the candidate directions, and
// its unit direction `n` (the way `B` moves to separate). Negative when a direction separates
// them (the first found). +inf when no direction is defined (both triangles degenerate and
// parallel): no contact is reported then.
inline double smallest_overlap(const Vec3s A[3], const Vec3s B[3], Vec3s& n) {
  const Vec3s ea[3] = {A[1] - A[0], A[2] - A[1], A[0] - A[2]};
  const Vec3s eb[3] = {B[1] - B[0], B[2] - B[1], B[0] - B[2]};
  const Vec3s na = ea[0].cross(ea[1]);
  const Vec3s nb = eb[0].cross(eb[1]);
  double best = std::numeric_limits<double>::infinity();
  auto test = [&](const Vec3s& u, double scale2) -> bool {
    const double len2 = u.squaredNorm();
    if (!(len2 > kParallel * kParallel * scale2)) return true;  // undefined: skipped
    const double inv = 1.0 / std::sqrt(len2);
    double amin = u.dot(A[0]), amax = amin, bmin = u.dot(B[0]), bmax = bmin;
    for (int k = 1; k < 3; ++k) {
      const double a = u.dot(A[k]), b = u.dot(B[k]);
      amin = std::min(amin, a);
      amax = std::max(amax, a);
      bmin = std::min(bmin, b);
      bmax = std::max(bmax, b);
    }
    const double forward = (amax - bmin) * inv;   // B moved along +u
    const double backward = (bmax - amin) * inv;  // B moved along -u
    if (forward < 0.0 || backward < 0.0) {
      best = std::min(forward, backward);
      return false;
    }
    if (forward < best) {
      best = forward;
      n = u * inv;
    }
    if (backward < best) {
      best = backward;
      n = -u * inv;
    }
    return true;
  };
  const double la[3] = {ea[0].squaredNorm(), ea[1].squaredNorm(), ea[2].squaredNorm()};
  const double lb[3] = {eb[0].squaredNorm(), eb[1].squaredNorm(), eb[2].squaredNorm()};
  if (!test(na, la[0] * la[1]) || !test(nb, lb[0] * lb[1])) return best;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (!test(ea[i].cross(eb[j]), la[i] * lb[j])) return best;
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (!test(na.cross(ea[i]), na.squaredNorm() * la[i])) return best;
    if (!test(nb.cross(eb[i]), nb.squaredNorm() * lb[i])) return best;
  }
  return best;
}

// The depth and normal of triangles `A` and `B` (world frame) when they overlap, touch or
// lie within `margin` of each other (with the witness points then when they are apart);
// false otherwise.
inline bool triangle_contact(const Vec3s A[3], const Vec3s B[3], double margin,
                             TriangleContact& out) {
  Vec3s n;
  const double overlap = smallest_overlap(A, B, n);
  if (std::isinf(overlap)) return false;
  if (overlap >= 0.0) {
    if (-overlap > margin) return false;
    out.depth = -overlap;
    out.normal = n;
    out.placed = false;
    return true;
  }
  if (!(margin > 0.0)) return false;
  Vec3s P, Q;
  const double d = std::sqrt(coal::TriangleDistance::sqrTriDistance(A, B, P, Q));
  if (d > margin || !(d > 0.0)) return false;  // d = 0: touching, found by the overlap above
  out.depth = d;
  out.normal = (Q - P) / d;
  out.p1 = P;
  out.p2 = Q;
  out.placed = true;
  return true;
}

// The witness points of overlapping triangles `A` and `B` whose depth and normal `c` holds:
// the closest points once `B` is moved by the depth, and kPast more, along the normal.
inline void place_witnesses(const Vec3s A[3], const Vec3s B[3], TriangleContact& c) {
  const double shift = kPast - c.depth;
  const Vec3s moved[3] = {B[0] + shift * c.normal, B[1] + shift * c.normal,
                          B[2] + shift * c.normal};
  Vec3s P, Q;
  coal::TriangleDistance::sqrTriDistance(A, moved, P, Q);
  c.p1 = P;
  c.p2 = Q - shift * c.normal;
  c.placed = true;
}

// Deepest first; the triangles' indices order equal depths.
inline bool deeper(const TriangleContact& x, const TriangleContact& y) {
  if (x.depth != y.depth) return x.depth < y.depth;
  if (x.b1 != y.b1) return x.b1 < y.b1;
  return x.b2 < y.b2;
}

// The world vertices of triangle `t` of `model` placed at `tf`.
inline void world_triangle(const coal::BVHModel<coal::OBBRSS>& model,
                           const coal::Transform3s& tf, int t, Vec3s out[3]) {
  const coal::Triangle& tri = (*model.tri_indices)[static_cast<std::size_t>(t)];
  const std::vector<Vec3s>& vertices = *model.vertices;
  for (int k = 0; k < 3; ++k) out[k] = tf.transform(vertices[tri[k]]);
}

// The `keep` deepest triangle pairs of `m1` at `tf1` and `m2` at `tf2` that overlap, touch
// or lie within `margin` (any sign: a negative margin keeps the pairs deeper than it),
// deepest first, with their witness points, into `out`.
inline void collect(const coal::BVHModel<coal::OBBRSS>& m1, const coal::Transform3s& tf1,
                    const coal::BVHModel<coal::OBBRSS>& m2, const coal::Transform3s& tf2,
                    double margin, std::size_t keep, std::vector<TriangleContact>& out) {
  if (m1.getNumBVs() == 0 || m2.getNumBVs() == 0 || keep == 0) return;
  const coal::Matrix3s R = tf1.getRotation().transpose() * tf2.getRotation();
  const Vec3s T = tf1.getRotation().transpose() * (tf2.getTranslation() - tf1.getTranslation());
  coal::CollisionRequest request;
  request.security_margin = std::max(margin, 0.0);
  std::vector<std::pair<unsigned int, unsigned int>> stack{{0u, 0u}};
  Vec3s A[3], B[3];
  TriangleContact found;
  while (!stack.empty()) {
    const auto [i, j] = stack.back();
    stack.pop_back();
    const coal::BVNode<coal::OBBRSS>& n1 = m1.getBV(i);
    const coal::BVNode<coal::OBBRSS>& n2 = m2.getBV(j);
    double lower = 0.0;  // the margin's test also bounds the distance (unused): 10% slower
    if (!(margin > 0.0 ? coal::overlap(R, T, n2.bv, n1.bv, request, lower)
                       : coal::overlap(R, T, n2.bv.obb, n1.bv.obb))) {
      continue;
    }
    const bool leaf1 = n1.isLeaf(), leaf2 = n2.isLeaf();
    if (leaf1 && leaf2) {
      world_triangle(m1, tf1, n1.primitiveId(), A);
      world_triangle(m2, tf2, n2.primitiveId(), B);
      if (triangle_contact(A, B, margin, found)) {
        found.b1 = n1.primitiveId();
        found.b2 = n2.primitiveId();
        out.push_back(found);
      }
    } else if (leaf2 || (!leaf1 && n1.bv.size() > n2.bv.size())) {
      stack.emplace_back(static_cast<unsigned int>(n1.rightChild()), j);
      stack.emplace_back(static_cast<unsigned int>(n1.leftChild()), j);
    } else {
      stack.emplace_back(i, static_cast<unsigned int>(n2.rightChild()));
      stack.emplace_back(i, static_cast<unsigned int>(n2.leftChild()));
    }
  }
  if (out.size() > keep) {
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                      deeper);
    out.resize(keep);
  } else {
    std::sort(out.begin(), out.end(), deeper);
  }
  for (TriangleContact& c : out) {
    if (c.placed) continue;
    world_triangle(m1, tf1, c.b1, A);
    world_triangle(m2, tf2, c.b2, B);
    place_witnesses(A, B, c);
  }
}

}  // namespace mesh_contacts

#endif  // SPATIALCONTACT_MESH_CONTACTS_HPP
