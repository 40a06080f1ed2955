#pragma once
// Element-level expression primitives: the small, typed vocabulary every elementwise computation is written in.
//
// An expression is a TREE OF TYPES built once per op invocation, e.g. quantized LeakyRelu's negative branch
//     sat<int8_t>(add(rq<round_double>(sub(widen(in<0, int8_t>()), cst(zp_in)), m), cst(zp_out)))
// Its structure is known at compile time; its parameters (zero points, multipliers, tables) are runtime values
// held in the nodes. The same tree is
//   - evaluated one element at a time (`eval(ScalarArgs)`, the plain reference),
//   - evaluated on xsimd batches (`eval(BatchArgs)`), BIT-IDENTICAL to the scalar path for every input (one
//     exception: a NaN result is NaN on both paths but its sign and payload are not promised when two NaNs meet,
//     because compilers may commute IEEE + and * and x86 returns the first operand's NaN),
//   - range-checked (`range()`): every intermediate integer is proved to fit int32 before a kernel is built (A5),
//   - printed (`print()`) for debug logs and golden tests,
//   - walked by the NPU emitter (`children()`), which maps each node kind to vnpu instructions.
//
// Value model. Every node has a logical element type `type` in {int8_t, uint8_t, int16_t, uint16_t, int32_t,
// uint32_t, int64_t, float16, float, bool}. Integer values up to 32 bits signed travel in int32 lanes (an int8 value
// is an int32 in [-128, 127]); floats in float lanes (a float16 input is widened exactly, and only wrap<float16>
// narrows: plain float16 tensors have no other float16 node). Integer
// add/sub/mul/shl wrap modulo 2^32 if range analysis is bypassed (both paths wrap identically, no UB); kernels built
// through ops/kernel.hpp refuse any expression whose range analysis says an intermediate could leave int32.
// int64 and uint32 values (plain tensors only) travel in int64 lanes, which are CLOSED: in, cst, add, sub, mul, min,
// max, cmp, select and wrap take them, always with int64 operands, and no node converts to or from them. So an
// int64 expression has an int64 root, and map (ops/map.hpp) evaluates it with the scalar path only; its add/sub/mul
// wrap modulo 2^64 and range analysis does not look at it.
// Plain-integer arithmetic (numpy / ONNX on non-quantized integer tensors) wraps modulo 2^bits of the element type:
// it is written wrap<T>(e), whose ring nodes (add, sub, mul, neg, shl, widen, in, cst) compute modulo 2^32 (or 2^64)
// and are exempt from the int32 range proof; 2^bits(T) divides 2^32, so the reduction to T is exact.
//
// The primitive set is deliberately small; adding one is a documented decision (docs/ARCHITECTURE.md):
//   in, cst, chan (per-channel constant), widen, to_float, sat (narrow with saturation; from float: round half
//   to even), add, sub, mul, div (float), min, max, abs, neg, shl, rshift (round half away), rq (fixed-point
//   multiply with a rounding-mode TYPE, per-tensor or per-channel), rq_indexed (rq with the multiplier looked up
//   per element by an integer index expression: averaging divisors), clamp, cmp (lt le gt ge eq ne), select,
//   lut (256-entry table), wrap (narrow modulo 2^bits: plain-integer arithmetic), and float exp / tanh / erf /
//   sqrt (xsimd's algorithms on both paths).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include <janus/core/dtype.hpp>
#include <janus/numeric/range.hpp>
#include <janus/numeric/rounding.hpp>
#include <janus/ops/simd_fixed_point.hpp>

namespace janus::expr {

using arch = xsimd::default_arch;

/// float16 travels in float lanes (exact); a float16 result is narrowed by wrap<float16> (see "Value model").
template <class T>
inline constexpr bool is_float_v = std::is_same_v<T, float> || std::is_same_v<T, float16>;
template <class T>
inline constexpr bool is_int_v = std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> ||
                                 std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::uint16_t> ||
                                 std::is_same_v<T, std::int32_t>;
template <class T>
concept Element = is_float_v<T> || is_int_v<T>;
/// int64 and uint32: int64 lanes, scalar evaluation only (see "Value model").
template <class T>
inline constexpr bool is_wide_v = std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint32_t>;
/// What In, Cst and wrap take: an Element (batchable) or int64.
template <class T>
concept AnyElement = Element<T> || is_wide_v<T>;

template <class T>
using lane_t = std::conditional_t<is_float_v<T>, float, std::conditional_t<is_wide_v<T>, std::int64_t, std::int32_t>>;
template <class T>
using batch_t = xsimd::batch<lane_t<T>, arch>;
template <class T>
using mask_t = xsimd::batch_bool<lane_t<T>, arch>;

/// Number of elements one batch evaluation handles (the same for int32 and float lanes).
inline constexpr std::size_t lanes = xsimd::batch<std::int32_t, arch>::size;
static_assert(xsimd::batch<float, arch>::size == lanes, "int32 and float batches must have the same lane count");

/// Most inputs one expression reads.
inline constexpr int max_inputs = 4;

/// Values of the inputs for one element. `channel` is the coordinate along the op's channel axis (for chan / rq
/// per-channel nodes), 0 when the op has none.
struct ScalarArgs {
    std::array<std::int32_t, max_inputs> i{};
    std::array<float, max_inputs> f{};
    std::array<std::int64_t, max_inputs> l{};  ///< int64 inputs
    std::int32_t channel = 0;
};
/// Values of the inputs for `lanes` consecutive elements.
struct BatchArgs {
    std::array<xsimd::batch<std::int32_t, arch>, max_inputs> i{};
    std::array<xsimd::batch<float, arch>, max_inputs> f{};
    xsimd::batch<std::int32_t, arch> channel{};
};

/// Declared ranges of the integer inputs (default: the full range of the input's type).
struct InputRanges {
    std::array<numeric::Interval, max_inputs> r{};
    std::array<bool, max_inputs> set{};
};

template <class T>
constexpr numeric::Interval type_range() {
    if constexpr (std::is_same_v<T, std::int8_t>) return {-128, 127};
    else if constexpr (std::is_same_v<T, std::uint8_t>) return {0, 255};
    else if constexpr (std::is_same_v<T, std::int16_t>) return {-32768, 32767};
    else if constexpr (std::is_same_v<T, std::uint16_t>) return {0, 65535};
    else if constexpr (std::is_same_v<T, bool>) return {0, 1};
    else if constexpr (is_wide_v<T>) return numeric::Interval::unbounded();  // int64 lanes: not range-analysed
    else return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
}

namespace detail {
/// a + b, a - b, a * b modulo 2^32 (int32 lanes) or 2^64 (int64 lanes), computed in the unsigned type of the same
/// width (no UB); the conversion back is modular (C++20).
template <class L>
concept WrapLane = std::is_same_v<L, std::int32_t> || std::is_same_v<L, std::int64_t>;
template <WrapLane L>
inline L wrap_add(L a, L b) {
    using U = std::make_unsigned_t<L>;
    return static_cast<L>(static_cast<U>(a) + static_cast<U>(b));
}
template <WrapLane L>
inline L wrap_sub(L a, L b) {
    using U = std::make_unsigned_t<L>;
    return static_cast<L>(static_cast<U>(a) - static_cast<U>(b));
}
template <WrapLane L>
inline L wrap_mul(L a, L b) {
    using U = std::make_unsigned_t<L>;
    return static_cast<L>(static_cast<U>(a) * static_cast<U>(b));
}
inline std::int32_t wrap_neg(std::int32_t a) { return wrap_sub<std::int32_t>(0, a); }
inline std::int32_t wrap_abs(std::int32_t a) { return a < 0 ? wrap_neg(a) : a; }
inline std::int32_t wrap_shl(std::int32_t a, int s) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) << s);
}

