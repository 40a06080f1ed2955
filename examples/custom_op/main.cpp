// Custom op: define ONNX Softsign, y = x / (1 + |x|), in one short definition and get both host kernels from it.
//
// `unary_elementwise` (ops/unary.hpp) turns the op's float element expression `math` into
//   - the float32 kernel:   map(math(x)), vectorized with xsimd, scalar path bit-identical;
//   - the quantized kernel: a 256-entry table, entry q = quantize_out(math(dequantize_in(q))), so quantized Softsign
//     equals "dequantize -> float Softsign -> quantize" exactly, for int8 and uint8, with the caller's output
//     quantization (never the input's).
// The program runs both kernels, checks them against a plain reference written here (float: within 3e-7 relative of
// a double computation; quantized: exactly the same float steps written out by hand), prints a few values and exits
// with 1 on any mismatch. Why this is a unary op and what a binary custom op (SquaredDifference) would need: README.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <janus/ops/unary.hpp>

namespace example {

using namespace janus;

/// ONNX Softsign (opset 1): the whole definition.
struct Softsign : ops::unary_elementwise<Softsign> {
    static constexpr fixed_string name = "Softsign";
    using Attrs = ops::NoAttrs;
    static constexpr auto schema = ops::no_attrs_schema;
    template <expr::Expr X>
    static auto math(X x, const Attrs&) {
        using namespace expr;
        return div(x, add(cstf(1), abs(x)));
    }
};
static_assert(ops::Op<Softsign>, "Softsign satisfies the op concept: name, arity, attributes, infer, run");

}  // namespace example

int main() {
    using namespace janus;
    using example::Softsign;
    int failures = 0;

    // ---- float32: against a double-precision reference (two float roundings: |error| <= ~2.4e-7 relative) ----
    std::vector<float> xs;
    for (int k = -400; k <= 400; ++k) xs.push_back(static_cast<float>(k) * 0.05f);
    xs.insert(xs.end(), {1e-30f, -1e-30f, 1e6f, -1e6f, 0.0f});
    const Tensor x = Tensor::from<float>(Shape{static_cast<std::int64_t>(xs.size())}, xs);
    for (bool simd : {true, false}) {
        auto y = ops::call<Softsign>({x}, {}, std::nullopt, ops::OpContext{simd});
        if (!y.ok()) {
            std::printf("float Softsign failed: %s\n", y.error().message().c_str());
            return 1;
        }
        const auto ys = y->to_vector<float>();
        for (std::size_t k = 0; k < xs.size(); ++k) {
            const double ref = xs[k] / (1.0 + std::fabs(static_cast<double>(xs[k])));
            if (std::fabs(ys[k] - ref) > 3e-7 * std::fabs(ref)) {
                if (failures++ < 5) std::printf("float mismatch at x=%g: %.9g vs %.9g\n", xs[k], ys[k], ref);
            }
        }
        if (simd) {
            std::printf("float32 Softsign:\n");
            for (std::size_t k : {0u, 300u, 400u, 420u, 800u})
                std::printf("  x = %8.3f  ->  %.7f\n", static_cast<double>(xs[k]), static_cast<double>(ys[k]));
        }
    }

    // ---- int8 and uint8: exactly dequantize -> float Softsign -> quantize, the float steps written out by hand ----
    auto check_quantized = [&](DType d, float s_in, std::int32_t zp_in, float s_out, std::int32_t zp_out) {
        const auto qi = numeric::make_quant(d, s_in, zp_in).value();
        const auto qo = numeric::make_quant(d, s_out, zp_out).value();
        std::vector<std::int32_t> codes;
        for (std::int32_t c = qmin(d); c <= qmax(d); ++c) codes.push_back(c);
        return ops::visit_quant_dtype(d, [&](auto tag) {
            using T = typename decltype(tag)::type;
            std::vector<T> in(codes.begin(), codes.end());
            const Tensor q = Tensor::from<T>(Shape{256}, in, qi);
            for (bool simd : {true, false}) {
                auto y = ops::call<Softsign>({q}, {}, ops::TensorType{d, Shape{256}, qo}, ops::OpContext{simd});
                if (!y.ok()) {
                    std::printf("quantized Softsign failed: %s\n", y.error().message().c_str());
                    ++failures;
                    return;
                }
                const auto got = y->template to_vector<T>();
                for (std::size_t k = 0; k < 256; ++k) {
                    const float real = static_cast<float>(codes[k] - zp_in) * s_in;       // DequantizeLinear
                    const float f = real / (1.0f + std::fabs(real));                         // Softsign in float
                    const auto r = static_cast<std::int32_t>(std::nearbyint(f / s_out));     // QuantizeLinear:
                    const std::int32_t want = std::clamp(r + zp_out, qmin(d), qmax(d));      //  half to even, saturate
                    if (got[k] != want && failures++ < 5)
                        std::printf("%s mismatch at code %d: %d vs %d\n", std::string(dtype_name(d)).c_str(),
                                    codes[k], static_cast<int>(got[k]), want);
                }
                if (simd) {
                    std::printf("%s Softsign (in s=%g zp=%d, out s=%g zp=%d):\n", std::string(dtype_name(d)).c_str(),
                                static_cast<double>(s_in), zp_in, static_cast<double>(s_out), zp_out);
                    for (std::size_t k : {0u, 64u, 128u, 192u, 255u})
                        std::printf("  q = %4d (x = %7.3f)  ->  %4d (y = %.4f)\n", codes[k],
                                    static_cast<double>(s_in) * (codes[k] - zp_in), static_cast<int>(got[k]),
                                    static_cast<double>(s_out) * (got[k] - zp_out));
                }
            }
        });
    };
    check_quantized(DType::i8, 0.1f, 0, 1.0f / 127.0f, 0);
    check_quantized(DType::u8, 0.05f, 100, 2.0f / 255.0f, 128);

    if (failures == 0) std::printf("all checks passed\n");
    else std::printf("%d mismatches\n", failures);
    return failures == 0 ? 0 : 1;
}
