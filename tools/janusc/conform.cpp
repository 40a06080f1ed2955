// janusc conform: the ONNX backend node tests (libonnx-testdata: DIR/<test>/model.onnx with test_data_set_N/
// input_K.pb and output_K.pb) run on Janus's engines and compared with ONNX's expected outputs (issue 7).
//
// Contract (docs/conformance.md):
//   - A test is *claimed* when every node of its model is an op type the importer takes (graph::onnx_import_form),
//     read by onnx::scan_op_types (so a model the reader refuses is still claimed when its ops are Janus's). The
//     other tests get no line, but each is imported and must be refused as unsupported (a node test is valid ONNX);
//     the summary counts them and any other outcome makes the run exit 1.
//   - A claimed test is *refused* when Janus declines it as unsupported (the importer, a pass, a graph input or a
//     data file of a type Janus does not read); the line names the rule. A refusal that calls it malformed, or a
//     test with no data set, is a failure. It *passes* on an engine when every data set's every output has the
//     expected dtype and shape and values within the ONNX backend tolerances (float32 and float16: |got - want| <=
//     atol + rtol * |want| with rtol 1e-3, atol 1e-7, NaN equal to NaN; integers and booleans exact). Otherwise it
//     *fails*.
//   - A graph input that feeds an operand Janus takes as a constant (Reshape's shape, Slice's starts, ...) is bound
//     to the data set's value at compile time (the line says `bound`): Janus compiles for known shapes.
//   - The reference engine runs every claimed test; the NPU engine (lower, simulate, the host for what stays there)
//     also runs each test whose graph holds int8/uint8 values.
//   - One line per claimed test, in directory order, is the result; `--expect FILE` compares it with FILE and exits
//     1 on any difference (a pass that became a failure, and also a refusal that now passes: update the file).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <janus/core/file.hpp>
#include <janus/graph/conformance.hpp>
#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/io/npy.hpp>
#include <janus/io/tensor_pb.hpp>

#include "commands.hpp"
#include "kernels.hpp"

namespace janusc {
namespace {

namespace fs = std::filesystem;
namespace graph = janus::graph;
using janus::DType;

constexpr double rtol = 1e-3, atol = 1e-7;

/// How one engine did on one test.
struct Verdict {
    std::string status;  ///< "pass", "fail" or "refused"
    std::string rule;    ///< the refusal's rule, or what failed (e.g. "values", "shape")
    std::string detail;  ///< the full message, for the log
    std::string str() const { return rule.empty() ? status : status + "(" + rule + ")"; }
};

/// A node test is valid ONNX, so Janus may decline it only as unsupported (issue 7: `MODEL:...: unsupported: <op>
/// <attribute or type>`); an error that calls it malformed is a Janus bug and counts as a failure.
Verdict refused(const janus::Error& e) {
    if (e.unsupported()) return {"refused", e.rule, e.message()};
    return {"fail", e.rule, e.message() + " (a node test is valid ONNX: this refusal should be 'unsupported')"};
}

/// The values of `t` as doubles (exact for every dtype Janus reads but int64 beyond 2^53, compared exactly below).
std::vector<double> doubles_of(const janus::onnx::Tensor& t) {
    std::vector<double> r;
    janus::visit_dtype(t.dtype, [&](auto ty) {
        using T = typename decltype(ty)::type;
        for (T v : t.values<T>()) r.push_back(static_cast<double>(v));
    });
    return r;
}

/// Compare one output with its expected TensorProto: "" when it conforms, else what differs.
std::string compare(const janus::Tensor& got_t, const janus::onnx::Tensor& want, std::string& rule) {
    const janus::onnx::Tensor got = janus::io::to_tensor_proto(got_t, want.name);
    if (got.dtype != want.dtype) {
        rule = "dtype";
        return std::string("dtype ") + std::string(janus::dtype_name(got.dtype)) + ", expected " +
               std::string(janus::dtype_name(want.dtype));
    }
    if (got.dims != want.dims) {
        rule = "shape";
        return "shape " + janus::io::describe_type(got.dtype, got.dims) + ", expected " +
               janus::io::describe_type(want.dtype, want.dims);
    }
    if (!janus::is_float_dtype(got.dtype)) {  // integers and booleans: the bytes
        if (got.data == want.data) return "";
        const auto g = doubles_of(got), w = doubles_of(want);
        std::size_t bad = 0, first = 0;
        for (std::size_t i = 0; i < g.size(); ++i)
            if (g[i] != w[i] && bad++ == 0) first = i;
        rule = "values";
        std::ostringstream s;
        s << bad << " of " << g.size() << " values differ; first at flat index " << first << ": " << g[first]
          << ", expected " << w[first];
        return s.str();
    }
    const auto g = doubles_of(got), w = doubles_of(want);
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        const bool same = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                          std::abs(g[i] - w[i]) <= atol + rtol * std::abs(w[i]);
        if (!same && bad++ == 0) first = i;
    }
    if (bad == 0) return "";
    rule = "values";
    std::ostringstream s;
    s.precision(9);
    s << bad << " of " << g.size() << " values outside rtol 1e-3, atol 1e-7; first at flat index " << first << ": "
      << g[first] << ", expected " << w[first];
    return s.str();
}

/// The files test_data_set_N/<prefix>K.pb, K = 0, 1, ... while they exist.
std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
    std::vector<fs::path> r;
    for (int k = 0;; ++k) {
        const fs::path p = dir / (prefix + std::to_string(k) + ".pb");
        if (!fs::exists(p)) return r;
        r.push_back(p);
    }
}