/// Apply a scalar function lane by lane: the portable fallback for primitives without a SIMD formulation.
template <class F, class... B>
auto per_lane(F f, const B&... b) {
    using R = decltype(f(b.get(0)...));
    alignas(64) std::array<R, lanes> out{};
    for (std::size_t k = 0; k < lanes; ++k) out[k] = f(b.get(k)...);
    return xsimd::batch<R, arch>::load_aligned(out.data());
}

/// Bounds of rounding_divide_by_pot(x, s) for x in r: the function is monotone, so the bounds are its values at the
/// ends (computed exactly in int64: floor division plus one covers every rounding direction).
inline numeric::Interval round_shift_right_range(numeric::Interval r, int s) {
    if (s <= 0) return r;
    const int sh = s > 31 ? 31 : s;
    auto f = [&](std::int64_t v, bool up) {
        if (v == numeric::Interval::neg_inf || v == numeric::Interval::pos_inf) return v;
        return (v >> sh) + (up ? 1 : 0);
    };
    return {f(r.lo, false), f(r.hi, true)};
}

inline std::string num(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}
}  // namespace detail

/// Every node derives from this tag so that `Expr` can recognize nodes.
struct node_tag {};
template <class E>
concept Expr = std::is_base_of_v<node_tag, E>;

// ---------------------------------------------------------------------------------------------------------------
// Leaves

/// Input I, of element type T.
template <int I, AnyElement T>
struct In : node_tag {
    static_assert(I >= 0 && I < max_inputs, "input index must be in [0, max_inputs)");
    using type = T;
    static constexpr std::string_view kind = "in";
    static constexpr int arity = I + 1;
    lane_t<T> eval(const ScalarArgs& a) const {
        if constexpr (is_float_v<T>) return a.f[I];
        else if constexpr (is_wide_v<T>) return a.l[I];
        else return a.i[I];
    }
    batch_t<T> eval(const BatchArgs& a) const {
        static_assert(!is_wide_v<T>, "int64 lanes are evaluated by the scalar path only");
        if constexpr (is_float_v<T>) return a.f[I];
        else return a.i[I];
    }
    numeric::Interval range(const InputRanges& r) const { return r.set[I] ? r.r[I] : type_range<T>(); }
    void print(std::string& s) const { s += "in" + std::to_string(I) + ":" + std::string(dtype_name(dtype_v<T>)); }
    template <class F> void children(F&&) const {}
};

/// A constant, broadcast to every element.
template <AnyElement T>
struct Cst : node_tag {
    using type = T;
    static constexpr std::string_view kind = "cst";
    static constexpr int arity = 0;
    lane_t<T> v{};
    lane_t<T> eval(const ScalarArgs&) const { return v; }
    batch_t<T> eval(const BatchArgs&) const { return batch_t<T>(v); }
    numeric::Interval range(const InputRanges&) const {
        if constexpr (is_float_v<T>) return type_range<std::int32_t>();
        else return {v, v};
    }
    void print(std::string& s) const {
        if constexpr (is_wide_v<T>) s += std::to_string(v);  // exact: an int64 is not always a double
        else s += detail::num(static_cast<double>(v));
    }
    template <class F> void children(F&&) const {}
};

/// A per-channel constant: element c of `values` for elements whose channel coordinate is c. The span must outlive
/// the expression (op plans own their parameter vectors).
template <Element T>
struct Chan : node_tag {
    using type = T;
    static constexpr std::string_view kind = "chan";
    static constexpr int arity = 0;
    std::span<const lane_t<T>> values;
    lane_t<T> eval(const ScalarArgs& a) const { return values[static_cast<std::size_t>(a.channel)]; }
    batch_t<T> eval(const BatchArgs& a) const { return batch_t<T>::gather(values.data(), a.channel); }
    numeric::Interval range(const InputRanges&) const {
        if constexpr (is_float_v<T>) return type_range<std::int32_t>();
        else {
            numeric::Interval r{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
            for (auto v : values) r = {std::min<std::int64_t>(r.lo, v), std::max<std::int64_t>(r.hi, v)};
            return values.empty() ? numeric::Interval{0, 0} : r;
        }
    }
    void print(std::string& s) const { s += "chan[" + std::to_string(values.size()) + "]"; }
    template <class F> void children(F&&) const {}
};

// ---------------------------------------------------------------------------------------------------------------
// Conversions

/// Integer to int32 (exact, no lane change).
template <Expr E>
struct Widen : node_tag {
    static_assert(is_int_v<typename E::type>, "widen() takes an integer expression; use to_float() for floats");
    using type = std::int32_t;
    static constexpr std::string_view kind = "widen";
    static constexpr int arity = E::arity;
    E e;
    std::int32_t eval(const ScalarArgs& a) const { return e.eval(a); }
    batch_t<type> eval(const BatchArgs& a) const { return e.eval(a); }
    numeric::Interval range(const InputRanges& r) const { return e.range(r); }
    void print(std::string& s) const { s += "widen("; e.print(s); s += ")"; }
    template <class F> void children(F&& f) const { f(e); }
};

/// Integer to float (exact while |x| < 2^24; range analysis checks it).
template <Expr E>
struct ToFloat : node_tag {
    static_assert(is_int_v<typename E::type>, "to_float() takes an integer expression");
    using type = float;
    static constexpr std::string_view kind = "to_float";
    static constexpr int arity = E::arity;
    E e;
    float eval(const ScalarArgs& a) const { return static_cast<float>(e.eval(a)); }
    batch_t<float> eval(const BatchArgs& a) const { return xsimd::batch_cast<float>(e.eval(a)); }
    numeric::Interval range(const InputRanges& r) const { return e.range(r); }
    void print(std::string& s) const { s += "to_float("; e.print(s); s += ")"; }
    template <class F> void children(F&& f) const { f(e); }
};

/// Narrow to T with saturation. From an integer: clamp to T's range. From float (T integer): round half to even,
/// then clamp; NaN becomes 0. From integer to float T: exact conversion (as to_float).
template <Element T, Expr E>
struct Sat : node_tag {
    static_assert(!is_wide_v<typename E::type>, "no node converts from int64 lanes");
    using type = T;
    static constexpr std::string_view kind = "sat";
    static constexpr int arity = E::arity;
    E e;
    static constexpr auto lo = type_range<T>().lo;
    static constexpr auto hi = type_range<T>().hi;

