#pragma once
// Convolution operators: Conv and ConvTranspose (ONNX opset 11+), float32 and quantized (QLinearConv convention),
// 1-D, 2-D and 3-D spatial. Both are ONE kernel: `run_conv_contract` (ops/contract.hpp) followed, for quantized
// inputs, by a requantization epilogue `map`. ConvTranspose is turned into that same contract by two data movements
// built from primitives (an index_map and views), never by a private loop nest.
// ConvInteger (below Conv) is Conv's contract without the epilogue: its int32 sums are the result.
// One definition: each op's `plan` (Conv::plan, ConvInteger::plan, ConvTranspose::plan) is its only planning entry;
// its ConvPlan (geometry with the output extents, epilogue kind, ConvQuantPlan) is what run() executes and what the
// NPU emitters (emit/conv.hpp, emit/depthwise.hpp) lower.
//
// Conv (X [N, C, D..], W [Cout, C/group, k..], optional B [Cout]):
//   geometry: strides, dilations, pads = [b_1.., e_1..] (asymmetric), group; auto_pad
//     NOTSET      the pads attribute (default 0);
//     VALID       no padding;
//     SAME_UPPER  O = ceil(L / s), total = max(0, (O - 1) s + (k - 1) d + 1 - L), begin = total / 2 (extra at END);
//     SAME_LOWER  same total, begin = total - total / 2 (extra at BEGIN);
//     pads together with auto_pad != NOTSET is refused ("pads-with-auto-pad"); kernel_shape, when given, must equal
//     W's spatial extents. Output extent O = floor((L + b + e - ((k - 1) d + 1)) / s) + 1.
// ConvTranspose (X [N, C, D..], W [C, Cout/group, k..] -- NOTE the storage order, seed B2 -- optional B [Cout]):
//   y[n, g Cout_g + co, i s - b + j d] += x[n, g Cin_g + ci, i] W[g Cin_g + ci, co, j]   (+ B[oc])
//   O = s (L - 1) + output_padding + (k - 1) d + 1 - b - e, with output_padding < max(s, d) (PyTorch's rule).
//   output_shape (spatial extents only) fixes O: total = s (L - 1) + output_padding + (k - 1) d + 1 - O must be >= 0;
//   SAME_UPPER: b = total / 2, e = total - b; otherwise (NOTSET, SAME_LOWER): b = total - total / 2, e = total / 2
//   (the ONNX spec's formula; pads are then ignored). auto_pad SAME_* without output_shape means O = L s.
//   Lowering: (1) an index_map zero-stuffs the input (stride) and pads it by (k - 1) d - b before and
//   (k - 1) d - e + output_padding after (negative = crop), filling with the REAL zero (zp_x, or 0.0f);
//   (2) W is viewed as [G, Cin_g, Cout_g, k..], transposed to [G, Cout_g, Cin_g, k..], flipped on every spatial axis
//   (slice views with step -1), materialized (a copy map) and viewed as [Cout, Cin_g, k..]: Conv's weight dialect;
//   (3) a Conv with stride 1, dilation d, no padding, the same groups. Cost: the stuffed input has about s^D times
//   the input's elements (an NPU lowering would split the kernel by phase instead; the numbers are identical).
// Quantized (both ops): X int8/uint8 per-tensor; W int8/uint8 per-tensor or per-axis -- Conv: axis 0 (length Cout);
//   ConvTranspose: axis 1 (length Cout/group, ONNX QDQ), so output channel oc = g Cout_g + co uses s_w[co], shared
//   by every group; B int32 with the implied scale s_x s_w[oc] and zero point 0 (a bias carrying other
//   parameters is refused, "bias-quant-implied"); the output int8/uint8 with the CALLER's parameters (seed A10,
//   require_output_quant; infer proposes the input's storage dtype and no parameters).
//     acc[oc] = sum (x - zp_x)(w - zp_w[oc]) + b[oc]                      (int32, contract; headroom PROVED, A5)
//     y       = sat(rq(acc, M[oc]) + zp_y),  M[oc] = s_x s_w[oc] / s_y   (epilogue map, channel axis 1)
//   rq rounds as the plan says (ConvQuantPlan::rounding, round_double by default: |rq(acc) - acc M| <= 3/4, the
//   other modes <= 1/2), so y is at most 1 LSB from
//   round-half-even of the exact real result (measured: tests/ops_conv, docs/numerics.md "Convolution"). The
//   epilogue is proved with the contract's accumulator interval: every intermediate fits int32 and, for M >= 1, the
//   left shift of round_double cannot saturate (else "requantize-left-shift-fits-int32").
//   Output storage: call<> pins it to infer's proposal (X's type); run() also accepts the other 8-bit type
//   (QLinearConv's y type is independent of x's).
// Float32: X, W, B float32; the contract's float sums (deterministic order, see ops/contract.hpp); error within
//   (K + 2) 2^-24 sum |terms| of the exact result (tests/ops_conv/random.cpp).
// NOT promised / refused: 4 spatial axes (rank 6: the ConvTranspose weight view needs one more axis), M >= 1 when
//   the proved accumulator range times 2^shift leaves int32, per-input-channel (axis 0) ConvTranspose weights.
// Seed B1: split_conv_groups cuts a grouped Conv into group-1 Convs: input channel slice (a view), weight slice
//   along axis 0 WITH its per-channel quantization (scales and zero points [g Cout_g, (g+1) Cout_g)), bias slice.
//   split_conv_transpose_groups does the same for ConvTranspose, whose weights are cut along axis 0 by INPUT
//   channels [g Cin_g, (g+1) Cin_g) while the axis-1 quantization is kept whole (it is indexed by co, not by g).
//   Concatenating the pieces' outputs along channels equals the grouped op bit for bit (tests/ops_conv).
// Errors name the input (Conv.input[1], ...), the attribute or position, and the rule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/layout/broadcast.hpp>
#include <janus/layout/view.hpp>
#include <janus/numeric/multiplier.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/numeric/range.hpp>
#include <janus/ops/contract.hpp>
#include <janus/ops/copy.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/index_map.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/op.hpp>
#include <janus/ops/quant_expr.hpp>

