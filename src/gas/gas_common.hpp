#pragma once
#include "common/parallel.hpp"
// Shared pieces of the gas library: physical constants, Planck functions, locating the data
// directory, reading numeric data files with line numbers, state validation, one-time warnings.
#include <atomic>
#include <functional>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/constants.hpp"
#include "gas/spectral_model.hpp"

namespace dgrte::gas {

using dgrte::kPi;                                   // common/constants.hpp
inline constexpr double kSigma = kStefanBoltzmann;  // W/(m^2 K^4)
inline constexpr double kC2 = 1.4387769;           // second radiation constant, cm K
inline constexpr double kC1nu = 3.741771852e-8;    // 2 pi h c^2 for E_b,nu in W/(m^2 cm^-1) with nu in cm^-1
inline constexpr double kAtm = 101325.0;            // Pa

// Gauss-Legendre rule on [0, 1] (n >= 1): nodes ascending, weights summing to 1.
void gauss_legendre_01(int n, std::vector<double>& x, std::vector<double>& w);

// Spectral blackbody emissive power E_b,nu [W/(m^2 cm^-1)] at wavenumber nu [cm^-1].
double planck_emissive_power(double nu, double temperature);
// Fractions of sigma T^4 emitted below / above wavenumber nu [cm^-1] (series, ~1e-15 absolute; the
// fraction above keeps its relative accuracy far in the Wien tail).
double planck_fraction_below(double nu, double temperature);
double planck_fraction_above(double nu, double temperature);
// Fraction of sigma T^4 emitted in [nu_lo, nu_hi] (difference of the fractions above: no cancellation
// for narrow intervals in the Wien tail); nu_hi may be infinite.
inline double planck_band_fraction(double nu_lo, double nu_hi, double temperature) {
  return planck_fraction_above(nu_lo, temperature) - planck_fraction_above(nu_hi, temperature);
}

// The gas data directory: `explicit_dir` if non-empty, else $DGRTE_GASDATA, else the compile-time
// DGRTE_GASDATA_DIR. Throws InputError if it does not exist.
std::filesystem::path gasdata_directory(const std::string& explicit_dir = {});
// `relative` inside the data directory; throws InputError naming the file and how to fix it.
std::filesystem::path gasdata_file(const std::filesystem::path& dir, const std::string& relative);

// A numeric table row read from a text file, with its 1-based line number.
struct DataRow {
  int line = 0;
  std::vector<std::string> fields;
};
// Reads a text file: skips blank lines and lines starting with '#'; splits on `separator`
// (',' for CSV; ' ' = any whitespace). Throws InputError if unreadable.
std::vector<DataRow> read_data_rows(const std::filesystem::path& file, char separator);
// Parses a number (accepts Fortran D exponents); throws InputError "FILE:LINE: ..." if malformed.
double parse_number(std::string_view text, const std::filesystem::path& file, int line, std::string_view what);
// All numbers of a whitespace-separated file as a flat stream (Fortran D exponents accepted).
std::vector<double> read_number_stream(const std::filesystem::path& file);

// Total emissivity of a homogeneous isothermal path of length L [m] for a k-type model:
// sum_j a_j(T) (1 - exp(-kappa_j L)). The model must be prepared for `state` if it needs it.
double homogeneous_emissivity(const SpectralModel& model, const GasState& state, double length);
// Sum of the emission weights of all spectral points at source temperature t (1 for a complete model).
double emission_weight_sum(const SpectralModel& model, const GasState& state, double t);

// Checks a gas state: finite T > 0, P > 0, mole fractions in [0, 1] with sum <= 1 (+1e-9).
// Throws InputError mentioning `where`.
void validate_state(const GasState& s, const std::string& where);

// Exception-safe OpenMP loop (an out-of-range state of a strict model throws inside it).
using dgrte::parallel_for;

// Prints a warning to stderr once per flag.
void warn_once(std::atomic<bool>& flag, const std::string& message);

// Temperature range handling of a model: clamps into [lo, hi]; when out of range and `strict`,
// throws InputError, else warns once (stderr) that the value was clamped.
struct TemperatureRange {
  double lo = 0, hi = 1e9;
  bool strict = false;
  std::string model;
  mutable std::atomic<bool> warned{false};
  TemperatureRange() = default;
  TemperatureRange(double l, double h, std::string m) : lo(l), hi(h), model(std::move(m)) {}
  TemperatureRange(const TemperatureRange& o) : lo(o.lo), hi(o.hi), strict(o.strict), model(o.model) {}
  TemperatureRange& operator=(const TemperatureRange& o) {
    lo = o.lo; hi = o.hi; strict = o.strict; model = o.model;
    return *this;
  }
  double clamp(double t) const {
    if (t >= lo && t <= hi) return t;
    out_of_range(t);
    return t < lo ? lo : hi;
  }

 private:
  void out_of_range(double t) const;
};

}  // namespace dgrte::gas
