// janusc run: import an ONNX model, read its inputs from .npy files, run it, write one .npy per graph output.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/passes.hpp>
#include <janus/io/tensor_npy.hpp>

#include "commands.hpp"
#include "kernels.hpp"

namespace janusc {
namespace {

using janus::Error;
using janus::make_error;
namespace fs = std::filesystem;

int fail(const Error& e) {
    std::cerr << e.message() << "\n";
    return exit_input;
}

/// A graph output name as a file name: characters outside [A-Za-z0-9._-] become '_' (docs/janusc.md).
std::string file_name_of(const std::string& output) {
    std::string s = output;
    for (char& c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
    if (s.empty() || s == "." || s == "..") s = "_" + s;
    return s + ".npy";
}

}  // namespace

int cmd_run(const RunArgs& a) {
    using clock = std::chrono::steady_clock;
    auto mark = clock::now();
    const auto phase = [&](const char* name) {  // --timings: the wall time of each phase, on stderr
        const auto now = clock::now();
        if (a.timings)
            std::cerr << "timing " << name << ": " << std::chrono::duration<double, std::milli>(now - mark).count()
                      << " ms\n";
        mark = now;
    };
    if (fs::path(a.model).extension() == ".jpk")
        return fail(make_error(a.model, "", "janusc-engine",
                               "running a .jpk package needs the NPU pipeline, which is not finished yet"));
    auto model = janus::onnx::read_model_file(a.model);
    if (!model) return fail(model.error());
    phase("read");
    auto g = janus::graph::import_onnx(*model, a.model);
    if (!g) return fail(g.error());
    phase("import");
    // --dump-ir=after:import | after:PASS | after:all
    std::string dump;
    if (!a.dump_ir.empty()) {
        bool known = a.dump_ir == "after:import" || a.dump_ir == "after:all";
        for (const auto& p : janus::graph::all_passes) known = known || a.dump_ir == "after:" + std::string(p.name);
        if (a.dump_ir.rfind("after:", 0) != 0 || !known)
            return fail(make_error("--dump-ir=" + a.dump_ir, "", "usage",
                                   "expected after:import, after:all or after:PASS with PASS one of the passes"));
        dump = a.dump_ir.substr(6);
    }
    if (dump == "import" || dump == "all") std::cout << "; after import\n" << janus::graph::print(*g, false);
    janus::graph::PassLog log;
    const auto s = janus::graph::run_passes(
        *g, janus::graph::default_pipeline, log, [&](std::string_view pass, const janus::graph::Graph& gr) {
            if (dump == pass || dump == "all")
                std::cout << "; after " << pass << "\n" << janus::graph::print(gr, false);
        });
    if (!s) return fail(s.error());
    phase("passes");
    if (a.engine != "ref")
        return fail(make_error(a.model, "--engine " + a.engine, "janusc-engine",
                               "the NPU engine needs the compile pipeline (planning, lowering, package), which is not "
                               "finished yet; run with --engine ref"));

    // -i NAME=FILE.npy, every graph input exactly once
    std::map<std::string, std::string> files;
    for (const std::string& spec : a.inputs) {
        const auto eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            return fail(make_error("-i " + spec, "", "usage", "an input is given as NAME=FILE.npy"));
        const std::string name = spec.substr(0, eq);
        if (g->find(name) == janus::graph::no_value || g->value(g->find(name)).kind != janus::graph::ValueKind::input)
            return fail(make_error("-i " + spec, "", "known-input", "the model has no graph input '" + name + "'"));
        if (!files.emplace(name, spec.substr(eq + 1)).second)
            return fail(make_error("-i " + spec, "", "usage", "input '" + name + "' is given twice"));
    }
    std::vector<janus::Tensor> in;
    for (janus::graph::ValueId v : g->inputs) {
        const auto& val = g->value(v);
        const auto it = files.find(val.name);
        if (it == files.end())
            return fail(make_error(a.model, "input '" + val.name + "'", "usage",
                                   "no file given for this graph input (-i " + val.name + "=FILE.npy)"));
        auto arr = janus::io::read_npy_file(it->second);
        if (!arr) return fail(arr.error());
        std::vector<std::int64_t> want;
        for (int k = 0; k < val.type.shape.size(); ++k) want.push_back(val.type.shape[k]);
        if (arr->dtype != val.type.dtype || arr->shape != want)
            return fail(make_error(it->second, "", "input-type",
                                   "graph input '" + val.name + "' is " +
                                       janus::io::describe_type(val.type.dtype, want) + " but the file holds " +
                                       janus::io::describe_type(*arr)));
        in.push_back(janus::io::to_tensor(*arr));
    }

    std::size_t host = 0;
    for (const auto& n : g->nodes) host += n.target == janus::graph::Target::host;
    std::cout << "model " << a.model << ": " << g->nodes.size() << " nodes (" << host
              << " float ops on the host), engine " << a.engine << "\n";
    phase("inputs");
    auto out = janus::graph::run_reference(*g, in, janus_tools::kernel_by_name);
    if (!out) return fail(out.error());
    phase("run");

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
        const auto arr = janus::io::to_npy((*out)[k]);
        const std::string path = (fs::path(a.outdir) / file).string();
        const auto s = janus::io::write_npy_file(path, arr);
        if (!s) return fail(s.error());
        std::cout << g->value(g->outputs[k]).name << ": " << janus::io::describe_type(arr) << " -> " << path << "\n";
    }
    phase("write");
    return exit_ok;
}

}  // namespace janusc
