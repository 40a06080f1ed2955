// ops/map.hpp and ops/reduce.hpp, the index-structure primitives every elementwise op and reduction runs on.
// map: any input layout (contiguous, padded rows, transposed, reversed, stride-0 broadcast) gives exactly what a plain
// per-index loop gives; SIMD and scalar runs are bit-identical; per-channel parameters follow `channel_axis`; bad
// calls are errors naming the rule. reduce: every subset of axes of a rank-3 tensor with odd extents, against a
// plain nested-loop reference in the same (row-major) order, with tolerance 0.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <janus/layout/view.hpp>
#include <janus/numeric/rounding.hpp>
#include <janus/ops/map.hpp>
#include <janus/ops/reduce.hpp>
#include <support/indices.hpp>

namespace {

using namespace janus;
namespace ex = janus::expr;
namespace num = janus::numeric;
using ops::MapOptions;
using ops::run_map;

template <class T>
T random_value(std::mt19937& rng) {
    if constexpr (std::is_same_v<T, float>) return std::uniform_real_distribution<float>(-100.0f, 100.0f)(rng);
    else if constexpr (std::is_same_v<T, std::int32_t>) return std::uniform_int_distribution<T>(-100000, 100000)(rng);
    else return static_cast<T>(std::uniform_int_distribution<int>(std::numeric_limits<T>::min(),
                                                                   std::numeric_limits<T>::max())(rng));
}

/// A tensor with the given layout whose every element is random (padding bytes are left 0xAB: never read).
template <class T>
Tensor random_tensor(const Layout& l, std::mt19937& rng) {
    Tensor t = Tensor::with_layout(dtype_v<T>, l);
    std::memset(t.data(), 0xAB, t.storage->size());
    for (const auto& i : all_indices(l.shape)) t.set<T>(i, random_value<T>(rng));
    return t;
}

/// Byte-exact comparison of two tensors element by element (through their layouts).
template <class T>
bool same_elements(const Tensor& a, const Tensor& b) {
    if (!(a.shape() == b.shape())) return false;
    const auto va = a.to_vector<T>(), vb = b.to_vector<T>();
    return std::memcmp(va.data(), vb.data(), va.size() * sizeof(T)) == 0;
}

/// Padding of an output written by map stays untouched.
bool padding_untouched(const Tensor& t) {
    std::vector<bool> used(t.storage->size(), false);
    for (const auto& i : all_indices(t.shape()))
        for (std::int64_t b = 0; b < t.layout.elem_size; ++b)
            used[static_cast<std::size_t>(t.layout.address(i) + b)] = true;
    for (std::size_t k = 0; k < used.size(); ++k)
        if (!used[k] && (*t.storage)[k] != std::byte{0xCD}) return false;
    return true;
}

/// The mixed-type float expression of the layout tests: float(a) + b * 0.5 - 3.
auto float_expr() {
    const auto a = ex::to_float(ex::widen(ex::in<0, std::int8_t>()));
    return ex::sub(ex::add(a, ex::mul(ex::in<1, float>(), ex::cstf(0.5f))), ex::cstf(3.0f));
}
float float_reference(std::int8_t a, float b) { return (static_cast<float>(a) + b * 0.5f) - 3.0f; }

/// The integer expression: sat<uint8>(round_double((a - 3) * M) + b).
const num::QuantizedMultiplier kM{1518500250, -1};  // ~0.3536
auto int_expr() {
    const auto a = ex::sub(ex::widen(ex::in<0, std::int8_t>()), ex::cst(3));
    return ex::sat<std::uint8_t>(ex::add(ex::rq<num::round_double>(a, kM), ex::widen(ex::in<1, std::uint8_t>())));
}
std::uint8_t int_reference(std::int8_t a, std::uint8_t b) {
    const std::int64_t v = std::int64_t{num::round_double::apply(a - 3, kM)} + b;
    return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

/// Run e over inputs a, b into a fresh output of layout `ol` (padding filled with 0xCD), both ways; check both
/// against the per-index reference and each other.
template <class Out, class E, class Ref, class A, class B>
void check_map(const E& e, const Tensor& a, const Tensor& b, const Layout& ol, Ref ref) {
    Tensor outs[2];
    for (int simd = 0; simd < 2; ++simd) {
        Tensor o = Tensor::with_layout(dtype_v<Out>, ol);
        std::memset(o.data(), 0xCD, o.storage->size());
        const Tensor in[2] = {a, b};
        const auto st = run_map(e, std::span<const Tensor>(in), o, MapOptions{simd == 1, -1});
        REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message()));
        CHECK(padding_untouched(o));
        long bad = 0;
        std::string first;
        for (const auto& i : all_indices(ol.shape)) {
            const Out got = o.at<Out>(i), want = ref(a.at<A>(i), b.at<B>(i));
            if (std::memcmp(&got, &want, sizeof(Out)) != 0 && bad++ == 0) first = i.str();
        }
        CHECK_MESSAGE(bad == 0, (simd ? "simd" : "scalar")
                                    << ": " << bad << " elements differ from the reference, first at " << first);
        outs[simd] = o;
    }
    CHECK(same_elements<Out>(outs[0], outs[1]));
}

