// Gradient buckets (sim/work/work.hpp, gradient_buckets): a bucket leaves once it holds the bucket
// size, and the last bucket of each set of reduction axes as soon as the last gradient of that set
// is complete — not at the end of the backward pass — as PyTorch DDP's and Megatron-LM's buckets
// are ready once all their gradients are.
#include <catch2/catch.hpp>

#include "sim/work/work.hpp"
#include "strategies/plan.hpp"

using namespace parasim;
using sim::AxisSet;

namespace {

sim::WorkItem item_with(std::vector<sim::GradReady> grads) {
  sim::WorkItem it;
  it.grads = std::move(grads);
  return it;
}

}  // namespace

TEST_CASE("gradient buckets: full buckets leave where they fill, each axis set's last where its last gradient completes",
          "[lower][buckets]") {
  strategies::Plan plan;
  plan.grad_bucket_bytes = 100;
  plan.overlap_grad_reduce = true;
  const AxisSet both{1, 2}, data{1};
  // Backward items, in order: 60 B over both axes; 60 B over both (the bucket reaches 120 ≥ 100 and
  // leaves); 30 B over the data axis alone (its only gradient: its bucket leaves at once, 30 < 100);
  // 50 B over both (the last of that set: leaves with 50); then two items with no gradient.
  sim::Program backward;
  backward.items = {item_with({{both, 60}}), item_with({{both, 60}}), item_with({{data, 30}}), item_with({{both, 50}}), item_with({}),
                    item_with({})};
  const sim::GradientBuckets b = sim::gradient_buckets(backward, plan);
  REQUIRE(b.after.size() == 6);
  CHECK(b.after[0].empty());
  CHECK(b.after[1] == std::vector<std::pair<AxisSet, double>>{{both, 120}});
  CHECK(b.after[2] == std::vector<std::pair<AxisSet, double>>{{data, 30}});
  CHECK(b.after[3] == std::vector<std::pair<AxisSet, double>>{{both, 50}});
  CHECK(b.after[4].empty());
  CHECK(b.after[5].empty());
  for (const auto& [axes, bytes] : b.rest) CHECK(bytes == 0);

  // Without overlap nothing leaves during the backward pass: every byte waits in `rest`.
  plan.overlap_grad_reduce = false;
  const sim::GradientBuckets held = sim::gradient_buckets(backward, plan);
  for (const auto& after : held.after) CHECK(after.empty());
  CHECK(held.rest.at(both) == 170);
  CHECK(held.rest.at(data) == 30);
}
