# Leaves llama.cpp's `common` library out of llama-cpp-python's build (a CMAKE_PROJECT_INCLUDE, passed
# in CMAKE_ARGS by .ci/run and docs/models.md's install line). llama-cpp-python forces
# LLAMA_BUILD_COMMON ON in CMake's cache, yet its package loads only libllama and libggml*: common
# (52 C++ files: chat parsers, nlohmann json) and cpp-httplib, used by common alone, are 53 of the
# build's 127 objects and the slowest to compile. CMake runs this file after each project() call; a
# normal variable shadows the forced cache entry (policy CMP0126), so llama.cpp skips common.
set(LLAMA_BUILD_COMMON OFF)
