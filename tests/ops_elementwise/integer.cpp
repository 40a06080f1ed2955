// Plain (non-quantized) integer tensors: Add, Sub, Mul, Min, Max and Clip on int8, uint8, int16, uint16, int32, uint32
// and int64.
//   - the expression primitives they are built from (ops/expr.hpp): wrap<T> (narrowing modulo 2^bits) on int32
//     lanes, scalar == SIMD; int64 lanes (scalar only); the range proof's exemption of ring nodes under a wrap;
//   - every op x dtype against an independent reference (exact arithmetic in __int128, reduced modulo 2^bits), on
//     random values and the type's edges, with broadcasting, scalar and SIMD paths;
//   - golden wrap-around cases (uint8 250 + 10 = 4, int8 127 + 1 = -128, int64 INT64_MAX + 1);
//   - Clip with integer bounds, missing bounds, min > max, bounds beyond the type; the refusals (clip-bound-type,
//     plain-and-quantized, same-storage-dtype, plain-integer-output, float-or-quantized for ops without plain
//     integers).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <janus/ops/binary.hpp>
#include <janus/ops/unary.hpp>
#include <support/check_rule.hpp>
#include <support/indices.hpp>

namespace integer_test {
namespace {

using namespace janus;
using namespace janus::ops;
namespace num = janus::numeric;

template <class T>
using lim = std::numeric_limits<T>;
__extension__ typedef __int128 i128;  // exact reference arithmetic (__extension__: no -Wpedantic warning)

/// v modulo 2^bits(T), as T (two's complement), computed from the exact value.
template <class T>
T reduce(i128 v) {
    const i128 m = static_cast<i128>(1) << (8 * sizeof(T));
    i128 r = v % m;
    if (r < 0) r += m;
    if (std::is_signed_v<T> && r > static_cast<i128>(lim<T>::max())) r -= m;
    return static_cast<T>(static_cast<std::int64_t>(r));
}

/// The exact numpy result of a binary op on plain integers.
template <class O, class T>
T reference(T a, T b) {
    const i128 x = a, y = b;
    if constexpr (std::is_same_v<O, Add>)
        return reduce<T>(x + y);
    else if constexpr (std::is_same_v<O, Sub>)
        return reduce<T>(x - y);
    else if constexpr (std::is_same_v<O, Mul>)
        return reduce<T>(x * y);
    else if constexpr (std::is_same_v<O, Min>)
        return std::min(a, b);
    else
        return std::max(a, b);
}

template <class T>
std::vector<T> edge_values() {
    return {lim<T>::min(), static_cast<T>(lim<T>::min() + 1), static_cast<T>(-1), 0, 1, 2,
            100,           static_cast<T>(lim<T>::max() - 1), lim<T>::max()};
}

template <class T>
std::vector<T> random_values(std::mt19937_64& rng, std::size_t n) {
    const auto edges = edge_values<T>();
    std::vector<T> v(n);
    for (auto& x : v) {
        const auto r = rng();
        x = r % 4 == 0 ? edges[(r >> 8) % edges.size()] : static_cast<T>(r >> 16);
    }
    return v;
}

template <class O>
Result<Tensor> run2(const Tensor& a, const Tensor& b, bool simd, std::optional<TensorType> out = std::nullopt) {
    return call<O>({a, b}, {}, std::move(out), OpContext{simd});
}

/// Every element of op(a, b) (shapes broadcast) against the reference, on both paths.
template <class O, class T>
void check_op(const Shape& sa, const Shape& sb, std::mt19937_64& rng) {
    const Tensor a = Tensor::from<T>(sa, random_values<T>(rng, static_cast<std::size_t>(element_count(sa))));
    const Tensor b = Tensor::from<T>(sb, random_values<T>(rng, static_cast<std::size_t>(element_count(sb))));
    const Shape so = broadcast_shapes(sa, sb, "test").value();
    for (bool simd : {false, true}) {
        auto y = run2<O>(a, b, simd);
        REQUIRE_MESSAGE(y.ok(), (y.ok() ? "" : y.error().message()));
        REQUIRE(y->dtype == dtype_v<T>);
        REQUIRE_FALSE(y->quant.has_value());
        REQUIRE(y->shape() == so);
        std::int64_t bad = 0;
        for_each_index(so, [&](const Dims& i) {
            const T want = reference<O, T>(a.at<T>(broadcast_source(i, sa)), b.at<T>(broadcast_source(i, sb)));
            if (y->template at<T>(i) != want) ++bad;
        });
        CHECK_MESSAGE(bad == 0, std::string(O::name.view()) << " " << dtype_name(dtype_v<T>) << " simd=" << simd << ": "
                                                            << bad << " elements differ");
    }
}

template <class O>
void check_all_dtypes(std::mt19937_64& rng) {
    for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{
             {Shape{37}, Shape{37}}, {Shape{2, 1, 19}, Shape{3, 1}}, {Shape{1}, Shape{4, 33}}, {Shape{}, Shape{5}}}) {
        check_op<O, std::int8_t>(sa, sb, rng);
        check_op<O, std::uint8_t>(sa, sb, rng);
        check_op<O, std::int32_t>(sa, sb, rng);
        check_op<O, std::int64_t>(sa, sb, rng);
        check_op<O, std::int16_t>(sa, sb, rng);
        check_op<O, std::uint16_t>(sa, sb, rng);
        check_op<O, std::uint32_t>(sa, sb, rng);
    }
}

template <class O, class T>
T one(T a, T b) {
    auto y = run2<O>(Tensor::from<T>(Shape{1}, {a}), Tensor::from<T>(Shape{1}, {b}), true);
    REQUIRE_MESSAGE(y.ok(), (y.ok() ? "" : y.error().message()));
    return y->template at<T>(Dims{0});
}

// ---- the expression primitives -------------------------------------------------------------------------------

/// map(e) over `in` (one input of type T) on both paths; the two results must agree.
template <class Out, class T, class E>
std::vector<Out> map1(const E& e, const std::vector<T>& in) {
    const Tensor x = Tensor::from<T>(Shape{static_cast<std::int64_t>(in.size())}, in);
    std::vector<Out> r[2];
    for (int simd = 0; simd < 2; ++simd) {
        Tensor y = Tensor::zeros(dtype_v<Out>, x.shape());
        const Tensor ins[1] = {x};
        auto st = run_map(e, std::span<const Tensor>(ins), y, MapOptions{simd == 1, -1});
        REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message()));
        r[simd] = y.to_vector<Out>();
    }
    CHECK(r[0] == r[1]);
    return r[1];
}

