#pragma once
// The one definition of (de)quantization as element expressions, following ONNX (opset 13+):
//   DequantizeLinear: y = (x - zero_point) * scale          computed as float((x - zp) exact int) * scale: one rounding
//   QuantizeLinear:   y = saturate(round(x / scale) + zp)   round half to even; NaN -> zp (Janus' rule; ONNX leaves
//                                                           it undefined); division, not multiplication by 1/scale
// `scale` and `zp` are expression nodes: cst (per-tensor) or chan (per-axis). Used by the QuantizeLinear /
// DequantizeLinear ops, by the LUT builder of quantized nonlinear ops, and by the tests' float reference.
#include <cstdint>
#include <memory>
#include <type_traits>

#include <janus/ops/expr.hpp>
#include <janus/numeric/quant_params.hpp>

namespace janus::ops {

/// Integer x (int8/uint8/int32) -> float.
template <expr::Expr X, expr::Expr Zp, expr::Expr S>
auto dequantize_expr(X x, Zp zp, S scale) {
    using namespace expr;
    return mul(to_float(sub(widen(x), zp)), scale);
}

/// Float x -> T (int8/uint8/int32). int8/uint8: round(x / scale) first (sat<int32_t>: half to even, NaN -> 0), then
/// add zp in int32, then saturate: exactly ONNX's saturate(round(x / scale) + zp), and NaN -> zp. Rounding must come
/// first: x / scale + zp in float can land on a tie that x / scale was not on (0.50000006 + 128 rounds to 128.5).
/// The clamp to +-2^16 keeps the int32 addition provably exact and changes no result (|zp| <= 255, and anything
/// beyond +-2^16 saturates either way). int32 (bias): (x / scale + zp) rounded once, exact for the conventional zp 0.
template <expr::Element T, expr::Expr X, expr::Expr Zp, expr::Expr S>
auto quantize_expr(X x, Zp zp, S scale) {
    using namespace expr;
    if constexpr (std::is_same_v<T, std::int32_t>) return sat<T>(add(div(x, scale), to_float(zp)));
    else return sat<T>(add(clamp(sat<std::int32_t>(div(x, scale)), -(1 << 16), 1 << 16), zp));
}

/// A table for a quantized unary op: entry q = quantize_out(f(dequantize_in(q))), where f is the op's FLOAT element
/// expression (a function object taking an expression and returning one). The quantized kernel therefore equals
/// "dequantize -> the float kernel -> quantize" exactly, by construction.
template <expr::Element Tin, expr::Element Tout, class F>
std::shared_ptr<const expr::Table256> build_table(const numeric::QuantParams& in, const numeric::QuantParams& out,
                                                  F&& f) {
    using namespace expr;
    const auto e = quantize_expr<Tout>(f(dequantize_expr(In<0, Tin>{}, cst(in.zero_point()), cstf(in.scale()))),
                                       cst(out.zero_point()), cstf(out.scale()));
    auto t = std::make_shared<Table256>();
    t->in = dtype_v<Tin>;
    t->out = dtype_v<Tout>;
    constexpr std::int32_t base = type_range<Tin>().lo;
    for (std::int32_t k = 0; k < 256; ++k) {
        ScalarArgs a;
        a.i[0] = base + k;
        t->values[static_cast<std::size_t>(k)] = e.eval(a);
    }
    return t;
}

/// Call f(std::type_identity<T>{}) for a quantized storage dtype (int8 or uint8).
template <class F>
decltype(auto) visit_quant_dtype(DType d, F&& f) {
    if (d == DType::u8) return f(std::type_identity<std::uint8_t>{});
    JANUS_ASSERT(d == DType::i8);
    return f(std::type_identity<std::int8_t>{});
}

}  // namespace janus::ops
