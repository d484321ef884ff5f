#pragma once
/// A scenario's data section resolved against its model: the bytes a sample is stored in and
/// decodes to, the times and bandwidths in seconds and bytes (sim/input_pipeline.hpp).
#include "models/graph.hpp"
#include "scenarios/scenario.hpp"
#include "sim/input_pipeline.hpp"
#include "sim/simulate.hpp"
#include "sim/profile.hpp"

namespace parasim::scenarios {

/// Bytes of one sample's decoded input (the model's Input operators, a sample's share: fp32 for
/// images, int64 for tokens) and labels (an int64 class index; for text, Megatron-LM's int64
/// labels and fp32 loss mask per token: megatron/core/datasets/gpt_dataset.py).
[[nodiscard]] data::SampleBytes model_sample_bytes(const models::Graph& graph);

/// The input pipeline of scenario `s` (which has "data"), for its model's `graph`. A decode time
/// the section leaves out comes from `profile`'s loader for the format (`parasim calibrate --backend
/// loader`); on a cluster of host CPUs the loader threads also copy each tensor, at that loader's
/// measured rate. Precondition: the scenario was loaded (load_scenario checked that a decode time is
/// known).
[[nodiscard]] sim::InputPipeline input_pipeline(const Scenario& s, const models::Graph& graph, const sim::Profile& profile);

/// The step of scenario `s` simulated as `parasim SCENARIO` runs it: with its input pipeline when it
/// has "data" (set into `options`), and then the input verdict (sim/input_verdict.hpp).
[[nodiscard]] sim::Simulation simulate_step(const Scenario& s, const models::Graph& graph, const strategies::Plan& plan, const sim::Cluster& cluster,
                                            const sim::Profile& profile, sim::Backend backend, sim::LowerOptions options = {},
                                            ProgressSink* progress = nullptr);

/// The side of the model's input images (its Input operator's rows); 0 for a model without images.
[[nodiscard]] std::int64_t model_image_size(const models::Graph& graph);

/// The profile's loader for the section's format, if it has one (none for "tokens").
[[nodiscard]] const sim::LoaderProfile* profile_loader(const DataSpec& spec, const sim::Profile& profile);

}  // namespace parasim::scenarios