TEST_CASE("expr wrap<T>: narrowing modulo 2^bits, scalar == SIMD, and its printed form") {
    using namespace expr;
    std::vector<std::int32_t> v;
    for (std::int64_t k = -70000; k <= 70000; k += 997) v.push_back(static_cast<std::int32_t>(k));
    for (std::int32_t k : {-129, -128, -1, 0, 127, 128, 255, 256, lim<std::int32_t>::min(), lim<std::int32_t>::max()})
        v.push_back(k);
    const auto e8 = wrap<std::int8_t>(In<0, std::int32_t>{});
    const auto u8 = wrap<std::uint8_t>(In<0, std::int32_t>{});
    const auto i32 = wrap<std::int32_t>(add(In<0, std::int32_t>{}, cst(1)));
    const auto r8 = map1<std::int8_t>(e8, v);
    const auto ru8 = map1<std::uint8_t>(u8, v);
    const auto r32 = map1<std::int32_t>(i32, v);
    for (std::size_t k = 0; k < v.size(); ++k) {
        CHECK(r8[k] == reduce<std::int8_t>(v[k]));
        CHECK(ru8[k] == reduce<std::uint8_t>(v[k]));
        CHECK(r32[k] == reduce<std::int32_t>(static_cast<i128>(v[k]) + 1));
    }
    const auto r16 = map1<std::int16_t>(wrap<std::int16_t>(In<0, std::int32_t>{}), v);
    const auto ru16 = map1<std::uint16_t>(wrap<std::uint16_t>(In<0, std::int32_t>{}), v);
    for (std::size_t k = 0; k < v.size(); ++k) {
        CHECK(r16[k] == reduce<std::int16_t>(v[k]));
        CHECK(ru16[k] == reduce<std::uint16_t>(v[k]));
    }
    CHECK(to_string(e8) == "wrap<int8>(in0:int32)");
    CHECK(to_string(wrap<std::int64_t>(mul(In<0, std::int64_t>{}, cst<std::int64_t>(3000000000LL)))) ==
          "wrap<int64>(mul(in0:int64, 3000000000))");
}

