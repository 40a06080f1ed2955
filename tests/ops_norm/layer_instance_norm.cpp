// LayerNormalization (opset 17) and InstanceNormalization: float32 golden values and axis variants, the integer
// statistics / epsilon / reciprocal square root (seed A9: a naively quantized epsilon vanishes, ours does not), the
// quantized error bound against "dequantize, double, quantize", scalar/SIMD identity, and every error rule.
#include <doctest/doctest.h>

#include <support/check_rule.hpp>

#include "norm_reference.hpp"

using namespace norm_test;

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace layer_instance_norm_test {

namespace {

Result<Tensor> ln(const Tensor& x, const Tensor& g, const std::optional<Tensor>& b, std::int64_t axis, float eps,
                  std::optional<TensorType> out = std::nullopt, bool simd = true) {
    LayerNormAttrs a;
    a.axis = axis;
    a.epsilon = eps;
    std::vector<Tensor> in{x, g};
    if (b) in.push_back(*b);
    return call<LayerNormalization>(std::span<const Tensor>(in), a, std::move(out), OpContext{simd});
}

Result<Tensor> inorm(const Tensor& x, const Tensor& g, const Tensor& b, float eps,
                     std::optional<TensorType> out = std::nullopt, bool simd = true) {
    InstanceNormAttrs a;
    a.epsilon = eps;
    return call<InstanceNormalization>({x, g, b}, a, std::move(out), OpContext{simd});
}

Shape tail(const Shape& s, int axis) {
    Shape t;
    for (int k = axis; k < s.size(); ++k) t.push_back(s[k]);
    return t;
}

/// LayerNorm reference: rows = prod(shape[:axis]).
std::vector<double> ln_ref(const Tensor& x, int axis, double eps, const std::vector<float>& g,
                           const std::vector<float>& b) {
    std::int64_t rows = 1;
    for (int k = 0; k < axis; ++k) rows *= x.shape()[k];
    const std::int64_t inner = element_count(x.shape()) / rows;
    return normalize_ref(reals(x), rows, inner, eps, g, b, [](std::int64_t, std::int64_t k) { return k; });
}

std::vector<double> in_ref(const Tensor& x, double eps, const std::vector<float>& g, const std::vector<float>& b) {
    const std::int64_t C = x.shape()[1], rows = x.shape()[0] * C, inner = element_count(x.shape()) / rows;
    return normalize_ref(reals(x), rows, inner, eps, g, b, [C](std::int64_t r, std::int64_t) { return r % C; });
}

TensorType qtype(const Tensor& x, const numeric::QuantParams& q) { return TensorType{x.dtype, x.shape(), q}; }

Tensor with_shape(const std::vector<float>& v, const Shape& s) { return Tensor::from<float>(s, v); }

}  // namespace

TEST_CASE("LayerNorm float: golden values over the last axis") {
    const Tensor x = Tensor::from<float>(Shape{2, 3}, {1, 2, 3, 0, 0, 6});
    const Tensor y = ln(x, vec({1.0f, 2.0f, 1.0f}), vec({0.0f, 0.0f, 0.5f}), -1, 0.0f + 1e-12f).value();
    const double r = std::sqrt(1.5);  // row 0: mean 2, var 2/3; row 1: mean 2, var 8
    const std::vector<double> expect{-r, 0.0, r + 0.5, -2.0 / std::sqrt(8.0), -4.0 / std::sqrt(8.0),
                                     4.0 / std::sqrt(8.0) + 0.5};
    const auto got = y.to_vector<float>();
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expect[i]).epsilon(1e-5));
}

TEST_CASE("LayerNorm float: every axis, negative ones included, matches the double reference") {
    std::mt19937 rng(31);
    const Shape s{2, 3, 4};
    const Tensor x = Tensor::from<float>(s, uniform(24, -2.0f, 2.0f, rng));
    for (std::int64_t axis : {0, 1, 2, -1, -2, -3}) {
        const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
        const Shape ps = tail(s, a);
        const auto g = uniform(static_cast<std::size_t>(element_count(ps)), -1.5f, 1.5f, rng);
        const auto b = uniform(g.size(), -0.5f, 0.5f, rng);
        const auto y = ln(x, with_shape(g, ps), with_shape(b, ps), axis, 1e-5f).value().to_vector<float>();
        const auto ref = ln_ref(x, a, 1e-5, g, b);
        for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(ref[i]).epsilon(1e-4).scale(1.0));
        // without B: beta = 0
        const auto y0 = ln(x, with_shape(g, ps), std::nullopt, axis, 1e-5f).value().to_vector<float>();
        const auto ref0 = ln_ref(x, a, 1e-5, g, std::vector<float>(g.size(), 0.0f));
        for (std::size_t i = 0; i < y0.size(); ++i) CHECK(y0[i] == doctest::Approx(ref0[i]).epsilon(1e-4).scale(1.0));
    }
}

