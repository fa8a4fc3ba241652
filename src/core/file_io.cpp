// SPDX-License-Identifier: Apache-2.0
#include "core/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "xnorcl/error.hpp"

namespace xnorcl::detail {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void check_path(const std::string& path) {
  // The C library would stop at a NUL and open a different file.
  const std::size_t nul = path.find('\0');
  if (nul != std::string::npos)
    throw InvalidArgument("the path '" + path.substr(0, nul) + "\\0...' holds a NUL byte at offset " +
                          std::to_string(nul) + "; a file name cannot contain one");
  if (path.empty()) throw InvalidArgument("the path is empty");
}

std::optional<RegularFile> RegularFile::open(const std::string& path, std::uint64_t max_bytes) {
  check_path(path);
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return std::nullopt;
    throw Error("cannot open " + path + ": " + errno_text(error));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw Error("cannot stat " + path + ": " + errno_text(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + " is " + kind_of(st.st_mode) + ", not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    throw Error(path + " holds " + std::to_string(size) + " bytes, more than the " +
                std::to_string(max_bytes) + " it may");
  }
  return RegularFile(fd, size, path);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(other.fd_), size_(other.size_), at_(other.at_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read(void* into, std::size_t n) {
  if (n > left()) {
    throw Error(path_ + ": " + std::to_string(n) + " bytes wanted at offset " + std::to_string(at_) + ", " +
                std::to_string(left()) + " are left");
  }
  auto* p = static_cast<char*>(into);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(fd_, p + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw Error("cannot read " + path_ + " at offset " + std::to_string(at_ + done) + ": " +
                  (got < 0 ? errno_text(errno) : "the file shrank"));
    }
    done += static_cast<std::size_t>(got);
  }
  at_ += n;
}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes) {
  std::optional<RegularFile> file = RegularFile::open(path, max_bytes);
  if (!file) throw Error("cannot open " + path + ": " + errno_text(ENOENT));
  std::string bytes(static_cast<std::size_t>(file->size()), '\0');
  file->read(bytes.data(), bytes.size());
  return bytes;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  check_path(path);
  // The rename would replace a FIFO, a device node or a socket with the file (a directory fails it less
  // clearly): only a regular file, or nothing, may be where the file goes. A link is followed to see what
  // it names; the rename then replaces the link itself, never writing through it.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error("cannot write " + path + ": it is " + kind_of(st.st_mode) + ", not a regular file");
  std::random_device rd;
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".tmp.%08x%08x", rd(), rd());
    temporary = path + suffix;
    // O_EXCL: never an existing file or a link planted there; 0666 less the umask, as any new file.
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) throw Error("cannot create " + temporary + ": " + errno_text(errno));
  }
  if (fd < 0) throw Error("cannot create a temporary file beside " + path);
  std::size_t done = 0;
  int error = 0;
  while (done < bytes.size() && error == 0) {
    const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0)
      error = errno;
    else
      done += static_cast<std::size_t>(put);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    throw Error("cannot write " + temporary + ": " + errno_text(error));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(temporary.c_str());
    throw Error("cannot rename " + temporary + " to " + path + ": " + errno_text(error));
  }
}

}  // namespace xnorcl::detail
