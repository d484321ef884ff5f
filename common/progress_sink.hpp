#pragma once
/// Where long work says how far it has got. The simulator reports its phases through this interface
/// (lowering, the engine's finished tasks, the summary) without knowing how they are shown;
/// cli::Progress draws them on stderr (a bar on a terminal, plain lines elsewhere).
#include <cstddef>
#include <string_view>

namespace parasim {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// Starts a phase of `total` steps (0: a phase without a count).
  virtual void begin(std::string_view phase, std::size_t total) = 0;
  /// `done` of the phase's steps have finished.
  virtual void update(std::size_t done) = 0;
  /// Ends the phase.
  virtual void end() = 0;
};

}  // namespace parasim
