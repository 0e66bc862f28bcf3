// The queue-pair settings read from ALLOY_IB_TIMEOUT, ALLOY_IB_RETRY_CNT, ALLOY_IB_SL and ALLOY_IB_TC
// (defaults, accepted ranges, the default again on a bad value), and the path MTU two ports agree on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "qp_attributes.h"

namespace {

using alloy::verbs::pathMtu;
using alloy::verbs::QpSettings;
using alloy::verbs::readQpSettings;

constexpr const char* kVariables[] = {"ALLOY_IB_TIMEOUT", "ALLOY_IB_RETRY_CNT", "ALLOY_IB_SL", "ALLOY_IB_TC"};

class QpSettingsTest : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* name : kVariables) unsetenv(name);
  }
  static QpSettings read() {
    QpSettings settings{-1, -1, -1, -1, -1};
    EXPECT_EQ(readQpSettings(&settings), alloySuccess);
    return settings;
  }
  // The one field `name` sets, after setting it to value.
  static int readOne(const char* name, const char* value) {
    setenv(name, value, 1);
    const QpSettings s = read();
    unsetenv(name);
    const std::string n = name;
    if (n == "ALLOY_IB_TIMEOUT") return s.timeout;
    if (n == "ALLOY_IB_RETRY_CNT") return s.retryCount;
    if (n == "ALLOY_IB_SL") return s.serviceLevel;
    return s.trafficClass;
  }
};

TEST_F(QpSettingsTest, Defaults) {
  const QpSettings s = read();
  EXPECT_EQ(s.timeout, 20);
  EXPECT_EQ(s.retryCount, 7);
  EXPECT_EQ(s.rnrRetry, 7);
  EXPECT_EQ(s.serviceLevel, 0);
  EXPECT_EQ(s.trafficClass, 0);
}

TEST_F(QpSettingsTest, ReadsEachVariableAfresh) {
  setenv("ALLOY_IB_TIMEOUT", "14", 1);
  setenv("ALLOY_IB_RETRY_CNT", "3", 1);
  setenv("ALLOY_IB_SL", "5", 1);
  setenv("ALLOY_IB_TC", "106", 1);
  QpSettings s = read();
  EXPECT_EQ(s.timeout, 14);
  EXPECT_EQ(s.retryCount, 3);
  EXPECT_EQ(s.rnrRetry, 7);  // not configurable
  EXPECT_EQ(s.serviceLevel, 5);
  EXPECT_EQ(s.trafficClass, 106);
  setenv("ALLOY_IB_TIMEOUT", "22", 1);
  s = read();
  EXPECT_EQ(s.timeout, 22);
}

TEST_F(QpSettingsTest, RangeEndsAreAccepted) {
  EXPECT_EQ(readOne("ALLOY_IB_TIMEOUT", "1"), 1);
  EXPECT_EQ(readOne("ALLOY_IB_TIMEOUT", "31"), 31);
  EXPECT_EQ(readOne("ALLOY_IB_RETRY_CNT", "0"), 0);
  EXPECT_EQ(readOne("ALLOY_IB_RETRY_CNT", "7"), 7);
  EXPECT_EQ(readOne("ALLOY_IB_SL", "15"), 15);
  EXPECT_EQ(readOne("ALLOY_IB_TC", "255"), 255);
}

TEST_F(QpSettingsTest, BadValuesFallBackToTheDefault) {
  EXPECT_EQ(readOne("ALLOY_IB_TIMEOUT", "0"), 20);  // 0 would be an infinite ACK timeout
  EXPECT_EQ(readOne("ALLOY_IB_TIMEOUT", "32"), 20);
  EXPECT_EQ(readOne("ALLOY_IB_TIMEOUT", "fast"), 20);
  EXPECT_EQ(readOne("ALLOY_IB_RETRY_CNT", "8"), 7);
  EXPECT_EQ(readOne("ALLOY_IB_RETRY_CNT", "-1"), 7);
  EXPECT_EQ(readOne("ALLOY_IB_SL", "16"), 0);
  EXPECT_EQ(readOne("ALLOY_IB_SL", "0x3"), 0);
  EXPECT_EQ(readOne("ALLOY_IB_TC", "256"), 0);
  EXPECT_EQ(readOne("ALLOY_IB_TC", "-8"), 0);
}

TEST(QpPathMtu, SmallerOfTheTwo) {
  EXPECT_EQ(pathMtu(5, 3), 3);
  EXPECT_EQ(pathMtu(3, 5), 3);
  EXPECT_EQ(pathMtu(4, 4), 4);
  EXPECT_EQ(pathMtu(1, 5), 1);
  EXPECT_EQ(pathMtu(5, 5), 5);
}

TEST(QpPathMtu, OutOfRangeValuesAreClamped) {
  EXPECT_EQ(pathMtu(0, 5), 1);
  EXPECT_EQ(pathMtu(-1, 3), 1);
  EXPECT_EQ(pathMtu(6, 5), 5);
  EXPECT_EQ(pathMtu(7, 6), 5);
  EXPECT_EQ(pathMtu(6, 4), 4);
  EXPECT_EQ(pathMtu(0, 0), 1);
}

}  // namespace
