#pragma once
// Weights with a zero point on units that multiply by raw int8 weights: the MAC array (mac.mm / mac.mma) and
// vec.mac subtract a zero point from the activation only.
//
// The host computes sum (x - zx)(w - zw) (ops/conv.hpp, ops/matmul.hpp). With zw != 0 the difference d = w - zw spans
// [-255, 255], which int8 cannot hold. The emitters write d as a sum of P int8 parts and accumulate one product per
// part into the same accumulator (mac.mma after the first mac.mm; vec.mac always adds):
//     d = part_0 + ... + part_{P-1},   part_p = clamp(d - part_0 - ... - part_{p-1}, -128, 127)
// P is the fewest parts that hold every d of the tensor: 1 when every d fits int8 (every zero point 0: part_0 = w and
// the emission is what it was without this header), 2 for d in [-256, 254], 3 only for d = 255 (w = 127 with
// zw = -128: uint8 weights of zero point 0). Each part's product is exact, and the accumulator holds
// sum (x - zx) d modulo 2^32 (it wraps), which is the host's value whenever that fits int32, as the op's contract
// proves (accumulator-fits-int32). The cost is P times the MAC work and the weight bytes; the emitters log it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace janus::emit {

/// Part `p` of a weight difference d = w - zw (see the header comment).
constexpr std::int8_t weight_part(std::int32_t d, int p) {
    for (int k = 0; k < p; ++k) d -= std::clamp(d, -128, 127);
    return static_cast<std::int8_t>(std::clamp(d, -128, 127));
}

/// The number of parts for weights `w` whose element i has zero point `zp_of(i)`.
template <class ZeroPointOf>
int weight_parts(std::span<const std::int8_t> w, ZeroPointOf&& zp_of) {
    std::int32_t lo = 0, hi = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        const std::int32_t d = w[i] - static_cast<std::int32_t>(zp_of(i));
        lo = std::min(lo, d), hi = std::max(hi, d);
    }
    int p = 1;
    while (lo < -128 * p || hi > 127 * p) ++p;
    return p;
}

}  // namespace janus::emit
