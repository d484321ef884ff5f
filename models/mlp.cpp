#include "models/mlp.hpp"

#include "common/error.hpp"
#include "models/ops.hpp"

namespace parasim::models {

std::optional<std::string> validate(const MlpConfig& c) {
  if (c.sizes.size() < 2)
    return "sizes must list at least two layer sizes (inputs and classes), found " + std::to_string(c.sizes.size());
  for (std::size_t i = 0; i < c.sizes.size(); ++i)
    if (c.sizes[i] < 1 || c.sizes[i] > kMaxMlpWidth)
      return "sizes[" + std::to_string(i) + "] must be between 1 and " + std::to_string(kMaxMlpWidth) + ", found " +
             std::to_string(c.sizes[i]);
  if (c.batch < 1 || c.batch > ops::kMaxBatch)
    return "batch must be between 1 and " + std::to_string(ops::kMaxBatch) + ", found " + std::to_string(c.batch);
  return std::nullopt;
}

Graph build_mlp(const MlpConfig& c) {
  if (auto problem = validate(c)) PARASIM_CHECK(false, "build_mlp: " + *problem);
  Graph g(c.name);
  g.set_batch(c.batch);
  const Dim b = ops::dim("b", c.batch);
  auto add = [&g](Operator o, std::int32_t layer, std::optional<OpId> input) {
    o.layer = layer;
    const OpId id = g.add_op(std::move(o));
    if (input) g.connect(*input, id, 0);
    return id;
  };

  std::int32_t layer = g.add_layer("fc.0");
  OpId x = add(ops::make("inputs", OpKind::Input, {b, ops::dim("i", c.sizes[0])}, {}, {"b", "i"}, c.dtype), layer, std::nullopt);
  const std::size_t linears = c.sizes.size() - 1;
  for (std::size_t i = 0; i < linears; ++i) {
    const std::string p = "fc." + std::to_string(i);
    if (i > 0) layer = g.add_layer(p);
    const Dim out = ops::dim("o", c.sizes[i + 1]);
    Operator fc = ops::linear(p, {b}, {ops::dim("i", c.sizes[i])}, {out}, true, c.dtype);
    // The inputs need no gradient, so the first layer's backward is its weight gradient alone.
    if (i == 0) fc.bwd_flops_factor = 1;
    x = add(std::move(fc), layer, x);
    if (i + 1 < linears) {
      Operator relu = ops::make(p + ".relu", OpKind::Activation, {b, out}, {{"b", "o"}}, {"b", "o"}, c.dtype);
      relu.variant = "relu";
      relu.flops_per_point = ops::kReluFlops;
      relu.bwd_flops_factor = 1;
      relu.saved_output = true;
      x = add(std::move(relu), layer, x);
    }
  }
  add(ops::loss("loss", {b}, ops::dim("o", c.sizes.back(), false), c.dtype), layer, x);
  return g;
}

}  // namespace parasim::models