    lane_t<T> eval(const ScalarArgs& a) const {
        using S = typename E::type;
        if constexpr (is_float_v<T> && is_float_v<S>) return e.eval(a);
        else if constexpr (is_float_v<T>) return static_cast<float>(e.eval(a));
        else if constexpr (is_float_v<S>) {
            const float raw = e.eval(a);
            const float v = std::isnan(raw) ? 0.0f : raw;
            // Clamp in float: both bounds are exact floats, so the conversion below is always defined. The order
            // of operations is the batch path's, step for step.
            const float r = std::nearbyint(v > static_cast<float>(lo) ? v : static_cast<float>(lo));
            const float c = r < flt_hi() ? r : flt_hi();
            const auto n = static_cast<std::int32_t>(c > static_cast<float>(lo) ? c : static_cast<float>(lo));
            // int32 only: a float above flt_hi() is >= 2^31 and saturates to hi = flt_hi() + 127.
            if constexpr (top() != 0) return r > flt_hi() ? n + top() : n;
            else return n;
        } else {
            const std::int32_t v = e.eval(a);
            return v < lo ? static_cast<std::int32_t>(lo) : v > hi ? static_cast<std::int32_t>(hi) : v;
        }
    }
    batch_t<T> eval(const BatchArgs& a) const {
        using S = typename E::type;
        if constexpr (is_float_v<T> && is_float_v<S>) return e.eval(a);
        else if constexpr (is_float_v<T>) return xsimd::batch_cast<float>(e.eval(a));
        else if constexpr (is_float_v<S>) {
            const auto raw = e.eval(a);
            const auto zero = xsimd::batch<float, arch>(0.0f);
            const auto v = xsimd::select(!(raw == raw), zero, raw);  // NaN -> 0 (not `!=`: see Cmp::apply)
            const auto lo_b = xsimd::batch<float, arch>(static_cast<float>(lo));
            const auto hi_b = xsimd::batch<float, arch>(flt_hi());
            const auto r = xsimd::nearbyint(xsimd::select(v > lo_b, v, lo_b));
            const auto c = xsimd::select(r < hi_b, r, hi_b);
            const auto n = xsimd::batch_cast<std::int32_t>(xsimd::select(c > lo_b, c, lo_b));
            if constexpr (top() != 0)
                return n + xsimd::batch_cast<std::int32_t>(
                               xsimd::select(r > hi_b, xsimd::batch<float, arch>(static_cast<float>(top())), zero));
            else return n;
        } else {
            const auto v = e.eval(a);
            return xsimd::min(xsimd::max(v, batch_t<T>(static_cast<std::int32_t>(lo))),
                              batch_t<T>(static_cast<std::int32_t>(hi)));
        }
    }
    numeric::Interval range(const InputRanges& r) const {
        if constexpr (is_float_v<T>) return e.range(r);
        else if constexpr (is_float_v<typename E::type>) return type_range<T>();
        else return clamp(e.range(r), type_range<T>().lo, type_range<T>().hi);
    }
    void print(std::string& s) const { s += "sat<" + std::string(dtype_name(dtype_v<T>)) + ">("; e.print(s); s += ")"; }
    template <class F> void children(F&& f) const { f(e); }

private:
    // The largest float <= hi (2^31 - 1 is not a float; 2147483520 is the largest float below 2^31).
    static constexpr float flt_hi() { return hi >= 2147483520 ? 2147483520.0f : static_cast<float>(hi); }
    // hi - flt_hi(): 127 for int32 (whose saturation needs one more step), 0 for int8 / uint8.
    static constexpr std::int32_t top() { return hi >= 2147483520 ? static_cast<std::int32_t>(hi - 2147483520) : 0; }
};

/// Narrow to T with T's own arithmetic: the boundary of a plain (not quantized) computation.
///   - integer T: modulo 2^bits(T) (two's complement wrap-around, numpy's integer arithmetic). T int8 / uint8 /
///     int16 / uint16 / int32 from an int32-lane expression, int64 / uint32 from an int64-lane one. Its operand's
///     ring nodes (add, sub, mul, neg, shl, widen, in, cst: see check_ranges) compute modulo 2^32 or 2^64, of which
///     2^bits(T) is a divisor, so wrap<T>(add(a, b)) is (a + b) mod 2^bits(T) in T's range.
///   - float16 from a float expression: rounded to the nearest binary16, ties to even (core/float16.hpp), overflow to
///     infinity. For one + - * / or sqrt of float16 operands this is the correctly rounded float16 result.
template <AnyElement T, Expr E>
struct Wrap : node_tag {
    using S = typename E::type;
    static constexpr bool half = std::is_same_v<T, float16>;
    static_assert(half ? std::is_same_v<S, float> : !is_float_v<T> && !is_float_v<S>,
                  "wrap() narrows integers, or a float expression to float16; float32 narrows with sat()");
    static_assert(is_wide_v<T> == is_wide_v<S>,
                  "wrap<int64_t|uint32_t>() takes int64 lanes, wrap<int8|uint8|int16|uint16|int32>() int32 lanes");
    using type = T;
    static constexpr std::string_view kind = "wrap";
    static constexpr int arity = E::arity;
    E e;
    lane_t<T> eval(const ScalarArgs& a) const {
        if constexpr (half) return static_cast<float>(float16(e.eval(a)));
        else return static_cast<T>(e.eval(a));  // modular conversion (C++20)
    }
    batch_t<T> eval(const BatchArgs& a) const {
        const auto x = e.eval(a);
        if constexpr (half) {  // no SIMD binary16 conversion in xsimd: the scalar conversion on each lane
            alignas(64) std::array<float, lanes> v;
            x.store_aligned(v.data());
            for (float& f : v) f = static_cast<float>(float16(f));
            return batch_t<T>::load_aligned(v.data());
        } else if constexpr (std::is_same_v<T, std::int8_t>) return (x << 24) >> 24;  // arithmetic shift: sign extension
        else if constexpr (std::is_same_v<T, std::uint8_t>) return x & batch_t<T>(0xFF);
        else if constexpr (std::is_same_v<T, std::int16_t>) return (x << 16) >> 16;
        else if constexpr (std::is_same_v<T, std::uint16_t>) return x & batch_t<T>(0xFFFF);
        else return x;
    }
    numeric::Interval range(const InputRanges& r) const {
        (void)e.range(r);
        return type_range<T>();
    }
    void print(std::string& s) const {
        s += "wrap<" + std::string(dtype_name(dtype_v<T>)) + ">(";
        e.print(s);
        s += ")";
    }
    template <class F> void children(F&& f) const { f(e); }
};

// ---------------------------------------------------------------------------------------------------------------
// Arithmetic

enum class BinOp { add, sub, mul, div, min, max };
constexpr std::string_view binop_name(BinOp op) {
    constexpr std::array<std::string_view, 6> names{"add", "sub", "mul", "div", "min", "max"};
    return names[static_cast<std::size_t>(op)];
}

template <BinOp Op, Expr A, Expr B>
struct Bin : node_tag {
    using TA = typename A::type;
    using TB = typename B::type;
    static_assert(is_float_v<TA> == is_float_v<TB>,
                  "binary primitives need both operands integer or both float: insert to_float() or sat<T>()");
    static_assert(Op != BinOp::div || is_float_v<TA>, "div is a float primitive; integers divide with rq()");
    static_assert(is_wide_v<TA> == is_wide_v<TB>, "int64 lanes combine only with int64 lanes");
    using type = std::conditional_t<is_float_v<TA>, float, std::conditional_t<is_wide_v<TA>, std::int64_t,
                                                                               std::int32_t>>;
    static constexpr std::string_view kind = binop_name(Op);
    static constexpr int arity = A::arity > B::arity ? A::arity : B::arity;
    A a;
    B b;

