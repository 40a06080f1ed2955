#pragma once
// QuantizeLinear, DequantizeLinear (ONNX opset 13) and Requantize (a Janus op). Each is ONE expression from
// ops/quant_expr.hpp run as a `map`; none of them has math of its own.
//
//   QuantizeLinear    float32 x -> int8/uint8:  y = saturate(round_half_even(x / scale) + zp)   (quantize_expr)
//   DequantizeLinear  int8/uint8/int32 x -> float32:  y = float(x - zp) * scale                 (dequantize_expr)
//   Requantize        int8/uint8 x (s_in, zp_in) -> int8/uint8 y (s_out, zp_out), same real value: materialize()
//
// Parameters. ONNX passes scale and zero point as (constant) inputs; Janus takes them as attributes (the importer
// folds them): `scale` (floats: 1 value = per-tensor, N values = per-axis along `axis`), `zero_point` (ints, optional,
// default 0), `axis` (default 1, negative counts from the back, ignored for per-tensor). ONNX derives QuantizeLinear's
// output type from the zero-point tensor's type; Janus takes it as the attribute `dtype` ("int8" | "uint8", default
// "uint8", ONNX's choice when no zero point is given). Per-axis parameters feed `chan` nodes through
// MapOptions::channel_axis, so a per-channel vector is never expanded to the tensor's size (seed A7).
//
// Quantization of the output (seed A10):
//   - QuantizeLinear's output carries exactly the attribute parameters (infer proposes them; a caller-supplied
//     output quantization that differs is an error, "output-quantization-matches-attributes").
//   - DequantizeLinear reads its parameters from the attributes or, when no scale attribute is given, from the
//     input tensor's own quantization; when both exist they must agree ("input-quantization-agrees"). int32 input
//     (biases) must have zero point 0, as ONNX requires ("int32-zero-point-zero").
//   - Requantize (not an ONNX op: the explicit form of a quantization-boundary change, e.g. before a Concat or after
//     a fused activation) never proposes an output quantization: the caller's is required. Attribute `dtype`:
//     "same" (default) | "int8" | "uint8". Rounding: OpContext::rounding (round_double by default) on the ratio
//     s_in / s_out, at most 1 LSB from the exact real value (docs/numerics.md). Identical parameters copy bits.
//
// Numerics (docs/numerics.md "Quantize and dequantize"): x / scale is a float32 DIVISION (not a multiplication by
// 1/scale, which differs on ties), rounded half to even; ±inf saturate; NaN becomes the zero point (ONNX leaves it
// undefined; Janus picks the value that dequantizes to 0).
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <janus/ops/copy.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

/// Validate and build quantization parameters from untrusted attribute lists: `scale` of length 1 is per-tensor
/// (axis ignored, as in ONNX); otherwise per-axis along `axis` of a tensor of shape `shape`. Empty `zero_point`
/// means 0. Rules: scale-required, scale-zero-point-same-length, zero-point-in-range, scale-positive-finite,
/// axis-in-range, channels-match-extent.
inline Result<numeric::QuantParams> quant_from_attrs(DType dtype, const std::vector<float>& scale,
                                                     const std::vector<std::int64_t>& zero_point, std::int64_t axis,
                                                     const Shape& shape, const std::string& what) {
    if (scale.empty()) return make_error(what, "attribute scale", "scale-required", "scale needs at least one value");
    if (!zero_point.empty() && zero_point.size() != scale.size())
        return make_error(what, "attribute zero_point", "scale-zero-point-same-length",
                          std::to_string(scale.size()) + " scales but " + std::to_string(zero_point.size()) +
                              " zero points");
    std::vector<std::int32_t> zps(scale.size(), 0);
    for (std::size_t c = 0; c < zero_point.size(); ++c) {
        // Out of int32 is out of every storage range; the full check (per dtype) is make_quant's.
        if (zero_point[c] < std::numeric_limits<std::int32_t>::min() ||
            zero_point[c] > std::numeric_limits<std::int32_t>::max())
            return make_error(what, "channel " + std::to_string(c), "zero-point-in-range",
                              "zero point " + std::to_string(zero_point[c]) + " is outside the " +
                                  std::string(dtype_name(dtype)) + " range");
        zps[c] = static_cast<std::int32_t>(zero_point[c]);
    }
    if (scale.size() == 1) return numeric::make_quant(dtype, scale[0], zps[0], what);
    return numeric::make_quant_per_axis(dtype, scale, std::move(zps), axis, shape, what);
}

