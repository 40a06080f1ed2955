#pragma once
// The vnpu program builder: what every lowering emits through (docs/emit.md).
//
// Resources are BORROWED through move-only handles that give them back when they go out of scope:
//   Reg     a scalar register r1..r15 (r0 is the constant 0 and never handed out)
//   Event   an event e0..e15
//   Buffer  a block of LMEM (16-B aligned) or ACC (64-B aligned), allocated first-fit from the lowest address
//           inside the REAL memory (256 KiB / 64 KiB), not the encodable 1 MiB (seed C4)
// Every borrow names its holder. Running out is an error naming every current holder (seeds B9, C1), never a
// silent reuse. Borrows nest: a Scope opened with scope("what") must see every handle borrowed inside it returned
// before it closes; a handle moved out of its scope (a temporary that outlives its owner, seed B9) is reported
// when the scope closes, and the builder stays failed from then on.
//
// Emission is checked as it happens: emit() encodes each instruction at once (vnpu::encode: operand ranges and
// alignment) and refuses a program longer than max_program_instructions (rule program-size: a 300-byte model with
// a nearest Resize to 2^22 rows emitted 25 M instructions, 4 GB and 25 s; the full MobileNetV2 takes 42,768),
// loop() checks the hardware's nesting (2) and body (1..1024) limits. The first error is returned
// by the call that hit it AND kept by the builder: finish() refuses a builder that has failed.
//
// Transactions (seed C7): transaction("what") opens one; unless commit() is called before it is destroyed
// (an early error return, an exception), everything emitted inside is taken back: instructions, loop markers,
// constants, and every register, event and buffer borrowed inside it and still held. A handle that outlives its
// rolled-back transaction becomes empty (its destructor then returns nothing). Transactions nest.
//
// Determinism (seed C8): registers, events and buffers are handed out lowest first and constants are laid out in
// the order they are added (identical contents are stored once), so the same emission sequence gives the same
// words, whatever was emitted before it or around it (a loop adds only its own LOOP word).
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <janus/core/error.hpp>
#include <janus/vnpu/isa.hpp>
#include <janus/vnpu/sim/machine.hpp>

