package vk

/*
#cgo CFLAGS: -I${SRCDIR}/include -O2
#cgo linux LDFLAGS: -ldl
#include "vkmps.h"
#include "loader.h"
*/
import "C"
