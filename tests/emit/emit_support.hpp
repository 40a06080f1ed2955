#pragma once
// Helpers of the emission tests: finish a builder and run its program on the simulator, requiring a clean run.
#include <doctest/doctest.h>

#include <string>

#include <janus/emit/builder.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace et {

/// Finish `b`, run it on `m` (its weights region becomes the program's constants; the caller fills the others) and
/// require a run that ends at HALT with no fault and no race.
inline janus::vnpu::sim::Report run_clean(janus::emit::Builder& b, janus::vnpu::sim::Machine& m) {
    auto p = b.finish();
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error().message()));
    m.dram[0] = p->weights;
    const auto r = janus::vnpu::sim::run(p->code, m);
    INFO(janus::vnpu::sim::format_report(r, p->code));
    REQUIRE_MESSAGE(!r.fault, (r.fault ? r.fault->message() : std::string()));
    CHECK(r.races.empty());
    return r;
}

}  // namespace et