    lane_t<type> eval(const ScalarArgs& s) const {
        const auto x = a.eval(s);
        const auto y = b.eval(s);
        if constexpr (is_float_v<type>) {
            if constexpr (Op == BinOp::add) return x + y;
            else if constexpr (Op == BinOp::sub) return x - y;
            else if constexpr (Op == BinOp::mul) return x * y;
            else if constexpr (Op == BinOp::div) return x / y;
            // min/max follow xsimd (SSE minps/maxps): if either is NaN the SECOND operand is returned.
            else if constexpr (Op == BinOp::min) return x < y ? x : y;
            else return x > y ? x : y;
        } else {
            if constexpr (Op == BinOp::add) return detail::wrap_add(x, y);
            else if constexpr (Op == BinOp::sub) return detail::wrap_sub(x, y);
            else if constexpr (Op == BinOp::mul) return detail::wrap_mul(x, y);
            else if constexpr (Op == BinOp::min) return x < y ? x : y;
            else return x > y ? x : y;
        }
    }
    batch_t<type> eval(const BatchArgs& s) const {
        const auto x = a.eval(s);
        const auto y = b.eval(s);
        if constexpr (Op == BinOp::add) return x + y;
        else if constexpr (Op == BinOp::sub) return x - y;
        else if constexpr (Op == BinOp::mul && !is_float_v<type>) {
            // Through uint32 lanes: xsimd 8.1's SSE2 int32 multiply is a per-lane signed `*` (UB on overflow).
            using U = xsimd::batch<std::uint32_t, arch>;
            return xsimd::bitwise_cast<batch_t<type>>(xsimd::bitwise_cast<U>(x) * xsimd::bitwise_cast<U>(y));
        } else if constexpr (Op == BinOp::mul) return x * y;
        else if constexpr (Op == BinOp::div) return x / y;
        else if constexpr (Op == BinOp::min) return xsimd::select(x < y, x, y);
        else return xsimd::select(x > y, x, y);
    }
    numeric::Interval range(const InputRanges& r) const {
        if constexpr (is_float_v<type>) return type_range<std::int32_t>();
        else if constexpr (is_wide_v<type>) return type_range<type>();
        else {
            const auto x = a.range(r), y = b.range(r);
            if constexpr (Op == BinOp::add) return add(x, y);
            else if constexpr (Op == BinOp::sub) return sub(x, y);
            else if constexpr (Op == BinOp::mul) return mul(x, y);
            else if constexpr (Op == BinOp::min) return min(x, y);
            else return max(x, y);
        }
    }
    void print(std::string& s) const {
        s += std::string(kind) + "(";
        a.print(s);
        s += ", ";
        b.print(s);
        s += ")";
    }
    template <class F> void children(F&& f) const { f(a); f(b); }
};

enum class UnOp { neg, abs, exp, tanh, erf, sqrt };
constexpr std::string_view unop_name(UnOp op) {
    constexpr std::array<std::string_view, 6> names{"neg", "abs", "exp", "tanh", "erf", "sqrt"};
    return names[static_cast<std::size_t>(op)];
}

template <UnOp Op, Expr E>
struct Un : node_tag {
    using T = typename E::type;
    static_assert(!is_wide_v<T>, "int64 lanes take in, cst, add, sub, mul, min, max, cmp, select and wrap only");
    static_assert(Op == UnOp::neg || Op == UnOp::abs || is_float_v<T>,
                  "exp/tanh/erf/sqrt are float primitives; quantized ops use a lut() built from the float function");
    using type = std::conditional_t<is_float_v<T>, float, std::int32_t>;
    static constexpr std::string_view kind = unop_name(Op);
    static constexpr int arity = E::arity;
    E e;

