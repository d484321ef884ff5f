#pragma once
/// `parasim calibrate --backend loader --data DIR`: the real loader (data/loader.hpp) measured on a
/// dataset — one thread's time to read (from the page cache), decode and augment a sample, and a
/// loader thread's copy rate into a device buffer — and then checked: the loader run for real under
/// the naive and the sharded placements at each thread count, against the prediction of the
/// simulated input pipeline (sim/input_pipeline.hpp) from the figures just measured.
#include <cstdint>
#include <ostream>
#include <string>

#include "sim/profile.hpp"

namespace parasim::calibrate {

struct LoaderCalibrationOptions {
  std::int64_t image_size = 0;    ///< the tensors' side; 0: the dataset's own
  std::int64_t max_threads = 2;   ///< the checks run 1 … max_threads threads
  /// The checks' plan: tp 2 × dp 2 on the 4 devices of one host (the acceptance's DP 2 × TP 2),
  /// global batch 32 in micro-batches of 4, `check_steps` steps timed after one of warm-up.
  std::int64_t check_steps = 8;
  int repeats = 16;               ///< rounds, each running the loader once for each figure; the mean is kept
};

/// Measures and checks the loader on the dataset in `dir`. `command` is recorded in the source;
/// progress lines go to `log`. Throws InputError for a dataset that cannot be read or is smaller
/// than the checks' steps.
[[nodiscard]] sim::LoaderProfile calibrate_loader(const std::string& dir, const LoaderCalibrationOptions& options, const std::string& command,
                                                  std::ostream& log);

}  // namespace parasim::calibrate
