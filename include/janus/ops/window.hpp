#pragma once
// Index structure `window`: sliding windows over the spatial axes of an N x C x D1 x ... x Ds input (s >= 1; rank
// <= 6, so up to 4 spatial axes). The primitive of MaxPool, AveragePool, LpPool and friends.
//
// Geometry (per spatial axis a; all values validated by normalize_window):
//   kernel k_a >= 1, stride s_a >= 1, dilation d_a >= 1, pads p_a (begin) and q_a (end) >= 0 (asymmetric allowed).
//   Kernel position j in [0, k_a) of output position o reads input coordinate   i = o * s_a - p_a + j * d_a.
//   The padded input is [-p_a, L_a + q_a); the effective window extent is e_a = (k_a - 1) d_a + 1.
//   Output extent (window_output_shape):   floor mode  O = floor((L + p + q - e) / s) + 1
//                                          ceil mode   O = ceil((L + p + q - e) / s) + 1, then minus 1 if the last
//                                          window would START in the right padding ((O - 1) s >= L + p): ONNX
//                                          (opset 19+) and PyTorch drop it. Only ceil mode has such windows.
//   L + p + q < e is an error ("window-fits-padded-input"): not even one window fits.
//   The last ceil-mode window may run past the padded input: those positions are the OVERHANG (neither input nor
//   padding).
//
// Values: out[n, c, o..] = post(acc, count) with
//   acc   = init combined (add | max | min, seed A3: init, pre, combine and post are the op's four separate parts)
//           with pre(in[n, c, i..]) over every kernel position whose coordinates lie INSIDE the input, in row-major
//           kernel order (j_1 outermost), so float sums are deterministic;
//   count = the denominator chosen by DenominatorPolicy (per output, reported in WindowStats::counts):
//     count_include_pad  kernel positions inside the PADDED input [-p, L + q) on every axis: padding counts, the
//                        ceil-mode overhang does not (ONNX AveragePool count_include_pad=1 == PyTorch
//                        count_include_pad=True: divisor (hend - hstart)(wend - wstart) with hend = min(hstart + k,
//                        L + pad), taken before clamping to the input);
//     count_valid        kernel positions inside the input [0, L) (ONNX count_include_pad=0);
//     fixed              the kernel volume prod k_a, always (PyTorch divisor_override = k).
//   Each count is a product of per-axis counts (the window is a box). A window may hold no input position at all
//   (large pads, or dilation stepping over a short input): then acc = init and count_valid = 0; post decides.
// Padding is never combined: for add that IS the real value 0 (pre must map the zero point to 0, i.e. subtract it);
// for max / min it equals a pad value of -inf / the type's lowest (resp. +inf): padding never wins.
// NaN (float): max / min keep the accumulator when the new element is NaN (`y > acc ? y : acc`), so NaN elements are
// skipped and an all-NaN window yields init (ONNX Runtime's MaxPool loop). This is NOT reduce.hpp's numpy rule
// (ReduceMax / ArgMax: NaN wins); both are tested. add propagates NaN.
//
// Kernel shape: pre is a `map` over the input (In<0, InT> -> accumulator type int32 or float), the window loop only
// combines, and post is a `map` over {acc, count} (In<0, Acc>, In<1, int32>) into `out`: the epilogue is written
// once, with per-channel parameters through WindowOptions::channel_axis (the same axis of input and output).
// Range proof (seed A5): for an integer add, init + kernel volume x pre's range must fit int32 with every partial
// sum (numeric::accumulator_range, rule "accumulator-fits-int32"), and post is proved with acc in that interval and
// count in [0, kernel volume].
// The loops are the plain reference (scalar, any layout); pre and post maps use SIMD when asked (bit-identical).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <janus/layout/iterate.hpp>
#include <janus/layout/view.hpp>
#include <janus/numeric/range.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::ops {

/// The denominator an averaging window reports (seed D14: same output shape, different answers).
enum class DenominatorPolicy : std::uint8_t { count_include_pad, count_valid, fixed };

constexpr std::string_view denominator_name(DenominatorPolicy d) {
    constexpr std::string_view names[] = {"count_include_pad", "count_valid", "fixed"};
    return names[static_cast<std::size_t>(d)];
}

