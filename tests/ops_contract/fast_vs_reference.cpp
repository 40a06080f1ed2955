// The blocked engine of `contract` (ops/gemm.hpp) against the plain reference loops (ContractOptions{.simd = false}):
// tolerance 0 for int32 AND float (bit patterns compared), on random shapes that are not multiples of the register
// block: groups, depthwise, stride 2, dilation 2, asymmetric pads, pads larger than the kernel, batch > 1, 1-D and
// 3-D convs, batched and broadcast matmul, empty extents, per-channel pre, bias / no bias, int8 and uint8; the
// prepacked overloads against the plain API; the panel storage (int8 / int16 / int32) chosen from proved ranges.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <janus/ops/contract.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

using expr::In;

std::int64_t pick(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

template <class T>
Tensor random_tensor(std::mt19937& rng, const Shape& s) {
    std::vector<T> v(static_cast<std::size_t>(element_count(s)));
    if constexpr (std::is_same_v<T, float>) {
        std::uniform_real_distribution<float> d(-3.0f, 3.0f);
        for (auto& x : v) x = d(rng);
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
        std::uniform_int_distribution<std::int32_t> d(-100000, 100000);
        for (auto& x : v) x = d(rng);
    } else {
        std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
        for (auto& x : v) x = static_cast<T>(d(rng));
    }
    return Tensor::from<T>(s, v);
}

/// Same dtype, shape and bytes (float compared by bit pattern: -0 != +0).
bool same_bits(const Tensor& a, const Tensor& b) {
    if (a.dtype != b.dtype || !(a.shape() == b.shape())) return false;
    if (a.dtype == DType::f32) {
        const auto va = a.to_vector<float>(), vb = b.to_vector<float>();
        return va.empty() || std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)) == 0;
    }
    return a.to_vector<std::int32_t>() == b.to_vector<std::int32_t>();
}

struct ConvCase {
    Shape x, w;
    ConvParams p;
};

/// A random conv: spatial 1..3 axes, groups (incl. depthwise), strides, dilations, asymmetric and large pads.
ConvCase random_conv(std::mt19937& rng) {
    ConvCase c;
    const int spatial = static_cast<int>(pick(rng, 0, 9) < 7 ? 2 : pick(rng, 0, 1) ? 1 : 3);
    const std::int64_t groups = pick(rng, 0, 3) == 0 ? pick(rng, 2, 5) : 1;
    const bool depthwise = groups > 1 && pick(rng, 0, 1);
    const std::int64_t cin_g = depthwise ? 1 : pick(rng, 1, 5), cout_g = depthwise ? 1 : pick(rng, 1, 11);
    c.x = Shape{pick(rng, 1, 2), groups * cin_g};
    c.w = Shape{groups * cout_g, cin_g};
    c.p.groups = groups;
    Dims s, d, pb, pe;
    for (int a = 0; a < spatial; ++a) {
        const std::int64_t k = pick(rng, 1, spatial == 3 ? 2 : 3);
        const std::int64_t dil = pick(rng, 0, 3) == 0 ? 2 : 1;
        const std::int64_t lo = pick(rng, 0, 4) == 0 ? pick(rng, 3, 5) : pick(rng, 0, 1);  // larger than the kernel
        const std::int64_t hi = pick(rng, 0, 2);
        const std::int64_t eff = (k - 1) * dil + 1;
        const std::int64_t len = std::max<std::int64_t>(pick(rng, 1, spatial == 3 ? 5 : 19), eff - lo - hi);
        c.x.push_back(len);
        c.w.push_back(k);
        s.push_back(pick(rng, 1, 2));
        d.push_back(dil);
        pb.push_back(lo);
        pe.push_back(hi);
    }
    c.p.window = WindowParams{{}, s, d, pb, pe, false};
    return c;
}

