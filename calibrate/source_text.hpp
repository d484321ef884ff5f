#pragma once
/// Text that goes into a calibrated profile's sources, description and origin from outside parasim
/// (a device name read from a log, a file name): bytes outside printable ASCII become '?', so the
/// profile is valid UTF-8 JSON whatever the log or the file system held.
#include <string>
#include <string_view>

namespace parasim::calibrate {

[[nodiscard]] inline std::string source_text(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c < 0x20 || c > 0x7e) c = '?';
  return out;
}

}  // namespace parasim::calibrate
