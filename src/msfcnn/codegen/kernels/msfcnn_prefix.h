/* The names of the kernel library's external symbols. This default renames nothing: they are
   msf_* as the kernel headers declare them. `msfcnn compile --prefix NAME` replaces this file with
   one that renames each to NAME_msf_*, so that networks compiled with different prefixes (each
   with its own kernels/ folder) link into one program. */
#ifndef MSFCNN_PREFIX_H
#define MSFCNN_PREFIX_H
#endif