namespace janus::ops {

inline constexpr std::int64_t conv_max_param = std::numeric_limits<std::int32_t>::max();

struct ConvAttrs {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;     ///< empty: all 1
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;  ///< empty: W's spatial extents
    std::vector<std::int64_t> pads;          ///< [b_1.., e_1..]; empty: all 0
    std::vector<std::int64_t> strides;       ///< empty: all 1
};

struct ConvTransposeAttrs {
    std::string auto_pad = "NOTSET";
    std::vector<std::int64_t> dilations;
    std::int64_t group = 1;
    std::vector<std::int64_t> kernel_shape;
    std::vector<std::int64_t> output_padding;  ///< empty: all 0
    std::vector<std::int64_t> output_shape;    ///< spatial extents only; empty: from the formula
    std::vector<std::int64_t> pads;
    std::vector<std::int64_t> strides;
};

inline constexpr one_of<4> conv_auto_pad_rule{{"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}};

inline constexpr auto conv_schema = attr_schema(
    attr<"auto_pad">(&ConvAttrs::auto_pad, conv_auto_pad_rule),
    attr<"dilations">(&ConvAttrs::dilations, ints_range{1, conv_max_param, 0, 3}),
    attr<"group">(&ConvAttrs::group, int_range{1, conv_max_param}),
    attr<"kernel_shape">(&ConvAttrs::kernel_shape, ints_range{1, conv_max_param, 0, 3}),
    attr<"pads">(&ConvAttrs::pads, ints_range{0, conv_max_param, 0, 6}),
    attr<"strides">(&ConvAttrs::strides, ints_range{1, conv_max_param, 0, 3}));

inline constexpr auto conv_transpose_schema = attr_schema(
    attr<"auto_pad">(&ConvTransposeAttrs::auto_pad, conv_auto_pad_rule),
    attr<"dilations">(&ConvTransposeAttrs::dilations, ints_range{1, conv_max_param, 0, 3}),
    attr<"group">(&ConvTransposeAttrs::group, int_range{1, conv_max_param}),
    attr<"kernel_shape">(&ConvTransposeAttrs::kernel_shape, ints_range{1, conv_max_param, 0, 3}),
    attr<"output_padding">(&ConvTransposeAttrs::output_padding, ints_range{0, conv_max_param, 0, 3}),
    attr<"output_shape">(&ConvTransposeAttrs::output_shape, ints_range{0, conv_max_param, 0, 3}),
    attr<"pads">(&ConvTransposeAttrs::pads, ints_range{0, conv_max_param, 0, 6}),
    attr<"strides">(&ConvTransposeAttrs::strides, ints_range{1, conv_max_param, 0, 3}));

/// Requantization parameters of a quantized convolution, one entry per OUTPUT channel oc.
struct ConvQuantPlan {
    std::int32_t zp_x = 0, zp_y = 0;
    std::vector<std::int32_t> zp_w;                          ///< zp_w[oc]
    std::vector<float> s_w;                                  ///< s_w[oc]
    std::vector<numeric::QuantizedMultiplier> multipliers;  ///< M[oc] = s_x s_w[oc] / s_y
    numeric::Rounding rounding = numeric::default_rounding_mode;  ///< of the epilogue's rq
};

/// Resolved geometry of a convolution: the contract's window and groups, the input and output shapes.
struct ConvGeometry {
    ConvParams conv;  ///< the contract's parameters, kernel filled in (ConvTranspose: those of the equivalent stride-1
                      ///< Conv on the stuffed input)
    Shape x_shape;    ///< the op's input X [N, C, L..]
    Shape out_shape;  ///< [N, Cout, O..]
    // ConvTranspose only: stuffed-and-padded input extent T, begin pad P = (k - 1) d - b (may be negative), strides.
    Dims stuffed, stuff_begin, stride;

    /// The contract's input: X's shape, or ConvTranspose's stuffed input [N, C, T..].
    Shape conv_input() const {
        Shape s = x_shape;
        for (int a = 0; a < stuffed.size(); ++a) s[2 + a] = stuffed[a];
        return s;
    }
};

/// What becomes of a convolution's accumulator.
enum class ConvEpilogue {
    float_sums,  ///< float32 operands: the float sums are the result (ConvPlan::quant unused)
    int32_sums,  ///< ConvInteger: the int32 sums are the result (ConvPlan::quant holds zp_x and zp_w only)
    requantize,  ///< quantized Conv, ConvTranspose: y = sat(rq(acc, M[oc]) + zp_y) (ConvPlan::quant whole)
};

/// Everything a convolution computes, decided from types alone by the op's one planning entry (Conv::plan,
/// ConvInteger::plan, ConvTranspose::plan): the host kernel (run_conv_kernel) and the emitters (emit/conv.hpp,
/// emit/depthwise.hpp) read their window, pads, output extents and epilogue from it and derive none of their own.
struct ConvPlan {
    ConvGeometry geometry;
    ConvEpilogue epilogue = ConvEpilogue::float_sums;
    ConvQuantPlan quant;
};

namespace detail {

/// Per-output-channel view of the weight quantization: Conv reads axis 0 (channel oc); ConvTranspose axis 1
/// (channel oc mod Cout_g). Per-tensor parameters repeat.
inline void conv_weight_channels(const numeric::QuantParams& q, std::int64_t cout, std::int64_t cout_g,
                                 bool transpose, std::vector<float>& s, std::vector<std::int32_t>& zp) {
    s.clear();
    zp.clear();
    for (std::int64_t oc = 0; oc < cout; ++oc) {
        const auto c = static_cast<std::size_t>(transpose ? oc % cout_g : oc);
        s.push_back(q.scale(c));
        zp.push_back(q.zero_point(c));
    }
}

inline Result<Dims> conv_dims(const std::vector<std::int64_t>& v, int spatial, std::int64_t dflt,
                              const std::string& what, const char* name, std::size_t factor = 1) {
    if (v.empty()) return Dims::filled(static_cast<int>(factor) * spatial, dflt);
    if (v.size() != factor * static_cast<std::size_t>(spatial))
        return make_error(what, name, "window-param-length",
                          std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
                              std::to_string(factor * static_cast<std::size_t>(spatial)) + " for " +
                              std::to_string(spatial) + " spatial axes");
    Dims d;
    for (auto x : v) d.push_back(x);
    return d;
}

/// Shared rank checks: X and W rank 3..5 (1 to 3 spatial axes) and equal.
inline Status conv_ranks(const Shape& x, const Shape& w, const std::string& what) {
    if (x.size() < 3 || x.size() > 5)
        return make_error(what + ".input[0]", "", "conv-input-rank",
                          "convolution input needs N x C x 1 to 3 spatial axes (rank 3 to 5), got " + x.str());
    if (w.size() != x.size())
        return make_error(what + ".input[1]", "", "conv-weight-rank",
                          "weights " + w.str() + " must have the input's rank " + std::to_string(x.size()));
    return ok_status();
}

inline Status check_kernel_shape(const std::vector<std::int64_t>& ks, const Shape& w, const std::string& what) {
    if (ks.empty()) return ok_status();
    Dims k;
    for (int a = 2; a < w.size(); ++a) k.push_back(w[a]);
    Dims given;
    for (auto v : ks) given.push_back(v);
    if (!(given == k))
        return make_error(what, "kernel_shape", "kernel-matches-weights",
                          "kernel_shape " + given.str() + " differs from the weights' spatial extents " + k.str());
    return ok_status();
}

inline Result<ConvGeometry> conv_geometry(const Shape& x, const Shape& w, const ConvAttrs& a, const std::string& what) {
    JANUS_CHECK(conv_ranks(x, w, what));
    const int sp = x.size() - 2;
    JANUS_CHECK(check_kernel_shape(a.kernel_shape, w, what));
    ConvGeometry g;
    g.x_shape = x;
    g.conv.groups = a.group;
    WindowParams& wp = g.conv.window;
    for (int k = 2; k < w.size(); ++k) wp.kernel.push_back(w[k]);
    JANUS_TRY(wp.strides, conv_dims(a.strides, sp, 1, what, "strides"));
    JANUS_TRY(wp.dilations, conv_dims(a.dilations, sp, 1, what, "dilations"));
    JANUS_TRY(Dims pads, conv_dims(a.pads, sp, 0, what, "pads", 2));
    if (a.auto_pad != "NOTSET" && !a.pads.empty())
        return make_error(what, "pads", "pads-with-auto-pad",
                          "pads cannot be given together with auto_pad " + a.auto_pad + " (ONNX)");
    wp.pads_begin = Dims::filled(sp, 0);
    wp.pads_end = Dims::filled(sp, 0);
    JANUS_CHECK(normalize_window(wp, sp, what));  // kernel, strides, dilations <= 2^31 - 1 before any product
    for (int i = 0; i < sp; ++i) {
        if (a.auto_pad == "NOTSET") {
            wp.pads_begin[i] = pads[i];
            wp.pads_end[i] = pads[sp + i];
        } else if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
            const std::int64_t L = x[2 + i], s = wp.strides[i], eff = (wp.kernel[i] - 1) * wp.dilations[i] + 1;
            const std::int64_t o = (L + s - 1) / s;  // ceil(L / s); all values < 2^40 and 2^62
            const std::int64_t total = std::max<std::int64_t>(0, (o - 1) * s + eff - L);
            wp.pads_begin[i] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            wp.pads_end[i] = total - wp.pads_begin[i];
        }
    }
    JANUS_TRY(g.out_shape, conv_output_shape(x, w, g.conv, what));
    return g;
}

/// ConvTranspose geometry: output shape and the equivalent stride-1 Conv on the stuffed, padded input.
inline Result<ConvGeometry> conv_transpose_geometry(const Shape& x, const Shape& w, const ConvTransposeAttrs& a,
                                                    const std::string& what) {
    JANUS_CHECK(conv_ranks(x, w, what));
    const int sp = x.size() - 2;
    JANUS_CHECK(check_kernel_shape(a.kernel_shape, w, what));
    if (a.group < 1)
        return make_error(what, "group", "groups-positive", "group must be >= 1, got " + std::to_string(a.group));
    if (w[0] != x[1])
        return make_error(what + ".input[1]", "", "conv-transpose-channels-match",
                          "ConvTranspose weights are [C_in, C_out/group, k..]: W's axis 0 (" + std::to_string(w[0]) +
                              ") must equal the input channels " + std::to_string(x[1]));
    if (x[1] % a.group != 0)
        return make_error(what + ".input[1]", "", "conv-channels-match-groups",
                          "input channels " + std::to_string(x[1]) + " are not divisible by group " +
                              std::to_string(a.group));
    if (w[1] > std::numeric_limits<std::int64_t>::max() / a.group)
        return make_error(what + ".input[1]", "", "conv-transpose-extent-fits", "C_out/group x group overflows");
    JANUS_TRY(Dims s, conv_dims(a.strides, sp, 1, what, "strides"));
    JANUS_TRY(Dims d, conv_dims(a.dilations, sp, 1, what, "dilations"));
    JANUS_TRY(Dims pads, conv_dims(a.pads, sp, 0, what, "pads", 2));
    JANUS_TRY(Dims op, conv_dims(a.output_padding, sp, 0, what, "output_padding"));
    if (!a.output_shape.empty()) JANUS_CHECK(conv_dims(a.output_shape, sp, 0, what, "output_shape"));
    if (a.auto_pad != "NOTSET" && !a.pads.empty())
        return make_error(what, "pads", "pads-with-auto-pad",
                          "pads cannot be given together with auto_pad " + a.auto_pad + " (ONNX)");
    ConvGeometry g;
    g.x_shape = x;
    g.out_shape = x;
    g.out_shape[1] = w[1] * a.group;
    g.conv.groups = a.group;
    WindowParams& wp = g.conv.window;
    for (int k = 2; k < w.size(); ++k) wp.kernel.push_back(w[k]);
    wp.strides = Dims::filled(sp, 1);
    wp.dilations = d;
    wp.pads_begin = Dims::filled(sp, 0);
    wp.pads_end = Dims::filled(sp, 0);
    g.stride = s;
    for (int i = 0; i < sp; ++i) {
        const std::string pos = "spatial axis " + std::to_string(i);
        if (op[i] >= std::max(s[i], d[i]))
            return make_error(what, "output_padding", "output-padding-below-stride-or-dilation",
                              "output_padding " + std::to_string(op[i]) + " on " + pos +
                                  " must be smaller than the stride or the dilation");
        const std::int64_t L = x[2 + i], k = w[2 + i];
        if (k < 1)
            return make_error(what + ".input[1]", pos, "kernel-positive",
                              "kernel extent " + std::to_string(k) + " must be >= 1");
        if (L < 1)
            return make_error(what + ".input[0]", pos, "conv-transpose-input-nonempty",
                              "ConvTranspose needs at least one input position per spatial axis");
        // Every term below 2^31 * 2^40 would overflow: bound the full extent first (all factors <= 2^31 - 1, L <= 2^40).
        const long double full_ld = static_cast<long double>(s[i]) * static_cast<long double>(L - 1) +
                                    static_cast<long double>(op[i]) +
                                    static_cast<long double>(k - 1) * static_cast<long double>(d[i]) + 1.0L;
        if (full_ld > static_cast<long double>(conv_max_param))
            return make_error(what, pos, "conv-transpose-extent-fits",
                              "the full transposed extent s (L - 1) + output_padding + (k - 1) d + 1 exceeds 2^31 - 1");
        const std::int64_t full = s[i] * (L - 1) + op[i] + (k - 1) * d[i] + 1;
        std::int64_t b = pads[i], e = pads[sp + i];
        const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
        if (!a.output_shape.empty() || same) {
            const std::int64_t o = !a.output_shape.empty() ? a.output_shape[static_cast<std::size_t>(i)] : L * s[i];
            const std::int64_t total = full - o;
            if (total < 0)
                return make_unsupported(what, "output_shape", "conv-transpose-output-shape-reachable",
                                        what + " output_shape extent " + std::to_string(o) + " on " + pos,
                                        "it exceeds the full extent " + std::to_string(full) +
                                            ", which needs a negative total padding (raise output_padding instead)");
            b = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            e = total - b;
        } else if (a.auto_pad == "VALID") {
            b = e = 0;
        }
        const std::int64_t o = full - b - e;
        if (o < 1)
            return make_error(what, pos, "conv-transpose-output-nonempty",
                              "pads " + std::to_string(b) + " + " + std::to_string(e) + " remove the whole extent " +
                                  std::to_string(full));
        g.out_shape[2 + i] = o;
        g.stuffed.push_back(o + (k - 1) * d[i]);
        g.stuff_begin.push_back((k - 1) * d[i] - b);
    }
    // The equivalent Conv must be valid too (infer and run agree): stuffed input [N, C, T..], W' [Cout, Cin_g, k..].
    Shape ws = w;
    ws[0] = g.out_shape[1];
    ws[1] = x[1] / a.group;
    JANUS_CHECK(conv_output_shape(g.conv_input(), ws, g.conv, what));
    return g;
}

/// Slice a per-axis quantization along `axis` to channels [begin, begin + count); other parameters are unchanged.
inline std::optional<numeric::QuantParams> slice_quant(const std::optional<numeric::QuantParams>& q, int axis,
                                                       std::int64_t begin, std::int64_t count) {
    if (!q || q->per_tensor() || *q->axis != axis) return q;
    numeric::QuantParams r = *q;
    r.scales.assign(q->scales.begin() + begin, q->scales.begin() + begin + count);
    r.zero_points.assign(q->zero_points.begin() + begin, q->zero_points.begin() + begin + count);
    return r;
}

inline Tensor slice_axis(const Tensor& t, int axis, std::int64_t begin, std::int64_t count) {
    const std::int64_t ax[1] = {axis}, st[1] = {begin}, en[1] = {begin + count};
    Tensor v = t.view(slice(t.layout, ax, st, en, {}).value());  // in range by construction
    v.quant = slice_quant(t.quant, axis, begin, count);
    return v;
}

}  // namespace detail

/// Operand rules shared by Conv and ConvTranspose. Returns whether the op is quantized. `transpose` selects the
/// weight quantization axis (1 instead of 0) and the output channel count.
inline Result<bool> check_conv_operands(std::span<const TensorType> in, std::int64_t cout, bool transpose,
                                        const std::string& what) {
    const TensorType& x = in[0];
    const TensorType& w = in[1];
    const std::string wx = what + ".input[0]", ww = what + ".input[1]", wb = what + ".input[2]";
    const bool q = x.quantized() || w.quantized();
    if (!q) {
        for (int k = 0; k < 2; ++k)  // the bias has its own rule (bias-dtype)
            if (in[static_cast<std::size_t>(k)].dtype != DType::f32)
                return make_unsupported(
                    what + ".input[" + std::to_string(k) + "]", "", "float-or-quantized",
                    what + ".input[" + std::to_string(k) + "] type " + in[static_cast<std::size_t>(k)].str(),
                    "a float convolution takes float32 operands (or quantize X and W)");
    } else {
        JANUS_CHECK(require_quantized(x, wx));
        JANUS_CHECK(require_quantized(w, ww, true));
        for (const auto* t : {&x, &w}) {
            const std::string n = t == &x ? wx : ww;
            if (t->quant->dtype != t->dtype)
                return make_error(n, "", "quant-dtype-matches", "quantization dtype differs from storage dtype: " +
                                                                    t->str());
            JANUS_CHECK(numeric::check_quant_fits(*t->quant, t->shape, n + ".quant"));
        }
        const int axis = transpose ? 1 : 0;
        if (w.quant->axis && *w.quant->axis != axis)
            return make_error(ww, "axis " + std::to_string(*w.quant->axis), "weight-quant-axis",
                              std::string("per-axis weight quantization must be along axis ") +
                                  (transpose ? "1 (C_out/group of ConvTranspose's [C_in, C_out/group, k..])"
                                             : "0 (the output channels)"));
    }
    if (in.size() < 3) return q;
    const TensorType& b = in[2];
    const DType bd = q ? DType::i32 : DType::f32;
    if (b.dtype != bd)
        return make_error(wb, "", "bias-dtype",
                          "bias must be " + std::string(dtype_name(bd)) + ", got " + b.str());
    if (!(b.shape == Shape{cout}))
        return make_error(wb, "", "bias-shape", "bias shape " + b.shape.str() + " must be [" + std::to_string(cout) + "]");
    if (q && b.quant) {
        JANUS_CHECK(numeric::check_quant_fits(*b.quant, b.shape, wb + ".quant"));
        const std::int64_t cout_g = transpose ? w.shape[1] : 0;
        std::vector<float> sw;
        std::vector<std::int32_t> zw;
        detail::conv_weight_channels(*w.quant, cout, cout_g, transpose, sw, zw);
        for (std::int64_t oc = 0; oc < cout; ++oc) {
            const auto c = static_cast<std::size_t>(oc);
            const double implied = static_cast<double>(x.quant->scale()) * static_cast<double>(sw[c]);
            if (b.quant->zero_point(c) != 0 || std::abs(b.quant->scale(c) - implied) > 1e-6 * implied)
                return make_error(wb, "channel " + std::to_string(oc), "bias-quant-implied",
                                  "an int32 bias has the implied scale s_x * s_w[oc] and zero point 0; got " +
                                      b.quant->str());
        }
    }
    return q;
}

namespace detail {

/// The requantization plan of a quantized convolution from types: per-output-channel zero points, scales and
/// multipliers. Rules: quantized-output, output-quantization-required (and require_output_quant's rules), the
/// multiplier's (ratio-below-2^30). Part of Conv::plan and ConvTranspose::plan.
inline Result<ConvQuantPlan> plan_conv_quant(const TensorType& x, const TensorType& w, const TensorType& out,
                                             std::int64_t cout, bool transpose, numeric::Rounding rounding,
                                             const std::string& what) {
    if (!is_quantized_storage(out.dtype))
        return make_error(what, "output", "quantized-output",
                          "a quantized convolution produces int8/uint8, not " + out.str());
    JANUS_CHECK(require_output_quant(out, what));
    ConvQuantPlan p;
    p.rounding = rounding;
    p.zp_x = x.quant->zero_point();
    p.zp_y = out.quant->zero_point();
    detail::conv_weight_channels(*w.quant, cout, transpose ? w.shape[1] : 0, transpose, p.s_w, p.zp_w);
    for (std::int64_t oc = 0; oc < cout; ++oc) {
        const double ratio = static_cast<double>(x.quant->scale()) * static_cast<double>(p.s_w[static_cast<std::size_t>(oc)]) /
                             static_cast<double>(out.quant->scale());
        JANUS_TRY(auto m, numeric::quantize_multiplier(ratio, what + ": s_x s_w / s_y (output channel " +
                                                                 std::to_string(oc) + ")"));
        p.multipliers.push_back(m);
    }
    return p;
}

}  // namespace detail

/// The epilogue expression: sat<To>(rq(acc, M[oc]) + zp_y) in the plan's rounding, channel = output channel (map
/// channel axis 1).
template <expr::Element To>
auto conv_epilogue(const ConvQuantPlan& p) {
    using namespace expr;
    return sat<To>(add(rq(In<0, std::int32_t>{}, std::span<const numeric::QuantizedMultiplier>(p.multipliers),
                          p.rounding),
                       cst(p.zp_y)));
}

/// Conv's kernel on operands already in Conv's dialect (W [Cout, Cin_g, k..]): the contract with the plan's
/// geometry, then the plan's epilogue (none for float_sums and int32_sums).
inline Result<Tensor> run_conv_kernel(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvPlan& plan,
                                      const TensorType& out, const OpContext& ctx, const std::string& what) {
    using namespace expr;
    const ContractOptions co{ctx.simd};
    const ConvParams& cp = plan.geometry.conv;
    if (plan.epilogue == ConvEpilogue::float_sums) {
        JANUS_TRY(Contracted c, run_conv_contract(In<0, float>{}, In<0, float>{}, x, w, bias, cp, co, what));
        return std::move(c.acc);
    }
    const ConvQuantPlan& q = plan.quant;
    return visit_quant_dtype(x.dtype, [&](auto tx) -> Result<Tensor> {
        return visit_quant_dtype(w.dtype, [&](auto tw) -> Result<Tensor> {
            using Tx = typename decltype(tx)::type;
            using Tw = typename decltype(tw)::type;
            const auto pre_x = sub(widen(In<0, Tx>{}), cst(q.zp_x));
            const auto pre_w = sub(widen(In<0, Tw>{}), chan<std::int32_t>(std::span<const std::int32_t>(q.zp_w)));
            JANUS_TRY(Contracted c, run_conv_contract(pre_x, pre_w, x, w, bias, cp, co, what));
            if (plan.epilogue == ConvEpilogue::int32_sums) return std::move(c.acc);
            return visit_quant_dtype(out.dtype, [&](auto ty) -> Result<Tensor> {
                using To = typename decltype(ty)::type;
                const auto post = conv_epilogue<To>(q);
                InputRanges r;
                r.r[0] = c.acc_range;
                r.set[0] = true;
                JANUS_CHECK(prove_ranges(post, r, what + ": epilogue"));
                for (std::size_t oc = 0; oc < q.multipliers.size(); ++oc)
                    JANUS_CHECK(numeric::requantize_range(c.acc_range, q.multipliers[oc], q.zp_y,
                                                          std::numeric_limits<std::int32_t>::min(),
                                                          std::numeric_limits<std::int32_t>::max(),
                                                          what + ": epilogue (output channel " + std::to_string(oc) +
                                                              ")"));
                Tensor y = Tensor::zeros(out.dtype, out.shape, out.quant);
                const Tensor ins[1] = {c.acc};
                JANUS_CHECK(run_map(post, std::span<const Tensor>(ins), y, MapOptions{ctx.simd, 1}, what + ": epilogue"));
                return y;
            });
        });
    });
}

namespace detail {
/// Output type checks of `run` (callable directly, without call<>).
inline Status check_conv_out(const TensorType& out, const Shape& shape, bool q, const std::string& what) {
    if (!(out.shape == shape))
        return make_error(what, "output", "output-shape",
                          "output shape " + out.shape.str() + " differs from the convolution's " + shape.str());
    if (!q && out.dtype != DType::f32)
        return make_error(what, "output", "output-dtype", "a float convolution produces float32, not " + out.str());
    return ok_status();
}

/// Conv's and ConvTranspose's plan from their geometry: the output type checked, and for quantized operands the
/// requantize epilogue (in the given rounding).
inline Result<ConvPlan> conv_plan(ConvGeometry g, std::span<const TensorType> in, const TensorType& out,
                                  bool transpose, numeric::Rounding rounding, const std::string& what) {
    ConvPlan p;
    p.geometry = std::move(g);
    const bool q = in[0].quantized();
    JANUS_CHECK(check_conv_out(out, p.geometry.out_shape, q, what));
    if (!q) return p;
    p.epilogue = ConvEpilogue::requantize;
    JANUS_TRY(p.quant, plan_conv_quant(in[0], in[1], out, p.geometry.out_shape[1], transpose, rounding, what));
    return p;
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------------------------

struct Conv {
    static constexpr fixed_string name = "Conv";
    static constexpr int min_inputs = 2;
    static constexpr int max_inputs = 3;
    using Attrs = ConvAttrs;
    static constexpr auto schema = conv_schema;

    /// The plan's geometry (infer's part of plan()).
    static Result<ConvGeometry> geometry(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<Conv>(in));
        const std::string what = op_what<Conv>();
        JANUS_TRY(ConvGeometry g, detail::conv_geometry(in[0].shape, in[1].shape, a, what));
        JANUS_CHECK(check_conv_operands(in, in[1].shape[0], false, what));
        return g;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_TRY(ConvGeometry g, geometry(in, a));
        return TensorType{in[0].dtype, g.out_shape, std::nullopt};
    }

    /// The one planning entry: geometry and (quantized) the requantize epilogue in `rounding`, for the output `out`.
    using Plan = ConvPlan;
    static Result<ConvPlan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                                 numeric::Rounding rounding) {
        JANUS_TRY(ConvGeometry g, geometry(in, a));
        return detail::conv_plan(std::move(g), in, out, false, rounding, op_what<Conv>());
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<Conv>(in));
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(const ConvPlan p, plan(types, a, out, ctx.rounding));
        return run_conv_kernel(in[0], in[1], in.size() > 2 ? &in[2] : nullptr, p, out, ctx, op_what<Conv>());
    }
};

/// ConvInteger (ONNX opset 10): Conv's geometry and contract on integer operands, with neither bias nor
/// requantization:
///   y[n, oc, ..] = sum (x - zp_x)(w - zp_w[oc])     int32, the contract's sum, headroom proved (accumulator-fits-int32)
/// In Janus the zero points are the operands' quantization (the importer moves ONNX's x_zero_point and w_zero_point
/// inputs there, with scale 1); the scales do not enter. X per-tensor; W per-tensor or per output channel (axis 0).
/// The output is int32 of Conv's shape, without quantization.
struct ConvInteger {
    static constexpr fixed_string name = "ConvInteger";
    static constexpr int min_inputs = 2;
    static constexpr int max_inputs = 2;
    using Attrs = ConvAttrs;
    static constexpr auto schema = conv_schema;

