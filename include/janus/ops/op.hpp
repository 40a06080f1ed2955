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
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/core/fixed_string.hpp>
#include <janus/layout/shape.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/numeric/rounding.hpp>
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

/// The memory a host kernel (`run`) may allocate while it runs, besides its output: kernel_scratch_per_element bytes
/// per element of its inputs and its output (accumulators, packed weights, count tensors, float copies), plus
/// kernel_scratch_fixed. A run's memory budget charges it (graph/execute.hpp reference_run_bytes; janusc
/// --max-memory, issue 26), and tests/ops_scratch measures every kernel family against it. Outside it, capped by
/// rules of their own: a pool's count table (at most 2^22 entries of 8 bytes: rule pool-count-table).
inline constexpr std::uint64_t kernel_scratch_per_element = 16;
inline constexpr std::uint64_t kernel_scratch_fixed = std::uint64_t{1} << 20;
/// kernel_scratch_bound of a node with these input and output types (saturating at 2^64 - 1).
inline std::uint64_t kernel_scratch_bound(std::span<const TensorType> in, const TensorType& out) noexcept {
    constexpr std::uint64_t max = ~std::uint64_t{0};
    std::uint64_t elements = static_cast<std::uint64_t>(element_count(out.shape));
    for (const TensorType& t : in) {
        const auto n = static_cast<std::uint64_t>(element_count(t.shape));
        elements = n > max - elements ? max : elements + n;
    }
    return elements > (max - kernel_scratch_fixed) / kernel_scratch_per_element
               ? max
               : kernel_scratch_fixed + kernel_scratch_per_element * elements;
}

