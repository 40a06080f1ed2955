#pragma once
// Plans from quantization parameters alone, through each op's one planning entry (ops/op.hpp, ops::Planned):
// the element-wise tests start from scales and zero points, not from tensors, and the table or the fixed-point
// parameters depend on nothing else. The operands are [1] tensors of the parameters' storage type.
#include <array>
#include <initializer_list>
#include <type_traits>

#include <janus/ops/binary.hpp>
#include <janus/ops/op.hpp>

namespace janus_test {

/// O::plan for per-tensor quantized operands `in` and output `out`.
template <janus::ops::Planned O>
janus::Result<typename O::Plan> quant_plan(std::initializer_list<janus::numeric::QuantParams> in,
                                           const janus::numeric::QuantParams& out, janus::numeric::Rounding rounding,
                                           const typename O::Attrs& attrs = {}) {
    std::vector<janus::ops::TensorType> types;
    for (const auto& q : in) types.push_back({q.dtype, janus::Shape{1}, q});
    return O::plan(types, attrs, janus::ops::TensorType{out.dtype, janus::Shape{1}, out}, rounding);
}

/// The binary op of element operation K (Add for BinOp::add, ...).
template <janus::expr::BinOp K>
using binary_op = std::conditional_t<
    K == janus::expr::BinOp::add, janus::ops::Add,
    std::conditional_t<K == janus::expr::BinOp::sub, janus::ops::Sub,
                       std::conditional_t<K == janus::expr::BinOp::mul, janus::ops::Mul,
                                          std::conditional_t<K == janus::expr::BinOp::min, janus::ops::Min,
                                                             janus::ops::Max>>>>;

/// The plan of binary op K for per-tensor quantized a, b and output `out`.
template <janus::expr::BinOp K>
janus::Result<janus::ops::BinaryQuantPlan> binary_plan(const janus::numeric::QuantParams& a,
                                                       const janus::numeric::QuantParams& b,
                                                       const janus::numeric::QuantParams& out,
                                                       janus::numeric::Rounding rounding) {
    static_assert(binary_op<K>::kind == K);
    return quant_plan<binary_op<K>>({a, b}, out, rounding);
}

}  // namespace janus_test
