// ops/expr.hpp: every element primitive evaluated on xsimd batches is BIT-IDENTICAL to its scalar evaluation
// (>= 10^5 random inputs per primitive, with float specials and integer extremes mixed in; a NaN result must be NaN
// on both paths, its payload is not compared: expr.hpp explains why), sat<> from float is
// checked against a plain double reference, to_string() is pinned by golden strings, and range analysis refuses
// expressions whose intermediates may leave int32 (seed A5).
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/binary.hpp>
#include <janus/ops/expr.hpp>
#include "support/quant_plan.hpp"

namespace {

namespace ex = janus::expr;
namespace num = janus::numeric;
using janus::DType;

constexpr long kDraws = 100'000;  // random inputs per primitive (rounded up to whole batches)
constexpr std::size_t L = ex::lanes;
constexpr std::int32_t i32_min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t i32_max = std::numeric_limits<std::int32_t>::max();
constexpr float inf = std::numeric_limits<float>::infinity();

/// Counts disagreements and remembers the first one (one CHECK per draw would be slow and unreadable).
struct Mismatches {
    long count = 0;
    std::string first;
    void add(const std::string& what) {
        if (count++ == 0) first = what;
    }
};

std::uint32_t float_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
template <class V>
std::uint32_t bits(V v) {
    if constexpr (std::is_same_v<V, float>) return float_bits(v);
    else if constexpr (std::is_same_v<V, bool>) return v ? 1u : 0u;
    else return static_cast<std::uint32_t>(v);
}
/// Bit identity, except that two NaNs are the same value (their sign and payload are not promised, expr.hpp).
template <class V>
bool same_value(V a, V b) {
    if constexpr (std::is_same_v<V, float>)
        if (std::isnan(a) && std::isnan(b)) return true;
    return bits(a) == bits(b);
}
std::string show(float f) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g (0x%08x)", static_cast<double>(f), float_bits(f));
    return b;
}
std::string show(std::int32_t v) { return std::to_string(v); }
std::string show(bool v) { return v ? "true" : "false"; }

/// Biased random inputs: specials and boundaries are drawn often, not once in 2^32.
struct Gen {
    std::mt19937 rng;
    explicit Gen(std::uint32_t seed) : rng(seed) {}

    std::int32_t uniform(std::int32_t lo, std::int32_t hi) {
        return std::uniform_int_distribution<std::int32_t>(lo, hi)(rng);
    }
    float uniform_f(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }

    /// Float specials: NaN, infinities, signed zeros, denormals, huge values, exact ties, conversion boundaries.
    float f32() {
        static const float specials[] = {
            std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f, -0.0f,
            std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
            std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
            -std::numeric_limits<float>::max(), 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 126.5f, 127.5f, -127.5f,
            -128.5f, 128.5f, 254.5f, 255.5f, 256.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f, -2147483904.0f,
            8388607.5f, 8388608.0f, 8388609.0f, 16777216.0f, 1e30f, -1e30f, 88.7f, 89.0f, -87.3f, -104.0f, 1.0f,
            -1.0f};
        switch (uniform(0, 7)) {
            case 0: return specials[uniform(0, static_cast<std::int32_t>(std::size(specials)) - 1)];
            case 1: return static_cast<float>(uniform(-300, 300)) + 0.5f;  // exact ties for rounding
            case 2: {  // denormal: exponent field 0, random mantissa and sign
                std::uint32_t u = static_cast<std::uint32_t>(rng()) & 0x807FFFFFu;
                float f;
                std::memcpy(&f, &u, sizeof f);
                return f;
            }
            case 3: {  // huge, may overflow to inf (two statements: argument evaluation order is unspecified)
                const float m = uniform_f(-1.0f, 1.0f);
                return std::ldexp(m, uniform(20, 128));
            }
            case 4: return uniform_f(-3e9f, 3e9f);                                 // around the int32 range
            case 5: {  // any bit pattern, NaN payloads included
                std::uint32_t u = static_cast<std::uint32_t>(rng());
                float f;
                std::memcpy(&f, &u, sizeof f);
                return f;
            }
            default: return uniform_f(-200.0f, 200.0f);
        }
    }
    /// Integer extremes and powers of two around them, plus small and full-range values.
    std::int32_t i32() {
        static const std::int32_t specials[] = {i32_min, i32_min + 1, -(1 << 30) - 1, -(1 << 30), -(1 << 30) + 1,
                                                -(1 << 24), -65536, -256, -129, -128, -2, -1, 0, 1, 2, 127, 128, 255,
                                                256, 65535, 1 << 24, (1 << 30) - 1, 1 << 30, (1 << 30) + 1,
                                                i32_max - 1, i32_max};
        switch (uniform(0, 4)) {
            case 0: return specials[uniform(0, static_cast<std::int32_t>(std::size(specials)) - 1)];
            case 1: return uniform(-300, 300);
            case 2: {
                const std::int32_t p = std::int32_t{1} << uniform(0, 30);
                return uniform(0, 1) ? p + uniform(-2, 2) : -p + uniform(-2, 2);
            }
            default: return static_cast<std::int32_t>(rng());
        }
    }
    std::int32_t i8() { return uniform(0, 7) == 0 ? (uniform(0, 1) ? -128 : 127) : uniform(-128, 127); }
    std::int32_t u8() { return uniform(0, 7) == 0 ? (uniform(0, 1) ? 0 : 255) : uniform(0, 255); }

