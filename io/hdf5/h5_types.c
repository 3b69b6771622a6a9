#include "h5_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unreadable(char *why, size_t why_size) {
  snprintf(why, why_size, "a datatype HDF5 cannot describe");
  return -1;
}

/* Checks a part of a type (an array's base, a compound's member) and
 * releases it. */
static int check_part(hid_t part, char *why, size_t why_size) {
  if (part < 0) return unreadable(why, why_size);
  const int rc = xio_type_check_fixed(part, why, why_size);
  return H5Tclose(part) < 0 ? unreadable(why, why_size) : rc;
}

int xio_type_check_fixed(hid_t type, char *why, size_t why_size) {
  switch (H5Tget_class(type)) {
    case H5T_VLEN: snprintf(why, why_size, "variable-length sequences"); return -1;
    case H5T_REFERENCE:
      snprintf(why, why_size, "references, which point into the input file");
      return -1;
    case H5T_STRING:
      if (H5Tis_variable_str(type) > 0) {
        snprintf(why, why_size, "variable-length strings");
        return -1;
      }
      return 0;
    case H5T_ARRAY: return check_part(H5Tget_super(type), why, why_size);
    case H5T_COMPOUND: {
      const int n = H5Tget_nmembers(type);
      if (n < 0) return unreadable(why, why_size);
      for (int i = 0; i < n; i++)
        if (check_part(H5Tget_member_type(type, (unsigned)i), why, why_size)) return -1;
      return 0;
    }
    case H5T_NO_CLASS:
    case H5T_NCLASSES: snprintf(why, why_size, "an unknown datatype class"); return -1;
    default: return 0; /* integer, float, time, bitfield, opaque, enum */
  }
}

int xio_type_has_reference(hid_t type) { return H5Tdetect_class(type, H5T_REFERENCE) > 0; }

int xio_type_is_variable_length(hid_t type) {
  char why[128];
  return xio_type_check_fixed(type, why, sizeof why) != 0 && !xio_type_has_reference(type);
}

/* Part of a type, compared and released. */
static int same_part(hid_t part, const void *a, const void *b) {
  if (part < 0) return 0;
  const int same = xio_type_same_values(part, a, b);
  return H5Tclose(part) < 0 ? 0 : same;
}

int xio_type_same_values(hid_t type, const void *a, const void *b) {
  const size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_STRING:
      if (H5Tis_variable_str(type) > 0) {
        const char *x = *(const char *const *)a, *y = *(const char *const *)b;
        return x == y || (x && y && strcmp(x, y) == 0);
      }
      return memcmp(a, b, size) == 0;
    case H5T_VLEN: {
      const hvl_t *x = a, *y = b;
      if (x->len != y->len) return 0;
      hid_t base = H5Tget_super(type);
      const size_t step = base >= 0 ? H5Tget_size(base) : 0;
      int same = base >= 0 && step > 0;
      for (size_t i = 0; same && i < x->len; i++)
        same = xio_type_same_values(base, (const char *)x->p + i * step,
                                    (const char *)y->p + i * step);
      if (base >= 0 && H5Tclose(base) < 0) same = 0;
      return same;
    }
    case H5T_ARRAY: {
      hid_t base = H5Tget_super(type);
      const size_t step = base >= 0 ? H5Tget_size(base) : 0;
      int same = base >= 0 && step > 0;
      for (size_t i = 0; same && i < size / step; i++)
        same = xio_type_same_values(base, (const char *)a + i * step, (const char *)b + i * step);
      if (base >= 0 && H5Tclose(base) < 0) same = 0;
      return same;
    }
    case H5T_COMPOUND: {
      const int n = H5Tget_nmembers(type);
      int same = n >= 0;
      for (int i = 0; same && i < n; i++) {
        const size_t at = H5Tget_member_offset(type, (unsigned)i);
        same = same_part(H5Tget_member_type(type, (unsigned)i), (const char *)a + at,
                         (const char *)b + at);
      }
      return same;
    }
    default: return memcmp(a, b, size) == 0;
  }
}

static const char *order_name(hid_t type) {
  return H5Tget_order(type) == H5T_ORDER_BE ? "BE" : "LE";
}