TEST_CASE("InstanceNorm float: per (n, c) statistics, per-channel scale and B") {
    std::mt19937 rng(32);
    const Tensor x = Tensor::from<float>(Shape{2, 3, 2, 5}, uniform(60, -3.0f, 3.0f, rng));
    const std::vector<float> g{1.0f, -2.0f, 0.5f}, b{0.0f, 1.0f, -1.0f};
    const auto y = inorm(x, vec(g), vec(b), 1e-5f).value().to_vector<float>();
    const auto ref = in_ref(x, 1e-5, g, b);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == doctest::Approx(ref[i]).epsilon(1e-4).scale(1.0));
}

TEST_CASE("isqrt is the exact floor square root; the row multiplier is 2^(Z+24) / D to 2^-30") {
    using norm_detail::u128;
    for (u128 r : {u128{1}, u128{2}, u128{65535}, u128{1} << 40, (u128{1} << 61) - 1, (u128{1} << 62) + 12345}) {
        CHECK(norm_detail::isqrt(r * r) == r);
        CHECK(norm_detail::isqrt(r * r - 1) == r - 1);
        CHECK(norm_detail::isqrt(r * r + 2 * r) == r);
    }
    const auto p = plan_norm_quant(64, std::vector<float>{1.0f}, {}, 1e-5, quant(DType::i8, 0.05f, 0),
                                   quant(DType::i8, 0.05f, 0), janus::numeric::default_rounding_mode, "t").value();
    std::mt19937_64 rng(33);
    for (int it = 0; it < 500; ++it) {
        const std::int64_t V = 1 + static_cast<std::int64_t>(rng() % (std::uint64_t{64} * 64 * 16384));
        const auto m = norm_row_multiplier(V, p);
        const long double exact = std::ldexp(1.0L, p.Z) /
                                  std::sqrt(static_cast<long double>(V) + 64.0L * 64.0L * p.eps_ratio);
        CHECK(std::fabs(static_cast<double>(m.value() / exact - 1.0L)) < 0x1p-22);
    }
}

TEST_CASE("seed A9: a naively quantized epsilon vanishes on a (nearly) constant row; ours keeps it") {
    // s_x = 0.005, eps = 1e-5: eps / s_x^2 = 0.4 input codes^2, which rounds to 0 in the input's own units.
    const auto qx = quant(DType::i8, 0.005f, 0), qy = quant(DType::i8, 0.05f, 0);
    const double eps = 1e-5;
    const double eps_naive = std::nearbyint(eps / (0.005 * 0.005));
    CHECK(eps_naive == 0.0);
    std::vector<std::int8_t> v(32, 10);
    v[16 + 5] = 11;  // row 0 constant, row 1 nearly constant (one code off by one)
    const Tensor x = Tensor::from<std::int8_t>(Shape{2, 16}, v, qx);
    const std::vector<float> g(16, 1.0f), b(16, 0.25f);
    const auto y = codes(ln(x, vec(g), vec(b), -1, static_cast<float>(eps), qtype(x, qy)).value());
    const auto ref = ln_ref(x, 1, static_cast<double>(static_cast<float>(eps)), g, b);
    // naive integer LayerNorm: var in codes^2 plus the rounded epsilon
    int naive_worst = 0, ours_worst = 0;
    for (int r = 0; r < 2; ++r) {
        double s1 = 0, s2 = 0;
        for (int k = 0; k < 16; ++k) s1 += v[static_cast<std::size_t>(r * 16 + k)], s2 += v[static_cast<std::size_t>(r * 16 + k)] * v[static_cast<std::size_t>(r * 16 + k)];
        const double mean = s1 / 16, var = s2 / 16 - mean * mean;
        const double naive_rstd = 1.0 / std::sqrt(var + eps_naive);
        if (r == 0) CHECK_FALSE(std::isfinite(naive_rstd));  // division by zero: the constant row blows up
        for (int k = 0; k < 16; ++k) {
            const auto i = static_cast<std::size_t>(r * 16 + k);
            const std::int32_t want = quantize_ref(ref[i], qy);
            ours_worst = std::max(ours_worst, std::abs(y[i] - want));
            if (r == 1) {
                const double naive = (v[i] - mean) * naive_rstd * g[0] + b[0];
                naive_worst = std::max(naive_worst, std::abs(quantize_ref(naive, qy) - want));
            }
        }
    }
    CHECK(y[0] == 5);  // constant row: exactly beta = 0.25 / 0.05
    CHECK(ours_worst <= 1);
    CHECK(naive_worst > 40);  // the outlier: 3.87 sd instead of 1.38 sd
    MESSAGE("naive epsilon: " << naive_worst << " LSB off; ours: " << ours_worst << " LSB");
}

