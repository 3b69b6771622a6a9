/* What differs between HDF5 1.10 (Debian 12's) and 1.12 or later. */
#ifndef XIO_COMPAT_H
#define XIO_COMPAT_H

#include <hdf5.h>

#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t xio_link_info;
#define XIO_LINK_VISIT H5Lvisit2
#define XIO_LINK_ITERATE H5Literate2
/* Where a hard link points, as bytes that tell objects apart. */
#define XIO_LINK_TARGET(info) (&(info)->u.token)
typedef H5O_info2_t xio_object_info;
#define XIO_OBJECT_INFO(id, info) H5Oget_info3(id, info, H5O_INFO_BASIC)
#define XIO_OBJECT_TARGET(info) (&(info)->token) /* the same bytes as XIO_LINK_TARGET */
#define XIO_RECLAIM(type, space, buf) H5Treclaim(type, space, H5P_DEFAULT, buf)
#else
typedef H5L_info_t xio_link_info;
#define XIO_LINK_VISIT H5Lvisit
#define XIO_LINK_ITERATE H5Literate
#define XIO_LINK_TARGET(info) (&(info)->u.address)
typedef H5O_info_t xio_object_info;
#define XIO_OBJECT_INFO(id, info) H5Oget_info2(id, info, H5O_INFO_BASIC)
#define XIO_OBJECT_TARGET(info) (&(info)->addr)
#define XIO_RECLAIM(type, space, buf) H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf)
#endif

#endif