/// Window geometry over the spatial axes. Empty strides / dilations / pads mean all 1 / 1 / 0.
struct WindowParams {
    Dims kernel;
    Dims strides;
    Dims dilations;
    Dims pads_begin;
    Dims pads_end;
    bool ceil_mode = false;
    friend bool operator==(const WindowParams&, const WindowParams&) = default;
};

struct WindowOptions {
    bool simd = true;       ///< SIMD in the pre and post maps
    int channel_axis = -1;  ///< channel coordinate for per-channel parameters of pre and post (-1: none)
    /// max / min only: when set, an int64 tensor of the output's shape that receives, per output, the flat index into
    /// the input (N, C, then the spatial axes row-major; column-major over the spatial axes with
    /// `winners_column_major`) of the element holding the result: the first one in kernel order with the winning
    /// value (init included: an all-(-inf) window names its first element), -1 when every element is NaN (skipped).
    /// MaxPool's Indices output.
    Tensor* winners = nullptr;
    bool winners_column_major = false;
};

struct WindowStats {
    Shape out_shape;                ///< [N, C, O_1, ..]
    Tensor counts;                  ///< int32 [1, 1, O_1, ..]: the denominator of every output position
    std::int64_t kernel_volume = 0; ///< prod k_a
    std::int64_t combined = 0;      ///< input elements combined in total (the data a lowering must read)
};

/// Largest kernel, stride, dilation or pad accepted: keeps every coordinate computation far from int64 overflow.
inline constexpr std::int64_t max_window_param = std::numeric_limits<std::int32_t>::max();

namespace detail {
inline std::int64_t floor_div_pos(std::int64_t a, std::int64_t b) {  // b > 0
    const std::int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}
inline std::int64_t ceil_div_pos(std::int64_t a, std::int64_t b) { return -floor_div_pos(-a, b); }  // b > 0

/// Kernel positions j in [0, k) with first + j d in [lo, hi), as the inclusive range [jlo, jhi] (jlo > jhi: none).
struct KRange {
    std::int64_t lo, hi;
    std::int64_t count() const { return hi >= lo ? hi - lo + 1 : 0; }
};
inline KRange kernel_range(std::int64_t first, std::int64_t d, std::int64_t k, std::int64_t lo, std::int64_t hi) {
    return {std::max<std::int64_t>(0, ceil_div_pos(lo - first, d)), std::min<std::int64_t>(k - 1, floor_div_pos(hi - 1 - first, d))};
}
}  // namespace detail

/// Fill defaults and validate `p` for `spatial` spatial axes. Rules: window-param-length, kernel-positive,
/// stride-positive, dilation-positive, pads-nonnegative (each value also <= 2^31 - 1), kernel-volume-fits-int32.
inline Result<WindowParams> normalize_window(const WindowParams& p, int spatial, const std::string& what) {
    WindowParams r = p;
    auto fill = [&](Dims& d, std::int64_t v) {
        if (d.empty()) d = Dims::filled(spatial, v);
    };
    fill(r.strides, 1);
    fill(r.dilations, 1);
    fill(r.pads_begin, 0);
    fill(r.pads_end, 0);
    struct Field { const char* name; const Dims* d; std::int64_t lo; const char* rule; };
    const Field fields[] = {{"kernel", &r.kernel, 1, "kernel-positive"},
                            {"strides", &r.strides, 1, "stride-positive"},
                            {"dilations", &r.dilations, 1, "dilation-positive"},
                            {"pads_begin", &r.pads_begin, 0, "pads-nonnegative"},
                            {"pads_end", &r.pads_end, 0, "pads-nonnegative"}};
    for (const auto& f : fields) {
        if (f.d->size() != spatial)
            return make_error(what, f.name, "window-param-length",
                              std::string(f.name) + " has " + std::to_string(f.d->size()) + " values for " +
                                  std::to_string(spatial) + " spatial axes");
        for (int a = 0; a < spatial; ++a)
            if ((*f.d)[a] < f.lo || (*f.d)[a] > max_window_param)
                return make_error(what, std::string(f.name) + "[" + std::to_string(a) + "]", f.rule,
                                  std::string(f.name) + " value " + std::to_string((*f.d)[a]) + " must be in [" +
                                      std::to_string(f.lo) + ", 2^31 - 1]");
    }
    std::int64_t vol = 1;
    for (auto k : r.kernel) {
        vol *= k;  // each factor <= 2^31 and the running product <= 2^31 below: no overflow
        if (vol > max_window_param)
            return make_error(what, "kernel", "kernel-volume-fits-int32",
                              "the kernel volume exceeds 2^31 - 1 (counts are int32)");
    }
    return r;
}

