// A root word that still holds its module file's value is a link-time
// constant, not a pointer (image_constants.hpp): a file and a page-aligned
// copy of it in memory stand for a module's data segment and its file.
#include "image_constants.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "reachability.hpp"

namespace memtrail::preload {
namespace {

using u64 = std::uint64_t;
constexpr std::size_t kWords = 1024;  // two pages

struct Image {
  std::string path;
  u64* memory = nullptr;  // the "loaded" segment: the file's words, some changed
  std::vector<u64> file;
  char* block = nullptr;  // a heap block the constants happen to point into

  Image() {
    block = static_cast<char*>(std::malloc(1000));
    file.assign(kWords, 0);
    for (std::size_t i = 0; i < kWords; ++i) file[i] = 0x1000 + i;
    file[5] = reinterpret_cast<u64>(block) + 100;  // a constant inside the block
    file[700] = reinterpret_cast<u64>(block) + 300;
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/image-constants-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    path = name.data();
    EXPECT_EQ(write(fd, file.data(), kWords * 8), static_cast<ssize_t>(kWords * 8));
    close(fd);
    memory = static_cast<u64*>(std::aligned_alloc(4096, kWords * 8));
    std::memcpy(memory, file.data(), kWords * 8);
    memory[10] = reinterpret_cast<u64>(block) + 200;  // stored at run time
  }
  ~Image() {
    unlink(path.c_str());
    std::free(memory);
    std::free(block);
  }
  std::uintptr_t at(std::size_t word) const {
    return reinterpret_cast<std::uintptr_t>(memory + word);
  }
  // The segment as module_roots() describes it; its first 64 bytes identify the file.
  std::vector<ImageSegment> segments(const std::string& file_path) const {
    return {{at(0), kWords * 8, 0, file_path, {{at(0), 0, 64}}}};
  }
};

TEST(ImageConstants, WordsEqualToTheFileAreConstantsOthersAreNot) {
  Image image;
  SelfMemoryReader reader;
  FileImageConstants constants(image.segments(image.path), reader);
  EXPECT_TRUE(constants.holds_file_value(image.at(5), image.memory[5]));
  EXPECT_TRUE(constants.holds_file_value(image.at(700), image.memory[700]));  // second page
  EXPECT_FALSE(constants.holds_file_value(image.at(10), image.memory[10]));
  // Outside the segment's file bytes: no answer but "not a constant".
  EXPECT_FALSE(constants.holds_file_value(image.at(kWords), image.file[5]));
}

TEST(ImageConstants, AnotherFileOrNoFileAnswersNotAConstant) {
  Image image;
  SelfMemoryReader reader;
  FileImageConstants missing(image.segments(image.path + ".gone"), reader);
  errno = EINTR;
  EXPECT_FALSE(missing.holds_file_value(image.at(5), image.memory[5]));
  EXPECT_EQ(errno, EINTR);   // the failed open() is the tracer's, not the program's
  image.memory[1] = 0xdead;  // the identifying bytes differ: another build at that path
  FileImageConstants other(image.segments(image.path), reader);
  EXPECT_FALSE(other.holds_file_value(image.at(5), image.memory[5]));
}

// A constant equal to an address inside a leaked block does not make it
// possibly lost; a word the program stored there does.
TEST(ImageConstants, ClassifierDoesNotFollowConstants) {
  Image image;
  SelfMemoryReader reader;
  std::vector<HeapBlock> blocks = {{.address = reinterpret_cast<u64>(image.block), .size = 1000}};
  std::vector<MemoryRange> constant_root = {{image.at(5), image.at(6)}};
  std::vector<MemoryRange> stored_root = {{image.at(10), image.at(11)}};

  EXPECT_EQ(classify_blocks(blocks, constant_root, reader)[0], LeakClass::possible);
  FileImageConstants constants(image.segments(image.path), reader);
  EXPECT_EQ(classify_blocks(blocks, constant_root, reader, {.image_constants = &constants})[0],
            LeakClass::direct);
  EXPECT_EQ(classify_blocks(blocks, stored_root, reader, {.image_constants = &constants})[0],
            LeakClass::possible);
}

}  // namespace
}  // namespace memtrail::preload