TEST_CASE("tiny epsilon keeps a nonzero integer in the statistics' units and a constant row gives beta") {
    const auto qx = quant(DType::u8, 1.0f, 128), qy = quant(DType::u8, 0.01f, 128);
    const auto p = plan_norm_quant(8, std::vector<float>{1.0f}, std::vector<float>{0.3f}, 1e-12, qx, qy, janus::numeric::default_rounding_mode, "t").value();
    CHECK(p.eps_fx > 0);  // 64 * 1e-12 * 2^48 ~ 18014
    const Tensor x = Tensor::from<std::uint8_t>(Shape{1, 2, 8}, {200, 200, 200, 200, 200, 200, 200, 200,  //
                                                                 0,   1,   2,   3,   4,   5,   6,   7},
                                                qx);
    const std::vector<float> g(8, 1.0f), b(8, 0.3f);
    const auto y = codes(ln(x, vec(g), vec(b), 2, 1e-12f, qtype(x, qy)).value());
    const auto ref = ln_ref(x, 2, static_cast<double>(1e-12f), g, b);
    for (int k = 0; k < 8; ++k) CHECK(y[static_cast<std::size_t>(k)] == 158);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(std::abs(y[i] - quantize_ref(ref[i], qy)) <= 1);
}

TEST_CASE("a group of one element has zero variance: the output is beta (K = 1, V = 0 uses the capped multiplier)") {
    const auto qx = quant(DType::i8, 0.1f, 3), qy = quant(DType::i8, 0.0625f, -1);
    const Tensor x = Tensor::from<std::int8_t>(Shape{3, 1}, {-128, 0, 127}, qx);
    const auto y = codes(ln(x, vec({2.0f}), vec({0.5f}), 1, 1e-5f, qtype(x, qy)).value());
    CHECK(y == std::vector<std::int32_t>{7, 7, 7});  // 0.5 / 0.0625 - 1
    const auto yf = ln(Tensor::from<float>(Shape{3, 1}, {-5, 0, 5}), vec({2.0f}), vec({0.5f}), 1, 1e-5f).value();
    CHECK(yf.to_vector<float>() == std::vector<float>{0.5f, 0.5f, 0.5f});
}

