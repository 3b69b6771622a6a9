/* Internal logging: routes messages to the handler set by xpose_set_log_handler. */
#ifndef XPOSE_LOG_H
#define XPOSE_LOG_H

#include "xpose.h"

#if defined(__GNUC__)
#define XPOSE_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define XPOSE_PRINTF(fmt, args)
#endif

/* True when a handler is installed (skip building messages otherwise). */
int xpose_log_enabled(void);

/* Errors and warnings carry file:line; pass NULL file to leave it out. */
void xpose_logf(xpose_log_level level, const char *file, int line, const char *format, ...)
    XPOSE_PRINTF(4, 5);

/* Logs an MPI error code with its MPI_Error_string. */
void xpose_log_mpi_error(const char *file, int line, const char *call, int mpi_error);

#endif
