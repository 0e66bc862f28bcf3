// ALLOY_IB_HCA in NCCL_IB_HCA's syntax: prefix and exact names, "^" exclusion, ports, and the exact
// message of every kind of malformed value.
#include <gtest/gtest.h>

#include <string>

#include "error.h"
#include "hca_filter.h"

namespace {

using alloy::verbs::HcaFilter;
using alloy::verbs::hcaSelected;
using alloy::verbs::parseHcaFilter;

HcaFilter parsed(const std::string& spec) {
  HcaFilter filter;
  EXPECT_EQ(parseHcaFilter(spec, &filter), alloySuccess) << spec << ": " << alloy::lastError();
  return filter;
}

// The return code and the whole message, and that the output was left alone.
void expectRejected(const std::string& spec, const std::string& message) {
  alloy::clearLastError();
  HcaFilter filter;
  filter.exact = true;
  filter.entries.push_back({"untouched", 3});
  EXPECT_EQ(parseHcaFilter(spec, &filter), alloyInvalidArgument) << spec;
  EXPECT_EQ(std::string(alloy::lastError()), message) << spec;
  EXPECT_FALSE(filter.exclude);
  EXPECT_TRUE(filter.exact);
  ASSERT_EQ(filter.entries.size(), 1u);
  EXPECT_EQ(filter.entries[0].name, "untouched");
}

TEST(HcaFilter, EmptySelectsEverything) {
  for (const char* spec : {"", "   ", "\t"}) {
    const HcaFilter f = parsed(spec);
    EXPECT_FALSE(f.exclude);
    EXPECT_FALSE(f.exact);
    EXPECT_TRUE(f.entries.empty());
    EXPECT_TRUE(hcaSelected(f, "mlx5_0", 1));
    EXPECT_TRUE(hcaSelected(f, "irdma0", 2));
  }
  EXPECT_TRUE(hcaSelected(HcaFilter{}, "mlx5_0", 1));  // a default filter is no filter
}

TEST(HcaFilter, ParsesFlagsNamesAndPorts) {
  const HcaFilter f = parsed("^=mlx5_0:1,mlx5_1");
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.exact);
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(f.entries[0].name, "mlx5_0");
  EXPECT_EQ(f.entries[0].port, 1);
  EXPECT_EQ(f.entries[1].name, "mlx5_1");
  EXPECT_EQ(f.entries[1].port, 0);

  const HcaFilter g = parsed("mlx5_0:255,mlx5_1:007");
  EXPECT_FALSE(g.exclude);
  EXPECT_FALSE(g.exact);
  ASSERT_EQ(g.entries.size(), 2u);
  EXPECT_EQ(g.entries[0].port, 255);
  EXPECT_EQ(g.entries[1].port, 7);  // decimal, not octal
}

TEST(HcaFilter, WhitespaceAroundEntriesIsIgnored) {
  const HcaFilter f = parsed("  ^ mlx5_0 ,\tmlx5_1:2 ");
  EXPECT_TRUE(f.exclude);
  EXPECT_FALSE(f.exact);
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(f.entries[0].name, "mlx5_0");
  EXPECT_EQ(f.entries[0].port, 0);
  EXPECT_EQ(f.entries[1].name, "mlx5_1");
  EXPECT_EQ(f.entries[1].port, 2);
}

TEST(HcaFilter, NamesArePrefixesUnlessExact) {
  const HcaFilter prefix = parsed("mlx5");
  EXPECT_TRUE(hcaSelected(prefix, "mlx5_0", 1));
  EXPECT_TRUE(hcaSelected(prefix, "mlx5_1", 2));
  EXPECT_TRUE(hcaSelected(prefix, "mlx5", 1));
  EXPECT_FALSE(hcaSelected(prefix, "mlx4_0", 1));
  EXPECT_FALSE(hcaSelected(prefix, "mlx", 1));  // shorter than the entry
  EXPECT_FALSE(hcaSelected(prefix, "xmlx5_0", 1));

  const HcaFilter one = parsed("mlx5_1");
  EXPECT_TRUE(hcaSelected(one, "mlx5_1", 1));
  EXPECT_TRUE(hcaSelected(one, "mlx5_10", 1));  // prefix matching, as NCCL does: "=" avoids it
  EXPECT_FALSE(hcaSelected(one, "mlx5_0", 1));

  const HcaFilter exact = parsed("=mlx5_1");
  EXPECT_TRUE(hcaSelected(exact, "mlx5_1", 1));
  EXPECT_FALSE(hcaSelected(exact, "mlx5_10", 1));
  EXPECT_FALSE(hcaSelected(exact, "mlx5_", 1));
  EXPECT_FALSE(hcaSelected(parsed("=mlx5"), "mlx5_0", 1));
}

TEST(HcaFilter, PortsNarrowAnEntry) {
  const HcaFilter f = parsed("mlx5_0:1,mlx5_1");
  EXPECT_TRUE(hcaSelected(f, "mlx5_0", 1));
  EXPECT_FALSE(hcaSelected(f, "mlx5_0", 2));
  EXPECT_TRUE(hcaSelected(f, "mlx5_1", 1));
  EXPECT_TRUE(hcaSelected(f, "mlx5_1", 2));
  EXPECT_FALSE(hcaSelected(f, "mlx4_0", 1));

  const HcaFilter twoPorts = parsed("mlx5_0:1,mlx5_0:2");
  EXPECT_TRUE(hcaSelected(twoPorts, "mlx5_0", 1));
  EXPECT_TRUE(hcaSelected(twoPorts, "mlx5_0", 2));
  EXPECT_FALSE(hcaSelected(twoPorts, "mlx5_0", 3));
}

