// float16 (core/float16.hpp) and the binary ops on float16 tensors (ops/binary.hpp):
//   - the conversions against an independent reference written with double arithmetic: every one of the 65536
//     binary16 patterns widens exactly and round-trips; float32 values across binary16's whole range (a sweep of
//     bit patterns plus every rounding boundary: ties, the largest finite value, the subnormal edge) narrow to the
//     nearest binary16 with ties to even;
//   - wrap<float16>: the scalar and SIMD paths agree;
//   - Add, Sub, Mul, Min, Max on float16: equal to the exact result (computed in double, where a sum, difference or
//     product of two binary16 values is exact) rounded once to binary16, on random operands and special values, with
//     broadcasting, on both paths; Min and Max propagate NaN from either operand;
//   - the refusals: float16 mixed with float32 or with integers, ops without float16, a quantized output.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <janus/core/float16.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <support/check_rule.hpp>
#include <support/indices.hpp>

namespace float16_test {
namespace {

using namespace janus;
using namespace janus::ops;

/// The value of binary16 pattern h, from its fields (independent of float16's own conversion).
double value_of(std::uint16_t h) {
    const int sign = (h & 0x8000) ? -1 : 1;
    const int exp = (h >> 10) & 0x1F;
    const int frac = h & 0x3FF;
    if (exp == 0x1F) return frac ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
    if (exp == 0) return sign * std::ldexp(frac, -24);
    return sign * std::ldexp(1024 + frac, exp - 25);
}

/// The binary16 nearest to x (ties to even), as a pattern; x must not be NaN. Rounds the magnitude in units of the
/// binade's spacing with nearbyint (the default rounding mode: to nearest, ties to even).
std::uint16_t nearest(double x) {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(x);
    if (a >= 65520.0) return sign | 0x7C00;
    if (a < std::ldexp(1.0, -14)) return sign | static_cast<std::uint16_t>(std::nearbyint(std::ldexp(a, 24)));
    int e = 0;
    std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the spacing is 2^(e - 11)
    const double units = std::nearbyint(std::ldexp(a, 11 - e));  // in [1024, 2048]
    const double r = std::ldexp(units, e - 11);
    // re-encode r (a binary16 value, possibly 2^e after a carry)
    int re = 0;
    const double rf = std::frexp(r, &re);  // r = rf * 2^re, rf in [0.5, 1)
    const int field = re - 1 + 15;
    const auto frac = static_cast<std::uint16_t>(std::ldexp(rf, 11) - 1024);
    return sign | static_cast<std::uint16_t>(field << 10) | frac;
}

std::vector<std::uint16_t> special_bits() {
    return {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3C01, 0x7BFF,
            0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x3555, 0x4248, 0x5640, 0x0200, 0x1400};
}

TEST_CASE("float16: every pattern widens to its exact value and narrows back to itself") {
    int mismatches = 0;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto h = float16::from_bits(static_cast<std::uint16_t>(b));
        const float f = static_cast<float>(h);
        const double want = value_of(static_cast<std::uint16_t>(b));
        const bool nan = std::isnan(want);
        if (nan ? !std::isnan(f) : (static_cast<double>(f) != want || std::signbit(f) != bool(b & 0x8000)))
            ++mismatches;
        // signaling NaNs (quiet bit clear) come back quiet; every other pattern comes back unchanged
        const bool signaling = nan && (b & 0x200) == 0;
        const std::uint16_t back = float16(f).bits;
        if (back != (signaling ? (b | 0x200) : b)) ++mismatches;
    }
    CHECK(mismatches == 0);
}

TEST_CASE("float16: narrowing float32 rounds to nearest, ties to even, across binary16's whole range") {
    std::vector<float> xs;
    // A sweep of float32 patterns with exponents from below half the smallest subnormal to above the overflow.
    for (std::uint32_t bits = 0x32000000u; bits < 0x47A00000u; bits += 0x1F3Bu) {
        xs.push_back(std::bit_cast<float>(bits));
        xs.push_back(-std::bit_cast<float>(bits));
    }
    // Every boundary: each binary16 value, the midpoints to its neighbour, and one float32 ulp either side.
    for (std::uint32_t b = 0; b < 0x7C00; b += 7) {
        const double lo = value_of(static_cast<std::uint16_t>(b)), hi = value_of(static_cast<std::uint16_t>(b + 1));
        const float mid = static_cast<float>((lo + hi) / 2);  // exact: midpoints have at most 12 significant bits
        for (float f : {static_cast<float>(lo), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
            xs.push_back(f);
            xs.push_back(-f);
        }
    }
    for (float f : {65504.0f, 65519.99f, 65520.0f, 1e9f, 0x1p-25f, 0x1.000002p-25f, 0x1p-26f, 0x1.8p-24f, 0x1p-14f,
                    std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::infinity()}) {
        xs.push_back(f);
        xs.push_back(-f);
    }
    int bad = 0;
    for (float x : xs) {
        const std::uint16_t got = float16(x).bits, want = nearest(x);
        if (got != want && bad++ < 5) MESSAGE("x = " << x << " got " << got << " want " << want);
    }
    CHECK(bad == 0);
    CHECK(xs.size() > 100000);
    // NaN: quiet, sign and the top payload bits kept
    CHECK(float16(std::bit_cast<float>(0x7FC00000u)).bits == 0x7E00);
    CHECK(float16(std::bit_cast<float>(0xFFA00000u)).bits == 0xFF00);
    CHECK(float16(std::bit_cast<float>(0x7F800001u)).bits == 0x7E00);  // a signaling NaN becomes quiet, not infinity
}

Tensor half_tensor(const Shape& s, const std::vector<std::uint16_t>& bits) {
    std::vector<float16> v;
    for (auto b : bits) v.push_back(float16::from_bits(b));
    return Tensor::from<float16>(s, v);
}

TEST_CASE("expr wrap<float16>: scalar == SIMD, and its printed form") {
    using namespace expr;
    std::vector<float> v;
    std::mt19937 rng(7);
    for (int k = 0; k < 1000; ++k) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    const Tensor x = Tensor::from<float>(Shape{static_cast<std::int64_t>(v.size())}, v);
    const auto e = wrap<float16>(mul(In<0, float>{}, cstf(3.0f)));
    std::vector<float16> r[2];
    for (int simd = 0; simd < 2; ++simd) {
        Tensor y = Tensor::zeros(DType::f16, x.shape());
        const Tensor ins[1] = {x};
        REQUIRE(run_map(e, std::span<const Tensor>(ins), y, MapOptions{simd == 1, -1}).ok());
        r[simd] = y.to_vector<float16>();
    }
    int bad = 0;
    for (std::size_t k = 0; k < v.size(); ++k) {
        const float want_f = v[k] * 3.0f;
        if (std::isnan(want_f))
            bad += !(std::isnan(static_cast<float>(r[0][k])) && std::isnan(static_cast<float>(r[1][k])));
        else
            bad += !(r[0][k] == float16(want_f) && r[1][k] == r[0][k]);
    }
    CHECK(bad == 0);
    CHECK(to_string(e) == "wrap<float16>(mul(in0:float32, 3))");
}

/// The exact result of op on two binary16 values, in double (exact for + - * of two binary16 values).
template <class O>
double exact(double a, double b) {
    if constexpr (std::is_same_v<O, Add>)
        return a + b;
    else if constexpr (std::is_same_v<O, Sub>)
        return a - b;
    else if constexpr (std::is_same_v<O, Mul>)
        return a * b;
    else if constexpr (std::is_same_v<O, Min>)
        return std::isnan(a) || std::isnan(b) ? NAN : (a < b ? a : b);
    else
        return std::isnan(a) || std::isnan(b) ? NAN : (a > b ? a : b);
}

template <class O>
void check_half_op(const Shape& sa, const Shape& sb, std::mt19937& rng) {
    const auto specials = special_bits();
    auto draw = [&](std::int64_t n) {
        std::vector<std::uint16_t> v(static_cast<std::size_t>(n));
        for (auto& b : v) {
            const auto r = rng();
            b = r % 5 == 0 ? specials[(r >> 8) % specials.size()] : static_cast<std::uint16_t>(r >> 12);
        }
        return v;
    };
    const auto va = draw(element_count(sa)), vb = draw(element_count(sb));
    const Tensor a = half_tensor(sa, va), b = half_tensor(sb, vb);
    const Shape so = broadcast_shapes(sa, sb, "test").value();
    for (bool simd : {false, true}) {
        auto y = call<O>({a, b}, {}, std::nullopt, OpContext{simd});
        REQUIRE_MESSAGE(y.ok(), (y.ok() ? "" : y.error().message()));
        REQUIRE(y->dtype == DType::f16);
        REQUIRE(y->shape() == so);
        int bad = 0;
        for_each_index(so, [&](const Dims& i) {
            const float16 x = a.at<float16>(broadcast_source(i, sa)), z = b.at<float16>(broadcast_source(i, sb));
            const double want = exact<O>(value_of(x.bits), value_of(z.bits));
            const float16 got = y->template at<float16>(i);
            const bool ok = std::isnan(want) ? std::isnan(static_cast<float>(got)) : got.bits == nearest(want);
            if (!ok && bad++ < 3)
                MESSAGE(O::name.view() << " " << x.bits << ", " << z.bits << " -> " << got.bits << " simd=" << simd);
        });
        CHECK_MESSAGE(bad == 0, O::name.view() << " simd=" << simd);
    }
}

TEST_CASE("float16 Add, Sub, Mul, Min, Max: the exact result rounded once to float16, with broadcasting") {
    std::mt19937 rng(1234);
    for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{{Shape{4099}, Shape{4099}},
                                                                     {Shape{3, 1, 37}, Shape{5, 1}},
                                                                     {Shape{1}, Shape{2, 300}},
                                                                     {Shape{}, Shape{9}}}) {
        check_half_op<Add>(sa, sb, rng);
        check_half_op<Sub>(sa, sb, rng);
        check_half_op<Mul>(sa, sb, rng);
        check_half_op<Min>(sa, sb, rng);
        check_half_op<Max>(sa, sb, rng);
    }
}

TEST_CASE("float16 Min and Max: NaN from either operand, infinities, and golden values") {
    const Tensor a = half_tensor(Shape{5}, {0x7E00, 0x3C00, 0xFC00, 0x7BFF, 0x0001});
    const Tensor b = half_tensor(Shape{5}, {0x3C00, 0x7E00, 0x3C00, 0x7C00, 0x8001});
    const auto mn = call<Min>({a, b}).value().to_vector<float16>();
    const auto mx = call<Max>({a, b}).value().to_vector<float16>();
    CHECK(std::isnan(static_cast<float>(mn[0])));
    CHECK(std::isnan(static_cast<float>(mn[1])));
    CHECK(std::isnan(static_cast<float>(mx[0])));
    CHECK(std::isnan(static_cast<float>(mx[1])));
    CHECK(mn[2].bits == 0xFC00);
    CHECK(mx[2].bits == 0x3C00);
    CHECK(mn[3].bits == 0x7BFF);
    CHECK(mx[3].bits == 0x7C00);
    CHECK(mn[4].bits == 0x8001);
    CHECK(mx[4].bits == 0x0001);
    // 65504 + 16 is the tie between 65504 and 65536 (infinity): ties to even gives infinity; 1 + 2^-11 ties to 1
    const auto sum = call<Add>({half_tensor(Shape{2}, {0x7BFF, 0x3C00}), half_tensor(Shape{2}, {0x4C00, 0x1000})})
                         .value()
                         .to_vector<float16>();
    CHECK(sum[0].bits == 0x7C00);
    CHECK(sum[1].bits == 0x3C00);
}

TEST_CASE("float16 refusals: mixed with float32 or integers, ops without float16, a quantized output") {
    const Tensor h = half_tensor(Shape{2}, {0x3C00, 0x4000});
    const Tensor f = Tensor::from<float>(Shape{2}, {1, 2});
    const Tensor i = Tensor::from<std::int16_t>(Shape{2}, {1, 2});
    const auto q = numeric::make_quant(DType::u8, 0.1f, 3).value();
    const Tensor qu8 = Tensor::from<std::uint8_t>(Shape{2}, {1, 2}, q);
    CHECK_RULE(call<Add>({h, f}), "same-storage-dtype");
    CHECK_RULE(call<Min>({f, h}), "same-storage-dtype");
    CHECK_RULE(call<Max>({h, i}), "same-storage-dtype");
    CHECK_RULE(call<Mul>({qu8, h}, {}, TensorType{DType::u8, Shape{2}, q}), "same-storage-dtype");
    CHECK_RULE(call<Add>({h, h}, {}, TensorType{DType::f16, Shape{2}, numeric::make_quant(DType::u8, 0.1f, 3).value()}),
               "plain-integer-output");
    CHECK_RULE(call<Abs>({h}), "float-or-quantized");
    CHECK_RULE(call<Clip>({h}), "float-or-quantized");
    CHECK_RULE(call<Sigmoid>({h}), "float-or-quantized");
}

}  // namespace
}  // namespace float16_test