/// Configuration passed to every kernel (no global state).
struct OpContext {
    bool simd = true;  ///< false: run the scalar reference path of every primitive
    /// The rounding of every fixed-point requantization the op plans (numeric/rounding.hpp; `janusc --rounding`).
    numeric::Rounding rounding = numeric::default_rounding_mode;
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

/// The planning entry (docs/ARCHITECTURE.md "Plans"). An op whose kernel depends on more than its inputs' shapes —
/// a requantization, a window geometry, a table — decides all of it once, in a typed plan:
//
//   using Plan = ...;
//   static Result<Plan> plan(std::span<const TensorType> in, const Attrs&, const TensorType& out, numeric::Rounding);
//
/// One signature for every such op: the input types, the typed attributes, the output type (its quantization is the
/// caller's, seed A10) and the rounding of every requantization. The host kernel builds its expression from the plan
/// and every NPU emitter reads the same plan (output extents, bounds, multipliers, clamps, rounding, tables); neither
/// side derives any of it again. Ops that only move bytes (Slice, Transpose, Reshape, ...) have no plan: their index
/// map (`move` / `infer`) is the whole definition, and a requantizing copy evaluates the host's copy on all 256 codes.
template <class O>
concept Planned = requires(std::span<const TensorType> in, const typename O::Attrs& a, const TensorType& out,
                           numeric::Rounding r) {
    typename O::Plan;
    { O::plan(in, a, out, r) } -> std::same_as<Result<typename O::Plan>>;
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

/// The size policy (core/size.hpp, checked_size) on an op's inferred output: every op's shape inference passes
/// through here (call, infer_with), so no op's output can name more than 2^40 elements, zero extents aside.
template <Op O>
Status check_output_size(const TensorType& t) {
    JANUS_CHECK(checked_size(t.shape.span(), static_cast<std::int64_t>(dtype_size(t.dtype)), op_what<O>() + ".output"));
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
    JANUS_CHECK(check_output_size<O>(inferred));
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

/// The plan from untrusted attributes (an ONNX node's; the NPU lowering's entry): arity, attribute rules, then
/// O::plan.
template <Op O>
    requires Planned<O>
Result<typename O::Plan> plan_with(std::span<const TensorType> in, const AttrMap& m, const TensorType& out,
                                   numeric::Rounding rounding) {
    JANUS_CHECK(check_arity<O>(in));
    typename O::Attrs a{};
    JANUS_CHECK(parse_attrs(O::schema, m, a, op_what<O>()));
    return O::plan(in, a, out, rounding);
}

/// Shape inference from untrusted attributes (used by the importer and the shape fuzzer).
template <Op O>
Result<TensorType> infer_with(std::span<const TensorType> in, const AttrMap& m) {
    JANUS_CHECK(check_arity<O>(in));
    typename O::Attrs a{};
    JANUS_CHECK(parse_attrs(O::schema, m, a, op_what<O>()));
    JANUS_TRY(TensorType t, O::infer(in, a));
    JANUS_CHECK(check_output_size<O>(t));
    return t;
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
        return make_unsupported(what, "", "per-tensor-quantization", what + " per-axis quantization " + t.str(),
                                "Janus takes per-tensor quantization here");
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
        return make_unsupported(what, "output", "per-tensor-quantization", what + " per-axis output quantization",
                                "Janus takes per-tensor quantization here");
    if (out.quant->dtype != out.dtype)
        return make_error(what, "output", "quant-dtype-matches", "quantization dtype differs from storage dtype");
    return ok_status();
}

/// The kernel family of an op's inputs.
enum class InputKind {
    float32,    ///< every input float32
    float16,    ///< every input float16 (PlainInts::all_float16 ops): float lanes, each result rounded to float16
    quantized,  ///< every input quantized (int8/uint8 with QuantParams), one storage dtype
    plain_int,  ///< every input a plain integer tensor (integer dtype, no QuantParams), one dtype
};

/// Which plain (non-quantized) integer dtypes an op takes, besides float32 and quantized int8/uint8. Opt-in: an op
/// that does not name a set refuses plain integers with rule float-or-quantized.
enum class PlainInts {
    none,         ///< float32 and quantized only
    bytes,        ///< also plain int8 / uint8 (MaxPool)
    all,          ///< also every plain integer dtype: int8, uint8, int16, uint16, int32, uint32, int64 (Clip)
    all_float16,  ///< as `all`, and float16 (Add, Sub, Mul, Min, Max)
};

inline bool plain_int_allowed(DType d, PlainInts p) {
    if (is_float_dtype(d) || p == PlainInts::none) return false;
    return p != PlainInts::bytes || is_quantized_storage(d);
}

/// The inputs' kernel family: every input float32; every input quantized with the same storage dtype; (when `plain`
/// allows the dtype) every input a plain integer tensor of the same dtype; or (PlainInts::all_float16) every input
/// float16. Rules: float-or-quantized (a dtype the op
/// does not take), quantized-input / same-storage-dtype (as before), plain-and-quantized (a plain integer tensor
/// with a quantized one: their integers mean different things, nothing converts one into the other).
inline Result<InputKind> classify_input_kinds(std::span<const TensorType> in, const std::string& what,
                                              PlainInts plain) {
    if (in.empty()) return InputKind::float32;
    const auto w = [&](std::size_t k) { return what + ".input[" + std::to_string(k) + "]"; };
    if (plain != PlainInts::none) {
        std::size_t q = in.size(), p = in.size();
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (in[k].quantized() && q == in.size()) q = k;
            if (!in[k].quantized() && !is_float_dtype(in[k].dtype) && p == in.size()) p = k;
        }
        if (q < in.size() && p < in.size())
            return make_error(w(std::max(q, p)), "", "plain-and-quantized",
                              "mixes the plain integer tensor " + in[p].str() + " with the quantized tensor " +
                                  in[q].str() + " (a plain integer has no scale; dequantize or quantize explicitly)");
    }
    const bool q = in[0].quantized();
    const bool p = !q && plain_int_allowed(in[0].dtype, plain);
    const bool half = plain == PlainInts::all_float16 && in[0].dtype == DType::f16;
    for (std::size_t k = 0; k < in.size(); ++k) {
        if (half || (plain == PlainInts::all_float16 && in[k].dtype == DType::f16)) {
            if (in[k].dtype != in[0].dtype)
                return make_error(w(k), "", "same-storage-dtype", "mixes " + std::string(dtype_name(in[0].dtype)) +
                                                                      " and " + std::string(dtype_name(in[k].dtype)));
            continue;
        }
        if (q) {
            JANUS_CHECK(require_quantized(in[k], w(k), true));
        } else if (!in[k].quantized() && plain_int_allowed(in[k].dtype, plain)) {
            if (!p)
                return make_error(w(k), "", "same-storage-dtype", "mixes " + std::string(dtype_name(in[0].dtype)) +
                                                                      " and " + std::string(dtype_name(in[k].dtype)));
        } else if (in[k].dtype != DType::f32) {
            const std::string plain_text =
                plain == PlainInts::all_float16 ? ", a float16 tensor, or a plain integer tensor (int8 to int64)"
                : plain == PlainInts::all       ? ", or a plain integer tensor (int8 to int64)"
                : plain == PlainInts::bytes     ? ", or a plain int8/uint8 tensor"
                                                : "";
            return make_unsupported(w(k), "", "float-or-quantized", w(k) + " type " + in[k].str(),
                                    "Janus takes float32 or a quantized int8/uint8 tensor" + plain_text);
        }
        if ((q || p) && in[k].dtype != in[0].dtype)
            return make_error(w(k), "", "same-storage-dtype", "mixes " + std::string(dtype_name(in[0].dtype)) +
                                                                  " and " + std::string(dtype_name(in[k].dtype)));
    }
    return half ? InputKind::float16 : q ? InputKind::quantized : p ? InputKind::plain_int : InputKind::float32;
}

/// Every input float32, or every input quantized with the same storage dtype: the two kernel families of this issue
/// (ops that also take plain integers call classify_input_kinds with their PlainInts).
inline Result<bool> classify_inputs(std::span<const TensorType> in, const std::string& what) {
    JANUS_TRY(const InputKind k, classify_input_kinds(in, what, PlainInts::none));
    return k == InputKind::quantized;
}

/// The output of a plain-integer kernel: the inputs' dtype, and no quantization (nothing gives its integers a scale).
inline Status require_plain_output(const TensorType& out, DType in, const std::string& what) {
    if (out.dtype != in)
        return make_error(what, "output", "output-dtype",
                          "a plain " + std::string(dtype_name(in)) + " result is " + std::string(dtype_name(in)) +
                              ", not " + out.str());
    if (out.quant)
        return make_error(what, "output", "plain-integer-output",
                          "a plain integer result carries no quantization, got " + out.str());
    return ok_status();
}

}  // namespace janus::ops
