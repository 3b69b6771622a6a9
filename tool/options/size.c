#include "size.h"

#include <ctype.h>
#include <stdio.h>
#include <strings.h>

static int unit_shift(const char *unit, int *shift) {
  static const struct {
    const char *names[3];
    int shift;
  } units[] = {{{"", "B", NULL}, 0},
               {{"K", "KB", "KiB"}, 10},
               {{"M", "MB", "MiB"}, 20},
               {{"G", "GB", "GiB"}, 30},
               {{"T", "TB", "TiB"}, 40}};
  for (size_t u = 0; u < sizeof units / sizeof *units; u++)
    for (int n = 0; n < 3 && units[u].names[n]; n++)
      if (strcasecmp(unit, units[u].names[n]) == 0) {
        *shift = units[u].shift;
        return 0;
      }
  return -1;
}

int tool_parse_size(const char *text, uint64_t *bytes) {
  uint64_t whole = 0, frac = 0, frac_scale = 1;
  const char *p = text;
  if (!isdigit((unsigned char)*p)) return -1;
  for (; isdigit((unsigned char)*p); p++) {
    const uint64_t digit = (uint64_t)(*p - '0');
    if (whole > (UINT64_MAX - digit) / 10) return -1;
    whole = whole * 10 + digit;
  }
  if (*p == '.') {
    p++;
    if (!isdigit((unsigned char)*p)) return -1;
    for (; isdigit((unsigned char)*p); p++)
      if (frac_scale < 1000000000u) { /* nine digits are plenty */
        frac = frac * 10 + (uint64_t)(*p - '0');
        frac_scale *= 10;
      }
  }
  int shift;
  if (unit_shift(p, &shift) != 0) return -1;
  if (shift > 0 && whole > (UINT64_MAX >> shift)) return -1;
  const uint64_t value = (whole << shift) + ((frac << shift) / frac_scale);
  if (value == 0) return -1;
  *bytes = value;
  return 0;
}

int tool_parse_count(const char *text, int64_t *value) {
  int64_t v = 0;
  if (!isdigit((unsigned char)*text)) return -1;
  for (const char *p = text; *p; p++) {
    if (!isdigit((unsigned char)*p)) return -1;
    const int digit = *p - '0';
    if (v > (INT64_MAX - digit) / 10) return -1;
    v = v * 10 + digit;
  }
  if (v <= 0) return -1;
  *value = v;
  return 0;
}

void tool_format_bytes(uint64_t bytes, char *text, size_t text_size) {
  static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = (double)bytes;
  while (v >= 1024.0 && u < 6) v /= 1024.0, u++;
  if (u == 0)
    snprintf(text, text_size, "%llu B", (unsigned long long)bytes);
  else
    snprintf(text, text_size, "%.2f %s", v, names[u]);
}
