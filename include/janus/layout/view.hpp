#pragma once
// Views: new Layouts over the SAME bytes. Nothing here copies or touches data; each function only recomputes
// shape, strides (bytes) and offset, so that   view.address(i) == source.address(f(i))   for an index mapping f
// fixed by the op's ONNX semantics. Every view of a valid Layout addresses only bytes the source addresses
// (broadcast_to repeats them; nothing reaches outside source.byte_extent()).
//
// | view            | index mapping (view index i -> source index)              | refused when (rule)                       |
// |-----------------|-----------------------------------------------------------|-------------------------------------------|
// | transpose(perm) | src[perm[j]] = i[j]                                       | perm not a permutation of 0..rank-1        |
// | slice           | src[a] = start_a + i[a] * step_a  (ONNX Slice clamping)    | step 0, list lengths differ, bad/dup axis  |
// | broadcast_to    | right-aligned; src[k] = (extent 1 ? 0 : i[k + rank diff])  | extents neither equal nor 1 (numpy rules) |
// | squeeze         | drops extent-1 axes                                        | a named axis has extent != 1               |
// | unsqueeze       | inserts extent-1 axes at OUTPUT positions (ONNX)           | output rank > 6, bad/dup axis              |
// | reshape         | same row-major element order                               | element count differs; the new shape       |
// |                 |                                                           | cannot be addressed by strides over the    |
// |                 |                                                           | same bytes (reshape-needs-data-movement)   |
//
// Reshape is where layouts bite (seed B3): a shape change is free only when every group of source axes that is
// merged into one run is itself one arithmetic run of bytes (stride[k] == extent[k+1] * stride[k+1]). A padded
// layout (seed B6: row r+1 starts at the aligned stride, not right after row r) or a transposed view breaks that;
// reshape() then SAYS so with "reshape-needs-data-movement" instead of returning strides that would read padding
// or the wrong element. The caller must insert an explicit copy (a layout conversion), never ignore the error.
//
// Strides of extent-1 axes are never read (the only index is 0); views choose them as follows: unsqueeze and
// reshape give an inserted extent-1 axis the "natural" stride (inner extent * inner stride, elem_size if
// innermost) so contiguous layouts stay Layout::is_contiguous(); broadcast_to gives stride 0 to every axis the
// input does not supply (missing or 1 -> N); slice keeps the source stride of an axis that ends with <= 1 element.
//
// Errors (untrusted attributes: perm, starts/ends/axes/steps, target shapes) are Result values naming the attribute
// ("Slice.steps"), the position ("index 2" = entry of the attribute list, "axis 1" = tensor axis), the rule and a
// sentence. The source Layout itself is trusted (tier 2): it came from Layout::contiguous/padded or another view.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include <janus/core/error.hpp>
#include <janus/layout/layout.hpp>
#include <janus/layout/permutation.hpp>
#include <janus/layout/shape.hpp>

