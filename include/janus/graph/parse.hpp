#pragma once
// The parser of the graph IR text form (graph/ir.hpp print()): pass tests are written as small text files.
//
// Contract: `parse(text, input)` returns the Graph that `print(g)` wrote, so print(parse(print(g))) == print(g)
// for every graph, with constants in hex (`= 0x...`; the compact `= <N bytes>` form has no data and is refused).
// The result is checked by verify(). Every error is `input:line:column: error: detail [rule]`, with rules
//   ir-syntax      an unexpected character or token (says what was expected)
//   ir-name        a value name defined twice or used before it is defined
//   ir-type        an unknown dtype or a bad shape (a bad quantization gets numeric/'s own rule)
//   ir-data        constant data that is not hex or does not match its type's size
//   ir-attribute   a malformed attribute value or a repeated attribute name
// plus verify()'s rules, reported at the line of the node that breaks them; an op that `infer` (an InferFn,
// ops::infer_by_name by default) does not know is its known-op error. Nothing is allocated beyond a small multiple
// of the text size.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/graph/ir.hpp>

namespace janus::graph {

namespace parse_detail {

class Parser {
public:
    Parser(std::string_view text, std::string_view input, InferFn infer) : s_(text), input_(input), infer_(infer) {}

    Result<Graph> run() {
        JANUS_CHECK(keyword("graph"));
        JANUS_TRY(g_.name, bare_or_quoted());
        JANUS_CHECK(expect('{'));
        JANUS_CHECK(end_of_line());
        for (;;) {
            skip_blank_lines();
            if (at_end()) return error("ir-syntax", "the graph is not closed with '}'");
            if (peek() == '}') {
                ++i_;
                JANUS_CHECK(end_of_line());
                skip_blank_lines();
                if (!at_end()) return error("ir-syntax", "text after the closing '}'");
                break;
            }
            JANUS_CHECK(statement());
        }
        const Status v = verify(g_, input_, [&](std::size_t k) { return node_positions_.at(k); }, infer_);
        if (!v.ok()) return v.error();
        return std::move(g_);
    }

private:
    // ---- positions and errors -------------------------------------------------------------------------------
    /// line:column of i_. Tracked incrementally from the last position asked for (pos_at_, pos_line_,
    /// pos_line_start_): the parser asks once per node at a forward-moving offset, so a whole parse costs O(text),
    /// not O(nodes x text) as a rescan from the start did (issue 26: 40k-node host sections took 17 s). A step back
    /// (an error reported at the start of a token) costs the distance moved.
    std::string position() const {
        const std::size_t to = std::min(i_, s_.size());
        if (to >= pos_at_) {
            for (std::size_t k = pos_at_; k < to; ++k)
                if (s_[k] == '\n') {
                    ++pos_line_;
                    pos_line_start_ = k + 1;
                }
        } else {
            for (std::size_t k = to; k < pos_at_; ++k) pos_line_ -= s_[k] == '\n';
            if (to < pos_line_start_) {
                const std::size_t nl = to == 0 ? std::string_view::npos : s_.rfind('\n', to - 1);
                pos_line_start_ = nl == std::string_view::npos ? 0 : nl + 1;
            }
        }
        pos_at_ = to;
        return std::to_string(pos_line_) + ":" + std::to_string(to - pos_line_start_ + 1);
    }
    Error error(std::string rule, std::string detail) const {
        return make_error(std::string(input_), position(), std::move(rule), std::move(detail));
    }
    bool at_end() const { return i_ >= s_.size(); }
    char peek() const { return at_end() ? '\0' : s_[i_]; }
    void skip_spaces() {
        while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
    }
    void skip_blank_lines() {
        for (;;) {
            skip_spaces();
            if (peek() == '\n') {
                ++i_;
                continue;
            }
            if (peek() == ';') {  // a comment line
                while (!at_end() && s_[i_] != '\n') ++i_;
                continue;
            }
            return;
        }
    }
    std::string shown(char c) const {
        if (c == '\0') return "the end of the text";
        if (c == '\n') return "the end of the line";
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "0x%02x", static_cast<unsigned char>(c));
            return std::string("byte ") + b;
        }
        return std::string("'") + c + "'";
    }
    Status expect(char c) {
        skip_spaces();
        if (peek() != c) return error("ir-syntax", std::string("expected '") + c + "', found " + shown(peek()));
        ++i_;
        return ok_status();
    }
    Status end_of_line() {
        skip_spaces();
        if (at_end()) return ok_status();
        if (peek() != '\n') return error("ir-syntax", "expected the end of the line, found " + shown(peek()));
        ++i_;
        return ok_status();
    }
    static bool word_char(char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-';
    }
    std::string_view word() {
        skip_spaces();
        const std::size_t b = i_;
        while (!at_end() && word_char(s_[i_])) ++i_;
        return s_.substr(b, i_ - b);
    }
    Status keyword(std::string_view k) {
        skip_blank_lines();
        const std::size_t at = i_;
        const auto w = word();
        if (w != k) {
            i_ = at;
            return error("ir-syntax", "expected '" + std::string(k) + "', found " +
                                          (w.empty() ? shown(peek()) : "'" + echo(w) + "'"));
        }
        return ok_status();
    }

