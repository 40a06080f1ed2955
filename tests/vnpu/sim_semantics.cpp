// Simulator semantics, one instruction family per test, on hand-computed data; MAC, VEC.RQ and VEC.EW also against
// independent references (plain loops, numeric::requantize, and the host Add / Mul / Max kernels of ops/binary.hpp).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <janus/emit/elementwise.hpp>
#include <janus/numeric/quant_params.hpp>
#include <janus/ops/binary.hpp>

#include "sim_support.hpp"
#include "support/quant_plan.hpp"

using namespace vt;

TEST_CASE("seq: li, addi and every ALU function; r0 reads 0 and ignores writes") {
    sim::Machine m;
    const Run r = run_clean(R"(
        li r1, -7
        li r2, 3
        addi r3, r1, 10        ; 3
        alu.add r4, r1, r2     ; -4
        alu.sub r5, r1, r2     ; -10
        alu.mul r6, r1, r2     ; -21
        alu.shl r7, r2, r2     ; 24
        alu.sra r8, r1, r2     ; -7 >> 3 = -1 (arithmetic)
        alu.srl r9, r1, r2     ; 0xfffffff9 >> 3 = 0x1fffffff
        alu.and r10, r1, r2    ; 1
        alu.or r11, r1, r2     ; -5
        alu.xor r12, r1, r2    ; -6
        alu.min r13, r1, r2
        alu.max r14, r1, r2
        li r0, 99
        addi r15, r0, 2147483647
        addi r15, r15, 1       ; wraps
        halt
    )", m);
    const auto& g = r.report.regs;
    CHECK(g[0] == 0);
    CHECK(g[3] == 3);
    CHECK(g[4] == -4);
    CHECK(g[5] == -10);
    CHECK(g[6] == -21);
    CHECK(g[7] == 24);
    CHECK(g[8] == -1);
    CHECK(g[9] == 0x1fffffff);
    CHECK(g[10] == 1);
    CHECK(g[11] == -5);
    CHECK(g[12] == -6);
    CHECK(g[13] == -7);
    CHECK(g[14] == 3);
    CHECK(g[15] == INT32_MIN);
    CHECK(r.report.units[0].instructions == 18);
    CHECK(r.report.cycles == 18);  // one cycle per SEQ instruction, nothing dispatched
}

TEST_CASE("loop: nested counts, a body given by label, and the zero-overhead repeat") {
    sim::Machine m;
    const Run r = run_clean(R"(
        li r1, 0
        li r2, 0
        loop 3, outer_end
          addi r1, r1, 1
          loop 4, inner_end
            addi r2, r2, 1
        inner_end:
        outer_end:
        halt
    )", m);
    CHECK(r.report.regs[1] == 3);
    CHECK(r.report.regs[2] == 12);
    CHECK(r.report.units[0].instructions == 2 + 1 + 3 * (1 + 1 + 4) + 1);
}

TEST_CASE("dma: 2-D strided load, store, move and fill, every row checked and copied") {
    sim::Machine m;
    m.dram[2].resize(256);  // input: 4 rows of 64 B
    for (int i = 0; i < 256; ++i) m.dram[2][static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
    m.dram[3].resize(128);
    run_clean(R"(
        li r1, 0x1000
        li r2, 16
        dma.cfg 3, 64, 32               ; 3 rows, source stride 64, destination stride 32
        dma.load r1, input, r2, 32 signal(e0)   ; rows [16,48), [80,112), [144,176)
        li r3, 0x2000
        dma.cfg 1, 0, 0
        dma.fill r3, -2, 32
        dma.move r3, r1, 16 wait(e0)    ; first 16 B of row 0 over the fill
        li r4, 0
        dma.store output, r4, r3, 32 signal(e1)
        sync 0x0002, 0x0000
        halt
    )", m);
    for (int row = 0; row < 3; ++row)
        for (int b = 0; b < 32; ++b)
            CHECK(m.lmem[static_cast<std::size_t>(0x1000 + 32 * row + b)] == static_cast<std::uint8_t>(16 + 64 * row + b));
    for (int b = 0; b < 16; ++b) CHECK(m.dram[3][static_cast<std::size_t>(b)] == 16 + b);
    for (int b = 16; b < 32; ++b) CHECK(m.dram[3][static_cast<std::size_t>(b)] == 0xfe);
    CHECK(m.dram[3][32] == 0);
}

TEST_CASE("dma timing: L + rows x (2 + bytes / 16) with L = 64 for DRAM and 8 for local moves") {
    sim::Machine m;
    m.dram[2].resize(4096);
    const Run r = run_clean(R"(
        dma.cfg 4, 64, 64
        dma.load r0, input, r0, 64
        dma.move r0, r0, 32
        halt
    )", m);
    CHECK(r.report.units[1].busy == 1 + (64 + 4 * (2 + 4)) + (8 + 4 * (2 + 2)));
}

namespace {
std::vector<std::int32_t> plain_matmul(const std::vector<std::int8_t>& a, const std::vector<std::int8_t>& b, int M,
                                       int K, int N, int zp) {
    std::vector<std::int32_t> c(static_cast<std::size_t>(M * N));
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            std::int64_t s = 0;
            for (int k = 0; k < K; ++k)
                s += (a[static_cast<std::size_t>(i * K + k)] - zp) * b[static_cast<std::size_t>(k * N + j)];
            c[static_cast<std::size_t>(i * N + j)] = static_cast<std::int32_t>(s);
        }
    return c;
}
}  // namespace

