#include "log.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

static xpose_log_fn log_handler;
static void *log_user_data;

void xpose_set_log_handler(xpose_log_fn handler, void *user_data) {
  log_handler = handler;
  log_user_data = user_data;
}

int xpose_log_enabled(void) { return log_handler != NULL; }

void xpose_logf(xpose_log_level level, const char *file, int line, const char *format, ...) {
  if (!log_handler) return;
  char message[1024];
  int used = 0;
  if (file) used = snprintf(message, sizeof message, "%s:%d: ", file, line);
  if (used < 0 || (size_t)used >= sizeof message) used = 0;
  va_list args;
  va_start(args, format);
  vsnprintf(message + used, sizeof message - (size_t)used, format, args);
  va_end(args);
  log_handler(level, message, log_user_data);
}

void xpose_log_mpi_error(const char *file, int line, const char *call, int mpi_error) {
  if (!xpose_log_enabled()) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(mpi_error, text, &length) != MPI_SUCCESS) length = 0;
  text[length] = '\0';
  xpose_logf(XPOSE_LOG_ERROR, file, line, "%s failed: %s", call,
             length ? text : "unknown MPI error");
}
