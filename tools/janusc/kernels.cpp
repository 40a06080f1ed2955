// The one translation unit of janusc that includes ops/dispatch.hpp: every kernel of the registry is compiled here,
// in parallel with the rest of the driver.
#include <janus/ops/dispatch.hpp>

#include "commands.hpp"

namespace janusc {

const janus::graph::KernelFn kernel_by_name = &janus::ops::call_by_name;

}  // namespace janusc