    /// The plan's geometry (infer's part of plan()).
    static Result<ConvGeometry> geometry(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<ConvInteger>(in));
        const std::string what = op_what<ConvInteger>();
        // int8/uint8 whose quantization holds the zero point; X has one
        for (int k = 0; k < 2; ++k) JANUS_CHECK(require_quantized(in[k], op_what<ConvInteger>(k), k == 1));
        JANUS_TRY(ConvGeometry g, detail::conv_geometry(in[0].shape, in[1].shape, a, what));
        JANUS_CHECK(check_conv_operands(in, in[1].shape[0], false, what));
        return g;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_TRY(ConvGeometry g, geometry(in, a));
        return TensorType{DType::i32, g.out_shape, std::nullopt};
    }

    /// The one planning entry: geometry and the zero points the sum subtracts (epilogue int32_sums: ConvPlan::quant
    /// holds zp_x and zp_w[oc] only, no multipliers, no rounding), for the output `out` (int32, no quantization).
    /// (no requantization: the int32 sums are the output, so the rounding does not enter)
    using Plan = ConvPlan;
    static Result<ConvPlan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                                 numeric::Rounding) {
        ConvPlan p;
        JANUS_TRY(p.geometry, geometry(in, a));
        if (!(out.shape == p.geometry.out_shape) || out.dtype != DType::i32 || out.quant)
            return make_error(op_what<ConvInteger>(), "output", "output-dtype",
                              "the output is int32 " + p.geometry.out_shape.str() + " without quantization, not " +
                                  out.str());
        p.epilogue = ConvEpilogue::int32_sums;
        p.quant.zp_x = in[0].quant->zero_point();
        detail::conv_weight_channels(*in[1].quant, in[1].shape[0], 0, false, p.quant.s_w, p.quant.zp_w);
        return p;
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<ConvInteger>(in));
        const TensorType types[2] = {type_of(in[0]), type_of(in[1])};
        JANUS_TRY(const ConvPlan p, plan(types, a, out, ctx.rounding));
        return run_conv_kernel(in[0], in[1], nullptr, p, out, ctx, op_what<ConvInteger>());
    }
};

