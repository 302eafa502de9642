#include "base/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace preflight {
namespace {

TEST(Status, DefaultIsOkWithEmptyMessage) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_TRUE(Status::ok_status().ok());
}

TEST(Status, FactoriesSetCodeAndMessage) {
  const Status a = invalid_argument("bad tp");
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(a.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a.message(), "bad tp");
  EXPECT_EQ(not_found("no such preset").code(), StatusCode::kNotFound);
  EXPECT_EQ(internal_error("bug").code(), StatusCode::kInternal);
  EXPECT_EQ(internal_error("bug").message(), "bug");
}

TEST(Status, WithPrefixPrependsToErrorsAndKeepsCode) {
  const Status s = not_found("unknown preset 'x'").with_prefix("test.yaml: ");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "test.yaml: unknown preset 'x'");
}

TEST(Status, WithPrefixLeavesOkUntouched) {
  const Status s = Status().with_prefix("test.yaml: ");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusOr, HoldsValue) {
  StatusOr<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v.value(), 42);
  EXPECT_EQ(*v, 42);
  *v = 7;  // mutable access writes through
  EXPECT_EQ(v.value(), 7);
}

TEST(StatusOr, HoldsError) {
  StatusOr<int> v = invalid_argument("parallelism.tp: 'abc': expected an integer");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v.status().message(), "parallelism.tp: 'abc': expected an integer");
}

TEST(StatusOr, ArrowReachesMembers) {
  StatusOr<std::string> s = std::string("preflight");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->size(), 9u);
  s->append("!");
  EXPECT_EQ(*s, "preflight!");
  const StatusOr<std::string>& cs = s;
  EXPECT_EQ(cs->size(), 10u);
  EXPECT_EQ(cs.value(), "preflight!");
}

TEST(StatusOr, RvalueValueMovesOut) {
  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(5);
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> owned = std::move(p).value();
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(*owned, 5);
}

TEST(StatusOrDeathTest, ValueOfErrorAborts) {
  StatusOr<int> v = invalid_argument("nope");
  EXPECT_DEATH((void)v.value(), "internal check failed.*ok\\(\\)");
}

TEST(StatusOrDeathTest, ConstructingFromOkStatusAborts) {
  EXPECT_DEATH(
      {
        StatusOr<int> v{Status()};
        (void)v;
      },
      "internal check failed");
}

// Helpers for the macro tests: `steps` records how far each function got.
Status fail_if(bool fail, std::vector<std::string>* steps, const std::string& name) {
  steps->push_back(name);
  if (fail) return invalid_argument(name + " failed");
  return Status();
}

Status two_steps(bool fail_first, bool fail_second, std::vector<std::string>* steps) {
  PREFLIGHT_RETURN_IF_ERROR(fail_if(fail_first, steps, "first"));
  PREFLIGHT_RETURN_IF_ERROR(fail_if(fail_second, steps, "second"));
  steps->push_back("end");
  return Status();
}

TEST(ReturnIfError, ContinuesOnOk) {
  std::vector<std::string> steps;
  EXPECT_TRUE(two_steps(false, false, &steps).ok());
  EXPECT_EQ(steps, (std::vector<std::string>{"first", "second", "end"}));
}

TEST(ReturnIfError, ReturnsFirstErrorAndStops) {
  std::vector<std::string> steps;
  const Status s = two_steps(true, true, &steps);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "first failed");
  EXPECT_EQ(steps, (std::vector<std::string>{"first"}));

  steps.clear();
  EXPECT_EQ(two_steps(false, true, &steps).message(), "second failed");
  EXPECT_EQ(steps, (std::vector<std::string>{"first", "second"}));
}

TEST(ReturnIfError, EvaluatesExpressionOnce) {
  int calls = 0;
  auto once = [&]() -> Status {
    ++calls;
    return Status();
  };
  auto run = [&]() -> Status {
    PREFLIGHT_RETURN_IF_ERROR(once());
    return Status();
  };
  EXPECT_TRUE(run().ok());
  EXPECT_EQ(calls, 1);
}

StatusOr<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument(std::to_string(v) + ": expected a positive integer");
  return v;
}

// Two ASSIGN_OR_RETURNs in one function: the macro's temporary must not collide.
StatusOr<int> sum_positive(int a, int b, bool* reached_end) {
  PREFLIGHT_ASSIGN_OR_RETURN(int x, parse_positive(a));
  PREFLIGHT_ASSIGN_OR_RETURN(int y, parse_positive(b));
  *reached_end = true;
  return x + y;
}

TEST(AssignOrReturn, AssignsValueOnOk) {
  bool reached_end = false;
  StatusOr<int> s = sum_positive(2, 3, &reached_end);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(*s, 5);
  EXPECT_TRUE(reached_end);
}

TEST(AssignOrReturn, PropagatesErrorAndStops) {
  bool reached_end = false;
  StatusOr<int> s = sum_positive(2, -1, &reached_end);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "-1: expected a positive integer");
  EXPECT_FALSE(reached_end);
}

TEST(AssignOrReturn, PropagatesIntoStatusReturningFunction) {
  std::string seen;
  auto f = [&](int v) -> Status {
    PREFLIGHT_ASSIGN_OR_RETURN(int x, parse_positive(v));
    seen = std::to_string(x);
    return Status();
  };
  EXPECT_TRUE(f(4).ok());
  EXPECT_EQ(seen, "4");
  const Status err = f(0);
  EXPECT_EQ(err.message(), "0: expected a positive integer");
  EXPECT_EQ(seen, "4");
}

TEST(AssignOrReturn, MovesMoveOnlyValues) {
  auto make = []() -> StatusOr<std::unique_ptr<int>> { return std::make_unique<int>(9); };
  auto use = [&]() -> StatusOr<int> {
    PREFLIGHT_ASSIGN_OR_RETURN(std::unique_ptr<int> p, make());
    return *p;
  };
  StatusOr<int> v = use();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 9);
}

TEST(AssignOrReturn, AssignsToExistingVariable) {
  auto f = [](int in, int* out) -> Status {
    PREFLIGHT_ASSIGN_OR_RETURN(*out, parse_positive(in));
    return Status();
  };
  int out = -5;
  EXPECT_TRUE(f(11, &out).ok());
  EXPECT_EQ(out, 11);
  EXPECT_FALSE(f(-3, &out).ok());
  EXPECT_EQ(out, 11);  // untouched on error
}

}  // namespace
}  // namespace preflight