TEST_CASE("expr int64 lanes: add/sub/mul wrap modulo 2^64, min/max/select exact, scalar path only") {
    using namespace expr;
    const std::int64_t big = lim<std::int64_t>::max();
    const std::vector<std::int64_t> v{lim<std::int64_t>::min(), -1, 0, 1, big, 3037000500LL, 1LL << 62};
    const auto e = wrap<std::int64_t>(add(mul(In<0, std::int64_t>{}, cst<std::int64_t>(4)), cst<std::int64_t>(1)));
    const auto r = map1<std::int64_t>(e, v);
    for (std::size_t k = 0; k < v.size(); ++k) CHECK(r[k] == reduce<std::int64_t>(static_cast<i128>(v[k]) * 4 + 1));
    const auto sel = select(gt(In<0, std::int64_t>{}, cst<std::int64_t>(big - 1)), cst<std::int64_t>(7),
                            max(In<0, std::int64_t>{}, cst<std::int64_t>(-5)));
    CHECK(map1<std::int64_t>(sel, v) == std::vector<std::int64_t>{-5, -1, 0, 1, 7, 3037000500LL, 1LL << 62});
    CHECK(check_ranges(e, {}, "t").ok());  // int64 lanes are not range-analysed
}

TEST_CASE("expr check_ranges: ring nodes under a wrap may leave int32, other nodes may not") {
    using namespace expr;
    const In<0, std::int32_t> a;
    const In<1, std::int32_t> b;
    // int32 add/mul overflow: refused bare, accepted under wrap (modulo 2^32 is the intended arithmetic)
    CHECK_RULE(check_ranges(add(a, b), {}, "t"), "intermediate-fits-int32");
    CHECK(check_ranges(wrap<std::int32_t>(add(a, b)), {}, "t").ok());
    CHECK(check_ranges(wrap<std::int8_t>(sub(mul(a, b), shl(neg(a), 3))), {}, "t").ok());
    // min of an overflowing sum is not the wrapped min: still refused under a wrap
    CHECK_RULE(check_ranges(wrap<std::int32_t>(min(add(a, b), cst(0))), {}, "t"), "intermediate-fits-int32");
    // clamp of an overflowing sum: refused under a wrap too
    CHECK_RULE(check_ranges(wrap<std::int32_t>(clamp(add(a, b), -5, 5)), {}, "t"), "intermediate-fits-int32");
    // outside any wrap, the same ring node is still proved
    CHECK_RULE(check_ranges(add(wrap<std::int32_t>(add(a, b)), a), {}, "t"), "intermediate-fits-int32");
}

// ---- the ops -------------------------------------------------------------------------------------------------

TEST_CASE("plain-integer Add, Sub, Mul, Min, Max: every dtype equals the numpy reference, with broadcasting") {
    std::mt19937_64 rng(20240611);
    check_all_dtypes<Add>(rng);
    check_all_dtypes<Sub>(rng);
    check_all_dtypes<Mul>(rng);
    check_all_dtypes<Min>(rng);
    check_all_dtypes<Max>(rng);
}

TEST_CASE("plain-integer wrap-around: uint8 250 + 10 = 4, int8 127 + 1 = -128, int32 and int64 limits") {
    CHECK(one<Add, std::uint8_t>(250, 10) == 4);
    CHECK(one<Sub, std::uint8_t>(3, 10) == 249);
    CHECK(one<Mul, std::uint8_t>(16, 17) == 16);  // 272 mod 256
    CHECK(one<Add, std::int8_t>(127, 1) == -128);
    CHECK(one<Sub, std::int8_t>(-128, 1) == 127);
    CHECK(one<Mul, std::int8_t>(-128, -1) == -128);
    CHECK(one<Add, std::int32_t>(lim<std::int32_t>::max(), 1) == lim<std::int32_t>::min());
    CHECK(one<Mul, std::int32_t>(65536, 65536) == 0);
    CHECK(one<Add, std::int64_t>(lim<std::int64_t>::max(), 1) == lim<std::int64_t>::min());
    CHECK(one<Sub, std::int64_t>(lim<std::int64_t>::min(), 1) == lim<std::int64_t>::max());
    CHECK(one<Mul, std::int64_t>(1LL << 62, 4) == 0);
    CHECK(one<Mul, std::int64_t>(3037000500LL, 3037000500LL) ==
          reduce<std::int64_t>(static_cast<i128>(3037000500LL) * 3037000500LL));
    CHECK(one<Add, std::int64_t>(1LL << 40, 3) == (1LL << 40) + 3);  // beyond int32 and exact
    CHECK(one<Min, std::int64_t>(-(1LL << 50), 1LL << 50) == -(1LL << 50));
    CHECK(one<Max, std::uint8_t>(255, 0) == 255);
    CHECK(one<Min, std::int8_t>(-128, 127) == -128);
    CHECK(one<Add, std::int16_t>(32767, 1) == -32768);
    CHECK(one<Mul, std::int16_t>(256, 256) == 0);
    CHECK(one<Sub, std::uint16_t>(0, 1) == 65535);
    CHECK(one<Mul, std::uint16_t>(300, 300) == 24464);  // 90000 mod 65536
    CHECK(one<Add, std::uint32_t>(4294967295u, 2) == 1);
    CHECK(one<Mul, std::uint32_t>(65536, 65537) == 65536);          // 2^32 + 2^16 mod 2^32
    CHECK(one<Max, std::uint32_t>(4294967295u, 0) == 4294967295u);  // compared as unsigned, not as int32
    CHECK(one<Min, std::uint32_t>(2147483648u, 1) == 1);
    CHECK(one<Min, std::uint16_t>(65535, 1) == 1);
}

