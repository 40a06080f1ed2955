#pragma once
// Reduction operators: ReduceSum, ReduceMean, ReduceMax, ReduceMin (float32 and quantized int8/uint8).
//
// Semantics: ONNX ReduceSum opset 13 / opset 18 for all four, with `axes` an ATTRIBUTE (the importer folds the
// constant input): `axes` (may be negative; a duplicate is an error, rule "axes-unique"), `keepdims` (0/1, default 1),
// `noop_with_empty_axes` (0/1, default 0). Empty axes with noop 0 reduce over every axis; empty axes with noop 1 are
// the identity reduction (each output reads exactly one input) and STILL requantize (seed A4, below).
//
// One index structure, four separate sets of math (seed A3). Every op runs `run_reduce` (ops/reduce.hpp) and states
// its own four parts; nothing but the loops is shared:
//
// | op         | kind  | init       | pre              | combine     | post                                          |
// |------------|-------|------------|------------------|-------------|-----------------------------------------------|
// | ReduceSum  | float | -0.0       | x                | add (float) | acc + (count == 0 ? +0 : -0)                  |
// |            | quant | 0          | widen(x) - zp_in | add (int32) | sat(rq(acc, s_in / s_out) + zp_out)           |
// | ReduceMean | float | -0.0       | x                | add (float) | acc / float(count)                            |
// |            | quant | 0          | widen(x) - zp_in | add (int32) | sat(rq(acc, s_in / (s_out * count)) + zp_out) |
// | ReduceMax  | float | -inf       | x                | max (NaN)   | acc                                           |
// |            | quant | lowest(T)  | widen(x)         | max (int32) | sat(rq(acc - zp_in, s_in / s_out) + zp_out)   |
// | ReduceMin  | float | +inf       | x                | min (NaN)   | acc                                           |
// |            | quant | highest(T) | widen(x)         | min (int32) | sat(rq(acc - zp_in, s_in / s_out) + zp_out)   |
// float: float32 lanes; quant: int8/uint8 storage T; (NaN): a NaN element wins (numpy; ops/reduce.hpp NaN rule).
//
// Contract:
//   - float32: each output accumulates its elements in row-major order of the input (deterministic; the scalar and
//     SIMD paths agree bit for bit). init -0.0 is the exact additive identity (-0 + x == x for every x, -0 included),
//     so an identity ReduceSum is a bit copy; the post term turns an empty sum into +0 (ONNX: 0). Mean divides by the
//     float count (exact up to 2^24 elements per output). Max/min: NaN propagates (numpy); an empty reduction gives
//     -inf / +inf (ONNX opset 18). Empty mean: 0 / 0 = NaN.
//   - quantized storage: int8 -> int8, uint8 -> uint8 (the output dtype is the input's, rule "output-dtype"; its
//     parameters are the caller's, seed A10, except that max/min `infer` proposes the input's, see below).
//   - quantized sum/mean: int32 accumulator of (x - zp_in). Headroom is PROVED before the kernel runs (seed A5,
//     numeric::accumulator_range on the actual zero point): count * max|x - zp_in| must fit int32 (|x - zp_in| <= 255,
//     so any zero point is safe for count <= 8421504; a centred zero point allows up to 2^24); otherwise the op
//     refuses with rule "accumulator-fits-int32" naming the count. round_double's left shift is proved too
//     (numeric::requantize_range): with s_in / s_out >= 1 the multiplier has shift >= 1 and |acc| * 2^shift must fit
//     int32 ("requantize-left-shift-fits-int32"). Mean folds 1/count into the multiplier: one multiplier, at most
//     1 LSB from round-half-even of the exact mean (round_double rounds twice when the shift is negative; measured in
//     tests/ops_reduction, docs/numerics.md "Reductions"). Per-tensor quantization only (zp_in enters `pre`, which
//     has no channel coordinate); an empty quantized mean is refused ("nonempty-reduction").
//   - quantized max/min: the accumulator stays in the input's integer domain (rounding is monotonic, so requantizing
//     the max equals the max of requantized values); post requantizes from input to output parameters, an exact
//     identity when they are equal (ratio 1 is exactly 2^30 * 2^(1-31)). Per-axis quantization is supported when the
//     quantization axis is not reduced; `infer` then PROPOSES the output quantization (a selection preserves real
//     values), with the axis renumbered by numeric::squeezed when keepdims=0 (seed A2). An empty quantized max/min
//     has no value: rule "nonempty-reduction".
//   - seed A4: the identity reduction (empty axes + noop, or reducing only unit axes) is the same kernel with one
//     element per output; when input and output quantization differ it requantizes, when equal it is a bit copy.
//   - seed A1: `run_with_stats` returns the ReduceStats of run_reduce (outputs, reads per output, byte strides of the
//     reduced axes, horizontal or vertical): the data movement a lowering must implement. `plan` decides everything
//     from types alone (shapes, count, multipliers, accumulator range) without touching a tensor.
// Rounding: the plan's (OpContext::rounding; round_double by default), as every Janus kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/numeric/range.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>
#include <janus/ops/reduce.hpp>

