// templates: a template-heavy translation unit for the benchmark suite
// (bench/suite.sh), which preprocesses it once and then traces cc1plus
// compiling the .ii: standard containers, algorithms, variants and
// std::function instantiated over several types, the shape of real C++.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

namespace bench {

template <typename Key, typename Value>
struct Table {
  std::map<Key, std::vector<Value>> by_key;
  std::map<Key, std::optional<Value>> latest;
  void add(const Key& k, const Value& v) {
    by_key[k].push_back(v);
    latest[k] = v;
  }
  std::size_t total() const {
    return std::accumulate(by_key.begin(), by_key.end(), std::size_t{0},
                           [](std::size_t n, const auto& kv) { return n + kv.second.size(); });
  }
};

using Cell = std::variant<int, long, double, std::string, std::vector<int>>;

template <typename T>
std::size_t work(const std::vector<T>& input) {
  Table<T, Cell> table;
  std::set<T> seen(input.begin(), input.end());
  std::vector<std::function<Cell(const T&)>> makers = {
      [](const T&) { return Cell{1}; }, [](const T&) { return Cell{2.0}; },
      [](const T&) { return Cell{std::string("x")}; }};
  for (const T& value : seen)
    for (const auto& make : makers) table.add(value, make(value));
  auto sorted = input;
  std::stable_sort(sorted.begin(), sorted.end());
  return table.total() + sorted.size();
}

}  // namespace bench

std::size_t run_all() {
  std::size_t n = bench::work(std::vector<int>{3, 1, 2});
  n += bench::work(std::vector<std::string>{"b", "a"});
  n += bench::work(std::vector<std::pair<int, std::string>>{{1, "a"}});
  n += bench::work(std::vector<std::tuple<int, long, std::string>>{{1, 2, "a"}});
  return n;
}

int main() {
  return static_cast<int>(run_all() % 2);
}
