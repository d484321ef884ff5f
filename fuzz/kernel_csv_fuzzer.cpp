// libFuzzer target: kernel timings CSV (fuzz/inputs.hpp says what each input must satisfy).
#include <cstddef>
#include <cstdint>

#include "fuzz/inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return parasim::fuzz::run_input(parasim::fuzz::kernel_csv, data, size);
}