namespace janus {

// ---------------------------------------------------------------------------------------------------------------
// transpose

/// Output axis j is input axis perm[j]: extents and strides are permuted, the offset stays.
inline Result<Layout> transpose(const Layout& l, std::span<const std::int64_t> perm,
                                const std::string& what = "Transpose") {
    JANUS_TRY(Dims p, make_permutation(perm, what + ".perm"));
    if (p.size() != l.rank())
        return make_error(what + ".perm", "", "perm-length-matches-rank",
                          "permutation of length " + std::to_string(p.size()) + " for a rank-" +
                              std::to_string(l.rank()) + " tensor; it must list every axis exactly once");
    Layout r = l;
    r.shape = permute(l.shape, p);
    r.strides = permute(l.strides, p);
    return r;
}
inline Result<Layout> transpose(const Layout& l, const Dims& perm, const std::string& what = "Transpose") {
    return transpose(l, perm.span(), what);
}

// ---------------------------------------------------------------------------------------------------------------
// slice

/// One normalized slice of one axis: elements start, start + step, ..., start + (count-1)*step, all in [0, extent)
/// when count > 0. `start` is meaningless when count == 0.
struct SliceRange {
    std::int64_t start = 0;
    std::int64_t count = 0;
    std::int64_t step = 1;
    friend bool operator==(const SliceRange&, const SliceRange&) = default;
};

/// ONNX Slice (opset >= 10) for one axis of extent `extent` >= 0, exactly as the spec describes:
///   1. a negative start or end has `extent` added once (so -1 is the last element);
///   2. step > 0: start and end are clamped to [0, extent];       elements start, start+step, ... while < end;
///      step < 0: start is clamped to [0, extent-1], end to [-1, extent-1]; elements ... while > end;
///   3. step == 0 is an error ("slice-step-nonzero").
/// INT64_MAX / INT64_MIN as start or end therefore mean "from/to the end" in the step's direction (they clamp),
/// and any step magnitude, including INT64_MIN, is accepted without overflow. An empty axis (extent 0) gives count 0.
inline Result<SliceRange> normalize_slice(std::int64_t start, std::int64_t end, std::int64_t step, std::int64_t extent,
                                          const std::string& what = "Slice.steps", const std::string& position = "") {
    JANUS_ASSERT(extent >= 0);
    if (step == 0)
        return make_error(what, position, "slice-step-nonzero", "step must not be 0 (ONNX Slice)");
    if (start < 0) start += extent;  // cannot overflow: start < 0 <= extent
    if (end < 0) end += extent;
    SliceRange r;
    r.step = step;
    if (step > 0) {
        start = std::clamp<std::int64_t>(start, 0, extent);
        end = std::clamp<std::int64_t>(end, 0, extent);
        r.start = start;
        r.count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
        if (extent == 0) return r;  // [0, extent-1] is empty: nothing to clamp into
        start = std::clamp<std::int64_t>(start, 0, extent - 1);
        end = std::clamp<std::int64_t>(end, -1, extent - 1);
        r.start = start;
        // |step| as unsigned: -INT64_MIN does not fit int64. start - end is in [0, extent] here.
        const std::uint64_t mag = std::uint64_t{0} - static_cast<std::uint64_t>(step);
        r.count = start > end ? static_cast<std::int64_t>((static_cast<std::uint64_t>(start - end) - 1) / mag + 1) : 0;
    }
    return r;
}

namespace detail {
inline bool mul_overflows(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
    return __builtin_mul_overflow(a, b, &out);
}
inline bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
    return __builtin_add_overflow(a, b, &out);
}
}  // namespace detail

/// ONNX Slice as a view. `axes` empty means [0, starts.size()) (the ONNX default); `steps` empty means all 1.
/// Otherwise all four lists have the same length; axes may be negative and must be distinct. An axis whose slice
/// has >= 2 elements gets stride * step (negative for a negative step: a reversed view over the same bytes).
inline Result<Layout> slice(const Layout& l, std::span<const std::int64_t> axes, std::span<const std::int64_t> starts,
                            std::span<const std::int64_t> ends, std::span<const std::int64_t> steps,
                            const std::string& what = "Slice") {
    const std::size_t n = starts.size();
    auto count_error = [&](const char* list, std::size_t got) {
        return make_error(what + "." + list, "", "slice-lengths-match",
                          std::string(list) + " has " + std::to_string(got) + " entries but starts has " +
                              std::to_string(n) + "; starts, ends, axes and steps must have the same length");
    };
    if (ends.size() != n) return count_error("ends", ends.size());
    if (!axes.empty() && axes.size() != n) return count_error("axes", axes.size());
    if (!steps.empty() && steps.size() != n) return count_error("steps", steps.size());
    if (axes.empty() && n > static_cast<std::size_t>(l.rank()))
        return make_error(what + ".starts", "", "slice-lengths-match",
                          std::to_string(n) + " starts for a rank-" + std::to_string(l.rank()) +
                              " tensor and no axes: the default axes [0, " + std::to_string(n) + ") do not exist");
    if (!axes.empty()) JANUS_CHECK(normalize_axes(axes, l.rank(), what + ".axes"));

    Layout r = l;
    for (std::size_t i = 0; i < n; ++i) {
        const int a = axes.empty() ? static_cast<int>(i) : normalize_axis(axes[i], l.rank()).value();
        const std::int64_t step = steps.empty() ? 1 : steps[i];
        JANUS_TRY(SliceRange s, normalize_slice(starts[i], ends[i], step, l.shape[a], what + ".steps",
                                                "index " + std::to_string(i)));
        r.shape[a] = s.count;
        if (s.count == 0) continue;  // no element: offset and stride are never used
        std::int64_t delta = 0;
        if (detail::mul_overflows(s.start, l.strides[a], delta) || detail::add_overflows(r.offset, delta, r.offset))
            return make_error(what, "axis " + std::to_string(a), "byte-offset-overflow",
                              "the start offset of the slice does not fit in 64 bits");
        if (s.count >= 2 && detail::mul_overflows(l.strides[a], s.step, r.strides[a]))
            return make_error(what + ".steps", "index " + std::to_string(i), "byte-offset-overflow",
                              "stride * step does not fit in 64 bits");
    }
    return r;
}

