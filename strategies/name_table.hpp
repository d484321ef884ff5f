#pragma once
/// Name tables of the strategies' enums: each a constexpr array of (value, name as scenarios write
/// it), read three ways.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parasim::strategies::name_table {

template <class E, std::size_t N>
std::optional<E> lookup(std::string_view s, const std::pair<E, const char*> (&table)[N]) {
  for (const auto& [e, name] : table)
    if (s == name) return e;
  return std::nullopt;
}
template <class E, std::size_t N>
std::string_view name_of(E e, const std::pair<E, const char*> (&table)[N]) {
  for (const auto& [v, name] : table)
    if (v == e) return name;
  return table[0].second;
}
template <class E, std::size_t N>
std::vector<std::string> names(const std::pair<E, const char*> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.second);
  return out;
}

}  // namespace parasim::strategies::name_table
