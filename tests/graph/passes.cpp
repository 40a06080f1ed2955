// Graph passes, each test a small IR text file (tests/graph/passes/<name>.ir, first line "; passes: a, b"): the
// graph after the passes and the pass log are golden files (<name>.after.ir, <name>.log; JANUS_UPDATE_GOLDEN=1
// rewrites them), and the reference engine gives bit-identical outputs before and after on seeded inputs, so every
// rewrite is checked to be exact. A file whose second line is "; int8 outputs within 1 LSB" tests a pass that may
// change codes (batch-norm-to-conv): its int8 outputs may differ by 1, and must differ somewhere (so the line is
// needed, not a blanket waiver). The default pipeline is also run on every imported fixture with the same check.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <janus/graph/import_onnx.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>

#include "support/text_file.hpp"
#include "kernels.hpp"

namespace {

namespace fs = std::filesystem;
using namespace janus;

void golden(const fs::path& path, const std::string& text) {
    if (std::getenv("JANUS_UPDATE_GOLDEN") != nullptr) std::ofstream(path, std::ios::binary) << text;
    CAPTURE(path.string());
    CHECK(janus_test::read_text(path) == text);
}

/// The reference outputs of `g`, as raw bytes per output.
std::vector<std::vector<std::byte>> run(const graph::Graph& g, const std::vector<Tensor>& in) {
    auto out = graph::run_reference(g, in, janus_tools::kernel_by_name);
    REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().message()));
    std::vector<std::vector<std::byte>> r;
    for (const Tensor& t : *out) r.push_back(*t.clone().storage);
    return r;
}

}  // namespace

TEST_CASE("every pass test: golden graph and log, bit-identical reference outputs") {
    int n = 0;
    for (const auto& e : fs::directory_iterator("graph/passes")) {
        if (e.path().extension() != ".ir" || e.path().string().ends_with(".after.ir")) continue;
        CAPTURE(e.path().string());
        const std::string text = janus_test::read_text(e.path());
        std::vector<std::string> names;
        {
            std::stringstream first(text.substr(0, text.find('\n')));
            std::string line;
            std::getline(first, line);
            const std::string prefix = "; passes:";
            REQUIRE(line.rfind(prefix, 0) == 0);
            std::stringstream s(line.substr(prefix.size()));
            std::string name;
            while (std::getline(s, name, ',')) {
                name.erase(0, name.find_first_not_of(' '));
                name.erase(name.find_last_not_of(' ') + 1);
                names.push_back(name);
            }
        }
        std::vector<std::string_view> views(names.begin(), names.end());
        const std::string second =
            text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n') - 1);
        const bool within_1 = second == "; int8 outputs within 1 LSB";
        auto g = graph::parse(text, e.path().string());
        REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message()));
        const auto in = graph::seeded_inputs(*g, 7);
        const auto before = run(*g, in);
        graph::PassLog log;
        const Status s = graph::run_passes(*g, views, log, {janus_tools::kernel_by_name});
        REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message()));
        const auto after = run(*g, in);
        if (!within_1) {
            CHECK(after == before);
        } else {
            REQUIRE(after.size() == before.size());
            int max_diff = 0;
            for (std::size_t o = 0; o < after.size(); ++o) {
                REQUIRE(g->value(g->outputs[o]).type.dtype == DType::i8);
                REQUIRE(after[o].size() == before[o].size());
                for (std::size_t i = 0; i < after[o].size(); ++i)
                    max_diff = std::max(max_diff, std::abs(static_cast<int>(static_cast<std::int8_t>(after[o][i])) -
                                                           static_cast<int>(static_cast<std::int8_t>(before[o][i]))));
            }
            CHECK(max_diff == 1);
        }
        auto stem = e.path();
        stem.replace_extension();
        golden(stem.string() + ".after.ir", graph::print(*g));
        std::string log_text;
        for (const auto& l : log) log_text += l + "\n";
        golden(stem.string() + ".log", log_text);
        ++n;
    }
    CHECK(n == 15);
}

