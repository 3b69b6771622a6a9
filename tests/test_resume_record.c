/* The resume record: what a run of several datasets writes reads back the
 * same (the dataset reached, the checksums of those done), a torn newest
 * slot leaves the one before readable, and a record matches another run
 * only where it should: the same paths, order and --only, at any of the
 * datasets; one written while the partial is made reads back as such. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "resume_record.h"
#include "test_util.h"

static tool_resume_record a_record(const char (*paths)[512], int count, const char *order) {
  tool_resume_record r;
  memset(&r, 0, sizeof r);
  snprintf(r.input_path, sizeof r.input_path, "/data/in.nc");
  r.input_path_hash = 0x1234;
  r.type_hash = 0x5678;
  r.input.inode = 42, r.input.size = 1000, r.input.mtime_sec = 7, r.input.ctime_sec = 8;
  snprintf(r.input.host, sizeof r.input.host, "node1");
  snprintf(r.input_dataset, sizeof r.input_dataset, "%s", paths[0]);
  snprintf(r.output_dataset, sizeof r.output_dataset, "%s", paths[0]);
  r.rows = 13, r.cols = 77;
  r.shape = (xio_shape){.ndims = 3, .split = 1, .trail = 3, .dims = {13, 7, 11}};
  r.progress.grid = (xio_pass_grid){.items = 1,
                                    .rows = 13,
                                    .cols = 77,
                                    .row_passes = 2,
                                    .col_passes = 1,
                                    .block_rows = 7,
                                    .block_cols = 77};
  tool_resume_record_set_list(&r, paths, count, order);
  return r;
}

int main(void) {
  const char paths[3][512] = {"/pr", "/psl", "/tas"}, others[3][512] = {"/pr", "/tas", "/psl"};
  char dir[] = "/tmp/xpose-record-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char path[256];
  snprintf(path, sizeof path, "%s/out.nc.xpose-resume", dir);

  /* the second of three datasets, one pass of two done */
  tool_resume_record written = a_record(paths, 3, "lat,lon,time"), read;
  written.dataset_index = 1;
  written.finished = (xio_checksums){0xaaaa, 0xbbbb};
  written.progress.passes_done = 1;
  written.progress.sums = (xio_checksums){0xcccc, 0xdddd};
  xio_error err = {""};
  EXPECT(tool_resume_record_write(path, &written, &err) == 0, "%s", err.message);
  EXPECT(tool_resume_record_read(path, &read) == 0, "no record read back");
  EXPECT(read.dataset_count == 3 && read.dataset_index == 1, "%d %d", read.dataset_count,
         read.dataset_index);
  EXPECT(read.list_hash == written.list_hash && read.order_hash == written.order_hash, "hashes");
  EXPECT(read.finished.read == 0xaaaa && read.finished.written == 0xbbbb, "finished");
  EXPECT(read.progress.passes_done == 1 && read.progress.sums.written == 0xdddd, "progress");
  EXPECT(strcmp(read.input_dataset, "/pr") == 0, "%s", read.input_dataset);

  /* a newer record torn in its slot: the one before stays readable */
  tool_resume_record newer = written;
  newer.progress.passes_done = 2;
  EXPECT(tool_resume_record_write(path, &newer, &err) == 0, "%s", err.message);
  FILE *f = fopen(path, "r+b");
  EXPECT(f != NULL, "cannot reopen %s", path);
  if (f) {
    fseek(f, (long)(newer.sequence % 2) * 4096 + 100, SEEK_SET);
    fputc('#', f);
    fclose(f);
  }
  EXPECT(tool_resume_record_read(path, &read) == 0 && read.progress.passes_done == 1, "passes %lld",
         (long long)read.progress.passes_done);

  /* the wanted run starts at the first dataset */
  tool_resume_record wanted = a_record(paths, 3, "lat,lon,time");
  EXPECT(tool_resume_record_mismatch(&read, &wanted) == NULL, "%s",
         tool_resume_record_mismatch(&read, &wanted));
  wanted = a_record(others, 3, "lat,lon,time");
  EXPECT(tool_resume_record_mismatch(&read, &wanted) != NULL, "another order of the datasets");
  wanted = a_record(paths, 2, "lat,lon,time");
  EXPECT(tool_resume_record_mismatch(&read, &wanted) != NULL, "fewer datasets");
  wanted = a_record(paths, 3, "lon,lat,time");
  const char *why = tool_resume_record_mismatch(&read, &wanted);
  EXPECT(why && strstr(why, "another order of the axes"), "%s", why ? why : "(none)");
  wanted = a_record(paths, 3, "lat,lon,time");
  wanted.input.mtime_sec = 9;
  why = tool_resume_record_mismatch(&read, &wanted);
  EXPECT(why && strstr(why, "modified"), "%s", why ? why : "(none)");

  /* one dataset, at its first: an equivalent order is its own fold's say */
  tool_resume_record one = a_record(paths, 1, "1,2,0"), same = a_record(paths, 1, "lat,lon,time");
  one.sequence = 1; /* as read: 0 is an older xpose's record */
  EXPECT(tool_resume_record_mismatch(&one, &same) == NULL, "the same fold, said otherwise");
  same.shape.split = 2;
  EXPECT(tool_resume_record_mismatch(&one, &same) != NULL, "another fold");

  /* --only is part of the run: a partial started without it is not one with it */
  tool_resume_record with_only = a_record(paths, 1, "lat,lon,time");
  with_only.only = 1;
  EXPECT(tool_resume_record_write(path, &with_only, &err) == 0, "%s", err.message);
  EXPECT(tool_resume_record_read(path, &read) == 0 && read.only == 1, "--only read back");
  why = tool_resume_record_mismatch(&read, &same);
  EXPECT(why && strstr(why, "started with --only"), "%s", why ? why : "(none)");
  with_only.only = 0;
  why = tool_resume_record_mismatch(&with_only, &one);
  EXPECT(why == NULL, "%s", why ? why : "(none)");

  /* a record made before the partial (the rest of the input still being
   * copied): read back as such, with no grid */
  tool_resume_record copying = a_record(paths, 1, "lat,lon,time");
  copying.copying = 1;
  copying.progress = (xio_progress){0};
  EXPECT(tool_resume_record_write(path, &copying, &err) == 0, "%s", err.message);
  EXPECT(tool_resume_record_read(path, &read) == 0 && read.copying == 1, "copying read back");
  EXPECT(strcmp(read.input_path, "/data/in.nc") == 0, "%s", read.input_path);

  /* chained checksums: one dataset's are its own; order matters */
  const xio_checksums x = {1, 2}, y = {3, 4}, zero = {0, 0};
  const xio_checksums one_sum = tool_checksums_chain(zero, x);
  EXPECT(one_sum.read == 1 && one_sum.written == 2, "one dataset");
  const xio_checksums xy = tool_checksums_chain(tool_checksums_chain(zero, x), y),
                      yx = tool_checksums_chain(tool_checksums_chain(zero, y), x);
  EXPECT(xy.written != yx.written && xy.read != yx.read, "swapped datasets chain alike");

  unlink(path);
  rmdir(dir);
  if (test_failures) fprintf(stderr, "%d failure(s)\n", test_failures);
  return test_failures != 0;
}
