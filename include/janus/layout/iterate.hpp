#pragma once
// Row-major iteration over a logical shape. Kernels use for_each_row as their outer loop and vectorize the row.
//
// Contract:
//   - for_each_index(shape, f) calls f(const Dims& index) once per index, in row-major order (last axis fastest);
//   - for_each_row(shape, f) calls f(const Dims& index, int64 row_length) once per innermost row, in row-major
//     order; index is the row's first element (last coordinate 0) and row_length = shape[last];
//   - rank 0: one call (index [], row length 1); any extent 0 anywhere: no call at all;
//   - the index passed to f is only valid during the call (it is the odometer's own state); f must not keep a
//     reference to it. f may not change the shape.
// Neither function knows about memory: combine the index with Layout::address (or with the layouts of a
// BroadcastPlan, broadcast.hpp) to get byte addresses; the row then advances by the layout's innermost stride.
#include <cstdint>

#include <janus/layout/shape.hpp>

namespace janus {

/// Call f(index) for every index of `shape` in row-major order. No calls if any extent is 0; one call for rank 0.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
    for (auto d : shape)
        if (d == 0) return;
    Dims idx = Dims::filled(shape.size(), 0);
    for (;;) {
        f(static_cast<const Dims&>(idx));
        int k = shape.size() - 1;
        for (; k >= 0; --k) {  // odometer: bump the last axis, carry into the outer ones
            if (++idx[k] < shape[k]) break;
            idx[k] = 0;
        }
        if (k < 0) return;
    }
}

/// Call f(index, row_length) once per innermost row; index has its last coordinate 0. Rank 0: one row of length 1.
/// No calls if any extent is 0.
template <class F>
void for_each_row(const Shape& shape, F&& f) {
    if (shape.empty()) {
        f(static_cast<const Dims&>(shape), std::int64_t{1});
        return;
    }
    const int last = shape.size() - 1;
    const std::int64_t row = shape[last];
    if (row == 0) return;
    Shape outer = shape;
    outer[last] = 1;  // the odometer then never moves the last coordinate
    for_each_index(outer, [&](const Dims& idx) { f(idx, row); });
}

}  // namespace janus
