// site_match_key: how `memtrail diff` matches a site of one trace with a site
// of another, for native and Python stacks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memtrail/diff.hpp"

namespace memtrail {
namespace {

Frame named(const std::string& function) {
  Frame f;
  f.function = function;
  f.module = "/usr/lib/libfoo.so";
  return f;
}

Frame nameless(const std::string& module, std::uint64_t offset) {
  Frame f;
  f.module = module;
  f.offset = offset;
  f.address = 0x400000 + offset;
  return f;
}

Frame python(const std::string& function, const std::string& file, std::uint32_t line) {
  Frame f;
  f.function = function;
  f.file = file;
  f.line = line;
  f.module = "python";
  return f;
}

const std::string kInterpreter = "/usr/bin/python3.11";

std::string key(std::vector<Frame> frames) {
  return site_match_key("malloc", FrameList(std::move(frames)));
}

TEST(DiffSiteKey, PythonLineThroughOtherInterpreterInternalsIsOneSite) {
  // marshal.loads three and four levels deep: the same nameless recursion,
  // once more, and another helper offset.
  auto a = key({nameless(kInterpreter, 0x501e92), nameless(kInterpreter, 0x4fb9ce),
                nameless(kInterpreter, 0x4fb9ce), nameless(kInterpreter, 0x4fb9ce),
                named("PyObject_Vectorcall"), python("load", "/w/nested.py", 19),
                python("<module>", "/w/nested.py", 23), named("_PyEval_EvalFrameDefault")});
  auto b = key({nameless(kInterpreter, 0x501e92), nameless(kInterpreter, 0x4fb9ce),
                nameless(kInterpreter, 0x4fb9ce), nameless(kInterpreter, 0x4fb9ce),
                nameless(kInterpreter, 0x4fb9ce), nameless(kInterpreter, 0x58ffa8),
                named("PyObject_Vectorcall"), python("load", "/w/nested.py", 19),
                python("<module>", "/w/nested.py", 23), named("_PyEval_EvalFrameDefault")});
  EXPECT_EQ(a, b);
  // libpython's nameless frames too (an embedding program).
  EXPECT_EQ(key({nameless("/usr/lib/libpython3.11.so.1.0", 0x10), python("f", "/w/x.py", 3)}),
            key({nameless("/usr/lib/libpython3.11.so.1.0", 0x20), python("f", "/w/x.py", 3)}));
}

TEST(DiffSiteKey, NamedFramesAndOtherModulesStillTellSitesApart) {
  auto base = key({nameless(kInterpreter, 0x10), named("PyList_New"), python("f", "/w/x.py", 3)});
  EXPECT_NE(base,
            key({nameless(kInterpreter, 0x10), named("PyDict_New"), python("f", "/w/x.py", 3)}));
  // A nameless frame of another library (libtorch without symbols) keeps
  // its offset: only the interpreter's internals are folded.
  EXPECT_NE(key({nameless("/usr/lib/libtorch_cpu.so", 0x10), python("f", "/w/x.py", 3)}),
            key({nameless("/usr/lib/libtorch_cpu.so", 0x20), python("f", "/w/x.py", 3)}));
  // Internals between two Python frames stay a token of their own.
  EXPECT_NE(key({nameless(kInterpreter, 0x10), python("f", "/w/x.py", 3)}),
            key({python("f", "/w/x.py", 3)}));
}

TEST(DiffSiteKey, PythonFramesMatchByFileAndLine) {
  auto at = [](const std::string& file, std::uint32_t line) {
    return key({named("PyByteArray_Resize"), python("<module>", file, line)});
  };
  EXPECT_EQ(at("/w/train.py", 20), at("/w/train.py", 20));
  EXPECT_NE(at("/w/train.py", 20), at("/w/train.py", 21));
  EXPECT_NE(at("/w/train.py", 20), at("/w/model.py", 20));  // every module has a <module>
}

TEST(DiffSiteKey, NativeStacksKeepTheirOffsets) {
  // No Python frame: a nameless frame of the interpreter is keyed by its
  // offset as any other (two unknown functions must not merge).
  EXPECT_NE(key({nameless(kInterpreter, 0x10), named("main")}),
            key({nameless(kInterpreter, 0x20), named("main")}));
  EXPECT_EQ(key({nameless("/a/libfoo.so", 0x10)}), key({nameless("/b/libfoo.so", 0x10)}));
}

}  // namespace
}  // namespace memtrail
