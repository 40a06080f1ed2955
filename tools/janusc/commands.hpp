#pragma once
// janusc subcommands that live in their own translation units (they include the op registry, which is slow to
// compile: a separate TU builds in parallel with main.cpp).
#include <string>
#include <vector>

#include <janus/graph/execute.hpp>

namespace janusc {

/// Exit codes of every subcommand (README "janusc"): 0 success; 1 the result is wrong (a verification mismatch, a
/// race in a simulated program); 2 bad input or usage (a file, its syntax, a command line, a program that faults);
/// 3 an internal error (a Janus bug: please report it).
inline constexpr int exit_ok = 0, exit_mismatch = 1, exit_input = 2, exit_internal = 3;

struct RunArgs {
    std::string model;
    std::vector<std::string> inputs;  ///< NAME=FILE.npy
    std::string outdir;
    std::string engine = "npu";
    std::string dump_ir;   ///< "after:import", "after:PASS" or "after:all": the IR text on stdout
    bool timings = false;  ///< the wall time of each phase on stderr (bench/janusc_frontend.sh)
};

/// janusc run: the model on an engine; one OUTDIR/<output>.npy per graph output.
int cmd_run(const RunArgs& a);

}  // namespace janusc
