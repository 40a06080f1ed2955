// Fuzz target: differential verification of the NPU lowerings (issue 5). The first byte picks the family, the rest
// of the input is that family's; each emits the kernel with emit/, runs it on the simulator and compares with the
// host kernel of the same op (ops::call). One target for all families keeps the build and the CI run short.
//
//   byte 0 % 8 == 0  elementwise (emit/elementwise.hpp): byte 1 op (0..4 binary Add Sub Mul Min Max, 5.. unary Relu
//                    Sigmoid Tanh Abs Neg HardSwish Gelu), bytes 2..3 element count (1..4096), bytes 4..9 three
//                    (scale, zero point) pairs, byte 10 tile (16 B steps; 0 = free LMEM), the rest seeds the data.
//   byte 0 % 8 == 1  matmul (emit/matmul.hpp): bytes 1..3 M (1..64), K (1..320), N (1..200); byte 4 A's zero point;
//                    byte 5 per-column weight scales if odd; bytes 6..7 the A and output scale exponents; bytes 8..9 M
//                    and N tile caps (0 = none); the rest seeds the data.
//   byte 0 % 8 == 2  depthwise (emit/depthwise.hpp): bytes 1..5 C (1..48), H (1..12), W (1..20), kh, kw (1..5);
//                    bytes 6..9 pads (below the kernel extent); byte 10 the input zero point; byte 11 bias if odd;
//                    byte 12 the output scale exponent; the rest seeds the data.
//   byte 0 % 8 == 3  conv (emit/conv.hpp lower_conv): bytes 1..10 C (1..40), H (1..10), W (1..12), Co (1..40), kh, kw
//                    (1..4), sh, sw (1..3), dh, dw (1..2); byte 11 picks the groups among C's divisors (Co rounded up to
//                    a multiple); bytes 12..15 pads (below the dilated kernel extent); byte 16 the input zero point;
//                    byte 17 bias if odd; byte 18 the output scale exponent; the rest seeds the data.
//   byte 0 % 8 == 4  ConvTranspose (lower_conv_transpose), the same bytes (W is [C, Co / G, kh, kw]).
//   byte 0 % 8 == 5  pools (emit/pool.hpp): byte 1 MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool; bytes 2..8
//                    C (1..40), H, W (1..14), kh, kw (1..4), sh, sw (1..3); byte 9 flags (dilations 1..2 of MaxPool,
//                    ceil_mode, count_include_pad, output quantization = input's, pitch + 16); bytes 10..13 pads
//                    (below the dilated kernel); bytes 14..16 input zero point, output scale ratio and zero point;
//                    byte 17 the global pools' max_tile (0..7); the rest seeds the data.
//   byte 0 % 8 == 6  reductions (emit/reduce.hpp): byte 1 ReduceSum, Mean, Max, Min; byte 2 rank (2..4); bytes 3..6
//                    extents (outer 1..6, innermost 1..40); bytes 7..8 axes and negative-axes masks; byte 9 flags
//                    (keepdims, noop_with_empty_axes, pitch + 16, per-axis input along the innermost axis or axis 0,
//                    output quantization = input's); bytes 10..11 tile and chunk caps (rows); 12..14 zero points, scale
//                    ratio; the rest seeds the data.
//   byte 0 % 8 == 7  data movement (emit/movement.hpp, emit/resize.hpp): byte 1 Slice, Transpose, Pad, Concat,
//                    Expand, Reshape, nearest Resize; byte 2 rank (2..4); bytes 3..6 extents (outer 1..5, innermost
//                    16 / 32 / 48 or 1..40); byte 7 flags (x, y pitch + 16, output quantization = input's); bytes 8..10
//                    zero point, scale ratio, output zero point; bytes 11..22 the op's parameters (run_movement);
//                    the rest seeds the data.
// Properties (a __builtin_trap() when broken): whenever the host kernel accepts the problem, the lowering succeeds,
// the simulated run ends at HALT with no fault and no race, and the output equals the host's bytes. Families 5..7
// may instead refuse by a rule their header documents for problems the host runs (lower-pool-count, -range,
// -budget; lower-reduce-axes, -inner-minmax, -budget, -per-axis; lower-<op>-inner, -per-axis, -budget, -layout for
// an in-place Reshape; lower-resize-mode): the refusal names its input and leaves the builder unchanged.
// -DJANUS_FUZZ_TRACE prints each lowering's answer ("lowered" or the refusal), to see which paths inputs reach.
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

