#pragma once
// The op support table with its evidence (janusc support, docs/SUPPORTED_OPS.md; seeds D10, D11): a name in a list
// is not support. For every ONNX op type Janus knows, each level of evidence is either shown or written
// "unconfirmed"; nothing in the table is typed by hand except the probe graphs and the reasons the code gives.
//
// Levels, each measured or read from the code that does the work:
//   import      how graph/import_onnx.hpp takes the ONNX op type (onnx_import_form);
//   reference   a probe graph of the op (below) runs on the host reference kernels, per form (int8, float32);
//   emitters    the emitters' level for the op's int8 form (emit/support.hpp: lowered, partial, not lowered yet,
//               host) and the test that checks each emitter bit for bit on the simulator;
//   janusc      the int8 probe through the compiler's own lowering (graph/lower.hpp lower_graph): on the NPU, kept
//               on the host by the partition, or refused with the lowering's rule;
//   bit-exact   the lowered probe run on the simulator: no fault, no race, every value identical to the reference;
//   node tests  the official ONNX node tests (janusc conform's result lines, graph/conformance.hpp) holding the op:
//               passed of claimed on each engine; "unconfirmed" when no result is given or no test holds the op;
//   fuzzing     the differential fuzzer graph_diff (fuzz/graph_diff.cpp) has a seed with the op, when its corpus is
//               given; "unconfirmed" otherwise.
//
// A probe is one small graph around one node, written in the IR text form with type placeholders, so one text
// serves both forms: `$x[S]` / `$z[S]` are activation inputs (int8 with two different quantizations, or float32),
// `$y[S]` is the output (`$s[S]` an output with $x's quantization, for ops that keep it), `$w[S]` a constant weight
// (int8 per-tensor with zero point 0, or float32), `$b[S]` a bias (int32 in accumulator units, or float32), `$p[S]` and `$v[S]` float32 parameters (the second positive). A probe
// that names a concrete dtype instead (ArgMax's int64 output, QuantizeLinear's float32 input) has one form only.
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/emit/support.hpp>
#include <janus/graph/conformance.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/parse.hpp>
#include <janus/graph/run_npu.hpp>