namespace janus::emit {

class Builder;

/// Most instructions in one program (rule "program-size"; the lowering places a node that would pass it on the host).
inline constexpr std::int64_t max_program_instructions = std::int64_t{1} << 20;

/// Which local memory a Buffer lives in.
enum class Mem : std::uint8_t { lmem, acc, lut };

/// Alignment, size and base address of each local memory (docs/vnpu.md "Memories").
/// x rounded up to a multiple of 16: the granule of DMA transfers, VEC counts and MAC shapes.
constexpr std::int64_t round16(std::int64_t x) { return (x + 15) / 16 * 16; }

constexpr std::uint32_t mem_align(Mem m) { return m == Mem::acc ? 64 : m == Mem::lut ? 256 : 16; }
constexpr std::uint32_t mem_size(Mem m) {
    return m == Mem::acc ? vnpu::sim::acc_size : m == Mem::lut ? vnpu::sim::lut_size : vnpu::sim::lmem_size;
}
constexpr std::uint32_t mem_base(Mem m) {
    return m == Mem::acc ? vnpu::sim::acc_base : m == Mem::lut ? vnpu::sim::lut_base : vnpu::sim::lmem_base;
}
constexpr const char* mem_name(Mem m) { return m == Mem::acc ? "ACC" : m == Mem::lut ? "LUT RAM" : "LMEM"; }

namespace detail {
enum class Kind : std::uint8_t { reg, event };

/// One borrowable thing: a register, an event, or an allocated block.
struct Slot {
    bool held = false;
    std::string holder;
    int scope = 0;            ///< scope depth at the borrow
    std::uint64_t stamp = 0;  ///< borrow number: transactions take back stamps above their mark
    std::uint64_t gen = 0;    ///< bumped whenever the slot is taken back, so stale handles do nothing
};

struct Block {  ///< an allocated buffer
    Mem mem = Mem::lmem;
    std::uint32_t offset = 0, bytes = 0;  ///< within the memory, rounded up to its alignment
    Slot slot;
};
}  // namespace detail

/// A borrowed scalar register or event; gives it back when destroyed. Move-only.
class Handle {
public:
    Handle() = default;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    Handle(Handle&& o) noexcept { take(o); }
    Handle& operator=(Handle&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    ~Handle() { release(); }
    /// The register (1..15) or event (0..15) number.
    int index() const { return index_; }
    explicit operator bool() const { return b_ != nullptr; }
    void release();

private:
    friend class Builder;
    Handle(Builder* b, detail::Kind k, int i, std::uint64_t gen) : b_(b), kind_(k), index_(i), gen_(gen) {}
    void take(Handle& o) {
        b_ = std::exchange(o.b_, nullptr);
        kind_ = o.kind_, index_ = o.index_, gen_ = o.gen_;
    }
    Builder* b_ = nullptr;
    detail::Kind kind_ = detail::Kind::reg;
    int index_ = 0;
    std::uint64_t gen_ = 0;
};
using Reg = Handle;
using Event = Handle;

/// A borrowed block of LMEM or ACC; gives it back when destroyed. Move-only.
class Buffer {
public:
    Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { take(o); }
    Buffer& operator=(Buffer&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    ~Buffer() { release(); }
    /// The local address (vnpu/sim/machine.hpp's map: LMEM at 0x00000, ACC at 0x80000).
    std::uint32_t address() const { return address_; }
    std::uint32_t bytes() const { return bytes_; }
    explicit operator bool() const { return b_ != nullptr; }
    void release();

private:
    friend class Builder;
    Buffer(Builder* b, std::size_t id, std::uint64_t gen, std::uint32_t address, std::uint32_t bytes)
        : b_(b), id_(id), gen_(gen), address_(address), bytes_(bytes) {}
    void take(Buffer& o) {
        b_ = std::exchange(o.b_, nullptr);
        id_ = o.id_, gen_ = o.gen_, address_ = o.address_, bytes_ = o.bytes_;
    }
    Builder* b_ = nullptr;
    std::size_t id_ = 0;
    std::uint64_t gen_ = 0;
    std::uint32_t address_ = 0, bytes_ = 0;
};

/// An instruction operand: a number, or a borrowed register (its index).
struct Operand {
    std::int64_t value = 0;
    Operand(std::int64_t v) : value(v) {}           // NOLINT: implicit by design
    Operand(int v) : value(v) {}                    // NOLINT
    Operand(std::uint32_t v) : value(v) {}          // NOLINT
    Operand(const Handle& r) : value(r.index()) {}  // NOLINT
};

/// The event actions of one instruction.
struct Sync {
    const Event* wait = nullptr;
    const Event* signal = nullptr;
};

/// A finished program: the instruction list (ending with halt) and the weights region's contents (constants).
struct Program {
    std::string name;
    std::vector<vnpu::Instr> code;
    std::vector<std::uint8_t> weights;
};

class Builder {
public:
    explicit Builder(std::string name) : name_(std::move(name)) {
        regs_.resize(16);
        events_.resize(16);
    }
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;

    const std::string& name() const { return name_; }
    /// The first error hit, or ok.
    Status status() const { return failed_ ? Status(*failed_) : ok_status(); }
    std::size_t size() const { return code_.size(); }
    std::span<const vnpu::Instr> code() const { return code_; }

