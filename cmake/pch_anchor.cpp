// The one source of the targets that only precompile a header (cmake/precompiled_headers.cmake):
// a target needs a translation unit to compile its precompiled header with its flags.
