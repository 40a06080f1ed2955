// Fuzz target: the blocked contract engine (ops/gemm.hpp) against the plain reference loops of ops/contract.hpp.
//
// Input: a geometry, then a 32-bit data seed. Every byte string is valid (short inputs read zeros):
//   [0]    kind % 6: 0 conv int8 x, 1 conv uint8 x, 2 conv float, 3 matmul int8, 4 matmul uint8 a, 5 matmul float
//   conv:  spatial axes 1 + b % 3; groups 1 + b % 4, depthwise flag, Cin_g 1 + b % 4, Cout_g 1 + b % 33, batch
//          1 + b % 2; per axis: length 1 + b % 13 (3-D: 1 + b % 5), kernel 1 + b % 3, stride 1 + b % 3, dilation
//          1 + b % 2, pad begin b % 5, pad end b % 5
//   matmul: batch of a and b 1 + b % 3 each (rank 2 when both are 1 and a flag byte is even), M 1 + b % 19,
//          K 1 + b % 41, N 1 + b % 70
//   then: bias flag, value mode (0 uniform, 1 extremes of the type, 2 float specials: inf, NaN, -0 sprinkled),
//         the data seed (4 bytes, little endian), and for integer kinds the zero points (one byte per channel of x,
//         then per output channel of w; matmul: one for a, then one per column of b)
// Properties (a __builtin_trap() when broken), for every decoded case:
//   1. the reference (ContractOptions{.simd = false}) and the engine (.simd = true) both succeed or both fail with
//      the same rule;
//   2. on success the accumulators are bit-identical (float compared by bit pattern; two NaNs match whatever their
//      payloads, which are not promised), as are acc_range and terms;
//   3. the prepacked overload with a ContractWorkspace gives the same bits, twice in a row (workspace reuse).
// Geometries that do not fit (window larger than the padded input, mismatched batch axes) must fail the same way
// on both paths: that is part of property 1.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include <janus/ops/contract.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "contract_engine: property broken: %s\n", what);
        __builtin_trap();
    }
}

struct Reader {
    const std::uint8_t* p;
    std::size_t n;
    std::size_t i = 0;
    std::uint8_t u8() { return i < n ? p[i++] : 0; }
    std::int64_t pick(int modulo, int base = 0) { return base + u8() % modulo; }
};

bool same_bits(const Tensor& a, const Tensor& b) {
    if (a.dtype != b.dtype || !(a.shape() == b.shape())) return false;
    if (a.dtype == DType::f32) {
        const auto va = a.to_vector<float>(), vb = b.to_vector<float>();
        for (std::size_t i = 0; i < va.size(); ++i)
            if (!(std::isnan(va[i]) && std::isnan(vb[i])) && std::memcmp(&va[i], &vb[i], sizeof(float)) != 0)
                return false;
        return true;
    }
    return a.to_vector<std::int32_t>() == b.to_vector<std::int32_t>();
}

template <class T>
Tensor data(std::mt19937& rng, const Shape& s, int mode) {
    std::vector<T> v(static_cast<std::size_t>(element_count(s)));
    if constexpr (std::is_same_v<T, float>) {
        std::uniform_real_distribution<float> d(-4.0f, 4.0f);
        const float specials[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(), -0.0f, 0.0f};
        for (auto& x : v) x = mode == 2 && rng() % 8 == 0 ? specials[rng() % 5] : d(rng);
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
        std::uniform_int_distribution<std::int32_t> d(-1000000, 1000000);
        for (auto& x : v) x = d(rng);
    } else {
        constexpr int lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
        std::uniform_int_distribution<int> d(lo, hi);
        for (auto& x : v) x = static_cast<T>(mode == 1 ? (rng() % 2 ? lo : hi) : d(rng));
    }
    return Tensor::from<T>(s, v);
}

/// Property 1 and 2 for two results of the same call.
void compare(const Result<Contracted>& ref, const Result<Contracted>& got, const char* what) {
    check(ref.ok() == got.ok(), what);
    if (!ref.ok()) {
        check(ref.error().rule == got.error().rule, what);
        return;
    }
    check(same_bits(ref->acc, got->acc), what);
    check(ref->terms == got->terms, what);
    check(ref->acc_range.lo == got->acc_range.lo && ref->acc_range.hi == got->acc_range.hi, what);
}

template <class TX>
void fuzz_conv(Reader& r, const Shape& xs, const Shape& ws, const ConvParams& p, bool bias_on, int mode,
               std::mt19937& rng) {
    using namespace expr;
    using Acc = std::conditional_t<std::is_same_v<TX, float>, float, std::int32_t>;
    const Tensor x = data<TX>(rng, xs, mode);
    const Tensor w = data<std::conditional_t<std::is_same_v<TX, float>, float, std::int8_t>>(rng, ws, mode);
    const Tensor bias = data<Acc>(rng, Shape{ws[0]}, mode);
    const Tensor* b = bias_on ? &bias : nullptr;
    ContractWorkspace space;
    auto run_all = [&](const auto& px, const auto& pw) {
        const auto ref = run_conv_contract(px, pw, x, w, b, p, ContractOptions{false});
        compare(ref, run_conv_contract(px, pw, x, w, b, p, ContractOptions{true}), "conv: engine vs reference");
        auto packed = pack_conv_weights(pw, w);
        if (!packed.ok()) return;
        for (int k = 0; k < 2; ++k)
            compare(ref, run_conv_contract(px, *packed, x, b, p, ContractOptions{true}, "contract", &space),
                    "conv: prepacked + workspace vs reference");
    };
    if constexpr (std::is_same_v<TX, float>) {
        (void)r;
        run_all(In<0, float>{}, In<0, float>{});
    } else {
        std::vector<std::int32_t> zp_x(static_cast<std::size_t>(xs[1])), zp_w(static_cast<std::size_t>(ws[0]));
        for (auto& z : zp_x) z = static_cast<std::int32_t>(std::numeric_limits<TX>::min() + r.u8());
        for (auto& z : zp_w) z = static_cast<std::int32_t>(-128 + r.u8());
        run_all(sub(widen(In<0, TX>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_x))),
                sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_w))));
    }
}

