// rounding.hpp and multiplier.hpp against the exact __int128 value round(x * m * 2^(shift - 31))
// (tests/support/numeric_reference.hpp): 10^6 biased random (x, multiplier, shift) draws plus a boundary grid.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/rounding.hpp>
#include <support/numeric_reference.hpp>

// Test executables build as one unity TU per directory: this file's helpers and tests live in their own
// namespace, so their names hide (never overload) a sibling file's helpers of the same name.
namespace rounding_test {

namespace {

namespace num = janus::numeric;
namespace ref = janus::reference;
using QM = num::QuantizedMultiplier;

constexpr int kRandomDraws = 1'000'000;
constexpr std::int32_t two30 = std::int32_t{1} << 30;

struct Mismatches {
    long count = 0;
    std::string first;
    void add(const std::string& what) {
        if (count++ == 0) first = what;
    }
};

std::string args(std::int32_t x, QM q) {
    return "x=" + std::to_string(x) + " m=" + std::to_string(q.multiplier) + " shift=" + std::to_string(q.shift);
}

std::string hexfloat(double r) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%a", r);
    return buf;
}

struct Draw {
    std::int32_t x;
    QM q;
};

/// x, a valid multiplier and a shift, biased to boundaries; a quarter of the draws are exact ties of x*M, and half
/// of the draws with shift > 0 keep x*2^shift inside int32 (where the interesting rounding happens).
Draw draw(ref::BiasedRng& rng) {
    if (rng.one_in(16)) return {rng.i32(), QM{0, 0}};
    const std::int32_t m = rng.mantissa();
    const int shift = rng.exponent(num::min_multiplier_shift, num::max_multiplier_shift);
    std::int32_t x = rng.i32();
    if (rng.one_in(4)) {
        // Tie: x*m == odd * 2^(t-1) with t = 31 - shift. With m = odd_m * 2^j, take x = odd * 2^(t-1-j).
        const int t = 31 - shift;
        int j = 0;
        while (((m >> j) & 1) == 0) ++j;
        const int e = t - 1 - j;
        if (e >= 0 && e <= 30) {
            const std::int64_t room = std::int64_t{1} << (30 - e);  // |x| <= 2^30
            const std::int64_t odd = rng.uniform(-room, room - 1) | 1;
            x = static_cast<std::int32_t>(odd * (std::int64_t{1} << e));
        }
    } else if (shift > 0 && rng.one_in(2)) {
        x >>= shift;  // x * 2^shift fits int32
    }
    return {x, QM{m, shift}};
}

std::vector<Draw> boundary_grid() {
    const std::int32_t xs[] = {ref::i32_min, ref::i32_min + 1, -two30 - 1, -two30, -(1 << 15), -3, -2, -1, 0, 1, 2, 3,
                               1 << 15, two30, two30 + 1, ref::i32_max - 1, ref::i32_max};
    const std::int32_t ms[] = {two30, two30 + 1, 3 << 29, ref::i32_max - 1, ref::i32_max};
    const int shifts[] = {-31, -30, -29, -2, -1, 0, 1, 2, 29, 30};
    std::vector<Draw> v;
    for (auto x : xs) {
        v.push_back({x, QM{0, 0}});
        for (auto m : ms)
            for (auto s : shifts) v.push_back({x, QM{m, s}});
    }
    return v;
}

std::int32_t exact_sat(Draw d, ref::Tie tie) {
    return ref::saturate_i32(ref::exact_scaled(d.x, d.q.multiplier, d.q.shift, tie));
}

/// Run `body` on `n` random draws and the boundary grid.
template <class F>
void for_all_draws(std::uint64_t seed, int n, F&& body) {
    ref::BiasedRng rng(seed);
    for (int i = 0; i < n; ++i) body(draw(rng));
    for (const auto& d : boundary_grid()) body(d);
}

}  // namespace

TEST_CASE("rounding modes are types: each satisfies RoundingMode, and kernels default to round_double") {
    static_assert(num::RoundingMode<num::round_double>);
    static_assert(num::RoundingMode<num::round_single>);
    static_assert(num::RoundingMode<num::round_half_even>);
    static_assert(!num::RoundingMode<int>);
    static_assert(std::is_same_v<num::default_rounding, num::round_double>);
    CHECK(num::round_double::name == "double");
    CHECK(num::round_single::name == "single");
    CHECK(num::round_half_even::name == "half_even");
    constexpr QM half{two30, 0};  // 0.5
    static_assert(num::multiply_by_quantized_multiplier<num::round_half_even>(3, half) == 2);  // 1.5 -> 2
    static_assert(num::multiply_by_quantized_multiplier<num::round_single>(-3, half) == -1);   // -1.5 -> -1
    static_assert(num::multiply_by_quantized_multiplier<num::round_double>(-3, half) == -1);   // SRDHM: half up
}

