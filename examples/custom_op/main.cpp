// Custom op: define ONNX Softsign, y = x / (1 + |x|), in one short definition and get both host kernels from it,
// then build a small compiler of its own around it: its type inference (graph::InferFn), its host kernel
// (graph::KernelFn) and its NPU lowering (graph::LowerOptions::lowerings) hand every other op to Janus's. It compiles
// Softsign from a graph built in code, from the IR text (which the registry's inference refuses, naming the op) and
// from an ONNX model (softsign_qdq.onnx, written by make_model.py), the last two through the default passes, and
// runs each on both engines: every value bit-identical. A package with Softsign in its host section runs with the
// compiler's inference and kernel (graph::host_plan, graph::run_package).
//
// `unary_elementwise` (ops/unary.hpp) turns the op's float element expression `math` into
//   - the float32 kernel:   map(math(x)), vectorized with xsimd, scalar path bit-identical;
//   - the quantized kernel: a 256-entry table, entry q = quantize_out(math(dequantize_in(q))), so quantized Softsign
//     equals "dequantize -> float Softsign -> quantize" exactly, for int8 and uint8, with the caller's output
//     quantization (never the input's).
// The program runs both kernels, checks them against a plain reference written here (float: within 3e-7 relative of
// a double computation; quantized: exactly the same float steps written out by hand), prints a few values and exits
// with 1 on any mismatch or failure. Why this is a unary op and what a binary custom op (SquaredDifference) would
// need: README.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/graph/compile.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>
#include <janus/onnx/model.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "kernels.hpp"  // janus_tools::kernel_by_name: the registry's kernels, compiled once (ops/dispatch.hpp)

