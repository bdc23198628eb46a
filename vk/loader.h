// Loader of vkmps's own: finds the Vulkan loader library at run time so
// that a missing Vulkan installation is an error value, never a crash.
#ifndef VKMPS_LOADER_H
#define VKMPS_LOADER_H

// vkmps_load opens path, or when path is NULL tries the platform's loader
// library names in order. On success it returns the address of
// vkGetInstanceProcAddr and writes the name of the library it opened to
// *name; on failure it returns NULL.
void* vkmps_load(const char* path, const char** name);

// vkmps_gipa is vkGetInstanceProcAddr from the opened loader (NULL before
// vkmps_load succeeds).
extern void* vkmps_gipa;

#endif
