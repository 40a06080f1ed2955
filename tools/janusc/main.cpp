// janusc: the Janus command-line driver, a thin layer over the headers.
//
//   janusc asm FILE.s -o FILE.bin        assemble to raw little-endian 64-bit instruction words
//   janusc disasm FILE.bin [-o FILE.s]   canonical assembly text (re-assembles to identical bytes)
//   janusc isa-doc [--update DOC.md]     the generated instruction reference (or splice it into DOC.md)
//   janusc sim FILE.s|FILE.bin [--weights F] [--input F] [--scratch F | --scratch-size N] [--output-size N]
//              [--output F] [--max-instructions N] [--no-races]
//                                        run on the simulator; prints cycles, per-unit busy/stall, races, faults
//
//   janusc run MODEL.onnx -i NAME=FILE.npy [-i ...] -o OUTDIR [--engine npu|ref] [--dump-ir=after:PASS] [--strict]
//              [--rounding double|single|half-even]
//                                        run a model (lowered and simulated, or on the host reference kernels);
//                                        writes OUTDIR/<output>.npy for every graph output
//   janusc compile MODEL.onnx -o MODEL.jpk [--emit-asm FILE.s] [--dump-ir=after:PASS] [--strict]
//              [--rounding double|single|half-even]
//                                        lower and write a package (atomically; nothing on an error)
//   janusc run MODEL.jpk -i NAME=FILE.npy [-i ...] -o OUTDIR
//                                        run a compiled package on the simulator
//   janusc disasm MODEL.jpk [-o FILE.s]  its program, annotated with the nodes
//   janusc inspect MODEL.jpk             toolchain, memory map, I/O, per-node instructions and cycles
//   janusc verify MODEL.onnx [-i NAME=FILE.npy ...] [--seed N] [--strict] [--rounding double|single|half-even]
//                                        both engines, every value compared; names the first diverging node
//
// Exit codes (commands.hpp): 0 success; 1 a wrong result (races in a simulated program, a verification mismatch);
// 2 bad input (file, syntax, encoding, command line, a program that faults, a quantized node on the host under
// --strict);
// 3 an internal error (a lowered program that faults or races). Errors go to stderr as
// `input:position: error: sentence [rule]`. Output files are written by core/file.hpp's write_files_atomic: staged as
// temporary files in the same directory and renamed into place, all or none, so a failing run never leaves a
// half-written file and never touches an existing one; a symbolic link is written through, a device refused, a file's
// mode and hard links kept, and an output that is an input refused before any work (docs/janusc.md "Output files").
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <janus/core/file.hpp>
#include <janus/numeric/rounding.hpp>

#include "commands.hpp"

#include <janus/vnpu/asm.hpp>
#include <janus/vnpu/reference.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace {

using janus::Error;
using janus::make_error;
using janus::Result;
namespace vnpu = janus::vnpu;
namespace fs = std::filesystem;

using janusc::exit_input;
constexpr int exit_fault = janusc::exit_input, exit_races = janusc::exit_mismatch;

Result<std::vector<std::uint8_t>> read_file(const std::string& path) {
    return janus::read_file(path, "file-readable", "a file", janusc::limits().max_memory);
}

/// Write `bytes` to `path` atomically (core/file.hpp): a temporary file in the same directory, then a rename.
janus::Status write_file(const std::string& path, const void* data, std::size_t size) {
    return janus::write_file_atomic(path, {static_cast<const std::uint8_t*>(data), size}, "file-writable");
}

Result<std::vector<vnpu::Word>> words_of(const std::vector<std::uint8_t>& bytes, const std::string& path) {
    if (bytes.size() % 8 != 0)
        return make_error(path, "byte " + std::to_string(bytes.size() - bytes.size() % 8), "word-size",
                          "the file holds " + std::to_string(bytes.size()) +
                              " bytes, not a whole number of 8-byte instruction words");
    std::vector<vnpu::Word> words(bytes.size() / 8);
    for (std::size_t i = 0; i < words.size(); ++i)
        for (int b = 0; b < 8; ++b)
            words[i] |= static_cast<vnpu::Word>(bytes[8 * i + static_cast<std::size_t>(b)]) << (8 * b);
    return words;
}

