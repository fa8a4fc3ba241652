// SPDX-License-Identifier: Apache-2.0
// Reading and writing the library's files (network files, program-cache entries) safely: reads take only
// regular files, never block on a FIFO and never read more than a limit; writes never follow a link planted
// at a predictable temporary name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xnorcl::detail {

// A regular file (symbolic links followed) opened for reading, at most max_bytes long.
class RegularFile {
 public:
  // Nothing when the path does not exist; otherwise the file, or an Error naming the path and what it is
  // (a directory, a FIFO, a device, a file larger than max_bytes, unreadable).
  static std::optional<RegularFile> open(const std::string& path, std::uint64_t max_bytes);
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&&) = delete;
  RegularFile(const RegularFile&) = delete;
  ~RegularFile();

  std::uint64_t size() const { return size_; }
  std::uint64_t left() const { return size_ - at_; }
  // The next n bytes, or an Error when fewer are left or the file shrank meanwhile.
  void read(void* into, std::size_t n);

 private:
  RegularFile(int fd, std::uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_;
  std::uint64_t size_;
  std::uint64_t at_ = 0;
  std::string path_;
};

// A path the C library will open as given: InvalidArgument for an empty one or one holding a NUL byte.
void check_path(const std::string& path);

// The whole of a regular file at most max_bytes long; an Error naming the path otherwise (missing included).
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes);

// Writes bytes to a temporary created exclusively, with an unpredictable name, in path's directory, then
// renames it over path: readers never see a partial file, and nothing planted at a temporary name is
// followed. An Error naming the file where path is something other than a regular file (a directory, a
// FIFO, a device, a socket, or a link to one), before anything is created, and on failure (the temporary
// removed).
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace xnorcl::detail
