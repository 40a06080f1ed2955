// fixed_point.hpp against the naive __int128 references of tests/support/numeric_reference.hpp, tolerance 0:
// 10^6 biased random inputs per primitive plus the full cross product of boundary values.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <janus/numeric/fixed_point.hpp>
#include <support/numeric_reference.hpp>

namespace {

namespace num = janus::numeric;
namespace ref = janus::reference;

constexpr int kRandomDraws = 1'000'000;

/// Counts disagreements and remembers the first one (a failing CHECK per draw would be slow and unreadable).
struct Mismatches {
    long count = 0;
    std::string first;
    void add(const std::string& what) {
        if (count++ == 0) first = what;
    }
};

const std::vector<std::int32_t>& boundary_i32() {
    static const std::vector<std::int32_t> v = {ref::i32_min,
                                                ref::i32_min + 1,
                                                -(std::int32_t{1} << 30) - 1,
                                                -(std::int32_t{1} << 30),
                                                -(std::int32_t{1} << 30) + 1,
                                                -(std::int32_t{1} << 15),
                                                -3,
                                                -2,
                                                -1,
                                                0,
                                                1,
                                                2,
                                                3,
                                                std::int32_t{1} << 15,
                                                (std::int32_t{1} << 30) - 1,
                                                std::int32_t{1} << 30,
                                                (std::int32_t{1} << 30) + 1,
                                                ref::i32_max - 1,
                                                ref::i32_max};
    return v;
}

std::string args(std::int64_t a, std::int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

}  // namespace

TEST_CASE("SRDHM is round(a*b / 2^31) with ties toward +infinity, for 10^6 random pairs and all boundary pairs") {
    ref::BiasedRng rng(0x5EED0001);
    Mismatches bad;
    auto check = [&](std::int32_t a, std::int32_t b) {
        if (num::saturating_rounding_doubling_high_mul(a, b) != ref::srdhm(a, b)) bad.add(args(a, b));
    };
    long ties = 0;
    for (int i = 0; i < kRandomDraws; ++i) {
        std::int32_t a = rng.i32();
        std::int32_t b = rng.i32();
        if (rng.one_in(4)) {  // force a tie: a = u * 2^i, b = v * 2^(30 - i), u and v odd -> a*b = odd * 2^30
            const int k = static_cast<int>(rng.uniform(0, 30));
            const std::int64_t pa = std::int64_t{1} << k;
            const std::int64_t pb = std::int64_t{1} << (30 - k);
            a = static_cast<std::int32_t>((rng.uniform(-pb, pb - 1) | 1) * pa);
            b = static_cast<std::int32_t>((rng.uniform(-pa, pa - 1) | 1) * pb);
        }
        ties += ref::is_tie(ref::i128{a} * b, ref::pow2(31)) ? 1 : 0;
        check(a, b);
    }
    for (auto a : boundary_i32())
        for (auto b : boundary_i32()) check(a, b);
    INFO("first mismatch (a, b) = " << bad.first);
    CHECK(bad.count == 0);
    CHECK(ties > kRandomDraws / 5);  // the tie generator works
}

TEST_CASE("SRDHM saturates only at INT32_MIN * INT32_MIN") {
    CHECK(num::saturating_rounding_doubling_high_mul(ref::i32_min, ref::i32_min) == ref::i32_max);  // exact 2^31
    // Every other product has |a*b| <= 2^31 * (2^31 - 1), so the exact result fits and nothing saturates:
    CHECK(num::saturating_rounding_doubling_high_mul(ref::i32_min, ref::i32_min + 1) == ref::i32_max);  // 2^31 - 1
    CHECK(num::saturating_rounding_doubling_high_mul(ref::i32_min, ref::i32_max) == ref::i32_min + 1);
    CHECK(num::saturating_rounding_doubling_high_mul(ref::i32_max, ref::i32_max) == ref::i32_max - 1);
    CHECK(num::saturating_rounding_doubling_high_mul(ref::i32_min, 1) == -1);
    CHECK(num::saturating_rounding_doubling_high_mul(ref::i32_min, -1) == 1);
    for (auto a : boundary_i32())
        for (auto b : boundary_i32()) {
            const ref::i128 exact = ref::round_div(ref::i128{a} * b, ref::pow2(31), ref::Tie::toward_pos_inf);
            const bool overflows = !ref::fits_i32(exact);
            CHECK(overflows == (a == ref::i32_min && b == ref::i32_min));
        }
}

TEST_CASE("SRDHM ties round toward +infinity, not away from zero (gemmlowp == SQRDMULH)") {
    // a*b = +-2^30 is exactly +-1/2 after the division by 2^31.
    CHECK(num::saturating_rounding_doubling_high_mul(1 << 15, 1 << 15) == 1);
    CHECK(num::saturating_rounding_doubling_high_mul(-(1 << 15), 1 << 15) == 0);
    CHECK(num::saturating_rounding_doubling_high_mul(3 << 15, 1 << 15) == 2);    // +1.5 -> 2
    CHECK(num::saturating_rounding_doubling_high_mul(-(3 << 15), 1 << 15) == -1);  // -1.5 -> -1
    CHECK(num::saturating_rounding_doubling_high_mul(ref::i32_max, 1 << 30) == 1 << 30);  // 2^30 - 1/2 -> 2^30
    // and it is exactly Arm's SQRDMULH formula (2ab + 2^31) >> 32
    ref::BiasedRng rng(0x5EED0002);
    Mismatches bad;
    for (int i = 0; i < 100'000; ++i) {
        const std::int32_t a = rng.i32();
        const std::int32_t b = rng.i32();
        const ref::i128 sqrdmulh = (2 * ref::i128{a} * b + ref::pow2(31)) >> 32;
        if (num::saturating_rounding_doubling_high_mul(a, b) != ref::saturate_i32(sqrdmulh)) bad.add(args(a, b));
    }
    INFO("first mismatch (a, b) = " << bad.first);
    CHECK(bad.count == 0);
}

TEST_CASE("rounding_divide_by_pot is round(x / 2^e) with ties away from zero, for every 0 <= e <= 31") {
    ref::BiasedRng rng(0x5EED0003);
    Mismatches bad;
    auto check = [&](std::int32_t x, int e) {
        if (num::rounding_divide_by_pot(x, e) != ref::rounding_divide_by_pot(x, e)) bad.add(args(x, e));
    };
    for (int i = 0; i < kRandomDraws; ++i) check(rng.i32(), rng.exponent(0, 31));
    for (auto x : boundary_i32())
        for (int e = 0; e <= 31; ++e) check(x, e);
    INFO("first mismatch (x, exponent) = " << bad.first);
    CHECK(bad.count == 0);

    CHECK(num::rounding_divide_by_pot(1, 1) == 1);     // +0.5 -> 1
    CHECK(num::rounding_divide_by_pot(-1, 1) == -1);   // -0.5 -> -1
    CHECK(num::rounding_divide_by_pot(-3, 1) == -2);   // -1.5 -> -2
    CHECK(num::rounding_divide_by_pot(5, 0) == 5);
    CHECK(num::rounding_divide_by_pot(ref::i32_min, 31) == -1);  // exactly -1
    CHECK(num::rounding_divide_by_pot(ref::i32_max, 31) == 1);   // 0.99999999953
    CHECK(num::rounding_divide_by_pot(1 << 30, 31) == 1);        // +0.5
    CHECK(num::rounding_divide_by_pot(-(1 << 30), 31) == -1);    // -0.5
    CHECK(num::rounding_divide_by_pot((1 << 30) - 1, 31) == 0);
    CHECK(num::rounding_divide_by_pot(-(1 << 30) + 1, 31) == 0);
}

TEST_CASE("saturating_left_shift is x * 2^s saturated to int32, for every 0 <= s <= 31") {
    ref::BiasedRng rng(0x5EED0004);
    Mismatches bad;
    auto check = [&](std::int32_t x, int s) {
        if (num::saturating_left_shift(x, s) != ref::saturating_left_shift(x, s)) bad.add(args(x, s));
    };
    for (int i = 0; i < kRandomDraws; ++i) check(rng.i32(), rng.exponent(0, 31));
    for (auto x : boundary_i32())
        for (int s = 0; s <= 31; ++s) check(x, s);
    INFO("first mismatch (x, s) = " << bad.first);
    CHECK(bad.count == 0);

    CHECK(num::saturating_left_shift(1, 30) == 1 << 30);
    CHECK(num::saturating_left_shift(1, 31) == ref::i32_max);
    CHECK(num::saturating_left_shift(-1, 31) == ref::i32_min);  // -2^31 fits exactly
    CHECK(num::saturating_left_shift(-2, 30) == ref::i32_min);
    CHECK(num::saturating_left_shift(-3, 30) == ref::i32_min);
    CHECK(num::saturating_left_shift(ref::i32_min, 1) == ref::i32_min);
    CHECK(num::saturating_left_shift(ref::i32_max, 1) == ref::i32_max);
    CHECK(num::saturating_left_shift(0, 31) == 0);
}

TEST_CASE("round_half_even_shift is round(v / 2^s) with ties to even, for every int64 v and 1 <= s <= 62") {
    ref::BiasedRng rng(0x5EED0005);
    Mismatches bad;
    auto check = [&](std::int64_t v, int s) {
        if (num::round_half_even_shift(v, s) != ref::round_half_even_shift(v, s)) bad.add(args(v, s));
    };
    for (int i = 0; i < kRandomDraws; ++i) check(rng.i64(), rng.exponent(1, 62));
    const std::int64_t boundaries[] = {ref::i64_min,         ref::i64_min + 1,      -(std::int64_t{1} << 62),
                                       -(std::int64_t{1} << 31), -3, -2, -1, 0, 1, 2, 3, std::int64_t{1} << 31,
                                       std::int64_t{1} << 62, ref::i64_max - 1,     ref::i64_max};
    for (auto v : boundaries)
        for (int s = 1; s <= 62; ++s) check(v, s);
    INFO("first mismatch (v, s) = " << bad.first);
    CHECK(bad.count == 0);

    CHECK(num::round_half_even_shift(1, 1) == 0);    // 0.5 -> 0
    CHECK(num::round_half_even_shift(3, 1) == 2);    // 1.5 -> 2
    CHECK(num::round_half_even_shift(-1, 1) == 0);   // -0.5 -> 0
    CHECK(num::round_half_even_shift(-3, 1) == -2);  // -1.5 -> -2
    CHECK(num::round_half_even_shift(5, 1) == 2);    // 2.5 -> 2
    CHECK(num::round_half_even_shift(ref::i64_min, 62) == -2);
    CHECK(num::round_half_even_shift(ref::i64_max, 62) == 2);  // 1.99999...
    CHECK(num::round_half_even_shift(ref::i64_min, 1) == ref::i64_min / 2);
}

TEST_CASE("fixed-point primitives are constexpr and agree with their contract at compile time") {
    static_assert(num::saturating_rounding_doubling_high_mul(num::i32_min, num::i32_min) == num::i32_max);
    static_assert(num::saturating_rounding_doubling_high_mul(-(1 << 15), 1 << 15) == 0);
    static_assert(num::rounding_divide_by_pot(-1, 1) == -1);
    static_assert(num::saturating_left_shift(num::i32_max, 31) == num::i32_max);
    static_assert(num::round_half_even_shift(5, 1) == 2);
    static_assert(num::saturate_i32(std::int64_t{1} << 40) == num::i32_max);
    static_assert(num::saturate_i32(-(std::int64_t{1} << 40)) == num::i32_min);
    CHECK(true);
}
