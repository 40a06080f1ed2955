#pragma once
// Whole-file reading and safe writing (POSIX): the one implementation behind every file Janus reads or writes
// (.npy arrays, packages, models, janusc's outputs).
//
// Contract:
//   - read_file(path, rule, kind, max_bytes) returns the file's bytes, or an Error naming `path` with `rule` and the
//     system's reason; a directory is refused as "not <kind>". Limits (issue 26): a character or block device
//     (/dev/zero, a disk) is refused with the rule file-kind; a file of more than `max_bytes` bytes (default:
//     core/limits.hpp's default_max_memory, 1 GiB) with the rule file-size-limit, before it is read for a regular
//     file and after at most max_bytes + 1 bytes for a pipe.
//   - write_files_atomic(files) writes several files all or none, in two phases (issue 26, output safety):
//       1. stage: every target is resolved and checked, and every file's bytes are written to a new temporary file
//          in its target's directory (".<name>.tmp.<pid>.<n>", created with O_EXCL), flushed (fsync) and closed.
//          Nothing the user sees changes in this phase: any failure removes every temporary and returns the error.
//       2. commit: each temporary is renamed over its target (atomic on POSIX), then the directories are synced.
//     Targets:
//       - a symbolic link is written THROUGH: the link's final target (links followed, at most 40) is the file
//         replaced, and the link stays a link (rule output-symlink for a loop or a chain too long);
//       - an existing file keeps its permission bits (and owner and group where the process may set them): the
//         temporary gets them before the rename;
//       - a file with more than one hard link is rewritten IN PLACE in the commit phase (opened and checked for
//         writing, and its space reserved with posix_fallocate, in the stage phase), so every link sees the new
//         bytes; that one write is not atomic against a crash, but the bytes are complete before it starts;
//       - a character or block device, a FIFO or a socket is refused (rule output-special): Janus never replaces a
//         device node with a regular file, and never writes into one;
//       - a directory is refused (before anything is written, so a multi-file write changes nothing);
//       - two entries that name the same file (by path or by device and inode) are refused (rule output-twice).
//     After a failure in the stage phase every target holds what it held before: the old file (or nothing) or,
//     after a successful commit, the complete new one, never a partial one (seed D7). Errors name the path, carry
//     the entry's rule (or the output-* rule) and say which step failed and why.
//   - write_file_atomic(path, bytes, rule) is write_files_atomic of one file.
//   - same_file(a, b) says whether two paths name one existing file (st_dev and st_ino, links followed): janusc
//     refuses an output that is one of its inputs before any work (output-is-input).
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <janus/core/error.hpp>
#include <janus/core/limits.hpp>

namespace janus {

inline std::string errno_text(int err) { return std::generic_category().message(err); }

/// The bytes of the file at `path` (see the header comment).
inline Result<std::vector<std::uint8_t>> read_file(const std::string& path, std::string_view rule,
                                                   std::string_view kind = "a file",
                                                   std::uint64_t max_bytes = default_max_memory) {
    const auto fail = [&](std::string detail) { return make_error(path, "", std::string(rule), std::move(detail)); };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("cannot open the file: " + errno_text(errno));
    struct ::stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        return fail("cannot inspect the file: " + errno_text(err));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return fail("this is a directory, not " + std::string(kind));
    }
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        ::close(fd);
        return make_error(path, "", "file-kind", "this is a device, not " + std::string(kind));
    }
    const auto too_large = [&] {
        ::close(fd);
        return make_error(path, "", "file-size-limit",
                          "the file is larger than the limit of " + byte_size_text(max_bytes) +
                              " (janusc --max-memory)");
    };
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_large();
    std::vector<std::uint8_t> bytes;
    if (S_ISREG(st.st_mode) && st.st_size > 0) bytes.reserve(static_cast<std::size_t>(st.st_size));
    std::uint8_t chunk[65536];
    for (;;) {
        const ::ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            return fail("cannot read the file: " + errno_text(err));
        }
        if (n == 0) break;
        if (bytes.size() + static_cast<std::size_t>(n) > max_bytes) return too_large();  // a pipe, or a growing file
        bytes.insert(bytes.end(), chunk, chunk + n);
    }
    ::close(fd);
    return bytes;
}

/// One file for write_files_atomic: the path, its bytes and the rule its errors carry.
struct FileWrite {
    std::string path;
    std::span<const std::uint8_t> bytes;
    std::string rule;
};

