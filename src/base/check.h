// PREFLIGHT_CHECK: an always-on assertion for programmer errors (not user input). On failure it
// prints file:line and the condition to stderr and aborts, in every build type.
#pragma once

namespace preflight::internal {
[[noreturn]] void check_failed(const char* file, int line, const char* condition,
                               const char* message);
}  // namespace preflight::internal

#define PREFLIGHT_CHECK(condition)                                                             \
  do {                                                                                         \
    if (!(condition)) ::preflight::internal::check_failed(__FILE__, __LINE__, #condition, ""); \
  } while (0)

#define PREFLIGHT_CHECK_MSG(condition, message)                                       \
  do {                                                                                \
    if (!(condition))                                                                 \
      ::preflight::internal::check_failed(__FILE__, __LINE__, #condition, (message)); \
  } while (0)