namespace janus::ops {

struct ReduceAttrs {
    std::vector<std::int64_t> axes;          ///< empty: all axes, or the identity when noop_with_empty_axes = 1
    std::int64_t keepdims = 1;               ///< 1: reduced axes stay as extent 1; 0: they leave the shape
    std::int64_t noop_with_empty_axes = 0;
};

inline constexpr auto reduce_schema =
    attr_schema(attr<"axes">(&ReduceAttrs::axes, ints_range{-max_rank, max_rank - 1, 0, max_rank}),
                attr<"keepdims">(&ReduceAttrs::keepdims, int_range{0, 1}),
                attr<"noop_with_empty_axes">(&ReduceAttrs::noop_with_empty_axes, int_range{0, 1}));

/// Everything a reduction node computes, decided from types only.
struct ReducePlan {
    Dims axes;                 ///< reduced input axes, normalized and sorted (empty: identity reduction)
    bool keep_dims = true;
    bool identity = false;     ///< empty axes with noop_with_empty_axes = 1
    Shape keep_shape;          ///< the input shape with reduced axes set to 1: the kernel's coordinates
    Shape out_shape;           ///< keep_shape, minus the reduced axes when keep_dims is false
    std::int64_t count = 1;    ///< input elements combined into each output
    std::int64_t outputs = 0;
    // Quantized kernels only: requantization parameters, one per channel of `channel_axis` (kernel coordinates).
    int channel_axis = -1;
    std::vector<numeric::QuantizedMultiplier> multipliers;
    std::vector<std::int32_t> zp_in, zp_out;
    numeric::Interval acc_range{0, 0};  ///< proved range of the int32 accumulator
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of the post's rq
};

/// A reduction's output and the data movement it implied (seed A1).
struct ReduceResult {
    Tensor y;
    ReduceStats stats;
};

/// Axes, shapes and count of a reduction of an input of shape `in` (no quantization).
inline Result<ReducePlan> plan_reduce_shape(const Shape& in, const ReduceAttrs& a, const std::string& what) {
    // The size policy on the input (core/size.hpp): the plan multiplies its extents (count, outputs).
    JANUS_CHECK(checked_size(in.span(), 1, what + ".input"));
    ReducePlan p;
    const int rank = in.size();
    p.keep_dims = a.keepdims != 0;
    if (!a.axes.empty()) {
        JANUS_TRY(p.axes, normalize_axes(a.axes, rank, what + ".axes"));
    } else if (a.noop_with_empty_axes != 0) {
        p.identity = true;
    } else {
        for (int k = 0; k < rank; ++k) p.axes.push_back(k);
    }
    p.keep_shape = reduced_shape_keepdims(in, p.axes);
    p.out_shape = p.keep_shape;
    if (!p.keep_dims)
        for (int k = p.axes.size() - 1; k >= 0; --k) p.out_shape.erase(static_cast<int>(p.axes[k]));
    for (auto ax : p.axes) p.count *= in[static_cast<int>(ax)];
    p.outputs = element_count(p.keep_shape);
    return p;
}

/// The max/min epilogue: requantize an input-domain integer to the output's parameters (per channel).
template <expr::Element To, expr::Expr A>
auto requantize_post(A acc, const ReducePlan& p) {
    using namespace expr;
    return sat<To>(add(rq(sub(acc, chan<std::int32_t>(std::span<const std::int32_t>(p.zp_in))),
                          std::span<const numeric::QuantizedMultiplier>(p.multipliers), p.rounding),
                       chan<std::int32_t>(std::span<const std::int32_t>(p.zp_out))));
}

/// CRTP base: attributes, shape and quantization rules, the plan and the kernel call. The op supplies its name, its
/// combine (template argument) and its init / pre / post parts for float32 and quantized inputs, plus:
///   per_axis_quant      per-axis quantized input/output accepted (the quantization axis must not be reduced)
///   proposes_quant      infer proposes the output quantization (the op selects, it does not compute)
///   quant_needs_nonempty an empty reduction has no quantized value
template <class Derived, expr::BinOp Combine>
struct reduce_op {
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    static constexpr expr::BinOp combine = Combine;
    using Attrs = ReduceAttrs;
    static constexpr auto schema = reduce_schema;

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        const std::string what = op_what<Derived>();
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_TRY(bool q, classify_inputs(in, what));
        JANUS_TRY(ReducePlan p, plan_reduce_shape(in[0].shape, a, what));
        TensorType t{in[0].dtype, p.out_shape, std::nullopt};
        if (!q) return t;
        JANUS_CHECK(check_quant_input(in[0], p));
        JANUS_CHECK(check_nonempty(p));
        if constexpr (Derived::proposes_quant) {
            if (p.keep_dims) {
                t.quant = in[0].quant;
            } else {
                JANUS_TRY(t.quant, numeric::squeezed(*in[0].quant, p.axes, op_what<Derived>(0) + ".quant"));
            }
        }
        return t;
    }

