#pragma once
// Arg-reductions: ArgMax, ArgMin (ONNX opset 13), float32 and int8/uint8 inputs (quantized or plain), int64 output.
//
// Attributes: axis (default 0, may be negative: -rank <= axis < rank, rule "axis-in-range"), keepdims (0/1, default
// 1: the reduced axis stays as extent 1), select_last_index (0/1, default 0).
// Semantics (seed D14: the index rule decides the answer, not the shape):
//   - the result is the index along `axis` of the largest (ArgMax) / smallest (ArgMin) element of each group;
//   - ties: the FIRST such index, or the LAST one with select_last_index = 1; +0.0 and -0.0 tie;
//   - NaN (float, numpy's rule): a NaN is "more extreme" than every number for BOTH ArgMax and ArgMin, so a group
//     holding a NaN returns the index of its first NaN (its last NaN with select_last_index = 1);
//   - quantized inputs: the index is computed on the stored integers; quantization is irrelevant (scale > 0, so
//     the dequantization x -> s (x - zp) is strictly increasing and keeps both the order and the ties);
//   - an axis of extent 0 has no index: rule "nonempty-reduction" (when the output is non-empty).
// Kernel: ops/reduce.hpp's run_arg_reduce (the index-aware combine of the `reduce` primitive): pre = x or widen(x),
// combine = max / min on (value, index) pairs, no init, no post; `run_with_stats` returns its ReduceStats (seed A1:
// outputs, reads per output, the byte stride of the reduced axis, horizontal or vertical).
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <janus/ops/expr.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/reduce.hpp>

namespace janus::ops {

struct ArgReduceAttrs {
    std::int64_t axis = 0;
    std::int64_t keepdims = 1;
    std::int64_t select_last_index = 0;
};

inline constexpr auto arg_reduce_schema =
    attr_schema(attr<"axis">(&ArgReduceAttrs::axis, int_range{-max_rank, max_rank - 1}),
                attr<"keepdims">(&ArgReduceAttrs::keepdims, int_range{0, 1}),
                attr<"select_last_index">(&ArgReduceAttrs::select_last_index, int_range{0, 1}));

/// An arg-reduction's output and the data movement it implied (seed A1).
struct ArgReduceResult {
    Tensor y;
    ReduceStats stats;
};

template <class Derived, expr::BinOp Combine>
struct arg_reduce_op {
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    using Attrs = ArgReduceAttrs;
    static constexpr auto schema = arg_reduce_schema;

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Derived>(in));
        const TensorType& t = in[0];
        if (t.dtype != DType::f32 && !is_quantized_storage(t.dtype))
            return make_unsupported(op_what<Derived>(0), "", "float-or-int8", op_what<Derived>(0) + " type " + t.str(),
                                    "Janus takes float32, int8 or uint8");
        JANUS_TRY(int axis, normalize_axis(a.axis, t.shape.size(), op_what<Derived>() + ".axis"));
        Shape out = t.shape;
        if (a.keepdims != 0) out[axis] = 1;
        else out.erase(axis);
        if (t.shape[axis] == 0 && element_count(out) > 0)
            return make_error(op_what<Derived>(0), "axis " + std::to_string(axis), "nonempty-reduction",
                              "the axis has extent 0: there is no index to return");
        return TensorType{DType::i64, out, std::nullopt};
    }

    static Result<ArgReduceResult> run_with_stats(std::span<const Tensor> in, const Attrs& a, const TensorType& out,
                                                  const OpContext& ctx) {
        JANUS_CHECK(check_arity<Derived>(in));
        const std::string what = op_what<Derived>();
        const TensorType t = type_of(in[0]);
        const TensorType types[1] = {t};
        JANUS_TRY(TensorType inferred, infer(types, a));
        if (out.dtype != DType::i64 || !(out.shape == inferred.shape))
            return make_error(what, "output", "output-type-matches-inference",
                              "requested output " + out.str() + " but the op produces " + inferred.str());
        const int axis = static_cast<int>(a.axis < 0 ? a.axis + t.shape.size() : a.axis);
        const bool last = a.select_last_index != 0;
        Tensor y = Tensor::zeros(DType::i64, inferred.shape);
        const ReduceOptions ro{ctx.simd, -1};
        auto go = [&](const auto& pre) -> Result<ArgReduceResult> {
            JANUS_TRY(ReduceStats st, run_arg_reduce<Combine>(pre, in[0], axis, last, y, ro, what));
            return ArgReduceResult{std::move(y), std::move(st)};
        };
        if (t.dtype == DType::f32) return go(expr::In<0, float>{});
        if (t.dtype == DType::i8) return go(expr::widen(expr::In<0, std::int8_t>{}));
        return go(expr::widen(expr::In<0, std::uint8_t>{}));
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_TRY(ArgReduceResult r, run_with_stats(in, a, out, ctx));
        return std::move(r.y);
    }
};

struct ArgMax : arg_reduce_op<ArgMax, expr::BinOp::max> { static constexpr fixed_string name = "ArgMax"; };
struct ArgMin : arg_reduce_op<ArgMin, expr::BinOp::min> { static constexpr fixed_string name = "ArgMin"; };

static_assert(Op<ArgMax> && Op<ArgMin>);

JANUS_OP_INSTANCES(ArgMax)
JANUS_OP_INSTANCES(ArgMin)

}  // namespace janus::ops