namespace janus::graph {

enum class ProbeForm : std::uint8_t { int8, float32 };

inline std::string_view form_name(ProbeForm f) { return f == ProbeForm::int8 ? "int8" : "float32"; }

struct ProbeSpec {
    std::string_view op;
    std::string_view body;  ///< the graph's lines, with placeholders
    bool int8 = true;       ///< has an int8 form
    bool float32 = true;    ///< has a float32 form
};

namespace support_detail {

inline constexpr std::string_view unary = "input %x: $x[1,4,4,4]\n  %y: $y[1,4,4,4] = OP(%x)";
inline constexpr std::string_view binary =
    "input %a: $x[1,4,4,4]\n  input %c: $z[1,4,4,4]\n  %y: $y[1,4,4,4] = OP(%a, %c)";
inline constexpr std::string_view reduce = "input %x: $x[1,4,4,4]\n  %y: $y[1,4,1,1] = OP(%x) {axes=[2,3], keepdims=1}";
inline constexpr std::string_view reduce_keep =
    "input %x: $x[1,4,4,4]\n  %y: $s[1,4,1,1] = OP(%x) {axes=[2,3], keepdims=1}";
inline constexpr std::string_view argreduce =
    "input %x: $x[1,4,4,4]\n  %y: int64[1,1,4,4] = OP(%x) {axis=1, keepdims=1}";
inline constexpr std::string_view pool =
    "input %x: $x[1,8,6,6]\n  %y: $y[1,8,3,3] = OP(%x) {kernel_shape=[2,2], strides=[2,2]}";
inline constexpr std::string_view global_pool = "input %x: $x[1,8,6,6]\n  %y: $y[1,8,1,1] = OP(%x)";

}  // namespace support_detail

/// One probe per op of the registry (ops::all_ops, Requantize included); a test checks that every op has one and
/// that every probe parses in each of its forms.
inline const std::vector<ProbeSpec>& probe_specs() {
    namespace d = support_detail;
    static const std::vector<ProbeSpec> specs{
        {"Abs", d::unary},
        {"Neg", d::unary},
        {"Sign", d::unary},
        {"Relu", d::unary},
        {"Clip", "input %x: $x[1,4,4,4]\n  %y: $y[1,4,4,4] = OP(%x) {min=-0.5f, max=0.75f}"},
        {"LeakyRelu", "input %x: $x[1,4,4,4]\n  %y: $y[1,4,4,4] = OP(%x) {alpha=0.125f}"},
        {"HardSigmoid", d::unary},
        {"HardSwish", d::unary},
        {"Sigmoid", d::unary},
        {"Tanh", d::unary},
        {"Exp", d::unary},
        {"Sqrt", d::unary},
        {"Reciprocal", d::unary},
        {"Erf", d::unary},
        {"Gelu", d::unary},
        {"Add", d::binary},
        {"Sub", d::binary},
        {"Mul", d::binary},
        {"Min", d::binary},
        {"Max", d::binary},
        {"ReduceSum", d::reduce},
        {"ReduceMean", d::reduce},
        {"ReduceMax", d::reduce_keep},
        {"ReduceMin", d::reduce_keep},
        {"ArgMax", d::argreduce},
        {"ArgMin", d::argreduce},
        {"Conv",
         "input %x: $x[1,8,6,6]\n  const %w: $w[16,8,3,3]\n  const %b: $b[16]\n"
         "  %y: $y[1,16,6,6] = OP(%x, %w, %b) {kernel_shape=[3,3], pads=[1,1,1,1]}"},
        {"ConvTranspose",
         "input %x: $x[1,8,3,3]\n  const %w: $w[8,4,3,3]\n"
         "  %y: $y[1,4,6,6] = OP(%x, %w) {kernel_shape=[3,3], pads=[1,1,0,0], strides=[2,2]}"},
        {"MatMul", "input %x: $x[4,16]\n  const %w: $w[16,8]\n  %y: $y[4,8] = OP(%x, %w)"},
        {"Gemm", "input %x: $x[4,16]\n  const %w: $w[16,8]\n  const %b: $b[8]\n  %y: $y[4,8] = OP(%x, %w, %b)"},
        {"ConvInteger",
         "input %x: int8[1,2,5,5] q(int8 s=1 zp=3)\n  const %w: int8[3,2,2,2] q(int8 s=1 zp=0) = "
         "0x0dd093b938ae0a5c065bd29a98ca17291c334ef0a6fb093d\n  %y: int32[1,3,4,4] = OP(%x, %w)",
         true, false},
        {"MatMulInteger",
         "input %x: int8[4,5] q(int8 s=1 zp=-2)\n  const %w: int8[5,2] q(int8 s=1 zp=0) = 0x80f084755fcfcd9c4712\n"
         "  %y: int32[4,2] = OP(%x, %w)",
         true, false},
        {"AveragePool", d::pool},
        {"MaxPool", "input %x: $x[1,8,6,6]\n  %y: $s[1,8,3,3] = OP(%x) {kernel_shape=[2,2], strides=[2,2]}"},
        {"GlobalAveragePool", d::global_pool},
        {"GlobalMaxPool", "input %x: $x[1,8,6,6]\n  %y: $s[1,8,1,1] = OP(%x)"},
        {"Resize", "input %x: $x[1,4,3,3]\n  %y: $s[1,4,6,6] = OP(%x) {mode=\"nearest\", scales=[1f,1f,2f,2f]}"},
        {"BatchNormalization",
         "input %x: $x[1,4,4,4]\n  const %s: $p[4]\n  const %o: $p[4]\n  const %m: $p[4]\n  const %v: $v[4]\n"
         "  %y: $y[1,4,4,4] = OP(%x, %s, %o, %m, %v)"},
        {"InstanceNormalization",
         "input %x: $x[1,4,4,4]\n  const %s: $p[4]\n  const %o: $p[4]\n  %y: $y[1,4,4,4] = OP(%x, %s, %o)"},
        {"LayerNormalization",
         "input %x: $x[4,16]\n  const %s: $p[16]\n  const %o: $p[16]\n  %y: $y[4,16] = OP(%x, %s, %o)"},
        {"Softmax", "input %x: $x[4,16]\n  %y: $y[4,16] = OP(%x) {axis=-1}"},
        {"Reshape", "input %x: $x[1,4,4,4]\n  %y: $s[1,64] = OP(%x) {shape=[1,64]}"},
        {"Flatten", "input %x: $x[1,4,4,4]\n  %y: $s[1,64] = OP(%x) {axis=1}"},
        {"Squeeze", "input %x: $x[1,4,1,4]\n  %y: $s[1,4,4] = OP(%x) {axes=[2]}"},
        {"Unsqueeze", "input %x: $x[4,16]\n  %y: $s[1,4,16] = OP(%x) {axes=[0]}"},
        {"Transpose", "input %x: $x[1,16,4,6]\n  %y: $s[1,16,6,4] = OP(%x) {perm=[0,1,3,2]}"},
        {"Expand", "input %x: $x[1,16,1,4]\n  %y: $s[1,16,4,4] = OP(%x) {shape=[1,16,4,4]}"},
        {"Slice", "input %x: $x[1,16,4,4]\n  %y: $s[1,16,2,4] = OP(%x) {starts=[1], ends=[3], axes=[2]}"},
        {"Concat", "input %a: $x[1,16,4,4]\n  input %c: $x[1,16,4,4]\n  %y: $s[1,32,4,4] = OP(%a, %c) {axis=1}"},
        {"Pad", "input %x: $x[1,16,4,4]\n  %y: $s[1,16,6,4] = OP(%x) {pads=[0,0,1,0,0,0,1,0]}"},
        {"QuantizeLinear",
         "input %x: float32[1,4,4,4]\n  %y: int8[1,4,4,4] q(int8 s=0.0078125 zp=-1) = OP(%x) "
         "{scale=[0.0078125f], zero_point=[-1], dtype=\"int8\"}",
         true, false},
        {"DequantizeLinear", "input %x: $x[1,4,4,4]\n  %y: float32[1,4,4,4] = OP(%x)", true, false},
        {"Requantize", "input %x: $x[1,4,4,4]\n  %y: $y[1,4,4,4] = OP(%x) {dtype=\"int8\"}", true, false},
        {"MaxPoolIndices", "input %x: $x[1,8,6,6]\n  %y: int64[1,8,3,3] = OP(%x) {kernel_shape=[2,2], strides=[2,2]}"},
    };
    return specs;
}

namespace support_detail {

inline std::int64_t count_of(std::string_view dims) {
    std::int64_t n = 1, cur = 0;
    bool any = false;
    for (char c : dims) {
        if (c >= '0' && c <= '9') {
            cur = cur * 10 + (c - '0');
            any = true;
        } else if (c == ',') {
            n *= cur, cur = 0;
        }
    }
    return any ? n * cur : 1;
}

inline std::string hex_of(const void* p, std::size_t n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s = "0x";
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) s += {digits[b[i] >> 4], digits[b[i] & 15]};
    return s;
}

/// Constant data: a fixed pattern (the same bytes on every platform: little-endian two's complement and IEEE).
template <class T, class F>
std::string pattern(std::int64_t n, F f) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<std::int64_t>(i));
    return hex_of(v.data(), v.size() * sizeof(T));
}