    using Plan = ReducePlan;
    /// The whole plan from types: shapes, count, requantization parameters and the proof that the int32
    /// accumulator and every intermediate of post fit (no tensor is read or allocated).
    static Result<ReducePlan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                                   numeric::Rounding rounding) {
        JANUS_CHECK(check_arity<Derived>(in));
        const TensorType& x = in[0];
        const std::string what = op_what<Derived>();
        JANUS_TRY(ReducePlan p, plan_reduce_shape(x.shape, a, what));
        p.rounding = rounding;
        if (!(out.shape == p.out_shape))
            return make_error(what, "output", "output-shape",
                              "output shape " + out.shape.str() + " differs from the reduced shape " +
                                  p.out_shape.str());
        if (out.dtype != x.dtype)  // ONNX: T -> T (a different storage type is a QuantizeLinear's job)
            return make_error(what, "output", "output-dtype",
                              "the output must have the input's element type " + std::string(dtype_name(x.dtype)) +
                                  ", not " + out.str());
        if (x.dtype == DType::f32) return p;
        JANUS_CHECK(check_quant_input(x, p));
        JANUS_CHECK(check_nonempty(p));
        JANUS_CHECK(check_quant_output(out));

        // Channels in kernel (kept-dims) coordinates: the output's axis is moved back over the removed axes (A2).
        const numeric::QuantParams& qi = *x.quant;
        const numeric::QuantParams qo = p.keep_dims ? *out.quant : numeric::unsqueezed(*out.quant, p.axes);
        if (qi.axis && qo.axis && *qi.axis != *qo.axis)
            return make_error(what, "output", "same-quantization-axis",
                              "input is quantized along axis " + std::to_string(*qi.axis) +
                                  " but the output along (kernel) axis " + std::to_string(*qo.axis));
        p.channel_axis = qi.axis ? *qi.axis : qo.axis ? *qo.axis : -1;
        const std::int64_t channels = p.channel_axis < 0 ? 1 : p.keep_shape[p.channel_axis];
        for (std::int64_t c = 0; c < channels; ++c) {
            const auto k = static_cast<std::size_t>(c);
            const double ratio = Derived::scale_ratio(qi.scale(k), qo.scale(k), p.count);
            JANUS_TRY(auto m, numeric::quantize_multiplier(ratio, what + ": scale ratio (channel " +
                                                                      std::to_string(c) + ")"));
            p.multipliers.push_back(m);
            p.zp_in.push_back(qi.zero_point(k));
            p.zp_out.push_back(qo.zero_point(k));
        }
        JANUS_CHECK(visit_quant_dtype(x.dtype, [&](auto t) -> Status {
            return prove<typename decltype(t)::type>(p, what);
        }));
        return p;
    }

    /// The kernel and its data movement.
    static Result<ReduceResult> run_with_stats(std::span<const Tensor> in, const Attrs& a, const TensorType& out,
                                               const OpContext& ctx) {
        JANUS_CHECK(check_arity<Derived>(in));
        const std::string what = op_what<Derived>();
        const TensorType t0 = type_of(in[0]);
        JANUS_TRY(const ReducePlan p, plan(std::span<const TensorType>(&t0, 1), a, out, ctx.rounding));
        if (in[0].dtype == DType::f32) {
            const expr::In<0, float> x;
            Tensor y = Tensor::zeros(DType::f32, p.out_shape);
            JANUS_TRY(ReduceStats st, run_reduce<Combine>(Derived::pre_float(x), Derived::init_float(),
                                                          Derived::post_float(x, p.count), in[0], p.axes, y,
                                                          ReduceOptions{ctx.simd, -1}, what));
            return ReduceResult{std::move(y), std::move(st)};
        }
        return visit_quant_dtype(in[0].dtype, [&](auto tag) -> Result<ReduceResult> {
            using T = typename decltype(tag)::type;
            const auto pre = Derived::pre_quant(expr::In<0, T>{}, p);
            const auto post = Derived::template post_quant<T>(expr::In<0, std::int32_t>{}, p);
            Tensor y = Tensor::zeros(out.dtype, p.out_shape, out.quant);
            const auto init = Derived::template init_quant<T>();
            JANUS_TRY(ReduceStats st, run_reduce<Combine>(pre, init, post, in[0], p.axes, y,
                                                          ReduceOptions{ctx.simd, p.channel_axis}, what));
            return ReduceResult{std::move(y), std::move(st)};
        });
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_TRY(ReduceResult r, run_with_stats(in, a, out, ctx));
        return std::move(r.y);
    }

