/* The start and the end of a tool's run under MPI, for both tools. */
#ifndef TOOL_SESSION_H
#define TOOL_SESSION_H

/* Starts MPI and takes HDF5's error printing over (the tools report each
 * error once, themselves).  Returns TOOL_EXIT_OK, or an exit status after
 * saying why on stderr (MPI is then finalized already). */
int tool_session_start(const char *program, int *argc, char ***argv, int *rank);

/* Whether XPOSE_IO_THREAD=0 asks for no I/O threads: the passes then run
 * one step at a time, and MPI needs no more than MPI_THREAD_SINGLE. */
int tool_io_threads_off(void);

/* Finalizes MPI.  Returns exit_code, or an error status where finalizing
 * fails after a run that succeeded. */
int tool_session_end(const char *program, int rank, int exit_code);

/* Rank 0: --version's line (xpose, HDF5, MPI, the backends, the
 * compressor). */
void tool_print_version(void);

#endif
