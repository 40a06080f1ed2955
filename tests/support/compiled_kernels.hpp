#pragma once
// Every kernel of the registry, compiled once for all test executables (tests/support/compiled_kernels.cpp):
// ops/dispatch.hpp instantiates all of them, minutes of g++ -O2, so tests take it through this declaration.
#include <janus/graph/execute.hpp>

namespace janus_test {

/// ops::call_by_name, as a graph::KernelFn.
extern const janus::graph::KernelFn kernel_by_name;

}  // namespace janus_test
