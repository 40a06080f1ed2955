// Fuzz target: differential verification of the data-movement lowerings (issue 5), the sibling of
// fuzz/emit_diff.cpp (split so that the two compile in parallel). The first byte picks the family, the rest of the
// input is that family's; each emits the kernel with emit/, runs it on the simulator and compares with the host
// kernel of the same op (ops::call).
//
//   byte 0 % 3 == 0  pools (emit/pool.hpp): byte 1 MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool; bytes 2..8
//                    C (1..40), H, W (1..14), kh, kw (1..4), sh, sw (1..3); byte 9 flags (dilations 1..2 of MaxPool,
//                    ceil_mode, count_include_pad, output quantization = input's, pitch + 16); bytes 10..13 pads
//                    (below the dilated kernel); bytes 14..16 input zero point, output scale ratio and zero point;
//                    byte 17 the global pools' max_tile (0..7); the rest seeds the data.
//   byte 0 % 3 == 1  reductions (emit/reduce.hpp): byte 1 ReduceSum, Mean, Max, Min; byte 2 rank (2..4); bytes 3..6
//                    extents (outer 1..6, innermost 1..40); bytes 7..8 axes and negative-axes masks; byte 9 flags
//                    (keepdims, noop_with_empty_axes, pitch + 16, per-axis input along the innermost axis or axis 0,
//                    output quantization = input's); bytes 10..11 tile and chunk caps (rows); 12..14 zero points, scale
//                    ratio; the rest seeds the data.
//   byte 0 % 3 == 2  data movement (emit/movement.hpp, emit/resize.hpp): byte 1 Slice, Transpose, Pad, Concat,
//                    Expand, Reshape, nearest Resize; byte 2 rank (2..4); bytes 3..6 extents (outer 1..5, innermost
//                    16 / 32 / 48 or 1..40); byte 7 flags (x, y pitch + 16, output quantization = input's); bytes 8..10
//                    zero point, scale ratio, output zero point; bytes 11..22 the op's parameters (run_movement);
//                    the rest seeds the data.
// Properties (fuzz/emit_fuzz.hpp): whenever the host kernel accepts the problem, the lowering succeeds or refuses by
// a rule its header documents for problems the host runs (lower-pool-count, -range, -budget; lower-reduce-axes,
// -inner-minmax, -budget, -per-axis; lower-<op>-inner, -per-axis, -budget, -layout for an in-place Reshape;
// lower-resize-mode), naming its input and leaving the builder unchanged; a run ends at HALT with no fault and no
// race, and the output equals the host's bytes. -DJANUS_FUZZ_TRACE prints each lowering's answer.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <janus/emit/movement.hpp>
#include <janus/emit/pool.hpp>
#include <janus/emit/reduce.hpp>
#include <janus/emit/resize.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "emit_fuzz.hpp"

