// janusc run and verify: import an ONNX model, read its inputs from .npy files, run it on the host reference or
// lowered to the vnpu and simulated, write one .npy per graph output; or run both engines and compare every value.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/io/tensor_npy.hpp>

#include "commands.hpp"
#include "kernels.hpp"

namespace janusc {
namespace {

using janus::Error;
using janus::make_error;
namespace fs = std::filesystem;
namespace graph = janus::graph;

/// A graph output name as a file name: characters outside [A-Za-z0-9._-] become '_' (docs/janusc.md).
std::string file_name_of(const std::string& output) {
    std::string s = output;
    for (char& c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
    if (s.empty() || s == "." || s == "..") s = "_" + s;
    return s + ".npy";
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

/// Read, import and optimize a model; --dump-ir prints the IR after the named pass.
janus::Result<graph::Graph> load_model(const std::string& path, const std::string& dump_ir, Phases& phase) {
    if (fs::path(path).extension() == ".jpk")
        return make_error(path, "", "janusc-engine",
                          "running a .jpk package needs janusc compile, which is not finished yet; give the .onnx");
    JANUS_TRY(auto model, janus::onnx::read_model_file(path));
    phase("read");
    JANUS_TRY(graph::Graph g, graph::import_onnx(model, path));
    phase("import");
    // --dump-ir=after:import | after:PASS | after:all
    std::string dump;
    if (!dump_ir.empty()) {
        bool known = dump_ir == "after:import" || dump_ir == "after:all";
        for (const auto& p : graph::all_passes) known = known || dump_ir == "after:" + std::string(p.name);
        if (dump_ir.rfind("after:", 0) != 0 || !known)
            return make_error("--dump-ir=" + dump_ir, "", "usage",
                              "expected after:import, after:all or after:PASS with PASS one of the passes");
        dump = dump_ir.substr(6);
    }
    if (dump == "import" || dump == "all") std::cout << "; after import\n" << graph::print(g, false);
    graph::PassLog log;
    JANUS_CHECK(graph::run_passes(g, graph::default_pipeline, log, [&](std::string_view pass, const graph::Graph& gr) {
        if (dump == pass || dump == "all") std::cout << "; after " << pass << "\n" << graph::print(gr, false);
    }));
    phase("passes");
    return g;
}

/// -i NAME=FILE.npy, every graph input exactly once, each of the input's declared dtype and shape.
janus::Result<std::vector<janus::Tensor>> read_inputs(const graph::Graph& g, const std::vector<std::string>& specs,
                                                      const std::string& model) {
    std::map<std::string, std::string> files;
    for (const std::string& spec : specs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            return make_error("-i " + spec, "", "usage", "an input is given as NAME=FILE.npy");
        const std::string name = spec.substr(0, eq);
        if (g.find(name) == graph::no_value || g.value(g.find(name)).kind != graph::ValueKind::input)
            return make_error("-i " + spec, "", "known-input", "the model has no graph input '" + name + "'");
        if (!files.emplace(name, spec.substr(eq + 1)).second)
            return make_error("-i " + spec, "", "usage", "input '" + name + "' is given twice");
    }
    std::vector<janus::Tensor> in;
    for (graph::ValueId v : g.inputs) {
        const auto& val = g.value(v);
        const auto it = files.find(val.name);
        if (it == files.end())
            return make_error(model, "input '" + val.name + "'", "usage",
                              "no file given for this graph input (-i " + val.name + "=FILE.npy)");
        JANUS_TRY(auto arr, janus::io::read_npy_file(it->second));
        std::vector<std::int64_t> want;
        for (int k = 0; k < val.type.shape.size(); ++k) want.push_back(val.type.shape[k]);
        if (arr.dtype != val.type.dtype || arr.shape != want)
            return make_error(it->second, "", "input-type",
                              "graph input '" + val.name + "' is " + janus::io::describe_type(val.type.dtype, want) +
                                  " but the file holds " + janus::io::describe_type(arr));
        in.push_back(janus::io::to_tensor(arr));
    }
    return in;
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
    std::string s = "npu: " + std::to_string(l.npu.size()) + " nodes lowered, " +
                    std::to_string(l.program.code.size()) + " instructions, constants " +
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
    auto g = load_model(a.model, a.dump_ir, phase);
    if (!g) return fail(g.error());
    auto in = read_inputs(*g, a.inputs, a.model);
    if (!in) return fail(in.error());
    std::cout << "model " << a.model << ": " << g->nodes.size() << " nodes (" << host_nodes(*g)
              << " float ops on the host), engine " << a.engine << "\n";
    phase("inputs");
    std::vector<janus::Tensor> out;
    if (a.engine == "ref") {
        auto r = graph::run_reference(*g, *in, janus_tools::kernel_by_name);
        if (!r) return fail(r.error());
        out = std::move(*r);
        phase("run");
    } else {
        auto l = graph::lower_graph(*g);
        if (!l) return fail(l.error());
        phase("lower");
        auto r = graph::run_npu(*g, *l, *in, janus_tools::kernel_by_name, janusc::simulate);
        if (!r) return run_error(r.error());
        phase("simulate");
        std::cout << npu_summary(*l, r->report) << "\n";
        out = std::move(r->outputs);
    }

    // everything is computed: now write, each file atomically
    std::error_code ec;
    fs::create_directories(a.outdir, ec);
    if (ec) return fail(make_error(a.outdir, "", "file-writable", "cannot create the directory: " + ec.message()));
    std::set<std::string> written;
    for (std::size_t k = 0; k < g->outputs.size(); ++k) {
        const std::string file = file_name_of(g->value(g->outputs[k]).name);
        if (!written.insert(file).second)
            return fail(
                make_error(a.outdir + "/" + file, "", "file-writable", "two graph outputs map to the same file name"));
        const auto arr = janus::io::to_npy(out[k]);
        const std::string path = (fs::path(a.outdir) / file).string();
        const auto s = janus::io::write_npy_file(path, arr);
        if (!s) return fail(s.error());
        std::cout << g->value(g->outputs[k]).name << ": " << janus::io::describe_type(arr) << " -> " << path << "\n";
    }
    phase("write");
    return exit_ok;
}

int cmd_verify(const VerifyArgs& a) {
    Phases phase(false);
    auto g = load_model(a.model, "", phase);
    if (!g) return fail(g.error());
    std::vector<janus::Tensor> in;
    if (a.inputs.empty()) {
        in = graph::seeded_inputs(*g, a.seed);
    } else {
        auto r = read_inputs(*g, a.inputs, a.model);
        if (!r) return fail(r.error());
        in = std::move(*r);
    }
    auto l = graph::lower_graph(*g, graph::LowerOptions{true});
    if (!l) return fail(l.error());
    std::cout << "verify " << a.model << ": " << g->nodes.size() << " nodes, " << l->npu.size() << " on the NPU, "
              << l->host_before.size() + l->host_after.size() << " on the host; inputs "
              << (a.inputs.empty() ? "seeded (--seed " + std::to_string(a.seed) + ")" : std::string("from files"))
              << "\n";
    auto v = graph::verify_engines(*g, *l, in, janus_tools::kernel_by_name, janusc::simulate);
    if (!v) return run_error(v.error());
    std::vector<bool> on_npu(g->nodes.size(), false);
    for (const auto& n : l->npu) on_npu[n.node] = true;
    std::size_t differing = 0;
    for (const auto& d : v->values) {
        const auto& n = g->nodes[d.node];
        const auto& val = g->value(d.value);
        std::cout << "  node " << d.node << " " << n.op << " (" << n.origin << ") " << (on_npu[d.node] ? "npu" : "host")
                  << ": " << val.name << " " << val.type.str() << ": ";
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
        std::cout << "verify: all " << v->values.size() << " values bit-identical on both engines\n";
        return exit_ok;
    }
    const auto& n = g->nodes[v->values[first].node];
    std::cout << "verify: " << differing << " of " << v->values.size() << " values differ; first diverging node: node "
              << v->values[first].node << " (" << n.op << " " << n.origin << ")\n";
    return exit_mismatch;
}

}  // namespace janusc
