// The zoo: names, options and the errors a user sees for a bad name or option.
#include <catch2/catch.hpp>

#include <algorithm>

#include "common/error.hpp"
#include "models/zoo.hpp"

using namespace parasim;
using namespace parasim::models;

namespace {
// The message of the InputError `f` throws (fails the test if it throws none).
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError thrown");
  return {};
}
}  // namespace

TEST_CASE("zoo: names cover every family under their published names", "[models][zoo]") {
  const auto names = model_names();
  for (const char* n : {"gpt3-175b", "llama-2-7b", "mixtral-8x7b", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
                        "wide_resnet50_2", "wide_resnet101_2", "mlp-mnist"})
    CHECK(std::count(names.begin(), names.end(), n) == 1);
  CHECK(resnet_preset("resnet50").has_value());
  CHECK_FALSE(resnet_preset("gpt2").has_value());
  CHECK(mlp_preset("mlp-mnist")->sizes == std::vector<std::int64_t>{784, 512, 512, 10});
}

TEST_CASE("zoo: every CNN and MLP preset builds a valid graph with batch b", "[models][zoo]") {
  for (const auto& name : model_names()) {
    if (transformer_preset(name)) continue;
    CAPTURE(name);
    ModelOptions options;
    options.batch = 3;
    options.dtype = DType::BF16;
    const Graph g = build_named_model(name, options);
    CHECK(g.validate() == std::nullopt);
    CHECK(g.batch() == 3);
    CHECK(g.op(0).dims.front() == Dim{"b", 3, true});
    CHECK(g.op(0).output.dtype == DType::BF16);
  }
}

TEST_CASE("zoo: bad names and options are InputErrors naming the origin", "[models][zoo]") {
  ModelOptions options;
  SECTION("unknown name, with a suggestion") {
    CHECK(input_error([&] { (void)build_named_model("resnet51", options); }) ==
          "<command line>: unknown model \"resnet51\" (did you mean \"resnet50\"?); run `parasim model --list` for the list");
  }
  SECTION("an option of another family") {
    options.seq_len = 128;
    CHECK(input_error([&] { (void)build_named_model("resnet50", options, "scenario.json", "/model/preset"); }) ==
          "scenario.json: at /model/preset: model \"resnet50\": option seq_len does not apply to a CNN (it applies to transformer "
          "presets)");
    options = ModelOptions{};
    options.image_size = 224;
    CHECK(input_error([&] { (void)build_named_model("gpt2", options); }) ==
          "<command line>: model \"gpt2\": option image_size does not apply to a transformer (it applies to CNN and MLP presets)");
  }
  SECTION("out of range") {
    options.image_size = 0;
    CHECK(input_error([&] { (void)build_named_model("wide_resnet50_2", options); }) ==
          "<command line>: model \"wide_resnet50_2\": image_size must be between 1 and 65536, found 0");
    options = ModelOptions{};
    options.batch = 0;
    CHECK(input_error([&] { (void)build_named_model("mlp-mnist", options); }) ==
          "<command line>: model \"mlp-mnist\": batch must be >= 1, found 0");
    options = ModelOptions{};
    options.seq_len = 2048;
    CHECK(input_error([&] { (void)build_named_model("gpt2", options); }) ==
          "<command line>: model \"gpt2\": seq_len (2048) exceeds max_positions (1024)");
  }
}