namespace {
using namespace emit_fuzz;
using namespace janus;

/// A row-major int8 tensor as rows of its innermost axis, `pitch` bytes apart from `offset` of DRAM `region` (the
/// layout of emit::DramArray and emit::DramRows; rank 0 is one row of one element).
struct Rows {
    int region = 2;
    std::int64_t offset = 0;
    std::vector<std::int64_t> shape;
    std::int64_t pitch = 16;
    std::int64_t inner() const { return shape.empty() ? 1 : shape.back(); }
    std::int64_t end() const {
        std::int64_t rows = 1;
        for (std::size_t k = 0; k + 1 < shape.size(); ++k) rows *= shape[k];
        return offset + rows * pitch;
    }
    std::size_t at(std::size_t e) const {
        const auto i = static_cast<std::int64_t>(e);
        return static_cast<std::size_t>(offset + i / inner() * pitch + i % inner());
    }
    Shape dims() const {
        Shape s;
        for (auto d : shape) s.push_back(d);
        return s;
    }
    emit::DramArray array(std::optional<numeric::QuantParams> q) const {
        return {region, static_cast<std::uint32_t>(offset), shape, pitch, std::move(q)};
    }
};

/// Put each input at its rows (padding 0x44, fresh output bytes 0xee), run `lower`, compare y's elements with `want`.
template <class Lower>
void verify_rows(const std::vector<std::pair<Rows, std::vector<std::int8_t>>>& ins, const Rows& y,
                 const std::vector<std::int8_t>& want, Lower&& lower, const Rules& allowed) {
    emit::Builder b("fuzz");
    if (!lowered(b, lower, allowed)) return;
    vnpu::sim::Machine m;
    for (const auto& [x, v] : ins) {
        auto& d = m.dram[static_cast<std::size_t>(x.region)];
        d.resize(std::max(d.size(), static_cast<std::size_t>(x.end())), 0x44);
        for (std::size_t e = 0; e < v.size(); ++e) d[x.at(e)] = static_cast<std::uint8_t>(v[e]);
    }
    auto& out = m.dram[static_cast<std::size_t>(y.region)];
    out.resize(std::max(out.size(), static_cast<std::size_t>(y.end())), 0xee);
    run_program(b, m);
    for (std::size_t e = 0; e < want.size(); ++e)
        check(static_cast<std::int8_t>(out[y.at(e)]) == want[e], "bit-exact against the host kernel");
}

template <class Op, class Lower>
void pool_case(const typename Op::Attrs& a, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t Cp,
               const numeric::QuantParams& qi, const numeric::QuantParams& qo, const std::vector<std::int8_t>& img,
               Lower&& lower, const Rules& allowed) {
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, img, qi);
    const ops::TensorType tin = ops::type_of(tx);
    const auto inferred = Op::infer(std::span<const ops::TensorType>(&tin, 1), a);
    if (!inferred.ok()) return;
    const ops::TensorType out{DType::i8, inferred->shape, qo};
    const auto host = ops::call<Op>({tx}, a, out);
    if (!host.ok()) return;  // a problem the host refuses is not the lowering's
    const auto plan = Op::plan(std::span(&tin, 1), a, out, janus::numeric::default_rounding_mode);
    check(plan.ok(), "plan");
    const emit::DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, out.shape[2], out.shape[3], C, Cp};
    verify_image(
        img, X, Y, host->template to_vector<std::int8_t>(), [&](emit::Builder& b) { return lower(b, *plan, X, Y); }, 0,
        allowed);
}

int run_pool(const std::uint8_t* data, std::size_t size) {
    const Input in{data, size};
    const int kind = in.at(0) % 4;
    const std::int64_t C = in.at(1) % 40 + 1, H = in.at(2) % 14 + 1, W = in.at(3) % 14 + 1, kh = in.at(4) % 4 + 1,
                       kw = in.at(5) % 4 + 1, sh = in.at(6) % 3 + 1, sw = in.at(7) % 3 + 1;
    const std::uint8_t f = in.at(8);  // bits: dh, dw (MaxPool), ceil_mode, count_include_pad, same quant, wide pitch
    const std::int64_t dh = kind == 0 ? (f & 1) + 1 : 1, dw = kind == 0 ? (f >> 1 & 1) + 1 : 1;
    const std::int64_t eh = dh * (kh - 1) + 1, ew = dw * (kw - 1) + 1;
    const std::vector<std::int64_t> pads = {in.at(9) % eh, in.at(10) % ew, in.at(11) % eh, in.at(12) % ew};
    const auto qi = quant(0.05f, in.at(13)), q2 = quant(0.05f * ratio(in.at(14)), in.at(15));
    if (!qi || !q2) return 0;
    const auto& qo = f >> 4 & 1 ? *qi : *q2;
    const std::int64_t Cp = round16(C) + 16 * (f >> 5 & 1), tile = in.at(16) % 8;
    const auto img = Stream(in, 17).bytes(C * H * W);
    const Rules budget{"lower-pool-budget"}, average{"lower-pool-count", "lower-pool-range", "lower-pool-budget"};
    const auto window = [&](auto a) {
        a.kernel_shape = {kh, kw}, a.strides = {sh, sw}, a.pads = pads, a.ceil_mode = f >> 2 & 1;
        return a;
    };
    if (kind == 0) {
        auto a = window(ops::MaxPoolAttrs{});
        a.dilations = {dh, dw};
        pool_case<ops::MaxPool>(a, C, H, W, Cp, *qi, qo, img, emit::lower_max_pool, budget);
    } else if (kind == 1) {
        auto a = window(ops::AveragePoolAttrs{});
        a.count_include_pad = f >> 3 & 1;
        pool_case<ops::AveragePool>(a, C, H, W, Cp, *qi, qo, img, emit::lower_average_pool, average);
    } else if (kind == 2) {
        pool_case<ops::GlobalMaxPool>(
            {}, C, H, W, Cp, *qi, qo, img,
            [&](emit::Builder& b, const ops::PoolPlan& p, const emit::DramImage& x, const emit::DramImage& y) {
                return emit::lower_global_max_pool(b, p, x, y, tile);
            },
            budget);
    } else {
        pool_case<ops::GlobalAveragePool>(
            {}, C, H, W, Cp, *qi, qo, img,
            [&](emit::Builder& b, const ops::PoolPlan& p, const emit::DramImage& x, const emit::DramImage& y) {
                return emit::lower_global_average_pool(b, p, x, y, tile);
            },
            average);
    }
    return 0;
}

