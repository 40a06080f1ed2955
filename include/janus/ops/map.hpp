#pragma once
// Index structure `map`: out[i] = e(in0[i], in1[i], ...) for every logical index i of the output.
//
// Contract:
//   - every input's layout has exactly the output's shape (broadcasting is done BEFORE, by layout/view.hpp
//     broadcast_to, which gives stride-0 axes: the address stays while the index advances, seed B5);
//   - input k's dtype equals the type of In<k, T> in the expression, the output's dtype equals E::type;
//   - any layouts: padded, strided, reversed, broadcast. Rows are walked in row-major order of the output;
//   - `channel_axis` (output coordinates) feeds per-channel parameters (Chan, per-channel Rq): the element at index
//     i uses channel i[channel_axis]. -1: the expression has no per-channel parameters (channel 0).
//   - `simd = false` runs the scalar reference only; `true` uses xsimd batches where a full batch fits in the row and
//     the scalar path for the tail. Results are bit-identical (tests check it for every op). An int64 expression
//     (its root is int64: int64 lanes are closed, ops/expr.hpp) always runs the scalar path.
// The output may alias an input only if both have the same layout (elementwise in place).
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include <janus/layout/iterate.hpp>
#include <janus/ops/expr.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::ops {

struct MapOptions {
    bool simd = true;
    int channel_axis = -1;
};

namespace detail {

/// The element type the expression expects for input I (or void if it does not read it).
template <int I>
struct input_type_finder {
    template <class N> struct is_input : std::false_type {};
    template <class T> struct is_input<expr::In<I, T>> : std::true_type {};

    DType found = DType::f32;
    bool seen = false;
    template <class N>
    void operator()(const N& n) {
        if constexpr (is_input<N>::value) {
            found = dtype_v<typename N::type>;
            seen = true;
        } else {
            n.children(*this);
        }
    }
};

template <expr::Expr E, int I = 0>
Status check_input_types(const E& e, std::span<const Tensor> inputs, const std::string& what) {
    if constexpr (I < expr::max_inputs) {
        input_type_finder<I> f;
        f(e);
        if (f.seen) {
            if (static_cast<std::size_t>(I) >= inputs.size())
                return make_error(what, "input " + std::to_string(I), "input-count", "the kernel reads input " +
                                                                                         std::to_string(I) + " but only " +
                                                                                         std::to_string(inputs.size()) +
                                                                                         " were given");
            if (inputs[I].dtype != f.found)
                return make_error(what, "input " + std::to_string(I), "input-dtype",
                                  "expected " + std::string(dtype_name(f.found)) + ", got " +
                                      std::string(dtype_name(inputs[I].dtype)));
        }
        return check_input_types<E, I + 1>(e, inputs, what);
    } else {
        return ok_status();
    }
}

template <class T>
inline expr::lane_t<T> load_lane(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<expr::lane_t<T>>(v);
}

template <class T>
inline void store_lane(std::byte* p, expr::lane_t<T> v) {
    const T t = static_cast<T>(v);
    std::memcpy(p, &t, sizeof(T));
}

/// Input k's element at p, into the scalar arguments (its lane class by its dtype). Not a template of the
/// expression: compiled once, whatever the number of map kernels.
inline void load_scalar_arg(DType d, std::size_t k, const std::byte* p, expr::ScalarArgs& a) {
    visit_dtype(d, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (expr::is_float_v<T>) a.f[k] = load_lane<T>(p);
        else if constexpr (expr::is_int_v<T>) a.i[k] = load_lane<T>(p);
        else if constexpr (expr::is_wide_v<T>) a.l[k] = load_lane<T>(p);
    });
}

