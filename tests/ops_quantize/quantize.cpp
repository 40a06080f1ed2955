// QuantizeLinear, DequantizeLinear, Requantize: ONNX spec examples, rounding and saturation rules, per-axis,
// scalar/SIMD bit identity and every input error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <janus/ops/quantize.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

QuantizeLinear::Attrs qattrs(std::vector<float> s, std::vector<std::int64_t> zp, const char* dtype,
                             std::int64_t axis = 1) {
    QuantizeLinear::Attrs a;
    a.scale = std::move(s);
    a.zero_point = std::move(zp);
    a.dtype = dtype;
    a.axis = axis;
    return a;
}
DequantizeLinear::Attrs dattrs(std::vector<float> s, std::vector<std::int64_t> zp, std::int64_t axis = 1) {
    DequantizeLinear::Attrs a;
    a.scale = std::move(s);
    a.zero_point = std::move(zp);
    a.axis = axis;
    return a;
}

template <class T>
std::vector<T> quantize(const Shape& shape, const std::vector<float>& x, const QuantizeLinear::Attrs& a,
                        bool simd = true) {
    auto y = call<QuantizeLinear>({Tensor::from<float>(shape, x)}, a, std::nullopt, OpContext{simd});
    REQUIRE(y.ok());
    return y->template to_vector<T>();
}

template <class T>
std::vector<float> dequantize(const Shape& shape, const std::vector<T>& x, const DequantizeLinear::Attrs& a,
                              bool simd = true) {
    auto y = call<DequantizeLinear>({Tensor::from<T>(shape, x)}, a, std::nullopt, OpContext{simd});
    REQUIRE(y.ok());
    return y->template to_vector<float>();
}

