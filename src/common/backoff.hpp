// Naps between looks at something another process or thread will change: short at first, so
// that a change due now costs little, doubling up to a ceiling, so that a long wait does not
// cost a core.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace sidecore {

class backoff {
 public:
  // free_looks: looks before the first nap (a change due right now costs no sleep).
  backoff(std::chrono::microseconds first, std::chrono::microseconds longest, int free_looks = 0)
      : m_first(first), m_length(first), m_longest(longest), m_free(free_looks) {}

  // Sleeps for the current length, never past deadline, then doubles it.
  template <typename Clock, typename Duration>
  void nap(std::chrono::time_point<Clock, Duration> deadline) {
    if (m_looks < m_free) {
      ++m_looks;
      return;
    }
    const auto left = deadline - Clock::now();
    if (left <= decltype(left)::zero()) return;
    std::this_thread::sleep_for(std::min<typename Clock::duration>(
        std::chrono::duration_cast<typename Clock::duration>(m_length), left));
    m_length = std::min(m_length * 2, m_longest);
  }
  void nap() {
    if (m_looks < m_free) {
      ++m_looks;
      return;
    }
    std::this_thread::sleep_for(m_length);
    m_length = std::min(m_length * 2, m_longest);
  }
  // Something changed: the next naps are short again.
  void reset() noexcept {
    m_length = m_first;
    m_looks = 0;
  }

 private:
  std::chrono::microseconds m_first, m_length, m_longest;
  int m_free;
  int m_looks = 0;
};

}  // namespace sidecore