    lane_t<type> eval(const ScalarArgs& s) const {
        const auto x = e.eval(s);
        if constexpr (is_float_v<type>) {
            if constexpr (Op == UnOp::neg) return -x;
            else if constexpr (Op == UnOp::abs) return std::fabs(x);
            // Transcendentals: the scalar path runs xsimd's batch algorithm on a broadcast value, so that the two
            // paths agree bit for bit (std::exp and xsimd::exp may differ in the last ulp).
            else return eval(batch_t<float>(x)).get(0);
        } else {
            if constexpr (Op == UnOp::neg) return detail::wrap_neg(x);
            else return detail::wrap_abs(x);
        }
    }
    batch_t<type> eval(const BatchArgs& s) const { return eval(e.eval(s)); }
    numeric::Interval range(const InputRanges& r) const {
        if constexpr (is_float_v<type>) return type_range<std::int32_t>();
        else if constexpr (Op == UnOp::neg) return neg(e.range(r));
        else return abs(e.range(r));
    }
    void print(std::string& s) const { s += std::string(kind) + "("; e.print(s); s += ")"; }
    template <class F> void children(F&& f) const { f(e); }

private:
    static batch_t<type> eval(const batch_t<type>& x) {
        // Float negation flips the sign bit, NaN included, as scalar `-x` does (xsimd 8.1's AVX-512 `-x` computes
        // 0 - x, which keeps a NaN's sign).
        if constexpr (Op == UnOp::neg && is_float_v<type>) return x ^ batch_t<type>(-0.0f);
        else if constexpr (Op == UnOp::neg) return -x;
        else if constexpr (Op == UnOp::abs) return xsimd::abs(x);
        else if constexpr (Op == UnOp::exp) return xsimd::exp(x);
        else if constexpr (Op == UnOp::tanh) return xsimd::tanh(x);
        else if constexpr (Op == UnOp::sqrt) return xsimd::sqrt(x);  // IEEE: correctly rounded, as std::sqrt
        else return xsimd::erf(x);
    }
};

/// x * 2^s, 0 <= s <= 31 (integer; exactness proved by range analysis).
template <Expr E>
struct Shl : node_tag {
    static_assert(is_int_v<typename E::type>, "shl() is an integer primitive");
    using type = std::int32_t;
    static constexpr std::string_view kind = "shl";
    static constexpr int arity = E::arity;
    E e;
    int s = 0;
    std::int32_t eval(const ScalarArgs& a) const { return detail::wrap_shl(e.eval(a), s); }
    batch_t<type> eval(const BatchArgs& a) const { return e.eval(a) << s; }
    numeric::Interval range(const InputRanges& r) const { return shift_left(e.range(r), s); }
    void print(std::string& str) const { str += "shl("; e.print(str); str += ", " + std::to_string(s) + ")"; }
    template <class F> void children(F&& f) const { f(e); }
};

/// round(x / 2^s), ties away from zero (gemmlowp RoundingDivideByPOT), 0 <= s <= 31.
template <Expr E>
struct Rshift : node_tag {
    static_assert(is_int_v<typename E::type>, "rshift() is an integer primitive");
    using type = std::int32_t;
    static constexpr std::string_view kind = "rshift";
    static constexpr int arity = E::arity;
    E e;
    int s = 0;
    std::int32_t eval(const ScalarArgs& a) const { return numeric::rounding_divide_by_pot(e.eval(a), s); }
    batch_t<type> eval(const BatchArgs& a) const {
        const auto x = e.eval(a);
        if (s <= 0) return x;
        const int sh = s > 31 ? 31 : s;
        const std::int32_t m = static_cast<std::int32_t>((std::int64_t{1} << sh) - 1);
        const auto mask = batch_t<type>(m);
        const auto rem = x & mask;
        const auto threshold = (mask >> 1) + xsimd::select(x < batch_t<type>(0), batch_t<type>(1), batch_t<type>(0));
        return (x >> sh) + xsimd::select(rem > threshold, batch_t<type>(1), batch_t<type>(0));
    }
    numeric::Interval range(const InputRanges& r) const { return detail::round_shift_right_range(e.range(r), s); }
    void print(std::string& str) const { str += "rshift("; e.print(str); str += ", " + std::to_string(s) + ")"; }
    template <class F> void children(F&& f) const { f(e); }
};

/// The rounding of an rq node chosen by VALUE: the node holds a numeric::Rounding (its plan's, `janusc --rounding`)
/// and dispatches on it once per evaluated vector, so one kernel instantiation serves all three modes (the typed
/// modes of numeric/rounding.hpp stay the primitives it calls).
struct by_plan {};

/// A typed rounding mode, or by_plan.
template <class R>
concept RqRounding = numeric::RoundingMode<R> || std::same_as<R, by_plan>;

namespace detail {
/// The mode an rq node of rounding R starts with (by_plan nodes get theirs from their factory).
template <class R>
constexpr numeric::Rounding initial_mode() {
    if constexpr (std::same_as<R, by_plan>) return numeric::default_rounding_mode;
    else return numeric::rounding_of<R>;
}

/// The values of round_mode(x * q) for x in `x`. round_double saturates x << shift before multiplying
/// (rounding.hpp), so for shift > 0 its values are those of the saturated shifted input times the bare mantissa, not
/// of x * M; the other modes are exact up to rounding.
inline numeric::Interval rq_range(numeric::Rounding mode, numeric::Interval x, const numeric::QuantizedMultiplier& q) {
    if (mode == numeric::Rounding::round_double && q.shift > 0 && q.multiplier != 0)
        return scale(clamp(shift_left(x, q.shift), std::numeric_limits<std::int32_t>::min(),
                           std::numeric_limits<std::int32_t>::max()),
                     numeric::QuantizedMultiplier{q.multiplier, 0});
    return scale(x, q);
}

/// The printed name of a mode ("double", "single", "half_even": the mode types' names).
inline std::string_view rq_mode_name(numeric::Rounding mode) {
    return numeric::visit_rounding(mode, [](auto m) { return decltype(m)::name; });
}
}  // namespace detail

/// round(x * M): fixed-point multiply by a QuantizedMultiplier, rounding mode R (numeric/rounding.hpp) or, for
/// R = by_plan, the mode `mode`. Per-tensor (`m`) or per-channel (`per_channel` non-empty: element c uses
/// per_channel[channel]).
template <RqRounding R, Expr E>
struct Rq : node_tag {
    static_assert(is_int_v<typename E::type>, "rq() takes an integer expression");
    using type = std::int32_t;
    using rounding = R;
    static constexpr std::string_view kind = "rq";
    static constexpr int arity = E::arity;
    E e;
    numeric::QuantizedMultiplier m{};
    std::span<const numeric::QuantizedMultiplier> per_channel{};
    numeric::Rounding mode = detail::initial_mode<R>();

