#pragma once
// Unary elementwise operators. Each op is ONE definition: its float element expression `math(x, attrs)`.
//   - float32 kernel:   map(math(in0))
//   - quantized kernel: map(lut(in0, table)), table[q] = quantize_out(math(dequantize_in(q))) (ops/quant_expr.hpp),
//     so the quantized op equals "dequantize -> float op -> quantize" exactly (per-tensor input quantization; the
//     output quantization is the caller's, seed A10).
//   - plain-integer kernel, only for an op that declares `plain_integers` (a PlainInts set, ops/op.hpp; the others
//     refuse plain integers with rule float-or-quantized): map(math(in0)) on the integer lanes of T, the same math
//     with its constants in T (Clip: every integer dtype, int8 to int64). The output is T without quantization.
// NaN handling follows ONNX/numpy: NaN propagates through Abs, Neg, Sign, Relu, Clip, LeakyRelu; the comparisons are
// written so that a NaN operand selects the NaN (x), never a clamp bound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>

#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

/// CRTP base: everything but the op's name, attributes and `math`.
template <class Derived>
struct unary_elementwise {
    static constexpr int min_inputs = 1;
    static constexpr int max_inputs = 1;

    /// The plain integer dtypes the op takes (Derived::plain_integers, else none).
    static constexpr PlainInts plain_ints() {
        if constexpr (requires { Derived::plain_integers; }) return Derived::plain_integers;
        else return PlainInts::none;
    }

    template <class Attrs>
    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs&) {
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_TRY(const InputKind kind, classify_input_kinds(in, op_what<Derived>(), plain_ints()));
        if (kind == InputKind::quantized) JANUS_CHECK(require_quantized(in[0], op_what<Derived>(0)));
        return TensorType{in[0].dtype, in[0].shape, std::nullopt};
    }

    template <class Attrs>
    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& attrs, const TensorType& out,
                              const OpContext& ctx) {
        JANUS_CHECK(check_arity<Derived>(in));
        auto f = [&](auto x) { return Derived::math(x, attrs); };
        const MapOptions mo{ctx.simd, -1};
        if (in[0].dtype == DType::f32) {
            Tensor y = Tensor::zeros(DType::f32, in[0].shape());
            JANUS_CHECK(run_map(f(expr::In<0, float>{}), in, y, mo, op_what<Derived>()));
            return y;
        }
        if constexpr (plain_ints() != PlainInts::none) {
            if (!in[0].quantized()) {
                const TensorType t = type_of(in[0]);
                JANUS_CHECK(classify_input_kinds(std::span<const TensorType>(&t, 1), op_what<Derived>(), plain_ints()));
                JANUS_CHECK(require_plain_output(out, in[0].dtype, op_what<Derived>()));
                return run_plain_int_map(
                    in[0].dtype, [&](auto tag) { return f(expr::In<0, typename decltype(tag)::type>{}); }, in,
                    in[0].shape(), mo, op_what<Derived>());
            }
        }
        const TensorType t = type_of(in[0]);
        JANUS_TRY(const Plan table, plan(std::span<const TensorType>(&t, 1), attrs, out, ctx.rounding));
        return visit_quant_dtype(in[0].dtype, [&](auto tin) -> Result<Tensor> {
            using Tin = typename decltype(tin)::type;
            return visit_quant_dtype(out.dtype, [&](auto tout) -> Result<Tensor> {
                using Tout = typename decltype(tout)::type;
                Tensor y = Tensor::zeros(out.dtype, in[0].shape(), out.quant);
                JANUS_CHECK(run_map(expr::lut<Tout>(expr::In<0, Tin>{}, table), in, y, mo, op_what<Derived>()));
                return y;
            });
        });
    }

    /// The plan of the quantized kernel: its 256-entry table, input code -> output code, computed from the exact
    /// real value of every input code (ops/quant_expr.hpp build_table). The host kernel looks it up; the NPU loads it
    /// into LUT RAM (emit/elementwise.hpp lower_lut). No fixed-point requantization enters, so the rounding mode does
    /// not change it.
    using Plan = std::shared_ptr<const expr::Table256>;

    template <class Attrs>
    static Result<Plan> plan(std::span<const TensorType> in, const Attrs& attrs, const TensorType& out,
                             numeric::Rounding) {
        JANUS_CHECK(check_arity<Derived>(in));
        JANUS_CHECK(require_quantized(in[0], op_what<Derived>(0)));
        if (!is_quantized_storage(out.dtype))
            return make_error(op_what<Derived>(), "output", "quantized-output",
                              "a table maps quantized codes to quantized codes; the output is " + out.str());
        JANUS_CHECK(require_output_quant(out, op_what<Derived>()));
        auto f = [&](auto x) { return Derived::math(x, attrs); };
        return visit_quant_dtype(in[0].dtype, [&](auto tin) {
            return visit_quant_dtype(out.dtype, [&](auto tout) {
                return build_table<typename decltype(tin)::type, typename decltype(tout)::type>(*in[0].quant,
                                                                                               *out.quant, f);
            });
        });
    }
};