/// Quantized conv through both paths and the prepacked overload; all three must agree bit for bit.
template <class TX>
void check_conv_q(std::mt19937& rng, const ConvCase& c, bool with_bias) {
    using namespace expr;
    const Tensor x = random_tensor<TX>(rng, c.x);
    const Tensor w = random_tensor<std::int8_t>(rng, c.w);
    std::vector<std::int32_t> zp_x(static_cast<std::size_t>(c.x[1])), zp_w(static_cast<std::size_t>(c.w[0]));
    for (auto& z : zp_x) z = static_cast<std::int32_t>(pick(rng, std::numeric_limits<TX>::min(), std::numeric_limits<TX>::max()));
    for (auto& z : zp_w) z = static_cast<std::int32_t>(pick(rng, -128, 127));
    const Tensor bias = random_tensor<std::int32_t>(rng, Shape{c.w[0]});
    const Tensor* b = with_bias ? &bias : nullptr;
    const auto px = sub(widen(In<0, TX>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_x)));
    const auto pw = sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_w)));
    auto ref = run_conv_contract(px, pw, x, w, b, c.p, ContractOptions{false});
    auto fast = run_conv_contract(px, pw, x, w, b, c.p, ContractOptions{true});
    REQUIRE(ref.ok());
    REQUIRE(fast.ok());
    CHECK(same_bits(ref->acc, fast->acc));
    CHECK(ref->acc_range.lo == fast->acc_range.lo);
    CHECK(ref->terms == fast->terms);
    auto packed = pack_conv_weights(pw, w);
    REQUIRE(packed.ok());
    auto pre = run_conv_contract(px, *packed, x, b, c.p);
    REQUIRE(pre.ok());
    CHECK(same_bits(ref->acc, pre->acc));
    CHECK(pre->acc_range.hi == ref->acc_range.hi);
    auto pre_ref = run_conv_contract(px, *packed, x, b, c.p, ContractOptions{false});
    REQUIRE(pre_ref.ok());
    CHECK(same_bits(ref->acc, pre_ref->acc));
}

void check_conv_f(std::mt19937& rng, const ConvCase& c, bool with_bias) {
    const Tensor x = random_tensor<float>(rng, c.x);
    const Tensor w = random_tensor<float>(rng, c.w);
    const Tensor bias = random_tensor<float>(rng, Shape{c.w[0]});
    const Tensor* b = with_bias ? &bias : nullptr;
    auto ref = run_conv_contract(In<0, float>{}, In<0, float>{}, x, w, b, c.p, ContractOptions{false});
    auto fast = run_conv_contract(In<0, float>{}, In<0, float>{}, x, w, b, c.p, ContractOptions{true});
    REQUIRE(ref.ok());
    REQUIRE(fast.ok());
    CHECK(same_bits(ref->acc, fast->acc));
    auto packed = pack_conv_weights(In<0, float>{}, w);
    REQUIRE(packed.ok());
    auto pre = run_conv_contract(In<0, float>{}, *packed, x, b, c.p);
    REQUIRE(pre.ok());
    CHECK(same_bits(ref->acc, pre->acc));
}

}  // namespace

// ---- convolution ------------------------------------------------------------------------------------------------------

TEST_CASE("engine conv equals the reference loops bit for bit: int8, uint8 and float, random geometry") {
    std::mt19937 rng(20261202);
    for (int i = 0; i < 150; ++i) {
        const ConvCase c = random_conv(rng);
        CAPTURE(c.x.str());
        CAPTURE(c.w.str());
        CAPTURE(c.p.groups);
        CAPTURE(c.p.window.strides.str());
        CAPTURE(c.p.window.dilations.str());
        CAPTURE(c.p.window.pads_begin.str());
        CAPTURE(c.p.window.pads_end.str());
        const bool with_bias = i % 3 != 0;
        if (i % 3 == 0) check_conv_q<std::int8_t>(rng, c, with_bias);
        else if (i % 3 == 1) check_conv_q<std::uint8_t>(rng, c, with_bias);
        else check_conv_f(rng, c, with_bias);
    }
}