TEST_CASE("quantized LayerNorm and InstanceNorm are within 1 LSB of dequantize-double-quantize (measured)") {
    std::mt19937 rng(34);
    int worst_ln = 0, worst_in = 0;
    std::int64_t n = 0, off = 0;
    double worst_e = 0;
    for (int it = 0; it < 120; ++it) {
        const bool u8 = it % 2 == 1;
        const DType dt = u8 ? DType::u8 : DType::i8;
        const Shape s = it % 3 == 0 ? Shape{3, 17} : it % 3 == 1 ? Shape{2, 3, 4, 5} : Shape{1, 2, 64};
        const float sx = std::uniform_real_distribution<float>(0.002f, 0.1f)(rng);
        const float sy = std::uniform_real_distribution<float>(0.01f, 0.05f)(rng);
        const std::int32_t zx = u8 ? 128 + (it % 7) * 9 - 27 : (it % 7) * 9 - 27;
        const std::int32_t zy = u8 ? 128 - (it % 5) * 7 : (it % 5) * 7 - 14;
        const auto qx = quant(dt, sx, zx), qy = quant(dt, sy, zy);
        const int spread = it % 4 == 0 ? 2 : 120;  // some nearly constant rows: epsilon matters
        const Tensor x = u8 ? random_codes<std::uint8_t>(s, rng, qx, 128 - spread, 128 + spread)
                            : random_codes<std::int8_t>(s, rng, qx, -spread, spread);
        const float eps = it % 4 == 0 ? 1e-4f : 1e-5f;
        // LayerNorm over a random axis (negative half of the time)
        const int axis = 1 + static_cast<int>(rng() % static_cast<unsigned>(s.size() - 1));
        const Shape ps = tail(s, axis);
        const auto g = uniform(static_cast<std::size_t>(element_count(ps)), -1.5f, 1.5f, rng);
        const auto b = uniform(g.size(), -1.0f, 1.0f, rng);
        const std::int64_t ax = it % 2 == 0 ? axis : axis - s.size();
        const auto y = codes(ln(x, with_shape(g, ps), with_shape(b, ps), ax, eps, qtype(x, qy)).value());
        const auto ref = ln_ref(x, axis, eps, g, b);
        for (std::size_t i = 0; i < y.size(); ++i) {
            const int d = std::abs(y[i] - quantize_ref(ref[i], qy));
            worst_ln = std::max(worst_ln, d);
            off += d != 0;
            ++n;
        }
        std::int64_t rows = 1;
        for (int k = 0; k < axis; ++k) rows *= s[k];
        worst_e = std::max(worst_e, plan_norm_quant(element_count(s) / rows, g, b, eps, qx, qy, janus::numeric::default_rounding_mode, "t")->extra_error_lsb);
        // InstanceNorm (rank >= 3 only)
        if (s.size() >= 3) {
            const auto C = static_cast<std::size_t>(s[1]);
            const auto gi = uniform(C, -1.5f, 1.5f, rng), bi = uniform(C, -1.0f, 1.0f, rng);
            const auto yi = codes(inorm(x, vec(gi), vec(bi), eps, qtype(x, qy)).value());
            const auto ri = in_ref(x, eps, gi, bi);
            for (std::size_t i = 0; i < yi.size(); ++i) {
                const int d = std::abs(yi[i] - quantize_ref(ri[i], qy));
                worst_in = std::max(worst_in, d);
                off += d != 0;
                ++n;
            }
        }
    }
    MESSAGE("LayerNorm max |error| = " << worst_ln << " LSB, InstanceNorm " << worst_in << " LSB; " << off << " of "
                                       << n << " outputs off by 1; largest planned e = " << worst_e);
    CHECK(worst_ln <= 1);
    CHECK(worst_in <= 1);
    CHECK(worst_e < 0.5);
}

TEST_CASE("LayerNorm / InstanceNorm scalar and SIMD paths are bit-identical; a strided input equals its copy") {
    std::mt19937 rng(35);
    const Shape s{2, 3, 4, 9};
    const Tensor xf = Tensor::from<float>(s, uniform(216, -2.0f, 2.0f, rng));
    const auto g = vec(uniform(36, -1.0f, 1.0f, rng)), b = vec(uniform(36, -1.0f, 1.0f, rng));
    const Tensor g2 = g.view(reshape(g.layout, Shape{4, 9}).value()), b2 = b.view(reshape(b.layout, Shape{4, 9}).value());
    CHECK(same_bytes(ln(xf, g2, b2, -2, 1e-5f, std::nullopt, true).value(),
                     ln(xf, g2, b2, -2, 1e-5f, std::nullopt, false).value()));
    const auto gc = vec({1.0f, -0.5f, 2.0f}), bc = vec({0.1f, 0.2f, -0.3f});
    CHECK(same_bytes(inorm(xf, gc, bc, 1e-5f, std::nullopt, true).value(),
                     inorm(xf, gc, bc, 1e-5f, std::nullopt, false).value()));
    const auto qx = quant(DType::i8, 0.03f, -5), qy = quant(DType::i8, 0.04f, 3);
    const Tensor xq = random_codes<std::int8_t>(s, rng, qx);
    CHECK(same_bytes(ln(xq, g2, b2, 2, 1e-5f, qtype(xq, qy), true).value(),
                     ln(xq, g2, b2, 2, 1e-5f, qtype(xq, qy), false).value()));
    CHECK(same_bytes(inorm(xq, gc, bc, 1e-5f, qtype(xq, qy), true).value(),
                     inorm(xq, gc, bc, 1e-5f, qtype(xq, qy), false).value()));
    // a transposed (non-mergeable) view is copied to rows first: same answer as the contiguous copy
    const Dims perm{1, 0, 2, 3};
    const Tensor xt = xq.view(transpose(xq.layout, perm).value());
    const Tensor xt_copy = xt.clone();
    CHECK(same_bytes(ln(xt, g2, b2, 2, 1e-5f, qtype(xt, qy)).value(), ln(xt_copy, g2, b2, 2, 1e-5f, qtype(xt_copy, qy)).value()));
}

