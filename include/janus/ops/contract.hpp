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
// epilogue is a separate `map` over it.
// Paths (ContractOptions::simd): false runs the plain reference loops below (scalar pre maps, one sum per output,
//   any layout); true runs the SIMD pre maps and the blocked engine of ops/gemm.hpp, BIT-IDENTICAL to the reference
//   for int32 and float (tests/ops_contract compare them with tolerance 0): conv = per (batch, group) the weights
//   [Cout_g, K] times the im2col matrix [K, output pixels] (padding = real 0 entries, packed NC pixels at a time),
//   matmul = A [M, K] times B [K, N] packed into panels. Float weights that are inf / NaN make padding's 0 * w a
//   NaN where the reference skips the position: such convs run the reference loops.
// Constant operands pack ONCE: pack_conv_weights (pre_w applied) and pack_matmul_b (pre_b applied, panels in the
//   narrowest storage of its proved range) return structs holding the pre-applied data and the proved range; the
//   run_conv_contract / run_matmul_contract overloads taking them prove headroom with that range, apply only the
//   other operand's pre per call, and give the same results as the plain API.
#include <algorithm>
#include <cmath>
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
#include <janus/ops/gemm.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/tensor.hpp>
#include <janus/ops/window.hpp>

namespace janus::ops {

struct ConvParams {
    WindowParams window;     ///< strides, dilations, pads; kernel empty (taken from w) or equal to w's
    std::int64_t groups = 1;
};

struct ContractOptions {
    bool simd = true;  ///< SIMD pre maps and the blocked engine (ops/gemm.hpp); false: the plain reference loops
};

/// Reusable buffers for repeated calls (a simulator's scratchpad), passed to the prepacked overloads: the
/// pre-applied operand and the accumulator tensor are reused when dtype and shape match (no allocation, no page
/// faults), and the engine's packing buffers keep their capacity. The returned Contracted::acc then SHARES the
/// workspace's storage: the next call with the same workspace overwrites it. One workspace per thread.
struct ContractWorkspace {
    Tensor pre;                        ///< pre-applied activation operand
    Tensor acc;                        ///< accumulators
    gemm::Panels tile;                 ///< im2col tile / per-call panels
    gemm::Scratch planes;              ///< zero-padded planes of the direct conv
    std::vector<std::int64_t> offsets; ///< row offsets of the direct conv
};

struct Contracted {
    Tensor acc;                   ///< int32 or float accumulators
    numeric::Interval acc_range;  ///< proved range of every int32 accumulator (unbounded for float)
    std::int64_t terms = 0;       ///< products summed per output (K)
};

/// Convolution weights with pre_w applied once (pack_conv_weights), for the run_conv_contract overload.
template <class Acc>
struct PackedConvWeights {
    Shape w_shape;            ///< Cout x Cin_g x k..
    Tensor wa;                ///< pre_w(w): contiguous Acc, the engine's broadcast operand [Cout, Cin_g prod k]
    numeric::Interval range;  ///< proved range of pre_w (unbounded for float)
    bool finite = true;       ///< float: every weight is finite (else the reference loops run, see the header)
};

/// MatMul B operand with pre_b applied once and packed into panels (pack_matmul_b).
template <class Acc>
struct PackedMatmulB {
    Shape b_shape;                     ///< [.., K, N]
    Tensor ba;                         ///< pre_b(b), contiguous Acc (the reference path reads it)
    numeric::Interval range;           ///< proved range of pre_b (unbounded for float)
    std::vector<gemm::Panels> panels;  ///< one per batch slice of b, row-major over b's batch axes
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

/// contract_pre into `ws->pre` when it is a contiguous tensor of the right dtype and shape (else a new tensor, kept
/// there for the next call); without a workspace, a new tensor.
template <expr::Expr Pre>
Result<Tensor> contract_pre_reuse(const Pre& pre, const Tensor& t, int channel_axis, bool simd, const std::string& what,
                                  ContractWorkspace* ws) {
    if (!ws) return contract_pre(pre, t, channel_axis, simd, what);
    Tensor& r = ws->pre;
    if (!r.storage || r.dtype != dtype_v<typename Pre::type> || !(r.shape() == t.shape()) || !r.layout.is_contiguous())
        r = Tensor::zeros(dtype_v<typename Pre::type>, t.shape());
    const Tensor ins[1] = {t};
    JANUS_CHECK(run_map(pre, std::span<const Tensor>(ins), r, MapOptions{simd, channel_axis}, what));
    return r;
}

/// A contiguous accumulator tensor: ws->acc when it fits (every element is overwritten by the sums), else new.
inline Tensor acc_tensor(DType d, const Shape& s, ContractWorkspace* ws) {
    if (!ws) return Tensor::zeros(d, s);
    if (!ws->acc.storage || ws->acc.dtype != d || !(ws->acc.shape() == s) || !ws->acc.layout.is_contiguous())
        ws->acc = Tensor::zeros(d, s);
    return ws->acc;
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

namespace detail {

/// Storage of an engine operand: float, or the narrowest integer type holding pre's proved range and 0 (padding).
template <class Acc, expr::Expr Pre>
gemm::Storage operand_storage(const Pre& pre, const std::string& what) {
    if constexpr (std::is_same_v<Acc, float>) {
        return gemm::Storage::f32;
    } else {
        auto r = expr::check_ranges(pre, {}, what);
        return r.ok() ? gemm::storage_for(join(*r, numeric::Interval::point(0))) : gemm::Storage::i32;
    }
}

template <class L>
bool all_finite(const Tensor& t) {
    if constexpr (std::is_same_v<L, float>) {
        const auto* p = reinterpret_cast<const float*>(t.data());
        for (std::int64_t i = 0; i < t.elements(); ++i)
            if (!std::isfinite(p[i])) return false;
    }
    return true;
}

/// The conv sums over pre-applied contiguous xa [N, C, D..] and wa [Cout, Cin_g, k..]: the plain reference loops
/// (fast = false) or the engine.
template <class L>
Tensor conv_sums(const Tensor& xa, const Tensor& wa, const std::vector<L>& b, const Shape& out_shape,
                 const WindowParams& n, std::int64_t groups, bool fast, gemm::Storage storage,
                 ContractWorkspace* ws = nullptr) {
    const int spatial = xa.rank() - 2;
    const std::int64_t cin_g = wa.shape()[1];
    const std::int64_t cout_g = wa.shape()[0] / groups;
    Tensor acc = acc_tensor(dtype_v<L>, out_shape, ws);
    if (fast) {
        ContractWorkspace local;
        ContractWorkspace& buf = ws ? *ws : local;
        gemm::ConvGeometry g;
        g.spatial = spatial;
        g.cin_g = cin_g;
        for (int a = 0; a < spatial; ++a) {
            g.in[a] = xa.shape()[2 + a];
            g.out[a] = out_shape[2 + a];
            g.kernel[a] = n.kernel[a];
            g.stride[a] = n.strides[a];
            g.dilation[a] = n.dilations[a];
            g.pad[a] = n.pads_begin[a];
            g.kvol *= g.kernel[a];
            g.in_pixels *= g.in[a];
            g.out_pixels *= g.out[a];
        }
        const std::int64_t K = cin_g * g.kvol, P = g.out_pixels, batches = out_shape[0], C = xa.shape()[1];
        if (P == 0 || cout_g == 0 || batches == 0) return acc;
        // NC output pixels per packed tile: K x NC within ~256 KiB
        const std::int64_t budget = std::int64_t{256} * 1024 / std::max<std::int64_t>(1, K * static_cast<std::int64_t>(gemm::storage_size(storage)));
        const std::int64_t nc = std::min((P + gemm::NR - 1) / gemm::NR * gemm::NR,
                                         std::max<std::int64_t>(gemm::NR, budget / gemm::NR * gemm::NR));
        const auto* x = reinterpret_cast<const L*>(xa.data());
        const auto* w = reinterpret_cast<const L*>(wa.data());
        auto* c = reinterpret_cast<L*>(acc.data());
        // direct (no im2col) when the innermost stride is 1 and the padded planes stay small
        const int inner = spatial - 1;
        bool direct = spatial <= 2 && g.stride[inner] == 1;
        if (direct) {  // padded planes at most 4x the input (+ 4096); divide rather than multiply: no overflow
            const std::int64_t hp =
                spatial == 2 ? (g.out[0] - 1) * g.stride[0] + (g.kernel[0] - 1) * g.dilation[0] + 1 : 1;
            const std::int64_t wp = g.out[inner] + (g.kernel[inner] - 1) * g.dilation[inner];
            const std::int64_t limit = 4 * g.in_pixels + 4096;
            direct = wp <= limit && hp <= limit / wp;
        }
        if (direct) {
            auto run_direct = [&](auto tag) {
                using S = decltype(tag);
                for (std::int64_t bn = 0; bn < batches; ++bn)
                    for (std::int64_t gi = 0; gi < groups; ++gi)
                        gemm::conv_direct<L, S>(x + (bn * C + gi * cin_g) * g.in_pixels, g, cout_g,
                                                w + gi * cout_g * K, b.data() + gi * cout_g,
                                                c + (bn * out_shape[1] + gi * cout_g) * P, buf.planes,
                                                buf.offsets);
            };
            if constexpr (std::is_same_v<L, float>) {
                run_direct(float{});
            } else {
                switch (storage) {
                    case gemm::Storage::i8: run_direct(std::int8_t{}); break;
                    case gemm::Storage::i16: run_direct(std::int16_t{}); break;
                    default: run_direct(std::int32_t{}); break;
                }
            }
            return acc;
        }
        gemm::Panels& tile = buf.tile;
        tile.resize(storage, K, nc);
        for (std::int64_t bn = 0; bn < batches; ++bn)
            for (std::int64_t gi = 0; gi < groups; ++gi) {
                const L* xg = x + (bn * C + gi * cin_g) * g.in_pixels;
                const L* wg = w + gi * cout_g * K;
                L* cg = c + (bn * out_shape[1] + gi * cout_g) * P;
                for (std::int64_t p0 = 0; p0 < P; p0 += nc) {
                    const std::int64_t np = std::min(nc, P - p0);
                    if constexpr (std::is_same_v<L, float>) {
                        gemm::pack_conv_tile(xg, g, p0, np, tile.data<float>());
                    } else {
                        switch (storage) {
                            case gemm::Storage::i8: gemm::pack_conv_tile(xg, g, p0, np, tile.data<std::int8_t>()); break;
                            case gemm::Storage::i16:
                                gemm::pack_conv_tile(xg, g, p0, np, tile.data<std::int16_t>());
                                break;
                            default: gemm::pack_conv_tile(xg, g, p0, np, tile.data<std::int32_t>()); break;
                        }
                    }
                    gemm::run<L>(cout_g, wg, K, tile, 0, np, cg + p0, P, b.data() + gi * cout_g, nullptr);
                }
            }
        return acc;
    }
    using Sum = std::conditional_t<std::is_same_v<L, float>, float, std::int64_t>;
    const Tensor& x = xa;
    const Tensor& w = wa;
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
                    // no compiler may fuse the product into the sum (FMA): gemm::no_contract
                    const Sum prod = gemm::no_contract(static_cast<Sum>(detail::load_acc<L>(xa, xi)) *
                                                       static_cast<Sum>(detail::load_acc<L>(wa, wi)));
                    s += prod;
                    int a = spatial - 1;
                    for (; a >= 0; --a) {
                        if (++j[a] <= jhi[a]) break;
                        j[a] = jlo[a];
                    }
                    if (a < 0) break;
                }
            }
        }
        s += static_cast<Sum>(b[static_cast<std::size_t>(o[1])]);
        detail::store_sum<L>(acc, o, s);
    });
    return acc;
}

