# Warnings, sanitizers and clang's thread-safety analysis for sluice targets.
add_library(sluice_compile_options INTERFACE)
target_compile_options(sluice_compile_options INTERFACE -Wall -Wextra -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(sluice_compile_options INTERFACE -Wthread-safety)
endif()
if(SLUICE_WERROR)
  target_compile_options(sluice_compile_options INTERFACE -Werror)
endif()

if(SLUICE_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(SLUICE_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT SLUICE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "SLUICE_SANITIZE must be '', 'thread' or 'address', not '${SLUICE_SANITIZE}'")
endif()

# sluice_add_test(NAME name SOURCES a_test.cc ... [LAYER layer] [LIBS ...] [LABELS concurrency])
# A GoogleTest executable registered with ctest. With LAYER, it links that
# layer and compiles as the layer's sources do (sluice_layer_view: the
# layer's private headers, nothing above it); without, it links all of
# libsluice. The label "concurrency" marks tests that CI runs under
# ThreadSanitizer.
function(sluice_add_test)
  cmake_parse_arguments(T "" "NAME;LAYER" "SOURCES;LABELS;LIBS" ${ARGN})
  if(NOT SLUICE_BUILD_TESTS)
    return()
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  if(T_LAYER)
    sluice_layer_view(${T_NAME} ${T_LAYER})
  else()
    target_link_libraries(${T_NAME} PRIVATE sluice)
  endif()
  target_link_libraries(${T_NAME} PRIVATE GTest::gtest GTest::gtest_main sluice_compile_options ${T_LIBS})
  gtest_discover_tests(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT 300 DISCOVERY_TIMEOUT 60)
endfunction()
if(SLUICE_BUILD_TESTS)
  include(GoogleTest)
endif()
