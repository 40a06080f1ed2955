#pragma once
// Every kernel of the registry behind one function pointer, compiled ONCE (tools/common/kernels.cpp) and linked by
// janusc and by every test executable: ops/dispatch.hpp instantiates all 51 kernels, about 90 s of g++ -O2.
#include <janus/graph/execute.hpp>

namespace janus_tools {

/// ops::call_by_name, as a graph::KernelFn.
extern const janus::graph::KernelFn kernel_by_name;

}  // namespace janus_tools