TEST_CASE("round_half_even is the exact x*M rounded to nearest, ties to even, saturated to int32") {
    Mismatches bad;
    long ties = 0;
    for_all_draws(0x5EED0101, kRandomDraws, [&](Draw d) {
        ties += ref::exact_is_tie(d.x, d.q.multiplier, d.q.shift) ? 1 : 0;
        if (num::round_half_even::apply(d.x, d.q) != exact_sat(d, ref::Tie::to_even)) bad.add(args(d.x, d.q));
    });
    INFO("first mismatch: " << bad.first);
    CHECK(bad.count == 0);
    CHECK(ties > kRandomDraws / 10);
}

TEST_CASE("round_single equals the exact value except on ties, where it rounds toward +infinity") {
    Mismatches bad;
    Mismatches differs_off_tie;
    for_all_draws(0x5EED0102, kRandomDraws, [&](Draw d) {
        const std::int32_t y = num::round_single::apply(d.x, d.q);
        if (y != exact_sat(d, ref::Tie::toward_pos_inf)) bad.add(args(d.x, d.q));
        if (!ref::exact_is_tie(d.x, d.q.multiplier, d.q.shift) && y != num::round_half_even::apply(d.x, d.q))
            differs_off_tie.add(args(d.x, d.q));
    });
    INFO("first mismatch: " << bad.first << "; first non-tie difference from half_even: " << differs_off_tie.first);
    CHECK(bad.count == 0);
    CHECK(differs_off_tie.count == 0);
    CHECK(num::round_single::apply(-3, QM{two30, 0}) == -1);  // -1.5 -> -1
    CHECK(num::round_single::apply(5, QM{two30, 0}) == 3);    // 2.5 -> 3
    CHECK(num::round_half_even::apply(5, QM{two30, 0}) == 2);  // 2.5 -> 2
}

TEST_CASE("round_double is TFLite's saturating-left-shift -> SRDHM -> RoundingDivideByPOT, bit for bit") {
    Mismatches bad;
    for_all_draws(0x5EED0103, kRandomDraws, [&](Draw d) {
        if (num::round_double::apply(d.x, d.q) != ref::tflite_double_rounding(d.x, d.q.multiplier, d.q.shift))
            bad.add(args(d.x, d.q));
    });
    INFO("first mismatch: " << bad.first);
    CHECK(bad.count == 0);
}

TEST_CASE("round_double is within 1 of the exact value whenever x*2^shift fits int32, and equal to round_single "
          "for shift >= 0") {
    Mismatches beyond_one;
    Mismatches single_differs;
    long checked = 0;
    long off_by_one = 0;
    for_all_draws(0x5EED0104, kRandomDraws, [&](Draw d) {
        if (!ref::left_shift_fits(d.x, d.q.shift)) return;
        ++checked;
        const ref::i128 exact = ref::exact_scaled(d.x, d.q.multiplier, d.q.shift, ref::Tie::to_even);
        const std::int32_t y = num::round_double::apply(d.x, d.q);
        const ref::i128 diff = y > exact ? y - exact : exact - y;
        if (!ref::fits_i32(exact) || diff > 1) beyond_one.add(args(d.x, d.q));
        off_by_one += diff == 1 ? 1 : 0;
        if (d.q.shift >= 0 && y != num::round_single::apply(d.x, d.q)) single_differs.add(args(d.x, d.q));
    });
    INFO("first |round_double - exact| > 1: " << beyond_one.first
                                             << "; first shift >= 0 difference from round_single: "
                                             << single_differs.first);
    CHECK(beyond_one.count == 0);
    CHECK(single_differs.count == 0);
    CHECK(checked > kRandomDraws / 2);
    CHECK(off_by_one > 0);  // the bound is attained: double rounding is not exact
    // Pinned: 0.4999999998 rounds to 0 exactly, but SRDHM first rounds INT32_MAX * 2^30 / 2^31 up to 2^30, and
    // RoundingDivideByPOT(2^30, 31) = round(0.5) = 1.
    CHECK(num::round_double::apply(ref::i32_max, QM{two30, -31}) == 1);
    CHECK(num::round_half_even::apply(ref::i32_max, QM{two30, -31}) == 0);
    CHECK(num::round_single::apply(ref::i32_max, QM{two30, -31}) == 0);
}

