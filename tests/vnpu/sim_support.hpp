#pragma once
// Helpers for the simulator tests: assemble and run a text program, write little-endian parameter tables.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/vnpu/asm.hpp>
#include <janus/vnpu/params.hpp>
#include "support/compiled_sim.hpp"

namespace vt {

using namespace janus;
using namespace janus::vnpu;

struct Run {
    std::vector<Instr> program;
    sim::Report report;
};

inline Run run_text(std::string_view text, sim::Machine& m, sim::Options opt = {}) {
    auto p = assemble(text, "test.s");
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
    Run r{*p, {}};
    r.report = janus_test::simulate(r.program, m, opt);
    return r;
}

/// A run that must end at HALT without a fault or a race.
inline Run run_clean(std::string_view text, sim::Machine& m, sim::Options opt = {}) {
    Run r = run_text(text, m, opt);
    INFO(janus_test::report_text(r.report, r.program));
    REQUIRE_FALSE(r.report.fault.has_value());
    CHECK(r.report.races.empty());
    return r;
}

inline void put_i32(std::vector<std::uint8_t>& mem, std::size_t at, std::int32_t v) { std::memcpy(&mem[at], &v, 4); }
inline std::int32_t get_i32(const std::vector<std::uint8_t>& mem, std::size_t at) {
    std::int32_t v;
    std::memcpy(&v, &mem[at], 4);
    return v;
}
inline std::int8_t s8(const std::vector<std::uint8_t>& mem, std::size_t at) { return static_cast<std::int8_t>(mem[at]); }

/// A requantization table at `at`, written by the encoder of vnpu/params.hpp: header then one entry per channel.
inline void put_rq_table(std::vector<std::uint8_t>& mem, std::size_t at, std::int32_t zp, std::int32_t lo,
                         std::int32_t hi, const std::vector<std::int32_t>& bias,
                         const std::vector<numeric::QuantizedMultiplier>& m, std::int32_t rounding = 0) {
    const std::span<std::uint8_t> bytes(mem);
    encode(rq_header_layout, RqHeader{zp, lo, hi, rounding}, bytes.subspan(at, rq_header_layout.size));
    for (std::size_t c = 0; c < bias.size(); ++c)
        encode(rq_channel_layout, RqChannel{bias[c], m[c].multiplier, stored_right_shift(m[c])},
               bytes.subspan(at + static_cast<std::size_t>(rq_table_bytes(static_cast<std::int64_t>(c))),
                             rq_channel_layout.size));
}

}  // namespace vt