/// Plain reference of ONNX QuantizeLinear for one value: saturate(round_half_even(x / s) + zp); NaN -> zp.
std::int32_t ref_quantize(float x, float s, std::int32_t zp, std::int32_t lo, std::int32_t hi) {
    const float v = x / s;  // float32 division, as ONNX
    if (std::isnan(v)) return zp;
    if (v >= 1e9f) return hi;
    if (v <= -1e9f) return lo;
    double r = std::floor(static_cast<double>(v));
    const double frac = static_cast<double>(v) - r;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
    const double q = r + zp;
    return static_cast<std::int32_t>(q < lo ? lo : q > hi ? hi : q);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

// ---- ONNX examples -----------------------------------------------------------------------------------------------

TEST_CASE("QuantizeLinear follows the ONNX example: uint8, scale 2, zero point 128") {
    const auto y = quantize<std::uint8_t>({6}, {0, 2, 3, 1000, -254, -1000}, qattrs({2}, {128}, "uint8"));
    CHECK(y == std::vector<std::uint8_t>{128, 129, 130, 255, 1, 0});
}

TEST_CASE("QuantizeLinear per-axis follows the ONNX example (axis 1, three channels)") {
    const std::vector<float> x{-162, 10, -100, 232, -20, -50, -76, 0,    0,    252,  32,   -44,
                               245,  -485, -960, -270, -375, -470};
    const auto y = quantize<std::uint8_t>({1, 3, 3, 2}, x, qattrs({2, 4, 5}, {84, 24, 196}, "uint8"));
    CHECK(y == std::vector<std::uint8_t>{3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13, 245, 99, 4, 142, 121, 102});
}

TEST_CASE("DequantizeLinear follows the ONNX examples (per-tensor and per-axis)") {
    CHECK(dequantize<std::uint8_t>({4}, {0, 3, 128, 255}, dattrs({2}, {128})) ==
          std::vector<float>{-256, -250, 0, 254});
    const std::vector<std::uint8_t> x{3, 89, 34, 200, 74, 59, 5, 24, 24, 87, 32, 13, 245, 99, 4, 142, 121, 102};
    CHECK(dequantize<std::uint8_t>({1, 3, 3, 2}, x, dattrs({2, 4, 5}, {84, 24, 196})) ==
          std::vector<float>{-162, 10, -100, 232, -20, -50, -76, 0, 0, 252, 32, -44, 245, -485, -960, -270, -375,
                             -470});
}

TEST_CASE("QuantizeLinear output carries exactly the attribute parameters (A10)") {
    const std::vector<TensorType> in{{DType::f32, {2, 3}, std::nullopt}};
    const auto t = QuantizeLinear::infer(in, qattrs({0.5f, 0.25f, 1.0f}, {1, 2, 3}, "int8", -1));
    REQUIRE(t.ok());
    CHECK(t->dtype == DType::i8);
    REQUIRE(t->quant.has_value());
    CHECK(t->quant->str() == "int8 axis=1 s=[0.5,0.25,1] zp=[1,2,3]");
    auto y = call<QuantizeLinear>({Tensor::from<float>({2}, {1, 2})}, qattrs({0.5f}, {}, "uint8"));
    REQUIRE(y.ok());
    CHECK(y->quant->str() == "uint8 s=0.5 zp=0");
    // default dtype is uint8 (ONNX, when no zero point is given)
    CHECK(QuantizeLinear::Attrs{}.dtype == "uint8");
    // a caller asking for other parameters is refused
    const TensorType other{DType::u8, {2}, numeric::make_quant(DType::u8, 0.25f, 0).value()};
    CHECK_RULE(call<QuantizeLinear>({Tensor::from<float>({2}, {1, 2})}, qattrs({0.5f}, {}, "uint8"), other),
               "output-quantization-matches-attributes");
}

// ---- rounding and saturation ---------------------------------------------------------------------------------------

TEST_CASE("QuantizeLinear rounds half to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2)") {
    const std::vector<float> x{0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, -3.5f, 2.4999998f, 2.5000002f};
    CHECK(quantize<std::int8_t>({10}, x, qattrs({1}, {0}, "int8")) ==
          std::vector<std::int8_t>{0, 2, 2, 4, 0, -2, -2, -4, 2, 3});
    // through the scale: 1.25 / 0.5 = 2.5 -> 2; with a zero point the tie is decided before adding it
    CHECK(quantize<std::uint8_t>({3}, {1.25f, 1.75f, -1.25f}, qattrs({0.5f}, {128}, "uint8")) ==
          std::vector<std::uint8_t>{130, 132, 126});
}

TEST_CASE("QuantizeLinear rounds x / scale before adding the zero point") {
    // x / s = 0.50000006 rounds to 1; adding 128 first would make the float tie 128.5 and round to 128.
    const float just_above_half = std::nextafter(0.5f, 1.0f);
    CHECK(quantize<std::uint8_t>({2}, {just_above_half, -just_above_half}, qattrs({1}, {128}, "uint8")) ==
          std::vector<std::uint8_t>{129, 127});
    CHECK(quantize<std::int8_t>({1}, {just_above_half}, qattrs({1}, {-100}, "int8")) ==
          std::vector<std::int8_t>{-99});
}

TEST_CASE("QuantizeLinear divides by the scale (not a multiplication by its reciprocal)") {
    // float32: 1.55f / 0.1f = 15.499999 -> 15, but 1.55f * (1.0f / 0.1f) = 15.5 -> 16 (tie to even). ONNX divides.
    CHECK(quantize<std::int8_t>({1}, {1.55f}, qattrs({0.1f}, {0}, "int8")) == std::vector<std::int8_t>{15});
    CHECK(quantize<std::int8_t>({1}, {1.55f}, qattrs({0.1f}, {0}, "int8"), false) == std::vector<std::int8_t>{15});
    const std::string printed =
        expr::to_string(quantize_expr<std::int8_t>(expr::In<0, float>{}, expr::cst(3), expr::cstf(0.5f)));
    CHECK(printed == "sat<int8>(add(clamp(sat<int32>(div(in0:float32, 0.5)), -65536, 65536), 3))");
}

TEST_CASE("QuantizeLinear maps NaN to the zero point and saturates infinities") {
    const std::vector<float> x{kNaN, kInf, -kInf, 1e30f, -1e30f, std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::lowest(), -kNaN};
    CHECK(quantize<std::uint8_t>({8}, x, qattrs({0.1f}, {128}, "uint8")) ==
          std::vector<std::uint8_t>{128, 255, 0, 255, 0, 255, 0, 128});
    CHECK(quantize<std::int8_t>({8}, x, qattrs({0.1f}, {-3}, "int8")) ==
          std::vector<std::int8_t>{-3, 127, -128, 127, -128, 127, -128, -3});
    // the same on the scalar path
    CHECK(quantize<std::int8_t>({8}, x, qattrs({0.1f}, {-3}, "int8"), false) ==
          std::vector<std::int8_t>{-3, 127, -128, 127, -128, 127, -128, -3});
}

TEST_CASE("uint8 and int8 quantization are exactly related: q8 = u8 - 128 with zp8 = zp - 128") {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-40.0f, 40.0f);
    std::vector<float> x(1000);
    for (auto& v : x) v = dist(rng);
    x[0] = kNaN, x[1] = kInf, x[2] = -kInf, x[3] = 0.5f * 0.3f;  // specials and a tie-ish value
    for (const std::int64_t zp : {0, 1, 77, 128, 200, 255}) {
        const auto u = quantize<std::uint8_t>({1000}, x, qattrs({0.3f}, {zp}, "uint8"));
        const auto s = quantize<std::int8_t>({1000}, x, qattrs({0.3f}, {zp - 128}, "int8"));
        for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(static_cast<int>(u[i]) - 128 == static_cast<int>(s[i]));
        // and dequantization gives the same floats, bit for bit
        CHECK(same_bits(dequantize<std::uint8_t>({1000}, u, dattrs({0.3f}, {zp})),
                        dequantize<std::int8_t>({1000}, s, dattrs({0.3f}, {zp - 128}))));
    }
    const auto q = numeric::make_quant(DType::u8, 0.3f, 200).value();
    CHECK(q.to_int8() == numeric::make_quant(DType::i8, 0.3f, 72).value());
}

