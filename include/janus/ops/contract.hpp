#pragma once
// Index structure `contract`: sums of products, the primitive of Conv, ConvInteger, MatMul, MatMulInteger and Gemm.
//
// Convolution form (x: N x C x D1..Ds, w: Cout x Cin_g x k1..ks, groups G with C = G Cin_g and Cout = G Cout_g):
//   acc[n, oc, o..] = bias[oc] + sum_{ci < Cin_g, j..} X(n, g Cin_g + ci, o s - p + j d) * W(oc, ci, j..)
//   with oc = g Cout_g + co (the output channel, so bias and every per-channel weight parameter are indexed by oc),
//   X = pre_x(x) and W = pre_w(w): element expressions such as widen(sub(x, zp_x)) and sub(widen(w), chan(zp_w)).
//   Geometry is the window's (ops/window.hpp: strides, dilations, asymmetric pads; floor mode only, ceil_mode is
//   refused as Conv has none); the kernel extents come from w (WindowParams::kernel may be left empty or must
//   match). Padding contributes the REAL value 0: the position is skipped, which equals (zp_x - zp_x) * W = 0.
// MatMul form (a: [.., M, K], b: [.., K, N], batch axes broadcast numpy-style, each operand at least rank 2; ONNX's
//   1-D promotion is the op's business, by an unsqueeze view):
//   acc[.., m, n] = bias[n] + sum_{k < K} A(.., m, k) * B(.., k, n),   A = pre_a(a), B = pre_b(b).
// Per-channel parameters: pre_x sees channel = input channel (axis 1), pre_w channel = output channel (w's axis 0);
//   pre_a channel = row m (MatMulInteger's per-row a_zero_point), pre_b channel = column n (per-column b_zero_point).
//   Seed B1: grouping never splits these vectors; they are indexed by the full channel number.
// Accumulator: int32 (or float for the float form: pre_x and pre_w produce float). Order: for each output, k runs
//   over (ci, j1, .., js) resp. k in row-major order, then the bias is added; so a float result is deterministic.
// Headroom (seed A5, TFLite-style proof with numbers): numeric::accumulator_range (numeric/range.hpp) proves that
//   bias + K products, each in range(pre_x) x range(pre_w), fits int32 with every partial sum, where K is the number
//   of products per output (Cin_g * prod k for conv, K for matmul), the operand ranges come from expression range
//   analysis over the storage types, and the bias range from the bias values. Otherwise the kernel is refused
//   ("accumulator-fits-int32", the message names K, the ranges and the largest K that fits). Examples: an int8
//   activation minus any int8 zero point lies in [-255, 255]; symmetric int8 weights (zero point 0) in [-128, 127];
//   a product in [-32640, 32640], so K <= 65,793 with no bias (a 3x3 conv: Cin_g <= 7,310), K <= 32,896 with a bias
//   up to 2^30. uint8 activations (zero point 0, [0, 255]) times int8 weights minus a zero point of -128 ([0, 255]):
//   products in [0, 65025], K <= 33,025. The proved interval is returned (Contracted::acc_range) for lowerings.
// Output: the accumulator tensor (int32 or float, contiguous [N, Cout, O..] or [.., M, N]); the requantization
// epilogue is a separate `map` over it. The loops are the plain reference (scalar, any layout); the pre maps use
// SIMD when asked.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <janus/layout/broadcast.hpp>
#include <janus/layout/iterate.hpp>
#include <janus/layout/view.hpp>
#include <janus/numeric/range.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/tensor.hpp>
#include <janus/ops/window.hpp>