namespace example {

using namespace janus;

/// ONNX Softsign (opset 1): the whole definition.
struct Softsign : ops::unary_elementwise<Softsign> {
    static constexpr fixed_string name = "Softsign";
    using Attrs = ops::NoAttrs;
    static constexpr auto schema = ops::no_attrs_schema;
    template <expr::Expr X>
    static auto math(X x, const Attrs&) {
        using namespace expr;
        return div(x, add(cstf(1), abs(x)));
    }
};
static_assert(ops::Op<Softsign>, "Softsign satisfies the op concept: name, arity, attributes, infer, run");

// ---- A small compiler of our own that knows Softsign, on both engines ----
// Types: an inference function (graph::InferFn) that types Softsign and hands every other op to the registry's. The
// IR parser, graph::verify, the passes (PassContext::infer) and the ONNX importer take it.
Result<ops::TensorType> infer(std::string_view op, std::span<const ops::TensorType> in, const ops::AttrMap& attrs) {
    if (op == Softsign::name.view()) return ops::infer_with<Softsign>(in, attrs);
    return ops::infer_by_name(op, in, attrs);
}

// Host: a kernel function (graph::KernelFn) that runs Softsign and hands every other op to the registry's kernels.
Result<Tensor> kernel(std::string_view op, std::span<const Tensor> in, const ops::AttrMap& attrs,
                      std::optional<ops::TensorType> out, const ops::OpContext& ctx) {
    if (op == Softsign::name.view()) return ops::call_with<Softsign>(in, attrs, std::move(out), ctx);
    return janus_tools::kernel_by_name(op, in, attrs, std::move(out), ctx);
}

// NPU: Softsign's own table, the one its quantized host kernel maps through, on the LUT unit (emit::lower_lut).
Status lower_softsign(graph::NodeLowering& nl) {
    const auto& in = nl.types()[0];
    const auto& out = nl.output().type;
    if (!in.quant || !out.quant)
        return make_error(nl.what(), "", "softsign-quantized", "Softsign lowers on quantized int8 tensors");
    JANUS_TRY(const Softsign::Plan table, Softsign::plan(nl.types(), Softsign::Attrs{}, out, nl.rounding()));
    const graph::Placement x = nl.input(0);
    const graph::Placement y = nl.place_output(nl.form());
    nl.log("lower_lut (Softsign's table)");
    return nl.named(emit::lower_lut(nl.builder(), *table, x.flat(), y.flat()));
}
// The compiler's own lowerings, found before Janus's built-in ones (graph::LowerOptions::lowerings).
const graph::OpLowering lowerings[] = {{Softsign::name.view(), &lower_softsign, graph::Fuses::no}};

vnpu::sim::Report simulate(std::span<const vnpu::Instr> program, vnpu::sim::Machine& machine,
                           vnpu::sim::Options options) {
    return vnpu::sim::run(program, machine, std::move(options));
}

/// Run Janus's default pass pipeline with the compiler's kernel (fold-constants evaluates nodes with it) and its
/// inference (the graph is verified after each pass); print the log.
Status optimize(graph::Graph& g) {
    graph::PassLog log;
    JANUS_CHECK(graph::run_passes(g, graph::default_pipeline, log, {.kernel = &kernel, .infer = &infer}));
    for (const auto& line : log) std::printf("  %s\n", line.c_str());
    return ok_status();
}

/// Lower `g`, run it on the host reference kernels and on the NPU (simulated): every value must be bit-identical,
/// with every quantized node, Softsign included, on the NPU. Returns the number of failures.
int npu_check(const graph::Graph& g) {
    const auto l = graph::lower_graph(g, graph::LowerOptions{true, true, lowerings});
    if (!l.ok()) {
        std::printf("lowering failed: %s\n", l.error().message().c_str());
        return 1;
    }
    std::printf("%s", graph::placement_text(g, *l).c_str());
    int failures = 0;
    for (const auto& h : l->host_placements) failures += h.quantized ? 1 : 0;  // refused on the NPU
    const auto in = graph::seeded_inputs(g, 7);
    const auto v = graph::verify_engines(g, *l, in, &kernel, &simulate);
    if (!v.ok()) {
        std::printf("the NPU run failed: %s\n", v.error().message().c_str());
        return failures + 1;
    }
    for (const auto& d : v->values) {
        std::printf("  %-16s %s: %s\n", g.nodes[d.node].op.c_str(), g.value(d.value).name.c_str(),
                    d.differing == 0 ? "bit-identical on the NPU and the host" : "DIFFERS");
        failures += d.differing == 0 ? 0 : 1;
    }
    std::printf("npu: %zu instructions, %llu cycles, %s\n", l->program.code.size(),
                static_cast<unsigned long long>(v->report.cycles),
                v->report.races.empty() && !v->report.fault ? "no fault, no race" : "FAULT OR RACE");
    return failures + (v->report.races.empty() && !v->report.fault ? 0 : 1);
}

/// A graph of ours (parsed or imported with our inference) through the passes, then npu_check. Returns the number of
/// failures.
int optimize_and_check(Result<graph::Graph> g) {
    const Status s = g.ok() ? optimize(*g) : Status(g.error());
    if (!s.ok()) {
        std::printf("failed: %s\n", s.error().message().c_str());
        return 1;
    }
    return npu_check(*g);
}

/// What the registry's inference makes of the same input: a refusal with `rule`, naming Softsign. Returns the number of
/// failures.
template <class T>
int refused(const Result<T>& g, std::string_view rule) {
    std::printf("with the registry's inference: %s\n", g.ok() ? "ACCEPTED" : g.error().message().c_str());
    return g.ok() || g.error().rule != rule || g.error().message().find("Softsign") == std::string::npos ? 1 : 0;
}

/// A package of `g` lowered WITHOUT our lowering registry entry: Softsign runs on the host, so the package's host
/// section names it. Written to bytes and read back, it runs only with our inference (graph::host_plan) and our
/// kernel (graph::run_package), and its outputs equal the reference engine's. Returns the number of failures.
int package_check(const graph::Graph& g) {
    const auto l = graph::lower_graph(g);  // the built-in registry only: Softsign is refused, it runs on the host
    const auto p = l.ok() ? graph::compile_package(g, *l, &infer) : Result<package::Package>(l.error());
    const auto bytes =
        p.ok() ? package::write_package(*p, "softsign.jpk") : Result<std::vector<std::uint8_t>>(p.error());
    const auto back =
        bytes.ok() ? package::read_package(*bytes, "softsign.jpk") : Result<package::Package>(bytes.error());
    if (!back.ok()) {
        std::printf("package failed: %s\n", back.error().message().c_str());
        return 1;
    }
    std::printf("%s", graph::placement_text(g, *l).c_str());
    int failures = refused(graph::host_plan(*back, "softsign.jpk"), "known-op");  // the registry cannot type it
    const auto h = graph::host_plan(*back, "softsign.jpk", &infer);
    const auto in = graph::seeded_inputs(g, 11);
    const auto got = h.ok() ? graph::run_package(*back, *h, in, &kernel, &simulate)
                            : Result<std::vector<Tensor>>(h.error());
    const auto want = graph::run_reference(g, in, &kernel);
    if (!got.ok() || !want.ok()) {
        std::printf("package run failed: %s\n", (!got.ok() ? got.error() : want.error()).message().c_str());
        return failures + 1;
    }
    for (std::size_t k = 0; k < want->size(); ++k) {
        const bool same = ops::type_of((*got)[k]) == ops::type_of((*want)[k]) &&
                          (*got)[k].to_vector<std::int8_t>() == (*want)[k].to_vector<std::int8_t>();
        std::printf("  package output %zu: %s\n", k, same ? "equals the reference engine's" : "DIFFERS");
        failures += same ? 0 : 1;
    }
    return failures;
}

/// Relu -> Softsign -> Sigmoid on an int8 image, built in code.
graph::Graph graph_in_code() {
    graph::Graph g;
    g.name = "softsign_chain";
    const auto q = [](float s, std::int32_t zp) { return numeric::make_quant(DType::i8, s, zp).value(); };
    const Shape shape{1, 16, 4, 4};
    const graph::ValueId x = g.add_value("x", {DType::i8, shape, q(0.05f, -3)}, graph::ValueKind::input);
    const graph::ValueId r = g.add_value("r", {DType::i8, shape, q(0.05f, -3)}, graph::ValueKind::node);
    const graph::ValueId s = g.add_value("s", {DType::i8, shape, q(1.0f / 127.0f, 0)}, graph::ValueKind::node);
    const graph::ValueId y = g.add_value("y", {DType::i8, shape, q(1.0f / 256.0f, -128)}, graph::ValueKind::node);
    g.inputs = {x};
    g.nodes.push_back({"Relu", {}, {x}, {r}, "relu", graph::Target::any});
    g.nodes.push_back({"Softsign", {}, {r}, {s}, "softsign", graph::Target::any});
    g.nodes.push_back({"Sigmoid", {}, {s}, {y}, "sigmoid", graph::Target::any});
    g.outputs = {y};
    return g;
}

/// The same chain in the IR text form, with work for the passes: a Softsign of a constant (fold-constants evaluates
/// it with our kernel) added to the chain, and a Reshape to the same shape (remove-identity drops it).
constexpr const char* chain_text = R"(graph softsign_text {
  input %x: int8[1,16,4,4] q(int8 s=0.05 zp=-3)
  const %c: int8[1,16,1,1] q(int8 s=0.05 zp=0) = 0xf0f4f8fc00040810141820242c303840
  %r: int8[1,16,4,4] q(int8 s=0.05 zp=-3) = Relu(%x)
  %s: int8[1,16,4,4] q(int8 s=0.0078740157 zp=0) = Softsign(%r)
  %b: int8[1,16,1,1] q(int8 s=0.0078740157 zp=0) = Softsign(%c)
  %t: int8[1,16,4,4] q(int8 s=0.015625 zp=0) = Add(%s, %b)
  %u: int8[1,16,4,4] q(int8 s=0.015625 zp=0) = Reshape(%t) {shape=[1,16,4,4]}
  %y: int8[1,16,4,4] q(int8 s=0.00390625 zp=-128) = Sigmoid(%u)
  output %y
}
)";

}  // namespace example

