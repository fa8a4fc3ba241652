# SPDX-License-Identifier: Apache-2.0
# Cross build for 64-bit Arm Linux with Debian's cross compiler, run through qemu user emulation.
#
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install --no-install-recommends g++-aarch64-linux-gnu qemu-user-static \
#       ocl-icd-opencl-dev:arm64 [libclblast-dev:arm64] catch2
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=tools/aarch64-linux-gnu.cmake
#
# Where things are on a Debian multiarch host:
#   /usr/aarch64-linux-gnu           the cross compiler's own sysroot (libc, libstdc++, ld-linux-aarch64.so.1)
#   /usr/lib/aarch64-linux-gnu       foreign-architecture packages (libOpenCL.so from ocl-icd-opencl-dev:arm64,
#                                    libclblast.so and its CMake package from libclblast-dev:arm64)
#   /usr/include, /usr/lib/cmake     architecture-independent headers and packages: the OpenCL C headers and
#                                    OpenCL-CLHPP (opencl-c-headers, opencl-clhpp-headers), Catch2 v2
# So the find root is both the sysroot and "/": with CMAKE_LIBRARY_ARCHITECTURE set, libraries under "/" are
# looked up in lib/aarch64-linux-gnu only, never in the host's lib/x86_64-linux-gnu, and find_package(OpenCL)
# pairs the arm64 libOpenCL.so with the shared headers.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(XNORCL_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${XNORCL_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${XNORCL_CROSS_TRIPLE}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${XNORCL_CROSS_TRIPLE})

set(CMAKE_FIND_ROOT_PATH /usr/${XNORCL_CROSS_TRIPLE} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # build tools (cmake, qemu) are host programs
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Test discovery (catch_discover_tests runs each test binary to list its tests) and CTest run the aarch64
# binaries through qemu; -L makes qemu take the dynamic linker and libc from the cross sysroot.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static;-L;/usr/${XNORCL_CROSS_TRIPLE})
