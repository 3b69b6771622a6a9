#include "axes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_AXES = TOOL_MAX_AXES };

void tool_axes_describe(int ndims, const char *const *names, const long long *dims, char *text,
                        size_t size) {
  int named = 1;
  for (int i = 0; i < ndims; i++) named = named && names && names[i] && names[i][0];
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; named && i < ndims && used < size; i++)
    used += (size_t)snprintf(text + used, size - used, "%s%s", i ? " x " : "", names[i]);
  if (named && used < size) used += (size_t)snprintf(text + used, size - used, " (");
  for (int i = 0; i < ndims && used < size; i++)
    used += (size_t)snprintf(text + used, size - used, "%s%lld", i ? " x " : "", dims[i]);
  if (named && used < size) snprintf(text + used, size - used, ")");
}

/* The axis numbers of --axes' comma-separated list; -1 with the message
 * in error. */
static int parse_axes(const char *list, int ndims, int *order, const char *shown, char *error,
                      size_t size) {
  int count = 0;
  const char *p = list;
  while (1) {
    const size_t length = strcspn(p, ",");
    char item[256];
    snprintf(item, sizeof item, "%.*s", (int)(length < 255 ? length : 255), p);
    char *end = NULL;
    const long value = strtol(item, &end, 10);
    if (!item[0] || *end || value < 0 || value >= ndims) {
      snprintf(error, size, "--axes %s: '%s' is not an axis of %s (0 to %d)", list, item, shown,
               ndims - 1);
      return -1;
    }
    if (count == ndims) {
      snprintf(error, size, "--axes %s names more axes than %s has (%d)", list, shown, ndims);
      return -1;
    }
    for (int i = 0; i < count; i++)
      if (order[i] == (int)value) {
        snprintf(error, size, "--axes %s names axis '%s' twice", list, item);
        return -1;
      }
    order[count++] = (int)value;
    if (!p[length]) break;
    p += length + 1;
  }
  if (count != ndims) {
    snprintf(error, size, "--axes %s names %d axes; %s has %d: name each once", list, count, shown,
             ndims);
    return -1;
  }
  return 0;
}

int tool_axes_next_name(const char **p, char *item, size_t size) {
  if (!*p) return 0;
  const size_t length = strcspn(*p, ",");
  snprintf(item, size, "%.*s", (int)(length < size - 1 ? length : size - 1), *p);
  *p = (*p)[length] ? *p + length + 1 : NULL;
  return 1;
}

int tool_axes_by_names(int ndims, const char *const *names, const char *dims, int *order) {
  int places[MAX_AXES], named = 0; /* the input axes dims names, in the input's order */
  int moved[MAX_AXES], count = 0;  /* the same in dims' order */
  for (int i = 0; i < ndims; i++) order[i] = i;
  const char *p = dims;
  char item[256];
  while (tool_axes_next_name(&p, item, sizeof item))
    for (int i = 0; i < ndims && count < MAX_AXES; i++)
      if (names[i] && names[i][0] && strcmp(names[i], item) == 0) {
        moved[count++] = i;
        break;
      }
  for (int i = 0; i < ndims; i++)
    for (int k = 0; k < count; k++)
      if (moved[k] == i) {
        places[named++] = i;
        break;
      }
  for (int k = 0; k < named; k++) order[places[k]] = moved[k];
  return named;
}

int tool_axes_check_names(const char *dims, char *error, size_t error_size) {
  const char *p = dims, *q;
  char item[256], other[256];
  for (int index = 0; tool_axes_next_name(&p, item, sizeof item); index++) {
    if (!item[0]) {
      snprintf(error, error_size, "--dims %s: an empty name", dims);
      return -1;
    }
    q = dims;
    for (int k = 0; k < index && tool_axes_next_name(&q, other, sizeof other); k++)
      if (strcmp(item, other) == 0) {
        snprintf(error, error_size, "--dims %s names '%s' twice", dims, item);
        return -1;
      }
  }
  return 0;
}

/* ---- orders of several moves ---- */

/* The search tries every sequence of up to TOOL_MAX_MOVES moves, over
 * groups of axes: (n + 1)^3 / 6 folds each, 10.6 million sequences of 3
 * for 10 groups.  Of up to 6 groups it also tries every order of the
 * groups in front (79 moves each for 6 groups: 0.5 million sequences of
 * 3); more would take seconds. */
enum { MAX_SEARCHED_GROUPS = 10, MAX_REORDERED_GROUPS = 6 };

/* A move of groups: [0, l) in the order perm gives, then [s, t), [l, s),
 * [t, n). */
typedef struct {
  int l, s, t, reordered;
  int perm[MAX_AXES];
} group_move;