TEST_CASE("LayerNorm / InstanceNorm bad inputs name their rule") {
    const auto qx = quant(DType::i8, 0.1f, 0), qy = quant(DType::i8, 0.1f, 0);
    const Tensor x = Tensor::from<float>(Shape{1, 2, 2}, {1, 2, 3, 4});
    const Tensor xq = Tensor::from<std::int8_t>(Shape{1, 2, 2}, {1, 2, 3, 4}, qx);
    const Tensor p2 = vec({1, 1}), p3 = vec({1, 1, 1});
    CHECK_RULE(call<LayerNormalization>({x}, LayerNormAttrs{}), "input-count");
    CHECK_RULE(ln(x, p3, std::nullopt, -1, 1e-5f), "parameter-shape");
    CHECK_RULE(ln(x, p2, p3, -1, 1e-5f), "parameter-shape");
    CHECK_RULE(ln(x, p2, std::nullopt, -2, 1e-5f), "parameter-shape");  // needs [2, 2]
    CHECK_RULE(ln(x, Tensor::from<std::int8_t>(Shape{2}, {1, 1}, qx), std::nullopt, -1, 1e-5f), "parameter-dtype");
    CHECK_RULE(ln(x, p2, std::nullopt, 3, 1e-5f), "axis-in-range");
    CHECK_RULE(ln(x, p2, std::nullopt, -4, 1e-5f), "axis-in-range");
    CHECK_RULE(ln(x, vec({1.0f, INFINITY}), std::nullopt, -1, 1e-5f), "parameters-finite");
    CHECK_RULE(call_with<LayerNormalization>(std::vector<Tensor>{x, p2}, AttrMap{{"stash_type", std::int64_t{0}}}),
               "attribute-range");
    CHECK_RULE(call_with<LayerNormalization>(std::vector<Tensor>{x, p2}, AttrMap{{"epsilon", 0.0f}}),
               "attribute-range");
    CHECK_RULE(ln(xq, p2, std::nullopt, -1, 1e-5f), "output-quantization-required");
    const Tensor xtiny = Tensor::from<std::int8_t>(Shape{1, 2, 2}, {1, 2, 3, 4}, quant(DType::i8, 1e-7f, 0));
    CHECK_RULE(ln(xtiny, p2, std::nullopt, -1, 1.0f, qtype(xtiny, qy)), "epsilon-range");
    CHECK_RULE(ln(xq, vec({1e6f, 1.0f}), std::nullopt, -1, 1e-5f, qtype(xq, quant(DType::i8, 1e-3f, 0))),
               "normalization-scale-range");
    const Tensor wide = Tensor::zeros(DType::i8, Shape{1, 131072}, qx);
    CHECK_RULE(ln(wide, Tensor::zeros(DType::f32, Shape{131072}), std::nullopt, -1, 1e-5f, qtype(wide, qy)),
               "accumulator-fits-int32");

    CHECK_RULE(LayerNormalization::run(std::vector<Tensor>{xq, p2}, LayerNormAttrs{},
                                       TensorType{DType::u8, Shape{1, 2, 2}, quant(DType::u8, 0.1f, 0)}, OpContext{}),
               "output-dtype");
    CHECK_RULE(inorm(Tensor::from<float>(Shape{2, 2}, {1, 2, 3, 4}), p2, p2, 1e-5f), "input-rank");
    CHECK_RULE(inorm(x, p3, p2, 1e-5f), "parameter-shape");
    CHECK_RULE(inorm(x, p2, p3, 1e-5f), "parameter-shape");
    CHECK_RULE(inorm(x, p2, vec({NAN, 0.0f}), 1e-5f), "parameters-finite");
    CHECK_RULE(call_with<InstanceNormalization>(std::vector<Tensor>{x, p2, p2}, AttrMap{{"epsilon", -1.0f}}),
               "attribute-range");
    CHECK_RULE(inorm(xq, p2, p2, 1e-5f), "output-quantization-required");
    const auto per_axis = numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f}, {0, 0}, 1, Shape{1, 2, 2}).value();
    CHECK_RULE(inorm(Tensor::from<std::int8_t>(Shape{1, 2, 2}, {1, 2, 3, 4}, per_axis), p2, p2, 1e-5f,
                     TensorType{DType::i8, Shape{1, 2, 2}, qy}),
               "per-tensor-quantization");
}

}  // namespace layer_instance_norm_test