std::vector<std::uint8_t> bytes_of(const std::vector<vnpu::Word>& words) {
    std::vector<std::uint8_t> out(words.size() * 8);
    for (std::size_t i = 0; i < words.size(); ++i)
        for (int b = 0; b < 8; ++b)
            out[8 * i + static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(words[i] >> (8 * b));
    return out;
}

/// A program from a .bin file (decoded) or any other file (assembled).
Result<std::vector<vnpu::Instr>> load_program(const std::string& path) {
    JANUS_TRY(auto bytes, read_file(path));
    if (fs::path(path).extension() == ".bin") {
        JANUS_TRY(auto words, words_of(bytes, path));
        std::vector<vnpu::Instr> prog;
        for (std::size_t i = 0; i < words.size(); ++i) {
            JANUS_TRY(vnpu::Instr in, vnpu::decode(words[i], path + ":word " + std::to_string(i)));
            prog.push_back(in);
        }
        JANUS_CHECK(vnpu::check_whole_program(prog, path));
        return prog;
    }
    JANUS_TRY(auto prog,
              vnpu::assemble(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path));
    JANUS_CHECK(vnpu::check_whole_program(prog, path));
    return prog;
}

using janusc::fail;

int cmd_asm(const std::string& in, const std::string& out) {
    if (auto s = janusc::outputs_spare_inputs({out}, {in}); !s) return fail(s.error());
    auto bytes = read_file(in);
    if (!bytes) return fail(bytes.error());
    const std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    auto prog = vnpu::assemble(text, in);
    if (!prog) return fail(prog.error());
    if (auto s = vnpu::check_whole_program(*prog, in); !s) return fail(s.error());
    std::vector<vnpu::Word> words;
    for (const vnpu::Instr& i : *prog) {
        auto w = vnpu::encode(i, in);
        if (!w) return fail(w.error());
        words.push_back(*w);
    }
    const auto data = bytes_of(words);
    if (auto s = write_file(out, data.data(), data.size()); !s) return fail(s.error());
    return 0;
}

int cmd_disasm(const std::string& in, const std::string& out) {
    if (fs::path(in).extension() == ".jpk") return janusc::cmd_disasm_package(in, out);
    if (!out.empty())
        if (auto s = janusc::outputs_spare_inputs({out}, {in}); !s) return fail(s.error());
    auto bytes = read_file(in);
    if (!bytes) return fail(bytes.error());
    auto words = words_of(*bytes, in);
    if (!words) return fail(words.error());
    auto text = vnpu::disassemble(*words, in);
    if (!text) return fail(text.error());
    if (out.empty()) {
        std::cout << *text;
        return 0;
    }
    if (auto s = write_file(out, text->data(), text->size()); !s) return fail(s.error());
    return 0;
}

int cmd_isa_doc(const std::string& update) {
    if (update.empty()) {
        std::cout << vnpu::instruction_reference();
        return 0;
    }
    auto bytes = read_file(update);
    if (!bytes) return fail(bytes.error());
    auto doc =
        vnpu::splice_reference(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()), update);
    if (!doc) return fail(doc.error());
    if (auto s = write_file(update, doc->data(), doc->size()); !s) return fail(s.error());
    return 0;
}

struct SimArgs {
    std::string program, weights, input, scratch, output;
    std::uint64_t scratch_size = 0, output_size = 0, max_instructions = std::uint64_t{1} << 32;
    bool no_races = false;
};

int cmd_sim(const SimArgs& a) {
    if (!a.output.empty())
        if (auto s = janusc::outputs_spare_inputs({a.output}, {a.program, a.weights, a.input, a.scratch}); !s)
            return fail(s.error());
    auto prog = load_program(a.program);
    if (!prog) return fail(prog.error());
    vnpu::sim::Machine m;
    const auto load_region = [&](int region, const std::string& file, std::uint64_t size) -> janus::Status {
        auto& dst = m.dram[static_cast<std::size_t>(region)];
        if (!file.empty()) {
            JANUS_TRY(dst, read_file(file));
        } else {
            dst.assign(size, 0);
        }
        return janus::ok_status();
    };
    if (!a.scratch.empty() && a.scratch_size != 0)
        return fail(
            make_error("--scratch-size", "", "options-exclusive", "give --scratch FILE or --scratch-size N, not both"));
    // zeroed regions asked for by number: the memory budget, before anything is allocated (saturating sum)
    const std::uint64_t asked =
        a.scratch_size > UINT64_MAX - a.output_size ? UINT64_MAX : a.scratch_size + a.output_size;
    if (auto s = janus::charge_memory(asked, janusc::limits().max_memory, "--scratch-size/--output-size",
                                      "the zeroed scratch and output regions");
        !s)
        return fail(s.error());
    for (const auto& s : {load_region(0, a.weights, 0), load_region(1, a.scratch, a.scratch_size),
                          load_region(2, a.input, 0), load_region(3, "", a.output_size)})
        if (!s) return fail(s.error());
    vnpu::sim::Options opt = janusc::limits().apply({});
    opt.name = a.program;
    opt.max_instructions = a.max_instructions;
    opt.detect_races = !a.no_races;
    const vnpu::sim::Report r = vnpu::sim::run(*prog, m, opt);
    std::cout << vnpu::sim::format_report(r, *prog);
    if (r.fault) {
        std::cerr << r.fault->message() << "\n";
        return exit_fault;
    }
    if (!a.output.empty())
        if (auto s = write_file(a.output, m.dram[3].data(), m.dram[3].size()); !s) return fail(s.error());
    return r.races.empty() ? 0 : exit_races;
}

}  // namespace