    /// A valid QuantizedMultiplier: zero, or normalized with any shift in [-31, 30].
    num::QuantizedMultiplier multiplier() {
        if (uniform(0, 15) == 0) return {0, 0};
        const std::int32_t m = uniform(0, 3) == 0 ? (uniform(0, 1) ? (1 << 30) : i32_max) : uniform(1 << 30, i32_max);
        return {m, uniform(num::min_multiplier_shift, num::max_multiplier_shift)};
    }
};

/// Input generator for one element: which inputs are integer/float and their domains.
enum class Dom { none, f32, i32, i8, u8 };
struct Domains {
    std::array<Dom, ex::max_inputs> in{Dom::none, Dom::none, Dom::none, Dom::none};
    std::int32_t channels = 0;  ///< > 0: random channel in [0, channels)
};

void fill(Gen& g, const Domains& d, ex::ScalarArgs& a) {
    for (std::size_t k = 0; k < ex::max_inputs; ++k) {
        switch (d.in[k]) {
            case Dom::f32: a.f[k] = g.f32(); break;
            case Dom::i32: a.i[k] = g.i32(); break;
            case Dom::i8: a.i[k] = g.i8(); break;
            case Dom::u8: a.i[k] = g.u8(); break;
            case Dom::none: break;
        }
    }
    a.channel = d.channels > 0 ? g.uniform(0, d.channels - 1) : 0;
}

/// The batch holding `lanes` scalar argument sets, lane l = s[l].
ex::BatchArgs to_batch(const std::array<ex::ScalarArgs, L>& s) {
    ex::BatchArgs b;
    alignas(64) std::array<std::int32_t, L> iv{};
    alignas(64) std::array<float, L> fv{};
    for (std::size_t k = 0; k < ex::max_inputs; ++k) {
        for (std::size_t l = 0; l < L; ++l) iv[l] = s[l].i[k], fv[l] = s[l].f[k];
        b.i[k] = xsimd::batch<std::int32_t, ex::arch>::load_aligned(iv.data());
        b.f[k] = xsimd::batch<float, ex::arch>::load_aligned(fv.data());
    }
    for (std::size_t l = 0; l < L; ++l) iv[l] = s[l].channel;
    b.channel = xsimd::batch<std::int32_t, ex::arch>::load_aligned(iv.data());
    return b;
}

std::string args_str(const ex::ScalarArgs& a, const Domains& d) {
    std::string s = "(";
    for (std::size_t k = 0; k < ex::max_inputs; ++k) {
        if (d.in[k] == Dom::none) continue;
        s += (s.size() > 1 ? ", " : "") + (d.in[k] == Dom::f32 ? show(a.f[k]) : show(a.i[k]));
    }
    return s + ", channel " + std::to_string(a.channel) + ")";
}

/// Evaluate `e` on `n` random elements both ways; every lane must agree bit for bit (NaN: both NaN).
template <ex::Expr E>
void check_bit_identical(const E& e, const Domains& d, std::uint32_t seed, long n = kDraws) {
    Gen g(seed);
    Mismatches bad;
    long draws = 0;
    for (; draws < n; draws += static_cast<long>(L)) {
        std::array<ex::ScalarArgs, L> s;
        for (auto& a : s) fill(g, d, a);
        const auto batch = e.eval(to_batch(s));
        for (std::size_t l = 0; l < L; ++l) {
            const auto scalar = e.eval(s[l]);
            const auto lane = static_cast<decltype(scalar)>(batch.get(l));
            if (!same_value(scalar, lane))
                bad.add(args_str(s[l], d) + ": scalar " + show(scalar) + ", batch lane " + show(lane));
        }
    }
    INFO(ex::to_string(e));
    CHECK(draws >= n);
    CHECK_MESSAGE(bad.count == 0, bad.count << " mismatches, first " << bad.first);
}