TEST_CASE("engine conv covers full register blocks and row tails (3x3, 32 -> 19 channels, 2x32x13x37)") {
    std::mt19937 rng(7);
    ConvCase c{{2, 32, 13, 37}, {19, 32, 3, 3}, {}};
    c.p.window = WindowParams{{}, {1, 1}, {1, 1}, {1, 0}, {1, 2}, false};
    check_conv_q<std::int8_t>(rng, c, true);
    check_conv_f(rng, c, false);
    c.x = Shape{1, 32, 31, 37};
    c.p.window.strides = Dims{2, 2};  // the im2col (packed) path; float: 16 x 19 pixels span two tiles of 224
    check_conv_q<std::int8_t>(rng, c, true);
    check_conv_f(rng, c, true);
}

TEST_CASE("padding is a real zero on the engine path: an input zero point never leaks into padded positions") {
    using namespace expr;
    // 1x1x1x1 input x = zp_x = 5, 3x3 kernel of ones, pads 1: the only real value is x - zp = 0, so every output is 0
    // (a wrong im2col that pads with the STORED zero would give 0 too, so take x = 7: the centre contributes 2 * 1)
    const Tensor x = Tensor::from<std::int8_t>({1, 1, 1, 1}, {7});
    const Tensor w = Tensor::from<std::int8_t>({1, 1, 3, 3}, std::vector<std::int8_t>(9, 1));
    ConvParams p;
    p.window = WindowParams{{}, {}, {}, {1, 1}, {1, 1}, false};
    auto r = run_conv_contract(sub(widen(In<0, std::int8_t>{}), cst(5)), widen(In<0, std::int8_t>{}), x, w, nullptr, p);
    REQUIRE(r.ok());
    CHECK(r->acc.to_vector<std::int32_t>() == std::vector<std::int32_t>{2});
}

TEST_CASE("float conv with an infinite weight keeps the reference's skip of padded positions") {
    // padded positions are skipped by the reference: 0 * inf would be NaN, so the engine must not run here
    const Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
    const float inf = std::numeric_limits<float>::infinity();
    const Tensor w = Tensor::from<float>({1, 1, 2, 2}, {inf, 0, 0, 1});
    ConvParams p;
    p.window = WindowParams{{}, {}, {}, {0, 0}, {1, 1}, false};
    auto ref = run_conv_contract(In<0, float>{}, In<0, float>{}, x, w, nullptr, p, ContractOptions{false});
    auto fast = run_conv_contract(In<0, float>{}, In<0, float>{}, x, w, nullptr, p, ContractOptions{true});
    REQUIRE(ref.ok());
    REQUIRE(fast.ok());
    CHECK(same_bits(ref->acc, fast->acc));
    // out[0,0,1,1] reads only x[1,1] * inf (three padded positions): +inf, not NaN
    CHECK(fast->acc.to_vector<float>()[3] == inf);
    auto packed = pack_conv_weights(In<0, float>{}, w);
    REQUIRE(packed.ok());
    CHECK_FALSE(packed->finite);
    auto pre = run_conv_contract(In<0, float>{}, *packed, x, nullptr, p);
    REQUIRE(pre.ok());
    CHECK(same_bits(ref->acc, pre->acc));
}

TEST_CASE("empty conv extents: no batch, no output channels, no input channels give the reference's tensors") {
    using namespace expr;
    const auto px = widen(In<0, std::int8_t>{});
    for (const auto& [xs, ws] : {std::pair{Shape{0, 2, 4, 4}, Shape{3, 2, 3, 3}}, std::pair{Shape{1, 2, 4, 4}, Shape{0, 2, 3, 3}},
                                 std::pair{Shape{2, 0, 4, 4}, Shape{3, 0, 3, 3}}}) {
        const Tensor x = Tensor::zeros(DType::i8, xs), w = Tensor::zeros(DType::i8, ws);
        const Tensor bias = Tensor::from<std::int32_t>({ws[0]}, std::vector<std::int32_t>(static_cast<std::size_t>(ws[0]), 9));
        auto ref = run_conv_contract(px, px, x, w, &bias, ConvParams{}, ContractOptions{false});
        auto fast = run_conv_contract(px, px, x, w, &bias, ConvParams{}, ContractOptions{true});
        REQUIRE(ref.ok());
        REQUIRE(fast.ok());
        CHECK(same_bits(ref->acc, fast->acc));
    }
}