namespace janus::ops {

struct ConvParams {
    WindowParams window;     ///< strides, dilations, pads; kernel empty (taken from w) or equal to w's
    std::int64_t groups = 1;
};

struct ContractOptions {
    bool simd = true;  ///< SIMD in the pre maps
};

struct Contracted {
    Tensor acc;                   ///< int32 or float accumulators
    numeric::Interval acc_range;  ///< proved range of every int32 accumulator (unbounded for float)
    std::int64_t terms = 0;       ///< products summed per output (K)
};

namespace detail {

/// Run a pre expression as a map into a new contiguous tensor of its type.
template <expr::Expr Pre>
Result<Tensor> contract_pre(const Pre& pre, const Tensor& t, int channel_axis, bool simd, const std::string& what) {
    static_assert(Pre::arity == 1, "a contract operand's pre reads exactly one input: In<0, T>");
    Tensor r = Tensor::zeros(dtype_v<typename Pre::type>, t.shape());
    const Tensor ins[1] = {t};
    JANUS_CHECK(run_map(pre, std::span<const Tensor>(ins), r, MapOptions{simd, channel_axis}, what));
    return r;
}

/// Validate a bias (dtype `d`, shape [n]) and return the range of its values ([0, 0] without bias).
inline Result<numeric::Interval> check_bias(const Tensor* bias, DType d, std::int64_t n, const std::string& what) {
    if (!bias) return numeric::Interval::point(0);
    if (bias->dtype != d)
        return make_error(what, "bias", "bias-dtype",
                          "bias must be " + std::string(dtype_name(d)) + ", got " + std::string(dtype_name(bias->dtype)));
    if (!(bias->shape() == Shape{n}))
        return make_error(what, "bias", "bias-shape",
                          "bias shape " + bias->shape().str() + " must be [" + std::to_string(n) + "]");
    numeric::Interval r = numeric::Interval::point(0);
    if (d == DType::i32)
        for (auto v : bias->to_vector<std::int32_t>()) r = join(r, numeric::Interval::point(v));
    return r;
}

/// Store a finished sum; an integer sum is int64 here and proved (accumulator_range) to fit int32.
template <class L, class S>
void store_sum(Tensor& t, const Dims& idx, S s) {
    if constexpr (!std::is_same_v<L, float>)
        JANUS_ASSERT(s >= std::numeric_limits<std::int32_t>::min() && s <= std::numeric_limits<std::int32_t>::max());
    const L v = static_cast<L>(s);
    std::memcpy(t.data() + t.layout.address(idx), &v, sizeof(L));
}

template <class L>
L load_acc(const Tensor& t, const Dims& idx) {
    L v;
    std::memcpy(&v, t.data() + t.layout.address(idx), sizeof(L));
    return v;
}

/// The proved accumulator range (A5): bias + `terms` products of pre_x's and pre_w's ranges, every partial sum in int32.
template <class Acc, expr::Expr PreX, expr::Expr PreW>
Result<numeric::Interval> contract_headroom(const PreX& px, const PreW& pw, std::int64_t terms, numeric::Interval bias,
                                            const std::string& what) {
    if constexpr (std::is_same_v<Acc, float>) {
        return numeric::Interval::unbounded();
    } else {
        JANUS_TRY(numeric::Interval rx, expr::check_ranges(px, {}, what + ": pre of the first operand"));
        JANUS_TRY(numeric::Interval rw, expr::check_ranges(pw, {}, what + ": pre of the second operand"));
        return numeric::accumulator_range(rx, rw, terms, bias, what);
    }
}

}  // namespace detail

/// Output shape [N, Cout, O..] of a convolution; validates shapes, groups and geometry. Rules: conv-input-rank,
/// conv-weight-rank, groups-positive, conv-channels-match-groups, conv-out-channels-divisible, kernel-matches-weights,
/// conv-floor-mode, and the window rules.
inline Result<Shape> conv_output_shape(const Shape& x, const Shape& w, const ConvParams& p,
                                       const std::string& what = "contract") {
    if (x.size() < 3)
        return make_error(what, "x", "conv-input-rank",
                          "convolution input needs N x C x spatial axes (rank >= 3), got " + x.str());
    if (w.size() != x.size())
        return make_error(what, "w", "conv-weight-rank",
                          "weights " + w.str() + " must have the input's rank " + std::to_string(x.size()));
    if (p.groups < 1)
        return make_error(what, "groups", "groups-positive", "groups must be >= 1, got " + std::to_string(p.groups));
    if (x[1] != p.groups * w[1])
        return make_error(what, "w", "conv-channels-match-groups",
                          "input channels " + std::to_string(x[1]) + " != groups " + std::to_string(p.groups) +
                              " x weight input channels " + std::to_string(w[1]));
    if (w[0] % p.groups != 0)
        return make_error(what, "w", "conv-out-channels-divisible",
                          "output channels " + std::to_string(w[0]) + " are not divisible by groups " +
                              std::to_string(p.groups));
    if (p.window.ceil_mode)
        return make_error(what, "ceil_mode", "conv-floor-mode", "convolution output extents use floor mode only");
    WindowParams wp = p.window;
    Dims kernel;
    for (int a = 2; a < w.size(); ++a) kernel.push_back(w[a]);
    if (!wp.kernel.empty() && !(wp.kernel == kernel))
        return make_error(what, "kernel", "kernel-matches-weights",
                          "kernel " + wp.kernel.str() + " differs from the weights' spatial extents " + kernel.str());
    wp.kernel = kernel;
    JANUS_TRY(Shape out, window_output_shape(x, wp, what));
    out[1] = w[0];
    return out;
}

/// Convolution accumulators. x, w: any layout; pre_x: In<0, Tx> -> Acc, pre_w: In<0, Tw> -> Acc (Acc int32 or float);
/// bias: nullptr or Acc [Cout].
template <expr::Expr PreX, expr::Expr PreW>
Result<Contracted> run_conv_contract(const PreX& pre_x, const PreW& pre_w, const Tensor& x, const Tensor& w,
                                     const Tensor* bias, const ConvParams& p, const ContractOptions& opt = {},
                                     const std::string& what = "contract") {
    using Acc = typename PreX::type;
    static_assert(std::is_same_v<Acc, typename PreW::type>, "pre_x and pre_w must produce the same accumulator type");
    static_assert(std::is_same_v<Acc, std::int32_t> || std::is_same_v<Acc, float>,
                  "contract accumulates in int32 or float: wrap integer operands in widen()");
    using L = expr::lane_t<Acc>;

    JANUS_TRY(Shape out_shape, conv_output_shape(x.shape(), w.shape(), p, what));
    const int spatial = x.rank() - 2;
    WindowParams wp = p.window;
    wp.kernel = Dims{};
    for (int a = 2; a < w.rank(); ++a) wp.kernel.push_back(w.shape()[a]);
    JANUS_TRY(WindowParams n, normalize_window(wp, spatial, what));
    const std::int64_t cin_g = w.shape()[1];
    const std::int64_t cout_g = w.shape()[0] / p.groups;
    std::int64_t k_total = cin_g;  // saturated: an empty tensor's other extents are not bounded by 2^40
    for (auto k : n.kernel)
        k_total = k_total > std::numeric_limits<std::int64_t>::max() / k ? std::numeric_limits<std::int64_t>::max()
                                                                         : k_total * k;
    JANUS_TRY(numeric::Interval bias_range, detail::check_bias(bias, dtype_v<Acc>, w.shape()[0], what));
    JANUS_TRY(numeric::Interval acc_range, detail::contract_headroom<Acc>(pre_x, pre_w, k_total, bias_range, what));

    JANUS_TRY(Tensor xa, detail::contract_pre(pre_x, x, 1, opt.simd, what + ": pre_x"));
    JANUS_TRY(Tensor wa, detail::contract_pre(pre_w, w, 0, opt.simd, what + ": pre_w"));
    Tensor acc = Tensor::zeros(dtype_v<Acc>, out_shape);
    const std::vector<L> b = bias ? bias->to_vector<L>() : std::vector<L>(static_cast<std::size_t>(w.shape()[0]), L{0});
    using Sum = std::conditional_t<std::is_same_v<L, float>, float, std::int64_t>;

    for_each_index(out_shape, [&](const Dims& o) {
        const std::int64_t oc = o[1];
        const std::int64_t g = oc / cout_g;
        Dims xi = o, wi = Dims::filled(w.rank(), 0);
        wi[0] = oc;
        Dims first = Dims::filled(spatial, 0), jlo = Dims::filled(spatial, 0), jhi = Dims::filled(spatial, 0);
        bool empty = cin_g == 0;
        for (int a = 0; a < spatial; ++a) {
            first[a] = o[2 + a] * n.strides[a] - n.pads_begin[a];
            const auto kr = detail::kernel_range(first[a], n.dilations[a], n.kernel[a], 0, x.shape()[2 + a]);
            jlo[a] = kr.lo;
            jhi[a] = kr.hi;
            empty = empty || kr.count() == 0;
        }
        Sum s{0};
        if (!empty) {
            for (std::int64_t ci = 0; ci < cin_g; ++ci) {
                xi[1] = g * cin_g + ci;
                wi[1] = ci;
                Dims j = jlo;
                for (;;) {  // the in-range kernel box, row-major; padded positions contribute 0 and are skipped
                    for (int a = 0; a < spatial; ++a) {
                        xi[2 + a] = first[a] + j[a] * n.dilations[a];
                        wi[2 + a] = j[a];
                    }
                    s += static_cast<Sum>(detail::load_acc<L>(xa, xi)) * static_cast<Sum>(detail::load_acc<L>(wa, wi));
                    int a = spatial - 1;
                    for (; a >= 0; --a) {
                        if (++j[a] <= jhi[a]) break;
                        j[a] = jlo[a];
                    }
                    if (a < 0) break;
                }
            }
        }
        s += static_cast<Sum>(b[static_cast<std::size_t>(oc)]);
        detail::store_sum<L>(acc, o, s);
    });
    return Contracted{acc, acc_range, k_total};
}

/// Output shape [batch.., M, N] of a batched matmul. Rules: matmul-rank-at-least-2, matmul-inner-dims-match, and
/// broadcasting's rules for the batch axes.
inline Result<Shape> matmul_output_shape(const Shape& a, const Shape& b, const std::string& what = "contract") {
    if (a.size() < 2 || b.size() < 2)
        return make_error(what, a.size() < 2 ? "a" : "b", "matmul-rank-at-least-2",
                          "matmul operands need rank >= 2 (promote 1-D operands first), got " + a.str() + " x " +
                              b.str());
    if (a[a.size() - 1] != b[b.size() - 2])
        return make_error(what, "b", "matmul-inner-dims-match",
                          "inner dimensions differ: " + a.str() + " x " + b.str());
    Shape ab = a, bb = b;
    ab.erase(ab.size() - 1);
    ab.erase(ab.size() - 1);
    bb.erase(bb.size() - 1);
    bb.erase(bb.size() - 1);
    JANUS_TRY(Shape batch, broadcast_shapes(ab, bb, what));
    if (batch.size() + 2 > max_rank)
        return make_error(what, "", "rank-at-most-6", "the matmul output would exceed rank 6");
    batch.push_back(a[a.size() - 2]);
    batch.push_back(b[b.size() - 1]);
    return batch;
}

/// Batched matmul accumulators. pre_a: In<0, Ta> -> Acc, pre_b: In<0, Tb> -> Acc; bias: nullptr or Acc [N].
template <expr::Expr PreA, expr::Expr PreB>
Result<Contracted> run_matmul_contract(const PreA& pre_a, const PreB& pre_b, const Tensor& a, const Tensor& b,
                                       const Tensor* bias, const ContractOptions& opt = {},
                                       const std::string& what = "contract") {
    using Acc = typename PreA::type;
    static_assert(std::is_same_v<Acc, typename PreB::type>, "pre_a and pre_b must produce the same accumulator type");
    static_assert(std::is_same_v<Acc, std::int32_t> || std::is_same_v<Acc, float>,
                  "contract accumulates in int32 or float: wrap integer operands in widen()");
    using L = expr::lane_t<Acc>;

    JANUS_TRY(Shape out_shape, matmul_output_shape(a.shape(), b.shape(), what));
    const int r = out_shape.size();
    const std::int64_t K = a.shape()[a.rank() - 1];
    const std::int64_t N = out_shape[r - 1];
    JANUS_TRY(numeric::Interval bias_range, detail::check_bias(bias, dtype_v<Acc>, N, what));
    JANUS_TRY(numeric::Interval acc_range, detail::contract_headroom<Acc>(pre_a, pre_b, K, bias_range, what));

    JANUS_TRY(Tensor aa, detail::contract_pre(pre_a, a, a.rank() - 2, opt.simd, what + ": pre_a"));
    JANUS_TRY(Tensor ba, detail::contract_pre(pre_b, b, b.rank() - 1, opt.simd, what + ": pre_b"));
    Shape a_full = out_shape, b_full = out_shape;
    a_full[r - 1] = K;
    b_full[r - 2] = K;
    JANUS_TRY(Layout la, broadcast_to(aa.layout, a_full, what));
    JANUS_TRY(Layout lb, broadcast_to(ba.layout, b_full, what));
    const Tensor av = aa.view(la), bv = ba.view(lb);
    Tensor acc = Tensor::zeros(dtype_v<Acc>, out_shape);
    const std::vector<L> bias_v = bias ? bias->to_vector<L>() : std::vector<L>(static_cast<std::size_t>(N), L{0});
    using Sum = std::conditional_t<std::is_same_v<L, float>, float, std::int64_t>;

    for_each_index(out_shape, [&](const Dims& o) {
        Dims ai = o, bi = o;
        const std::int64_t n = o[r - 1];
        Sum s{0};
        for (std::int64_t k = 0; k < K; ++k) {
            ai[r - 1] = k;
            bi[r - 2] = k;
            s += static_cast<Sum>(detail::load_acc<L>(av, ai)) * static_cast<Sum>(detail::load_acc<L>(bv, bi));
        }
        s += static_cast<Sum>(bias_v[static_cast<std::size_t>(n)]);
        detail::store_sum<L>(acc, o, s);
    });
    return Contracted{acc, acc_range, K};
}

}  // namespace janus::ops