const Domains F1{{Dom::f32}};
const Domains F2{{Dom::f32, Dom::f32}};
const Domains F3{{Dom::f32, Dom::f32, Dom::f32}};
const Domains I1{{Dom::i32}};
const Domains I2{{Dom::i32, Dom::i32}};
const Domains I3{{Dom::i32, Dom::i32, Dom::i32}};

/// Plain reference of sat<T> from float: NaN -> 0, round half to even (exact in double), clamp to T's range.
template <class T>
std::int32_t sat_reference(float x) {
    if (std::isnan(x)) return 0;
    const double r = std::nearbyint(static_cast<double>(x));  // default rounding mode: ties to even
    const double lo = static_cast<double>(ex::type_range<T>().lo), hi = static_cast<double>(ex::type_range<T>().hi);
    return static_cast<std::int32_t>(r < lo ? lo : r > hi ? hi : r);
}

template <class T>
void check_sat_from_float(std::uint32_t seed) {
    const auto e = ex::sat<T>(ex::in<0, float>());
    check_bit_identical(e, F1, seed);
    Gen g(seed + 1);
    Mismatches bad;
    for (long k = 0; k < kDraws; ++k) {
        ex::ScalarArgs a;
        a.f[0] = g.f32();
        const std::int32_t got = e.eval(a), want = sat_reference<T>(a.f[0]);
        if (got != want) bad.add(show(a.f[0]) + ": got " + std::to_string(got) + ", want " + std::to_string(want));
    }
    INFO(ex::to_string(e));
    CHECK_MESSAGE(bad.count == 0, bad.count << " mismatches against the double reference, first " << bad.first);
}

/// sat<T>(x) for one float, on both paths (the batch broadcasts x).
template <class T>
std::int32_t sat_both(float x) {
    const auto e = ex::sat<T>(ex::in<0, float>());
    ex::ScalarArgs a;
    a.f[0] = x;
    ex::BatchArgs b;
    b.f[0] = xsimd::batch<float, ex::arch>(x);
    const std::int32_t s = e.eval(a), v = e.eval(b).get(L - 1);
    CHECK_MESSAGE(s == v, "scalar " << s << " vs batch " << v << " for " << show(x));
    return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Bit identity, primitive by primitive

TEST_CASE("leaves in, cst and chan evaluate identically on both paths, chan with a different channel per lane") {
    check_bit_identical(ex::in<2, float>(), Domains{{Dom::none, Dom::none, Dom::f32}}, 1);
    check_bit_identical(ex::in<3, std::int32_t>(), Domains{{Dom::none, Dom::none, Dom::none, Dom::i32}}, 2);
    check_bit_identical(ex::add(ex::in<0, std::int32_t>(), ex::cst(i32_min)), I1, 3);
    check_bit_identical(ex::mul(ex::in<0, float>(), ex::cstf(-0.0f)), F1, 4);

    std::vector<std::int32_t> ci(37);
    std::vector<float> cf(37);
    Gen g(5);
    for (auto& v : ci) v = g.i32();
    for (auto& v : cf) v = g.f32();
    Domains chan_i = I1, chan_f = F1;
    chan_i.channels = chan_f.channels = 37;
    check_bit_identical(ex::add(ex::in<0, std::int32_t>(), ex::chan<std::int32_t>(ci)), chan_i, 6);
    check_bit_identical(ex::sub(ex::in<0, float>(), ex::chan<float>(cf)), chan_f, 7);
    check_bit_identical(ex::chan<std::int32_t>(ci), chan_i, 8);
}

TEST_CASE("conversions widen, to_float and sat (every direction) evaluate identically on both paths") {
    check_bit_identical(ex::widen(ex::in<0, std::int8_t>()), Domains{{Dom::i8}}, 10);
    check_bit_identical(ex::widen(ex::in<0, std::uint8_t>()), Domains{{Dom::u8}}, 11);
    check_bit_identical(ex::to_float(ex::in<0, std::int32_t>()), I1, 12);  // rounds above 2^24: same rounding
    check_bit_identical(ex::to_float(ex::in<0, std::int8_t>()), Domains{{Dom::i8}}, 13);
    check_bit_identical(ex::sat<std::int8_t>(ex::in<0, std::int32_t>()), I1, 14);
    check_bit_identical(ex::sat<std::uint8_t>(ex::in<0, std::int32_t>()), I1, 15);
    check_bit_identical(ex::sat<std::int32_t>(ex::in<0, std::int32_t>()), I1, 16);
    check_bit_identical(ex::sat<float>(ex::in<0, std::int32_t>()), I1, 17);
    check_bit_identical(ex::sat<float>(ex::in<0, float>()), F1, 18);
}

TEST_CASE("sat<int8/uint8/int32> from float is round-half-even then saturate, NaN -> 0, on 10^5 inputs") {
    check_sat_from_float<std::int8_t>(20);
    check_sat_from_float<std::uint8_t>(21);
    check_sat_from_float<std::int32_t>(22);
}

TEST_CASE("sat from float: hand-computed ties, NaN, infinities and huge values") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // ties go to the even neighbour
    CHECK(sat_both<std::int8_t>(2.5f) == 2);
    CHECK(sat_both<std::int8_t>(-2.5f) == -2);
    CHECK(sat_both<std::int8_t>(0.5f) == 0);
    CHECK(sat_both<std::int8_t>(-0.5f) == 0);
    CHECK(sat_both<std::int8_t>(1.5f) == 2);
    CHECK(sat_both<std::int8_t>(-1.5f) == -2);
    CHECK(sat_both<std::int8_t>(126.5f) == 126);
    CHECK(sat_both<std::int8_t>(-127.5f) == -128);
    CHECK(sat_both<std::uint8_t>(254.5f) == 254);
    CHECK(sat_both<std::int32_t>(8388609.0f) == 8388609);  // above 2^23 every float is an integer
    // NaN is 0 (not the clamp bound)
    CHECK(sat_both<std::int8_t>(nan) == 0);
    CHECK(sat_both<std::uint8_t>(-nan) == 0);
    CHECK(sat_both<std::int32_t>(nan) == 0);
    // saturation
    CHECK(sat_both<std::int8_t>(127.5f) == 127);
    CHECK(sat_both<std::int8_t>(-128.5f) == -128);
    CHECK(sat_both<std::int8_t>(inf) == 127);
    CHECK(sat_both<std::int8_t>(-1e30f) == -128);
    CHECK(sat_both<std::uint8_t>(-0.75f) == 0);
    CHECK(sat_both<std::uint8_t>(255.5f) == 255);
    CHECK(sat_both<std::uint8_t>(-inf) == 0);
    CHECK(sat_both<std::int32_t>(-2147483648.0f) == i32_min);
    CHECK(sat_both<std::int32_t>(-inf) == i32_min);
    CHECK(sat_both<std::int32_t>(2147483520.0f) == 2147483520);  // the largest float below 2^31 is exact
    CHECK(sat_both<std::int32_t>(2147483648.0f) == i32_max);     // 2^31 does not fit: saturates to 2^31 - 1
    CHECK(sat_both<std::int32_t>(inf) == i32_max);
    CHECK(sat_both<std::int32_t>(std::numeric_limits<float>::max()) == i32_max);
}