// ---------------------------------------------------------------------------------------------------------------
// The operators. `math` uses only expr primitives; x is a float expression.

struct Abs : unary_elementwise<Abs> {
    static constexpr fixed_string name = "Abs";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) { return expr::abs(x); }
};

struct Neg : unary_elementwise<Neg> {
    static constexpr fixed_string name = "Neg";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) { return expr::neg(x); }
};

struct Sign : unary_elementwise<Sign> {
    static constexpr fixed_string name = "Sign";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) {
        using namespace expr;
        // x > 0 -> 1, x < 0 -> -1, otherwise x itself (keeps +0, -0 and NaN, as numpy.sign does)
        return select(gt(x, cstf(0)), cstf(1), select(lt(x, cstf(0)), cstf(-1), x));
    }
};

struct Relu : unary_elementwise<Relu> {
    static constexpr fixed_string name = "Relu";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) {
        using namespace expr;
        return select(lt(x, cstf(0)), cstf(0), x);
    }
};

/// Clip (opset 13: min and max are optional constant inputs, folded into attributes). Relu6 is Clip(0, 6).
/// Takes float32, quantized int8/uint8 (bounds `min`, `max`: real values) and plain integers, int8 to int64 (bounds
/// `min_int`, `max_int`: ONNX Clip-13 bounds have the input's type; the importer folds an integer constant bound
/// into them). A missing bound is the type's limit (+-inf, or T's range: an integer bound is clamped to T's range,
/// which changes no result). Bounds of the other kind than the input's are refused (rule clip-bound-type).
struct Clip : unary_elementwise<Clip> {
    static constexpr fixed_string name = "Clip";
    static constexpr PlainInts plain_integers = PlainInts::all;
    struct Attrs {
        float min = -std::numeric_limits<float>::infinity();
        float max = std::numeric_limits<float>::infinity();
        std::int64_t min_int = std::numeric_limits<std::int64_t>::min();  ///< plain integer input: lower bound
        std::int64_t max_int = std::numeric_limits<std::int64_t>::max();  ///< plain integer input: upper bound
    };
    struct min_le_max_rule {  // NaN bounds are refused; min > max is allowed by ONNX (result: max everywhere)
        std::string check(float v) const { return std::isnan(v) ? "must not be NaN" : ""; }
    };
    static constexpr auto schema =
        attr_schema(attr<"min">(&Attrs::min, min_le_max_rule{}), attr<"max">(&Attrs::max, min_le_max_rule{}),
                    attr<"min_int">(&Attrs::min_int), attr<"max_int">(&Attrs::max_int));

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_TRY(TensorType t, unary_elementwise<Clip>::infer(in, a));
        const bool plain = t.dtype != DType::f32 && !in[0].quantized();
        const bool float_bounds = a.min != Attrs{}.min || a.max != Attrs{}.max;
        const bool int_bounds = a.min_int != Attrs{}.min_int || a.max_int != Attrs{}.max_int;
        if (plain && float_bounds)
            return make_error(op_what<Clip>(), "", "clip-bound-type",
                              "a plain integer Clip takes integer bounds (min_int, max_int) in the input's type, not "
                              "float ones: " + in[0].str());
        if (!plain && int_bounds)
            return make_error(op_what<Clip>(), "", "clip-bound-type",
                              "integer bounds (min_int, max_int) are for plain integer inputs; " + in[0].str() +
                                  " takes float bounds (min, max)");
        return t;
    }

    /// A bound as a constant of the expression's element type T.
    template <class T>
    static expr::lane_t<T> bound(float f, std::int64_t i) {
        if constexpr (expr::is_float_v<T>) return f;
        else return static_cast<expr::lane_t<T>>(std::clamp<std::int64_t>(i, std::numeric_limits<T>::min(),
                                                                          std::numeric_limits<T>::max()));
    }
    template <expr::Expr X> static auto math(X x, const Attrs& a) {
        using namespace expr;
        using T = typename X::type;
        const auto min_v = bound<T>(a.min, a.min_int), max_v = bound<T>(a.max, a.max_int);
        // numpy.clip order: min first, then max (so min > max yields max everywhere)
        const auto lo = select(lt(x, cst<T>(min_v)), cst<T>(min_v), x);
        return select(gt(lo, cst<T>(max_v)), cst<T>(max_v), lo);
    }
};