void xio_type_describe(hid_t type, char *text, size_t text_size) {
  const size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      snprintf(text, text_size, "%s%zu %s", H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int",
               bits, order_name(type));
      return;
    case H5T_FLOAT: snprintf(text, text_size, "float%zu %s", bits, order_name(type)); return;
    case H5T_STRING: snprintf(text, text_size, "string[%zu]", bits / 8); return;
    case H5T_OPAQUE: snprintf(text, text_size, "opaque[%zu]", bits / 8); return;
    case H5T_BITFIELD: snprintf(text, text_size, "bitfield%zu %s", bits, order_name(type)); return;
    case H5T_ENUM: snprintf(text, text_size, "enum (%zu bytes)", bits / 8); return;
    case H5T_ARRAY: snprintf(text, text_size, "array (%zu bytes)", bits / 8); return;
    case H5T_COMPOUND: {
      size_t used = (size_t)snprintf(text, text_size, "compound{");
      const int n = H5Tget_nmembers(type);
      for (int i = 0; i < n && used < text_size; i++) {
        char *name = H5Tget_member_name(type, (unsigned)i);
        hid_t member = H5Tget_member_type(type, (unsigned)i);
        char inner[128] = "?";
        if (member >= 0) xio_type_describe(member, inner, sizeof inner);
        used += (size_t)snprintf(text + used, text_size - used, "%s%s: %s", i ? ", " : "",
                                 name ? name : "?", inner);
        /* A description for messages: what cannot be released is only leaked. */
        if (member >= 0) (void)H5Tclose(member);
        if (name) (void)H5free_memory(name);
      }
      if (used < text_size) snprintf(text + used, text_size - used, "}");
      return;
    }
    default: snprintf(text, text_size, "%zu-byte elements", bits / 8); return;
  }
}

static hid_t complex_type(hid_t part) {
  const size_t size = H5Tget_size(part);
  hid_t type = H5Tcreate(H5T_COMPOUND, 2 * size);
  if (type >= 0 && (H5Tinsert(type, "r", 0, part) < 0 || H5Tinsert(type, "i", size, part) < 0)) {
    (void)H5Tclose(type); /* failing already */
    return H5I_INVALID_HID;
  }
  return type;
}

hid_t xio_type_from_name(const char *name, int big_endian) {
  static const char *const names[] = {"i8",  "u8",  "i16", "u16", "i32",
                                      "u32", "i64", "u64", "f32", "f64"};
  /* The H5T_* constants are not compile-time constants: look them up here. */
  const hid_t le[] = {H5T_STD_I8LE,  H5T_STD_U8LE,  H5T_STD_I16LE, H5T_STD_U16LE,  H5T_STD_I32LE,
                      H5T_STD_U32LE, H5T_STD_I64LE, H5T_STD_U64LE, H5T_IEEE_F32LE, H5T_IEEE_F64LE};
  const hid_t be[] = {H5T_STD_I8BE,  H5T_STD_U8BE,  H5T_STD_I16BE, H5T_STD_U16BE,  H5T_STD_I32BE,
                      H5T_STD_U32BE, H5T_STD_I64BE, H5T_STD_U64BE, H5T_IEEE_F32BE, H5T_IEEE_F64BE};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (strcmp(name, names[i]) == 0) return H5Tcopy(big_endian ? be[i] : le[i]);
  if (strcmp(name, "c64") == 0) return complex_type(big_endian ? H5T_IEEE_F32BE : H5T_IEEE_F32LE);
  if (strcmp(name, "c128") == 0) return complex_type(big_endian ? H5T_IEEE_F64BE : H5T_IEEE_F64LE);
  if ((name[0] == 's' || name[0] == 'o') && name[1] >= '1' && name[1] <= '9') {
    char *end;
    const unsigned long size = strtoul(name + 1, &end, 10);
    if (*end || size > (1u << 20)) return H5I_INVALID_HID;
    hid_t type = H5Tcreate(name[0] == 's' ? H5T_STRING : H5T_OPAQUE, size);
    if (type >= 0 && name[0] == 's' && H5Tset_strpad(type, H5T_STR_NULLPAD) < 0) {
      (void)H5Tclose(type); /* failing already */
      return H5I_INVALID_HID;
    }
    return type;
  }
  return H5I_INVALID_HID;
}