template <class Op, class Lower>
void reduce_case(const Input& in, Lower&& lower) {
    const int rank = in.at(1) % 3 + 2;
    std::vector<std::int64_t> s;
    for (int k = 0; k < rank; ++k) s.push_back(k + 1 < rank ? in.at(2 + k) % 6 + 1 : in.at(2 + k) % 40 + 1);
    const std::uint8_t mask = in.at(6), neg = in.at(7), f = in.at(8);
    ops::ReduceAttrs a;
    for (int k = 0; k < rank; ++k)
        if (mask >> k & 1) a.axes.push_back(neg >> k & 1 ? k - rank : k);
    a.keepdims = f & 1, a.noop_with_empty_axes = f >> 1 & 1;
    const std::int64_t extra = 16 * (f >> 2 & 1);

    auto qi = quant(0.05f, in.at(11));
    const auto q2 = quant(0.05f * ratio(in.at(13)), in.at(12));
    if (!qi || !q2) return;
    const Rows X{2, 0, s, round16(s.back()) + extra};
    const emit::ReduceTiles tiles{in.at(9) % 8, X.pitch * (in.at(10) % 4)};  // chunks of 1..3 rows (0: free)
    if (const int axis = f >> 3 & 3; axis >= 2) {  // per-axis input: along the innermost axis or axis 0
        const auto n = static_cast<std::size_t>(s[axis == 2 ? s.size() - 1 : 0]);
        std::vector<float> sc(n);
        std::vector<std::int32_t> zp(n);
        for (std::size_t c = 0; c < n; ++c)
            sc[c] = 0.05f * (1.0f + static_cast<float>(c % 4) / 4), zp[c] = qi->zero_point() + static_cast<int>(c % 3);
        auto q = numeric::make_quant_per_axis(DType::i8, sc, zp, axis == 2 ? rank - 1 : 0, X.dims());
        if (!q.ok()) return;
        qi = *q;
    }
    const Tensor tx = Tensor::from<std::int8_t>(X.dims(), Stream(in, 14).bytes(element_count(X.dims())), *qi);
    const ops::TensorType tin = ops::type_of(tx);
    const auto inferred = Op::infer(std::span<const ops::TensorType>(&tin, 1), a);
    if (!inferred.ok()) return;
    const ops::TensorType out{DType::i8, inferred->shape, f >> 5 & 1 ? (inferred->quant ? inferred->quant : qi) : q2};
    const auto host = ops::call<Op>({tx}, a, out);
    if (!host.ok()) return;
    const auto plan = Op::plan(std::span(&tin, 1), a, out, janus::numeric::default_rounding_mode);
    check(plan.ok(), "plan");
    Rows Y{3, 0, {out.shape.span().begin(), out.shape.span().end()}, 16};
    const bool inner_kept = std::find(plan->axes.begin(), plan->axes.end(), rank - 1) == plan->axes.end();
    Y.pitch = inner_kept ? X.pitch : round16(Y.inner()) + extra;
    verify_rows({{X, tx.to_vector<std::int8_t>()}}, Y, host->template to_vector<std::int8_t>(),
                [&](emit::Builder& b) {
                    return lower(b, *plan, emit::DramRows{2, 0, X.dims(), X.pitch},
                                 emit::DramRows{3, 0, Y.dims(), Y.pitch}, tiles);
                },
                {"lower-reduce-axes", "lower-reduce-inner-minmax", "lower-reduce-budget", "lower-reduce-per-axis"});
}

int run_reduce(const std::uint8_t* data, std::size_t size) {
    const Input in{data, size};
    switch (in.at(0) % 4) {
        case 0:
            reduce_case<ops::ReduceSum>(in, emit::lower_reduce_sum);
            break;
        case 1:
            reduce_case<ops::ReduceMean>(in, emit::lower_reduce_mean);
            break;
        case 2:
            reduce_case<ops::ReduceMax>(in, emit::lower_reduce_max);
            break;
        default:
            reduce_case<ops::ReduceMin>(in, emit::lower_reduce_min);
            break;
    }
    return 0;
}

