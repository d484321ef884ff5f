#pragma once
/// `parasim execute --recalibrate P.json`: the profile a prediction came from, with the executed
/// device's and link's figures scaled by what the run measured, class by class, so that the same
/// task graph predicted again from it takes each class's measured time:
///  - GEMM and convolution → the GEMM efficiency curves (the convolutions are priced by the GEMM
///    curve, with the im2col patch passes where the device's `convolution` is "im2col-gemm");
///  - attention → the fused-attention curves of every implementation;
///  - elementwise → the memory efficiency curve; softmax → the softmax rate; optimizer → the
///    optimizer rate (where the profile has one);
///  - every collective kind and the pipeline sends together → the efficiency curves of the links the
///    step used (the bandwidth term; the per-message latency stays as calibrated).
/// Each factor is the class's predicted time over its measured time in the median step (summed over
/// ranks). A curve that a factor above 1 lifts past an efficiency of 1 is divided by its new largest
/// point and that point moves into the peak (or bandwidth) it multiplies, so every rate is the one
/// intended; the attention curves, relative to the GEMM peak, are then limited to 1 and say so.
/// Idle time is the consequence of the others and folds into nothing. Each changed figure's source
/// names the run and the factor, then what it was before.
#include <string>
#include <vector>

#include "sim/profile.hpp"

namespace parasim::calibrate {

struct ExecutedClass {
  std::string name;  ///< as `parasim execute` names it: "GEMM", "all-reduce", "pipeline send", ...
  double measured_s = 0, predicted_s = 0;
};

struct Recalibration {
  sim::Profile profile;
  std::vector<std::string> changes;  ///< one line per figure scaled: "gemm_efficiency x 0.812 (GEMM, convolution)"
};

/// `profile` with device `device` and links `links` scaled by the classes of one execution
/// (`what`: the run, as the sources name it). Preconditions: the device and links are the profile's.
[[nodiscard]] Recalibration recalibrated(const sim::Profile& profile, const std::string& device, const std::vector<std::string>& links,
                                         const std::vector<ExecutedClass>& classes, const std::string& what);

}  // namespace parasim::calibrate
