// ops/binary.hpp: Add, Sub, Mul, Min, Max with numpy broadcasting, float32 and quantized int8/uint8.
//   - golden cases: broadcasting [2,1,4,1] x [1,3,1,5], scalar x tensor, lower rank, NaN, operand order (seed B7);
//   - float32 against a double reference with tolerance 0 (IEEE +, -, * are correctly rounded, and the double
//     result of two floats rounds to the same float: exact for * and for +/- within 29 binades, and beyond that the
//     smaller operand is below half an ulp of the larger);
//   - quantized: within 1 LSB of the exact reference (dequantize both, op in double, round half to even, saturate)
//     over random scales 1e-4 .. 10 and zero points at the ends of the range; the max LSB error and the fraction of
//     elements off by one are printed (docs/numerics.md quotes them);
//   - scalar and SIMD paths bit-identical (a NaN result: NaN on both); errors name their rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/binary.hpp>
#include <support/indices.hpp>

namespace {

using namespace janus;
using namespace janus::ops;
namespace num = janus::numeric;

constexpr float nan_f = std::numeric_limits<float>::quiet_NaN();
constexpr float inf_f = std::numeric_limits<float>::infinity();

Tensor f32(const Shape& s, const std::vector<float>& v) { return Tensor::from<float>(s, v); }

/// Bit identity of two float vectors, except that any two NaNs match: when two NaNs meet (NaN + -NaN), which one
/// comes out depends on the compiler's operand order (expr.hpp), on either path.
bool same_floats(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
        if (!(std::isnan(a[k]) && std::isnan(b[k])) && std::memcmp(&a[k], &b[k], sizeof(float)) != 0) return false;
    return true;
}

template <class O>
Tensor run(const Tensor& a, const Tensor& b, std::optional<TensorType> out = std::nullopt, const OpContext& ctx = {}) {
    auto r = call<O>({a, b}, {}, std::move(out), ctx);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
    return *r;
}

/// The index of a broadcast input for output index i (right-aligned; extent 1 reads index 0).
Dims source_index(const Dims& i, const Shape& in) {
    Dims s = Dims::filled(in.size(), 0);
    const int off = i.size() - in.size();
    for (int k = 0; k < in.size(); ++k) s[k] = in[k] == 1 ? 0 : i[k + off];
    return s;
}

/// The exact operation in double; min/max return NaN when either operand is NaN (numpy).
template <class O>
double op_d(double a, double b) {
    if constexpr (std::is_same_v<O, Add>) return a + b;
    else if constexpr (std::is_same_v<O, Sub>) return a - b;
    else if constexpr (std::is_same_v<O, Mul>) return a * b;
    else if constexpr (std::is_same_v<O, Min>) return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b);
    else return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b);
}

/// Call f(type_identity<O>) for each of the five ops.
template <class F>
void for_each_op(F&& f) {
    f(std::type_identity<Add>{});
    f(std::type_identity<Sub>{});
    f(std::type_identity<Mul>{});
    f(std::type_identity<Min>{});
    f(std::type_identity<Max>{});
}

std::vector<float> random_floats(std::size_t n, std::mt19937& rng, bool specials) {
    static const float sp[] = {nan_f, -nan_f, inf_f, -inf_f, 0.0f, -0.0f, std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::min(), 1e30f, -1e-30f};
    std::uniform_real_distribution<float> u(-100.0f, 100.0f);
    std::uniform_int_distribution<int> pick(0, 9), which(0, static_cast<int>(std::size(sp)) - 1), bin(-60, 60);
    std::vector<float> v(n);
    for (auto& x : v) {
        const int p = pick(rng);
        if (specials && p == 0) x = sp[which(rng)];
        else if (p == 1) {
            const float m = u(rng);
            x = std::ldexp(m, bin(rng));
        } else x = u(rng);
    }
    return v;
}

