#pragma once
// What the fuzz targets that run graphs and packages share (graph_diff, onnx_run, package_run): how a broken property
// is reported, the form every refusal must have, and outputs as bytes for a bit-exact comparison.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/ops/tensor.hpp>

namespace janus_fuzz {

/// A target's checks, named for its messages. `check(ok, what)` traps when a property is broken;
/// `check.well_formed(e, where)` requires an Error's input, rule and detail to be non-empty, and prints the error
/// when JANUS_FUZZ_TRACE is set (to see why a seed is refused).
struct Properties {
    const char* target;

    void operator()(bool ok, const char* what) const {
        if (!ok) {
            std::fprintf(stderr, "%s: property broken: %s\n", target, what);
            __builtin_trap();
        }
    }
    void well_formed(const janus::Error& e, const char* where) const {
        if (std::getenv("JANUS_FUZZ_TRACE")) std::fprintf(stderr, "%s: %s: %s\n", target, where, e.message().c_str());
        (*this)(!e.input.empty() && !e.rule.empty() && !e.detail.empty(), where);
    }
};

/// Each tensor's logical elements as bytes (clone(): contiguous whatever the layout).
inline std::vector<std::vector<std::byte>> bytes(const std::vector<janus::Tensor>& ts) {
    std::vector<std::vector<std::byte>> r;
    for (const janus::Tensor& t : ts) r.push_back(*t.clone().storage);
    return r;
}

}  // namespace janus_fuzz
