#pragma once
// Physical and mathematical constants, defined once for every layer.
#include <numbers>

namespace dgrte {

inline constexpr double kStefanBoltzmann = 5.670374419e-8;  // sigma, W/(m^2 K^4), CODATA 2018
inline constexpr double kPi = std::numbers::pi;

}  // namespace dgrte
