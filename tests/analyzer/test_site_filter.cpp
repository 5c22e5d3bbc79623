// SiteFilter: the one rule by which `report --filter-function` and the GUI's
// filter boxes keep sites (a frame of the backtrace holds the text), with
// the two ways they ask it: function names as written, or function, file
// and module in any case.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memtrail/site_filter.hpp"

namespace memtrail {
namespace {

Frame frame(std::string function, std::string file, std::string module) {
  Frame f;
  f.function = std::move(function);
  f.file = std::move(file);
  f.module = std::move(module);
  return f;
}

Site site(std::vector<Frame> frames, std::uint64_t calls = 1) {
  Site s;
  s.frames = FrameList(std::move(frames));
  s.calls = calls;
  return s;
}

// operator new <- LoadTexture (src/Textures.cpp) <- main, in libgame.so.
Site texture_site() {
  return site({frame("operator new(unsigned long)", "", "/usr/lib/libstdc++.so.6"),
               frame("LoadTexture", "/src/game/Textures.cpp", "/opt/game/libgame.so"),
               frame("main", "/src/game/main.cpp", "/opt/game/game")});
}

TEST(HoldsText, ExactOrAsciiCaseFolded) {
  using Case = SiteFilter::Case;
  EXPECT_TRUE(holds_text("LoadTexture", "Texture", Case::exact));
  EXPECT_FALSE(holds_text("LoadTexture", "texture", Case::exact));
  EXPECT_TRUE(holds_text("LoadTexture", "TEXTURE", Case::ignore));
  EXPECT_TRUE(holds_text("LoadTexture", "loadt", Case::ignore));
  EXPECT_FALSE(holds_text("LoadTexture", "Textures", Case::ignore));
  EXPECT_FALSE(holds_text("", "a", Case::ignore));
  EXPECT_TRUE(holds_text("", "", Case::ignore));
  EXPECT_TRUE(holds_text("", "", Case::exact));
  // Digits and punctuation are not letters: compared as they are.
  EXPECT_FALSE(holds_text("a[1]", "A{1}", Case::ignore));
  EXPECT_TRUE(holds_text("x::Y_2", "X::y_2", Case::ignore));
}

TEST(SiteFilter, SearchBoxLooksInFunctionFileAndModuleIgnoringCase) {
  const Site s = texture_site();
  for (const char* text : {"loadtexture", "TEXTURES.CPP", "libGame", "/src/game", "main"})
    EXPECT_TRUE(SiteFilter::search_box(text).matches(s)) << text;
  for (const char* text : {"LoadMesh", "libfoo", "textures.cpp:"})
    EXPECT_FALSE(SiteFilter::search_box(text).matches(s)) << text;
}

TEST(SiteFilter, FunctionNameLooksInFunctionsAsWritten) {
  const Site s = texture_site();
  EXPECT_TRUE(SiteFilter::function_name("LoadTexture").matches(s));
  EXPECT_TRUE(SiteFilter::function_name("Texture").matches(s));
  EXPECT_FALSE(SiteFilter::function_name("loadtexture").matches(s));   // case counts
  EXPECT_FALSE(SiteFilter::function_name("Textures.cpp").matches(s));  // a file, not a function
  EXPECT_FALSE(SiteFilter::function_name("libgame").matches(s));       // a module
}

TEST(SiteFilter, EmptyTextKeepsEverySiteEvenWithoutFrames) {
  EXPECT_TRUE(SiteFilter::search_box("").matches(texture_site()));
  EXPECT_TRUE(SiteFilter::search_box("").matches(site({})));
  EXPECT_FALSE(SiteFilter::search_box("main").matches(site({})));
}

// A call tree's function (the GUI's tree views) by the same rule as a frame.
TEST(SiteFilter, TreeSymbolsMatchAsFramesDo) {
  TreeSymbol s;
  s.name = "LoadTexture";
  s.file = "/src/game/Textures.cpp";
  s.module = "/opt/game/libgame.so";
  EXPECT_TRUE(SiteFilter::search_box("textures.CPP").matches(s));
  EXPECT_TRUE(SiteFilter::search_box("LIBGAME").matches(s));
  EXPECT_FALSE(SiteFilter::search_box("Mesh").matches(s));
  EXPECT_TRUE(SiteFilter::function_name("Texture").matches(s));
  EXPECT_FALSE(SiteFilter::function_name("libgame").matches(s));
  EXPECT_TRUE(SiteFilter::search_box("").matches(TreeSymbol{}));
  EXPECT_FALSE(SiteFilter::search_box("x").matches(TreeSymbol{}));
}

// `report --filter-function` keeps exactly the sites the rule matches, in
// their order, and recounts the summary from them.
TEST(SiteFilter, KeepSitesWithFunctionKeepsWhatTheRuleMatches) {
  Analysis a;
  a.sites.push_back(texture_site());
  a.sites.push_back(site({frame("LoadMesh", "/src/game/Mesh.cpp", "/opt/game/libgame.so")}, 2));
  a.sites.push_back(site({frame("ReloadTextures", "", "")}, 4));
  a.sites.push_back(site({}, 8));
  const SiteFilter rule = SiteFilter::function_name("Texture");
  std::vector<bool> want;
  for (const Site& s : a.sites) want.push_back(rule.matches(s));
  EXPECT_EQ(want, (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(keep_sites_with_function(a, "Texture"), 2u);
  ASSERT_EQ(a.sites.size(), 2u);
  EXPECT_EQ(a.sites[0].frames[1].function, "LoadTexture");
  EXPECT_EQ(a.sites[1].frames[0].function, "ReloadTextures");
  EXPECT_EQ(a.summary.allocations, 5u);
}

}  // namespace
}  // namespace memtrail
