// The softmax kernel of the CPU executor, in a file of its own: it is built with -ffast-math
// (exec/CMakeLists.txt) so that GCC vectorises std::exp through glibc's vector math library
// (libmvec), as the vectorised exponentials of a CPU framework's softmax do (PyTorch's through
// SLEEF); a scalar exp would make the executor's softmax several times slower than any framework's.
#include <algorithm>
#include <cmath>

#include "exec/kernels.hpp"

namespace parasim::exec {
namespace {

std::size_t elements_of(double n) { return static_cast<std::size_t>(std::max(1.0, std::round(n))); }

}  // namespace

void softmax_pass(double bytes, double row, Scratch& s) {
  const std::size_t n = elements_of(bytes / 8);
  const float* x = s.get(0, n);
  softmax_rows(x, s.get(1, n), n, elements_of(row));
}

void softmax_rows(const float* x, float* y, std::size_t n, std::size_t row) {
  const std::size_t r = std::max<std::size_t>(1, std::min(n, row));
  for (std::size_t lo = 0; lo < n; lo += r) {
    const std::size_t hi = std::min(n, lo + r);
    float top = x[lo];
    for (std::size_t i = lo; i < hi; ++i) top = std::max(top, x[i]);
    float sum = 0;
    for (std::size_t i = lo; i < hi; ++i) sum += (y[i] = std::exp(x[i] - top));
    const float inv = 1.0f / sum;
    for (std::size_t i = lo; i < hi; ++i) y[i] *= inv;
  }
}

}  // namespace parasim::exec
