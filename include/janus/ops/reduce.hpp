#pragma once
// Index structure `reduce`: out[o] = post( combine over i in group(o) of pre(in[i]), starting from init ).
//
// Seed A3: the framework is shared, the math is not. A reduction is FOUR separate parts supplied by the op:
//   - pre:     element expression In<0, InT> -> accumulator lane (int32 or float); e.g. widen(sub(x, zp))
//   - combine: add, min or max (expr::BinOp), on the accumulator type
//   - init:    the accumulator's starting value (0 for sums, the type's lowest for max, ...)
//   - post:    element expression In<0, Acc> -> output element; it is run as a `map` over the accumulator
//              (e.g. rq(acc, s_in / (s_out * count)) + zp_out for a quantized mean), so the epilogue is written once.
// Axes: any subset of the input's axes (sorted, unique, validated by the op). `out` has the input's shape with reduced
// axes either kept as extent 1 (keep_dims) or removed; both are accepted (a removed axis is re-inserted as a unit
// axis in a view of `out`, seed A2: the removed axes leave the coordinate system, the kernel does not rely on them).
// Order (seed A1): the input is walked in row-major order. Each output accumulates its elements in that order, so a
// float sum is deterministic and the scalar and SIMD paths agree bit for bit (SIMD runs across outputs when the
// innermost axis is kept; when it is reduced, integer rows use SIMD partials (exact: add,
// min and max are associative on int32 lanes); float rows stay sequential).
// Empty groups (a reduced extent 0) yield post(init) for every output.
// NaN rule (float min/max, numpy semantics): a NaN element replaces the accumulator and a NaN accumulator is never
// replaced by a number (every comparison with NaN is false), so the result is NaN iff some element is NaN. Integer
// combines and float add need no rule (add propagates NaN by itself).
// Per-channel epilogues: ReduceOptions::channel_axis names the axis (in the kept-dims coordinates, i.e. the input's
// axis numbering) whose coordinate feeds post's chan / per-channel rq nodes; -1 when post has none.
// The data movement the reduction implies is reported in ReduceStats (elements read per output, strides walked).
// Arg-reductions (run_arg_reduce, at the end of this header) extend this contract with an index-aware combine over
// one axis: (value, index) pairs, ties to the first index unless `last`, int64 indices out; same walk, same stats.
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <janus/layout/iterate.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::ops {

struct ReduceOptions {
    bool simd = true;
    int channel_axis = -1;  ///< post's channel axis, in kept-dims (input) coordinates; -1: post is per-tensor
};

/// What a reduction reads: the movement a lowering must implement (seed A1).
struct ReduceStats {
    std::int64_t outputs = 0;            ///< number of output elements
    std::int64_t reads_per_output = 0;   ///< input elements combined into each output
    Dims reduced_strides;                ///< byte strides of the input along the reduced axes, outer to inner
    bool inner_axis_reduced = false;     ///< true: a horizontal (within-row) reduction
};

/// Shape of the output with reduced axes kept as 1.
inline Shape reduced_shape_keepdims(const Shape& in, const Dims& axes) {
    Shape s = in;
    for (auto a : axes) s[static_cast<int>(a)] = 1;
    return s;
}

namespace detail {
/// pre evaluated on the one input element at p, whatever the input's dtype (the scalar path's load).
template <expr::Expr Pre>
auto eval_pre_at(const Pre& pre, DType dt, const std::byte* p) {
    expr::ScalarArgs a;
    visit_dtype(dt, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (expr::is_float_v<T>) a.f[0] = load_lane<T>(p);
        else if constexpr (expr::is_int_v<T>) a.i[0] = load_lane<T>(p);
    });
    return pre.eval(a);
}
}  // namespace detail

