#pragma once
// The operator interface. An op is a type holding DATA about the operator, not a pair of hand-written kernels:
//
//   struct Add {
//       static constexpr fixed_string name = "Add";        // ONNX op type
//       static constexpr int min_inputs = 2, max_inputs = 2;
//       using Attrs = NoAttrs;                             // typed attributes (ops/attrs.hpp) ...
//       static constexpr auto schema = no_attrs_schema;    // ... and their protocol: names, kinds, valid ranges
//       // shape, dtype and quantization rule: what the output IS (errors for invalid inputs)
//       static Result<TensorType> infer(std::span<const TensorType> in, const Attrs&);
//       // the kernel, assembled from index-structure primitives (map, reduce, window, contract, index maps)
//       // and element primitives (ops/expr.hpp); out is the output type decided by the caller (usually infer's).
//       static Result<Tensor> run(std::span<const Tensor> in, const Attrs&, const TensorType& out, const OpContext&);
//   };
//
// Constant operands that ONNX passes as inputs (Reshape shape, Slice starts/ends, Pad pads, Clip min/max, axes of
// opset 13+) are attributes in Janus; the importer folds constant inputs into them.
//
// Quantization rule (seed A10): an output carries ITS OWN quantization. `infer` proposes it only where the op
// preserves real values exactly (data movement, max/min pooling-like selections); for arithmetic ops the output
// quantization must be supplied by the caller (from the model), and `run` never copies the input's parameters.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/core/fixed_string.hpp>
#include <janus/layout/shape.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/attrs.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::ops {

/// What a tensor is, without its bytes.
struct TensorType {
    DType dtype = DType::f32;
    Shape shape;
    std::optional<numeric::QuantParams> quant;

    bool quantized() const noexcept { return quant.has_value(); }
    friend bool operator==(const TensorType&, const TensorType&) = default;
    /// "int8[1,3,4] (int8 s=0.1 zp=0)" / "float32[2,2]"
    std::string str() const {
        std::string s = std::string(dtype_name(dtype)) + shape.str();
        if (quant) s += " (" + quant->str() + ")";
        return s;
    }
};

inline TensorType type_of(const Tensor& t) { return {t.dtype, t.shape(), t.quant}; }

/// Configuration passed to every kernel (no global state).
struct OpContext {
    bool simd = true;  ///< false: run the scalar reference path of every primitive
};

/// The static interface every op type satisfies.
template <class O>
concept Op = requires(std::span<const TensorType> ti, std::span<const Tensor> t, const typename O::Attrs& a,
                      const TensorType& out, const OpContext& ctx) {
    { O::name.view() } -> std::convertible_to<std::string_view>;
    { O::min_inputs } -> std::convertible_to<int>;
    { O::max_inputs } -> std::convertible_to<int>;
    O::schema;
    { O::infer(ti, a) } -> std::same_as<Result<TensorType>>;
    { O::run(t, a, out, ctx) } -> std::same_as<Result<Tensor>>;
};

/// "Add" / "Add.input[1]" — the `what` of error messages.
template <Op O>
std::string op_what(int input = -1) {
    std::string s(O::name.view());
    if (input >= 0) s += ".input[" + std::to_string(input) + "]";
    return s;
}

/// Check the input count.
template <Op O, class T>
Status check_arity(std::span<const T> in) {
    const int n = static_cast<int>(in.size());
    if (n < O::min_inputs || n > O::max_inputs)
        return make_error(op_what<O>(), "", "input-count",
                          "expects " + std::to_string(O::min_inputs) +
                              (O::max_inputs != O::min_inputs ? " to " + std::to_string(O::max_inputs) : "") +
                              " inputs, got " + std::to_string(n));
    return ok_status();
}

/// Full checked invocation: arity, attribute rules, output type (from infer unless `out` is given, in which case its
/// dtype and shape must agree with infer's), then the kernel.
template <Op O>
Result<Tensor> call(std::span<const Tensor> in, const typename O::Attrs& attrs,
                    std::optional<TensorType> out = std::nullopt, const OpContext& ctx = {}) {
    JANUS_CHECK(check_arity<O>(in));
    JANUS_CHECK(validate_attrs(O::schema, attrs, op_what<O>()));
    std::vector<TensorType> types;
    for (const auto& t : in) types.push_back(type_of(t));
    JANUS_TRY(TensorType inferred, O::infer(types, attrs));
    if (out) {
        if (out->dtype != inferred.dtype || !(out->shape == inferred.shape))
            return make_error(op_what<O>(), "output", "output-type-matches-inference",
                              "requested output " + out->str() + " but the op produces " + inferred.str());
        if (out->quant) JANUS_CHECK(numeric::check_quant_fits(*out->quant, out->shape, op_what<O>() + ".output"));
        inferred.quant = out->quant;
    }
    return O::run(in, attrs, inferred, ctx);
}

template <Op O>
Result<Tensor> call(std::initializer_list<Tensor> in, const typename O::Attrs& attrs = {},
                    std::optional<TensorType> out = std::nullopt, const OpContext& ctx = {}) {
    std::vector<Tensor> v(in);
    return call<O>(std::span<const Tensor>(v), attrs, std::move(out), ctx);
}