TEST_CASE("the default pipeline keeps every imported fixture's reference outputs bit for bit") {
    for (const auto& e : fs::directory_iterator("onnx/fixtures")) {
        if (e.path().extension() != ".onnx") continue;
        CAPTURE(e.path().string());
        const auto m = onnx::read_model_file(e.path().string());
        REQUIRE(m.ok());
        auto g = graph::import_onnx(*m, e.path().string());
        REQUIRE(g.ok());
        const auto in = graph::seeded_inputs(*g, 11);
        const auto before = run(*g, in);
        const std::size_t nodes = g->nodes.size();
        graph::PassLog log;
        REQUIRE(graph::run_passes(*g, graph::default_pipeline, log, {janus_tools::kernel_by_name}).ok());
        CHECK(run(*g, in) == before);
        MESSAGE(e.path().stem().string() << ": " << nodes << " -> " << g->nodes.size() << " nodes");
    }
}

TEST_CASE("an unknown pass and a pass that breaks the graph are reported with the pass named") {
    auto g = graph::parse("graph g {\n  input %x: float32[2]\n  %y: float32[2] = Relu(%x)\n  output %y\n}\n", "g.ir");
    REQUIRE(g.ok());
    graph::PassLog log;
    const std::string_view bogus[] = {"frobnicate"};
    const Status s = graph::run_passes(*g, bogus, log, {});
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message() ==
          "pass frobnicate: error: no such pass; the passes are fold-constants, canonicalize, batch-norm-to-conv, "
          "sink-transpose, fuse-activation, remove-identity, dce [known-pass]");
}

TEST_CASE("fold-constants: a result beyond the limit stays a node; a failing constant node names itself") {
    const std::string_view fold[] = {"fold-constants"};
    auto g = graph::parse(
        "graph g {\n  input %x: int8[8] q(int8 s=0.5 zp=0)\n  const %c: int8[8] q(int8 s=0.5 zp=0) = "
        "0x0102030405060708\n  %r: int8[8] q(int8 s=0.5 zp=0) = Relu(%c)\n"
        "  %z: int8[8] q(int8 s=0.5 zp=0) = Add(%x, %r)\n  output %z\n}\n",
        "g.ir");
    REQUIRE(g.ok());
    graph::PassLog log;
    REQUIRE(graph::run_passes(*g, fold, log, {janus_tools::kernel_by_name, 7}).ok());
    CHECK(g->nodes.size() == 2);
    REQUIRE(log.size() == 1);
    CHECK(log[0] == "fold-constants: Relu -> r: kept, its result (8 bytes) is larger than the 7-byte fold limit");
    log.clear();
    REQUIRE(graph::run_passes(*g, fold, log, {janus_tools::kernel_by_name, 8}).ok());
    CHECK(g->nodes.size() == 1);
    CHECK(log.at(0) == "fold-constants: Relu -> r: folded into a constant int8[8] q(int8 s=0.5 zp=0)");

    const Status none = graph::run_passes(*g, fold, log, {});
    CHECK(none.ok());  // nothing left to fold: no kernel needed

    auto bad = graph::parse(  // a constant BatchNorm whose variance is negative
        "graph b {\n  input %x: float32[1,2,1,1]\n  const %c: float32[1,2,1,1] = 0x0000803f00000040\n"
        "  const %one: float32[2] = 0x0000803f0000803f\n  const %zero: float32[2] = 0x0000000000000000\n"
        "  const %var: float32[2] = 0x0000803f000080bf\n"
        "  %s: float32[1,2,1,1] = BatchNormalization(%c, %one, %zero, %zero, %var)\n"
        "  %z: float32[1,2,1,1] = Add(%x, %s)\n  output %z\n}\n",
        "b.ir");
    REQUIRE(bad.ok());
    const Status s = graph::run_passes(*bad, fold, log, {janus_tools::kernel_by_name});
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message().find("node BatchNormalization -> s: error: its inputs are constants and its kernel fails "
                                   "on them: BatchNormalization.input[4]:channel 1: var + epsilon = -0.99999") == 0);
    CHECK(s.error().rule == "variance-plus-epsilon-positive");
}
