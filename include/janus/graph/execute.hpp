#pragma once
// The reference engine: a graph run node by node on the host reference kernels.
//
// Contract: `run_reference(g, inputs, kernel)` takes one contiguous tensor per graph input, in `g.inputs` order, with the
// input's declared dtype and shape (quantized inputs may come without parameters: the graph's are used), and returns
// one tensor per graph output, in `g.outputs` order. Every node runs with the output type the graph gives it, so its
// output quantization is the graph's (seed A10), never inferred anew. `observe(node index, value, tensor)` sees every
// value as it is computed (janusc verify compares them across engines). Errors name the graph input or the node.
// `kernel` runs one node: pass `&ops::call_by_name` (ops/dispatch.hpp), taken in ONE translation unit of the
// program, because that header compiles every kernel of the registry.
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/graph/ir.hpp>
#include <janus/ops/registry.hpp>

namespace janus::graph {

using Observer = std::function<void(std::size_t node, ValueId value, const Tensor& t)>;
/// One node's kernel: ops::call_by_name's signature.
using KernelFn = Result<Tensor> (*)(std::string_view op, std::span<const Tensor> in, const ops::AttrMap& attrs,
                                    std::optional<ops::TensorType> out, const ops::OpContext& ctx);

inline Result<std::vector<Tensor>> run_reference(const Graph& g, std::span<const Tensor> inputs, KernelFn kernel,
                                                 const Observer& observe = {}, const ops::OpContext& ctx = {}) {
    if (inputs.size() != g.inputs.size())
        return make_error(
            "graph " + g.name, "inputs", "input-count",
            "the graph takes " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
    std::vector<std::optional<Tensor>> env(g.values.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Value& v = g.value(g.inputs[i]);
        Tensor t = inputs[i];
        if (t.dtype != v.type.dtype || !(t.shape() == v.type.shape))
            return make_error("input " + v.name, "", "input-type",
                              "expected " + detail::type_text(v.type) + ", got " + std::string(dtype_name(t.dtype)) +
                                  t.shape().str());
        t.quant = v.type.quant;
        env[static_cast<std::size_t>(g.inputs[i])] = std::move(t);
    }
    for (std::size_t i = 0; i < g.values.size(); ++i)
        if (g.values[i].kind == ValueKind::constant) env[i] = *g.values[i].data;
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
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
            return make_error("graph " + g.name, "node " + std::to_string(k) + " (" + n.op + " " + n.origin + ")",
                              r.error().rule, r.error().message());
        if (observe) observe(k, o, *r);
        env[static_cast<std::size_t>(o)] = std::move(*r);
    }
    std::vector<Tensor> out;
    for (ValueId v : g.outputs) out.push_back(*env[static_cast<std::size_t>(v)]);
    return out;
}

}  // namespace janus::graph
