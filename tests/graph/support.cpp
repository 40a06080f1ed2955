// The op support table (graph/support.hpp, janusc support; seeds D10, D11): every op has a probe that parses in each
// of its forms; the probes' evidence is measured (a kernel that disagrees with the NPU loses "bit-exact", a refusal
// is reported with its rule, an op kept on the host is not called lowered); the importer's table refuses internal
// ops; the Markdown says "unconfirmed" where evidence is missing.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <janus/graph/support.hpp>

#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace support_test {

using namespace janus;
using graph::ProbeForm;
using graph::ProbeResult;

const graph::ProbeSpec& spec(std::string_view op) {
    for (const auto& p : graph::probe_specs())
        if (p.op == op) return p;
    FAIL("no probe for ", std::string(op));
    return graph::probe_specs().front();
}

ProbeResult probe(std::string_view op, ProbeForm f, graph::KernelFn kernel = janus_tools::kernel_by_name) {
    auto r = graph::run_probe(spec(op), f, kernel, janus_test::simulate);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message()));
    return *r;
}

/// The registry's kernels, except that Relu's output is one code higher everywhere (a wrong reference).
Result<Tensor> off_by_one_relu(std::string_view op, std::span<const Tensor> in, const ops::AttrMap& attrs,
                               std::optional<ops::TensorType> out, const ops::OpContext& ctx) {
    JANUS_TRY(Tensor t, janus_tools::kernel_by_name(op, in, attrs, std::move(out), ctx));
    if (op == "Relu")
        for (auto& b : *t.storage) b = static_cast<std::byte>(std::to_integer<int>(b) + 1);
    return t;
}

TEST_CASE("every registry op has one probe, and every probe parses in each of its forms") {
    std::set<std::string_view> seen;
    for (const auto& p : graph::probe_specs()) {
        CHECK_MESSAGE(seen.insert(p.op).second, "two probes for ", std::string(p.op));
        CHECK(std::find(ops::op_names.begin(), ops::op_names.end(), p.op) != ops::op_names.end());
        for (ProbeForm f : {ProbeForm::int8, ProbeForm::float32}) {
            if ((f == ProbeForm::int8 && !p.int8) || (f == ProbeForm::float32 && !p.float32)) continue;
            const std::string text = graph::probe_text(p, f);
            CHECK(text.find('$') == std::string::npos);
            CHECK(text == graph::probe_text(p, f));  // deterministic
            const auto g = graph::parse(text, "probe");
            CHECK_MESSAGE(g.ok(), std::string(p.op), " ", std::string(graph::form_name(f)), ": ",
                          (g.ok() ? std::string() : g.error().message()));
            if (g.ok()) {
                REQUIRE(g->nodes.size() == 1);
                CHECK(g->nodes[0].op == p.op);
            }
        }
    }
    CHECK(seen.size() == ops::op_count);
}

TEST_CASE("the expansion of the placeholders: types, quantization and constant bytes") {
    const graph::ProbeSpec conv{"Conv",
                                "input %x: $x[1,1,2,2]\n  const %w: $w[1,1,1,1]\n  const %b: $b[1]\n"
                                "  %y: $y[1,1,2,2] = OP(%x, %w, %b) {kernel_shape=[1,1]}"};
    CHECK(graph::probe_text(conv, ProbeForm::int8) ==
          "graph probe_Conv_int8 {\n  input %x: int8[1,1,2,2] q(int8 s=0.05 zp=-3)\n"
          "  const %w: int8[1,1,1,1] q(int8 s=0.02 zp=0) = 0xf3\n"
          "  const %b: int32[1] q(int32 s=0.001 zp=0) = 0x9cffffff\n"
          "  %y: int8[1,1,2,2] q(int8 s=0.07 zp=2) = Conv(%x, %w, %b) {kernel_shape=[1,1]}\n  output %y\n}\n");
    // float32: -13 / 32 = -0.40625 = 0xbed00000; -100 / 1000 = -0.1 = 0xbdcccccd (little-endian bytes)
    CHECK(graph::probe_text(conv, ProbeForm::float32) ==
          "graph probe_Conv_float32 {\n  input %x: float32[1,1,2,2]\n  const %w: float32[1,1,1,1] = 0x0000d0be\n"
          "  const %b: float32[1] = 0xcdccccbd\n"
          "  %y: float32[1,1,2,2] = Conv(%x, %w, %b) {kernel_shape=[1,1]}\n  output %y\n}\n");
}