TEST_CASE("mac.mm / mac.mma equal the plain loops, with the zero point, a strided A and the timing formula") {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> byte(-128, 127);
    for (const auto& shape : {std::array{1, 16, 16}, std::array{5, 48, 32}, std::array{16, 64, 48}, std::array{33, 16, 80}}) {
        const int M = shape[0], K = shape[1], N = shape[2];  // not a structured binding: clang 14 cannot capture one
        CAPTURE(M);
        CAPTURE(K);
        CAPTURE(N);
        sim::Machine m;
        const int a_stride = K + 16, zp = -37;
        std::vector<std::int8_t> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(K * N));
        for (auto& x : a) x = static_cast<std::int8_t>(byte(rng));
        for (auto& x : b) x = static_cast<std::int8_t>(byte(rng));
        for (int i = 0; i < M; ++i)
            std::memcpy(&m.lmem[static_cast<std::size_t>(i * a_stride)], &a[static_cast<std::size_t>(i * K)], static_cast<std::size_t>(K));
        std::memcpy(&m.lmem[0x20000], b.data(), b.size());
        const std::string text = "li r1, 0\nli r2, 0x20000\nli r3, 0x80000\n"
                                 "mac.cfg " + std::to_string(M) + ", " + std::to_string(K) + ", " + std::to_string(N) + ", " +
                                 std::to_string(a_stride) + "\n"
                                 "mac.mm r3, r1, r2, " + std::to_string(zp) + "\n"
                                 "mac.mma r3, r1, r2, 0\nhalt\n";
        const Run r = run_clean(text, m);
        const auto c1 = plain_matmul(a, b, M, K, N, zp);
        const auto c0 = plain_matmul(a, b, M, K, N, 0);
        for (int i = 0; i < M * N; ++i)
            CHECK(get_i32(m.acc, static_cast<std::size_t>(4 * i)) == c1[static_cast<std::size_t>(i)] + c0[static_cast<std::size_t>(i)]);
        CHECK(r.report.macs == static_cast<std::uint64_t>(2 * M * K * N));
        CHECK(r.report.units[2].busy == 1 + 2 * (static_cast<std::uint64_t>(K / 16 * (N / 16) * (16 + M)) + 8));
    }
}

