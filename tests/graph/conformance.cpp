// janusc conform's result lines (graph/conformance.hpp): what line() writes parses back, every malformed line is
// refused with its line number and reason, and janusc support's node-tests cell counts them per op.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <janus/graph/conformance.hpp>
#include <janus/graph/support.hpp>

namespace conformance_test {
namespace {

using janus::graph::ConformanceResult;
using janus::graph::parse_conformance;

TEST_CASE("conformance lines: line() and parse_conformance are inverse") {
    const std::vector<ConformanceResult> rs{
        {"test_a", {"Abs"}, "pass", "", 0, 0},
        {"test_b", {"Conv", "DequantizeLinear"}, "pass", "host", 2, 1},
        {"test_c", {"Relu"}, "refused(onnx-opset)", "fail(values)", 0, 1},
        {"test_d", {"Max"}, "fail(shape)", "", 3, 0},
    };
    std::string text;
    for (const auto& r : rs) text += r.line() + "\n";
    CHECK(text ==
          "test_a ops=Abs ref=pass\n"
          "test_b ops=Conv,DequantizeLinear ref=pass npu=host bound=2+1\n"
          "test_c ops=Relu ref=refused(onnx-opset) npu=fail(values) bound=0+1\n"
          "test_d ops=Max ref=fail(shape) bound=3\n");
    const auto back = parse_conformance(text, "r.txt");
    REQUIRE(back.ok());
    CHECK(*back == rs);
    CHECK(parse_conformance("", "r.txt")->empty());
}

TEST_CASE("conformance lines: each malformed line is refused with its line and reason") {
    const std::string good = "test_a ops=Abs ref=pass\n";
    const auto error = [&](const std::string& text) {
        const auto r = parse_conformance(text, "r.txt");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().rule == "conformance-line");
        return r.error().message();
    };
    CHECK(error(good + "test_b ops=Abs ref=pass") ==
          "r.txt:line 2: error: the last line does not end with a newline [conformance-line]");
    CHECK(error(good + good) ==
          "r.txt:line 2: error: test 'test_a' is not after 'test_a' (the lines are sorted, unique) "
          "[conformance-line]");
    CHECK(error("test_a ref=pass\n") ==
          "r.txt:line 1: error: expected ops=OP[,OP...] after the test name [conformance-line]");
    CHECK(error("test_a ops=Relu,Abs ref=pass\n").find("not sorted and unique") != std::string::npos);
    CHECK(error("test_a ops=Abs,,Relu ref=pass\n").find("empty or not of") != std::string::npos);
    CHECK(error("test_a ops=Abs ref=host\n").find("expected ref=pass") != std::string::npos);
    CHECK(error("test_a ops=Abs ref=fail()\n").find("expected ref=pass") != std::string::npos);
    CHECK(error("test_a ops=Abs ref=pass npu=maybe\n").find("npu= is not") != std::string::npos);
    CHECK(error("test_a ops=Abs ref=pass bound=0\n").find("bound= is not") != std::string::npos);
    CHECK(error("test_a ops=Abs ref=pass bound=1+0\n").find("bound= is not") != std::string::npos);
    CHECK(error("test_a ops=Abs ref=pass bound=007\n").find("bound= is not") != std::string::npos);
    CHECK(error("test_a ops=Abs ref=pass color=red\n") ==
          "r.txt:line 1: error: unexpected field 'color=red' (the fields are ops=, ref=, npu=, bound=) "
          "[conformance-line]");
    CHECK(error("test_a  ops=Abs ref=pass\n").find("expected ops=") != std::string::npos);
    CHECK(error("test a ops=Abs ref=pass\n").find("expected ops=") != std::string::npos);
    CHECK(error("\n").find("expected a test name") != std::string::npos);
}

TEST_CASE("janusc support's node-tests cell: passed of claimed per op, on each engine") {
    janus::graph::ExternalEvidence ext;
    CHECK(janus::graph::node_tests_cell("Abs", ext) == "unconfirmed");
    ext.node_tests = std::vector<ConformanceResult>{
        {"test_a", {"Abs"}, "pass", "", 0, 0},
        {"test_b", {"Abs", "Relu"}, "refused(onnx-opset)", "", 0, 0},
        {"test_c", {"DequantizeLinear"}, "pass", "host", 2, 0},
        {"test_d", {"DequantizeLinear", "MatMul"}, "pass", "pass", 2, 1},
    };
    CHECK(janus::graph::node_tests_cell("Abs", ext) == "ref 1/2");
    CHECK(janus::graph::node_tests_cell("Relu", ext) == "ref 0/1");
    CHECK(janus::graph::node_tests_cell("DequantizeLinear", ext) == "ref 2/2, npu 1/2 (host 1)");
    CHECK(janus::graph::node_tests_cell("Gelu", ext) == "unconfirmed (no node test)");
}

}  // namespace
}  // namespace conformance_test
