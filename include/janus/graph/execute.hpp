#pragma once
// The reference engine: a graph run node by node on the host reference kernels.
//
// Contract: `run_reference(g, inputs, kernel)` takes one contiguous tensor per graph input, in `g.inputs` order,
// with the input's declared dtype and shape (quantized inputs may come without parameters: the graph's are used),
// and returns one tensor per graph output, in `g.outputs` order. Every node runs with the output type the graph
// gives it, so its output quantization is the graph's (seed A10), never inferred anew. `observe(node index, value,
// tensor)` sees every value as it is computed (janusc verify compares them across engines). Errors name the graph
// input or the node. `kernel` runs one node: pass `&ops::call_by_name` (ops/dispatch.hpp), taken in ONE
// translation unit of the program, because that header compiles every kernel of the registry. `bind_inputs` and
// `run_node` are the pieces the NPU engine (graph/run_npu.hpp) shares for its host nodes. `reference_run_bytes(g)`
// is what a run may hold, its values and its largest kernel's scratch: the caller's memory budget applies to it
// (issue 26).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/graph/ir.hpp>
#include <janus/ops/registry.hpp>

namespace janus::graph {

using Observer = std::function<void(std::size_t node, ValueId value, const Tensor& t)>;
/// One node's kernel: ops::call_by_name's signature.
using KernelFn = Result<Tensor> (*)(std::string_view op, std::span<const Tensor> in, const ops::AttrMap& attrs,
                                    std::optional<ops::TensorType> out, const ops::OpContext& ctx);

/// Every value the run has computed so far (inputs and constants first), by ValueId.
using Env = std::vector<std::optional<Tensor>>;

/// The environment of a run: the graph inputs (checked against their declared types, given the graph's
/// quantization) and the constants.
/// `which` lists the graph inputs the caller gives (a package's host graph takes its other inputs from the NPU
/// program: graph/compile.hpp); the overload without it binds all of them.
inline Result<Env> bind_inputs(const Graph& g, std::span<const Tensor> inputs, std::span<const ValueId> which) {
    if (inputs.size() != which.size())
        return make_error(
            "graph " + g.name, "inputs", "input-count",
            "the graph takes " + std::to_string(which.size()) + " inputs, got " + std::to_string(inputs.size()));
    Env env(g.values.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Value& v = g.value(which[i]);
        Tensor t = inputs[i];
        if (t.dtype != v.type.dtype || !(t.shape() == v.type.shape))
            return make_error("input " + v.name, "", "input-type",
                              "expected " + detail::type_text(v.type) + ", got " + std::string(dtype_name(t.dtype)) +
                                  t.shape().str());
        t.quant = v.type.quant;
        env[static_cast<std::size_t>(which[i])] = std::move(t);
    }
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].kind == ValueKind::constant) env[i] = *g.values[i].data;
    return env;
}

inline Result<Env> bind_inputs(const Graph& g, std::span<const Tensor> inputs) {
    return bind_inputs(g, inputs, g.inputs);
}

/// Run node `k` on the host reference kernels, with the output type the graph gives it.
inline Status run_node(const Graph& g, std::size_t k, Env& env, KernelFn kernel, const Observer& observe,
                       const ops::OpContext& ctx) {
    const Node& n = g.nodes[k];
    std::vector<Tensor> in;
    for (ValueId x : n.inputs) {
        if (x == no_value) continue;
        const auto& t = env[static_cast<std::size_t>(x)];
        if (!t)
            return make_error("graph " + g.name, "node " + std::to_string(k), "ir-topological",
                              "reads " + g.value(x).name + " before it is computed");
        in.push_back(*t);
    }
    const ValueId o = n.outputs.at(0);
    auto r = kernel(n.op, in, n.attrs, g.value(o).type, ctx);
    if (!r.ok())
        return r.error().within("graph " + g.name, "node " + std::to_string(k) + " (" + n.op + " " + n.origin + ")");
    if (observe) observe(k, o, *r);
    env[static_cast<std::size_t>(o)] = std::move(*r);
    return ok_status();
}