template <expr::BinOp Combine, expr::Expr Pre, expr::Expr Post>
Result<ReduceStats> run_reduce(const Pre& pre, expr::lane_t<typename Pre::type> init, const Post& post,
                               const Tensor& in, const Dims& axes, Tensor& out, const ReduceOptions& opt = {},
                               const std::string& what = "reduce") {
    static_assert(Combine == expr::BinOp::add || Combine == expr::BinOp::min || Combine == expr::BinOp::max,
                  "a reduction combines with add, min or max");
    using Acc = typename Pre::type;
    static_assert(std::is_same_v<Acc, std::int32_t> || std::is_same_v<Acc, float>,
                  "pre must produce the accumulator type (int32 or float): wrap it in widen() or to_float()");
    static_assert(Pre::arity == 1, "pre reads exactly one input: In<0, InT>");
    using L = expr::lane_t<Acc>;
    using B = xsimd::batch<L, expr::arch>;
    const int rank = in.rank();

    std::vector<bool> reduced(static_cast<std::size_t>(rank), false);
    for (int k = 0; k < axes.size(); ++k) {
        if (axes[k] < 0 || axes[k] >= rank || (k > 0 && axes[k] <= axes[k - 1]))
            return make_error(what, "axes " + axes.str(), "axes-sorted-unique-in-range",
                              "reduction axes must be sorted, unique and in [0, " + std::to_string(rank) + ")");
        reduced[static_cast<std::size_t>(axes[k])] = true;
    }
    const Shape keep = reduced_shape_keepdims(in.shape(), axes);

    // View `out` with the kept-dims shape.
    Layout out_keep = out.layout;
    if (out.rank() != rank) {
        if (out.rank() != rank - axes.size())
            return make_error(what, "output", "output-rank", "output rank " + std::to_string(out.rank()) +
                                                                 " is neither keep_dims nor reduced rank");
        Layout l{keep, Dims::filled(rank, 0), out.layout.offset, out.layout.elem_size};
        for (int k = 0, j = 0; k < rank; ++k) {
            if (reduced[static_cast<std::size_t>(k)]) continue;  // extent 1, stride 0
            l.shape[k] = out.shape()[j];  // the output's own extent: the shape check below must see a mismatch
            l.strides[k] = out.layout.strides[j++];
        }
        out_keep = l;
    }
    if (!(out_keep.shape == keep))
        return make_error(what, "output", "output-shape",
                          "output shape " + out.shape().str() + " does not match the reduction of " + in.shape().str());

    // Accumulators, contiguous in kept-dims shape, initialized with init.
    Tensor acc = Tensor::zeros(dtype_v<Acc>, keep);
    {
        L* a = reinterpret_cast<L*>(acc.data());
        for (std::int64_t k = 0; k < acc.elements(); ++k) a[k] = init;
    }
    // acc as seen from input coordinates: stride 0 along reduced axes.
    Layout acc_in = acc.layout;
    acc_in.shape = in.shape();
    for (int k = 0; k < rank; ++k)
        if (reduced[static_cast<std::size_t>(k)]) acc_in.strides[k] = 0;

    ReduceStats stats;
    stats.outputs = acc.elements();
    stats.reads_per_output = stats.outputs == 0 ? 0 : in.elements() / std::max<std::int64_t>(stats.outputs, 1);
    for (auto a : axes) stats.reduced_strides.push_back(in.layout.strides[static_cast<int>(a)]);
    stats.inner_axis_reduced = rank > 0 && reduced[static_cast<std::size_t>(rank - 1)];

    // x: accumulator, y: the new element. Float min/max take y when it is NaN (the NaN rule above).
    auto combine = [](auto x, auto y) {
        if constexpr (Combine == expr::BinOp::add) return x + y;
        else if constexpr (std::is_same_v<L, float> && Combine == expr::BinOp::min)
            return xsimd::select((y < x) || !(y == y), y, x);  // not y != y: xsimd 8.1 AVX `!=` is ordered
        else if constexpr (std::is_same_v<L, float>) return xsimd::select((y > x) || !(y == y), y, x);
        else if constexpr (Combine == expr::BinOp::min) return xsimd::select(y < x, y, x);
        else return xsimd::select(y > x, y, x);
    };
    auto combine_s = [](L x, L y) -> L {
        if constexpr (Combine == expr::BinOp::add) {
            if constexpr (std::is_same_v<L, float>) return x + y;
            else return expr::detail::wrap_add(x, y);
        } else if constexpr (std::is_same_v<L, float> && Combine == expr::BinOp::min) {
            return (y < x || y != y) ? y : x;
        } else if constexpr (std::is_same_v<L, float>) {
            return (y > x || y != y) ? y : x;
        } else if constexpr (Combine == expr::BinOp::min) {
            return y < x ? y : x;
        } else {
            return y > x ? y : x;
        }
    };

    const std::int64_t in_inner = rank > 0 ? in.layout.strides[rank - 1] : 0;
    // Float min/max are not order-free either (+0 vs -0 ties), so only integer rows use SIMD partials.
    constexpr bool horizontal_simd = !std::is_same_v<L, float>;
    constexpr L identity = Combine == expr::BinOp::add ? L{0}
                           : Combine == expr::BinOp::min ? std::numeric_limits<L>::max()
                                                         : std::numeric_limits<L>::lowest();
    const DType in_dt = in.dtype;

    // Evaluate pre on `lanes` elements starting at p (input stride s).
    auto pre_batch = [&](const std::byte* p, std::int64_t s) {
        expr::BatchArgs b;
        visit_dtype(in_dt, [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (expr::Element<T>) {
                using LT = expr::lane_t<T>;
                alignas(64) std::array<LT, expr::lanes> w;
                for (std::size_t l = 0; l < expr::lanes; ++l)
                    w[l] = detail::load_lane<T>(p + static_cast<std::int64_t>(l) * s);
                if constexpr (std::is_same_v<LT, float>) b.f[0] = xsimd::batch<float, expr::arch>::load_aligned(w.data());
                else b.i[0] = xsimd::batch<std::int32_t, expr::arch>::load_aligned(w.data());
            }
        });
        return pre.eval(b);
    };
    auto pre_scalar = [&](const std::byte* p) { return detail::eval_pre_at(pre, in_dt, p); };

    const std::int64_t W = static_cast<std::int64_t>(expr::lanes);
    for_each_row(in.shape(), [&](const Dims& idx, std::int64_t n) {
        const std::byte* ip = in.data() + in.layout.address(idx);
        L* ap = reinterpret_cast<L*>(acc.data() + acc_in.address(idx));
        std::int64_t j = 0;
        if (stats.inner_axis_reduced || rank == 0) {
            // Horizontal: all n elements go to one accumulator.
            L a = *ap;
            if (opt.simd && horizontal_simd && n >= W) {
                B part(identity);
                for (; j + W <= n; j += W) part = combine(part, pre_batch(ip + j * in_inner, in_inner));
                alignas(64) std::array<L, expr::lanes> lanes_v;
                part.store_aligned(lanes_v.data());
                for (auto v : lanes_v) a = combine_s(a, v);
            }
            for (; j < n; ++j) a = combine_s(a, pre_scalar(ip + j * in_inner));
            *ap = a;
        } else {
            // Vertical: element j of the row goes to accumulator j (contiguous).
            if (opt.simd) {
                for (; j + W <= n; j += W) {
                    const B cur = B::load_unaligned(ap + j);
                    combine(cur, pre_batch(ip + j * in_inner, in_inner)).store_unaligned(ap + j);
                }
            }
            for (; j < n; ++j) ap[j] = combine_s(ap[j], pre_scalar(ip + j * in_inner));
        }
    });

    Tensor out_view = out.view(out_keep);
    const Tensor acc_arr[1] = {acc};
    JANUS_CHECK(run_map(post, std::span<const Tensor>(acc_arr), out_view, MapOptions{opt.simd, opt.channel_axis}, what));
    return stats;
}

