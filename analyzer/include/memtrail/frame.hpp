// Symbolized frames and the interned storage the sites of an Analysis share.
//
// A trace with 10^5 distinct stacks usually has only a few hundred distinct
// instruction pointers. Each distinct ip's frames are stored once, in a
// FrameTable owned (shared) by the Analysis; a site's FrameList is the table
// plus 4-byte indices, so memory grows by ~4 bytes per frame per site, not
// by a Frame (three strings) per frame per site. The indices of every site
// are one shared array too (`lists`): a vector per site cost a heap block
// and 24 bytes more each, 2-3 MiB at 10^5 stacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace memtrail {

// One source-level frame. A return address inside inlined code yields several
// Frames for one address: the innermost inlined function first, `inlined`
// set on all but the last (the real, out-of-line function).
struct Frame {
  std::string function;  // demangled; empty when unknown
  std::string file;      // source file; empty when unknown
  std::uint32_t line = 0;
  std::string module;         // path of the ELF file
  std::uint64_t address = 0;  // the recorded instruction pointer
  std::uint64_t offset = 0;   // address relative to the module's load address
  bool inlined = false;
  // "function at file:line" or "module+0xoffset" when nothing better is known.
  std::string describe() const;
};

// Every distinct frame, once. The frames of one recorded ip (innermost
// inlined first) are the run [first, first + count) of `frames`.
struct FrameTable {
  struct Run {
    std::uint32_t first = 0, count = 0;
  };
  std::vector<Frame> frames;
  std::unordered_map<std::uint64_t, Run> by_ip;  // recorded ip -> its frames
  // The frame indices of every FrameList over this table, each a run of it.
  std::vector<std::uint32_t> lists;

  // The run of `ip`, or null when it was not interned yet.
  const Run* find(std::uint64_t ip) const;
  // Stores `ip_frames` as the frames of `ip` (which must not be interned yet).
  Run intern(std::uint64_t ip, const std::vector<Frame>& ip_frames);
};

// The frames of one stack, innermost first: a read-only view with the parts
// of std::vector's interface that callers use. Copies share the table.
class FrameList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using iterator_concept = std::random_access_iterator_tag;
    using value_type = Frame;
    using difference_type = std::ptrdiff_t;
    using pointer = const Frame*;
    using reference = const Frame&;

    const_iterator() = default;
    const_iterator(const Frame* base, const std::uint32_t* at) : base_(base), at_(at) {}
    reference operator*() const { return base_[*at_]; }
    pointer operator->() const { return &base_[*at_]; }
    reference operator[](difference_type n) const { return base_[at_[n]]; }
    const_iterator& operator++() { return ++at_, *this; }
    const_iterator operator++(int) { return {base_, at_++}; }
    const_iterator& operator--() { return --at_, *this; }
    const_iterator operator--(int) { return {base_, at_--}; }
    const_iterator& operator+=(difference_type n) { return at_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return at_ -= n, *this; }
    friend const_iterator operator+(const_iterator i, difference_type n) { return i += n; }
    friend const_iterator operator+(difference_type n, const_iterator i) { return i += n; }
    friend const_iterator operator-(const_iterator i, difference_type n) { return i -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.at_ - b.at_;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.at_ == b.at_;
    }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
      return a.at_ <=> b.at_;
    }

   private:
    const Frame* base_ = nullptr;
    const std::uint32_t* at_ = nullptr;
  };
  using iterator = const_iterator;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  using value_type = Frame;
  using size_type = std::size_t;

  FrameList() = default;
  // The run [first, first + count) of table->lists.
  FrameList(std::shared_ptr<const FrameTable> table, std::uint32_t first, std::uint32_t count)
      : table_(std::move(table)), first_(first), count_(count) {}
  // A list over a table of its own (a stack no Analysis interned, tests).
  FrameList(std::vector<Frame> frames);  // NOLINT: implicit on purpose
  FrameList(std::initializer_list<Frame> frames) : FrameList(std::vector<Frame>(frames)) {}

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const Frame& operator[](std::size_t i) const { return table_->frames[index()[i]]; }
  const Frame& front() const { return (*this)[0]; }
  const Frame& back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {base(), index()}; }
  const_iterator end() const { return {base(), index() + count_}; }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  std::vector<Frame> to_vector() const { return {begin(), end()}; }
  // The shared table this list indexes, and its indices into table()->frames.
  const FrameTable* table() const { return table_.get(); }
  std::span<const std::uint32_t> indices() const { return {index(), count_}; }

 private:
  const Frame* base() const { return table_ ? table_->frames.data() : nullptr; }
  const std::uint32_t* index() const { return table_ ? table_->lists.data() + first_ : nullptr; }
  std::shared_ptr<const FrameTable> table_;
  std::uint32_t first_ = 0, count_ = 0;
};

}  // namespace memtrail
