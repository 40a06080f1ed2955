#pragma once
// janusc subcommands that live in their own translation units (they include the op registry, which is slow to
// compile: a separate TU builds in parallel with main.cpp).
#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include <janus/core/file.hpp>
#include <janus/core/limits.hpp>
#include <janus/graph/execute.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace janusc {

/// Exit codes of every subcommand (README "janusc"): 0 success; 1 the result is wrong (a verification mismatch, a
/// race in a simulated program); 2 bad input or usage (a file, its syntax, a command line, a program that faults);
/// 3 an internal error (a Janus bug: please report it).
inline constexpr int exit_ok = 0, exit_mismatch = 1, exit_input = 2, exit_internal = 3;

/// The limits of one janusc command (issue 26, docs/janusc.md "Limits"), set once from the command line by main
/// (--max-memory, --max-cycles, --max-dma-bytes, --max-macs, --max-vec-ops) before the command runs.
struct Limits {
    std::uint64_t max_memory = janus::default_max_memory;  ///< file reads, synthesized inputs, simulated DRAM
    std::uint64_t max_cycles = janus::vnpu::sim::Limits::max_cycles;
    std::uint64_t max_dma_bytes = janus::vnpu::sim::Limits::max_dma_bytes;
    std::uint64_t max_macs = janus::vnpu::sim::Limits::max_macs;
    std::uint64_t max_vec_ops = janus::vnpu::sim::Limits::max_vec_ops;

    /// `o` with these work limits (every simulator run of janusc goes through janusc::simulate, which applies them).
    janus::vnpu::sim::Options apply(janus::vnpu::sim::Options o) const {
        o.max_cycles = max_cycles;
        o.max_dma_bytes = max_dma_bytes;
        o.max_macs = max_macs;
        o.max_vec_ops = max_vec_ops;
        return o;
    }
};

/// The command's limits (main.cpp holds the one object).
Limits& limits();

/// Print the error on stderr; exit code `code` (bad input unless said otherwise).
inline int fail(const janus::Error& e, int code = exit_input) {
    std::cerr << e.message() << "\n";
    return code;
}

/// Refuse an output file that is one of the input files, before any work (issue 26): compared by device and inode
/// (core/file.hpp same_file), so another spelling of the path or a symbolic link to the input is caught too. Rule
/// output-is-input (exit 2).
inline janus::Status outputs_spare_inputs(const std::vector<std::string>& outputs,
                                          const std::vector<std::string>& inputs) {
    for (const std::string& out : outputs)
        for (const std::string& in : inputs)
            if (!out.empty() && !in.empty() && janus::same_file(out, in))
                return janus::make_error(out, "", "output-is-input",
                                         "this output is the input file '" + in +
                                             "'; writing it would destroy the input (give another output path)");
    return janus::ok_status();
}

struct RunArgs {
    std::string model;
    std::vector<std::string> inputs;  ///< NAME=FILE.npy or NAME=FILE.pb (an ONNX TensorProto)
    std::string outdir;
    std::string output_format = "npy";  ///< npy, or pb (one TensorProto per output, named as the output)
    std::string engine = "npu";
    bool strict = false;   ///< a quantized node placed on the host is an error (exit 2)
    std::string dump_ir;   ///< "after:import", "after:PASS" (a graph or lowering pass) or "after:all": the IR on stdout
    bool timings = false;  ///< the wall time of each phase on stderr (bench/janusc_frontend.sh)
    std::string rounding;  ///< --rounding: double, single or half-even; empty: numeric::default_rounding_mode
};

/// janusc run: the model on an engine; one OUTDIR/<output>.npy (or .pb) per graph output.
int cmd_run(const RunArgs& a);

struct VerifyArgs {
    std::string model;
    std::vector<std::string> inputs;  ///< NAME=FILE.npy or NAME=FILE.pb; none: seeded inputs
    bool strict = false;
    std::uint64_t seed = 1;
    std::string rounding;
};

/// janusc verify: both engines on the same inputs, every value compared; names the first diverging node.
int cmd_verify(const VerifyArgs& a);

struct CompileArgs {
    std::string model;
    std::string output;    ///< MODEL.jpk
    std::string emit_asm;  ///< also write the program as annotated assembly here
    bool strict = false;
    std::string dump_ir;
    bool timings = false;
    std::string rounding;
};

/// janusc compile: the model lowered and written as a package (atomically; nothing is written on an error).
int cmd_compile(const CompileArgs& a);

/// janusc inspect: a package's toolchain, memory map, I/O, and per-node instructions and cycles.
int cmd_inspect(const std::string& path);

/// janusc disasm MODEL.jpk: the package's program as annotated assembly (on stdout, or into `out`).
int cmd_disasm_package(const std::string& path, const std::string& out);

struct SupportArgs {
    std::string fuzz_corpus;  ///< graph_diff's seed corpus: the ops it fuzzes (none given: "unconfirmed")
    std::string node_tests;   ///< janusc conform's result lines (tests/conformance/expected.txt)
    std::string output;       ///< write the Markdown here (atomically) instead of standard output
};

/// janusc support: every op with its evidence levels, the probes run now (graph/support.hpp).
int cmd_support(const SupportArgs& a);

struct ConformArgs {
    std::string dir;     ///< the node tests: DIR/<test>/model.onnx and test_data_set_N/
    std::string filter;  ///< run only the tests whose directory name contains this
    std::string expect;  ///< compare the result lines with this file (exit 1 on a difference)
    std::string report;  ///< write the result lines here (atomically)
};

/// janusc conform: the ONNX node tests on both engines against their expected outputs (docs/conformance.md).
int cmd_conform(const ConformArgs& a);

/// vnpu::sim::run, instantiated in main.cpp only (graph::SimulateFn).
janus::vnpu::sim::Report simulate(std::span<const janus::vnpu::Instr> program, janus::vnpu::sim::Machine& machine,
                                  janus::vnpu::sim::Options options);

}  // namespace janusc