janusc::Limits& janusc::limits() {
    static Limits l;
    return l;
}

janus::vnpu::sim::Report janusc::simulate(std::span<const janus::vnpu::Instr> program,
                                          janus::vnpu::sim::Machine& machine, janus::vnpu::sim::Options options) {
    return janus::vnpu::sim::run(program, machine, limits().apply(std::move(options)));
}

namespace {

/// --max-memory on every command that reads input; --max-cycles and the work limits on those that simulate.
void add_limit_options(CLI::App* c, bool simulates) {
    janusc::Limits& l = janusc::limits();
    c->add_option("--max-memory", l.max_memory,
                  "bytes one input may make janusc allocate: a file read, verify's synthesized inputs, the simulated "
                  "DRAM regions (default 1 GiB; memory-limit, file-size-limit)");
    if (!simulates) return;
    c->add_option("--max-cycles", l.max_cycles, "simulated cycles before a run stops (cycle-limit; default 2^25)");
    c->add_option("--max-dma-bytes", l.max_dma_bytes, "bytes DMA may move or fill in a run (work-limit; default 2^30)");
    c->add_option("--max-macs", l.max_macs, "multiply-accumulates in a run (work-limit; default 2^31)");
    c->add_option("--max-vec-ops", l.max_vec_ops, "VEC and LUT element operations in a run (work-limit; default 2^29)");
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"janusc: the Janus compiler driver (vnpu assembler, disassembler and simulator)"};
    app.require_subcommand(1);

    std::string asm_in, asm_out;
    auto* a = app.add_subcommand("asm", "assemble vnpu text into raw little-endian instruction words");
    a->add_option("file", asm_in, "assembly text (.s)")->required();
    a->add_option("-o,--output", asm_out, "output file (.bin)")->required();

    std::string dis_in, dis_out;
    auto* d = app.add_subcommand("disasm", "print canonical assembly for instruction words or a package's program");
    d->add_option("file", dis_in, "instruction words (.bin), or a package (.jpk)")->required();
    d->add_option("-o,--output", dis_out, "output file (default: standard output)");

    std::string doc_update;
    auto* doc = app.add_subcommand("isa-doc", "print the instruction reference generated from the instruction table");
    doc->add_option("--update", doc_update, "rewrite the generated block of this Markdown file in place");

    SimArgs s;
    auto* sim = app.add_subcommand("sim", "run a program on the vnpu simulator");
    sim->add_option("program", s.program, "program: .bin words, or assembly text")->required();
    sim->add_option("--weights", s.weights, "contents of DRAM region weights");
    sim->add_option("--input", s.input, "contents of DRAM region input");
    sim->add_option("--scratch", s.scratch, "contents of DRAM region scratch");
    sim->add_option("--scratch-size", s.scratch_size, "size in bytes of a zeroed scratch region");
    sim->add_option("--output-size", s.output_size, "size in bytes of the (zeroed) output region");
    sim->add_option("--output", s.output, "write the output region here after a run without fault");
    sim->add_option("--max-instructions", s.max_instructions, "SEQ steps before the run stops (instruction-limit)");
    sim->add_flag("--no-races", s.no_races, "do not run the race detector");
    add_limit_options(a, false);
    add_limit_options(d, false);
    add_limit_options(sim, true);

    // --rounding: the names are numeric::rounding_names (the one list); CLI11 refuses others (exit 2).
    const std::vector<std::string> rounding_choices(janus::numeric::rounding_names.begin(),
                                                    janus::numeric::rounding_names.end());
    const char* const rounding_help =
        "rounding of every requantization, on both engines: double (default; TFLite's), single or half-even";
    const char* const strict_help =
        "a quantized node that the NPU does not take is an error (exit 2) instead of running on the host";
    janusc::RunArgs r;
    auto* run = app.add_subcommand("run", "run an ONNX model on an engine; writes OUTDIR/<output>.npy (or .pb) per output");
    run->add_option("model", r.model, "the model (.onnx), or a compiled package (.jpk)")->required();
    run->add_option("-i,--input", r.inputs, "NAME=FILE.npy or NAME=FILE.pb (ONNX TensorProto) for each graph input");
    run->add_option("-o,--output-dir", r.outdir, "directory for the outputs (created if missing)")->required();
    run->add_option("--output-format", r.output_format, "npy (default) or pb (ONNX TensorProto, named as the output)")
        ->check(CLI::IsMember({"npy", "pb"}));
    run->add_option("--engine", r.engine, "npu (default: compile and simulate) or ref (host reference kernels)")
        ->check(CLI::IsMember({"npu", "ref"}));
    run->add_option("--dump-ir", r.dump_ir,
                    "print the IR after:import, after:PASS or after:all (compact constants); with --engine npu PASS "
                    "may be a lowering pass: partition, fusion, memory, lower");
    run->add_flag("--timings", r.timings, "print the wall time of each phase on stderr");
    run->add_flag("--strict", r.strict, strict_help);
    run->add_option("--rounding", r.rounding, rounding_help)->check(CLI::IsMember(rounding_choices));
    add_limit_options(run, true);

