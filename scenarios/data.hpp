#pragma once
/// A scenario's data section resolved against its model: the bytes a sample is stored in and
/// decodes to, the times and bandwidths in seconds and bytes (sim/input_pipeline.hpp).
#include "models/graph.hpp"
#include "scenarios/scenario.hpp"
#include "sim/input_pipeline.hpp"

namespace parasim::scenarios {

/// Bytes of one sample's decoded input (the model's Input operators, a sample's share: fp32 for
/// images, int64 for tokens) and labels (an int64 class index; for text, Megatron-LM's int64
/// labels and fp32 loss mask per token: megatron/core/datasets/gpt_dataset.py).
[[nodiscard]] data::SampleBytes model_sample_bytes(const models::Graph& graph);

/// Precondition: `spec` was decoded from a valid scenario.
[[nodiscard]] sim::InputPipeline input_pipeline(const DataSpec& spec, const models::Graph& graph);

}  // namespace parasim::scenarios