/// One data-movement op on the tensors `ts` stored at `xs`: the host's ops::call<Op> with the output quantization
/// `qy` (the inferred one when empty), then `lower(b, a, x descriptors, y descriptor)`. `in_place`: y at x[0]'s place.
template <class Op, class Lower>
void move_case(const typename Op::Attrs& a, const std::vector<Tensor>& ts, const std::vector<Rows>& xs,
               std::int64_t extra, const std::optional<numeric::QuantParams>& qy, const std::string& op, bool in_place,
               Lower&& lower) {
    std::vector<ops::TensorType> types;
    for (const auto& t : ts) types.push_back(ops::type_of(t));
    const auto inferred = Op::infer(std::span<const ops::TensorType>(types), a);
    if (!inferred.ok()) return;
    const ops::TensorType out{DType::i8, inferred->shape, qy ? qy : inferred->quant};
    const auto host = ops::call<Op>(std::span<const Tensor>(ts), a, out);
    if (!host.ok()) return;
    Rows y{3, 0, {out.shape.span().begin(), out.shape.span().end()}, 16};
    y.pitch = round16(y.inner()) + extra;
    if (in_place) y.region = xs[0].region, y.offset = xs[0].offset;
    std::vector<std::pair<Rows, std::vector<std::int8_t>>> ins;
    std::vector<emit::DramArray> arrays;
    for (std::size_t k = 0; k < ts.size(); ++k) {
        ins.emplace_back(xs[k], ts[k].to_vector<std::int8_t>());
        arrays.push_back(xs[k].array(types[k].quant));
    }
    Rules allowed{"lower-" + op + "-inner", "lower-" + op + "-per-axis", "lower-" + op + "-budget"};
    if (in_place) allowed.push_back("lower-" + op + "-layout");  // different rows at the same place overlap
    verify_rows(
        ins, y, host->template to_vector<std::int8_t>(),
        [&](emit::Builder& b) { return lower(b, a, arrays, y.array(out.quant)); }, allowed);
}

/// An innermost extent: a multiple of 16 (16, 32, 48) for odd bytes, else 1..40.
std::int64_t inner_extent(std::uint8_t b) { return b & 1 ? 16 * ((b >> 1) % 3 + 1) : (b >> 1) % 40 + 1; }

int run_resize(const Input& in, std::int64_t C, std::int64_t Cpx, std::int64_t extra,
               const std::optional<numeric::QuantParams>& qx, const std::optional<numeric::QuantParams>& qy,
               std::size_t p) {
    static const char* const coords[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};
    static const char* const modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const float scales[] = {0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 0.75f, 2.5f, 1.25f};
    const std::int64_t H = in.at(p) % 6 + 1, W = in.at(p + 1) % 6 + 1;
    ops::Resize::Attrs a;
    if (in.at(p + 2) & 1)
        a.sizes = {1, C, in.at(p + 3) % 12 + 1, in.at(p + 4) % 12 + 1};
    else
        a.scales = {1, 1, scales[in.at(p + 3) % 8], scales[in.at(p + 4) % 8]};
    a.coordinate_transformation_mode = coords[in.at(p + 5) % 6];
    a.nearest_mode = modes[in.at(p + 6) % 4];
    if (in.at(p + 7) % 8 == 7) a.mode = "linear";  // refused by the lowering: lower-resize-mode
    const auto img = Stream(in, p + 8).bytes(C * H * W);
    const Tensor tx = Tensor::from<std::int8_t>(Shape{1, C, H, W}, img, qx);
    const ops::TensorType tin = ops::type_of(tx);
    const auto inferred = ops::Resize::infer(std::span<const ops::TensorType>(&tin, 1), a);
    if (!inferred.ok()) return 0;
    const ops::TensorType out{DType::i8, inferred->shape, qy ? qy : inferred->quant};
    const auto host = ops::call<ops::Resize>({tx}, a, out);
    if (!host.ok()) return 0;
    const std::int64_t Ho = out.shape[2], Wo = out.shape[3], Cpy = round16(C) + extra;
    const emit::DramImage X{2, 0, H, W, C, Cpx}, Y{3, 0, Ho, Wo, C, Cpy};
    verify_image(img, X, Y, host->to_vector<std::int8_t>(),
                 [&](emit::Builder& b) {
                     return emit::lower_resize(b, a, emit::DramArray{2, 0, {1, H, W, C}, Cpx, qx},
                                               emit::DramArray{3, 0, {1, Ho, Wo, C}, Cpy, out.quant}, janus::numeric::default_rounding_mode);
                 },
                 0, {"lower-resize-mode", "lower-resize-per-axis", "lower-resize-budget"});
    return 0;
}