TEST_CASE("integer add, sub, mul, min, max wrap or select identically on both paths, extremes included") {
    const auto x = ex::in<0, std::int32_t>();
    const auto y = ex::in<1, std::int32_t>();
    check_bit_identical(ex::add(x, y), I2, 30);
    check_bit_identical(ex::sub(x, y), I2, 31);
    check_bit_identical(ex::mul(x, y), I2, 32);
    check_bit_identical(ex::min(x, y), I2, 33);
    check_bit_identical(ex::max(x, y), I2, 34);
    check_bit_identical(ex::sub(ex::widen(ex::in<0, std::uint8_t>()), ex::widen(ex::in<1, std::int8_t>())),
                        Domains{{Dom::u8, Dom::i8}}, 35);
}

TEST_CASE("float add, sub, mul, div, min, max evaluate identically on both paths, NaN and inf included") {
    const auto x = ex::in<0, float>();
    const auto y = ex::in<1, float>();
    check_bit_identical(ex::add(x, y), F2, 40);
    check_bit_identical(ex::sub(x, y), F2, 41);
    check_bit_identical(ex::mul(x, y), F2, 42);
    check_bit_identical(ex::div(x, y), F2, 43);
    check_bit_identical(ex::min(x, y), F2, 44);
    check_bit_identical(ex::max(x, y), F2, 45);
}

TEST_CASE("abs and neg (integer: wrapping at INT32_MIN; float: sign bit) evaluate identically on both paths") {
    check_bit_identical(ex::abs(ex::in<0, std::int32_t>()), I1, 50);
    check_bit_identical(ex::neg(ex::in<0, std::int32_t>()), I1, 51);
    check_bit_identical(ex::abs(ex::in<0, float>()), F1, 52);
    check_bit_identical(ex::neg(ex::in<0, float>()), F1, 53);
}

