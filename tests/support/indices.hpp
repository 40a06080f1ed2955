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

/// The index into an operand of shape `s` that numpy broadcasting reads for output index `i` (the operand's axes
/// align with the output's last axes; an axis of extent 1 is read at 0).
inline janus::Dims broadcast_source(const janus::Dims& i, const janus::Shape& s) {
    janus::Dims d = janus::Dims::filled(s.size(), 0);
    const int off = i.size() - s.size();
    for (int k = 0; k < s.size(); ++k) d[k] = s[k] == 1 ? 0 : i[k + off];
    return d;
}
