// expr::prove_rq_shifts: round_double's left shift must provably stay inside int32 for every rq / rq_indexed node
// (rule requantize-left-shift-fits-int32), for exactly the multipliers an input range can reach.
#include <doctest/doctest.h>

#include <span>
#include <vector>

#include <janus/ops/expr.hpp>

#include "../support/check_rule.hpp"

namespace {

namespace ex = janus::expr;
namespace num = janus::numeric;

ex::InputRanges ranges(std::int64_t x_lo, std::int64_t x_hi, std::int64_t k_lo = 0, std::int64_t k_hi = 0) {
    ex::InputRanges r;
    r.r[0] = {x_lo, x_hi};
    r.r[1] = {k_lo, k_hi};
    r.set[0] = r.set[1] = true;
    return r;
}

}  // namespace

TEST_CASE("requantize-left-shift-fits-int32: rq with a ratio >= 1 is refused only when x * 2^shift can saturate") {
    const auto m = num::quantize_multiplier(4096.0).value();  // 0.5 * 2^13: |x| <= 2^17 fits, 2^18 does not
    const auto e = ex::rq<num::round_double>(ex::In<0, std::int32_t>{}, m);
    CHECK(ex::prove_rq_shifts(e, ranges(-(1 << 17), 1 << 17), "t").ok());
    CHECK_RULE(ex::prove_rq_shifts(e, ranges(0, 1 << 18), "t"), "requantize-left-shift-fits-int32");
    // per-channel: one large multiplier among small ones is enough to refuse
    const std::vector<num::QuantizedMultiplier> per = {num::quantize_multiplier(0.5).value(), m};
    const auto pc = ex::rq<num::round_double>(ex::In<0, std::int32_t>{}, std::span<const num::QuantizedMultiplier>(per));
    CHECK_RULE(ex::prove_rq_shifts(pc, ranges(0, 1 << 18), "t"), "requantize-left-shift-fits-int32");
    CHECK(ex::prove_rq_shifts(pc, ranges(0, 1 << 17), "t").ok());
}

TEST_CASE("requantize-left-shift-fits-int32: rq_indexed proves only the table entries its index can reach") {
    const std::vector<num::QuantizedMultiplier> table = {num::quantize_multiplier(4096.0).value(),
                                                         num::quantize_multiplier(0.25).value(),
                                                         num::quantize_multiplier(0.125).value()};
    const auto e = ex::rq_indexed<num::round_double>(ex::In<0, std::int32_t>{}, ex::In<1, std::int32_t>{},
                                                     std::span<const num::QuantizedMultiplier>(table), 1);
    // index 1 selects the 4096 entry: x up to 2^18 overflows the shift
    CHECK_RULE(ex::prove_rq_shifts(e, ranges(0, 1 << 18, 1, 3), "t"), "requantize-left-shift-fits-int32");
    // indices 2..3 never reach it
    CHECK(ex::prove_rq_shifts(e, ranges(0, 1 << 18, 2, 3), "t").ok());
    // nested under other nodes: the walk finds it
    const auto nested = ex::add(ex::rq<num::round_double>(ex::In<0, std::int32_t>{}, table[0]), ex::cst(1));
    CHECK_RULE(ex::prove_rq_shifts(nested, ranges(0, 1 << 18), "t"), "requantize-left-shift-fits-int32");
}
