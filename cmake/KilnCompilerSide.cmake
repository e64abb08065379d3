# Flags for the compiler side (dialects/, passes/, compiler/, kilnc, kiln-opt): they link
# LLVM/MLIR, so they build as LLVM does (no exceptions; Debian's LLVM keeps RTTI on).
# Included from those directories only, so the runtime keeps plain C++ flags.
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(KILN_LLVM_DEFINITIONS NATIVE_COMMAND ${LLVM_DEFINITIONS})
add_definitions(${KILN_LLVM_DEFINITIONS})
add_compile_options(-fno-exceptions)

# kiln_compiler_library(NAME SOURCES... [DEPENDS targets] [LINK libs])
# A compiler-side library linked against the shared libMLIR and libLLVM.
function(kiln_compiler_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK} MLIR LLVM)
endfunction()
