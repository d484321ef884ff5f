// Located JSON: every value's line and column, syntax errors, duplicate keys, nesting limits, and the
// typed reader's messages (exact text, pointer included).
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "common/did_you_mean.hpp"
#include "common/json_document.hpp"
#include "common/json_reader.hpp"

using parasim::InputError;
using parasim::JsonDocument;
using parasim::ObjectReader;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("JSON documents locate every value and key", "[common]") {
  // Line 1 is "{", line 2 holds "a" at column 3 and its object value at column 8; "b" on line 3.
  const auto doc = JsonDocument::parse("{\n  \"a\": {\"x\": [10, 20]},\n  \"b\": \"s/t\"\n}", "f.json");
  CHECK(doc.locate("/a").line == 2);
  CHECK(doc.locate("/a").column == 8);
  CHECK(doc.locate_key("/a").column == 3);
  // "x" opens at column 9; its array at 14; element 1 (20) at column 19.
  CHECK(doc.locate("/a/x/1").line == 2);
  CHECK(doc.locate("/a/x/1").column == 19);
  CHECK(doc.locate("/b").line == 3);
  // A missing pointer falls back to its nearest existing ancestor.
  CHECK(doc.locate("/a/x/7").column == 14);
}

TEST_CASE("JSON syntax errors, duplicate keys and deep nesting are located input errors", "[common]") {
  SECTION("syntax") {
    // The fault is the second ':' on line 2, column 8.
    CHECK(error_of([] { (void)JsonDocument::parse("{\n  \"a\": : 1}", "bad.json"); }).rfind("bad.json:2:8: malformed JSON: syntax error", 0) == 0);
  }
  SECTION("duplicate key") {
    CHECK(error_of([] { (void)JsonDocument::parse("{\"a\": 1,\n \"a\": 2}", "dup.json"); }) ==
          "dup.json:2:2: at /a: duplicate key \"a\" in the object that starts at line 1; each key may appear once");
  }
  SECTION("nesting deeper than 512 levels") {
    // 513 opening brackets: the 513th, at column 513, is refused before any parsing.
    const std::string deep = std::string(600, '[') + std::string(600, ']');
    CHECK(error_of([&] { (void)JsonDocument::parse(deep, "deep.json"); }) ==
          "deep.json:1:513: JSON nested deeper than 512 levels; parasim inputs are at most a few levels deep");
    // Brackets inside strings do not count.
    CHECK_NOTHROW(JsonDocument::parse("{\"s\": \"" + std::string(600, '[') + "\"}", "s.json"));
  }
}

TEST_CASE("the object reader says what it found and what it expected", "[common]") {
  // Columns (1-based, one line): "8" opens at 8, -1 at 19, the key "schedul" at 34, 1.5 at 58.
  const auto doc = JsonDocument::parse("{\"tp\": \"8\", \"pp\": -1, \"name\": 3, \"schedul\": \"1f1b\", \"x\": 1.5}", "s.json");
  SECTION("wrong type") {
    ObjectReader r(doc, "");
    CHECK(error_of([&] { (void)r.integer("tp", 1); }) == "s.json:1:8: at /tp: found string \"8\", expected an integer");
  }
  SECTION("out of range") {
    ObjectReader r(doc, "");
    CHECK(error_of([&] { (void)r.integer("pp", 1); }) == "s.json:1:19: at /pp: found integer -1, expected an integer >= 1");
  }
  SECTION("a fraction is not an integer") {
    ObjectReader r(doc, "");
    CHECK(error_of([&] { (void)r.integer("x", 0); }) == "s.json:1:58: at /x: found number 1.5, expected an integer");
  }
  SECTION("unknown key with did-you-mean") {
    ObjectReader r(doc, "");
    r.accept("tp");
    r.accept("pp");
    r.accept("name");
    r.accept("schedule");
    r.accept("x");
    CHECK(error_of([&] { r.finish(); }) ==
          "s.json:1:34: at /schedul: unknown key \"schedul\" (did you mean \"schedule\"?); expected one of \"name\", \"pp\", \"schedule\", \"tp\" or \"x\"");
  }
  SECTION("missing key") {
    ObjectReader r(doc, "");
    CHECK(error_of([&] { (void)r.string("model"); }) == "s.json:1:1: at /: missing required key \"model\"");
  }
}

TEST_CASE("did-you-mean picks a close candidate or none", "[common]") {
  // "1fb1" → "1f1b": two substitutions, within max(2, 4/3).
  CHECK(parasim::closest_match("1fb1", {"gpipe", "1f1b", "interleaved-1f1b"}) == "1f1b");
  CHECK(parasim::closest_match("zzzzzz", {"gpipe", "1f1b"}).empty());
  // kitten → sitting: the classic Levenshtein example, distance 3.
  CHECK(parasim::edit_distance("kitten", "sitting") == 3);
  CHECK(parasim::quoted_list({"a", "b", "c"}) == "\"a\", \"b\" or \"c\"");
}