TEST(HcaFilter, CaretExcludes) {
  const HcaFilter f = parsed("^mlx5_0");
  EXPECT_FALSE(hcaSelected(f, "mlx5_0", 1));
  EXPECT_FALSE(hcaSelected(f, "mlx5_0", 2));
  EXPECT_FALSE(hcaSelected(f, "mlx5_01", 1));  // still a prefix
  EXPECT_TRUE(hcaSelected(f, "mlx5_1", 1));
  EXPECT_TRUE(hcaSelected(f, "mlx4_0", 1));

  const HcaFilter port = parsed("^mlx5_0:2");
  EXPECT_TRUE(hcaSelected(port, "mlx5_0", 1));
  EXPECT_FALSE(hcaSelected(port, "mlx5_0", 2));
  EXPECT_TRUE(hcaSelected(port, "mlx5_1", 2));
}

TEST(HcaFilter, CaretEqualsExcludesExactNames) {
  const HcaFilter f = parsed("^=mlx5_1,mlx5_2:1");
  EXPECT_FALSE(hcaSelected(f, "mlx5_1", 1));
  EXPECT_FALSE(hcaSelected(f, "mlx5_1", 2));
  EXPECT_TRUE(hcaSelected(f, "mlx5_10", 1));  // not a prefix any more
  EXPECT_FALSE(hcaSelected(f, "mlx5_2", 1));
  EXPECT_TRUE(hcaSelected(f, "mlx5_2", 2));
  EXPECT_TRUE(hcaSelected(f, "mlx5_0", 1));
}

TEST(HcaFilter, EmptyEntriesAreRejected) {
  expectRejected("mlx5_0,,mlx5_1",
                 "ALLOY_IB_HCA: entry 2 of \"mlx5_0,,mlx5_1\" is empty; expected name[:port] between commas");
  expectRejected("mlx5_0,", "ALLOY_IB_HCA: entry 2 of \"mlx5_0,\" is empty; expected name[:port] between commas");
  expectRejected(",mlx5_0", "ALLOY_IB_HCA: entry 1 of \",mlx5_0\" is empty; expected name[:port] between commas");
  expectRejected("^mlx5_0, ,mlx5_1",
                 "ALLOY_IB_HCA: entry 2 of \"^mlx5_0, ,mlx5_1\" is empty; expected name[:port] between commas");
  expectRejected("^", "ALLOY_IB_HCA: \"^\" has no entry after '^'; expected name[:port] after it");
  expectRejected("=", "ALLOY_IB_HCA: \"=\" has no entry after '='; expected name[:port] after it");
  expectRejected(" ^= ", "ALLOY_IB_HCA: \"^=\" has no entry after '^='; expected name[:port] after it");
}

TEST(HcaFilter, MalformedEntriesAreRejected) {
  expectRejected(":1", "ALLOY_IB_HCA: entry \":1\" has no device name; expected name[:port]");
  expectRejected("mlx5_0,:1", "ALLOY_IB_HCA: entry \":1\" has no device name; expected name[:port]");
  expectRejected("mlx5_0:1:2", "ALLOY_IB_HCA: entry \"mlx5_0:1:2\" has more than one ':'; expected name[:port]");
  expectRejected("mlx5_0::1", "ALLOY_IB_HCA: entry \"mlx5_0::1\" has more than one ':'; expected name[:port]");
  expectRejected("mlx5 0", "ALLOY_IB_HCA: entry \"mlx5 0\" contains whitespace; expected name[:port]");
  expectRejected("mlx5_0: 1", "ALLOY_IB_HCA: entry \"mlx5_0: 1\" contains whitespace; expected name[:port]");
  expectRejected("=^mlx5",
                 "ALLOY_IB_HCA: entry \"^mlx5\" contains '^' or '='; expected them only at the start of the value, "
                 "'^' before '='");
  expectRejected("mlx5_0,^mlx5_1",
                 "ALLOY_IB_HCA: entry \"^mlx5_1\" contains '^' or '='; expected them only at the start of the value, "
                 "'^' before '='");
}

TEST(HcaFilter, BadPortsAreRejected) {
  const std::string expected = "; expected name[:port] with a port number from 1 to 255";
  expectRejected("mlx5_0:x", "ALLOY_IB_HCA: entry \"mlx5_0:x\" has port \"x\"" + expected);
  expectRejected("mlx5_0:0", "ALLOY_IB_HCA: entry \"mlx5_0:0\" has port \"0\"" + expected);
  expectRejected("mlx5_0:", "ALLOY_IB_HCA: entry \"mlx5_0:\" has port \"\"" + expected);
  expectRejected("mlx5_0:256", "ALLOY_IB_HCA: entry \"mlx5_0:256\" has port \"256\"" + expected);
  expectRejected("mlx5_0:-1", "ALLOY_IB_HCA: entry \"mlx5_0:-1\" has port \"-1\"" + expected);
  expectRejected("mlx5_0:+1", "ALLOY_IB_HCA: entry \"mlx5_0:+1\" has port \"+1\"" + expected);
  expectRejected("mlx5_0:0x1", "ALLOY_IB_HCA: entry \"mlx5_0:0x1\" has port \"0x1\"" + expected);
  expectRejected("mlx5_0:99999999999", "ALLOY_IB_HCA: entry \"mlx5_0:99999999999\" has port \"99999999999\"" + expected);
  expectRejected("mlx5_0:1,mlx5_1:1a", "ALLOY_IB_HCA: entry \"mlx5_1:1a\" has port \"1a\"" + expected);
}

}  // namespace
