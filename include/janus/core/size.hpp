#pragma once
// The shape and size policy: the one checked computation of element counts and byte sizes (issue 26).
//
// Contract: checked_size(extents, elem_size, what, rule) accepts a shape when its rank is at most max_rank (6),
// every extent is >= 0 and the product of the extents, each zero counted as one, is at most max_elements (2^40);
// it returns the element count and the dense byte size, else an Error naming `what`, the axis and the rule. Every
// reader of shapes from outside (ONNX initializers, graph inputs, value infos, the IR text, .npy / .pb tensors,
// packages) and every op's shape inference goes through it, so code after them may multiply extents, strides and
// byte sizes of a dense tensor in int64 freely (all stay below 2^43 for elements of at most 8 bytes).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <janus/core/error.hpp>

namespace janus {

/// Largest rank of a tensor.
inline constexpr int max_rank = 6;

// ---- The shape and size policy (issue 26; the contract above) --------------------------------------------------
//
// Why a zero extent counts as one: it makes the tensor empty, but it does not make the other extents harmless.
// [0, 2^62, 2^62] is refused, since a reduction over the zero axis, a slice or a reshape of it would name 2^124
// elements, and strides computed from it overflow int64. `checked_size` is the one implementation; `make_shape` and
// every reader call it, and `element_count` (unchecked) is for shapes that passed it.

/// Largest element count Janus accepts for one tensor (2^40): keeps every byte offset far from int64 overflow.
inline constexpr std::int64_t max_elements = std::int64_t{1} << 40;

/// The size of a tensor that passed the policy: its element count (0 when an extent is 0), its dense byte size, and
/// the product of its extents with zeros counted as one (the quantity the policy bounds).
struct TensorSize {
    std::int64_t elements = 1;
    std::int64_t bytes = 0;
    std::int64_t nonzero_product = 1;
    friend bool operator==(const TensorSize&, const TensorSize&) = default;
};

namespace size_detail {
enum class SizeFault : unsigned char { none, rank, negative, too_many };
struct SizeScan {
    SizeFault fault = SizeFault::none;
    std::size_t axis = 0;    ///< where the fault is
    bool after_zero = false; ///< a zero extent came before the axis that broke the limit
    TensorSize size;
};
/// The policy's one loop (checked_size and within_size_policy report its result).
/// `rank_limit` and `limit` are the policy's (max_rank, max_elements) except for format readers that apply a wider
/// rule of their format on the same loop (.npy: any rank, nonzero product * elem_size <= 2^63 - 1).
inline SizeScan scan_size(std::span<const std::int64_t> extents, std::int64_t elem_size,
                          std::size_t rank_limit = static_cast<std::size_t>(max_rank),
                          std::int64_t limit = max_elements) noexcept {
    SizeScan r;
    if (extents.size() > rank_limit) {
        r.fault = SizeFault::rank;
        return r;
    }
    bool empty = false;
    for (std::size_t i = 0; i < extents.size(); ++i) {
        const std::int64_t d = extents[i];
        r.axis = i;
        if (d < 0) {
            r.fault = SizeFault::negative;
            return r;
        }
        if (d == 0) {  // empty, but the other extents still count (their product stays within the limit)
            empty = true;
            continue;
        }
        if (r.size.nonzero_product > limit / d) {
            r.fault = SizeFault::too_many;
            r.after_zero = empty;
            return r;
        }
        r.size.nonzero_product *= d;
    }
    r.size.elements = empty ? 0 : r.size.nonzero_product;
    r.size.bytes = r.size.elements * elem_size;
    return r;
}
}  // namespace size_detail

/// The one checked shape and size computation (see above). `elem_size` is the bytes per element (1 .. 16). Errors
/// name `what` and the axis ("axis 2"); their rule is `rule` when given, else the policy's own: rank-at-most-6,
/// extent-nonnegative, elements-at-most-2^40.
inline Result<TensorSize> checked_size(std::span<const std::int64_t> extents, std::int64_t elem_size = 1,
                                       const std::string& what = "shape", const std::string& rule = {}) {
    JANUS_ASSERT(elem_size >= 1 && elem_size <= 16);
    const size_detail::SizeScan r = size_detail::scan_size(extents, elem_size);
    const auto rule_or = [&](const char* own) { return rule.empty() ? std::string(own) : rule; };
    const std::string at = "axis " + std::to_string(r.axis);
    switch (r.fault) {
        case size_detail::SizeFault::none:
            return r.size;
        case size_detail::SizeFault::rank:
            return make_error(what, "", rule_or("rank-at-most-6"),
                              "rank " + std::to_string(extents.size()) + " exceeds " + std::to_string(max_rank));
        case size_detail::SizeFault::negative:
            return make_error(what, at, rule_or("extent-nonnegative"),
                              "extent " + std::to_string(extents[r.axis]) + " is negative");
        case size_detail::SizeFault::too_many:
            break;
    }
    return make_error(what, at, rule_or("elements-at-most-2^40"),
                      r.after_zero ? "element count exceeds 2^40 (a zero extent makes the tensor empty but does not "
                                     "exempt the other extents: their product must stay within 2^40)"
                                   : "element count exceeds 2^40");
}

/// Whether `extents` satisfy the policy (for internal invariants: JANUS_ASSERT(within_size_policy(shape.span()))).
inline bool within_size_policy(std::span<const std::int64_t> extents) noexcept {
    return size_detail::scan_size(extents, 1).fault == size_detail::SizeFault::none;
}

}  // namespace janus
