// janusc run and verify: import an ONNX model, read its inputs from .npy files, run it on the host reference or
// lowered to the vnpu and simulated, write one .npy per graph output; or run both engines and compare every value.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <janus/core/file.hpp>
#include <janus/graph/compile.hpp>
#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/io/tensor_npy.hpp>
#include <janus/io/tensor_pb.hpp>
#include <janus/package/file.hpp>

#include "commands.hpp"
#include "kernels.hpp"

namespace janusc {
namespace {

using janus::Error;
using janus::make_error;
namespace fs = std::filesystem;
namespace graph = janus::graph;

/// A graph output name as a file name: characters outside [A-Za-z0-9._-] become '_' (docs/janusc.md); `ext` is
/// "npy" or "pb".
std::string file_name_of(const std::string& output, const std::string& ext) {
    std::string s = output;
    for (char& c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
    if (s.empty() || s == "." || s == "..") s = "_" + s;
    return s + "." + ext;
}

/// --timings: the wall time of each phase, on stderr.
class Phases {
public:
    explicit Phases(bool on) : on_(on) {}
    void operator()(const char* name) {
        const auto now = clock::now();
        if (on_)
            std::cerr << "timing " << name << ": " << std::chrono::duration<double, std::milli>(now - mark_).count()
                      << " ms\n";
        mark_ = now;
    }

private:
    using clock = std::chrono::steady_clock;
    bool on_;
    clock::time_point mark_ = clock::now();
};

/// The IR after a lowering pass (--dump-ir=after:partition|fusion|memory|lower, or each of them under after:all),
/// followed by the `;` lines of the pass's result (graph::lowering_dump).
void dump_lowered(const std::string& dump, const graph::Graph& g, const graph::LoweredGraph& l) {
    for (const std::string_view pass : graph::lowering_passes)
        if (dump == pass || dump == "all")
            std::cout << "; after " << pass << "\n" << graph::print(g, false) << *graph::lowering_dump(g, l, pass);
}

/// Lower `g` with host fallback and print the placement (one summary line, then one line per host node with its
/// rule); under --strict a quantized node on the host is an error (exit 2) listing them.
janus::Result<graph::LoweredGraph> lowered(const graph::Graph& g, const graph::LowerOptions& opt, bool strict,
                                           const std::string& model) {
    JANUS_TRY(graph::LoweredGraph l, graph::lower_graph(g, opt));
    std::cout << graph::placement_text(g, l);
    if (strict) JANUS_CHECK(graph::strict_placement(g, l, model));
    return l;
}

/// Read, import and optimize a model; --dump-ir prints the IR after the named step (`dump` gets the step's name:
/// the caller prints those of the lowering passes).
janus::Result<graph::Graph> load_model(const std::string& path, const std::string& dump_ir, Phases& phase,
                                       janus::numeric::Rounding rounding, std::string* dump_step = nullptr,
                                       bool lowers = false) {
    JANUS_TRY(auto model, janus::onnx::read_model_file(path, janusc::limits().max_memory));
    phase("read");
    JANUS_TRY(graph::Graph g, graph::import_onnx(model, path));
    phase("import");
    // --dump-ir=after:import | after:PASS | after:all
    std::string dump;
    if (!dump_ir.empty()) {
        bool known = dump_ir == "after:import" || dump_ir == "after:all";
        for (const auto& p : graph::all_passes) known = known || dump_ir == "after:" + std::string(p.name);
        for (const std::string_view p : graph::lowering_passes)
            known = known || (lowers && dump_ir == "after:" + std::string(p));
        if (dump_ir.rfind("after:", 0) != 0 || !known)
            return make_error("--dump-ir=" + dump_ir, "", "usage",
                              std::string("expected after:import, after:all or after:PASS with PASS one of the "
                                          "passes") +
                                  (lowers ? " or of the lowering passes partition, fusion, memory, lower"
                                          : " (the lowering passes partition, fusion, memory, lower need the NPU "
                                            "engine)"));
        dump = dump_ir.substr(6);
        if (dump_step) *dump_step = dump;
    }
    if (dump == "import" || dump == "all") std::cout << "; after import\n" << graph::print(g, false);
    graph::PassLog log;
    std::size_t logged = 0;  // the pass's decisions (taken and refused, with the reason) come before its graph
    graph::PassContext pass_ctx{janus_tools::kernel_by_name};
    pass_ctx.rounding = rounding;
    JANUS_CHECK(graph::run_passes(g, graph::default_pipeline, log, pass_ctx,
                                  [&](std::string_view pass, const graph::Graph& gr) {
                                      if (dump == pass || dump == "all") {
                                          for (std::size_t i = logged; i < log.size(); ++i)
                                              std::cout << "; " << log[i] << "\n";
                                          std::cout << "; after " << pass << "\n" << graph::print(gr, false);
                                      }
                                      logged = log.size();
                                  }));
    phase("passes");
    return g;
}

/// --rounding's mode (the CLI has checked the name; empty: the default).
janus::numeric::Rounding rounding_arg(const std::string& name) {
    return name.empty() ? janus::numeric::default_rounding_mode : *janus::numeric::parse_rounding(name);
}

/// A model input as the command line sees it: its name, dtype and shape.
struct InputSpec {
    std::string name;
    janus::DType dtype;
    std::vector<std::int64_t> shape;
};

std::vector<InputSpec> input_specs(const graph::Graph& g) {
    std::vector<InputSpec> r;
    for (graph::ValueId v : g.inputs) {
        const auto& val = g.value(v);
        std::vector<std::int64_t> shape;
        for (int k = 0; k < val.type.shape.size(); ++k) shape.push_back(val.type.shape[k]);
        r.push_back({val.name, val.type.dtype, shape});
    }
    return r;
}

/// A package's model interface: its descriptors, or its host graph's model inputs and outputs.
struct PackageModel {
    std::vector<InputSpec> inputs;
    std::vector<std::string> outputs;
    std::size_t host_nodes = 0;
    std::optional<graph::HostPlan> host;  ///< the host section, parsed once (run_package takes it)
};

janus::Result<PackageModel> package_model(const janus::package::Package& p, const std::string& path) {
    PackageModel m;
    if (!p.host) {
        for (const auto& d : p.inputs) m.inputs.push_back({d.name, d.dtype, d.shape});
        for (const auto& d : p.outputs) m.outputs.push_back(d.name);
        return m;
    }
    JANUS_TRY(graph::HostPlan h, graph::host_plan(p, path));
    const auto all = input_specs(h.graph);
    for (graph::ValueId v : h.model_inputs)
        for (std::size_t i = 0; i < h.graph.inputs.size(); ++i)
            if (h.graph.inputs[i] == v) m.inputs.push_back(all[i]);
    for (graph::ValueId v : h.graph.outputs) m.outputs.push_back(h.graph.value(v).name);
    m.host_nodes = h.graph.nodes.size();
    m.host = std::move(h);
    return m;
}

/// -i NAME=FILE.npy, every model input exactly once, each of the input's declared dtype and shape.
janus::Result<std::vector<janus::Tensor>> read_inputs(const std::vector<InputSpec>& want,
                                                      const std::vector<std::string>& specs, const std::string& model) {
    std::map<std::string, std::string> files;
    for (const std::string& spec : specs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            return make_error("-i " + spec, "", "usage", "an input is given as NAME=FILE.npy or NAME=FILE.pb");
        const std::string name = spec.substr(0, eq);
        if (std::none_of(want.begin(), want.end(), [&](const InputSpec& w) { return w.name == name; }))
            return make_error("-i " + spec, "", "known-input", "the model has no graph input '" + name + "'");
        if (!files.emplace(name, spec.substr(eq + 1)).second)
            return make_error("-i " + spec, "", "usage", "input '" + name + "' is given twice");
    }
    std::vector<janus::Tensor> in;
    for (const InputSpec& w : want) {
        const auto it = files.find(w.name);
        if (it == files.end())
            return make_error(model, "input '" + w.name + "'", "usage",
                              "no file given for this graph input (-i " + w.name + "=FILE.npy)");
        const auto mismatch = [&](janus::DType dtype, std::span<const std::int64_t> shape) {
            return make_error(it->second, "", "input-type",
                              "graph input '" + w.name + "' is " + janus::io::describe_type(w.dtype, w.shape) +
                                  " but the file holds " + janus::io::describe_type(dtype, shape));
        };
        if (it->second.ends_with(".pb")) {  // an ONNX TensorProto (the node tests' input_N.pb)
            JANUS_TRY(auto t, janus::io::read_tensor_pb_file(it->second, janusc::limits().max_memory));
            if (t.dtype != w.dtype || t.dims != w.shape) return mismatch(t.dtype, t.dims);
            JANUS_TRY(auto tensor, janus::io::to_tensor(t, it->second));
            in.push_back(std::move(tensor));
            continue;
        }
        JANUS_TRY(auto arr, janus::io::read_npy_file(it->second, janusc::limits().max_memory));
        if (arr.dtype != w.dtype || arr.shape != w.shape) return mismatch(arr.dtype, arr.shape);
        JANUS_TRY(auto tensor, janus::io::to_tensor(arr, it->second));
        in.push_back(std::move(tensor));
    }
    return in;
}

/// OUTDIR/<name>.npy (or .pb) for every output name, in order; two outputs mapping to one file are refused.
janus::Result<std::vector<std::string>> output_paths(const std::vector<std::string>& names, const std::string& outdir,
                                                     const std::string& format) {
    std::set<std::string> seen;
    std::vector<std::string> paths;
    for (const std::string& name : names) {
        const std::string file = file_name_of(name, format);
        if (!seen.insert(file).second)
            return make_error(outdir + "/" + file, "", "file-writable", "two graph outputs map to the same file name");
        paths.push_back((fs::path(outdir) / file).string());
    }
    return paths;
}

/// Refuse, before any work, an output file that is one of the input files (outputs_spare_inputs, commands.hpp).
janus::Status run_outputs_spare_inputs(const std::vector<std::string>& names, const RunArgs& a) {
    JANUS_TRY(const auto paths, output_paths(names, a.outdir, a.output_format));
    std::vector<std::string> inputs{a.model};
    for (const std::string& spec : a.inputs)
        if (const auto eq = spec.find('='); eq != std::string::npos) inputs.push_back(spec.substr(eq + 1));
    return outputs_spare_inputs(paths, inputs);
}

/// Write every output as OUTDIR/<name>.npy (or .pb: a TensorProto named as the output), after all of them are
/// computed, all or none (core/file.hpp write_files_atomic: every file is staged as a temporary, then each is
/// renamed into place). OUTDIR is created if missing, and removed again when the write fails.
int write_outputs(const std::vector<std::string>& names, const std::vector<janus::Tensor>& out,
                  const std::string& outdir, const std::string& format) {
    auto paths = output_paths(names, outdir, format);
    if (!paths) return fail(paths.error());
    std::vector<std::vector<std::uint8_t>> bytes;
    for (std::size_t k = 0; k < names.size(); ++k) {
        if (format == "pb") {
            bytes.push_back(janus::onnx::serialize_tensor(janus::io::to_tensor_proto(out[k], names[k])));
            continue;
        }
        const auto arr = janus::io::to_npy(out[k]);
        if (auto c = janus::io::check_npy_array(arr, (*paths)[k]); !c) return fail(c.error());
        bytes.push_back(janus::io::write_npy(arr));
    }
    std::error_code ec;
    const bool existed = fs::exists(outdir, ec);
    fs::create_directories(outdir, ec);
    if (ec) return fail(make_error(outdir, "", "file-writable", "cannot create the directory: " + ec.message()));
    std::vector<janus::FileWrite> files;
    for (std::size_t k = 0; k < names.size(); ++k)
        files.push_back({(*paths)[k], bytes[k], format == "pb" ? "file-writable" : "npy-write"});
    if (const auto s = janus::write_files_atomic(files); !s) {
        if (!existed) fs::remove(outdir, ec);  // empty again: the failed write staged nothing that stayed
        return fail(s.error());
    }
    for (std::size_t k = 0; k < names.size(); ++k)
        std::cout << names[k] << ": " << janus::io::describe_type(out[k].dtype, out[k].shape().span()) << " -> "
                  << (*paths)[k] << "\n";
    return exit_ok;
}

/// A package file with a valid toolchain (run, disasm) or any toolchain (inspect reports it). `runs`: the command
/// simulates it (run, inspect), so its regions must fit the memory budget.
janus::Result<janus::package::Package> read_package(const std::string& path, bool check_toolchain, bool runs) {
    janus::package::ReadOptions o;
    o.check_toolchain = check_toolchain;
    JANUS_TRY(auto p, janus::package::read_package_file(path, o, janusc::limits().max_memory));
    if (!runs) return p;
    // the regions a run allocates beyond the file's bytes: within the memory budget (a 452-byte package may ask for
    // 3 x 4 GiB of scratch, input and output)
    JANUS_CHECK(janus::charge_memory(graph::package_run_bytes(p), janusc::limits().max_memory, path,
                                     "the package's scratch, input and output regions"));
    return p;
}

/// The simulated DRAM of a lowered model (scratch, input and output regions), within the memory budget.
janus::Status check_lowered_memory(const graph::LoweredGraph& l, const std::string& model) {
    const auto bytes = static_cast<std::uint64_t>(l.scratch_peak) + static_cast<std::uint64_t>(l.input_bytes) +
                       static_cast<std::uint64_t>(l.output_bytes);
    return janus::charge_memory(bytes, janusc::limits().max_memory, model,
                                "the simulated scratch, input and output regions");
}

/// What the reference engine may hold for `g` within the memory budget: its values (graph::reference_value_bytes)
/// `copies` times, and the largest kernel's scratch once (graph::reference_scratch_bytes). run's engines hold the
/// values once, verify three times (the reference run, its copies, the NPU engine's).
janus::Status check_reference_memory(const graph::Graph& g, const std::string& model, std::uint64_t copies = 1) {
    constexpr std::uint64_t max = ~std::uint64_t{0};
    const std::uint64_t once = graph::reference_value_bytes(g), scratch = graph::reference_scratch_bytes(g);
    const std::uint64_t values = once > max / copies ? max : once * copies;
    const std::uint64_t bytes = scratch > max - values ? max : values + scratch;
    return janus::charge_memory(bytes, janusc::limits().max_memory, model,
                                "the reference engine's values (" + std::to_string(values) +
                                    " bytes) and its largest kernel's scratch (" + std::to_string(scratch) + " bytes)");
}

/// Lower for the NPU; a refusal is the model's (exit 2), a faulting or racy program the compiler's (exit 3).
int run_error(const Error& e) {
    return fail(e, e.rule == "npu-fault" || e.rule == "npu-race" ? exit_internal : exit_input);
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%",
                  whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
    return buf;
}

/// One line on the NPU run: program size, memory, cycles and how busy each unit was.
std::string npu_summary(const graph::LoweredGraph& l, const janus::vnpu::sim::Report& r) {
    std::string s = "npu: " + std::to_string(l.npu.size()) + " nodes lowered (" + std::to_string(l.host_nodes()) +
                    " on the host), " + std::to_string(l.program.code.size()) + " instructions, constants " +
                    std::to_string(l.program.weights.size()) + " B, scratch peak " + std::to_string(l.scratch_peak) +
                    " B; " + std::to_string(r.cycles) + " cycles, busy";
    for (int u = 1; u < janus::vnpu::sim::n_units; ++u)
        s += std::string(u > 1 ? "," : "") + " " +
             std::string(janus::vnpu::unit_name(static_cast<janus::vnpu::Unit>(u))) + " " +
             percent(r.units[static_cast<std::size_t>(u)].busy, r.cycles);
    return s + "; " + std::to_string(r.macs) + " MACs";
}

std::size_t host_nodes(const graph::Graph& g) {
    std::size_t host = 0;
    for (const auto& n : g.nodes) host += n.target == graph::Target::host;
    return host;
}

}  // namespace

int cmd_run(const RunArgs& a) {
    Phases phase(a.timings);
    if (a.strict && a.engine != "npu")
        return fail(make_error("--strict", "", "usage", "--strict checks where the NPU engine places each node; "
                                                          "the reference engine runs every node on the host"));
    if (fs::path(a.model).extension() == ".jpk") {  // a compiled package: the NPU engine only
        if (a.engine != "npu" || !a.dump_ir.empty())
            return fail(make_error(a.model, "", "usage",
                                   "a package runs on the NPU engine only, and has no IR to dump (give the .onnx)"));
        auto p = read_package(a.model, true, true);
        if (!p) return fail(p.error());
        phase("read");
        const auto compiled = janus::package::effective_rounding(*p);
        if (!a.rounding.empty() && rounding_arg(a.rounding) != compiled)
            return fail(make_error(a.model, "", "usage",
                                   "the package was compiled with --rounding " +
                                       std::string(janus::numeric::rounding_name(compiled)) +
                                       " (its requantization tables hold it); it cannot run with " + a.rounding));
        auto model = package_model(*p, a.model);
        if (!model) return fail(model.error());
        if (model->host)
            if (auto s = check_reference_memory(model->host->graph, a.model); !s) return fail(s.error());
        if (auto s = run_outputs_spare_inputs(model->outputs, a); !s) return fail(s.error());
        auto in = read_inputs(model->inputs, a.inputs, a.model);
        if (!in) return fail(in.error());
        std::cout << "package " << a.model << ": " << p->code.size() << " instructions, " << model->host_nodes
                  << " host nodes, engine npu\n";
        phase("inputs");
        janus::vnpu::sim::Report report;
        auto out = model->host ? graph::run_package(*p, *model->host, *in, janus_tools::kernel_by_name,
                                                    janusc::simulate, &report)
                               : graph::run_package(*p, *in, janus_tools::kernel_by_name, janusc::simulate, &report);
        if (!out) return fail(out.error());  // the package's program is input: a fault or race in it is exit 2
        phase("simulate");
        std::cout << "npu: " << report.cycles << " cycles\n";
        const int rc = write_outputs(model->outputs, *out, a.outdir, a.output_format);
        phase("write");
        return rc;
    }
    std::string dump;
    const auto rounding = rounding_arg(a.rounding);
    auto g = load_model(a.model, a.dump_ir, phase, rounding, &dump, a.engine == "npu");
    if (!g) return fail(g.error());
    if (auto s = check_reference_memory(*g, a.model); !s) return fail(s.error());
    std::vector<std::string> names;
    for (graph::ValueId v : g->outputs) names.push_back(g->value(v).name);
    if (auto s = run_outputs_spare_inputs(names, a); !s) return fail(s.error());
    auto in = read_inputs(input_specs(*g), a.inputs, a.model);
    if (!in) return fail(in.error());
    std::cout << "model " << a.model << ": " << g->nodes.size() << " nodes (" << host_nodes(*g)
              << " float ops marked @host), engine " << a.engine << "\n";
    phase("inputs");
    std::vector<janus::Tensor> out;
    if (a.engine == "ref") {
        auto r = graph::run_reference(*g, *in, janus_tools::kernel_by_name, {}, janus::ops::OpContext{true, rounding});
        if (!r) return fail(r.error());
        out = std::move(*r);
        phase("run");
    } else {
        graph::LowerOptions lo;
        lo.rounding = rounding;
        auto l = lowered(*g, lo, a.strict, a.model);
        if (!l) return fail(l.error());
        phase("lower");
        dump_lowered(dump, *g, *l);
        if (auto s = check_lowered_memory(*l, a.model); !s) return fail(s.error());
        auto r = graph::run_npu(*g, *l, *in, janus_tools::kernel_by_name, janusc::simulate);
        if (!r) return run_error(r.error());
        phase("simulate");
        std::cout << npu_summary(*l, r->report) << "\n";
        out = std::move(r->outputs);
    }
    const int rc = write_outputs(names, out, a.outdir, a.output_format);
    phase("write");
    return rc;
}

int cmd_compile(const CompileArgs& a) {
    Phases phase(a.timings);
    std::vector<std::string> outputs{a.output};
    if (!a.emit_asm.empty()) outputs.push_back(a.emit_asm);
    if (auto s = outputs_spare_inputs(outputs, {a.model}); !s) return fail(s.error());
    std::string dump;
    const auto rounding = rounding_arg(a.rounding);
    auto g = load_model(a.model, a.dump_ir, phase, rounding, &dump, true);
    if (!g) return fail(g.error());
    graph::LowerOptions lo;
    lo.rounding = rounding;
    auto l = lowered(*g, lo, a.strict, a.model);
    if (!l) return fail(l.error());
    phase("lower");
    dump_lowered(dump, *g, *l);
    auto p = graph::compile_package(*g, *l);
    if (!p) return fail(p.error());
    std::string host_summary;  // the host section as the package holds it (a view handed over runs there too)
    if (p->host) {
        auto h = graph::host_plan(*p, a.output);
        if (!h) return fail(h.error(), exit_internal);  // the compiler wrote a host section it cannot read back
        host_summary =
            "; host section: " + std::to_string(h->nodes_before.front()) + " nodes before the program, " +
            (h->nodes_before.size() > 1 ? std::to_string(h->nodes_before.back() - h->nodes_before.front()) +
                                              " between its " + std::to_string(h->nodes_before.size()) + " segments, "
                                        : std::string()) +
            std::to_string(h->graph.nodes.size() - h->nodes_before.back()) + " after it";
    }
    auto bytes = janus::package::write_package(*p, a.output);
    if (!bytes) return fail(bytes.error(), exit_internal);  // the compiler built a package its own format refuses
    phase("package");
    // everything is built: now write both files, all or none (the assembly is staged with the package, so a
    // package that cannot be written leaves no .s behind)
    std::string text;
    std::vector<janus::FileWrite> files;
    if (!a.emit_asm.empty()) {
        std::vector<janus::vnpu::Instr> code(l->program.code.begin(), l->program.code.end());
        text = graph::annotated_assembly(code, p->debug);
        files.push_back({a.emit_asm, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                         "file-writable"});
    }
    files.push_back({a.output, *bytes, "package-write"});
    if (const auto s = janus::write_files_atomic(files); !s) return fail(s.error());
    phase("write");
    std::cout << "compiled " << a.model << " -> " << a.output << ": " << bytes->size() << " bytes; " << l->npu.size()
              << " nodes on the NPU, " << p->code.size() << " instructions, constants " << p->weights.size()
              << " B, scratch " << p->scratch_bytes << " B, input " << p->input_bytes << " B, output "
              << p->output_bytes << " B, rounding " << janus::numeric::rounding_name(rounding) << host_summary << "\n";
    return exit_ok;
}

int cmd_disasm_package(const std::string& path, const std::string& out) {
    if (!out.empty())
        if (auto s = outputs_spare_inputs({out}, {path}); !s) return fail(s.error());
    auto p = read_package(path, true, false);
    if (!p) return fail(p.error());
    std::vector<janus::vnpu::Instr> code;
    for (std::size_t k = 0; k < p->code.size(); ++k) {
        auto in = janus::vnpu::decode(p->code[k], path + ":word " + std::to_string(k));
        if (!in) return fail(in.error());
        code.push_back(*in);
    }
    const std::string text = graph::annotated_assembly(code, p->debug);
    if (out.empty()) {
        std::cout << text;
        return exit_ok;
    }
    const auto s = janus::write_file_atomic(
        out, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), "file-writable");
    return s ? exit_ok : fail(s.error());
}

int cmd_inspect(const std::string& path) {
    auto p = read_package(path, false, true);
    if (!p) return fail(p.error());
    namespace pk = janus::package;
    const auto& t = p->toolchain;
    std::cout << "package " << path << "\n";
    std::cout << "toolchain: Janus " << t.version << ", instruction set " << pk::detail::hex(t.isa_hash)
              << (t.isa_hash == pk::current_isa_hash
                      ? " (this build's)"
                      : " (NOT this build's " + pk::detail::hex(pk::current_isa_hash) + ": it cannot run here)")
              << "\n";
    std::cout << "regions: weights " << p->weights.size() << " B, scratch " << p->scratch_bytes << " B, input "
              << p->input_bytes << " B, output " << p->output_bytes << " B\n";
    const auto io = [](const char* kind, const pk::IoDesc& d) {
        std::cout << "  " << kind << " " << d.name << ": " << janus::dtype_name(d.dtype) << " at the boundary, "
                  << janus::dtype_name(d.storage) << " stored; shape [";
        for (std::size_t k = 0; k < d.shape.size(); ++k) std::cout << (k ? "," : "") << d.shape[k];
        std::cout << "] strides [";
        for (std::size_t k = 0; k < d.strides.size(); ++k) std::cout << (k ? "," : "") << d.strides[k];
        std::cout << "] bytes @" << d.offset << " +" << d.size;
        if (d.quant.scales.size() == 1)
            std::cout << "; s=" << pk::detail::shortest(d.quant.scales[0]) << " zp=" << d.quant.zero_points[0];
        else if (d.quant.scales.size() > 1)
            std::cout << "; per-axis along " << d.quant.axis << " (" << d.quant.scales.size() << " entries)";
        std::cout << "\n";
    };
    std::cout << (p->host ? "program io (between the host section and the NPU):\n" : "io:\n");
    for (const auto& d : p->inputs) io("input ", d);
    for (const auto& d : p->outputs) io("output", d);
    if (p->host) {
        auto h = graph::host_plan(*p, path);
        if (!h) return fail(h.error());
        std::cout << "host section: " << h->graph.nodes.size() << " nodes on the host reference kernels\n";
        for (std::size_t k = 0; k < h->graph.nodes.size(); ++k) {
            const auto& n = h->graph.nodes[k];
            const auto s = static_cast<std::size_t>(
                std::upper_bound(h->nodes_before.begin(), h->nodes_before.end(), k) - h->nodes_before.begin());
            std::cout << "  "
                      << (s == h->nodes_before.size() ? "after  the program"
                          : s == 0                    ? "before the program"
                                                      : "before segment " + std::to_string(s))
                      << ": " << n.op << " " << (n.origin.empty() ? "(unnamed)" : n.origin) << " -> "
                      << h->graph.value(n.outputs[0]).name << " " << h->graph.value(n.outputs[0]).type.str() << "\n";
        }
    }
    std::cout << (p->placement ? pk::placement_text(*p->placement)
                               : "placement: not recorded (format version " + std::to_string(p->format_version) + ")\n");
    std::cout << pk::rounding_text(*p);
    if (!p->segments.empty()) {
        std::cout << "program segments: " << p->segments.size() + 1 << ", entered at pc 0";
        for (const auto& sg : p->segments) std::cout << ", " << sg.entry;
        std::cout << " (each ends with halt; the host runs its nodes between them)\n";
    }
    std::cout << "buffers:\n";
    for (const auto& b : p->buffers)
        std::cout << "  " << pk::buffer_kind_name(b.kind) << " " << b.name << ": region "
                  << (pk::buffer_region(b.kind) == pk::region_weights ? "weights" : "scratch") << " @" << b.offset
                  << " +" << b.size << "\n";
    if (t.isa_hash != pk::current_isa_hash) return exit_ok;  // the words cannot be decoded by this build

    // per-node cycles: one run of every segment with the timing model (data-independent) on 0x5A-filled inputs
    std::vector<std::uint64_t> finished;
    const auto timed = graph::time_program(*p, janusc::simulate, finished, path);
    if (!timed) return fail(timed.error());  // a package's program that faults is bad input (a hostile file), exit 2
    const auto& r = *timed;
    const auto cycles = graph::node_cycles(p->debug, finished);
    std::cout
        << "nodes (instructions, cycles on the timing model; the kernel barrier before a node is charged to it):\n";
    for (std::size_t i = 0; i < p->debug.size(); ++i) {
        const auto& e = p->debug[i];
        std::cout << "  " << e.op_type << " " << (e.node.empty() ? "(unnamed)" : e.node) << ": " << e.last - e.first
                  << " instructions [" << e.first << ", " << e.last << "), " << cycles[i] << " cycles ("
                  << percent(cycles[i], r.cycles) << ")\n";
    }
    std::cout << "total: " << p->code.size() << " instructions, " << r.cycles << " cycles, busy";
    for (int u = 1; u < janus::vnpu::sim::n_units; ++u)
        std::cout << (u > 1 ? "," : "") << " " << janus::vnpu::unit_name(static_cast<janus::vnpu::Unit>(u)) << " "
                  << percent(r.units[static_cast<std::size_t>(u)].busy, r.cycles);
    std::cout << "; " << r.macs << " MACs" << (r.races.empty() ? "" : "; RACES: " + std::to_string(r.races.size()))
              << "\n";
    return r.races.empty() ? exit_ok : exit_mismatch;
}

int cmd_verify(const VerifyArgs& a) {
    Phases phase(false);
    const auto rounding = rounding_arg(a.rounding);
    auto g = load_model(a.model, "", phase, rounding);
    if (!g) return fail(g.error());
    if (a.inputs.empty()) {
        // synthesized inputs of any declared size: within the memory budget before they are made
        std::uint64_t bytes = 0;
        for (const graph::ValueId x : g->inputs) {
            const auto& t = g->value(x).type;
            bytes += static_cast<std::uint64_t>(janus::element_count(t.shape)) * janus::dtype_size(t.dtype);
        }
        if (auto s = janus::charge_memory(bytes, janusc::limits().max_memory, a.model, "the synthesized inputs"); !s)
            return fail(s.error());
    }
    // the whole run (inputs included) before any input is made or read: a 290-byte model's 256 MiB input was
    // synthesized (792 MB peak) before its 1.5 GiB run was refused
    if (auto s = check_reference_memory(*g, a.model, 3); !s) return fail(s.error());
    std::vector<janus::Tensor> in;
    if (a.inputs.empty()) {
        in = graph::seeded_inputs(*g, a.seed);
    } else {
        auto r = read_inputs(input_specs(*g), a.inputs, a.model);
        if (!r) return fail(r.error());
        in = std::move(*r);
    }
    graph::LowerOptions lo;
    lo.keep_intermediates = true;
    lo.rounding = rounding;
    auto l = lowered(*g, lo, a.strict, a.model);
    if (!l) return fail(l.error());
    std::cout << "verify " << a.model << ": " << g->nodes.size() << " nodes, " << l->npu.size() << " on the NPU, "
              << l->host_nodes() << " on the host; inputs "
              << (a.inputs.empty() ? "seeded (--seed " + std::to_string(a.seed) + ")" : std::string("from files"))
              << "; rounding " << janus::numeric::rounding_name(rounding) << "\n";
    if (auto s = check_lowered_memory(*l, a.model); !s) return fail(s.error());
    auto v = graph::verify_engines(*g, *l, in, janus_tools::kernel_by_name, janusc::simulate);
    if (!v) return run_error(v.error());
    std::vector<bool> on_npu(g->nodes.size(), false);
    for (const auto& n : l->npu) on_npu[n.node] = true;
    std::size_t differing = 0, fused = 0, kept = 0;
    for (const auto& d : v->values) {
        const auto& n = g->nodes[d.node];
        const auto& val = g->value(d.value);
        std::cout << "  node " << d.node << " " << n.op << " (" << n.origin << ") " << (on_npu[d.node] ? "npu" : "host")
                  << ": " << val.name << " " << val.type.str() << ": ";
        if (!d.materialized) {
            ++(d.in_lmem ? kept : fused);
            std::cout << (d.in_lmem ? "kept in LMEM between two kernels (not in DRAM, not compared)\n"
                                    : "fused with the activation after it (not materialized on the NPU)\n");
            continue;
        }
        if (d.differing == 0) {
            std::cout << "identical\n";
            continue;
        }
        ++differing;
        std::cout << "DIFFERS in " << d.differing << " of " << d.elements << " elements, first at element " << d.first;
        if (d.max_steps) std::cout << ", at most " << d.max_steps << " codes apart";
        std::cout << "\n";
    }
    std::cout << npu_summary(*l, v->report) << "\n";
    const std::size_t first = v->first_divergence();
    if (first == v->values.size()) {
        std::string more;  // the values no DRAM holds on the NPU
        if (fused) more = std::to_string(fused) + " more fused, not materialized";
        if (kept) {
            if (!more.empty()) more += "; ";
            more += std::to_string(kept) + " more kept in LMEM between kernels, not compared";
        }
        std::cout << "verify: all " << v->values.size() - fused - kept << " values bit-identical on both engines"
                  << (more.empty() ? std::string() : " (" + more + ")") << "\n";
        return exit_ok;
    }
    const auto& n = g->nodes[v->values[first].node];
    std::cout << "verify: " << differing << " of " << v->values.size() << " values differ; first diverging node: node "
              << v->values[first].node << " (" << n.op << " " << n.origin << ")\n";
    return exit_mismatch;
}

}  // namespace janusc
