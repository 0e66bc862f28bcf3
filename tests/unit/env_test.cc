// Parsing of Alloy's environment variables: decimal only, ranges enforced, the fallback on anything else.
#include <gtest/gtest.h>

#include <cstdlib>

#include "call_env.h"
#include "env.h"

namespace {

constexpr const char* kVar = "ALLOY_ENV_TEST_VARIABLE";

long long parse(const char* value, long long fallback, long long min, long long max) {
  if (value == nullptr) unsetenv(kVar);
  else setenv(kVar, value, 1);
  const long long result = alloy::envInt(kVar, fallback, min, max);
  unsetenv(kVar);
  return result;
}

TEST(Env, IntegersAreDecimalAndInRange) {
  EXPECT_EQ(parse(nullptr, 7, 1, 100), 7);
  EXPECT_EQ(parse("", 7, 1, 100), 7);
  EXPECT_EQ(parse("42", 7, 1, 100), 42);
  EXPECT_EQ(parse("010", 7, 1, 100), 10);  // not octal 8
  EXPECT_EQ(parse("0x10", 7, 1, 100), 7);  // not hexadecimal
  EXPECT_EQ(parse("0", 7, 1, 100), 7);     // below the range: a zero timeout is not a timeout
  EXPECT_EQ(parse("-1", 7, 1, 100), 7);
  EXPECT_EQ(parse("101", 7, 1, 100), 7);
  EXPECT_EQ(parse("100", 7, 1, 100), 100);
  EXPECT_EQ(parse("12abc", 7, 1, 100), 7);
  EXPECT_EQ(parse("99999999999999999999999", 7, 1, 100), 7);  // overflows long long
  EXPECT_EQ(parse("-5", 7, -10, 10), -5);
}

TEST(Env, ChoicesOutsideTheListFallBack) {
  setenv(kVar, "pmix", 1);
  EXPECT_EQ(alloy::envChoice(kVar, "auto", {"auto", "pmix", "mpi"}), "pmix");
  setenv(kVar, "PMIx", 1);
  EXPECT_EQ(alloy::envChoice(kVar, "auto", {"auto", "pmix", "mpi"}), "auto");
  unsetenv(kVar);
  EXPECT_EQ(alloy::envChoice(kVar, "auto", {"auto", "pmix", "mpi"}), "auto");
}

// The per-call readers see the environment as of the latest snapshot: a change shows after a refresh (a
// communicator's creation), not before, and unset again gives the fallback.
TEST(Env, CallReadersSeeTheLatestSnapshot) {
  setenv(kVar, "42", 1);
  alloy::refreshCallEnvironment();
  EXPECT_EQ(alloy::callEnvInt(kVar, 7, 1, 100), 42);
  setenv(kVar, "43", 1);
  EXPECT_EQ(alloy::callEnvInt(kVar, 7, 1, 100), 42);
  alloy::refreshCallEnvironment();
  EXPECT_EQ(alloy::callEnvInt(kVar, 7, 1, 100), 43);
  setenv(kVar, "0x10", 1);
  alloy::refreshCallEnvironment();
  EXPECT_EQ(alloy::callEnvInt(kVar, 7, 1, 100), 7);  // the same parsing as envInt
  setenv(kVar, "42", 1);  // an environment seen before: its snapshot again
  alloy::refreshCallEnvironment();
  EXPECT_EQ(alloy::callEnvInt(kVar, 7, 1, 100), 42);
  unsetenv(kVar);
  alloy::refreshCallEnvironment();
  EXPECT_EQ(alloy::callEnvInt(kVar, 7, 1, 100), 7);
}

TEST(Env, CallChoicesAreTheListedWords) {
  setenv(kVar, "1", 1);
  alloy::refreshCallEnvironment();
  EXPECT_STREQ(alloy::callEnvChoice(kVar, "auto", {"auto", "0", "1"}), "1");
  setenv(kVar, "yes", 1);
  alloy::refreshCallEnvironment();
  EXPECT_STREQ(alloy::callEnvChoice(kVar, "auto", {"auto", "0", "1"}), "auto");
  setenv(kVar, "", 1);
  alloy::refreshCallEnvironment();
  EXPECT_STREQ(alloy::callEnvChoice(kVar, "auto", {"auto", "0", "1"}), "auto");
  unsetenv(kVar);
  alloy::refreshCallEnvironment();
  EXPECT_STREQ(alloy::callEnvChoice(kVar, "auto", {"auto", "0", "1"}), "auto");
}

}  // namespace
