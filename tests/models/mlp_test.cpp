// The seed's MNIST MLP (JAX example): 784-512-512-10, ReLU, log-softmax loss.
#include <catch2/catch.hpp>

#include "models/mlp.hpp"
#include "models/zoo.hpp"

using namespace parasim::models;

TEST_CASE("mlp: mlp-mnist counts, by hand", "[models][mlp]") {
  ModelOptions options;
  options.batch = 32;
  const Graph g = build_named_model("mlp-mnist", options);
  REQUIRE_FALSE(g.validate());
  CHECK(g.layers().size() == 3);
  // (784·512 + 512) + (512·512 + 512) + (512·10 + 10) = 401,920 + 262,656 + 5,130.
  CHECK(g.param_count() == 669'706);
  // Per sample: 2·(784·512 + 512·512 + 512·10) = 1,337,344 FLOPs in the linear layers, 2·512 ReLU,
  // 5·10 for the loss.
  CHECK(g.fwd_flops() == 32.0 * (1'337'344 + 1'024 + 50));
  // Backward: the first layer needs no input gradient (1× its 802,816 FLOPs), the others 2×
  // (2·(524,288 + 10,240)), ReLU 1×, loss 1×.
  CHECK(g.bwd_flops() == 32.0 * (802'816 + 2 * 534'528 + 1'024 + 50));
  // Saved per sample in fp32: the inputs (784), both ReLU outputs (512 each, each also the next linear's
  // input), the logits (10): 1,818 floats.
  CHECK(g.saved_activation_bytes() == 32.0 * 4 * 1'818);
}

TEST_CASE("mlp: options set the input from the image and the classes", "[models][mlp]") {
  ModelOptions options;
  options.image_size = 30;
  options.in_channels = 3;
  options.num_classes = 100;
  const Graph g = build_named_model("mlp-mnist", options);
  REQUIRE_FALSE(g.validate());
  // 3·30·30 = 2,700 inputs: (2700·512 + 512) + (512·512 + 512) + (512·100 + 100).
  CHECK(g.param_count() == 1'382'912 + 262'656 + 51'300);
}

TEST_CASE("mlp: validate names the bad size", "[models][mlp]") {
  MlpConfig c;
  c.sizes = {784};
  CHECK(validate(c) == "sizes must list at least two layer sizes (inputs and classes), found 1");
  c.sizes = {784, 0, 10};
  CHECK(validate(c) == "sizes[1] must be between 1 and 16777216, found 0");
}