// ---- matmul -----------------------------------------------------------------------------------------------------------

TEST_CASE("engine matmul equals the reference loops bit for bit: batched, broadcast, empty, per-row/column pre") {
    using namespace expr;
    std::mt19937 rng(99);
    for (int i = 0; i < 120; ++i) {
        const std::int64_t M = pick(rng, 0, 10) == 0 ? 0 : pick(rng, 1, 21), K = pick(rng, 0, 10) == 0 ? 0 : pick(rng, 1, 70),
                           N = pick(rng, 0, 10) == 0 ? 0 : pick(rng, 1, 75);
        Shape as{M, K}, bs{K, N};
        switch (pick(rng, 0, 3)) {
            case 1: as = Shape{3, M, K}; break;                          // b broadcast over a's batch
            case 2: as = Shape{2, 1, M, K}; bs = Shape{3, K, N}; break;  // both broadcast
            case 3: as = Shape{2, M, K}; bs = Shape{2, K, N}; break;
            default: break;
        }
        CAPTURE(as.str());
        CAPTURE(bs.str());
        const bool with_bias = i % 2 == 0;
        if (i % 3 == 2) {
            const Tensor a = random_tensor<float>(rng, as), b = random_tensor<float>(rng, bs);
            const Tensor bias = random_tensor<float>(rng, Shape{N});
            const Tensor* bp = with_bias ? &bias : nullptr;
            auto ref = run_matmul_contract(In<0, float>{}, In<0, float>{}, a, b, bp, ContractOptions{false});
            auto fast = run_matmul_contract(In<0, float>{}, In<0, float>{}, a, b, bp);
            REQUIRE(ref.ok());
            REQUIRE(fast.ok());
            CHECK(same_bits(ref->acc, fast->acc));
            auto packed = pack_matmul_b(In<0, float>{}, b);
            REQUIRE(packed.ok());
            auto pre = run_matmul_contract(In<0, float>{}, *packed, a, bp);
            REQUIRE(pre.ok());
            CHECK(same_bits(ref->acc, pre->acc));
            continue;
        }
        const Tensor a = i % 3 ? random_tensor<std::uint8_t>(rng, as) : random_tensor<std::int8_t>(rng, as);
        const Tensor b = random_tensor<std::int8_t>(rng, bs);
        std::vector<std::int32_t> zp_a(static_cast<std::size_t>(M)), zp_b(static_cast<std::size_t>(N));
        for (auto& z : zp_a) z = static_cast<std::int32_t>(pick(rng, -128, 127));
        for (auto& z : zp_b) z = static_cast<std::int32_t>(pick(rng, -128, 127));
        const Tensor bias = random_tensor<std::int32_t>(rng, Shape{N});
        const Tensor* bp = with_bias ? &bias : nullptr;
        const auto pb = sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_b)));
        auto run_all = [&](const auto& pa) {
            auto ref = run_matmul_contract(pa, pb, a, b, bp, ContractOptions{false});
            auto fast = run_matmul_contract(pa, pb, a, b, bp);
            REQUIRE(ref.ok());
            REQUIRE(fast.ok());
            CHECK(same_bits(ref->acc, fast->acc));
            auto packed = pack_matmul_b(pb, b);
            REQUIRE(packed.ok());
            auto pre = run_matmul_contract(pa, *packed, a, bp);
            REQUIRE(pre.ok());
            CHECK(same_bits(ref->acc, pre->acc));
            CHECK(pre->acc_range.lo == ref->acc_range.lo);
            CHECK(pre->acc_range.hi == ref->acc_range.hi);
        };
        if (i % 3 == 1)
            run_all(sub(widen(In<0, std::uint8_t>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_a))));
        else
            run_all(sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_a))));
    }
}

