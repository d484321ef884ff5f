#include "calibrate/from_execution.hpp"

#include <algorithm>
#include <initializer_list>

#include "common/error.hpp"
#include "exec/kernels.hpp"
#include "calibrate/source_text.hpp"

namespace parasim::calibrate {
namespace {

/// Predicted over measured time of the named classes together; 0 where none was measured.
double factor_of(const std::vector<ExecutedClass>& classes, std::initializer_list<const char*> names, bool communication = false) {
  double measured = 0, predicted = 0;
  for (const auto& c : classes) {
    // Communication is every class that is not a kernel class (exec/kernels.hpp) nor idle time.
    bool kernel = c.name == "idle compute";
    for (const auto k : {exec::KernelClass::Gemm, exec::KernelClass::Convolution, exec::KernelClass::Attention, exec::KernelClass::Softmax,
                         exec::KernelClass::Elementwise, exec::KernelClass::Optimizer})
      kernel = kernel || c.name == exec::to_string(k);
    bool named = communication && !kernel;
    for (const char* n : names) named = named || c.name == n;
    if (!named) continue;
    measured += c.measured_s;
    predicted += c.predicted_s;
  }
  return measured > 0 && predicted > 0 ? predicted / measured : 0.0;
}

/// Every point of `curve` times `factor`; returns how much the largest went above 1 (1 if not),
/// having divided the curve by it.
double scale_curve(sim::EfficiencyCurve& curve, double factor) {
  double top = 0;
  for (auto& [size, e] : curve.points) top = std::max(top, e *= factor);
  if (top <= 1) return 1;
  for (auto& [size, e] : curve.points) e /= top;
  return top;
}

std::string sentence(double factor, const std::string& classes, const std::string& what) {
  return "scaled by " + fixed(factor, 4) + ", the " + classes + " time predicted over that measured by " + what;
}

void note(std::map<std::string, std::string>& sources, const std::string& key, const std::string& text) {
  const auto it = sources.find(key);
  sources[key] = text + (it != sources.end() ? "; before: " + it->second : "");
}

}  // namespace

Recalibration recalibrated(const sim::Profile& profile, const std::string& device, const std::vector<std::string>& links,
                           const std::vector<ExecutedClass>& classes, const std::string& what) {
  PARASIM_CHECK(profile.devices.count(device) == 1, "the executed device is the profile's");
  Recalibration r{profile, {}};
  r.profile.origin = what + ", over profile \"" + profile.name + "\" (" + profile.origin + ")";
  sim::DeviceProfile& d = r.profile.devices.at(device);
  auto changed = [&](const std::string& figure, double factor, const std::string& from) {
    r.changes.push_back(figure + " x " + fixed(factor, 4) + " (" + from + ")");
  };

  double peak_change = 1;
  if (const double f = factor_of(classes, {"GEMM", "convolution"}); f > 0) {
    // A curve lifted past 1 hands its excess to the peak it multiplies: the default curve to the
    // dtypes without a curve of their own, each dtype's curve to its own peak.
    peak_change = scale_curve(d.gemm_efficiency, f);
    for (auto& [dtype, peak] : d.peak_flops_per_s)
      if (!d.gemm_efficiency_by_dtype.count(dtype)) peak *= peak_change;
    for (auto& [dtype, curve] : d.gemm_efficiency_by_dtype)
      if (const double top = scale_curve(curve, f); top > 1 && d.peak_flops_per_s.count(dtype)) d.peak_flops_per_s[dtype] *= top;
    note(d.sources, "gemm_efficiency", sentence(f, "GEMM and convolution", what));
    changed("gemm_efficiency", f, "GEMM, convolution");
  }
  if (const double f = factor_of(classes, {"attention"}); f > 0 || peak_change > 1) {
    // Attention's curves are relative to the GEMM peak, which the default curve's excess moved.
    const double g = (f > 0 ? f : 1) / peak_change;
    bool limited = false;
    for (auto& a : d.attention_efficiency)
      for (auto* curve : {&a.forward, &a.backward})
        for (auto& [size, e] : curve->points) {
          e *= g;
          if (e > 1) e = 1, limited = true;
        }
    if (!d.attention_efficiency.empty()) {
      note(d.sources, "attention_efficiency",
           sentence(g, "attention", what) + (peak_change > 1 ? " and the GEMM peak's change" : "") + (limited ? ", limited to an efficiency of 1" : ""));
      changed("attention_efficiency", g, "attention");
    }
  }
  if (const double f = factor_of(classes, {"elementwise"}); f > 0) {
    const double top = scale_curve(d.memory_efficiency, f);
    d.memory_bandwidth_bytes_per_s *= top;
    note(d.sources, "memory_efficiency", sentence(f, "elementwise", what));
    changed("memory_efficiency", f, "elementwise");
  }
  if (const double f = factor_of(classes, {"softmax"}); f > 0 && d.softmax_flops_per_s > 0) {
    d.softmax_flops_per_s *= f;
    note(d.sources, "softmax_flops_per_s", sentence(f, "softmax", what));
    changed("softmax_flops_per_s", f, "softmax");
  }
  if (const double f = factor_of(classes, {"optimizer"}); f > 0 && d.optimizer_flops_per_s > 0) {
    d.optimizer_flops_per_s *= f;
    note(d.sources, "optimizer_flops_per_s", sentence(f, "optimizer", what));
    changed("optimizer_flops_per_s", f, "optimizer");
  }
  if (const double f = factor_of(classes, {"optimizer"}); f > 0 && d.optimizer_bytes_per_s > 0) {
    d.optimizer_bytes_per_s *= f;
    note(d.sources, "optimizer_bytes_per_s", sentence(f, "optimizer", what));
    changed("optimizer_bytes_per_s", f, "optimizer");
  }
  if (const double f = factor_of(classes, {}, true); f > 0) {
    for (const auto& name : links) {
      PARASIM_CHECK(r.profile.links.count(name) == 1, "the step's links are the profile's");
      sim::LinkProfile& l = r.profile.links.at(name);
      // The bandwidth term only: a link's per-message latency stays as calibrated.
      l.bandwidth_bytes_per_s *= scale_curve(l.efficiency, f);
      note(l.sources, "efficiency", sentence(f, "collective and pipeline-send", what));
      changed("link " + name + " efficiency", f, "collectives, pipeline sends");
    }
  }
  return r;
}

}  // namespace parasim::calibrate
