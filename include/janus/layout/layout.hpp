#pragma once
// Physical layout: where each logical element lives in memory.
//
// A Layout maps a logical index (i0..i{r-1}) of `shape` to the byte address  offset + sum_k i_k * strides[k].
//   - strides are in BYTES and may be 0 (broadcast: the address stays while the index advances, seed B5) or
//     negative (a reversed slice).
//   - alignment padding: `padded()` rounds the innermost row up to a byte multiple, so row r+1 does not start right
//     after row r's last element (seed B6: logical width != physical stride).
// Views (view.hpp) produce new Layouts over the same bytes and never copy.
#include <cstdint>
#include <string>
#include <utility>

#include <janus/layout/shape.hpp>

namespace janus {

struct Layout {
    Shape shape;
    Dims strides;               ///< bytes, one per axis
    std::int64_t offset = 0;    ///< bytes from the start of the storage to element (0,...,0)
    std::int64_t elem_size = 1; ///< bytes per element

    int rank() const noexcept { return shape.size(); }
    std::int64_t elements() const noexcept { return element_count(shape); }

    /// Row-major, densely packed.
    static Layout contiguous(const Shape& shape, std::int64_t elem_size) {
        JANUS_ASSERT(within_size_policy(shape.span()));  // a shape from outside passed checked_size (core/size.hpp)
        Layout l{shape, Dims::filled(shape.size(), 0), 0, elem_size};
        std::int64_t s = elem_size;
        for (int k = shape.size() - 1; k >= 0; --k) {
            l.strides[k] = s;
            s *= shape[k];
        }
        return l;
    }

    /// Row-major with every innermost row starting at a multiple of `row_align` bytes (row_align > 0).
    static Layout padded(const Shape& shape, std::int64_t elem_size, std::int64_t row_align) {
        JANUS_ASSERT(row_align > 0);
        JANUS_ASSERT(within_size_policy(shape.span()));
        Layout l{shape, Dims::filled(shape.size(), 0), 0, elem_size};
        if (shape.empty()) return l;
        std::int64_t s = elem_size;
        for (int k = shape.size() - 1; k >= 0; --k) {
            l.strides[k] = s;
            s *= shape[k];
            if (k == shape.size() - 1) s = (s + row_align - 1) / row_align * row_align;
        }
        return l;
    }

    /// Byte address of a logical index.
    std::int64_t address(const Dims& index) const noexcept {
        JANUS_ASSERT(index.size() == rank());
        std::int64_t a = offset;
        for (int k = 0; k < rank(); ++k) a += index[k] * strides[k];
        return a;
    }

    /// Dense row-major with no padding (the innermost stride is elem_size and each outer stride is the product).
    bool is_contiguous() const noexcept { return *this == contiguous(shape, elem_size).with_offset(offset); }

    /// Smallest and one-past-largest byte touched ({offset, offset} when empty). Storage must cover [lo, hi).
    std::pair<std::int64_t, std::int64_t> byte_extent() const noexcept {
        if (elements() == 0) return {offset, offset};
        std::int64_t lo = offset, hi = offset;
        for (int k = 0; k < rank(); ++k) {
            const std::int64_t span = (shape[k] - 1) * strides[k];
            if (span < 0) lo += span; else hi += span;
        }
        return {lo, hi + elem_size};
    }

    Layout with_offset(std::int64_t o) const { Layout l = *this; l.offset = o; return l; }

    /// "shape=[2,3] strides=[16,1] offset=0 elem=1" — used by IR dumps (seed B4).
    std::string str() const {
        return "shape=" + shape.str() + " strides=" + strides.str() + " offset=" + std::to_string(offset) +
               " elem=" + std::to_string(elem_size);
    }
    friend bool operator==(const Layout&, const Layout&) = default;
};

}  // namespace janus
