// BatchNormalization: the fold into a per-channel affine (seeds A6, A7, A8), golden cases per rule (negative gamma,
// tiny variance, tiny epsilon, per-channel parameters), the quantized error bound against "dequantize, double,
// quantize", scalar/SIMD identity, and every error rule.
#include <doctest/doctest.h>

#include <support/check_rule.hpp>

#include "norm_reference.hpp"

using namespace norm_test;

namespace {

struct BnCase {
    Tensor x;
    std::vector<float> scale, b, mean, var;
};

Result<Tensor> bn(const BnCase& c, float eps, std::optional<TensorType> out = std::nullopt, bool simd = true) {
    BatchNormAttrs a;
    a.epsilon = eps;
    return call<BatchNormalization>({c.x, vec(c.scale), vec(c.b), vec(c.mean), vec(c.var)}, a, std::move(out),
                                    OpContext{simd});
}

/// Reference: y = (x - mean) / sqrt(var + eps) * scale + B in double, channel axis 1.
std::vector<double> bn_ref(const BnCase& c, double eps) {
    const auto x = reals(c.x);
    const Shape& s = c.x.shape();
    std::int64_t inner = 1;
    for (int k = 2; k < s.size(); ++k) inner *= s[k];
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
        const auto ch = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % s[1]);
        y[i] = (x[i] - c.mean[ch]) / std::sqrt(static_cast<double>(c.var[ch]) + eps) * c.scale[ch] + c.b[ch];
    }
    return y;
}

TensorType qtype(const Tensor& x, const numeric::QuantParams& q) { return TensorType{x.dtype, x.shape(), q}; }

}  // namespace

TEST_CASE("BatchNorm float: the folded affine equals the formula (per-channel parameters)") {
    BnCase c{Tensor::from<float>(Shape{1, 2, 3}, {1, 2, 3, -1, 0, 1}), {2.0f, -0.5f}, {0.5f, 1.0f}, {2.0f, 0.0f},
             {4.0f, 0.25f}};
    const Tensor y = bn(c, 0.0f).value();
    const std::vector<float> expect{-0.5f, 0.5f, 1.5f, 2.0f, 1.0f, 0.0f};
    const auto got = y.to_vector<float>();
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expect[i]).epsilon(1e-6));
}

TEST_CASE("BatchNorm float: tiny epsilon with zero variance stays finite and exact") {
    BnCase c{Tensor::from<float>(Shape{1, 1, 3}, {0.5f, 0.5f, 0.5001f}), {1.0f}, {0.25f}, {0.5f}, {0.0f}};
    const auto got = bn(c, 1e-12f).value().to_vector<float>();
    CHECK(got[0] == 0.25f);
    CHECK(got[1] == 0.25f);
    CHECK(got[2] == doctest::Approx(0.25 + 0.0001 * 1e6).epsilon(1e-3));
}

TEST_CASE("fold_batch_norm: the parameter vectors have C entries only (seed A7)") {
    const std::vector<float> s{1, 2, 3}, b{0, 0, 0}, m{0, 0, 0}, v{1, 1, 1};
    const auto f = fold_batch_norm_affine(s, b, m, v, 0.0).value();
    const auto p = fold_batch_norm(f, m, quant(DType::i8, 0.1f, 0), quant(DType::i8, 0.1f, 0), janus::numeric::default_rounding_mode).value();
    CHECK(p.multipliers.size() == 3);
    CHECK(p.sign.size() == 3);
    CHECK(p.bias.size() == 3);
    // ratio 1, 2, 3 times 2^F (the output's fractional bits before the final rounding shift)
    CHECK(p.multipliers[0].value() == 256.0L);
    CHECK(p.multipliers[1].value() == 512.0L);
    CHECK(p.multipliers[2].value() == doctest::Approx(768.0));
    CHECK(p.offset == std::vector<std::int32_t>{0, 0, 0});
}

TEST_CASE("negative gamma flips the sign of the input term (the multiplier stays positive)") {
    const auto qx = quant(DType::i8, 0.1f, 3), qy = quant(DType::i8, 0.1f, -2);
    BnCase c{Tensor::from<std::int8_t>(Shape{1, 2, 3}, {3, 13, -7, 3, 13, -7}, qx), {-1.0f, 1.0f}, {0.0f, 0.0f},
             {0.0f, 0.0f}, {1.0f, 1.0f}};
    const auto f = fold_batch_norm_affine(c.scale, c.b, c.mean, c.var, 0.0).value();
    const auto p = fold_batch_norm(f, c.mean, qx, qy, janus::numeric::default_rounding_mode).value();
    CHECK(p.sign == std::vector<std::int32_t>{-1, 1});
    CHECK(p.multipliers[0] == p.multipliers[1]);
    CHECK(p.multipliers[0].multiplier > 0);
    const auto y = codes(bn(c, 0.0f, qtype(c.x, qy)).value());
    // channel 0: y = -x: real 0, 1, -1 -> q = -2, -12, 8; channel 1: y = x -> -2, 8, -12
    CHECK(y == std::vector<std::int32_t>{-2, -12, 8, -2, 8, -12});
}