/// The placeholder `$k[dims]` in form `f`.
inline std::string expand_one(char k, std::string_view dims, ProbeForm f) {
    const std::string s = "[" + std::string(dims) + "]";
    const bool q = f == ProbeForm::int8;
    const std::int64_t n = count_of(dims);
    const auto code = [](std::int64_t i) { return static_cast<std::int8_t>((i * 29 + 7) % 41 - 20); };
    switch (k) {
        case 'x':
            return q ? "int8" + s + " q(int8 s=0.05 zp=-3)" : "float32" + s;
        case 'z':
            return q ? "int8" + s + " q(int8 s=0.03 zp=7)" : "float32" + s;
        case 'y':
            return q ? "int8" + s + " q(int8 s=0.07 zp=2)" : "float32" + s;
        case 's':  // $x's quantization
            return q ? "int8" + s + " q(int8 s=0.05 zp=-3)" : "float32" + s;
        case 'w':
            return q ? "int8" + s + " q(int8 s=0.02 zp=0) = " + pattern<std::int8_t>(n, code)
                     : "float32" + s + " = " + pattern<float>(n, [&](std::int64_t i) { return code(i) / 32.0f; });
        case 'b':
            return q ? "int32" + s + " q(int32 s=0.001 zp=0) = " +
                           pattern<std::int32_t>(n, [](std::int64_t i) { return (i * 53) % 201 - 100; })
                     : "float32" + s + " = " + pattern<float>(n, [](std::int64_t i) {
                           return static_cast<float>((i * 53) % 201 - 100) / 1000.0f;
                       });
        case 'p':
            return "float32" + s + " = " + pattern<float>(n, [](std::int64_t i) { return (i % 7 - 3) / 8.0f; });
        default:  // 'v'
            return "float32" + s + " = " + pattern<float>(n, [](std::int64_t i) { return 0.5f + (i % 5) / 4.0f; });
    }
}

}  // namespace support_detail