struct ConvTranspose {
    static constexpr fixed_string name = "ConvTranspose";
    static constexpr int min_inputs = 2;
    static constexpr int max_inputs = 3;
    using Attrs = ConvTransposeAttrs;
    static constexpr auto schema = conv_transpose_schema;

    /// The plan's geometry (infer's part of plan()).
    static Result<ConvGeometry> geometry(std::span<const TensorType> in, const Attrs& a) {
        JANUS_CHECK(check_arity<ConvTranspose>(in));
        const std::string what = op_what<ConvTranspose>();
        JANUS_TRY(ConvGeometry g, detail::conv_transpose_geometry(in[0].shape, in[1].shape, a, what));
        JANUS_CHECK(check_conv_operands(in, g.out_shape[1], true, what));
        return g;
    }

    static Result<TensorType> infer(std::span<const TensorType> in, const Attrs& a) {
        JANUS_TRY(ConvGeometry g, geometry(in, a));
        return TensorType{in[0].dtype, g.out_shape, std::nullopt};
    }

    /// The one planning entry: geometry (the equivalent stride-1 Conv on the stuffed input, and the stuffing) and
    /// (quantized) the requantize epilogue in `rounding`, for the output `out`.
    using Plan = ConvPlan;
    static Result<ConvPlan> plan(std::span<const TensorType> in, const Attrs& a, const TensorType& out,
                                 numeric::Rounding rounding) {
        JANUS_TRY(ConvGeometry g, geometry(in, a));
        return detail::conv_plan(std::move(g), in, out, true, rounding, op_what<ConvTranspose>());
    }