    // ------------------------------------------------------------------------------------------- resources
    /// Borrow the lowest free register of r1..r15. Rule: registers-exhausted (names every holder).
    Result<Reg> reg(std::string holder) {
        JANUS_TRY(int i, pick(regs_, 1, "registers-exhausted", "register", "r", holder));
        return Reg(this, detail::Kind::reg, i, regs_[static_cast<std::size_t>(i)].gen);
    }
    /// Borrow the lowest free event of e0..e15. Rule: events-exhausted (names every holder).
    Result<Event> event(std::string holder) {
        JANUS_TRY(int i, pick(events_, 0, "events-exhausted", "event", "e", holder));
        return Event(this, detail::Kind::event, i, events_[static_cast<std::size_t>(i)].gen);
    }
    /// Allocate `bytes` (rounded up to the memory's alignment: LMEM 16, ACC 64, LUT RAM 256) first-fit from the
    /// lowest address. Rule: lmem-budget / acc-budget / lut-budget: it does not fit in the real memory (the message
    /// gives the largest hole and every holder; an address that is merely not encodable is the encoder's
    /// field-range error instead, seed C4).
    Result<Buffer> alloc(Mem mem, std::uint32_t bytes, std::string holder) {
        JANUS_CHECK(status());
        const std::uint32_t align = mem_align(mem), size = mem_size(mem);
        const std::uint64_t want = (std::max<std::uint64_t>(bytes, 1) + align - 1) / align * align;
        std::uint64_t largest = 0;
        const std::uint64_t at = first_fit(mem, want, largest);
        if (at + want > size) {
            const char* name = mem_name(mem);
            std::string held;
            for (const auto& b : blocks_)
                if (b.slot.held && b.mem == mem)
                    held += " '" + b.slot.holder + "' " + std::to_string(b.bytes) + " B at " +
                            std::to_string(b.offset) + ";";
            return fail(make_error(name_, "alloc '" + holder + "'",
                                   mem == Mem::acc   ? "acc-budget"
                                   : mem == Mem::lut ? "lut-budget"
                                                     : "lmem-budget",
                                   "'" + holder + "' needs " + std::to_string(want) + " B of " + name + " (of " +
                                       std::to_string(size) + " B); the largest free block is " +
                                       std::to_string(largest) + " B; held:" + (held.empty() ? " nothing" : held)));
        }
        detail::Block blk{mem, static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(want), {}};
        blk.slot = {true, std::move(holder), depth_, ++stamp_, 0};
        // reuse a free record (deterministic: the lowest index) so that ids stay small
        std::size_t id = blocks_.size();
        for (std::size_t k = 0; k < blocks_.size(); ++k)
            if (!blocks_[k].slot.held) {
                id = k;
                break;
            }
        if (id == blocks_.size())
            blocks_.push_back(blk);
        else {
            blk.slot.gen = blocks_[id].slot.gen;
            blocks_[id] = blk;
        }
        return Buffer(this, id, blocks_[id].slot.gen, mem_base(mem) + blk.offset, blk.bytes);
    }

    /// The largest block alloc(mem, ...) could hand out now.
    std::uint32_t largest_free(Mem mem) const {
        std::uint64_t largest = 0;
        const std::uint64_t at = first_fit(mem, std::uint64_t{1} << 40, largest);
        (void)at;
        return static_cast<std::uint32_t>(largest);
    }

    /// The debug log: why a strategy was chosen or an optimization disabled (seed C10), one line each.
    void note(std::string line) { log_.push_back(std::move(line)); }
    const std::vector<std::string>& log() const { return log_; }

    /// Add constant bytes to the weights region (16-B aligned, zero padded to 16); identical contents are stored
    /// once. Returns the offset in the weights region.
    std::uint32_t constant(std::span<const std::uint8_t> bytes) {
        for (const auto& [at, n] : constants_)  // few constants per program: a linear search is enough
            if (n == bytes.size() && std::equal(bytes.begin(), bytes.end(), weights_.begin() + at)) return at;
        const auto at = static_cast<std::uint32_t>(weights_.size());
        weights_.insert(weights_.end(), bytes.begin(), bytes.end());
        weights_.resize(static_cast<std::size_t>(round16(static_cast<std::int64_t>(weights_.size()))), 0);
        constants_.emplace_back(at, bytes.size());
        return at;
    }
    std::span<const std::uint8_t> weights() const { return weights_; }

    // ------------------------------------------------------------------------------------------- emission
    /// Append one instruction; it is encoded at once (operand ranges, alignment, events).
    /// Rules: known-instruction, and those of vnpu::encode.
    Status emit(std::string_view mnemonic, std::initializer_list<Operand> ops, Sync sync = {}) {
        std::array<std::int64_t, vnpu::max_fields + 1> v{};
        std::size_t k = 0;
        for (const Operand& o : ops) v[std::min(k++, v.size() - 1)] = o.value;
        return emit(mnemonic, std::span<const std::int64_t>(v.data(), std::min(k, v.size())), sync);
    }
    /// The same, with the operand values in a span.
    Status emit(std::string_view mnemonic, std::span<const std::int64_t> ops, Sync sync = {}) {
        JANUS_CHECK(status());
        const std::string where = "instruction " + std::to_string(code_.size());
        if (static_cast<std::int64_t>(code_.size()) >= max_program_instructions)
            return fail(make_error(name_, where, "program-size",
                                   "the program would pass " + std::to_string(max_program_instructions) +
                                       " instructions"));
        vnpu::Instr in;
        in.info = vnpu::find_instruction(mnemonic);
        if (!in.info)
            return fail(make_error(name_, where, "known-instruction",
                                   "'" + std::string(mnemonic) + "' is no vnpu instruction"));
        if (static_cast<int>(ops.size()) != in.info->n_fields)
            return fail(make_error(name_, where, "operand-count",
                                   std::string(mnemonic) + " takes " + std::to_string(in.info->n_fields) +
                                       " operands, got " + std::to_string(ops.size())));
        std::copy(ops.begin(), ops.end(), in.operands.begin());
        if (sync.wait) in.wait = sync.wait->index();
        if (sync.signal) in.signal = sync.signal->index();
        if (auto w = vnpu::encode(in, name_ + ":" + where); !w.ok()) return fail(w.error());
        code_.push_back(in);
        return ok_status();
    }

