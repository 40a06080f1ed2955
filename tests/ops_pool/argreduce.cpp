// ArgMax / ArgMin: the tie rule (first, or last with select_last_index), keepdims, negative axes, the NaN rule, int8
// and uint8 inputs, the data movement of run_arg_reduce (seed A1), a random comparison against a reference written
// with std::max_element-style scans over extracted groups, scalar vs SIMD identity, and every error rule.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <janus/ops/argreduce.hpp>
#include <support/check_rule.hpp>

using namespace janus;
using namespace janus::ops;

namespace {

ArgReduceAttrs attrs(std::int64_t axis, std::int64_t keepdims = 1, std::int64_t last = 0) {
    return ArgReduceAttrs{axis, keepdims, last};
}

template <class O>
std::vector<std::int64_t> run(const Tensor& x, const ArgReduceAttrs& a, bool simd = true) {
    auto r = call<O>({x}, a, std::nullopt, OpContext{simd});
    REQUIRE(r.ok());
    CHECK(r->dtype == DType::i64);
    return r->template to_vector<std::int64_t>();
}

using V = std::vector<std::int64_t>;
const float qnan = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST_CASE("ArgMax and ArgMin ties return the first index unless select_last_index") {
    const Tensor x = Tensor::from<float>({4}, {1, 3, 3, 2});
    CHECK(run<ArgMax>(x, attrs(0)) == V{1});
    CHECK(run<ArgMax>(x, attrs(0, 1, 1)) == V{2});
    const Tensor y = Tensor::from<float>({4}, {2, 1, 1, 3});
    CHECK(run<ArgMin>(y, attrs(0)) == V{1});
    CHECK(run<ArgMin>(y, attrs(0, 1, 1)) == V{2});
    // +0.0 and -0.0 tie
    const Tensor z = Tensor::from<float>({2}, {0.0f, -0.0f});
    CHECK(run<ArgMax>(z, attrs(0)) == V{0});
    CHECK(run<ArgMax>(z, attrs(0, 1, 1)) == V{1});
}

TEST_CASE("ArgMax keepdims=1 keeps the axis as extent 1, keepdims=0 removes it") {
    const Tensor x = Tensor::from<float>({2, 3}, {1, 5, 2, 7, 0, 7});
    auto k1 = call<ArgMax>({x}, attrs(1, 1));
    auto k0 = call<ArgMax>({x}, attrs(1, 0));
    REQUIRE(k1.ok());
    REQUIRE(k0.ok());
    CHECK(k1->shape() == Shape{2, 1});
    CHECK(k0->shape() == Shape{2});
    CHECK(k1->to_vector<std::int64_t>() == V{1, 0});
    CHECK(k0->to_vector<std::int64_t>() == V{1, 0});
}

TEST_CASE("ArgMax negative axis counts from the end") {
    const Tensor x = Tensor::from<float>({2, 3}, {1, 5, 2, 7, 0, 7});
    CHECK(run<ArgMax>(x, attrs(-1)) == run<ArgMax>(x, attrs(1)));
    CHECK(run<ArgMax>(x, attrs(-2)) == V{1, 0, 1});  // columns: (1,7) (5,0) (2,7)
    CHECK(run<ArgMin>(x, attrs(-2, 0, 1)) == V{0, 1, 0});
}

TEST_CASE("ArgMax and ArgMin NaN rule: the first NaN wins for both (numpy), the last one with select_last_index") {
    const Tensor x = Tensor::from<float>({5}, {1, qnan, 5, qnan, -9});
    CHECK(run<ArgMax>(x, attrs(0)) == V{1});
    CHECK(run<ArgMin>(x, attrs(0)) == V{1});
    CHECK(run<ArgMax>(x, attrs(0, 1, 1)) == V{3});
    CHECK(run<ArgMin>(x, attrs(0, 1, 1)) == V{3});
    const Tensor inf = Tensor::from<float>({3}, {-std::numeric_limits<float>::infinity(), 2,
                                                 std::numeric_limits<float>::infinity()});
    CHECK(run<ArgMax>(inf, attrs(0)) == V{2});
    CHECK(run<ArgMin>(inf, attrs(0)) == V{0});
}

TEST_CASE("ArgMax on int8 and uint8 compares stored integers; quantization does not change the index") {
    const auto qi = numeric::make_quant(DType::i8, 0.5f, 100).value();
    const Tensor a = Tensor::from<std::int8_t>({4}, {-128, 127, 127, 0}, qi);
    const Tensor b = Tensor::from<std::int8_t>({4}, {-128, 127, 127, 0});  // plain int8 is accepted too
    CHECK(run<ArgMax>(a, attrs(0)) == V{1});
    CHECK(run<ArgMax>(b, attrs(0, 1, 1)) == V{2});
    CHECK(run<ArgMin>(a, attrs(0)) == V{0});
    const Tensor u = Tensor::from<std::uint8_t>({3}, {200, 255, 0}, numeric::make_quant(DType::u8, 0.1f, 128).value());
    CHECK(run<ArgMax>(u, attrs(0)) == V{1});
    CHECK(run<ArgMin>(u, attrs(0)) == V{2});
}

TEST_CASE("ArgMax run_with_stats reports the data movement of the reduced axis (seed A1)") {
    const Tensor x = Tensor::from<float>({2, 3, 4}, std::vector<float>(24, 1.0f));
    const ArgReduceAttrs a = attrs(1, 0);
    const auto t = ArgMax::infer(std::vector<TensorType>{type_of(x)}, a).value();
    auto r = ArgMax::run_with_stats(std::vector<Tensor>{x}, a, t, {});
    REQUIRE(r.ok());
    CHECK(r->stats.outputs == 8);
    CHECK(r->stats.reads_per_output == 3);
    CHECK(r->stats.reduced_strides == Dims{16});
    CHECK_FALSE(r->stats.inner_axis_reduced);
    CHECK(r->y.to_vector<std::int64_t>() == V(8, 0));  // all equal: first index
}

TEST_CASE("ArgMax / ArgMin match a plain reference on random shapes, axes and flags; scalar == SIMD") {
    std::mt19937 g(2024);
    auto u = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
    int checked = 0;
    for (int iter = 0; iter < 300; ++iter) {
        const int rank = u(1, 4);
        Shape s;
        for (int k = 0; k < rank; ++k) s.push_back(u(1, 5));
        const int axis = u(0, rank - 1);
        const std::int64_t n = element_count(s);
        const int kind = iter % 3;  // float (few distinct values, some NaN), int8, uint8
        std::vector<double> v(static_cast<std::size_t>(n));
        Tensor x;
        if (kind == 0) {
            std::vector<float> f(v.size());
            for (auto& e : f) e = u(0, 20) == 0 ? qnan : static_cast<float>(u(-3, 3));
            for (std::size_t i = 0; i < f.size(); ++i) v[i] = f[i];
            x = Tensor::from<float>(s, f);
        } else if (kind == 1) {
            std::vector<std::int8_t> q(v.size());
            for (auto& e : q) e = static_cast<std::int8_t>(u(-128, -120));
            for (std::size_t i = 0; i < q.size(); ++i) v[i] = q[i];
            x = Tensor::from<std::int8_t>(s, q, numeric::make_quant(DType::i8, 0.1f, 0).value());
        } else {
            std::vector<std::uint8_t> q(v.size());
            for (auto& e : q) e = static_cast<std::uint8_t>(u(250, 255));
            for (std::size_t i = 0; i < q.size(); ++i) v[i] = q[i];
            x = Tensor::from<std::uint8_t>(s, q);
        }
        const bool last = u(0, 1) == 1, is_max = u(0, 1) == 1;
        const ArgReduceAttrs a = attrs(u(0, 1) ? axis : axis - rank, u(0, 1), last);
        const V got = is_max ? run<ArgMax>(x, a) : run<ArgMin>(x, a);
        CHECK((is_max ? run<ArgMax>(x, a, false) : run<ArgMin>(x, a, false)) == got);
        // reference: outer x axis x inner decomposition, scanning the group with explicit rules
        std::int64_t outer = 1, inner = 1;
        for (int k = 0; k < axis; ++k) outer *= s[k];
        for (int k = axis + 1; k < rank; ++k) inner *= s[k];
        const std::int64_t len = s[axis];
        V want;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < inner; ++i) {
                std::int64_t best = 0;
                for (std::int64_t j = 1; j < len; ++j) {
                    const double c = v[static_cast<std::size_t>((o * len + j) * inner + i)];
                    const double b = v[static_cast<std::size_t>((o * len + best) * inner + i)];
                    bool take;
                    if (std::isnan(b)) take = last && std::isnan(c);
                    else if (std::isnan(c)) take = true;
                    else take = is_max ? (c > b || (last && c == b)) : (c < b || (last && c == b));
                    if (take) best = j;
                }
                want.push_back(best);
            }
        CHECK(got == want);
        ++checked;
    }
    CHECK(checked == 300);
}

