#pragma once
// Test-only: enumerate the logical indices of a shape.
#include <vector>

#include <janus/layout/shape.hpp>

/// Every index of `shape`, row-major (plain odometer, independent of layout/iterate.hpp so that it can serve as a
/// reference for the kernels that use it).
inline std::vector<janus::Dims> all_indices(const janus::Shape& shape) {
    std::vector<janus::Dims> r;
    if (janus::element_count(shape) == 0) return r;
    janus::Dims idx = janus::Dims::filled(shape.size(), 0);
    for (;;) {
        r.push_back(idx);
        int k = shape.size() - 1;
        for (; k >= 0; --k) {
            if (++idx[k] < shape[k]) break;
            idx[k] = 0;
        }
        if (k < 0) return r;
    }
}
