#pragma once
/// "Did you mean" suggestions for misspelt keys, enum strings and names.
#include <string>
#include <string_view>
#include <vector>

namespace parasim {

/// Levenshtein edit distance between two strings (case-sensitive).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a plausible typo (distance ≤ max(2, |word|/3)),
/// else empty. Ties go to the first candidate in the list, so the answer is deterministic.
[[nodiscard]] std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean \"x\"?)" or "" when there is no close candidate.
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

/// Joins candidates as "\"a\", \"b\" or \"c\"" for messages listing what was expected.
[[nodiscard]] std::string quoted_list(const std::vector<std::string>& candidates);

}  // namespace parasim
