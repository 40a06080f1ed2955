// The one translation unit that includes ops/dispatch.hpp (see kernels.hpp).
#include "kernels.hpp"

#include <janus/ops/dispatch.hpp>

namespace janus_tools {

const janus::graph::KernelFn kernel_by_name = &janus::ops::call_by_name;

}  // namespace janus_tools