// ---------------------------------------------------------------------------------------------------------------
// broadcast_to

/// Numpy broadcasting of one layout to `target` (right-aligned, unidirectional: the input may only grow). Output
/// axis j reads input axis k = j - (target.rank - input.rank): same extent -> the input's stride (the address
/// advances); input extent 1 or k < 0 (missing) -> stride 0 (the address stays, seed B5). An input extent 1 meeting
/// target 1 keeps its stride.
inline Result<Layout> broadcast_to(const Layout& l, const Shape& target, const std::string& what = "Expand") {
    const int R = target.size(), r = l.rank();
    if (R < r)
        return make_error(what + ".shape", "", "broadcast-target-rank",
                          "cannot broadcast a rank-" + std::to_string(r) + " tensor to the lower rank " +
                              std::to_string(R) + " of " + target.str());
    Layout out{target, Dims::filled(R, 0), l.offset, l.elem_size};
    for (int j = 0; j < R; ++j) {
        const int k = j - (R - r);
        if (k < 0) continue;
        if (l.shape[k] == target[j]) {
            out.strides[j] = l.strides[k];
        } else if (l.shape[k] != 1) {
            return make_error(what + ".shape", "axis " + std::to_string(j), "broadcast-compatible",
                              "input extent " + std::to_string(l.shape[k]) + " (input axis " + std::to_string(k) +
                                  ") cannot broadcast to extent " + std::to_string(target[j]) +
                                  ": extents must be equal or the input's must be 1");
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// squeeze / unsqueeze

/// Remove the named axes (negative allowed, distinct), each of which must have extent 1. `axes` empty removes every
/// extent-1 axis (ONNX Squeeze without `axes`). Remaining strides are unchanged.
inline Result<Layout> squeeze(const Layout& l, const Dims& axes, const std::string& what = "Squeeze") {
    Dims ax;
    if (axes.empty()) {
        for (int k = 0; k < l.rank(); ++k)
            if (l.shape[k] == 1) ax.push_back(k);
    } else {
        JANUS_TRY(ax, normalize_axes(axes.span(), l.rank(), what + ".axes"));
        for (auto a : ax)
            if (l.shape[static_cast<int>(a)] != 1)
                return make_error(what + ".axes", "axis " + std::to_string(a), "squeeze-extent-one",
                                  "axis " + std::to_string(a) + " has extent " +
                                      std::to_string(l.shape[static_cast<int>(a)]) + "; only extent-1 axes can be removed");
    }
    Layout r = l;
    for (int i = ax.size() - 1; i >= 0; --i) {  // descending, so earlier positions stay valid
        r.shape.erase(static_cast<int>(ax[i]));
        r.strides.erase(static_cast<int>(ax[i]));
    }
    return r;
}

/// Insert extent-1 axes; `axes` are positions in the OUTPUT (rank + axes.size() <= 6), negative allowed, distinct
/// (ONNX Unsqueeze). An inserted axis gets the natural stride (inner extent * inner stride, elem_size when
/// innermost) so that a contiguous layout stays contiguous; its value is never used for addressing.
inline Result<Layout> unsqueeze(const Layout& l, const Dims& axes, const std::string& what = "Unsqueeze") {
    const int out_rank = l.rank() + axes.size();
    if (out_rank > max_rank)
        return make_error(what + ".axes", "", "rank-at-most-6",
                          "inserting " + std::to_string(axes.size()) + " axes into a rank-" +
                              std::to_string(l.rank()) + " tensor gives rank " + std::to_string(out_rank) +
                              ", above 6");
    JANUS_TRY(Dims ax, normalize_axes(axes.span(), out_rank, what + ".axes"));
    Layout r{Dims::filled(out_rank, 1), Dims::filled(out_rank, 0), l.offset, l.elem_size};
    int k = l.rank() - 1;
    for (int j = out_rank - 1; j >= 0; --j) {
        if (detail::contains(ax, j)) {
            std::int64_t s = l.elem_size;
            if (j + 1 < out_rank && detail::mul_overflows(r.strides[j + 1], r.shape[j + 1], s)) s = l.elem_size;
            r.strides[j] = s;
        } else {
            r.shape[j] = l.shape[k];
            r.strides[j] = l.strides[k];
            --k;
        }
    }
    JANUS_ASSERT(k == -1);
    return r;
}

// ---------------------------------------------------------------------------------------------------------------
// reshape

/// ONNX Reshape's shape attribute -> a concrete shape for an input of shape `in`:
///   - 0 copies the input extent at the same position (unless allowzero, where 0 is a literal 0 extent);
///   - at most one -1, inferred so the element count is preserved;
///   - every other entry must be >= 1 (or 0 with allowzero); the element count must match exactly.
/// Rules: rank-at-most-6, reshape-extent-valid (< -1), reshape-one-inferred (two -1),
/// reshape-zero-copies-input-axis (0 at a position the input lacks), reshape-zero-and-inferred (allowzero with both
/// 0 and -1: ONNX forbids it, the -1 is ambiguous), reshape-inferred-ambiguous (-1 with a zero product elsewhere),
/// reshape-element-count.
inline Result<Shape> infer_reshape_shape(const Shape& in, std::span<const std::int64_t> requested, bool allowzero,
                                         const std::string& what = "Reshape.shape") {
    if (requested.size() > static_cast<std::size_t>(max_rank))
        return make_error(what, "", "rank-at-most-6", "rank " + std::to_string(requested.size()) + " exceeds 6");
    const std::int64_t total = element_count(in);
    std::int64_t dims[max_rank] = {};
    int inferred = -1;
    bool has_zero = false;
    for (std::size_t i = 0; i < requested.size(); ++i) {
        const std::int64_t v = requested[i];
        const std::string pos = "index " + std::to_string(i);
        if (v < -1)
            return make_error(what, pos, "reshape-extent-valid",
                              "extent " + std::to_string(v) + " is invalid; use >= 0, or -1 to infer one extent");
        if (v == -1) {
            if (inferred >= 0)
                return make_error(what, pos, "reshape-one-inferred",
                                  "a second -1 (the first is at index " + std::to_string(inferred) +
                                      "); at most one extent can be inferred");
            inferred = static_cast<int>(i);
            continue;
        }
        if (v == 0 && !allowzero) {
            if (static_cast<int>(i) >= in.size())
                return make_error(what, pos, "reshape-zero-copies-input-axis",
                                  "0 copies input axis " + std::to_string(i) + ", but the input " + in.str() +
                                      " has rank " + std::to_string(in.size()));
            dims[i] = in[static_cast<int>(i)];
        } else {
            dims[i] = v;
        }
        if (v == 0) has_zero = true;
    }
    if (allowzero && has_zero && inferred >= 0)
        return make_error(what, "index " + std::to_string(inferred), "reshape-zero-and-inferred",
                          "with allowzero=1 a shape may not contain both 0 and -1 (ONNX): the -1 is ambiguous");
    // Product of the known extents through the size policy (core/size.hpp): `over` when they break it (zero
    // extents do not exempt the others), else their element count (0 when one is 0).
    Dims known_dims;
    for (std::size_t i = 0; i < requested.size(); ++i)
        if (static_cast<int>(i) != inferred) known_dims.push_back(dims[i]);
    const size_detail::SizeScan scan = size_detail::scan_size(known_dims.span(), 1);
    const bool over = scan.fault != size_detail::SizeFault::none;
    const std::int64_t known = over ? 0 : scan.size.elements;
    if (inferred >= 0) {
        if (!over && known == 0)
            return make_error(what, "index " + std::to_string(inferred), "reshape-inferred-ambiguous",
                              "-1 cannot be inferred: the other extents multiply to 0");
        if (over || total % known != 0)
            return make_error(what, "index " + std::to_string(inferred), "reshape-element-count",
                              "the input's " + std::to_string(total) + " elements are not a multiple of " +
                                  (over ? std::string("the other extents' product") : std::to_string(known)));
        dims[inferred] = total / known;
    } else if (over || known != total) {
        return make_error(what, "", "reshape-element-count",
                          "shape has " + (over ? std::string("more than 2^40") : std::to_string(known)) +
                              " elements but the input " + in.str() + " has " + std::to_string(total));
    }
    return make_shape(std::span<const std::int64_t>(dims, requested.size()), what);
}

/// The same elements, in the same row-major order, with shape `new_shape`, over the same bytes — when strides can
/// express it (numpy's attempt_nocopy_reshape). Source axes of extent 1 are ignored; the rest are matched against
/// the new extents in groups with equal products; each source group must be one run of bytes (stride[k] ==
/// extent[k+1] * stride[k+1] inside it), then the group's new axes get strides splitting that run.
/// Rules: reshape-element-count, reshape-needs-data-movement (a padded or transposed source whose axes would have
/// to merge across the padding or out of order; the caller must copy).
inline Result<Layout> reshape(const Layout& l, const Shape& new_shape, const std::string& what = "Reshape") {
    const std::int64_t total = l.elements();
    if (element_count(new_shape) != total)
        return make_error(what + ".shape", "", "reshape-element-count",
                          "new shape " + new_shape.str() + " has " + std::to_string(element_count(new_shape)) +
                              " elements but the input " + l.shape.str() + " has " + std::to_string(total));
    if (total == 0) return Layout::contiguous(new_shape, l.elem_size).with_offset(l.offset);  // no byte is addressed

    // Source axes without the extent-1 ones (their strides carry no information), remembering original numbers.
    Dims od, os, oaxis;
    for (int k = 0; k < l.rank(); ++k)
        if (l.shape[k] != 1) {
            od.push_back(l.shape[k]);
            os.push_back(l.strides[k]);
            oaxis.push_back(k);
        }
    const int on = od.size(), nn = new_shape.size();
    Layout r{new_shape, Dims::filled(nn, 0), l.offset, l.elem_size};
    int oi = 0, ni = 0;
    while (oi < on && ni < nn) {
        std::int64_t np = new_shape[ni], op = od[oi];
        int nj = ni + 1, oj = oi + 1;
        while (np != op) {  // products are equal over the whole shape, so this ends inside both lists
            if (np < op) {
                JANUS_ASSERT(nj < nn);
                np *= new_shape[nj++];
            } else {
                JANUS_ASSERT(oj < on);
                op *= od[oj++];
            }
        }
        for (int ok = oi; ok + 1 < oj; ++ok)
            if (os[ok] != od[ok + 1] * os[ok + 1])
                return make_error(
                    what, "axis " + std::to_string(oaxis[ok]), "reshape-needs-data-movement",
                    "source axes " + std::to_string(oaxis[ok]) + " and " + std::to_string(oaxis[ok + 1]) +
                        " must merge into one run, but stride " + std::to_string(os[ok]) + " != extent " +
                        std::to_string(od[ok + 1]) + " * stride " + std::to_string(os[ok + 1]) +
                        " (padding, a transpose or a step lies between them): " + l.str() + " -> " +
                        new_shape.str() + " needs a copy");
        r.strides[nj - 1] = os[oj - 1];
        for (int nk = nj - 1; nk > ni; --nk) r.strides[nk - 1] = r.strides[nk] * new_shape[nk];
        oi = oj;
        ni = nj;
    }
    JANUS_ASSERT(oi == on);
    for (; ni < nn; ++ni) {  // trailing extent-1 axes: natural stride
        JANUS_ASSERT(new_shape[ni] == 1);
        r.strides[ni] = l.elem_size;
    }
    return r;
}

}  // namespace janus