/// The layouts of one input over output shape [rows, width], each built from its own base storage.
template <class T>
std::vector<std::pair<std::string, Tensor>> input_layouts(std::int64_t rows, std::int64_t width, std::mt19937& rng) {
    const std::int64_t es = sizeof(T);
    std::vector<std::pair<std::string, Tensor>> r;
    const Shape s{rows, width};
    r.emplace_back("contiguous", random_tensor<T>(Layout::contiguous(s, es), rng));
    r.emplace_back("padded (16-byte rows)", random_tensor<T>(Layout::padded(s, es, 16), rng));
    {  // transposed: a [width, rows] tensor seen as [rows, width]
        const Tensor base = random_tensor<T>(Layout::contiguous(Shape{width, rows}, es), rng);
        const std::int64_t perm[] = {1, 0};
        r.emplace_back("transposed", base.view(transpose(base.layout, perm).value()));
    }
    {  // reversed slice: every row read backwards, rows in reverse order, over a padded base
        const Tensor base = random_tensor<T>(Layout::padded(s, es, 16), rng);
        const std::int64_t axes[] = {0, 1}, starts[] = {-1, -1}, ends[] = {std::numeric_limits<std::int64_t>::min(),
                                                                          std::numeric_limits<std::int64_t>::min()},
                           steps[] = {-1, -1};
        const Layout l = slice(base.layout, axes, starts, ends, steps).value();
        REQUIRE(l.shape == s);
        if (width > 1) REQUIRE(l.strides[1] == -es);
        r.emplace_back("reversed slice", base.view(l));
    }
    {  // stride-0 broadcast along the rows: one row repeated
        const Tensor base = random_tensor<T>(Layout::contiguous(Shape{width}, es), rng);
        r.emplace_back("broadcast rows (outer stride 0)", base.view(broadcast_to(base.layout, s).value()));
    }
    {  // stride-0 broadcast along the row: one value per row (the innermost address stays)
        const Tensor base = random_tensor<T>(Layout::contiguous(Shape{rows, 1}, es), rng);
        const Layout l = broadcast_to(base.layout, s).value();
        if (width > 1) REQUIRE(l.strides[1] == 0);
        r.emplace_back("broadcast columns (inner stride 0)", base.view(l));
    }
    return r;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// map over layouts

TEST_CASE("map reads every input layout (contiguous, padded, transposed, reversed, stride-0) like a per-index loop") {
    std::mt19937 rng(0xA11);
    for (std::int64_t width : {1, 7, 13, 33}) {
        for (std::int64_t rows : {1, 3}) {
            const auto as = input_layouts<std::int8_t>(rows, width, rng);
            const auto bs_f = input_layouts<float>(rows, width, rng);
            const auto bs_u = input_layouts<std::uint8_t>(rows, width, rng);
            const Shape s{rows, width};
            const Layout outs_f[] = {Layout::contiguous(s, 4), Layout::padded(s, 4, 16)};
            const Layout outs_u[] = {Layout::contiguous(s, 1), Layout::padded(s, 1, 16)};
            for (std::size_t i = 0; i < as.size(); ++i) {
                for (std::size_t j = 0; j < bs_f.size(); ++j) {
                    for (int o = 0; o < 2; ++o) {
                        CAPTURE(width);
                        CAPTURE(rows);
                        INFO("a: " << as[i].first << ", b: " << bs_f[j].first << ", output "
                                   << (o ? "padded" : "contiguous"));
                        check_map<float, decltype(float_expr()), decltype(&float_reference), std::int8_t, float>(
                            float_expr(), as[i].second, bs_f[j].second, outs_f[o], &float_reference);
                        check_map<std::uint8_t, decltype(int_expr()), decltype(&int_reference), std::int8_t,
                                  std::uint8_t>(int_expr(), as[i].second, bs_u[j].second, outs_u[o], &int_reference);
                    }
                }
            }
        }
    }
}

TEST_CASE("map over a padded rank-3 output: widths 7 and 13 leave every padding byte untouched") {
    std::mt19937 rng(0xA12);
    for (std::int64_t width : {7, 13}) {
        const Shape s{2, 3, width};
        const Tensor a = random_tensor<std::int8_t>(Layout::padded(s, 1, 16), rng);
        const Tensor b = random_tensor<float>(Layout::padded(s, 4, 16), rng);
        CHECK(a.layout.strides[1] == 16);
        CHECK(b.layout.strides[1] == (width == 7 ? 32 : 64));
        check_map<float, decltype(float_expr()), decltype(&float_reference), std::int8_t, float>(
            float_expr(), a, b, Layout::padded(s, 4, 16), &float_reference);
    }
}

TEST_CASE("map of a rank-0 tensor evaluates the expression once") {
    const Tensor a = Tensor::from<std::int8_t>(Shape{}, {-7});
    const Tensor b = Tensor::from<float>(Shape{}, {3.0f});
    check_map<float, decltype(float_expr()), decltype(&float_reference), std::int8_t, float>(
        float_expr(), a, b, Layout::contiguous(Shape{}, 4), &float_reference);
}

// ---------------------------------------------------------------------------------------------------------------
// per-channel parameters

TEST_CASE("map feeds chan and per-channel rq with the coordinate of channel_axis (inner, middle and outer axis)") {
    std::mt19937 rng(0xC4A);
    const Shape s{5, 3, 13};
    const Tensor x = random_tensor<std::int8_t>(Layout::contiguous(s, 1), rng);
    for (int axis = 0; axis < 3; ++axis) {
        CAPTURE(axis);
        const std::size_t n = static_cast<std::size_t>(s[axis]);
        std::vector<num::QuantizedMultiplier> m(n);
        std::vector<std::int32_t> zp(n);
        for (std::size_t c = 0; c < n; ++c) {
            m[c] = num::quantize_multiplier(0.05 + 0.37 * static_cast<double>(c)).value();
            zp[c] = static_cast<std::int32_t>(c * 11) - 60;
        }
        const std::span<const num::QuantizedMultiplier> ms(m);
        const auto e = ex::sat<std::int8_t>(
            ex::add(ex::rq<num::round_double>(ex::widen(ex::in<0, std::int8_t>()), ms), ex::chan<std::int32_t>(zp)));
        Tensor outs[2];
        for (int simd = 0; simd < 2; ++simd) {
            Tensor o = Tensor::zeros(DType::i8, s);
            const Tensor in[1] = {x};
            REQUIRE(run_map(e, std::span<const Tensor>(in), o, MapOptions{simd == 1, axis}).ok());
            long bad = 0;
            for (const auto& i : all_indices(s)) {
                const auto c = static_cast<std::size_t>(i[axis]);
                const std::int64_t v = std::int64_t{num::round_double::apply(x.at<std::int8_t>(i), m[c])} + zp[c];
                const auto want = static_cast<std::int8_t>(v < -128 ? -128 : v > 127 ? 127 : v);
                if (o.at<std::int8_t>(i) != want) ++bad;
            }
            CHECK_MESSAGE(bad == 0, (simd ? "simd" : "scalar") << ": " << bad << " elements use the wrong channel");
            outs[simd] = o;
        }
        CHECK(same_elements<std::int8_t>(outs[0], outs[1]));
    }
}

// ---------------------------------------------------------------------------------------------------------------
// errors

TEST_CASE("map refuses a wrong output dtype, a wrong input dtype, a shape mismatch and a bad channel axis") {
    const Tensor a = Tensor::from<std::int8_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor b = Tensor::from<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
    const Tensor in[2] = {a, b};
    const auto e = float_expr();
    {
        Tensor o = Tensor::zeros(DType::i32, Shape{2, 3});
        const auto st = run_map(e, std::span<const Tensor>(in), o, {}, "Test");
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().rule == "output-dtype");
        CHECK(st.error().input == "Test");
        CHECK(st.error().position == "output");
    }
    {
        const Tensor swapped[2] = {b, a};
        Tensor o = Tensor::zeros(DType::f32, Shape{2, 3});
        const auto st = run_map(e, std::span<const Tensor>(swapped), o, {}, "Test");
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().rule == "input-dtype");
        CHECK(st.error().position == "input 0");
    }
    {
        const Tensor bad_b = Tensor::from<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
        const Tensor in2[2] = {a, bad_b};
        Tensor o = Tensor::zeros(DType::f32, Shape{2, 3});
        const auto st = run_map(e, std::span<const Tensor>(in2), o, {}, "Test");
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().rule == "shape-equals-output");
        CHECK(st.error().position == "input 1");
    }
    {
        Tensor o = Tensor::zeros(DType::f32, Shape{3, 2});
        const auto st = run_map(e, std::span<const Tensor>(in), o, {}, "Test");
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().rule == "shape-equals-output");
        CHECK(st.error().position == "input 0");
    }
    {
        Tensor o = Tensor::zeros(DType::f32, Shape{2, 3});
        const auto st = run_map(e, std::span<const Tensor>(in).first(1), o, {}, "Test");
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().rule == "input-count");
    }
    {
        Tensor o = Tensor::zeros(DType::f32, Shape{2, 3});
        const auto st = run_map(e, std::span<const Tensor>(in), o, MapOptions{true, 2}, "Test");
        REQUIRE_FALSE(st.ok());
        CHECK(st.error().rule == "channel-axis-in-range");
    }
}