/// ONNX attribute spelling (kernel_shape, strides, dilations, pads = [b_1.., e_1..], ceil_mode) -> WindowParams.
inline Result<WindowParams> window_params_from_onnx(std::span<const std::int64_t> kernel_shape,
                                                    std::span<const std::int64_t> strides,
                                                    std::span<const std::int64_t> dilations,
                                                    std::span<const std::int64_t> pads, bool ceil_mode,
                                                    const std::string& what) {
    const int s = static_cast<int>(kernel_shape.size());
    if (s < 1 || s > max_rank - 2)
        return make_error(what, "kernel_shape", "window-param-length",
                          "kernel_shape needs 1 to " + std::to_string(max_rank - 2) + " values");
    if (!pads.empty() && pads.size() != 2 * kernel_shape.size())
        return make_error(what, "pads", "window-param-length",
                          "pads needs 2 x " + std::to_string(s) + " values (all begins, then all ends)");
    auto dims = [&](std::span<const std::int64_t> v, const char* name) -> Result<Dims> {
        if (v.size() > static_cast<std::size_t>(max_rank))
            return make_error(what, name, "window-param-length", std::string(name) + " has too many values");
        Dims d;
        for (auto x : v) d.push_back(x);
        return d;
    };
    WindowParams p;
    JANUS_TRY(p.kernel, dims(kernel_shape, "kernel_shape"));
    JANUS_TRY(p.strides, dims(strides, "strides"));
    JANUS_TRY(p.dilations, dims(dilations, "dilations"));
    if (!pads.empty()) {
        JANUS_TRY(p.pads_begin, dims(pads.first(kernel_shape.size()), "pads"));
        JANUS_TRY(p.pads_end, dims(pads.last(kernel_shape.size()), "pads"));
    }
    p.ceil_mode = ceil_mode;
    return normalize_window(p, s, what);
}

/// Output extent of one spatial axis (params already normalized).
inline Result<std::int64_t> window_output_extent(std::int64_t L, std::int64_t k, std::int64_t s, std::int64_t d,
                                                 std::int64_t pb, std::int64_t pe, bool ceil_mode,
                                                 const std::string& what, const std::string& position) {
    const std::int64_t eff = (k - 1) * d + 1;  // <= 2^62
    const std::int64_t padded = L + pb + pe;   // <= 2^40 + 2^32
    if (padded < eff)
        return make_error(what, position, "window-fits-padded-input",
                          "the window spans " + std::to_string(eff) + " positions but the padded input has " +
                              std::to_string(padded));
    std::int64_t o = (ceil_mode ? detail::ceil_div_pos(padded - eff, s) : (padded - eff) / s) + 1;
    if (ceil_mode && (o - 1) * s >= L + pb) --o;  // the last window would start in the right padding
    return o;
}

/// Output shape [N, C, O..] of a window over `in` (rank >= 3). Validates the parameters.
inline Result<Shape> window_output_shape(const Shape& in, const WindowParams& p, const std::string& what = "window") {
    if (in.size() < 3)
        return make_error(what, "input", "window-input-rank",
                          "a window needs N x C x spatial axes (rank >= 3), got rank " + std::to_string(in.size()));
    const int spatial = in.size() - 2;
    JANUS_TRY(WindowParams n, normalize_window(p, spatial, what));
    Shape out = in;
    for (int a = 0; a < spatial; ++a) {
        JANUS_TRY(out[2 + a], window_output_extent(in[2 + a], n.kernel[a], n.strides[a], n.dilations[a],
                                                   n.pads_begin[a], n.pads_end[a], n.ceil_mode, what,
                                                   "spatial axis " + std::to_string(a)));
    }
    return out;
}

