#pragma once
// Tensor: storage + Layout + element type + optional quantization. Views share storage and never copy.
//
// Contract: `storage` always covers layout.byte_extent(); element (i0..) lives at storage + layout.address(i).
// Quantized tensors (int8/uint8 with `quant`) mean real = scale * (q - zero_point) (numeric/quant_params.hpp).
// Tensors are values with shared storage: copying a Tensor copies the handle, not the bytes (use clone()).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <janus/core/dtype.hpp>
#include <janus/core/error.hpp>
#include <janus/layout/iterate.hpp>
#include <janus/layout/layout.hpp>
#include <janus/numeric/quant_params.hpp>

namespace janus {

struct Tensor {
    DType dtype = DType::f32;
    Layout layout;
    std::optional<numeric::QuantParams> quant;
    std::shared_ptr<std::vector<std::byte>> storage;

    const Shape& shape() const noexcept { return layout.shape; }
    int rank() const noexcept { return layout.rank(); }
    std::int64_t elements() const noexcept { return layout.elements(); }
    bool quantized() const noexcept { return quant.has_value(); }

    /// A new contiguous, zero-filled tensor.
    static Tensor zeros(DType dtype, const Shape& shape, std::optional<numeric::QuantParams> q = std::nullopt) {
        Tensor t;
        t.dtype = dtype;
        t.layout = Layout::contiguous(shape, static_cast<std::int64_t>(dtype_size(dtype)));
        t.quant = std::move(q);
        t.storage = std::make_shared<std::vector<std::byte>>(
            static_cast<std::size_t>(t.layout.byte_extent().second));
        return t;
    }
    /// A new tensor with the given physical layout (e.g. Layout::padded); padding bytes are zero.
    static Tensor with_layout(DType dtype, const Layout& layout, std::optional<numeric::QuantParams> q = std::nullopt) {
        JANUS_ASSERT(layout.elem_size == static_cast<std::int64_t>(dtype_size(dtype)));
        JANUS_ASSERT(layout.byte_extent().first >= 0);
        Tensor t;
        t.dtype = dtype;
        t.layout = layout;
        t.quant = std::move(q);
        t.storage = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(layout.byte_extent().second));
        return t;
    }
    /// A contiguous tensor holding `values` in row-major order.
    template <class T>
    static Tensor from(const Shape& shape, const std::vector<T>& values,
                       std::optional<numeric::QuantParams> q = std::nullopt) {
        JANUS_ASSERT(static_cast<std::int64_t>(values.size()) == element_count(shape));
        Tensor t = zeros(dtype_v<T>, shape, std::move(q));
        if (!values.empty()) std::memcpy(t.storage->data(), values.data(), values.size() * sizeof(T));
        return t;
    }

    /// The same storage seen through another layout (a view). The layout must stay inside the storage.
    Tensor view(const Layout& l) const {
        JANUS_ASSERT(l.elements() == 0 ||
                     (l.byte_extent().first >= 0 &&
                      l.byte_extent().second <= static_cast<std::int64_t>(storage->size())));
        Tensor t = *this;
        t.layout = l;
        return t;
    }

    std::byte* data() noexcept { return storage->data(); }
    const std::byte* data() const noexcept { return storage->data(); }

    template <class T>
    T at(const Dims& index) const {
        JANUS_ASSERT(dtype_v<T> == dtype);
        T v;
        std::memcpy(&v, data() + layout.address(index), sizeof(T));
        return v;
    }
    template <class T>
    void set(const Dims& index, T v) {
        JANUS_ASSERT(dtype_v<T> == dtype);
        std::memcpy(data() + layout.address(index), &v, sizeof(T));
    }

    /// All elements in logical row-major order (reads through any layout).
    template <class T>
    std::vector<T> to_vector() const {
        JANUS_ASSERT(dtype_v<T> == dtype);
        std::vector<T> out;
        out.reserve(static_cast<std::size_t>(elements()));
        for_each_index(shape(), [&](const Dims& idx) { out.push_back(at<T>(idx)); });
        return out;
    }

    /// A contiguous deep copy.
    Tensor clone() const {
        return visit_dtype(dtype, [&](auto t) {
            using T = typename decltype(t)::type;
            return from<T>(shape(), to_vector<T>(), quant);
        });
    }
};

/// Real value of element i of a quantized tensor (dequantize); float tensors return their value.
inline double real_value_at(const Tensor& t, const Dims& index) {
    const double q = visit_dtype(t.dtype, [&](auto tag) { return static_cast<double>(t.at<typename decltype(tag)::type>(index)); });
    if (!t.quant) return q;
    const std::size_t c = t.quant->per_tensor() ? 0 : static_cast<std::size_t>(index[*t.quant->axis]);
    return static_cast<double>(t.quant->scale(c)) * (q - t.quant->zero_point(c));
}

}  // namespace janus
