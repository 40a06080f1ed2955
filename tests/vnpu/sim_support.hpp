#pragma once
// Helpers for the simulator tests: assemble and run a text program, write little-endian parameter tables.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <janus/vnpu/asm.hpp>
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

/// A requantization table (docs/vnpu.md "Parameter tables") at `at`: header then one entry per channel.
inline void put_rq_table(std::vector<std::uint8_t>& mem, std::size_t at, std::int32_t zp, std::int32_t lo,
                         std::int32_t hi, const std::vector<std::int32_t>& bias,
                         const std::vector<numeric::QuantizedMultiplier>& m, std::int32_t rounding = 0) {
    std::memset(&mem[at], 0, 16 + 16 * bias.size());
    put_i32(mem, at, zp);
    put_i32(mem, at + 4, lo);
    put_i32(mem, at + 8, hi);
    put_i32(mem, at + 12, rounding);
    for (std::size_t c = 0; c < bias.size(); ++c) {
        put_i32(mem, at + 16 + 16 * c, bias[c]);
        put_i32(mem, at + 20 + 16 * c, m[c].multiplier);
        mem[at + 24 + 16 * c] = static_cast<std::uint8_t>(31 - m[c].shift);
    }
}

}  // namespace vt