    /// Step (1): the zero-stuffed, padded input [N, C, T..] (index_map; the fill is the real zero).
    static Result<Tensor> stuffed_input(const Tensor& x, const ConvGeometry& g, const std::string& what) {
        IndexMap m;
        m.axes.resize(static_cast<std::size_t>(x.rank()));
        for (int k = 0; k < 2; ++k)
            for (std::int64_t i = 0; i < x.shape()[k]; ++i) m.axes[static_cast<std::size_t>(k)].push_back(i);
        const Shape s = g.conv_input();
        for (int a = 0; a + 2 < x.rank(); ++a) {
            const auto ua = static_cast<std::size_t>(a);
            auto& t = m.axes[ua + 2];
            for (std::int64_t i = 0; i < g.stuffed[a]; ++i) {
                const std::int64_t u = i - g.stuff_begin[a];  // position in the stuffed (unpadded) input
                const bool hit = u >= 0 && u % g.stride[a] == 0 && u / g.stride[a] < x.shape()[2 + a];
                t.push_back(hit ? u / g.stride[a] : IndexMap::outside);
            }
        }
        Tensor zero = x.quantized() ? visit_quant_dtype(x.dtype, [&](auto t) {
            using T = typename decltype(t)::type;
            return Tensor::from<T>(Shape{1}, {static_cast<T>(x.quant->zero_point())});
        })
                                    : Tensor::from<float>(Shape{1}, {0.0f});
        JANUS_TRY(Layout fl, broadcast_to(zero.layout, s, what));
        Tensor y = Tensor::zeros(x.dtype, s, x.quant);
        JANUS_CHECK(run_index_map(x, m, zero.view(fl), y, what + ": zero-stuffing"));
        return y;
    }