TEST_CASE("dma.store from ACC: the int32 sums of mac.mm reach DRAM as little-endian bytes, row by row") {
    // ConvInteger / MatMulInteger store their sums this way (emit/conv.hpp, emit/matmul.hpp int32_output): rows of
    // 4 n bytes of ACC (64-B aligned) into a DRAM pitch of its own; only `bytes` of each row are written.
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> byte(-128, 127);
    const int M = 3, K = 32, N = 32, zp = -128, pitch = 144;  // the store writes 112 B (28 lanes) of each row
    sim::Machine m;
    std::vector<std::int8_t> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(K * N));
    for (auto& x : a) x = static_cast<std::int8_t>(byte(rng));
    for (auto& x : b) x = static_cast<std::int8_t>(byte(rng) / 2 + 64);  // (a - zp) * b mostly positive and large
    std::memcpy(m.lmem.data(), a.data(), a.size());
    std::memcpy(&m.lmem[0x20000], b.data(), b.size());
    m.dram[3].assign(static_cast<std::size_t>(M * pitch), 0xEE);
    const Run r = run_clean(R"(
        li r1, 0
        li r2, 0x20000
        li r3, 0x80000
        li r4, 16
        mac.cfg 3, 32, 32, 32
        mac.mm r3, r1, r2, -128 signal(e0)
        dma.cfg 3, 128, 144
        dma.store output, r4, r3, 112 wait(e0)
        halt
    )", m);
    const auto c = plain_matmul(a, b, M, K, N, zp);
    int wide = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            const auto at = static_cast<std::size_t>(i * pitch + 16 + 4 * j);
            if (j >= 28) {  // past the row's 112 bytes (and the 16 B before it): untouched
                for (std::size_t k = 0; k < 4 && at + k < m.dram[3].size(); ++k) CHECK(m.dram[3][at + k] == 0xEE);
                continue;
            }
            const auto v = static_cast<std::uint32_t>(c[static_cast<std::size_t>(i * N + j)]);
            for (std::size_t k = 0; k < 4; ++k)  // byte k of the lane is bits 8k..8k+7: little endian
                CHECK(m.dram[3][at + k] == static_cast<std::uint8_t>(v >> (8 * k)));
            wide += v > 0xFFFF && v < 0x80000000u;
        }
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < 16; ++k) CHECK(m.dram[3][static_cast<std::size_t>(i * pitch + k)] == 0xEE);
    CHECK(wide > 0);  // sums beyond 16 bits: every byte of a lane is compared
    CHECK(r.report.units[1].instructions == 2);
}

TEST_CASE("vec.rq: per-channel requantization equals numeric::requantize<round_double>, bias and clamp included") {
    std::mt19937 rng(3);
    const int C = 32, R = 3;
    sim::Machine m;
    std::vector<std::int32_t> bias(C);
    std::vector<numeric::QuantizedMultiplier> q(C);
    std::uniform_real_distribution<double> ratio(1e-4, 3.0);
    std::uniform_int_distribution<std::int32_t> acc(-200000, 200000);
    for (int c = 0; c < C; ++c) {
        bias[static_cast<std::size_t>(c)] = acc(rng) / 10;
        q[static_cast<std::size_t>(c)] = numeric::quantize_multiplier(ratio(rng) * (c % 2 ? 1e-3 : 1.0)).value();
    }
    q[5] = {};  // a zero multiplier (t = 31)
    put_rq_table(m.lmem, 0x3000, -5, -100, 120, bias, q);
    std::vector<std::int32_t> in(static_cast<std::size_t>(R * C));
    for (auto& x : in) x = acc(rng);
    in[0] = INT32_MAX;  // bias addition wraps
    for (std::size_t i = 0; i < in.size(); ++i) put_i32(m.acc, 0x40 * 4 + 4 * i, in[i]);
    run_clean(R"(
        li r1, 0x800
        li r2, 0x80100
        li r3, 0x3000
        vec.rq r1, r2, r3, 32, 3
        halt
    )", m);
    for (int i = 0; i < R * C; ++i) {
        const auto c = static_cast<std::size_t>(i % C);
        const auto biased = static_cast<std::int32_t>(static_cast<std::uint32_t>(in[static_cast<std::size_t>(i)]) +
                                                      static_cast<std::uint32_t>(bias[c]));
        CHECK(s8(m.lmem, static_cast<std::size_t>(0x800 + i)) ==
              numeric::requantize<numeric::round_double>(biased, q[c], -5, -100, 120));
    }
}

TEST_CASE("vec.rq: a hand-computed entry (bias 10, multiplier 0.5 = 2^30 * 2^-31, zp 3)") {
    sim::Machine m;
    put_rq_table(m.lmem, 0, 3, -128, 127, std::vector<std::int32_t>(16, 10),
                 std::vector<numeric::QuantizedMultiplier>(16, {1 << 30, 0}));
    const std::int32_t acc[4] = {0, 5, -31, 1000};  // (acc + 10) * 0.5, rounded half up (SRDHM), + 3
    for (int i = 0; i < 4; ++i) put_i32(m.acc, static_cast<std::size_t>(4 * i), acc[i]);
    run_clean("li r1, 0x1000\nli r2, 0x80000\nvec.rq r1, r2, r0, 16, 1\nhalt\n", m);
    CHECK(s8(m.lmem, 0x1000) == 8);     // 5 + 3
    CHECK(s8(m.lmem, 0x1001) == 11);    // 7.5 -> 8, + 3
    CHECK(s8(m.lmem, 0x1002) == -7);    // -10.5 -> -10 (half up, not half away), + 3
    CHECK(s8(m.lmem, 0x1003) == 127);   // 505 + 3 saturates
}