TEST_CASE("probe evidence is measured: lowered and bit-exact, kept on the host, refused with the rule") {
    const auto relu = probe("Relu", ProbeForm::int8);
    CHECK(relu.reference);
    CHECK(relu.lowering == ProbeResult::Lowering::npu);
    CHECK(relu.bit_exact);

    const auto conv = probe("Conv", ProbeForm::int8);
    CHECK(conv.lowering == ProbeResult::Lowering::npu);
    CHECK(conv.bit_exact);

    const auto argmax = probe("ArgMax", ProbeForm::int8);
    CHECK(argmax.reference);
    CHECK(argmax.lowering == ProbeResult::Lowering::host);
    CHECK_FALSE(argmax.bit_exact);

    const auto softmax = probe("Softmax", ProbeForm::int8);
    CHECK(softmax.reference);
    CHECK(softmax.lowering == ProbeResult::Lowering::refused);
    CHECK(softmax.lowering_detail.rfind("lower-op:", 0) == 0);
    CHECK_FALSE(softmax.bit_exact);

    const auto squeeze = probe("Squeeze", ProbeForm::int8);
    CHECK(squeeze.lowering == ProbeResult::Lowering::refused);
    CHECK(squeeze.lowering_detail.rfind("lower-layout:", 0) == 0);

    const auto fl = probe("Relu", ProbeForm::float32);
    CHECK(fl.reference);
    CHECK(fl.lowering == ProbeResult::Lowering::not_tried);
}

TEST_CASE("negative control: a reference that disagrees with the NPU by one code loses bit-exact") {
    const auto r = probe("Relu", ProbeForm::int8, &off_by_one_relu);
    CHECK(r.lowering == ProbeResult::Lowering::npu);
    CHECK_FALSE(r.bit_exact);
    CHECK(r.simulation_detail == "64 elements differ from the reference");
}

TEST_CASE("the importer's table: internal ops and unknown names are refused, importer-only ops are named") {
    CHECK(graph::onnx_import_form("Requantize").empty());
    CHECK(graph::onnx_import_form("Einsum").empty());
    CHECK_FALSE(graph::onnx_import_form("Relu").empty());
    for (auto op : graph::importer_only_ops) {
        CHECK_FALSE(graph::onnx_import_form(op).empty());
        CHECK(std::find(ops::op_names.begin(), ops::op_names.end(), op) == ops::op_names.end());
    }
    for (auto op : graph::internal_ops)
        CHECK(std::find(ops::op_names.begin(), ops::op_names.end(), op) != ops::op_names.end());
}

TEST_CASE("the Markdown: a row per ONNX op, unconfirmed where evidence is missing, the fuzzed ops when given") {
    std::vector<ProbeResult> results{probe("Relu", ProbeForm::int8), probe("Softmax", ProbeForm::int8)};
    const std::string none = graph::support_markdown(results, {});
    CHECK(none.find("| Relu | op: int8 inside QDQ") != std::string::npos);
    CHECK(none.find("| int8 | lowered (`tests/emit/elementwise.cpp`) | npu | yes | unconfirmed | unconfirmed |") !=
          std::string::npos);
    CHECK(none.find("| Softmax | op: int8") != std::string::npos);
    CHECK(none.find("refused: `lower-op` | unconfirmed |") != std::string::npos);
    CHECK(none.find("- Softmax int8 probe, lowering refused: lower-op: ") != std::string::npos);
    // an op without a probe result (Abs here) has nothing measured
    CHECK(
        none.find("| Abs | op: int8 inside QDQ, else float32 | unconfirmed | lowered (`tests/emit/elementwise.cpp`) | "
                  "unconfirmed | unconfirmed |") != std::string::npos);
    CHECK(none.find("| QLinearConv | QOperator") != std::string::npos);
    CHECK(none.find("| Requantize | int8 |") == std::string::npos);  // internal: its own table, no probe given
    CHECK(none.find("| Requantize | unconfirmed |") != std::string::npos);

    graph::ExternalEvidence ext;
    ext.fuzzed_ops.emplace();
    graph::ops_in_ir("graph g {\n  input %x: float32[2]\n  %y: float32[2] = Relu(%x)\n  output %y\n}\n",
                     *ext.fuzzed_ops);
    graph::ops_in_ir("graph h {\n  %y: float32[2] = Sigmoid(%x)\n}\n", *ext.fuzzed_ops);  // does not parse
    CHECK(*ext.fuzzed_ops == std::set<std::string, std::less<>>{"Relu"});
    const std::string fuzzed = graph::support_markdown(results, ext);
    CHECK(fuzzed.find("| npu | yes | unconfirmed | graph_diff |") != std::string::npos);
}

}  // namespace support_test