    /// Step (2): W [C_in, Cout_g, k..] -> Conv's W' [Cout, Cin_g, k..], W'[g Cout_g + co, ci, j] =
    /// W[g Cin_g + ci, co, k - 1 - j] (views: split, transpose, flip; one copy map; a reshape view).
    static Result<Tensor> conv_weights(const Tensor& w, std::int64_t groups, const OpContext& ctx,
                                       const std::string& what) {
        const int sp = w.rank() - 2;
        const std::int64_t cin_g = w.shape()[0] / groups, cout_g = w.shape()[1];
        Shape split{groups, cin_g, cout_g};
        for (int a = 0; a < sp; ++a) split.push_back(w.shape()[2 + a]);
        JANUS_TRY(Layout l, reshape(w.layout, split, what));
        Dims perm{0, 2, 1};
        for (int a = 0; a < sp; ++a) perm.push_back(3 + a);
        JANUS_TRY(l, transpose(l, perm, what));
        std::vector<std::int64_t> axes, starts, ends, steps;
        for (int a = 0; a < sp; ++a) {
            axes.push_back(3 + a);
            starts.push_back(w.shape()[2 + a] - 1);
            ends.push_back(std::numeric_limits<std::int64_t>::min());
            steps.push_back(-1);
        }
        JANUS_TRY(l, slice(l, axes, starts, ends, steps, what));
        Tensor v = w.view(l);
        v.quant = std::nullopt;  // the parameters travel as per-output-channel vectors (ConvQuantPlan)
        JANUS_TRY(Tensor flat, materialize(v, TensorType{w.dtype, l.shape, std::nullopt}, ctx, what));
        Shape conv_shape{groups * cout_g, cin_g};
        for (int a = 0; a < sp; ++a) conv_shape.push_back(w.shape()[2 + a]);
        JANUS_TRY(Layout cl, reshape(flat.layout, conv_shape, what));
        return flat.view(cl);
    }