TEST_CASE("vec.rq: the table header's rounding selects round_double, round_single or round_half_even") {
    // M = 0.25 as (2^30, shift -1): -2 -> -0.5, 10 -> 2.5, 6 -> 1.5, -6 -> -1.5, 7 -> 1.75
    const std::int32_t acc[5] = {-2, 10, 6, -6, 7};
    const int want[3][5] = {
        {-1, 3, 2, -2, 2},  // double: SRDHM (half up) to x/2, then the shift rounds half away from zero
        {0, 3, 2, -1, 2},   // single: one rounding, ties toward +infinity
        {0, 2, 2, -2, 2},   // half_even
    };
    for (int mode = 0; mode < 3; ++mode) {
        CAPTURE(mode);
        sim::Machine m;
        put_rq_table(m.lmem, 0, 0, -128, 127, std::vector<std::int32_t>(16, 0),
                     std::vector<numeric::QuantizedMultiplier>(16, {1 << 30, -1}), mode);
        for (int i = 0; i < 5; ++i) put_i32(m.acc, static_cast<std::size_t>(4 * i), acc[i]);
        run_clean("li r1, 0x1000\nli r2, 0x80000\nvec.rq r1, r2, r0, 16, 1\nhalt\n", m);
        for (int i = 0; i < 5; ++i) CHECK(s8(m.lmem, static_cast<std::size_t>(0x1000 + i)) == want[mode][i]);
    }
    // and at random, against numeric::requantize of each mode
    std::mt19937 rng(11);
    std::uniform_int_distribution<std::int32_t> value(-3000000, 3000000);
    std::uniform_real_distribution<double> ratio(1e-6, 1e-3);
    for (int mode = 0; mode < 3; ++mode) {
        sim::Machine m;
        std::vector<numeric::QuantizedMultiplier> q(16);
        for (auto& x : q) x = numeric::quantize_multiplier(ratio(rng)).value();
        put_rq_table(m.lmem, 0, 7, -120, 100, std::vector<std::int32_t>(16, 0), q, mode);
        std::vector<std::int32_t> in(64);
        for (std::size_t i = 0; i < in.size(); ++i) put_i32(m.acc, 4 * i, in[i] = value(rng));
        run_clean("li r1, 0x1000\nli r2, 0x80000\nvec.rq r1, r2, r0, 16, 4\nhalt\n", m);
        for (std::size_t i = 0; i < in.size(); ++i) {
            const auto& qi = q[i % 16];
            const std::int32_t r = mode == 0   ? numeric::requantize<numeric::round_double>(in[i], qi, 7, -120, 100)
                                   : mode == 1 ? numeric::requantize<numeric::round_single>(in[i], qi, 7, -120, 100)
                                               : numeric::requantize<numeric::round_half_even>(in[i], qi, 7, -120, 100);
            CHECK(s8(m.lmem, 0x1000 + i) == r);
        }
    }
}