#include <janus/emit/conv.hpp>
#include <janus/emit/depthwise.hpp>
#include <janus/emit/elementwise.hpp>
#include <janus/emit/matmul.hpp>
#include <janus/emit/movement.hpp>
#include <janus/emit/pool.hpp>
#include <janus/emit/reduce.hpp>
#include <janus/emit/resize.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

namespace {
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "emit_diff: property broken: %s\n", what);
        __builtin_trap();
    }
}
using namespace janus;

struct Input {
    const std::uint8_t* data;
    std::size_t size;
    std::uint8_t at(std::size_t i) const { return i < size ? data[i] : 0; }
};

using Rules = std::vector<std::string>;

/// Run `lower(b)` on the fresh builder `b`: true when it succeeds. A refusal must name one of `allowed` (rules the
/// lowering's header documents for problems the host runs), with an input and a sentence, and leave `b` unchanged.
template <class Lower>
bool lowered(emit::Builder& b, Lower&& lower, const Rules& allowed) {
    const Status st = lower(b);
#ifdef JANUS_FUZZ_TRACE  // which problems reach the lowering, and how it answers
    std::fprintf(stderr, "emit_diff: %s\n", st.ok() ? "lowered" : st.error().message().c_str());
#endif
    if (st.ok()) return true;
    const Error& e = st.error();
    const bool documented = std::find(allowed.begin(), allowed.end(), e.rule) != allowed.end();
    if (!documented) std::fprintf(stderr, "emit_diff: refused: %s\n", e.message().c_str());
    check(documented, "the lowering accepts what the host kernel accepts, or refuses by a documented rule");
    check(!e.input.empty() && !e.detail.empty(), "a refusal names its input and says why");
    check(b.size() == 0 && b.weights().empty() && b.holders().empty() && b.status().ok(),
          "a refusal leaves the builder unchanged");
    return false;
}

/// Finish `b` and run it on `m` (region 0: its constants): it must end at HALT with no fault and no race.
void run_program(emit::Builder& b, vnpu::sim::Machine& m) {
    auto p = b.finish();
    check(p.ok(), "finish");
    m.dram[0] = p->weights;
    const auto r = vnpu::sim::run(p->code, m);
    check(!r.fault, "no fault");
    check(r.races.empty(), "no race");
}

std::int64_t round16(std::int64_t n) { return (std::max<std::int64_t>(n, 1) + 15) / 16 * 16; }

/// Emit with `lower`, run, and compare with `want`.
template <class Lower>
void verify(std::int64_t n, const std::vector<std::vector<std::int8_t>>& ins, const std::vector<std::int8_t>& want,
            Lower&& lower) {
    const std::int64_t padded = (n + 15) / 16 * 16;
    vnpu::sim::Machine m;
    m.dram[2].resize(static_cast<std::size_t>(padded) * ins.size());
    for (std::size_t k = 0; k < ins.size(); ++k)
        std::memcpy(m.dram[2].data() + k * static_cast<std::size_t>(padded), ins[k].data(), ins[k].size());
    m.dram[3].resize(static_cast<std::size_t>(padded));
    emit::Builder b("fuzz");
    lowered(b, [&](emit::Builder& bb) { return lower(bb, static_cast<std::uint32_t>(padded)); }, {});
    run_program(b, m);
    check(std::memcmp(m.dram[3].data(), want.data(), want.size()) == 0, "bit-exact against the host kernel");
}

