// range.hpp: interval helpers are sound and tight (checked by enumeration and against __int128 corners), never
// overflow, and the accumulator headroom check pins the classic int8 numbers (seed A5).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <janus/numeric/range.hpp>
#include <janus/numeric/rounding.hpp>
#include <support/numeric_reference.hpp>

namespace {

namespace num = janus::numeric;
namespace ref = janus::reference;
using num::Interval;
using QM = num::QuantizedMultiplier;

constexpr std::int64_t ninf = Interval::neg_inf;
constexpr std::int64_t pinf = Interval::pos_inf;

Interval random_interval(ref::BiasedRng& rng, std::int64_t lo, std::int64_t hi) {
    std::int64_t a = rng.uniform(lo, hi);
    std::int64_t b = rng.one_in(8) ? a : rng.uniform(lo, hi);
    return a <= b ? Interval{a, b} : Interval{b, a};
}

/// The exact hull of f(x, y) over x in a, y in b, by enumeration.
template <class F>
Interval hull(Interval a, Interval b, F f) {
    std::int64_t lo = pinf;
    std::int64_t hi = ninf;
    for (auto x = a.lo; x <= a.hi; ++x)
        for (auto y = b.lo; y <= b.hi; ++y) {
            const std::int64_t v = f(x, y);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    return {lo, hi};
}

std::string show(Interval a, Interval b) { return a.str() + " op " + b.str(); }

}  // namespace

TEST_CASE("Interval basics: of(dtype), contains, fits_i32, str") {
    CHECK(Interval::of(janus::DType::i8) == Interval{-128, 127});
    CHECK(Interval::of(janus::DType::u8) == Interval{0, 255});
    CHECK(Interval::of(janus::DType::i32) == Interval{ref::i32_min, ref::i32_max});
    CHECK(Interval::of(janus::DType::i64) == Interval::unbounded());
    CHECK(Interval::of(janus::DType::f32) == Interval::unbounded());
    CHECK(Interval{-3, 5}.contains(-3));
    CHECK_FALSE(Interval{-3, 5}.contains(6));
    CHECK(Interval{-3, 5}.contains(Interval{0, 5}));
    CHECK_FALSE(Interval{-3, 5}.contains(Interval{0, 6}));
    CHECK(Interval::of(janus::DType::i32).fits_i32());
    CHECK_FALSE(Interval{ref::i32_min - std::int64_t{1}, 0}.fits_i32());
    CHECK_FALSE(Interval{0, ref::i32_max + std::int64_t{1}}.fits_i32());
    CHECK(Interval{-255, 255}.str() == "[-255, 255]");
    CHECK(Interval{ninf, 7}.str() == "[-inf, 7]");
    CHECK(Interval::unbounded().str() == "[-inf, +inf]");
    CHECK(Interval::point(4).bounded());
    CHECK_FALSE(Interval{0, pinf}.bounded());
}

TEST_CASE("add, sub, mul, neg, abs, min, max, shift_left, clamp and join are exact hulls (sound and tight), checked "
          "by enumeration") {
    ref::BiasedRng rng(0x5EED0301);
    long bad = 0;
    std::string first;
    auto expect = [&](Interval got, Interval want, const std::string& what) {
        if (got != want && bad++ == 0) first = what + ": got " + got.str() + " want " + want.str();
    };
    for (int i = 0; i < 3000; ++i) {
        const Interval a = random_interval(rng, -12, 12);
        const Interval b = random_interval(rng, -12, 12);
        const std::string s = show(a, b);
        expect(add(a, b), hull(a, b, [](auto x, auto y) { return x + y; }), "add " + s);
        expect(a + b, add(a, b), "operator+ " + s);
        expect(sub(a, b), hull(a, b, [](auto x, auto y) { return x - y; }), "sub " + s);
        expect(a - b, sub(a, b), "operator- " + s);
        expect(mul(a, b), hull(a, b, [](auto x, auto y) { return x * y; }), "mul " + s);
        expect(a * b, mul(a, b), "operator* " + s);
        expect(min(a, b), hull(a, b, [](auto x, auto y) { return x < y ? x : y; }), "min " + s);
        expect(max(a, b), hull(a, b, [](auto x, auto y) { return x < y ? y : x; }), "max " + s);
        const Interval unit = Interval::point(0);
        expect(neg(a), hull(a, unit, [](auto x, auto) { return -x; }), "neg " + s);
        expect(-a, neg(a), "unary - " + s);
        expect(abs(a), hull(a, unit, [](auto x, auto) { return x < 0 ? -x : x; }), "abs " + s);
        const int sh = static_cast<int>(rng.uniform(0, 3));
        expect(shift_left(a, sh), hull(a, unit, [sh](auto x, auto) { return x * (std::int64_t{1} << sh); }),
               "shift_left " + s);
        const std::int64_t clo = b.lo;
        const std::int64_t chi = b.hi;
        expect(clamp(a, clo, chi), hull(a, unit, [&](auto x, auto) { return x < clo ? clo : x > chi ? chi : x; }),
               "clamp " + s);
        const Interval j = join(a, b);
        expect(j, Interval{a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi}, "join " + s);
        if (!(j.contains(a) && j.contains(b)) && bad++ == 0) first = "join does not contain " + s;
    }
    INFO(first);
    CHECK(bad == 0);
}

TEST_CASE("within +-2^40 the helpers are exact; mul is exact while the product stays inside int64") {
    ref::BiasedRng rng(0x5EED0302);
    constexpr std::int64_t lim = std::int64_t{1} << 40;
    long bad = 0;
    for (int i = 0; i < 100'000; ++i) {
        const Interval a = random_interval(rng, -lim, lim);
        const Interval b = random_interval(rng, -lim, lim);
        const Interval s = add(a, b);
        const Interval d = sub(a, b);
        bad += (s.lo == a.lo + b.lo && s.hi == a.hi + b.hi) ? 0 : 1;
        bad += (d.lo == a.lo - b.hi && d.hi == a.hi - b.lo) ? 0 : 1;
        bad += (neg(a) == Interval{-a.hi, -a.lo}) ? 0 : 1;
        bad += (add(sub(a, b), b).contains(a)) ? 0 : 1;
        // Products of +-2^31 operands are exact.
        const Interval c = {a.lo >> 9, a.hi >> 9};
        const Interval e = {b.lo >> 9, b.hi >> 9};
        const Interval p = mul(c, e);
        const ref::i128 corners[] = {ref::i128{c.lo} * e.lo, ref::i128{c.lo} * e.hi, ref::i128{c.hi} * e.lo,
                                     ref::i128{c.hi} * e.hi};
        ref::i128 lo = corners[0];
        ref::i128 hi = corners[0];
        for (auto v : corners) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        bad += (p.lo == lo && p.hi == hi) ? 0 : 1;
    }
    CHECK(bad == 0);
    // +-2^40 * +-2^40 = 2^80 does not fit int64: infinite, never wrapped.
    CHECK(mul(Interval{-lim, lim}, Interval{-lim, lim}) == Interval::unbounded());
    CHECK(mul(Interval{lim, lim}, Interval{lim, lim}) == Interval{pinf, pinf});
    CHECK(mul(Interval{-(std::int64_t{1} << 31), std::int64_t{1} << 31}, Interval{-(std::int64_t{1} << 31), 0}) ==
          Interval{-(std::int64_t{1} << 62), std::int64_t{1} << 62});
    CHECK(shift_left(Interval{-1, 1}, 62) == Interval{-(std::int64_t{1} << 62), std::int64_t{1} << 62});
    CHECK(shift_left(Interval{-2, 2}, 62) == Interval::unbounded());
    CHECK(shift_left(Interval{0, 1}, 63) == Interval{0, pinf});
}

TEST_CASE("infinite bounds stay infinite, 0 * inf = 0, and no helper overflows for any int64 bounds") {
    CHECK(add(Interval{0, pinf}, Interval{-10, -10}) == Interval{-10, pinf});
    CHECK(add(Interval{ninf, 0}, Interval{10, 10}) == Interval{ninf, 10});
    CHECK(sub(Interval{0, 0}, Interval::unbounded()) == Interval::unbounded());
    CHECK(mul(Interval::point(0), Interval::unbounded()) == Interval::point(0));
    CHECK(mul(Interval{0, 1}, Interval{ninf, -1}) == Interval{ninf, 0});
    CHECK(neg(Interval::unbounded()) == Interval::unbounded());
    CHECK(abs(Interval{ninf, 5}) == Interval{0, pinf});
    CHECK(abs(Interval{ninf, ninf}) == Interval{pinf, pinf});
    CHECK(neg(Interval{ninf + 1, 0}) == Interval{0, pinf});  // 2^63 - 1 is read as +inf: conservative
    // Every pair of extreme intervals through every helper (UBSan builds would flag any overflow), checked sound on
    // sample values: each finite bound, 0 if inside, and a value beyond int64 on each unbounded side. Exact __int128.
    const std::int64_t vs[] = {ninf, ninf + 1, -(std::int64_t{1} << 62), -(std::int64_t{1} << 40), -1, 0, 1,
                               std::int64_t{1} << 40, std::int64_t{1} << 62, pinf - 1, pinf};
    std::vector<Interval> xs;
    for (auto lo : vs)
        for (auto hi : vs)
            if (lo <= hi) xs.push_back({lo, hi});
    const ref::i128 beyond = ref::pow2(63) + 1;
    auto samples = [&](Interval a) {
        std::vector<ref::i128> v = {a.lo == ninf ? -beyond : ref::i128{a.lo}, a.hi == pinf ? beyond : ref::i128{a.hi}};
        if (a.lo == ninf) v.push_back(a.hi == pinf ? ref::i128{ninf} : ref::i128{a.hi} - 1);
        if (a.hi == pinf) v.push_back(a.lo == ninf ? ref::i128{pinf} : ref::i128{a.lo} + 1);
        if (a.contains(0)) v.push_back(0);
        return v;
    };
    // A lower bound of INT64_MIN is -inf and an upper bound of INT64_MAX is +inf; every other bound is a number.
    auto covers = [](Interval r, ref::i128 v) { return (r.lo == ninf || v >= r.lo) && (r.hi == pinf || v <= r.hi); };
    long unsound = 0;
    std::string first;
    auto expect = [&](bool ok, const char* op, Interval a, Interval b) {
        if (!ok && unsound++ == 0) first = std::string(op) + " " + a.str() + " " + b.str();
    };
    for (const auto& a : xs) {
        const auto sa = samples(a);
        for (auto x : sa) {
            expect(covers(neg(a), -x), "neg", a, a);
            expect(covers(abs(a), x < 0 ? -x : x), "abs", a, a);
            for (int s : {1, 40, 62, 63}) expect(covers(shift_left(a, s), x * ref::pow2(s)), "shift_left", a, a);
        }
        for (const auto& b : xs) {
            const Interval s = add(a, b);
            const Interval d = sub(a, b);
            const Interval p = mul(a, b);
            const Interval lo = min(a, b);
            const Interval hi = max(a, b);
            const Interval j = join(a, b);
            const Interval c = clamp(a, b.lo, b.hi);
            for (auto x : sa) {
                expect(covers(j, x), "join", a, b);
                expect(covers(c, x < b.lo ? b.lo : x > b.hi ? b.hi : x), "clamp", a, b);
                for (auto y : samples(b)) {
                    expect(covers(s, x + y), "add", a, b);
                    expect(covers(d, x - y), "sub", a, b);
                    expect(covers(p, x * y), "mul", a, b);
                    expect(covers(lo, x < y ? x : y), "min", a, b);
                    expect(covers(hi, x < y ? y : x), "max", a, b);
                }
            }
        }
    }
    INFO("first unsound: " << first);
    CHECK(unsound == 0);
    CHECK(xs.size() == 66);
}

TEST_CASE("scale bounds round_R(x*M) for every x in the interval and every rounding mode, tight to within 1") {
    ref::BiasedRng rng(0x5EED0303);
    long bad = 0;
    std::string first;
    for (int i = 0; i < 20'000; ++i) {
        const QM q{rng.mantissa(), rng.exponent(num::min_multiplier_shift, num::max_multiplier_shift)};
        // the precondition: x * 2^shift fits int32
        const std::int64_t limit = q.shift > 0 ? (std::int64_t{1} << (31 - q.shift)) : (std::int64_t{1} << 31);
        const Interval a = random_interval(rng, -limit, limit - 1);
        const Interval s = scale(a, q);
        const bool tight = s.lo + 1 == num::round_half_even::apply(static_cast<std::int32_t>(a.lo), q) &&
                           s.hi - 1 == num::round_half_even::apply(static_cast<std::int32_t>(a.hi), q);
        if (!tight && bad++ == 0) first = "not tight: " + a.str();
        for (int k = 0; k < 8; ++k) {
            const auto x = static_cast<std::int32_t>(k == 0 ? a.lo : k == 1 ? a.hi : rng.uniform(a.lo, a.hi));
            const bool in = s.contains(num::round_half_even::apply(x, q)) &&
                            s.contains(num::round_single::apply(x, q)) && s.contains(num::round_double::apply(x, q));
            if (!in && bad++ == 0) first = "x=" + std::to_string(x) + " outside " + s.str();
        }
    }
    INFO(first);
    CHECK(bad == 0);
    CHECK(scale(Interval{-1000, 1000}, QM{}) == Interval::point(0));
    CHECK(scale(Interval{-1000, 1000}, QM{1 << 30, 0}) == Interval{-501, 501});  // x/2, ties to even, +-1
    CHECK(scale(Interval{-1000, 1000}, QM{5, 0}) == Interval::unbounded());      // invalid multiplier
    CHECK(scale(Interval{0, pinf}, QM{1 << 30, 0}) == Interval{-1, pinf});
}

TEST_CASE("int8 x int8 with an arbitrary input zero point and symmetric weights: at most 66311 terms fit int32") {
    // x - zp with x and zp both int8 lies in [-255, 255]; symmetric int8 weights lie in [-127, 127].
    const Interval input = sub(Interval::of(janus::DType::i8), Interval::of(janus::DType::i8));
    const Interval weight{-127, 127};
    REQUIRE(input == Interval{-255, 255});
    CHECK(mul(input, weight) == Interval{-32385, 32385});
    CHECK(num::max_terms_without_overflow(input, weight, Interval::point(0)) == 66311);
    static_assert(num::max_terms_without_overflow({-255, 255}, {-127, 127}, {0, 0}) == 66311);

    const auto fits = num::accumulator_range(input, weight, 66311, Interval::point(0), "conv1.acc");
    REQUIRE(fits.ok());
    CHECK(*fits == Interval{-2147481735, 2147481735});  // 66311 * 32385

    const auto refused = num::accumulator_range(input, weight, 66312, Interval::point(0), "conv1.acc");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().rule == "accumulator-fits-int32");
    CHECK(refused.error().unsupported());  // a valid model whose products Janus cannot sum exactly in int32
    CHECK(refused.error().message() ==
          "conv1.acc: unsupported: conv1.acc with an int32 accumulator of 66312 terms; 66312 terms of input [-255, "
          "255] x weight [-127, 127], each in [-32385, 32385], sum to "
          "[-2147514120, 2147514120]; plus bias [0, 0] gives [-2147514120, 2147514120]; the sum of the products does "
          "not fit int32 [-2147483648, 2147483647]; at most 66311 terms fit [accumulator-fits-int32]");
}