int run_movement(const std::uint8_t* data, std::size_t size) {
    const Input in{data, size};
    const int op = in.at(0) % 7, rank = in.at(1) % 3 + 2;
    std::vector<std::int64_t> s;
    for (int k = 0; k < rank; ++k) s.push_back(k + 1 < rank ? in.at(2 + k) % 5 + 1 : inner_extent(in.at(2 + k)));
    const std::uint8_t f = in.at(6);  // bits: x pitch + 16, y pitch + 16, output quantization = input's
    const auto qx = quant(0.05f, in.at(7)), q2 = quant(0.05f * ratio(in.at(8)), in.at(9));
    if (!qx || !q2) return 0;
    const std::optional<numeric::QuantParams> qy = f >> 2 & 1 ? std::nullopt : q2;
    const std::int64_t xe = 16 * (f & 1), ye = 16 * (f >> 1 & 1);
    const auto p = [&](std::size_t k) { return in.at(10 + k); };  // the op's bytes 10..21; the data from 22
    if (op == 6) return run_resize(in, s.back(), round16(s.back()) + xe, ye, qx, qy, 10);
    Stream st(in, 22);
    const auto tensor = [&](const std::vector<std::int64_t>& shape, const std::optional<numeric::QuantParams>& q) {
        Shape d;
        for (auto e : shape) d.push_back(e);
        return Tensor::from<std::int8_t>(d, st.bytes(element_count(d)), q);
    };
    const Rows x{2, 0, s, round16(s.back()) + xe};
    switch (op) {
        case 0: {  // Slice: per axis, bytes 2k (taken unless % 3 == 0, step, negative axis, open end), 2k + 1
            ops::Slice::Attrs a;
            for (int k = 0; k < rank; ++k) {
                const std::uint8_t A = p(2 * k), B = p(2 * k + 1);
                if (A % 3 == 0) continue;
                const std::int64_t n = s[static_cast<std::size_t>(k)], step = std::array{1, 2, 3, -1, -2, 1}[A / 4 % 6];
                a.axes.push_back(A & 32 ? k - rank : k);
                a.steps.push_back(step);
                a.starts.push_back(k + 1 == rank ? 16 * ((B & 15) % 3) : (B & 15) % (2 * n + 1) - n);
                a.ends.push_back(A & 64 ? (step > 0 ? ops::Slice::i64_max : ops::Slice::i64_min)
                                        : (B >> 4) % (2 * n + 1) - n);
            }
            move_case<ops::Slice>(a, {tensor(s, qx)}, {x}, ye, qy, "slice", false,
                                  [](emit::Builder& b, const auto& at, const auto& xs, const auto& y) {
                                      return emit::lower_slice(b, at, xs[0], y, janus::numeric::default_rounding_mode);
                                  });
            break;
        }
        case 1: {  // Transpose: byte 0 odd keeps the innermost axis; bytes 1..2 pick the permutation
            const int m = p(0) & 1 ? rank - 1 : rank;
            std::vector<std::int64_t> left;
            for (int k = 0; k < m; ++k) left.push_back(k);
            ops::Transpose::Attrs a;
            for (unsigned v = p(1) | p(2) << 8; !left.empty();) {
                const auto j = v % left.size();
                v /= static_cast<unsigned>(left.size());
                a.perm.push_back(left[j]);
                left.erase(left.begin() + static_cast<std::ptrdiff_t>(j));
            }
            if (m < rank) a.perm.push_back(rank - 1);
            move_case<ops::Transpose>(a, {tensor(s, qx)}, {x}, ye, qy, "transpose", false,
                                      [](emit::Builder& b, const auto& at, const auto& xs, const auto& y) {
                                          return emit::lower_transpose(b, at, xs[0], y, janus::numeric::default_rounding_mode);
                                      });
            break;
        }
        case 2: {  // Pad: bytes 0..7 begins then ends (outer -2..3; innermost 0, 16, 32, -16 or 3), mode, value
            ops::Pad::Attrs a;
            a.pads.resize(static_cast<std::size_t>(2 * rank));
            for (int k = 0; k < 2 * rank; ++k)
                a.pads[static_cast<std::size_t>(k)] =
                    k % rank + 1 == rank ? std::array{0, 16, 32, -16, 3}[p(k) % 5] : p(k) % 6 - 2;
            a.mode = std::array{"constant", "constant", "edge", "reflect"}[p(8) % 4];
            a.value = static_cast<float>(static_cast<std::int8_t>(p(9))) / 32;
            move_case<ops::Pad>(a, {tensor(s, qx)}, {x}, ye, qy, "pad", false,
                                [](emit::Builder& b, const auto& at, const auto& xs, const auto& y) {
                                    return emit::lower_pad(b, at, xs[0], y, janus::numeric::default_rounding_mode);
                                });
            break;
        }
        case 3: {  // Concat: byte 0 inputs (2, 3) and their quantizations; 1 the axis; 2..4 their extents along it
            const int n = p(0) % 2 + 2, axis = p(1) % rank;
            ops::Concat::Attrs a;
            a.axis = p(1) & 128 ? axis - rank : axis;
            std::vector<Tensor> ts;
            std::vector<Rows> xs;
            std::int64_t off = 0;
            for (int k = 0; k < n; ++k) {
                auto shape = s;
                shape[static_cast<std::size_t>(axis)] = axis + 1 == rank ? inner_extent(p(2 + k)) : p(2 + k) % 4;
                const auto q = p(0) & 2 ? quant(0.05f + 0.02f * static_cast<float>(k), in.at(7)) : qx;
                ts.push_back(tensor(shape, q));
                xs.push_back(Rows{2, off, shape, round16(shape.back()) + (k == 1 ? xe : 0)});
                off = xs.back().end() + 16 * k;
            }
            move_case<ops::Concat>(a, ts, xs, ye, qy, "concat", false,
                                   [](emit::Builder& b, const auto& at, const auto& arrays, const auto& y) {
                                       return emit::lower_concat(b, at, arrays, y, janus::numeric::default_rounding_mode);
                                   });
            break;
        }
        case 4: {  // Expand: byte 0 the axes of x set to 1, 1..2 a leading axis, 3 which unit axes broadcast, 4.. to what
            auto xs = s;
            for (int k = 0; k < rank; ++k)
                if (p(0) >> k & 1) xs[static_cast<std::size_t>(k)] = 1;
            ops::Expand::Attrs a;
            if (p(1) & 1) a.shape.push_back(p(2) % 3 + 1);
            for (int k = 0; k < rank; ++k) {
                const auto e = xs[static_cast<std::size_t>(k)];
                a.shape.push_back(e == 1 && p(3) >> k & 1 ? p(4 + k) % 4 + 1 : (p(3) >> 4 & 1 ? e : 1));
            }
            const Rows xr{2, 0, xs, round16(xs.back()) + xe};
            move_case<ops::Expand>(a, {tensor(xs, qx)}, {xr}, ye, qy, "expand", false,
                                   [](emit::Builder& b, const auto& at, const auto& arrays, const auto& y) {
                                       return emit::lower_expand(b, at, arrays[0], y, janus::numeric::default_rounding_mode);
                                   });
            break;
        }
        default: {  // Reshape: byte 0 the target (flatten, merge the two outer axes, split the innermost, {0, -1})
            ops::Reshape::Attrs a;
            const auto last = s.back();
            switch (p(0) % 4) {
                case 0:
                    a.shape = {-1};
                    break;
                case 1:
                    a.shape = s;
                    a.shape.erase(a.shape.begin());
                    a.shape[0] *= s[0];
                    break;
                case 2:
                    a.shape = s;
                    a.shape.back() = last % 16 == 0 ? last / 16 : last;
                    a.shape.push_back(last % 16 == 0 ? 16 : 1);
                    break;
                default:
                    a.shape = {0, -1};
                    break;
            }
            move_case<ops::Reshape>(a, {tensor(s, qx)}, {x}, ye, qy, "reshape", p(1) & 1,
                                    [](emit::Builder& b, const auto& at, const auto& arrays, const auto& y) {
                                        return emit::lower_reshape(b, at, arrays[0], y, janus::numeric::default_rounding_mode);
                                    });
            break;
        }
    }
    return 0;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    switch (data[0] % 3) {
        case 0:
            return run_pool(data + 1, size - 1);
        case 1:
            return run_reduce(data + 1, size - 1);
        default:
            return run_movement(data + 1, size - 1);
    }
}
