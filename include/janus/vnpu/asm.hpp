#pragma once
// vnpu assembly text <-> instructions, derived from the instruction table (vnpu/isa.hpp).
//
// Syntax, one statement per line (`;` starts a comment):
//   label:                          a name for the next instruction's index (letters, digits, '_', '.'; not a digit
//                                   first); may share a line with an instruction
//   .reg NAME = rN                  an alias usable wherever a register operand is expected
//   .event NAME = eN                an alias usable in wait(...) / signal(...)
//   mnemonic op, op ... [wait(E)] [signal(E)]
// Operands by field kind: reg `rN` or a .reg alias; region a name (weights, scratch, input, output); simm a decimal
// number with an optional '-'; uimm / count decimal or `0x` hex, never signed; mask the same; a count field named
// `body` (LOOP) may also be a label defined AFTER the instruction: body = label index - (instruction index + 1).
// Numbers must be consumed completely (seed C9): `12abc`, `0x`, `--1`, `+1` and a sign on an unsigned field are
// refused, as is any value outside the field's range or alignment (the encoder's rules).
// Diagnostics: Error{input = file name, position = "line:col" (1-based, the offending token), rule, detail}, so
// message() reads `file:line:col: error: detail [rule]`. The first error stops the assembly; nothing is returned.
// print_program() writes the canonical text (vnpu::print per line); for canonical text
// print_program(assemble(t)) == t, and for any accepted words assemble(print_program(decode(ws))) == ws.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <janus/vnpu/isa.hpp>