/// Run `lower` on a machine holding the NCHW image `img` as NHWC at x's pitch (padding channels hold 0x44), and
/// compare y (NHWC at its pitch) with the host's NCHW `want`. `scratch`: bytes of DRAM region 1. `allowed`: the
/// rules by which the lowering may refuse the problem.
template <class Lower>
void verify_image(const std::vector<std::int8_t>& img, const emit::DramImage& x, const emit::DramImage& y,
                  const std::vector<std::int8_t>& want, Lower&& lower, std::int64_t scratch = 0,
                  const Rules& allowed = {}) {
    emit::Builder b("fuzz");
    if (!lowered(b, lower, allowed)) return;
    vnpu::sim::Machine m;
    m.dram[1].assign(static_cast<std::size_t>(scratch), 0x55);
    m.dram[2].assign(static_cast<std::size_t>(x.h * x.w * x.cpitch), 0x44);
    for (std::int64_t c = 0; c < x.c; ++c)
        for (std::int64_t i = 0; i < x.h * x.w; ++i)
            m.dram[2][static_cast<std::size_t>(i * x.cpitch + c)] =
                static_cast<std::uint8_t>(img[static_cast<std::size_t>(c * x.h * x.w + i)]);
    m.dram[3].resize(static_cast<std::size_t>(y.h * y.w * y.cpitch));
    run_program(b, m);
    for (std::int64_t c = 0; c < y.c; ++c)
        for (std::int64_t i = 0; i < y.h * y.w; ++i)
            check(static_cast<std::int8_t>(m.dram[3][static_cast<std::size_t>(i * y.cpitch + c)]) ==
                      want[static_cast<std::size_t>(c * y.h * y.w + i)],
                  "bit-exact against the host kernel");
}

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

template <class Op, expr::BinOp Kind>
void binary(std::int64_t n, const numeric::QuantParams (&q)[3], std::int64_t tile, const std::vector<std::int8_t>& a,
            const std::vector<std::int8_t>& c) {
    const auto host =
        ops::call<Op>({Tensor::from<std::int8_t>(Shape{n}, a, q[0]), Tensor::from<std::int8_t>(Shape{n}, c, q[1])}, {},
                      ops::TensorType{DType::i8, Shape{n}, q[2]});
    if (!host.ok()) return;  // parameters the host refuses (a ratio no multiplier holds) are not the lowering's
    const auto plan = ops::plan_binary_quant<Kind>(q[0], q[1], q[2], "fuzz");
    check(plan.ok(), "plan");
    verify(n, {a, c}, host->template to_vector<std::int8_t>(), [&](emit::Builder& b, std::uint32_t padded) {
        return emit::lower_binary<Kind>(b, *plan, {2, 0, n}, {2, padded, n}, {3, 0, n}, {tile});
    });
}

template <class Op>
void unary(std::int64_t n, const numeric::QuantParams (&q)[3], std::int64_t tile, const std::vector<std::int8_t>& a) {
    const auto host = ops::call<Op>({Tensor::from<std::int8_t>(Shape{n}, a, q[0])}, typename Op::Attrs{},
                                    ops::TensorType{DType::i8, Shape{n}, q[2]});
    if (!host.ok()) return;
    const auto table = Op::table(q[0], q[2], typename Op::Attrs{});
    verify(n, {a}, host->template to_vector<std::int8_t>(), [&](emit::Builder& b, std::uint32_t) {
        return emit::lower_lut(b, *table, {2, 0, n}, {3, 0, n}, {tile});
    });
}
int run_elementwise(const std::uint8_t* data, std::size_t size) {
    const Input in{data, size};
    const int op = in.at(0) % 12;
    const std::int64_t n = 1 + ((in.at(1) | in.at(2) << 8) % 4096);
    numeric::QuantParams q[3];
    for (int k = 0; k < 3; ++k) {
        const float scale =
            std::ldexp(1.0f + static_cast<float>(in.at(3 + 2 * k) & 15) / 16.0f, (in.at(3 + 2 * k) >> 4) - 10);
        auto p = numeric::make_quant(DType::i8, scale, static_cast<std::int8_t>(in.at(4 + 2 * k)));
        if (!p.ok()) return 0;
        q[k] = *p;
    }
    const std::int64_t tile = 16 * static_cast<std::int64_t>(in.at(9));
    std::vector<std::int8_t> a(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(n));
    std::uint32_t x = 2166136261u;
    for (std::size_t i = 10; i < size; ++i) x = (x ^ data[i]) * 16777619u;
    for (auto& v : a) v = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);
    for (auto& v : c) v = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);
    switch (op) {
        case 0:
            binary<ops::Add, expr::BinOp::add>(n, q, tile, a, c);
            break;
        case 1:
            binary<ops::Sub, expr::BinOp::sub>(n, q, tile, a, c);
            break;
        case 2:
            binary<ops::Mul, expr::BinOp::mul>(n, q, tile, a, c);
            break;
        case 3:
            binary<ops::Min, expr::BinOp::min>(n, q, tile, a, c);
            break;
        case 4:
            binary<ops::Max, expr::BinOp::max>(n, q, tile, a, c);
            break;
        case 5:
            unary<ops::Relu>(n, q, tile, a);
            break;
        case 6:
            unary<ops::Sigmoid>(n, q, tile, a);
            break;
        case 7:
            unary<ops::Tanh>(n, q, tile, a);
            break;
        case 8:
            unary<ops::Abs>(n, q, tile, a);
            break;
        case 9:
            unary<ops::Neg>(n, q, tile, a);
            break;
        case 10:
            unary<ops::HardSwish>(n, q, tile, a);
            break;
        default:
            unary<ops::Gelu>(n, q, tile, a);
            break;
    }
    return 0;
}

