// SPDX-License-Identifier: Apache-2.0
// The one spelling of module paths (kforge/module_path.h) that the engine, the CLI and the UI share.
#include <kforge/module_path.h>

#include <gtest/gtest.h>

using namespace kforge::module_path;

TEST(ModulePath, ParentAndLeafOfNestedTopLevelAndRoot)
{
    EXPECT_EQ(parentOf("encoder.layers.0"), "encoder.layers");
    EXPECT_EQ(leafOf("encoder.layers.0"), "0");
    EXPECT_EQ(parentOf("encoder"), "");
    EXPECT_EQ(leafOf("encoder"), "encoder");
    EXPECT_EQ(parentOf(""), "");
    EXPECT_EQ(leafOf(""), "");
}

TEST(ModulePath, DepthCountsTheRootAsZero)
{
    EXPECT_EQ(depthOf(""), 0);
    EXPECT_EQ(depthOf("a"), 1);
    EXPECT_EQ(depthOf("a.b.c"), 3);
}

TEST(ModulePath, BelowIsStrictAndRespectsNameBoundaries)
{
    EXPECT_TRUE(isBelow("a.b", "a"));
    EXPECT_TRUE(isBelow("a.b", ""));
    EXPECT_FALSE(isBelow("a", "a"));
    EXPECT_FALSE(isBelow("", ""));
    EXPECT_FALSE(isBelow("ab", "a")) << "a sibling whose name starts like the scope is not inside it";
    EXPECT_FALSE(isBelow("a", "a.b"));
}

TEST(ModulePath, WithinIncludesTheScopeItself)
{
    EXPECT_TRUE(isWithin("a", "a"));
    EXPECT_TRUE(isWithin("a.b.c", "a.b"));
    EXPECT_TRUE(isWithin("", ""));
    EXPECT_TRUE(isWithin("x", "")) << "the root covers every module";
    EXPECT_FALSE(isWithin("", "a"));
    EXPECT_FALSE(isWithin("a.bc", "a.b"));
}

TEST(ModulePath, AncestorsNearestFirstEndingAtTheRoot)
{
    const std::vector<std::string_view> expected{"a.b", "a", ""};
    EXPECT_EQ(ancestorsOf("a.b.c"), expected);
    EXPECT_EQ(ancestorsOf("a"), std::vector<std::string_view>{""});
    EXPECT_TRUE(ancestorsOf("").empty());
}

TEST(ModulePath, TheRootIsShownByName)
{
    EXPECT_EQ(displayName(""), "(root)");
    EXPECT_EQ(displayName("blocks.0"), "blocks.0");
}
