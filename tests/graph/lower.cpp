// Whole-graph lowering (graph/lower.hpp) and the NPU engine (graph/run_npu.hpp): every ONNX fixture, after the
// default pipeline, runs on the simulator with outputs AND every intermediate value bit-identical to the host
// reference; scratch is reused without changing a byte; refusals name the node and the rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <janus/graph/compile.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/passes.hpp>
#include <janus/graph/run_npu.hpp>

#include "graph_test.hpp"
#include "kernels.hpp"
#include "support/compiled_sim.hpp"

namespace {

namespace fs = std::filesystem;
using namespace janus;

/// Run the default pipeline on `g`; the ops of the result, in order ("Relu Neg ").
std::string pipeline_ops(graph::Graph& g) {
    graph::PassLog log;
    REQUIRE(graph::run_passes(g, graph::default_pipeline, log, {janus_tools::kernel_by_name}).ok());
    std::string ops;
    for (const auto& n : g.nodes) ops += n.op + " ";
    return ops;
}

graph::Graph fixture(const std::string& stem) { return janus_test::optimized_fixture(stem); }

std::vector<std::byte> bytes_of(const Tensor& t) { return *t.clone().storage; }

graph::LoweredGraph lower(const graph::Graph& g, bool keep, bool barriers = true) {
    auto l = graph::lower_graph(g, graph::LowerOptions{keep, barriers});
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
    return std::move(*l);
}

graph::NpuRun run_npu(const graph::Graph& g, const graph::LoweredGraph& l, const std::vector<Tensor>& in,
                      const graph::Observer& observe = {}) {
    auto r = graph::run_npu(g, l, in, janus_tools::kernel_by_name, janus_test::simulate, observe);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? std::string() : r.error().message()));
    return std::move(*r);
}

/// The IR text of int8 constant data: "0x" and two hex digits per code, code i = f(i).
template <class F>
std::string hex_codes(int n, F f) {
    static const char* hex = "0123456789abcdef";
    std::string s = "0x";
    for (int i = 0; i < n; ++i) {
        const int v = f(i) & 255;
        s += hex[v >> 4];
        s += hex[v & 15];
    }
    return s;
}

/// The lowering's log, one line each.
std::string log_text(const graph::LoweredGraph& l) {
    std::string s;
    for (const auto& line : l.log) s += line + "\n";
    return s;
}

/// Seeded inputs 1..3: the NPU engine's outputs are bit-identical to the reference engine's. Returns the reference
/// outputs of the last seed.
std::vector<Tensor> npu_matches_reference(const graph::Graph& g, const graph::LoweredGraph& l) {
    std::vector<Tensor> last;
    for (unsigned seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        const auto in = graph::seeded_inputs(g, seed);
        const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
        REQUIRE(ref.ok());
        const auto out = run_npu(g, l, in);
        REQUIRE(out.outputs.size() == ref->size());
        for (std::size_t i = 0; i < ref->size(); ++i) CHECK(bytes_of(out.outputs[i]) == bytes_of((*ref)[i]));
        last = *ref;
    }
    return last;
}

/// janusc verify's comparison on `l` (which keeps its intermediates): no value differs. Returns how many values were
/// listed as not materialized (fused, or kept in LMEM between two kernels).
std::size_t verify_clean(const graph::Graph& g, const graph::LoweredGraph& l) {
    const auto v =
        graph::verify_engines(g, l, graph::seeded_inputs(g, 4), janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE_MESSAGE(v.ok(), (v.ok() ? std::string() : v.error().message()));
    CHECK(v->first_divergence() == v->values.size());
    CHECK(v->values.size() == g.nodes.size());
    std::size_t unmaterialized = 0;
    for (const auto& d : v->values) unmaterialized += !d.materialized;
    return unmaterialized;
}

}  // namespace

TEST_CASE("every fixture runs on the NPU engine bit-identical to the reference, outputs and every intermediate") {
    for (const std::string stem :
         {"qdq_conv_relu", "qdq_uint8_add_sigmoid", "qop_conv_matmul", "qdq_float_tail", "mobilenet_v2_tiny",
          "qdq_conv_bn", "qdq_conv_relu_shared", "qdq_unet_tiny", "qdq_float_middle", "qdq_softmax_head"}) {
        CAPTURE(stem);
        const graph::Graph g = fixture(stem);
        const graph::LoweredGraph kept = lower(g, true);
        REQUIRE(!kept.npu.empty());
        for (unsigned seed : {1u, 2u, 3u}) {
            CAPTURE(seed);
            const auto in = graph::seeded_inputs(g, seed);
            std::map<graph::ValueId, std::vector<std::byte>> ref_values;
            const auto ref = graph::run_reference(
                g, in, janus_tools::kernel_by_name,
                [&](std::size_t, graph::ValueId v, const Tensor& t) { ref_values[v] = bytes_of(t); });
            REQUIRE(ref.ok());
            std::size_t compared = 0;
            const auto npu = run_npu(g, kept, in, [&](std::size_t k, graph::ValueId v, const Tensor& t) {
                CAPTURE(g.nodes[k].op);
                CAPTURE(g.value(v).name);
                CHECK(bytes_of(t) == ref_values.at(v));
                ++compared;
            });
            // a producer fused with its activation has no value of its own on the NPU; a value kept in LMEM
            // between two kernels (tests/graph/lmem.cpp) has none in DRAM
            std::size_t fused = 0, in_lmem = 0;
            for (const auto& ln : kept.npu) {
                fused += ln.fused;
                in_lmem += !ln.fused && kept.placement[static_cast<std::size_t>(g.nodes[ln.node].outputs[0])]->in_lmem();
            }
            CHECK(compared + fused + in_lmem == g.nodes.size());  // every other node's value was compared
            // the Sigmoid after qdq_uint8_add_sigmoid's Add is the Add's table on each tile (fusion, Fuses::table)
            CHECK(fused == (stem == "qdq_conv_relu_shared" || stem == "qdq_uint8_add_sigmoid" ? 1u : 0u));
            CHECK(in_lmem == 0);
            REQUIRE(npu.outputs.size() == ref->size());
            for (std::size_t i = 0; i < ref->size(); ++i) CHECK(bytes_of(npu.outputs[i]) == bytes_of((*ref)[i]));
            CHECK(npu.report.cycles > 0);

            // the same with scratch reuse: the outputs do not change
            const graph::LoweredGraph reused = lower(g, false);
            CHECK(reused.scratch_peak <= kept.scratch_peak);
            const auto npu2 = run_npu(g, reused, in);
            for (std::size_t i = 0; i < ref->size(); ++i) CHECK(bytes_of(npu2.outputs[i]) == bytes_of((*ref)[i]));
        }
        MESSAGE(stem << ": " << kept.npu.size() << " NPU nodes, " << kept.host_nodes() << " host nodes, "
                     << kept.program.code.size() << " instructions, scratch " << lower(g, false).scratch_peak
                     << " B reused / " << kept.scratch_peak << " B kept");
    }
}

