#pragma once
// Broadcasting (numpy / ONNX multidirectional rules) and the per-axis address-advance rule (seed B5).
//
// Shapes are right-aligned; a missing axis counts as extent 1; on each output axis the extents must be equal or one
// of them 1, and the output takes the other one (1 vs 0 gives 0). Broadcasting never copies: an input that does not
// supply an output axis reads it with stride 0, so its address STAYS while the output index advances.
//
// The advance rule, per output axis (1 = the input's address advances with the index, 0 = it stays):
//
// | case                       | input shape | output shape | advance_rule  | input strides (int8, contiguous) |
// |----------------------------|-------------|--------------|---------------|----------------------------------|
// | scalar                     | []          | [2,3,4,5]    | [0,0,0,0]     | [0,0,0,0]                        |
// | lower rank (right-aligned) | [4,5]       | [2,3,4,5]    | [0,0,1,1]     | [0,0,5,1]                        |
// | per-channel                | [3,1,1]     | [2,3,4,5]    | [0,1,0,0]     | [0,1,0,0]                        |
// | two-sided, left operand    | [2,1,4,1]   | [2,3,4,5]    | [1,0,1,0]     | [4,0,1,0]                        |
// | two-sided, right operand   | [1,3,1,5]   | [2,3,4,5]    | [0,1,0,1]     | [0,5,0,1]                        |
//
// An output axis of extent 1 never advances (its only index is 0), whatever the stride.
//
// coalesce() then merges adjacent output axes j, j+1 when EVERY input (and the contiguous output) can walk them as
// one axis: stride[j] == extent[j+1] * stride[j+1] (so 0/0 merges, and so does advance/advance when contiguous), or
// either axis has extent 1. Kernels get the longest inner rows: [4,5] + [3,4,5] becomes [3,20]; a padded input
// (row stride 16 for width 7) keeps its rows apart (seed B6).
//
// Errors: broadcast-compatible (names the input, its axis and both extents), elements-at-most-2^40 (the output
// would be too large).
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/layout/layout.hpp>
#include <janus/layout/shape.hpp>
#include <janus/layout/view.hpp>

namespace janus {

/// Broadcast any number of shapes (none gives the scalar shape []). `what` names the op; errors name
/// "<what>.input[i]" and that input's own axis.
inline Result<Shape> broadcast_shapes(std::span<const Shape> shapes, const std::string& what = "broadcast") {
    int R = 0;
    for (const auto& s : shapes) R = std::max(R, s.size());
    std::int64_t out[max_rank] = {};
    for (int j = 0; j < R; ++j) {
        std::int64_t e = 1;
        std::size_t from = 0;  // which input set e (for the message)
        for (std::size_t i = 0; i < shapes.size(); ++i) {
            const int k = j - (R - shapes[i].size());
            if (k < 0) continue;
            const std::int64_t d = shapes[i][k];
            if (d == e || d == 1) continue;
            if (e == 1) {
                e = d;
                from = i;
                continue;
            }
            return make_error(what + ".input[" + std::to_string(i) + "]", "axis " + std::to_string(k),
                              "broadcast-compatible",
                              "extent " + std::to_string(d) + " does not broadcast with extent " + std::to_string(e) +
                                  " of input " + std::to_string(from) + " (output axis " + std::to_string(j) +
                                  "): extents must be equal or one of them 1");
        }
        out[j] = e;
    }
    return make_shape(std::span<const std::int64_t>(out, static_cast<std::size_t>(R)), what + ".output");
}

/// Two shapes: broadcast_shapes({a, b}).
inline Result<Shape> broadcast_shapes(const Shape& a, const Shape& b, const std::string& what = "broadcast") {
    const Shape both[2] = {a, b};
    return broadcast_shapes(std::span<const Shape>(both), what);
}

/// The advance rule of one input of shape `in` broadcast to `out` (broadcast-compatible; asserted): 1 where the
/// input supplies the axis with the output's extent and that extent is > 1, else 0.
inline Dims advance_rule(const Shape& in, const Shape& out) {
    JANUS_ASSERT(in.size() <= out.size());
    Dims r = Dims::filled(out.size(), 0);
    for (int j = 0; j < out.size(); ++j) {
        const int k = j - (out.size() - in.size());
        if (k < 0) continue;
        JANUS_ASSERT(in[k] == out[j] || in[k] == 1);
        r[j] = (in[k] == out[j] && out[j] > 1) ? 1 : 0;
    }
    return r;
}

/// The advance rule read off an (already broadcast) layout: 1 where stride != 0 and extent > 1.
inline Dims advance_rule(const Layout& l) {
    Dims r = Dims::filled(l.rank(), 0);
    for (int j = 0; j < l.rank(); ++j) r[j] = (l.strides[j] != 0 && l.shape[j] > 1) ? 1 : 0;
    return r;
}

/// Every input seen with the output's shape: inputs[i].shape == out, stride 0 on the axes it does not supply.
struct BroadcastPlan {
    Shape out;
    std::vector<Layout> inputs;
};

/// Broadcast the inputs' shapes together and view each input with the output shape (broadcast_to).
inline Result<BroadcastPlan> plan_broadcast(std::span<const Layout> inputs, const std::string& what = "broadcast") {
    std::vector<Shape> shapes;
    shapes.reserve(inputs.size());
    for (const auto& l : inputs) shapes.push_back(l.shape);
    JANUS_TRY(Shape out, broadcast_shapes(std::span<const Shape>(shapes), what));
    BroadcastPlan p{out, {}};
    p.inputs.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        JANUS_TRY(Layout b, broadcast_to(inputs[i], out, what + ".input[" + std::to_string(i) + "]"));
        p.inputs.push_back(b);
    }
    return p;
}

/// Merge adjacent output axes wherever every input (and the contiguous output) can walk them as one axis; drop
/// extent-1 axes. Addresses are unchanged: for every output index of the old plan, each input's address equals the
/// address of the corresponding (row-major equal) index of the new plan. An empty output (some extent 0) becomes
/// [0]; a plan whose output has only extent-1 axes becomes rank 0.
inline void coalesce(BroadcastPlan& p) {
    for ([[maybe_unused]] const auto& l : p.inputs) JANUS_ASSERT(l.shape == p.out);
    const int R = p.out.size();
    if (R == 0) return;
    if (element_count(p.out) == 0) {
        p.out = Shape{0};
        for (auto& l : p.inputs) l = Layout{Shape{0}, Dims{0}, l.offset, l.elem_size};
        return;
    }
    Shape out;
    std::vector<Dims> strides(p.inputs.size());
    for (int j = 0; j < R; ++j) {
        const std::int64_t e = p.out[j];
        if (e == 1) continue;  // never addressed with an index other than 0
        bool merge = !out.empty();
        for (std::size_t i = 0; merge && i < p.inputs.size(); ++i)
            merge = strides[i][strides[i].size() - 1] == e * p.inputs[i].strides[j];
        if (merge) {
            out[out.size() - 1] *= e;
            for (std::size_t i = 0; i < p.inputs.size(); ++i)
                strides[i][strides[i].size() - 1] = p.inputs[i].strides[j];
        } else {
            out.push_back(e);
            for (std::size_t i = 0; i < p.inputs.size(); ++i) strides[i].push_back(p.inputs[i].strides[j]);
        }
    }
    p.out = out;
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
        p.inputs[i].shape = out;
        p.inputs[i].strides = strides[i];
    }
}

}  // namespace janus
