// Fuzz target: differential verification of the NPU lowerings (issue 5). The first byte picks the family, the rest
// of the input is that family's; each emits the kernel with emit/, runs it on the simulator and compares with the
// host kernel of the same op (ops::call). The data-movement families (pools, reductions, movement) are fuzz/emit_diff_data.cpp: two targets
// compile in parallel in CI.
//
//   byte 0 % 5 == 0  elementwise (emit/elementwise.hpp): byte 1 op (0..4 binary Add Sub Mul Min Max, 5.. unary Relu
//                    Sigmoid Tanh Abs Neg HardSwish Gelu), bytes 2..3 element count (1..4096), bytes 4..9 three
//                    (scale, zero point) pairs, byte 10 tile (16 B steps; 0 = free LMEM), the rest seeds the data.
//   byte 0 % 5 == 1  matmul (emit/matmul.hpp): bytes 1..3 M (1..64), K (1..320), N (1..200); byte 4 A's zero point;
//                    byte 5 per-column weight scales if odd; bytes 6..7 the A and output scale exponents; bytes 8..9 M
//                    and N tile caps (0 = none); the rest seeds the data.
//   byte 0 % 5 == 2  depthwise (emit/depthwise.hpp): bytes 1..5 C (1..48), H (1..12), W (1..20), kh, kw (1..5);
//                    bytes 6..9 pads (below the kernel extent); byte 10 the input zero point; byte 11 bias if odd;
//                    byte 12 the output scale exponent; the rest seeds the data.
//   byte 0 % 5 == 3  conv (emit/conv.hpp lower_conv): bytes 1..10 C (1..40), H (1..10), W (1..12), Co (1..40), kh, kw
//                    (1..4), sh, sw (1..3), dh, dw (1..2); byte 11 picks the groups among C's divisors (Co rounded up to
//                    a multiple); bytes 12..15 pads (below the dilated kernel extent); byte 16 the input zero point;
//                    byte 17 bias if odd; byte 18 the output scale exponent; the rest seeds the data.
//   byte 0 % 5 == 4  ConvTranspose (lower_conv_transpose), the same bytes (W is [C, Co / G, kh, kw]).
// Properties (a __builtin_trap() when broken): whenever the host kernel accepts the problem, the lowering succeeds,
// the simulated run ends at HALT with no fault and no race, and the output equals the host's bytes (fuzz/emit_fuzz.hpp).
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
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <janus/vnpu/sim/simulator.hpp>

#include "emit_fuzz.hpp"

namespace {
using namespace emit_fuzz;
using namespace janus;

template <class Op, expr::BinOp Kind>
void binary(std::int64_t n, const numeric::QuantParams (&q)[3], std::int64_t tile, const std::vector<std::int8_t>& a,
            const std::vector<std::int8_t>& c) {
    const auto host =
        ops::call<Op>({Tensor::from<std::int8_t>(Shape{n}, a, q[0]), Tensor::from<std::int8_t>(Shape{n}, c, q[1])}, {},
                      ops::TensorType{DType::i8, Shape{n}, q[2]});
    if (!host.ok()) return;  // parameters the host refuses (a ratio no multiplier holds) are not the lowering's
    const ops::TensorType types[2] = {{DType::i8, Shape{n}, q[0]}, {DType::i8, Shape{n}, q[1]}};
    const auto plan = Op::plan(types, {}, ops::TensorType{DType::i8, Shape{n}, q[2]}, janus::numeric::default_rounding_mode);
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
    const ops::TensorType x{DType::i8, Shape{n}, q[0]};
    const auto table = Op::plan(std::span(&x, 1), typename Op::Attrs{}, ops::TensorType{DType::i8, Shape{n}, q[2]},
                                janus::numeric::default_rounding_mode);
    check(table.ok(), "plan");
    verify(n, {a}, host->template to_vector<std::int8_t>(), [&](emit::Builder& b, std::uint32_t) {
        return emit::lower_lut(b, **table, {2, 0, n}, {3, 0, n}, {tile});
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
    const auto plan = ops::MatMul::plan(types, {}, out, janus::numeric::default_rounding_mode);
    check(plan.ok(), "plan");
    emit::Builder b("fuzz");
    const emit::MatmulOptions opt{16 * (at(8) % 8), at(7) % 16, {}, {}};
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
    std::vector<ops::TensorType> types;
    for (const auto& t : ins) types.push_back(ops::type_of(t));
    const auto plan = ops::Conv::plan(types, attrs, out, janus::numeric::default_rounding_mode);
    check(plan.ok(), "plan");
    const emit::DramImage X{2, 0, H, W, C, Cp}, Y{3, 0, Ho, Wo, C, Cp};
    verify_image(img, X, Y, host->to_vector<std::int8_t>(),
                 [&](emit::Builder& b) { return emit::lower_depthwise(b, *plan, X, w, bias, Y); });
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
    std::vector<ops::TensorType> types;
    for (const auto& t : ins) types.push_back(ops::type_of(t));
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
        const auto plan = ops::Conv::plan(types, a, out, janus::numeric::default_rounding_mode);
        check(plan.ok(), "plan");
        const emit::DramImage Y{3, 0, out.shape[2], out.shape[3], Co, Cop};
        verify_image(img, X, Y, host->to_vector<std::int8_t>(),
                     [&](emit::Builder& b) { return emit::lower_conv(b, *plan, X, w, bias, Y); });
    } else {
        ops::ConvTranspose::Attrs a;
        a.group = G, a.pads = {pads[0], pads[1], pads[2], pads[3]}, a.strides = {sh, sw}, a.dilations = {dh, dw};
        const auto shape = ops::ConvTranspose::infer(types, a);
        if (!shape.ok()) return 0;
        const ops::TensorType out{DType::i8, shape->shape, *qy};
        const auto host = ops::call<ops::ConvTranspose>(std::span<const Tensor>(ins), a, out);
        if (!host.ok()) return 0;
        const auto plan = ops::ConvTranspose::plan(types, a, out, janus::numeric::default_rounding_mode);
        check(plan.ok(), "plan");
        const auto scratch = emit::conv_transpose_scratch(*plan, 1, 0);
        check(scratch.ok(), "scratch");
        const emit::DramImage Y{3, 0, out.shape[2], out.shape[3], Co, Cop};
        verify_image(
            img, X, Y, host->to_vector<std::int8_t>(),
            [&](emit::Builder& b) {
                return emit::lower_conv_transpose(b, *plan, ins[1], bias, X, *scratch, Y);
            },
            scratch->h * scratch->w * Cp);
    }
    return 0;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    switch (data[0] % 5) {
        case 0:
            return run_elementwise(data + 1, size - 1);
        case 1:
            return run_matmul(data + 1, size - 1);
        case 2:
            return run_depthwise(data + 1, size - 1);
        case 3:
            return run_conv(data + 1, size - 1, false);
        default:
            return run_conv(data + 1, size - 1, true);
    }
}