TEST_CASE("tiny variance: a ratio beyond 2^13 is capped, centred on the mean's code, and saturates like the exact result") {
    // power-of-two scales: every real value below is exact, so the expected codes are exact too
    const auto qx = quant(DType::i8, 0.125f, 0), qy = quant(DType::i8, 0.125f, 0);
    // var 1e-14, eps 0: a = 1e7, ratio 1e7 > 2^13; x = mean (code 5) gives exactly B = 3 codes.
    BnCase c{Tensor::from<std::int8_t>(Shape{1, 1, 5}, {5, 6, 4, 127, -128}, qx), {1.0f}, {0.375f}, {0.625f},
             {1e-14f}};
    const auto f = fold_batch_norm_affine(c.scale, c.b, c.mean, c.var, 0.0).value();
    const auto p = fold_batch_norm(f, c.mean, qx, qy, janus::numeric::default_rounding_mode).value();
    CHECK(p.capped[0]);
    CHECK(p.multipliers[0].value() == 2097152.0L);  // 2^13 * 2^8
    CHECK(p.offset[0] == 5);                          // mean 0.5 is code 5
    CHECK(codes(bn(c, 0.0f, qtype(c.x, qy)).value()) == std::vector<std::int32_t>{3, 127, -128, 127, -128});
}

TEST_CASE("tiny epsilon with zero variance: capped, saturating, and the channel at its mean gives B") {
    const auto qx = quant(DType::u8, 0.0625f, 128), qy = quant(DType::u8, 0.015625f, 100);
    BnCase c{Tensor::from<std::uint8_t>(Shape{1, 2, 2}, {138, 139, 138, 137}, qx), {-2.0f, 0.0f}, {0.375f, -1.0f},
             {0.625f, 7.0f}, {0.0f, 0.0f}};
    const auto y = codes(bn(c, 1e-12f, qtype(c.x, qy)).value());
    // channel 0: x = 0.625 (the mean, code 138) -> B = 0.375 -> 24 + 100; code 139 -> -2 * 0.0625 / 1e-6 -> low.
    // channel 1: scale 0 -> y = B = -1 -> -64 + 100 whatever x is.
    CHECK(y == std::vector<std::int32_t>{124, 0, 36, 36});
}

TEST_CASE("huge bias with a huge ratio is refused (batch-norm-fold-range)") {
    const auto qx = quant(DType::i8, 0.1f, 0), qy = quant(DType::i8, 1e-4f, 0);
    BnCase c{Tensor::from<std::int8_t>(Shape{1, 1, 2}, {1, 2}, qx), {1.0f}, {1000.0f}, {0.0f}, {1e-10f}};
    CHECK_RULE(bn(c, 0.0f, qtype(c.x, qy)), "batch-norm-fold-range");
}

TEST_CASE("a huge bias alone is clamped without changing the (saturated) result") {
    const auto qx = quant(DType::i8, 0.1f, 0), qy = quant(DType::i8, 1e-4f, 0);
    BnCase c{Tensor::from<std::int8_t>(Shape{1, 2, 2}, {127, -128, 1, 2}, qx), {1.0f, 1.0f}, {1e4f, -1e4f},
             {0.0f, 0.0f}, {1.0f, 1.0f}};
    CHECK(codes(bn(c, 0.0f, qtype(c.x, qy)).value()) == std::vector<std::int32_t>{127, 127, -128, -128});
}

TEST_CASE("quantized BatchNorm is within 1 LSB of dequantize-double-quantize (randomized, measured)") {
    std::mt19937 rng(21);
    int worst = 0;
    std::int64_t n = 0, off = 0;
    for (int it = 0; it < 150; ++it) {
        const bool u8 = it % 2 == 1;
        const DType dt = u8 ? DType::u8 : DType::i8;
        const std::int64_t C = 1 + it % 4;
        const Shape s = it % 3 == 0 ? Shape{2, C} : Shape{1 + it % 2, C, 1 + it % 5, 3};
        const float sx = std::uniform_real_distribution<float>(0.005f, 0.2f)(rng);
        const float sy = std::uniform_real_distribution<float>(0.005f, 0.2f)(rng);
        const std::int32_t zx = std::uniform_int_distribution<int>(qmin(dt) / 2, qmax(dt) / 2)(rng) + (u8 ? 64 : 0);
        const std::int32_t zy = std::uniform_int_distribution<int>(qmin(dt) / 2, qmax(dt) / 2)(rng) + (u8 ? 64 : 0);
        const auto qx = quant(dt, sx, zx), qy = quant(dt, sy, zy);
        BnCase c;
        c.x = u8 ? random_codes<std::uint8_t>(s, rng, qx) : random_codes<std::int8_t>(s, rng, qx);
        const auto uc = static_cast<std::size_t>(C);
        c.scale = uniform(uc, -2.0f, 2.0f, rng);
        c.b = uniform(uc, -1.0f, 1.0f, rng);
        c.mean = uniform(uc, -1.0f, 1.0f, rng);
        c.var = uniform(uc, 0.01f, 4.0f, rng);
        if (it % 10 == 0) c.var[0] = 0.0f;  // tiny variance: only epsilon remains
        const float eps = it % 10 == 0 ? 1e-9f : 1e-5f;
        const auto y = codes(bn(c, eps, qtype(c.x, qy)).value());
        const auto ref = bn_ref(c, eps);
        for (std::size_t i = 0; i < y.size(); ++i) {
            const int d = std::abs(y[i] - quantize_ref(ref[i], qy));
            worst = std::max(worst, d);
            off += d != 0;
            ++n;
        }
    }
    MESSAGE("BatchNorm quantized: max |error| = " << worst << " LSB; " << off << " of " << n << " outputs off by 1");
    CHECK(worst <= 1);
}

