#include "json_stream.hpp"

namespace memtrail::detail {

namespace {

constexpr int kIndent = 2;  // dump(2)

void indent(std::ostream& out, int depth) {
  for (int i = 0; i < depth * kIndent; ++i) out.put(' ');
}

// `v` at nesting `depth`: dump(2) indents from column 0, so every line after
// its first is shifted (a raw newline occurs only between tokens: strings
// carry theirs escaped).
void write_dumped(std::ostream& out, const nlohmann::json& v, int depth) {
  std::string text = v.dump(kIndent);
  std::size_t from = 0;
  for (std::size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
    out.write(text.data() + from, static_cast<std::streamsize>(nl + 1 - from));
    indent(out, depth);
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

void write_lazy_array(std::ostream& out, const ElementSource& source, int depth) {
  bool first = true;
  source([&](const nlohmann::json& element) {
    out << (first ? "[\n" : ",\n");
    first = false;
    indent(out, depth + 1);
    write_dumped(out, element, depth + 1);
  });
  if (first) {
    out << "[]";
    return;
  }
  out << '\n';
  indent(out, depth);
  out << ']';
}

void write_value(std::ostream& out, const nlohmann::json& v, int depth, const std::string& path,
                 const LazyArrays& lazy) {
  if (auto it = lazy.find(path); it != lazy.end()) return write_lazy_array(out, it->second, depth);
  if (!v.is_object() || v.empty()) return write_dumped(out, v, depth);
  // An object may hold a lazy array: walk it key by key (in dump's order).
  out << "{\n";
  std::size_t left = v.size();
  for (auto it = v.begin(); it != v.end(); ++it) {
    indent(out, depth + 1);
    out << nlohmann::json(it.key()).dump() << ": ";
    write_value(out, it.value(), depth + 1, path + "/" + it.key(), lazy);
    out << (--left ? ",\n" : "\n");
  }
  indent(out, depth);
  out << '}';
}

}  // namespace

void write_pretty_json(std::ostream& out, const nlohmann::json& doc, const LazyArrays& lazy) {
  write_value(out, doc, 0, "", lazy);
}

}  // namespace memtrail::detail