private:
    static Status check_quant_input(const TensorType& t, const ReducePlan& p) {
        const std::string w = op_what<Derived>(0);
        JANUS_CHECK(require_quantized(t, w, Derived::per_axis_quant));
        if (t.quant->dtype != t.dtype)
            return make_error(w, "", "quant-dtype-matches",
                              "quantization dtype differs from storage dtype: " + t.str());
        JANUS_CHECK(numeric::check_quant_fits(*t.quant, t.shape, w + ".quant"));
        if (t.quant->axis && std::find(p.axes.begin(), p.axes.end(), *t.quant->axis) != p.axes.end())
            return make_error(w, "axis " + std::to_string(*t.quant->axis), "keep-quantization-axis",
                              "the input is quantized per axis along an axis the reduction combines; elements with "
                              "different scales cannot be combined as integers (dequantize first)");
        return ok_status();
    }

    static Status check_quant_output(const TensorType& out) {
        const std::string what = op_what<Derived>();
        if (!is_quantized_storage(out.dtype))
            return make_error(what, "output", "quantized-output", "a quantized reduction produces int8/uint8, not " +
                                                                      out.str());
        if constexpr (!Derived::per_axis_quant) {
            return require_output_quant(out, what);
        } else {
            if (!out.quant)
                return make_error(what, "output", "output-quantization-required",
                                  "the output needs its own scale and zero point (infer proposes the input's)");
            if (out.quant->dtype != out.dtype)
                return make_error(what, "output", "quant-dtype-matches",
                                  "quantization dtype differs from storage dtype");
            return numeric::check_quant_fits(*out.quant, out.shape, what + ".output");
        }
    }

    static Status check_nonempty(const ReducePlan& p) {
        if (Derived::quant_needs_nonempty && p.count == 0 && p.outputs > 0)
            return make_error(op_what<Derived>(0), "axes " + p.axes.str(), "nonempty-reduction",
                              "a reduced axis has extent 0, and a quantized " + std::string(Derived::name.view()) +
                                  " of no elements has no value");
        return ok_status();
    }

    /// Seed A5: prove the accumulator and post for storage type T; records the accumulator range in p.
    template <class T>
    static Status prove(ReducePlan& p, const std::string& what) {
        using namespace expr;
        JANUS_TRY(const numeric::Interval e, check_ranges(Derived::pre_quant(In<0, T>{}, p), {}, what + ": pre"));
        const auto init = numeric::Interval::point(Derived::template init_quant<T>());
        numeric::Interval acc = init;
        if constexpr (Combine == BinOp::add) {
            // count terms of `e` (weight 1) after init: every partial sum must fit int32.
            auto sum = numeric::accumulator_range(e, numeric::Interval::point(1), p.count, init, what);
            if (!sum.ok()) {
                Error err = sum.error();
                err.detail = "reducing " + std::to_string(p.count) + " elements per output: " + err.detail;
                return err;
            }
            acc = join(init, *sum);
        } else {
            acc = join(init, e);  // min / max select one of the values: the accumulator never leaves their range
        }
        p.acc_range = acc;
        InputRanges r;
        r.r[0] = acc;
        r.set[0] = true;
        const auto post = Derived::template post_quant<T>(In<0, std::int32_t>{}, p);
        JANUS_CHECK(prove_ranges(post, r, what + ": post"));
        return expr::prove_rq_shifts(post, r, what + ": post");
    }
};

// ---------------------------------------------------------------------------------------------------------------
// The operators: each states init, pre, post (and scale ratio) for float32 and quantized inputs; combine is the
// base's template argument. `x` is In<0, T>, `acc` is In<0, accumulator>.