// ---------------------------------------------------------------------------------------------------------------
// reduce

namespace {

/// Every subset of {0, 1, 2}, as sorted Dims.
std::vector<Dims> all_axis_subsets() {
    std::vector<Dims> r;
    for (int mask = 0; mask < 8; ++mask) {
        Dims d;
        for (int k = 0; k < 3; ++k)
            if (mask & (1 << k)) d.push_back(k);
        r.push_back(d);
    }
    return r;
}

Shape removed_shape(const Shape& in, const Dims& axes) {
    Shape s;
    for (int k = 0; k < in.size(); ++k) {
        bool red = false;
        for (auto a : axes) red = red || a == k;
        if (!red) s.push_back(in[k]);
    }
    return s;
}

/// Plain reference: for each output (kept-dims index), combine its elements in row-major input order from init.
template <ex::BinOp C, class L, class T>
std::vector<L> reduce_reference(const Tensor& in, const Dims& axes, L init) {
    const Shape keep = ops::reduced_shape_keepdims(in.shape(), axes);
    std::vector<L> acc(static_cast<std::size_t>(element_count(keep)), init);
    for (const auto& i : all_indices(in.shape())) {
        Dims o = i;
        for (auto a : axes) o[static_cast<int>(a)] = 0;
        std::int64_t f = 0;
        for (int k = 0; k < keep.size(); ++k) f = f * keep[k] + o[k];
        L& a = acc[static_cast<std::size_t>(f)];
        const L v = static_cast<L>(in.at<T>(i));
        if constexpr (C == ex::BinOp::add && std::is_same_v<L, float>) a = a + v;
        else if constexpr (C == ex::BinOp::add)  // int32 sums wrap modulo 2^32, without signed overflow
            a = static_cast<L>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(v));
        else if constexpr (C == ex::BinOp::min) a = (v < a || v != v) ? v : a;
        else a = (v > a || v != v) ? v : a;
    }
    return acc;
}

