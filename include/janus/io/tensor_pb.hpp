#pragma once
// ONNX TensorProto files (.pb, the format of the ONNX node tests' input_N.pb / output_N.pb) <-> tensors: janusc run
// reads `-i NAME=FILE.pb` and writes `--output-format pb`.
//
// Contract: `read_tensor_pb_file` decodes one TensorProto with the importer's own decoder (onnx::parse_tensor:
// bounds-checked, fuzzed by fuzz/onnx_reader.cpp; errors name the file and the byte); `to_tensor` copies its values
// into a contiguous Tensor of the same dtype and shape (no quantization: the graph supplies it), or refuses a shape
// outside the size policy (core/size.hpp); `to_tensor_proto`
// copies any Tensor (any layout) into a TensorProto of its dtype and logical shape; `write_tensor_pb_file` writes
// one atomically (core/file.hpp). All exact: bytes in, same values out.
#include <cstring>
#include <string>
#include <vector>

#include <janus/core/file.hpp>
#include <janus/onnx/model.hpp>
#include <janus/ops/tensor.hpp>

namespace janus::io {

inline Result<onnx::Tensor> read_tensor_pb_file(const std::string& path, std::uint64_t max_bytes = default_max_memory) {
    JANUS_TRY(const auto bytes, read_file(path, "file-readable", "a TensorProto file", max_bytes));
    return onnx::parse_tensor(bytes, path);
}

inline Result<Tensor> to_tensor(const onnx::Tensor& t, const std::string& input = "tensor") {
    JANUS_TRY(const Shape s, make_shape(t.dims, input));  // the size policy (core/size.hpp); parse_tensor applied it
    Tensor r = Tensor::zeros(t.dtype, s);
    if (!t.data.empty()) std::memcpy(r.storage->data(), t.data.data(), t.data.size());
    return r;
}

inline onnx::Tensor to_tensor_proto(const Tensor& t, std::string name) {
    onnx::Tensor p;
    p.name = std::move(name);
    p.dtype = t.dtype;
    p.dims.assign(t.shape().span().begin(), t.shape().span().end());
    visit_dtype(t.dtype, [&](auto ty) {  // the logical elements in C order, whatever the layout
        using T = typename decltype(ty)::type;
        const std::vector<T> v = t.to_vector<T>();
        p.data.resize(v.size() * sizeof(T));
        if (!v.empty()) std::memcpy(p.data.data(), v.data(), p.data.size());
    });
    return p;
}

inline Status write_tensor_pb_file(const std::string& path, const onnx::Tensor& t) {
    return write_file_atomic(path, onnx::serialize_tensor(t), "file-writable");
}

}  // namespace janus::io