struct ReduceSum : reduce_op<ReduceSum, expr::BinOp::add> {
    static constexpr fixed_string name = "ReduceSum";
    static constexpr bool per_axis_quant = false, proposes_quant = false, quant_needs_nonempty = false;
    // float32
    static float init_float() { return -0.0f; }
    template <expr::Expr X> static auto pre_float(X x) { return x; }
    template <expr::Expr A> static auto post_float(A acc, std::int64_t count) {
        return expr::add(acc, expr::cstf(count == 0 ? 0.0f : -0.0f));
    }
    // quantized: |x - zp_in| <= 255 per element; headroom proved in plan()
    template <expr::Element T> static std::int32_t init_quant() { return 0; }
    template <expr::Expr X> static auto pre_quant(X x, const ReducePlan& p) {
        return expr::sub(expr::widen(x), expr::cst(p.zp_in[0]));
    }
    static double scale_ratio(double s_in, double s_out, std::int64_t) { return s_in / s_out; }
    template <expr::Element To, expr::Expr A> static auto post_quant(A acc, const ReducePlan& p) {
        return expr::sat<To>(expr::add(expr::rq(acc, p.multipliers[0], p.rounding), expr::cst(p.zp_out[0])));
    }
};

struct ReduceMean : reduce_op<ReduceMean, expr::BinOp::add> {
    static constexpr fixed_string name = "ReduceMean";
    static constexpr bool per_axis_quant = false, proposes_quant = false, quant_needs_nonempty = true;
    // float32
    static float init_float() { return -0.0f; }
    template <expr::Expr X> static auto pre_float(X x) { return x; }
    template <expr::Expr A> static auto post_float(A acc, std::int64_t count) {
        return expr::div(acc, expr::cstf(static_cast<float>(count)));
    }
    // quantized: the count is folded into the multiplier (one rounding)
    template <expr::Element T> static std::int32_t init_quant() { return 0; }
    template <expr::Expr X> static auto pre_quant(X x, const ReducePlan& p) {
        return expr::sub(expr::widen(x), expr::cst(p.zp_in[0]));
    }
    static double scale_ratio(double s_in, double s_out, std::int64_t count) {
        return s_in / (s_out * static_cast<double>(std::max<std::int64_t>(count, 1)));
    }
    template <expr::Element To, expr::Expr A> static auto post_quant(A acc, const ReducePlan& p) {
        return expr::sat<To>(expr::add(expr::rq(acc, p.multipliers[0], p.rounding), expr::cst(p.zp_out[0])));
    }
};

struct ReduceMax : reduce_op<ReduceMax, expr::BinOp::max> {
    static constexpr fixed_string name = "ReduceMax";
    static constexpr bool per_axis_quant = true, proposes_quant = true, quant_needs_nonempty = true;
    // float32
    static float init_float() { return -std::numeric_limits<float>::infinity(); }
    template <expr::Expr X> static auto pre_float(X x) { return x; }
    template <expr::Expr A> static auto post_float(A acc, std::int64_t) { return acc; }
    // quantized: input's integer domain
    template <expr::Element T> static std::int32_t init_quant() {
        return static_cast<std::int32_t>(expr::type_range<T>().lo);
    }
    template <expr::Expr X> static auto pre_quant(X x, const ReducePlan&) { return expr::widen(x); }
    static double scale_ratio(double s_in, double s_out, std::int64_t) { return s_in / s_out; }
    template <expr::Element To, expr::Expr A> static auto post_quant(A acc, const ReducePlan& p) {
        return requantize_post<To>(acc, p);
    }
};

struct ReduceMin : reduce_op<ReduceMin, expr::BinOp::min> {
    static constexpr fixed_string name = "ReduceMin";
    static constexpr bool per_axis_quant = true, proposes_quant = true, quant_needs_nonempty = true;
    // float32
    static float init_float() { return std::numeric_limits<float>::infinity(); }
    template <expr::Expr X> static auto pre_float(X x) { return x; }
    template <expr::Expr A> static auto post_float(A acc, std::int64_t) { return acc; }
    // quantized: input's integer domain
    template <expr::Element T> static std::int32_t init_quant() {
        return static_cast<std::int32_t>(expr::type_range<T>().hi);
    }
    template <expr::Expr X> static auto pre_quant(X x, const ReducePlan&) { return expr::widen(x); }
    static double scale_ratio(double s_in, double s_out, std::int64_t) { return s_in / s_out; }
    template <expr::Element To, expr::Expr A> static auto post_quant(A acc, const ReducePlan& p) {
        return requantize_post<To>(acc, p);
    }
};

JANUS_OP_INSTANCES(ReduceSum)
JANUS_OP_INSTANCES(ReduceMean)
JANUS_OP_INSTANCES(ReduceMax)
JANUS_OP_INSTANCES(ReduceMin)

}  // namespace janus::ops