TEST_CASE("max_terms_without_overflow: classic headroom numbers") {
    struct Row {
        Interval input;
        Interval weight;
        Interval bias;
        std::int64_t terms;
    };
    const Row rows[] = {
        {{-255, 255}, {-127, 127}, {0, 0}, 66311},                                    // zp-adjusted int8 x sym int8
        {{-127, 127}, {-127, 127}, {0, 0}, 133144},                                   // symmetric x symmetric
        {{-128, 127}, {-128, 127}, {0, 0}, 131071},                                   // products in [-16256, 16384]
        {{0, 255}, {0, 255}, {0, 0}, 33025},                                          // uint8 x uint8, no zero points
        {{-255, 255}, {-127, 127}, {-(1 << 24), 1 << 24}, 65793},                     // with a +-2^24 bias
        {{0, 0}, {-127, 127}, {0, 0}, pinf},                                          // every product is 0
        {{-255, 255}, {-127, 127}, {0, std::int64_t{1} << 31}, -1},                   // the bias alone overflows
        {{ref::i32_min, ref::i32_max}, {-1, 1}, {0, 0}, 0},                           // one product may overflow
        {{-255, 255}, {ninf, pinf}, {0, 0}, 0},                                       // unbounded weights
    };
    for (const auto& r : rows) {
        CAPTURE(r.input.str());
        CAPTURE(r.weight.str());
        CAPTURE(r.bias.str());
        CHECK(num::max_terms_without_overflow(r.input, r.weight, r.bias) == r.terms);
    }
}