    static Result<Tensor> run(std::span<const Tensor> in, const Attrs& a, const TensorType& out, const OpContext& ctx) {
        JANUS_CHECK(check_arity<ConvTranspose>(in));
        const std::string what = op_what<ConvTranspose>();
        std::vector<TensorType> types;
        for (const auto& t : in) types.push_back(type_of(t));
        JANUS_TRY(const ConvPlan p, plan(types, a, out, ctx.rounding));
        JANUS_TRY(Tensor xs, stuffed_input(in[0], p.geometry, what));
        JANUS_TRY(Tensor wc, conv_weights(in[1], a.group, ctx, what));
        return run_conv_kernel(xs, wc, in.size() > 2 ? &in[2] : nullptr, p, out, ctx, what);
    }
};

// ---------------------------------------------------------------------------------------------------------------
// Group split (seed B1, B2)

/// One group of a grouped convolution as an ungrouped node: its inputs (views sharing the original bytes, each
/// carrying the quantization of its slice), its attributes (group = 1) and the output channels it produces.
template <class A>
struct ConvGroupPiece {
    std::vector<Tensor> inputs;
    A attrs;
    std::int64_t out_begin = 0, out_end = 0;  ///< output channels [out_begin, out_end) of the grouped op
};

/// Conv: piece g reads input channels [g Cin_g, (g+1) Cin_g), weights (and their axis-0 per-channel scales and zero
/// points, and the bias) [g Cout_g, (g+1) Cout_g).
inline Result<std::vector<ConvGroupPiece<ConvAttrs>>> split_conv_groups(std::span<const Tensor> in,
                                                                       const ConvAttrs& a) {
    std::vector<TensorType> types;
    for (const auto& t : in) types.push_back(type_of(t));
    JANUS_CHECK(validate_attrs(Conv::schema, a, op_what<Conv>()));
    JANUS_CHECK(Conv::infer(types, a));
    const std::int64_t G = a.group, cin_g = in[1].shape()[1], cout_g = in[1].shape()[0] / G;
    std::vector<ConvGroupPiece<ConvAttrs>> r;
    for (std::int64_t g = 0; g < G; ++g) {
        ConvGroupPiece<ConvAttrs> p;
        p.attrs = a;
        p.attrs.group = 1;
        p.inputs.push_back(detail::slice_axis(in[0], 1, g * cin_g, cin_g));
        p.inputs.push_back(detail::slice_axis(in[1], 0, g * cout_g, cout_g));
        if (in.size() > 2) p.inputs.push_back(detail::slice_axis(in[2], 0, g * cout_g, cout_g));
        p.out_begin = g * cout_g;
        p.out_end = (g + 1) * cout_g;
        r.push_back(std::move(p));
    }
    return r;
}