namespace janus::vnpu {

namespace asm_detail {

struct Cursor {
    std::string_view line;
    std::size_t at = 0;
    void skip_space() {
        while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    }
    bool done() {
        skip_space();
        return at >= line.size();
    }
    bool eat(char c) {
        skip_space();
        if (at < line.size() && line[at] == c) return ++at, true;
        return false;
    }
    static bool name_char(char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
    }
    /// The next run of name characters (possibly empty).
    std::string_view word() {
        skip_space();
        const std::size_t b = at;
        while (at < line.size() && (name_char(line[at]) || (at == b && line[at] == '-'))) ++at;
        return line.substr(b, at - b);
    }
};

struct Pending {  // a LOOP body given as a label, resolved after the whole text is read
    std::size_t instr, operand;
    std::string label;
    int line, col;
};

}  // namespace asm_detail

/// Parse assembly text into instructions (see the header comment for the syntax and the rules).
inline Result<std::vector<Instr>> assemble(std::string_view text, const std::string& file = "<input>") {
    using asm_detail::Cursor;
    std::vector<Instr> out;
    std::map<std::string, std::size_t, std::less<>> labels;
    std::map<std::string, int, std::less<>> regs, events;
    std::vector<asm_detail::Pending> pending;
    int line_no = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        std::string_view line = text.substr(start, end - start);
        start = end + 1;
        ++line_no;
        if (const auto c = line.find(';'); c != std::string_view::npos) line = line.substr(0, c);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        Cursor cur{line};
        const auto fail = [&](std::size_t col0, std::string rule, std::string detail) -> Error {
            return make_error(file, std::to_string(line_no) + ":" + std::to_string(col0 + 1), std::move(rule),
                              std::move(detail));
        };
        if (cur.done()) continue;
        // directives
        if (cur.eat('.')) {
            const std::size_t dcol = cur.at - 1;
            const std::string_view d = cur.word();
            if (d != "reg" && d != "event")
                return fail(dcol, "known-directive", "unknown directive '." + echo(d) + "' (.reg, .event)");
            cur.skip_space();
            const std::size_t ncol = cur.at;
            const std::string_view name = cur.word();
            if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
                return fail(ncol, "name-syntax", "expected an alias name after ." + echo(d));
            if (!cur.eat('=')) return fail(cur.at, "directive-syntax", "expected '=' after the alias name");
            cur.skip_space();
            const std::size_t vcol = cur.at;
            const std::string_view v = cur.word();
            const char prefix = d == "reg" ? 'r' : 'e';
            int n = -1;
            if (v.size() >= 2 && v[0] == prefix) {
                auto [p, ec] = std::from_chars(v.data() + 1, v.data() + v.size(), n);
                if (ec != std::errc{} || p != v.data() + v.size()) n = -1;
            }
            if (n < 0 || n > 15)
                return fail(vcol, d == "reg" ? "register-syntax" : "event-syntax",
                            "expected " + std::string(1, prefix) + "0.." + std::string(1, prefix) + "15, got '" +
                                echo(v) + "'");
            auto& table = d == "reg" ? regs : events;
            if (!table.emplace(std::string(name), n).second)
                return fail(ncol, "alias-unique", "alias '" + echo(name) + "' is already defined");
            if (!cur.done()) return fail(cur.at, "trailing-garbage", "unexpected text after the directive");
            continue;
        }
        cur.skip_space();
        std::size_t mcol = cur.at;
        std::string_view m = cur.word();
        if (cur.eat(':')) {  // label
            if (m.empty() || std::isdigit(static_cast<unsigned char>(m[0])))
                return fail(mcol, "name-syntax", "a label needs a name that does not start with a digit");
            if (!labels.emplace(std::string(m), out.size()).second)
                return fail(mcol, "label-unique", "label '" + echo(m) + "' is already defined");
            if (cur.done()) continue;
            mcol = cur.at;
            m = cur.word();
        }
        const InstrInfo* info = find_instruction(m);
        if (info == nullptr)
            return fail(mcol, "known-mnemonic", "unknown mnemonic '" + echo(m) + "'");
        Instr in;
        in.info = info;
        std::array<std::size_t, max_fields> cols{};
        for (int k = 0; k < info->n_fields; ++k) {
            const Field& f = info->fields[static_cast<std::size_t>(k)];
            if (k > 0 && !cur.eat(','))
                return fail(cur.at, "operand-count",
                            std::string(m) + " takes " + std::to_string(info->n_fields) + " operands; expected ','");
            cur.skip_space();
            const std::size_t ocol = cur.at;
            cols[static_cast<std::size_t>(k)] = ocol;
            const std::string_view tok = cur.word();
            if (tok.empty() && ocol < line.size() && line[ocol] == '+')
                return fail(ocol, "sign-not-allowed", std::string(f.name) + ": a '+' sign is not accepted");
            if (tok.empty())
                return fail(ocol, "operand-count",
                            std::string(m) + " takes " + std::to_string(info->n_fields) + " operands; operand " +
                                std::to_string(k + 1) + " (" + std::string(f.name) + ") is missing");
            std::int64_t v = 0;
            if (f.kind == FieldKind::reg) {
                if (auto a = regs.find(tok); a != regs.end()) {
                    v = a->second;
                } else {
                    int n = -1;
                    if (tok.size() >= 2 && tok[0] == 'r') {
                        auto [p, ec] = std::from_chars(tok.data() + 1, tok.data() + tok.size(), n);
                        if (ec != std::errc{} || p != tok.data() + tok.size()) n = -1;
                    }
                    if (n < 0 || n > 15)
                        return fail(ocol, "register-syntax",
                                    std::string(f.name) + ": expected r0..r15 or a .reg alias, got '" +
                                        echo(tok) + "'");
                    v = n;
                }
            } else if (f.kind == FieldKind::region) {
                const auto it = std::find(region_names.begin(), region_names.end(), tok);
                if (it == region_names.end())
                    return fail(ocol, "region-syntax",
                                std::string(f.name) + ": expected weights, scratch, input or output, got '" +
                                    echo(tok) + "'");
                v = it - region_names.begin();
            } else if (!tok.empty() && (std::isdigit(static_cast<unsigned char>(tok[0])) || tok[0] == '-')) {
                const bool neg = tok[0] == '-';
                if (neg && f.kind != FieldKind::simm)
                    return fail(ocol, "sign-not-allowed",
                                std::string(f.name) + " is unsigned; '" + echo(tok) + "' has a sign");
                std::string_view digits = neg ? tok.substr(1) : tok;
                if (neg && digits.size() > 1 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
                    return fail(ocol, "number-syntax", "'" + echo(tok) + "': a hex number takes no sign");
                int base = 10;
                if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') && !neg)
                    base = 16, digits.remove_prefix(2);
                std::uint64_t mag = 0;
                auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), mag, base);
                if (ec == std::errc::result_out_of_range || (ec == std::errc{} && p == digits.data() + digits.size() &&
                                                             mag > (std::uint64_t{1} << 62)))
                    return fail(ocol, "field-range",
                                std::string(m) + ": " + std::string(f.name) + " = " + echo(tok) +
                                    " is outside [" + std::to_string(f.min()) + ", " + std::to_string(f.max()) + "]");
                if (digits.empty() || p == digits.data())
                    return fail(ocol, "number-syntax", "'" + echo(tok) + "' is not a number (no digits)");
                if (ec != std::errc{} || p != digits.data() + digits.size())
                    return fail(ocol + static_cast<std::size_t>(p - tok.data()), "number-syntax",
                                "'" + echo(tok) + "' is not a number (trailing characters after the digits)");
                v = neg ? -static_cast<std::int64_t>(mag) : static_cast<std::int64_t>(mag);
            } else if (f.kind == FieldKind::count && f.name == "body") {
                pending.push_back({out.size(), static_cast<std::size_t>(k), std::string(tok), line_no,
                                   static_cast<int>(ocol) + 1});
                v = 1;
            } else {
                return fail(ocol, "number-syntax",
                            std::string(f.name) + ": expected a number, got '" + echo(tok) + "'");
            }
            in.operands[static_cast<std::size_t>(k)] = v;
        }
        // event actions
        while (!cur.done()) {
            const std::size_t acol = cur.at;
            const std::string_view act = cur.word();
            if (act != "wait" && act != "signal")
                return fail(acol, "trailing-garbage",
                            "unexpected '" + echo(act.empty() ? line.substr(acol, 1) : act) +
                                "' after the operands (expected wait(eN), signal(eN) or the end of the line)");
            auto& slot = act == "wait" ? in.wait : in.signal;
            if (slot) return fail(acol, "event-action-unique", std::string(act) + " is given twice");
            if (!cur.eat('(')) return fail(cur.at, "event-syntax", "expected '(' after " + std::string(act));
            cur.skip_space();
            const std::size_t ecol = cur.at;
            const std::string_view e = cur.word();
            int n = -1;
            if (auto a = events.find(e); a != events.end()) n = a->second;
            else if (e.size() >= 2 && e[0] == 'e') {
                auto [p, ec] = std::from_chars(e.data() + 1, e.data() + e.size(), n);
                if (ec != std::errc{} || p != e.data() + e.size()) n = -1;
            }
            if (n < 0 || n > 15)
                return fail(ecol, "event-syntax", "expected e0..e15 or an .event alias, got '" + echo(e) + "'");
            if (!cur.eat(')')) return fail(cur.at, "event-syntax", "expected ')' after the event");
            slot = n;
        }
        // range and alignment through the encoder, reported at the offending operand
        auto w = encode(in, file);
        if (!w.ok()) {
            Error e = w.error();
            std::size_t col = mcol;
            for (int k = 0; k < info->n_fields; ++k)
                if (info->fields[static_cast<std::size_t>(k)].name == e.position) col = cols[static_cast<std::size_t>(k)];
            e.position = std::to_string(line_no) + ":" + std::to_string(col + 1);
            return e;
        }
        out.push_back(in);
    }
    for (const auto& p : pending) {
        const auto l = labels.find(p.label);
        const auto pos = std::to_string(p.line) + ":" + std::to_string(p.col);
        if (l == labels.end())
            return make_error(file, pos, "known-label", "label '" + echo(p.label) + "' is not defined");
        if (l->second <= p.instr)
            return make_error(file, pos, "label-after-loop",
                              "the loop body ends at label '" + echo(p.label) + "', which must follow the loop");
        Instr& in = out[p.instr];
        in.operands[p.operand] = static_cast<std::int64_t>(l->second - p.instr - 1);
        auto w = encode(in, file);
        if (!w.ok()) {
            Error e = w.error();
            e.position = pos;
            return e;
        }
    }
    return out;
}

