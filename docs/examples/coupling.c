/* Coupling dgrte to a CFD code through the C API (docs/library.md).
 *
 * A CFD code calls this every few of its iterations: hand over the temperature, solve, take back
 * the radiative source -div q at its cells and the wall heat loads. This example plays the CFD
 * code: its "cells" are a 6 x 6 x 12 grid of cell centres in the furnace of furnace.yaml, its
 * temperature field changes by a few per cent between calls, and each solve after the first
 * starts from the last solution (a warm start: fewer outer iterations).
 *
 *   build/docs/examples/coupling docs/examples/furnace.yaml
 *
 * Exit status 0 if every call succeeded and the numbers are sane; 1 otherwise.
 */
#include "dgrte.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NX 6
#define NY 6
#define NZ 12
#define NCELLS (NX * NY * NZ)

static int check(int status, const char* call) {
  if (status != DGRTE_OK) fprintf(stderr, "%s failed (status %d): %s\n", call, status, dgrte_last_error());
  return status == DGRTE_OK;
}

/* "outer_iterations": N from the summary's text (a CFD code would use its JSON reader). */
static long outer_iterations(const dgrte_solver* solver) {
  const char* json = NULL;
  if (!check(dgrte_solver_summary(solver, &json), "dgrte_solver_summary")) return -1;
  const char* at = strstr(json, "\"outer_iterations\":");
  return at ? strtol(at + strlen("\"outer_iterations\":"), NULL, 10) : -1;
}

/* The CFD code's temperature at its cell centres: a hot core, cooler towards the walls and the exit,
 * scaled by (1 + change). */
static double cfd_temperature(double x, double y, double z, double change) {
  const double r2 = (x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5);
  return (1100.0 + 700.0 * exp(-r2 / 0.05) * exp(-(z - 0.6) * (z - 0.6) / 0.3) - 100.0 * z) * (1.0 + change);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CASE.yaml\n", argv[0]);
    return 1;
  }
  MPI_Init(&argc, &argv);
  int ok = 1;
  dgrte_solver* solver = NULL;
  ok = ok && check(dgrte_solver_create(argv[1], MPI_COMM_SELF, NULL, &solver), "dgrte_solver_create");

  /* A bad call is an error code and a message, never an exit. */
  if (ok) {
    double one = 1.0;
    const int status = dgrte_solver_set_field(solver, "temprature", &one, 1);
    printf("misspelt field name: status %d, message: %s\n", status, dgrte_last_error());
    ok = status == DGRTE_INPUT_ERROR && strlen(dgrte_last_error()) > 0;
  }

  static double centres[3 * NCELLS], temperature[NCELLS], divq[NCELLS];
  for (int k = 0; k < NZ; ++k)
    for (int j = 0; j < NY; ++j)
      for (int i = 0; i < NX; ++i) {
        const int c = (k * NY + j) * NX + i;
        centres[3 * c] = (i + 0.5) / NX, centres[3 * c + 1] = (j + 0.5) / NY, centres[3 * c + 2] = 2.0 * (k + 0.5) / NZ;
      }
  const double changes[] = {0.0, 0.02, -0.01, 0.03};
  for (int call = 0; ok && call < 4; ++call) {
    for (int c = 0; c < NCELLS; ++c) temperature[c] = cfd_temperature(centres[3 * c], centres[3 * c + 1], centres[3 * c + 2], changes[call]);
    ok = check(dgrte_solver_set_field_at_points(solver, "temperature", centres, temperature, NCELLS), "dgrte_solver_set_field_at_points") &&
         check(dgrte_solver_solve(solver), "dgrte_solver_solve") &&
         check(dgrte_solver_get_field_at_points(solver, "divq", centres, NCELLS, divq), "dgrte_solver_get_field_at_points");
    if (!ok) break;
    double source_W = 0, q_in = 0, q_net = 0;
    const double cell_volume = 2.0 / NCELLS;
    for (int c = 0; c < NCELLS; ++c) {
      if (!isfinite(divq[c])) ok = 0;
      source_W -= divq[c] * cell_volume; /* the CFD energy source is -div q */
    }
    ok = ok && check(dgrte_solver_wall_group(solver, "side_walls", &q_in, &q_net), "dgrte_solver_wall_group");
    printf("call %d: T x %.2f, outer iterations %ld, sum of -div q over the cells %.6g W, side walls q_in %.6g W, q_net %.6g W\n", call,
           1.0 + changes[call], outer_iterations(solver), source_W, q_in, q_net);
    /* Hot gas in cooler walls: the gas loses energy (-div q < 0 overall) and the side walls gain it. */
    ok = ok && source_W < 0 && q_net > 0;
  }
  /* The wall heat flux along the case's probe line on a side wall (output.probes: side_wall):
   * first the number of points, then the values. */
  size_t points = 0;
  ok = ok && check(dgrte_solver_get_probe(solver, "side_wall", "q_net", NULL, &points), "dgrte_solver_get_probe");
  if (ok) {
    double* q_line = malloc(points * sizeof(double));
    ok = q_line && check(dgrte_solver_get_probe(solver, "side_wall", "q_net", q_line, &points), "dgrte_solver_get_probe");
    double q_max = 0;
    for (size_t i = 0; ok && i < points; ++i) {
      if (!isfinite(q_line[i])) ok = 0;
      if (q_line[i] > q_max) q_max = q_line[i];
    }
    printf("side wall probe: %zu points, largest q_net %.6g W/m^2\n", points, q_max);
    ok = ok && points > 0 && q_max > 0;
    free(q_line);
    /* A probe the case does not have: an input error naming the case's probes. */
    const int status = dgrte_solver_get_probe(solver, "side_wal", "q_net", NULL, &points);
    printf("misspelt probe name: status %d, message: %s\n", status, dgrte_last_error());
    ok = ok && status == DGRTE_INPUT_ERROR;
  }
  ok = check(dgrte_solver_free(solver), "dgrte_solver_free") && ok;
  ok = check(dgrte_finalize(), "dgrte_finalize") && ok;
  MPI_Finalize();
  printf(ok ? "coupling example: ok\n" : "coupling example: FAILED\n");
  return ok ? 0 : 1;
}