    // ---- names and strings ----------------------------------------------------------------------------------
    Result<std::string> quoted() {  // at '"'
        ++i_;
        std::string r;
        for (;;) {
            if (at_end() || peek() == '\n') return error("ir-syntax", "the quoted text is not closed with '\"'");
            const char c = s_[i_++];
            if (c == '"') return r;
            if (c != '\\') {
                r += c;
                continue;
            }
            const char e = peek();
            if (e == '"' || e == '\\') {
                r += e;
                ++i_;
            } else if (e == 'x' && i_ + 2 < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_ + 1])) &&
                       std::isxdigit(static_cast<unsigned char>(s_[i_ + 2]))) {
                r += static_cast<char>(std::strtol(std::string(s_.substr(i_ + 1, 2)).c_str(), nullptr, 16));
                i_ += 3;
            } else {
                return error("ir-syntax", "unknown escape in quoted text (\\\", \\\\ and \\xNN are allowed)");
            }
        }
    }
    Result<std::string> bare_or_quoted() {
        skip_spaces();
        if (peek() == '"') return quoted();
        const auto w = word();
        if (w.empty()) return error("ir-syntax", "expected a name, found " + shown(peek()));
        return std::string(w);
    }
    Result<std::string> value_name() {
        skip_spaces();
        if (peek() != '%') return error("ir-syntax", "expected a value name (%name), found " + shown(peek()));
        ++i_;
        if (peek() == '"') return quoted();
        const auto w = word();
        if (w.empty()) return error("ir-syntax", "expected a name after '%', found " + shown(peek()));
        return std::string(w);
    }
    Result<ValueId> use(const std::string& name, std::size_t at) {
        const auto it = names_.find(name);
        if (it == names_.end()) {
            i_ = at;
            return error("ir-name", "%" + echo(name) + " is used before it is defined");
        }
        return it->second;
    }
    Status define(const std::string& name, std::size_t at) {
        if (names_.count(name)) {
            i_ = at;
            return error("ir-name", "%" + echo(name) + " is defined twice");
        }
        return ok_status();
    }

    // ---- numbers --------------------------------------------------------------------------------------------
    Result<std::int64_t> integer() {
        skip_spaces();
        const std::size_t b = i_;
        if (peek() == '-') ++i_;
        while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
        const std::string t(s_.substr(b, i_ - b));
        if (t.empty() || t == "-") {
            i_ = b;
            return error("ir-syntax", "expected an integer, found " + shown(peek()));
        }
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(t.c_str(), &end, 10);
        if (errno == ERANGE) {
            i_ = b;
            return error("ir-syntax", "the integer " + echo(t) + " does not fit in 64 bits");
        }
        return static_cast<std::int64_t>(v);
    }
    /// A float as %.9g prints it (digits, '.', exponent, or inf / nan).
    Result<float> real() {
        skip_spaces();
        const std::size_t b = i_;
        if (peek() == '-' || peek() == '+') ++i_;
        if (s_.substr(i_, 3) == "inf" || s_.substr(i_, 3) == "nan") {
            i_ += 3;
        } else {
            while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.') ++i_;
            if (peek() == 'e' || peek() == 'E') {
                ++i_;
                if (peek() == '-' || peek() == '+') ++i_;
                while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
            }
        }
        const std::string t(s_.substr(b, i_ - b));
        char* end = nullptr;
        const float v = t.empty() ? 0.f : std::strtof(t.c_str(), &end);
        if (t.empty() || end != t.c_str() + t.size()) {
            i_ = b;
            return error("ir-syntax", "expected a number, found " + shown(peek()));
        }
        return v;
    }

    // ---- types ----------------------------------------------------------------------------------------------
    Result<DType> dtype() {
        const std::size_t at = i_;
        const auto w = word();
        for (DType d : all_dtypes)
            if (w == dtype_name(d)) return d;
        i_ = at;
        return error("ir-type", "unknown element type '" + echo(w) + "' (" + dtype_list() + ")");
    }
    Result<ops::TensorType> type() {
        ops::TensorType t;
        JANUS_TRY(t.dtype, dtype());
        JANUS_CHECK(expect('['));
        skip_spaces();
        if (peek() != ']') {
            for (;;) {
                const std::size_t at = i_;
                JANUS_TRY(const std::int64_t d, integer());
                if (t.shape.size() == max_rank) {
                    i_ = at;
                    return error("ir-type", "rank above " + std::to_string(max_rank));
                }
                // The shape and size policy (core/size.hpp): checked with this extent, before it is kept.
                Shape with = t.shape;
                with.push_back(d);
                if (const auto size = checked_size(with.span(), 1, "shape", "ir-type"); !size.ok()) {
                    i_ = at;
                    return error("ir-type", size.error().detail);
                }
                t.shape.push_back(d);
                skip_spaces();
                if (peek() == ']') break;
                JANUS_CHECK(expect(','));
            }
        }
        ++i_;
        skip_spaces();
        if (s_.substr(i_, 2) == "q(") {
            i_ += 2;
            JANUS_TRY(t.quant, quant(t.shape));
        }
        return t;
    }
    template <class T, class One>
    Result<std::vector<T>> one_or_list(One one) {
        skip_spaces();
        std::vector<T> v;
        if (peek() != '[') {
            JANUS_TRY(T x, one());
            v.push_back(x);
            return v;
        }
        ++i_;
        for (;;) {
            JANUS_TRY(T x, one());
            v.push_back(x);
            if (v.size() > s_.size()) return error("ir-syntax", "list longer than the text");
            skip_spaces();
            if (peek() == ']') break;
            JANUS_CHECK(expect(','));
        }
        ++i_;
        return v;
    }
    Result<numeric::QuantParams> quant(const Shape& shape) {
        const std::size_t at = i_;
        JANUS_TRY(const DType d, dtype());
        std::optional<std::int64_t> axis;
        skip_spaces();
        if (s_.substr(i_, 5) == "axis=") {
            i_ += 5;
            JANUS_TRY(axis, integer());
        }
        JANUS_CHECK(word_is("s="));
        JANUS_TRY(auto scales, one_or_list<float>([&] { return real(); }));
        JANUS_CHECK(word_is("zp="));
        JANUS_TRY(auto zps64, one_or_list<std::int64_t>([&] { return integer(); }));
        JANUS_CHECK(expect(')'));
        std::vector<std::int32_t> zps;
        for (auto z : zps64) {
            if (z < INT32_MIN || z > INT32_MAX) return error("ir-type", "a zero point does not fit in int32");
            zps.push_back(static_cast<std::int32_t>(z));
        }
        const auto q = axis ? numeric::make_quant_per_axis(d, scales, zps, *axis, shape, "quantization")
                            : (scales.size() == 1 && zps.size() == 1
                                   ? numeric::make_quant(d, scales[0], zps[0], "quantization")
                                   : Result<numeric::QuantParams>(make_error("", "", "ir-type",
                                                                             "a per-tensor quantization has one scale "
                                                                             "and one zero point")));
        if (!q.ok()) {
            i_ = at;
            return error(q.error().rule, q.error().detail);
        }
        return *q;
    }
    Status word_is(std::string_view w) {
        skip_spaces();
        if (s_.substr(i_, w.size()) != w)
            return error("ir-syntax", "expected '" + std::string(w) + "', found " + shown(peek()));
        i_ += w.size();
        return ok_status();
    }

    // ---- attributes -----------------------------------------------------------------------------------------
    Result<ops::AttrValue> attr_value() {
        skip_spaces();
        if (peek() == '"') {
            JANUS_TRY(std::string s, quoted());
            return ops::AttrValue(std::move(s));
        }
        if (peek() == '[') {
            ++i_;
            skip_spaces();
            if (peek() == ']') {
                ++i_;
                if (peek() == 'f') {
                    ++i_;
                    return ops::AttrValue(std::vector<float>{});
                }
                return ops::AttrValue(std::vector<std::int64_t>{});
            }
            std::vector<std::int64_t> ints;
            std::vector<float> floats;
            bool is_float = false;
            for (;;) {
                JANUS_TRY(const ops::AttrValue x, scalar());
                if (ints.empty() && floats.empty()) is_float = std::holds_alternative<float>(x);
                if (is_float != std::holds_alternative<float>(x))
                    return error("ir-attribute", "a list mixes integers and floats");
                if (is_float)
                    floats.push_back(std::get<float>(x));
                else
                    ints.push_back(std::get<std::int64_t>(x));
                skip_spaces();
                if (peek() == ']') break;
                JANUS_CHECK(expect(','));
            }
            ++i_;
            if (is_float) return ops::AttrValue(std::move(floats));
            return ops::AttrValue(std::move(ints));
        }
        return scalar();
    }
    /// An integer, or a float with its 'f' suffix.
    Result<ops::AttrValue> scalar() {
        skip_spaces();
        const std::size_t b = i_;
        std::size_t e = i_;
        while (e < s_.size() &&
               (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '.' || s_[e] == '-' || s_[e] == '+'))
            ++e;
        const std::string_view tok = s_.substr(b, e - b);
        if (!tok.empty() && tok.back() == 'f' && tok != "inf" && tok != "-inf") {
            JANUS_TRY(const float f, real());
            if (peek() != 'f') {
                i_ = b;
                return error("ir-attribute", "a float attribute ends in 'f'");
            }
            ++i_;
            return ops::AttrValue(f);
        }
        JANUS_TRY(const std::int64_t v, integer());
        return ops::AttrValue(v);
    }

    // ---- statements -----------------------------------------------------------------------------------------
    Status statement() {
        const std::size_t at = i_;
        skip_spaces();
        if (peek() != '%') {
            const auto w = word();
            if (w == "input") return input_line();
            if (w == "const") return const_line();
            if (w == "output") return output_line();
            i_ = at;
            skip_spaces();
            return error("ir-syntax", "expected 'input', 'const', 'output' or a node (%name: type = Op(...)), found " +
                                          (w.empty() ? shown(peek()) : "'" + echo(w) + "'"));
        }
        return node_line();
    }
    /// `%name: type`, the head of an input and of a constant line; the name is checked to be new.
    Result<std::pair<std::string, ops::TensorType>> declaration() {
        skip_spaces();
        const std::size_t at = i_;
        JANUS_TRY(std::string name, value_name());
        JANUS_CHECK(define(name, at));
        JANUS_CHECK(expect(':'));
        JANUS_TRY(ops::TensorType t, type());
        return std::pair<std::string, ops::TensorType>{std::move(name), std::move(t)};
    }
    Status input_line() {
        JANUS_TRY(auto decl, declaration());
        auto& [name, t] = decl;
        JANUS_CHECK(end_of_line());
        const ValueId v = g_.add_value(name, std::move(t), ValueKind::input);
        g_.inputs.push_back(v);
        names_[name] = v;
        return ok_status();
    }
    Status const_line() {
        JANUS_TRY(auto decl, declaration());
        auto& [name, t] = decl;
        JANUS_CHECK(expect('='));
        skip_spaces();
        if (peek() == '<') return error("ir-data", "a constant without its data (the compact '<N bytes>' form)");
        JANUS_CHECK(word_is("0x"));
        const std::size_t b = i_;
        while (!at_end() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        const std::size_t digits = i_ - b;
        const auto bytes = static_cast<std::uint64_t>(element_count(t.shape)) * dtype_size(t.dtype);
        if (digits != 2 * bytes) {
            i_ = b;
            return error("ir-data", "the data holds " + std::to_string(digits) + " hex digits; " +
                                        std::string(dtype_name(t.dtype)) + t.shape.str() + " needs " +
                                        std::to_string(2 * bytes));
        }
        Tensor data = Tensor::zeros(t.dtype, t.shape, t.quant);
        auto* p = reinterpret_cast<std::uint8_t*>(data.storage->data());
        const auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
        for (std::size_t k = 0; k < bytes; ++k)
            p[k] = static_cast<std::uint8_t>(nib(s_[b + 2 * k]) * 16 + nib(s_[b + 2 * k + 1]));
        JANUS_CHECK(end_of_line());
        names_[name] = g_.add_constant(name, std::move(data));
        return ok_status();
    }
    Status output_line() {
        skip_spaces();
        const std::size_t at = i_;
        JANUS_TRY(std::string name, value_name());
        JANUS_TRY(const ValueId v, use(name, at));
        JANUS_CHECK(end_of_line());
        g_.outputs.push_back(v);
        return ok_status();
    }
    Status node_line() {
        skip_spaces();
        node_positions_.push_back(position());
        Node n;
        std::vector<std::pair<std::string, ops::TensorType>> outs;
        for (;;) {
            skip_spaces();
            const std::size_t at = i_;
            JANUS_TRY(std::string name, value_name());
            JANUS_CHECK(define(name, at));
            for (const auto& o : outs)
                if (o.first == name) {
                    i_ = at;
                    return error("ir-name", "%" + echo(name) + " is defined twice");
                }
            JANUS_CHECK(expect(':'));
            JANUS_TRY(ops::TensorType t, type());
            outs.emplace_back(std::move(name), std::move(t));
            skip_spaces();
            if (peek() != ',') break;
            ++i_;
        }
        JANUS_CHECK(expect('='));
        skip_spaces();
        const auto op = word();
        if (op.empty()) return error("ir-syntax", "expected an op name, found " + shown(peek()));
        n.op = std::string(op);
        JANUS_CHECK(expect('('));
        skip_spaces();
        if (peek() != ')') {
            for (;;) {
                skip_spaces();
                if (peek() == '_') {
                    ++i_;
                    n.inputs.push_back(no_value);
                } else {
                    const std::size_t at = i_;
                    JANUS_TRY(std::string name, value_name());
                    JANUS_TRY(const ValueId v, use(name, at));
                    n.inputs.push_back(v);
                }
                skip_spaces();
                if (peek() == ')') break;
                JANUS_CHECK(expect(','));
            }
        }
        ++i_;
        skip_spaces();
        if (peek() == '{') {
            ++i_;
            for (;;) {
                skip_spaces();
                const std::size_t at = i_;
                const auto key = word();
                if (key.empty()) return error("ir-syntax", "expected an attribute name, found " + shown(peek()));
                JANUS_CHECK(expect('='));
                JANUS_TRY(ops::AttrValue v, attr_value());
                if (!n.attrs.emplace(std::string(key), std::move(v)).second) {
                    i_ = at;
                    return error("ir-attribute", "attribute '" + echo(key) + "' is given twice");
                }
                skip_spaces();
                if (peek() == '}') break;
                JANUS_CHECK(expect(','));
            }
            ++i_;
        }
        skip_spaces();
        if (peek() == '@') {
            ++i_;
            const std::size_t at = i_;
            const auto t = word();
            if (t == "host")
                n.target = Target::host;
            else if (t == "npu")
                n.target = Target::npu;
            else if (t == "any")
                n.target = Target::any;
            else {
                i_ = at;
                return error("ir-syntax", "expected a target after '@' (host, npu or any)");
            }
        }
        skip_spaces();
        if (peek() == '#') {
            ++i_;
            skip_spaces();
            const std::size_t b = i_;
            while (!at_end() && s_[i_] != '\n') ++i_;
            std::size_t e = i_;
            while (e > b && (s_[e - 1] == ' ' || s_[e - 1] == '\r')) --e;
            n.origin = std::string(s_.substr(b, e - b));
        }
        JANUS_CHECK(end_of_line());
        for (auto& [name, t] : outs) {
            const ValueId v = g_.add_value(name, std::move(t), ValueKind::node);
            names_[name] = v;
            n.outputs.push_back(v);
        }
        g_.nodes.push_back(std::move(n));
        return ok_status();
    }

    std::string_view s_;
    std::string_view input_;
    InferFn infer_;
    std::size_t i_ = 0;
    mutable std::size_t pos_at_ = 0, pos_line_ = 1, pos_line_start_ = 0;  ///< position()'s last answer
    Graph g_;
    std::map<std::string, ValueId, std::less<>> names_;
    std::vector<std::string> node_positions_;  ///< line:column of each node, for verify's errors
};

}  // namespace parse_detail

/// Parse the text form (see the header comment), typing its nodes with `infer`.
inline Result<Graph> parse(std::string_view text, std::string_view input, InferFn infer = &ops::infer_by_name) {
    return parse_detail::Parser(text, input, infer).run();
}

}  // namespace janus::graph