TEST_CASE("max_terms_without_overflow is exactly the boundary of accumulator_range") {
    ref::BiasedRng rng(0x5EED0304);
    long bad = 0;
    std::string first;
    for (int i = 0; i < 5'000; ++i) {
        const std::int64_t mag_in = std::int64_t{1} << rng.uniform(0, 33);
        const std::int64_t mag_w = std::int64_t{1} << rng.uniform(0, 20);
        const std::int64_t mag_b = std::int64_t{1} << rng.uniform(0, 32);
        const Interval in = random_interval(rng, -mag_in, mag_in);
        const Interval w = random_interval(rng, -mag_w, mag_w);
        const Interval b = random_interval(rng, -mag_b, mag_b);
        const std::int64_t k = num::max_terms_without_overflow(in, w, b);
        bool ok = true;
        if (k == -1) {
            ok = !num::accumulator_range(in, w, 0, b, "acc").ok();
        } else if (k == pinf) {
            ok = mul(in, w) == Interval::point(0) &&
                 num::accumulator_range(in, w, std::int64_t{1} << 40, b, "acc").ok();
        } else {
            const auto at = num::accumulator_range(in, w, k, b, "acc");
            const auto above = num::accumulator_range(in, w, k + 1, b, "acc");
            ok = at.ok() && !above.ok() && above.error().rule == "accumulator-fits-int32";
        }
        if (!ok && bad++ == 0) first = in.str() + " x " + w.str() + " + " + b.str() + " -> " + std::to_string(k);
    }
    INFO(first);
    CHECK(bad == 0);
}

