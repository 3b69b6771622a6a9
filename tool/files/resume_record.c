#define _GNU_SOURCE /* realpath, fdatasync, st_mtim, gethostname */
#include "resume_record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "axes.h"
#include "checksum.h"
#include "output_file.h"

#define SLOT_BYTES 4096
static const char header[] = "xpose partial output, resume record 7\n";
/* An older xpose's: recognised, to say so, never resumed. */
static const char older_header[] = "xpose partial output, resume record ";

static uint64_t hash_bytes(const void *bytes, size_t size) {
  return xio_checksum_block(bytes, 1, (int64_t)size, 1, 0, 0, 1);
}

/* The rest of a line, without newlines, into a field. */
static void copy_line(char *to, size_t size, const char *from) {
  snprintf(to, size, "%s", from);
  for (char *p = to; *p; p++)
    if (*p == '\n' || *p == '\r') *p = '?';
}

int tool_input_identity_of(const char *path, tool_input_identity *id, xio_error *err) {
  memset(id, 0, sizeof *id);
  struct stat st;
  if (stat(path, &st) != 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  id->device = (uint64_t)st.st_dev;
  id->inode = (uint64_t)st.st_ino;
  id->size = (uint64_t)st.st_size;
  id->mtime_sec = (int64_t)st.st_mtim.tv_sec;
  id->mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
  id->ctime_sec = (int64_t)st.st_ctim.tv_sec;
  id->ctime_nsec = (int64_t)st.st_ctim.tv_nsec;
  if (gethostname(id->host, sizeof id->host - 1) != 0 || !id->host[0])
    snprintf(id->host, sizeof id->host, "?");
  for (char *p = id->host; *p; p++)
    if (*p == ' ' || *p == '\n' || *p == '\r') *p = '_'; /* one word in the record */
  return 0;
}

int tool_joined_inputs_hash(const char *const *paths, int count, uint64_t *hash, xio_error *err) {
  uint64_t h = 0;
  for (int i = 0; i < count; i++) {
    tool_input_identity id;
    char *absolute = realpath(paths[i], NULL);
    if (!absolute) return xio_fail(err, "%s: %s", paths[i], strerror(errno));
    h = h * 0x100000001b3ull ^ hash_bytes(absolute, strlen(absolute));
    free(absolute);
    if (tool_input_identity_of(paths[i], &id, err)) return -1;
    /* not the device: a network file system's differs from node to node */
    const int64_t fields[] = {(int64_t)id.inode, (int64_t)id.size, id.mtime_sec,
                              id.mtime_nsec,     id.ctime_sec,     id.ctime_nsec};
    h = h * 0x100000001b3ull ^ hash_bytes(fields, sizeof fields);
  }
  *hash = count > 0 && h == 0 ? 1 : h; /* 0 stands for no input joined */
  return 0;
}

const char *tool_input_identity_change(const tool_input_identity *then,
                                       const tool_input_identity *now) {
  if (then->inode != now->inode ||
      (strcmp(then->host, now->host) == 0 && then->device != now->device))
    return "it was replaced by another file";
  if (then->size != now->size) return "its size changed";
  if (then->mtime_sec != now->mtime_sec || then->mtime_nsec != now->mtime_nsec)
    return "it was modified";
  if (then->ctime_sec != now->ctime_sec || then->ctime_nsec != now->ctime_nsec)
    return "it was rewritten or its attributes changed (its status-change time moved)";
  return NULL;
}

int tool_resume_identity(const char *input_file, const xio_matrix *in, const char *output_dataset,
                         tool_resume_record *r, xio_error *err) {
  memset(r, 0, sizeof *r);
  char *absolute = realpath(input_file, NULL);
  if (!absolute) return xio_fail(err, "%s: %s", input_file, strerror(errno));
  copy_line(r->input_path, sizeof r->input_path, absolute);
  r->input_path_hash = hash_bytes(absolute, strlen(absolute));
  free(absolute);
  if (tool_input_identity_of(input_file, &r->input, err)) return -1;
  return tool_resume_identity_dataset(in, output_dataset, r, err);
}

int tool_resume_identity_dataset(const xio_matrix *in, const char *output_dataset,
                                 tool_resume_record *r, xio_error *err) {
  copy_line(r->input_dataset, sizeof r->input_dataset, in->dataset);
  copy_line(r->output_dataset, sizeof r->output_dataset, output_dataset);
  r->rows = in->rows;
  r->cols = in->cols;
  r->shape = in->shape;
  size_t encoded = 0;
  unsigned char type[1024];
  if (H5Tencode(in->type, NULL, &encoded) < 0 || encoded > sizeof type ||
      H5Tencode(in->type, type, &encoded) < 0)
    return xio_fail(err, "%s: cannot describe its datatype", in->dataset);
  r->type_hash = hash_bytes(type, encoded);
  return 0;
}

void tool_resume_record_set_list(tool_resume_record *record, const char (*paths)[512], int count,
                                 const char *order) {
  uint64_t hash = 0;
  for (int i = 0; i < count; i++)
    hash = hash * 0x100000001b3ull ^ hash_bytes(paths[i], strlen(paths[i]));
  record->dataset_count = count;
  record->list_hash = hash;
  record->order_hash = hash_bytes(order, strlen(order));
}

xio_checksums tool_checksums_chain(xio_checksums so_far, xio_checksums next) {
  const uint64_t odd = 0x9e3779b97f4a7c15ull; /* any odd factor: a bijection */
  return (xio_checksums){so_far.read * odd + next.read, so_far.written * odd + next.written};
}

static int format_slot(const tool_resume_record *r, char slot[SLOT_BYTES]) {
  memset(slot, 0, SLOT_BYTES);
  const xio_pass_grid *g = &r->progress.grid;
  int n = snprintf(
      slot, SLOT_BYTES,
      "%ssequence %" PRIu64 "\ninput_path_hash %016" PRIx64 "\njoined_inputs %016" PRIx64
      "\ninput_size %" PRIu64 "\ninput_mtime %" PRId64 ".%09" PRId64 "\ninput_ctime %" PRId64
      ".%09" PRId64 "\ninput_file %" PRIu64 " %" PRIu64 " %s\ntype_hash %016" PRIx64
      "\nshape %" PRId64 " %" PRId64 "\ngrid %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
      "\npasses_done %" PRId64 "\nchecksums %016" PRIx64 " %016" PRIx64
      "\ninput_dataset %s\noutput_dataset %s\ninput %s\n",
      header, r->sequence, r->input_path_hash, r->joined_hash, r->input.size, r->input.mtime_sec,
      r->input.mtime_nsec, r->input.ctime_sec, r->input.ctime_nsec, r->input.device, r->input.inode,
      r->input.host, r->type_hash, r->rows, r->cols, g->row_passes, g->col_passes, g->block_rows,
      g->block_cols, r->progress.passes_done, r->progress.sums.read, r->progress.sums.written,
      r->input_dataset, r->output_dataset, r->input_path);
  if (n < 0 || n >= SLOT_BYTES) return -1;
  const xio_shape *shape = &r->shape;
  n += snprintf(slot + n, (size_t)(SLOT_BYTES - n), "fold %d %d %d %d", shape->ndims, shape->lead,
                shape->split, shape->trail);
  for (int i = 0; i < shape->ndims && n < SLOT_BYTES; i++)
    n += snprintf(slot + n, (size_t)(SLOT_BYTES - n), " %" PRId64, shape->dims[i]);
  /* where each item goes: how many leading axes, the order they go in */
  n += snprintf(slot + n, (size_t)(SLOT_BYTES - n), "\nlead_order %d", shape->lead);
  for (int i = 0; i < shape->lead && n < SLOT_BYTES; i++)
    n += snprintf(slot + n, (size_t)(SLOT_BYTES - n), " %d", xio_shape_source_axis(shape, i));
  if (n + 200 >= SLOT_BYTES) return -1;
  n += snprintf(slot + n, (size_t)(SLOT_BYTES - n),
                "\nvariables %d %d %016" PRIx64 " %016" PRIx64 "\nfinished %016" PRIx64
                " %016" PRIx64 "\nmove %d %016" PRIx64 " %016" PRIx64 "\nonly %d\ncopying %d\n",
                r->dataset_count, r->dataset_index, r->list_hash, r->order_hash, r->finished.read,
                r->finished.written, r->move, r->first_read, r->source_sum, r->only, r->copying);
  n += snprintf(slot + n, (size_t)(SLOT_BYTES - n), "check %016" PRIx64 "\n",
                hash_bytes(slot, (size_t)n));
  return 0;
}

/* The value after "key " on its own line, or NULL. */
static const char *field(const char *text, const char *key) {
  const size_t length = strlen(key);
  for (const char *line = text; line && *line;
       line = strchr(line, '\n'), line = line ? line + 1 : NULL)
    if (strncmp(line, key, length) == 0 && line[length] == ' ') return line + length + 1;
  return NULL;
}

static void rest_of_line(char *to, size_t size, const char *value) {
  const size_t length = value ? strcspn(value, "\n") : 0;
  snprintf(to, size, "%.*s", (int)length, value ? value : "");
}

static int parse_slot(const char slot[SLOT_BYTES], tool_resume_record *r) {
  char text[SLOT_BYTES + 1];
  memcpy(text, slot, SLOT_BYTES);
  text[SLOT_BYTES] = '\0';
  if (strncmp(text, header, sizeof header - 1) != 0) {
    if (strncmp(text, older_header, sizeof older_header - 1) != 0) return -1;
    memset(r, 0, sizeof *r); /* version 0: an older xpose's */
    return 0;
  }
  char *check = strstr(text, "\ncheck ");
  uint64_t stored = 0;
  if (!check || sscanf(check + 7, "%" SCNx64, &stored) != 1 ||
      stored != hash_bytes(text, (size_t)(check + 1 - text)))
    return -1;
  memset(r, 0, sizeof *r);
  xio_pass_grid *g = &r->progress.grid;
  const char *v;
  if (!(v = field(text, "sequence")) || sscanf(v, "%" SCNu64, &r->sequence) != 1 ||
      !(v = field(text, "input_path_hash")) || sscanf(v, "%" SCNx64, &r->input_path_hash) != 1 ||
      !(v = field(text, "input_size")) || sscanf(v, "%" SCNu64, &r->input.size) != 1 ||
      !(v = field(text, "input_mtime")) ||
      sscanf(v, "%" SCNd64 ".%" SCNd64, &r->input.mtime_sec, &r->input.mtime_nsec) != 2 ||
      !(v = field(text, "input_ctime")) ||
      sscanf(v, "%" SCNd64 ".%" SCNd64, &r->input.ctime_sec, &r->input.ctime_nsec) != 2 ||
      !(v = field(text, "input_file")) ||
      sscanf(v, "%" SCNu64 " %" SCNu64 " %255s", &r->input.device, &r->input.inode,
             r->input.host) != 3 ||
      !(v = field(text, "type_hash")) || sscanf(v, "%" SCNx64, &r->type_hash) != 1 ||
      !(v = field(text, "shape")) || sscanf(v, "%" SCNd64 " %" SCNd64, &r->rows, &r->cols) != 2 ||
      !(v = field(text, "grid")) ||
      sscanf(v, "%" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64, &g->row_passes, &g->col_passes,
             &g->block_rows, &g->block_cols) != 4 ||
      !(v = field(text, "passes_done")) || sscanf(v, "%" SCNd64, &r->progress.passes_done) != 1 ||
      !(v = field(text, "checksums")) ||
      sscanf(v, "%" SCNx64 " %" SCNx64, &r->progress.sums.read, &r->progress.sums.written) != 2)
    return -1;
  xio_shape *shape = &r->shape;
  int used = 0;
  if (!(v = field(text, "fold")) ||
      sscanf(v, "%d %d %d %d%n", &shape->ndims, &shape->lead, &shape->split, &shape->trail,
             &used) != 4 ||
      shape->ndims < 2 || shape->ndims > XIO_MAX_DIMS ||
      !(0 <= shape->lead && shape->lead < shape->split && shape->split < shape->trail &&
        shape->trail <= shape->ndims))
    return -1;
  for (int i = 0; i < shape->ndims; i++) {
    int more = 0;
    if (sscanf(v + used, " %" SCNd64 "%n", &shape->dims[i], &more) != 1) return -1;
    used += more;
  }
  int lead_order[XIO_MAX_DIMS];
  unsigned seen = 0; /* each leading axis once */
  int leading = 0;
  used = 0;
  if (!(v = field(text, "lead_order")) || sscanf(v, "%d%n", &leading, &used) != 1 ||
      leading != shape->lead)
    return -1;
  for (int i = 0; i < shape->lead; i++) {
    int more = 0;
    if (sscanf(v + used, " %d%n", &lead_order[i], &more) != 1 || lead_order[i] < 0 ||
        lead_order[i] >= shape->lead || (seen >> lead_order[i] & 1u))
      return -1;
    seen |= 1u << lead_order[i], used += more;
  }
  xio_shape_set_lead_order(shape, shape->lead, lead_order);
  if (!(v = field(text, "variables")) ||
      sscanf(v, "%d %d %" SCNx64 " %" SCNx64, &r->dataset_count, &r->dataset_index, &r->list_hash,
             &r->order_hash) != 4 ||
      r->dataset_index < 0 || r->dataset_index >= r->dataset_count ||
      !(v = field(text, "finished")) ||
      sscanf(v, "%" SCNx64 " %" SCNx64, &r->finished.read, &r->finished.written) != 2 ||
      !(v = field(text, "move")) ||
      sscanf(v, "%d %" SCNx64 " %" SCNx64, &r->move, &r->first_read, &r->source_sum) != 3 ||
      r->move < 0 || r->move >= TOOL_MAX_MOVES)
    return -1;
  /* records from before joins say none: one input */
  if ((v = field(text, "joined_inputs")) && sscanf(v, "%" SCNx64, &r->joined_hash) != 1) return -1;
  r->only = -1; /* not said */
  if ((v = field(text, "only")) && (sscanf(v, "%d", &r->only) != 1 || r->only < 0 || r->only > 1))
    return -1;
  rest_of_line(r->input_dataset, sizeof r->input_dataset, field(text, "input_dataset"));
  rest_of_line(r->output_dataset, sizeof r->output_dataset, field(text, "output_dataset"));
  rest_of_line(r->input_path, sizeof r->input_path, field(text, "input"));
  if ((v = field(text, "copying")) && sscanf(v, "%d", &r->copying) != 1) return -1;
  if (r->copying) { /* no pass yet: no grid to check */
    r->progress = (xio_progress){0};
    return 0;
  }
  /* One grid for each position of the leading axes (h5_matrix.h's items) */
  g->items = 1;
  for (int i = 0; i < shape->lead && r->rows && r->cols; i++) g->items *= shape->dims[i];
  if (g->items < 1 || r->rows % g->items != 0) return -1;
  g->rows = r->rows / g->items;
  g->cols = r->cols;
  /* A grid as xio_pass_grid_plan makes them, and progress within it. */
  if (!xio_pass_grid_valid(g) || r->progress.passes_done < 0 ||
      r->progress.passes_done > xio_pass_count(g))
    return -1;
  return 0;
}

int tool_resume_record_read(const char *path, tool_resume_record *record) {
  char slots[2][SLOT_BYTES] = {{0}};
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t got = pread(fd, slots, sizeof slots, 0); /* slot 1 alone: a hole before it */
  close(fd);
  if (got < (ssize_t)SLOT_BYTES) return -1;
  tool_resume_record candidate;
  int found = 0;
  for (int i = 0; i < 2; i++)
    if (parse_slot(slots[i], &candidate) == 0 &&
        (!found || candidate.sequence > record->sequence)) {
      *record = candidate;
      found = 1;
    }
  return found ? 0 : -1;
}

int tool_resume_record_write(const char *path, tool_resume_record *record, xio_error *err) {
  tool_resume_record newest;
  record->sequence = tool_resume_record_read(path, &newest) == 0 ? newest.sequence + 1 : 1;
  char slot[SLOT_BYTES];
  if (format_slot(record, slot))
    return xio_fail(err, "internal: the resume record %s does not fit its slot", path);
  const int created = access(path, F_OK) != 0;
  const int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return xio_fail(err, "%s: %s", path, strerror(errno));
  int rc = 0;
  const ssize_t wrote = pwrite(fd, slot, sizeof slot, (off_t)(record->sequence % 2) * SLOT_BYTES);
  if (wrote != (ssize_t)sizeof slot)
    rc = xio_fail(err, "writing the resume record %s: %s", path,
                  wrote < 0 ? strerror(errno) : "short write");
  else if (fdatasync(fd) != 0 && errno != EINVAL)
    rc = xio_fail(err, "syncing the resume record %s: %s", path, strerror(errno));
  if (close(fd) != 0 && rc == 0) rc = xio_fail(err, "closing %s: %s", path, strerror(errno));
  if (rc == 0 && created) rc = tool_sync_parent(path, err); /* its name too */
  return rc;
}

/* Whether a's and b's transposes order their leading axes alike. */
static int same_lead_order(const xio_shape *a, const xio_shape *b) {
  int same = a->lead == b->lead;
  for (int i = 0; same && i < a->lead; i++)
    same = xio_shape_source_axis(a, i) == xio_shape_source_axis(b, i);
  return same;
}

const char *tool_resume_record_mismatch(const tool_resume_record *found,
                                        const tool_resume_record *wanted) {
  if (found->sequence == 0)
    return "it was written by an older xpose, whose record this one does not read";
  if (found->input_path_hash != wanted->input_path_hash)
    return "it was started from another input file";
  if (found->joined_hash != wanted->joined_hash)
    return found->joined_hash && wanted->joined_hash
               ? "it was started from other inputs joined, in another order, or one of them "
                 "changed since"
               : "it was started from another number of inputs";
  if (found->dataset_count != wanted->dataset_count || found->list_hash != wanted->list_hash)
    return found->dataset_count > 1 || wanted->dataset_count > 1
               ? "it was started for another set of datasets"
               : "it was started from another dataset";
  if (found->only >= 0 && found->only != wanted->only)
    return found->only ? "it was started with --only, which writes the rearranged datasets "
                         "alone: add --only to continue it"
                       : "it was started without --only, with the rest of the input: leave "
                         "out --only to continue it";
  static char why[160];
  const char *change = tool_input_identity_change(&found->input, &wanted->input);
  if (change) {
    snprintf(why, sizeof why, "the input file changed since it was started: %s", change);
    return why;
  }
  /* At another of the run's datasets, or moves: the same file, paths and
   * order make it the same run; resuming checks that partial output. */
  if (found->dataset_index != wanted->dataset_index || found->move != wanted->move)
    return found->order_hash != wanted->order_hash ? "it was started for another order of the axes"
                                                   : NULL;
  if (strcmp(found->input_dataset, wanted->input_dataset) != 0)
    return "it was started from another dataset";
  if (found->type_hash != wanted->type_hash || !xio_shape_same_dims(&found->shape, &wanted->shape))
    return "it holds another shape or datatype";
  if (found->shape.lead != wanted->shape.lead || found->shape.split != wanted->shape.split ||
      found->shape.trail != wanted->shape.trail || found->rows != wanted->rows ||
      found->cols != wanted->cols || !same_lead_order(&found->shape, &wanted->shape))
    return "it was started for another order of the axes";
  if (strcmp(found->output_dataset, wanted->output_dataset) != 0)
    return "it was started for another output dataset";
  return NULL;
}
