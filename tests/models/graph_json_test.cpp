// Graph JSON: writing then reading gives an equal graph; every fault in a file is an InputError that
// names the file, line, column and JSON pointer.
#include <catch2/catch.hpp>

#include <string>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "models/graph_json.hpp"
#include "models/zoo.hpp"

using namespace parasim;
using namespace parasim::models;

namespace {

Graph read(const std::string& text) { return graph_from_json(JsonDocument::parse(text, "g.json")); }

InputError read_error(const std::string& text) {
  try {
    (void)read(text);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError thrown");
  throw;
}

// A valid two-operator graph, one key per line so positions are easy to state. `op1` replaces the
// second operator, `edges` the edge list.
std::string doc(const std::string& op1 =
                    R"({"name": "r", "kind": "activation", "variant": "relu", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": 2}, {"name": "i", "size": 4}], "inputs": [["b", "i"]], "output": ["b", "i"], "flops_per_point": 1})",
                const std::string& edges = R"({"producer": "x", "consumer": "r", "slot": 0})") {
  return "{\n"
         "  \"format\": \"parasim-graph\",\n"
         "  \"version\": 1,\n"
         "  \"name\": \"small\",\n"
         "  \"batch\": 2,\n"
         "  \"layers\": [\"main\"],\n"
         "  \"operators\": [\n"
         "    {\"name\": \"x\", \"kind\": \"input\", \"layer\": \"main\", \"dtype\": \"fp32\", \"dims\": [{\"name\": \"b\", \"size\": 2}, "
         "{\"name\": \"i\", \"size\": 4}], \"output\": [\"b\", \"i\"]},\n"
         "    " + op1 + "\n"
         "  ],\n"
         "  \"edges\": [\n"
         "    " + edges + "\n"
         "  ]\n"
         "}\n";
}

}  // namespace

TEST_CASE("graph json: a written graph reads back equal", "[models][graph_json]") {
  ModelOptions options;
  options.batch = 2;
  const auto [name, seq] = GENERATE(table<const char*, std::int64_t>({
      {"resnet18", 0}, {"wide_resnet50_2", 0}, {"mlp-mnist", 0}, {"gpt2", 64}, {"bert-base-uncased", 64}, {"mixtral-8x7b", 64},
  }));
  CAPTURE(name);
  if (seq > 0) options.seq_len = seq;
  const Graph g = build_named_model(name, options);
  const Graph back = read(to_json_text(g));
  CHECK(back == g);
  CHECK(to_json_text(back) == to_json_text(g));
  // Not vacuous: another batch size reads back as a different graph.
  options.batch = 3;
  CHECK_FALSE(read(to_json_text(build_named_model(name, options))) == g);
}

TEST_CASE("graph json: the hand-written example reads with the counts derived by hand", "[models][graph_json]") {
  const Graph g = graph_from_json(JsonDocument::read_file(PARASIM_TEST_DATA_DIR "/models/graphs/tiny-mlp.json"));
  // fc.0: 4·3 + 3; fc.1: 3·2 + 2.
  CHECK(g.param_count() == 23);
  // Per sample 2·4·3 + 3 + 2·3·2 + 5·2 = 49 FLOPs; batch 8.
  CHECK(g.fwd_flops() == 8 * 49.0);
  CHECK(read(to_json_text(g)) == g);
}