TEST_CASE("accumulator_range checks every partial sum: a bias that fits int32 only together with the products is "
          "refused") {
    // total = bias - 1000 fits, but adding the bias first already overflows.
    const Interval bias{0, std::int64_t{1} << 31};
    const auto r = num::accumulator_range(Interval::point(1), Interval::point(-1000), 1, bias, "fc.acc");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "accumulator-fits-int32");
    CHECK(r.error().detail.find("the bias (a partial sum when it is added first) does not fit int32") !=
          std::string::npos);
    CHECK(r.error().detail.find("no number of terms fits") != std::string::npos);
    // Zero terms: the range is the bias.
    CHECK(*num::accumulator_range(Interval{-5, 5}, Interval{-5, 5}, 0, Interval{-7, 9}, "acc") == Interval{-7, 9});
}

TEST_CASE("accumulator_range refuses intervals with lo > hi [interval-ordered] and negative terms "
          "[terms-nonnegative]") {
    const auto w = num::accumulator_range(Interval{-1, 1}, Interval{3, 2}, 4, Interval::point(0), "conv2.acc");
    REQUIRE_FALSE(w.ok());
    CHECK(w.error().message() == "conv2.acc:weight: error: weight range [3, 2] has lo > hi [interval-ordered]");
    const auto t = num::accumulator_range(Interval{-1, 1}, Interval{-1, 1}, -4, Interval::point(0), "conv2.acc");
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message() == "conv2.acc: error: number of terms -4 is negative [terms-nonnegative]");
    CHECK(num::max_terms_without_overflow(Interval{1, 0}, Interval{0, 0}, Interval{0, 0}) == -1);
}

