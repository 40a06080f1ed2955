#pragma once
// The host side of the matmul emission tests (tests/emit/matmul.cpp, matmul_batch.cpp): the registry's MatMul on a
// test problem, the reference every emitted matmul is compared with bit for bit.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <janus/ops/matmul.hpp>

namespace et {

/// Y's int8 values of the host MatMul of `p`: its members `a` and `w` hold A's and B's int8 values, `ta`, `tb` and
/// `ty` their quantized types (rank 2 or rank 3).
template <class Problem>
std::vector<std::int8_t> host_matmul(const Problem& p) {
    const janus::Tensor a = janus::Tensor::from<std::int8_t>(p.ta.shape, p.a, *p.ta.quant);
    const janus::Tensor b = janus::Tensor::from<std::int8_t>(p.tb.shape, p.w, *p.tb.quant);
    auto y = janus::ops::call<janus::ops::MatMul>({a, b}, {}, p.ty);
    REQUIRE_MESSAGE(y.ok(), (y.ok() ? std::string() : y.error().message()));
    return y->template to_vector<std::int8_t>();
}

}  // namespace et
