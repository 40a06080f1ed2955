// janusc support: the op support table with its evidence (graph/support.hpp), measured now by running every probe;
// docs/SUPPORTED_OPS.md is its output with --fuzz-corpus fuzz/corpus/graph_diff. CMake compiles it in one unity
// translation unit with run_model.cpp (both instantiate the lowering): names in its anonymous namespace must differ
// from run_model.cpp's.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <janus/core/file.hpp>
#include <janus/graph/support.hpp>

#include "../common/kernels.hpp"
#include "commands.hpp"

namespace janusc {

namespace {

/// The op types of every IR seed in `dir` (sorted file names, so a failure is reproducible).
janus::Result<std::set<std::string, std::less<>>> fuzzed_ops(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        return janus::make_error(dir, "", "file-readable", "--fuzz-corpus is not a directory");
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file()) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    std::set<std::string, std::less<>> ops;
    for (const auto& f : files) {
        JANUS_TRY(const auto bytes, janus::read_file(f, "file-readable"));
        janus::graph::ops_in_ir({reinterpret_cast<const char*>(bytes.data()), bytes.size()}, ops);
    }
    return ops;
}

}  // namespace

int cmd_support(const SupportArgs& a) {
    namespace g = janus::graph;
    if (auto s = outputs_spare_inputs({a.output}, {a.node_tests}); !s) return fail(s.error());
    g::ExternalEvidence ext;
    if (!a.fuzz_corpus.empty()) {
        auto ops = fuzzed_ops(a.fuzz_corpus);
        if (!ops) return fail(ops.error());
        ext.fuzzed_ops = std::move(*ops);
    }
    if (!a.node_tests.empty()) {
        auto bytes = janus::read_file(a.node_tests, "file-readable", "janusc conform's result lines");
        if (!bytes) return fail(bytes.error());
        auto lines = g::parse_conformance({reinterpret_cast<const char*>(bytes->data()), bytes->size()}, a.node_tests);
        if (!lines) return fail(lines.error());
        ext.node_tests = std::move(*lines);
    }
    std::vector<g::ProbeResult> results;
    for (const auto& p : g::probe_specs()) {
        for (g::ProbeForm f : {g::ProbeForm::int8, g::ProbeForm::float32}) {
            if ((f == g::ProbeForm::int8 && !p.int8) || (f == g::ProbeForm::float32 && !p.float32)) continue;
            auto r = g::run_probe(p, f, janus_tools::kernel_by_name, simulate);
            if (!r) return fail(r.error(), exit_internal);  // a probe that does not parse is a Janus bug
            results.push_back(std::move(*r));
        }
    }
    const std::string md = g::support_markdown(results, ext);
    if (a.output.empty()) {
        std::cout << md;
        return exit_ok;
    }
    const auto st = janus::write_file_atomic(a.output, {reinterpret_cast<const std::uint8_t*>(md.data()), md.size()},
                                             "file-writable");
    return st.ok() ? exit_ok : fail(st.error());
}

}  // namespace janusc