    std::int32_t eval(const ScalarArgs& a) const {
        const auto& q = per_channel.empty() ? m : per_channel[static_cast<std::size_t>(a.channel)];
        if constexpr (std::same_as<R, by_plan>) return numeric::multiply_by_quantized_multiplier(mode, e.eval(a), q);
        else return R::apply(e.eval(a), q);
    }
    batch_t<type> eval(const BatchArgs& a) const {
        const auto x = e.eval(a);
        if constexpr (std::same_as<R, by_plan>)
            return numeric::visit_rounding(mode, [&](auto mt) { return eval_as<decltype(mt)>(x, a); });
        else return eval_as<R>(x, a);
    }
    // Per-tensor round_double (the default rounding) has an exact x86 SIMD form (ops/simd_fixed_point.hpp; the
    // elementwise bench shows the gain). Everything else uses the portable fallback: per lane through the scalar
    // primitive, bit-identical by construction.
    template <numeric::RoundingMode M>
    batch_t<type> eval_as(const batch_t<type>& x, const BatchArgs& a) const {
        if constexpr (std::is_same_v<M, numeric::round_double>)
            if (per_channel.empty()) return simd::round_double_batch(x, m);
        if (per_channel.empty()) return detail::per_lane([q = m](std::int32_t v) { return M::apply(v, q); }, x);
        return detail::per_lane(
            [pc = per_channel](std::int32_t v, std::int32_t c) { return M::apply(v, pc[static_cast<std::size_t>(c)]); },
            x, a.channel);
    }
    numeric::Interval range(const InputRanges& r) const {
        const auto x = e.range(r);
        if (per_channel.empty()) return detail::rq_range(mode, x, m);
        numeric::Interval out{0, 0};
        bool first = true;
        for (const auto& q : per_channel) {
            const auto y = detail::rq_range(mode, x, q);
            out = first ? y : join(out, y);
            first = false;
        }
        return out;
    }
    void print(std::string& s) const {
        s += "rq<" + std::string(detail::rq_mode_name(mode)) + ">(";
        e.print(s);
        if (per_channel.empty())
            s += ", " + std::to_string(m.multiplier) + "*2^" + std::to_string(m.shift - 31) + ")";
        else
            s += ", chan[" + std::to_string(per_channel.size()) + "])";
    }
    template <class F> void children(F&& f) const { f(e); }
};

/// round(x * table[k - base]): fixed-point multiply by a multiplier chosen PER ELEMENT by an integer index
/// expression k (e.g. the divisor of an averaging window: ops/pool.hpp, one multiplier per count), rounding as Rq.
/// Every k must lie in [base, base + table.size()): range() proves it and reports an unbounded interval otherwise, so
/// check_ranges refuses the expression ("intermediate-fits-int32" on node rq_indexed). The span must outlive the
/// expression.
template <RqRounding R, Expr E, Expr K>
struct RqIndexed : node_tag {
    static_assert(is_int_v<typename E::type> && is_int_v<typename K::type>, "rq_indexed() takes integer x and k");
    using type = std::int32_t;
    using rounding = R;
    static constexpr std::string_view kind = "rq_indexed";
    static constexpr int arity = E::arity > K::arity ? E::arity : K::arity;
    E e;
    K k;
    std::span<const numeric::QuantizedMultiplier> table{};
    std::int32_t base = 0;
    numeric::Rounding mode = detail::initial_mode<R>();

    std::int32_t eval(const ScalarArgs& a) const {
        const auto& q = table[static_cast<std::size_t>(k.eval(a) - base)];
        if constexpr (std::same_as<R, by_plan>) return numeric::multiply_by_quantized_multiplier(mode, e.eval(a), q);
        else return R::apply(e.eval(a), q);
    }
    batch_t<type> eval(const BatchArgs& a) const {  // portable fallback: per lane through the scalar primitive
        const auto lanes = [&](auto mt) {
            using M = decltype(mt);
            return detail::per_lane([t = table, b = base](std::int32_t v, std::int32_t i) {
                return M::apply(v, t[static_cast<std::size_t>(i - b)]);
            }, e.eval(a), k.eval(a));
        };
        if constexpr (std::same_as<R, by_plan>) return numeric::visit_rounding(mode, lanes);
        else return lanes(R{});
    }
    numeric::Interval range(const InputRanges& r) const {
        const auto x = e.range(r);
        const auto i = k.range(r);
        if (table.empty() || i.lo < base || i.hi >= base + static_cast<std::int64_t>(table.size()))
            return numeric::Interval::unbounded();
        numeric::Interval out{0, 0};
        for (std::int64_t j = i.lo; j <= i.hi; ++j) {
            const auto y = detail::rq_range(mode, x, table[static_cast<std::size_t>(j - base)]);
            out = j == i.lo ? y : join(out, y);
        }
        return out;
    }
    void print(std::string& s) const {
        s += "rq_indexed<" + std::string(detail::rq_mode_name(mode)) + ">(";
        e.print(s);
        s += ", ";
        k.print(s);
        s += ", table[" + std::to_string(table.size()) + "]@" + std::to_string(base) + ")";
    }
    template <class F> void children(F&& f) const { f(e); f(k); }
};

/// min(max(x, lo), hi).
template <Expr E>
struct Clamp : node_tag {
    static_assert(!is_wide_v<typename E::type>, "int64 lanes: write clamp as select(cmp(...))");
    using type = std::conditional_t<is_float_v<typename E::type>, float, std::int32_t>;
    static constexpr std::string_view kind = "clamp";
    static constexpr int arity = E::arity;
    E e;
    lane_t<type> lo{};
    lane_t<type> hi{};
    lane_t<type> eval(const ScalarArgs& a) const {
        const auto v = e.eval(a);
        const auto t = v > lo ? v : lo;  // same operand order as the batch path (NaN handling included)
        return t < hi ? t : hi;
    }
    batch_t<type> eval(const BatchArgs& a) const {
        const auto v = e.eval(a);
        const auto t = xsimd::select(v > batch_t<type>(lo), v, batch_t<type>(lo));
        return xsimd::select(t < batch_t<type>(hi), t, batch_t<type>(hi));
    }
    numeric::Interval range(const InputRanges& r) const {
        if constexpr (is_float_v<type>) return type_range<std::int32_t>();
        else return clamp(e.range(r), lo, hi);
    }
    void print(std::string& s) const {
        s += "clamp(";
        e.print(s);
        s += ", " + detail::num(static_cast<double>(lo)) + ", " + detail::num(static_cast<double>(hi)) + ")";
    }
    template <class F> void children(F&& f) const { f(e); }
};

enum class CmpOp { lt, le, gt, ge, eq, ne };
constexpr std::string_view cmpop_name(CmpOp op) {
    constexpr std::array<std::string_view, 6> names{"lt", "le", "gt", "ge", "eq", "ne"};
    return names[static_cast<std::size_t>(op)];
}

/// A comparison; its value is a mask consumed by select().
template <CmpOp Op, Expr A, Expr B>
struct Cmp : node_tag {
    static_assert(is_float_v<typename A::type> == is_float_v<typename B::type>,
                  "cmp() needs both operands integer or both float");
    static_assert(is_wide_v<typename A::type> == is_wide_v<typename B::type>,
                  "int64 lanes compare only with int64 lanes");
    using type = bool;
    using operand_type = lane_t<typename A::type>;
    static constexpr std::string_view kind = cmpop_name(Op);
    static constexpr int arity = A::arity > B::arity ? A::arity : B::arity;
    A a;
    B b;
    bool eval(const ScalarArgs& s) const { return apply(a.eval(s), b.eval(s)); }
    mask_t<operand_type> eval(const BatchArgs& s) const { return apply(a.eval(s), b.eval(s)); }
    numeric::Interval range(const InputRanges& r) const {
        (void)a.range(r);
        (void)b.range(r);
        return {0, 1};
    }
    void print(std::string& s) const {
        s += std::string(kind) + "(";
        a.print(s);
        s += ", ";
        b.print(s);
        s += ")";
    }
    template <class F> void children(F&& f) const { f(a); f(b); }

private:
    template <class X>
    static auto apply(const X& x, const X& y) {
        if constexpr (Op == CmpOp::lt) return x < y;
        else if constexpr (Op == CmpOp::le) return x <= y;
        else if constexpr (Op == CmpOp::gt) return x > y;
        else if constexpr (Op == CmpOp::ge) return x >= y;
        else if constexpr (Op == CmpOp::eq) return x == y;
        // IEEE `!=` is true for NaN. Spelled !(x == y): xsimd 8.1's AVX/AVX-512 `!=` is ordered (_CMP_NEQ_OQ) and
        // returns false for NaN (xsimd issue #805, fixed after 8.1); SSE2's `!=` and the scalar one are right.
        else return !(x == y);
    }
};

/// cond ? a : b (elementwise).
template <Expr C, Expr A, Expr B>
struct Select : node_tag {
    static_assert(std::is_same_v<typename C::type, bool>, "select() takes a cmp() as its condition");
    static_assert(is_float_v<typename A::type> == is_float_v<typename B::type>,
                  "select() branches must be both integer or both float");
    using type = std::conditional_t<is_float_v<typename A::type>, float,
                                    std::conditional_t<std::is_same_v<typename A::type, typename B::type>,
                                                       typename A::type, std::int32_t>>;
    static_assert(is_float_v<typename C::operand_type> == is_float_v<type>,
                  "select(): compare values of the same lane kind as the branches (int with int, float with float)");
    static_assert(is_wide_v<typename A::type> == is_wide_v<typename B::type> &&
                      is_wide_v<typename C::operand_type> == is_wide_v<typename A::type>,
                  "select(): int64 lanes select only between int64 lanes, on an int64 comparison");
    static constexpr std::string_view kind = "select";
    static constexpr int arity = std::max({C::arity, A::arity, B::arity});
    C c;
    A a;
    B b;
    lane_t<type> eval(const ScalarArgs& s) const { return c.eval(s) ? a.eval(s) : b.eval(s); }
    batch_t<type> eval(const BatchArgs& s) const { return xsimd::select(c.eval(s), a.eval(s), b.eval(s)); }
    numeric::Interval range(const InputRanges& r) const {
        (void)c.range(r);
        if constexpr (is_float_v<type>) return type_range<std::int32_t>();
        else return join(a.range(r), b.range(r));
    }
    void print(std::string& s) const {
        s += "select(";
        c.print(s);
        s += ", ";
        a.print(s);
        s += ", ";
        b.print(s);
        s += ")";
    }
    template <class F> void children(F&& f) const { f(c); f(a); f(b); }
};

/// A 256-entry table: out = values[x - min(In)] for an int8 or uint8 input x. A first-class value: the reference
/// kernel and the NPU's LUT unit read the same entries.
struct Table256 {
    DType in = DType::i8;
    DType out = DType::i8;
    std::array<std::int32_t, 256> values{};
    friend bool operator==(const Table256&, const Table256&) = default;
};

template <Element Out, Expr E>
struct Lut : node_tag {
    using In = typename E::type;
    static_assert(std::is_same_v<In, std::int8_t> || std::is_same_v<In, std::uint8_t>,
                  "lut() indexes with an int8 or uint8 expression: apply sat<int8_t>() first");
    static_assert(!is_float_v<Out>, "lut() produces integers");
    using type = Out;
    static constexpr std::string_view kind = "lut";
    static constexpr int arity = E::arity;
    E e;
    std::shared_ptr<const Table256> table;
    static constexpr std::int32_t base = static_cast<std::int32_t>(type_range<In>().lo);

