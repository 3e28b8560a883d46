#include "gas/hitran.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <numeric>
#include <string_view>

#include "common/error.hpp"

namespace dgrte::gas {
namespace {

constexpr std::size_t kRecordLength = 160;

[[noreturn]] void bad(const std::string& file, long line_no, const std::string& what) {
  throw InputError(fmt::format("{}:{}: malformed HITRAN .par record: {}. Expected the 160-character HITRAN2004+ format "
                               "(download .par files from hitran.org; do not edit them by hand)",
                               file, line_no, what));
}

double field(const std::string& rec, std::size_t off, std::size_t len, const char* name, const std::string& file,
             long line_no) {
  const char* b = rec.data() + off;
  const char* e = b + len;
  while (b < e && *b == ' ') ++b;
  while (e > b && e[-1] == ' ') --e;
  if (b == e) bad(file, line_no, fmt::format("empty field {} (columns {}-{})", name, off + 1, off + len));
  if (*b == '+') ++b;
  double v = 0;
  auto [ptr, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || ptr != e) {
    bad(file, line_no, fmt::format("field {} (columns {}-{}) = '{}' is not a number", name, off + 1, off + len,
                                   std::string_view(rec.data() + off, len)));
  }
  return v;
}

}  // namespace

HitranLine parse_par_record(const std::string& record, const std::string& file, long line_no) {
  if (record.size() < kRecordLength) {
    bad(file, line_no, fmt::format("{} characters, expected {}", record.size(), kRecordLength));
  }
  HitranLine l;
  const double m = field(record, 0, 2, "molecule", file, line_no);
  l.molecule = static_cast<int>(m);
  if (l.molecule != m || l.molecule < 1) bad(file, line_no, "molecule number is not a positive integer");
  const char c = record[2];
  if (c >= '1' && c <= '9') {
    l.isotopologue = c - '0';
  } else if (c == '0') {
    l.isotopologue = 10;
  } else if (c == 'A' || c == 'a') {
    l.isotopologue = 11;
  } else if (c == 'B' || c == 'b') {
    l.isotopologue = 12;
  } else {
    bad(file, line_no, fmt::format("isotopologue code '{}' in column 3", c));
  }
  l.nu = field(record, 3, 12, "nu", file, line_no);
  l.intensity = field(record, 15, 10, "S", file, line_no);
  l.einstein_a = field(record, 25, 10, "A", file, line_no);
  l.gamma_air = field(record, 35, 5, "gamma_air", file, line_no);
  l.gamma_self = field(record, 40, 5, "gamma_self", file, line_no);
  l.elower = field(record, 45, 10, "E''", file, line_no);
  l.n_air = field(record, 55, 4, "n_air", file, line_no);
  l.delta_air = field(record, 59, 8, "delta_air", file, line_no);
  if (!(l.nu >= 0) || !(l.intensity >= 0) || !(l.gamma_air >= 0) || !(l.gamma_self >= 0)) {
    bad(file, line_no, "negative wavenumber, intensity or broadening coefficient");
  }
  return l;
}

void LineList::push_back(const HitranLine& l) {
  molecule.push_back(l.molecule);
  isotopologue.push_back(l.isotopologue);
  nu.push_back(l.nu);
  intensity.push_back(l.intensity);
  gamma_air.push_back(l.gamma_air);
  gamma_self.push_back(l.gamma_self);
  elower.push_back(l.elower);
  n_air.push_back(l.n_air);
  delta_air.push_back(l.delta_air);
}

void LineList::append(const LineList& o) {
  auto cat = [](auto& a, const auto& b) { a.insert(a.end(), b.begin(), b.end()); };
  cat(molecule, o.molecule);
  cat(isotopologue, o.isotopologue);
  cat(nu, o.nu);
  cat(intensity, o.intensity);
  cat(gamma_air, o.gamma_air);
  cat(gamma_self, o.gamma_self);
  cat(elower, o.elower);
  cat(n_air, o.n_air);
  cat(delta_air, o.delta_air);
}

void LineList::sort_by_wavenumber() {
  std::vector<std::size_t> p(size());
  std::iota(p.begin(), p.end(), std::size_t{0});
  std::stable_sort(p.begin(), p.end(), [&](std::size_t a, std::size_t b) { return nu[a] < nu[b]; });
  auto perm = [&](auto& v) {
    auto w = v;
    for (std::size_t i = 0; i < p.size(); ++i) w[i] = v[p[i]];
    v.swap(w);
  };
  perm(molecule);
  perm(isotopologue);
  perm(nu);
  perm(intensity);
  perm(gamma_air);
  perm(gamma_self);
  perm(elower);
  perm(n_air);
  perm(delta_air);
}

std::size_t read_par_file(const std::string& path, const ParFilter& filter, LineList& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(fmt::format("{}: cannot open HITRAN/HITEMP line file; check the par_files entry / --par option "
                                 "(files must be uncompressed 160-character .par files, see docs/gas-lbl.md)",
                                 path));
  }
  std::string rec;
  long line_no = 0;
  std::size_t kept = 0;
  while (std::getline(in, rec)) {
    ++line_no;
    while (!rec.empty() && (rec.back() == '\r' || rec.back() == '\n')) rec.pop_back();
    if (rec.find_first_not_of(' ') == std::string::npos) continue;  // blank line
    if (rec.size() < kRecordLength) {
      bad(path, line_no, fmt::format("{} characters, expected {}", rec.size(), kRecordLength));
    }
    // cheap pre-filter on the wavenumber before parsing the rest
    const double nu = field(rec, 3, 12, "nu", path, line_no);
    if (nu < filter.nu_min || nu > filter.nu_max) continue;
    const HitranLine l = parse_par_record(rec, path, line_no);
    if (!filter.molecules.empty() &&
        std::find(filter.molecules.begin(), filter.molecules.end(), l.molecule) == filter.molecules.end()) {
      continue;
    }
    if (!filter.isotopologues.empty() &&
        std::find(filter.isotopologues.begin(), filter.isotopologues.end(), l.isotopologue) == filter.isotopologues.end()) {
      continue;
    }
    if (l.intensity < filter.min_intensity_296) continue;
    out.push_back(l);
    ++kept;
  }
  if (in.bad()) throw InputError(fmt::format("{}: read error after line {}", path, line_no));
  return kept;
}

LineList read_par_files(const std::vector<std::string>& paths, const ParFilter& filter) {
  LineList all;
  for (const auto& p : paths) read_par_file(p, filter, all);
  all.sort_by_wavenumber();
  return all;
}

}  // namespace dgrte::gas
