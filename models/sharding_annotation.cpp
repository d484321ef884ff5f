#include "models/sharding_annotation.hpp"

namespace parasim::models {

std::string_view to_string(AnnotationTarget t) {
  switch (t) {
    case AnnotationTarget::Weight: return "weight";
    case AnnotationTarget::Output: return "output";
    case AnnotationTarget::Operator: return "operator";
    case AnnotationTarget::Preset: return "preset";
  }
  return "weight";
}

bool name_matches(std::string_view pattern, std::string_view name) {
  // Iterative glob with one backtrack point: the last `*` seen.
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace parasim::models