    std::int32_t eval(const ScalarArgs& a) const { return table->values[static_cast<std::size_t>(e.eval(a) - base)]; }
    // Lane by lane: a hardware gather (vpgatherdd) measured slower than 16 scalar loads on this AMD EPYC
    // (bench/RESULTS.md, SigmoidInt8).
    batch_t<type> eval(const BatchArgs& a) const {
        const auto* t = table->values.data();
        return detail::per_lane([t](std::int32_t v) { return t[static_cast<std::size_t>(v - base)]; }, e.eval(a));
    }
    numeric::Interval range(const InputRanges& r) const {
        (void)e.range(r);
        std::int64_t lo = table->values[0], hi = table->values[0];
        for (auto v : table->values) lo = std::min<std::int64_t>(lo, v), hi = std::max<std::int64_t>(hi, v);
        return {lo, hi};
    }
    void print(std::string& s) const { s += "lut("; e.print(s); s += ")"; }
    template <class F> void children(F&& f) const { f(e); }
};

// ---------------------------------------------------------------------------------------------------------------
// Builders: the spelling op definitions use.

template <int I, AnyElement T> constexpr In<I, T> in() { return {}; }
template <AnyElement T> Cst<T> cst(lane_t<T> v) { Cst<T> c; c.v = v; return c; }
inline Cst<std::int32_t> cst(std::int32_t v) { return cst<std::int32_t>(v); }
inline Cst<float> cstf(float v) { return cst<float>(v); }
template <Element T> Chan<T> chan(std::span<const lane_t<T>> v) { Chan<T> c; c.values = v; return c; }
template <Expr E> Widen<E> widen(E e) { return {{}, e}; }
template <Expr E> ToFloat<E> to_float(E e) { return {{}, e}; }
template <Element T, Expr E> Sat<T, E> sat(E e) { return {{}, e}; }
template <AnyElement T, Expr E> Wrap<T, E> wrap(E e) { return {{}, e}; }
template <Expr A, Expr B> Bin<BinOp::add, A, B> add(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Bin<BinOp::sub, A, B> sub(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Bin<BinOp::mul, A, B> mul(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Bin<BinOp::div, A, B> div(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Bin<BinOp::min, A, B> min(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Bin<BinOp::max, A, B> max(A a, B b) { return {{}, a, b}; }
template <Expr E> Un<UnOp::neg, E> neg(E e) { return {{}, e}; }
template <Expr E> Un<UnOp::abs, E> abs(E e) { return {{}, e}; }
template <Expr E> Un<UnOp::exp, E> exp(E e) { return {{}, e}; }
template <Expr E> Un<UnOp::tanh, E> tanh(E e) { return {{}, e}; }
template <Expr E> Un<UnOp::erf, E> erf(E e) { return {{}, e}; }
template <Expr E> Un<UnOp::sqrt, E> sqrt(E e) { return {{}, e}; }
template <Expr E> Shl<E> shl(E e, int s) { return {{}, e, s}; }
template <Expr E> Rshift<E> rshift(E e, int s) { return {{}, e, s}; }
template <numeric::RoundingMode R, Expr E> Rq<R, E> rq(E e, numeric::QuantizedMultiplier m) { return {{}, e, m, {}}; }
template <numeric::RoundingMode R, Expr E>
Rq<R, E> rq(E e, std::span<const numeric::QuantizedMultiplier> per_channel) { return {{}, e, {}, per_channel}; }
template <numeric::RoundingMode R, Expr E, Expr K>
RqIndexed<R, E, K> rq_indexed(E e, K k, std::span<const numeric::QuantizedMultiplier> table, std::int32_t base) {
    return {{}, e, k, table, base};
}
/// The by-value forms: the mode is the plan's (by_plan).
template <Expr E> Rq<by_plan, E> rq(E e, numeric::QuantizedMultiplier m, numeric::Rounding mode) {
    return {{}, e, m, {}, mode};
}
template <Expr E>
Rq<by_plan, E> rq(E e, std::span<const numeric::QuantizedMultiplier> per_channel, numeric::Rounding mode) {
    return {{}, e, {}, per_channel, mode};
}
template <Expr E, Expr K>
RqIndexed<by_plan, E, K> rq_indexed(E e, K k, std::span<const numeric::QuantizedMultiplier> table, std::int32_t base,
                                    numeric::Rounding mode) {
    return {{}, e, k, table, base, mode};
}
template <Expr E> Clamp<E> clamp(E e, lane_t<typename Clamp<E>::type> lo, lane_t<typename Clamp<E>::type> hi) {
    return {{}, e, lo, hi};
}
template <Expr A, Expr B> Cmp<CmpOp::lt, A, B> lt(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Cmp<CmpOp::le, A, B> le(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Cmp<CmpOp::gt, A, B> gt(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Cmp<CmpOp::ge, A, B> ge(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Cmp<CmpOp::eq, A, B> eq(A a, B b) { return {{}, a, b}; }
template <Expr A, Expr B> Cmp<CmpOp::ne, A, B> ne(A a, B b) { return {{}, a, b}; }
template <Expr C, Expr A, Expr B> Select<C, A, B> select(C c, A a, B b) { return {{}, c, a, b}; }
template <Element Out, Expr E> Lut<Out, E> lut(E e, std::shared_ptr<const Table256> t) { return {{}, e, std::move(t)}; }

// ---------------------------------------------------------------------------------------------------------------
// Whole-expression services

/// "sat<int8>(add(rq<double>(...), 3))" — stable text, pinned by golden tests.
template <Expr E>
std::string to_string(const E& e) {
    std::string s;
    e.print(s);
    return s;
}

/// Prove that every integer intermediate of `e` fits int32 for inputs in `r` (seed A5), and that every integer
/// converted to float is exact (|x| <= 2^24). Returns the output range or an Error naming the node.
/// Exempt: int64-lane nodes, and a ring node (add, sub, mul, neg, shl, widen, in, cst) whose path to a wrap() above it
/// has ring nodes only: its value is wanted modulo 2^32 (wrap's rule), so leaving int32 is the intended arithmetic.
/// Any other node (min, max, clamp, rq, cmp, ...) under a wrap is still proved: it does not commute with the modulo.
template <Expr E>
Result<numeric::Interval> check_ranges(const E& e, const InputRanges& r, const std::string& what) {
    std::string bad;
    numeric::Interval bad_range{0, 0};
    auto visit = [&](auto& self, const auto& n, bool modular) -> void {
        using N = std::decay_t<decltype(n)>;
        constexpr std::string_view k = N::kind;
        constexpr bool ring = k == "add" || k == "sub" || k == "mul" || k == "neg" || k == "shl" || k == "widen" ||
                              k == "in" || k == "cst";
        const bool exempt = modular && ring;
        n.children([&](const auto& c) { self(self, c, k == "wrap" || exempt); });
        if constexpr (!is_float_v<typename N::type> && !is_wide_v<typename N::type>) {
            const numeric::Interval iv = n.range(r);
            if (bad.empty() && !exempt && !iv.fits_i32()) bad = std::string(N::kind), bad_range = iv;
        }
        if constexpr (std::is_same_v<typename N::type, float>) {
            n.children([&](const auto& c) {
                using C = std::decay_t<decltype(c)>;
                if constexpr (is_int_v<typename C::type>) {
                    const numeric::Interval iv = c.range(r);
                    if (bad.empty() && (iv.lo < -(1 << 24) || iv.hi > (1 << 24)))
                        bad = std::string(N::kind) + " (int to float is not exact)", bad_range = iv;
                }
            });
        }
    };
    visit(visit, e, false);
    if (!bad.empty())
        return make_error(what, "node " + bad, "intermediate-fits-int32",
                          "an intermediate value may reach [" + std::to_string(bad_range.lo) + ", " +
                              std::to_string(bad_range.hi) + "], outside the exact range of its lane type");
    if constexpr (is_float_v<typename E::type>) return numeric::Interval{0, 0};
    else return e.range(r);
}

/// check_ranges as a Status, for kernels that only need the proof.
template <Expr E>
Status prove_ranges(const E& e, const InputRanges& r, const std::string& what) {
    auto res = check_ranges(e, r, what);
    if (!res.ok()) return res.error();
    return ok_status();
}

/// round_double's left shift x * 2^shift must not saturate for any x reaching an rq or rq_indexed node
/// (rounding.hpp's "within 1" precondition; their range() assumes it): numeric::requantize_range proves it per
/// multiplier (per-tensor, per-channel, or every table entry the index can reach). Rule
/// `requantize-left-shift-fits-int32`.
template <Expr E>
Status prove_rq_shifts(const E& e, const InputRanges& r, const std::string& what) {
    Status st = ok_status();
    auto visit = [&](auto& self, const auto& n) -> void {
        n.children([&](const auto& c) { self(self, c); });
        using N = std::decay_t<decltype(n)>;
        if constexpr (N::kind == std::string_view("rq") || N::kind == std::string_view("rq_indexed")) {
            const numeric::Interval x = n.e.range(r);
            auto one = [&](const numeric::QuantizedMultiplier& q) {
                if (!st.ok()) return;
                auto res = numeric::requantize_range(x, q, 0, std::numeric_limits<std::int32_t>::min(),
                                                     std::numeric_limits<std::int32_t>::max(), what);
                if (!res.ok()) st = res.error();
            };
            if constexpr (N::kind == std::string_view("rq")) {
                if (n.per_channel.empty()) one(n.m);
                for (const auto& q : n.per_channel) one(q);
            } else {
                const numeric::Interval i = n.k.range(r);
                const std::int64_t end = n.base + static_cast<std::int64_t>(n.table.size());
                for (std::int64_t j = std::max<std::int64_t>(i.lo, n.base); j <= i.hi && j < end; ++j)
                    one(n.table[static_cast<std::size_t>(j - n.base)]);
            }
        }
    };
    visit(visit, e);
    return st;
}

}  // namespace janus::expr