template <ex::BinOp C, class T, class L>
void check_reduce_all_subsets(const Tensor& in, L init) {
    const auto pre = [] {
        if constexpr (std::is_same_v<T, float>) return ex::in<0, float>();
        else return ex::widen(ex::in<0, T>());
    }();
    const auto post = ex::in<0, L>();
    for (const auto& axes : all_axis_subsets()) {
        for (bool keep_dims : {true, false}) {
            CAPTURE(axes.str());
            CAPTURE(keep_dims);
            const Shape out_shape =
                keep_dims ? ops::reduced_shape_keepdims(in.shape(), axes) : removed_shape(in.shape(), axes);
            std::vector<L> got[2];
            for (int simd = 0; simd < 2; ++simd) {
                Tensor out = Tensor::zeros(dtype_v<L>, out_shape);
                const auto st = ops::run_reduce<C>(pre, init, post, in, axes, out, ops::ReduceOptions{simd == 1});
                REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message()));
                got[simd] = out.to_vector<L>();
            }
            const auto want = reduce_reference<C, L, T>(in, axes, init);
            REQUIRE(got[0].size() == want.size());
            CHECK_MESSAGE(std::memcmp(got[0].data(), want.data(), want.size() * sizeof(L)) == 0, "scalar != reference");
            CHECK_MESSAGE(std::memcmp(got[1].data(), want.data(), want.size() * sizeof(L)) == 0, "simd != reference");
        }
    }
}

}  // namespace