/// Float result of O on broadcast inputs a, b, element by element against op_d rounded to float, bit for bit.
template <class O>
void check_float_against_double(const Tensor& a, const Tensor& b) {
    const Tensor y = run<O>(a, b);
    long bad = 0;
    std::string first;
    for (const auto& i : all_indices(y.shape())) {
        const float x0 = a.at<float>(source_index(i, a.shape())), x1 = b.at<float>(source_index(i, b.shape()));
        const float want = static_cast<float>(op_d<O>(x0, x1)), got = y.at<float>(i);
        const bool ok = std::isnan(want) ? std::isnan(got) : std::memcmp(&want, &got, sizeof got) == 0;
        if (!ok && bad++ == 0)
            first = std::to_string(x0) + " " + std::string(O::name.view()) + " " + std::to_string(x1) + " = " +
                    std::to_string(got) + ", want " + std::to_string(want);
    }
    CHECK_MESSAGE(bad == 0, O::name.view() << ": " << bad << " elements differ, first " << first);
}

// ---------------------------------------------------------------------------------------------------------------
// Quantized reference and measurement

template <class T>
std::vector<T> random_codes(std::size_t n, std::mt19937& rng) {
    std::uniform_int_distribution<int> u(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(u(rng));
    // the ends of the range, where saturation and the largest |x - zp| live
    if (n >= 4) v[0] = std::numeric_limits<T>::min(), v[1] = std::numeric_limits<T>::max();
    return v;
}

/// ONNX QuantizeLinear in double: saturate(round_half_even(y / s) + zp).
std::int32_t quantize_d(double y, double s, std::int32_t zp, DType d) {
    const double q = std::nearbyint(y / s) + zp;
    return static_cast<std::int32_t>(std::clamp<double>(q, qmin(d), qmax(d)));
}

/// Scale log-uniform in [1e-4, 10].
float random_scale(std::mt19937& rng) {
    return static_cast<float>(std::pow(10.0, std::uniform_real_distribution<double>(-4.0, 1.0)(rng)));
}
/// Zero point: an end of the range half of the time, else anywhere.
std::int32_t random_zp(DType d, std::mt19937& rng) {
    const int p = std::uniform_int_distribution<int>(0, 3)(rng);
    if (p == 0) return qmin(d);
    if (p == 1) return qmax(d);
    return std::uniform_int_distribution<std::int32_t>(qmin(d), qmax(d))(rng);
}

struct LsbStats {
    int max_err = 0;
    long off_by_one = 0;
    long total = 0;
    long unsaturated = 0;  ///< elements whose reference is strictly inside the output range
    std::string worst;  ///< the first element with the largest error
};

/// One random quantized call of O: inputs a [8, 32] and b of a random broadcastable shape, random parameters.
template <class O, class T>
void measure_quantized(std::mt19937& rng, LsbStats& st) {
    const DType d = dtype_v<T>;
    const Shape sa{8, 32};
    const Shape shapes_b[] = {Shape{8, 32}, Shape{32}, Shape{8, 1}, Shape{}};
    const Shape sb = shapes_b[std::uniform_int_distribution<int>(0, 3)(rng)];
    // one draw per statement: the order of evaluation of function arguments is unspecified (gcc and clang differ)
    auto random_quant = [&] {
        const float s = random_scale(rng);
        const std::int32_t zp = random_zp(d, rng);
        return num::make_quant(d, s, zp).value();
    };
    const auto qa = random_quant();
    const auto qb = random_quant();
    const auto qo = random_quant();
    const Tensor a = Tensor::from<T>(sa, random_codes<T>(static_cast<std::size_t>(element_count(sa)), rng), qa);
    const Tensor b = Tensor::from<T>(sb, random_codes<T>(static_cast<std::size_t>(element_count(sb)), rng), qb);
    auto r = call<O>({a, b}, {}, TensorType{d, sa, qo});
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
    for (const auto& i : all_indices(sa)) {
        const double ra = static_cast<double>(qa.scale()) * (a.at<T>(i) - qa.zero_point());
        const double rb = static_cast<double>(qb.scale()) * (b.at<T>(source_index(i, sb)) - qb.zero_point());
        const std::int32_t want = quantize_d(op_d<O>(ra, rb), qo.scale(), qo.zero_point(), d);
        const int err = std::abs(static_cast<int>(r->template at<T>(i)) - want);
        if (err > st.max_err)
            st.worst = std::string(O::name.view()) + " a=" + qa.str() + " b=" + qb.str() + " out=" + qo.str() +
                       ": codes " + std::to_string(a.at<T>(i)) + ", " + std::to_string(b.at<T>(source_index(i, sb))) +
                       " give " + std::to_string(r->template at<T>(i)) + ", want " + std::to_string(want);
        st.max_err = std::max(st.max_err, err);
        st.off_by_one += err == 1;
        ++st.total;
        st.unsaturated += want > qmin(d) && want < qmax(d);
    }
}

std::string summary(const LsbStats& s) {
    char b[160];
    const double off = static_cast<double>(s.off_by_one);
    std::snprintf(b, sizeof b,
                  "max error %d LSB; off by one: %ld of %ld elements (%.3f%%; %.3f%% of the %ld unsaturated)",
                  s.max_err, s.off_by_one, s.total, 100.0 * off / static_cast<double>(s.total),
                  100.0 * off / static_cast<double>(std::max(s.unsaturated, 1L)), s.unsaturated);
    return b;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Golden cases

TEST_CASE("broadcasting [2,1,4,1] x [1,3,1,5] gives [2,3,4,5] with out[i,j,k,l] = a[i,0,k,0] op b[0,j,0,l]") {
    std::vector<float> va(8), vb(15);
    for (std::size_t k = 0; k < va.size(); ++k) va[k] = static_cast<float>(k) * 10.0f;
    for (std::size_t k = 0; k < vb.size(); ++k) vb[k] = static_cast<float>(k) * 0.5f - 3.0f;
    const Tensor a = f32(Shape{2, 1, 4, 1}, va), b = f32(Shape{1, 3, 1, 5}, vb);
    for (bool simd : {false, true}) {
        const Tensor y = run<Sub>(a, b, std::nullopt, {simd});
        REQUIRE(y.shape() == Shape{2, 3, 4, 5});
        bool all = true;
        for (const auto& i : all_indices(y.shape()))
            all = all && y.at<float>(i) == a.at<float>(Dims{i[0], 0, i[2], 0}) - b.at<float>(Dims{0, i[1], 0, i[3]});
        CHECK(all);
        // and the other operand order broadcasts the same way
        const Tensor z = run<Sub>(b, a, std::nullopt, {simd});
        REQUIRE(z.shape() == Shape{2, 3, 4, 5});
        CHECK(z.to_vector<float>() == [&] {
            std::vector<float> v;
            for (float x : y.to_vector<float>()) v.push_back(-x);
            return v;
        }());
    }
}

TEST_CASE("scalar x tensor and lower rank broadcast right-aligned") {
    const Tensor s = f32(Shape{}, {2.0f});
    const Tensor t = f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK(run<Mul>(s, t).to_vector<float>() == std::vector<float>{2, 4, 6, 8, 10, 12});
    CHECK(run<Sub>(t, s).to_vector<float>() == std::vector<float>{-1, 0, 1, 2, 3, 4});
    CHECK(run<Sub>(s, t).to_vector<float>() == std::vector<float>{1, 0, -1, -2, -3, -4});
    const Tensor row = f32(Shape{3}, {10, 20, 30});
    const Tensor r = run<Add>(t, row);
    CHECK(r.shape() == Shape{2, 3});
    CHECK(r.to_vector<float>() == std::vector<float>{11, 22, 33, 14, 25, 36});
    CHECK(run<Max>(row, t).to_vector<float>() == std::vector<float>{10, 20, 30, 10, 20, 30});
    std::vector<float> big(2 * 3 * 4 * 5);
    for (std::size_t k = 0; k < big.size(); ++k) big[k] = static_cast<float>(k);
    const Tensor b4 = f32(Shape{2, 3, 4, 5}, big), last = f32(Shape{5}, {0, 100, 200, 300, 400});
    const auto v = run<Add>(b4, last).to_vector<float>();
    for (std::size_t k = 0; k < v.size(); ++k) CHECK(v[k] == big[k] + 100.0f * static_cast<float>(k % 5));
    const Tensor s1 = f32(Shape{1}, {-1.0f});  // [1] x [] -> [1]
    CHECK(run<Add>(s1, s).shape() == Shape{1});
    CHECK(run<Add>(s, s).shape() == Shape{});
}

TEST_CASE("NaN: Add, Sub, Mul propagate it; Min and Max return NaN when EITHER operand is NaN") {
    const Tensor a = f32(Shape{4}, {nan_f, 1.0f, nan_f, -inf_f});
    const Tensor b = f32(Shape{4}, {1.0f, nan_f, nan_f, nan_f});
    for (bool simd : {false, true}) {
        for (float y : run<Add>(a, b, std::nullopt, {simd}).to_vector<float>()) CHECK(std::isnan(y));
        for (float y : run<Mul>(a, b, std::nullopt, {simd}).to_vector<float>()) CHECK(std::isnan(y));
        for (float y : run<Min>(a, b, std::nullopt, {simd}).to_vector<float>()) CHECK(std::isnan(y));
        for (float y : run<Max>(a, b, std::nullopt, {simd}).to_vector<float>()) CHECK(std::isnan(y));
        for (float y : run<Max>(b, a, std::nullopt, {simd}).to_vector<float>()) CHECK(std::isnan(y));
        // a NaN scalar broadcast over a tensor poisons every element
        std::vector<float> ones(37, 1.0f);
        for (float y : run<Min>(f32(Shape{37}, ones), f32(Shape{}, {nan_f}), std::nullopt, {simd}).to_vector<float>())
            CHECK(std::isnan(y));
        for (float y : run<Max>(f32(Shape{}, {nan_f}), f32(Shape{37}, ones), std::nullopt, {simd}).to_vector<float>())
            CHECK(std::isnan(y));
    }
    CHECK(std::isnan(run<Add>(f32(Shape{1}, {inf_f}), f32(Shape{1}, {-inf_f})).to_vector<float>()[0]));
    CHECK(run<Min>(f32(Shape{2}, {-0.0f, 3.0f}), f32(Shape{2}, {-inf_f, inf_f})).to_vector<float>() ==
          std::vector<float>{-inf_f, 3.0f});
}

TEST_CASE("seed B7, float: Sub(x, 0) is x and Sub(0, x) is -x; the operand order is never swapped") {
    std::mt19937 rng(0xB7);
    const auto xs = random_floats(101, rng, true);
    const Tensor x = f32(Shape{101}, xs), zero = f32(Shape{}, {0.0f});
    const auto x_minus_0 = run<Sub>(x, zero).to_vector<float>();
    const auto zero_minus_x = run<Sub>(zero, x).to_vector<float>();
    for (std::size_t k = 0; k < xs.size(); ++k) {
        if (std::isnan(xs[k])) {
            CHECK(std::isnan(x_minus_0[k]));
            CHECK(std::isnan(zero_minus_x[k]));
            continue;
        }
        CHECK(x_minus_0[k] == xs[k]);
        CHECK(zero_minus_x[k] == -xs[k]);
    }
    CHECK(run<Sub>(f32(Shape{1}, {5.0f}), f32(Shape{1}, {3.0f})).to_vector<float>()[0] == 2.0f);
    CHECK(run<Sub>(f32(Shape{1}, {3.0f}), f32(Shape{1}, {5.0f})).to_vector<float>()[0] == -2.0f);
}

TEST_CASE("seed B7, quantized int8 and uint8: Sub(x, 0) == x and Sub(0, x) == -x (saturated), order preserved") {
    for (DType d : {DType::i8, DType::u8}) {
        CAPTURE(dtype_name(d));
        const std::int32_t zp = d == DType::i8 ? 0 : 128;  // a zero point that can represent -x
        const auto q = num::make_quant(d, 0.05f, zp).value();
        const auto qz = num::make_quant(d, 0.2f, d == DType::i8 ? -7 : 3).value();  // the 0 has its own parameters
        visit_quant_dtype(d, [&](auto tag) {
            using T = typename decltype(tag)::type;
            std::vector<T> codes(256);
            for (int k = 0; k < 256; ++k)
                codes[static_cast<std::size_t>(k)] = static_cast<T>(std::numeric_limits<T>::min() + k);
            const Tensor x = Tensor::from<T>(Shape{256}, codes, q);
            const Tensor zero = Tensor::from<T>(Shape{1}, {static_cast<T>(qz.zero_point())}, qz);
            for (bool simd : {false, true}) {
                const auto xm0 = run<Sub>(x, zero, TensorType{d, Shape{256}, q}, {simd}).template to_vector<T>();
                const auto zmx = run<Sub>(zero, x, TensorType{d, Shape{256}, q}, {simd}).template to_vector<T>();
                CHECK(xm0 == codes);
                std::vector<T> neg(256);
                for (int k = 0; k < 256; ++k) {
                    const int v = 2 * zp - codes[static_cast<std::size_t>(k)];
                    neg[static_cast<std::size_t>(k)] = static_cast<T>(std::clamp(v, qmin(d), qmax(d)));
                }
                CHECK(zmx == neg);
            }
        });
    }
}

// ---------------------------------------------------------------------------------------------------------------
// float32 against double

TEST_CASE("float32 Add, Sub, Mul, Min, Max equal the double reference rounded to float (tolerance 0)") {
    std::mt19937 rng(0xF32);
    const Shape pairs[][2] = {{Shape{1000}, Shape{1000}}, {Shape{7, 13}, Shape{13}}, {Shape{3, 1, 33}, Shape{5, 1}},
                              {Shape{}, Shape{100}}};
    for (const auto& p : pairs) {
        const Tensor a = f32(p[0], random_floats(static_cast<std::size_t>(element_count(p[0])), rng, true));
        const Tensor b = f32(p[1], random_floats(static_cast<std::size_t>(element_count(p[1])), rng, true));
        for_each_op([&](auto tag) {
            using O = typename decltype(tag)::type;
            check_float_against_double<O>(a, b);
            check_float_against_double<O>(b, a);
        });
    }
}

// ---------------------------------------------------------------------------------------------------------------
// quantized

TEST_CASE("quantized Add, Sub, Mul, Min, Max are within 1 LSB of the exact reference over random scales 1e-4..10") {
    for_each_op([&](auto tag) {
        using O = typename decltype(tag)::type;
        LsbStats s8, su8;
        std::mt19937 rng(0x0B1 + static_cast<std::uint32_t>(O::kind));
        for (int trial = 0; trial < 300; ++trial) {
            measure_quantized<O, std::int8_t>(rng, s8);
            measure_quantized<O, std::uint8_t>(rng, su8);
        }
        MESSAGE(O::name.view() << " int8: " << summary(s8));
        MESSAGE(O::name.view() << " uint8: " << summary(su8));
        CHECK_MESSAGE(s8.max_err <= 1, s8.worst);
        CHECK_MESSAGE(su8.max_err <= 1, su8.worst);
    });
}

TEST_CASE("quantized scale extremes: ratios up to 10^6 and down to 10^-9 are planned, proved and correct") {
    // mul with s_a s_b / s_out = 10^6 used to be refused by range analysis (the rescaled product reached 6.5e10);
    // the accumulator clamp saturates it early without changing any unsaturated result.
    const float scales[] = {1e-4f, 0.03f, 10.0f};
    for (DType d : {DType::i8, DType::u8}) {
        visit_quant_dtype(d, [&](auto tag) {
            using T = typename decltype(tag)::type;
            std::vector<T> codes;  // every 4th code and both ends: 65 x 65 pairs per call
            for (int k = 0; k < 256; k += 4) codes.push_back(static_cast<T>(std::numeric_limits<T>::min() + k));
            codes.push_back(std::numeric_limits<T>::max());
            const auto n = static_cast<std::int64_t>(codes.size());
            const std::int32_t zps[] = {qmin(d), qmax(d)};
            for (float sa : scales)
                for (float sb : scales)
                    for (float so : scales)
                        for (std::int32_t zp : zps) {
                            const auto qa = num::make_quant(d, sa, zp).value();
                            const auto qb = num::make_quant(d, sb, zps[0] + zps[1] - zp).value();
                            const auto qo = num::make_quant(d, so, zp).value();
                            const Tensor a = Tensor::from<T>(Shape{n, 1}, codes, qa);
                            const Tensor b = Tensor::from<T>(Shape{n}, codes, qb);  // every pair of codes
                            for_each_op([&](auto op) {
                                using O = typename decltype(op)::type;
                                CAPTURE(O::name.view());
                                CAPTURE(qa.str());
                                CAPTURE(qb.str());
                                CAPTURE(qo.str());
                                auto r = call<O>({a, b}, {}, TensorType{d, Shape{n, n}, qo});
                                REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message()));
                                const auto got = r->template to_vector<T>();
                                int worst = 0;
                                for (std::size_t i = 0; i < codes.size(); ++i)
                                    for (std::size_t j = 0; j < codes.size(); ++j) {
                                        const double ra = static_cast<double>(sa) * (codes[i] - qa.zero_point());
                                        const double rb = static_cast<double>(sb) * (codes[j] - qb.zero_point());
                                        const int want = quantize_d(op_d<O>(ra, rb), so, zp, d);
                                        worst = std::max(worst, std::abs(got[i * codes.size() + j] - want));
                                    }
                                CHECK(worst <= 1);
                            });
                        }
        });
    }
}