/// The probe's graph text in form `f`: `graph probe_<op>_<form> { ... output %y }`.
inline std::string probe_text(const ProbeSpec& p, ProbeForm f) {
    std::string body;
    for (std::size_t i = 0; i < p.body.size(); ++i) {
        const char c = p.body[i];
        if (c == '$' && i + 2 < p.body.size() && p.body[i + 2] == '[') {
            const std::size_t close = p.body.find(']', i);
            body += support_detail::expand_one(p.body[i + 1], p.body.substr(i + 3, close - i - 3), f);
            i = close;
        } else if (c == 'O' && p.body.substr(i, 3) == "OP(") {
            body += std::string(p.op) + "(";
            i += 2;
        } else {
            body += c;
        }
    }
    return "graph probe_" + std::string(p.op) + "_" + std::string(form_name(f)) + " {\n  " + body +
           "\n  output %y\n}\n";
}

/// What one probe showed.
struct ProbeResult {
    std::string op;
    ProbeForm form = ProbeForm::int8;
    bool reference = false;
    std::string reference_error;  ///< the error's rule and detail when the reference engine refused the probe
    enum class Lowering : std::uint8_t { not_tried, npu, host, refused } lowering = Lowering::not_tried;
    std::string lowering_detail;  ///< the refusal's rule and detail, or why the partition kept it on the host
    bool bit_exact = false;       ///< simulated: no fault, no race, every value identical to the reference
    std::string simulation_detail;
};

/// Run probe `p` in form `f`: the reference engine on seeded inputs, then (int8) the lowering and a comparison of
/// both engines on the simulator. Errors of the probe itself (a probe that does not parse) are returned: they are
/// Janus bugs, not evidence.
inline Result<ProbeResult> run_probe(const ProbeSpec& p, ProbeForm f, KernelFn kernel, SimulateFn simulate) {
    ProbeResult r;
    r.op = std::string(p.op), r.form = f;
    JANUS_TRY(const Graph g, parse(probe_text(p, f), "probe " + std::string(p.op)));
    const auto in = seeded_inputs(g, 1);
    const auto ref = run_reference(g, in, kernel);
    if (!ref.ok()) {
        r.reference_error = ref.error().rule + ": " + ref.error().detail;
        return r;
    }
    r.reference = true;
    if (f != ProbeForm::int8) return r;
    const auto l = lower_graph(g, LowerOptions{true});
    if (!l.ok()) {
        r.lowering = ProbeResult::Lowering::refused;
        r.lowering_detail = l.error().rule + ": " + l.error().detail;
        return r;
    }
    // a quantized node the lowering refused runs on the host (host fallback): the probe's op is not lowered
    for (const HostPlacement& h : l->host_placements)
        if (h.quantized) {
            r.lowering = ProbeResult::Lowering::refused;
            r.lowering_detail = h.rule + ": " + h.why;
            return r;
        }
    if (l->npu.empty()) {
        r.lowering = ProbeResult::Lowering::host;
        r.lowering_detail = "the partition keeps it on the host (an input or output that is not quantized int8)";
        return r;
    }
    r.lowering = ProbeResult::Lowering::npu;
    const auto v = verify_engines(g, *l, in, kernel, simulate);
    if (!v.ok()) {
        r.simulation_detail = v.error().rule + ": " + v.error().detail;
        return r;
    }
    std::int64_t differing = 0;
    for (const auto& d : v->values) differing += d.differing;
    if (v->report.fault)
        r.simulation_detail = "fault: " + v->report.fault->message();
    else if (!v->report.races.empty())
        r.simulation_detail = std::to_string(v->report.races.size()) + " races";
    else if (differing)
        r.simulation_detail = std::to_string(differing) + " elements differ from the reference";
    else
        r.bit_exact = true;
    return r;
}

/// Evidence that comes from outside the code: the ops with a seed in graph_diff's corpus.
struct ExternalEvidence {
    std::optional<std::set<std::string, std::less<>>> fuzzed_ops;  ///< nullopt: not given (unconfirmed)
    std::optional<std::vector<ConformanceResult>> node_tests;      ///< janusc conform's results; nullopt: not given
};