TEST_CASE("requantize_range proves round_double's left shift cannot saturate and bounds requantize<R>") {
    const QM q10{1 << 30, 10};  // ratio 2^9
    const auto ok = num::requantize_range(Interval{-(1 << 20), (1 << 20) - 1}, q10, 3, -128, 127, "conv1.out");
    REQUIRE(ok.ok());
    CHECK(*ok == Interval{-128, 127});
    const auto bad = num::requantize_range(Interval{-(1 << 21), 1 << 21}, q10, 3, -128, 127, "conv1.out");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message() ==
          "conv1.out: error: accumulator [-2097152, 2097152] shifted left by 10 is [-2147483648, 2147483648], outside "
          "int32; round_double would saturate it [requantize-left-shift-fits-int32]");
    CHECK(num::requantize_range(Interval{0, std::int64_t{1} << 31}, QM{1 << 30, 0}, 0, -128, 127, "o").error().rule ==
          "requantize-input-fits-int32");
    CHECK(num::requantize_range(Interval{0, 1}, QM{5, 0}, 0, -128, 127, "o").error().rule == "multiplier-valid");
    CHECK(num::requantize_range(Interval{0, 1}, QM{1 << 30, 0}, 0, 127, -128, "o").error().rule == "clamp-ordered");

    // Brute force: every requantize<R> result over the accumulator range lies in the proved range.
    ref::BiasedRng rng(0x5EED0305);
    long outside = 0;
    for (int i = 0; i < 2000; ++i) {
        const QM q{rng.mantissa(), static_cast<std::int32_t>(rng.uniform(-31, 12))};
        const std::int64_t limit = q.shift > 0 ? (std::int64_t{1} << (31 - q.shift)) : (std::int64_t{1} << 31);
        const Interval acc = random_interval(rng, -limit, limit - 1);
        const auto zp = static_cast<std::int32_t>(rng.uniform(-128, 127));
        const auto r = num::requantize_range(acc, q, zp, -128, 127, "o");
        if (!r.ok()) {
            ++outside;
            continue;
        }
        for (int k = 0; k < 16; ++k) {
            const auto x = static_cast<std::int32_t>(k == 0 ? acc.lo : k == 1 ? acc.hi : rng.uniform(acc.lo, acc.hi));
            outside += r->contains(num::requantize<num::round_double>(x, q, zp, -128, 127)) ? 0 : 1;
            outside += r->contains(num::requantize<num::round_single>(x, q, zp, -128, 127)) ? 0 : 1;
            outside += r->contains(num::requantize<num::round_half_even>(x, q, zp, -128, 127)) ? 0 : 1;
        }
    }
    CHECK(outside == 0);
}