namespace detail {

inline std::vector<TensorType> types_of(std::span<const Tensor> in) {
    std::vector<TensorType> t;
    for (const auto& x : in) t.push_back(type_of(x));
    return t;
}

/// `out` (the caller's, when run is called directly) must have the inferred dtype and shape.
template <class O>
Status check_out_type(const TensorType& out, const TensorType& inferred) {
    if (out.dtype != inferred.dtype || !(out.shape == inferred.shape))
        return make_error(op_what<O>(), "output", "output-type-matches-inference",
                          "requested output " + out.str() + " but the op produces " + inferred.str());
    return ok_status();
}

/// Call f(std::type_identity<T>{}) for a DequantizeLinear input dtype (int8, uint8 or int32).
template <class F>
decltype(auto) visit_dequant_dtype(DType d, F&& f) {
    if (d == DType::i32) return f(std::type_identity<std::int32_t>{});
    return visit_quant_dtype(d, std::forward<F>(f));
}

/// Run `make(zp_node, scale_node)`'s expression as a map from `x` into `y`: per-tensor with cst nodes, per-axis with
/// chan nodes over the parameter vectors of `q` (which outlive the map) and the quantization axis as channel axis.
template <class Make>
Status run_quant_map(Make&& make, const numeric::QuantParams& q, const Tensor& x, Tensor& y, bool prove,
                     const OpContext& ctx, const std::string& what) {
    using namespace expr;
    const Tensor in[1] = {x};
    auto go = [&](const auto& e, int channel_axis) -> Status {
        if (prove) JANUS_CHECK(prove_ranges(e, {}, what));
        return run_map(e, std::span<const Tensor>(in), y, MapOptions{ctx.simd, channel_axis}, what);
    };
    if (q.per_tensor()) return go(make(cst(q.zero_point()), cstf(q.scale())), -1);
    return go(make(chan<std::int32_t>(std::span<const std::int32_t>(q.zero_points)),
                   chan<float>(std::span<const float>(q.scales))),
              *q.axis);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------------------------

struct QuantizeLinear {
    static constexpr fixed_string name = "QuantizeLinear";
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    struct Attrs {
        std::vector<float> scale;
        std::vector<std::int64_t> zero_point;
        std::int64_t axis = 1;
        std::string dtype = "uint8";
    };
    struct scale_given {
        std::string check(const std::vector<float>& v) const { return v.empty() ? "needs at least one value" : ""; }
    };
    static constexpr auto schema =
        attr_schema(attr<"scale">(&Attrs::scale, scale_given{}), attr<"zero_point">(&Attrs::zero_point),
                    attr<"axis">(&Attrs::axis), attr<"dtype">(&Attrs::dtype, one_of<2>{{"int8", "uint8"}}));

    static Result<numeric::QuantParams> params(const Shape& shape, const Attrs& a) {
        const DType d = a.dtype == "int8" ? DType::i8 : DType::u8;
        return quant_from_attrs(d, a.scale, a.zero_point, a.axis, shape, op_what<QuantizeLinear>());
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<QuantizeLinear>(in));
        if (in[0].dtype != DType::f32)
            return make_error(op_what<QuantizeLinear>(0), "", "float-input",
                              "QuantizeLinear takes float32, got " + in[0].str());
        JANUS_TRY(numeric::QuantParams q, params(in[0].shape, a));
        return TensorType{q.dtype, in[0].shape, q};
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_TRY(TensorType inferred, infer(detail::types_of(in), a));
        JANUS_CHECK(detail::check_out_type<QuantizeLinear>(out, inferred));
        if (out.quant && !(*out.quant == *inferred.quant))
            return make_error(op_what<QuantizeLinear>(), "output", "output-quantization-matches-attributes",
                              "requested output quantization " + out.quant->str() +
                                  " differs from the attributes' " + inferred.quant->str());
        const numeric::QuantParams& q = *inferred.quant;
        Tensor y = Tensor::zeros(q.dtype, in[0].shape(), q);
        JANUS_CHECK(visit_quant_dtype(q.dtype, [&](auto tout) -> Status {
            using To = typename decltype(tout)::type;
            auto make = [](auto zp, auto s) { return quantize_expr<To>(expr::In<0, float>{}, zp, s); };
            return detail::run_quant_map(make, q, in[0], y, true, ctx, op_what<QuantizeLinear>());
        }));
        return y;
    }
};

struct DequantizeLinear {
    static constexpr fixed_string name = "DequantizeLinear";
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    struct Attrs {
        std::vector<float> scale;              ///< empty: use the input tensor's quantization
        std::vector<std::int64_t> zero_point;
        std::int64_t axis = 1;
    };
    static constexpr auto schema = attr_schema(attr<"scale">(&Attrs::scale), attr<"zero_point">(&Attrs::zero_point),
                                               attr<"axis">(&Attrs::axis));