TEST_CASE("when x*2^shift overflows int32, round_double keeps the sign, has magnitude >= 2^30, and can be far from "
          "exact") {
    Mismatches bad;
    long overflowing = 0;
    for_all_draws(0x5EED0105, kRandomDraws / 4, [&](Draw d) {
        if (ref::left_shift_fits(d.x, d.q.shift) || d.q.multiplier == 0) return;
        ++overflowing;
        const std::int32_t y = num::round_double::apply(d.x, d.q);
        const bool ok = d.x > 0 ? y >= two30 : y <= -two30;
        if (!ok) bad.add(args(d.x, d.q));
    });
    INFO("first violation: " << bad.first);
    CHECK(bad.count == 0);
    CHECK(overflowing > 10'000);
    // -2^31 * 2^30 * 2^(1-31) = -2^31 fits int32, yet the left shift saturates: -2^31 * 2 -> INT32_MIN, then SRDHM
    // halves it. Outside the precondition (range.hpp's requantize_range refuses this kernel).
    CHECK(num::round_half_even::apply(ref::i32_min, QM{two30, 1}) == ref::i32_min);
    CHECK(num::round_double::apply(ref::i32_min, QM{two30, 1}) == -two30);
}

TEST_CASE("saturation: round_half_even and round_single saturate the exact value; round_double saturates its left "
          "shift") {
    const QM largest{ref::i32_max, 30};  // 2^30 - 1/2
    CHECK(num::round_half_even::apply(ref::i32_max, largest) == ref::i32_max);
    CHECK(num::round_half_even::apply(ref::i32_min, largest) == ref::i32_min);
    CHECK(num::round_single::apply(ref::i32_max, largest) == ref::i32_max);
    CHECK(num::round_single::apply(ref::i32_min, largest) == ref::i32_min);
    // round_double: sat(x << 30) = INT32_MAX, then SRDHM(INT32_MAX, INT32_MAX) = 2^31 - 2 (no right shift).
    CHECK(num::round_double::apply(ref::i32_max, largest) == ref::i32_max - 1);
    CHECK(num::round_double::apply(ref::i32_min, largest) == ref::i32_min + 1);
    // Without a left shift nothing saturates: |x * M| <= 2^31 * (2^31 - 1) / 2^31.
    CHECK(num::round_half_even::apply(ref::i32_min, QM{ref::i32_max, 0}) == ref::i32_min + 1);
    CHECK(num::round_double::apply(ref::i32_min, QM{ref::i32_max, 0}) == ref::i32_min + 1);
    CHECK(num::round_single::apply(ref::i32_min, QM{ref::i32_max, 0}) == ref::i32_min + 1);
    // The smallest multiplier and the largest right shift: -2^31 * 2^30 / 2^62 = -1/2.
    CHECK(num::round_half_even::apply(ref::i32_min, QM{two30, -31}) == 0);
    CHECK(num::round_single::apply(ref::i32_min, QM{two30, -31}) == 0);
    CHECK(num::round_double::apply(ref::i32_min, QM{two30, -31}) == -1);
    for (auto x : {ref::i32_min, -1, 0, 1, ref::i32_max}) {  // the zero multiplier
        CHECK(num::round_half_even::apply(x, QM{}) == 0);
        CHECK(num::round_single::apply(x, QM{}) == 0);
        CHECK(num::round_double::apply(x, QM{}) == 0);
    }
}

TEST_CASE("requantize<R> is clamp(round_R(acc*M) + zero_point, lo, hi), the addition done without int32 overflow") {
    ref::BiasedRng rng(0x5EED0106);
    Mismatches bad;
    auto check = [&](Draw d, std::int32_t zp, std::int32_t lo, std::int32_t hi) {
        const auto [x, q] = d;
        const std::int32_t want_he = ref::clamp_add(exact_sat(d, ref::Tie::to_even), zp, lo, hi);
        const std::int32_t want_s = ref::clamp_add(exact_sat(d, ref::Tie::toward_pos_inf), zp, lo, hi);
        const std::int32_t want_d = ref::clamp_add(ref::tflite_double_rounding(x, q.multiplier, q.shift), zp, lo, hi);
        const std::int32_t got_he = num::requantize<num::round_half_even>(x, q, zp, lo, hi);
        const std::int32_t got_s = num::requantize<num::round_single>(x, q, zp, lo, hi);
        const std::int32_t got_d = num::requantize<num::round_double>(x, q, zp, lo, hi);
        if (got_he != want_he || got_s != want_s || got_d != want_d || got_d < lo || got_d > hi)
            bad.add(args(x, q) + " zp=" + std::to_string(zp) + " lo=" + std::to_string(lo) +
                    " hi=" + std::to_string(hi));
    };
    for (int i = 0; i < kRandomDraws / 4; ++i) {
        const Draw d = draw(rng);
        const std::int32_t zp = rng.one_in(2) ? static_cast<std::int32_t>(rng.uniform(-128, 255)) : rng.i32();
        std::int32_t lo = -128;
        std::int32_t hi = 127;
        switch (rng.bits() % 4) {
            case 0: break;
            case 1: lo = 0, hi = 255; break;
            default:
                lo = rng.i32();
                hi = rng.i32();
                if (lo > hi) std::swap(lo, hi);
        }
        check(d, zp, lo, hi);
    }
    for (const auto& d : boundary_grid())
        for (auto zp : {ref::i32_min, -128, 0, 127, ref::i32_max}) {
            check(d, zp, -128, 127);
            check(d, zp, ref::i32_min, ref::i32_max);
            check(d, zp, 7, 7);
        }
    INFO("first mismatch: " << bad.first);
    CHECK(bad.count == 0);
    // round + zero point exceeds int32 in both directions: the clamp still sees the true sum.
    CHECK(num::requantize<num::round_half_even>(ref::i32_max, QM{ref::i32_max, 0}, ref::i32_max, -128, 127) == 127);
    CHECK(num::requantize<num::round_half_even>(ref::i32_min, QM{ref::i32_max, 0}, ref::i32_min, -128, 127) == -128);
    CHECK(num::requantize<num::round_half_even>(ref::i32_max, QM{ref::i32_max, 0}, ref::i32_max, ref::i32_min,
                                                ref::i32_max) == ref::i32_max);
    CHECK(num::requantize<num::round_double>(100, QM{two30, 0}, -3, -128, 127) == 47);  // 100 * 0.5 - 3
}

// ---------------------------------------------------------------------------------------------------------------
// quantize_multiplier

TEST_CASE("quantize_multiplier represents ratios >= 1 with a positive shift, exactly for short mantissas") {
    struct Case {
        double ratio;
        QM want;
    };
    const Case cases[] = {
        {0.25, {two30, -1}},     {0.5, {two30, 0}},      {0.75, {3 << 29, 0}},      {1.0, {two30, 1}},
        {1.5, {3 << 29, 1}},     {2.0, {two30, 2}},      {3.0, {3 << 29, 2}},       {0x1p29, {two30, 30}},
        {0x1p30 - 0.5, {ref::i32_max, 30}},  // the largest representable ratio
        {0x1p-32, {two30, -31}},             // the smallest nonzero one
    };
    for (const auto& c : cases) {
        CAPTURE(c.ratio);
        const auto q = num::quantize_multiplier(c.ratio);
        REQUIRE(q.ok());
        CHECK(*q == c.want);
        CHECK(q->value() == static_cast<long double>(c.ratio));
        CHECK(num::is_valid(*q));
    }
}

TEST_CASE("quantize_multiplier rounds the mantissa to nearest, ties away from zero, and renormalizes 2^31 to 2^30") {
    // The largest double below 1.0: mantissa (1 - 2^-53) * 2^31 rounds up to 2^31 -> 2^30 with shift 0 + 1.
    const double below_one = std::nextafter(1.0, 0.0);
    CHECK(*num::quantize_multiplier(below_one) == QM{two30, 1});
    CHECK(*num::quantize_multiplier(std::nextafter(0.5, 0.0)) == QM{two30, 0});
    CHECK(*num::quantize_multiplier(std::nextafter(0x1p-31, 0.0)) == QM{two30, -30});
    // mantissa * 2^31 = 2^30 + 1/2 and 2^30 + 5/2: ties go away from zero (std::llround), not to even.
    CHECK(*num::quantize_multiplier(0.5 + 0x1p-32) == QM{two30 + 1, 0});
    CHECK(*num::quantize_multiplier(0.5 + 5 * 0x1p-32) == QM{two30 + 3, 0});
    CHECK(*num::quantize_multiplier(0.5 + 0x1p-33) == QM{two30, 0});  // 2^30 + 1/4 -> 2^30
}

TEST_CASE("quantize_multiplier flushes ratios below 2^-32 to zero, and the flush is exact: every int32 x maps to 0 "
          "under all rounding modes") {
    const double just_below = std::nextafter(0x1p-32, 0.0);  // (1 - 2^-53) * 2^-32
    const auto q = num::quantize_multiplier(just_below);
    REQUIRE(q.ok());
    CHECK(*q == QM{0, 0});
    CHECK(q->is_zero());
    // Proof: |x| <= 2^31, so |x * ratio| < 2^31 * 2^-32 = 1/2 strictly; every round-to-nearest gives 0. Checked
    // exactly at the extremes: ratio * 2^85 is an integer (53-bit mantissa, exponent -33).
    const ref::i128 ratio_num = static_cast<ref::i128>(std::ldexp(just_below, 85));
    REQUIRE(static_cast<double>(ratio_num) == std::ldexp(just_below, 85));
    for (std::int32_t x : {ref::i32_min, ref::i32_min + 1, ref::i32_max, -1, 1}) {
        CAPTURE(x);
        for (auto tie : {ref::Tie::to_even, ref::Tie::toward_pos_inf, ref::Tie::away_from_zero})
            CHECK(ref::round_div(ref::i128{x} * ratio_num, ref::pow2(85), tie) == 0);
        CHECK(num::round_half_even::apply(x, *q) == 0);
        CHECK(num::round_single::apply(x, *q) == 0);
        CHECK(num::round_double::apply(x, *q) == 0);
    }
    // Deciding after rounding (as TFLite's QuantizeMultiplier does) would give (2^30, -31) = 2^-32 here, and
    // round_double would map both extremes to +-1: not exact.
    CHECK(num::round_double::apply(ref::i32_min, QM{two30, -31}) == -1);
    CHECK(num::round_double::apply(ref::i32_max, QM{two30, -31}) == 1);
    // Every smaller ratio flushes too, down to the smallest subnormal; 0 and -0 are zero.
    ref::BiasedRng rng(0x5EED0107);
    for (int i = 0; i < 10'000; ++i) {
        const double r = std::ldexp(static_cast<double>(rng.uniform(1, (std::int64_t{1} << 53) - 1)),
                                    static_cast<int>(rng.uniform(-1100, -32 - 53)));
        REQUIRE(r < 0x1p-32);
        const auto z = num::quantize_multiplier(r);
        REQUIRE(z.ok());
        REQUIRE(*z == QM{0, 0});
    }
    CHECK(*num::quantize_multiplier(std::numeric_limits<double>::denorm_min()) == QM{0, 0});
    CHECK(*num::quantize_multiplier(0.0) == QM{0, 0});
    CHECK(*num::quantize_multiplier(-0.0) == QM{0, 0});
}

TEST_CASE("quantize_multiplier refuses negative, NaN and infinite ratios [ratio-finite-nonnegative]") {
    constexpr double inf = std::numeric_limits<double>::infinity();
    for (double r : {-1.0, -1e-300, -std::numeric_limits<double>::denorm_min(), -inf, inf,
                     std::numeric_limits<double>::quiet_NaN()}) {
        CAPTURE(r);
        const auto q = num::quantize_multiplier(r, "conv1.requant");
        REQUIRE_FALSE(q.ok());
        CHECK(q.error().rule == "ratio-finite-nonnegative");
        CHECK(q.error().input == "conv1.requant");
        CHECK(q.error().position.empty());
    }
    CHECK(num::quantize_multiplier(-0.25, "conv1.requant").error().message() ==
          "conv1.requant: error: scale ratio must be a finite number >= 0, got -0.25 [ratio-finite-nonnegative]");
    CHECK(num::quantize_multiplier(-1e-10).error().message() ==
          "scale ratio: error: scale ratio must be a finite number >= 0, got -1e-10 [ratio-finite-nonnegative]");
}

TEST_CASE("quantize_multiplier refuses ratios whose 31-bit rounding reaches 2^30, i.e. ratio >= 2^30 - 2^-2 "
          "[ratio-below-2^30]") {
    for (double r : {0x1p30, 0x1p30 - 0x1p-2, std::nextafter(0x1p30, 0.0), 1e300, std::numeric_limits<double>::max()}) {
        CAPTURE(r);
        const auto q = num::quantize_multiplier(r, "fc.requant");
        REQUIRE_FALSE(q.ok());
        CHECK(q.error().rule == "ratio-below-2^30");
        CHECK(q.error().input == "fc.requant");
    }
    // Just below the boundary: (2^31 - 1/2 - 2^-22) rounds down to 2^31 - 1.
    CHECK(*num::quantize_multiplier(std::nextafter(0x1p30 - 0x1p-2, 0.0)) == QM{ref::i32_max, 30});
    CHECK(num::quantize_multiplier(0x1p30, "fc.requant").error().message() ==
          "fc.requant: error: scale ratio 1073741824 rounds to 2^30 or more; the largest representable ratio is "
          "2^30 - 1/2 [ratio-below-2^30]");
}

TEST_CASE("quantize_multiplier is the nearest 31-bit multiplier: relative error <= 2^-31, valid, equal to a naive "
          "reference") {
    ref::BiasedRng rng(0x5EED0108);
    Mismatches bad_ref;
    Mismatches bad_err;
    for (int i = 0; i < 100'000; ++i) {
        double r = 0;
        switch (rng.bits() % 4) {
            case 0: {  // near a power of two, where the renormalization happens
                const double p = std::ldexp(1.0, static_cast<int>(rng.uniform(-32, 29)));
                r = p;
                for (auto k = rng.uniform(0, 40); k > 0; --k) r = std::nextafter(r, 0.0);
                break;
            }
            default:  // random 53-bit mantissa, exponent in [-32, 30): r in [2^-32, 2^30)
                r = std::ldexp(static_cast<double>(rng.uniform(std::int64_t{1} << 52, (std::int64_t{1} << 53) - 1)),
                               static_cast<int>(rng.uniform(-32, 29)) - 52);
        }
        const auto q = num::quantize_multiplier(r);
        const auto want = ref::quantize_multiplier_ref(r);
        const std::string s = "ratio=" + hexfloat(r);
        if (want.kind != ref::MultiplierRef::value) {
            if (q.ok()) bad_ref.add(s);
            continue;
        }
        if (!q.ok() || q->multiplier != want.multiplier || q->shift != want.shift || !num::is_valid(*q)) {
            bad_ref.add(s);
            continue;
        }
        if (r < 0x1p-32) continue;  // flushed, no relative error claim
        const long double err = std::fabs(q->value() - static_cast<long double>(r));
        if (err > std::ldexp(static_cast<long double>(r), -31)) bad_err.add(s);
    }
    INFO("first reference mismatch: " << bad_ref.first << "; first error > 2^-31: " << bad_err.first);
    CHECK(bad_ref.count == 0);
    CHECK(bad_err.count == 0);
}

TEST_CASE("is_valid accepts a multiplier in [2^30, 2^31) with shift in [-31, 30], or exactly (0, 0)") {
    CHECK(num::is_valid(QM{0, 0}));
    CHECK(num::is_valid(QM{two30, -31}));
    CHECK(num::is_valid(QM{two30, 30}));
    CHECK(num::is_valid(QM{ref::i32_max, 0}));
    CHECK_FALSE(num::is_valid(QM{0, 1}));
    CHECK_FALSE(num::is_valid(QM{two30 - 1, 0}));  // not normalized
    CHECK_FALSE(num::is_valid(QM{-two30, 0}));
    CHECK_FALSE(num::is_valid(QM{ref::i32_min, 0}));
    CHECK_FALSE(num::is_valid(QM{two30, -32}));
    CHECK_FALSE(num::is_valid(QM{two30, 31}));
    static_assert(num::is_valid(QM{}));
}

}  // namespace rounding_test

TEST_CASE("floating-point contraction is off: 0.01f + 0.0005f * n rounds twice (CMakeLists.txt -ffp-contract=off)") {
    // clang's default (-ffp-contract=on) folds this loop with one rounding (n = 7: 0x3c5d2f1b), and an FMA at run
    // time (-march=native, clang and g++) rounds once too; two roundings give 0x3c5d2f1a (docs/numerics.md
    // "Floating-point contraction"). A clang Release build without the flag changed three emitted-kernel goldens.
    std::vector<float> s(16);
    for (int c = 0; c < 16; ++c) s[static_cast<std::size_t>(c)] = 0.01f + 0.0005f * static_cast<float>(c);
    CHECK(std::bit_cast<std::uint32_t>(s[7]) == 0x3c5d2f1au);
    volatile float b = 0.0005f, c = 0.01f, m = 7.0f;  // the same at run time
    const float y = c + b * m;
    CHECK(std::bit_cast<std::uint32_t>(y) == 0x3c5d2f1au);
}