TEST_CASE("exp, tanh and erf evaluate identically on both paths (one algorithm: xsimd's)") {
    check_bit_identical(ex::exp(ex::in<0, float>()), F1, 60);
    check_bit_identical(ex::tanh(ex::in<0, float>()), F1, 61);
    check_bit_identical(ex::erf(ex::in<0, float>()), F1, 62);
}

TEST_CASE("shl and rshift evaluate identically on both paths for every shift 0..31 and extreme inputs") {
    const auto x = ex::in<0, std::int32_t>();
    for (int s = 0; s <= 31; ++s) {  // 32 shifts x kDraws / 8: 4 * 10^5 inputs per primitive
        CAPTURE(s);
        check_bit_identical(ex::shl(x, s), I1, static_cast<std::uint32_t>(70 + s), kDraws / 8);
        check_bit_identical(ex::rshift(x, s), I1, static_cast<std::uint32_t>(110 + s), kDraws / 8);
    }
}

TEST_CASE("rshift rounds half away from zero (hand-computed)") {
    auto r = [](std::int32_t v, int s) {
        ex::ScalarArgs a;
        a.i[0] = v;
        return ex::rshift(ex::in<0, std::int32_t>(), s).eval(a);
    };
    CHECK(r(5, 1) == 3);
    CHECK(r(-5, 1) == -3);
    CHECK(r(6, 2) == 2);   // 1.5 -> 2
    CHECK(r(-6, 2) == -2);  // -1.5 -> -2
    CHECK(r(-7, 2) == -2);  // -1.75 -> -2
    CHECK(r(i32_max, 31) == 1);
    CHECK(r(i32_min, 31) == -1);
    CHECK(r(i32_min, 0) == i32_min);
}

TEST_CASE("rq with every rounding mode, per-tensor and per-channel, evaluates identically on both paths") {
    Gen g(150);
    const auto x = ex::in<0, std::int32_t>();
    std::vector<num::QuantizedMultiplier> pc(16);
    for (auto& m : pc) m = g.multiplier();
    pc[0] = {i32_max, num::max_multiplier_shift};
    pc[1] = {1 << 30, num::min_multiplier_shift};
    Domains per_channel = I1;
    per_channel.channels = 16;
    for (int k = 0; k < 4; ++k) {
        const auto m = k == 0 ? num::QuantizedMultiplier{i32_max, 30} : g.multiplier();
        CAPTURE(m.multiplier);
        CAPTURE(m.shift);
        check_bit_identical(ex::rq<num::round_double>(x, m), I1, static_cast<std::uint32_t>(151 + k));
        check_bit_identical(ex::rq<num::round_single>(x, m), I1, static_cast<std::uint32_t>(161 + k));
        check_bit_identical(ex::rq<num::round_half_even>(x, m), I1, static_cast<std::uint32_t>(171 + k));
    }
    const std::span<const num::QuantizedMultiplier> pcs(pc);
    check_bit_identical(ex::rq<num::round_double>(x, pcs), per_channel, 181);
    check_bit_identical(ex::rq<num::round_single>(x, pcs), per_channel, 182);
    check_bit_identical(ex::rq<num::round_half_even>(x, pcs), per_channel, 183);
}

TEST_CASE("rq and rq_indexed by_plan: each mode value computes, proves and prints what the typed mode does") {
    // The plan's rounding (expr::by_plan) dispatches to the typed primitives: a by_plan node must equal the typed
    // node of its mode on every input, on both paths, with the same range and the same text.
    Gen g(190);
    const auto x = ex::in<0, std::int32_t>();
    const auto k = ex::clamp(ex::in<1, std::int32_t>(), 1, 3);
    std::vector<num::QuantizedMultiplier> table = {g.multiplier(), g.multiplier(), {i32_max, 30}};
    const std::span<const num::QuantizedMultiplier> ts(table);
    const auto m = num::QuantizedMultiplier{i32_max, 30};  // left shift: round_double's range differs
    const auto same = [&](const auto& dynamic, const auto& typed, std::uint32_t seed) {
        check_bit_identical(dynamic, I1, seed);
        CHECK(ex::to_string(dynamic) == ex::to_string(typed));
        ex::InputRanges r;
        r.r[0] = num::Interval{-100000, 100000};
        r.r[1] = num::Interval{1, 3};
        r.set[0] = r.set[1] = true;
        CHECK(dynamic.range(r) == typed.range(r));
        Gen v(seed);
        for (int i = 0; i < 10000; ++i) {
            ex::ScalarArgs a;
            a.i[0] = v.i32();
            a.i[1] = 1 + i % 3;
            REQUIRE(dynamic.eval(a) == typed.eval(a));
        }
    };
    same(ex::rq(x, m, num::Rounding::round_double), ex::rq<num::round_double>(x, m), 191);
    same(ex::rq(x, m, num::Rounding::round_single), ex::rq<num::round_single>(x, m), 192);
    same(ex::rq(x, m, num::Rounding::round_half_even), ex::rq<num::round_half_even>(x, m), 193);
    same(ex::rq_indexed(x, k, ts, 1, num::Rounding::round_double), ex::rq_indexed<num::round_double>(x, k, ts, 1), 194);
    same(ex::rq_indexed(x, k, ts, 1, num::Rounding::round_single), ex::rq_indexed<num::round_single>(x, k, ts, 1), 195);
    same(ex::rq_indexed(x, k, ts, 1, num::Rounding::round_half_even),
         ex::rq_indexed<num::round_half_even>(x, k, ts, 1), 196);
}