static void apply_move(int n, const int *from, const group_move *m, int *to) {
  int k = 0;
  for (int i = 0; i < m->l; i++) to[k++] = from[m->perm[i]];
  for (int i = m->s; i < m->t; i++) to[k++] = from[i];
  for (int i = m->l; i < m->s; i++) to[k++] = from[i];
  for (int i = m->t; i < n; i++) to[k++] = from[i];
}

int tool_axes_next_order(int *p, int n) {
  int i = n - 2;
  while (i >= 0 && p[i] > p[i + 1]) i--;
  if (i < 0) return 0;
  int j = n - 1;
  while (p[j] < p[i]) j--;
  int swap = p[i];
  p[i] = p[j], p[j] = swap;
  for (int a = i + 1, b = n - 1; a < b; a++, b--) swap = p[a], p[a] = p[b], p[b] = swap;
  return 1;
}

/* The search for an order's moves, over groups of axes. */
typedef struct {
  int n, target[MAX_AXES];
  double length[MAX_AXES]; /* of each group (by input position): its values */
  int found, best_reordered;
  group_move best[TOOL_MAX_MOVES], moves[TOOL_MAX_MOVES];
  double best_element, best_items;
} move_search;

/* The most matrices (items) of any of the moves in s->moves (depth of
 * them), from the input's arrangement, the last one's element (its
 * values), and how many reorder the groups in front. */
static void move_costs(const move_search *s, int depth, double *element, double *items,
                       int *reordered) {
  int now[MAX_AXES], next[MAX_AXES];
  for (int g = 0; g < s->n; g++) now[g] = g;
  *element = *items = 0, *reordered = 0;
  for (int k = 0; k < depth && k < TOOL_MAX_MOVES; k++) {
    const group_move *m = &s->moves[k];
    double inside = 1, lead = 1;
    for (int p = m->t; p < s->n; p++) inside *= s->length[now[p]];
    for (int p = 0; p < m->l; p++) lead *= s->length[now[p]];
    *element = inside;
    if (lead > *items) *items = lead;
    *reordered += m->reordered;
    apply_move(s->n, now, m, next);
    memcpy(now, next, sizeof *now * (size_t)s->n);
  }
}

/* Depth-first, every sequence of `depth` more moves from `now` (the
 * moves before it in s->moves[0, level)): of those that reach the target,
 * the first of fewest matrices (each takes passes of its own, and the
 * output's chunks are one value thick along the axes in front), then of
 * the smallest element in the last move (which writes the output, its
 * chunks shaped by that move's passes), then of fewest reorderings.
 * Measured on the 2-core VM, 365 x 8 x 90 x 180 float32 compressed:
 * (lat, lev, lon, time) took 4.2 s as one 8 x 90 matrix of lon x time
 * elements, 5.0 s as 90 matrices of single values; reversed, 4.2 s with
 * single values in the last move, 6.0 s with time in each element there
 * (the other moves' elements, in uncompressed scratch files, cost little
 * either way). */
static void find_moves(move_search *s, const int *now, int level, int depth) {
  if (depth == 0) {
    if (memcmp(now, s->target, sizeof *now * (size_t)s->n) != 0) return;
    double element, items;
    int reordered;
    move_costs(s, level, &element, &items, &reordered);
    if (!s->found || items < s->best_items ||
        (items == s->best_items &&
         (element < s->best_element ||
          (element == s->best_element && reordered < s->best_reordered)))) { /* ties: the first */
      s->found = 1, s->best_element = element, s->best_items = items;
      s->best_reordered = reordered;
      memcpy(s->best, s->moves, sizeof s->best);
    }
    return;
  }
  int next[MAX_AXES];
  group_move *m = &s->moves[level];
  for (m->l = 0; m->l < s->n; m->l++)
    for (m->s = m->l + 1; m->s < s->n; m->s++)
      for (m->t = m->s + 1; m->t <= s->n; m->t++) {
        for (int i = 0; i < m->l; i++) m->perm[i] = i;
        do {
          m->reordered = 0;
          for (int i = 0; i < m->l; i++) m->reordered |= m->perm[i] != i;
          apply_move(s->n, now, m, next);
          find_moves(s, next, level + 1, depth - 1);
        } while (s->n <= MAX_REORDERED_GROUPS && tool_axes_next_order(m->perm, m->l));
      }
}

