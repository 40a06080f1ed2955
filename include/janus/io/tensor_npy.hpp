#pragma once
// .npy arrays <-> tensors: how janusc reads its inputs and writes its outputs.
//
// Contract: `to_tensor` copies a valid NpyArray into a new contiguous Tensor of the same dtype and shape (no
// quantization: the graph supplies it); `to_npy` copies any Tensor (any layout, e.g. a view) into a C-order array of
// its dtype and logical shape. Both are exact: bytes in, same values out.
#include <cstring>
#include <vector>

#include <janus/io/npy.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::io {

inline Tensor to_tensor(const NpyArray& a) {
    Shape s;
    for (auto d : a.shape) s.push_back(d);
    return visit_dtype(a.dtype, [&](auto t) {
        using T = typename decltype(t)::type;
        return Tensor::from<T>(s, a.values<T>());
    });
}

inline NpyArray to_npy(const Tensor& t) {
    std::vector<std::int64_t> shape;
    for (int i = 0; i < t.shape().size(); ++i) shape.push_back(t.shape()[i]);
    return visit_dtype(t.dtype, [&](auto ty) {
        using T = typename decltype(ty)::type;
        return NpyArray::from<T>(shape, t.to_vector<T>());
    });
}

}  // namespace janus::io