/// Whether `a` and `b` name the same existing file (device and inode, symbolic links followed).
inline bool same_file(const std::string& a, const std::string& b) {
    struct ::stat sa {}, sb {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

namespace file_detail {

/// The file `path` names once its symbolic links are followed (the last component only: a directory link on the
/// way is the kernel's to follow). A dangling link gives the missing target; a loop or more than 40 links is an
/// error message.
inline Result<std::string> link_target(const std::string& path, std::string_view rule) {
    namespace fs = std::filesystem;
    std::string cur = path;
    for (int hop = 0; hop <= 40; ++hop) {
        struct ::stat st {};
        if (::lstat(cur.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
        std::string buf(4096, '\0');
        const ::ssize_t n = ::readlink(cur.c_str(), buf.data(), buf.size());
        if (n < 0)
            return make_error(path, "", std::string(rule), "cannot read the symbolic link: " + errno_text(errno));
        buf.resize(static_cast<std::size_t>(n));
        const fs::path t(buf);
        cur = t.is_absolute() ? buf : (fs::path(cur).parent_path() / t).string();
    }
    return make_error(path, "", "output-symlink",
                      "the symbolic link does not resolve to a file (a loop, or more than 40 links)");
}

struct Staged {
    std::string target;  ///< the file replaced (symbolic links followed)
    std::string normal;  ///< target as an absolute, lexically normal path (one new file given twice)
    std::string tmp;     ///< the temporary renamed over it, or empty for an in-place write
    int fd = -1;         ///< an in-place write: the target, open for writing
    bool existed = false;
    dev_t dev = 0;
    ino_t ino = 0;
};

}  // namespace file_detail

/// Write every file of `files`, all or none (see the header comment).
inline Status write_files_atomic(std::span<const FileWrite> files) {
    namespace fs = std::filesystem;
    using file_detail::Staged;
    static std::atomic<unsigned> counter{0};
    std::vector<Staged> staged;
    const auto drop_all = [&] {
        for (const Staged& st : staged) {
            if (!st.tmp.empty()) ::unlink(st.tmp.c_str());
            if (st.fd >= 0) ::close(st.fd);
        }
    };
    // ---- stage ----
    for (const FileWrite& f : files) {
        const auto fail = [&](std::string detail, std::string rule = {}) {
            drop_all();
            return make_error(f.path, "", rule.empty() ? f.rule : std::move(rule), std::move(detail));
        };
        const fs::path named(f.path);
        const std::string name = named.filename().string();
        if (name.empty() || name == "." || name == "..") return fail("the path names a directory, not a file");
        auto resolved = file_detail::link_target(f.path, f.rule);
        if (!resolved) {
            drop_all();
            return resolved.error();
        }
        Staged st;
        st.target = *resolved;
        const fs::path target(st.target);
        const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
        struct ::stat old {};
        mode_t mode = 0666;
        bool in_place = false;
        if (::stat(st.target.c_str(), &old) == 0) {
            st.existed = true;
            st.dev = old.st_dev;
            st.ino = old.st_ino;
            if (S_ISCHR(old.st_mode) || S_ISBLK(old.st_mode) || S_ISFIFO(old.st_mode) || S_ISSOCK(old.st_mode))
                return fail(std::string("this is a ") +
                                (S_ISCHR(old.st_mode)    ? "character device"
                                 : S_ISBLK(old.st_mode)  ? "block device"
                                 : S_ISFIFO(old.st_mode) ? "FIFO"
                                                         : "socket") +
                                ", not a regular file; Janus writes its outputs to regular files only",
                            "output-special");
            if (S_ISDIR(old.st_mode)) return fail("this is a directory, not a file");
            if (S_ISREG(old.st_mode)) {
                mode = old.st_mode & 07777;
                in_place = old.st_nlink > 1;
            }
            for (const Staged& o : staged)
                if (o.existed && o.dev == st.dev && o.ino == st.ino)
                    return fail("the same file is given for two outputs ('" + o.target + "')", "output-twice");
        }
        std::error_code ec;
        st.normal = fs::absolute(target, ec).lexically_normal().string();  // ./x and x name one new file too
        for (const Staged& o : staged)
            if (o.normal == st.normal)
                return fail("the same file is given for two outputs ('" + o.target + "')", "output-twice");
        if (in_place) {  // keep the hard links: the commit writes into the file itself
            st.fd = ::open(st.target.c_str(), O_WRONLY | O_CLOEXEC);
            if (st.fd < 0) return fail("cannot open the file for writing: " + errno_text(errno));
            if (!f.bytes.empty())
                if (const int err = ::posix_fallocate(st.fd, 0, static_cast<off_t>(f.bytes.size()));
                    err != 0 && err != EOPNOTSUPP && err != EINVAL) {
                    ::close(st.fd);
                    return fail("cannot reserve " + std::to_string(f.bytes.size()) + " bytes for the file: " +
                                errno_text(err));
                }
            staged.push_back(std::move(st));
            continue;
        }
        int fd = -1;
        for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
            st.tmp = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                             std::to_string(counter++)))
                         .string();
            fd = ::open(st.tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd < 0 && errno != EEXIST) break;
        }
        if (fd < 0)
            return fail("cannot create a temporary file in the directory '" + dir.string() + "': " +
                        errno_text(errno));
        const auto abandon = [&](std::string what, int err) {
            ::close(fd);
            ::unlink(st.tmp.c_str());
            return fail(std::move(what) + ": " + errno_text(err));
        };
        if (st.existed) {  // the replaced file's permissions (and owner, where allowed) carry over
            if (::fchmod(fd, mode) != 0)
                return abandon("cannot give the temporary file '" + st.tmp + "' the file's mode", errno);
            if (old.st_uid != ::geteuid() || old.st_gid != ::getegid()) (void)::fchown(fd, old.st_uid, old.st_gid);
        }
        std::size_t done = 0;
        while (done < f.bytes.size()) {
            const ::ssize_t n = ::write(fd, f.bytes.data() + done, f.bytes.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return abandon("cannot write the temporary file '" + st.tmp + "'", n < 0 ? errno : EIO);
            done += static_cast<std::size_t>(n);
        }
        if (::fsync(fd) != 0) return abandon("cannot flush the temporary file '" + st.tmp + "'", errno);
        if (::close(fd) != 0) {
            const int err = errno;
            ::unlink(st.tmp.c_str());
            return fail("cannot close the temporary file '" + st.tmp + "': " + errno_text(err));
        }
        staged.push_back(std::move(st));
    }
    // ---- commit ----
    for (std::size_t k = 0; k < staged.size(); ++k) {
        Staged& st = staged[k];
        const FileWrite& f = files[k];
        const auto fail = [&](std::string detail) {
            for (std::size_t j = k; j < staged.size(); ++j) {
                if (!staged[j].tmp.empty()) ::unlink(staged[j].tmp.c_str());
                if (staged[j].fd >= 0) ::close(staged[j].fd);
            }
            return make_error(f.path, "", f.rule, std::move(detail));
        };
        if (st.tmp.empty()) {
            std::size_t done = 0;
            while (done < f.bytes.size()) {
                const ::ssize_t n = ::pwrite(st.fd, f.bytes.data() + done, f.bytes.size() - done,
                                             static_cast<off_t>(done));
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) return fail("cannot write the file in place: " + errno_text(n < 0 ? errno : EIO));
                done += static_cast<std::size_t>(n);
            }
            if (::ftruncate(st.fd, static_cast<off_t>(f.bytes.size())) != 0 || ::fsync(st.fd) != 0)
                return fail("cannot finish the file written in place: " + errno_text(errno));
            const int fd = st.fd;
            st.fd = -1;
            if (::close(fd) != 0) return fail("cannot close the file written in place: " + errno_text(errno));
            continue;
        }
        if (::rename(st.tmp.c_str(), st.target.c_str()) != 0) {
            const int err = errno;
            return fail("cannot rename the temporary file over the target: " + errno_text(err));
        }
        st.tmp.clear();
        // Make the rename itself durable (best effort: some file systems refuse fsync on a directory).
        const fs::path target(st.target);
        const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
        if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
            (void)::fsync(dfd);
            ::close(dfd);
        }
    }
    return ok_status();
}

/// Atomically replace (or create) `path` with `bytes` (see the header comment).
inline Status write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes, std::string_view rule) {
    const FileWrite one{path, bytes, std::string(rule)};
    return write_files_atomic(std::span<const FileWrite>(&one, 1));
}

}  // namespace janus
