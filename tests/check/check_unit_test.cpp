// The check library's pieces on their own: LSan pattern matching, the
// built-in suppressions' promise not to hide program leaks, suppression
// and policy parsing errors, site keys, JUnit escaping.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "memtrail/check.hpp"

namespace {

using memtrail::Frame;

Frame fn(const std::string& function, const std::string& file = "", std::uint32_t line = 0,
         const std::string& module = "/usr/bin/app") {
  Frame f;
  f.function = function;
  f.file = file;
  f.line = line;
  f.module = module;
  return f;
}

TEST(Wildcard, FollowsLeakSanitizerTemplates) {
  EXPECT_TRUE(memtrail::wildcard_match("foo", "xfoox"));
  EXPECT_FALSE(memtrail::wildcard_match("^foo", "xfoo"));
  EXPECT_TRUE(memtrail::wildcard_match("^foo", "foobar"));
  EXPECT_TRUE(memtrail::wildcard_match("bar$", "foobar"));
  EXPECT_FALSE(memtrail::wildcard_match("foo$", "foobar"));
  EXPECT_TRUE(memtrail::wildcard_match("a*c", "xxabbbcxx"));
  EXPECT_TRUE(memtrail::wildcard_match("^a*c$", "abbbc"));
  EXPECT_FALSE(memtrail::wildcard_match("^a*c$", "abbbcd"));
  EXPECT_TRUE(memtrail::wildcard_match("*", ""));
  EXPECT_TRUE(memtrail::wildcard_match("^*::Parser::*$", "ns::Parser::parse(int)"));
}

TEST(Suppressions, MatchFunctionFileOrModule) {
  memtrail::SuppressionSet set;
  std::string error;
  ASSERT_TRUE(memtrail::parse_suppressions(
      "# c\n\nleak:Parser::\n leak:cache.cpp \nleak:libfoo.so\n", "s.supp", set, &error))
      << error;
  ASSERT_EQ(set.rules.size(), 3u);
  EXPECT_EQ(set.rules[1].pattern, "cache.cpp");
  EXPECT_EQ(set.rules[1].origin, "s.supp:4");
  EXPECT_EQ(set.match({fn("app::Parser::parse()"), fn("main")}), 0);
  EXPECT_EQ(set.match({fn("grow", "/src/cache.cpp", 7)}), 1);
  EXPECT_EQ(set.match({fn("", "", 0, "/opt/lib/libfoo.so.1")}), 2);
  EXPECT_EQ(set.match({fn("other", "/src/other.cpp", 1)}), -1);
}

// A Python frame (docs/python.md): its qualified name as the function, its
// .py file as the source file, module "python".
Frame py(const std::string& function, const std::string& file, std::uint32_t line) {
  return fn(function, file, line, "python");
}

// `fun:` matches the function only, `src:` the source file only, in native
// and Python frames alike; `leak:` any of function, file, module.
TEST(Suppressions, FunAndSrcRulesMatchOneFieldOfNativeAndPythonFrames) {
  memtrail::SuppressionSet set;
  std::string error;
  ASSERT_TRUE(memtrail::parse_suppressions("fun:^keep_native$\nsrc:train.py\nfun:cache.cpp\n",
                                           "p.supp", set, &error))
      << error;
  ASSERT_EQ(set.rules.size(), 3u);
  EXPECT_EQ(set.rules[0].type, memtrail::SuppressionType::fun);
  EXPECT_EQ(set.rules[1].type, memtrail::SuppressionType::src);
  EXPECT_EQ(set.rules[0].text(), "fun:^keep_native$");
  EXPECT_EQ(set.rules[1].text(), "src:train.py");
  const Frame ffi = fn("ffi_call", "", 0, "/lib/libffi.so.8");
  EXPECT_EQ(set.match({ffi, py("keep_native", "/w/native_leak.py", 14)}), 0);
  EXPECT_EQ(set.match({ffi, py("train_step", "/w/samples/train.py", 36)}), 1);
  EXPECT_EQ(set.match({fn("grow", "/src/train.py", 7)}), 1);  // a C file of that name too
  // Each type looks at its own field only.
  EXPECT_EQ(set.match({py("keep_native_more", "keep_native", 1)}), -1);  // fun: not the file
  EXPECT_EQ(set.match({fn("grow", "/src/cache.cpp", 7)}), -1);   // fun:cache.cpp: no function
  EXPECT_EQ(set.match({py("train.py", "/w/other.py", 1)}), -1);  // src:train.py: not a name
  memtrail::SuppressionSet leak;
  ASSERT_TRUE(memtrail::parse_suppressions("leak:native_leak.py\n", "l.supp", leak, &error));
  EXPECT_EQ(leak.match({ffi, py("keep_native", "/w/native_leak.py", 14)}), 0);
  EXPECT_EQ(leak.rules[0].text(), "leak:native_leak.py");
}

TEST(Suppressions, ErrorsNameFileAndLine) {
  memtrail::SuppressionSet set;
  std::string error;
  EXPECT_FALSE(memtrail::parse_suppressions("leak:a\nrace:b\n", "x.supp", set, &error));
  EXPECT_EQ(error,
            "x.supp:2: unknown suppression type 'race' (memtrail understands 'leak:', 'fun:' and "
            "'src:')");
  EXPECT_FALSE(memtrail::parse_suppressions("leak:\n", "x.supp", set, &error));
  EXPECT_EQ(error, "x.supp:1: empty pattern after 'leak:'");
  EXPECT_FALSE(memtrail::parse_suppressions("src: \n", "x.supp", set, &error));
  EXPECT_EQ(error, "x.supp:1: empty pattern after 'src:'");
  EXPECT_FALSE(memtrail::parse_suppressions("obj:libfoo.so\n", "x.supp", set, &error));
  EXPECT_FALSE(memtrail::parse_suppressions("justtext\n", "x.supp", set, &error));
  EXPECT_FALSE(memtrail::load_suppressions("/nonexistent/x.supp", set, &error));
}

TEST(Suppressions, DefaultsNeverHideAProgramLeak) {
  memtrail::SuppressionSet defaults;
  memtrail::add_default_suppressions(defaults);
  // A leak in main, one in a static constructor of a dlopen'ed library, one in a thread.
  std::vector<Frame> in_main = {fn("leak_here()", "/src/a.cpp", 3), fn("main", "/src/a.cpp", 9),
                                fn("__libc_start_call_main"), fn("__libc_start_main@@GLIBC_2.34"),
                                fn("_start")};
  std::vector<Frame> in_ctor = {fn("Registry::Registry()", "/src/r.cpp", 5),
                                fn("call_init"),
                                fn("_dl_init"),
                                fn("dl_open_worker"),
                                fn("_dl_catch_exception"),
                                fn("_dlerror_run"),
                                fn("dlopen@@GLIBC_2.34"),
                                fn("main")};
  std::vector<Frame> in_thread = {fn("worker(void*)"), fn("start_thread"), fn("__clone3")};
  EXPECT_EQ(defaults.match(in_main), -1);
  EXPECT_EQ(defaults.match(in_ctor), -1);
  EXPECT_EQ(defaults.match(in_thread), -1);
  // ...and do cover the runtime's own one-time blocks.
  EXPECT_GE(defaults.match({fn("allocate_dtv"), fn("_dl_allocate_tls"), fn("pthread_create")}), 0);
  EXPECT_GE(defaults.match({fn("_IO_file_doallocate"), fn("_IO_doallocbuf"), fn("main")}), 0);
  EXPECT_GE(defaults.match({fn("_nl_load_locale_from_archive"), fn("setlocale"), fn("main")}), 0);
}

TEST(Baseline, SiteKeyUsesFileNamesNotPathsOrAddresses) {
  Frame unknown;
  unknown.module = "/opt/app/libx.so";
  unknown.offset = 0x1234;
  unknown.address = 0x7f0000001234;
  EXPECT_EQ(memtrail::site_key(
                {fn("f()", "/home/a/src/x.cpp", 3), fn("main", "/home/a/src/m.cpp", 9), unknown}),
            "f() at x.cpp:3 <- main at m.cpp:9 <- libx.so+0x1234");
  EXPECT_EQ(memtrail::site_key({}), "(no stack)");
}

// A baseline of a Python program keeps its keys from run to run: the
// interpreter's nameless frames between two Python frames differ in offsets
// and number (recursion depth, hash seed), so a run of them is one token.
TEST(Baseline, SiteKeyOfAPythonLineIgnoresTheInterpretersInternals) {
  auto internal = [](std::uint64_t offset) {
    Frame f;
    f.module = "/usr/bin/python3.11";
    f.offset = offset;
    return f;
  };
  Frame line = fn("grow at /srv/app/loop.py:20", "/srv/app/loop.py", 20, "python");
  line.function = "grow";
  Frame eval = fn("_PyEval_EvalFrameDefault", "", 0, "/usr/bin/python3.11");
  std::string one = memtrail::site_key({fn("malloc"), internal(0x10), eval, line, internal(0x20)});
  std::string two = memtrail::site_key(
      {fn("malloc"), internal(0x30), internal(0x40), eval, line, internal(0x50), internal(0x60)});
  EXPECT_EQ(one, two);
  EXPECT_EQ(
      one,
      "malloc <- python3.11+? <- _PyEval_EvalFrameDefault <- grow at loop.py:20 <- python3.11+?");
  // Without Python frames the interpreter's offsets stay: a C program that
  // embeds python has no Python line to stand for them.
  EXPECT_NE(memtrail::site_key({fn("malloc"), internal(0x10)}),
            memtrail::site_key({fn("malloc"), internal(0x20)}));
}

TEST(Policy, UnknownKeysAndTypesAreNamed) {
  auto path = std::filesystem::temp_directory_path() /
              ("memtrail-policy-unit-" + std::to_string(getpid()) + ".json");
  auto load = [&](const std::string& text, std::string* error) {
    std::ofstream(path) << text;
    memtrail::CheckConfig config;
    bool ok = memtrail::load_policy(path.string(), config, error);
    return std::make_pair(ok, config);
  };
  std::string error;
  auto [ok, config] = load(R"({"max_leaked": "1 KiB", "max_peak": 4096, "tolerance": 2.5,
                               "baseline": "b.json", "suppression_files": ["/abs.supp"]})",
                           &error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(config.max_leaked_bytes, 1024u);
  EXPECT_EQ(config.max_peak_bytes, 4096u);
  EXPECT_DOUBLE_EQ(config.tolerance_percent, 2.5);
  EXPECT_EQ(config.baseline, (path.parent_path() / "b.json").string());
  EXPECT_EQ(config.suppression_files, std::vector<std::string>{"/abs.supp"});
  EXPECT_FALSE(load(R"({"max_peek": "1 KiB"})", &error).first);
  EXPECT_NE(error.find("unknown key 'max_peek'"), std::string::npos) << error;
  EXPECT_FALSE(load(R"({"max_leaked": "lots"})", &error).first);
  EXPECT_NE(error.find("'max_leaked'"), std::string::npos) << error;
  EXPECT_FALSE(load(R"([1, 2])", &error).first);
  EXPECT_FALSE(load("{nope", &error).first);
  std::filesystem::remove(path);
}

TEST(JUnit, CountsAndEscapes) {
  memtrail::CheckResult r;
  memtrail::CheckItem ok, bad;
  ok.name = "peak-used";
  ok.summary = "fine";
  bad.name = "leaked-bytes";
  bad.passed = false;
  bad.summary = "leaked <3> & \"more\"";
  bad.details = "  #0 f<int>() at a.cpp:1\n";
  r.items = {ok, bad};
  std::string xml = memtrail::to_junit_xml(r, "suite", 0.5);
  EXPECT_NE(xml.find("<testsuites name=\"memtrail\" tests=\"2\" failures=\"1\""),
            std::string::npos);
  EXPECT_NE(xml.find("message=\"leaked &lt;3&gt; &amp; &quot;more&quot;\""), std::string::npos)
      << xml;
  EXPECT_NE(xml.find("f&lt;int&gt;() at a.cpp:1"), std::string::npos);
}

}  // namespace