/// Same call from untrusted attributes (an ONNX node's).
template <Op O>
Result<Tensor> call_with(std::span<const Tensor> in, const AttrMap& m, std::optional<TensorType> out = std::nullopt,
                         const OpContext& ctx = {}) {
    typename O::Attrs a{};
    JANUS_CHECK(parse_attrs(O::schema, m, a, op_what<O>()));
    return call<O>(in, a, std::move(out), ctx);
}

/// Shape inference from untrusted attributes (used by the importer and the shape fuzzer).
template <Op O>
Result<TensorType> infer_with(std::span<const TensorType> in, const AttrMap& m) {
    JANUS_CHECK(check_arity<O>(in));
    typename O::Attrs a{};
    JANUS_CHECK(parse_attrs(O::schema, m, a, op_what<O>()));
    return O::infer(in, a);
}

// ---- One compiled copy of each kernel ---------------------------------------------------------------------------
//
// Every op header names its ops with JANUS_OP_INSTANCES(O) right after defining them, and ops/registry.hpp refuses
// (static_assert) an op of the table that was not named. What the name does depends on the macros of
// ops/registry.hpp's compile-time rule:
//   - JANUS_OUT_OF_LINE_DISPATCH: an explicit instantiation declaration of call<O> and call_with<O>. The TU does not
//     compile the kernel; it calls the copy of the one TU that also defines JANUS_DEFINE_DISPATCH.
//   - JANUS_DEFINE_DISPATCH: the explicit instantiation definition of both (that TU must include every op header,
//     ops/registry.hpp does).
//   - neither: nothing but the registration mark; every TU instantiates what it calls, as usual.
// A test TU that calls twenty kernels through call<O> compiles in about half the time this way (tests/emit: 75 s
// against 40 s under g++ -O2).
template <class O>
inline constexpr bool op_instances_named = false;

#define JANUS_OP_INSTANCES_WITH(KEYWORD, O)                                                                          \
    KEYWORD template Result<Tensor> call<O>(std::span<const Tensor>, const O::Attrs&, std::optional<TensorType>,     \
                                            const OpContext&);                                                       \
    KEYWORD template Result<Tensor> call_with<O>(std::span<const Tensor>, const AttrMap&, std::optional<TensorType>, \
                                                 const OpContext&);
#if defined(JANUS_DEFINE_DISPATCH)
#define JANUS_OP_INSTANCES(O)                           \
    template <>                                         \
    inline constexpr bool op_instances_named<O> = true; \
    JANUS_OP_INSTANCES_WITH(, O)
#elif defined(JANUS_OUT_OF_LINE_DISPATCH)
#define JANUS_OP_INSTANCES(O)                           \
    template <>                                         \
    inline constexpr bool op_instances_named<O> = true; \
    JANUS_OP_INSTANCES_WITH(extern, O)
#else
#define JANUS_OP_INSTANCES(O) \
    template <>               \
    inline constexpr bool op_instances_named<O> = true;
#endif

// ---- Shared checks of the quantization rule -------------------------------------------------------------------

/// Inputs of a quantized op: int8/uint8 with per-tensor parameters (unless `allow_per_axis`).
inline Status require_quantized(const TensorType& t, const std::string& what, bool allow_per_axis = false) {
    if (!is_quantized_storage(t.dtype) || !t.quant)
        return make_error(what, "", "quantized-input",
                          "expected a quantized int8/uint8 tensor, got " + t.str());
    if (!allow_per_axis && !t.quant->per_tensor())
        return make_error(what, "", "per-tensor-quantization", "per-axis quantization is not supported here: " +
                                                                   t.str());
    return ok_status();
}

/// The output of a quantized arithmetic op must come with its own parameters (seed A10).
inline Status require_output_quant(const TensorType& out, const std::string& what) {
    if (!is_quantized_storage(out.dtype)) return ok_status();
    if (!out.quant)
        return make_error(what, "output", "output-quantization-required",
                          "a quantized arithmetic result needs its own scale and zero point; they are never copied "
                          "from an input");
    if (!out.quant->per_tensor())
        return make_error(what, "output", "per-tensor-quantization", "per-axis output quantization is not supported");
    if (out.quant->dtype != out.dtype)
        return make_error(what, "output", "quant-dtype-matches", "quantization dtype differs from storage dtype");
    return ok_status();
}

/// Every input float32, or every input quantized with the same storage dtype: the two kernel families of this issue.
inline Result<bool> classify_inputs(std::span<const TensorType> in, const std::string& what) {
    if (in.empty()) return false;
    const bool q = in[0].quantized();
    for (std::size_t k = 0; k < in.size(); ++k) {
        const std::string w = what + ".input[" + std::to_string(k) + "]";
        if (q) {
            JANUS_CHECK(require_quantized(in[k], w, true));
            if (in[k].dtype != in[0].dtype)
                return make_error(w, "", "same-storage-dtype", "mixes " + std::string(dtype_name(in[0].dtype)) +
                                                                   " and " + std::string(dtype_name(in[k].dtype)));
        } else if (in[k].dtype != DType::f32) {
            return make_error(w, "", "float-or-quantized",
                              "expected float32 or a quantized int8/uint8 tensor, got " + in[k].str());
        }
    }
    return q;
}

}  // namespace janus::ops
