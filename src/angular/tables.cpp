// Tabulated octant-1 ordinates of the level-symmetric LQ_N and the heat-transfer S_N sets (data only; the
// sets are assembled in quadrature.cpp). Values parsed by script from the sources below, not retyped.
#include "angular/tables.hpp"

#include <cmath>

namespace dgrte::angular {
namespace {

// LQ_N, N = 2..16: GitHub robertsj/libdetran, src/angle/LevelSymmetric.cc, set_quad_values(), commit
// 13662137fa978d0f70de1dca3cd8a70a034d8b2d (identical at aad2478e7cf3e85390126469239eb905256a6da6), MIT licence,
// (c) 2013 Jeremy Roberts. Digits as printed there: `cosines` = att[] (the N/2 distinct direction cosines),
// `weights` = wtt[] (octant sum 1), `weight_class` = wpN[] (weight index of each octant ordinate, in the order
// mu index outer, eta index inner). Cross-checked against LLNL/UMT QuadratureData_mod.F90 (commit 72e3673d,
// MIT) to 1.2e-15 in shared/literature/quadrature (PROVENANCE.md). The libdetran LQ18..LQ24 are left out:
// LQ20..LQ24 have negative weights, and LQ18 (one weight 1.1e-4 beside 4e-2) has no use here beyond LQ16.
struct LevelSymmetricTable {
  int n;
  std::vector<double> cosines, weights;
  std::vector<int> weight_class;
};

const std::vector<LevelSymmetricTable>& level_symmetric_tables() {
  static const std::vector<LevelSymmetricTable> tables{
      {2,
       {0.577350269189625764509149},
       {1.000000000000000000000000},
       {0}},
      {4,
       {0.350021174581540677777041, 0.868890300722201205229788},
       {0.333333333333333333333333},
       {0, 0, 0}},
      {6,
       {0.266635401516704720331535, 0.681507726536546927403750, 0.926180935517489107558380},
       {0.176126130863383433783565, 0.157207202469949899549768},
       {0, 1, 0, 1, 1, 0}},
      {8,
       {0.218217890235992381266097, 0.577350269189625764509149, 0.786795792469443145800830,
        0.951189731211341853132399},
       {0.120987654320987654320988, 0.0907407407407407407407407, 0.0925925925925925925925926},
       {0, 1, 1, 0, 1, 2, 1, 1, 1, 0}},
      {10,
       {0.189321326478010476671494, 0.508881755582618974382711, 0.694318887594384317279217,
        0.839759962236684758403029, 0.963490981110468484701598},
       {0.0893031479843567214704325, 0.0725291517123655242296233, 0.0450437674364086390490892,
        0.0539281144878369243545650},
       {0, 1, 2, 1, 0, 1, 3, 3, 1, 2, 3, 2, 1, 1, 0}},
      {12,
       {0.167212652822713264084504, 0.459547634642594690016761, 0.628019096642130901034766,
        0.760021014833664062877138, 0.872270543025721502340662, 0.971637719251358378302376},
       {0.0707625899700910439766549, 0.0558811015648888075828962, 0.0373376737588285824652402,
        0.0502819010600571181385765, 0.0258512916557503911218290},
       {0, 1, 2, 2, 1, 0, 1, 3, 4, 3, 1, 2, 4, 4, 2, 2, 3, 2, 1, 1, 0}},
      {14,
       {0.151985861461031912404799, 0.422156982304796966896263, 0.577350269189625764509149,
        0.698892086775901338963210, 0.802226255231412057244328, 0.893691098874356784901111,
        0.976627152925770351762946},
       {0.0579970408969969964063611, 0.0489007976368104874582568, 0.0227935342411872473257345,
        0.0394132005950078294492985, 0.0380990861440121712365891, 0.0258394076418900119611012,
        0.00826957997262252825269908},
       {0, 1, 2, 3, 2, 1, 0, 1, 4, 5, 5, 4, 1, 2, 5, 6, 5, 2, 3, 5, 5, 3, 2, 4, 2, 1, 1, 0}},
      {16,
       {0.138956875067780344591732, 0.392289261444811712294197, 0.537096561300879079878296,
        0.650426450628771770509703, 0.746750573614681064580018, 0.831996556910044145168291,
        0.909285500943725291652116, 0.980500879011739882135849},
       {0.0489872391580385335008367, 0.0413295978698440232405505, 0.0203032007393652080748070,
        0.0265500757813498446015484, 0.0379074407956004002099321, 0.0135295047786756344371600,
        0.0326369372026850701318409, 0.0103769578385399087825920},
       {0, 1, 2, 3, 3, 2, 1, 0, 1, 4, 5, 6, 5, 4, 1, 2, 5, 7, 7, 5, 2, 3, 6, 7, 6, 3, 3, 5, 5, 3, 2, 4, 2, 1, 1, 0}},
  };
  return tables;
}

}  // namespace

std::vector<OctantOrdinate> level_symmetric_octant(int n) {
  for (const auto& t : level_symmetric_tables()) {
    if (t.n != n) continue;
    // Octant ordinates as libdetran builds them: mu = cosines[i], eta = cosines[j] for i + j < N/2, xi from
    // |s| = 1; weight in sr = octant weight * pi/2 (done by the caller).
    std::vector<OctantOrdinate> octant;
    std::size_t m = 0;
    const std::size_t half = t.cosines.size();
    for (std::size_t i = 0; i < half; ++i)
      for (std::size_t j = 0; i + j < half; ++j, ++m) {
        const double mu = t.cosines[i], eta = t.cosines[j];
        octant.push_back({mu, eta, std::sqrt(1 - mu * mu - eta * eta), t.weights[static_cast<std::size_t>(t.weight_class[m])]});
      }
    return octant;
  }
  return {};
}

// Heat-transfer S4, S6, S8: GitHub code-saturne/code_saturne, src/rayt/cs_rad_transfer_dir.cpp, function
// cs_rad_transfer_dir(), blocks i_quadrature == 1, 2, 3; commit 7eb8d5e9871a8a4691e3adcbf9c788923bc295b3
// (GPL-2.0-or-later; numbers only, as published data). 7 significant digits as printed: mu, eta, xi, weight in sr
// (octant sums pi/2 to ~3e-7). S8 equals the "Carlson and Lathrop" DOM_S8 of F18/CFFC data/SN_QUAD/quad.dat
// (weights x pi/2) to 8.7e-8 sr. These are not the LQ_N sets (e.g. S8 mu = 0.1422555 vs LQ8 0.2182179) and,
// unlike LQ_N, integrate the half-range flux sum_{mu>0} w mu = pi (to 4e-7).
std::vector<OctantOrdinate> heat_transfer_octant(int n) {
  switch (n) {
    case 4:
      return {
          {0.2958759, 0.2958759, 0.9082483, 0.5235987},
          {0.2958759, 0.9082483, 0.2958759, 0.5235987},
          {0.9082483, 0.2958759, 0.2958759, 0.5235987},
      };
    case 6:
      return {
          {0.183867, 0.183867, 0.9656013, 0.1609517},
          {0.183867, 0.6950514, 0.6950514, 0.3626469},
          {0.183867, 0.9656013, 0.183867, 0.1609517},
          {0.6950514, 0.183867, 0.6950514, 0.3626469},
          {0.6950514, 0.6950514, 0.183867, 0.3626469},
          {0.9656013, 0.183867, 0.183867, 0.1609517},
      };
    case 8:
      return {
          {0.1422555, 0.1422555, 0.9795543, 0.1712359},
          {0.1422555, 0.5773503, 0.8040087, 0.0992284},
          {0.1422555, 0.8040087, 0.5773503, 0.0992284},
          {0.1422555, 0.9795543, 0.1422555, 0.1712359},
          {0.5773503, 0.1422555, 0.8040087, 0.0992284},
          {0.5773503, 0.5773503, 0.5773503, 0.4617179},
          {0.5773503, 0.8040087, 0.1422555, 0.0992284},
          {0.8040087, 0.1422555, 0.5773503, 0.0992284},
          {0.8040087, 0.5773503, 0.1422555, 0.0992284},
          {0.9795543, 0.1422555, 0.1422555, 0.1712359},
      };
    default: return {};
  }
}

}  // namespace dgrte::angular
