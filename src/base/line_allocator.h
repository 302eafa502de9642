// LineAllocator: a std::allocator that gives every block whole cache lines of its own (64-byte
// aligned, its size rounded up to 64). For containers that threads write side by side: two
// small blocks from the heap may otherwise share a line, which the threads writing them then
// take from each other at every write (false sharing).
#pragma once

#include <cstddef>
#include <new>

namespace preflight {

inline constexpr std::size_t kCacheLine = 64;

template <typename T>
struct LineAllocator {
  using value_type = T;

  LineAllocator() = default;
  template <typename U>
  LineAllocator(const LineAllocator<U>&) {}  // NOLINT(google-explicit-constructor): a rebind

  T* allocate(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + kCacheLine - 1) / kCacheLine * kCacheLine;
    return static_cast<T*>(::operator new(bytes, std::align_val_t(kCacheLine)));
  }
  void deallocate(T* p, std::size_t /*n*/) { ::operator delete(p, std::align_val_t(kCacheLine)); }

  template <typename U>
  bool operator==(const LineAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const LineAllocator<U>&) const {
    return false;
  }
};

}  // namespace preflight
