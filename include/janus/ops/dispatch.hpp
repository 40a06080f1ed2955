#pragma once
// Runtime kernel dispatch by op name: the one place that instantiates EVERY kernel of the registry.
//
// Contract: `call_by_name(name, inputs, attrs, out, ctx)` is `call_with<O>` of the op named `name` (arity,
// attribute rules, output type, then the kernel), or the `known-op` error. Including this header in a translation
// unit compiles all 51 kernels into it (minutes of -O2 for g++), so include it in ONE translation unit of a program
// and hand `&ops::call_by_name` to the code that needs it (graph::run_reference takes it as a KernelFn), or build
// with JANUS_OUT_OF_LINE_DISPATCH (ops/registry.hpp).
#include <optional>
#include <span>
#include <string_view>

#include <janus/ops/registry.hpp>

namespace janus::ops {

/// Checked invocation of the op called `name` from untrusted attributes; `out` gives the output type, whose
/// quantization the caller decides (seed A10). Out of line under JANUS_OUT_OF_LINE_DISPATCH (ops/registry.hpp).
#if defined(JANUS_OUT_OF_LINE_DISPATCH) && !defined(JANUS_DEFINE_DISPATCH)
Result<Tensor> call_by_name(std::string_view name, std::span<const Tensor> in, const AttrMap& attrs,
                            std::optional<TensorType> out, const OpContext& ctx);
#else
JANUS_DISPATCH_LINKAGE Result<Tensor> call_by_name(std::string_view name, std::span<const Tensor> in,
                                                   const AttrMap& attrs, std::optional<TensorType> out,
                                                   const OpContext& ctx) {
    std::optional<Result<Tensor> > r;
    for_each_op([&](auto t) {
        using O = typename decltype(t)::type;
        if (!r && O::name.view() == name) r = call_with<O>(in, attrs, out, ctx);
    });
    return r ? std::move(*r) : Result<Tensor>(unknown_op(name));
}
#endif

}  // namespace janus::ops
