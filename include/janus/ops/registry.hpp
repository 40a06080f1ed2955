#pragma once
// The registry: every op Janus defines, as one compile-time table (a Boost.Hana tuple of types).
//
// Consumers iterate it (`for_each_op`) to build name lookups, support tables, fuzz dispatch and (later) importer and
// emitter tables, so that adding an op to this list is the only registration step. A static_assert proves the names
// are unique. Runtime lookup by name (`infer_by_name`) serves untrusted callers (model importers, fuzzers) and
// returns an Error for an unknown op. A runtime kernel dispatch by name is deliberately not here: it would
// instantiate every kernel in every TU that includes the registry (the driver will own one, in one TU).
#include <array>
#include <optional>
#include <tuple>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/hana/unpack.hpp>

#include <janus/ops/argreduce.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/conv.hpp>
#include <janus/ops/matmul.hpp>
#include <janus/ops/movement.hpp>
#include <janus/ops/norm.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/pool.hpp>
#include <janus/ops/quantize.hpp>
#include <janus/ops/reduction.hpp>
#include <janus/ops/resize.hpp>
#include <janus/ops/softmax.hpp>
#include <janus/ops/unary.hpp>

namespace janus::ops {

//                                 unary elementwise
inline constexpr auto all_ops = boost::hana::tuple_t<Abs, Neg, Sign, Relu, Clip, LeakyRelu, HardSigmoid, HardSwish,
                                                     Sigmoid, Tanh, Exp, Sqrt, Reciprocal, Erf, Gelu,
                                                     // binary elementwise
                                                     Add, Sub, Mul, Min, Max,
                                                     // reductions and arg-reductions
                                                     ReduceSum, ReduceMean, ReduceMax, ReduceMin, ArgMax, ArgMin,
                                                     // contractions
                                                     Conv, ConvTranspose, MatMul, Gemm, ConvInteger,
                                                     MatMulInteger,
                                                     // windows
                                                     AveragePool, MaxPool, GlobalAveragePool, GlobalMaxPool,
                                                     MaxPoolIndices,
                                                     Resize,
                                                     // normalization
                                                     BatchNormalization, InstanceNormalization,
                                                     LayerNormalization, Softmax,
                                                     // data movement
                                                     Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Slice,
                                                     Concat, Pad,
                                                     // quantization
                                                     QuantizeLinear, DequantizeLinear, Requantize>;

inline constexpr std::size_t op_count = decltype(boost::hana::length(all_ops))::value;

/// Call f(boost::hana::type_c<O>) for every op, in table order.
template <class F>
void for_each_op(F&& f) {
    boost::hana::for_each(all_ops, f);
}

/// Is `name` a unary elementwise op (ops/unary.hpp: one input, one 256-entry table on int8)?
inline bool is_unary_elementwise(std::string_view name) {
    bool r = false;
    for_each_op([&](auto t) {
        using O = typename decltype(t)::type;
        if constexpr (std::is_base_of_v<unary_elementwise<O>, O>) r = r || O::name.view() == name;
    });
    return r;
}

/// The dtypes the op called `name` takes besides float32 and quantized int8/uint8 (its `plain_integers`, else none).
inline PlainInts plain_types_of(std::string_view name) {
    PlainInts r = PlainInts::none;
    for_each_op([&](auto t) {
        using O = typename decltype(t)::type;
        if constexpr (requires { O::plain_integers; })
            if (O::name.view() == name) r = O::plain_integers;
    });
    return r;
}

namespace detail {
template <class... O>
constexpr std::array<std::string_view, sizeof...(O)> names_of(boost::hana::basic_type<O>...) {
    return {O::name.view()...};
}
constexpr auto op_name_table() {
    return boost::hana::unpack(all_ops, [](auto... t) { return names_of(t...); });
}
constexpr bool names_unique() {
    const auto n = op_name_table();
    for (std::size_t i = 0; i < n.size(); ++i)
        for (std::size_t j = i + 1; j < n.size(); ++j)
            if (n[i] == n[j]) return false;
    return true;
}
static_assert(names_unique(), "two ops in ops::all_ops share a name");
template <class... O>
constexpr bool all_named(boost::hana::basic_type<O>...) {
    return (op_instances_named<O> && ...);
}
static_assert(boost::hana::unpack(all_ops, [](auto... t) { return all_named(t...); }),
              "an op of ops::all_ops is not named with JANUS_OP_INSTANCES(O) in its header (ops/op.hpp)");
}  // namespace detail

/// Every op name, in table order.
inline constexpr auto op_names = detail::op_name_table();

/// Attribute names an op accepts, in schema order (used by fuzzers and the support table).
template <Op O>
std::vector<std::string_view> attribute_names() {
    std::vector<std::string_view> v;
    std::apply([&](const auto&... f) { (v.push_back(f.name), ...); }, O::schema);
    return v;
}

inline Error unknown_op(std::string_view name) {
    return make_error(std::string(name), "", "known-op", "Janus has no operator named '" + std::string(name) + "'");
}

// Compile time: infer_by_name instantiates every op's inference (10-15 s per translation unit). A program with
// many TUs may compile it once: define JANUS_OUT_OF_LINE_DISPATCH in every TU (then this header only declares it)
// and, in exactly one TU, also JANUS_DEFINE_DISPATCH before including it (that TU holds the one definition).
// ops/dispatch.hpp's call_by_name follows the same rule. Without the macros everything is inline, as usual.
#if defined(JANUS_DEFINE_DISPATCH)
#define JANUS_DISPATCH_LINKAGE
#else
#define JANUS_DISPATCH_LINKAGE inline
#endif

/// Shape/type inference of the op called `name` from untrusted attributes.
#if defined(JANUS_OUT_OF_LINE_DISPATCH) && !defined(JANUS_DEFINE_DISPATCH)
Result<TensorType> infer_by_name(std::string_view name, std::span<const TensorType> in, const AttrMap& attrs);
#else
JANUS_DISPATCH_LINKAGE Result<TensorType> infer_by_name(std::string_view name, std::span<const TensorType> in,
                                                        const AttrMap& attrs) {
    std::optional<Result<TensorType>> r;
    for_each_op([&](auto t) {
        using O = typename decltype(t)::type;
        if (!r && O::name.view() == name) r = infer_with<O>(in, attrs);
    });
    return r ? std::move(*r) : Result<TensorType>(unknown_op(name));
}
#endif

}  // namespace janus::ops