    /// Emit a hardware loop running `body` (a callable returning Status) `count` times. A count of 0 emits
    /// nothing. Rules: loop-count (1..16384), loop-depth (2 levels), loop-body (1..1024 instructions).
    template <class F>
    Status loop(std::int64_t count, std::string_view what, F&& body) {
        JANUS_CHECK(status());
        const std::string where = "loop '" + std::string(what) + "'";
        if (count == 0) return ok_status();
        if (count < 0 || count > 16384)
            return fail(
                make_error(name_, where, "loop-count", "count " + std::to_string(count) + " is outside 1..16384"));
        if (loop_depth_ >= 2)
            return fail(make_error(name_, where, "loop-depth", "a third nested hardware loop; the vnpu nests 2"));
        const std::size_t at = code_.size();
        JANUS_CHECK(emit("loop", {count, 1}));
        ++loop_depth_;
        Status s = body();
        --loop_depth_;
        JANUS_CHECK(s);
        JANUS_CHECK(status());
        const std::size_t n = code_.size() - at - 1;
        if (n == 0 || n > 1024)
            return fail(
                make_error(name_, where, "loop-body",
                           "the body has " + std::to_string(n) + " instructions; a hardware loop takes 1..1024"));
        code_[at].operands[1] = static_cast<std::int64_t>(n);
        return ok_status();
    }

    // ------------------------------------------------------------------------------------------- scopes, transactions
    /// A nesting level for borrows: when it closes, every handle borrowed inside must have been returned.
    class Scope {
    public:
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
        ~Scope() { b_->close_scope(what_); }

    private:
        friend class Builder;
        Scope(Builder* b, std::string what) : b_(b), what_(std::move(what)) { ++b_->depth_; }
        Builder* b_;
        std::string what_;
    };
    [[nodiscard]] Scope scope(std::string what) { return Scope(this, std::move(what)); }

    class Transaction {
    public:
        Transaction(const Transaction&) = delete;
        Transaction& operator=(const Transaction&) = delete;
        ~Transaction() {
            if (!done_) b_->rollback(mark_);
        }
        void commit() { done_ = true; }

    private:
        friend class Builder;
        struct Mark {
            std::size_t code = 0, weights = 0, constants = 0;
            std::uint64_t stamp = 0;
            int loop_depth = 0;
            bool failed = false;
        };
        Transaction(Builder* b, Mark m) : b_(b), mark_(m) {}
        Builder* b_;
        Mark mark_;
        bool done_ = false;
    };
    [[nodiscard]] Transaction transaction() {
        return Transaction(
            this, {code_.size(), weights_.size(), constants_.size(), stamp_, loop_depth_, failed_.has_value()});
    }

    /// Append halt and hand out the program. Rules: the builder's first error, open-loop, held-at-finish.
    Result<Program> finish() {
        JANUS_CHECK(status());
        std::string held = held_registers();
        for (std::size_t i = 0; i < events_.size(); ++i)
            if (events_[i].held) held += " e" + std::to_string(i) + " ('" + events_[i].holder + "')";
        for (const auto& b : blocks_)
            if (b.slot.held) held += " buffer '" + b.slot.holder + "'";
        if (!held.empty()) return make_error(name_, "finish", "held-at-finish", "still borrowed:" + held);
        JANUS_CHECK(emit("halt", {}));
        return Program{name_, code_, weights_};
    }

