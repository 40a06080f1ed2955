#pragma once
// A fixture of the CTest test vnpu-independent-of-ops.detects (CMakeLists.txt): a header that includes the host kernels,
// which the check must refuse. Never included by anything.
#include <janus/ops/binary.hpp>