/// The bytes of every value of `g` (inputs, constants, every node's output), dense: what run_reference holds at
/// its end, since the engine keeps every value (Env). Every value passed the size policy (core/size.hpp), so no term
/// overflows; the sum saturates at 2^64 - 1.
inline std::uint64_t reference_value_bytes(const Graph& g) {
    std::uint64_t total = 0;
    for (const Value& v : g.values) {
        const auto bytes = static_cast<std::uint64_t>(element_count(v.type.shape)) * dtype_size(v.type.dtype);
        total = bytes > ~std::uint64_t{0} - total ? ~std::uint64_t{0} : total + bytes;
    }
    return total;
}

/// The most one node's host kernel of `g` may allocate while it runs, besides its output: the largest
/// ops::kernel_scratch_bound of its nodes (one node runs at a time).
inline std::uint64_t reference_scratch_bytes(const Graph& g) {
    std::uint64_t most = 0;
    std::vector<ops::TensorType> in;
    for (const Node& n : g.nodes) {
        in.clear();
        for (ValueId x : n.inputs)
            if (x != no_value) in.push_back(g.value(x).type);
        for (ValueId o : n.outputs) most = std::max(most, ops::kernel_scratch_bound(in, g.value(o).type));
    }
    return most;
}

/// What a run of `g` on the reference engine may hold at most: every value (reference_value_bytes) and the largest
/// kernel's scratch (reference_scratch_bytes). A caller running a graph from outside checks it against its memory
/// budget (core/limits.hpp charge_memory) first: an 89-byte model may Expand one float into 4 GiB, a 289-byte one
/// average-pool 121 MiB with 1.3 GB of kernel scratch (issue 26). Saturates at 2^64 - 1.
inline std::uint64_t reference_run_bytes(const Graph& g) {
    const std::uint64_t values = reference_value_bytes(g), scratch = reference_scratch_bytes(g);
    return scratch > ~std::uint64_t{0} - values ? ~std::uint64_t{0} : values + scratch;
}

/// Deterministic inputs for every graph input (janusc verify without -i; tests): integer and quantized inputs get
/// uniformly random codes (int8 -128..127, uint8 0..255, wider integers -128..127), float32 inputs values in
/// [-1, 1). The generator is splitmix64 and nothing else: the same seed gives the same bytes with every compiler and
/// standard library.
inline std::vector<Tensor> seeded_inputs(const Graph& g, std::uint64_t seed) {
    std::uint64_t state = seed;
    const auto next = [&state] {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    std::vector<Tensor> in;
    for (ValueId v : g.inputs) {
        const auto& t = g.value(v).type;
        Tensor x = Tensor::zeros(t.dtype, t.shape, t.quant);
        visit_dtype(t.dtype, [&](auto ty) {
            using T = typename decltype(ty)::type;
            std::byte* dst = x.data();  // zeros() is dense and row-major: written in place, no copy (issue 26)
            for (std::int64_t i = 0; i < x.elements(); ++i) {
                T e{};
                const std::uint64_t r = next();
                if constexpr (expr::is_float_v<T>) {
                    e = static_cast<T>(static_cast<double>(r >> 40) / 8388608.0 - 1.0);  // 24 bits: [-1, 1)
                } else if constexpr (std::is_same_v<T, std::uint8_t>) {
                    e = static_cast<T>(r >> 56);
                } else {
                    e = static_cast<T>(static_cast<std::int64_t>(r >> 56) - 128);
                }
                std::memcpy(dst + static_cast<std::size_t>(i) * sizeof(T), &e, sizeof(T));
            }
        });
        in.push_back(std::move(x));
    }
    return in;
}

inline Result<std::vector<Tensor>> run_reference(const Graph& g, std::span<const Tensor> inputs, KernelFn kernel,
                                                 const Observer& observe = {}, const ops::OpContext& ctx = {}) {
    JANUS_TRY(Env env, bind_inputs(g, inputs));
    for (std::size_t k = 0; k < g.nodes.size(); ++k) JANUS_CHECK(run_node(g, k, env, kernel, observe, ctx));
    std::vector<Tensor> out;
    for (ValueId v : g.outputs) out.push_back(*env[static_cast<std::size_t>(v)]);
    return out;
}

}  // namespace janus::graph