TEST_CASE("clamp (integer extremes, float specials, lo > hi) evaluates identically on both paths") {
    const auto xi = ex::in<0, std::int32_t>();
    const auto xf = ex::in<0, float>();
    check_bit_identical(ex::clamp(xi, -128, 127), I1, 190);
    check_bit_identical(ex::clamp(xi, i32_min, i32_max), I1, 191);
    check_bit_identical(ex::clamp(xi, i32_max, i32_min), I1, 192);  // lo > hi: hi everywhere
    check_bit_identical(ex::clamp(xi, 5, 5), I1, 193);
    check_bit_identical(ex::clamp(xf, 0.0f, 6.0f), F1, 194);
    check_bit_identical(ex::clamp(xf, -inf, inf), F1, 195);
    check_bit_identical(ex::clamp(xf, -0.0f, 0.0f), F1, 196);
    check_bit_identical(ex::clamp(xf, 3.0f, 1.0f), F1, 197);
}

TEST_CASE("cmp (all six, integer and float with NaN) and select evaluate identically on both paths") {
    const auto xi = ex::in<0, std::int32_t>();
    const auto yi = ex::in<1, std::int32_t>();
    const auto zi = ex::in<2, std::int32_t>();
    const auto xf = ex::in<0, float>();
    const auto yf = ex::in<1, float>();
    const auto zf = ex::in<2, float>();
    // the masks themselves
    check_bit_identical(ex::lt(xi, yi), I2, 200);
    check_bit_identical(ex::ne(xf, yf), F2, 201);
    // every comparison selecting between a third value and the first
    check_bit_identical(ex::select(ex::lt(xi, yi), zi, xi), I3, 202);
    check_bit_identical(ex::select(ex::le(xi, yi), zi, xi), I3, 203);
    check_bit_identical(ex::select(ex::gt(xi, yi), zi, xi), I3, 204);
    check_bit_identical(ex::select(ex::ge(xi, yi), zi, xi), I3, 205);
    check_bit_identical(ex::select(ex::eq(xi, yi), zi, xi), I3, 206);
    check_bit_identical(ex::select(ex::ne(xi, yi), zi, xi), I3, 207);
    check_bit_identical(ex::select(ex::lt(xf, yf), zf, xf), F3, 208);
    check_bit_identical(ex::select(ex::le(xf, yf), zf, xf), F3, 209);
    check_bit_identical(ex::select(ex::gt(xf, yf), zf, xf), F3, 210);
    check_bit_identical(ex::select(ex::ge(xf, yf), zf, xf), F3, 211);
    check_bit_identical(ex::select(ex::eq(xf, yf), zf, xf), F3, 212);
    check_bit_identical(ex::select(ex::ne(xf, yf), zf, xf), F3, 213);
    // branches of different integer types
    check_bit_identical(ex::select(ex::eq(ex::widen(ex::in<0, std::int8_t>()), ex::cst(0)), ex::in<0, std::int8_t>(),
                                   ex::in<1, std::uint8_t>()),
                        Domains{{Dom::i8, Dom::u8}}, 214);
}