namespace detail {
/// The coordinates [lo, hi) whose kernel positions a policy other than `fixed` counts along spatial axis a: the
/// input (count_valid) or the padded input (count_include_pad).
inline KRange counted_bounds(const Shape& in, const WindowParams& n, DenominatorPolicy policy, int a) {
    if (policy == DenominatorPolicy::count_valid) return {0, in[2 + a]};
    return {-n.pads_begin[a], in[2 + a] + n.pads_end[a]};
}

/// The denominator of output position o along spatial axis a (the window's count is the product over the axes).
inline std::int64_t axis_count(const Shape& in, const WindowParams& n, DenominatorPolicy policy, int a,
                               std::int64_t o) {
    if (policy == DenominatorPolicy::fixed) return n.kernel[a];
    const KRange b = counted_bounds(in, n, policy, a);
    return kernel_range(o * n.strides[a] - n.pads_begin[a], n.dilations[a], n.kernel[a], b.lo, b.hi).count();
}
}  // namespace detail

/// The denominator of every output position: int32 [1, 1, O..] (see the policies above).
inline Result<Tensor> window_counts(const Shape& in, const WindowParams& p, DenominatorPolicy policy,
                                    const std::string& what = "window") {
    JANUS_TRY(Shape out, window_output_shape(in, p, what));
    JANUS_TRY(WindowParams n, normalize_window(p, in.size() - 2, what));
    Shape cs = out;
    cs[0] = 1;
    cs[1] = 1;
    Tensor counts = Tensor::zeros(DType::i32, cs);
    for_each_index(cs, [&](const Dims& o) {
        std::int64_t c = 1;
        for (int a = 0; a < in.size() - 2; ++a) c *= detail::axis_count(in, n, policy, a, o[2 + a]);
        counts.set<std::int32_t>(o, static_cast<std::int32_t>(c));  // <= kernel volume <= 2^31 - 1
    });
    return counts;
}

/// Most windows a geometry check or a denominator scan examines one by one along an axis, and most distinct
/// denominators window_count_values combines (rule "window-scan-limit" beyond).
inline constexpr std::int64_t max_scanned_windows = std::int64_t{1} << 16;

/// The values window_counts takes, ascending and each once, in time and memory independent of the output's size:
/// a plan needs only these (a 290-byte model whose AveragePool has a 16384 x 16384 output made `janusc compile`
/// allocate 2.1 GB and spend 18 s on window_counts, issue 26). Along axis a, a window the policy's bounds [lo, hi)
/// do not clip (lo <= first and first + (k - 1) d < hi) counts the whole kernel k; the clipped ones lie at the two
/// ends, o < ceil((lo + pad_begin) / s) and o >= ceil((hi + pad_begin - (k - 1) d) / s), and only they are visited.
/// Rule "window-scan-limit": more than max_scanned_windows clipped windows along one axis, or more than that many
/// distinct products.
inline Result<std::vector<std::int64_t>> window_count_values(const Shape& in, const WindowParams& p,
                                                             DenominatorPolicy policy,
                                                             const std::string& what = "window") {
    JANUS_TRY(Shape out, window_output_shape(in, p, what));
    JANUS_TRY(WindowParams n, normalize_window(p, in.size() - 2, what));
    std::vector<std::int64_t> values{1};
    for (int a = 0; a < in.size() - 2; ++a) {
        const std::string axis = "spatial axis " + std::to_string(a);
        const std::int64_t N = out[2 + a], s = n.strides[a], pb = n.pads_begin[a];
        std::int64_t left = 0, right = N;  // clipped: o in [0, left) or [right, N)
        if (policy != DenominatorPolicy::fixed) {
            const auto [lo, hi] = detail::counted_bounds(in, n, policy, a);
            left = std::min(N, detail::ceil_div_pos(lo + pb, s));
            const std::int64_t r = hi + pb - (n.kernel[a] - 1) * n.dilations[a];  // > -2^63: max_window_param
            right = std::max(left, r <= 0 ? 0 : std::min(N, detail::ceil_div_pos(r, s)));
        }
        if (left + (N - right) > max_scanned_windows)
            return make_error(what, axis, "window-scan-limit",
                              std::to_string(left + (N - right)) + " windows are clipped by the " +
                                  (policy == DenominatorPolicy::count_valid ? "input's" : "padded input's") +
                                  " bounds; Janus computes the denominators of at most " +
                                  std::to_string(max_scanned_windows) + " such windows per axis");
        std::vector<std::int64_t> counts;
        if (left < right) counts.push_back(n.kernel[a]);
        for (std::int64_t o = 0; o < left; ++o) counts.push_back(detail::axis_count(in, n, policy, a, o));
        for (std::int64_t o = right; o < N; ++o) counts.push_back(detail::axis_count(in, n, policy, a, o));
        std::sort(counts.begin(), counts.end());
        counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
        if (values.size() * counts.size() > static_cast<std::size_t>(max_scanned_windows))
            return make_error(what, axis, "window-scan-limit",
                              "the windows' denominators take more than " + std::to_string(max_scanned_windows) +
                                  " distinct values (" + std::to_string(counts.size()) + " along this axis times " +
                                  std::to_string(values.size()) + " before it)");
        std::vector<std::int64_t> next;
        next.reserve(values.size() * counts.size());
        for (const std::int64_t v : values)
            for (const std::int64_t c : counts) next.push_back(v * c);  // <= kernel volume <= 2^31 - 1
        std::sort(next.begin(), next.end());
        next.erase(std::unique(next.begin(), next.end()), next.end());
        values = std::move(next);
    }
    return values;
}

