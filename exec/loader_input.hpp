#pragma once
/// The real data loader (data/loader.hpp) as a rank's input source in `parasim execute`: the step's
/// load tasks ask the loader's threads for a micro-batch and wait until it is made, its copy tasks
/// take the oldest made into the device's input buffer, as the lowering placed them
/// (sim/input_pipeline.hpp). The loader feeds this rank's device alone (each rank is a process of
/// its own), and starts with the queue's `prefetch` micro-batches made, the steady state the
/// lowering assumes.
#include <cstdint>
#include <string>

#include "data/loader.hpp"
#include "exec/executor.hpp"

namespace parasim::exec {

class LoaderInput final : public InputSource {
 public:
  /// `options`: the scenario's placement, threads and prefetch, the model's image side and the seed;
  /// its host, devices per host and on-demand fields are set here.
  LoaderInput(const std::string& path, const strategies::Plan& plan, std::int64_t device, data::LoaderOptions options);
  void load() override { loader_.request_and_wait(); }
  [[nodiscard]] std::size_t floats() const override { return floats_; }
  void copy(float* to) override;

 private:
  static data::LoaderOptions for_device(data::LoaderOptions o, std::int64_t device);

  data::DataLoader loader_;
  std::size_t device_;
  std::size_t floats_;
};

}  // namespace parasim::exec
