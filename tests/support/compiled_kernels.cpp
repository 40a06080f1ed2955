// The one translation unit of the test executables that includes ops/dispatch.hpp (see compiled_kernels.hpp).
#include "support/compiled_kernels.hpp"

#include <janus/ops/dispatch.hpp>

namespace janus_test {

const janus::graph::KernelFn kernel_by_name = &janus::ops::call_by_name;

}  // namespace janus_test
