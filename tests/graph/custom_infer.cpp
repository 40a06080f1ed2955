// A compiler's own op through the IR text, verification, the passes and the importer (graph/ir.hpp InferFn): with
// the compiler's inference each of them accepts an op the registry does not know and still checks its output type;
// with the default (ops::infer_by_name) each refuses it, naming the op. The op here is "Rectify", typed and run as
// Relu under another name: what is tested is the plumbing, not a kernel (examples/custom_op has a real one).
#include <doctest/doctest.h>

#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <janus/graph/compile.hpp>
#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>
#include <janus/ops/unary.hpp>

#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace {

using namespace janus;

constexpr std::string_view rectify = "Rectify";

Result<ops::TensorType> infer(std::string_view op, std::span<const ops::TensorType> in, const ops::AttrMap& attrs) {
    if (op == rectify) return ops::infer_with<ops::Relu>(in, attrs);
    return ops::infer_by_name(op, in, attrs);
}

Result<Tensor> kernel(std::string_view op, std::span<const Tensor> in, const ops::AttrMap& attrs,
                      std::optional<ops::TensorType> out, const ops::OpContext& ctx) {
    if (op == rectify) return ops::call_with<ops::Relu>(in, attrs, std::move(out), ctx);
    return janus_tools::kernel_by_name(op, in, attrs, std::move(out), ctx);
}

// %k reads a constant only: fold-constants evaluates it with the compiler's kernel.
constexpr std::string_view text = R"(graph custom {
  input %x: int8[1,4] q(int8 s=0.5 zp=0)
  const %c: int8[4] q(int8 s=0.5 zp=3) = 0x0580fe07
  %r: int8[1,4] q(int8 s=0.5 zp=0) = Rectify(%x)
  %k: int8[4] q(int8 s=0.5 zp=3) = Rectify(%c)
  %y: int8[1,4] q(int8 s=0.25 zp=0) = Add(%r, %k)
  output %y
}
)";

const char* const unknown = "custom.ir:4:3: error: Rectify: Janus has no operator named 'Rectify' [known-op]";

std::string replaced(std::string_view s, std::string_view from, std::string_view to) {
    std::string r(s);
    const auto at = r.find(from);
    REQUIRE(at != std::string::npos);
    return r.replace(at, from.size(), to);
}

onnx::Tensor scalar(std::string name, DType d, const void* v) {
    onnx::Tensor t{std::move(name), d, {}, std::vector<std::uint8_t>(dtype_size(d)), 0};
    std::memcpy(t.data.data(), v, t.data.size());
    return t;
}

/// x (float [1,4]) -> QuantizeLinear -> DequantizeLinear -> `op` -> QuantizeLinear -> DequantizeLinear -> y.
onnx::Model qdq_model(const std::string& op) {
    onnx::Model m;
    m.ir_version = 7;
    m.opsets = {{"", 13}};
    m.graph.name = "qdq_" + op;
    const float s = 0.5f;
    const std::int8_t zp = 0;
    m.graph.initializers = {scalar("s", DType::f32, &s), scalar("zp", DType::i8, &zp)};
    const auto node = [](std::string type, std::vector<std::string> in, std::string out) {
        onnx::Node n;
        n.name = type + "_" + out;
        n.op_type = std::move(type);
        n.inputs = std::move(in);
        n.outputs = {std::move(out)};
        return n;
    };
    m.graph.nodes = {node("QuantizeLinear", {"x", "s", "zp"}, "xq"), node("DequantizeLinear", {"xq", "s", "zp"}, "xd"),
                     node(op, {"xd"}, "r"), node("QuantizeLinear", {"r", "s", "zp"}, "rq"),
                     node("DequantizeLinear", {"rq", "s", "zp"}, "y")};
    const auto io = [](std::string name) {
        return onnx::ValueInfo{std::move(name), 1, true, {onnx::Dim{1, ""}, onnx::Dim{4, ""}}, 0};
    };
    m.graph.inputs = {io("x")};
    m.graph.outputs = {io("y")};
    return m;
}

}  // namespace

TEST_CASE("the IR text and verify type an op of the compiler's own with its InferFn, and only with it") {
    const auto refused = graph::parse(text, "custom.ir");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message() == unknown);

    const auto g = graph::parse(text, "custom.ir", &infer);
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message()));
    CHECK(graph::print(*g) == text);
    CHECK(graph::verify(*g, {}, {}, &infer).ok());
    const Status v = graph::verify(*g);
    REQUIRE_FALSE(v.ok());
    CHECK(v.error().rule == "known-op");
    CHECK(v.error().message().find("Rectify") != std::string::npos);

    // the compiler's inference checks its op's output type like any other: Relu keeps the shape
    const auto wrong = graph::parse(replaced(text, "%r: int8[1,4]", "%r: int8[1,3]"), "custom.ir", &infer);
    REQUIRE_FALSE(wrong.ok());
    CHECK(wrong.error().message() ==
          "custom.ir:4:3: error: output r is int8[1,3] q(int8 s=0.5 zp=0) but Rectify computes int8[1,4] "
          "[ir-output-type]");
}

