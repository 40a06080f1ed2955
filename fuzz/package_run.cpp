// Fuzz target: package bytes -> read -> run on the simulator (with the host section on the reference kernels): what
// `janusc run MODEL.jpk` does with a package file (issue 26: a 452-byte package asked for 12 GiB, a package's
// program looped for hours).
//
// Input: any bytes, read as a package file (toolchain check off: a program of another build must be as harmless)
// after its checksums are recomputed (tests/package/craft.hpp reseal), so that a mutation reaches the structure and
// the run instead of stopping at a checksum; package_reader fuzzes the checksums themselves.
// Seeds: the valid packages of the package_reader corpus, tests/package/{golden,v1,v2}/*.jpk and
// tests/hostile/package_regions_12g.jpk (fuzz/make_seeds.py package_run). Dictionary: fuzz/package_run.dict.
// Limits, as janusc applies them (docs/janusc.md "Limits"), lowered so that one execution stays short: the
// regions the run allocates (graph::package_run_bytes), the inputs made here and the host graph's values and
// kernel scratch (graph::reference_run_bytes) are charged against a 64 MiB budget (core/limits.hpp charge_memory)
// before anything is allocated; the simulator runs with at most 2^22 cycles, 2^24 DMA bytes, 2^24 MACs and 2^22 VEC operations.
// Properties (a __builtin_trap() when broken):
//   1. every refusal (read, host plan, budget, run) is a well-formed Error: input, rule and detail non-empty; a
//      budget refusal has the rule memory-limit;
//   2. a run returns one tensor per model output;
//   3. determinism: a second run (fresh machine, same inputs) gives the same bytes, or the same error.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/core/limits.hpp>
#include <janus/graph/compile.hpp>
#include <janus/graph/execute.hpp>
#include <janus/ops/dispatch.hpp>
#include <janus/package/package.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "../tests/package/craft.hpp"
#include "run_support.hpp"

namespace {

using namespace janus;

const janus_fuzz::Properties check{"package_run"};

constexpr std::uint64_t budget = std::uint64_t{64} << 20;

vnpu::sim::Report simulate(std::span<const vnpu::Instr> program, vnpu::sim::Machine& machine,
                           vnpu::sim::Options o) {
    o.max_cycles = std::uint64_t{1} << 22;
    o.max_dma_bytes = std::uint64_t{1} << 24;
    o.max_macs = std::uint64_t{1} << 24;
    o.max_vec_ops = std::uint64_t{1} << 22;
    return vnpu::sim::run(program, machine, std::move(o));
}

/// A model input as the run takes it: its dtype and shape (the graph or the package gives its quantization).
struct InputType {
    DType dtype;
    Shape shape;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::uint8_t> file(data, data + size);
    package::craft::reseal(file);
    const auto p = package::read_package(file, "fuzz.jpk", package::ReadOptions{.check_toolchain = false});
    if (!p.ok()) {
        check.well_formed(p.error(), "read");
        return 0;
    }
    // the model's inputs: the host graph's model inputs with a host section, else the program's inputs
    std::optional<graph::HostPlan> h;
    std::vector<InputType> types;
    std::uint64_t asked = graph::package_run_bytes(*p);
    if (p->host) {
        auto plan = graph::host_plan(*p, "fuzz.jpk");
        if (!plan.ok()) {
            check.well_formed(plan.error(), "host plan");
            return 0;
        }
        h = std::move(*plan);
        for (const graph::ValueId v : h->model_inputs)
            types.push_back({h->graph.value(v).type.dtype, h->graph.value(v).type.shape});
        asked += graph::reference_run_bytes(h->graph);
    } else {
        for (const auto& d : p->inputs) {
            // janusc takes inputs from .npy / .pb files, whose readers refuse a rank above max_rank (the package
            // format allows 8): no input of such a rank reaches the run
            if (d.shape.size() > static_cast<std::size_t>(max_rank)) return 0;
            Shape s;
            for (const std::int64_t x : d.shape) s.push_back(x);  // the reader applied the size policy (io-dim)
            types.push_back({d.dtype, s});
            asked += static_cast<std::uint64_t>(element_count(s)) * dtype_size(d.dtype);
        }
    }
    if (const Status s = charge_memory(asked, budget, "fuzz.jpk", "the run's regions, inputs and host values");
        !s.ok()) {
        check.well_formed(s.error(), "budget");
        check(s.error().rule == "memory-limit", "a budget refusal has the rule memory-limit");
        return 0;
    }
    std::vector<Tensor> in;
    std::uint8_t fill = 0x5A;
    for (const InputType& t : types) {
        Tensor x = Tensor::zeros(t.dtype, t.shape);
        auto* b = reinterpret_cast<std::uint8_t*>(x.storage->data());
        for (std::size_t i = 0; i < x.storage->size(); ++i) b[i] = fill = static_cast<std::uint8_t>(fill * 5 + 1);
        if (t.dtype == DType::f32)  // finite values in [-1, 1): a float input's bit pattern may be NaN
            for (std::int64_t i = 0; i < x.elements(); ++i)
                reinterpret_cast<float*>(b)[i] = static_cast<float>(b[4 * i] % 128) / 64.0f - 1.0f;
        in.push_back(std::move(x));
    }
    const graph::KernelFn kernel = &ops::call_by_name;
    const auto run = [&] {
        return h ? graph::run_package(*p, *h, in, kernel, &simulate) : graph::run_package(*p, in, kernel, &simulate);
    };
    const auto a = run();
    const auto b = run();
    check(a.ok() == b.ok(), "the run decides the same way twice");
    if (!a.ok()) {
        check.well_formed(a.error(), "run");
        check(a.error().message() == b.error().message(), "the same error twice");
        return 0;
    }
    check(a->size() == (h ? h->graph.outputs.size() : p->outputs.size()), "one tensor per model output");
    check(janus_fuzz::bytes(*a) == janus_fuzz::bytes(*b), "the same output bytes twice");
    return 0;
}
