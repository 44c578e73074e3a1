// A move-only owner of one handle of a C library (an HDF5 id, an MPI communicator): closed when
// the owner goes, or earlier by reset() or close(). Traits say what the empty value is, whether
// a value is open, and how to close it:
//   struct traits {
//     using value_type = ...;
//     static value_type empty() noexcept;
//     static bool is_open(value_type) noexcept;
//     static int close(value_type&) noexcept;   // negative or non-zero on failure
//   };
#pragma once

#include <utility>

namespace sidecore {

template <typename Traits>
class unique_handle {
 public:
  using value_type = typename Traits::value_type;

  unique_handle() noexcept = default;
  explicit unique_handle(value_type value) noexcept : m_value(value) {}
  unique_handle(const unique_handle&) = delete;
  unique_handle& operator=(const unique_handle&) = delete;
  unique_handle(unique_handle&& other) noexcept
      : m_value(std::exchange(other.m_value, Traits::empty())) {}
  unique_handle& operator=(unique_handle&& other) noexcept {
    if (this != &other) {
      reset();
      m_value = std::exchange(other.m_value, Traits::empty());
    }
    return *this;
  }
  // Close failures are ignored here (this may run during unwinding): call close() where a
  // failure must be reported.
  ~unique_handle() { reset(); }

  value_type get() const noexcept { return m_value; }
  bool valid() const noexcept { return Traits::is_open(m_value); }
  explicit operator bool() const noexcept { return valid(); }

  void reset() noexcept { close(); }

  // Closes now; what the close function returned (0 when there was nothing to close).
  auto close() noexcept {
    decltype(Traits::close(m_value)) status{};
    if (Traits::is_open(m_value)) status = Traits::close(m_value);
    m_value = Traits::empty();
    return status;
  }

 private:
  value_type m_value = Traits::empty();
};

}  // namespace sidecore