int run_matmul(const std::uint8_t* data, std::size_t size) {
    using namespace janus;
    const auto at = [&](std::size_t i) -> std::uint8_t { return i < size ? data[i] : 0; };
    const std::int64_t M = at(0) % 64 + 1, K = at(1) * 5 / 4 + 1, N = at(2) % 200 + 1;
    const std::int64_t Kp = (K + 15) / 16 * 16, Np = (N + 15) / 16 * 16;
    std::uint32_t x = 2166136261u;
    for (std::size_t i = 9; i < size; ++i) x = (x ^ data[i]) * 16777619u;
    const auto next = [&] { return static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24); };
    std::vector<std::int8_t> a(static_cast<std::size_t>(M * K)), w(static_cast<std::size_t>(K * N));
    for (auto& v : a) v = next();
    for (auto& v : w) v = next();
    const auto qa =
        numeric::make_quant(DType::i8, std::ldexp(1.0f, (at(5) % 12) - 10), static_cast<std::int8_t>(at(3)));
    std::vector<float> scales(static_cast<std::size_t>(N));
    for (std::size_t i = 0; i < scales.size(); ++i)
        scales[i] = std::ldexp(1.0f + static_cast<float>((i * 7 + at(4)) % 16) / 16, -6);
    const auto qb = at(4) % 2 ? numeric::make_quant_per_axis(
                                    DType::i8, scales, std::vector<std::int32_t>(scales.size(), 0), 1, Shape{K, N})
                              : numeric::make_quant(DType::i8, scales[0], 0);
    const auto qy = numeric::make_quant(DType::i8, std::ldexp(1.0f, (at(6) % 16) - 8), 0);
    if (!qa.ok() || !qb.ok() || !qy.ok()) return 0;
    const ops::TensorType types[2] = {{DType::i8, Shape{M, K}, *qa}, {DType::i8, Shape{K, N}, *qb}};
    const ops::TensorType out{DType::i8, Shape{M, N}, *qy};
    const auto host = ops::call<ops::MatMul>(
        {Tensor::from<std::int8_t>(Shape{M, K}, a, *qa), Tensor::from<std::int8_t>(Shape{K, N}, w, *qb)}, {}, out);
    if (!host.ok()) return 0;  // a problem the host refuses (no multiplier for the ratio) is not the lowering's
    const auto plan = ops::MatMul::plan(types, out);
    check(plan.ok(), "plan");
    emit::Builder b("fuzz");
    const emit::MatmulOptions opt{16 * (at(8) % 8), at(7) % 16};
    lowered(b,
            [&](emit::Builder& bb) {
                return emit::lower_matmul(bb, *plan, {2, 0, M, K, Kp}, w, K, N, {3, 0, M, N, Np}, opt);
            },
            {});
    vnpu::sim::Machine m;
    m.dram[2].assign(static_cast<std::size_t>(M * Kp), 0x77);
    for (std::int64_t r = 0; r < M; ++r)
        std::memcpy(&m.dram[2][static_cast<std::size_t>(r * Kp)], &a[static_cast<std::size_t>(r * K)],
                    static_cast<std::size_t>(K));
    m.dram[3].resize(static_cast<std::size_t>(M * Np));
    run_program(b, m);
    const auto want = host->to_vector<std::int8_t>();
    for (std::int64_t i = 0; i < M; ++i)
        check(std::memcmp(&m.dram[3][static_cast<std::size_t>(i * Np)], &want[static_cast<std::size_t>(i * N)],
                          static_cast<std::size_t>(N)) == 0,
              "bit-exact against the host kernel");
    return 0;
}

