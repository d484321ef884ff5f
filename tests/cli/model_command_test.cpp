// `parasim model`, run as a user runs it: the real binary, its exit code, stdout and stderr.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli/run_parasim.hpp"

namespace {

using parasim::testing::run_parasim;
using parasim::testing::Run;
using parasim::testing::slurp;

const std::string kData = PARASIM_TEST_DATA_DIR "/models";

}  // namespace

TEST_CASE("parasim model: the table", "[cli][model]") {
  const Run r = run_parasim("model resnet50");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // torchvision: 25,557,032 parameters.
  CHECK_THAT(r.out, Catch::Matchers::Contains("parameters         25,557,032\n"));
  CHECK_THAT(r.out, Catch::Matchers::StartsWith("model              resnet50 (preset)\n"));
}

TEST_CASE("parasim model --json parses and carries the counts", "[cli][model]") {
  SECTION("a preset, with the layer breakdown") {
    const Run r = run_parasim("model resnet50 --json --layers --batch 2");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("parameters") == 25'557'032);
    CHECK(j.at("batch") == 2);
    // stem + 3 + 4 + 6 + 3 blocks + head.
    REQUIRE(j.at("layers").size() == 18);
    std::int64_t sum = 0;
    for (const auto& l : j.at("layers")) sum += l.at("parameters").get<std::int64_t>();
    CHECK(sum == 25'557'032);  // no weight is shared between layers
  }
  SECTION("a Hugging Face config") {
    const Run r = run_parasim("model '" + kData + "/hf/llama-2-7b/config.json' --json --seq-len 128");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("source") == "hf-config");
    CHECK(j.at("parameters") == 6'738'415'616);  // Touvron et al. 2023
  }
  SECTION("a graph JSON, with counts derived by hand") {
    const Run r = run_parasim("model '" + kData + "/graphs/tiny-mlp.json' --json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("source") == "graph-json");
    CHECK(j.at("parameters") == 23);               // 4·3 + 3 + 3·2 + 2
    CHECK(j.at("fwd_flops_per_sample") == 49.0);   // 2·4·3 + 3 (ReLU) + 2·3·2 + 5·2 (loss)
    CHECK(j.at("bwd_flops_per_sample") == 61.0);   // 24 (weight gradient only) + 3 + 2·12 + 10
    // fp32: the inputs (4 floats), the ReLU output (3, also fc.1's input), the logits (2).
    CHECK(j.at("saved_activation_bytes_per_sample") == 36.0);
  }
}

