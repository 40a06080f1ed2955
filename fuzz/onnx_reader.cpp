// Fuzz target: the ONNX reader (onnx/wire.hpp, onnx/model.hpp) on arbitrary bytes: raw bytes, and libFuzzer's
// mutations of the committed fixtures (the seeds are tests/onnx/fixtures/*.onnx and tests/onnx/bad/*).
//
// Input: any bytes, decoded both as a ModelProto (parse_model) and as a TensorProto (parse_tensor).
// Properties (a __builtin_trap() when broken):
//   1. each call returns a value or a well-formed Error: input, rule and detail non-empty, position "byte N" with
//      N <= the input size;
//   2. a decoded model keeps the decoder's promises: every tensor (initializer or attribute) has rank <= max_rank,
//      non-negative dims and exactly product(dims) * dtype_size bytes; every node has an op_type; every attribute
//      has a kind Janus reads (a tensor attribute holds its tensor); the IR version is in range and the default
//      opset is imported;
//   3. decoding is a pure function of the bytes: a second decode is equal;
//   4. a decoded tensor, re-encoded by serialize_tensor (what janusc run --output-format pb writes), decodes to the
//      same tensor;
//   5. a decoded tensor converts as `janusc run -i NAME=FILE.pb` converts it (io/tensor_pb.hpp to_tensor): a
//      contiguous Tensor of its dtype and shape holding its bytes, which to_tensor_proto turns back into the same
//      dtype, dims and bytes (the .pb -> tensor surface of issue 26);
//   6. scan_op_types (janusc conform's look at a model parse_model may refuse) returns a value or a well-formed Error,
//      and for a model parse_model decodes it returns exactly its nodes' (domain, op_type), in order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include <janus/io/tensor_pb.hpp>
#include <janus/onnx/model.hpp>

namespace {

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "onnx_reader: property broken: %s\n", what);
        __builtin_trap();
    }
}

void check_error(const janus::Error& e, std::size_t size) {
    check(!e.input.empty() && !e.rule.empty() && !e.detail.empty(), "error form");
    check(e.position.rfind("byte ", 0) == 0, "error position is a byte offset");
    check(std::stoull(e.position.substr(5)) <= size, "error position inside the input");
}

void check_tensor(const janus::onnx::Tensor& t) {
    check(t.dims.size() <= static_cast<std::size_t>(janus::max_rank), "tensor rank");
    std::uint64_t n = 1;
    for (auto d : t.dims) {
        check(d >= 0, "tensor dims non-negative");
        n *= static_cast<std::uint64_t>(d);
    }
    check(t.data.size() == n * janus::dtype_size(t.dtype), "tensor data size == product(dims) * dtype size");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace janus;
    const std::span<const std::uint8_t> bytes(data, size);
    const auto m = onnx::parse_model(bytes, "fuzz.onnx");
    if (!m.ok()) {
        check_error(m.error(), size);
    } else {
        check(m->ir_version >= onnx::min_ir_version && m->ir_version <= onnx::max_ir_version, "ir version");
        check(m->opset("") != 0, "default opset");
        for (const auto& t : m->graph.initializers) check_tensor(t);
        for (const auto& n : m->graph.nodes) {
            check(!n.op_type.empty(), "node op_type");
            for (const auto& a : n.attributes) {
                check(!a.name.empty(), "attribute name");
                check(a.type == onnx::AttrType::f || a.type == onnx::AttrType::i || a.type == onnx::AttrType::s ||
                          a.type == onnx::AttrType::floats || a.type == onnx::AttrType::ints ||
                          a.type == onnx::AttrType::strings || a.type == onnx::AttrType::tensor,
                      "attribute kind");
                if (a.type == onnx::AttrType::tensor) {
                    check(a.t.has_value(), "tensor attribute holds a tensor");
                    check_tensor(*a.t);
                }
            }
        }
        const auto again = onnx::parse_model(bytes, "fuzz.onnx");
        check(again.ok() && *again == *m, "decoding is deterministic");
    }
    const auto ops = onnx::scan_op_types(bytes, "fuzz.onnx");
    if (!ops.ok()) {
        check_error(ops.error(), size);
        check(!m.ok(), "scan_op_types refuses only what parse_model refuses");
    } else if (m.ok()) {
        check(ops->size() == m->graph.nodes.size(), "scan_op_types finds every node");
        for (std::size_t k = 0; k < ops->size() && k < m->graph.nodes.size(); ++k)
            check((*ops)[k].first == m->graph.nodes[k].domain && (*ops)[k].second == m->graph.nodes[k].op_type,
                  "scan_op_types reads each node's domain and op_type");
    }
    const auto t = onnx::parse_tensor(bytes, "fuzz.pb");
    if (!t.ok()) {
        check_error(t.error(), size);
    } else {
        check_tensor(*t);
        const auto again = onnx::parse_tensor(bytes, "fuzz.pb");
        check(again.ok() && *again == *t, "tensor decoding is deterministic");
        // what janusc writes (--output-format pb) decodes to the same tensor
        auto reencoded = onnx::parse_tensor(onnx::serialize_tensor(*t), "again.pb");
        check(reencoded.ok(), "a re-encoded tensor decodes");
        if (reencoded.ok()) {
            reencoded->position = t->position;
            check(*reencoded == *t, "serialize_tensor round trip");
        }
        const auto x = io::to_tensor(*t, "fuzz.pb");
        check(x.ok(), "a decoded tensor converts (the decoder applied the size policy)");
        if (x.ok()) {
            check(x->dtype == t->dtype && x->shape().span().size() == t->dims.size() &&
                      std::equal(t->dims.begin(), t->dims.end(), x->shape().span().begin()),
                  "to_tensor keeps the dtype and the shape");
            const auto* b = reinterpret_cast<const std::uint8_t*>(x->storage->data());
            check(x->storage->size() == t->data.size() && std::equal(t->data.begin(), t->data.end(), b),
                  "to_tensor keeps the bytes");
            const onnx::Tensor back = io::to_tensor_proto(*x, t->name);
            check(back.dtype == t->dtype && back.dims == t->dims && back.data == t->data,
                  "to_tensor_proto(to_tensor(t)) has t's dtype, dims and bytes");
        }
    }
    return 0;
}
