#pragma once
// Permutations of axes, stored as Dims.
//
// Convention (the one Transpose uses everywhere in Janus, ONNX's `perm` attribute):
//     output axis j of transpose(x, perm) is input axis perm[j]      out.shape[j] = in.shape[perm[j]]
// so `permute(values, perm)[j] = values[perm[j]]` turns any per-input-axis list (extents, strides, quantization axis
// tables) into the per-output-axis list. The inverse maps back: inverse(perm)[perm[j]] = j, i.e. input axis i is
// output axis inverse(perm)[i].
//
// Composition is written in the order the transposes are APPLIED:
//     compose(p, q)[j] = p[q[j]]        transpose(transpose(x, p), q) == transpose(x, compose(p, q))
// (output axis j of the second transpose is axis q[j] of the intermediate, which is input axis p[q[j]]).
// Hence permute(permute(v, p), q) == permute(v, compose(p, q)) and compose(p, inverse(p)) == identity.
//
// Removing axes (seed A2, "keep_dims=false breaks the inverse permutation"): a reduction with keep_dims=false, a
// Squeeze or an index-select deletes axes. A deleted axis no longer belongs to the old coordinate system: every
// axis after it is renumbered, in the input AND in the output of the transpose. permutation_after_removing()
// renumbers the permutation; inverse_after_removing() REBUILDS the inverse from that renumbered permutation. The
// old inverse must never be reused or "patched" by deleting one entry: its positions are input axes and its
// values are output axes, and both numberings shift. Example, NCHW -> NHWC, perm = [0,2,3,1], inverse [0,3,1,2]:
//     remove input axis 1 (C):  remaining input axes N,H,W = old 0,2,3 -> new 0,1,2;
//                               output axes N,H,W,C keep N,H,W = old 0,1,2 (C, old output axis 3, is gone)
//     permutation_after_removing([0,2,3,1], {1}) = [0,1,2]   (identity: NHW -> NHW)
//     inverse_after_removing    ([0,2,3,1], {1}) = [0,1,2]
// while the old inverse [0,3,1,2] still names output axis 3, which a rank-3 tensor does not have; deleting its
// entry 1 gives [0,1,2] here only by luck: for NHWC -> NCHW ([0,3,1,2]) with H removed the same patch gives [0,3,1]
// (invalid), the rebuilt answer is [0,2,1].
//
// What is promised: make_permutation() validates untrusted permutations and returns Result (rules
// "rank-at-most-6", "perm-entry-in-range", "perm-entry-unique"). Every other function here takes permutations and
// axis sets that are ALREADY valid (from make_permutation / normalize_axes) and checks that only with JANUS_ASSERT
// (tier 2): they are compiler-internal arithmetic, not input parsing.
#include <cstdint>
#include <span>
#include <string>

#include <janus/core/error.hpp>
#include <janus/layout/shape.hpp>