TEST_CASE("QuantizeLinear matches the plain reference on random inputs, per-tensor") {
    std::mt19937 rng(77);
    std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
    std::vector<float> x(4096);
    for (auto& v : x) v = dist(rng);
    for (std::size_t i = 0; i < 64; ++i) x[i] = static_cast<float>(i) * 0.5f - 16.0f;  // ties
    const auto y = quantize<std::uint8_t>({4096}, x, qattrs({0.5f}, {100}, "uint8"));
    for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(y[i] == ref_quantize(x[i], 0.5f, 100, 0, 255));
}

// ---- per-axis ---------------------------------------------------------------------------------------------------

TEST_CASE("per-axis (de)quantization uses channel c's parameters along axis 0, 1 and the last axis") {
    const Shape shape{2, 3, 4};
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-20.0f, 20.0f);
    std::vector<float> x(24);
    for (auto& v : x) v = dist(rng);
    struct Case { std::int64_t axis; int dim; };
    for (const Case c : {Case{0, 0}, Case{1, 1}, Case{2, 2}, Case{-1, 2}, Case{-3, 0}}) {
        CAPTURE(c.axis);
        const std::int64_t n = shape[c.dim];
        std::vector<float> s;
        std::vector<std::int64_t> zp;
        for (std::int64_t k = 0; k < n; ++k) s.push_back(0.05f + 0.07f * static_cast<float>(k)), zp.push_back(-5 + 4 * k);
        const auto y = quantize<std::int8_t>(shape, x, qattrs(s, zp, "int8", c.axis));
        const auto back = dequantize<std::int8_t>(shape, y, dattrs(s, zp, c.axis));
        for (std::int64_t i = 0; i < 2; ++i)
            for (std::int64_t j = 0; j < 3; ++j)
                for (std::int64_t k = 0; k < 4; ++k) {
                    const std::size_t flat = static_cast<std::size_t>((i * 3 + j) * 4 + k);
                    const std::int64_t ch = c.dim == 0 ? i : c.dim == 1 ? j : k;
                    const float sc = s[static_cast<std::size_t>(ch)];
                    const auto z = static_cast<std::int32_t>(zp[static_cast<std::size_t>(ch)]);
                    REQUIRE(y[flat] == ref_quantize(x[flat], sc, z, -128, 127));
                    REQUIRE(back[flat] == static_cast<float>(y[flat] - z) * sc);
                }
    }
}

// ---- DequantizeLinear specifics -------------------------------------------------------------------------------------

TEST_CASE("DequantizeLinear of int32 (a bias) uses zero point 0") {
    const std::vector<std::int32_t> x{-1000, 0, 7, 123456, std::numeric_limits<std::int32_t>::max()};
    const auto y = dequantize<std::int32_t>({5}, x, dattrs({0.25f}, {}));
    CHECK(y[0] == -250.0f);
    CHECK(y[1] == 0.0f);
    CHECK(y[2] == 1.75f);
    CHECK(y[3] == 30864.0f);
    CHECK(y[4] == static_cast<float>(std::numeric_limits<std::int32_t>::max()) * 0.25f);
    CHECK_RULE(call<DequantizeLinear>({Tensor::from<std::int32_t>({1}, {1})}, dattrs({0.25f}, {5})),
               "int32-zero-point-zero");
}

