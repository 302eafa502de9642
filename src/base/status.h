// Status and StatusOr<T>: the one error convention of Preflight (LevelDB/Abseil style).
// A Status is either OK or carries a code and a one-line message meant for the user. Expected
// outcomes ("does not fit in HBM") are data, never errors. Values are cheap to copy when OK.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "base/check.h"

namespace preflight {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input: config value, flag, file content
  kNotFound,         // unknown preset, missing file
  kInternal,         // a bug surfaced as an error instead of a crash
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a status with `prefix` prepended to the message ("file.yaml: " + message).
  Status with_prefix(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
inline Status not_found(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
inline Status internal_error(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    PREFLIGHT_CHECK(!status_.ok());
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok().
  const T& value() const& {
    PREFLIGHT_CHECK(ok());
    return *value_;
  }
  T& value() & {
    PREFLIGHT_CHECK(ok());
    return *value_;
  }
  T&& value() && {
    PREFLIGHT_CHECK(ok());
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace preflight

#define PREFLIGHT_STATUS_CONCAT_INNER_(a, b) a##b
#define PREFLIGHT_STATUS_CONCAT_(a, b) PREFLIGHT_STATUS_CONCAT_INNER_(a, b)

// Returns from the current function when `expr` (a Status) is not OK.
#define PREFLIGHT_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::preflight::Status preflight_status_ = (expr);        \
    if (!preflight_status_.ok()) return preflight_status_; \
  } while (0)

// `lhs = value of expr` (a StatusOr), or returns its Status from the current function.
#define PREFLIGHT_ASSIGN_OR_RETURN(lhs, expr) \
  PREFLIGHT_ASSIGN_OR_RETURN_IMPL_(PREFLIGHT_STATUS_CONCAT_(preflight_or_, __LINE__), lhs, expr)
#define PREFLIGHT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) return tmp.status();                    \
  lhs = std::move(tmp).value()