/// Normalized window of a conv whose shapes conv_output_shape accepted; K (saturated) = Cin_g prod k.
inline Result<WindowParams> conv_window(const Shape& w_shape, const ConvParams& p, int spatial, std::int64_t& k_total,
                                        const std::string& what) {
    WindowParams wp = p.window;
    wp.kernel = Dims{};
    for (int a = 2; a < w_shape.size(); ++a) wp.kernel.push_back(w_shape[a]);
    JANUS_TRY(WindowParams n, normalize_window(wp, spatial, what));
    k_total = w_shape[1];  // saturated: an empty tensor's other extents are not bounded by 2^40
    for (auto k : n.kernel)
        k_total = k_total > std::numeric_limits<std::int64_t>::max() / k ? std::numeric_limits<std::int64_t>::max()
                                                                         : k_total * k;
    return n;
}

}  // namespace detail

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
    std::int64_t k_total = 0;
    JANUS_TRY(WindowParams n, detail::conv_window(w.shape(), p, x.rank() - 2, k_total, what));
    JANUS_TRY(numeric::Interval bias_range, detail::check_bias(bias, dtype_v<Acc>, w.shape()[0], what));
    JANUS_TRY(numeric::Interval acc_range, detail::contract_headroom<Acc>(pre_x, pre_w, k_total, bias_range, what));

    JANUS_TRY(Tensor xa, detail::contract_pre(pre_x, x, 1, opt.simd, what + ": pre_x"));
    JANUS_TRY(Tensor wa, detail::contract_pre(pre_w, w, 0, opt.simd, what + ": pre_w"));
    const std::vector<L> b = bias ? bias->to_vector<L>() : std::vector<L>(static_cast<std::size_t>(w.shape()[0]), L{0});
    const bool fast = opt.simd && detail::all_finite<L>(wa);
    Tensor acc = detail::conv_sums<L>(xa, wa, b, out_shape, n, p.groups, fast,
                                      detail::operand_storage<Acc>(pre_x, what));
    return Contracted{acc, acc_range, k_total};
}