/// One data set: its inputs by graph input name, and its expected outputs in graph output order.
struct DataSet {
    std::string dir;
    std::map<std::string, janus::onnx::Tensor> inputs;
    std::vector<janus::onnx::Tensor> outputs;
};

janus::Result<DataSet> read_data_set(const fs::path& dir, const janus::onnx::Model& m, const std::string& model_path) {
    DataSet d;
    d.dir = dir.string();
    std::set<std::string> initializers;
    for (const auto& t : m.graph.initializers) initializers.insert(t.name);
    std::vector<std::string> names;  // the graph inputs the test feeds: those without an initializer
    for (const auto& v : m.graph.inputs)
        if (!initializers.count(v.name)) names.push_back(v.name);
    for (const auto& v : m.graph.inputs)  // a type Janus cannot take is refused before its data file is read
        if (!initializers.count(v.name)) JANUS_CHECK(graph::import_detail::graph_input_type(v, model_path));
    const auto ins = numbered(dir, "input_");
    if (ins.size() != names.size())
        return janus::make_error(
            d.dir, "", "conform-data",
            std::to_string(ins.size()) + " input files for " + std::to_string(names.size()) + " graph inputs");
    for (std::size_t k = 0; k < ins.size(); ++k) {
        JANUS_TRY(auto t, janus::io::read_tensor_pb_file(ins[k].string()));
        d.inputs.emplace(names[k], std::move(t));
    }
    for (const auto& p : numbered(dir, "output_")) {
        JANUS_TRY(auto t, janus::io::read_tensor_pb_file(p.string()));
        d.outputs.push_back(std::move(t));
    }
    if (d.outputs.size() != m.graph.outputs.size())
        return janus::make_error(d.dir, "", "conform-data",
                                 std::to_string(d.outputs.size()) + " output files for " +
                                     std::to_string(m.graph.outputs.size()) + " graph outputs");
    return d;
}

/// The graph inputs that feed an operand Janus takes as a constant: bound to the data set's values. With `weights`,
/// also the weight operands, which the NPU engine needs as constants (it lays them out at compile time).
std::set<std::string> inputs_to_bind(const janus::onnx::Model& m, bool weights) {
    std::set<std::string> graph_inputs, r;
    for (const auto& v : m.graph.inputs) graph_inputs.insert(v.name);
    for (const auto& t : m.graph.initializers) graph_inputs.erase(t.name);  // a default value: already a constant
    for (const auto& n : m.graph.nodes)
        for (std::size_t k = 0; k < n.inputs.size(); ++k)
            if (graph_inputs.count(n.inputs[k]) &&
                (graph::constant_operand(n.op_type, k) || (weights && graph::weight_operand(n.op_type, k))))
                r.insert(n.inputs[k]);
    return r;
}

bool holds_int8(const graph::Graph& g) {
    for (const auto& v : g.values)
        if (v.type.dtype == DType::i8 || v.type.dtype == DType::u8) return true;
    return false;
}

/// The model with the inputs `bind` as initializers holding the data set's values, imported and optimized.
janus::Result<graph::Graph> load_bound(const fs::path& dir, const janus::onnx::Model& model,
                                       const std::set<std::string>& bind, const DataSet& d) {
    janus::onnx::Model m = model;
    for (const auto& name : bind) m.graph.initializers.push_back(d.inputs.at(name));
    JANUS_TRY(graph::Graph g, graph::import_onnx(m, (dir / "model.onnx").string()));
    graph::PassLog log;
    JANUS_CHECK(graph::run_passes(g, graph::default_pipeline, log, {janus_tools::kernel_by_name}));
    return g;
}