TEST_CASE("the quantized output carries the caller's quantization, never an input's (seed A10)") {
    const auto qa = num::make_quant(DType::i8, 0.1f, 3).value();
    const auto qo = num::make_quant(DType::i8, 0.3f, -5).value();
    const Tensor a = Tensor::from<std::int8_t>(Shape{2}, {10, 20}, qa);
    const Tensor y = run<Add>(a, a, TensorType{DType::i8, Shape{2}, qo});
    CHECK(y.quant == qo);
    // (10 - 3) * 0.1 * 2 = 1.4 -> 1.4 / 0.3 = 4.67 -> 5 - 5 = 0; (20 - 3) * 0.2 = 3.4 -> 11.33 -> 11 - 5 = 6
    CHECK(y.to_vector<std::int8_t>() == std::vector<std::int8_t>{0, 6});
}

// ---------------------------------------------------------------------------------------------------------------
// scalar vs SIMD

TEST_CASE("every binary op: scalar and SIMD paths are bit-identical on sizes 1, 7, 13, 33, 100 (float and quantized)") {
    std::mt19937 rng(0x51D);
    for (std::int64_t n : {1, 7, 13, 33, 100}) {
        CAPTURE(n);
        const Shape shapes[][2] = {{Shape{n}, Shape{n}}, {Shape{3, n}, Shape{n}}, {Shape{3, n}, Shape{3, 1}},
                                   {Shape{}, Shape{n}}};
        for (const auto& p : shapes) {
            const Tensor a = f32(p[0], random_floats(static_cast<std::size_t>(element_count(p[0])), rng, true));
            const Tensor b = f32(p[1], random_floats(static_cast<std::size_t>(element_count(p[1])), rng, true));
            const auto qa = num::make_quant(DType::i8, 0.05f, -128).value();
            const auto qb = num::make_quant(DType::i8, 0.3f, 127).value();
            const auto qo = num::make_quant(DType::i8, 0.11f, 5).value();
            const auto ca = random_codes<std::int8_t>(static_cast<std::size_t>(element_count(p[0])), rng);
            const auto cb = random_codes<std::int8_t>(static_cast<std::size_t>(element_count(p[1])), rng);
            const Tensor ia = Tensor::from<std::int8_t>(p[0], ca, qa), ib = Tensor::from<std::int8_t>(p[1], cb, qb);
            const Shape out = broadcast_shapes(p[0], p[1]).value();
            for_each_op([&](auto tag) {
                using O = typename decltype(tag)::type;
                CAPTURE(O::name.view());
                const auto fs = run<O>(a, b, std::nullopt, {false}).template to_vector<float>();
                const auto fv = run<O>(a, b, std::nullopt, {true}).template to_vector<float>();
                CHECK(same_floats(fs, fv));
                const TensorType ot{DType::i8, out, qo};
                CHECK(run<O>(ia, ib, ot, {false}).template to_vector<std::int8_t>() ==
                      run<O>(ia, ib, ot, {true}).template to_vector<std::int8_t>());
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// errors

TEST_CASE("a quantized binary op without an output quantization is refused: output-quantization-required") {
    const auto q = num::make_quant(DType::u8, 0.1f, 0).value();
    const Tensor a = Tensor::from<std::uint8_t>(Shape{2}, {1, 2}, q);
    auto r = call<Add>({a, a});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "output-quantization-required");
    CHECK(r.error().input == "Add");
    CHECK(r.error().position == "output");
}

TEST_CASE("binary ops refuse per-axis inputs, mixed dtypes and incompatible broadcasts") {
    const auto q8 = num::make_quant(DType::i8, 0.1f, 0).value();
    const auto qu8 = num::make_quant(DType::u8, 0.1f, 0).value();
    const auto per_axis = num::make_quant_per_axis(DType::i8, {0.1f, 0.2f}, {0, 0}, 0, Shape{2, 3}).value();
    const Tensor pa = Tensor::from<std::int8_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}, per_axis);
    const Tensor a8 = Tensor::from<std::int8_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}, q8);
    const Tensor au8 = Tensor::from<std::uint8_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}, qu8);
    const Tensor f = f32(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const TensorType out8{DType::i8, Shape{2, 3}, q8};

    auto r = call<Mul>({a8, pa}, {}, out8);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "per-tensor-quantization");
    CHECK(r.error().input == "Mul.input[1]");

    auto mix_q = call<Add>({a8, au8}, {}, out8);
    REQUIRE_FALSE(mix_q.ok());
    CHECK(mix_q.error().rule == "same-storage-dtype");
    CHECK(mix_q.error().input == "Add.input[1]");

    auto q_then_f = call<Sub>({a8, f}, {}, out8);
    REQUIRE_FALSE(q_then_f.ok());
    CHECK(q_then_f.error().rule == "quantized-input");

    auto f_then_q = call<Sub>({f, a8});
    REQUIRE_FALSE(f_then_q.ok());
    CHECK(f_then_q.error().rule == "float-or-quantized");
    CHECK(f_then_q.error().input == "Sub.input[1]");

    // plain integers of two dtypes (the plain-integer kernels: tests/ops_elementwise/integer.cpp)
    auto i32 = call<Max>({Tensor::from<std::int32_t>(Shape{1}, {1}), Tensor::from<std::int64_t>(Shape{1}, {2})});
    REQUIRE_FALSE(i32.ok());
    CHECK(i32.error().rule == "same-storage-dtype");

    auto bc = call<Add>({f, f32(Shape{4}, {1, 2, 3, 4})});
    REQUIRE_FALSE(bc.ok());
    CHECK(bc.error().rule == "broadcast-compatible");
    CHECK(bc.error().input == "Add.input[1]");
    CHECK(bc.error().position == "axis 0");

    auto bc2 = call<Min>({f32(Shape{2, 1, 4, 1}, std::vector<float>(8)), f32(Shape{3, 1, 5}, std::vector<float>(15)),
                          f32(Shape{1}, {0.0f})});
    REQUIRE_FALSE(bc2.ok());
    CHECK(bc2.error().rule == "input-count");

    auto wrong_out = call<Add>({f, f}, {}, TensorType{DType::f32, Shape{3, 2}, std::nullopt});
    REQUIRE_FALSE(wrong_out.ok());
    CHECK(wrong_out.error().rule == "output-type-matches-inference");
}

TEST_CASE("binary ops have no attributes: call_with refuses any") {
    const std::vector<Tensor> in{f32(Shape{1}, {1.0f}), f32(Shape{1}, {2.0f})};
    auto r = call_with<Add>(in, {{"broadcast", std::int64_t{1}}});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().rule == "known-attribute");
    CHECK(r.error().position == "attribute broadcast");
    auto ok = call_with<Add>(in, {});
    REQUIRE(ok.ok());
    CHECK(ok->to_vector<float>() == std::vector<float>{3.0f});
}