    janusc::CompileArgs c;
    auto* compile = app.add_subcommand("compile", "compile an ONNX model into a vnpu package (.jpk)");
    compile->add_option("model", c.model, "the model (.onnx)")->required();
    compile->add_option("-o,--output", c.output, "the package to write (.jpk)")->required();
    compile->add_option("--emit-asm", c.emit_asm, "also write the program as assembly, annotated with its nodes");
    compile->add_option("--dump-ir", c.dump_ir,
                        "print the IR after:import, after:PASS or after:all; PASS may be a lowering pass: partition, "
                        "fusion, memory, lower");
    compile->add_flag("--timings", c.timings, "print the wall time of each phase on stderr");
    compile->add_flag("--strict", c.strict, strict_help);
    compile->add_option("--rounding", c.rounding, rounding_help)->check(CLI::IsMember(rounding_choices));
    add_limit_options(compile, false);

    std::string inspect_in;
    auto* inspect = app.add_subcommand("inspect", "a package's toolchain, memory map, I/O and per-node cycles");
    inspect->add_option("package", inspect_in, "the package (.jpk)")->required();
    add_limit_options(inspect, true);

    janusc::VerifyArgs v;
    auto* verify = app.add_subcommand(
        "verify", "run an ONNX model on both engines and compare every value; names the first diverging node");
    verify->add_option("model", v.model, "the model (.onnx)")->required();
    verify->add_option("-i,--input", v.inputs,
                       "NAME=FILE.npy or NAME=FILE.pb for each graph input (default: seeded inputs)");
    verify->add_option("--seed", v.seed, "seed of the generated inputs (default 1)");
    verify->add_flag("--strict", v.strict, strict_help);
    verify->add_option("--rounding", v.rounding, rounding_help)->check(CLI::IsMember(rounding_choices));
    add_limit_options(verify, true);

    janusc::SupportArgs sup;
    auto* support = app.add_subcommand(
        "support", "every op with its evidence: import, reference, emitters, lowering, bit-exact simulation (Markdown)");
    support->add_option("--fuzz-corpus", sup.fuzz_corpus, "graph_diff's seed corpus (fuzz/corpus/graph_diff)");
    support->add_option("--node-tests", sup.node_tests,
                        "janusc conform's result lines (tests/conformance/expected.txt): the node tests column");
    support->add_option("-o,--output", sup.output, "write the table here (default: standard output)");

    janusc::ConformArgs conf;
    auto* conform = app.add_subcommand(
        "conform", "run the ONNX backend node tests (DIR/<test>/model.onnx + test_data_set_N/) on both engines");
    conform->add_option("dir", conf.dir, "the node tests (/usr/share/libonnx-testdata/data/node)")->required();
    conform->add_option("--filter", conf.filter, "only the tests whose name contains this");
    conform->add_option("--expect", conf.expect, "the expected result lines; exit 1 on any difference");
    conform->add_option("--report", conf.report, "write the result lines here");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : exit_input;
    }
    try {
        if (a->parsed()) return cmd_asm(asm_in, asm_out);
        if (d->parsed()) return cmd_disasm(dis_in, dis_out);
        if (doc->parsed()) return cmd_isa_doc(doc_update);
        if (run->parsed()) return janusc::cmd_run(r);
        if (verify->parsed()) return janusc::cmd_verify(v);
        if (compile->parsed()) return janusc::cmd_compile(c);
        if (inspect->parsed()) return janusc::cmd_inspect(inspect_in);
        if (support->parsed()) return janusc::cmd_support(sup);
        if (conform->parsed()) return janusc::cmd_conform(conf);
        return cmd_sim(s);
    } catch (const std::bad_alloc&) {
        // an input that asks for more memory than there is: bad input (exit 2), not a Janus bug
        std::cerr << "janusc: error: out of memory: the input needs more memory than this machine gives the process "
                     "[memory-exhausted]\n";
        return exit_input;
    } catch (const std::length_error&) {  // a size beyond what a container can hold: the input's, too
        std::cerr << "janusc: error: the input asks for a buffer larger than the process can address "
                     "[memory-exhausted]\n";
        return exit_input;
    } catch (const std::exception& e) {
        std::cerr << "janusc: internal error: " << e.what() << " (please report it)\n";
        return janusc::exit_internal;
    }
}