/// Apply pre_w to constant conv weights once (Cout x Cin_g x k..); the proved range is pre_w's (rule
/// conv-weight-rank, and pre_w's range rules).
template <expr::Expr PreW>
Result<PackedConvWeights<typename PreW::type>> pack_conv_weights(const PreW& pre_w, const Tensor& w,
                                                                 const ContractOptions& opt = {},
                                                                 const std::string& what = "contract") {
    using Acc = typename PreW::type;
    static_assert(std::is_same_v<Acc, std::int32_t> || std::is_same_v<Acc, float>,
                  "contract accumulates in int32 or float: wrap integer operands in widen()");
    if (w.rank() < 3)
        return make_error(what, "w", "conv-weight-rank",
                          "weights need Cout x Cin_g x spatial axes (rank >= 3), got " + w.shape().str());
    PackedConvWeights<Acc> r;
    r.w_shape = w.shape();
    if constexpr (std::is_same_v<Acc, float>) {
        r.range = numeric::Interval::unbounded();
    } else {
        JANUS_TRY(r.range, expr::check_ranges(pre_w, {}, what + ": pre of the second operand"));
    }
    JANUS_TRY(r.wa, detail::contract_pre(pre_w, w, 0, opt.simd, what + ": pre_w"));
    r.finite = detail::all_finite<expr::lane_t<Acc>>(r.wa);
    return r;
}