TEST_CASE("the passes verify with PassContext::infer and evaluate the op with PassContext::kernel") {
    auto g = graph::parse(text, "custom.ir", &infer);
    REQUIRE(g.ok());
    const auto inputs = graph::seeded_inputs(*g, 3);
    const auto before = graph::run_reference(*g, inputs, &kernel);
    REQUIRE(before.ok());

    graph::Graph h = *g;
    graph::PassLog log;
    const Status s = graph::run_passes(h, graph::default_pipeline, log, {.kernel = &kernel, .infer = &infer});
    REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message()));
    // %k folded with the compiler's kernel, %r kept
    bool folded = false;
    for (const auto& line : log) folded = folded || line.starts_with("fold-constants: Rectify -> k");
    CHECK_MESSAGE(folded, graph::print(h));
    REQUIRE(h.nodes.size() == 2);
    CHECK(h.nodes[0].op == rectify);
    const auto after = graph::run_reference(h, inputs, &kernel);
    REQUIRE(after.ok());
    CHECK(*(*after)[0].clone().storage == *(*before)[0].clone().storage);

    // the same pipeline verifying with the registry's inference stops after the first pass, naming the op
    graph::Graph d = *g;
    graph::PassLog dlog;
    const Status r = graph::run_passes(d, graph::default_pipeline, dlog, {.kernel = &kernel});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().input == "pass fold-constants");
    CHECK(r.error().rule == "known-op");
    CHECK(r.error().detail.find("Rectify: Janus has no operator named 'Rectify'") != std::string::npos);
}

TEST_CASE("a package whose host section holds the compiler's op: written and planned with its InferFn") {
    const auto g = graph::parse(text, "custom.ir", &infer);
    REQUIRE(g.ok());
    const auto lowered = graph::lower_graph(*g);  // no lowering of Rectify: it runs on the host
    REQUIRE(lowered.ok());
    // the host section is verified when the package is made: with the registry's inference it is refused
    const auto refused = graph::compile_package(*g, *lowered);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().rule == "known-op");
    const auto p = graph::compile_package(*g, *lowered, &infer);
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error().message()));
    const auto bytes = package::write_package(*p, "custom.jpk");
    REQUIRE(bytes.ok());
    const auto back = package::read_package(*bytes, "custom.jpk");
    REQUIRE(back.ok());
    // rule: host_plan types the section with the inference it is given (known-op names the op without it)
    const auto none = graph::host_plan(*back, "custom.jpk");
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().rule == "known-op");
    CHECK(none.error().input == "custom.jpk host section");
    const auto h = graph::host_plan(*back, "custom.jpk", &infer);
    REQUIRE_MESSAGE(h.ok(), (h.ok() ? "" : h.error().message()));
    const auto inputs = graph::seeded_inputs(*g, 5);
    const auto got = graph::run_package(*back, *h, inputs, &kernel, &janus_test::simulate);
    REQUIRE_MESSAGE(got.ok(), (got.ok() ? "" : got.error().message()));
    const auto want = graph::run_reference(*g, inputs, &kernel);
    REQUIRE(want.ok());
    CHECK(*(*got)[0].clone().storage == *(*want)[0].clone().storage);
}

TEST_CASE("the importer takes an ONNX op the compiler's InferFn knows, quantized inside QDQ") {
    const onnx::Model m = qdq_model("Rectify");
    const auto refused = graph::import_onnx(m, "custom.onnx");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().rule == "onnx-op");
    CHECK(refused.error().unsupported());
    CHECK(refused.error().message().find("(Rectify)") != std::string::npos);

    const auto g = graph::import_onnx(m, "custom.onnx", &infer);
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message()));
    int found = 0;
    for (const auto& n : g->nodes)
        if (n.op == rectify) {
            ++found;
            CHECK(n.target == graph::Target::any);  // on the int8 tensors, not on the host in float
            CHECK(g->value(n.inputs[0]).type.dtype == DType::i8);
            CHECK(g->value(n.outputs[0]).type.quant.has_value());
        }
    CHECK(found == 1);

    // an op of Janus's own IR stays refused as an ONNX op type, whatever the compiler's inference knows
    const auto internal = graph::import_onnx(qdq_model("Requantize"), "custom.onnx", &infer);
    REQUIRE_FALSE(internal.ok());
    CHECK(internal.error().rule == "onnx-op");
    CHECK(internal.error().message().find("an op of Janus's own IR") != std::string::npos);
}
