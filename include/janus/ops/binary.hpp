#pragma once
// Binary elementwise operators with numpy broadcasting. Each op is ONE definition: its combine kind (expr::BinOp).
// The three kernels are derived from that kind:
//   - float32:   map(bin<kind>(a, b)) (min/max: NaN-propagating, see the NaN rule below)
//   - float16:   map(wrap<float16>(bin<kind>(a, b))): the float32 expression on the exactly widened operands, each
//     result rounded to the nearest float16 (ties to even). That is the correctly rounded float16 operation (24 >=
//     2 * 11 + 2, docs/numerics.md "float16"); min and max select an operand, so they are exact.
//   - plain integers (int8 to int64 without quantization; both inputs of one dtype, the output that
//     dtype without quantization): map(wrap<T>(bin<kind>(a, b))). Add, Sub and Mul wrap around modulo 2^bits of T
//     as numpy and ONNX do (uint8 250 + 10 = 4, int8 127 + 1 = -128), computed in int32 lanes (int64 lanes for
//     int64 and uint32) modulo 2^32 (2^64) and reduced to T, so no step has undefined behaviour; Min and Max select
//     exactly.
//     A plain integer tensor never meets a quantized one (rule plain-and-quantized, ops/op.hpp).
//   - quantized: a rule chosen by the kind (docs/numerics.md "Elementwise operators"):
//       add, sub  "common scale": both inputs are brought to a shared fixed-point scale with 20 bits of headroom
//                 (x - zp) << 20, each rescaled by s_x / (2 max(s_a, s_b)), combined, then rescaled by
//                 2 max(s_a, s_b) / (2^20 s_out) and offset by zp_out (TFLite's scheme);
//       mul       "product":      (a - zp_a)(b - zp_b) rescaled by s_a s_b / s_out;
//       min, max  "monotonic":    each input rescaled to the output scale, then combined (rounding is monotonic,
//                 so min of rounded values = rounded min).
//     add, sub and mul clamp the combined value to +-acc_limit before the output rescale: beyond it the output
//     saturates anyway (|acc * ratio| >= 512 > 255 + |zp| span), and the clamp keeps every intermediate provably
//     inside int32 for EVERY valid scale combination (without it, e.g. s_a = s_b = 10, s_out = 1e-4 gives a mul
//     ratio of 10^6 and a rescaled product of up to 6.5e10, which range analysis rightly refuses).
// Float NaN rule (numpy, ONNX Runtime): Min and Max return NaN when EITHER operand is NaN; Add, Sub, Mul propagate
// NaN by IEEE arithmetic.
// Operand order is never changed (x - 0 is x, 0 - x is -x: seed B7); broadcasting gives stride-0 axes (seed B5).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include <janus/layout/broadcast.hpp>
#include <janus/layout/view.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

/// Fixed-point parameters of a quantized binary op, derived once from the three quantizations.
struct BinaryQuantPlan {
    std::int32_t zp_a = 0, zp_b = 0, zp_out = 0;
    numeric::QuantizedMultiplier m_a{}, m_b{}, m_out{};
    int left_shift = 0;
    std::int32_t acc_limit = 0;  ///< add/sub/mul: |combined value| clamped to this before the output rescale
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of every rq
};

namespace detail {
/// Smallest L <= bound such that every |acc| >= L saturates the output: |acc * m| >= 512 (rq is within 1 of exact,
/// and 511 - 255 > 255, the widest distance from a zero point to the far end of int8/uint8).
inline std::int32_t saturation_limit(std::int64_t bound, const numeric::QuantizedMultiplier& m) {
    if (m.is_zero()) return static_cast<std::int32_t>(bound);
    const long double l = std::ceil(512.0L / m.value());
    return static_cast<std::int32_t>(l < static_cast<long double>(bound) ? static_cast<std::int64_t>(l) : bound);
}
}  // namespace detail

