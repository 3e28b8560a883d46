// `import dgrte`: the public C++ API (dgrte/dgrte.hpp) for Python, with numpy arrays
// (docs/library.md). Built into build/python/ by the README's build command.
#include "common/error.hpp"
#include "dgrte/dgrte.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <optional>
#include <string>

namespace py = pybind11;

namespace {

// The Python view of dgrte::Results: summary as a dict (json.loads of summary.json's text), fields
// as numpy arrays.
struct PyResults {
  py::dict summary;
  py::dict fields;
  py::dict wall_fields;
  py::dict probes;  // probe name -> {column -> numpy array}
};

py::dict arrays(std::map<std::string, std::vector<double>>&& in) {
  py::dict out;
  for (auto& [name, values] : in) {
    auto* kept = new std::vector<double>(std::move(values));
    py::capsule owner(kept, [](void* p) { delete static_cast<std::vector<double>*>(p); });
    out[py::str(name)] = py::array_t<double>(static_cast<py::ssize_t>(kept->size()), kept->data(), owner);
  }
  return out;
}

PyResults to_python(dgrte::Results&& r) {
  PyResults out;
  out.summary = py::module_::import("json").attr("loads")(r.summary.dump());
  out.fields = arrays(std::move(r.fields));
  out.wall_fields = arrays(std::move(r.wall_fields));
  for (auto& [name, columns] : r.probes) out.probes[py::str(name)] = arrays(std::move(columns));
  return out;
}

dgrte::RunOptions options(const std::filesystem::path& case_file, const std::optional<std::filesystem::path>& output, bool quiet) {
  dgrte::RunOptions o;
  o.case_file = case_file;
  o.write_files = output.has_value();
  o.output_directory = output;
  o.quiet = quiet;
  return o;
}

std::vector<std::array<double, 3>> points(const py::array_t<double, py::array::c_style | py::array::forcecast>& xyz) {
  if (xyz.ndim() != 2 || xyz.shape(1) != 3) throw dgrte::InputError("points: give an array of shape (n, 3)");
  std::vector<std::array<double, 3>> p(static_cast<std::size_t>(xyz.shape(0)));
  auto a = xyz.unchecked<2>();
  for (py::ssize_t i = 0; i < xyz.shape(0); ++i) p[static_cast<std::size_t>(i)] = {a(i, 0), a(i, 1), a(i, 2)};
  return p;
}

std::span<const double> values(const py::array_t<double, py::array::c_style | py::array::forcecast>& v) {
  if (v.ndim() != 1) throw dgrte::InputError("values: give a one-dimensional array");
  return {v.data(), static_cast<std::size_t>(v.size())};
}

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

}  // namespace

PYBIND11_MODULE(dgrte, m) {
  m.doc() = "dgrte: radiative transfer in 3-D participating media (nodal DG on tetrahedra). docs/library.md";
  static py::exception<dgrte::InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<dgrte::SolverError> solver_error(m, "SolverError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const dgrte::InputError& e) {
      input_error(e.what());
    } catch (const dgrte::SolverError& e) {
      solver_error(e.what());
    }
  });

  py::class_<PyResults>(m, "Results", "One solve's results: summary (dict), fields, wall_fields and probes (numpy arrays)")
      .def_readonly("summary", &PyResults::summary, "what summary.json holds")
      .def_readonly("fields", &PyResults::fields, "arrays at the DG nodes: x, y, z, G, qx, qy, qz, divq, temperature, ...")
      .def_readonly("wall_fields", &PyResults::wall_fields, "arrays at the wall faces' nodes: x, y, z, q_in, q_net, ...")
      .def_readonly("probes", &PyResults::probes, "per probe of output.probes: its CSV columns (x, y, z, distance, G, ...) as arrays");

  py::class_<dgrte::Solver>(m, "Solver", "A case kept between solves; each solve starts from the last solution (warm start)")
      .def(py::init([](const std::filesystem::path& case_file, std::optional<std::filesystem::path> output, bool quiet) {
             return dgrte::Solver(options(case_file, output, quiet));
           }),
           py::arg("case_file"), py::arg("output") = py::none(), py::arg("quiet") = true)
      .def(
          "solve",
          [](dgrte::Solver& s) {
            dgrte::Results r;
            {
              py::gil_scoped_release free_python;  // other Python threads run during the solve
              r = s.solve();
            }
            return to_python(std::move(r));
          },
          "Solve; writes files only if the solver was given output")
      .def_property_readonly("num_nodes", &dgrte::Solver::num_nodes)
      .def_property_readonly("node_positions",
                             [](const dgrte::Solver& s) {
                               const auto p = s.node_positions();
                               Array out({static_cast<py::ssize_t>(p.size()), py::ssize_t{3}});
                               auto a = out.mutable_unchecked<2>();
                               for (std::size_t i = 0; i < p.size(); ++i)
                                 for (py::ssize_t d = 0; d < 3; ++d) a(static_cast<py::ssize_t>(i), d) = p[i][static_cast<std::size_t>(d)];
                               return out;
                             })
      .def(
          "set_field", [](dgrte::Solver& s, const std::string& name, const Array& v) { s.set_field(name, values(v)); }, py::arg("name"),
          py::arg("values"), "A quantity at the DG nodes (temperature, kappa, sigma_s, soot_fv, pressure, x_h2o, x_co2, x_co)")
      .def(
          "set_field_at_points",
          [](dgrte::Solver& s, const std::string& name, const Array& xyz, const Array& v) {
            s.set_field_at_points(name, points(xyz), values(v));
          },
          py::arg("name"), py::arg("points"), py::arg("values"), "A quantity at the caller's points (n x 3), carried to the nodes")
      .def(
          "interpolate",
          [](const dgrte::Solver& s, const Array& nodal, const Array& xyz) {
            const auto v = s.interpolate(values(nodal), points(xyz));
            return Array(static_cast<py::ssize_t>(v.size()), v.data());
          },
          py::arg("nodal"), py::arg("points"), "A nodal field at points (n x 3) through the DG polynomials; NaN outside the mesh")
      .def("clear_fields", &dgrte::Solver::clear_fields)
      .def("reset_warm_start", &dgrte::Solver::reset_warm_start);

  m.def(
      "run",
      [](const std::filesystem::path& case_file, std::optional<std::filesystem::path> output, bool quiet) {
        return to_python(dgrte::run(options(case_file, output, quiet)));
      },
      py::arg("case_file"), py::arg("output") = py::none(), py::arg("quiet") = true,
      "Run a case once; files are written only into output (a folder) if given");
  m.attr("settable_fields") = dgrte::settable_fields();
}
