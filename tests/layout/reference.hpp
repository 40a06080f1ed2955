#pragma once
// Test-only reference for layout views: a materialized buffer whose every element holds a distinct int32 (its
// row-major flat index in the base layout) and whose padding bytes hold a poison value, read back through a view
// with plain loops. A view is right when reading through it gives the element a nested-loop formula predicts.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <janus/layout/layout.hpp>
#include <support/check_rule.hpp>

namespace janus::test {

inline constexpr std::int32_t poison = static_cast<std::int32_t>(0xA5A5A5A5u);

/// Advance `idx` to the next row-major index of `shape`; false after the last one. Plain odometer, independent of
/// iterate.hpp (which is itself under test).
inline bool next_index(Dims& idx, const Shape& shape) {
    for (int k = shape.size() - 1; k >= 0; --k) {
        if (++idx[k] < shape[k]) return true;
        idx[k] = 0;
    }
    return false;
}

/// Row-major flat position of `idx` in `shape`.
inline std::int64_t flat(const Dims& idx, const Shape& shape) {
    std::int64_t f = 0;
    for (int k = 0; k < shape.size(); ++k) f = f * shape[k] + idx[k];
    return f;
}

/// Every index of `shape`, row-major.
inline std::vector<Dims> all_indices(const Shape& shape) {
    std::vector<Dims> r;
    if (element_count(shape) == 0) return r;
    Dims idx = Dims::filled(shape.size(), 0);
    do r.push_back(idx);
    while (next_index(idx, shape));
    return r;
}

/// Storage for `base` (elem_size 4): element with base index i holds flat(i); every other byte holds 0xA5.
struct Materialized {
    Layout base;
    std::vector<unsigned char> bytes;

    explicit Materialized(const Layout& b) : base(b) {
        REQUIRE(b.elem_size == 4);
        const auto [lo, hi] = b.byte_extent();
        REQUIRE(lo >= 0);
        bytes.assign(static_cast<std::size_t>(hi), 0xA5);
        for (const auto& idx : all_indices(b.shape)) {
            const auto v = static_cast<std::int32_t>(flat(idx, b.shape));
            std::memcpy(bytes.data() + b.address(idx), &v, 4);
        }
    }

    /// The int32 at `view.address(idx)`; fails the test if the address leaves the storage.
    std::int32_t at(const Layout& view, const Dims& idx) const {
        const std::int64_t a = view.address(idx);
        REQUIRE(a >= 0);
        REQUIRE(a + 4 <= static_cast<std::int64_t>(bytes.size()));
        std::int32_t v;
        std::memcpy(&v, bytes.data() + a, 4);
        return v;
    }

    /// All elements of `view`, row-major.
    std::vector<std::int32_t> read(const Layout& view) const {
        std::vector<std::int32_t> r;
        for (const auto& idx : all_indices(view.shape)) r.push_back(at(view, idx));
        return r;
    }
};

}  // namespace janus::test
