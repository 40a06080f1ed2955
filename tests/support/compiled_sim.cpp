// The one translation unit of the test executables that instantiates the simulator (see compiled_sim.hpp).
#include "support/compiled_sim.hpp"

#include <utility>

namespace janus_test {

janus::vnpu::sim::Report simulate(std::span<const janus::vnpu::Instr> program, janus::vnpu::sim::Machine& machine,
                                  janus::vnpu::sim::Options options) {
    return janus::vnpu::sim::run(program, machine, std::move(options));
}

std::string report_text(const janus::vnpu::sim::Report& report, std::span<const janus::vnpu::Instr> program) {
    return janus::vnpu::sim::format_report(report, program);
}

}  // namespace janus_test