namespace detail {
/// The fixed-point parameters of `Kind` from the three quantizations (the body of binary_elementwise::plan).
template <expr::BinOp Kind>
Result<BinaryQuantPlan> plan_binary_quant(const numeric::QuantParams& a, const numeric::QuantParams& b,
                                          const numeric::QuantParams& out, numeric::Rounding rounding,
                                          const std::string& what) {
    BinaryQuantPlan p;
    p.rounding = rounding;
    p.zp_a = a.zero_point();
    p.zp_b = b.zero_point();
    p.zp_out = out.zero_point();
    const double sa = a.scale(), sb = b.scale(), so = out.scale();
    if constexpr (Kind == expr::BinOp::add || Kind == expr::BinOp::sub) {
        p.left_shift = 20;  // |x - zp| <= 255, so (x - zp) << 20 < 2^28: headroom for the sum of two such terms
        const double twice_max = 2.0 * std::max(sa, sb);
        JANUS_TRY(p.m_a, numeric::quantize_multiplier(sa / twice_max, what + ": input[0] scale ratio"));
        JANUS_TRY(p.m_b, numeric::quantize_multiplier(sb / twice_max, what + ": input[1] scale ratio"));
        JANUS_TRY(p.m_out, numeric::quantize_multiplier(twice_max / (static_cast<double>(1 << p.left_shift) * so),
                                                        what + ": output scale ratio"));
        p.acc_limit = detail::saturation_limit(std::int64_t{1} << 29, p.m_out);  // |ra + rb| <= 2 * 2^27 + 2
    } else if constexpr (Kind == expr::BinOp::mul) {
        JANUS_TRY(p.m_out, numeric::quantize_multiplier(sa * sb / so, what + ": product scale ratio"));
        p.acc_limit = detail::saturation_limit(255 * 255, p.m_out);
    } else {
        JANUS_TRY(p.m_a, numeric::quantize_multiplier(sa / so, what + ": input[0] scale ratio"));
        JANUS_TRY(p.m_b, numeric::quantize_multiplier(sb / so, what + ": input[1] scale ratio"));
    }
    return p;
}
}  // namespace detail

/// The quantized element expression of a binary op, for storage types Ta (both inputs) and To (output).
template <expr::BinOp Kind, expr::Element T, expr::Element To>
auto binary_quant_expr(const BinaryQuantPlan& p) {
    using namespace expr;
    const auto a = sub(widen(In<0, T>{}), cst(p.zp_a));
    const auto b = sub(widen(In<1, T>{}), cst(p.zp_b));
    if constexpr (Kind == BinOp::add || Kind == BinOp::sub) {
        const auto ra = rq(shl(a, p.left_shift), p.m_a, p.rounding);
        const auto rb = rq(shl(b, p.left_shift), p.m_b, p.rounding);
        const auto acc = clamp(Bin<Kind, decltype(ra), decltype(rb)>{{}, ra, rb}, -p.acc_limit, p.acc_limit);
        return sat<To>(add(rq(acc, p.m_out, p.rounding), cst(p.zp_out)));
    } else if constexpr (Kind == BinOp::mul) {
        return sat<To>(add(rq(clamp(mul(a, b), -p.acc_limit, p.acc_limit), p.m_out, p.rounding), cst(p.zp_out)));
    } else {
        const auto ra = rq(a, p.m_a, p.rounding);
        const auto rb = rq(b, p.m_b, p.rounding);
        return sat<To>(add(Bin<Kind, decltype(ra), decltype(rb)>{{}, ra, rb}, cst(p.zp_out)));
    }
}