    /// End a segment: append halt and return the pc of the next instruction, the next segment's entry point
    /// (vnpu::sim::Options::entry). The host runs between segments, and a new run starts with fresh registers and
    /// events, so no register may be held across the halt (rule held-at-segment-end, naming the holders); events and
    /// buffers may be (the halt itself faults if an event counter is not 0). Rules: the builder's first error,
    /// held-at-segment-end, open-loop.
    Result<std::uint32_t> end_segment() {
        JANUS_CHECK(status());
        if (const std::string held = held_registers(); !held.empty())
            return fail(
                make_error(name_, "end_segment", "held-at-segment-end",
                           "registers do not keep their values across a segment's halt; still borrowed:" + held));
        if (loop_depth_ > 0)
            return fail(make_error(name_, "end_segment", "open-loop", "a segment ends inside a loop body"));
        JANUS_CHECK(emit("halt", {}));
        return static_cast<std::uint32_t>(code_.size());
    }

    /// Who holds what, one line per held resource (for diagnostics and tests).
    std::string holders() const {
        std::string s;
        for (std::size_t i = 0; i < regs_.size(); ++i)
            if (regs_[i].held) s += "r" + std::to_string(i) + " '" + regs_[i].holder + "'\n";
        for (std::size_t i = 0; i < events_.size(); ++i)
            if (events_[i].held) s += "e" + std::to_string(i) + " '" + events_[i].holder + "'\n";
        for (const auto& b : blocks_)
            if (b.slot.held)
                s += std::string(mem_name(b.mem)) + " +" + std::to_string(b.offset) + " " + std::to_string(b.bytes) +
                     " B '" + b.slot.holder + "'\n";
        return s;
    }

private:
    friend class Handle;
    friend class Buffer;

    /// " r1 ('holder') r4 ('holder')": every borrowed register (finish and end_segment name them).
    std::string held_registers() const {
        std::string held;
        for (std::size_t i = 0; i < regs_.size(); ++i)
            if (regs_[i].held) held += " r" + std::to_string(i) + " ('" + regs_[i].holder + "')";
        return held;
    }

    /// First-fit offset of `want` bytes in `mem` (it does not fit when offset + want > size); `largest` gets the
    /// largest hole seen (all of them when nothing fits).
    std::uint64_t first_fit(Mem mem, std::uint64_t want, std::uint64_t& largest) const {
        std::vector<std::pair<std::uint32_t, std::uint32_t>> used;  // (offset, end) of live blocks in `mem`
        for (const auto& b : blocks_)
            if (b.slot.held && b.mem == mem) used.emplace_back(b.offset, b.offset + b.bytes);
        std::sort(used.begin(), used.end());
        std::uint64_t at = 0;
        for (const auto& u : used) {
            if (u.first - at >= want) return at;
            largest = std::max<std::uint64_t>(largest, u.first - at);
            at = u.second;
        }
        const std::uint64_t size = mem_size(mem);
        largest = std::max<std::uint64_t>(largest, size > at ? size - at : 0);
        return at;
    }

    Error fail(Error e) {
        if (!failed_) failed_ = e;
        return e;
    }

    Result<int> pick(std::vector<detail::Slot>& slots, int first, const char* rule, const char* what,
                     const char* prefix, std::string& holder) {
        JANUS_CHECK(status());
        for (int i = first; i < static_cast<int>(slots.size()); ++i) {
            auto& s = slots[static_cast<std::size_t>(i)];
            if (!s.held) {
                s.held = true;
                s.holder = std::move(holder);
                s.scope = depth_;
                s.stamp = ++stamp_;
                return i;
            }
        }
        std::string held;
        for (int i = first; i < static_cast<int>(slots.size()); ++i)
            held +=
                std::string(" ") + prefix + std::to_string(i) + " '" + slots[static_cast<std::size_t>(i)].holder + "'";
        return fail(make_error(name_, "borrow '" + holder + "'", rule,
                               std::string("no free ") + what + " for '" + holder + "'; held by" + held));
    }

    void give_back(detail::Kind k, int i, std::uint64_t gen) {
        auto& s = (k == detail::Kind::reg ? regs_ : events_)[static_cast<std::size_t>(i)];
        if (s.gen != gen || !s.held) return;  // taken back by a rollback already
        s.held = false;
        s.holder.clear();
    }
    void give_back_block(std::size_t id, std::uint64_t gen) {
        auto& s = blocks_[id].slot;
        if (s.gen != gen || !s.held) return;
        s.held = false;
        s.holder.clear();
    }

