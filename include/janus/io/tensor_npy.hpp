#pragma once
// .npy arrays <-> tensors: how janusc reads its inputs and writes its outputs.
//
// Contract: `to_tensor` copies a valid NpyArray into a new contiguous Tensor of the same dtype and shape (no
// quantization: the graph supplies it), or refuses a shape outside the size policy (core/size.hpp: rank above 6, more
// than 2^40 elements with zero extents counted as one) with an Error naming `input`; `to_npy` copies any Tensor (any
// layout, e.g. a view) into a C-order array of its dtype and logical shape. Both are exact: bytes in, same values out.
#include <cstring>
#include <string>
#include <vector>

#include <janus/io/npy.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::io {

inline Result<Tensor> to_tensor(const NpyArray& a, const std::string& input = "array") {
    JANUS_TRY(const Shape s, make_shape(a.shape, input));
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