// ---- Arg-reductions: the index-aware combine (ArgMax / ArgMin, ops/argreduce.hpp) ----------------------------------
// An extension of the contract above, not a change to it: the same four parts, with an index riding along.
//   - pre:     element expression In<0, InT> -> comparison lane (int32 or float), e.g. widen(x) or x;
//   - combine: max or min over ONE axis, on (value, index) pairs: the candidate replaces the accumulator when its
//              value is strictly better, or, with `last`, when it ties (ties keep the first index otherwise);
//              float NaN (numpy): a NaN is better than every number and ties with another NaN, so the result is
//              the first NaN (the last one with `last`) for max AND min;
//   - init:    none: the group's first element (extent 0 is an error, rule "nonempty-reduction");
//   - post:    none: `out` (int64, keep-dims or reduced rank) receives the index along the axis.
// Order (seed A1): the input is walked in row-major order, as run_reduce walks it, so "first" and "last" are the
// index order along the axis. The loop is the plain scalar reference (selection does no arithmetic; opt.simd is
// accepted and has no effect). ReduceStats reports the same data movement as run_reduce over {axis}.
template <expr::BinOp Combine, expr::Expr Pre>
Result<ReduceStats> run_arg_reduce(const Pre& pre, const Tensor& in, int axis, bool last, Tensor& out,
                                   const ReduceOptions& opt = {}, const std::string& what = "arg_reduce") {
    static_assert(Combine == expr::BinOp::min || Combine == expr::BinOp::max, "an arg-reduction combines with min or max");
    using V = typename Pre::type;
    static_assert(std::is_same_v<V, std::int32_t> || std::is_same_v<V, float>,
                  "pre must produce the comparison lane (int32 or float): wrap it in widen()");
    static_assert(Pre::arity == 1, "pre reads exactly one input: In<0, InT>");
    (void)opt;
    const int rank = in.rank();
    if (axis < 0 || axis >= rank)
        return make_error(what, "axis " + std::to_string(axis), "axes-sorted-unique-in-range",
                          "the axis must be in [0, " + std::to_string(rank) + ")");
    if (out.dtype != DType::i64)
        return make_error(what, "output", "output-dtype", "an arg-reduction writes int64 indices");
    const std::int64_t extent = in.shape()[axis];
    const Shape keep = reduced_shape_keepdims(in.shape(), Dims{axis});
    if (extent == 0 && element_count(keep) > 0)
        return make_error(what, "axis " + std::to_string(axis), "nonempty-reduction",
                          "the axis has extent 0: there is no element to select");

    // `out` in kept-dims coordinates (a removed axis becomes a unit axis of stride 0, as in run_reduce).
    Layout out_keep = out.layout;
    if (out.rank() == rank - 1) {
        Layout l{keep, Dims::filled(rank, 0), out.layout.offset, out.layout.elem_size};
        for (int k = 0, j = 0; k < rank; ++k)
            if (k != axis) l.shape[k] = out.shape()[j], l.strides[k] = out.layout.strides[j++];
        out_keep = l;
    }
    if (!(out_keep.shape == keep))
        return make_error(what, "output", "output-shape",
                          "output shape " + out.shape().str() + " does not match the reduction of " + in.shape().str());

    ReduceStats stats;
    stats.outputs = element_count(keep);
    stats.reads_per_output = extent;
    stats.reduced_strides.push_back(in.layout.strides[axis]);
    stats.inner_axis_reduced = axis == rank - 1;

    // Accumulators in kept-dims order; acc_at maps an input coordinate to its accumulator (stride 0 along axis).
    std::vector<V> best(static_cast<std::size_t>(stats.outputs));
    std::vector<std::int64_t> where(static_cast<std::size_t>(stats.outputs), -1);
    Layout acc_at = Layout::contiguous(keep, 1);
    acc_at.shape = in.shape();
    acc_at.strides[axis] = 0;

    auto nan = [](V v) {
        if constexpr (std::is_same_v<V, float>) return v != v;
        else return (void)v, false;
    };
    auto better = [&](V y, V x) {  // y strictly better than x
        if (nan(y) || nan(x)) return nan(y) && !nan(x);
        if constexpr (Combine == expr::BinOp::max) return y > x;
        else return y < x;
    };
    auto ties = [&](V y, V x) { return nan(y) ? nan(x) : (!nan(x) && y == x); };
    const DType in_dt = in.dtype;
    auto value = [&](const std::byte* p) { return detail::eval_pre_at(pre, in_dt, p); };
    const std::int64_t in_inner = rank > 0 ? in.layout.strides[rank - 1] : 0;
    Dims pos;
    for_each_row(in.shape(), [&](const Dims& idx, std::int64_t n) {
        const std::byte* ip = in.data() + in.layout.address(idx);
        pos = idx;
        for (std::int64_t j = 0; j < n; ++j) {
            if (rank > 0) pos[rank - 1] = j;
            const auto a = static_cast<std::size_t>(acc_at.address(pos));
            const std::int64_t i = pos[axis];
            const V v = value(ip + j * in_inner);
            if (where[a] < 0 || better(v, best[a]) || (last && ties(v, best[a]))) best[a] = v, where[a] = i;
        }
    });

    std::size_t k = 0;
    for_each_index(keep, [&](const Dims& o) {
        const std::int64_t v = where[k++];
        std::memcpy(out.data() + out_keep.address(o), &v, sizeof v);
    });
    return stats;
}

}  // namespace janus::ops
