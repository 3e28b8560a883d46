// TIPS-2021 partition sums against REFERENCE_VALUES.md §1 (4-point Lagrange, as HAPI).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.hpp"
#include "gas/tips.hpp"

namespace {
const std::string kData = std::string(DGRTE_SOURCE_DIR) + "/gasdata";
}

TEST(Tips, ReferencePartitionSums) {
  const auto tips = dgrte::gas::TipsTable::load_default(kData);
  struct Row {
    int m, i;
    double q[5];
  };
  const double ts[5] = {296, 1000, 1500, 2000, 2500};
  const Row rows[] = {{1, 1, {174.581, 1218.07, 2712.10, 5274.25, 9452.64}},
                      {2, 1, {286.094, 2838.47, 9291.47, 24578.6, 55817.5}},
                      {2, 2, {576.644, 5895.96, 19513.3, 51989.4, 118653}},
                      {5, 1, {107.420, 380.297, 625.629, 928.313, 1291.63}}};
  for (const auto& r : rows) {
    for (int k = 0; k < 5; ++k) {
      EXPECT_NEAR(tips.q(r.m, r.i, ts[k]) / r.q[k], 1.0, 1e-5) << "M=" << r.m << " I=" << r.i << " T=" << ts[k];
    }
  }
  // grid points are reproduced exactly
  EXPECT_DOUBLE_EQ(tips.q(1, 1, 300.0), 1.781206E+02);
}

TEST(Tips, IsotopologueTable) {
  const auto tips = dgrte::gas::TipsTable::load_default(kData);
  const int k = tips.index(5, 1);
  ASSERT_GE(k, 0);
  EXPECT_NEAR(tips.isotopologue(k).molar_mass, 27.994915, 1e-6);
  EXPECT_NEAR(tips.isotopologue(k).abundance, 0.9865444, 1e-7);
  EXPECT_EQ(tips.index(3, 1), -1);
  EXPECT_THROW(tips.q(5, 1, 1e5), dgrte::InputError);
}

TEST(Tips, MalformedTableNamesFileAndLine) {
  const auto dir = std::filesystem::temp_directory_path() / "dgrte_tips_test";
  std::filesystem::create_directories(dir);
  const auto iso = (dir / "iso.csv").string(), tips = (dir / "tips.csv").string();
  std::ofstream(iso) << "# comment\nM,I,global_id,name,abundance,mass,molecule\n5,1,26,CO,0.98,27.99,CO\n";
  std::ofstream(tips) << "M,I,T,Q\n5,1,100,3.x\n";
  try {
    dgrte::gas::TipsTable::load(tips, iso);
    FAIL() << "malformed Q accepted";
  } catch (const dgrte::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tips.csv:2"), std::string::npos) << e.what();
  }
  std::ofstream(tips) << "M,I,T,Q\n5,1,100\n";
  EXPECT_THROW(dgrte::gas::TipsTable::load(tips, iso), dgrte::InputError);
  std::ofstream(tips) << "M,I,T,Q\n7,1,100,4\n";
  EXPECT_THROW(dgrte::gas::TipsTable::load(tips, iso), dgrte::InputError);
  std::filesystem::remove_all(dir);
}