/// `lanes` elements of input k from p, `stride` bytes apart (0: broadcast), into the batch arguments.
inline void load_batch_arg(DType d, std::size_t k, const std::byte* p, std::int64_t stride, expr::BatchArgs& b) {
    visit_dtype(d, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (expr::Element<T>) {
            using L = expr::lane_t<T>;
            xsimd::batch<L, expr::arch> v;
            if (stride == 0) {
                v = xsimd::batch<L, expr::arch>(load_lane<T>(p));
            } else if (stride == static_cast<std::int64_t>(sizeof(T))) {
                if constexpr (std::is_same_v<T, L>) {
                    alignas(64) std::array<L, expr::lanes> same;
                    std::memcpy(same.data(), p, sizeof same);  // no aliasing assumption about the storage
                    v = xsimd::batch<L, expr::arch>::load_aligned(same.data());
                } else {
                    alignas(64) std::array<T, expr::lanes> raw;
                    std::memcpy(raw.data(), p, sizeof raw);
                    alignas(64) std::array<L, expr::lanes> wide;
                    for (std::size_t l = 0; l < expr::lanes; ++l) wide[l] = static_cast<L>(raw[l]);
                    v = xsimd::batch<L, expr::arch>::load_aligned(wide.data());
                }
            } else {
                alignas(64) std::array<L, expr::lanes> wide;
                for (std::size_t l = 0; l < expr::lanes; ++l)
                    wide[l] = load_lane<T>(p + static_cast<std::int64_t>(l) * stride);
                v = xsimd::batch<L, expr::arch>::load_aligned(wide.data());
            }
            if constexpr (std::is_same_v<L, float>) b.f[k] = v;
            else b.i[k] = v;
        }
    });
}

}  // namespace detail

