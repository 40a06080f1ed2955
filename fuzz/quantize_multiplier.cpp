// Fuzz target: quantize_multiplier (multiplier.hpp) against a naive reference (tests/support/numeric_reference.hpp)
// and its contract. Checks meaning, not only "did not crash".
//
// Input: 8 bytes, the little-endian bit pattern of an IEEE double (shorter inputs zero-padded, extra bytes ignored),
// so every NaN payload, infinity, subnormal and both zeros are reachable.
// Properties, with the exact boundary rules of multiplier.hpp:
//   - NaN, +-inf, or < 0 (not -0.0)       -> error [ratio-finite-nonnegative], naming `what`;
//   - 0, -0.0, or any ratio < 2^-32       -> (0, 0) (flushed before rounding: exact for every int32 input);
//   - ratio >= 2^30 - 2^-2                -> error [ratio-below-2^30] (its 31-bit rounding reaches 2^30);
//   - otherwise a valid, nonzero multiplier equal to the reference (mantissa rounded half away from zero, 2^31
//     renormalized) whose value is within relative 2^-31 of the ratio.
// A violation prints the ratio and calls __builtin_trap().
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <janus/numeric/multiplier.hpp>

#include "../tests/support/numeric_reference.hpp"

namespace {

namespace num = janus::numeric;
namespace ref = janus::reference;

[[noreturn]] void fail(const char* property, double r) {
    std::fprintf(stderr, "quantize_multiplier fuzz: property violated: %s\n  ratio=%a (%.17g)\n", property, r, r);
    __builtin_trap();
}

#define JANUS_FUZZ_CHECK(cond, r)    \
    do {                             \
        if (!(cond)) fail(#cond, r); \
    } while (false)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::uint8_t b[8] = {};
    std::memcpy(b, data, size < sizeof b ? size : sizeof b);
    std::uint64_t bits = 0;
    for (int i = 7; i >= 0; --i) bits = bits << 8 | b[i];
    double r = 0;
    std::memcpy(&r, &bits, sizeof r);

    const auto q = num::quantize_multiplier(r, "fuzz.ratio");
    const auto want = ref::quantize_multiplier_ref(r);

    if (std::isnan(r) || std::isinf(r) || r < 0.0) {
        JANUS_FUZZ_CHECK(!q.ok(), r);
        JANUS_FUZZ_CHECK(q.error().rule == "ratio-finite-nonnegative", r);
        JANUS_FUZZ_CHECK(q.error().input == "fuzz.ratio", r);
        JANUS_FUZZ_CHECK(want.kind == ref::MultiplierRef::error_not_finite_nonnegative, r);
        return 0;
    }
    if (r < 0x1p-32) {
        JANUS_FUZZ_CHECK(q.ok() && q->multiplier == 0 && q->shift == 0, r);
        JANUS_FUZZ_CHECK(num::is_valid(*q), r);
        JANUS_FUZZ_CHECK(want.kind == ref::MultiplierRef::value && want.multiplier == 0, r);
        return 0;
    }
    if (r >= 0x1p30 - 0x1p-2) {
        JANUS_FUZZ_CHECK(!q.ok(), r);
        JANUS_FUZZ_CHECK(q.error().rule == "ratio-below-2^30", r);
        JANUS_FUZZ_CHECK(want.kind == ref::MultiplierRef::error_too_large, r);
        return 0;
    }
    JANUS_FUZZ_CHECK(q.ok(), r);
    JANUS_FUZZ_CHECK(num::is_valid(*q) && q->multiplier != 0, r);
    JANUS_FUZZ_CHECK(want.kind == ref::MultiplierRef::value, r);
    JANUS_FUZZ_CHECK(q->multiplier == want.multiplier && q->shift == want.shift, r);
    // |value - r| <= 2^-31 * r, exact in long double (both sides have at most 64 significant bits and close exponents)
    const long double err = std::fabs(q->value() - static_cast<long double>(r));
    JANUS_FUZZ_CHECK(err <= std::ldexp(static_cast<long double>(r), -31), r);
    return 0;
}
