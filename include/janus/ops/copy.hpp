#pragma once
// Materialize: copy a tensor (usually a view: transposed, sliced, broadcast, padded...) into a new contiguous tensor
// of type `out`, requantizing when the output's quantization differs from the input's. copy_into does the same into
// an EXISTING destination (any layout, typically a slice view of a larger output: Concat writes each input there).
//
// This is the one data-movement kernel of the op set: Transpose, Slice, Expand, Concat, Requantize and every view
// that cannot stay a view end here. It is a `map` whose expression is
//   identity                                   when dtype and quantization are the same (bit copy of the values),
//                                              or
//   sat(rq(x - zp_in, s_in / s_out) + zp_out)  otherwise (int8/uint8 in and out; per-tensor or per-axis along one
//                                              axis; the rounding is the context's (OpContext::rounding):
//                                              at most 1 LSB from the exact real value, docs/numerics.md).
// Seed A4: requantization happens whenever the parameters differ, even when the op is an identity on indices.
// Any other pair of types (float <-> int, quantized <-> unquantized, int32 with different parameters) is refused:
// a copy never changes what the stored numbers mean silently.
#include <cstring>
#include <span>
#include <vector>

#include <janus/layout/iterate.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

/// Requantization parameters from `in` to `out` quantization, per channel when either is per-axis.
struct RequantPlan {
    int channel_axis = -1;                              ///< -1: per-tensor
    std::vector<numeric::QuantizedMultiplier> multipliers;  ///< 1 or per channel
    std::vector<std::int32_t> zp_in, zp_out;            ///< 1 or per channel
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of the rq
};

inline Result<RequantPlan> plan_requant(const numeric::QuantParams& in, const numeric::QuantParams& out,
                                        numeric::Rounding rounding, const std::string& what) {
    RequantPlan p;
    p.rounding = rounding;
    if (in.axis && out.axis && *in.axis != *out.axis)
        return make_error(what, "", "same-quantization-axis",
                          "input is quantized along axis " + std::to_string(*in.axis) + " but output along axis " +
                              std::to_string(*out.axis));
    if (in.axis && out.axis && in.channels() != out.channels())
        return make_error(what, "", "same-channel-count", "input and output have different channel counts");
    const std::size_t n = in.axis ? in.channels() : out.axis ? out.channels() : 1;
    p.channel_axis = in.axis ? *in.axis : out.axis ? *out.axis : -1;
    for (std::size_t c = 0; c < n; ++c) {
        JANUS_TRY(auto m, numeric::quantize_multiplier(static_cast<double>(in.scale(c)) / out.scale(c),
                                                       what + ": requantization ratio (channel " + std::to_string(c) + ")"));
        p.multipliers.push_back(m);
        p.zp_in.push_back(in.zero_point(c));
        p.zp_out.push_back(out.zero_point(c));
    }
    return p;
}

/// Copy `src` (any layout) into `dst` (any layout of the same shape, e.g. a slice view of a larger tensor; its
/// dtype and quantization say what to write). Only dst's addressed elements are written; bytes between them
/// (padding, other slices) are untouched. `dst` must not overlap `src` unless both have the same layout.
/// Rules: same-shape, same-type (a copy between unrelated types), quantized-output (requantization needs int8/uint8
/// on both sides), and plan_requant's same-quantization-axis / same-channel-count.
inline Status copy_into(const Tensor& src, Tensor& dst, const OpContext& ctx, const std::string& what = "copy") {
    if (!(src.shape() == dst.shape()))
        return make_error(what, "", "same-shape", "cannot copy " + src.shape().str() + " into " + dst.shape().str());
    const Tensor in[1] = {src};
    const std::span<const Tensor> ins(in);
    if (src.dtype == dst.dtype && src.quant == dst.quant) {  // same meaning: an exact copy of the stored values
        if (src.dtype == DType::i64) {  // int64 (indices) are moved, never computed on: copy element by element
            for_each_index(src.shape(), [&](const Dims& i) {
                std::memcpy(dst.data() + dst.layout.address(i), src.data() + src.layout.address(i), sizeof(std::int64_t));
            });
            return ok_status();
        }
        return visit_dtype(src.dtype, [&](auto t) -> Status {
            using T = typename decltype(t)::type;
            if constexpr (expr::Element<T>) JANUS_CHECK(run_map(expr::In<0, T>{}, ins, dst, MapOptions{ctx.simd, -1}, what));
            return ok_status();
        });
    }
    if (!src.quant || !dst.quant)
        return make_error(what, "", "same-type", "cannot copy " + type_of(src).str() + " into " + type_of(dst).str());
    if (!is_quantized_storage(src.dtype) || !is_quantized_storage(dst.dtype))
        return make_error(what, "", "quantized-output",
                          "requantization needs int8/uint8 on both sides, got " + type_of(src).str() + " into " +
                              type_of(dst).str());
    JANUS_TRY(RequantPlan p, plan_requant(*src.quant, *dst.quant, ctx.rounding, what));
    const MapOptions mo{ctx.simd, p.channel_axis};
    return visit_quant_dtype(src.dtype, [&](auto tin) -> Status {
        return visit_quant_dtype(dst.dtype, [&](auto tout) -> Status {
            using Ti = typename decltype(tin)::type;
            using To = typename decltype(tout)::type;
            using namespace expr;
            if (p.channel_axis < 0) {
                const auto e = sat<To>(add(rq(sub(widen(In<0, Ti>{}), cst(p.zp_in[0])), p.multipliers[0], p.rounding),
                                           cst(p.zp_out[0])));
                JANUS_CHECK(run_map(e, ins, dst, mo, what));
            } else {
                const auto e = sat<To>(add(rq(sub(widen(In<0, Ti>{}), chan<std::int32_t>(p.zp_in)),
                                              std::span<const numeric::QuantizedMultiplier>(p.multipliers), p.rounding),
                                           chan<std::int32_t>(p.zp_out)));
                JANUS_CHECK(run_map(e, ins, dst, mo, what));
            }
            return ok_status();
        });
    });
}

/// Copy `src` (any layout) into a new contiguous tensor of type `out` (same shape); see copy_into.
inline Result<Tensor> materialize(const Tensor& src, const TensorType& out, const OpContext& ctx,
                                  const std::string& what = "copy") {
    if (!(src.shape() == out.shape))
        return make_error(what, "", "same-shape", "cannot copy " + src.shape().str() + " into " + out.shape.str());
    Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
    JANUS_CHECK(copy_into(src, y, ctx, what));
    return y;
}

}  // namespace janus::ops