TEST_CASE("plain-integer binary: the inferred type is the inputs' dtype without quantization") {
    const std::vector<TensorType> in{{DType::u8, Shape{2, 3}, std::nullopt}, {DType::u8, Shape{3}, std::nullopt}};
    auto t = Add::infer(in, {});
    REQUIRE(t.ok());
    CHECK(*t == TensorType{DType::u8, Shape{2, 3}, std::nullopt});
    const std::vector<TensorType> in64{{DType::i64, Shape{4}, std::nullopt}, {DType::i64, Shape{1}, std::nullopt}};
    CHECK(*Max::infer(in64, {}) == TensorType{DType::i64, Shape{4}, std::nullopt});
}

TEST_CASE("plain-integer refusals: mixed with quantized, mixed dtypes, a quantized output, ops without plain ints") {
    const auto q = num::make_quant(DType::u8, 0.1f, 3).value();
    const Tensor plain = Tensor::from<std::uint8_t>(Shape{2}, {1, 2});
    const Tensor quant = Tensor::from<std::uint8_t>(Shape{2}, {1, 2}, q);
    const Tensor plain_i8 = Tensor::from<std::int8_t>(Shape{2}, {1, 2});
    const Tensor f = Tensor::from<float>(Shape{2}, {1, 2});

    auto pq = call<Add>({plain, quant}, {}, TensorType{DType::u8, Shape{2}, q});
    CHECK_RULE(pq, "plain-and-quantized");
    CHECK(pq.error().input == "Add.input[1]");
    auto qp = call<Mul>({quant, plain}, {}, TensorType{DType::u8, Shape{2}, q});
    CHECK_RULE(qp, "plain-and-quantized");
    CHECK(qp.error().input == "Mul.input[1]");
    CHECK_RULE(call<Min>({plain, plain_i8}), "same-storage-dtype");
    CHECK_RULE(call<Max>({plain, f}), "same-storage-dtype");
    CHECK_RULE(call<Sub>({f, plain}), "same-storage-dtype");
    CHECK_RULE(call<Add>({plain, plain}, {}, TensorType{DType::u8, Shape{2}, q}), "plain-integer-output");
    CHECK_RULE(call<Clip>({plain}, {}, TensorType{DType::u8, Shape{2}, q}), "plain-integer-output");
    // run() called directly (no infer) refuses the same mixes
    CHECK_RULE(Add::run(std::vector<Tensor>{plain, plain_i8}, {}, TensorType{DType::u8, Shape{2}, std::nullopt}, {}),
               "same-storage-dtype");
    // ops that take no plain integers still refuse them with float-or-quantized
    CHECK_RULE(call<Abs>({plain_i8}), "float-or-quantized");
    CHECK_RULE(call<Relu>({Tensor::from<std::int64_t>(Shape{1}, {1})}), "float-or-quantized");
    CHECK_RULE(call<Sigmoid>({plain}), "float-or-quantized");
    // the quantized path is untouched: mixing float and quantized is refused as before
    CHECK_RULE(call<Sub>({f, quant}), "float-or-quantized");
}

// ---- Clip ----------------------------------------------------------------------------------------------------

template <class T>
std::vector<T> clip(const std::vector<T>& x, const AttrMap& attrs, bool simd = true) {
    const Tensor t = Tensor::from<T>(Shape{static_cast<std::int64_t>(x.size())}, x);
    auto y = call_with<Clip>(std::span<const Tensor>(&t, 1), attrs, std::nullopt, OpContext{simd});
    REQUIRE_MESSAGE(y.ok(), (y.ok() ? "" : y.error().message()));
    CHECK(y->dtype == dtype_v<T>);
    CHECK_FALSE(y->quant.has_value());
    return y->to_vector<T>();
}

AttrMap bounds(std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
    AttrMap m;
    if (lo) m["min_int"] = *lo;
    if (hi) m["max_int"] = *hi;
    return m;
}