namespace janus {

/// Validate an untrusted permutation: every value of 0..n-1 exactly once (n = its length <= 6). Negative entries
/// are NOT accepted (ONNX Transpose's perm has none). Errors name `what` and "index i".
inline Result<Dims> make_permutation(std::span<const std::int64_t> p, const std::string& what = "perm") {
    if (p.size() > static_cast<std::size_t>(max_rank))
        return make_error(what, "", "rank-at-most-6",
                          "permutation of length " + std::to_string(p.size()) + " exceeds rank 6");
    const auto n = static_cast<std::int64_t>(p.size());
    Dims out;
    bool seen[max_rank] = {};
    for (std::size_t i = 0; i < p.size(); ++i) {
        const std::int64_t v = p[i];
        if (v < 0 || v >= n)
            return make_error(what, "index " + std::to_string(i), "perm-entry-in-range",
                              "entry " + std::to_string(v) + " is outside [0, " + std::to_string(n) +
                                  ") for a permutation of length " + std::to_string(n));
        if (seen[v])
            return make_error(what, "index " + std::to_string(i), "perm-entry-unique",
                              "axis " + std::to_string(v) + " appears twice; each of 0.." + std::to_string(n - 1) +
                                  " must appear exactly once");
        seen[v] = true;
        out.push_back(v);
    }
    return out;
}
inline Result<Dims> make_permutation(const Dims& p, const std::string& what = "perm") {
    return make_permutation(p.span(), what);
}

/// True when `p` holds every value of 0..p.size()-1 exactly once.
inline bool is_permutation(const Dims& p) noexcept {
    bool seen[max_rank] = {};
    for (auto v : p) {
        if (v < 0 || v >= p.size() || seen[v]) return false;
        seen[v] = true;
    }
    return true;
}

/// [0, 1, ..., n-1]
inline Dims identity_permutation(int n) {
    JANUS_ASSERT(n >= 0 && n <= max_rank);
    Dims r;
    for (int i = 0; i < n; ++i) r.push_back(i);
    return r;
}

/// inverse(p)[p[j]] = j: input axis i is output axis inverse(p)[i].
inline Dims inverse(const Dims& p) {
    JANUS_ASSERT(is_permutation(p));
    Dims r = Dims::filled(p.size(), 0);
    for (int j = 0; j < p.size(); ++j) r[static_cast<int>(p[j])] = j;
    return r;
}

/// compose(p, q)[j] = p[q[j]]: transpose by p, then by q (see the header comment).
inline Dims compose(const Dims& p, const Dims& q) {
    JANUS_ASSERT(is_permutation(p) && is_permutation(q) && p.size() == q.size());
    Dims r;
    for (auto v : q) r.push_back(p[static_cast<int>(v)]);
    return r;
}

/// permute(values, perm)[j] = values[perm[j]]: a per-input-axis list seen from the transpose's output.
inline Dims permute(const Dims& values, const Dims& perm) {
    JANUS_ASSERT(is_permutation(perm) && values.size() == perm.size());
    Dims r;
    for (auto v : perm) r.push_back(values[static_cast<int>(v)]);
    return r;
}

namespace detail {
/// True when `axes` is a sorted-or-not list of distinct axes in [0, n).
inline bool is_axis_set(const Dims& axes, int n) noexcept {
    bool seen[max_rank] = {};
    for (auto a : axes) {
        if (a < 0 || a >= n || seen[a]) return false;
        seen[a] = true;
    }
    return true;
}
inline bool contains(const Dims& axes, std::int64_t a) noexcept {
    for (auto b : axes)
        if (b == a) return true;
    return false;
}
}  // namespace detail

/// The output axes of transpose(perm) that carry the removed input axes, ascending: { j : perm[j] in removed }.
/// Use it when the removal happens AFTER the transpose (reduce the transposed tensor over these axes).
inline Dims removed_output_axes(const Dims& perm, const Dims& removed_input_axes) {
    JANUS_ASSERT(is_permutation(perm) && detail::is_axis_set(removed_input_axes, perm.size()));
    Dims r;
    for (int j = 0; j < perm.size(); ++j)
        if (detail::contains(removed_input_axes, perm[j])) r.push_back(j);
    return r;
}

/// Seed A2. `perm` is a transpose over a rank-n input; `removed_input_axes` (distinct, in [0, n), any order) are
/// INPUT axes deleted by a keep_dims=false reduction, a Squeeze or an index-select, applied before the transpose
/// (on those input axes) or after it (on removed_output_axes(perm, removed)); both orders give the same tensor.
/// Returns the permutation of the remaining axes, renumbered densely in both coordinate systems:
///     new input axis  = old input axis  - #(removed input axes below it)
///     new output axis = old output axis - #(removed output axes below it)
/// so reduce-then-transpose(result) == transpose(perm)-then-reduce.
inline Dims permutation_after_removing(const Dims& perm, const Dims& removed_input_axes) {
    JANUS_ASSERT(is_permutation(perm) && detail::is_axis_set(removed_input_axes, perm.size()));
    Dims r;
    for (auto v : perm) {
        if (detail::contains(removed_input_axes, v)) continue;
        std::int64_t below = 0;
        for (auto a : removed_input_axes) below += a < v ? 1 : 0;
        r.push_back(v - below);
    }
    JANUS_ASSERT(is_permutation(r));
    return r;
}

/// Seed A2: the inverse of permutation_after_removing(perm, removed), REBUILT from the renumbered permutation.
/// Deliberately has no overload taking the old inverse: there is nothing in it that can be safely reused.
inline Dims inverse_after_removing(const Dims& perm, const Dims& removed_input_axes) {
    return inverse(permutation_after_removing(perm, removed_input_axes));
}

}  // namespace janus
