#pragma once

namespace xnorcl {

// "MAJOR.MINOR.PATCH" of the library the app is linked against.
const char* version() noexcept;

}  // namespace xnorcl