/// Run a window: pre (map), combine over each window, post (map over {acc, count}) into `out`, whose shape must be
/// window_output_shape(in.shape(), p) and dtype Post::type.
template <expr::BinOp Combine, expr::Expr Pre, expr::Expr Post>
Result<WindowStats> run_window(const Pre& pre, expr::lane_t<typename Pre::type> init, const Post& post,
                               const Tensor& in, const WindowParams& p, DenominatorPolicy policy, Tensor& out,
                               const WindowOptions& opt = {}, const std::string& what = "window") {
    static_assert(Combine == expr::BinOp::add || Combine == expr::BinOp::min || Combine == expr::BinOp::max,
                  "a window combines with add, min or max");
    using Acc = typename Pre::type;
    static_assert(std::is_same_v<Acc, std::int32_t> || std::is_same_v<Acc, float>,
                  "pre must produce the accumulator type (int32 or float): wrap it in widen() or to_float()");
    static_assert(Pre::arity == 1, "pre reads exactly one input: In<0, InT>");
    static_assert(Post::arity <= 2, "post reads In<0, Acc> (the accumulator) and optionally In<1, int32_t> (the count)");
    using L = expr::lane_t<Acc>;

    JANUS_TRY(Shape out_shape, window_output_shape(in.shape(), p, what));
    JANUS_TRY(WindowParams n, normalize_window(p, in.rank() - 2, what));
    if (!(out.shape() == out_shape))
        return make_error(what, "output", "output-shape",
                          "output shape " + out.shape().str() + " differs from the window's " + out_shape.str());
    const int spatial = in.rank() - 2;
    std::int64_t volume = 1;
    for (auto k : n.kernel) volume *= k;

    // Range proof (A5): the accumulator interval, then post with it.
    expr::InputRanges post_ranges;
    if constexpr (!std::is_same_v<L, float>) {
        JANUS_TRY(numeric::Interval r, expr::check_ranges(pre, {}, what + ": pre"));
        numeric::Interval acc = numeric::Interval::point(init);
        if constexpr (Combine == expr::BinOp::add) {
            // init + a sum of `volume` pre values (fewer in clipped windows): every partial sum must fit int32
            JANUS_TRY(acc, numeric::accumulator_range(r, numeric::Interval::point(1), volume, acc, what));
        } else {
            acc = join(acc, r);
        }
        post_ranges.r[0] = acc;
        post_ranges.set[0] = true;
    }
    post_ranges.r[1] = numeric::Interval{0, volume};
    post_ranges.set[1] = true;
    JANUS_CHECK(expr::prove_ranges(post, post_ranges, what + ": post"));

    // pre, as a map over the whole input.
    Tensor pre_out = Tensor::zeros(dtype_v<Acc>, in.shape());
    {
        const Tensor ins[1] = {in};
        JANUS_CHECK(run_map(pre, std::span<const Tensor>(ins), pre_out, MapOptions{opt.simd, opt.channel_axis}, what));
    }

    // The window loop: combine only.
    auto combine = [](L x, L y) -> L {
        if constexpr (Combine == expr::BinOp::add) {
            if constexpr (std::is_same_v<L, float>) return x + y;
            else return expr::detail::wrap_add(x, y);
        } else if constexpr (Combine == expr::BinOp::min) {
            return y < x ? y : x;
        } else {
            return y > x ? y : x;
        }
    };
    if (opt.winners && (Combine == expr::BinOp::add || opt.winners->dtype != DType::i64 ||
                        !(opt.winners->shape() == out_shape)))
        return make_error(what, "winners", "window-winners",
                          "winners are for max / min windows, an int64 tensor of the output's shape " + out_shape.str());
    // the flat input index of a coordinate (winners)
    const auto flat = [&](const Dims& i) {
        const Shape& s = in.shape();
        std::int64_t f = i[0] * s[1] + i[1];
        for (int a = 0; a < spatial; ++a) {
            const int b = opt.winners_column_major ? spatial - 1 - a : a;
            f = f * s[2 + b] + i[2 + b];
        }
        return f;
    };
    Tensor acc = Tensor::zeros(dtype_v<Acc>, out_shape);
    WindowStats stats;
    stats.out_shape = out_shape;
    stats.kernel_volume = volume;
    for_each_index(out_shape, [&](const Dims& o) {
        Dims idx = o;
        Dims first = Dims::filled(spatial, 0), jlo = Dims::filled(spatial, 0), jhi = Dims::filled(spatial, 0);
        bool empty = false;
        for (int a = 0; a < spatial; ++a) {
            first[a] = o[2 + a] * n.strides[a] - n.pads_begin[a];
            const auto kr = detail::kernel_range(first[a], n.dilations[a], n.kernel[a], 0, in.shape()[2 + a]);
            jlo[a] = kr.lo;
            jhi[a] = kr.hi;
            empty = empty || kr.count() == 0;
        }
        L v = init;
        std::int64_t win = -1;
        if (!empty) {
            Dims j = jlo;
            for (;;) {  // odometer over the in-range kernel box, row-major (last spatial axis fastest)
                for (int a = 0; a < spatial; ++a) idx[2 + a] = first[a] + j[a] * n.dilations[a];
                L x;
                std::memcpy(&x, pre_out.data() + pre_out.layout.address(idx), sizeof(L));
                if constexpr (Combine == expr::BinOp::max || Combine == expr::BinOp::min) {
                    // the first element that is not NaN, then every strictly better one
                    const bool first = win < 0 && (Combine == expr::BinOp::max ? x >= v : x <= v);
                    if (opt.winners && (first || (Combine == expr::BinOp::max ? x > v : x < v))) win = flat(idx);
                }
                v = combine(v, x);
                ++stats.combined;
                int a = spatial - 1;
                for (; a >= 0; --a) {
                    if (++j[a] <= jhi[a]) break;
                    j[a] = jlo[a];
                }
                if (a < 0) break;
            }
        }
        std::memcpy(acc.data() + acc.layout.address(o), &v, sizeof(L));
        if (opt.winners) std::memcpy(opt.winners->data() + opt.winners->layout.address(o), &win, sizeof(win));
    });

    // post, as a map over {acc, count broadcast over N and C}.
    JANUS_TRY(stats.counts, window_counts(in.shape(), p, policy, what));
    JANUS_TRY(Layout count_view, broadcast_to(stats.counts.layout, out_shape, what));
    const Tensor post_in[2] = {acc, stats.counts.view(count_view)};
    JANUS_CHECK(run_map(post, std::span<const Tensor>(post_in), out, MapOptions{opt.simd, opt.channel_axis}, what));
    return stats;
}

}  // namespace janus::ops