/// ConvTranspose: piece g reads input channels [g Cin_g, (g+1) Cin_g) and the weights' AXIS 0 rows [g Cin_g,
/// (g+1) Cin_g) (input channels: ConvTranspose's storage dialect, seed B2); the axis-1 quantization (indexed by co)
/// is kept whole; the bias is sliced by output channels [g Cout_g, (g+1) Cout_g).
inline Result<std::vector<ConvGroupPiece<ConvTransposeAttrs>>> split_conv_transpose_groups(
    std::span<const Tensor> in, const ConvTransposeAttrs& a) {
    std::vector<TensorType> types;
    for (const auto& t : in) types.push_back(type_of(t));
    JANUS_CHECK(validate_attrs(ConvTranspose::schema, a, op_what<ConvTranspose>()));
    JANUS_CHECK(ConvTranspose::infer(types, a));
    const std::int64_t G = a.group, cin_g = in[1].shape()[0] / G, cout_g = in[1].shape()[1];
    std::vector<ConvGroupPiece<ConvTransposeAttrs>> r;
    for (std::int64_t g = 0; g < G; ++g) {
        ConvGroupPiece<ConvTransposeAttrs> p;
        p.attrs = a;
        p.attrs.group = 1;
        p.inputs.push_back(detail::slice_axis(in[0], 1, g * cin_g, cin_g));
        p.inputs.push_back(detail::slice_axis(in[1], 0, g * cin_g, cin_g));  // axis-1 quant untouched
        if (in.size() > 2) p.inputs.push_back(detail::slice_axis(in[2], 0, g * cout_g, cout_g));
        p.out_begin = g * cout_g;
        p.out_end = (g + 1) * cout_g;
        r.push_back(std::move(p));
    }
    return r;
}

JANUS_OP_INSTANCES(Conv)
JANUS_OP_INSTANCES(ConvTranspose)
JANUS_OP_INSTANCES(ConvInteger)

}  // namespace janus::ops