/// A whole program, as `janusc asm` writes and `janusc sim` runs it: at least one instruction, and the last one halt
/// (what a package's code section must be: package.hpp code-empty, code-halt). An empty text, or one whose last
/// instruction is not halt, is refused (program-empty, program-halt); assemble() itself also takes fragments.
inline Status check_whole_program(std::span<const Instr> prog, const std::string& file) {
    if (prog.empty())
        return make_error(file, "", "program-empty", "the program has no instruction; a program ends with halt");
    if (prog.back().info->sem != Sem::halt)
        return make_error(file, "instruction " + std::to_string(prog.size() - 1), "program-halt",
                          "the last instruction is '" + print(prog.back()) + "'; a program ends with halt");
    return ok_status();
}

/// Assemble straight to instruction words.
inline Result<std::vector<Word>> assemble_words(std::string_view text, const std::string& file = "<input>") {
    JANUS_TRY(std::vector<Instr> ins, assemble(text, file));
    std::vector<Word> words;
    for (const Instr& in : ins) {
        JANUS_TRY(Word w, encode(in, file));
        words.push_back(w);
    }
    return words;
}

/// Canonical text: one instruction per line, each ending in '\n'.
inline std::string print_program(const std::vector<Instr>& ins) {
    std::string s;
    for (const Instr& in : ins) s += print(in) + "\n";
    return s;
}

/// Decode words into canonical text; errors name "file:word N".
inline Result<std::string> disassemble(std::span<const Word> words, const std::string& file = "<input>") {
    std::vector<Instr> ins;
    for (std::size_t i = 0; i < words.size(); ++i) {
        JANUS_TRY(Instr in, decode(words[i], file + ":word " + std::to_string(i)));
        ins.push_back(in);
    }
    return print_program(ins);
}

}  // namespace janus::vnpu
