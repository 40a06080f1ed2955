// The IR text form: print -> parse -> print is the identity on every imported fixture (constants in hex), parsed
// graphs are verified, and every malformed text in tests/graph/bad_ir/ gets its exact error.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include <janus/core/limits.hpp>
#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/parse.hpp>

#include "support/text_file.hpp"
#include "support/expected_errors.hpp"

namespace {

namespace fs = std::filesystem;
using namespace janus;

}  // namespace

TEST_CASE("print -> parse -> print is the identity on every imported fixture") {
    int n = 0;
    for (const auto& e : fs::directory_iterator("onnx/fixtures")) {
        if (e.path().extension() != ".onnx") continue;
        CAPTURE(e.path().string());
        const auto m = onnx::read_model_file(e.path().string());
        REQUIRE(m.ok());
        const auto g = graph::import_onnx(*m, e.path().string());
        REQUIRE(g.ok());
        const std::string text = graph::print(*g);
        // the small graphs are also golden text files (and the seeds of fuzz/ir_parse)
        const std::string stem = e.path().stem().string();
        if (stem != "mobilenet_v2_tiny") {
            const fs::path golden = fs::path("graph/text") / (stem + ".ir");
            if (std::getenv("JANUS_UPDATE_GOLDEN") != nullptr) {
                fs::create_directories(golden.parent_path());
                std::ofstream(golden, std::ios::binary) << text;
            }
            CHECK(janus_test::read_text(golden) == text);
        }
        const auto back = graph::parse(text, "roundtrip.ir");
        REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error().message()));
        CHECK(graph::print(*back) == text);
        // the parsed graph holds the same constants, bit for bit (values are matched by name: the text lists
        // constants before nodes, the importer creates them as it meets them)
        REQUIRE(back->values.size() == g->values.size());
        for (const auto& v : g->values) {
            if (!v.data) continue;
            const auto id = back->find(v.name);
            REQUIRE(id != graph::no_value);
            CHECK(*back->value(id).data->storage == *v.data->storage);
        }
        ++n;
    }
    CHECK(n == 11);
}

