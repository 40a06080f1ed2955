// The one translation unit that defines the registry's dispatch: ops::infer_by_name and ops::call_by_name (see
// kernels.hpp; every other TU of janusc and of the tests is built with JANUS_OUT_OF_LINE_DISPATCH).
#define JANUS_DEFINE_DISPATCH 1
#include <janus/ops/dispatch.hpp>
#include <janus/ops/registry.hpp>

#include "kernels.hpp"

namespace janus_tools {

const janus::graph::KernelFn kernel_by_name = &janus::ops::call_by_name;

}  // namespace janus_tools
