// Entry point of the `leap` executable; everything lives in runtime/cli.cpp.
#include "runtime/cli.hpp"

int main(int argc, char** argv) { return leap::runtime::run_cli(argc, argv); }
