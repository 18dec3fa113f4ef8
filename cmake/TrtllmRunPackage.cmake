# The Debian package, as login nodes install tools: `cpack -G DEB` in a build directory
# (after `cmake --build`) writes trtllm-run_<version>_<arch>.deb with everything
# `cmake --install` installs: the CLI, libtrtllm_run_core, the plugins, the man page, the
# bash/zsh completions, the agent skill, the example cases and catalog, and the headers and
# CMake package for embedders. Installed under /usr: the binary finds the library through
# its RUNPATH $ORIGIN/../lib, the library finds the plugins relative to itself, so nothing
# refers to the build tree. Dependencies are the Debian packages of the shared libraries the
# ELF files need (dpkg-shlibdeps), plus bash for the commands it runs.
# Tested by tests/deb_package.sh (tests/run.sh): apt-get install, the example case, remove.
set(CPACK_GENERATOR "DEB" CACHE STRING "CPack generators")
set(CPACK_PACKAGE_NAME "trtllm-run")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "trtllm-run maintainers <trtllm-run@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "runs TensorRT-LLM test cases locally, in Docker or on Slurm and returns a verdict")
set(CPACK_PACKAGE_DESCRIPTION
  "trtllm-run runs one TensorRT-LLM case (a pytest test, a perf-sanity test, a trtllm-bench
benchmark or any command) on this host, in Docker, on a local Slurm cluster or on a remote
one over SSH, and returns a verdict as its exit code. Workflows and executors are plugins.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")  # trtllm-run_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The package's own library: dpkg-shlibdeps finds it here, not among installed packages.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}")
# libpq5: loaded with dlopen for a PostgreSQL history store (history/libpq.cc), so
# dpkg-shlibdeps cannot see it; the feature ships, so the package depends on it.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bash, libpq5")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "docker.io, slurm-client, openssh-client, python3")
include(CPack)