template <class T>
void check_clip_dtype() {
    std::vector<T> x;
    for (int k = 0; k < 40; ++k)
        x.push_back(static_cast<T>(lim<T>::min() + (static_cast<i128>(lim<T>::max()) - lim<T>::min()) * k / 40));
    x.push_back(lim<T>::max());
    for (const auto& [lo, hi] : std::vector<std::pair<std::optional<std::int64_t>, std::optional<std::int64_t>>>{
             {-5, 9},
             {std::nullopt, 3},
             {7, std::nullopt},
             {std::nullopt, std::nullopt},
             {10, 2},
             {-1000, 1000},
             {lim<std::int64_t>::min(), lim<std::int64_t>::max()}}) {
        const auto got_s = clip<T>(x, bounds(lo, hi), false);
        const auto got_v = clip<T>(x, bounds(lo, hi), true);
        CHECK(got_s == got_v);
        const std::int64_t l = std::max<std::int64_t>(lo.value_or(lim<std::int64_t>::min()), lim<T>::min());
        const std::int64_t h = std::min<std::int64_t>(hi.value_or(lim<std::int64_t>::max()), lim<T>::max());
        for (std::size_t k = 0; k < x.size(); ++k) {
            const std::int64_t v = x[k];
            const std::int64_t want = std::min<std::int64_t>(std::max<std::int64_t>(v, l), h);  // numpy: min first
            CHECK_MESSAGE(static_cast<std::int64_t>(got_v[k]) == want, dtype_name(dtype_v<T>) << " x=" << v);
        }
    }
}

TEST_CASE("plain-integer Clip: every dtype, integer bounds, missing bounds are the type's limits, min > max") {
    check_clip_dtype<std::int8_t>();
    check_clip_dtype<std::uint8_t>();
    check_clip_dtype<std::int32_t>();
    check_clip_dtype<std::int64_t>();
    check_clip_dtype<std::int16_t>();
    check_clip_dtype<std::uint16_t>();
    check_clip_dtype<std::uint32_t>();
    CHECK(clip<std::int8_t>({-128, -3, 0, 5, 127}, bounds(-2, 4)) == std::vector<std::int8_t>{-2, -2, 0, 4, 4});
    CHECK(clip<std::uint8_t>({0, 100, 255}, bounds(std::nullopt, 200)) == std::vector<std::uint8_t>{0, 100, 200});
    CHECK(clip<std::uint8_t>({0, 100, 255}, bounds(5, 1)) == std::vector<std::uint8_t>{1, 1, 1});  // max wins
    // int64 bounds that a float cannot hold are exact
    const std::int64_t b = (1LL << 53) + 1;
    CHECK(clip<std::int64_t>({b - 2, b, b + 7}, bounds(b, b + 1)) == std::vector<std::int64_t>{b, b, b + 1});
}

TEST_CASE("Clip bound kinds: integer bounds only for plain integers, float bounds only for float and quantized") {
    const Tensor i8 = Tensor::from<std::int8_t>(Shape{2}, {1, 2});
    const Tensor f = Tensor::from<float>(Shape{2}, {1, 2});
    const auto q = num::make_quant(DType::i8, 0.1f, 0).value();
    const Tensor qi8 = Tensor::from<std::int8_t>(Shape{2}, {1, 2}, q);
    CHECK_RULE(call_with<Clip>(std::span<const Tensor>(&i8, 1), {{"min", 0.0f}}), "clip-bound-type");
    CHECK_RULE(call_with<Clip>(std::span<const Tensor>(&f, 1), {{"max_int", std::int64_t{3}}}), "clip-bound-type");
    CHECK_RULE(call_with<Clip>(std::span<const Tensor>(&qi8, 1), {{"min_int", std::int64_t{0}}},
                               TensorType{DType::i8, Shape{2}, q}),
               "clip-bound-type");
    // float and quantized Clip are unchanged
    auto yf = call_with<Clip>(std::span<const Tensor>(&f, 1), {{"min", 1.5f}});
    REQUIRE(yf.ok());
    CHECK(yf->to_vector<float>() == std::vector<float>{1.5f, 2.0f});
    auto yq = call_with<Clip>(std::span<const Tensor>(&qi8, 1), {{"max", 0.1f}}, TensorType{DType::i8, Shape{2}, q});
    REQUIRE(yq.ok());
    CHECK(yq->to_vector<std::int8_t>() == std::vector<std::int8_t>{1, 1});
}

}  // namespace
}  // namespace integer_test