TEST_CASE("argreduce rule axis-in-range: axis outside [-rank, rank)") {
    const Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK_RULE(call<ArgMax>({x}, attrs(2)), "axis-in-range");
    CHECK_RULE(call<ArgMin>({x}, attrs(-3)), "axis-in-range");
    CHECK_RULE(call<ArgMax>({Tensor::from<float>({}, std::vector<float>{1})}, attrs(0)), "axis-in-range");
}

TEST_CASE("argreduce rule attribute-range: keepdims and select_last_index are 0/1") {
    const std::vector<Tensor> x{Tensor::from<float>({2}, {1, 2})};
    CHECK_RULE(call_with<ArgMax>(x, {{"keepdims", std::int64_t{2}}}), "attribute-range");
    CHECK_RULE(call_with<ArgMax>(x, {{"select_last_index", std::int64_t{-1}}}), "attribute-range");
    CHECK_RULE(call_with<ArgMin>(x, {{"axes", std::vector<std::int64_t>{0}}}), "known-attribute");
}

TEST_CASE("argreduce rule float-or-int8: int32 and int64 inputs are refused") {
    CHECK_RULE(call<ArgMax>({Tensor::from<std::int32_t>({2}, {1, 2})}, attrs(0)), "float-or-int8");
    CHECK_RULE(call<ArgMin>({Tensor::from<std::int64_t>({2}, {1, 2})}, attrs(0)), "float-or-int8");
}