TEST_CASE("DequantizeLinear takes the input's own parameters when no scale attribute is given") {
    const auto q = numeric::make_quant(DType::i8, 0.5f, -2).value();
    const Tensor x = Tensor::from<std::int8_t>({3}, {-2, 0, 10}, q);
    auto y = call<DequantizeLinear>({x}, DequantizeLinear::Attrs{});
    REQUIRE(y.ok());
    CHECK(y->to_vector<float>() == std::vector<float>{0, 1, 6});
    CHECK_FALSE(y->quantized());
    // attributes that agree are fine; attributes that disagree are an error
    CHECK(call<DequantizeLinear>({x}, dattrs({0.5f}, {-2})).ok());
    CHECK_RULE(call<DequantizeLinear>({x}, dattrs({0.5f}, {-1})), "input-quantization-agrees");
    // neither attributes nor tensor parameters
    CHECK_RULE(call<DequantizeLinear>({Tensor::from<std::int8_t>({1}, {1})}, DequantizeLinear::Attrs{}),
               "quantization-required");
    // a zero point without a scale
    CHECK_RULE(call<DequantizeLinear>({x}, dattrs({}, {-2})), "scale-required");
    // per-axis parameters carried by the tensor
    const auto qa = numeric::make_quant_per_axis(DType::u8, {1.0f, 2.0f}, {10, 20}, 0, {2, 2}).value();
    auto ya = call<DequantizeLinear>({Tensor::from<std::uint8_t>({2, 2}, {10, 11, 20, 22}, qa)}, {});
    REQUIRE(ya.ok());
    CHECK(ya->to_vector<float>() == std::vector<float>{0, 1, 0, 4});
    // the tensor's parameters are validated like attributes
    numeric::QuantParams bad = q;
    bad.scales[0] = -1.0f;
    CHECK_RULE(call<DequantizeLinear>({Tensor::from<std::int8_t>({1}, {1}, bad)}, {}), "scale-positive-finite");
}

TEST_CASE("dequantize(quantize(x)) is within scale / 2 of x inside the representable range") {
    std::mt19937 rng(99);
    for (const auto& [s, zp, dtype] : {std::tuple{0.02f, 128, "uint8"}, std::tuple{0.37f, 3, "uint8"},
                                       std::tuple{1.5f, -17, "int8"}, std::tuple{0.001f, 0, "int8"}}) {
        const bool u8 = std::string(dtype) == "uint8";
        const float lo = s * static_cast<float>((u8 ? 0 : -128) - zp), hi = s * static_cast<float>((u8 ? 255 : 127) - zp);
        std::uniform_real_distribution<float> dist(lo, hi);
        std::vector<float> x(2000);
        for (auto& v : x) v = dist(rng);
        std::vector<float> back;
        if (u8) back = dequantize<std::uint8_t>({2000}, quantize<std::uint8_t>({2000}, x, qattrs({s}, {zp}, dtype)),
                                                dattrs({s}, {zp}));
        else back = dequantize<std::int8_t>({2000}, quantize<std::int8_t>({2000}, x, qattrs({s}, {zp}, dtype)),
                                            dattrs({s}, {zp}));
        for (std::size_t i = 0; i < x.size(); ++i) {
            // s/2 plus the float32 rounding of x / s and of (q - zp) * s (a few ulp of |x|)
            const double bound = s / 2.0 + 4.0 * std::ldexp(std::fabs(static_cast<double>(x[i])) + s, -24);
            REQUIRE(std::fabs(static_cast<double>(back[i]) - x[i]) <= bound);
        }
    }
}

// ---- scalar / SIMD ------------------------------------------------------------------------------------------------