int run_depthwise(const std::uint8_t* data, std::size_t size) {
    using namespace janus;
    const auto at = [&](std::size_t i) -> std::uint8_t { return i < size ? data[i] : 0; };
    const std::int64_t C = at(0) % 48 + 1, H = at(1) % 12 + 1, W = at(2) % 20 + 1, kh = at(3) % 5 + 1,
                       kw = at(4) % 5 + 1;
    const std::array<std::int64_t, 4> pads = {at(5) % kh, at(6) % kw, at(7) % kh, at(8) % kw};
    const std::int64_t Ho = H + pads[0] + pads[2] - kh + 1, Wo = W + pads[1] + pads[3] - kw + 1;
    if (Ho < 1 || Wo < 1) return 0;
    const std::int64_t Cp = (C + 15) / 16 * 16;
    std::uint32_t x = 2166136261u;
    for (std::size_t i = 12; i < size; ++i) x = (x ^ data[i]) * 16777619u;
    const auto next = [&] { return static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24); };
    std::vector<std::int8_t> img(static_cast<std::size_t>(C * H * W)), w(static_cast<std::size_t>(C * kh * kw));
    for (auto& v : img) v = next();
    for (auto& v : w) v = next();
    std::vector<std::int32_t> bias;
    if (at(10) % 2)
        for (std::int64_t c = 0; c < C; ++c) bias.push_back(next() * 37);
    std::vector<float> sw(static_cast<std::size_t>(C));
    for (std::size_t c = 0; c < sw.size(); ++c) sw[c] = std::ldexp(1.0f + static_cast<float>(c % 8) / 8, -6);
    const auto qx = numeric::make_quant(DType::i8, 0.03f, static_cast<std::int8_t>(at(9)));
    const auto qw =
        numeric::make_quant_per_axis(DType::i8, sw, std::vector<std::int32_t>(sw.size(), 0), 0, Shape{C, 1, kh, kw});
    const auto qy = numeric::make_quant(DType::i8, std::ldexp(1.0f, at(11) % 10 - 6), 1);
    if (!qx.ok() || !qw.ok() || !qy.ok()) return 0;
    std::vector<Tensor> ins{Tensor::from<std::int8_t>(Shape{1, C, H, W}, img, *qx),
                            Tensor::from<std::int8_t>(Shape{C, 1, kh, kw}, w, *qw)};
    if (!bias.empty()) ins.push_back(Tensor::from<std::int32_t>(Shape{C}, bias));
    ops::Conv::Attrs attrs;
    attrs.group = C;
    attrs.pads = {pads[0], pads[1], pads[2], pads[3]};
    const ops::TensorType out{DType::i8, Shape{1, C, Ho, Wo}, *qy};
    const auto host = ops::call<ops::Conv>(std::span<const Tensor>(ins), attrs, out);
    if (!host.ok()) return 0;  // a problem the host refuses is not the lowering's
    const auto plan = ops::plan_conv_quant(ops::type_of(ins[0]), ops::type_of(ins[1]), out, C, false, "fuzz");
    check(plan.ok(), "plan");
    const emit::DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, C, Cp};
    verify_image(img, X, Y, host->to_vector<std::int8_t>(),
                 [&](emit::Builder& b) { return emit::lower_depthwise(b, *plan, X, w, kh, kw, pads, bias, Y); });
    return 0;
}

/// Divisors of n, ascending.
std::vector<std::int64_t> divisors(std::int64_t n) {
    std::vector<std::int64_t> d;
    for (std::int64_t k = 1; k <= n; ++k)
        if (n % k == 0) d.push_back(k);
    return d;
}

