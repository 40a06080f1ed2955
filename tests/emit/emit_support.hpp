#pragma once
// Helpers of the emission tests: finish a builder and run its program on the simulator, requiring a clean run.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <janus/emit/builder.hpp>
#include "support/compiled_sim.hpp"

namespace et {

/// Finish `b`, run it on `m` (its weights region becomes the program's constants; the caller fills the others) and
/// require a run that ends at HALT with no fault and no race.
inline janus::vnpu::sim::Report run_clean(janus::emit::Builder& b, janus::vnpu::sim::Machine& m) {
    auto p = b.finish();
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
    m.dram[0] = p->weights;
    const auto r = janus_test::simulate(p->code, m);
    INFO(janus_test::report_text(r, p->code));
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message() : std::string()));
    CHECK(r.races.empty());
    return r;
}

/// Finish `b`, apply `mutate` to its code (a deliberate bug, to show a test can fail), run it on `m` and require no
/// fault (races are the caller's to check); without `mutate`, run_clean.
inline janus::vnpu::sim::Report run(janus::emit::Builder& b, janus::vnpu::sim::Machine& m,
                                    const std::function<void(std::vector<janus::vnpu::Instr>&)>& mutate = {}) {
    if (!mutate) return run_clean(b, m);
    auto p = b.finish();
    REQUIRE(p.ok());
    mutate(p->code);
    m.dram[0] = p->weights;
    const auto r = janus_test::simulate(p->code, m);
    REQUIRE(!r.fault);
    return r;
}

/// One image's NCHW int8 values (c channels of hw pixels) as NHWC bytes at channel pitch `pitch`; the padding
/// channels hold `fill` (anything: a lowering must not depend on them).
inline std::vector<std::uint8_t> to_nhwc(const std::vector<std::int8_t>& x, std::int64_t c, std::int64_t hw,
                                         std::int64_t pitch, std::uint8_t fill = 0x5a) {
    std::vector<std::uint8_t> r(static_cast<std::size_t>(hw * pitch), fill);
    for (std::int64_t ch = 0; ch < c; ++ch)
        for (std::int64_t i = 0; i < hw; ++i)
            r[static_cast<std::size_t>(i * pitch + ch)] =
                static_cast<std::uint8_t>(x[static_cast<std::size_t>(ch * hw + i)]);
    return r;
}

/// The inverse: NHWC bytes at channel pitch `pitch` as NCHW int8 values (c channels of hw pixels).
inline std::vector<std::int8_t> from_nhwc(const std::vector<std::uint8_t>& y, std::int64_t c, std::int64_t hw,
                                          std::int64_t pitch) {
    std::vector<std::int8_t> r(static_cast<std::size_t>(c * hw));
    for (std::int64_t ch = 0; ch < c; ++ch)
        for (std::int64_t i = 0; i < hw; ++i)
            r[static_cast<std::size_t>(ch * hw + i)] =
                static_cast<std::int8_t>(y[static_cast<std::size_t>(i * pitch + ch)]);
    return r;
}

}  // namespace et
