/* HDF5 datatypes: which ones xpose can move as opaque bytes, their short
 * names for messages, and the named types the generator writes. */
#ifndef XIO_TYPES_H
#define XIO_TYPES_H

#include <hdf5.h>
#include <stddef.h>

/* 0 when every element of `type` is self-contained fixed-size bytes;
 * otherwise -1 with the reason (variable-length data or a reference, at
 * any nesting depth) in why. */
int xio_type_check_fixed(hid_t type, char *why, size_t why_size);

/* Non-zero when `type` holds a reference anywhere (not portable to another file). */
int xio_type_has_reference(hid_t type);

/* Whether `type` holds variable-length data (sequences or strings, at any
 * depth) and no references: data that parallel HDF5 1.10 cannot write, but
 * that is the same in any file. */
int xio_type_is_variable_length(hid_t type);

/* Whether elements a and b of the memory type `type` (as H5Dread leaves
 * them: variable-length data behind pointers) hold the same values. */
int xio_type_same_values(hid_t type, const void *a, const void *b);

/* Short description: "float32 LE", "uint16 BE", "string[12]", "opaque[8]",
 * "compound{r: float64 LE, i: float64 LE}". */
void xio_type_describe(hid_t type, char *text, size_t text_size);

/* Types the generator knows: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 c64
 * c128 (complex as compound {r, i}, as h5py writes them), sN (fixed string
 * of N bytes), oN (opaque, N bytes).  Returns a new type to H5Tclose, or
 * H5I_INVALID_HID for an unknown name. */
hid_t xio_type_from_name(const char *name, int big_endian);

#endif
