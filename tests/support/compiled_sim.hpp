#pragma once
// The simulator, compiled once for all test executables (tests/support/compiled_sim.cpp).
//
// vnpu::sim::run instantiates the whole simulator (about 8 s of g++ -O2 per translation unit). Test helpers call
// these out-of-line wrappers instead, so only compiled_sim.cpp pays that cost; the behaviour is sim::run's own.
#include <span>
#include <string>

#include <janus/vnpu/sim/simulator.hpp>

namespace janus_test {

/// vnpu::sim::run(program, machine, options).
janus::vnpu::sim::Report simulate(std::span<const janus::vnpu::Instr> program, janus::vnpu::sim::Machine& machine,
                                  janus::vnpu::sim::Options options = {});

/// vnpu::sim::format_report(report, program).
std::string report_text(const janus::vnpu::sim::Report& report, std::span<const janus::vnpu::Instr> program);

}  // namespace janus_test
