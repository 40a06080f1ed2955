// Fuzz target: ONNX bytes -> import -> the default passes -> the lowering and the package (what `janusc compile`
// does) -> the reference engine (what `janusc run --engine ref` and `janusc verify` do) with a model file (issue
// 26: the surface where a 119-byte model crashed the engine, and where 300-byte models made compile allocate 2 to
// 8.5 GB: an AveragePool's denominators, a Resize's row copies; they show up here as an RSS overrun or a timeout).
//
// Input: any bytes, read as a ModelProto. Seeds: tests/onnx/fixtures/*.onnx, tests/hostile/*.onnx,
// tests/onnx/bad_import/*.onnx and small models of zero, one and large extents (fuzz/make_seeds.py onnx_run).
// Dictionary: fuzz/onnx_run.dict (field tags, op types, attribute names).
// Limits, as janusc applies them (docs/janusc.md "Limits"): the ONNX decoder's own budget (file-size based), then
// the run's memory (graph::reference_run_bytes: every value the engine holds and its largest kernel's scratch)
// charged against a 64 MiB budget with core/limits.hpp's charge_memory, before any tensor is allocated.
// Properties (a __builtin_trap() when broken):
//   1. every refusal (decode, import, passes, memory budget, run) is a well-formed Error: input, rule and detail
//      non-empty; a budget refusal has the rule memory-limit;
//   2. an imported graph keeps the size policy: every value's shape has rank <= max_rank, extents >= 0 and a
//      checked element count (core/size.hpp);
//   3. a run returns one tensor per graph output, of the output's declared dtype and shape;
//   4. determinism: a second run on the same inputs gives the same bytes, or the same error;
//   5. the compile path: a lowering or packaging refusal is a well-formed Error; a compiled package is accepted by
//      its own format (write_package), reads back byte for byte, and its host section plans (janusc compile's
//      exit-3 cases).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <janus/core/limits.hpp>
#include <janus/core/size.hpp>
#include <janus/graph/compile.hpp>
#include <janus/graph/execute.hpp>
#include <janus/graph/import_onnx.hpp>
#include <janus/graph/lower.hpp>
#include <janus/graph/passes.hpp>
#include <janus/onnx/model.hpp>
#include <janus/ops/dispatch.hpp>
#include <janus/package/package.hpp>

#include "run_support.hpp"

namespace {

using namespace janus;

const janus_fuzz::Properties check{"onnx_run"};

/// The budget of one execution: small enough that libFuzzer's default -rss_limit_mb (2048) is never the one to stop
/// a run, large enough for every committed fixture (mobilenet_v2_tiny holds about 1 MB of values).
constexpr std::uint64_t budget = std::uint64_t{64} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto m = onnx::parse_model(std::span<const std::uint8_t>(data, size), "fuzz.onnx");
    if (!m.ok()) {
        check.well_formed(m.error(), "decode");
        return 0;
    }
    auto g = graph::import_onnx(*m, "fuzz.onnx");
    if (!g.ok()) {
        check.well_formed(g.error(), "import");
        return 0;
    }
    for (const auto& v : g->values)
        check(within_size_policy(v.type.shape.span()), "imported values keep the size policy");
    const graph::KernelFn kernel = &ops::call_by_name;
    graph::PassLog log;
    const Status passed = graph::run_passes(*g, graph::default_pipeline, log, {kernel});
    if (!passed.ok()) {
        check.well_formed(passed.error(), "passes");
        return 0;
    }
    if (const auto l = graph::lower_graph(*g); !l.ok()) {
        check.well_formed(l.error(), "lower");
    } else if (const auto p = graph::compile_package(*g, *l); !p.ok()) {
        check.well_formed(p.error(), "package");
    } else {
        const auto bytes = package::write_package(*p, "fuzz.jpk");
        check(bytes.ok(), "a compiled package is accepted by its own format");
        const auto back = package::read_package(*bytes, "fuzz.jpk");
        check(back.ok() && package::write_package(*back, "fuzz.jpk").value() == *bytes,
              "a compiled package reads back byte for byte");
        check(!p->host || graph::host_plan(*p, "fuzz.jpk").ok(), "a compiled host section plans");
    }
    const std::uint64_t asked = graph::reference_run_bytes(*g);
    if (const Status s = charge_memory(asked, budget, "fuzz.onnx", "the reference run's values"); !s.ok()) {
        check.well_formed(s.error(), "budget");
        check(s.error().rule == "memory-limit", "a budget refusal has the rule memory-limit");
        return 0;
    }
    const auto in = graph::seeded_inputs(*g, 1);
    const auto a = graph::run_reference(*g, in, kernel);
    const auto b = graph::run_reference(*g, in, kernel);
    check(a.ok() == b.ok(), "the reference engine decides the same way twice");
    if (!a.ok()) {
        check.well_formed(a.error(), "reference");
        check(a.error().message() == b.error().message(), "the same error twice");
        return 0;
    }
    check(a->size() == g->outputs.size(), "one tensor per graph output");
    for (std::size_t i = 0; i < a->size(); ++i) {
        const auto& want = g->value(g->outputs[i]).type;
        check((*a)[i].dtype == want.dtype && (*a)[i].shape() == want.shape, "outputs of the declared type");
    }
    check(janus_fuzz::bytes(*a) == janus_fuzz::bytes(*b), "the same output bytes twice");
    return 0;
}