/// Convolution with prepacked weights: the same accumulators as the plain overload with the pre_w that packed w.
template <expr::Expr PreX, class Acc>
Result<Contracted> run_conv_contract(const PreX& pre_x, const PackedConvWeights<Acc>& w, const Tensor& x,
                                     const Tensor* bias, const ConvParams& p, const ContractOptions& opt = {},
                                     const std::string& what = "contract", ContractWorkspace* ws = nullptr) {
    static_assert(std::is_same_v<Acc, typename PreX::type>, "pre_x and the packed weights must share the accumulator");
    using L = expr::lane_t<Acc>;
    JANUS_TRY(Shape out_shape, conv_output_shape(x.shape(), w.w_shape, p, what));
    std::int64_t k_total = 0;
    JANUS_TRY(WindowParams n, detail::conv_window(w.w_shape, p, x.rank() - 2, k_total, what));
    JANUS_TRY(numeric::Interval bias_range, detail::check_bias(bias, dtype_v<Acc>, w.w_shape[0], what));
    numeric::Interval acc_range = numeric::Interval::unbounded();
    if constexpr (!std::is_same_v<Acc, float>) {
        JANUS_TRY(numeric::Interval rx, expr::check_ranges(pre_x, {}, what + ": pre of the first operand"));
        JANUS_TRY(acc_range, numeric::accumulator_range(rx, w.range, k_total, bias_range, what));
    }
    JANUS_TRY(Tensor xa, detail::contract_pre_reuse(pre_x, x, 1, opt.simd, what + ": pre_x", ws));
    const std::vector<L> b = bias ? bias->to_vector<L>() : std::vector<L>(static_cast<std::size_t>(w.w_shape[0]), L{0});
    Tensor acc = detail::conv_sums<L>(xa, w.wa, b, out_shape, n, p.groups, opt.simd && w.finite,
                                      detail::operand_storage<Acc>(pre_x, what), ws);
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
        return make_unsupported(what, "", "rank-at-most-6",
                                what + " output of rank " + std::to_string(batch.size() + 2),
                                "Janus supports rank <= 6");
    batch.push_back(a[a.size() - 2]);
    batch.push_back(b[b.size() - 1]);
    return batch;
}