TEST_CASE("QuantizeLinear and DequantizeLinear: scalar and SIMD paths are bit-identical") {
    std::mt19937 rng(2024);
    std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
    const Shape shape{3, 5, 37};  // rows longer than a batch, with a tail
    std::vector<float> x(static_cast<std::size_t>(element_count(shape)));
    for (auto& v : x) v = dist(rng);
    for (std::size_t i = 0; i < x.size(); i += 13) x[i] = std::nearbyint(x[i] * 2.0f) / 2.0f;  // exact ties
    x[1] = kNaN, x[2] = kInf, x[3] = -kInf, x[4] = -0.0f;
    std::vector<std::vector<float>> scales{{0.7f}, {0.5f, 0.25f, 3.0f}, std::vector<float>(37, 0.5f)};
    for (std::size_t k = 0; k < 37; ++k) scales[2][k] = 0.1f + 0.05f * static_cast<float>(k);
    const std::vector<std::int64_t> axes{1, 0, 2};
    for (std::size_t c = 0; c < scales.size(); ++c) {
        std::vector<std::int64_t> zp(scales[c].size());
        for (std::size_t k = 0; k < zp.size(); ++k) zp[k] = static_cast<std::int64_t>((k * 37) % 256) - 128;
        const auto a = qattrs(scales[c], zp, "int8", axes[c]);
        const auto fast = quantize<std::int8_t>(shape, x, a, true);
        const auto slow = quantize<std::int8_t>(shape, x, a, false);
        CHECK(fast == slow);
        const auto d = dattrs(scales[c], zp, axes[c]);
        CHECK(same_bits(dequantize<std::int8_t>(shape, fast, d, true), dequantize<std::int8_t>(shape, fast, d, false)));
    }
    std::vector<std::int32_t> big(x.size());
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::int32_t>(rng());
    CHECK(same_bits(dequantize<std::int32_t>(shape, big, dattrs({0.001f}, {}), true),
                    dequantize<std::int32_t>(shape, big, dattrs({0.001f}, {}), false)));
}

// ---- Requantize ---------------------------------------------------------------------------------------------------

TEST_CASE("Requantize keeps the real value under the caller's output parameters") {
    const auto qin = numeric::make_quant(DType::i8, 0.5f, -10).value();
    const auto qout = numeric::make_quant(DType::u8, 0.25f, 128).value();
    const Tensor x = Tensor::from<std::int8_t>({6}, {-128, -10, 0, 20, 50, 127}, qin);
    Requantize::Attrs a;
    a.dtype = "uint8";
    auto y = call<Requantize>({x}, a, TensorType{DType::u8, {6}, qout});
    REQUIRE(y.ok());
    // real = 0.5 (x + 10); q = real / 0.25 + 128 = 2 (x + 10) + 128, saturated (exact ratio 2: no rounding)
    CHECK(y->to_vector<std::uint8_t>() == std::vector<std::uint8_t>{0, 128, 148, 188, 248, 255});
    CHECK(*y->quant == qout);
    // identical parameters: a bit copy
    auto same = call<Requantize>({x}, {}, TensorType{DType::i8, {6}, qin});
    REQUIRE(same.ok());
    CHECK(same->to_vector<std::int8_t>() == x.to_vector<std::int8_t>());
}

TEST_CASE("Requantize from per-axis input to per-tensor output is within 1 LSB of the exact value") {
    const auto qin = numeric::make_quant_per_axis(DType::i8, {0.1f, 0.3f}, {0, 5}, 0, {2, 64}).value();
    const auto qout = numeric::make_quant(DType::i8, 0.2f, -4).value();
    std::vector<std::int8_t> v(128);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int8_t>(static_cast<int>(i * 2) - 128);
    auto y = call<Requantize>({Tensor::from<std::int8_t>({2, 64}, v, qin)}, {}, TensorType{DType::i8, {2, 64}, qout});
    REQUIRE(y.ok());
    const auto out = y->to_vector<std::int8_t>();
    for (std::size_t i = 0; i < v.size(); ++i) {
        const std::size_t c = i / 64;
        const double real = qin.scales[c] * (v[i] - qin.zero_points[c]);
        const double exact = std::clamp(std::nearbyint(real / 0.2) - 4, -128.0, 127.0);
        REQUIRE(std::fabs(out[i] - exact) <= 1.0);
    }
}

TEST_CASE("Requantize requires the caller's output quantization (A10) and a quantized input") {
    const auto qin = numeric::make_quant(DType::i8, 0.5f, 0).value();
    const Tensor x = Tensor::from<std::int8_t>({2}, {1, 2}, qin);
    const std::vector<TensorType> t{type_of(x)};
    CHECK_FALSE(Requantize::infer(t, {})->quantized());
    CHECK_RULE(call<Requantize>({x}, {}), "output-quantization-required");
    CHECK_RULE(call<Requantize>({Tensor::from<float>({2}, {1, 2})}, {}, TensorType{DType::f32, {2}, qin}),
               "quantized-input");
    CHECK_RULE(call_with<Requantize>(std::vector<Tensor>{x}, AttrMap{{"dtype", std::string("int16")}}),
               "attribute-range");
}

// ---- errors ----------------------------------------------------------------------------------------------------------