TEST_CASE("reduce sum/min/max over every subset of axes of a [7,13,5] tensor equals the row-major-order reference") {
    std::mt19937 rng(0x5ED);
    const Shape s{7, 13, 5};
    const Tensor f = random_tensor<float>(Layout::contiguous(s, 4), rng);
    const Tensor i8 = random_tensor<std::int8_t>(Layout::contiguous(s, 1), rng);
    const Tensor i32 = [&] {
        Tensor t = Tensor::zeros(DType::i32, s);
        for (const auto& i : all_indices(s)) t.set<std::int32_t>(i, static_cast<std::int32_t>(rng()));  // wraps on add
        return t;
    }();
    constexpr float finf = std::numeric_limits<float>::infinity();
    SUBCASE("float") {
        check_reduce_all_subsets<ex::BinOp::add, float>(f, 0.0f);
        check_reduce_all_subsets<ex::BinOp::min, float>(f, finf);
        check_reduce_all_subsets<ex::BinOp::max, float>(f, -finf);
    }
    SUBCASE("int8 widened to int32") {
        check_reduce_all_subsets<ex::BinOp::add, std::int8_t>(i8, std::int32_t{0});
        check_reduce_all_subsets<ex::BinOp::min, std::int8_t>(i8, std::numeric_limits<std::int32_t>::max());
        check_reduce_all_subsets<ex::BinOp::max, std::int8_t>(i8, std::numeric_limits<std::int32_t>::min());
    }
    SUBCASE("int32 (sums wrap modulo 2^32 identically on both paths)") {
        check_reduce_all_subsets<ex::BinOp::add, std::int32_t>(i32, std::int32_t{0});
        check_reduce_all_subsets<ex::BinOp::min, std::int32_t>(i32, std::numeric_limits<std::int32_t>::max());
        check_reduce_all_subsets<ex::BinOp::max, std::int32_t>(i32, std::numeric_limits<std::int32_t>::min());
    }
}

TEST_CASE("reduce reads a transposed, padded input through its layout") {
    std::mt19937 rng(0x7A);
    const Tensor base = random_tensor<std::int8_t>(Layout::padded(Shape{5, 13, 7}, 1, 16), rng);
    const std::int64_t perm[] = {2, 1, 0};
    const Tensor t = base.view(transpose(base.layout, perm).value());  // [7, 13, 5], no unit inner stride
    check_reduce_all_subsets<ex::BinOp::add, std::int8_t>(t, std::int32_t{0});
    check_reduce_all_subsets<ex::BinOp::max, std::int8_t>(t, std::numeric_limits<std::int32_t>::min());
}

TEST_CASE("float min/max reductions return NaN iff some element is NaN, on both paths") {
    std::vector<float> v(7 * 13 * 5, 1.0f);
    v[3] = std::numeric_limits<float>::quiet_NaN();   // in row 0 of the first plane
    v[7 * 13 * 5 - 1] = -std::numeric_limits<float>::quiet_NaN();  // last element
    const Tensor f = Tensor::from<float>(Shape{7, 13, 5}, v);
    check_reduce_all_subsets<ex::BinOp::max, float>(f, -std::numeric_limits<float>::infinity());
    check_reduce_all_subsets<ex::BinOp::min, float>(f, std::numeric_limits<float>::infinity());
    // rows of 37: full SIMD batches for every lane count up to 32, NaN in the middle of batches
    std::vector<float> w(4 * 2 * 37, -2.0f);
    for (std::size_t k : {5u, 40u, 77u, 150u, 295u}) w[k] = std::numeric_limits<float>::quiet_NaN();
    const Tensor g = Tensor::from<float>(Shape{4, 2, 37}, w);
    check_reduce_all_subsets<ex::BinOp::max, float>(g, -std::numeric_limits<float>::infinity());
    check_reduce_all_subsets<ex::BinOp::min, float>(g, std::numeric_limits<float>::infinity());
}