int run_conv(const std::uint8_t* data, std::size_t size, bool transpose) {
    using namespace janus;
    const auto at = [&](std::size_t i) -> std::uint8_t { return i < size ? data[i] : 0; };
    const std::int64_t C = at(0) % 40 + 1, H = at(1) % 10 + 1, W = at(2) % 12 + 1, Co0 = at(3) % 40 + 1,
                       kh = at(4) % 4 + 1, kw = at(5) % 4 + 1, sh = at(6) % 3 + 1, sw = at(7) % 3 + 1,
                       dh = at(8) % 2 + 1, dw = at(9) % 2 + 1;
    // groups: a divisor of C; Co a multiple of it
    const auto ds = divisors(C);
    const std::int64_t G = ds[at(10) % ds.size()], Co = (Co0 + G - 1) / G * G;
    const std::int64_t eh = dh * (kh - 1) + 1, ew = dw * (kw - 1) + 1;
    const std::array<std::int64_t, 4> pads = {at(11) % eh, at(12) % ew, at(13) % eh, at(14) % ew};
    std::uint32_t x = 2166136261u;
    for (std::size_t i = 18; i < size; ++i) x = (x ^ data[i]) * 16777619u;
    const auto next = [&] { return static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24); };
    // Conv: W [Co, C / G, kh, kw]; ConvTranspose: W [C, Co / G, kh, kw], per-channel scales on axis 1
    const Shape ws = transpose ? Shape{C, Co / G, kh, kw} : Shape{Co, C / G, kh, kw};
    std::vector<std::int8_t> img(static_cast<std::size_t>(C * H * W)), w(static_cast<std::size_t>(element_count(ws)));
    for (auto& v : img) v = next();
    for (auto& v : w) v = next();
    std::vector<std::int32_t> bias;
    if (at(16) % 2)
        for (std::int64_t c = 0; c < Co; ++c) bias.push_back(next() * 37);
    std::vector<float> sc(static_cast<std::size_t>(ws[transpose ? 1 : 0]));
    for (std::size_t c = 0; c < sc.size(); ++c) sc[c] = std::ldexp(1.0f + static_cast<float>(c % 8) / 8, -6);
    const auto qx = numeric::make_quant(DType::i8, 0.03f, static_cast<std::int8_t>(at(15)));
    const auto qw =
        numeric::make_quant_per_axis(DType::i8, sc, std::vector<std::int32_t>(sc.size(), 0), transpose ? 1 : 0, ws);
    const float sy = std::ldexp(1.0f, at(17) % 8 - 4) * std::sqrt(static_cast<float>(C / G * kh * kw));
    const auto qy = numeric::make_quant(DType::i8, sy, 1);
    if (!qx.ok() || !qw.ok() || !qy.ok()) return 0;
    std::vector<Tensor> ins{Tensor::from<std::int8_t>(Shape{1, C, H, W}, img, *qx),
                            Tensor::from<std::int8_t>(ws, w, *qw)};
    if (!bias.empty()) ins.push_back(Tensor::from<std::int32_t>(Shape{Co}, bias));
    const ops::TensorType types[2] = {ops::type_of(ins[0]), ops::type_of(ins[1])};
    const std::int64_t Cp = (C + 15) / 16 * 16, Cop = (Co + 15) / 16 * 16;
    const emit::DramImage X{2, 0, H, W, C, Cp};
    if (!transpose) {
        ops::Conv::Attrs a;
        a.group = G, a.pads = {pads[0], pads[1], pads[2], pads[3]}, a.strides = {sh, sw}, a.dilations = {dh, dw};
        const auto shape = ops::Conv::infer(types, a);
        if (!shape.ok()) return 0;
        const ops::TensorType out{DType::i8, shape->shape, *qy};
        const auto host = ops::call<ops::Conv>(std::span<const Tensor>(ins), a, out);
        if (!host.ok()) return 0;  // a problem the host refuses is not the lowering's
        const auto plan = ops::plan_conv_quant(types[0], types[1], out, Co, false, "fuzz");
        check(plan.ok(), "plan");
        const emit::DramImage Y{3, 0, out.shape[2], out.shape[3], Co, Cop};
        const emit::ConvWindow k{kh, kw, sh, sw, dh, dw, pads, G};
        verify_image(img, X, Y, host->to_vector<std::int8_t>(),
                     [&](emit::Builder& b) { return emit::lower_conv(b, *plan, X, w, k, bias, Y); });
    } else {
        ops::ConvTranspose::Attrs a;
        a.group = G, a.pads = {pads[0], pads[1], pads[2], pads[3]}, a.strides = {sh, sw}, a.dilations = {dh, dw};
        const auto shape = ops::ConvTranspose::infer(types, a);
        if (!shape.ok()) return 0;
        const ops::TensorType out{DType::i8, shape->shape, *qy};
        const auto host = ops::call<ops::ConvTranspose>(std::span<const Tensor>(ins), a, out);
        if (!host.ok()) return 0;
        const auto plan = ops::plan_conv_quant(types[0], types[1], out, Co, true, "fuzz");
        check(plan.ok(), "plan");
        const auto scratch = emit::conv_transpose_scratch(types[0], types[1], a, 1, 0);
        check(scratch.ok(), "scratch");
        const emit::DramImage Y{3, 0, out.shape[2], out.shape[3], Co, Cop};
        verify_image(
            img, X, Y, host->to_vector<std::int8_t>(),
            [&](emit::Builder& b) {
                return emit::lower_conv_transpose(b, *plan, types[0], ins[1], a, bias, X, *scratch, Y);
            },
            scratch->h * scratch->w * Cp);
    }
    return 0;
}