TEST_CASE("hand-written text: comments, quoted names, every attribute kind, targets and origins") {
    const std::string text =
        "graph \"a graph\" {\n"
        "  ; a comment line\n"
        "  input %\"x y\": float32[2,3]\n"
        "  const %c: float32[3] = 0x0000803f0000004000004040\n"
        "  %s: float32[2,3] = Add(%\"x y\", %c) @host  # add node\n"
        "  %r: float32[3,2] = Reshape(%s) {allowzero=0, shape=[3,2]}\n"
        "  %k: float32[3,2] = Clip(%r) {max=inff, min=-1.5f}\n"
        "\n"
        "  output %k\n"
        "}\n";
    const auto g = graph::parse(text, "hand.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message()));
    CHECK(g->name == "a graph");
    CHECK(g->value(g->inputs[0]).name == "x y");
    CHECK(g->nodes[0].target == graph::Target::host);
    CHECK(g->nodes[0].origin == "add node");
    CHECK(std::get<std::vector<std::int64_t>>(g->nodes[1].attrs.at("shape")) == std::vector<std::int64_t>{3, 2});
    CHECK(std::get<float>(g->nodes[2].attrs.at("min")) == -1.5f);
    CHECK(std::isinf(std::get<float>(g->nodes[2].attrs.at("max"))));
    CHECK(g->value(g->find("c")).data->to_vector<float>() == std::vector<float>{1.f, 2.f, 3.f});
    // printing is canonical: a second round trip is stable
    const std::string once = graph::print(*g);
    const auto again = graph::parse(once, "once.ir");
    REQUIRE(again.ok());
    CHECK(graph::print(*again) == once);
}

TEST_CASE("every malformed text in graph/bad_ir gets its exact error") {
    janus_test::check_expected_errors("graph/bad_ir", [](const std::string& path) -> std::optional<Error> {
        const auto g = graph::parse(janus_test::read_text(path), path);
        if (g.ok()) return std::nullopt;
        return g.error();
    });
}

TEST_CASE("positions of a long text: the line and column of an error after thousands of nodes, and of verify's") {
    // Parser::position() tracks the line incrementally (issue 26: it rescanned the text per node). Errors reported
    // at the start of a token step back from where the parser stands; both directions must give the exact place.
    const auto chain = [](int n) {
        std::string t = "graph g {\n  input %x: float32[4]\n";
        for (int k = 0; k < n; ++k)
            t += "  %r" + std::to_string(k) + ": float32[4] = Relu(%" + (k ? "r" + std::to_string(k - 1) : "x") +
                 ")\n";
        return t;
    };
    {  // a forward error on the last node's line: line n + 3 (graph, input, n nodes)
        const std::string text = chain(3000) + "  %bad: float32[4] = Relu(%r2999) junk\n  output %bad\n}\n";
        const auto g = graph::parse(text, "long.ir");
        REQUIRE_FALSE(g.ok());
        CHECK(g.error().message() == "long.ir:3003:35: error: expected the end of the line, found 'j' [ir-syntax]");
    }
    {  // an error at the start of a name the parser has already read (a step back within the line)
        const std::string text = chain(3000) + "  %r5: float32[4] = Relu(%r2999)\n  output %r5\n}\n";
        const auto g = graph::parse(text, "long.ir");
        REQUIRE_FALSE(g.ok());
        CHECK(g.error().message() == "long.ir:3003:3: error: %r5 is defined twice [ir-name]");
    }
    {  // verify's error names the node's recorded position (one per node, recorded as the parse goes)
        std::string text = chain(2000) + "  %y: float32[5] = Relu(%r1999)\n  output %y\n}\n";
        const auto g = graph::parse(text, "long.ir");
        REQUIRE_FALSE(g.ok());
        CHECK(g.error().rule == "ir-output-type");
        CHECK(g.error().position == "2003:3");
    }
}

// The reference engine keeps every value, so what a run holds is the sum of all values' bytes, and one kernel's
// scratch at a time; janusc charges both against its memory budget before running (issue 26: an 89-byte model
// expanded one float into 4 GiB; a 289-byte one average-pooled 121 MiB with 1.3 GB of kernel scratch).
TEST_CASE("reference_run_bytes: every value's dense bytes and the largest kernel's scratch bound, checked before a run") {
    const auto g = janus::graph::parse(R"(graph t {
  input %x: float32[2,3]
  const %c: int8[4] q(int8 s=0.5 zp=0) = 0x01020304
  %y: float32[2,3] = Relu(%x)
  %z: float32[2,3] = Add(%x, %y)
  output %z
})",
                                       "t.ir");
    REQUIRE(g.ok());
    CHECK(janus::graph::reference_value_bytes(*g) == 24 + 4 + 24 + 24);
    // the largest node: Add, 3 tensors of 6 elements
    CHECK(janus::graph::reference_scratch_bytes(*g) ==
          janus::ops::kernel_scratch_fixed + 18 * janus::ops::kernel_scratch_per_element);
    CHECK(janus::graph::reference_run_bytes(*g) ==
          janus::graph::reference_value_bytes(*g) + janus::graph::reference_scratch_bytes(*g));
    const auto m = janus::onnx::read_model_file("hostile/expand_4gib.onnx");
    REQUIRE(m.ok());
    const auto h = janus::graph::import_onnx(*m, "expand_4gib.onnx");
    REQUIRE(h.ok());
    // the float32 [2^15, 2^15] output and c (Expand's constant shape becomes an attribute at import)
    const std::uint64_t want = (std::uint64_t{1} << 32) + 4;
    CHECK(janus::graph::reference_value_bytes(*h) == want);
    const auto s = janus::charge_memory(want, janus::default_max_memory, "expand_4gib.onnx", "the reference run");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().rule == "memory-limit");
}