template <expr::Expr E>
Status run_map(const E& e, std::span<const Tensor> inputs, Tensor& out, const MapOptions& opt = {},
               const std::string& what = "map") {
    using OutT = typename E::type;
    static_assert(expr::AnyElement<OutT>,
                  "the root of a map expression must produce an integer dtype, float16 or float");
    static_assert(E::arity <= expr::max_inputs, "too many inputs");
    if (out.dtype != dtype_v<OutT>)
        return make_error(what, "output", "output-dtype",
                          "expression produces " + std::string(dtype_name(dtype_v<OutT>)) + ", output is " +
                              std::string(dtype_name(out.dtype)));
    if (inputs.size() < static_cast<std::size_t>(E::arity))
        return make_error(what, "", "input-count", "expression reads " + std::to_string(E::arity) + " inputs");
    JANUS_CHECK(detail::check_input_types(e, inputs, what));
    for (std::size_t k = 0; k < inputs.size(); ++k)
        if (!(inputs[k].shape() == out.shape()))
            return make_error(what, "input " + std::to_string(k), "shape-equals-output",
                              "input shape " + inputs[k].shape().str() + " differs from output shape " +
                                  out.shape().str() + " (broadcast it first)");
    const int rank = out.rank();
    if (opt.channel_axis >= rank)
        return make_error(what, "", "channel-axis-in-range", "channel axis " + std::to_string(opt.channel_axis));
    const int last = rank - 1;
    const bool channel_is_inner = opt.channel_axis >= 0 && opt.channel_axis == last;

    // Per input: a reader of one element at a byte address, by the input's dtype.
    const std::size_t n_in = inputs.size();
    std::array<const std::byte*, expr::max_inputs> base{};
    std::array<std::int64_t, expr::max_inputs> inner_stride{};
    std::array<DType, expr::max_inputs> in_dtype{};
    for (std::size_t k = 0; k < n_in && k < expr::max_inputs; ++k) {
        base[k] = inputs[k].data();
        inner_stride[k] = rank > 0 ? inputs[k].layout.strides[last] : 0;
        in_dtype[k] = inputs[k].dtype;
    }
    const std::int64_t out_stride = rank > 0 ? out.layout.strides[last] : 0;

    auto read_scalar = [&](std::size_t k, const std::byte* p, expr::ScalarArgs& a) {
        detail::load_scalar_arg(in_dtype[k], k, p, a);
    };
    auto read_batch = [&](std::size_t k, const std::byte* p, std::int64_t stride, expr::BatchArgs& b) {
        detail::load_batch_arg(in_dtype[k], k, p, stride, b);
    };

    alignas(64) std::array<std::int32_t, expr::lanes> iota{};
    for (std::size_t l = 0; l < expr::lanes; ++l) iota[l] = static_cast<std::int32_t>(l);
    const auto iota_b = xsimd::batch<std::int32_t, expr::arch>::load_aligned(iota.data());

    for_each_row(out.shape(), [&](const Dims& idx, std::int64_t n) {
        std::array<const std::byte*, expr::max_inputs> row{};
        for (std::size_t k = 0; k < n_in && k < expr::max_inputs; ++k)
            row[k] = base[k] + (rank > 0 ? inputs[k].layout.address(idx) : inputs[k].layout.offset);
        std::byte* orow = out.data() + (rank > 0 ? out.layout.address(idx) : out.layout.offset);
        const std::int32_t row_channel =
            opt.channel_axis >= 0 && !channel_is_inner ? static_cast<std::int32_t>(idx[opt.channel_axis]) : 0;
        std::int64_t j = 0;
        if constexpr (!expr::is_wide_v<OutT>) {
            if (opt.simd) {
                for (; j + static_cast<std::int64_t>(expr::lanes) <= n; j += static_cast<std::int64_t>(expr::lanes)) {
                    expr::BatchArgs b;
                    for (std::size_t k = 0; k < n_in && k < expr::max_inputs; ++k)
                        read_batch(k, row[k] + j * inner_stride[k], inner_stride[k], b);
                    b.channel = channel_is_inner ? iota_b + static_cast<std::int32_t>(j)
                                                 : xsimd::batch<std::int32_t, expr::arch>(row_channel);
                    const auto r = e.eval(b);
                    alignas(64) std::array<expr::lane_t<OutT>, expr::lanes> res;
                    r.store_aligned(res.data());
                    if (out_stride == static_cast<std::int64_t>(sizeof(OutT))) {
                        alignas(64) std::array<OutT, expr::lanes> narrow;
                        for (std::size_t l = 0; l < expr::lanes; ++l) narrow[l] = static_cast<OutT>(res[l]);
                        std::memcpy(orow + j * out_stride, narrow.data(), sizeof narrow);
                    } else {
                        for (std::size_t l = 0; l < expr::lanes; ++l)
                            detail::store_lane<OutT>(orow + (j + static_cast<std::int64_t>(l)) * out_stride, res[l]);
                    }
                }
            }
        }
        for (; j < n; ++j) {
            expr::ScalarArgs a;
            for (std::size_t k = 0; k < n_in && k < expr::max_inputs; ++k)
                read_scalar(k, row[k] + j * inner_stride[k], a);
            a.channel = channel_is_inner ? static_cast<std::int32_t>(j) : row_channel;
            detail::store_lane<OutT>(orow + j * out_stride, e.eval(a));
        }
    });
    return ok_status();
}

/// The plain-integer kernel of an op (ops/op.hpp PlainInts): the expression `make(std::type_identity<T>{})` for T the
/// C++ type of integer dtype `dtype`, range-proved (expr::prove_ranges: ring nodes under a wrap are exempt), mapped
/// over `inputs` into a new tensor of that dtype and `shape`, without quantization.
template <class Make>
Result<Tensor> run_plain_int_map(DType dtype, Make&& make, std::span<const Tensor> inputs, const Shape& shape,
                                 const MapOptions& opt, const std::string& what) {
    return visit_int_dtype(dtype, [&](auto tag) -> Result<Tensor> {
        const auto e = make(tag);
        JANUS_CHECK(expr::prove_ranges(e, {}, what));
        Tensor y = Tensor::zeros(dtype, shape);
        JANUS_CHECK(run_map(e, inputs, y, opt, what));
        return y;
    });
}

}  // namespace janus::ops