/// CRTP base: everything but the op's name and kind.
template <class Derived, expr::BinOp Kind>
struct binary_elementwise {
    static constexpr int min_inputs = 2;
    static constexpr int max_inputs = 2;
    static constexpr expr::BinOp kind = Kind;
    static constexpr PlainInts plain_integers = PlainInts::all_float16;  ///< besides float32 and quantized
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs&) {
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_TRY(const InputKind kind, classify_input_kinds(in, op_what<Derived>(), plain_integers));
        if (kind == InputKind::quantized)
            for (int k = 0; k < 2; ++k) JANUS_CHECK(require_quantized(in[k], op_what<Derived>(k)));
        JANUS_TRY(Shape s, broadcast_shapes(in[0].shape, in[1].shape, op_what<Derived>()));
        return TensorType{in[0].dtype, s, std::nullopt};
    }

    /// The float element expression on inputs of type F (float32, or float16 widened exactly): the kind itself;
    /// min/max also return a NaN first operand (the primitive returns the second operand when either is NaN, so a
    /// NaN second operand already propagates).
    template <class F = float>
    static auto float_expr() {
        using namespace expr;
        const auto e = Bin<Kind, In<0, F>, In<1, F>>{};
        const auto x = In<0, F>{};
        if constexpr (Kind == BinOp::min || Kind == BinOp::max) return select(ne(x, x), x, e);
        else return e;
    }

    /// The plain-integer element expression for storage type T: the kind itself, reduced modulo 2^bits(T).
    template <class T>
    static auto int_expr() {
        using namespace expr;
        return wrap<T>(Bin<Kind, In<0, T>, In<1, T>>{});
    }

    /// The plan of the quantized kernel (binary_quant_expr on the host, emit/elementwise.hpp lower_binary on the
    /// NPU): zero points, multipliers, shift, accumulator clamp and rounding, from the three quantizations.
    using Plan = BinaryQuantPlan;

    static Result<Plan> plan(std::span<const TensorType> in, const Attrs&, const TensorType& out,
                             numeric::Rounding rounding) {
        JANUS_CHECK(check_arity<Derived>(in));
        for (int k = 0; k < 2; ++k) JANUS_CHECK(require_quantized(in[k], op_what<Derived>(k)));
        if (!is_quantized_storage(out.dtype))
            return make_error(op_what<Derived>(), "output", "quantized-output",
                              "the quantized kernel's output is int8 or uint8, got " + out.str());
        JANUS_CHECK(require_output_quant(out, op_what<Derived>()));
        return detail::plan_binary_quant<Kind>(*in[0].quant, *in[1].quant, *out.quant, rounding, op_what<Derived>());
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs&, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_TRY(Layout la, broadcast_to(in[0].layout, out.shape, op_what<Derived>(0)));
        JANUS_TRY(Layout lb, broadcast_to(in[1].layout, out.shape, op_what<Derived>(1)));
        const Tensor views[2] = {in[0].view(la), in[1].view(lb)};
        const MapOptions mo{ctx.simd, -1};
        if (in[0].dtype == DType::f32) {
            Tensor y = Tensor::zeros(DType::f32, out.shape);
            const auto e = float_expr();
            JANUS_CHECK(run_map(e, std::span<const Tensor>(views), y, mo, op_what<Derived>()));
            return y;
        }
        if (in[0].dtype == DType::f16 || in[1].dtype == DType::f16) {
            const TensorType types[2] = {type_of(in[0]), type_of(in[1])};
            JANUS_CHECK(classify_input_kinds(types, op_what<Derived>(), plain_integers));
            JANUS_CHECK(require_plain_output(out, DType::f16, op_what<Derived>()));
            Tensor y = Tensor::zeros(DType::f16, out.shape);
            const auto e = expr::wrap<float16>(float_expr<float16>());
            JANUS_CHECK(run_map(e, std::span<const Tensor>(views), y, mo, op_what<Derived>()));
            return y;
        }
        if (!in[0].quantized() && !in[1].quantized()) {
            const TensorType types[2] = {type_of(in[0]), type_of(in[1])};
            JANUS_TRY(const InputKind kind, classify_input_kinds(types, op_what<Derived>(), plain_integers));
            if (kind != InputKind::plain_int)
                return make_error(op_what<Derived>(), "", "same-storage-dtype", "mixes " + types[0].str() + " and " +
                                                                                    types[1].str());
            JANUS_CHECK(require_plain_output(out, in[0].dtype, op_what<Derived>()));
            return run_plain_int_map(
                in[0].dtype, [](auto tag) { return int_expr<typename decltype(tag)::type>(); },
                std::span<const Tensor>(views), out.shape, mo, op_what<Derived>());
        }
        const TensorType types[2] = {type_of(in[0]), type_of(in[1])};
        JANUS_TRY(const Plan p, plan(types, Attrs{}, out, ctx.rounding));
        return visit_quant_dtype(in[0].dtype, [&](auto tin) -> Result<Tensor> {
            return visit_quant_dtype(out.dtype, [&](auto tout) -> Result<Tensor> {
                using T = typename decltype(tin)::type;
                using To = typename decltype(tout)::type;
                const auto e = binary_quant_expr<Kind, T, To>(p);
                JANUS_CHECK(expr::prove_ranges(e, {}, op_what<Derived>()));
                Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
                JANUS_CHECK(run_map(e, std::span<const Tensor>(views), y, mo, op_what<Derived>()));
                return y;
            });
        });
    }
};

struct Add : binary_elementwise<Add, expr::BinOp::add> { static constexpr fixed_string name = "Add"; };
struct Sub : binary_elementwise<Sub, expr::BinOp::sub> { static constexpr fixed_string name = "Sub"; };
struct Mul : binary_elementwise<Mul, expr::BinOp::mul> { static constexpr fixed_string name = "Mul"; };
struct Min : binary_elementwise<Min, expr::BinOp::min> { static constexpr fixed_string name = "Min"; };
struct Max : binary_elementwise<Max, expr::BinOp::max> { static constexpr fixed_string name = "Max"; };

JANUS_OP_INSTANCES(Add)
JANUS_OP_INSTANCES(Sub)
JANUS_OP_INSTANCES(Mul)
JANUS_OP_INSTANCES(Min)
JANUS_OP_INSTANCES(Max)

}  // namespace janus::ops