TEST_CASE("panel storage is the narrowest type of the proved range, and every storage gives the reference's sums") {
    using namespace expr;
    std::mt19937 rng(5);
    const Tensor a = random_tensor<std::int8_t>(rng, Shape{9, 37}), b = random_tensor<std::int8_t>(rng, Shape{37, 45});
    const auto pa = widen(In<0, std::int8_t>{});
    auto check = [&](const auto& pb, gemm::Storage expected) {
        auto packed = pack_matmul_b(pb, b);
        REQUIRE(packed.ok());
        REQUIRE(packed->panels.size() == 1);
        CHECK(packed->panels[0].storage == expected);
        auto ref = run_matmul_contract(pa, pb, a, b, nullptr, ContractOptions{false});
        auto pre = run_matmul_contract(pa, *packed, a, nullptr);
        REQUIRE(ref.ok());
        REQUIRE(pre.ok());
        CHECK(same_bits(ref->acc, pre->acc));
    };
    check(widen(In<0, std::int8_t>{}), gemm::Storage::i8);                             // [-128, 127]
    check(sub(widen(In<0, std::int8_t>{}), cst(3)), gemm::Storage::i16);               // [-131, 124]
    check(mul(widen(In<0, std::int8_t>{}), cst(300)), gemm::Storage::i32);             // [-38400, 38100]
    CHECK(gemm::storage_for(numeric::Interval{-32768, 32767}) == gemm::Storage::i16);
    CHECK(gemm::storage_for(numeric::Interval{0, 32768}) == gemm::Storage::i32);
}

TEST_CASE("hand-computed engine block: 2x3 times 3x2 plus a column bias, then a row bias") {
    const std::vector<std::int32_t> a{1, 2, 3, -4, 5, -6};
    const std::vector<std::int32_t> b{7, 8, 9, 10, 11, -12};  // [3, 2]
    gemm::Panels p;
    gemm::pack_panels(b.data(), 3, 2, 2, gemm::Storage::i8, p);
    std::vector<std::int32_t> c(4, -1);
    const std::vector<std::int32_t> bias_cols{100, 200};
    gemm::run<std::int32_t>(2, a.data(), 3, p, 0, 2, c.data(), 2, nullptr, bias_cols.data());
    // row 0: 7 + 18 + 33 = 58, 8 + 20 - 36 = -8;  row 1: -28 + 45 - 66 = -49, -32 + 50 + 72 = 90
    CHECK(c == std::vector<std::int32_t>{158, 192, 51, 290});
    const std::vector<std::int32_t> bias_rows{1, -1};
    gemm::run<std::int32_t>(2, a.data(), 3, p, 0, 2, c.data(), 2, bias_rows.data(), nullptr);
    CHECK(c == std::vector<std::int32_t>{59, -7, -50, 89});
}

// ---- errors -----------------------------------------------------------------------------------------------------------