namespace detail {

/// Row-major index of the batch slice an operand of batch shape `own` reads at output batch index `idx` (numpy
/// broadcasting: right-aligned, extent-1 axes read slice 0).
inline std::int64_t batch_slice(const Shape& own, const Dims& idx, int out_batch_rank) {
    std::int64_t r = 0;
    const int off = out_batch_rank - own.size();
    for (int a = 0; a < own.size(); ++a) r = r * own[a] + (own[a] == 1 ? 0 : idx[off + a]);
    return r;
}

inline Shape batch_shape(const Shape& s) {
    Shape r = s;
    r.erase(r.size() - 1);
    r.erase(r.size() - 1);
    return r;
}

/// b's batch slices (pre-applied, contiguous [.., K, N]) packed into panels.
template <class L>
std::vector<gemm::Panels> pack_b_slices(const Tensor& ba, gemm::Storage storage) {
    const std::int64_t K = ba.shape()[ba.rank() - 2], N = ba.shape()[ba.rank() - 1];
    const std::int64_t slices = element_count(batch_shape(ba.shape()));
    std::vector<gemm::Panels> r(static_cast<std::size_t>(slices));
    const auto* b = reinterpret_cast<const L*>(ba.data());
    for (std::int64_t i = 0; i < slices; ++i) gemm::pack_panels(b + i * K * N, K, N, N, storage, r[static_cast<std::size_t>(i)]);
    return r;
}

/// The matmul sums over pre-applied contiguous aa [.., M, K] and ba [.., K, N]: the plain reference loops, or the
/// engine when `panels` (b's slices, packed) is given.
template <class L>
Result<Tensor> matmul_sums(const Tensor& aa, const Tensor& ba, const std::vector<gemm::Panels>* panels,
                           const std::vector<L>& bias_v, const Shape& out_shape, const std::string& what,
                           ContractWorkspace* ws = nullptr) {
    const int r = out_shape.size();
    const std::int64_t K = aa.shape()[aa.rank() - 1];
    const std::int64_t M = out_shape[r - 2], N = out_shape[r - 1];
    Tensor acc = acc_tensor(dtype_v<L>, out_shape, panels ? ws : nullptr);
    if (panels) {
        const Shape ob = batch_shape(out_shape), ab = batch_shape(aa.shape()), bb = batch_shape(ba.shape());
        const auto* a = reinterpret_cast<const L*>(aa.data());
        auto* c = reinterpret_cast<L*>(acc.data());
        if (M == 0 || N == 0) return acc;
        std::int64_t slice = 0;
        for_each_index(ob, [&](const Dims& idx) {
            const L* as = a + batch_slice(ab, idx, ob.size()) * M * K;
            const auto& bp = (*panels)[static_cast<std::size_t>(batch_slice(bb, idx, ob.size()))];
            gemm::run<L>(M, as, K, bp, 0, N, c + slice * M * N, N, nullptr, bias_v.data());
            ++slice;
        });
        return acc;
    }
    Shape a_full = out_shape, b_full = out_shape;
    a_full[r - 1] = K;
    b_full[r - 2] = K;
    JANUS_TRY(Layout la, broadcast_to(aa.layout, a_full, what));
    JANUS_TRY(Layout lb, broadcast_to(ba.layout, b_full, what));
    const Tensor av = aa.view(la), bv = ba.view(lb);
    using Sum = std::conditional_t<std::is_same_v<L, float>, float, std::int64_t>;
    for_each_index(out_shape, [&](const Dims& o) {
        Dims ai = o, bi = o;
        const std::int64_t n = o[r - 1];
        Sum s{0};
        for (std::int64_t k = 0; k < K; ++k) {
            ai[r - 1] = k;
            bi[r - 2] = k;
            // no compiler may fuse the product into the sum (FMA): gemm::no_contract
            const Sum prod = gemm::no_contract(static_cast<Sum>(detail::load_acc<L>(av, ai)) *
                                               static_cast<Sum>(detail::load_acc<L>(bv, bi)));
            s += prod;
        }
        s += static_cast<Sum>(bias_v[static_cast<std::size_t>(n)]);
        detail::store_sum<L>(acc, o, s);
    });
    return acc;
}

}  // namespace detail

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
    const std::int64_t K = a.shape()[a.rank() - 1];
    const std::int64_t N = out_shape[out_shape.size() - 1];
    JANUS_TRY(numeric::Interval bias_range, detail::check_bias(bias, dtype_v<Acc>, N, what));
    JANUS_TRY(numeric::Interval acc_range, detail::contract_headroom<Acc>(pre_a, pre_b, K, bias_range, what));

    JANUS_TRY(Tensor aa, detail::contract_pre(pre_a, a, a.rank() - 2, opt.simd, what + ": pre_a"));
    JANUS_TRY(Tensor ba, detail::contract_pre(pre_b, b, b.rank() - 1, opt.simd, what + ": pre_b"));
    const std::vector<L> bias_v = bias ? bias->to_vector<L>() : std::vector<L>(static_cast<std::size_t>(N), L{0});
    std::vector<gemm::Panels> panels;
    if (opt.simd) panels = detail::pack_b_slices<L>(ba, detail::operand_storage<Acc>(pre_b, what));
    JANUS_TRY(Tensor acc, detail::matmul_sums<L>(aa, ba, opt.simd ? &panels : nullptr, bias_v, out_shape, what));
    return Contracted{acc, acc_range, K};
}

