// Graph::check(): each structural problem, and where it says the problem lies.
#include <catch2/catch.hpp>

#include "models/graph.hpp"
#include "models/ops.hpp"

using namespace parasim::models;

namespace {
// x → a (slot 0), r → a (slot 1), a → r: input, add and ReLU over [b=2, i=4], fp32.
struct Small {
  Graph g{"small"};
  OpId x, a, r;
  Small() {
    g.add_layer("main");
    const std::vector<Dim> dims{ops::dim("b", 2), ops::dim("i", 4)};
    x = g.add_op(ops::make("x", OpKind::Input, dims, {}, {"b", "i"}, DType::F32));
    a = g.add_op(ops::make("a", OpKind::Add, dims, {{"b", "i"}, {"b", "i"}}, {"b", "i"}, DType::F32));
    r = g.add_op(ops::make("r", OpKind::Activation, dims, {{"b", "i"}}, {"b", "i"}, DType::F32));
    g.connect(x, a, 0);
    g.connect(a, r, 0);
  }
};
}  // namespace

TEST_CASE("graph: check() locates each problem", "[models][graph]") {
  Small s;
  SECTION("a dangling input names the operator and the slot") {
    const auto p = s.g.check();
    REQUIRE(p);
    CHECK(p->message == "operator \"a\": input slot 1 is fed by no tensor (a dangling input)");
    CHECK(p->op == s.a);
    CHECK(p->op_field == "inputs/1");
  }
  SECTION("a cycle is listed and located at the edge that closes it") {
    s.g.connect(s.r, s.a, 1);
    const auto p = s.g.check();
    REQUIRE(p);
    CHECK(p->message == "the graph has a cycle: \"a\" -> \"r\" -> \"a\"; operators must form a directed acyclic graph");
    CHECK(p->edge == std::tuple<OpId, OpId, int>{s.r, s.a, 1});
  }
  SECTION("a slot fed twice") {
    s.g.connect(s.x, s.a, 1);
    s.g.connect(s.x, s.r, 0);
    const auto p = s.g.check();
    REQUIRE(p);
    CHECK(p->message == "operator \"r\": input slot 0 is fed by more than one tensor");
  }
  SECTION("a dtype that changes along an edge") {
    s.g.connect(s.x, s.a, 1);
    Graph g = s.g;
    Operator bad = ops::make("y", OpKind::Activation, {ops::dim("b", 2), ops::dim("i", 4)}, {{"b", "i"}}, {"b", "i"}, DType::F16);
    const OpId y = g.add_op(bad);
    g.connect(s.r, y, 0);
    const auto p = g.check();
    REQUIRE(p);
    CHECK(p->message == "the tensor from \"r\" to operator \"y\" is fp32 at the producer but fp16 at the consumer");
    CHECK(p->edge == std::tuple<OpId, OpId, int>{s.r, y, 0});
  }
  SECTION("a weight shared with two shapes") {
    s.g.connect(s.x, s.a, 1);
    Graph g = s.g;
    const OpId f = g.add_op(ops::linear("f", {ops::dim("b", 2)}, {ops::dim("i", 4)}, {ops::dim("o", 3)}, false, DType::F32, "w"));
    const OpId h = g.add_op(ops::linear("h", {ops::dim("b", 2)}, {ops::dim("i", 4)}, {ops::dim("o", 5)}, false, DType::F32, "w"));
    g.connect(s.x, f, 0);
    g.connect(s.x, h, 0);
    const auto p = g.check();
    REQUIRE(p);
    CHECK(p->message == "operator \"h\": weight \"w\" has shape [4, 5], but operator \"f\" uses it with shape [4, 3]");
    CHECK(p->op_field == "weights/0");
  }
  SECTION("a valid graph has no problem") {
    s.g.connect(s.x, s.a, 1);
    CHECK(s.g.check() == std::nullopt);
    CHECK(s.g.topological_order() == std::vector<OpId>{s.x, s.a, s.r});
  }
}

TEST_CASE("graph: extent dims size tensors but not the iteration space", "[models][graph]") {
  // A 3×3 max pool, stride 2, over a 5×5 map: loops b, oh, ow, kh, kw = 1·2·2·3·3 = 36 points; the
  // input is the 5×5 map named by the extent dims ih, iw.
  Operator pool = ops::make("pool", OpKind::Pool,
                            {ops::dim("b", 1), ops::dim("oh", 2), ops::dim("ow", 2), ops::dim("kh", 3, false), ops::dim("kw", 3, false)},
                            {{"b", "ih", "iw"}}, {"b", "oh", "ow"}, DType::F32);
  pool.extent_dims = {ops::dim("ih", 5, false), ops::dim("iw", 5, false)};
  CHECK(pool.points() == 36);
  CHECK(pool.fwd_bytes_read() == 25 * 4);
  CHECK(pool.dim_size("ih") == 5);
}