TEST_CASE("prepacking refuses operands of the wrong rank, and prepacked runs keep every rule of the plain API") {
    using namespace expr;
    const auto p8 = widen(In<0, std::int8_t>{});
    CHECK_RULE(pack_conv_weights(p8, Tensor::zeros(DType::i8, {2, 2})), "conv-weight-rank");
    CHECK_RULE(pack_matmul_b(p8, Tensor::zeros(DType::i8, {4})), "matmul-rank-at-least-2");
    auto pw = pack_conv_weights(p8, Tensor::zeros(DType::i8, {4, 3, 2, 2}));
    REQUIRE(pw.ok());
    CHECK_RULE(run_conv_contract(p8, *pw, Tensor::zeros(DType::i8, {1, 2, 4, 4}), nullptr, ConvParams{}),
               "conv-channels-match-groups");
    const Tensor b3 = Tensor::zeros(DType::i32, {3});
    CHECK_RULE(run_conv_contract(p8, *pw, Tensor::zeros(DType::i8, {1, 3, 4, 4}), &b3, ConvParams{}), "bias-shape");
    auto pb = pack_matmul_b(p8, Tensor::zeros(DType::i8, {5, 6}));
    REQUIRE(pb.ok());
    CHECK_RULE(run_matmul_contract(p8, *pb, Tensor::zeros(DType::i8, {2, 4}), nullptr), "matmul-inner-dims-match");
    // headroom with the packed range: 65,794 products of [-128, 127] x [-128, 127] (max 16,384) overflow int32
    const std::int64_t big = 140000;
    auto wide = pack_matmul_b(p8, Tensor::zeros(DType::i8, {big, 1}));
    REQUIRE(wide.ok());
    CHECK_RULE(run_matmul_contract(p8, *wide, Tensor::zeros(DType::i8, {1, big}), nullptr), "accumulator-fits-int32");
}

// ---- workspace --------------------------------------------------------------------------------------------------------

TEST_CASE("a workspace reused across shapes gives the reference's sums, and its result aliases the next call's") {
    using namespace expr;
    std::mt19937 rng(11);
    const auto p8 = sub(widen(In<0, std::int8_t>{}), cst(-3));
    ContractWorkspace ws;
    for (int i = 0; i < 12; ++i) {
        const ConvCase c = random_conv(rng);
        const Tensor x = random_tensor<std::int8_t>(rng, c.x), w = random_tensor<std::int8_t>(rng, c.w);
        auto packed = pack_conv_weights(p8, w);
        REQUIRE(packed.ok());
        auto ref = run_conv_contract(p8, p8, x, w, nullptr, c.p, ContractOptions{false});
        auto got = run_conv_contract(p8, *packed, x, nullptr, c.p, {}, "contract", &ws);
        REQUIRE(ref.ok());
        REQUIRE(got.ok());
        CHECK(same_bits(ref->acc, got->acc));
        const std::int64_t M = pick(rng, 1, 9), K = pick(rng, 1, 40), N = pick(rng, 1, 40);
        const Tensor a = random_tensor<std::int8_t>(rng, Shape{M, K}), b = random_tensor<std::int8_t>(rng, Shape{K, N});
        auto pb = pack_matmul_b(p8, b);
        REQUIRE(pb.ok());
        auto mref = run_matmul_contract(p8, p8, a, b, nullptr, ContractOptions{false});
        auto mgot = run_matmul_contract(p8, *pb, a, nullptr, {}, "contract", &ws);
        REQUIRE(mref.ok());
        REQUIRE(mgot.ok());
        CHECK(same_bits(mref->acc, mgot->acc));
    }
    // same shape twice: the second call reuses (and overwrites) the first result's storage
    const Tensor a1 = Tensor::from<std::int8_t>({1, 2}, {1, 2}), a2 = Tensor::from<std::int8_t>({1, 2}, {5, 7});
    auto pb = pack_matmul_b(widen(In<0, std::int8_t>{}), Tensor::from<std::int8_t>({2, 1}, {1, 1}));
    REQUIRE(pb.ok());
    auto r1 = run_matmul_contract(widen(In<0, std::int8_t>{}), *pb, a1, nullptr, {}, "contract", &ws);
    REQUIRE(r1.ok());
    CHECK(r1->acc.to_vector<std::int32_t>() == std::vector<std::int32_t>{3});
    auto r2 = run_matmul_contract(widen(In<0, std::int8_t>{}), *pb, a2, nullptr, {}, "contract", &ws);
    REQUIRE(r2.ok());
    CHECK(r2->acc.to_vector<std::int32_t>() == std::vector<std::int32_t>{12});
    CHECK(r1->acc.storage == r2->acc.storage);
}
