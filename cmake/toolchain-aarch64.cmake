# Cross-compiling Heron for aarch64-linux-gnu on an x86-64 Debian 12 host
# (`make test-aarch64`). The compilers come from g++-aarch64-linux-gnu, the
# libraries from Debian's arm64 multiarch -dev packages (libasmjit-dev:arm64,
# libgtest-dev:arm64, ...; scripts/install-deps.sh --aarch64), and the test
# binaries run under qemu-user with the cross sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Headers are architecture-independent in /usr/include; libraries and CMake
# package files live in /usr/lib/aarch64-linux-gnu. Never pick up an x86-64
# library: search only the multiarch directory for libraries and packages.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_PREFIX_PATH /usr/lib/aarch64-linux-gnu/cmake)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# ctest and gtest_discover_tests run the binaries through qemu-aarch64; -L
# points its dynamic loader at the cross sysroot (the arm64 multiarch
# libraries are found through the sysroot's default paths and /usr/lib).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