/// Apply pre_b to a constant matmul operand b ([.., K, N], rank >= 2) once and pack it into panels of the narrowest
/// storage holding pre_b's proved range (rule matmul-rank-at-least-2, and pre_b's range rules).
template <expr::Expr PreB>
Result<PackedMatmulB<typename PreB::type>> pack_matmul_b(const PreB& pre_b, const Tensor& b,
                                                         const ContractOptions& opt = {},
                                                         const std::string& what = "contract") {
    using Acc = typename PreB::type;
    static_assert(std::is_same_v<Acc, std::int32_t> || std::is_same_v<Acc, float>,
                  "contract accumulates in int32 or float: wrap integer operands in widen()");
    if (b.rank() < 2)
        return make_error(what, "b", "matmul-rank-at-least-2",
                          "matmul operands need rank >= 2 (promote 1-D operands first), got " + b.shape().str());
    PackedMatmulB<Acc> r;
    r.b_shape = b.shape();
    if constexpr (std::is_same_v<Acc, float>) {
        r.range = numeric::Interval::unbounded();
    } else {
        JANUS_TRY(r.range, expr::check_ranges(pre_b, {}, what + ": pre of the second operand"));
    }
    JANUS_TRY(r.ba, detail::contract_pre(pre_b, b, b.rank() - 1, opt.simd, what + ": pre_b"));
    r.panels = detail::pack_b_slices<expr::lane_t<Acc>>(r.ba, detail::operand_storage<Acc>(pre_b, what));
    return r;
}

/// Batched matmul with a prepacked b: the same accumulators as the plain overload with the pre_b that packed b.
template <expr::Expr PreA, class Acc>
Result<Contracted> run_matmul_contract(const PreA& pre_a, const PackedMatmulB<Acc>& b, const Tensor& a,
                                       const Tensor* bias, const ContractOptions& opt = {},
                                       const std::string& what = "contract", ContractWorkspace* ws = nullptr) {
    static_assert(std::is_same_v<Acc, typename PreA::type>, "pre_a and the packed b must share the accumulator");
    using L = expr::lane_t<Acc>;
    JANUS_TRY(Shape out_shape, matmul_output_shape(a.shape(), b.b_shape, what));
    const std::int64_t K = a.shape()[a.rank() - 1];
    const std::int64_t N = out_shape[out_shape.size() - 1];
    JANUS_TRY(numeric::Interval bias_range, detail::check_bias(bias, dtype_v<Acc>, N, what));
    numeric::Interval acc_range = numeric::Interval::unbounded();
    if constexpr (!std::is_same_v<Acc, float>) {
        JANUS_TRY(numeric::Interval ra, expr::check_ranges(pre_a, {}, what + ": pre of the first operand"));
        JANUS_TRY(acc_range, numeric::accumulator_range(ra, b.range, K, bias_range, what));
    }
    JANUS_TRY(Tensor aa, detail::contract_pre_reuse(pre_a, a, a.rank() - 2, opt.simd, what + ": pre_a", ws));
    const std::vector<L> bias_v = bias ? bias->to_vector<L>() : std::vector<L>(static_cast<std::size_t>(N), L{0});
    JANUS_TRY(Tensor acc,
              detail::matmul_sums<L>(aa, b.ba, opt.simd ? &b.panels : nullptr, bias_v, out_shape, what, ws));
    return Contracted{acc, acc_range, K};
}

}  // namespace janus::ops