template <class TA>
void fuzz_matmul(Reader& r, const Shape& as, const Shape& bs, bool bias_on, int mode, std::mt19937& rng) {
    using namespace expr;
    using Acc = std::conditional_t<std::is_same_v<TA, float>, float, std::int32_t>;
    const Tensor a = data<TA>(rng, as, mode);
    const Tensor bt = data<std::conditional_t<std::is_same_v<TA, float>, float, std::int8_t>>(rng, bs, mode);
    const Tensor bias = data<Acc>(rng, Shape{bs[bs.size() - 1]}, mode);
    const Tensor* bp = bias_on ? &bias : nullptr;
    ContractWorkspace space;
    auto run_all = [&](const auto& pa, const auto& pb) {
        const auto ref = run_matmul_contract(pa, pb, a, bt, bp, ContractOptions{false});
        compare(ref, run_matmul_contract(pa, pb, a, bt, bp, ContractOptions{true}), "matmul: engine vs reference");
        auto packed = pack_matmul_b(pb, bt);
        if (!packed.ok()) return;
        for (int k = 0; k < 2; ++k)
            compare(ref, run_matmul_contract(pa, *packed, a, bp, ContractOptions{true}, "contract", &space),
                    "matmul: prepacked + workspace vs reference");
    };
    if constexpr (std::is_same_v<TA, float>) {
        (void)r;
        run_all(In<0, float>{}, In<0, float>{});
    } else {
        const auto zp_a = static_cast<std::int32_t>(std::numeric_limits<TA>::min() + r.u8());
        std::vector<std::int32_t> zp_b(static_cast<std::size_t>(bs[bs.size() - 1]));
        for (auto& z : zp_b) z = static_cast<std::int32_t>(-128 + r.u8());
        run_all(sub(widen(In<0, TA>{}), cst(zp_a)),
                sub(widen(In<0, std::int8_t>{}), chan<std::int32_t>(std::span<const std::int32_t>(zp_b))));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    Reader r{bytes, size};
    const int kind = static_cast<int>(r.pick(6));
    if (kind < 3) {
        const int spatial = static_cast<int>(r.pick(3, 1));
        const std::int64_t groups = r.pick(4, 1);
        const bool depthwise = groups > 1 && r.u8() % 2;
        const std::int64_t cin_g = depthwise ? 1 : r.pick(4, 1), cout_g = depthwise ? 1 : r.pick(33, 1);
        Shape xs{r.pick(2, 1), groups * cin_g}, ws{groups * cout_g, cin_g};
        ConvParams p;
        p.groups = groups;
        Dims s, d, pb, pe;
        for (int a = 0; a < spatial; ++a) {
            xs.push_back(r.pick(spatial == 3 ? 5 : 13, 1));
            ws.push_back(r.pick(3, 1));
            s.push_back(r.pick(3, 1));
            d.push_back(r.pick(2, 1));
            pb.push_back(r.pick(5));
            pe.push_back(r.pick(5));
        }
        p.window = WindowParams{{}, s, d, pb, pe, false};
        const bool bias_on = r.u8() % 2;
        const int mode = static_cast<int>(r.pick(3));
        std::uint32_t seed = 0;
        for (int k = 0; k < 4; ++k) seed |= static_cast<std::uint32_t>(r.u8()) << (8 * k);
        std::mt19937 rng(seed);
        if (kind == 0) fuzz_conv<std::int8_t>(r, xs, ws, p, bias_on, mode, rng);
        else if (kind == 1) fuzz_conv<std::uint8_t>(r, xs, ws, p, bias_on, mode, rng);
        else fuzz_conv<float>(r, xs, ws, p, bias_on, mode, rng);
        return 0;
    }
    const std::int64_t ba = r.pick(3, 1), bb = r.pick(3, 1);
    const bool rank2 = ba == 1 && bb == 1 && r.u8() % 2 == 0;
    const std::int64_t M = r.pick(19, 1), K = r.pick(41, 1), N = r.pick(70, 1);
    const Shape as = rank2 ? Shape{M, K} : Shape{ba, M, K};
    const Shape bs = rank2 ? Shape{K, N} : Shape{bb, K, N};
    const bool bias_on = r.u8() % 2;
    const int mode = static_cast<int>(r.pick(3));
    std::uint32_t seed = 0;
    for (int k = 0; k < 4; ++k) seed |= static_cast<std::uint32_t>(r.u8()) << (8 * k);
    std::mt19937 rng(seed);
    if (kind == 3) fuzz_matmul<std::int8_t>(r, as, bs, bias_on, mode, rng);
    else if (kind == 4) fuzz_matmul<std::uint8_t>(r, as, bs, bias_on, mode, rng);
    else fuzz_matmul<float>(r, as, bs, bias_on, mode, rng);
    return 0;
}