TEST_CASE("argreduce rule nonempty-reduction: an axis of extent 0 has no index") {
    CHECK_RULE(call<ArgMax>({Tensor::from<float>({2, 0}, std::vector<float>{})}, attrs(1)), "nonempty-reduction");
    // an empty output is fine (nothing to index)
    CHECK(call<ArgMax>({Tensor::from<float>({0, 3}, std::vector<float>{})}, attrs(1)).ok());
}

TEST_CASE("argreduce rule output-type-matches-inference: the output is int64 of the reduced shape") {
    const Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK_RULE(call<ArgMax>({x}, attrs(1), TensorType{DType::i32, {2, 1}, std::nullopt}),
               "output-type-matches-inference");
    CHECK_RULE(ArgMax::run(std::vector<Tensor>{x}, attrs(1), TensorType{DType::i64, {2}, std::nullopt}, {}),
               "output-type-matches-inference");
}

TEST_CASE("argreduce rule input-count: one input") {
    const Tensor x = Tensor::from<float>({2}, {1, 2});
    CHECK_RULE(call<ArgMax>({x, x}, attrs(0)), "input-count");
}

TEST_CASE("run_arg_reduce rules: output dtype int64 and output shape") {
    const Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor bad_dtype = Tensor::zeros(DType::i32, {2, 1});
    CHECK_RULE(run_arg_reduce<expr::BinOp::max>(expr::In<0, float>{}, x, 1, false, bad_dtype), "output-dtype");
    Tensor bad_shape = Tensor::zeros(DType::i64, {3});
    CHECK_RULE(run_arg_reduce<expr::BinOp::max>(expr::In<0, float>{}, x, 1, false, bad_shape), "output-shape");
    Tensor ok = Tensor::zeros(DType::i64, {2});
    CHECK_RULE(run_arg_reduce<expr::BinOp::max>(expr::In<0, float>{}, x, 2, false, ok), "axes-sorted-unique-in-range");
    Tensor empty_out = Tensor::zeros(DType::i64, {2});
    CHECK_RULE(run_arg_reduce<expr::BinOp::max>(expr::In<0, float>{}, Tensor::from<float>({2, 0}, std::vector<float>{}),
                                                1, false, empty_out),
               "nonempty-reduction");
}
