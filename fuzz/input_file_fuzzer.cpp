// libFuzzer target: input files of every kind and size, read by parasim's readers (fuzz/inputs.hpp
// says what each input is and must satisfy).
#include <cstddef>
#include <cstdint>

#include "fuzz/inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return parasim::fuzz::run_input(parasim::fuzz::input_file, data, size);
}