/// Run one data set on one engine; `npu` lowers and simulates (and adds the nodes that ran on the NPU to `npu_nodes`).
Verdict run_engine(const graph::Graph& g, const DataSet& d, bool npu, std::size_t& npu_nodes) {
    std::vector<janus::Tensor> inputs;
    for (graph::ValueId v : g.inputs) {
        auto t = janus::io::to_tensor(d.inputs.at(g.value(v).name), g.value(v).name);
        if (!t) return refused(t.error());
        inputs.push_back(std::move(*t));
    }
    std::vector<janus::Tensor> out;
    if (npu) {
        auto l = graph::lower_graph(g);
        if (!l) return refused(l.error());
        auto r = graph::run_npu(g, *l, inputs, janus_tools::kernel_by_name, janusc::simulate);
        if (!r)
            return r.error().rule == "npu-fault" || r.error().rule == "npu-race"
                       ? Verdict{"fail", r.error().rule, r.error().message()}
                       : refused(r.error());
        npu_nodes += l->npu.size();
        out = std::move(r->outputs);
    } else {
        auto r = graph::run_reference(g, inputs, janus_tools::kernel_by_name);
        if (!r) return refused(r.error());
        out = std::move(*r);
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
        std::string rule;
        const std::string why = compare(out[k], d.outputs[k], rule);
        if (!why.empty()) return {"fail", rule, d.dir + ": output '" + g.value(g.outputs[k]).name + "': " + why};
    }
    return {"pass", "", ""};
}

struct TestResult {
    graph::ConformanceResult result;  ///< its line() is the result line (also the --expect file's)
    Verdict ref, npu;
    bool npu_ran = false;
};

/// One claimed test, every data set: the reference engine, then the NPU engine if the graph holds int8/uint8 values.
TestResult run_test(const fs::path& dir, const janus::onnx::Model& model, std::vector<std::string> ops) {
    TestResult t;
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) {  // nothing to compare with: the test proves nothing
        t.ref = {"fail", "conform-data", dir.string() + ": no test_data_set_N directory"};
        t.result = {dir.filename().string(), std::move(ops), t.ref.str(), "", 0, 0};
        return t;
    }
    const auto bind = inputs_to_bind(model, false), bind_npu = inputs_to_bind(model, true);
    t.ref = t.npu = {"pass", "", ""};
    std::size_t npu_nodes = 0;
    for (const auto& set : sets) {
        auto d = read_data_set(set, model, (dir / "model.onnx").string());
        auto g = d ? load_bound(dir, model, bind, *d) : janus::Result<graph::Graph>(d.error());
        if (!g) {
            t.ref = refused(g.error());
            t.npu_ran = false;
            break;
        }
        if (t.ref.status == "pass") t.ref = run_engine(*g, *d, false, npu_nodes);
        if (!holds_int8(*g)) continue;
        t.npu_ran = true;
        if (t.npu.status != "pass") continue;
        if (bind_npu == bind) {
            t.npu = run_engine(*g, *d, true, npu_nodes);
        } else {
            auto gn = load_bound(dir, model, bind_npu, *d);
            t.npu = gn ? run_engine(*gn, *d, true, npu_nodes) : refused(gn.error());
        }
    }
    // "host": it passed, but every node ran on the host (the NPU engine's fallback), so the NPU proved nothing
    if (t.npu_ran && t.npu.status == "pass" && npu_nodes == 0) t.npu.status = "host";
    t.result = {dir.filename().string(),
                std::move(ops),
                t.ref.str(),
                t.npu_ran ? t.npu.str() : "",
                static_cast<int>(bind.size()),
                static_cast<int>(bind_npu.size() - bind.size())};
    return t;
}

std::string pct(std::size_t a, std::size_t b) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%", b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0.0);
    return buf;
}

}  // namespace

