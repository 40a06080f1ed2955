#pragma once
// Whole-file reading and atomic writing (POSIX): the one implementation behind every file Janus reads or writes
// (.npy arrays, packages, models, janusc's outputs).
//
// Contract:
//   - read_file(path, rule, kind, max_bytes) returns the file's bytes, or an Error naming `path` with `rule` and the
//     system's reason; a directory is refused as "not <kind>". Limits (issue 26): a character or block device
//     (/dev/zero, a disk) is refused with the rule file-kind; a file of more than `max_bytes` bytes (default:
//     core/limits.hpp's default_max_memory, 1 GiB) with the rule file-size-limit, before it is read for a regular
//     file and after at most max_bytes + 1 bytes for a pipe.
//   - write_file_atomic(path, bytes, rule) writes `bytes` to a new temporary file in the target's directory
//     (".<name>.tmp.<pid>.<n>", created with O_EXCL, mode 0666 & ~umask), flushes it (fsync), closes it, renames it
//     over `path` (atomic on POSIX) and syncs the directory. On any failure the temporary is removed and an
//     existing `path` is left as it was: afterwards `path` holds the old file (or nothing) or the complete new one,
//     never a partial one (seed D7). Errors name `path`, carry `rule` and say which step failed and why.
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

/// Atomically replace (or create) `path` with `bytes` (see the header comment).
inline Status write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes, std::string_view rule) {
    namespace fs = std::filesystem;
    const auto fail = [&](std::string detail) { return make_error(path, "", std::string(rule), std::move(detail)); };
    const fs::path target(path);
    const std::string name = target.filename().string();
    if (name.empty() || name == "." || name == "..") return fail("the path names a directory, not a file");
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");

    static std::atomic<unsigned> counter{0};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = (dir / ("." + name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++))).string();
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0)
        return fail("cannot create a temporary file in the directory '" + dir.string() + "': " + errno_text(errno));
    const auto abandon = [&](std::string what, int err) {
        ::close(fd);
        ::unlink(tmp.c_str());
        return fail(std::move(what) + ": " + errno_text(err));
    };
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ::ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return abandon("cannot write the temporary file '" + tmp + "'", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) return abandon("cannot flush the temporary file '" + tmp + "'", errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return fail("cannot close the temporary file '" + tmp + "': " + errno_text(err));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        return fail("cannot rename the temporary file over the target: " + errno_text(err));
    }
    // Make the rename itself durable (best effort: some file systems refuse fsync on a directory).
    if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
    return ok_status();
}

}  // namespace janus
