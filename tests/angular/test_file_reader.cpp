// Quadrature files (CSV sx,sy,sz,w): a good file round-trips a set; each kind of bad file is an
// InputError naming the file, the line and what to do.
#include "angular/moments.hpp"
#include "angular/quadrature.hpp"
#include "common/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>

namespace dgrte::angular {
namespace {

constexpr double kPi = std::numbers::pi;

class QuadratureFile : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "dgrte_angular_tests";
  void SetUp() override { std::filesystem::create_directories(dir); }
  std::filesystem::path write(const std::string& name, const std::string& body) {
    const auto path = dir / name;
    std::ofstream(path) << body;
    return path;
  }
  // The InputError message of reading `body`, or "no error".
  std::string error_of(const std::string& body) {
    try {
      // CTest runs each test as its own process, in parallel: one folder per test.
      const auto sub = std::filesystem::path(::testing::UnitTest::GetInstance()->current_test_info()->name());
      std::filesystem::create_directories(dir / sub);
      from_file(write((sub / "bad.csv").string(), body));
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(QuadratureFile, RoundTripsASetWithCommentsAndBlankLines) {
  const auto t2 = thurgood(2);
  std::string body = "# T2 written out\n\n  sx, sy, sz, w  # header\n";
  char line[200];
  for (std::size_t m = 0; m < t2.size(); ++m) {
    std::snprintf(line, sizeof line, "%.17g,%.17g,%.17g,%.17g%s\n", t2.s[m][0], t2.s[m][1], t2.s[m][2], t2.w[m], m == 3 ? "  # a comment" : "");
    body += line;
  }
  const auto q = from_file(write("t2.csv", body));
  ASSERT_EQ(q.size(), t2.size());
  for (std::size_t m = 0; m < q.size(); ++m) {
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_DOUBLE_EQ(q.s[m][d], t2.s[m][d]);
      EXPECT_DOUBLE_EQ(q.s_bar[m][d], t2.s_bar[m][d]);
    }
    EXPECT_DOUBLE_EQ(q.w[m], t2.w[m]);
  }
  EXPECT_NE(q.name.find("t2.csv"), std::string::npos);
}

TEST_F(QuadratureFile, NormalisesSmallDeviationsSilently) {
  // Directions 5e-7 too long and weights 5e-7 too large: normalised to |s| = 1 and sum w = 4 pi.
  const double f = 1 + 5e-7, w = 4 * kPi / 6 * (1 + 5e-7);
  std::string body = "sx,sy,sz,w\n";
  for (int d = 0; d < 3; ++d)
    for (double sign : {1.0, -1.0}) {
      double s[3] = {0, 0, 0};
      s[d] = sign * f;
      char line[120];
      std::snprintf(line, sizeof line, "%.17g,%.17g,%.17g,%.17g\n", s[0], s[1], s[2], w);
      body += line;
    }
  const auto q = from_file(write("near.csv", body));
  EXPECT_NEAR(weight_sum(q), 4 * kPi, 1e-14);
  for (std::size_t m = 0; m < q.size(); ++m) EXPECT_NEAR(std::hypot(q.s[m][0], q.s[m][1], q.s[m][2]), 1.0, 1e-15);
}

TEST_F(QuadratureFile, BadRowsNameFileAndLine) {
  const std::string four_pi = "12.566370614359172";
  std::string e = error_of("sx,sy,sz,w\n1,0,0," + four_pi + "\n0,1\n");
  EXPECT_NE(e.find("bad.csv: line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("four numbers"), std::string::npos) << e;
  e = error_of("sx,sy,sz,w\n# comment\n1,0,0,x\n");
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  e = error_of("sx,sy,sz,w\n1,0,0,6.283185307179586,7\n");
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  e = error_of("sx,sy,sz,w\n1,0,0,nan\n");
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  e = error_of("sx,sy,sz,w\n1,0,0,-1\n");
  EXPECT_NE(e.find("positive"), std::string::npos) << e;
}

TEST_F(QuadratureFile, NonUnitDirection) {
  const std::string e = error_of("sx,sy,sz,w\n1,0,0,6.283185307179586\n-1,0.01,0,6.283185307179586\n");
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("length 1.00005"), std::string::npos) << e;
  EXPECT_NE(e.find("unit vectors"), std::string::npos) << e;
}

TEST_F(QuadratureFile, WrongWeightSumSaysWhatTheySumTo) {
  EXPECT_EQ(error_of("sx,sy,sz,w\n+1,0,0,6.283185307179586\n-1,+0,0,6.283185307179586\n"), "no error");
  const std::string e = error_of("sx,sy,sz,w\n1,0,0,6\n-1,0,0,6\n");
  EXPECT_NE(e.find("sum to 12 sr"), std::string::npos) << e;
  EXPECT_NE(e.find("4 pi"), std::string::npos) << e;
}

TEST_F(QuadratureFile, HeaderAndEmptyFile) {
  EXPECT_NE(error_of("1,0,0,6\n-1,0,0,6\n").find("header line 'sx,sy,sz,w'"), std::string::npos);
  EXPECT_NE(error_of("mu,eta,xi,w\n1,0,0,6\n").find("line 1"), std::string::npos);
  EXPECT_NE(error_of("# nothing\nsx,sy,sz,w\n").find("no ordinates"), std::string::npos);
  EXPECT_THROW(from_file(dir / "does_not_exist.csv"), InputError);
}

}  // namespace
}  // namespace dgrte::angular