/// The "node tests" cell of `op`: of the claimed node tests whose model holds the op, how many pass on the
/// reference engine, and, where the NPU engine ran, how many pass with nodes on it (and with every node on the host).
inline std::string node_tests_cell(std::string_view op, const ExternalEvidence& ext) {
    if (!ext.node_tests) return "unconfirmed";
    int ref = 0, ref_pass = 0, npu = 0, npu_pass = 0, npu_host = 0;
    for (const ConformanceResult& r : *ext.node_tests) {
        if (std::find(r.ops.begin(), r.ops.end(), op) == r.ops.end()) continue;
        ++ref;
        ref_pass += r.ref == "pass";
        if (r.npu.empty()) continue;
        ++npu;
        npu_pass += r.npu == "pass";
        npu_host += r.npu == "host";
    }
    if (ref == 0) return "unconfirmed (no node test)";
    std::string s = "ref " + std::to_string(ref_pass) + "/" + std::to_string(ref);
    if (npu) s += ", npu " + std::to_string(npu_pass) + "/" + std::to_string(npu) + " (host " +
                  std::to_string(npu_host) + ")";
    return s;
}

/// The op types of the nodes of IR text `text` (nothing when it does not parse: a fuzz seed may be malformed).
inline void ops_in_ir(std::string_view text, std::set<std::string, std::less<>>& out) {
    const auto g = parse(text, "seed");
    if (g.ok())
        for (const Node& n : g->nodes) out.insert(n.op);
}