TEST_CASE("lut with int8 and uint8 indices evaluates identically on both paths (gather of the same table)") {
    Gen g(220);
    auto wide = std::make_shared<ex::Table256>();
    for (auto& v : wide->values) v = g.i32();
    wide->out = DType::i32;
    auto narrow = std::make_shared<ex::Table256>();
    for (auto& v : narrow->values) v = g.i8();
    auto narrow_u = std::make_shared<ex::Table256>(*narrow);
    narrow_u->in = DType::u8;
    check_bit_identical(ex::lut<std::int32_t>(ex::in<0, std::int8_t>(), wide), Domains{{Dom::i8}}, 221);
    check_bit_identical(ex::lut<std::int8_t>(ex::in<0, std::int8_t>(), narrow), Domains{{Dom::i8}}, 222);
    check_bit_identical(ex::lut<std::int8_t>(ex::in<0, std::uint8_t>(), narrow_u), Domains{{Dom::u8}}, 223);
    // the index may itself be computed (sat to int8 first)
    check_bit_identical(ex::lut<std::int32_t>(ex::sat<std::int8_t>(ex::in<0, std::int32_t>()), wide), I1, 224);
    // entry k is read for index min(In) + k
    ex::ScalarArgs a;
    a.i[0] = -128;
    CHECK(ex::lut<std::int8_t>(ex::in<0, std::int8_t>(), narrow).eval(a) == narrow->values[0]);
    a.i[0] = 127;
    CHECK(ex::lut<std::int8_t>(ex::in<0, std::int8_t>(), narrow).eval(a) == narrow->values[255]);
    a.i[0] = 0;
    CHECK(ex::lut<std::int8_t>(ex::in<0, std::uint8_t>(), narrow_u).eval(a) == narrow->values[0]);
}

TEST_CASE("a whole quantized expression (LeakyRelu's negative branch) evaluates identically on both paths") {
    const auto m = num::quantize_multiplier(0.0371).value();
    const auto e = ex::sat<std::int8_t>(
        ex::add(ex::rq<num::round_double>(ex::sub(ex::widen(ex::in<0, std::int8_t>()), ex::cst(-7)), m), ex::cst(3)));
    check_bit_identical(e, Domains{{Dom::i8}}, 230);
    const auto scaled = ex::mul(ex::to_float(ex::in<0, std::int32_t>()), ex::cstf(0.1f));
    const auto f = ex::sat<std::uint8_t>(ex::add(ex::div(scaled, ex::in<1, float>()), ex::cstf(128.0f)));
    check_bit_identical(f, Domains{{Dom::i32, Dom::f32}}, 231);
}

// ---------------------------------------------------------------------------------------------------------------
// Printing

TEST_CASE("to_string pins the text of expressions (golden)") {
    using namespace janus::expr;
    const num::QuantizedMultiplier half{1 << 30, 0};
    const auto x8 = in<0, std::int8_t>();
    CHECK(to_string(sat<std::int8_t>(add(rq<num::round_double>(sub(widen(x8), cst(-3)), half), cst(5)))) ==
          "sat<int8>(add(rq<double>(sub(widen(in0:int8), -3), 1073741824*2^-31), 5))");
    CHECK(to_string(select(lt(in<0, float>(), cstf(0)), cstf(0), in<0, float>())) ==
          "select(lt(in0:float32, 0), 0, in0:float32)");
    CHECK(to_string(clamp(in<1, std::int32_t>(), -7, 9)) == "clamp(in1:int32, -7, 9)");
    CHECK(to_string(mul(in<0, float>(), cstf(0.1f))) == "mul(in0:float32, 0.100000001)");  // %.9g round-trips
    const std::vector<num::QuantizedMultiplier> pc(2, half);
    CHECK(to_string(rq<num::round_half_even>(widen(x8), std::span<const num::QuantizedMultiplier>(pc))) ==
          "rq<half_even>(widen(in0:int8), chan[2])");
    const std::vector<std::int32_t> zps{1, 2, 3};
    CHECK(to_string(add(shl(in<2, std::int32_t>(), 20), chan<std::int32_t>(zps))) ==
          "add(shl(in2:int32, 20), chan[3])");
    CHECK(to_string(lut<std::int8_t>(in<0, std::uint8_t>(), std::make_shared<Table256>())) == "lut(in0:uint8)");
    CHECK(to_string(tanh(neg(abs(to_float(rshift(in<3, std::int32_t>(), 4)))))) ==
          "tanh(neg(abs(to_float(rshift(in3:int32, 4)))))");
    CHECK(to_string(select(ge(in<0, std::int32_t>(), cst(0)), cst(1), cst(-1))) == "select(ge(in0:int32, 0), 1, -1)");
}

// ---------------------------------------------------------------------------------------------------------------
// Range analysis (seed A5)

TEST_CASE("prove_ranges refuses shl(widen(int8), 30): the shifted value needs 38 bits") {
    const auto e = ex::shl(ex::widen(ex::in<0, std::int8_t>()), 30);
    const auto st = ex::prove_ranges(e, {}, "test");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().rule == "intermediate-fits-int32");
    CHECK(st.error().input == "test");
    CHECK(st.error().position == "node shl");
    // shift 23 still fits: |-128 * 2^23| = 2^30
    CHECK(ex::prove_ranges(ex::shl(ex::widen(ex::in<0, std::int8_t>()), 23), {}, "test").ok());
}

