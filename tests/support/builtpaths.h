#pragma once

#include <QString>

// Where the build put what the suites and benchmarks run: ratescope-cli, the console, the man
// pages, and the source tree they were built from. None of it is compiled in, so that a test
// object is the same in every clone and build directory and a second clone's build is served
// from the compiler cache. CMake writes the paths at configure time, as name=value lines, into
// testpaths.ini in the build's tests/ directory, one up from every test and benchmark executable
// (tests/CMakeLists.txt); an environment variable RATESCOPE_TEST_<NAME> (for example
// RATESCOPE_TEST_CLI) overrides a path.
namespace BuiltPaths {
QString cli();       // ratescope-cli
QString gui();       // ratescope, the console; empty when the build has no console
QString sourceDir(); // the source tree
QString manDir();    // the generated man pages (NAME.1.gz); empty when not built
}