TEST_CASE("graph json: faults are located InputErrors", "[models][graph_json]") {
  SECTION("the valid base document reads") { CHECK(read(doc()).op_count() == 2); }
  SECTION("unknown key, with a suggestion") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "activation", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": 2}], "inputs": [["b"]], "output": ["b"], "flops_per_pt": 1})"));
    CHECK(e.json_pointer() == "/operators/1/flops_per_pt");
    CHECK(e.line() == 9);
    CHECK(e.message() ==
          "unknown key \"flops_per_pt\" (did you mean \"flops_per_point\"?); expected one of \"bwd_flops_factor\", \"dims\", \"dtype\", "
          "\"extent_dims\", \"flops_per_point\", \"gemm_batch\", \"gemm_k\", \"gemm_m\", \"gemm_n\", \"inputs\", \"kind\", \"layer\", "
          "\"model_flops_per_point\", \"name\", \"output\", \"routing\", \"saved_inputs\", \"saved_mask_bytes_per_element\", \"saved_output\", \"variant\" or \"weights\"");
  }
  SECTION("wrong type") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "activation", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": "2"}], "inputs": [["b"]], "output": ["b"]})"));
    CHECK(e.json_pointer() == "/operators/1/dims/0/size");
    CHECK(e.message() == "found string \"2\", expected an integer");
  }
  SECTION("negative size") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "activation", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": -2}], "inputs": [["b"]], "output": ["b"]})"));
    CHECK(std::string(e.what()) == "g.json:9:106: at /operators/1/dims/0/size: found integer -2, expected an integer >= 1");
  }
  SECTION("unknown kind and dtype") {
    const auto kind = read_error(doc(R"({"name": "r", "kind": "lienar", "layer": "main", "dtype": "fp32", "dims": [], "output": []})"));
    CHECK(kind.json_pointer() == "/operators/1/kind");
    CHECK_THAT(kind.message(), Catch::Matchers::EndsWith("(did you mean \"linear\"?)"));
    const auto dtype = read_error(doc(R"({"name": "r", "kind": "linear", "layer": "main", "dtype": "fp15", "dims": [], "output": []})"));
    CHECK(dtype.json_pointer() == "/operators/1/dtype");
    CHECK(dtype.message() ==
          "found \"fp15\", expected one of \"fp32\", \"tf32\", \"fp16\", \"bf16\", \"fp8\", \"int32\", \"int64\" or \"uint8\" (did you mean "
          "\"fp16\"?)");
  }
  SECTION("an edge naming a missing operator") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "activation", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": 2}, {"name": "i", "size": 4}], "inputs": [["b", "i"]], "output": ["b", "i"]})",
                                  R"({"producer": "q", "consumer": "r"})"));
    CHECK(std::string(e.what()) == "g.json:12:18: at /edges/0/producer: no operator named \"q\" in /operators (did you mean \"x\"?)");
  }
  SECTION("a dangling input") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "add", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": 2}, {"name": "i", "size": 4}], "inputs": [["b", "i"], ["b", "i"]], "output": ["b", "i"]})"));
    CHECK(e.json_pointer() == "/operators/1/inputs/1");
    CHECK(e.message() == "operator \"r\": input slot 1 is fed by no tensor (a dangling input)");
  }
  SECTION("a cycle") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "add", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": 2}, {"name": "i", "size": 4}], "inputs": [["b", "i"], ["b", "i"]], "output": ["b", "i"]})",
                                  R"({"producer": "x", "consumer": "r"}, {"producer": "r", "consumer": "r", "slot": 1})"));
    CHECK(e.json_pointer() == "/edges/1");
    CHECK(e.message() == "the graph has a cycle: \"r\" -> \"r\"; operators must form a directed acyclic graph");
  }
  SECTION("mismatched dims between producer and consumer") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "activation", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": 2}, {"name": "i", "size": 5}], "inputs": [["b", "i"]], "output": ["b", "i"]})"));
    CHECK(std::string(e.what()) ==
          "g.json:12:5: at /edges/0: the tensor from \"x\" to operator \"r\" has size 4 in position 1 at the producer but 5 at the consumer");
  }
  SECTION("a tensor naming a dim its operator lacks") {
    const auto e = read_error(doc(R"({"name": "r", "kind": "activation", "layer": "main", "dtype": "fp32", "dims": [{"name": "b", "size": 2}, {"name": "i", "size": 4}], "inputs": [["b", "j"]], "output": ["b", "i"]})"));
    CHECK(e.json_pointer() == "/operators/1/inputs/0");
    CHECK(e.message() == "operator \"r\": input 0 names dim \"j\", which is not among the operator's dims");
  }
}

TEST_CASE("graph json: malformed documents never crash", "[models][graph_json]") {
  const std::string text = GENERATE(as<std::string>{}, "", "null", "[]", "{}", "{\"format\": 3}", "[[[[[[[[[[[[]]]]]]]]]]]]",
                                    R"({"format": "parasim-graph", "version": 2})",
                                    R"({"format": "parasim-graph", "version": 1, "name": "n", "batch": 1, "layers": {}, "operators": [], "edges": []})",
                                    R"({"format": "parasim-graph", "version": 1, "name": "n", "batch": 1e300, "layers": [], "operators": [], "edges": []})",
                                    R"({"format": "parasim-graph", "version": 1, "name": "n", "batch": 1, "layers": ["a", "a"], "operators": [], "edges": []})",
                                    R"({"format": "parasim-graph", "version": 1, "name": "n", "batch": 1, "layers": [], "operators": [7], "edges": []})");
  CAPTURE(text);
  CHECK_THROWS_AS(read(text), InputError);
}