TEST_CASE("scratch is reused on MobileNetV2-tiny, and the lowering is deterministic") {
    const graph::Graph g = fixture("mobilenet_v2_tiny");
    const auto a = lower(g, false), b = lower(g, false);
    CHECK(a.scratch_peak < lower(g, true).scratch_peak);
    CHECK(a.program.code == b.program.code);
    CHECK(a.program.weights == b.program.weights);
    CHECK(a.log == b.log);
    // the dump after lowering (seed B4): every NPU value with its logical type and its physical layout, and it
    // still parses as IR (the layout lines are comments)
    const std::string layout = graph::layout_text(g, a);
    CHECK(layout.find("%conv_87: int8[1,48,16,16] q(int8 s=0.0235294122 zp=-128) -> scratch @8192 +12288 B: NHWC "
                      "16x16x48, pixels 48 B apart") != std::string::npos);
    const auto reparsed = graph::parse(graph::print(g, true) + layout, "dump.ir");
    REQUIRE_MESSAGE(reparsed.ok(), (reparsed.ok() ? std::string() : reparsed.error().message()));
    CHECK(graph::print(*reparsed, true) == graph::print(g, true));
    // the debug map covers the program: NPU nodes in order, and between two kernels only the barrier (markers on
    // the four units signalling one event, then four SEQ syncs on it); the program ends with halt
    std::size_t at = 0, barriers = 0;
    for (const auto& n : a.npu) {
        REQUIRE(n.code_begin >= at);
        CHECK(n.code_end >= n.code_begin);
        std::string gap;
        for (std::size_t i = at; i < n.code_begin; ++i) gap += std::string(a.program.code[i].info->mnemonic) + " ";
        if (!gap.empty()) {
            CHECK(gap == "li li dma.cfg mac.cfg vec.max lut.apply sync sync sync sync ");
            ++barriers;
        }
        at = n.code_end;
    }
    CHECK(barriers + 2 == a.npu.size());  // every kernel boundary but the Flatten view's (no code)
    CHECK(at + 1 == a.program.code.size());
}