TEST_CASE("QuantizeLinear and DequantizeLinear reject invalid parameters with named rules") {
    const Tensor f = Tensor::from<float>({2, 3}, {0, 1, 2, 3, 4, 5});
    const Tensor u = Tensor::from<std::uint8_t>({2, 3}, {0, 1, 2, 3, 4, 5});
    // scale <= 0, NaN, kInf
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({0.0f}, {}, "uint8")), "scale-positive-finite");
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({-1.0f}, {}, "uint8")), "scale-positive-finite");
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({kNaN}, {}, "uint8")), "scale-positive-finite");
    CHECK_RULE(call<DequantizeLinear>({u}, dattrs({kInf}, {})), "scale-positive-finite");
    {
        const auto r = call<QuantizeLinear>({f}, qattrs({1.0f, -2.0f, 1.0f}, {}, "uint8"));
        CHECK_RULE(r, "scale-positive-finite");
        CHECK(r.error().position == "channel 1");
    }
    // zero point out of the dtype's range
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1.0f}, {256}, "uint8")), "zero-point-in-range");
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1.0f}, {-1}, "uint8")), "zero-point-in-range");
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1.0f}, {128}, "int8")), "zero-point-in-range");
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1.0f}, {std::int64_t{1} << 40}, "int8")), "zero-point-in-range");
    CHECK_RULE(call<DequantizeLinear>({u}, dattrs({1.0f}, {300})), "zero-point-in-range");
    // per-axis length mismatches
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1, 1}, {}, "uint8")), "channels-match-extent");
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1, 1, 1}, {0, 0}, "uint8")), "scale-zero-point-same-length");
    CHECK_RULE(call<DequantizeLinear>({u}, dattrs({1, 1, 1, 1}, {}, 0)), "channels-match-extent");
    // bad axis
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1, 1, 1}, {}, "uint8", 2)), "axis-in-range");
    CHECK_RULE(call<QuantizeLinear>({f}, qattrs({1, 1, 1}, {}, "uint8", -3)), "axis-in-range");
    CHECK_RULE(call<DequantizeLinear>({u}, dattrs({1, 1, 1}, {}, 5)), "axis-in-range");
    // axis is ignored for per-tensor parameters (ONNX)
    CHECK(call<QuantizeLinear>({f}, qattrs({1}, {}, "uint8", 7)).ok());
    // unsupported dtype string, missing scale, unknown attribute
    CHECK_RULE(call_with<QuantizeLinear>(std::vector<Tensor>{f},
                                         AttrMap{{"scale", std::vector<float>{1.0f}}, {"dtype", std::string("int4")}}),
               "attribute-range");
    CHECK_RULE(call<QuantizeLinear>({f}, QuantizeLinear::Attrs{}), "attribute-range");
    CHECK_RULE(call_with<QuantizeLinear>(std::vector<Tensor>{f},
                                         AttrMap{{"scale", std::vector<float>{1.0f}}, {"y_scale", 1.0f}}),
               "known-attribute");
    // wrong input types
    CHECK_RULE(call<QuantizeLinear>({u}, qattrs({1}, {}, "uint8")), "float-input");
    CHECK_RULE(call<DequantizeLinear>({f}, dattrs({1}, {})), "quantized-integer-input");
    CHECK_RULE(call<QuantizeLinear>({f, f}, qattrs({1}, {}, "uint8")), "input-count");
    // run() called directly re-checks what call() checks
    const std::vector<Tensor> fs{f};
    CHECK_RULE(QuantizeLinear::run(fs, qattrs({1}, {}, "uint8"), TensorType{DType::i8, {2, 3}, std::nullopt}, {}),
               "output-type-matches-inference");
    CHECK_RULE(DequantizeLinear::run(fs, dattrs({1}, {}), TensorType{DType::f32, {2, 3}, std::nullopt}, {}),
               "quantized-integer-input");
    // untrusted attributes through the importer path are parsed into the same rules
    const auto r = call_with<QuantizeLinear>(
        std::vector<Tensor>{f}, AttrMap{{"scale", std::vector<float>{2.0f}}, {"zero_point", std::vector<std::int64_t>{-3}},
                                        {"dtype", std::string("int8")}});
    REQUIRE(r.ok());
    CHECK(r->to_vector<std::int8_t>() == std::vector<std::int8_t>{-3, -3, -2, -1, -1, -1});  // 0.5 -> 0, 2.5 -> 2
}