    void close_scope(const std::string& what) {
        std::string left;
        const auto check = [&](const detail::Slot& s, const std::string& name) {
            if (s.held && s.scope >= depth_) left += " " + name + " ('" + s.holder + "')";
        };
        for (std::size_t i = 0; i < regs_.size(); ++i) check(regs_[i], "r" + std::to_string(i));
        for (std::size_t i = 0; i < events_.size(); ++i) check(events_[i], "e" + std::to_string(i));
        for (const auto& b : blocks_) check(b.slot, "buffer");
        --depth_;
        if (!left.empty())
            fail(make_error(name_, "scope '" + what + "'", "borrow-outlives-scope",
                            "borrowed inside the scope and still held when it closes:" + left));
    }

    void rollback(const Transaction::Mark& m) {
        code_.resize(m.code);
        weights_.resize(m.weights);
        constants_.resize(m.constants);
        const auto take_back = [&](detail::Slot& s) {
            if (s.held && s.stamp > m.stamp) {
                s.held = false;
                s.holder.clear();
                ++s.gen;
            }
        };
        for (auto& s : regs_) take_back(s);
        for (auto& s : events_) take_back(s);
        for (auto& b : blocks_) take_back(b.slot);
        loop_depth_ = m.loop_depth;
        if (!m.failed) failed_.reset();  // the failure belonged to the abandoned attempt
    }

    std::string name_;
    std::vector<vnpu::Instr> code_;
    std::vector<std::uint8_t> weights_;
    std::vector<std::pair<std::uint32_t, std::size_t>> constants_;  ///< (offset, bytes), in the order added
    std::vector<detail::Slot> regs_, events_;
    std::vector<detail::Block> blocks_;
    std::optional<Error> failed_;
    std::vector<std::string> log_;
    std::uint64_t stamp_ = 0;
    int depth_ = 0;
    int loop_depth_ = 0;
};

inline void Handle::release() {
    if (b_) std::exchange(b_, nullptr)->give_back(kind_, index_, gen_);
}
inline void Buffer::release() {
    if (b_) std::exchange(b_, nullptr)->give_back_block(id_, gen_);
}

/// The barrier between two kernels (seed C2 across kernels). Every kernel places its own events and returns them to
/// 0, but an event is a FIFO shared by all units: with two kernels in flight, a waiter of the second kernel (say on
/// MAC) can consume a signal meant for a waiter of the first (on VEC) on a different unit, and the pairing then
/// follows the timing (MobileNetV2-tiny's GlobalAveragePool read a clobbered rq table that way). So between two
/// kernels every unit runs a marker that signals one event reserved for the whole program, and SEQ waits for all
/// four before it dispatches the next kernel: no signal crosses a kernel boundary, and whatever a kernel left in
/// LMEM for the next (graph/lower.hpp keeps some values there) is complete before the next kernel starts. The
/// markers touch only their own 32 B of LMEM (VEC at +0, LUT at +16) and reset the DMA and MAC configuration, which
/// every kernel sets before it transfers or multiplies. 10 instructions.
class KernelBarrier {
public:
    /// Borrow the barrier's event and its 32 B of LMEM for the whole program (release() gives them back).
    static Result<KernelBarrier> make(Builder& b) {
        KernelBarrier k;
        JANUS_TRY(k.event_, b.event("kernel barrier"));
        JANUS_TRY(k.markers_, b.alloc(Mem::lmem, 32, "kernel barrier markers"));
        return k;
    }
    Status emit(Builder& b) const {
        auto scope = b.scope("kernel barrier");
        JANUS_TRY(Reg r, b.reg("kernel barrier marker address"));
        JANUS_TRY(Reg r2, b.reg("kernel barrier marker address"));
        const Sync mark{nullptr, &event_};
        JANUS_CHECK(b.emit("li", {r, markers_.address()}));
        JANUS_CHECK(b.emit("li", {r2, markers_.address() + 16}));
        JANUS_CHECK(b.emit("dma.cfg", {1, 0, 0}, mark));
        JANUS_CHECK(b.emit("mac.cfg", {16, 16, 16, 16}, mark));
        JANUS_CHECK(b.emit("vec.max", {r, r, r, 16}, mark));
        JANUS_CHECK(b.emit("lut.apply", {r2, r2, 0, 16}, mark));
        for (int u = 0; u < 4; ++u) JANUS_CHECK(b.emit("sync", {std::int64_t{1} << event_.index(), 0}));
        return ok_status();
    }
    void release() {
        event_.release();
        markers_.release();
    }

private:
    Event event_;
    Buffer markers_;
};

}  // namespace janus::emit