/// The support table as Markdown (docs/SUPPORTED_OPS.md): one row per ONNX op type the importer takes, then the
/// internal ops. `results` holds the probes' results (every spec in each of its forms, in probe_specs() order).
inline std::string support_markdown(std::span<const ProbeResult> results, const ExternalEvidence& ext) {
    const auto find = [&](std::string_view op, ProbeForm f) -> const ProbeResult* {
        for (const auto& r : results)
            if (r.op == op && r.form == f) return &r;
        return nullptr;
    };
    const auto emit_row = [](std::string_view op) -> const emit::OpSupport* {
        for (const auto& s : emit::op_support)
            if (s.op == op) return &s;
        return nullptr;
    };
    std::string s =
        "# Supported ONNX ops, with their evidence (generated)\n\n"
        "Generated by `janusc support --fuzz-corpus fuzz/corpus/graph_diff --node-tests "
        "tests/conformance/expected.txt` from the code "
        "(`include/janus/graph/support.hpp`) and the probes it runs; do not edit by hand. The CLI test "
        "(`tests/janusc/cli_test.sh`) fails when this file is stale.\n\n"
        "A name is not support (seeds D10, D11): each column is a level of evidence, measured when the table is "
        "generated or read from the code that does the work, and **unconfirmed** wherever the evidence is missing.\n\n"
        "- **import**: how the ONNX importer takes the op type (`graph/import_onnx.hpp`): `op` is a registry op, "
        "quantized (int8) when QDQ nodes cover its float tensors and float32 on the host otherwise.\n"
        "- **reference**: a probe graph of the op (one node, `graph/support.hpp`) runs on the host reference "
        "kernels, in its int8 (quantized) and float32 forms.\n"
        "- **emitters**: the level of the op's int8 emitters and the test that checks them bit for bit on the "
        "simulator (`docs/emit_support.md`).\n"
        "- **janusc**: the int8 probe through the compiler's lowering (`graph/lower.hpp`): `npu`, `host` (the "
        "partition keeps it on the host) or the lowering's refusal.\n"
        "- **bit-exact**: the lowered probe on the simulator: no fault, no race, every value identical to the "
        "reference engine's.\n"
        "- **node tests**: the official ONNX node tests (ONNX 1.12, `janusc conform`, docs/conformance.md) whose "
        "model holds the op: passed on the reference engine of those claimed, and, for those with int8 values, "
        "passed on the NPU engine with nodes on the NPU (host: passed with every node on the host).\n"
        "- **fuzzing**: a seed of the differential fuzzer `graph_diff` holds the op (it checks that the passes keep "
        "the reference outputs and, where the graph lowers, that the simulator matches the reference).\n\n"
        "| op | import | reference | emitters | janusc | bit-exact | node tests | fuzzing |\n"
        "|---|---|---|---|---|---|---|---|\n";
    const auto cell = [](std::string t) {
        for (std::size_t i = 0; (i = t.find('|', i)) != std::string::npos; i += 2) t.replace(i, 1, "\\|");
        return t;
    };
    std::vector<std::string> notes;
    const auto row = [&](std::string_view op) {
        std::string ref;
        for (ProbeForm f : {ProbeForm::int8, ProbeForm::float32}) {
            const ProbeResult* r = find(op, f);
            if (!r) continue;
            if (!ref.empty()) ref += ", ";
            ref += r->reference ? std::string(form_name(f)) : std::string(form_name(f)) + ": unconfirmed";
            if (!r->reference)
                notes.push_back(std::string(op) + " " + std::string(form_name(f)) +
                                " probe on the reference engine: " + r->reference_error);
        }
        if (ref.empty()) ref = "unconfirmed";
        const auto* e = emit_row(op);
        const std::string emitters = e ? std::string(emit::support_name(e->level)) +
                                             (e->test.empty() ? "" : " (`tests/" + std::string(e->test) + "`)")
                                       : "-";
        std::string janusc = "unconfirmed", exact = "unconfirmed";
        if (const ProbeResult* r = find(op, ProbeForm::int8)) {
            using L = ProbeResult::Lowering;
            if (r->lowering == L::npu) {
                janusc = "npu";
                if (r->bit_exact)
                    exact = "yes";
                else
                    notes.push_back(std::string(op) + " int8 probe on the simulator: " + r->simulation_detail);
            } else if (r->lowering == L::host) {
                janusc = "host", exact = "-";
                notes.push_back(std::string(op) + " int8 probe: " + r->lowering_detail);
            } else if (r->lowering == L::refused) {
                janusc = "refused: `" + r->lowering_detail.substr(0, r->lowering_detail.find(':')) + "`";
                notes.push_back(std::string(op) + " int8 probe, lowering refused: " + r->lowering_detail);
            }
        }
        std::string fuzz = "unconfirmed";
        if (ext.fuzzed_ops && ext.fuzzed_ops->count(op)) fuzz = "graph_diff";
        s += "| " + std::string(op) + " | " + cell(std::string(onnx_import_form(op))) + " | " + cell(ref) + " | " +
             cell(emitters) + " | " + cell(janusc) + " | " + exact + " | " + node_tests_cell(op, ext) + " | " + fuzz +
             " |\n";
    };
    for (std::string_view op : ops::op_names)
        if (!onnx_import_form(op).empty()) row(op);
    for (std::string_view op : importer_only_ops) {
        s += "| " + std::string(op) + " | " + cell(std::string(onnx_import_form(op))) +
             " | as the ops it becomes | - | as the ops it becomes | - | " + node_tests_cell(op, ext) + " | - |\n";
    }
    s += "\nInternal ops (not ONNX op types; the importer and the passes create them):\n\n"
         "| op | reference | emitters | janusc | bit-exact |\n|---|---|---|---|---|\n";
    for (std::string_view op : ops::op_names) {
        if (!onnx_import_form(op).empty()) continue;
        const ProbeResult* r = find(op, ProbeForm::int8);
        const auto* e = emit_row(op);
        s += "| " + std::string(op) + " | " + (r && r->reference ? "int8" : "unconfirmed") + " | " +
             (e ? std::string(emit::support_name(e->level)) : "-") + " | " +
             (r && r->lowering == ProbeResult::Lowering::npu ? "npu" : "unconfirmed") + " | " +
             (r && r->bit_exact ? "yes" : "unconfirmed") + " |\n";
    }
    if (!notes.empty()) {
        s += "\nWhy a level is missing (from the probes):\n\n";
        for (const auto& n : notes) s += "- " + n + "\n";
    }
    if (ext.node_tests) {
        std::size_t pass = 0;
        for (const ConformanceResult& r : *ext.node_tests) pass += r.ref == "pass";
        s += "\nONNX node tests that do not pass on the reference engine (" +
             std::to_string(ext.node_tests->size() - pass) + " of " + std::to_string(ext.node_tests->size()) +
             " claimed; `janusc conform`, docs/conformance.md; the rule says why):\n\n";
        for (const ConformanceResult& r : *ext.node_tests)
            if (r.ref != "pass") {
                std::string ops;
                for (const auto& o : r.ops) ops += (ops.empty() ? "" : ", ") + o;
                s += "- `" + r.test + "` (" + ops + "): " + r.ref + "\n";
            }
        s += "\nONNX node tests whose graph holds int8 values, on the NPU engine (`host`: every node ran on the "
             "host):\n\n";
        for (const ConformanceResult& r : *ext.node_tests)
            if (!r.npu.empty()) s += "- `" + r.test + "`: npu " + r.npu + "\n";
    }
    return s;
}

}  // namespace janus::graph
