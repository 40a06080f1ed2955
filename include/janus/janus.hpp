#pragma once
// Umbrella header: everything Janus offers. Prefer the per-layer headers in your own code (compile time).
#include <janus/version.hpp>
#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/numeric/fixed_point.hpp>
#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/numeric/rounding.hpp>
#include <janus/layout/layout.hpp>
#include <janus/layout/shape.hpp>
#include <janus/ops/tensor.hpp>