int main() {
    using namespace janus;
    using example::Softsign;
    int failures = 0;

    // ---- float32: against a double-precision reference (two float roundings: |error| <= ~2.4e-7 relative) ----
    std::vector<float> xs;
    for (int k = -400; k <= 400; ++k) xs.push_back(static_cast<float>(k) * 0.05f);
    xs.insert(xs.end(), {1e-30f, -1e-30f, 1e6f, -1e6f, 0.0f});
    const Tensor x = Tensor::from<float>(Shape{static_cast<std::int64_t>(xs.size())}, xs);
    for (bool simd : {true, false}) {
        auto y = ops::call<Softsign>({x}, {}, std::nullopt, ops::OpContext{simd});
        if (!y.ok()) {
            std::printf("float Softsign failed: %s\n", y.error().message().c_str());
            return 1;
        }
        const auto ys = y->to_vector<float>();
        for (std::size_t k = 0; k < xs.size(); ++k) {
            const double ref = xs[k] / (1.0 + std::fabs(static_cast<double>(xs[k])));
            if (std::fabs(ys[k] - ref) > 3e-7 * std::fabs(ref)) {
                if (failures++ < 5) std::printf("float mismatch at x=%g: %.9g vs %.9g\n", xs[k], ys[k], ref);
            }
        }
        if (simd) {
            std::printf("float32 Softsign:\n");
            for (std::size_t k : {0u, 300u, 400u, 420u, 800u})
                std::printf("  x = %8.3f  ->  %.7f\n", static_cast<double>(xs[k]), static_cast<double>(ys[k]));
        }
    }

    // ---- int8 and uint8: exactly dequantize -> float Softsign -> quantize, the float steps written out by hand ----
    auto check_quantized = [&](DType d, float s_in, std::int32_t zp_in, float s_out, std::int32_t zp_out) {
        const auto qi = numeric::make_quant(d, s_in, zp_in).value();
        const auto qo = numeric::make_quant(d, s_out, zp_out).value();
        std::vector<std::int32_t> codes;
        for (std::int32_t c = qmin(d); c <= qmax(d); ++c) codes.push_back(c);
        return ops::visit_quant_dtype(d, [&](auto tag) {
            using T = typename decltype(tag)::type;
            std::vector<T> in(codes.begin(), codes.end());
            const Tensor q = Tensor::from<T>(Shape{256}, in, qi);
            for (bool simd : {true, false}) {
                auto y = ops::call<Softsign>({q}, {}, ops::TensorType{d, Shape{256}, qo}, ops::OpContext{simd});
                if (!y.ok()) {
                    std::printf("quantized Softsign failed: %s\n", y.error().message().c_str());
                    ++failures;
                    return;
                }
                const auto got = y->template to_vector<T>();
                for (std::size_t k = 0; k < 256; ++k) {
                    const float real = static_cast<float>(codes[k] - zp_in) * s_in;       // DequantizeLinear
                    const float f = real / (1.0f + std::fabs(real));                         // Softsign in float
                    const auto r = static_cast<std::int32_t>(std::nearbyint(f / s_out));     // QuantizeLinear:
                    const std::int32_t want = std::clamp(r + zp_out, qmin(d), qmax(d));      //  half to even, saturate
                    if (got[k] != want && failures++ < 5)
                        std::printf("%s mismatch at code %d: %d vs %d\n", std::string(dtype_name(d)).c_str(),
                                    codes[k], static_cast<int>(got[k]), want);
                }
                if (simd) {
                    std::printf("%s Softsign (in s=%g zp=%d, out s=%g zp=%d):\n", std::string(dtype_name(d)).c_str(),
                                static_cast<double>(s_in), zp_in, static_cast<double>(s_out), zp_out);
                    for (std::size_t k : {0u, 64u, 128u, 192u, 255u})
                        std::printf("  q = %4d (x = %7.3f)  ->  %4d (y = %.4f)\n", codes[k],
                                    static_cast<double>(s_in) * (codes[k] - zp_in), static_cast<int>(got[k]),
                                    static_cast<double>(s_out) * (got[k] - zp_out));
                }
            }
        });
    };
    check_quantized(DType::i8, 0.1f, 0, 1.0f / 127.0f, 0);
    check_quantized(DType::u8, 0.05f, 100, 2.0f / 255.0f, 128);

    // ---- the same op through a compiler's own lowering registry entry: on the NPU, bit-identical to the host ----
    std::printf("\n-- a graph built in code --\n");
    failures += example::npu_check(example::graph_in_code());

    // ---- a package with Softsign in its host section: read back, it runs with our inference and kernel ----
    std::printf("\n-- a package, Softsign on the host --\n");
    failures += example::package_check(example::graph_in_code());

    // ---- in the IR text: refused by the registry's inference, parsed with ours, through the passes ----
    std::printf("\n-- the IR text, parsed --\n");
    failures += example::refused(graph::parse(example::chain_text, "softsign.ir"), "known-op");
    failures += example::optimize_and_check(graph::parse(example::chain_text, "softsign.ir", &example::infer));

    // ---- an ONNX model (make_model.py): the same, imported ----
    std::printf("\n-- softsign_qdq.onnx, imported --\n");
    const auto model = onnx::read_model_file("softsign_qdq.onnx");
    if (!model.ok()) {
        std::printf("%s\n", model.error().message().c_str());
        return 1;
    }
    failures += example::refused(graph::import_onnx(*model, "softsign_qdq.onnx"), "onnx-op");
    failures += example::optimize_and_check(graph::import_onnx(*model, "softsign_qdq.onnx", &example::infer));

    if (failures == 0) std::printf("all checks passed\n");
    else std::printf("%d mismatches\n", failures);
    return failures == 0 ? 0 : 1;
}
