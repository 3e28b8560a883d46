/* dgrte C API: radiative transfer for a coupled CFD code (docs/library.md).
 *
 * Every function returns a status (DGRTE_OK or an error code); on error, dgrte_last_error() gives the
 * message (per thread, valid until the next call into dgrte). No function throws or exits.
 * Arrays are caller-owned. A solver keeps its mesh and its last solution between solves: each solve
 * starts from the previous one's intensities (a warm start).
 */
#ifndef DGRTE_H
#define DGRTE_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum dgrte_status {
  DGRTE_OK = 0,
  DGRTE_INPUT_ERROR = 1,    /* bad case file, mesh, field name or values: the message says which */
  DGRTE_SOLVER_ERROR = 3,   /* the solve failed (divergence, device failure) */
  DGRTE_INTERNAL_ERROR = 4  /* a bug: please report the message */
};

typedef struct dgrte_solver dgrte_solver;

/* Message of the last failed call on this thread ("" after a success). */
const char* dgrte_last_error(void);

/* Reads the case file and its mesh. comm: the processes that solve together (MPI_COMM_SELF for one);
 * it becomes PETSc's world if dgrte starts PETSc (MPI is initialised if the caller has not).
 * output_directory: where each solve writes its outputs (solution.vtu, summary.json, ...); NULL
 * writes nothing. */
int dgrte_solver_create(const char* case_file, MPI_Comm comm, const char* output_directory, dgrte_solver** solver);
int dgrte_solver_free(dgrte_solver* solver);
/* Ends dgrte's use of PETSc: call it after freeing every solver and before MPI_Finalize (without it,
 * PETSc is finalised at process exit, which is too late if the caller finalises MPI). */
int dgrte_finalize(void);

/* The solver's DG nodes: their number and positions (xyz: 3 * count doubles, x0 y0 z0 x1 ...). */
int dgrte_solver_num_nodes(const dgrte_solver* solver, size_t* count);
int dgrte_solver_node_positions(const dgrte_solver* solver, double* xyz);

/* A quantity (temperature [K], kappa, sigma_s [1/m], soot_fv, pressure [atm], x_h2o, x_co2, x_co)
 * replacing the case's own, at the DG nodes (count = num_nodes) ... */
int dgrte_solver_set_field(dgrte_solver* solver, const char* name, const double* values, size_t count);
/* ... or at the caller's own points (xyz: 3 * count), carried to the nodes by inverse-distance
 * weighting of the nearest points (as a CSV point-cloud field file). */
int dgrte_solver_set_field_at_points(dgrte_solver* solver, const char* name, const double* xyz, const double* values, size_t count);

int dgrte_solver_solve(dgrte_solver* solver);

/* After a solve: a nodal field of the solution (G, qx, qy, qz, divq, ...; count = num_nodes). */
int dgrte_solver_get_field(const dgrte_solver* solver, const char* name, double* values, size_t count);
/* A nodal field at the caller's points (e.g. divq at the CFD cell centres); NaN outside the mesh. */
int dgrte_solver_get_field_at_points(const dgrte_solver* solver, const char* name, const double* xyz, size_t count, double* values);
/* A column of a probe line of output.probes (x, y, z, distance, G, qx, qy, qz, divq, ... or q_in,
 * q_net for a wall probe: the columns of probes/<probe>.csv). values NULL: *count gets the number of
 * points; else *count is the room in values and gets the number written. */
int dgrte_solver_get_probe(const dgrte_solver* solver, const char* probe, const char* column, double* values, size_t* count);
/* Wall totals of a surface group (its name in the mesh, or "#tag"): incident power q_in [W] and
 * net absorbed power q_net [W] (absorbed - emitted). */
int dgrte_solver_wall_group(const dgrte_solver* solver, const char* group, double* q_in_W, double* q_net_W);
/* After a solve: the summary (what summary.json holds) as JSON text, valid until the next solve or free. */
int dgrte_solver_summary(const dgrte_solver* solver, const char** json);

#ifdef __cplusplus
}
#endif

#endif