namespace {
/// Write BinaryQuantPlan p as VEC.EW's parameter block: the emitter's fields (emit::ew_params), the encoder of
/// vnpu/params.hpp.
void put_ew_block(std::vector<std::uint8_t>& mem, std::size_t at, const ops::BinaryQuantPlan& p, std::int32_t rounding = 0) {
    EwParams e = emit::ew_params(p);
    e.rounding = rounding;
    encode(ew_layout, e, std::span<std::uint8_t>(mem).subspan(at, ew_layout.size));
}

template <class Op, expr::BinOp Kind>
void check_ew(const char* mnemonic, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(-128, 127);
    std::uniform_real_distribution<float> scale(0.01f, 2.0f);
    for (int trial = 0; trial < 6; ++trial) {
        const auto qa = numeric::make_quant(DType::i8, scale(rng), byte(rng) / 2).value();
        const auto qb = numeric::make_quant(DType::i8, scale(rng), byte(rng) / 2).value();
        const auto qo = numeric::make_quant(DType::i8, scale(rng), byte(rng) / 2).value();
        const std::int64_t n = 256;
        std::vector<std::int8_t> a(n), b(n);
        for (auto& x : a) x = static_cast<std::int8_t>(byte(rng));
        for (auto& x : b) x = static_cast<std::int8_t>(byte(rng));
        const Tensor ta = Tensor::from<std::int8_t>(Shape{n}, a, qa), tb = Tensor::from<std::int8_t>(Shape{n}, b, qb);
        auto host = ops::call<Op>({ta, tb}, {}, ops::TensorType{DType::i8, Shape{n}, qo});
        REQUIRE(host.ok());
        const auto plan = janus_test::binary_plan<Kind>(qa, qb, qo, janus::numeric::default_rounding_mode).value();
        sim::Machine m;
        std::memcpy(&m.lmem[0x100], a.data(), n);
        std::memcpy(&m.lmem[0x200], b.data(), n);
        put_ew_block(m.lmem, 0x400, plan);
        run_clean(std::string("li r1, 0x100\nli r2, 0x200\nli r3, 0x400\n") + mnemonic + " r1, r1, r2, r3, 256\nhalt\n", m);
        const auto want = host->template to_vector<std::int8_t>();
        for (std::int64_t i = 0; i < n; ++i) CHECK(s8(m.lmem, static_cast<std::size_t>(0x100 + i)) == want[static_cast<std::size_t>(i)]);
    }
}
}  // namespace

TEST_CASE("vec.ew: add, sub, mul, min, max equal the host kernels of ops/binary.hpp bit for bit (in place)") {
    check_ew<ops::Add, expr::BinOp::add>("vec.ew.add", 1);
    check_ew<ops::Sub, expr::BinOp::sub>("vec.ew.sub", 2);
    check_ew<ops::Mul, expr::BinOp::mul>("vec.ew.mul", 3);
    check_ew<ops::Min, expr::BinOp::min>("vec.ew.min", 4);
    check_ew<ops::Max, expr::BinOp::max>("vec.ew.max", 5);
}