int tool_axes_moves(int ndims, const int *order, const int64_t *dims, int max_moves,
                    tool_move *moves) {
  if (max_moves > TOOL_MAX_MOVES) max_moves = TOOL_MAX_MOVES;
  /* Axes that stay next to each other move together: one group each run
   * of them, numbered in input order. */
  int group_of[MAX_AXES], size[MAX_AXES], groups = 0;
  for (int i = 0; i < ndims; i++) {
    if (i == 0 || order[i] != order[i - 1] + 1) size[groups++] = 0;
    group_of[order[i]] = groups - 1;
    size[groups - 1]++;
  }
  move_search search = {0};
  int start[MAX_AXES], rank_of[MAX_AXES], group_size[MAX_AXES], n = 0;
  for (int a = 0; a < ndims; a++) /* groups in input order */
    if (a == 0 || group_of[a] != group_of[a - 1]) rank_of[group_of[a]] = n++;
  for (int g = 0; g < n; g++) start[g] = g, search.length[g] = 1;
  for (int g = 0; g < n; g++) group_size[rank_of[g]] = size[g], search.target[g] = rank_of[g];
  for (int a = 0; dims && a < ndims; a++) search.length[rank_of[group_of[a]]] *= (double)dims[a];
  if (n > MAX_SEARCHED_GROUPS) return -1;
  search.n = n;
  int depth = 0;
  while (depth <= max_moves && (find_moves(&search, start, 0, depth), !search.found)) depth++;
  if (!search.found) return -1;
  /* back to axis positions of the dataset each move starts from */
  int now[MAX_AXES], next[MAX_AXES];
  memcpy(now, start, sizeof *now * (size_t)n);
  for (int k = 0; k < depth; k++) {
    const group_move *found = &search.best[k];
    int first_axis[MAX_AXES + 1]; /* of each group position */
    first_axis[0] = 0;
    for (int p = 0; p < n; p++) first_axis[p + 1] = first_axis[p] + group_size[now[p]];
    tool_move *move = &moves[k];
    move->lead = first_axis[found->l];
    move->split = first_axis[found->s];
    move->trail = first_axis[found->t];
    move->rechunk = 0;
    memset(move->lead_order, 0, sizeof move->lead_order);
    for (int i = 0, axis = 0; i < found->l; i++)
      for (int a = first_axis[found->perm[i]]; a < first_axis[found->perm[i] + 1]; a++)
        move->lead_order[axis++] = a;
    apply_move(n, now, found, next);
    memcpy(now, next, sizeof *now * (size_t)n);
  }
  return depth;
}

tool_move tool_rechunk_move(int ndims) {
  return (tool_move){.lead = 0, .split = 1, .trail = ndims, .rechunk = 1};
}

int tool_axes_plan(int ndims, const char *const *names, const int64_t *lengths, const char *axes,
                   const char *dims, tool_rechunk rechunk, const char *shown, int *order,
                   tool_move *moves, char *error, size_t error_size) {
  if (ndims < 2 || ndims > MAX_AXES) {
    snprintf(error, error_size, "%s has %d axes", shown, ndims);
    return -1;
  }
  const int own_order = rechunk == TOOL_RECHUNK_BY_DEFAULT && !axes && !dims;
  for (int i = 0; i < ndims; i++) order[i] = own_order ? i : ndims - 1 - i; /* numpy's .T */
  if (axes && parse_axes(axes, ndims, order, shown, error, error_size)) return -1;
  if (dims && tool_axes_check_names(dims, error, error_size)) return -1;
  if (dims && tool_axes_by_names(ndims, names, dims, order) == 0) {
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < ndims && used < sizeof known; i++)
      used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? "," : "",
                               names[i] && names[i][0] ? names[i] : "(unnamed)");
    snprintf(error, error_size, "--dims %s names no axis of %s (its axes: %s)", dims, shown, known);
    return -1;
  }
  const int count = tool_axes_moves(ndims, order, lengths, TOOL_MAX_MOVES, moves);
  const char *option = axes ? "axes" : "dims", *list = axes ? axes : dims;
  if (count == 0 && rechunk != TOOL_RECHUNK_NEVER) {
    moves[0] = tool_rechunk_move(ndims);
    return 1;
  }
  if (count == 0)
    snprintf(error, error_size,
             "--%s %s keeps every axis of %s in place: nothing to transpose (to rechunk it, "
             "give the output's chunks: --chunks or --layout chunked=AxBx...)",
             option, list, shown);
  else if (count < 0 && !axes && !dims)
    snprintf(error, error_size,
             "reversing the %d axes of %s takes more than %d moves: give the "
             "output's axis order with --dims (by name) or --axes (by number)",
             ndims, shown, TOOL_MAX_MOVES);
  else if (count < 0)
    snprintf(error, error_size,
             "--%s %s takes more than %d moves of a run of adjacent axes in front of the run "
             "before it (the axes around both staying), which is as many as xpose chains",
             option, list, TOOL_MAX_MOVES);
  return count > 0 ? count : -1;
}
