// Symbolized frames and the interned storage the sites of an Analysis share.
//
// A trace with 10^5 distinct stacks usually has only a few hundred distinct
// instruction pointers. Each distinct ip's frames are stored once, in a
// FrameTable owned (shared) by the Analysis; a site's FrameList is the table
// plus 4-byte indices, so memory grows by ~4 bytes per frame per site, not
// by a Frame (three strings) per frame per site.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
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
  FrameList(std::shared_ptr<const FrameTable> table, std::vector<std::uint32_t> index)
      : table_(std::move(table)), index_(std::move(index)) {}
  // A list over a table of its own (a stack no Analysis interned, tests).
  FrameList(std::vector<Frame> frames);  // NOLINT: implicit on purpose
  FrameList(std::initializer_list<Frame> frames) : FrameList(std::vector<Frame>(frames)) {}

  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  const Frame& operator[](std::size_t i) const { return table_->frames[index_[i]]; }
  const Frame& front() const { return (*this)[0]; }
  const Frame& back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {base(), index_.data()}; }
  const_iterator end() const { return {base(), index_.data() + index_.size()}; }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  std::vector<Frame> to_vector() const { return {begin(), end()}; }
  // The shared table and this list's indices into its `frames`.
  const FrameTable* table() const { return table_.get(); }
  const std::vector<std::uint32_t>& indices() const { return index_; }

 private:
  const Frame* base() const { return table_ ? table_->frames.data() : nullptr; }
  std::shared_ptr<const FrameTable> table_;
  std::vector<std::uint32_t> index_;
};

}  // namespace memtrail