TEST_CASE("prove_ranges refuses the product of two full-range int32 inputs, accepts it for declared small ranges") {
    const auto e = ex::mul(ex::in<0, std::int32_t>(), ex::in<1, std::int32_t>());
    const auto st = ex::prove_ranges(e, {}, "test");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().rule == "intermediate-fits-int32");
    CHECK(st.error().position == "node mul");

    ex::InputRanges r;
    r.r[0] = {-1000, 1000};
    r.r[1] = {-30000, 20000};
    r.set[0] = r.set[1] = true;
    const auto range = ex::check_ranges(e, r, "test");
    REQUIRE(range.ok());
    CHECK(range->lo == -30'000'000);
    CHECK(range->hi == 30'000'000);
    // the sum of two products of (int8 - zp) values fits easily
    const auto q = ex::add(ex::mul(ex::sub(ex::widen(ex::in<0, std::int8_t>()), ex::cst(127)),
                                   ex::sub(ex::widen(ex::in<1, std::uint8_t>()), ex::cst(0))),
                           ex::cst(1000));
    const auto qr = ex::check_ranges(q, {}, "test");
    REQUIRE(qr.ok());
    CHECK(qr->lo == -255 * 255 + 1000);
    CHECK(qr->hi == 1000);
}

TEST_CASE("check_ranges refuses an int32 converted to float when it may exceed 2^24 (not exact)") {
    const auto st = ex::prove_ranges(ex::to_float(ex::in<0, std::int32_t>()), {}, "test");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().rule == "intermediate-fits-int32");
    CHECK(st.error().position == "node to_float (int to float is not exact)");
    CHECK(ex::prove_ranges(ex::to_float(ex::widen(ex::in<0, std::uint8_t>())), {}, "test").ok());
}

TEST_CASE("check_ranges: sat and clamp bound the output range") {
    const auto r1 = ex::check_ranges(ex::sat<std::int8_t>(ex::in<0, float>()), {}, "t");
    REQUIRE(r1.ok());
    CHECK(r1->lo == -128);
    CHECK(r1->hi == 127);
    const auto r2 = ex::check_ranges(ex::clamp(ex::widen(ex::in<0, std::uint8_t>()), 10, 20), {}, "t");
    REQUIRE(r2.ok());
    CHECK(r2->lo == 10);
    CHECK(r2->hi == 20);
}

namespace {
template <ex::BinOp Kind, class T, class To>
void check_binary_expr_proved(float sa, std::int32_t za, float sb, std::int32_t zb, float so, std::int32_t zo) {
    const DType dt = janus::dtype_v<T>, dto = janus::dtype_v<To>;
    const auto qa = num::make_quant(dt, sa, za).value();
    const auto qb = num::make_quant(dt, sb, zb).value();
    const auto qo = num::make_quant(dto, so, zo).value();
    const auto plan = janus_test::binary_plan<Kind>(qa, qb, qo, janus::numeric::default_rounding_mode);
    REQUIRE(plan.ok());
    const auto e = janus::ops::binary_quant_expr<Kind, T, To>(*plan);
    const auto st = ex::prove_ranges(e, {}, "test");
    INFO(ex::to_string(e));
    CHECK_MESSAGE(st.ok(), (st.ok() ? std::string() : st.error().message()));
}
template <ex::BinOp Kind>
void check_binary_kind_proved() {
    // scales spanning 1e-4 .. 10 both ways, zero points at the ends of the range
    const float scales[] = {1e-4f, 0.01f, 1.0f, 10.0f};
    for (float sa : scales)
        for (float sb : scales)
            for (float so : scales) {
                CAPTURE(sa);
                CAPTURE(sb);
                CAPTURE(so);
                check_binary_expr_proved<Kind, std::int8_t, std::int8_t>(sa, -128, sb, 127, so, -128);
                check_binary_expr_proved<Kind, std::uint8_t, std::uint8_t>(sa, 255, sb, 0, so, 255);
            }
}
}  // namespace

TEST_CASE("prove_ranges accepts the quantized expressions of every binary op (add, sub, mul, min, max)") {
    check_binary_kind_proved<ex::BinOp::add>();
    check_binary_kind_proved<ex::BinOp::sub>();
    check_binary_kind_proved<ex::BinOp::mul>();
    check_binary_kind_proved<ex::BinOp::min>();
    check_binary_kind_proved<ex::BinOp::max>();
}
