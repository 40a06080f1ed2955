#pragma once
// Index structure `index map`: a pure gather given by one coordinate table per output axis.
//
//     out[i_0, ..., i_{r-1}] = in[t_0[i_0], ..., t_{r-1}[i_{r-1}]]     when every t_k[i_k] >= 0
//                            = fill[i_0, ..., i_{r-1}]                  when some t_k[i_k] == -1 ("outside")
//
// The op builds the tables (Pad: constant / reflect / edge borders and negative-pad crops; later Slice-like gathers,
// Tile, Resize-nearest, ...); this primitive only moves elements. It never computes on them: every element is
// copied bit for bit, whatever its dtype (int64 included), so quantization is the caller's business — requantize
// the input first (copy.hpp materialize) if the output's parameters differ, and give the fill in the output's
// encoding.
//
// Contract:
//   - map.axes.size() == in.rank() == out.rank(); out.shape()[k] == map.axes[k].size();
//   - every table entry is -1 or a coordinate in [0, in.shape()[k]) (check_index_map; an out-of-range entry is an
//     error, never a read outside the input);
//   - `fill` is a tensor with the output's shape and dtype, usually a broadcast view (stride 0, seed B5) of a scalar
//     or of a per-channel vector; it is required only if some table holds -1;
//   - in, out and fill may have any layouts (padded, strided, reversed); out must not overlap in or fill;
//   - rank 0: one element, copied. Any output extent 0: nothing is read or written.
// Cost: one table lookup per output axis per row, one per element on the innermost axis; no SIMD (a copy has no
// arithmetic to vectorize; the NPU lowers a table with runs of consecutive coordinates to strided DMA).
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/layout/iterate.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::ops {

/// One coordinate table per output axis: axes[k][j] is the input coordinate read for output coordinate j of axis
/// k, or `outside` (-1) for "take the fill value".
struct IndexMap {
    static constexpr std::int64_t outside = -1;
    std::vector<std::vector<std::int64_t>> axes;

    /// The output shape the tables describe.
    Shape out_shape() const {
        Shape s;
        for (const auto& t : axes) s.push_back(static_cast<std::int64_t>(t.size()));
        return s;
    }
    bool has_outside() const {
        for (const auto& t : axes)
            for (auto v : t)
                if (v == outside) return true;
        return false;
    }
};

/// Validate `m` against an input of shape `in`: one table per axis (rank <= 6), entries -1 or in [0, in[k]).
inline Status check_index_map(const IndexMap& m, const Shape& in, const std::string& what = "index_map") {
    if (m.axes.size() != static_cast<std::size_t>(in.size()))
        return make_error(what, "", "index-map-rank",
                          std::to_string(m.axes.size()) + " coordinate tables for a rank-" +
                              std::to_string(in.size()) + " input");
    for (int k = 0; k < in.size(); ++k)
        for (std::size_t j = 0; j < m.axes[static_cast<std::size_t>(k)].size(); ++j) {
            const std::int64_t v = m.axes[static_cast<std::size_t>(k)][j];
            if (v != IndexMap::outside && (v < 0 || v >= in[k]))
                return make_error(what, "axis " + std::to_string(k), "index-map-entry-in-range",
                                  "entry " + std::to_string(j) + " is " + std::to_string(v) + ", outside [0, " +
                                      std::to_string(in[k]) + ") and not -1");
        }
    return ok_status();
}

namespace detail {
template <std::size_t N>
inline void copy_elem(std::byte* dst, const std::byte* src) noexcept {
    std::memcpy(dst, src, N);  // N is a constant: compiles to one load and one store
}
}  // namespace detail

/// out[i] = in[t(i)] or fill[i] (see the header comment). Rules: index-map-rank, index-map-entry-in-range,
/// index-map-shape (out's shape is not the tables' lengths), index-map-dtype (in, out and fill differ in dtype),
/// index-map-fill-required (a -1 entry and no fill, or a fill of the wrong shape).
inline Status run_index_map(const Tensor& in, const IndexMap& m, const std::optional<Tensor>& fill, Tensor& out,
                            const std::string& what = "index_map") {
    JANUS_CHECK(check_index_map(m, in.shape(), what));
    if (!(m.out_shape() == out.shape()))
        return make_error(what, "output", "index-map-shape",
                          "tables describe " + m.out_shape().str() + " but the output is " + out.shape().str());
    if (in.dtype != out.dtype || (fill && fill->dtype != out.dtype))
        return make_error(what, "", "index-map-dtype", "input, fill and output must have the same dtype (a gather "
                                                       "copies bits; convert before)");
    if ((m.has_outside() && !fill) || (fill && !(fill->shape() == out.shape())))
        return make_error(what, "fill", "index-map-fill-required",
                          "a table holds -1 (outside) or a fill was given, but no fill of shape " +
                              out.shape().str() + " (the output's) was given");
    const int rank = out.rank();
    const int last = rank - 1;
    // Byte offsets into the input per axis and output coordinate; `outside` stays a separate flag.
    std::vector<std::vector<std::int64_t>> off(static_cast<std::size_t>(rank));
    for (int k = 0; k < rank; ++k) {
        const auto& t = m.axes[static_cast<std::size_t>(k)];
        auto& o = off[static_cast<std::size_t>(k)];
        o.resize(t.size());
        for (std::size_t j = 0; j < t.size(); ++j) o[j] = t[j] == IndexMap::outside ? 0 : t[j] * in.layout.strides[k];
    }
    const std::byte* src = in.data();
    const std::byte* fsrc = fill ? fill->data() : nullptr;
    std::byte* dst = out.data();
    const std::int64_t out_stride = rank > 0 ? out.layout.strides[last] : 0;
    const std::int64_t fill_stride = fill && rank > 0 ? fill->layout.strides[last] : 0;

    auto body = [&](auto size_tag) {
        constexpr std::size_t N = decltype(size_tag)::value;
        for_each_row(out.shape(), [&](const Dims& idx, std::int64_t n) {
            std::int64_t in_row = in.layout.offset;
            bool row_outside = false;
            for (int k = 0; k < last; ++k) {
                const auto j = static_cast<std::size_t>(idx[k]);
                row_outside = row_outside || m.axes[static_cast<std::size_t>(k)][j] == IndexMap::outside;
                in_row += off[static_cast<std::size_t>(k)][j];
            }
            std::byte* orow = dst + (rank > 0 ? out.layout.address(idx) : out.layout.offset);
            const std::byte* frow = fill ? fsrc + (rank > 0 ? fill->layout.address(idx) : fill->layout.offset) : nullptr;
            if (rank == 0) {
                detail::copy_elem<N>(orow, src + in_row);
                return;
            }
            const auto& t = m.axes[static_cast<std::size_t>(last)];
            const auto& o = off[static_cast<std::size_t>(last)];
            for (std::int64_t j = 0; j < n; ++j) {
                const auto ju = static_cast<std::size_t>(j);
                std::byte* d = orow + j * out_stride;
                if (row_outside || t[ju] == IndexMap::outside) detail::copy_elem<N>(d, frow + j * fill_stride);
                else detail::copy_elem<N>(d, src + in_row + o[ju]);
            }
        });
    };
    switch (dtype_size(out.dtype)) {
        case 1: body(std::integral_constant<std::size_t, 1>{}); break;
        case 4: body(std::integral_constant<std::size_t, 4>{}); break;
        default: JANUS_ASSERT(dtype_size(out.dtype) == 8); body(std::integral_constant<std::size_t, 8>{}); break;
    }
    return ok_status();
}

}  // namespace janus::ops