TEST_CASE("vec.ew.mul: the block's word 11 selects the rounding; plain loops per mode") {
    ops::BinaryQuantPlan p;
    p.zp_a = 3;
    p.zp_b = -4;
    p.zp_out = 1;
    p.m_out = {1 << 30, -1};  // 0.25: odd products give quarter and half ties
    p.acc_limit = 255 * 255;
    std::vector<std::int8_t> a(64), b(64);
    for (int i = 0; i < 64; ++i) {
        a[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i * 7 - 200 + 256 * (i * 7 < 72));
        b[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(14 - 3 * i);
    }
    for (int mode = 0; mode < 3; ++mode) {
        CAPTURE(mode);
        sim::Machine m;
        std::memcpy(&m.lmem[0x100], a.data(), 64);
        std::memcpy(&m.lmem[0x200], b.data(), 64);
        put_ew_block(m.lmem, 0x400, p, mode);
        run_clean("li r1, 0x100\nli r2, 0x200\nli r3, 0x400\nvec.ew.mul r1, r1, r2, r3, 64\nhalt\n", m);
        int ties_seen = 0;
        for (std::size_t i = 0; i < 64; ++i) {
            const std::int32_t prod = (a[i] - p.zp_a) * (b[i] - p.zp_b);
            ties_seen += (prod % 4 != 0 && prod % 2 == 0);
            const std::int32_t r = mode == 0   ? numeric::requantize<numeric::round_double>(prod, p.m_out, 1, -128, 127)
                                   : mode == 1 ? numeric::requantize<numeric::round_single>(prod, p.m_out, 1, -128, 127)
                                               : numeric::requantize<numeric::round_half_even>(prod, p.m_out, 1, -128, 127);
            CHECK(s8(m.lmem, 0x100 + i) == r);
        }
        CHECK(ties_seen > 8);
    }
}

TEST_CASE("vec.shl32, vec.rshr32, vec.abs32, vec.add32 on ACC; vec.sel on LMEM: hand-computed lanes") {
    sim::Machine m;
    const std::int32_t x[16] = {0, 1, -1, 2, -2, 3, -3, 5, -5, 6, -6, 7, 1 << 30, INT32_MIN, INT32_MAX, -100};
    for (int i = 0; i < 16; ++i) {
        put_i32(m.acc, static_cast<std::size_t>(4 * i), x[i]);
        put_i32(m.acc, static_cast<std::size_t>(64 + 4 * i), 1000 * i);
        m.lmem[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i % 3 == 0 ? 0 : i - 8);        // c
        m.lmem[static_cast<std::size_t>(16 + i)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(i));   // a
        m.lmem[static_cast<std::size_t>(32 + i)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(-i));  // b
    }
    run_clean(R"(
        li r1, 0x80000
        li r2, 0x80040
        li r3, 0x80080
        li r4, 0x800c0
        li r5, 0x80100
        li r6, 0x80140
        vec.rshr32 r3, r1, 1, 16        ; round(x / 2), ties away from zero
        vec.shl32 r4, r1, 2, 16         ; wraps
        vec.abs32 r5, r1, 16
        vec.add32 r6, r1, r2, 16
        vec.add32 r2, r2, r2, 16        ; in place
        li r7, 16
        li r8, 32
        li r9, 0x100
        vec.sel r9, r0, r7, r8, 16
        halt
    )", m);
    const std::int32_t half[16] = {0, 1, -1, 1, -1, 2, -2, 3, -3, 3, -3, 4, 1 << 29, -(1 << 30), 1 << 30, -50};
    for (int i = 0; i < 16; ++i) {
        const auto u = static_cast<std::uint32_t>(x[i]);
        CHECK(get_i32(m.acc, static_cast<std::size_t>(0x80 + 4 * i)) == half[i]);
        CHECK(get_i32(m.acc, static_cast<std::size_t>(0xc0 + 4 * i)) == static_cast<std::int32_t>(u << 2));
        CHECK(get_i32(m.acc, static_cast<std::size_t>(0x100 + 4 * i)) ==
              (x[i] == INT32_MIN ? INT32_MIN : (x[i] < 0 ? -x[i] : x[i])));
        CHECK(get_i32(m.acc, static_cast<std::size_t>(0x140 + 4 * i)) ==
              static_cast<std::int32_t>(u + static_cast<std::uint32_t>(1000 * i)));
        CHECK(get_i32(m.acc, static_cast<std::size_t>(0x40 + 4 * i)) == 2000 * i);
        CHECK(s8(m.lmem, static_cast<std::size_t>(0x100 + i)) == (i % 3 == 0 || i == 8 ? -i : i));  // c = 0 takes b
    }
}

TEST_CASE("vec.acc, vec.mac, vec.max, vec.min: hand-computed lanes") {
    sim::Machine m;
    for (int i = 0; i < 16; ++i) {
        m.lmem[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(i - 8));          // x
        m.lmem[static_cast<std::size_t>(16 + i)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(3 - i));    // w
        put_i32(m.acc, static_cast<std::size_t>(4 * i), 1000 * i);
    }
    run_clean(R"(
        li r1, 0x80000
        li r2, 16
        li r3, 0x100
        vec.acc r1, r0, -2, 16          ; acc += x + 2
        vec.mac r1, r0, r2, 1, 16       ; acc += (x - 1) * w
        vec.max r3, r0, r2, 16
        addi r4, r3, 16
        vec.min r4, r0, r2, 16
        halt
    )", m);
    for (int i = 0; i < 16; ++i) {
        const int x = i - 8, w = 3 - i;
        CHECK(get_i32(m.acc, static_cast<std::size_t>(4 * i)) == 1000 * i + (x + 2) + (x - 1) * w);
        CHECK(s8(m.lmem, static_cast<std::size_t>(0x100 + i)) == std::max(x, w));
        CHECK(s8(m.lmem, static_cast<std::size_t>(0x110 + i)) == std::min(x, w));
    }
}

TEST_CASE("lut.apply: T[x + 128] from LUT RAM table 2, loaded by DMA from DRAM") {
    sim::Machine m;
    m.dram[0].resize(256);
    for (int j = 0; j < 256; ++j) m.dram[0][static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(255 - j);  // T[j] = -1 - (j - 128)... as int8
    for (int i = 0; i < 32; ++i) m.lmem[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(4 * i - 64));
    run_clean(R"(
        li r1, 0xc0200
        dma.cfg 16, 16, 16
        dma.load r1, weights, r0, 16 signal(e3)
        li r2, 0x40
        lut.apply r2, r0, 2, 32 wait(e3)
        halt
    )", m);
    for (int i = 0; i < 32; ++i) {
        const int x = 4 * i - 64;
        CHECK(s8(m.lmem, static_cast<std::size_t>(0x40 + i)) == static_cast<std::int8_t>(255 - (x + 128)));
    }
}