TEST_CASE("an empty reduced extent gives post(init) for every output, kept or removed axes") {
    const Tensor in = Tensor::zeros(DType::i8, Shape{3, 0, 5});
    // post: sat<int8>(rshift(acc, 1) + 1), so init = 40 gives 21 everywhere
    const auto post = ex::sat<std::int8_t>(ex::add(ex::rshift(ex::in<0, std::int32_t>(), 1), ex::cst(1)));
    const auto pre = ex::widen(ex::in<0, std::int8_t>());
    for (bool simd : {false, true}) {
        Tensor keep = Tensor::zeros(DType::i8, Shape{3, 1, 5});
        REQUIRE(ops::run_reduce<ex::BinOp::add>(pre, 40, post, in, Dims{1}, keep, ops::ReduceOptions{simd}).ok());
        CHECK(keep.to_vector<std::int8_t>() == std::vector<std::int8_t>(15, 21));
        Tensor removed = Tensor::zeros(DType::i8, Shape{3, 5});
        REQUIRE(ops::run_reduce<ex::BinOp::add>(pre, 40, post, in, Dims{1}, removed, ops::ReduceOptions{simd}).ok());
        CHECK(removed.to_vector<std::int8_t>() == std::vector<std::int8_t>(15, 21));
        // float max over nothing is post(-inf)
        const Tensor fin = Tensor::zeros(DType::f32, Shape{0, 4});
        Tensor fout = Tensor::zeros(DType::f32, Shape{4});
        const float ninf = -std::numeric_limits<float>::infinity();
        REQUIRE(ops::run_reduce<ex::BinOp::max>(ex::in<0, float>(), ninf, ex::in<0, float>(), fin, Dims{0}, fout,
                                                ops::ReduceOptions{simd})
                    .ok());
        CHECK(fout.to_vector<float>() == std::vector<float>(4, ninf));
    }
}

TEST_CASE("reduce runs its epilogue (post) as a map: a quantized mean's rq + zero point") {
    // mean over axis 1 of int8 [2, 4]: post = sat<int8>(rq(acc, 1/4) + 5)
    const Tensor in = Tensor::from<std::int8_t>(Shape{2, 4}, {1, 2, 3, 4, -128, -128, -128, 127});
    const auto m = num::quantize_multiplier(0.25).value();
    const auto post =
        ex::sat<std::int8_t>(ex::add(ex::rq<num::round_half_even>(ex::in<0, std::int32_t>(), m), ex::cst(5)));
    Tensor out = Tensor::zeros(DType::i8, Shape{2});
    const auto st = ops::run_reduce<ex::BinOp::add>(ex::widen(ex::in<0, std::int8_t>()), 0, post, in, Dims{1}, out);
    REQUIRE(st.ok());
    // 10 / 4 = 2.5 -> 2 (half to even) + 5 = 7; -257 / 4 = -64.25 -> -64 + 5 = -59
    CHECK(out.to_vector<std::int8_t>() == std::vector<std::int8_t>{7, -59});
    CHECK(st->outputs == 2);
    CHECK(st->reads_per_output == 4);
    CHECK(st->inner_axis_reduced);
}

TEST_CASE("reduce refuses unsorted or out-of-range axes and outputs of the wrong rank or shape") {
    const Tensor in = Tensor::zeros(DType::f32, Shape{7, 13, 5});
    const auto id = ex::in<0, float>();
    auto run = [&](const Dims& axes, const Shape& out_shape) {
        Tensor out = Tensor::zeros(DType::f32, out_shape);
        return ops::run_reduce<ex::BinOp::add>(id, 0.0f, id, in, axes, out, {}, "ReduceSum");
    };
    const auto unsorted = run(Dims{2, 0}, Shape{1, 13, 1});
    REQUIRE_FALSE(unsorted.ok());
    CHECK(unsorted.error().rule == "axes-sorted-unique-in-range");
    CHECK(unsorted.error().input == "ReduceSum");
    const auto dup = run(Dims{1, 1}, Shape{7, 1, 5});
    REQUIRE_FALSE(dup.ok());
    CHECK(dup.error().rule == "axes-sorted-unique-in-range");
    const auto out_of_range = run(Dims{3}, Shape{7, 13, 5});
    REQUIRE_FALSE(out_of_range.ok());
    CHECK(out_of_range.error().rule == "axes-sorted-unique-in-range");
    const auto rank = run(Dims{1}, Shape{7});
    REQUIRE_FALSE(rank.ok());
    CHECK(rank.error().rule == "output-rank");
    const auto shape = run(Dims{1}, Shape{7, 1, 4});
    REQUIRE_FALSE(shape.ok());
    CHECK(shape.error().rule == "output-shape");
    const auto shape_removed = run(Dims{1}, Shape{5, 7});
    REQUIRE_FALSE(shape_removed.ok());
    CHECK(shape_removed.error().rule == "output-shape");
}