TEST_CASE("parasim model --export-graph writes a graph that reads back to the same figures", "[cli][model]") {
  const auto file = std::filesystem::temp_directory_path() / ("parasim-export-" + std::to_string(::getpid()) + ".json");
  const Run a = run_parasim("model mixtral-8x7b --seq-len 64 --json --export-graph '" + file.string() + "'");
  REQUIRE(a.exit_code == 0);
  const Run b = run_parasim("model '" + file.string() + "' --json");
  std::filesystem::remove(file);
  REQUIRE(b.exit_code == 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  CHECK(jb.at("source") == "graph-json");
  ja.erase("source");
  jb.erase("source");
  CHECK(ja == jb);
  // Mixtral-8x7B: 12,879,925,248 parameters per token, 2 of its 8 experts (Mistral AI: "12.9B").
  CHECK(ja.at("active_parameters") == 12'879'925'248);
}

TEST_CASE("parasim model --export-graph keeps latent attention and shared experts (DeepSeek-V2-Lite)", "[cli][model][moe]") {
  const auto file = std::filesystem::temp_directory_path() / ("parasim-export-mla-" + std::to_string(::getpid()) + ".json");
  const std::string config = std::string(PARASIM_TEST_DATA_DIR) + "/models/hf/deepseek-v2-lite/config.json";
  const Run a = run_parasim("model '" + config + "' --seq-len 64 --json --layers --export-graph '" + file.string() + "'");
  REQUIRE(a.exit_code == 0);
  const Run b = run_parasim("model '" + file.string() + "' --json --layers");
  std::filesystem::remove(file);
  REQUIRE(b.exit_code == 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ja.erase("source");
  jb.erase("source");
  CHECK(ja == jb);
  CHECK(ja.at("parameters") == 15'706'484'224);        // the card's 15.7B
  CHECK(ja.at("active_parameters") == 2'661'150'208);  // 2.4B without the input embedding 102400·2048
}

TEST_CASE("parasim model: bad input exits 2 naming the file and the field", "[cli][model]") {
  SECTION("unknown model name") {
    const Run r = run_parasim("model resnet51");
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err ==
          "parasim: error: <command line>: unknown model \"resnet51\" (did you mean \"resnet50\"?); run `parasim model --list` for the "
          "list\n");
  }
  SECTION("a config.json with a missing field") {
    const std::string file = kData + "/bad/llama-missing-hidden-size.json";
    const Run r = run_parasim("model '" + file + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: " + file +
                       ":1:1: at /hidden_size: missing required field \"hidden_size\" (LlamaForCausalLM configs must give it)\n");
  }
  SECTION("a config.json with a negative field") {
    const std::string file = kData + "/bad/llama-negative-layers.json";
    const Run r = run_parasim("model '" + file + "'");
    CHECK(r.exit_code == 2);
    // Line 6 `  "num_hidden_layers": -32,`: the value starts in column 24.
    CHECK(r.err == "parasim: error: " + file + ":6:24: at /num_hidden_layers: found integer -32, expected an integer >= 1\n");
  }
  SECTION("a graph JSON with a cycle") {
    const std::string file = kData + "/bad/graph-cycle.json";
    const Run r = run_parasim("model '" + file + "'");
    CHECK(r.exit_code == 2);
    // The edge r → a (line 14) closes the cycle a → r → a.
    CHECK(r.err == "parasim: error: " + file +
                       ":14:5: at /edges/1: the graph has a cycle: \"a\" -> \"r\" -> \"a\"; operators must form a directed acyclic graph\n");
  }
  SECTION("a graph JSON with a dangling tensor") {
    const std::string file = kData + "/bad/graph-dangling.json";
    const Run r = run_parasim("model '" + file + "'");
    CHECK(r.exit_code == 2);
    // Operator "a" (line 9) declares two inputs; the second, at column 153, is fed by no edge.
    CHECK(r.err == "parasim: error: " + file +
                       ":9:153: at /operators/1/inputs/1: operator \"a\": input slot 1 is fed by no tensor (a dangling input)\n");
  }
  SECTION("an option a graph JSON does not take") {
    const Run r = run_parasim("model '" + kData + "/graphs/tiny-mlp.json' --batch 4");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: --batch does not apply to a graph JSON (" + kData +
                       "/graphs/tiny-mlp.json): the file fixes every size and dtype\n");
  }
  SECTION("a file that does not exist") {
    const Run r = run_parasim("model /nonexistent/model.json");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: /nonexistent/model.json: cannot open the file for reading\n");
  }
}

TEST_CASE("command-line numbers out of range say what was found and what was expected, as a scenario's fields do", "[cli][validators]") {
  // CLI11's own range checks printed "Value 0 not in range 0.000000 to 1797693…" (the whole double
  // range); parasim's name the kind of number and its bound.
  const std::pair<std::string, std::string> cases[] = {
      {"model gpt2 --seq-len 0", "--seq-len: found 0, expected an integer >= 1"},
      {"model gpt2 --batch abc", "--batch: found \"abc\", expected an integer >= 1"},
      {"model gpt2 --batch 1.5", "--batch: found \"1.5\", expected an integer >= 1"},
      {"execute s.json --steps 0", "--steps: found 0, expected an integer from 1 to 1000"},
      {"execute s.json --threads 2000", "--threads: found 2000, expected an integer from 1 to 1024"},
      {"s.json --max-memory 0", "--max-memory: found 0, expected a number > 0"},
      {"s.json --trace-devices -1", "--trace-devices: found -1, expected an integer >= 0"},
      {"search s.json --top 0", "--top: found 0, expected an integer >= 1"},
      {"--timeout -1 s.json", "--timeout: found -1, expected a number >= 0"},
      {"--timeout inf s.json", "--timeout: found \"inf\", expected a number >= 0"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const Run r = run_parasim(args);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "parasim: error: <command line>: " + message + "\n");
  }
}

TEST_CASE("parasim model --plan SCENARIO --shardings: every operator's sharding and the collectives where layouts meet", "[cli][model]") {
  const std::string example = std::string(PARASIM_SOURCE_DIR) + "/scenarios/examples/gpt3-1.3b-gspmd-8-a100.json";
  const Run r = run_parasim("model --plan '" + example + "' --shardings");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  using Catch::Matchers::Contains;
  // fc1 is column parallel by its annotation; its batch came from the data axis through propagation.
  CHECK_THAT(r.out, Contains("layers.0.mlp.fc1 (linear)\n  dims      b:data  s  h  f:model\n"));
  CHECK_THAT(r.out, Contains("    f  annotation /plan/shardings/4\n"));
  CHECK_THAT(r.out, Contains("  output    [b:data, s, n] partial over model\n"));
  // GPT-3 1.3B has 24 layers. Forward: each layer's attention output (o_proj) and MLP output (fc2)
  // are partial sums over model, and so is the vocabulary-parallel embedding: 24 × 2 + 1 = 49
  // all-reduces. Backward: each layer's Q/K/V input gradient (one layout, summed once) and fc1 input
  // gradient, and the LM head's input gradient: 24 × 2 + 1 = 49. Megatron-LM's count (Shoeybi et al.
  // 2019, §3: two all-reduces per layer in each pass).
  CHECK_THAT(r.out, Contains("  forward:  49 × all-reduce over model\n  backward: 49 × all-reduce over model\n"));

  const Run j = run_parasim("model --plan '" + example + "' --shardings --json");
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["annotated"] == true);
  CHECK(doc["mesh"].size() == 3);  // pp, data, model

  const Run bad = run_parasim("model gpt2 --shardings");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Contains("--shardings and --plan SCENARIO.json go together"));
}
