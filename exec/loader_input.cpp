#include "exec/loader_input.hpp"

#include <algorithm>

namespace parasim::exec {

data::LoaderOptions LoaderInput::for_device(data::LoaderOptions o, std::int64_t device) {
  o.devices_per_host = 1;
  o.host = device;
  o.on_demand = true;
  return o;
}

LoaderInput::LoaderInput(const std::string& path, const strategies::Plan& plan, std::int64_t device, data::LoaderOptions options)
    : loader_(path, plan, for_device(options, device)),
      device_(static_cast<std::size_t>(device)),
      floats_(static_cast<std::size_t>(std::max<std::int64_t>(1, plan.micro_batch * 3 * options.image_size * options.image_size))) {
  for (std::int64_t k = 0; k < options.prefetch; ++k) loader_.request_and_wait();
}

void LoaderInput::copy(float* to) {
  const std::vector<float>& images = loader_.next().devices[device_].images;
  if (!images.empty()) data::copy_to_device(to, images.data(), std::min(images.size(), floats_));
}

}  // namespace parasim::exec