/// The family's data: FNV-1a of data[from..) seeds an LCG.
struct Stream {
    std::uint32_t x = 2166136261u;
    Stream(const Input& in, std::size_t from) {
        for (std::size_t i = from; i < in.size; ++i) x = (x ^ in.data[i]) * 16777619u;
    }
    std::vector<std::int8_t> bytes(std::int64_t n) {
        std::vector<std::int8_t> v(static_cast<std::size_t>(n));
        for (auto& e : v) e = static_cast<std::int8_t>((x = x * 1103515245u + 12345u) >> 24);
        return v;
    }
};

std::optional<numeric::QuantParams> quant(float scale, std::uint8_t zp) {
    auto q = numeric::make_quant(DType::i8, scale, static_cast<std::int8_t>(zp));
    return q.ok() ? std::optional{*q} : std::nullopt;
}

/// A scale ratio from one byte: (1 + low 3 bits / 8) x 2^(bits 3..5 - 4).
float ratio(std::uint8_t b) { return std::ldexp(1.0f + static_cast<float>(b & 7) / 8, (b >> 3) % 8 - 4); }

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
    const auto plan = Op::plan(tin, a, out);
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
        pool_case<ops::MaxPool>(a, C, H, W, Cp, *qi, qo, img, emit::lower_max_pool<>, budget);
    } else if (kind == 1) {
        auto a = window(ops::AveragePoolAttrs{});
        a.count_include_pad = f >> 3 & 1;
        pool_case<ops::AveragePool>(a, C, H, W, Cp, *qi, qo, img, emit::lower_average_pool<>, average);
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
    const auto plan = Op::plan(tin, a, out);
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
            reduce_case<ops::ReduceSum>(in, emit::lower_reduce_sum<>);
            break;
        case 1:
            reduce_case<ops::ReduceMean>(in, emit::lower_reduce_mean<>);
            break;
        case 2:
            reduce_case<ops::ReduceMax>(in, emit::lower_reduce_max<>);
            break;
        default:
            reduce_case<ops::ReduceMin>(in, emit::lower_reduce_min<>);
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
                                               emit::DramArray{3, 0, {1, Ho, Wo, C}, Cpy, out.quant});
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
                                      return emit::lower_slice(b, at, xs[0], y);
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
                                          return emit::lower_transpose(b, at, xs[0], y);
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
                                    return emit::lower_pad(b, at, xs[0], y);
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
                                       return emit::lower_concat(b, at, arrays, y);
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
                                       return emit::lower_expand(b, at, arrays[0], y);
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
                                        return emit::lower_reshape(b, at, arrays[0], y);
                                    });
            break;
        }
    }
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    switch (data[0] % 8) {
        case 0:
            return run_elementwise(data + 1, size - 1);
        case 1:
            return run_matmul(data + 1, size - 1);
        case 2:
            return run_depthwise(data + 1, size - 1);
        case 3:
            return run_conv(data + 1, size - 1, false);
        case 4:
            return run_conv(data + 1, size - 1, true);
        case 5:
            return run_pool(data + 1, size - 1);
        case 6:
            return run_reduce(data + 1, size - 1);
        default:
            return run_movement(data + 1, size - 1);
    }
}
