#include "xpose.h"

int xpose_version(void) { return XPOSE_VERSION; }