struct LeakyRelu : unary_elementwise<LeakyRelu> {
    static constexpr fixed_string name = "LeakyRelu";
    struct Attrs { float alpha = 0.01f; };
    static constexpr auto schema = attr_schema(attr<"alpha">(&Attrs::alpha, finite_float{}));
    template <expr::Expr X> static auto math(X x, const Attrs& a) {
        using namespace expr;
        return select(lt(x, cstf(0)), mul(x, cstf(a.alpha)), x);
    }
};

struct HardSigmoid : unary_elementwise<HardSigmoid> {
    static constexpr fixed_string name = "HardSigmoid";
    struct Attrs { float alpha = 0.2f; float beta = 0.5f; };
    static constexpr auto schema =
        attr_schema(attr<"alpha">(&Attrs::alpha, finite_float{}), attr<"beta">(&Attrs::beta, finite_float{}));
    template <expr::Expr X> static auto math(X x, const Attrs& a) {
        using namespace expr;
        return max(cstf(0), min(cstf(1), add(mul(x, cstf(a.alpha)), cstf(a.beta))));
    }
};

/// HardSwish (opset 14): x * max(0, min(1, x/6 + 1/2)); ONNX writes alpha = 1/6, beta = 0.5.
struct HardSwish : unary_elementwise<HardSwish> {
    static constexpr fixed_string name = "HardSwish";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) {
        return expr::mul(x, HardSigmoid::math(x, HardSigmoid::Attrs{1.0f / 6.0f, 0.5f}));
    }
};

struct Sigmoid : unary_elementwise<Sigmoid> {
    static constexpr fixed_string name = "Sigmoid";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) {
        using namespace expr;
        return div(cstf(1), add(cstf(1), exp(neg(x))));
    }
};

struct Tanh : unary_elementwise<Tanh> {
    static constexpr fixed_string name = "Tanh";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) { return expr::tanh(x); }
};

struct Exp : unary_elementwise<Exp> {
    static constexpr fixed_string name = "Exp";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) { return expr::exp(x); }
};

/// Sqrt: NaN for x < 0 (IEEE), -0 for -0. Quantized: a negative real input gives NaN, which quantizes to the raw
/// value 0 (expr::sat's NaN rule), as every table entry of a NaN result does.
struct Sqrt : unary_elementwise<Sqrt> {
    static constexpr fixed_string name = "Sqrt";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) { return expr::sqrt(x); }
};

/// Reciprocal: 1 / x in float division (+-inf for +-0).
struct Reciprocal : unary_elementwise<Reciprocal> {
    static constexpr fixed_string name = "Reciprocal";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) { return expr::div(expr::cstf(1), x); }
};

struct Erf : unary_elementwise<Erf> {
    static constexpr fixed_string name = "Erf";
    using Attrs = NoAttrs;
    static constexpr auto schema = no_attrs_schema;
    template <expr::Expr X> static auto math(X x, const Attrs&) { return expr::erf(x); }
};

/// Gelu (opset 20): approximate="none": x/2 * (1 + erf(x / sqrt 2)); "tanh": x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct Gelu : unary_elementwise<Gelu> {
    static constexpr fixed_string name = "Gelu";
    struct Attrs { std::string approximate = "none"; };
    static constexpr auto schema = attr_schema(attr<"approximate">(&Attrs::approximate, one_of<2>{{"none", "tanh"}}));
    // Only one of the two formulas is evaluated per call; both are spelled with expr primitives. The choice is a
    // runtime attribute, so the expression selects between them per element at no extra kernel.
    template <expr::Expr X> static auto math(X x, const Attrs& a) {
        using namespace expr;
        const float use_tanh = a.approximate == "tanh" ? 1.0f : 0.0f;
        const auto half_x = mul(x, cstf(0.5f));
        const auto erf_form = erf(mul(x, cstf(0.70710678118654752f)));
        const auto tanh_form =
            tanh(mul(cstf(0.79788456080286536f), add(x, mul(cstf(0.044715f), mul(x, mul(x, x))))));
        return mul(half_x, add(cstf(1), select(gt(cstf(use_tanh), cstf(0)), tanh_form, erf_form)));
    }
};

JANUS_OP_INSTANCES(Abs)
JANUS_OP_INSTANCES(Neg)
JANUS_OP_INSTANCES(Sign)
JANUS_OP_INSTANCES(Relu)
JANUS_OP_INSTANCES(Clip)
JANUS_OP_INSTANCES(LeakyRelu)
JANUS_OP_INSTANCES(HardSigmoid)
JANUS_OP_INSTANCES(HardSwish)
JANUS_OP_INSTANCES(Sigmoid)
JANUS_OP_INSTANCES(Tanh)
JANUS_OP_INSTANCES(Exp)
JANUS_OP_INSTANCES(Sqrt)
JANUS_OP_INSTANCES(Reciprocal)
JANUS_OP_INSTANCES(Erf)
JANUS_OP_INSTANCES(Gelu)

}  // namespace janus::ops
