// Fuzz target: the gas-data readers. The first byte picks one: HITRAN .par records (160-column
// fixed-width lines), CSV tables as the model datasets read them (rows, then every field parsed as a
// number, Fortran D exponents accepted), or whitespace-separated number streams.
#include "fuzz_support.hpp"
#include "gas/gas_common.hpp"
#include "gas/hitran.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int reader = data[0] % 4;
  const auto file = dgrte::fuzz::as_file(data + 1, size - 1, reader == 0 ? ".par" : ".csv");
  dgrte::fuzz::expect_result_or_input_error([&] {
    if (reader == 0) {
      dgrte::gas::LineList lines;
      dgrte::gas::ParFilter filter;
      dgrte::gas::read_par_file(file.string(), filter, lines);
      lines.sort_by_wavenumber();
    } else if (reader == 1 || reader == 2) {
      for (const auto& row : dgrte::gas::read_data_rows(file, reader == 1 ? ',' : ' '))
        for (const auto& field : row.fields) dgrte::gas::parse_number(field, file, row.line, "a value");
    } else {
      dgrte::gas::read_number_stream(file);
    }
  });
  return 0;
}