    /// The parameters in force: the attributes', or the input's own when no scale attribute is given.
    static Result<numeric::QuantParams> params(const TensorType& x, const Attrs& a) {
        const std::string what = op_what<DequantizeLinear>();
        if (x.dtype != DType::i8 && x.dtype != DType::u8 && x.dtype != DType::i32)
            return make_error(op_what<DequantizeLinear>(0), "", "quantized-integer-input",
                              "DequantizeLinear takes int8, uint8 or int32, got " + x.str());
        numeric::QuantParams q;
        if (a.scale.empty()) {
            if (!a.zero_point.empty())
                return make_error(what, "attribute zero_point", "scale-required",
                                  "a zero point was given without a scale");
            if (!x.quant)
                return make_error(op_what<DequantizeLinear>(0), "", "quantization-required",
                                  "no scale attribute and the input carries no quantization parameters");
            const numeric::QuantParams& t = *x.quant;
            if (t.dtype != x.dtype)
                return make_error(op_what<DequantizeLinear>(0), "", "quant-dtype-matches",
                                  "quantization dtype differs from storage dtype: " + x.str());
            // The tensor's parameters are as untrusted as attributes: validate them the same way.
            if (t.per_tensor()) {
                JANUS_CHECK(numeric::check_quant_fits(t, x.shape, op_what<DequantizeLinear>(0)));
                JANUS_TRY(q, numeric::make_quant(t.dtype, t.scale(), t.zero_point(), op_what<DequantizeLinear>(0)));
            } else {
                JANUS_TRY(q, numeric::make_quant_per_axis(t.dtype, t.scales, t.zero_points, *t.axis, x.shape,
                                                          op_what<DequantizeLinear>(0)));
            }
        } else {
            JANUS_TRY(q, quant_from_attrs(x.dtype, a.scale, a.zero_point, a.axis, x.shape, what));
            if (x.quant && !(*x.quant == q))
                return make_error(op_what<DequantizeLinear>(0), "", "input-quantization-agrees",
                                  "the attributes say " + q.str() + " but the input carries " + x.quant->str());
        }
        if (q.dtype == DType::i32)
            for (std::size_t c = 0; c < q.zero_points.size(); ++c)
                if (q.zero_points[c] != 0)
                    return make_error(what, "channel " + std::to_string(c), "int32-zero-point-zero",
                                      "an int32 input is dequantized with zero point 0 (ONNX), got " +
                                          std::to_string(q.zero_points[c]));
        return q;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<DequantizeLinear>(in));
        JANUS_CHECK(params(in[0], a));
        return TensorType{DType::f32, in[0].shape, std::nullopt};
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_TRY(TensorType inferred, infer(detail::types_of(in), a));
        JANUS_CHECK(detail::check_out_type<DequantizeLinear>(out, inferred));
        JANUS_TRY(numeric::QuantParams q, params(type_of(in[0]), a));
        Tensor y = Tensor::zeros(DType::f32, in[0].shape());
        JANUS_CHECK(detail::visit_dequant_dtype(in[0].dtype, [&](auto tin) -> Status {
            using Ti = typename decltype(tin)::type;
            auto make = [](auto zp, auto s) { return dequantize_expr(expr::In<0, Ti>{}, zp, s); };
            // int32 -> float is exact only below 2^24: ONNX rounds there too, so the range proof is for 8 bits only.
            return detail::run_quant_map(make, q, in[0], y, !std::is_same_v<Ti, std::int32_t>, ctx,
                                         op_what<DequantizeLinear>());
        }));
        return y;
    }
};

struct Requantize {
    static constexpr fixed_string name = "Requantize";
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;
    struct Attrs {
        std::string dtype = "same";  ///< output storage: the input's, or "int8" / "uint8"
    };
    static constexpr auto schema = attr_schema(attr<"dtype">(&Attrs::dtype, one_of<3>{{"same", "int8", "uint8"}}));

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Requantize>(in));
        JANUS_CHECK(require_quantized(in[0], op_what<Requantize>(0), true));
        const DType d = a.dtype == "int8" ? DType::i8 : a.dtype == "uint8" ? DType::u8 : in[0].dtype;
        return TensorType{d, in[0].shape, std::nullopt};  // seed A10: the output quantization is the caller's
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_TRY(TensorType inferred, infer(detail::types_of(in), a));
        JANUS_CHECK(detail::check_out_type<Requantize>(out, inferred));
        if (!out.quant)
            return make_error(op_what<Requantize>(), "output", "output-quantization-required",
                              "Requantize needs the output's scale and zero point; they are never copied from the "
                              "input");
        if (out.quant->dtype != out.dtype)
            return make_error(op_what<Requantize>(), "output", "quant-dtype-matches",
                              "quantization dtype differs from storage dtype: " + out.str());
        JANUS_CHECK(numeric::check_quant_fits(*out.quant, out.shape, op_what<Requantize>() + ".output"));
        return materialize(in[0], out, ctx, op_what<Requantize>());
    }
};

JANUS_OP_INSTANCES(QuantizeLinear)
JANUS_OP_INSTANCES(DequantizeLinear)
JANUS_OP_INSTANCES(Requantize)

}  // namespace janus::ops