int cmd_conform(const ConformArgs& a) {
    // --report FILE --expect FILE would write the file and then compare it with itself: refused (output-is-input)
    if (auto s = outputs_spare_inputs({a.report}, {a.expect}); !s) return fail(s.error());
    std::error_code ec;
    if (!fs::is_directory(a.dir, ec))
        return fail(janus::make_error(a.dir, "", "file-readable", "not a directory of ONNX node tests"));
    std::vector<fs::path> tests;
    for (const auto& e : fs::directory_iterator(a.dir))
        if (e.is_directory() && fs::exists(e.path() / "model.onnx") &&
            e.path().filename().string().find(a.filter) != std::string::npos)
            tests.push_back(e.path());
    std::sort(tests.begin(), tests.end());

    std::vector<std::string> lines;
    std::size_t others = 0, others_malformed = 0;  // the tests of other op types: refused, and how
    std::size_t claimed = 0, ref_pass = 0, ref_fail = 0, npu_ran = 0, npu_pass = 0, npu_host = 0, npu_fail = 0;
    for (const auto& dir : tests) {
        const std::string path = (dir / "model.onnx").string();
        auto bytes = janus::onnx::read_bytes(path);
        if (!bytes) return fail(bytes.error());
        // A test is ours when every node's op type is one the importer takes; the op types come from a scan of the
        // wire format, so that a model the reader refuses (control flow, a dtype Janus does not read) is claimed
        // and refused when its ops are ours, and skipped when they are not.
        const auto scanned = janus::onnx::scan_op_types(*bytes, path);
        bool ours = scanned.ok();
        std::vector<std::string> ops;  // sorted, unique
        if (ours)
            for (const auto& [domain, op] : *scanned) {
                ours = ours && (domain.empty() || domain == "ai.onnx") && graph::import_detail::known_op(op);
                ops.push_back(op);
            }
        if (!ours) {
            // not claimed, so Janus must refuse it, and as unsupported: the model is valid ONNX
            ++others;
            auto m = janus::onnx::parse_model(*bytes, path);
            auto g = m ? graph::import_onnx(*m, path) : janus::Result<graph::Graph>(m.error());
            if (g.ok() || !g.error().unsupported()) {
                ++others_malformed;
                std::cout << "not refused as unsupported: " << dir.filename().string() << "\n  "
                          << (g.ok() ? std::string("imported although an op type is not Janus's") : g.error().message())
                          << "\n";
            }
            continue;
        }
        std::sort(ops.begin(), ops.end());
        ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
        ++claimed;
        auto m = janus::onnx::parse_model(*bytes, path);
        if (!m) {
            const Verdict v = refused(m.error());
            lines.push_back(graph::ConformanceResult{dir.filename().string(), ops, v.str(), "", 0, 0}.line());
            std::cout << lines.back() << "\n  " << v.detail << "\n";
            ref_fail += v.status == "fail";
            continue;
        }
        const TestResult t = run_test(dir, *m, std::move(ops));
        lines.push_back(t.result.line());
        std::cout << lines.back() << "\n";
        for (const Verdict* v : {&t.ref, &t.npu})
            if (!v->detail.empty() && (v == &t.ref || t.npu_ran)) std::cout << "  " << v->detail << "\n";
        ref_pass += t.ref.status == "pass";
        ref_fail += t.ref.status == "fail";
        npu_ran += t.npu_ran;
        npu_pass += t.npu_ran && t.npu.status == "pass";
        npu_host += t.npu_ran && t.npu.status == "host";
        npu_fail += t.npu_ran && t.npu.status == "fail";
    }
    std::cout << "conformance: " << claimed << " of " << tests.size()
              << " node tests use only op types Janus imports; reference engine: " << ref_pass << " pass ("
              << pct(ref_pass, claimed) << "), " << ref_fail << " fail, " << claimed - ref_pass - ref_fail
              << " refused; npu engine (tests with int8/uint8 values): " << npu_ran << ", " << npu_pass
              << " pass with nodes on the NPU, " << npu_host << " pass with every node on the host, " << npu_fail
              << " fail; the other " << others << " node tests: " << others - others_malformed
              << " refused as unsupported, " << others_malformed << " not\n";

    std::string text;
    for (const auto& l : lines) text += l + "\n";
    if (!a.report.empty()) {
        const auto s = janus::write_file_atomic(
            a.report, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}, "file-writable");
        if (!s) return fail(s.error());
    }
    if (others_malformed != 0) {
        std::cerr << a.dir << ": " << others_malformed
                  << " node tests of op types Janus does not claim were not refused as unsupported (above)\n";
        return exit_mismatch;
    }
    if (a.expect.empty()) return ref_fail + npu_fail == 0 ? exit_ok : exit_mismatch;
    auto want = janus::read_file(a.expect, "file-readable", "the expected conformance results");
    if (!want) return fail(want.error());
    const std::string want_text(want->begin(), want->end());
    // a malformed expectation is bad input (exit 2), not a difference
    auto parsed = janus::graph::parse_conformance(want_text, a.expect);
    if (!parsed) return fail(parsed.error());
    if (want_text == text) {
        std::cout << "conformance: every line matches " << a.expect << "\n";
        return exit_ok;
    }
    std::map<std::string, std::string> was;
    for (const auto& r : *parsed) was[r.test] = r.line();
    std::map<std::string, std::string> now;
    for (const auto& l : lines) now[l.substr(0, l.find(' '))] = l;
    for (const auto& [name, l] : now)
        if (!was.count(name))
            std::cout << "new:      " << l << "\n";
        else if (was[name] != l)
            std::cout << "changed:  " << was[name] << "  ->  " << l << "\n";
    for (const auto& [name, l] : was)
        if (!now.count(name)) std::cout << "missing:  " << l << "\n";
    std::cerr << a.expect << ": the conformance results differ (above); a change that is an improvement is recorded "
              << "with --report " << a.expect << "\n";
    return exit_mismatch;
}

}  // namespace janusc