TEST_CASE("BatchNorm scalar and SIMD paths are bit-identical") {
    std::mt19937 rng(22);
    const Shape s{2, 3, 5, 7};
    const std::vector<float> sc{1.5f, -0.7f, 0.2f}, b{0.1f, -0.2f, 0.3f}, m{0.0f, 0.5f, -0.5f}, v{1.0f, 0.3f, 2.0f};
    BnCase f{Tensor::from<float>(s, uniform(210, -3.0f, 3.0f, rng)), sc, b, m, v};
    CHECK(same_bytes(bn(f, 1e-5f, std::nullopt, true).value(), bn(f, 1e-5f, std::nullopt, false).value()));
    const auto qx = quant(DType::i8, 0.05f, -3), qy = quant(DType::i8, 0.04f, 5);
    BnCase q{random_codes<std::int8_t>(s, rng, qx), sc, b, m, v};
    CHECK(same_bytes(bn(q, 1e-5f, qtype(q.x, qy), true).value(), bn(q, 1e-5f, qtype(q.x, qy), false).value()));
    // rank 2: the channel axis is the innermost axis (per-lane channel indices)
    BnCase q2{random_codes<std::int8_t>(Shape{5, 3}, rng, qx), sc, b, m, v};
    CHECK(same_bytes(bn(q2, 1e-5f, qtype(q2.x, qy), true).value(), bn(q2, 1e-5f, qtype(q2.x, qy), false).value()));
}

TEST_CASE("BatchNorm bad inputs name their rule") {
    const auto qx = quant(DType::i8, 0.1f, 0), qy = quant(DType::i8, 0.1f, 0);
    const Tensor x = Tensor::from<float>(Shape{1, 2, 2}, {1, 2, 3, 4});
    const Tensor p2 = vec({1, 1}), p3 = vec({1, 1, 1});
    BatchNormAttrs a;
    CHECK_RULE(call<BatchNormalization>({x, p2, p2, p2}, a), "input-count");
    CHECK_RULE(call<BatchNormalization>({vec({1, 2}), p2, p2, p2, p2}, a), "input-rank");
    CHECK_RULE(call<BatchNormalization>({x, p3, p2, p2, p2}, a), "parameter-shape");
    CHECK_RULE(call<BatchNormalization>({x, p2, p2, p2, Tensor::from<std::int8_t>(Shape{2}, {1, 1}, qx)}, a),
               "parameter-dtype");
    CHECK_RULE(call<BatchNormalization>({x, p2, p2, p2, vec({1.0f, -1.0f})}, a), "variance-plus-epsilon-positive");
    CHECK_RULE(call<BatchNormalization>({x, p2, p2, p2, vec({0.0f, 0.0f})}, BatchNormAttrs{0.0f}),
               "variance-plus-epsilon-positive");
    CHECK_RULE(call<BatchNormalization>({x, vec({1.0f, NAN}), p2, p2, p2}, a), "parameters-finite");
    CHECK_RULE(call_with<BatchNormalization>(std::vector<Tensor>{x, p2, p2, p2, p2},
                                             AttrMap{{"training_mode", std::int64_t{1}}}),
               "attribute-range");
    const Tensor xq = Tensor::from<std::int8_t>(Shape{1, 2, 2}, {1, 2, 3, 4}, qx);
    CHECK_RULE(call<BatchNormalization>({xq, p2, p2, p2, p2}, a), "output-quantization-required");
    Tensor mislabelled = xq;  // int8 storage carrying uint8 parameters
    mislabelled.quant = quant(DType::u8, 0.1f, 128);
    CHECK_RULE(call<BatchNormalization>({mislabelled, p2, p2, p2, p2}, a), "quant-dtype-matches");
    const auto per_axis = numeric::make_quant_per_axis(DType::i8, {0.1f, 0.2f}, {0, 0}, 1, Shape{1, 2, 2}).value();
    CHECK_RULE(call<BatchNormalization>({Tensor::from<std::int8_t>(Shape{1, 2, 2}, {1, 2, 3, 4}, per_axis), p2, p2,
                                         p2, p2},
                                        a, TensorType{DType::i8, Shape{1, 2, 2}, qy}),
               "per-tensor-quantization");
    CHECK_RULE(BatchNormalization::run(std::vector<Tensor>{xq, p2, p2, p2, p2}, a, TensorType{DType::u8, Shape{1, 2, 2},
                                                                                            quant(DType::u8, 0.1f, 0)},
                                       OpContext{}),
               "output-dtype");
}