TEST_CASE("negative control: without the kernel barrier, a later kernel's waiter steals an earlier kernel's signal") {
    // Every kernel is correct alone; chained, Gemm's mac.mm (MAC) and GlobalAveragePool's vec.acc (VEC) both wait on
    // e0, the MAC wins the DMA's signal, Gemm's table load overwrites the pool's rq table, and the pool's vec.rq
    // faults on it. The barrier (graph/lower.hpp) is what makes the chain correct.
    const graph::Graph g = fixture("mobilenet_v2_tiny");
    const auto l = lower(g, false, false);
    const auto r = graph::run_npu(g, l, graph::seeded_inputs(g, 1), janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE(!r.ok());
    CHECK(r.error().rule == "npu-fault");
    CHECK(r.error().message().find("in node 22 (GlobalAveragePool gap)") != std::string::npos);
}

TEST_CASE("verify_engines names the first node where the engines disagree") {
    const graph::Graph g = fixture("mobilenet_v2_tiny");
    const auto l = lower(g, true);
    const auto in = graph::seeded_inputs(g, 5);
    const auto same = graph::verify_engines(g, l, in, janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE(same.ok());
    CHECK(same->values.size() == g.nodes.size());
    CHECK(same->first_divergence() == same->values.size());
    // The host now computes node 5 with other weights than the program the NPU runs: node 5 is the first to differ,
    // and what reads it differs after it.
    graph::Graph h = g;
    auto& w = h.value(h.nodes[5].inputs[1]);
    REQUIRE(w.kind == graph::ValueKind::constant);
    auto codes = w.data->to_vector<std::int8_t>();
    for (auto& c : codes) c = static_cast<std::int8_t>(c == 127 ? 126 : c + 1);
    w.data = Tensor::from<std::int8_t>(w.type.shape, codes, *w.type.quant);
    const auto diff = graph::verify_engines(h, l, in, janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE(diff.ok());
    const std::size_t first = diff->first_divergence();
    REQUIRE(first < diff->values.size());
    CHECK(diff->values[first].node == 5);
    CHECK(diff->values[first].differing > 0);
    CHECK(diff->values[first].max_steps > 0);
    CHECK(diff->values[first].first >= 0);
    CHECK(diff->values[first + 1].differing > 0);
    // and verify refuses a lowering without its intermediates
    const auto refused =
        graph::verify_engines(g, lower(g, false), in, janus_tools::kernel_by_name, janus_test::simulate);
    REQUIRE(!refused.ok());
    CHECK(refused.error().rule == "verify-intermediates");
}

TEST_CASE("a compiled package runs bit-identical to the reference, and its bytes are the same on every compile") {
    for (const std::string stem :
         {"qdq_conv_relu", "qdq_uint8_add_sigmoid", "qop_conv_matmul", "mobilenet_v2_tiny", "qdq_conv_bn",
          "qdq_float_tail", "integer_ops", "qdq_conv_relu_shared", "qdq_unet_tiny", "qdq_softmax_head"}) {
        CAPTURE(stem);
        const graph::Graph g = fixture(stem);
        const auto pkg = graph::compile_package(g, lower(g, false));
        REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
        const auto bytes = package::write_package(*pkg, stem);
        REQUIRE(bytes.ok());
        const auto again = package::write_package(*graph::compile_package(g, lower(g, false)), stem);
        CHECK(*again == *bytes);
        const auto read = package::read_package(*bytes, stem + ".jpk");
        REQUIRE_MESSAGE(read.ok(), (read.ok() ? std::string() : read.error().message()));
        CHECK(*read == *pkg);
        // the model's inputs: the descriptors (boundary form; integer_ops: its uint8 inputs' Requantize are input
        // conversions, its int32 outputs int32 storage) or the host graph's (host form: a float tail)
        const bool host_form = stem == "qdq_float_tail" || stem == "qdq_softmax_head";  // a host Softmax after it
        CHECK(read->host.has_value() == host_form);
        if (host_form) {
            const auto h = graph::host_plan(*read, stem);
            REQUIRE_MESSAGE(h.ok(), (h.ok() ? std::string() : h.error().message()));
            REQUIRE(h->model_inputs.size() == g.inputs.size());
            for (std::size_t i = 0; i < g.inputs.size(); ++i)
                CHECK(h->graph.value(h->model_inputs[i]).name == g.value(g.inputs[i]).name);
            CHECK(h->program_inputs.size() == read->inputs.size());
            CHECK(h->program_outputs.size() == read->outputs.size());
        } else {
            REQUIRE(read->inputs.size() == g.inputs.size());
            for (std::size_t i = 0; i < g.inputs.size(); ++i) CHECK(read->inputs[i].name == g.value(g.inputs[i]).name);
        }
        CHECK(read->debug.size() + 1 >= lower(g, false).npu.size());  // every node with code (a view has none)
        // per-node cycles (janusc inspect): every node is charged, and the charges add up to the last node's end
        if (!read->debug.empty()) {
            std::vector<vnpu::Instr> code;
            for (const auto w : read->code) code.push_back(*vnpu::decode(w));
            vnpu::sim::Machine m;
            m.dram[0] = read->weights;
            m.dram[1].assign(read->scratch_bytes, 0);
            m.dram[2].assign(read->input_bytes, 0);
            m.dram[3].assign(read->output_bytes, 0);
            std::vector<std::uint64_t> finished;
            vnpu::sim::Options so;
            so.finished = &finished;
            const auto r = janus_test::simulate(code, m, so);
            REQUIRE(!r.fault);
            REQUIRE(finished.size() == code.size());
            const auto cycles = graph::node_cycles(read->debug, finished);
            REQUIRE(cycles.size() == read->debug.size());
            std::uint64_t sum = 0, end = 0;
            for (const auto c : cycles) {
                CHECK(c > 0);
                sum += c;
            }
            for (std::uint32_t pc = 0; pc < read->debug.back().last; ++pc) end = std::max(end, finished[pc]);
            CHECK(sum == end);
            CHECK(sum <= r.cycles);
        }
        for (unsigned seed : {1u, 2u}) {
            const auto in = graph::seeded_inputs(g, seed);
            const auto ref = graph::run_reference(g, in, janus_tools::kernel_by_name);
            REQUIRE(ref.ok());
            const auto out = graph::run_package(*read, in, janus_tools::kernel_by_name, janus_test::simulate);
            REQUIRE_MESSAGE(out.ok(), (out.ok() ? std::string() : out.error().message()));
            REQUIRE(out->size() == ref->size());
            for (std::size_t i = 0; i < ref->size(); ++i) {
                CHECK((*out)[i].dtype == (*ref)[i].dtype);
                CHECK(bytes_of((*out)[i]) == bytes_of((*ref)[i]));
            }
        }
    }
}

TEST_CASE("host work before and after the program goes into the host section, and runs bit-identical") {
    // a host prologue (a float Relu, then the quantization), the NPU program, a host epilogue (a float Softmax)
    auto g = graph::parse(
        "graph g {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)\n"
        "  %f: float32[1,16,4,4] = DequantizeLinear(%x)\n"
        "  %r: float32[1,16,4,4] = Relu(%f) @host\n"
        "  %q: int8[1,16,4,4] q(int8 s=0.05 zp=-128) = QuantizeLinear(%r) {dtype=\"int8\", scale=[0.05f], "
        "zero_point=[-128]}\n"
        "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=-20) = Add(%q, %x)\n"
        "  %d: float32[1,16,4,4] = DequantizeLinear(%a)\n"
        "  %s: float32[1,16,4,4] = Softmax(%d) {axis=1} @host\n"
        "  output %s\n  output %a\n}\n",
        "host.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    const auto l = lower(*g, false);
    CHECK(l.npu.size() == 1);
    const auto pkg = graph::compile_package(*g, l);
    REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
    REQUIRE(pkg->host.has_value());
    CHECK(pkg->host->prologue == 3);
    const auto h = graph::host_plan(*pkg);
    REQUIRE(h.ok());
    CHECK(h->graph.nodes.size() == 5);
    // the program reads the model input x and the prologue's q, and writes a (read by the epilogue and an output)
    REQUIRE(pkg->inputs.size() == 2);
    CHECK(pkg->inputs[0].name == "q");
    CHECK(pkg->inputs[1].name == "x");
    REQUIRE(pkg->outputs.size() == 1);
    CHECK(pkg->outputs[0].name == "a");
    // the host section is the host nodes' IR text, which parses back to itself
    CHECK(graph::print(h->graph) == pkg->host->graph);
    const auto bytes = package::write_package(*pkg, "host");
    REQUIRE(bytes.ok());
    const auto read = package::read_package(*bytes, "host.jpk");
    REQUIRE(read.ok());
    CHECK(*read == *pkg);
    for (unsigned seed : {1u, 2u, 3u}) {
        const auto in = graph::seeded_inputs(*g, seed);
        const auto ref = graph::run_reference(*g, in, janus_tools::kernel_by_name);
        REQUIRE(ref.ok());
        const auto out = graph::run_package(*read, in, janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE_MESSAGE(out.ok(), (out.ok() ? std::string() : out.error().message()));
        REQUIRE(out->size() == 2);
        for (std::size_t i = 0; i < 2; ++i) CHECK(bytes_of((*out)[i]) == bytes_of((*ref)[i]));
    }
}

TEST_CASE("a Relu / Clip that is exactly a clamp of its producer's codes is computed by its requantization (B10)") {
    // Conv -> Relu, depthwise Conv -> Clip, Gemm -> Relu: each activation keeps its producer's quantization, so on
    // int8 codes it is a clamp to [lo, hi] and vec.rq applies it; the IR keeps both nodes (the quantization
    // boundary between them stays). %c2 has a second reader (a graph output): its Relu stays a kernel.
    const auto w = hex_codes(16 * 8 * 9, [](int i) { return (i * 53 + 7) % 61 - 30; });
    const auto dw = hex_codes(16 * 9, [](int i) { return (i * 29 + 3) % 41 - 20; });
    const auto fw = hex_codes(10 * 576, [](int i) { return (i * 17 + 5) % 51 - 25; });
    auto g = graph::parse(
        "graph fuse {\n  input %x: int8[1,8,6,6] q(int8 s=0.05 zp=-3)\n"
        "  const %w: int8[16,8,3,3] q(int8 s=0.01 zp=0) = " +
            w +
            "\n"
            "  const %dw: int8[16,1,3,3] q(int8 s=0.02 zp=0) = " +
            dw +
            "\n"
            "  const %fw: int8[10,576] q(int8 s=0.01 zp=0) = " +
            fw +
            "\n"
            "  %c: int8[1,16,6,6] q(int8 s=0.08 zp=-6) = Conv(%x, %w) {pads=[1,1,1,1]}\n"
            "  %r: int8[1,16,6,6] q(int8 s=0.08 zp=-6) = Relu(%c)\n"
            "  %d: int8[1,16,6,6] q(int8 s=0.06 zp=10) = Conv(%r, %dw) {group=16, pads=[1,1,1,1]}\n"
            "  %k: int8[1,16,6,6] q(int8 s=0.06 zp=10) = Clip(%d) {max=3f, min=-2f}\n"
            "  %f: int8[1,576] q(int8 s=0.06 zp=10) = Flatten(%k) {axis=1}\n"
            "  %y: int8[1,10] q(int8 s=0.2 zp=0) = Gemm(%f, %fw) {transB=1}\n"
            "  %yr: int8[1,10] q(int8 s=0.2 zp=0) = Relu(%y)\n"
            "  %c2: int8[1,16,6,6] q(int8 s=0.08 zp=-6) = Conv(%x, %w) {pads=[1,1,1,1]}\n"
            "  %c2r: int8[1,16,6,6] q(int8 s=0.08 zp=-6) = Relu(%c2)\n"
            "  output %yr\n  output %c2r\n  output %c2\n}\n",
        "fuse.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const auto l = lower(*g, keep);
        std::string fused, kept;
        for (const auto& ln : l.npu) {
            if (ln.fused)
                fused += g->nodes[ln.node].outputs.empty() ? "" : g->value(g->nodes[ln.node].outputs[0]).name + " ";
            if (g->nodes[ln.node].op == "Relu" || g->nodes[ln.node].op == "Clip")
                kept +=
                    g->value(g->nodes[ln.node].outputs[0]).name + (ln.code_end > ln.code_begin ? ":code " : ":none ");
        }
        CHECK(fused == "c d y ");
        CHECK(kept == "r:none k:none yr:none c2r:code ");
        const std::string log = log_text(l);
        CHECK(log.find("fuse   node 3 (Clip) after node 2 (Conv): fused into its requantization, codes clamped to "
                       "[-23, 60]") != std::string::npos);
        CHECK(log.find("fuse   node 1 (Relu) after node 0 (Conv): fused into its requantization, codes clamped to "
                       "[-6, 127]") != std::string::npos);
        CHECK_MESSAGE(log.find("fuse   node 8 (Relu) after node 7 (Conv): kept as a kernel, the host reads c2 (a "
                               "dependency boundary)") != std::string::npos,
                      log);
        const auto ref = npu_matches_reference(*g, l);
        const auto yr = ref.at(0).to_vector<std::int8_t>();  // the last Relu's clamp cuts: some codes are at 0
        CHECK(std::count(yr.begin(), yr.end(), std::int8_t{0}) > 0);
        if (keep) {  // verify: every materialized value equal, the three producers listed as fused
            CHECK(verify_clean(*g, l) == 3);
        } else {  // and as a package
            const auto pkg = graph::compile_package(*g, l);
            REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
            for (const auto& buf : pkg->buffers) CHECK(buf.name != "c");  // not materialized: no buffer
            const auto in = graph::seeded_inputs(*g, 5);
            const auto ref = graph::run_reference(*g, in, janus_tools::kernel_by_name);
            const auto out = graph::run_package(*pkg, in, janus_tools::kernel_by_name, janus_test::simulate);
            REQUIRE_MESSAGE(out.ok(), (out.ok() ? std::string() : out.error().message()));
            for (std::size_t i = 0; i < 3; ++i) CHECK(bytes_of((*out)[i]) == bytes_of((*ref)[i]));
        }
    }
}

TEST_CASE("MatMul / Gemm + Sigmoid: the table is applied to each output tile before the store (B11)") {
    // %s: Sigmoid after a Gemm (another output quantization: a LUT, not a clamp) -> fused as lut.apply. %p: a
    // Requantize-like Relu after a MatMul with the weight on the left -> fused as lut.apply too. %h: a Sigmoid
    // after a MatMul whose product has a second reader -> kept, and the log says why (seed B11).
    const auto fw = hex_codes(40 * 24, [](int i) { return (i * 17 + 5) % 51 - 25; });
    const auto lw = hex_codes(8 * 20, [](int i) { return (i * 13 + 1) % 41 - 20; });
    auto g = graph::parse(
        "graph b11 {\n  input %x: int8[20,40] q(int8 s=0.05 zp=3)\n"
        "  const %fw: int8[24,40] q(int8 s=0.01 zp=0) = " +
            fw + "\n  const %lw: int8[8,20] q(int8 s=0.02 zp=0) = " + lw +
            "\n"
            "  %y: int8[20,24] q(int8 s=0.04 zp=-2) = Gemm(%x, %fw) {transB=1}\n"
            "  %s: int8[20,24] q(int8 s=0.00390625 zp=-128) = Sigmoid(%y)\n"
            "  %m: int8[20,24] q(int8 s=0.04 zp=-2) = Gemm(%x, %fw) {transB=1}\n"
            "  %h: int8[20,24] q(int8 s=0.00390625 zp=-128) = Sigmoid(%m)\n"
            "  %a: int8[20,24] q(int8 s=0.04 zp=-2) = Add(%m, %h)\n"
            "  %l: int8[8,24] q(int8 s=0.05 zp=0) = MatMul(%lw, %s)\n"
            "  %p: int8[8,24] q(int8 s=0.1 zp=-128) = Relu(%l)\n"
            "  output %p\n  output %a\n}\n",
        "b11.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const auto l = lower(*g, keep);
        const std::string log = log_text(l);
        CHECK_MESSAGE(log.find("fuse   node 1 (Sigmoid) after node 0 (Gemm): fused as a lut.apply on each output tile "
                               "before the store") != std::string::npos,
                      log);
        CHECK_MESSAGE(log.find("fuse   node 3 (Sigmoid) after node 2 (Gemm): kept as a kernel, m has 2 readers (the "
                               "unfused value is needed)") != std::string::npos,
                      log);
        CHECK_MESSAGE(log.find("fuse   node 6 (Relu) after node 5 (MatMul): fused as a lut.apply on each output tile "
                               "before the store") != std::string::npos,
                      log);
        std::size_t fused = 0;
        for (const auto& ln : l.npu) fused += ln.fused;
        CHECK(fused == 2);
        npu_matches_reference(*g, l);
        if (keep) {  // the two fused producers, and %h, kept in LMEM from the Sigmoid to the Add (tests/graph/lmem.cpp)
            CHECK(verify_clean(*g, l) == 3);
        }
    }
}

TEST_CASE("Conv + HardSwish and depthwise Conv + Sigmoid through their kernels' LUT epilogues") {
    const auto w = hex_codes(16 * 8 * 9, [](int i) { return (i * 53 + 7) % 61 - 30; });
    const auto dw = hex_codes(16 * 9, [](int i) { return (i * 29 + 3) % 41 - 20; });
    auto g = graph::parse(
        "graph conv_lut {\n  input %x: int8[1,8,6,6] q(int8 s=0.05 zp=-3)\n"
        "  const %w: int8[16,8,3,3] q(int8 s=0.01 zp=0) = " +
            w + "\n  const %dw: int8[16,1,3,3] q(int8 s=0.02 zp=0) = " + dw +
            "\n"
            "  %c: int8[1,16,6,6] q(int8 s=0.08 zp=-6) = Conv(%x, %w) {pads=[1,1,1,1]}\n"
            "  %h: int8[1,16,6,6] q(int8 s=0.05 zp=-20) = HardSwish(%c)\n"
            "  %d: int8[1,16,6,6] q(int8 s=0.06 zp=10) = Conv(%h, %dw) {group=16, pads=[1,1,1,1]}\n"
            "  %s: int8[1,16,6,6] q(int8 s=0.00390625 zp=-128) = Sigmoid(%d)\n"
            "  output %s\n}\n",
        "conv_lut.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const auto l = lower(*g, keep);
        const std::string log = log_text(l);
        CHECK_MESSAGE(log.find("fuse   node 1 (HardSwish) after node 0 (Conv): fused as a lut.apply on each output "
                               "tile before the store") != std::string::npos,
                      log);
        CHECK_MESSAGE(log.find("fuse   node 3 (Sigmoid) after node 2 (Conv): fused as a lut.apply on each output "
                               "tile before the store") != std::string::npos,
                      log);
        CHECK(log.find("lower_depthwise") != std::string::npos);
        npu_matches_reference(*g, l);
        if (keep) CHECK(verify_clean(*g, l) == 2);
    }
}

TEST_CASE("a host section that does not fit its program is refused, with the rule") {
    const graph::Graph g = fixture("qdq_float_tail");
    const auto pkg = graph::compile_package(g, lower(g, false));
    REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
    REQUIRE(pkg->host.has_value());
    REQUIRE(pkg->outputs.size() == 1);
    const std::string out = pkg->outputs[0].name;
    const auto refused = [&](auto&& change, const std::string& rule, const std::string& part) {
        package::Package p = *pkg;
        change(p);
        const auto h = graph::host_plan(p, "tail.jpk");
        REQUIRE(!h.ok());
        CHECK(h.error().rule == rule);
        CHECK_MESSAGE(h.error().message().find(part) != std::string::npos, h.error().message());
        const auto run =
            graph::run_package(p, graph::seeded_inputs(g, 1), janus_tools::kernel_by_name, janus_test::simulate);
        REQUIRE(!run.ok());
        CHECK(run.error().rule == rule);
    };
    refused([](package::Package& p) { p.host->prologue = 1000; }, "host-prologue", "tail.jpk host section");
    refused([](package::Package& p) { p.host->prologue = 2; }, "host-order", "a program output");
    refused([&](package::Package& p) { p.outputs[0].quant.zero_points[0] ^= 1; }, "host-program-output",
            "'" + out + "'");
    refused([](package::Package& p) { p.inputs[0].name = "nowhere"; }, "host-program-input", "'nowhere'");
    refused([](package::Package& p) { p.host->graph.insert(p.host->graph.find('\n') + 1, "  junk\n"); }, "ir-syntax",
            "tail.jpk host section:2:");
}

TEST_CASE("what canonicalize makes lowers: 0 - x as Neg, x + 0 as Requantize, on the NPU bit-identical") {
    auto g = graph::parse(
        "graph g {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=3)\n"
        "  const %zero: int8[1] q(int8 s=0.05 zp=-7) = 0xf9\n"
        "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=3) = Relu(%x)\n"
        "  %n: int8[1,16,4,4] q(int8 s=0.3 zp=5) = Sub(%zero, %a)\n"
        "  %r: int8[1,16,4,4] q(int8 s=0.15 zp=-2) = Add(%n, %zero)\n"
        "  %s: int8[1,16,4,4] q(int8 s=0.15 zp=-2) = Add(%r, %r)\n  output %s\n}\n",
        "canon.ir");
    REQUIRE(g.ok());
    const auto in = graph::seeded_inputs(*g, 3);
    const auto before = graph::run_reference(*g, in, janus_tools::kernel_by_name);
    REQUIRE(before.ok());
    CHECK(pipeline_ops(*g) == "Relu Neg Requantize Add ");
    const auto l = lower(*g, true);
    const auto out = run_npu(*g, l, in);
    CHECK(bytes_of(out.outputs.at(0)) == bytes_of(before->at(0)));
}

/// The IR text of float32 constant data.
std::string hex_floats(const std::vector<float>& v) {
    static const char* hex = "0123456789abcdef";
    std::string s = "0x";
    for (float f : v) {
        unsigned char b[4];
        std::memcpy(b, &f, 4);
        for (unsigned char c : b) (s += hex[c >> 4]) += hex[c & 15];  // little-endian, as the IR stores it
    }
    return s;
}

TEST_CASE("a BatchNorm after a Conv runs on the NPU as a depthwise Conv, bit-identical (seeds A6, A8)") {
    std::vector<float> scale, bias, mean, var;
    for (int c = 0; c < 16; ++c) {
        scale.push_back((c % 3 == 1 ? -1.0f : 1.0f) * (0.3f + 0.17f * static_cast<float>(c)));
        bias.push_back(0.1f * static_cast<float>(c) - 0.7f);
        mean.push_back(0.05f * static_cast<float>(c) - 0.4f);
        var.push_back(0.02f + 0.13f * static_cast<float>(c));
    }
    auto g = graph::parse(
        "graph g {\n  input %x: int8[1,8,6,6] q(int8 s=0.05 zp=-3)\n"
        "  const %w: int8[16,8,3,3] q(int8 s=0.01 zp=0) = " +
            hex_codes(16 * 8 * 9, [](int i) { return (i * 53 + 7) % 61 - 30; }) +
            "\n  %c: int8[1,16,4,4] q(int8 s=0.06 zp=5) = Conv(%x, %w) {kernel_shape=[3, 3]}\n"
            "  const %scale: float32[16] = " +
            hex_floats(scale) + "\n  const %b: float32[16] = " + hex_floats(bias) +
            "\n  const %mean: float32[16] = " + hex_floats(mean) + "\n  const %var: float32[16] = " + hex_floats(var) +
            "\n  %y: int8[1,16,4,4] q(int8 s=0.09 zp=-10) = BatchNormalization(%c, %scale, %b, %mean, %var)\n"
            "  output %y\n}\n",
        "bn.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    const auto in = graph::seeded_inputs(*g, 5);
    const auto before = graph::run_reference(*g, in, janus_tools::kernel_by_name);
    REQUIRE(before.ok());
    CHECK(pipeline_ops(*g) == "Conv Conv ");
    const auto after = graph::run_reference(*g, in, janus_tools::kernel_by_name);
    REQUIRE(after.ok());
    const auto b = before->at(0).to_vector<std::int8_t>(), a = after->at(0).to_vector<std::int8_t>();
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - b[i]) <= 1);
    const auto l = lower(*g, true);
    const auto out = run_npu(*g, l, in);
    CHECK(bytes_of(out.outputs.at(0)) == bytes_of(after->at(0)));
}

TEST_CASE("a view keeps its base buffer alive until the view's last reader (seed C3)") {
    // a -> Flatten f (a view of a's bytes) -> read by the MatMul at the end; b, c and d are computed in between and
    // must not be placed over a, although a's last direct reader is the Flatten.
    const std::string w = hex_codes(64 * 16, [](int i) { return (i * 37 + 11) % 9 + 1; });
    auto g = graph::parse(
        "graph g {\n  input %x: int8[1,16,2,2] q(int8 s=0.1 zp=3)\n"
        "  const %w: int8[64,16] q(int8 s=0.01 zp=0) = " +
            w +
            "\n"
            "  %a: int8[1,16,2,2] q(int8 s=0.1 zp=3) = Sigmoid(%x)\n"
            "  %f: int8[1,64] q(int8 s=0.1 zp=3) = Flatten(%a) {axis=1}\n"
            "  %b: int8[1,16,2,2] q(int8 s=0.1 zp=3) = Tanh(%x)\n"
            "  %c: int8[1,16,2,2] q(int8 s=0.1 zp=3) = Neg(%b)\n"
            "  %d: int8[1,16,2,2] q(int8 s=0.1 zp=3) = Abs(%c)\n"
            "  %y: int8[1,16] q(int8 s=0.2 zp=-1) = MatMul(%f, %w)\n  output %y\n  output %d\n}\n",
        "view.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    const auto l = lower(*g, false);
    const auto& a = *l.placement[static_cast<std::size_t>(g->find("a"))];
    for (const char* name : {"b", "c"}) {
        CAPTURE(name);
        const auto& p = *l.placement[static_cast<std::size_t>(g->find(name))];
        CHECK((p.region != a.region || p.offset + p.bytes() <= a.offset || a.offset + a.bytes() <= p.offset));
    }
    const auto in = graph::seeded_inputs(*g, 9);
    const auto ref = graph::run_reference(*g, in, janus_tools::kernel_by_name);
    REQUIRE(ref.ok());
    const auto npu = run_npu(*g, l, in);
    for (std::size_t i = 0; i < ref->size(); ++i) CHECK(bytes_of(npu.outputs[i]) == bytes_of((*ref)[i]));
}

TEST_CASE("MatMul with the weight on the left lowers as it stands, per-row scales included (seed B12)") {
    const std::string w = hex_codes(6 * 20, [](int i) { return ((i * 53 + 7) % 255) - 127; });
    auto g = graph::parse(
        "graph g {\n  input %x: int8[20,24] q(int8 s=0.05 zp=-4)\n"
        "  const %w: int8[6,20] q(int8 axis=0 s=[0.01,0.02,0.015,0.011,0.03,0.008] zp=[0,0,0,0,0,0]) = " +
            w +
            "\n"
            "  %a: int8[20,24] q(int8 s=0.05 zp=-4) = Relu(%x)\n"
            "  %y: int8[6,24] q(int8 s=0.45 zp=1) = MatMul(%w, %a)\n"
            "  output %y\n}\n",
        "left.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    const auto l = lower(*g, true);
    CHECK(std::find(l.log.begin(), l.log.end(), "node   node 1 (MatMul): lower_matmul_left M=6 K=20") != l.log.end());
    for (unsigned seed : {1u, 2u}) {
        const auto in = graph::seeded_inputs(*g, seed);
        const auto ref = graph::run_reference(*g, in, janus_tools::kernel_by_name);
        REQUIRE(ref.ok());
        CHECK(bytes_of(run_npu(*g, l, in).outputs.at(0)) == bytes_of(ref->at(0)));
    }
}

TEST_CASE("ConvInteger and MatMulInteger run on the NPU, their int32 sums bit-identical to the reference") {
    // zero points at both ends of int8 in x and w, per channel (w - zw in up to 3 int8 parts); channel counts and
    // widths that are not multiples of 16; the sums are stored from ACC as int32 (pixels / rows round16(4 C) apart)
    const auto w = hex_codes(6 * 5 * 9, [](int i) { return (i * 53 + 7) % 256 - 128; });
    const auto b = hex_codes(20 * 5, [](int i) { return (i * 29 + 3) % 256 - 128; });
    auto g = graph::parse(
        "graph ints {\n  input %x: int8[1,5,7,6] q(int8 s=1 zp=3)\n"
        "  const %w: int8[6,5,3,3] q(int8 axis=0 s=[1,1,1,1,1,1] zp=[-128,0,5,127,-3,60]) = " +
            w +
            "\n"
            "  input %a: int8[9,20] q(int8 s=1 zp=-128)\n"
            "  const %b: int8[20,5] q(int8 axis=1 s=[1,1,1,1,1] zp=[127,-128,0,1,-2]) = " +
            b +
            "\n"
            "  %y: int32[1,6,4,3] = ConvInteger(%x, %w) {pads=[1,0,1,1], strides=[2,2]}\n"
            "  %m: int32[9,5] = MatMulInteger(%a, %b)\n"
            "  output %y\n  output %m\n}\n",
        "ints.ir");
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
    for (const bool keep : {false, true}) {
        CAPTURE(keep);
        const auto l = lower(*g, keep);
        CHECK(l.npu.size() == 2);
        CHECK(l.host_nodes() == 0);
        const std::string log = log_text(l);
        CHECK_MESSAGE(log.find("node   node 0 (ConvInteger): lower_conv\n") != std::string::npos, log);
        CHECK(log.find("node   node 1 (MatMulInteger): lower_matmul K=20 N=5\n") != std::string::npos);
        CHECK(log.find("value  y: output @0 +384 B: NHWC 4x3x6 int32, pixels 32 B apart") != std::string::npos);
        CHECK(log.find("value  m: output @384 +288 B: 9 rows of 5 int32, 32 B apart") != std::string::npos);
        CHECK(log.find("int32 accumulator output, stored from ACC") != std::string::npos);
        const auto ref = npu_matches_reference(*g, l);
        REQUIRE(ref.size() == 2);
        CHECK(ref[0].dtype == DType::i32);
        std::int64_t wide = 0;  // sums beyond 16 bits: every byte of a lane is compared
        for (const auto& t : ref)
            for (auto v : t.to_vector<std::int32_t>()) wide += v > 65535 || v < -65536;
        CHECK(wide > 0);
        if (keep) {
            CHECK(verify_clean(*g, l) == 0);
        } else {  // and as a package: int32 outputs stored as int32, read back by the runner
            const auto pkg = graph::compile_package(*g, l);
            REQUIRE_MESSAGE(pkg.ok(), (pkg.ok() ? std::string() : pkg.error().message()));
            REQUIRE(pkg->outputs.size() == 2);
            CHECK(pkg->outputs[0].storage == DType::i32);
            CHECK(pkg->outputs[0].strides == std::vector<std::int64_t>{4 * 3 * 32, 4, 3 * 32, 32});
            const auto in = graph::seeded_inputs(*g, 5);
            const auto want = graph::run_reference(*g, in, janus_tools::kernel_by_name);
            REQUIRE(want.ok());
            const auto out = graph::run_package(*pkg, in, janus_tools::kernel_by_name, janus_test::simulate);
            REQUIRE_MESSAGE(out.ok(), (out.ok() ? std::string() : out.error().message()));
            for (std::size_t i = 0; i < 2; ++i) CHECK(bytes_of((*out)[i]) == bytes_of((*want)[i]));
        }
    }
}

TEST_CASE("a node the lowering refuses runs on the host with the refusal's rule") {
    const auto refused = [](const char* text, const char* rule, const char* node) {
        auto g = graph::parse(text, "t.ir");
        REQUIRE_MESSAGE(g.ok(), (g.ok() ? std::string() : g.error().message()));
        const auto l = graph::lower_graph(*g);
        REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error().message()));
        const std::string text_of = graph::placement_text(*g, *l);
        CAPTURE(text_of);
        CHECK(text_of.find("host " + std::string(node) + ": ") != std::string::npos);
        CHECK(text_of.find("[" + std::string(rule) + "] (quantized)") != std::string::npos);
    };
    // an int8 op janusc does not lower yet
    refused(
        "graph g {\n  input %x: int8[1,16,4,4] q(int8 s=0.1 zp=0)\n"
        "  %a: int8[1,16,4,4] q(int8 s=0.1 zp=0) = Relu(%x)\n"
        "  %b: int8[1,16,4,4] q(int8 s=0.00390625 zp=-128) = Softmax(%a) {axis=1}\n  output %b\n}\n",
        "lower-op", "node 1 (Softmax)");
    // a kernel that does not fit the real LMEM (seed C4: the budget, not the encoding, refuses it)
    refused(
        "graph g {\n  input %x: int8[1,16,1,20000] q(int8 s=0.1 zp=0)\n"
        "  %a: int8[1,16,1,10000] q(int8 s=0.1 zp=0) = MaxPool(%x) {kernel_shape=[1,2], strides=[1,2]}\n"
        "  output %a\n}\n",
        "lower-pool-budget", "node 0 (MaxPool)");
    // a shape the NPU layout does not hold (an image batch of 2; rank 3 is a stack, tests/graph/lower_batch.cpp)
    refused(
        "graph g {\n  input %x: int8[2,8,4,4] q(int8 s=0.1 zp=0)\n"
        "  %a: int8[2,8,4,4] q(int8 s=0.1 zp=0) = Relu(%x)\n  output %a\n}\n",
        "lower-layout", "node 0 (Relu)");
}
