// Fuzz target: the three rounding modes of rounding.hpp and requantize's clamp, against the exact __int128
// reference (tests/support/numeric_reference.hpp). Checks meaning, not only "did not crash".
//
// Input: 21 bytes, little endian, shorter inputs zero-padded, extra bytes ignored. Every byte string is valid:
//   [0, 4)   x           int32
//   [4, 8)   multiplier  uint32 r: 0 -> multiplier 0 (shift forced to 0); else 2^30 | (r & (2^30 - 1))
//   [8]      shift       -31 + (byte % 62), in [-31, 30]
//   [9, 13)  zero_point  int32
//   [13, 17) lo          int32 \ swapped if lo > hi
//   [17, 21) hi          int32 /
// Properties (the same as tests/numeric/rounding.cpp):
//   1. the decoded multiplier is_valid();
//   2. round_half_even == exact x*M rounded half to even, saturated; round_single == exact rounded half up,
//      saturated; off ties the two agree;
//   3. round_double == TFLite's composition SLS -> SRDHM -> RDBPOT (bit for bit); if x * 2^max(shift, 0) fits int32
//      it is within 1 of exact and, for shift >= 0, equal to round_single; otherwise it keeps the sign of x and has
//      magnitude >= 2^30;
//   4. requantize<R> == clamp(R(x) + zero_point, lo, hi) computed exactly, for all three modes.
// A violation prints the decoded input and calls __builtin_trap().
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/rounding.hpp>

#include "../tests/support/numeric_reference.hpp"

namespace {

namespace num = janus::numeric;
namespace ref = janus::reference;

constexpr std::size_t kRecordSize = 21;

struct Decoded {
    std::int32_t x;
    num::QuantizedMultiplier q;
    std::int32_t zero_point;
    std::int32_t lo;
    std::int32_t hi;
};

std::uint32_t u32_le(const std::uint8_t* p) {
    return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::int32_t i32_le(const std::uint8_t* p) { return static_cast<std::int32_t>(u32_le(p)); }

Decoded decode(const std::uint8_t* data, std::size_t size) {
    std::uint8_t b[kRecordSize] = {};
    std::memcpy(b, data, size < kRecordSize ? size : kRecordSize);
    Decoded d{};
    d.x = i32_le(b);
    const std::uint32_t r = u32_le(b + 4);
    if (r == 0) {
        d.q = {0, 0};
    } else {
        d.q.multiplier = static_cast<std::int32_t>((std::uint32_t{1} << 30) | (r & ((std::uint32_t{1} << 30) - 1)));
        d.q.shift = -31 + b[8] % 62;
    }
    d.zero_point = i32_le(b + 9);
    d.lo = i32_le(b + 13);
    d.hi = i32_le(b + 17);
    if (d.lo > d.hi) {
        const std::int32_t t = d.lo;
        d.lo = d.hi;
        d.hi = t;
    }
    return d;
}

[[noreturn]] void fail(const char* property, const Decoded& d) {
    std::fprintf(stderr,
                 "requantize fuzz: property violated: %s\n"
                 "  x=%d multiplier=%d shift=%d zero_point=%d lo=%d hi=%d\n",
                 property, d.x, d.q.multiplier, d.q.shift, d.zero_point, d.lo, d.hi);
    __builtin_trap();
}

#define JANUS_FUZZ_CHECK(cond, d) \
    do {                          \
        if (!(cond)) fail(#cond, d); \
    } while (false)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const Decoded d = decode(data, size);
    const auto [x, q, zp, lo, hi] = d;
    const std::int32_t m = q.multiplier;
    const int shift = q.shift;

    // 1.
    JANUS_FUZZ_CHECK(num::is_valid(q), d);

    // 2.
    const std::int32_t he = num::round_half_even::apply(x, q);
    const std::int32_t single = num::round_single::apply(x, q);
    const std::int32_t dbl = num::round_double::apply(x, q);
    const bool tie = ref::exact_is_tie(x, m, shift);
    JANUS_FUZZ_CHECK(he == ref::saturate_i32(ref::exact_scaled(x, m, shift, ref::Tie::to_even)), d);
    JANUS_FUZZ_CHECK(single == ref::saturate_i32(ref::exact_scaled(x, m, shift, ref::Tie::toward_pos_inf)), d);
    JANUS_FUZZ_CHECK(tie || he == single, d);

    // 3.
    JANUS_FUZZ_CHECK(dbl == ref::tflite_double_rounding(x, m, shift), d);
    if (ref::left_shift_fits(x, shift)) {
        const ref::i128 exact = ref::exact_scaled(x, m, shift, ref::Tie::to_even);
        JANUS_FUZZ_CHECK(ref::fits_i32(exact), d);
        JANUS_FUZZ_CHECK(dbl - exact <= 1 && exact - dbl <= 1, d);
        JANUS_FUZZ_CHECK(shift < 0 || dbl == single, d);
    } else if (m != 0) {
        JANUS_FUZZ_CHECK(x > 0 ? dbl >= (1 << 30) : dbl <= -(1 << 30), d);
    }

    // 4.
    JANUS_FUZZ_CHECK(num::requantize<num::round_half_even>(x, q, zp, lo, hi) == ref::clamp_add(he, zp, lo, hi), d);
    JANUS_FUZZ_CHECK(num::requantize<num::round_single>(x, q, zp, lo, hi) == ref::clamp_add(single, zp, lo, hi), d);
    const std::int32_t rq = num::requantize<num::round_double>(x, q, zp, lo, hi);
    JANUS_FUZZ_CHECK(rq == ref::clamp_add(dbl, zp, lo, hi), d);
    JANUS_FUZZ_CHECK(rq >= lo && rq <= hi, d);
    return 0;
}
